// OCS-vClos (ctrl/ocs.hpp; ../shared/spec/vclos.md sections 2.5, 5.4 and
// 5.5): the optical layer's circuits, and the scheduler that places a job on
// circuits of its own (stages 0 and 1 as vClos, then one spine reached by
// circuits from every rank, then OCS-FINDCLOS), planning the rewiring of
// idle ports it needs; with or without the whole-server locality rule
// (OCS-Releax).
#include "fabricsim/ctrl/ocs.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fabricsim/util/assert.hpp"
#include "placement_detail.hpp"

namespace fabricsim::ctrl {

namespace {

using std::uint32_t;
using std::uint64_t;
using detail::ceil_div;
using detail::first_gpus;
using detail::idle_servers_of;
using detail::placed;
using detail::refused;

constexpr uint32_t kNone = OcsState::kNone;

/// The order of the rewiring lists: (leaf, spine, slot), so that the same
/// state always yields the same lists.
bool circuit_less(const Circuit& a, const Circuit& b) {
  return std::tie(a.leaf, a.spine, a.slot) < std::tie(b.leaf, b.spine, b.slot);
}

uint32_t leaf_of_gpu(const ClusterShape& sh, uint32_t gpu) { return gpu / sh.gpus_per_server / sh.servers_per_leaf; }

// ---------------------------------------------------------------------------
// What a job may take of each leaf.

/// OCS-Releax's pick inside a leaf: `count` idle GPUs from the servers with
/// the fewest idle GPUs first (then the lowest index), lowest slots first,
/// in that order (the ranks' order).  Filling the fullest servers first
/// keeps the emptier ones whole for later jobs: best fit, as between leaves.
std::vector<uint32_t> leaf_gpus(const ClusterState& cl, uint32_t leaf, uint32_t count) {
  const ClusterShape& sh = cl.shape();
  const uint32_t t = sh.gpus_per_server;
  std::vector<uint32_t> servers;
  const uint32_t first = leaf * sh.servers_per_leaf;
  for (uint32_t i = 0; i < sh.servers_per_leaf; ++i)
    if (cl.idle_gpus(first + i) > 0) servers.push_back(first + i);
  std::stable_sort(servers.begin(), servers.end(),
                   [&](uint32_t a, uint32_t b) { return cl.idle_gpus(a) < cl.idle_gpus(b); });
  std::vector<uint32_t> gpus;
  gpus.reserve(count);
  for (uint32_t server : servers)
    for (uint32_t slot = 0; slot < t && gpus.size() < count; ++slot)
      if (!cl.gpu_busy(server * t + slot)) gpus.push_back(server * t + slot);
  FABRICSIM_ASSERT(gpus.size() == count, "leaf has fewer idle GPUs than its count says");
  return gpus;
}

/// A leaf's room in units of what a job may take of it: whole idle servers
/// (unit T GPUs, the locality rule) or, under OCS-Releax, idle GPUs (unit
/// 1).  Both OCS stages count in units, so that one search serves both.
class Room {
 public:
  Room(const ClusterState& cl, bool whole_servers)
      : cl_(cl),
        whole_(whole_servers),
        unit_(whole_servers ? cl.shape().gpus_per_server : 1u),
        idle_(cl.shape().leaves, 0) {
    const ClusterShape& sh = cl.shape();
    for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf) {
      if (whole_) {
        idle_[leaf] = cl.idle_servers(leaf);
        continue;
      }
      for (uint32_t i = 0; i < sh.servers_per_leaf; ++i) idle_[leaf] += cl.idle_gpus(leaf * sh.servers_per_leaf + i);
    }
  }

  uint32_t unit() const { return unit_; }  ///< GPUs per unit
  uint32_t idle(uint32_t leaf) const { return idle_[leaf]; }
  uint64_t total() const { return std::accumulate(idle_.begin(), idle_.end(), uint64_t{0}); }

  /// The leaves with at least `at_least` idle units, fewest first (then
  /// the lowest index): best fit.
  std::vector<uint32_t> best_fit(uint32_t at_least) const {
    std::vector<uint32_t> leaves;
    for (uint32_t leaf = 0; leaf < idle_.size(); ++leaf)
      if (idle_[leaf] >= at_least) leaves.push_back(leaf);
    std::stable_sort(leaves.begin(), leaves.end(), [&](uint32_t a, uint32_t b) { return idle_[a] < idle_[b]; });
    return leaves;
  }

