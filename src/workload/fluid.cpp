#include "fabricsim/workload/fluid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/assert.hpp"

namespace fabricsim::workload {

namespace {

/// The multiplicative update's step: a link as loaded as the most loaded one
/// grows e^kStep times longer per round.  0.75 came out best of 0.25-2 on
/// the cases of tests/net/test_fluid.cpp (within 3% of the exact LP in 16
/// rounds on all of them; 1.5 and more oscillate).
constexpr double kStep = 0.75;

// Wire bytes per (source, destination) pair of the messages to another
// endpoint, keyed source << 32 | destination, in key order (a fixed order,
// whatever the hash map's); `payload` gets every message's payload.
std::vector<std::pair<std::uint64_t, double>> pair_wire_bytes(const PlannedMessages& messages,
                                                              const net::NetworkParams& np, double& payload) {
  std::unordered_map<std::uint64_t, double> bytes;
  messages([&](const PlannedMessage& m) {
    payload += static_cast<double>(m.bytes);
    if (m.src != m.dst)
      bytes[(static_cast<std::uint64_t>(m.src) << 32) | m.dst] += static_cast<double>(wire_bytes(m.bytes, np));
  });
  std::vector<std::pair<std::uint64_t, double>> pairs(bytes.begin(), bytes.end());
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

PlannedMessages each_of(const std::vector<PlannedMessage>& messages) {
  return [&messages](const std::function<void(const PlannedMessage&)>& f) {
    for (const auto& m : messages) f(m);
  };
}

std::vector<std::pair<std::uint64_t, double>> pair_wire_bytes(const std::vector<PlannedMessage>& messages,
                                                              const net::NetworkParams& np, double& payload) {
  return pair_wire_bytes(each_of(messages), np, payload);
}

// payload x 8 / makespan over the endpoints' total injection rate, at most 1.
double injection_share(double payload, double makespan_ns, const net::Topology& topo) {
  return std::min(1.0, payload * 8.0 / makespan_ns / std::max(topo.total_injection_gbps(), 1e-9));
}

// What the per-source share's bound needs of the sources: the most
// payload per wire byte and the most payload time at the injection rate of
// any sending source; `ok` false where one sends nothing over the network.
struct SourceTotals {
  std::vector<std::uint8_t> sends;  // per endpoint
  double ratio_max = 0, payload_ns_max = 0;
  bool ok = true;
};

SourceTotals source_totals(const net::Topology& topo, const std::vector<PlannedMessage>& messages,
                           const net::NetworkParams& np) {
  const std::size_t n = topo.endpoint_count();
  SourceTotals t;
  t.sends.assign(n, 0);
  std::vector<double> payload(n, 0.0), wire(n, 0.0);
  for (const auto& m : messages) {
    t.sends[m.src] = 1;
    payload[m.src] += static_cast<double>(m.bytes);
    if (m.src != m.dst) wire[m.src] += static_cast<double>(wire_bytes(m.bytes, np));
  }
  for (net::EndpointId e = 0; e < n; ++e) {
    if (!t.sends[e]) continue;
    if (!(wire[e] > 0) || !(topo.injection_gbps(e) > 0)) {
      t.ok = false;
      continue;
    }
    t.ratio_max = std::max(t.ratio_max, payload[e] / wire[e]);
    t.payload_ns_max = std::max(t.payload_ns_max, payload[e] * 8.0 / topo.injection_gbps(e));
  }
  return t;
}

// The bound of per_source_bound (fluid.hpp) from x (ns) per endpoint.
double sorted_completion_bound(const SourceTotals& t, const std::vector<double>& x) {
  if (!t.ok) return -1;
  std::vector<double> v;
  for (std::size_t e = 0; e < t.sends.size(); ++e)
    if (t.sends[e]) v.push_back(std::max(0.0, x[e]));
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  double prefix = 0, sum = 0;
  for (double xk : v) {
    prefix += xk;
    sum += prefix > 0 ? std::min(t.ratio_max, t.payload_ns_max / prefix) : t.ratio_max;
  }
  return std::min(1.0, sum / static_cast<double>(v.size()));
}

// A multiplicative update of link lengths (the bounds are scale-free): each
// link of capacity > 0 grows e^(step x its load / cap / umax) times, umax
// the most loaded link's load / cap, and the longest is then 1.
void lengthen(std::vector<double>& len, const std::vector<double>& load, const std::vector<double>& cap, double umax,
              double step) {
  double lmax = 0;
  for (std::size_t l = 0; l < len.size(); ++l)
    if (cap[l] > 0) {
      len[l] *= std::exp(step * load[l] / cap[l] / umax);
      lmax = std::max(lmax, len[l]);
    }
  for (double& x : len) x /= lmax;
}

// The lesser of two bounds where -1 is none.
double least_bound(double a, double b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); }

// A map of 64-bit keys to 64-bit values by open addressing, cleared in time
// proportional to what it holds: the fluid walk's per-level and
// per-destination indices of (node, state), looked up millions of times.
class FlatIndex {
 public:
  /// The value of `key`, inserted as `fresh` if absent.  (The reference is
  /// valid until the next call.)
  std::uint64_t& at(std::uint64_t key, std::uint64_t fresh) {
    if (2 * (used_.size() + 1) > keys_.size()) grow();
    std::size_t mask = keys_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == key) return values_[i];
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = fresh;
        used_.push_back(i);
        return values_[i];
      }
    }
  }
  void clear() {
    for (std::size_t i : used_) keys_[i] = kEmpty;
    used_.clear();
  }

 private:
  static constexpr std::uint64_t kEmpty = UINT64_MAX;
  static std::size_t hash(std::uint64_t k) { return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> 20); }
  void grow() {
    std::vector<std::uint64_t> keys = std::move(keys_), values = std::move(values_);
    const std::vector<std::size_t> used = std::move(used_);
    keys_.assign(std::max<std::size_t>(64, 2 * keys.size()), kEmpty);
    values_.assign(keys_.size(), 0);
    used_.clear();
    for (std::size_t i : used) at(keys[i], 0) = values[i];
  }
  std::vector<std::uint64_t> keys_, values_;
  std::vector<std::size_t> used_;
};

