// Central path assignment on a two-tier Clos (two_tier.hpp): the problem's
// checks and loads, Greedy (Algorithm 1), the edge colouring, the annealing
// and the ECMP baseline.  The ILP, which needs CBC, is in ilp.cpp.
#include "fabricsim/ctrl/two_tier.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::ctrl {

namespace detail {
std::uint32_t load_lower_bound(const Problem& p);
}  // namespace detail

namespace {

using std::uint32_t;

constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();

/// L(e) on the ToR->spine and spine->ToR links.  Both are kept ToR-major
/// (down_[t * spines + s] is spine s -> ToR t, unlike the problem's mask) so
/// that one commodity's candidates are two contiguous rows.
class Loads {
 public:
  explicit Loads(const Problem& p)
      : spines_(p.spines), up_(std::size_t{p.tors} * p.spines, 0), down_(std::size_t{p.tors} * p.spines, 0) {}

  const uint32_t* up_row(uint32_t t) const { return up_.data() + std::size_t{t} * spines_; }
  const uint32_t* down_row(uint32_t t) const { return down_.data() + std::size_t{t} * spines_; }
  uint32_t cost(const Commodity& c, uint32_t s) const { return std::max(up_row(c.src_tor)[s], down_row(c.dst_tor)[s]); }

  void add(const Commodity& c, std::int32_t s) {
    if (s == kNoSpine) return;
    ++up_[std::size_t{c.src_tor} * spines_ + static_cast<uint32_t>(s)];
    ++down_[std::size_t{c.dst_tor} * spines_ + static_cast<uint32_t>(s)];
  }
  void clear() {
    std::fill(up_.begin(), up_.end(), 0u);
    std::fill(down_.begin(), down_.end(), 0u);
  }
  uint32_t max() const {
    uint32_t m = 0;
    for (uint32_t l : up_) m = std::max(m, l);
    for (uint32_t l : down_) m = std::max(m, l);
    return m;
  }
  /// The annealing's energy: the sum of the loads of the links at the maximum.
  std::uint64_t energy(uint32_t max_load) const {
    std::uint64_t n = 0;
    for (uint32_t l : up_) n += l == max_load ? 1 : 0;
    for (uint32_t l : down_) n += l == max_load ? 1 : 0;
    return n * max_load;
  }