  /// Gives `a` its n GPUs (and whole servers) from `takes`, (leaf, units)
  /// on distinct leaves: leaf-contiguous ranks, leaves ascending; whole
  /// servers the lowest-numbered idle ones, their first n GPUs.
  void fill(Allocation& a, std::vector<std::pair<uint32_t, uint32_t>> takes, uint32_t n) const {
    std::sort(takes.begin(), takes.end());
    for (const auto& [leaf, units] : takes) {
      if (whole_) {
        const std::vector<uint32_t> some = idle_servers_of(cl_, leaf, units);
        a.servers.insert(a.servers.end(), some.begin(), some.end());
      } else {
        const std::vector<uint32_t> some = leaf_gpus(cl_, leaf, units);
        a.gpus.insert(a.gpus.end(), some.begin(), some.end());
      }
    }
    if (whole_) a.gpus = first_gpus(cl_.shape(), a.servers, n);
    FABRICSIM_ASSERT(a.gpus.size() == n, "the leaves gave the job a wrong number of GPUs");
  }

 private:
  const ClusterState& cl_;
  bool whole_;
  uint32_t unit_;
  std::vector<uint32_t> idle_;  // per leaf: idle units
};

/// OCS-Releax's stage 1: the leaf with the fewest idle GPUs that has n
/// (then the lowest index); no spine.
std::optional<Allocation> releax_leaf(const Room& room, uint32_t n) {
  const std::vector<uint32_t> leaves = room.best_fit(n);
  if (leaves.empty()) return std::nullopt;
  Allocation a;
  a.stage = Stage::Leaf;
  room.fill(a, {{leaves.front(), n}}, n);
  return a;
}

// ---------------------------------------------------------------------------
// Circuit planning, shared by both OCS stages.

/// `count` circuits wanted between `leaf` and `spine` (on the spine's OCS).
/// A job's requests name distinct (leaf, spine) pairs.
struct Request {
  uint32_t leaf = 0, spine = 0, count = 0;
};

struct Plan {
  std::vector<std::vector<uint32_t>> slots;  ///< per request: the slots it holds, ascending
  std::vector<Circuit> off, on;              ///< the rewiring, each in circuit_less order
};

/// Picks the slots of a job's requests on a scratch copy of the optical
/// state, and the rewiring that connects them.  The caller has checked the
/// capacities (the sum of a spine's requests is at most its free ports; the
/// sum of a leaf's requests on one OCS at most its free ports there), and
/// under them planning cannot fail:
///  - leaf side: a request short of slots after reuse has claimed every
///    idle slot of its leaf connected to its spine, so any free (unheld)
///    slot left unclaimed is unconnected or connected to another spine, and
///    one is left while the leaf's claims stay below its free ports;
///  - spine side: when spine m is full (connected_at == spine_ports) and
///    needs one more circuit, its circuits are held + claimed by this job +
///    the rest, claimed < its requests <= spine_ports - held, so at least
///    one circuit is neither held nor claimed and can be switched off.
/// Reuse for every request runs before any new circuit, so an idle circuit
/// a later request reuses is never switched off to free a spine port.  No
/// held circuit is ever switched off: both switch-offs skip held slots.
class Planner {
 public:
  explicit Planner(const OcsState& ocs)
      : sh_(ocs.shape()),
        spine_of_(std::size_t{sh_.leaves} * sh_.switches * sh_.leaf_ports),
        held_(spine_of_.size()),
        claimed_(spine_of_.size(), 0),
        connected_at_(sh_.spines),
        cursor_(sh_.spines, 0) {
    for (uint32_t n = 0; n < sh_.leaves; ++n) {
      for (uint32_t k = 0; k < sh_.switches; ++k) {
        for (uint32_t c = 0; c < sh_.leaf_ports; ++c) {
          spine_of_[at(n, k, c)] = ocs.connected(n, k, c);
          held_[at(n, k, c)] = ocs.held(n, k, c) ? 1 : 0;
        }
      }
    }
    for (uint32_t m = 0; m < sh_.spines; ++m) connected_at_[m] = ocs.connected_at(m);
  }