// A routing's next hops: next(node, state, dst, out) appends the (link,
// state after) moves on a minimal route; the walk starts in `initial`.
struct Hop {
  net::LinkId link;
  std::uint8_t state;
};

// A (node, state) of a pair's DAG and what the walk carries to it.
template <class Carry>
struct At {
  net::NodeId node;
  std::uint8_t state;
  Carry carry;
};

// Walks every pair's minimal-route DAG (pairs: destination << 32 | source
// -> wire bytes, in key order) level by level from its source, carrying a
// value along the hops: level(frontier) sees each level before its hops are
// taken (level 0: the source), hop(src, bytes, from, i, hop, count) is what
// a next hop of `count` gets from `from` (frontier[i]; and may add to its
// link), merge(into, value) joins what two hops bring to the same (node,
// state) of a level, arrive(src, bytes, value) is called at the
// destination, done(src, bytes) once the pair is walked.  Minimal routes shorten the distance by one per
// hop, so a level holds each (node, state) once.  A destination's next hops
// from each (node, state) are computed once for all its sources: the
// routing rules are what the walk spends its time on (a torus's
// distances), and one destination's DAGs from a thousand sources share
// their nodes (the 1k torus's full alltoall: 77 s of info before, most of
// it recomputing the same hops).
template <class Carry, class Next, class Level, class HopFn, class Merge, class Arrive, class Done>
void walk_pairs(const net::Topology& topo, Next& next_hops, std::uint8_t initial,
                const std::vector<std::pair<std::uint64_t, double>>& by_dst, Carry start, Level&& level, HopFn&& hop,
                Merge&& merge, Arrive&& arrive, Done&& done) {
  std::vector<At<Carry>> frontier, next;
  std::vector<Hop> arena;  // the current destination's next hops, (node, state) after (node, state)
  FlatIndex memo;          // (node, state) -> its hops: arena[begin, begin + count), packed begin << 8 | count
  FlatIndex slot;          // (node, state) -> its place in `next`, per level
  std::uint64_t memo_dst = UINT64_MAX;  // (none yet)
  for (const auto& [key, bytes] : by_dst) {
    const auto dst = static_cast<net::EndpointId>(key >> 32);
    const auto src = static_cast<net::EndpointId>(key & 0xFFFFFFFFu);
    if (dst != memo_dst) {
      memo.clear();
      arena.clear();
      memo_dst = dst;
    }
    const net::NodeId target = topo.endpoint_node(dst);
    frontier.assign(1, At<Carry>{topo.endpoint_node(src), initial, start});
    while (!frontier.empty()) {
      level(frontier);
      next.clear();
      slot.clear();
      for (std::uint32_t i = 0; i < frontier.size(); ++i) {
        const At<Carry>& at = frontier[i];
        if (at.node == target) {
          arrive(src, bytes, at.carry);
          continue;
        }
        const std::uint64_t at_key = static_cast<std::uint64_t>(at.node) << 8 | at.state;
        std::uint64_t& span = memo.at(at_key, UINT64_MAX);
        if (span == UINT64_MAX) {
          const std::size_t begin = arena.size();
          next_hops(at.node, at.state, dst, arena);
          FABRICSIM_ASSERT(arena.size() - begin < 256, "more than 255 next hops");
          span = static_cast<std::uint64_t>(begin) << 8 | (arena.size() - begin);
        }
        const std::size_t count = span & 0xFF, begin = span >> 8;
        for (std::size_t k = begin; k < begin + count; ++k) {
          const Hop h = arena[k];
          const Carry value = hop(src, bytes, at.carry, i, h, count);
          const net::NodeId to = topo.link(h.link).dst;
          std::uint64_t& place = slot.at(static_cast<std::uint64_t>(to) << 8 | h.state, UINT64_MAX);
          if (place == UINT64_MAX) {
            place = next.size();
            next.push_back(At<Carry>{to, h.state, value});
          } else {
            merge(next[place].carry, value);
          }
        }
      }
      frontier.swap(next);
    }
    done(src, bytes);
  }
}

