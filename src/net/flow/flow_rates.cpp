// Incremental max-min fair rates by progressive filling (see flow_rates.hpp
// for the algorithm, its complexity and why the results do not depend on
// the history of adds and removes).
#include "fabricsim/net/flow_rates.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::net {

namespace {
/// A flow on a link's list (sorted by flow id).
struct LinkFlow {
  FlowId flow;
  double weight;
};
/// Marks a flow frozen at its cap (FlowRatesImpl::bott_).
constexpr LinkId kCapEvent = std::numeric_limits<LinkId>::max();
/// A position in the event order of progressive filling: a link that
/// saturates at `level` (kind 0, id a link) comes before a cap equal to it
/// (kind 1, id a flow); ties by id.
struct Event {
  double level;
  std::uint32_t kind;
  std::uint32_t id;
};
/// A min-heap of (key, id), ties by id, in which an id is at most once and
/// keys never change (each is pushed again only after it was popped): no
/// position table to keep, unlike IndexedHeap.
class KeyHeap {
 public:
  bool empty() const { return heap_.empty(); }
  std::uint32_t top() const { return heap_.front().id; }
  double top_key() const { return heap_.front().key; }
  void push(std::uint32_t id, double key) {
    heap_.push_back(Entry{key, id});
    std::push_heap(heap_.begin(), heap_.end(), After{});
  }
  /// Appends without ordering; make() before any other operation.
  void append(std::uint32_t id, double key) { heap_.push_back(Entry{key, id}); }
  void make() { std::make_heap(heap_.begin(), heap_.end(), After{}); }
  void pop() {
    std::pop_heap(heap_.begin(), heap_.end(), After{});
    heap_.pop_back();
  }
  void clear() { heap_.clear(); }

 private:
  struct Entry {
    double key;
    std::uint32_t id;
  };
  struct After {  // a function object, so the heap algorithms inline it
    bool operator()(const Entry& a, const Entry& b) const {
      return b.key < a.key || (!(a.key < b.key) && b.id < a.id);
    }
  };
  std::vector<Entry> heap_;
};
bool operator<(const Event& a, const Event& b) {
  if (a.level < b.level) return true;
  if (b.level < a.level) return false;
  if (a.kind != b.kind) return a.kind < b.kind;
  return a.id < b.id;
}
}  // namespace

class FlowRatesImpl {
 public:
  explicit FlowRatesImpl(std::vector<double> capacity) : capacity_(std::move(capacity)) {
    for (double c : capacity_) FABRICSIM_ASSERT(c > 0.0 && std::isfinite(c), "link capacity must be positive");
    const std::size_t n = capacity_.size();
    link_flows_.resize(n);
    link_mark_.assign(n, 0);
    claimed_.assign(n, 0);
    parked_.assign(n, 0);
    owned_.assign(n, 0);
    unfrozen_.assign(n, 0);
    last_.assign(n, 0.0);
    link_weight_.assign(n, 0.0);
  }