  Plan run(const std::vector<Request>& requests) {
    Plan plan;
    plan.slots.resize(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) reuse(requests[i], plan.slots[i]);
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const Request& r = requests[i];
      while (plan.slots[i].size() < r.count) plan.slots[i].push_back(connect(r, plan));
      std::sort(plan.slots[i].begin(), plan.slots[i].end());
    }
    std::sort(plan.off.begin(), plan.off.end(), circuit_less);
    std::sort(plan.on.begin(), plan.on.end(), circuit_less);
    return plan;
  }

 private:
  std::size_t at(uint32_t leaf, uint32_t k, uint32_t slot) const {
    return (std::size_t{leaf} * sh_.switches + k) * sh_.leaf_ports + slot;
  }

  bool idle(std::size_t i) const { return held_[i] == 0 && claimed_[i] == 0; }

  /// Claims the request's idle circuits already connected to its spine,
  /// lowest slot first, up to its count.
  void reuse(const Request& r, std::vector<uint32_t>& slots) {
    const uint32_t k = sh_.switch_of(r.spine);
    for (uint32_t c = 0; c < sh_.leaf_ports && slots.size() < r.count; ++c) {
      const std::size_t i = at(r.leaf, k, c);
      if (spine_of_[i] != r.spine || !idle(i)) continue;
      claimed_[i] = 1;
      slots.push_back(c);
    }
  }

  /// Connects one more slot of the request's leaf to its spine: the lowest
  /// unconnected one, else the lowest idle one connected elsewhere (which
  /// is switched off first); frees a spine port first if the spine is full.
  uint32_t connect(const Request& r, Plan& plan) {
    const uint32_t k = sh_.switch_of(r.spine);
    uint32_t slot = kNone;
    for (uint32_t c = 0; c < sh_.leaf_ports && slot == kNone; ++c)
      if (spine_of_[at(r.leaf, k, c)] == kNone && idle(at(r.leaf, k, c))) slot = c;
    for (uint32_t c = 0; c < sh_.leaf_ports && slot == kNone; ++c)
      if (idle(at(r.leaf, k, c))) slot = c;
    FABRICSIM_ASSERT(slot != kNone, "OCS planning: the leaf has no free port left on the OCS");
    const std::size_t i = at(r.leaf, k, slot);
    if (spine_of_[i] != kNone) {
      // After reuse every idle slot still connected to the spine is claimed.
      FABRICSIM_ASSERT(spine_of_[i] != r.spine, "OCS planning: an idle circuit to the spine was not reused");
      plan.off.push_back(Circuit{r.leaf, spine_of_[i], slot});
      --connected_at_[spine_of_[i]];
      spine_of_[i] = kNone;
    }
    if (connected_at_[r.spine] == sh_.spine_ports) free_port(r.spine, plan);
    FABRICSIM_ASSERT(connected_at_[r.spine] < sh_.spine_ports, "OCS planning: the spine has no port to spare");
    plan.on.push_back(Circuit{r.leaf, r.spine, slot});
    spine_of_[i] = r.spine;
    ++connected_at_[r.spine];
    claimed_[i] = 1;
    return slot;
  }

  /// Switches off spine m's lowest (leaf, slot) circuit that is neither
  /// held nor claimed.  While new circuits are planned, the spine's
  /// circuits that qualify only ever leave that set (new circuits to it are
  /// claimed), so one cursor per spine scans each (leaf, slot) once.
  void free_port(uint32_t m, Plan& plan) {
    const uint32_t k = sh_.switch_of(m);
    const std::size_t end = std::size_t{sh_.leaves} * sh_.leaf_ports;
    for (std::size_t& pos = cursor_[m]; pos < end; ++pos) {
      const auto leaf = static_cast<uint32_t>(pos / sh_.leaf_ports);
      const auto slot = static_cast<uint32_t>(pos % sh_.leaf_ports);
      const std::size_t i = at(leaf, k, slot);
      if (spine_of_[i] != m || !idle(i)) continue;
      plan.off.push_back(Circuit{leaf, m, slot});
      spine_of_[i] = kNone;
      --connected_at_[m];
      return;
    }
    FABRICSIM_ASSERT(false, "OCS planning: a full spine has no idle circuit to switch off");
  }