// Length functions of the split bound: l_e = u_e^q / c_e, u_e the equal
// split's load of e relative to the most loaded link; q = infinity (-1
// here): the most loaded links only; q = 0: every link the routes use.
constexpr std::array<double, 4> kSplitPowers{-1.0, 8.0, 2.0, 0.0};
using SplitLengths = std::array<double, kSplitPowers.size()>;
// Multiplicative-update rounds of the split bound (each a walk over the
// routes), and their step (as kStep above, larger: 16 rounds of 3.0 reach
// 0.99 of the exact LP on the 8x8 torus's permutation, of 0.75 only 0.52).
constexpr std::uint32_t kSplitRounds = 16;
constexpr double kSplitStep = 3.0;
// Their work: at most kSplitRoundsWork walks beyond the estimate's own two,
// or up to kSplitRounds on traffic whose walk takes fewer than
// kSplitWorkFloor / kSplitRounds hops (the test cases, the small fabrics).
// The 128x128 torus's permutation (inputs/torus_large.toml): a walk of 106 M
// hops, two rounds (info 23 s; 11 s without the bound, 99 s with all
// sixteen rounds).
constexpr double kSplitRoundsWork = 2.0;
constexpr double kSplitWorkFloor = 5e7;

template <class Next>
FluidEstimate estimate(const net::Topology& topo, Next&& next_hops, std::uint8_t initial,
                       const std::vector<PlannedMessage>* all, const PlannedMessages& messages,
                       const net::NetworkParams& np, FluidDetail detail) {
  FABRICSIM_ASSERT(all != nullptr || detail == FluidDetail::Loads, "the bounds read the messages again");
  FluidEstimate est;
  est.link_bytes.assign(topo.link_count(), 0.0);
  // Flows with the same (source, destination) share their spread: add their
  // bytes first, then walk each pair's minimal-route DAG once, destination
  // after destination.
  auto pairs = pair_wire_bytes(messages, np, est.payload_bytes);
  for (auto& [key, bytes] : pairs) key = (key << 32) | (key >> 32);  // destination << 32 | source
  std::sort(pairs.begin(), pairs.end());
  // Each pair's bytes spread over its routes' DAG: a node passes its share
  // on equally over its next hops, and every hop adds share x bytes to its
  // link's load.  The loads are added up directly, pair after pair, in a
  // fixed order: no routing matrix (a batch of one on the 16k trees, whose
  // routes spread over more than a thousand links per pair, took more
  // memory than the network's whole state).
  std::vector<double>& loads = est.link_bytes;
  double walk_hops = 0;  // hops one walk takes (what the split bound's rounds are budgeted by)
  walk_pairs(
      topo, next_hops, initial, pairs, 1.0, [](const auto&) {},
      [&](net::EndpointId, double bytes, double share, std::uint32_t, Hop h, std::size_t count) {
        ++walk_hops;
        const double part = share / static_cast<double>(count);
        loads[h.link] += part * bytes;
        return part;
      },
      [](double& into, double add) { into += add; }, [](net::EndpointId, double, double) {},
      [](net::EndpointId, double) {});
  for (net::LinkId l = 0; l < topo.link_count(); ++l) {
    const double t = est.link_bytes[l] * 8.0 / topo.link(l).bandwidth_gbps;  // ns
    if (t > est.equal_split_makespan_ns) {
      est.equal_split_makespan_ns = t;
      est.bottleneck = l;
      est.bottleneck_bytes = est.link_bytes[l];
    }
  }
  if (!(est.equal_split_makespan_ns > 0)) return est;
  if (topo.endpoint_count() > 0)
    est.equal_split_throughput = injection_share(est.payload_bytes, est.equal_split_makespan_ns, topo);
  if (detail == FluidDetail::Loads) return est;
  const bool per_source = detail == FluidDetail::PerSourceBound;
  // The split bound.  Routing that chooses among the minimal routes by load
  // (adaptive) can beat the equal split, so its makespan is not a bound for
  // it.  What bounds every split over these routes is the dual of the
  // maximum concurrent flow restricted to them: for lengths l >= 0, a pair
  // of d wire bytes whose shortest route *among its minimal ones* is
  // dist_l long takes d x dist_l of length-weighted capacity, of which the
  // fabric offers sum_e c_e l_e per ns.  The lengths come from the equal
  // split's loads (kSplitPowers); where the equal split is the best split
  // (symmetric traffic), the first of them meets it.  The same lengths give
  // the per-source share's bound: a set S of sources needs at least sum over
  // S of x_s, x_s = s's bytes x dist_l / sum_e c_e l_e.
  const std::size_t n_links = topo.link_count();
  std::vector<SplitLengths> len(n_links, SplitLengths{});
  SplitLengths capacity{};
  for (net::LinkId l = 0; l < n_links; ++l) {
    const double cap = topo.link(l).bandwidth_gbps / 8.0;  // bytes per ns
    if (!(cap > 0) || !(est.link_bytes[l] > 0)) continue;  // (on no route)
    const double u = est.link_bytes[l] / cap / est.equal_split_makespan_ns;
    for (std::size_t v = 0; v < kSplitPowers.size(); ++v) {
      len[l][v] = kSplitPowers[v] < 0 ? (u >= 1.0 - 1e-9 ? 1.0 / cap : 0.0) : std::pow(u, kSplitPowers[v]) / cap;
      capacity[v] += cap * len[l][v];
    }
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  SplitLengths best, total{};
  best.fill(kInf);
  std::vector<SplitLengths> w(per_source ? topo.endpoint_count() : 0, SplitLengths{});
  walk_pairs(
      topo, next_hops, initial, pairs, SplitLengths{}, [](const auto&) {},
      [&](net::EndpointId, double, const SplitLengths& from, std::uint32_t, Hop h, std::size_t) {
        SplitLengths to;
        for (std::size_t v = 0; v < to.size(); ++v) to[v] = from[v] + len[h.link][v];
        return to;
      },
      [](SplitLengths& into, const SplitLengths& add) {
        for (std::size_t v = 0; v < into.size(); ++v) into[v] = std::min(into[v], add[v]);
      },
      [&](net::EndpointId, double, const SplitLengths& d) {
        for (std::size_t v = 0; v < best.size(); ++v) best[v] = std::min(best[v], d[v]);
      },
      [&](net::EndpointId src, double bytes) {
        for (std::size_t v = 0; v < best.size(); ++v) {
          const double d = best[v] == kInf ? 0.0 : best[v];  // (a pair without a route adds nothing)
          total[v] += bytes * d;
          if (per_source) w[src][v] += bytes * d;
        }
        best.fill(kInf);
      });
  std::size_t best_v = 0;
  for (std::size_t v = 0; v < kSplitPowers.size(); ++v)
    if (capacity[v] > 0 && total[v] / capacity[v] > est.min_makespan_ns) {
      est.min_makespan_ns = total[v] / capacity[v];
      best_v = v;
    }
  // Where the equal split is not the best split (an asymmetric pattern: the
  // 8x8 torus's permutation bound at half the exact LP's value from these
  // lengths), multiplicative updates from the best of them, as for the
  // any-route bound but over each pair's minimal routes: route every pair
  // on one shortest of them, lengthen the links by how loaded that leaves
  // them, and evaluate again.  Each round is one more walk; none where the
  // bound already meets the equal split.
  if (est.min_makespan_ns < est.equal_split_makespan_ns * (1 - 1e-9)) {
    struct Step {
      double dist;
      std::uint32_t parent;  // its index in the level before
      net::LinkId link;      // the hop from there
    };
    std::vector<double> l1(n_links, 0.0), cap(n_links, 0.0), load(n_links, 0.0);
    double floor_len = std::numeric_limits<double>::infinity();
    for (net::LinkId l = 0; l < n_links; ++l)
      if (len[l][best_v] > 0) floor_len = std::min(floor_len, len[l][best_v]);
    for (net::LinkId l = 0; l < n_links; ++l) {
      if (!(est.link_bytes[l] > 0) || !(topo.link(l).bandwidth_gbps > 0)) continue;
      cap[l] = topo.link(l).bandwidth_gbps / 8.0;
      // (Every link of the routes gets a length, so that ties do not all
      // fall on the first route.)
      l1[l] = len[l][best_v] + 1e-3 * floor_len;
    }
    std::vector<std::vector<At<Step>>> levels;
    Step arrived{kInf, 0, net::kNoLink};
    std::size_t arrived_level = 0;
    const double budget = std::max(kSplitRoundsWork * walk_hops, kSplitWorkFloor);
    for (std::uint32_t round = 0; round < kSplitRounds && (round + 1) * walk_hops <= budget; ++round) {
      std::fill(load.begin(), load.end(), 0.0);
      double sum_dist = 0;
      walk_pairs(
          topo, next_hops, initial, pairs, Step{0.0, 0, net::kNoLink},
          [&](const std::vector<At<Step>>& frontier) { levels.push_back(frontier); },
          [&](net::EndpointId, double, const Step& from, std::uint32_t i, Hop h, std::size_t) {
            return Step{from.dist + l1[h.link], i, h.link};
          },
          [](Step& into, const Step& add) {
            if (add.dist < into.dist) into = add;
          },
          [&](net::EndpointId, double, const Step& at) {
            if (at.dist < arrived.dist) {
              arrived = at;
              arrived_level = levels.size() - 1;
            }
          },
          [&](net::EndpointId, double bytes) {
            if (arrived.dist < kInf) {
              sum_dist += bytes * arrived.dist;
              Step at = arrived;
              for (std::size_t lv = arrived_level; lv > 0; --lv) {
                load[at.link] += bytes;
                at = levels[lv - 1][at.parent].carry;
              }
            }
            arrived = Step{kInf, 0, net::kNoLink};
            levels.clear();
          });
      double offered = 0, umax = 0;
      for (net::LinkId l = 0; l < n_links; ++l) {
        offered += cap[l] * l1[l];
        if (cap[l] > 0) umax = std::max(umax, load[l] / cap[l]);
      }
      if (offered > 0) est.min_makespan_ns = std::max(est.min_makespan_ns, sum_dist / offered);
      if (umax <= 0 || est.min_makespan_ns >= est.equal_split_makespan_ns * (1 - 1e-9)) break;
      lengthen(l1, load, cap, umax, kSplitStep);
    }
  }
  // (Rounding aside, no split beats the equal one's makespan.)
  est.min_makespan_ns = std::min(est.min_makespan_ns, est.equal_split_makespan_ns);
  if (est.min_makespan_ns > 0 && topo.endpoint_count() > 0)
    est.throughput_bound = injection_share(est.payload_bytes, est.min_makespan_ns, topo);
  if (per_source) {
    const SourceTotals totals = source_totals(topo, *all, np);
    std::vector<double> x(topo.endpoint_count());
    for (std::size_t v = 0; v < kSplitPowers.size(); ++v) {
      if (!(capacity[v] > 0)) continue;
      for (std::size_t e = 0; e < x.size(); ++e) x[e] = w[e][v] / capacity[v];
      est.per_source_bound = least_bound(est.per_source_bound, sorted_completion_bound(totals, x));
    }
  }
  return est;
}

}  // namespace