  void grow(FlowId id) {
    if (id < flows_.size()) return;
    const std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(id) + 1, flows_.size() * 2);
    flows_.resize(n);
    fs_.resize(n);
    hot_.resize(n);
    fresh_.resize(n, 0);
  }

  void mark_links_dirty(FlowId id) {
    const Flow& f = flows_[id];
    if (f.links.empty()) {
      dirty_free_.push_back(id);
    } else {
      for (const FlowLink& fl : f.links) dirty_links_.push_back(fl.link);
    }
  }

  void add(FlowId id, std::span<const FlowLink> links, double cap) {
    FABRICSIM_ASSERT(cap > 0.0, "a flow's rate cap must be positive");
    grow(id);
    Flow& f = flows_[id];
    FABRICSIM_ASSERT(!f.active, "flow added twice");
    f.active = true;
    fresh_[id] = 1;
    f.cap = cap;
    fs_[id].rate = 0.0;
    f.links.assign(links.begin(), links.end());
    std::sort(f.links.begin(), f.links.end(), [](const FlowLink& a, const FlowLink& b) { return a.link < b.link; });
    // Merge repeated links (paths of a split flow that share a link).
    std::size_t out = 0;
    for (std::size_t i = 0; i < f.links.size(); ++i) {
      const FlowLink& fl = f.links[i];
      FABRICSIM_ASSERT(fl.link < capacity_.size(), "flow over an unknown link");
      FABRICSIM_ASSERT(fl.weight > 0.0 && fl.weight <= 1.0 + 1e-9, "flow weight outside (0, 1]");
      if (out > 0 && f.links[out - 1].link == fl.link) {
        f.links[out - 1].weight += fl.weight;
        FABRICSIM_ASSERT(f.links[out - 1].weight <= 1.0 + 1e-9, "flow weights on one link sum above 1");
      } else {
        f.links[out++] = fl;
      }
    }
    f.links.resize(out);
    set_hot(id);
    for (const FlowLink& fl : f.links) {
      auto& list = link_flows_[fl.link];
      const auto at =
          std::lower_bound(list.begin(), list.end(), id, [](const LinkFlow& e, FlowId v) { return e.flow < v; });
      list.insert(at, LinkFlow{id, fl.weight});
      link_weight_[fl.link] = weight_sum(list);
    }
    ++active_;
    mark_links_dirty(id);
    if (!f.links.empty()) added_.push_back(id);
  }

  void remove(FlowId id) {
    FABRICSIM_ASSERT(id < flows_.size() && flows_[id].active, "removing a flow that is not active");
    Flow& f = flows_[id];
    for (const FlowLink& fl : f.links) {
      auto& list = link_flows_[fl.link];
      const auto at =
          std::lower_bound(list.begin(), list.end(), id, [](const LinkFlow& e, FlowId v) { return e.flow < v; });
      FABRICSIM_ASSERT(at != list.end() && at->flow == id, "flow missing from its link");
      list.erase(at);
      link_weight_[fl.link] = weight_sum(list);
      dirty_links_.push_back(fl.link);
    }
    // Nothing below the rate it had can change (see restart level).
    if (!fresh_[id]) restart_ = std::min(restart_, fs_[id].rate);
    set_bott(id, kCapEvent);
    f.active = false;
    fresh_[id] = 0;
    fs_[id].rate = 0.0;
    --active_;
  }

  void set_cap(FlowId id, double cap) {
    FABRICSIM_ASSERT(id < flows_.size() && flows_[id].active, "capping a flow that is not active");
    FABRICSIM_ASSERT(cap > 0.0, "a flow's rate cap must be positive");
    Flow& f = flows_[id];
    if (!fresh_[id]) restart_ = std::min({restart_, fs_[id].rate, cap});
    f.cap = cap;
    hot_[id].cap = cap;
    mark_links_dirty(id);
    if (!f.links.empty()) added_.push_back(id);  // refilled from the restart level on
  }

  std::span<const FlowId> recompute(bool all) {
    changed_.clear();
    if (all) {
      restart_ = 0.0;
      added_.clear();
      dirty_links_.clear();
      dirty_free_.clear();
      for (std::size_t l = 0; l < link_flows_.size(); ++l)
        if (!link_flows_[l].empty()) dirty_links_.push_back(static_cast<LinkId>(l));
      for (std::size_t id = 0; id < flows_.size(); ++id) {
        if (!flows_[id].active) continue;
        if (flows_[id].links.empty()) {
          dirty_free_.push_back(static_cast<FlowId>(id));
        } else {
          added_.push_back(static_cast<FlowId>(id));  // every flow refilled
        }
      }
    }
    if (dirty_links_.empty() && dirty_free_.empty()) {
      restart_ = kNoRateCap;  // e.g. a flow over no links ended: nothing to refill
      return {};
    }
    ++stats_.recomputations;
    // Flows over no links: their cap.
    for (FlowId id : dirty_free_) {
      Flow& f = flows_[id];
      if (!f.active || !f.links.empty()) continue;
      report(id, f.cap);
    }
    dirty_free_.clear();
    if (!all)
      for (FlowId id : added_)
        if (flows_[id].active && fresh_[id])
          for (const FlowLink& fl : flows_[id].links) restart_ = std::min(restart_, saturation_bound(fl.link));
    // A relative margin against the rounding of the bound: refilling a
    // flow too many is only slower.
    const double level = restart_ * (1.0 - 1e-9);
    restart_ = kNoRateCap;
    all_ = all;
    fill(level, !all);
    all_ = false;
    added_.clear();
    dirty_links_.clear();
    stats_.flows_touched += comp_flows_.size();
    stats_.links_touched += comp_links_.size();
    stats_.largest_component = std::max(stats_.largest_component, comp_flows_.size());
    stats_.rates_changed += changed_.size();
    return changed_;
  }

  /// The lowest level at which link l can saturate now, if every flow on it
  /// whose rate is below that level keeps its rate and the others (new
  /// ones included) rise together: the first t with
  ///   sum_{r_g < t} w_g r_g + t x sum_{r_g >= t} w_g = c_l.
  double saturation_bound(LinkId l) {
    bound_scratch_.clear();
    double w_all = 0.0;
    for (const LinkFlow& e : link_flows_[l]) {
      w_all += e.weight;
      if (!fresh_[e.flow]) bound_scratch_.push_back({fs_[e.flow].rate, e.weight});
    }
    std::sort(bound_scratch_.begin(), bound_scratch_.end(),
              [](const LinkFlow2& a, const LinkFlow2& b) { return a.rate < b.rate; });
    double fixed_load = 0.0;
    double rising = w_all;
    for (const LinkFlow2& g : bound_scratch_) {
      const double t = (capacity_[l] - fixed_load) / rising;
      if (t <= g.rate) return t;
      fixed_load += g.weight * g.rate;
      rising -= g.weight;
      if (!(rising > 0.0)) return g.rate;  // rounding: every flow already fixed
    }
    return (capacity_[l] - fixed_load) / rising;
  }

  /// The event that froze flow id in the last fill (or in this one, once
  /// it froze).
  Event frozen_at(FlowId id) const {
    const FlowState& g = fs_[id];
    return g.bott == kCapEvent ? Event{g.rate, 1, id} : Event{g.rate, 0, g.bott};
  }
  bool touched(FlowId id) const { return (fs_[id].mark >> 1) == epoch_; }
  bool live(FlowId id) const { return fs_[id].mark == ((epoch_ << 1) | 1U); }

  /// Level at which link l saturates given the flows frozen at position p
  /// (at most the current one, or a later one of a link evaluated now):
  /// t = (c - F) / W, F the load of the frozen flows on it, W the weight of
  /// the rest.  A refilled flow is frozen once it has frozen in this pass,
  /// any other flow when its last freeze comes before p (it freezes at the
  /// same event as last time; see fill()).  Summed over the link's list in
  /// flow-id order every time, so the value depends only on which flows are
  /// frozen at what rates, not on the order they froze in.  Branch-free in
  /// the loop (adding +0.0 to a sum of non-negative terms changes no bit).
  /// False if no flow on it is unfrozen.
  template <bool kClaim = false>
  bool evaluate(LinkId l, const Event& p, double& t) {
    double last = 0.0;
    return evaluate<kClaim>(l, p, t, last);
  }
  /// The same; `last` is the highest rate of an unfrozen flow not refilled
  /// (0 if none).
  template <bool kClaim = false>
  bool evaluate(LinkId l, const Event& p, double& t, double& last) {
    const double level = p.level;
    const std::uint64_t order = p.kind == 0 ? p.id : ((std::uint64_t{1} << 32) | p.id);
    const std::uint32_t live_mark = (epoch_ << 1) | 1U;
    double frozen_load = 0.0;
    double weight = 0.0;
    std::size_t rising = 0;
    last = 0.0;
    for (const LinkFlow& e : link_flows_[l]) {
      const FlowState& g = fs_[e.flow];
      const std::uint64_t g_order = g.bott == kCapEvent ? ((std::uint64_t{1} << 32) | e.flow) : g.bott;
      const bool frozen = (g.mark != live_mark) & ((g.rate < level) | ((g.rate == level) & (g_order < order)));
      frozen_load += frozen ? e.weight * g.rate : 0.0;
      weight += frozen ? 0.0 : e.weight;
      rising += frozen ? 0 : 1;
      last = std::max(last, frozen || g.mark == live_mark ? 0.0 : g.rate);
      // Unfrozen, not refilled and frozen by l last time: refilled (it
      // stays unfrozen; see claim()).
      if constexpr (kClaim)
        if (!frozen && g.bott == l && (g.mark >> 1) != epoch_) touch(e.flow);
    }
    if (rising == 0) return false;
    t = (capacity_[l] - frozen_load) / weight;
    return true;
  }

  /// Queues dirty link l with the key a fill from zero would have for it
  /// now.  Lazy keys make the level a link saturates at depend on when its
  /// key was computed (when flows froze at that very level since, rounding
  /// can leave the new evaluation below the key; the link then saturates
  /// at the key), so the key is not evaluated now but replayed: from the
  /// evaluation with every flow unfrozen (a fill from zero's first key),
  /// each pop that fill made before the current position (requeued at the
  /// level evaluated there, since it did not saturate: l was clean, or
  /// could not saturate below the restart level).  The flows frozen before
  /// the current position are the ones a fill from zero froze there.
  void queue(LinkId l) {
    if (link_flows_[l].empty()) return;
    // The first key, every flow unfrozen: the weight summed as evaluate()
    // sums it, and c - 0.0 = c.
    double key = capacity_[l] / link_weight_[l];
    for (;;) {
      const Event pop{key, 0, l};
      if (!(pop < now_)) break;
      double t = 0.0;
      if (!evaluate(l, pop, t)) return;  // every flow on it frozen
      if (!(t > key)) break;  // (not expected) saturates now, at its key
      key = t;
    }
    if (bulk_) {
      heap_.append(l, key);
    } else {
      heap_.push(l, key);
    }
  }

  /// Refills flow id from the current position on (it is unfrozen there):
  /// its links become dirty.
  void touch(FlowId id) {
    saved_.push_back(Saved{fs_[id].rate, id, fs_[id].bott, fresh_[id]});
    fs_[id].mark = (epoch_ << 1) | 1U;
    comp_flows_.push_back(id);
    const Hot& h = hot_[id];
    if (h.cap != kNoRateCap) cap_heap_.push(id, h.cap);
    if (h.count <= Hot::kLinks) {
      for (std::uint32_t i = 0; i < h.count; ++i) {
        dirty(h.link[i]);
        ++unfrozen_[h.link[i]];
      }
    } else {
      for (const FlowLink& fl : flows_[id].links) {
        dirty(fl.link);
        ++unfrozen_[fl.link];
      }
    }
  }

  void set_hot(FlowId id) {
    const Flow& f = flows_[id];
    Hot& h = hot_[id];
    h.cap = f.cap;
    h.count = static_cast<std::uint32_t>(f.links.size());
    for (std::size_t i = 0; i < f.links.size() && i < Hot::kLinks; ++i) h.link[i] = f.links[i].link;
  }

  void dirty(LinkId l) {
    if (link_mark_[l] == epoch_) {
      if (parked_[l] == epoch_) {  // it may saturate after all
        parked_[l] = 0;
        pending_.push_back(l);
      }
      return;
    }
    link_mark_[l] = epoch_;
    comp_links_.push_back(l);
    unfrozen_[l] = 0;
    last_[l] = kNoRateCap;
    // Saturated last time by no flow, and its load at the current rates
    // well below its capacity: assumed to stay unsaturated (checked).
    if (optimistic_ && owned_[l] == 0 && load(l) < kSlack * capacity_[l]) {
      deferred_.push_back(l);
      return;
    }
    pending_.push_back(l);
  }

  /// Queues the links made dirty (or unparked) at the current position,
  /// with their replayed keys.
  void drain() {
    while (!pending_.empty()) {
      const LinkId l = pending_.back();
      pending_.pop_back();
      queue(l);
    }
  }

  /// Refills the flows dirty link l froze last time that are not frozen at
  /// the current position (whether l saturates as it did is not known).
  /// A link whose flows changed is claimed when the fill starts; any other
  /// link at its first pop, with its evaluation: its state up to the
  /// position it became dirty at is the one of the last fill, so its key
  /// then, and its first pop, come no later than the event that froze them
  /// last time, and until then they are unfrozen either way.
  void claim(LinkId l) {
    claimed_[l] = epoch_;
    if (all_) return;
    for (const LinkFlow& e : link_flows_[l]) {
      const FlowId g = e.flow;
      if (!touched(g) && fs_[g].bott == l && !(frozen_at(g) < now_)) touch(g);
    }
  }

  /// Progressive filling from position (level, 0, 0): every flow whose
  /// last freeze comes before keeps its rate.  Only the dirty links are
  /// simulated (queued by their lazy keys); a flow is refilled when a dirty
  /// link froze it last time, when it is added or its cap changed, or when
  /// a dirty link saturates while it is unfrozen; every other flow freezes
  /// at the same event as last time, at the same rate (its links are
  /// clean up to there, so they saturate as they did).
  void fill(double level, bool optimistic) {
    optimistic_ = optimistic;
    const std::size_t reported = changed_.size();
    saved_.clear();
    deferred_.clear();
    ++epoch_;
    if (epoch_ == (1U << 31)) {  // wrapped (the flow marks hold epoch_ << 1): clear the marks once
      std::fill(link_mark_.begin(), link_mark_.end(), 0);
      std::fill(claimed_.begin(), claimed_.end(), 0);
      std::fill(parked_.begin(), parked_.end(), 0);
      for (FlowState& g : fs_) g.mark = 0;
      epoch_ = 1;
    }
    comp_links_.clear();
    comp_flows_.clear();
    heap_.clear();
    cap_heap_.clear();
    now_ = Event{level, 0, 0};
    // Links whose flows changed are simulated (added flows need links).
    const bool defer = optimistic_;
    optimistic_ = false;
    // (From scratch every flow is refilled from the start: no claims.)
    for (FlowId id : added_)
      if (flows_[id].active && !touched(id)) touch(id);
    for (LinkId l : dirty_links_) {
      dirty(l);
      if (claimed_[l] != epoch_) claim(l);
    }
    optimistic_ = defer;
    bulk_ = true;  // the first links queued: ordered once
    drain();
    bulk_ = false;
    heap_.make();
    for (;;) {
      const bool have_link = !heap_.empty();
      if (!cap_heap_.empty() && (!have_link || cap_heap_.top_key() < heap_.top_key())) {
        const FlowId id = cap_heap_.top();
        const double cap = cap_heap_.top_key();
        cap_heap_.pop();
        if (!live(id)) continue;
        now_ = Event{cap, 1, id};
        freeze(id, cap, kCapEvent);
        continue;
      }
      if (!have_link) break;
      const LinkId l = heap_.top();
      const double key = heap_.top_key();
      heap_.pop();
      if (!heap_.empty()) {  // the next link's flow list, while this one is processed
        const auto& next = link_flows_[heap_.top()];
        __builtin_prefetch(next.data());
        __builtin_prefetch(next.data() + 4);
      }
      now_ = Event{key, 0, l};
      double t = 0.0;
      double last = 0.0;
      bool rising = false;
      // No flow on it refilled and unfrozen, and the others unfrozen when
      // it was last evaluated froze below its key: none left (no pass).
      if (unfrozen_[l] == 0 && last_[l] < key) continue;
      if (claimed_[l] != epoch_ && !all_) {
        claimed_[l] = epoch_;
        rising = evaluate<true>(l, now_, t, last);
        drain();
      } else {
        rising = evaluate(l, now_, t, last);
      }
      if (!rising) continue;  // every flow on it froze elsewhere
      // Lazy keys: freezing a flow can only raise a link's level, so a key
      // is a lower bound; a link whose level has risen is queued again,
      // otherwise it saturates at its key (the level evaluated may be a few
      // ulps below it after rounding: the level never falls).
      if (t > key) {
        // Parked: every unfrozen flow on it is not refilled and freezes,
        // as last time, below t, so it would come up with none left.  A
        // flow on it refilled later queues it again (dirty(), replayed).
        last_[l] = last;
        if (unfrozen_[l] == 0 && last < t) {
          parked_[l] = epoch_;
          continue;
        }
        heap_.push(l, t);
        ++stats_.links_requeued;
        continue;
      }
      for (const LinkFlow& e : link_flows_[l]) {
        const FlowId g = e.flow;
        if (touched(g)) {
          if (live(g)) freeze(g, key, l);
        } else if (!(frozen_at(g) < now_)) {
          touch(g);  // it froze later last time: refilled from here
          freeze(g, key, l);
        }
      }
      drain();
    }
    // The deferred links must have stayed clear of saturation (with a
    // relative margin far above rounding: a link whose final load is below
    // it never saturates in a fill, so it changes no rate).  Else the fill
    // is undone and done again with every dirty link simulated.
    bool held = true;
    for (LinkId l : deferred_) held = held && load(l) < capacity_[l] * (1.0 - 1e-9);
    for (FlowId id : comp_flows_) held = held && !live(id);  // none left on deferred links alone
    if (!held) {
      ++refills_undone_;
      for (std::size_t i = saved_.size(); i-- > 0;) {
        const Saved& v = saved_[i];
        fs_[v.id].rate = v.rate;
        set_bott(v.id, v.bott);
        fresh_[v.id] = v.fresh;
      }
      changed_.resize(reported);
      fill(level, false);
      return;
    }
  }

  /// Freezes a refilled flow at `rate` by event `by`.
  void freeze(FlowId id, double rate, LinkId by) {
    fs_[id].mark = epoch_ << 1;
    set_bott(id, by);
    report(id, rate);
    const Hot& h = hot_[id];
    if (h.count <= Hot::kLinks) {
      for (std::uint32_t i = 0; i < h.count; ++i) --unfrozen_[h.link[i]];
    } else {
      for (const FlowLink& fl : flows_[id].links) --unfrozen_[fl.link];
    }
  }

  void report(FlowId id, double rate) {
    if (fresh_[id] || std::bit_cast<std::uint64_t>(fs_[id].rate) != std::bit_cast<std::uint64_t>(rate))
      changed_.push_back(id);
    fresh_[id] = 0;
    fs_[id].rate = rate;
  }

  /// Sets the event that froze flow id, keeping owned_ (flows per link
  /// that froze them) in step.
  void set_bott(FlowId id, LinkId by) {
    const LinkId old = fs_[id].bott;
    if (old != kCapEvent) --owned_[old];
    if (by != kCapEvent) ++owned_[by];
    fs_[id].bott = by;
  }

  static double weight_sum(const std::vector<LinkFlow>& list) {
    double w = 0.0;
    for (const LinkFlow& e : list) w += e.weight;
    return w;
  }

  double load(LinkId l) const {
    double sum = 0.0;
    for (const LinkFlow& e : link_flows_[l]) sum += e.weight * fs_[e.flow].rate;
    return sum;
  }

  struct Flow {
    std::vector<FlowLink> links;  // ascending link id, merged
    double cap = kNoRateCap;
    bool active = false;
  };

  std::vector<double> capacity_;
  std::vector<std::vector<LinkFlow>> link_flows_;
  /// Per link: the summed weight of its flows, in flow-id order.
  std::vector<double> link_weight_;
  std::vector<Flow> flows_;
  // Per flow, apart from Flow for locality (the refill reads them for every
  // flow on every link it evaluates).
  /// Per flow, what evaluating a link reads (one 16-byte entry): its rate,
  /// the event that froze it in the last fill (a link, or kCapEvent for its
  /// cap; with the rate, its position in the event order), and
  /// (epoch_ << 1) once refilled in the current pass, | 1 while unfrozen.
  struct FlowState {
    double rate = 0.0;
    LinkId bott = kCapEvent;
    std::uint32_t mark = 0;
  };
  std::vector<FlowState> fs_;
  /// Per flow, what refilling it reads (one 32-byte entry): its cap and
  /// its links when they are few (else flows_[id].links).
  struct Hot {
    static constexpr std::uint32_t kLinks = 5;
    double cap = kNoRateCap;
    std::uint32_t count = 0;
    LinkId link[kLinks] = {};
  };
  std::vector<Hot> hot_;
  std::vector<std::uint8_t> fresh_;  // added since the last recompute: always reported
  std::size_t active_ = 0;

  // Changes since the last recompute.
  std::vector<LinkId> dirty_links_;
  std::vector<FlowId> dirty_free_;
  std::vector<FlowId> added_;
  /// Restart level: every flow whose rate is below it keeps its rate.
  double restart_ = kNoRateCap;

  // Scratch of recompute(), reused.
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> link_mark_;
  /// Per link: epoch_ once claim()ed.
  std::vector<std::uint32_t> claimed_;
  /// Per link: epoch_ while parked (see fill()).
  std::vector<std::uint32_t> parked_;
  /// Per link: the flows it froze (their bott_).
  std::vector<std::uint32_t> owned_;
  /// Whether dirty links that froze no flow last time are deferred (not
  /// simulated, checked at the end), and those deferred in this fill.
  bool optimistic_ = false;
  bool bulk_ = false;
  bool all_ = false;  // recompute_all(): every flow refilled, no claims  // queue() appends to heap_ unordered
  static constexpr double kSlack = 0.95;
  std::vector<LinkId> deferred_;
  std::uint64_t refills_undone_ = 0;  // fills undone (a deferred link came too close to saturation)
  /// Per flow refilled in this fill: what to restore if it is undone.
  struct Saved {
    double rate;
    FlowId id;
    LinkId bott;
    std::uint8_t fresh;
  };
  std::vector<Saved> saved_;
  /// Per dirty link: its refilled flows not frozen yet, and the highest
  /// rate of the other flows unfrozen when it was last evaluated at a pop
  /// (infinity before).
  std::vector<std::uint32_t> unfrozen_;
  std::vector<double> last_;
  std::vector<LinkId> comp_links_;
  std::vector<FlowId> comp_flows_;
  /// Links made dirty and not yet evaluated.
  std::vector<LinkId> pending_;
  /// The position of the event being processed.
  Event now_{};
  KeyHeap cap_heap_;
  struct LinkFlow2 {
    double rate;
    double weight;
  };
  std::vector<LinkFlow2> bound_scratch_;
  KeyHeap heap_;
  std::vector<FlowId> changed_;
  FlowRateStats stats_;
};