  const OcsShape& sh_;
  std::vector<uint32_t> spine_of_;      // per (leaf, k, slot), as OcsState
  std::vector<std::uint8_t> held_;      // per (leaf, k, slot)
  std::vector<std::uint8_t> claimed_;   // per (leaf, k, slot): taken by this job
  std::vector<uint32_t> connected_at_;  // per spine
  std::vector<std::size_t> cursor_;     // per spine: leaf * P + slot where free_port resumes
};

// ---------------------------------------------------------------------------
// Stage OcsSpine.

/// One spine with at least n free ports (fewest first, then lowest index)
/// and ceil(n/T) whole idle servers (Releax: n idle GPUs) on leaves with
/// free ports on its OCS, leaves with the fewest idle units first, each
/// giving as many units as it has and its ports allow (floor(C^k_n / unit):
/// a whole server of the job holds up to T circuits).  Ranks are
/// leaf-contiguous, leaves ascending; each holds a circuit from its leaf to
/// the spine.
std::optional<Allocation> stage_ocs_spine(const ClusterState& cl, const OcsState& ocs, const Room& room, uint32_t n) {
  const ClusterShape& sh = cl.shape();
  const OcsShape& os = ocs.shape();
  const uint32_t unit = room.unit();
  const uint32_t need = ceil_div(n, unit);
  std::vector<uint32_t> spines;
  for (uint32_t m = 0; m < os.spines; ++m)
    if (ocs.free_spine_ports(m) >= n) spines.push_back(m);
  std::stable_sort(spines.begin(), spines.end(),
                   [&](uint32_t a, uint32_t b) { return ocs.free_spine_ports(a) < ocs.free_spine_ports(b); });
  const std::vector<uint32_t> leaves = room.best_fit(1);

  for (uint32_t m : spines) {
    const uint32_t k = os.switch_of(m);
    std::vector<std::pair<uint32_t, uint32_t>> takes;  // (leaf, units)
    uint32_t got = 0;
    for (uint32_t leaf : leaves) {
      if (got == need) break;
      const uint32_t r = std::min({room.idle(leaf), ocs.free_leaf_ports(leaf, k) / unit, need - got});
      if (r == 0) continue;
      takes.emplace_back(leaf, r);
      got += r;
    }
    if (got < need) continue;

    Allocation a;
    a.stage = Stage::OcsSpine;
    room.fill(a, std::move(takes), n);
    // One request per leaf, for its ranks (not its reserved GPUs: the last
    // server may be partly used).
    std::vector<Request> requests;
    std::vector<uint32_t> request_of_rank(n);
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t leaf = leaf_of_gpu(sh, a.gpus[r]);
      if (requests.empty() || requests.back().leaf != leaf) requests.push_back(Request{leaf, m, 0});
      ++requests.back().count;
      request_of_rank[r] = static_cast<uint32_t>(requests.size() - 1);
    }
    Plan plan = Planner(ocs).run(requests);
    std::vector<uint32_t> used(requests.size(), 0);
    for (uint32_t r = 0; r < n; ++r) {
      const uint32_t i = request_of_rank[r];
      a.circuits.push_back(Circuit{requests[i].leaf, m, plan.slots[i][used[i]++]});
    }
    a.switched_off = std::move(plan.off);
    a.switched_on = std::move(plan.on);
    return a;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Stage OcsClos: OCS-FINDCLOS.

/// The leaf search of OCS-vClos-ILP(l, s).  Given the leaves, the units an
/// OCS k can carry are min(cap_k, spine_cap_k): cap_k the fewest free ports
/// of a chosen leaf on k (every virtual leaf takes sum over k's spines of
/// s_m of them), spine_cap_k = sum over k's spines of floor(C_m / l) (a
/// unit on spine m takes l of its ports).  A leaf set is feasible when
/// these sum to s or more over the OCSs; adding a leaf only lowers a cap_k,
/// so an infeasible set has no feasible superset.  The DFS visits the
/// candidates' subsets in lexicographic order (positions in best-fit
/// order) and returns the first feasible one of size l, pruning:
///  - infeasible sets, and each node's children to those that keep it
///    feasible (the survivors are the only candidates deeper down);
///  - candidates with the same free ports on every OCS are interchangeable,
///    and a set holding a later one without the earlier one is not the
///    first (swapping them gives a smaller set): such a member is only
///    taken when its predecessor in its class is.
class LeafSearch {
 public:
  LeafSearch(uint32_t l, uint32_t s, uint32_t switches, std::vector<uint64_t> spine_cap, std::vector<uint32_t> free,
             uint64_t max_nodes)
      : l_(l), s_(s), k_(switches), spine_cap_(std::move(spine_cap)), free_(std::move(free)), max_nodes_(max_nodes) {
    const std::size_t count = free_.size() / k_;
    // Interchangeable candidates: equal free-port vectors.
    std::vector<uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    auto vec_less = [&](uint32_t a, uint32_t b) {
      return std::lexicographical_compare(row(a), row(a) + k_, row(b), row(b) + k_);
    };
    std::stable_sort(order.begin(), order.end(), vec_less);  // members of a class stay in position order
    prev_.assign(count, kNone);
    for (std::size_t i = 1; i < count; ++i)
      if (!vec_less(order[i - 1], order[i])) prev_[order[i]] = order[i - 1];
    in_set_.assign(count, 0);
    chosen_.assign(l_, 0);
    mins_.assign((std::size_t{l_} + 1) * k_, std::numeric_limits<uint32_t>::max());
  }

  /// The first feasible set's candidate positions (ascending), or nullopt
  /// (also when the node limit was reached first).
  std::optional<std::vector<uint32_t>> run() {
    const std::size_t count = free_.size() / k_;
    if (l_ == 0 || count < l_) return std::nullopt;
    std::vector<uint32_t> kids;
    for (uint32_t c = 0; c < count; ++c)
      if (feasible(mins_.data(), c)) kids.push_back(c);
    if (!dfs(0, kids)) return std::nullopt;
    return chosen_;
  }

 private:
  const uint32_t* row(uint32_t c) const { return free_.data() + std::size_t{c} * k_; }

  /// Whether the set whose per-OCS minima are `mins`, plus candidate c,
  /// can carry s units.
  bool feasible(const uint32_t* mins, uint32_t c) const {
    uint64_t units = 0;
    for (uint32_t k = 0; k < k_; ++k) units += std::min<uint64_t>(std::min(mins[k], row(c)[k]), spine_cap_[k]);
    return units >= s_;
  }

  /// `depth` candidates chosen (chosen_[0..depth), minima at mins_[depth]);
  /// `kids`: the later candidates that keep the set feasible, ascending.
  bool dfs(uint32_t depth, const std::vector<uint32_t>& kids) {
    const uint32_t need = l_ - depth;
    const uint32_t* mins = mins_.data() + std::size_t{depth} * k_;
    uint32_t* next_mins = mins_.data() + (std::size_t{depth} + 1) * k_;
    for (std::size_t i = 0; i < kids.size() && kids.size() - i >= need; ++i) {
      const uint32_t c = kids[i];
      if (prev_[c] != kNone && in_set_[prev_[c]] == 0) continue;
      if (++nodes_ > max_nodes_) return false;
      chosen_[depth] = c;
      if (need == 1) return true;
      for (uint32_t k = 0; k < k_; ++k) next_mins[k] = std::min(mins[k], row(c)[k]);
      std::vector<uint32_t> next;
      for (std::size_t j = i + 1; j < kids.size(); ++j)
        if (feasible(next_mins, kids[j])) next.push_back(kids[j]);
      if (next.size() < need - 1) continue;
      in_set_[c] = 1;
      const bool found = dfs(depth + 1, next);
      in_set_[c] = 0;
      if (found) return true;
      if (nodes_ > max_nodes_) return false;
    }
    return false;
  }

  uint32_t l_, s_, k_;
  std::vector<uint64_t> spine_cap_;  // per OCS
  std::vector<uint32_t> free_;       // per candidate and OCS: its free leaf ports
  uint64_t max_nodes_;
  uint64_t nodes_ = 0;
  std::vector<uint32_t> prev_;        // per candidate: the previous member of its class, or kNone
  std::vector<std::uint8_t> in_set_;  // per candidate, on the current path
  std::vector<uint32_t> chosen_;      // per depth: a candidate
  std::vector<uint32_t> mins_;        // per depth and OCS: the chosen leaves' fewest free ports
};

/// OCS-vClos-ILP(l, s): l leaves with s/T idle servers (Releax: s idle
/// GPUs) each (the first feasible set in best-fit order, see LeafSearch),
/// s units spread over spines by fewest free ports first (then index),
/// each spine taking as many as its ports (floor(C_m / l)) and its OCS's
/// remaining leaf ports (cap_k minus units already on k) allow; rank
/// a*s + u on virtual leaf a (leaves ascending) holds a circuit to the
/// spine of unit u.
std::optional<Allocation> ocs_clos(const OcsState& ocs, const Room& room, uint32_t l, uint32_t s,
                                   const OcsOptions& options) {
  const OcsShape& os = ocs.shape();
  FABRICSIM_ASSERT(s % room.unit() == 0, "OCS-FINDCLOS: a virtual leaf of part of a whole server");
  const uint32_t per_leaf = s / room.unit();
  const std::vector<uint32_t> cands = room.best_fit(per_leaf);
  if (cands.size() < l) return std::nullopt;
  std::vector<uint64_t> spine_cap(os.switches, 0);
  for (uint32_t m = 0; m < os.spines; ++m) spine_cap[os.switch_of(m)] += ocs.free_spine_ports(m) / l;
  std::vector<uint32_t> free(cands.size() * os.switches);
  for (std::size_t c = 0; c < cands.size(); ++c)
    for (uint32_t k = 0; k < os.switches; ++k) free[c * os.switches + k] = ocs.free_leaf_ports(cands[c], k);
  const std::optional<std::vector<uint32_t>> chosen =
      LeafSearch(l, s, os.switches, std::move(spine_cap), std::move(free), options.max_nodes).run();
  if (!chosen) return std::nullopt;

  Allocation a;
  a.stage = Stage::OcsClos;
  for (uint32_t c : *chosen) a.leaves.push_back(cands[c]);
  std::sort(a.leaves.begin(), a.leaves.end());
  // The units: greedily, spines by (free ports, index).
  std::vector<uint32_t> cap(os.switches, std::numeric_limits<uint32_t>::max());
  for (uint32_t leaf : a.leaves)
    for (uint32_t k = 0; k < os.switches; ++k) cap[k] = std::min(cap[k], ocs.free_leaf_ports(leaf, k));
  std::vector<uint32_t> order(os.spines);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return ocs.free_spine_ports(x) < ocs.free_spine_ports(y); });
  std::vector<uint32_t> unit_spine;  // per unit
  std::vector<uint32_t> first_unit(os.spines, kNone);
  std::vector<std::pair<uint32_t, uint32_t>> units;  // (spine, s_m), in unit order
  for (uint32_t m : order) {
    const auto left = static_cast<uint32_t>(s - unit_spine.size());
    if (left == 0) break;
    const uint32_t k = os.switch_of(m);
    const uint32_t sm = std::min({ocs.free_spine_ports(m) / l, cap[k], left});
    if (sm == 0) continue;
    cap[k] -= sm;
    first_unit[m] = static_cast<uint32_t>(unit_spine.size());
    unit_spine.insert(unit_spine.end(), sm, m);
    units.emplace_back(m, sm);
  }
  // Greedy per OCS reaches min(cap_k, spine_cap_k) unless the units run
  // out first, and the leaf set has those summing to s or more.
  FABRICSIM_ASSERT(unit_spine.size() == s, "OCS-FINDCLOS: a feasible leaf set did not take its units");

  std::vector<std::pair<uint32_t, uint32_t>> takes;  // (leaf, units)
  for (uint32_t leaf : a.leaves) takes.emplace_back(leaf, per_leaf);
  room.fill(a, std::move(takes), l * s);
  std::vector<Request> requests;  // virtual leaf a's spine in unit order j at a * units.size() + j
  for (uint32_t leaf : a.leaves)
    for (const auto& [m, sm] : units) requests.push_back(Request{leaf, m, sm});
  const Plan plan = Planner(ocs).run(requests);
  std::vector<uint32_t> unit_group(os.spines, kNone);  // spine -> its index in units
  for (std::size_t j = 0; j < units.size(); ++j) unit_group[units[j].first] = static_cast<uint32_t>(j);
  a.circuits.reserve(std::size_t{l} * s);
  for (uint32_t v = 0; v < l; ++v) {
    for (uint32_t u = 0; u < s; ++u) {
      const uint32_t m = unit_spine[u];
      const std::vector<uint32_t>& slots = plan.slots[std::size_t{v} * units.size() + unit_group[m]];
      a.circuits.push_back(Circuit{a.leaves[v], m, slots[u - first_unit[m]]});
    }
  }
  a.switched_off = plan.off;
  a.switched_on = plan.on;
  return a;
}

}  // namespace