FluidEstimate estimate_fluid(const net::Topology& topo, const net::RoutingTable& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np,
                             FluidDetail detail) {
  const auto next = [&](net::NodeId node, std::uint8_t, net::EndpointId dst, std::vector<Hop>& out) {
    for (auto port : routes.candidates(node, dst)) out.push_back(Hop{topo.node(node).out[port], 0});
  };
  return estimate(topo, next, 0, &messages, each_of(messages), np, detail);
}

double per_source_bound(const net::Topology& topo, const std::vector<PlannedMessage>& messages,
                        const net::NetworkParams& np, const std::vector<double>& x) {
  return sorted_completion_bound(source_totals(topo, messages, np), x);
}

FluidEstimate estimate_fluid(const net::Topology& topo, const net::StateRoutes& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np,
                             FluidDetail detail) {
  std::vector<net::StateRoutes::Option> opts;
  const auto next = [&](net::NodeId node, std::uint8_t state, net::EndpointId dst, std::vector<Hop>& out) {
    opts.clear();
    routes.options(node, state, dst, opts);
    for (const auto& o : opts) out.push_back(Hop{o.link, o.state});
  };
  return estimate(topo, next, routes.rules().initial_state(), &messages, each_of(messages), np, detail);
}

FluidEstimate estimate_fluid_loads(const net::Topology& topo, const net::RoutingTable* table,
                                   const net::StateRoutes* rules, const PlannedMessages& messages,
                                   const net::NetworkParams& np) {
  if (rules != nullptr) {
    std::vector<net::StateRoutes::Option> opts;
    const auto next = [&](net::NodeId node, std::uint8_t state, net::EndpointId dst, std::vector<Hop>& out) {
      opts.clear();
      rules->options(node, state, dst, opts);
      for (const auto& o : opts) out.push_back(Hop{o.link, o.state});
    };
    return estimate(topo, next, rules->rules().initial_state(), nullptr, messages, np, FluidDetail::Loads);
  }
  std::optional<net::RoutingTable> own;
  if (table == nullptr) own.emplace(topo);
  const net::RoutingTable& routes = table != nullptr ? *table : *own;
  const auto next = [&](net::NodeId node, std::uint8_t, net::EndpointId dst, std::vector<Hop>& out) {
    for (auto port : routes.candidates(node, dst)) out.push_back(Hop{topo.node(node).out[port], 0});
  };
  return estimate(topo, next, 0, nullptr, messages, np, FluidDetail::Loads);
}