FlowRates::FlowRates(std::vector<double> capacity_gbps)
    : impl_(std::make_unique<FlowRatesImpl>(std::move(capacity_gbps))) {}
FlowRates::~FlowRates() = default;
FlowRates::FlowRates(FlowRates&&) noexcept = default;
FlowRates& FlowRates::operator=(FlowRates&&) noexcept = default;

std::vector<double> FlowRates::capacities(const Topology& topo) {
  std::vector<double> c(topo.link_count());
  for (std::size_t l = 0; l < c.size(); ++l) c[l] = topo.link(static_cast<LinkId>(l)).bandwidth_gbps;
  return c;
}

void FlowRates::add(FlowId id, std::span<const FlowLink> links, double cap_gbps) { impl_->add(id, links, cap_gbps); }
void FlowRates::remove(FlowId id) { impl_->remove(id); }
void FlowRates::set_cap(FlowId id, double cap_gbps) { impl_->set_cap(id, cap_gbps); }
std::span<const FlowId> FlowRates::recompute() { return impl_->recompute(false); }
std::span<const FlowId> FlowRates::recompute_all() { return impl_->recompute(true); }
bool FlowRates::active(FlowId id) const { return id < impl_->flows_.size() && impl_->flows_[id].active; }
double FlowRates::rate(FlowId id) const { return impl_->fs_[id].rate; }
double FlowRates::cap(FlowId id) const { return impl_->flows_[id].cap; }
std::span<const FlowLink> FlowRates::links(FlowId id) const { return impl_->flows_[id].links; }
std::size_t FlowRates::flows_on(LinkId l) const { return impl_->link_flows_[l].size(); }
double FlowRates::load(LinkId l) const { return impl_->load(l); }
double FlowRates::capacity(LinkId l) const { return impl_->capacity_[l]; }
std::size_t FlowRates::link_count() const { return impl_->capacity_.size(); }
std::size_t FlowRates::active_count() const { return impl_->active_; }
bool FlowRates::dirty() const { return !impl_->dirty_links_.empty() || !impl_->dirty_free_.empty(); }
const FlowRateStats& FlowRates::stats() const { return impl_->stats_; }

}  // namespace fabricsim::net