// ---------------------------------------------------------------------------

std::string OcsShape::check() const {
  if (leaves == 0) return "no leaves";
  if (spines == 0) return "no spines";
  if (switches == 0) return "no optical switches";
  if (spines % switches != 0)
    return "switches (" + std::to_string(switches) + ") must divide spines (" + std::to_string(spines) + ")";
  const uint32_t g = spines_per_switch();
  if (leaf_ports == 0 || leaf_ports % g != 0)
    return "leaf_ports (" + std::to_string(leaf_ports) + ") must be a positive multiple of spines / switches (" +
           std::to_string(g) + ")";
  // The power-on wiring gives every spine leaves * links_per_pair circuits,
  // and a spine never has more circuits than ports.
  const uint64_t power_on = uint64_t{leaves} * (leaf_ports / g);
  if (spine_ports < power_on)
    return "spine_ports (" + std::to_string(spine_ports) + ") below the power-on wiring's leaves * links_per_pair (" +
           std::to_string(power_on) + ")";
  // The state's counters are 32 bits wide.
  if (uint64_t{leaves} * switches * leaf_ports > std::numeric_limits<uint32_t>::max()) return "too many leaf ports";
  return "";
}

OcsState::OcsState(OcsShape shape) : shape_(shape) {
  if (const std::string why = shape_.check(); !why.empty()) throw std::invalid_argument("ctrl::OcsShape: " + why);
  const std::size_t slots = std::size_t{shape_.leaves} * shape_.switches * shape_.leaf_ports;
  spine_of_.resize(slots);
  held_.assign(slots, 0);
  held_at_leaf_.assign(std::size_t{shape_.leaves} * shape_.switches, 0);
  held_at_spine_.assign(shape_.spines, 0);
  connected_at_.assign(shape_.spines, 0);
  for (uint32_t n = 0; n < shape_.leaves; ++n) {
    for (uint32_t k = 0; k < shape_.switches; ++k) {
      for (uint32_t c = 0; c < shape_.leaf_ports; ++c) {
        const uint32_t m = shape_.power_on_spine(k, c);
        spine_of_[at(n, k, c)] = m;
        ++connected_at_[m];
      }
    }
  }
}