AnyRouteBound bound_any_routes(const net::Topology& topo, const std::vector<PlannedMessage>& messages,
                               const net::NetworkParams& np, double work_budget, std::uint32_t max_rounds) {
  AnyRouteBound out;
  const std::size_t n_nodes = topo.node_count();
  const std::size_t n_links = topo.link_count();
  double payload = 0;
  const auto pairs = pair_wire_bytes(messages, np, payload);
  std::vector<double> cap(n_links, 0.0);  // bytes per ns
  for (net::LinkId l = 0; l < n_links; ++l)
    if (topo.link(l).carries_data) cap[l] = topo.link(l).bandwidth_gbps / 8.0;
  std::vector<std::vector<net::LinkId>> adj(n_nodes);  // data links out, in port order
  for (net::NodeId v = 0; v < n_nodes; ++v)
    for (net::LinkId l : topo.node(v).out)
      if (cap[l] > 0) adj[v].push_back(l);

  // Demands by the node their shortest-route tree starts from: a source
  // endpoint with a single link out starts at that link's far end (its
  // routes all take that link first), so 16k endpoints share the trees of
  // their few hundred switches.
  struct Demand {
    net::NodeId dst;
    double bytes;
    net::LinkId first;  ///< the source's only link out, or kNoLink
    net::EndpointId src;
  };
  std::vector<std::pair<net::NodeId, Demand>> demands;
  std::vector<double> out_bytes(n_nodes, 0.0), in_bytes(n_nodes, 0.0);
  {
    for (const auto& [key, bytes] : pairs) {
      const auto src = static_cast<net::EndpointId>(key >> 32);
      const net::NodeId s = topo.endpoint_node(src);
      const net::NodeId t = topo.endpoint_node(static_cast<net::EndpointId>(key & 0xFFFFFFFFu));
      out_bytes[s] += bytes;
      in_bytes[t] += bytes;
      if (adj[s].size() == 1 && topo.link(adj[s][0]).dst != t)
        demands.push_back({topo.link(adj[s][0]).dst, Demand{t, bytes, adj[s][0], src}});
      else
        demands.push_back({s, Demand{t, bytes, net::kNoLink, src}});
    }
    std::stable_sort(demands.begin(), demands.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  // Injection and ejection cuts.
  double best_ns = 0;
  net::NodeId worst_in = 0;  // the tightest ejection cut
  double worst_in_ns = 0, worst_in_cap = 0;
  for (net::NodeId v = 0; v < n_nodes; ++v) {
    double c_out = 0, c_in = 0;
    for (net::LinkId l : topo.node(v).out) c_out += cap[l];
    for (net::LinkId l : topo.node(v).in) c_in += cap[l];
    if (out_bytes[v] > 0 && c_out > 0) best_ns = std::max(best_ns, out_bytes[v] / c_out);
    if (in_bytes[v] > 0 && c_in > 0) {
      best_ns = std::max(best_ns, in_bytes[v] / c_in);
      if (in_bytes[v] / c_in > worst_in_ns) {
        worst_in_ns = in_bytes[v] / c_in;
        worst_in = v;
        worst_in_cap = c_in;
      }
    }
  }
  // The per-source share's bound, from the tightest ejection cut (x_s: s's
  // bytes into it at its rate) and from every length function below.
  const SourceTotals totals = source_totals(topo, messages, np);
  std::vector<double> src_volume(topo.endpoint_count(), 0.0);
  if (worst_in_cap > 0) {
    for (const auto& [key, bytes] : pairs)
      if (topo.endpoint_node(static_cast<net::EndpointId>(key & 0xFFFFFFFFu)) == worst_in)
        src_volume[key >> 32] += bytes / worst_in_cap;
    out.per_source_bound = sorted_completion_bound(totals, src_volume);
  }
  std::uint32_t sources = 0;
  for (std::size_t i = 0; i < demands.size(); ++i)
    if (i == 0 || demands[i].first != demands[i - 1].first) ++sources;
  out.sources = sources;
  const double per_round = static_cast<double>(sources) * static_cast<double>(n_links + n_nodes);
  if (per_round > work_budget) {
    out.per_source_bound = -1;  // (nothing computed)
    return out;
  }
  const auto rounds =
      static_cast<std::uint32_t>(std::min<double>(max_rounds, per_round > 0 ? std::floor(work_budget / per_round) : 1));

  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> load(n_links, 0.0), dist(n_nodes, kInf), acc(n_nodes, 0.0);
  std::vector<net::LinkId> parent(n_nodes, net::kNoLink);
  std::vector<net::NodeId> settled, leaves;
  std::vector<net::LinkId> ties;
  using Item = std::pair<double, net::NodeId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  // One length function: its bound (sum of d x dist over sum of c x l), and
  // in `load` the demands spread over their shortest routes.
  const auto evaluate = [&](const std::vector<double>& len) {
    std::fill(load.begin(), load.end(), 0.0);
    std::fill(src_volume.begin(), src_volume.end(), 0.0);
    double volume = 0;  // sum of d x dist
    for (std::size_t i = 0; i < demands.size();) {
      const net::NodeId s = demands[i].first;
      std::size_t j = i;
      while (j < demands.size() && demands[j].first == s) ++j;
      // Dijkstra from s; nodes that do not forward end routes.
      for (net::NodeId v : settled) {
        dist[v] = kInf;
        parent[v] = net::kNoLink;
        acc[v] = 0;
      }
      settled.clear();
      leaves.clear();
      dist[s] = 0;
      heap.push({0.0, s});
      while (!heap.empty()) {
        const auto [d, v] = heap.top();
        heap.pop();
        if (d > dist[v]) continue;
        settled.push_back(v);
        for (net::LinkId l : adj[v]) {
          const net::NodeId w = topo.link(l).dst;
          const double nd = d + len[l];
          if (nd < dist[w]) {
            // A node that does not forward ends routes: its distance is
            // final once its neighbours are settled, and it need not pass
            // through the heap (16,320 of the 16k Dragonfly's 17,280 nodes:
            // the heap holds its 960 routers, and the bound takes a few
            // seconds instead of 24).
            if (w != s && !topo.node(w).forwards) {
              if (dist[w] == kInf) leaves.push_back(w);
            } else {
              heap.push({nd, w});
            }
            dist[w] = nd;
            parent[w] = l;
          }
        }
      }
      // (Every node reached is in `settled` now, those that forward in the
      // order of their distance, then those that do not: the loop below
      // takes each before the nodes it reached it from.)
      settled.insert(settled.end(), leaves.begin(), leaves.end());
      for (std::size_t k = i; k < j; ++k) {
        const Demand& dm = demands[k].second;
        if (dist[dm.dst] == kInf) continue;  // unreachable: the run strands it; no bound from it
        const double v = dm.bytes * (dist[dm.dst] + (dm.first != net::kNoLink ? len[dm.first] : 0.0));
        volume += v;
        src_volume[dm.src] += v;
        acc[dm.dst] += dm.bytes;
        if (dm.first != net::kNoLink) load[dm.first] += dm.bytes;
      }
      // Each demand along its shortest route: push the bytes up the tree.
      // Ties are split equally (as ECMP over the shortest routes), not
      // all sent over the first route found: a single route per tree
      // overloads one of many equal paths, and the lengths then swing
      // between them instead of settling.
      for (auto it = settled.rbegin(); it != settled.rend(); ++it) {
        const net::NodeId v = *it;
        if (acc[v] <= 0 || v == s) continue;
        ties.clear();
        const double tol = 1e-12 * dist[v];
        for (net::LinkId l : topo.node(v).in) {
          if (cap[l] <= 0) continue;
          const net::NodeId u = topo.link(l).src;
          if (dist[u] == kInf || (u != s && !topo.node(u).forwards)) continue;
          if (dist[u] + len[l] <= dist[v] + tol) ties.push_back(l);
        }
        if (ties.empty()) ties.push_back(parent[v]);
        const double share = acc[v] / static_cast<double>(ties.size());
        for (net::LinkId l : ties) {
          load[l] += share;
          acc[topo.link(l).src] += share;
        }
      }
      i = j;
    }
    double capacity = 0;  // sum of c x l per ns
    for (net::LinkId l = 0; l < n_links; ++l) capacity += cap[l] * len[l];
    if (!(capacity > 0)) return 0.0;
    for (double& x : src_volume) x /= capacity;
    out.per_source_bound = least_bound(out.per_source_bound, sorted_completion_bound(totals, src_volume));
    return volume / capacity;
  };
  // Seeds: l = 1 / c (time per byte) on every link, whose shortest routes
  // are the minimal ones; then, per class of links, 1 / c on that class
  // only (the global cables of a Dragonfly, say, where the others barely
  // matter: they get a millionth, which keeps ties broken towards fewer
  // hops and lets them grow later), and the same with 2 / c on the links of
  // the class that those class-only routes load above the class's mean (the dual of
  // a shift over a Dragonfly's groups: a detour takes two global cables,
  // the direct cable is worth two).
  std::vector<double> len, best_len, best_load;
  double best_seed = -1;
  const auto try_seed = [&](std::vector<double>&& seed) {
    if (out.rounds == rounds) return;
    const double t = evaluate(seed);
    ++out.rounds;
    best_ns = std::max(best_ns, t);
    if (t > best_seed) {
      best_seed = t;
      best_len = std::move(seed);
      best_load = load;
    }
  };
  {
    std::vector<double> all(n_links, 0.0);
    std::array<std::size_t, net::kLinkClassCount> in_class{};
    std::size_t data_links = 0;
    for (net::LinkId l = 0; l < n_links; ++l)
      if (cap[l] > 0) {
        all[l] = 1.0 / cap[l];
        ++in_class[static_cast<int>(topo.link(l).cls)];
        ++data_links;
      }
    try_seed(std::vector<double>(all));
    for (int c = 0; c < net::kLinkClassCount; ++c) {
      if (in_class[c] == 0 || in_class[c] == data_links) continue;
      const auto cls = static_cast<net::LinkClass>(c);
      std::vector<double> one = all;
      for (net::LinkId l = 0; l < n_links; ++l)
        if (topo.link(l).cls != cls) one[l] *= 1e-6;
      std::vector<double> hot = one;
      try_seed(std::move(one));
      if (out.rounds == rounds) break;
      // (`load`: the routes of the class-only lengths, those with the
      // fewest links of the class)
      double mean = 0;
      for (net::LinkId l = 0; l < n_links; ++l)
        if (topo.link(l).cls == cls && cap[l] > 0) mean += load[l] / cap[l] / static_cast<double>(in_class[c]);
      bool any_hot = false;
      for (net::LinkId l = 0; l < n_links; ++l)
        if (topo.link(l).cls == cls && cap[l] > 0 && load[l] / cap[l] > mean * (1 + 1e-9)) {
          hot[l] *= 2;
          any_hot = true;
        }
      if (any_hot) try_seed(std::move(hot));
    }
  }
  // Multiplicative updates from the best seed: lengthen the links in
  // proportion to how overloaded the shortest routes leave them, rescale
  // (the bound is scale-free), and evaluate again.
  len = std::move(best_len);
  load = std::move(best_load);
  while (out.rounds < rounds && !len.empty()) {
    double umax = 0;
    for (net::LinkId l = 0; l < n_links; ++l)
      if (cap[l] > 0) umax = std::max(umax, load[l] / cap[l]);
    if (umax <= 0) break;
    lengthen(len, load, cap, umax, kStep);
    best_ns = std::max(best_ns, evaluate(len));
    ++out.rounds;
  }
  out.computed = true;
  out.min_makespan_ns = best_ns;
  if (best_ns > 0 && topo.endpoint_count() > 0)
    out.throughput_bound = injection_share(payload, best_ns, topo);
  return out;
}

}  // namespace fabricsim::workload