 private:
  uint32_t spines_;
  std::vector<uint32_t> up_;
  std::vector<uint32_t> down_;
};

/// Algorithm 1's step: the usable spine with the least path congestion,
/// ties to the lowest id (strict <); kNoSpine when none is usable.
std::int32_t least_loaded(const Problem& p, const Loads& loads, const Commodity& c) {
  const uint32_t* up = loads.up_row(c.src_tor);
  const uint32_t* down = loads.down_row(c.dst_tor);
  std::int32_t best = kNoSpine;
  uint32_t best_load = kUnset;
  const bool all_live = p.up_live.empty() && p.down_live.empty();  // the common case: no mask to read
  for (uint32_t s = 0; s < p.spines; ++s) {
    if (!all_live && !p.usable(c, s)) continue;
    const uint32_t l = std::max(up[s], down[s]);
    if (l < best_load) {
      best_load = l;
      best = static_cast<std::int32_t>(s);
    }
  }
  return best;
}

bool routable(const Problem& p, const Commodity& c) {
  for (uint32_t s = 0; s < p.spines; ++s)
    if (p.usable(c, s)) return true;
  return false;
}

constexpr std::int64_t kSkip = -2, kRepair = -1;

/// Each commodity on the spine `preferred(i)` gives it (kSkip: left
/// unassigned; kRepair, or a spine it cannot use: repaired), then the
/// repaired ones in index order on their least loaded usable spine.
/// `repair` receives those.  The edge colouring's and the annealing's
/// evaluation (their repair rule for single failed links).
template <class Preferred>
void assign_or_repair(const Problem& p, Loads& loads, std::vector<std::int32_t>& spine,
                      std::vector<std::size_t>& repair, Preferred preferred) {
  repair.clear();
  for (std::size_t i = 0; i < p.commodities.size(); ++i) {
    const std::int64_t s = preferred(i);
    if (s == kSkip) continue;
    const Commodity& c = p.commodities[i];
    if (s >= 0 && p.usable(c, static_cast<std::uint32_t>(s))) {
      spine[i] = static_cast<std::int32_t>(s);
      loads.add(c, spine[i]);
    } else {
      repair.push_back(i);
    }
  }
  for (std::size_t i : repair) {
    spine[i] = least_loaded(p, loads, p.commodities[i]);
    loads.add(p.commodities[i], spine[i]);
  }
}

Assignment finish(std::vector<std::int32_t> spine, uint32_t max_load, bool optimal) {
  Assignment a;
  a.unroutable = static_cast<uint32_t>(std::count(spine.begin(), spine.end(), kNoSpine));
  a.spine = std::move(spine);
  a.max_load = max_load;
  a.optimal = optimal;
  return a;
}

/// The released code's McvlcRoutingStrategy order: groups a_t (source ToR t)
/// and b_t (destination ToR t) by size descending, ties by the string key
/// compared as strings ("a_10" < "a_2"), then each group's commodities not
/// yet taken, by index (the code's hash-set order made deterministic).  The
/// key holds the ToR index, which is the ToR's node id in the paper's
/// create_2_layer_topology (ToRs are nodes 0..63).
std::vector<uint32_t> tor_degree_order(const Problem& p) {
  const auto n = static_cast<uint32_t>(p.commodities.size());
  // Per ToR, its commodities by index: two bucket lists (counting sort).
  std::vector<uint32_t> out_start(p.tors + 1, 0), in_start(p.tors + 1, 0);
  for (const Commodity& c : p.commodities) {
    ++out_start[c.src_tor + 1];
    ++in_start[c.dst_tor + 1];
  }
  for (uint32_t t = 0; t < p.tors; ++t) {
    out_start[t + 1] += out_start[t];
    in_start[t + 1] += in_start[t];
  }
  std::vector<uint32_t> out_list(n), in_list(n);
  {
    std::vector<uint32_t> out_fill(out_start.begin(), out_start.end() - 1);
    std::vector<uint32_t> in_fill(in_start.begin(), in_start.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      out_list[out_fill[p.commodities[i].src_tor]++] = i;
      in_list[in_fill[p.commodities[i].dst_tor]++] = i;
    }
  }

  struct Group {
    uint32_t size;
    std::string key;
    const uint32_t* begin;
  };
  std::vector<Group> groups;
  groups.reserve(2 * std::size_t{p.tors});
  for (uint32_t t = 0; t < p.tors; ++t) {
    if (out_start[t + 1] > out_start[t])
      groups.push_back({out_start[t + 1] - out_start[t], "a_" + std::to_string(t), out_list.data() + out_start[t]});
    if (in_start[t + 1] > in_start[t])
      groups.push_back({in_start[t + 1] - in_start[t], "b_" + std::to_string(t), in_list.data() + in_start[t]});
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.size != b.size ? a.size > b.size : a.key < b.key; });

  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<std::uint8_t> taken(n, 0);
  for (const Group& g : groups) {
    for (uint32_t k = 0; k < g.size; ++k) {
      const uint32_t i = g.begin[k];
      if (taken[i] != 0) continue;
      taken[i] = 1;
      order.push_back(i);
    }
  }
  return order;
}

}  // namespace

namespace detail {

/// A lower bound on any assignment's max load: a source ToR's commodities
/// all leave on its up-links to the spines they can use, so some such link
/// carries at least ceil(out-degree / those spines); likewise into a
/// destination.  With whole spines failed this is ceil(Delta / |live|), the
/// optimum; single failed links can only make it weaker, never wrong.
std::uint32_t load_lower_bound(const Problem& p) {
  const std::size_t cells = std::size_t{p.tors} * p.spines;
  std::vector<std::uint8_t> up_used(cells, 0), down_used(cells, 0);
  std::vector<uint32_t> out_degree(p.tors, 0), in_degree(p.tors, 0);
  for (const Commodity& c : p.commodities) {
    bool any = false;
    for (uint32_t s = 0; s < p.spines; ++s) {
      if (!p.usable(c, s)) continue;
      any = true;
      up_used[std::size_t{c.src_tor} * p.spines + s] = 1;
      down_used[std::size_t{c.dst_tor} * p.spines + s] = 1;
    }
    if (any) {
      ++out_degree[c.src_tor];
      ++in_degree[c.dst_tor];
    }
  }
  uint32_t bound = 0;
  const auto side = [&](const std::vector<uint32_t>& degree, const std::vector<std::uint8_t>& used) {
    for (uint32_t t = 0; t < p.tors; ++t) {
      if (degree[t] == 0) continue;
      const auto* row = used.data() + std::size_t{t} * p.spines;
      const auto spines = static_cast<uint32_t>(std::count(row, row + p.spines, std::uint8_t{1}));
      bound = std::max(bound, (degree[t] + spines - 1) / spines);  // spines >= 1: degree counts routable ones
    }
  };
  side(out_degree, up_used);
  side(in_degree, down_used);
  return bound;
}

}  // namespace detail