std::uint32_t OcsState::connected(std::uint32_t leaf, std::uint32_t k, std::uint32_t slot) const {
  FABRICSIM_ASSERT(leaf < shape_.leaves && k < shape_.switches && slot < shape_.leaf_ports, "no such OCS slot");
  return spine_of_[at(leaf, k, slot)];
}

bool OcsState::held(std::uint32_t leaf, std::uint32_t k, std::uint32_t slot) const {
  FABRICSIM_ASSERT(leaf < shape_.leaves && k < shape_.switches && slot < shape_.leaf_ports, "no such OCS slot");
  return held_[at(leaf, k, slot)] != 0;
}

std::uint32_t OcsState::free_leaf_ports(std::uint32_t leaf, std::uint32_t k) const {
  FABRICSIM_ASSERT(leaf < shape_.leaves && k < shape_.switches, "no such leaf or OCS");
  return shape_.leaf_ports - held_at_leaf_[std::size_t{leaf} * shape_.switches + k];
}

std::uint32_t OcsState::free_spine_ports(std::uint32_t spine) const {
  FABRICSIM_ASSERT(spine < shape_.spines, "no such spine");
  return shape_.spine_ports - held_at_spine_[spine];
}

std::uint32_t OcsState::connected_at(std::uint32_t spine) const {
  FABRICSIM_ASSERT(spine < shape_.spines, "no such spine");
  return connected_at_[spine];
}

void OcsState::take(const Allocation& a) {
  // Check every circuit names a real (leaf, spine, slot) before indexing.
  auto valid = [&](const Circuit& c) {
    return c.leaf < shape_.leaves && c.spine < shape_.spines && c.slot < shape_.leaf_ports;
  };
  for (const Circuit& c : a.switched_off) {
    FABRICSIM_ASSERT(valid(c), "take: no such circuit");
    const std::size_t i = at(c.leaf, shape_.switch_of(c.spine), c.slot);
    FABRICSIM_ASSERT(spine_of_[i] == c.spine, "take: a circuit switched off is not connected");
    FABRICSIM_ASSERT(held_[i] == 0, "take: a circuit switched off is held by a running job");
    spine_of_[i] = kNone;
    --connected_at_[c.spine];
  }
  for (const Circuit& c : a.switched_on) {
    FABRICSIM_ASSERT(valid(c), "take: no such circuit");
    const std::size_t i = at(c.leaf, shape_.switch_of(c.spine), c.slot);
    FABRICSIM_ASSERT(spine_of_[i] == kNone, "take: a circuit switched on lands on a connected slot");
    FABRICSIM_ASSERT(connected_at_[c.spine] < shape_.spine_ports, "take: a circuit switched on finds its spine full");
    spine_of_[i] = c.spine;
    ++connected_at_[c.spine];
  }
  for (const Circuit& c : a.circuits) {
    FABRICSIM_ASSERT(valid(c), "take: no such circuit");
    const uint32_t k = shape_.switch_of(c.spine);
    const std::size_t i = at(c.leaf, k, c.slot);
    FABRICSIM_ASSERT(spine_of_[i] == c.spine, "take: a circuit held is not connected");
    FABRICSIM_ASSERT(held_[i] == 0, "take: a circuit held is already held");
    held_[i] = 1;
    ++held_at_leaf_[std::size_t{c.leaf} * shape_.switches + k];
    ++held_at_spine_[c.spine];
  }
}