std::vector<std::uint32_t> Problem::live_spines() const {
  std::vector<uint32_t> live;
  for (uint32_t s = 0; s < spines; ++s) {
    bool ok = true;
    for (uint32_t t = 0; t < tors && ok; ++t) ok = up(t, s) && down(s, t);
    if (ok) live.push_back(s);
  }
  return live;
}

void validate(const Problem& p) {
  const std::uint64_t cells = std::uint64_t{p.tors} * p.spines;
  if (cells > std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument("ctrl::Problem: tors * spines = " + std::to_string(cells) +
                                " overflows the link index");
  if (!p.up_live.empty() && p.up_live.size() != cells)
    throw std::invalid_argument("ctrl::Problem: up_live has " + std::to_string(p.up_live.size()) +
                                " entries, expected tors * spines = " + std::to_string(cells) + " (or none)");
  if (!p.down_live.empty() && p.down_live.size() != cells)
    throw std::invalid_argument("ctrl::Problem: down_live has " + std::to_string(p.down_live.size()) +
                                " entries, expected spines * tors = " + std::to_string(cells) + " (or none)");
  if (p.commodities.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("ctrl::Problem: too many commodities");
  for (std::size_t i = 0; i < p.commodities.size(); ++i) {
    const Commodity& c = p.commodities[i];
    if (c.src_tor < p.tors && c.dst_tor < p.tors && c.src_tor != c.dst_tor) continue;
    const std::string who = "ctrl::Problem: commodity " + std::to_string(i) + ": ";
    if (c.src_tor >= p.tors)
      throw std::invalid_argument(who + "src_tor " + std::to_string(c.src_tor) +
                                  " out of range (tors = " + std::to_string(p.tors) + ")");
    if (c.dst_tor >= p.tors)
      throw std::invalid_argument(who + "dst_tor " + std::to_string(c.dst_tor) +
                                  " out of range (tors = " + std::to_string(p.tors) + ")");
    throw std::invalid_argument(who + "source and destination in ToR " + std::to_string(c.src_tor) +
                                " (intra-ToR traffic never reaches a spine)");
  }
}

std::uint32_t max_load(const Problem& p, const std::vector<std::int32_t>& spine) {
  validate(p);
  if (spine.size() != p.commodities.size())
    throw std::invalid_argument("ctrl::max_load: " + std::to_string(spine.size()) + " spines for " +
                                std::to_string(p.commodities.size()) + " commodities");
  Loads loads(p);
  for (std::size_t i = 0; i < spine.size(); ++i) {
    if (spine[i] != kNoSpine && (spine[i] < 0 || static_cast<uint32_t>(spine[i]) >= p.spines))
      throw std::invalid_argument("ctrl::max_load: commodity " + std::to_string(i) + ": spine " +
                                  std::to_string(spine[i]) + " out of range (spines = " + std::to_string(p.spines) +
                                  ")");
    loads.add(p.commodities[i], spine[i]);
  }
  return loads.max();
}

// In two tiers the link ToR t -> s is used only by commodities leaving t and
// s -> t only by those entering t, so connected components of the conflict
// graph (same source or destination ToR) share no link: running each
// component on its own, in the global order restricted to it, gives exactly
// the result of this single pass in the global order.  One pass is also the
// fast way here (microseconds for thousands of commodities).
Assignment greedy(const Problem& p, GreedyOrder order) {
  validate(p);
  const std::size_t n = p.commodities.size();
  std::vector<std::int32_t> spine(n, kNoSpine);
  Loads loads(p);
  const auto step = [&](std::size_t i) {
    const Commodity& c = p.commodities[i];
    spine[i] = least_loaded(p, loads, c);
    loads.add(c, spine[i]);
  };
  if (order == GreedyOrder::Input) {
    for (std::size_t i = 0; i < n; ++i) step(i);
  } else {
    for (uint32_t i : tor_degree_order(p)) step(i);
  }
  return finish(std::move(spine), loads.max(), false);
}

// Koenig: a bipartite multigraph of maximum degree Delta has a proper edge
// colouring with Delta colours.  Edges are coloured one at a time: with a
// free at u and b free at v (both exist, degrees <= Delta), either one is
// free at both ends or the a/b alternating path from v is flipped, which
// frees a at v and cannot reach u (it would close an odd cycle).  O(E * V).
Assignment edge_coloring(const Problem& p) {
  validate(p);
  const std::size_t n = p.commodities.size();
  const std::vector<uint32_t> live = p.live_spines();
  const uint32_t vertices = 2 * p.tors;  // source ToR t: t; destination ToR t: tors + t

  std::vector<std::uint8_t> can_route(n, 0);
  std::vector<uint32_t> degree(vertices, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Commodity& c = p.commodities[i];
    if (!routable(p, c)) continue;
    can_route[i] = 1;
    ++degree[c.src_tor];
    ++degree[p.tors + c.dst_tor];
  }
  const uint32_t delta = degree.empty() ? 0 : *std::max_element(degree.begin(), degree.end());

  // at[v * delta + k]: the edge of colour k at vertex v, or -1.
  std::vector<std::int32_t> at(std::size_t{vertices} * delta, -1);
  std::vector<uint32_t> colour(n, kUnset);
  const auto ends = [&](std::size_t e) {
    return std::pair<uint32_t, uint32_t>{p.commodities[e].src_tor, p.tors + p.commodities[e].dst_tor};
  };
  const auto slot = [&](uint32_t v, uint32_t k) -> std::int32_t& { return at[std::size_t{v} * delta + k]; };
  const auto free_colour = [&](uint32_t v) {
    for (uint32_t k = 0; k < delta; ++k)
      if (slot(v, k) < 0) return k;
    return kUnset;  // unreachable: v has an uncoloured edge, so fewer than delta coloured ones
  };
  std::vector<std::size_t> path;
  for (std::size_t e = 0; e < n; ++e) {
    if (can_route[e] == 0) continue;
    const auto [u, v] = ends(e);
    const uint32_t a = free_colour(u);
    const uint32_t b = free_colour(v);
    uint32_t k = a;
    if (slot(v, a) >= 0) {
      if (slot(u, b) < 0) {
        k = b;
      } else {
        // Walk the path v -a- . -b- . -a- ... and swap a and b along it.
        path.clear();
        uint32_t x = v, want = a;
        while (slot(x, want) >= 0) {
          const auto f = static_cast<std::size_t>(slot(x, want));
          path.push_back(f);
          const auto [fu, fv] = ends(f);
          x = fu == x ? fv : fu;
          want = want == a ? b : a;
        }
        for (std::size_t f : path) {
          const auto [fu, fv] = ends(f);
          slot(fu, colour[f]) = -1;
          slot(fv, colour[f]) = -1;
        }
        for (std::size_t f : path) {
          colour[f] = colour[f] == a ? b : a;
          const auto [fu, fv] = ends(f);
          slot(fu, colour[f]) = static_cast<std::int32_t>(f);
          slot(fv, colour[f]) = static_cast<std::int32_t>(f);
        }
      }
    }
    colour[e] = k;
    slot(u, k) = static_cast<std::int32_t>(e);
    slot(v, k) = static_cast<std::int32_t>(e);
  }

  // Colour k -> live[k mod |live|]; a commodity that cannot use that spine
  // (a failed single link, or no live spine at all) is repaired afterwards,
  // in index order, onto its least loaded usable spine.
  std::vector<std::int32_t> spine(n, kNoSpine);
  Loads loads(p);
  std::vector<std::size_t> repair;
  assign_or_repair(p, loads, spine, repair, [&](std::size_t i) -> std::int64_t {
    if (can_route[i] == 0) return kSkip;
    return live.empty() ? kRepair : live[colour[i] % live.size()];
  });
  const uint32_t m = loads.max();
  // Optimal when proven: no repair and the max load meets the lower bound
  // (it always does when failures take out whole spines).
  return finish(std::move(spine), m, repair.empty() && m == detail::load_lower_bound(p));
}

Assignment annealing(const Problem& p, std::uint64_t seed) {
  validate(p);
  const std::size_t n = p.commodities.size();
  const std::vector<uint32_t> live = p.live_spines();
  const auto live_count = static_cast<uint32_t>(live.size());

  // The destinations: distinct (ToR, NIC) pairs, ascending; each commodity's
  // destination index, and per ToR the range of its destinations.
  std::vector<std::pair<uint32_t, std::int32_t>> dests;
  dests.reserve(n);
  for (const Commodity& c : p.commodities) dests.emplace_back(c.dst_tor, c.dst_nic);
  std::sort(dests.begin(), dests.end());
  dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
  std::vector<uint32_t> dest_of(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::pair<uint32_t, std::int32_t> key{p.commodities[i].dst_tor, p.commodities[i].dst_nic};
    dest_of[i] = static_cast<uint32_t>(std::lower_bound(dests.begin(), dests.end(), key) - dests.begin());
  }
  std::vector<uint32_t> tor_first(p.tors + 1, 0);
  for (const auto& d : dests) ++tor_first[d.first + 1];
  for (uint32_t t = 0; t < p.tors; ++t) tor_first[t + 1] += tor_first[t];
  std::vector<uint32_t> crowded;  // ToRs with >= 2 destinations, for the second move
  for (uint32_t t = 0; t < p.tors; ++t)
    if (tor_first[t + 1] - tor_first[t] >= 2) crowded.push_back(t);

  // Initial state: the destination's rank under its ToR, mod |live|.
  const auto dest_count = static_cast<uint32_t>(dests.size());
  std::vector<uint32_t> state(dest_count, 0);
  if (live_count > 0)
    for (uint32_t d = 0; d < dest_count; ++d) state[d] = (d - tor_first[dests[d].first]) % live_count;

  // Evaluation: the state's spines, then the commodities that cannot use
  // theirs onto their least loaded usable spine, in index order.
  Loads loads(p);
  std::vector<std::int32_t> spine(n, kNoSpine);
  std::vector<std::size_t> repair;
  const auto evaluate = [&](const std::vector<uint32_t>& st) {
    loads.clear();
    assign_or_repair(p, loads, spine, repair, [&](std::size_t i) -> std::int64_t {
      return live_count > 0 ? live[st[dest_of[i]]] : kRepair;
    });
    const uint32_t m = loads.max();
    return std::pair<uint32_t, std::uint64_t>{m, loads.energy(m)};
  };

  auto [cur_max, cur_energy] = evaluate(state);
  std::vector<std::int32_t> best_spine = spine;
  uint32_t best_max = cur_max;
  std::uint64_t best_energy = cur_energy;
  // Swapping spines changes nothing with fewer than two destinations or one
  // live spine (every state is the same then).
  if (dest_count >= 2 && live_count >= 2) {
    util::RandomStream rng(seed, 0x616e6e65616cULL);  // stream "anneal"
    std::vector<uint32_t> next = state;
    for (double temp = 1000.0; temp > 0.1; temp *= 0.99) {
      next = state;
      if (crowded.empty() || rng.uniform() < 0.5) {
        const auto i = static_cast<uint32_t>(rng.below(dest_count));
        const auto j = static_cast<uint32_t>((i + 1 + rng.below(dest_count - 1)) % dest_count);  // j != i
        std::swap(next[i], next[j]);
      } else {
        const uint32_t t = crowded[rng.below(crowded.size())];
        const uint32_t first = tor_first[t], count = tor_first[t + 1] - first;
        const auto i = static_cast<uint32_t>(rng.below(count));
        const auto j = static_cast<uint32_t>((i + 1 + rng.below(count - 1)) % count);
        std::swap(next[first + i], next[first + j]);
      }
      const auto [m, e] = evaluate(next);
      const bool accept =
          e < cur_energy || rng.uniform() < std::exp((static_cast<double>(cur_energy) - static_cast<double>(e)) / temp);
      if (accept) {
        state.swap(next);
        cur_max = m;
        cur_energy = e;
        // The best state seen: by max load first (the objective), the
        // energy only among equal max loads.
        if (m < best_max || (m == best_max && e < best_energy)) {
          best_max = m;
          best_energy = e;
          best_spine = spine;
        }
      }
    }
  }
  return finish(std::move(best_spine), best_max, false);
}

Assignment ecmp(const Problem& p) {
  validate(p);
  const std::size_t n = p.commodities.size();
  std::vector<std::int32_t> spine(n, kNoSpine);
  Loads loads(p);
  const auto i32 = [](std::uint32_t v) { return static_cast<std::int32_t>(v); };
  std::vector<uint32_t> candidates;
  candidates.reserve(p.spines);
  for (std::size_t i = 0; i < n; ++i) {
    const Commodity& c = p.commodities[i];
    candidates.clear();
    for (uint32_t s = 0; s < p.spines; ++s)
      if (p.usable(c, s)) candidates.push_back(s);
    if (candidates.empty()) continue;
    // Java int additions: wrap around in 32 bits (as net::Ecmp::hash does).
    const std::int32_t non_seq = net::wang_jenkins_hash(
        i32(static_cast<uint32_t>(c.src_nic) + static_cast<uint32_t>(net::wang_jenkins_hash(c.dst_nic))));
    const std::int32_t h =
        net::wang_jenkins_hash(i32(static_cast<uint32_t>(c.src_tor_id) + static_cast<uint32_t>(non_seq)));
    spine[i] = static_cast<std::int32_t>(candidates[static_cast<uint32_t>(h) % candidates.size()]);
    loads.add(c, spine[i]);
  }
  return finish(std::move(spine), loads.max(), false);
}

}  // namespace fabricsim::ctrl