void OcsState::release(const Allocation& a) {
  for (const Circuit& c : a.circuits) {
    FABRICSIM_ASSERT(c.leaf < shape_.leaves && c.spine < shape_.spines && c.slot < shape_.leaf_ports,
                     "release: no such circuit");
    const uint32_t k = shape_.switch_of(c.spine);
    const std::size_t i = at(c.leaf, k, c.slot);
    FABRICSIM_ASSERT(held_[i] != 0 && spine_of_[i] == c.spine, "release: circuit not held");
    held_[i] = 0;
    --held_at_leaf_[std::size_t{c.leaf} * shape_.switches + k];
    --held_at_spine_[c.spine];
  }
}

Decision place_ocs_vclos(const ClusterState& cluster, const OcsState& ocs, std::uint32_t n, const OcsOptions& options) {
  FABRICSIM_ASSERT(n > 0, "a job of no GPUs");
  const ClusterShape& sh = cluster.shape();
  FABRICSIM_ASSERT(sh.leaves == ocs.shape().leaves && sh.spines == ocs.shape().spines,
                   "the cluster and its optical layer disagree on leaves or spines");
  const uint32_t t = sh.gpus_per_server;
  const bool whole = options.whole_servers;
  // Stage 0, and (whole servers) stage 1; OCS-Releax's stage 1 takes idle
  // GPUs of several servers, below.
  if (whole || n <= t)
    if (std::optional<Allocation> a = place_local(cluster, n)) return placed(std::move(*a));
  // The locality rule never splits a job of N <= T GPUs over servers.
  if (whole && n <= t) return refused(Refusal::Gpus);
  const Room room(cluster, whole);
  if (room.total() < ceil_div(n, room.unit())) return refused(Refusal::Gpus);
  if (!whole)
    if (std::optional<Allocation> a = releax_leaf(room, n)) return placed(std::move(*a));
  if (std::optional<Allocation> a = stage_ocs_spine(cluster, ocs, room, n)) return placed(std::move(*a));
  // OCS-FINDCLOS: (l, s) as FINDVCLOS, but s may exceed S (parallel
  // circuits), and under OCS-Releax a virtual leaf need not be whole servers.
  const uint32_t pow2 = std::bit_floor(n);
  for (uint64_t l = std::max<uint32_t>(1, pow2 / sh.spines); l <= sh.leaves; l *= 2) {
    const uint64_t s = n / l;
    if (l == 1 || s == 0 || n % l != 0 || s % room.unit() != 0) continue;
    if (std::optional<Allocation> a = ocs_clos(ocs, room, static_cast<uint32_t>(l), static_cast<uint32_t>(s), options))
      return placed(std::move(*a));
  }
  return refused(Refusal::Network);
}

}  // namespace fabricsim::ctrl
