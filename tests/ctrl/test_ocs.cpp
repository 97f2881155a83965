// OCS-vClos (ctrl/ocs.hpp) against independent computations: small cases
// worked by hand from the spec (vclos.md 2.5, 5.4), the power-on wiring,
// the stage decisions against a brute force over leaf subsets and integer
// unit vectors, and the optical state's invariants (rewiring never touches
// a held circuit, jobs' circuits disjoint, port counts, contention-free
// leaf-wise patterns) over random admissions and releases; and OCS-Releax,
// without the whole-server locality rule, against the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fabricsim/ctrl/ocs.hpp"
#include "fabricsim/ctrl/vclos.hpp"

namespace fabricsim::ctrl {

// For gtest's messages (found by ADL, so outside the unnamed namespace).
void PrintTo(const Circuit& c, std::ostream* os) {
  *os << "(leaf " << c.leaf << ", spine " << c.spine << ", slot " << c.slot << ")";
}

namespace {

using std::uint32_t;
using std::uint64_t;
using Ids = std::vector<uint32_t>;
using Circuits = std::vector<Circuit>;

/// The optical layer over L leaves and S spines with K OCSs and lpp links
/// per (leaf, spine) pair at power-on: P = (S/K) * lpp, spine ports L * lpp.
OcsShape ocs_shape(uint32_t leaves, uint32_t spines, uint32_t switches, uint32_t lpp) {
  OcsShape o;
  o.leaves = leaves;
  o.spines = spines;
  o.switches = switches;
  o.leaf_ports = spines / switches * lpp;
  o.spine_ports = leaves * lpp;
  return o;
}

/// The static leaf-spine the OCS's power-on wiring equals: lpp links per pair.
ClusterShape cluster_shape(uint32_t leaves, uint32_t spines, uint32_t servers_per_leaf, uint32_t t, uint32_t lpp) {
  ClusterShape s;
  s.leaves = leaves;
  s.spines = spines;
  s.servers_per_leaf = servers_per_leaf;
  s.gpus_per_server = t;
  s.links.assign(std::size_t{leaves} * spines, lpp);
  return s;
}

Allocation server_job(Ids gpus) {
  Allocation a;
  a.stage = Stage::Server;
  a.gpus = std::move(gpus);
  return a;
}

uint32_t leaf_of_gpu(const ClusterShape& sh, uint32_t gpu) { return gpu / sh.gpus_per_server / sh.servers_per_leaf; }

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------
// 1. Worked by hand.

// L = 2, S = 2, K = 1, lpp = 2: each leaf has P = 4 slots on the one OCS,
// slots 0, 1 to spine 0 and 2, 3 to spine 1; spines have 4 ports.  T = 1,
// 4 servers per leaf; GPU 0 (leaf 0) and GPUs 4, 5, 6 (leaf 1) are busy,
// leaving servers 1, 2, 3 and 7 idle.  A 4-GPU job:
//  - vClos: no leaf has 4 idle servers; FINDVCLOS tries l = 4/2 = 2, s = 2,
//    which needs 2 idle servers on each of two leaves (leaf 1 has one), and
//    l = 4 > L: refused for Network.
//  - OCS-vClos: both spines have 4 free ports >= 4; spine 0 (tie, lower
//    index).  Leaves by idle servers: leaf 1 (1 server), leaf 0 (3): 4
//    servers.  Leaf 0 needs 3 circuits to spine 0 but has 2 (a third
//    parallel link the static wiring lacks): reuse slots 0 and 1, rewire
//    slot 2 from spine 1 (switched off: (0, 1, 2)); spine 0 is full (4
//    circuits), its lowest circuit neither held nor claimed is leaf 1's
//    slot 1 (leaf 1's slot 0 was claimed for its rank first): switched
//    off; then (0, 0, 2) switched on.
TEST(OcsVClos, PlacesWhatVClosRefusesWithParallelCircuits) {
  ClusterState cl(cluster_shape(2, 2, 4, 1, 2));
  OcsState ocs(ocs_shape(2, 2, 1, 2));
  cl.take(server_job({0}));
  cl.take(server_job({4}));
  cl.take(server_job({5}));
  cl.take(server_job({6}));

  const Decision v = place_vclos(cl, 4);
  EXPECT_FALSE(v.allocation);
  EXPECT_EQ(v.why, Refusal::Network);

  const Decision d = place_ocs_vclos(cl, ocs, 4);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.why, Refusal::None);
  const Allocation& a = *d.allocation;
  EXPECT_EQ(a.stage, Stage::OcsSpine);
  EXPECT_EQ(a.servers, (Ids{1, 2, 3, 7}));
  EXPECT_EQ(a.gpus, (Ids{1, 2, 3, 7}));
  EXPECT_EQ(a.circuits, (Circuits{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {1, 0, 0}}));
  EXPECT_EQ(a.switched_off, (Circuits{{0, 1, 2}, {1, 0, 1}}));
  EXPECT_EQ(a.switched_on, (Circuits{{0, 0, 2}}));
  EXPECT_TRUE(a.leaves.empty());
  EXPECT_TRUE(a.spines.empty());

  cl.take(a);
  ocs.take(a);
  EXPECT_EQ(ocs.connected(0, 0, 2), 0u);
  EXPECT_EQ(ocs.connected(0, 0, 3), 1u);
  EXPECT_EQ(ocs.connected(1, 0, 1), OcsState::kNone);
  EXPECT_EQ(ocs.connected_at(0), 4u);
  EXPECT_EQ(ocs.connected_at(1), 3u);
  EXPECT_EQ(ocs.free_spine_ports(0), 0u);
  EXPECT_EQ(ocs.free_spine_ports(1), 4u);
  EXPECT_EQ(ocs.free_leaf_ports(0, 0), 1u);
  EXPECT_EQ(ocs.free_leaf_ports(1, 0), 3u);
  EXPECT_TRUE(ocs.held(0, 0, 2));
  EXPECT_FALSE(ocs.held(0, 0, 3));
  EXPECT_EQ(cl.idle_servers(), 0u);
}

// L = 4, S = 4, K = 2, lpp = 1: OCS 0 holds spines 0, 1 and slots 0, 1 of
// every leaf (power-on: slot c to spine c), OCS 1 spines 2, 3 (slot c to
// spine 2 + c); spines have 4 ports.  T = 1, 4 servers per leaf, all idle.
// An 8-GPU job: no leaf has 8 servers; no spine has 8 ports; OCS-FINDCLOS
// starts at l = 8/4 = 2, s = 4: leaves 0, 1 (all tie in best fit); a unit
// takes 2 ports of a spine (2 units per spine), a leaf's 2 slots per OCS
// bound each OCS to 2 units.  Spines by (free ports, index) 0, 1, 2, 3:
// spine 0 takes 2 units (OCS 0 full), spine 1 none, spine 2 takes 2.
// Each leaf reuses slot 0 of each OCS and rewires slot 1 (off its power-on
// spine 1 or 3); each spine then has 4 circuits and frees a port per new
// one from its lowest unclaimed circuits, leaf 2's then leaf 3's slot 0.
TEST(OcsVClos, OcsClosPutsParallelUnitsOnOneSpine) {
  ClusterState cl(cluster_shape(4, 4, 4, 1, 1));
  OcsState ocs(ocs_shape(4, 4, 2, 1));
  const Decision d = place_ocs_vclos(cl, ocs, 8);
  ASSERT_TRUE(d.allocation);
  const Allocation& a = *d.allocation;
  EXPECT_EQ(a.stage, Stage::OcsClos);
  EXPECT_EQ(a.leaves, (Ids{0, 1}));
  EXPECT_TRUE(a.spines.empty());
  EXPECT_EQ(a.gpus, (Ids{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(a.servers, (Ids{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(a.circuits,
            (Circuits{{0, 0, 0}, {0, 0, 1}, {0, 2, 0}, {0, 2, 1}, {1, 0, 0}, {1, 0, 1}, {1, 2, 0}, {1, 2, 1}}));
  EXPECT_EQ(a.switched_off,
            (Circuits{{0, 1, 1}, {0, 3, 1}, {1, 1, 1}, {1, 3, 1}, {2, 0, 0}, {2, 2, 0}, {3, 0, 0}, {3, 2, 0}}));
  EXPECT_EQ(a.switched_on, (Circuits{{0, 0, 1}, {0, 2, 1}, {1, 0, 1}, {1, 2, 1}}));
  // Source routing: rank 1 (unit 1, spine 0) to rank 6 goes down rank 5's circuit.
  EXPECT_EQ(a.down_rank(1, 6), 5u);
  EXPECT_EQ(a.circuits[a.down_rank(1, 6)].spine, a.circuits[1].spine);

  // The node limit: a search that may visit no leaf set gives up.
  OcsOptions none;
  none.max_nodes = 0;
  const Decision g = place_ocs_vclos(cl, ocs, 8, none);
  EXPECT_FALSE(g.allocation);
  EXPECT_EQ(g.why, Refusal::Network);

  cl.take(a);
  ocs.take(a);
  for (uint32_t m = 0; m < 4; ++m) EXPECT_EQ(ocs.connected_at(m), m % 2 == 0 ? 4u : 2u) << m;
  EXPECT_EQ(ocs.free_spine_ports(0), 0u);
  EXPECT_EQ(ocs.free_spine_ports(1), 4u);
  EXPECT_EQ(ocs.free_leaf_ports(0, 0), 0u);
  EXPECT_EQ(ocs.free_leaf_ports(2, 1), 2u);
  EXPECT_EQ(ocs.connected(2, 0, 0), OcsState::kNone);
  EXPECT_EQ(ocs.connected(2, 0, 1), 1u);

  // Leaves 2 and 3 still have 4 idle servers each: the next 8-GPU job
  // finds spines 1 and 3 (4 free ports, 2 connected each) and the
  // unconnected slots 0 of leaves 2 and 3; spines 0 and 2 have no port
  // left.  Units: spine 1 takes 2 (OCS 0: leaves' 2 slots), spine 3 takes 2.
  const Decision d2 = place_ocs_vclos(cl, ocs, 8);
  ASSERT_TRUE(d2.allocation);
  const Allocation& b = *d2.allocation;
  EXPECT_EQ(b.stage, Stage::OcsClos);
  EXPECT_EQ(b.leaves, (Ids{2, 3}));
  EXPECT_EQ(b.circuits,
            (Circuits{{2, 1, 0}, {2, 1, 1}, {2, 3, 0}, {2, 3, 1}, {3, 1, 0}, {3, 1, 1}, {3, 3, 0}, {3, 3, 1}}));
  EXPECT_TRUE(b.switched_off.empty());
  EXPECT_EQ(b.switched_on, (Circuits{{2, 1, 0}, {2, 3, 0}, {3, 1, 0}, {3, 3, 0}}));
  cl.take(b);
  ocs.take(b);
  for (uint32_t m = 0; m < 4; ++m) EXPECT_EQ(ocs.free_spine_ports(m), 0u) << m;
}

// L = 3, S = 2, K = 1, lpp = 2: slots 0, 1 of every leaf to spine 0, 2, 3
// to spine 1; spines have 6 ports.  T = 1, 4 servers per leaf.  Job A (2
// GPUs, idle servers 0 and 4 only): spine 0 (tie), leaves 0 and 1 reuse
// their slot 0.  Then servers 3, 8, 9, 10 become idle; job B (4 GPUs): no
// leaf has 4; spine 0 has 4 free ports (A holds 2), spine 1 has 6: spine 0.
// Leaf 0 (1 idle server) reuses slot 1; leaf 2 (3 servers) reuses slots 0,
// 1 and rewires slot 2 off spine 1.  Spine 0 is full: its circuits in
// (leaf, slot) order are (0, 0) held by A, (0, 1) claimed, (1, 0) held by
// A, (1, 1) idle: that one is switched off, never a held one.
TEST(OcsVClos, FreesSpinePortsFromIdleCircuitsOnly) {
  ClusterState cl(cluster_shape(3, 2, 4, 1, 2));
  OcsState ocs(ocs_shape(3, 2, 1, 2));
  std::vector<Allocation> busy;
  for (uint32_t g : {1u, 2u, 3u, 5u, 6u, 7u, 8u, 9u, 10u, 11u}) {
    busy.push_back(server_job({g}));
    cl.take(busy.back());
  }
  const Decision da = place_ocs_vclos(cl, ocs, 2);
  ASSERT_TRUE(da.allocation);
  const Allocation& a = *da.allocation;
  EXPECT_EQ(a.stage, Stage::OcsSpine);
  EXPECT_EQ(a.gpus, (Ids{0, 4}));
  EXPECT_EQ(a.circuits, (Circuits{{0, 0, 0}, {1, 0, 0}}));
  EXPECT_TRUE(a.switched_off.empty());
  EXPECT_TRUE(a.switched_on.empty());
  cl.take(a);
  ocs.take(a);
  for (const Allocation& b : busy)
    if (b.gpus[0] == 3 || (b.gpus[0] >= 8 && b.gpus[0] <= 10)) cl.release(b);

  const Decision db = place_ocs_vclos(cl, ocs, 4);
  ASSERT_TRUE(db.allocation);
  const Allocation& b = *db.allocation;
  EXPECT_EQ(b.stage, Stage::OcsSpine);
  EXPECT_EQ(b.gpus, (Ids{3, 8, 9, 10}));
  EXPECT_EQ(b.circuits, (Circuits{{0, 0, 1}, {2, 0, 0}, {2, 0, 1}, {2, 0, 2}}));
  EXPECT_EQ(b.switched_off, (Circuits{{1, 0, 1}, {2, 1, 2}}));
  EXPECT_EQ(b.switched_on, (Circuits{{2, 0, 2}}));
  cl.take(b);
  ocs.take(b);
  EXPECT_EQ(ocs.connected_at(0), 6u);
  EXPECT_EQ(ocs.connected_at(1), 5u);
  EXPECT_EQ(ocs.free_spine_ports(0), 0u);
  EXPECT_EQ(ocs.connected(1, 0, 1), OcsState::kNone);
  EXPECT_TRUE(ocs.held(0, 0, 0));
  EXPECT_TRUE(ocs.held(1, 0, 0));
}

// ---------------------------------------------------------------------------
// 2. The shape and the power-on wiring.

TEST(OcsShape, Check) {
  EXPECT_EQ(ocs_shape(4, 4, 2, 1).check(), "");
  EXPECT_EQ(ocs_shape(4, 4, 4, 3).check(), "");
  OcsShape o = ocs_shape(4, 4, 2, 1);
  o.switches = 3;
  EXPECT_NE(o.check(), "");  // does not divide S
  o = ocs_shape(4, 4, 2, 1);
  o.leaf_ports = 3;
  EXPECT_NE(o.check(), "");  // not a multiple of g = 2
  o = ocs_shape(4, 4, 2, 1);
  o.spine_ports = 3;
  EXPECT_NE(o.check(), "");  // below the power-on wiring's 4 circuits per spine
  for (uint32_t OcsShape::*field : {&OcsShape::leaves, &OcsShape::spines, &OcsShape::switches, &OcsShape::leaf_ports}) {
    o = ocs_shape(4, 4, 2, 1);
    o.*field = 0;
    EXPECT_NE(o.check(), "");
    EXPECT_THROW((void)OcsState{o}, std::invalid_argument);
  }
}

TEST(OcsState, PowerOnIsTheCanonicalLeafSpine) {
  // (L, S, K, lpp)
  for (const auto& [l, s, k, lpp] : std::vector<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>>{
           {3, 4, 1, 1}, {3, 4, 2, 2}, {5, 4, 4, 1}, {2, 6, 3, 3}, {64, 32, 32, 1}}) {
    const OcsShape sh = ocs_shape(l, s, k, lpp);
    ASSERT_EQ(sh.check(), "");
    const OcsState ocs(sh);
    const uint32_t g = s / k;
    // Per leaf: lpp slots to every spine, slot c of OCS j to spine j*g + c/lpp.
    for (uint32_t n = 0; n < l; ++n) {
      std::vector<uint32_t> per_spine(s, 0);
      for (uint32_t j = 0; j < k; ++j) {
        EXPECT_EQ(ocs.free_leaf_ports(n, j), g * lpp);
        for (uint32_t c = 0; c < g * lpp; ++c) {
          EXPECT_EQ(ocs.connected(n, j, c), sh.power_on_spine(j, c));
          EXPECT_EQ(ocs.connected(n, j, c), j * g + c / lpp);
          EXPECT_EQ(sh.switch_of(ocs.connected(n, j, c)), j);
          EXPECT_FALSE(ocs.held(n, j, c));
          ++per_spine[ocs.connected(n, j, c)];
        }
      }
      EXPECT_EQ(per_spine, std::vector<uint32_t>(s, lpp));
    }
    for (uint32_t m = 0; m < s; ++m) {
      EXPECT_EQ(ocs.connected_at(m), sh.spine_ports);
      EXPECT_EQ(ocs.connected_at(m), l * lpp);
      EXPECT_EQ(ocs.free_spine_ports(m), sh.spine_ports);
    }
  }
}

// ---------------------------------------------------------------------------
// Random states, built by admitting and releasing jobs through
// place_ocs_vclos, with an independent record of the circuits held.

/// The GPUs an allocation keeps busy: its gpus and its whole servers'.
std::set<uint32_t> held_gpus(const ClusterShape& sh, const Allocation& a) {
  std::set<uint32_t> gpus(a.gpus.begin(), a.gpus.end());
  for (uint32_t server : a.servers)
    for (uint32_t slot = 0; slot < sh.gpus_per_server; ++slot) gpus.insert(server * sh.gpus_per_server + slot);
  return gpus;
}

struct Sim {
  ClusterState cl;
  OcsState ocs;
  std::vector<Allocation> running;
  std::vector<int> holder;         // per (leaf, k, slot): index into running + 1, or 0
  std::vector<uint32_t> gpu_jobs;  // per GPU: the running jobs that hold it

  Sim(const ClusterShape& cs, const OcsShape& os)
      : cl(cs), ocs(os), holder(std::size_t{os.leaves} * os.switches * os.leaf_ports, 0), gpu_jobs(cs.gpus(), 0) {}

  std::size_t at(const Circuit& c) const {
    const OcsShape& o = ocs.shape();
    return (std::size_t{c.leaf} * o.switches + o.switch_of(c.spine)) * o.leaf_ports + c.slot;
  }
  bool held(const Circuit& c) const { return holder[at(c)] != 0; }

  void take(const Allocation& a) {
    for (const Circuit& c : a.circuits) holder[at(c)] = 1;
    for (uint32_t g : held_gpus(cl.shape(), a)) ++gpu_jobs[g];
    cl.take(a);
    ocs.take(a);
    running.push_back(a);
  }
  void release(std::size_t i) {
    for (const Circuit& c : running[i].circuits) holder[at(c)] = 0;
    for (uint32_t g : held_gpus(cl.shape(), running[i])) --gpu_jobs[g];
    cl.release(running[i]);
    ocs.release(running[i]);
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
  }
};

uint32_t random_size(std::mt19937& rng, uint32_t gpus) {
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) return std::uniform_int_distribution<uint32_t>(1, gpus)(rng);
  const uint32_t top = std::bit_width(gpus) - 1;
  return 1u << std::uniform_int_distribution<uint32_t>(0, top)(rng);
}

/// A random shape: L <= lmax, S <= smax, K in {1, 2, S} dividing S.
std::pair<ClusterShape, OcsShape> random_shape(std::mt19937& rng, uint32_t lmax, uint32_t smax, uint32_t lppmax,
                                               const Ids& ts, uint32_t splmax) {
  auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  const uint32_t l = pick(2, lmax);
  const uint32_t s = pick(1, smax);
  Ids ks{1, s};
  if (s % 2 == 0) ks.push_back(2);
  const uint32_t k = ks[pick(0, static_cast<uint32_t>(ks.size()) - 1)];
  const uint32_t lpp = pick(1, lppmax);
  const uint32_t t = ts[pick(0, static_cast<uint32_t>(ts.size()) - 1)];
  const uint32_t spl = pick(1, splmax);
  return {cluster_shape(l, s, spl, t, lpp), ocs_shape(l, s, k, lpp)};
}

// ---------------------------------------------------------------------------
// 3. The stages against brute force.

/// The leaves by (idle servers, index).
Ids best_fit_order(const ClusterState& cl) {
  Ids order(cl.shape().leaves);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return cl.idle_servers(a) < cl.idle_servers(b); });
  return order;
}

/// Every integer vector s_m >= 0 (sum s) with l * s_m <= the spine's free
/// ports and, for every leaf in `leaves` and OCS k, the sum of s_m over k's
/// spines <= the leaf's free ports on k; the least sum of free ports * s_m
/// over them, or nullopt if none (first_only: stop at the first).
std::optional<uint64_t> brute_units(const OcsState& ocs, const Ids& leaves, uint32_t l, uint32_t s, bool first_only) {
  const OcsShape& o = ocs.shape();
  std::vector<uint32_t> sm(o.spines, 0);
  std::optional<uint64_t> best;
  // Recursion over spines in index order.
  auto rec = [&](auto&& self, uint32_t m, uint32_t left) -> void {
    if (first_only && best) return;
    if (m == o.spines) {
      if (left != 0) return;
      for (uint32_t leaf : leaves) {
        for (uint32_t k = 0; k < o.switches; ++k) {
          uint32_t on_k = 0;
          for (uint32_t x = 0; x < o.spines; ++x)
            if (o.switch_of(x) == k) on_k += sm[x];
          if (on_k > ocs.free_leaf_ports(leaf, k)) return;
        }
      }
      uint64_t cost = 0;
      for (uint32_t x = 0; x < o.spines; ++x) cost += uint64_t{ocs.free_spine_ports(x)} * sm[x];
      if (!best || cost < *best) best = cost;
      return;
    }
    for (uint32_t v = 0; v <= left && l * v <= ocs.free_spine_ports(m); ++v) {
      sm[m] = v;
      self(self, m + 1, left - v);
    }
    sm[m] = 0;
  };
  rec(rec, 0, s);
  return best;
}

/// The first leaf set (in the lexicographic order of positions in `order`,
/// the leaves in best-fit order) of l leaves with room for s GPUs each
/// (room: per leaf, the GPUs a job may take of it) and a unit vector;
/// empty if none.
Ids brute_leaves(const Ids& order, const Ids& room, const OcsState& ocs, uint32_t l, uint32_t s) {
  const auto count = static_cast<uint32_t>(order.size());
  if (l > count) return {};
  Ids pos(l);
  std::iota(pos.begin(), pos.end(), 0u);
  for (;;) {
    Ids leaves;
    bool ok = true;
    for (uint32_t p : pos) {
      leaves.push_back(order[p]);
      ok = ok && room[order[p]] >= s;
    }
    if (ok && brute_units(ocs, leaves, l, s, true)) {
      std::sort(leaves.begin(), leaves.end());
      return leaves;
    }
    // Next combination in lexicographic order.
    int i = static_cast<int>(l) - 1;
    while (i >= 0 && pos[static_cast<std::size_t>(i)] == count - l + static_cast<uint32_t>(i)) --i;
    if (i < 0) return {};
    ++pos[static_cast<std::size_t>(i)];
    for (auto j = static_cast<std::size_t>(i) + 1; j < l; ++j) pos[j] = pos[j - 1] + 1;
  }
}

/// What place_ocs_vclos should decide, computed directly from the spec's
/// conditions; checks the decision against it.  Returns the stage decided.
std::optional<Stage> check_decision(const ClusterState& cl, const OcsState& ocs, uint32_t n, const Decision& d) {
  const ClusterShape& sh = cl.shape();
  const OcsShape& o = ocs.shape();
  const uint32_t t = sh.gpus_per_server;
  if (const std::optional<Allocation> local = place_local(cl, n)) {
    EXPECT_TRUE(d.allocation && d.allocation->stage == local->stage && d.allocation->gpus == local->gpus);
    return local->stage;
  }
  if (n <= t || cl.idle_servers() < ceil_div(n, t)) {
    EXPECT_FALSE(d.allocation);
    EXPECT_EQ(d.why, Refusal::Gpus) << "n " << n;
    return std::nullopt;
  }
  // OcsSpine: the first spine by (free ports, index) with >= n free ports
  // whose OCS's leaf ports reach ceil(n/T) idle servers.
  Ids spines(o.spines);
  std::iota(spines.begin(), spines.end(), 0u);
  std::stable_sort(spines.begin(), spines.end(),
                   [&](uint32_t a, uint32_t b) { return ocs.free_spine_ports(a) < ocs.free_spine_ports(b); });
  for (uint32_t m : spines) {
    if (ocs.free_spine_ports(m) < n) continue;
    const uint32_t k = o.switch_of(m);
    uint32_t reach = 0;
    for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf)
      reach += std::min(cl.idle_servers(leaf), ocs.free_leaf_ports(leaf, k) / t);
    if (reach < ceil_div(n, t)) continue;
    EXPECT_TRUE(d.allocation) << "n " << n << ": expected OcsSpine on spine " << m;
    if (!d.allocation) return std::nullopt;
    const Allocation& a = *d.allocation;
    EXPECT_EQ(a.stage, Stage::OcsSpine);
    EXPECT_EQ(a.servers.size(), ceil_div(n, t));
    for (const Circuit& c : a.circuits) EXPECT_EQ(c.spine, m);
    // Servers per leaf: best fit, each leaf as many as its ports allow.
    Ids want(sh.leaves, 0), got(sh.leaves, 0);
    uint32_t left = ceil_div(n, t);
    for (uint32_t leaf : best_fit_order(cl)) {
      want[leaf] = std::min({cl.idle_servers(leaf), ocs.free_leaf_ports(leaf, k) / t, left});
      left -= want[leaf];
    }
    for (uint32_t server : a.servers) ++got[server / sh.servers_per_leaf];
    EXPECT_EQ(got, want);
    return Stage::OcsSpine;
  }
  // OcsClos: the first (l, s) with a feasible leaf set.
  for (uint32_t l = std::max<uint32_t>(1, std::bit_floor(n) / sh.spines); l <= sh.leaves; l *= 2) {
    if (l == 1 || n % l != 0 || (n / l) % t != 0) continue;
    const uint32_t s = n / l;
    Ids room(sh.leaves);  // whole idle servers' GPUs
    for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf) room[leaf] = cl.idle_servers(leaf) * t;
    const Ids leaves = brute_leaves(best_fit_order(cl), room, ocs, l, s);
    if (leaves.empty()) continue;
    EXPECT_TRUE(d.allocation) << "n " << n << ": expected OcsClos with l " << l;
    if (!d.allocation) return std::nullopt;
    const Allocation& a = *d.allocation;
    EXPECT_EQ(a.stage, Stage::OcsClos);
    EXPECT_EQ(a.leaves, leaves) << "n " << n << " l " << l;
    EXPECT_EQ(a.gpus.size(), n);
    if (a.circuits.size() != n || a.leaves.size() != l) return Stage::OcsClos;
    // The units: a valid vector whose cost is the brute-force minimum.
    std::vector<uint32_t> sm(o.spines, 0);
    for (uint32_t u = 0; u < s; ++u) ++sm[a.circuits[u].spine];
    std::vector<uint32_t> on_k(o.switches, 0);
    uint64_t cost = 0;
    for (uint32_t m = 0; m < o.spines; ++m) {
      EXPECT_LE(l * sm[m], ocs.free_spine_ports(m));
      on_k[o.switch_of(m)] += sm[m];
      cost += uint64_t{ocs.free_spine_ports(m)} * sm[m];
    }
    for (uint32_t leaf : leaves)
      for (uint32_t k = 0; k < o.switches; ++k) EXPECT_LE(on_k[k], ocs.free_leaf_ports(leaf, k));
    EXPECT_EQ(cost, brute_units(ocs, leaves, l, s, false).value_or(~uint64_t{0}));
    return Stage::OcsClos;
  }
  EXPECT_FALSE(d.allocation) << "n " << n << ": placed by " << to_string(d.allocation->stage);
  EXPECT_EQ(d.why, Refusal::Network);
  return std::nullopt;
}

TEST(OcsVClos, StagesMatchBruteForce) {
  std::mt19937 rng(20240611);
  uint32_t spine_stage = 0, clos_stage = 0, refusals = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const auto [cs, os] = random_shape(rng, 5, 4, 2, {1, 2}, 3);
    Sim sim(cs, os);
    for (int step = 0; step < 30; ++step) {
      if (!sim.running.empty() && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        sim.release(std::uniform_int_distribution<std::size_t>(0, sim.running.size() - 1)(rng));
      } else {
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, random_size(rng, cs.gpus()));
        if (d.allocation) sim.take(*d.allocation);
      }
      for (uint32_t n = 1; n <= cs.gpus(); ++n) {
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, n);
        const std::optional<Stage> st = check_decision(sim.cl, sim.ocs, n, d);
        spine_stage += st == Stage::OcsSpine;
        clos_stage += st == Stage::OcsClos;
        refusals += !d.allocation && d.why == Refusal::Network;
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  // The cases the comparison covers (not trivially all refusals).
  EXPECT_GT(spine_stage, 100u);
  EXPECT_GT(clos_stage, 100u);
  EXPECT_GT(refusals, 100u);
}

// ---------------------------------------------------------------------------
// 4. Invariants over random admissions and releases.

/// Checks a placed allocation against the state it was decided on (before
/// take): ranks' circuits, rewiring of idle circuits only, OcsClos units,
/// and contention-freedom of leaf-wise patterns.
void check_allocation(const Sim& sim, const Allocation& a, uint32_t n) {
  const ClusterShape& sh = sim.cl.shape();
  const OcsShape& o = sim.ocs.shape();
  ASSERT_EQ(a.gpus.size(), n);
  if (a.stage != Stage::OcsSpine && a.stage != Stage::OcsClos) {
    EXPECT_TRUE(a.circuits.empty() && a.switched_off.empty() && a.switched_on.empty());
    return;
  }
  ASSERT_EQ(a.circuits.size(), n);
  EXPECT_TRUE(a.spines.empty());
  // The spec's "optical rewiring never touches a busy link".
  for (const Circuit& c : a.switched_off) {
    EXPECT_FALSE(sim.held(c)) << "a held circuit switched off";
    EXPECT_EQ(sim.ocs.connected(c.leaf, o.switch_of(c.spine), c.slot), c.spine) << "switched off, not connected";
  }
  for (const Circuit& c : a.switched_on) EXPECT_FALSE(sim.held(c));
  std::set<std::tuple<uint32_t, uint32_t, uint32_t>> slots;  // (leaf, k, slot)
  for (uint32_t r = 0; r < n; ++r) {
    const Circuit& c = a.circuits[r];
    EXPECT_EQ(c.leaf, leaf_of_gpu(sh, a.gpus[r])) << "rank " << r;
    EXPECT_FALSE(sim.held(c)) << "rank " << r << "'s circuit is another job's";
    EXPECT_TRUE(slots.emplace(c.leaf, o.switch_of(c.spine), c.slot).second) << "rank " << r << "'s circuit twice";
  }
  // Cross-leaf routes: up circuits[src], down circuits[down_rank]; each
  // circuit direction once per pattern, and both on one spine.
  auto check_pattern = [&](const std::vector<std::pair<uint32_t, uint32_t>>& flows) {
    std::set<uint32_t> up, down;
    for (const auto& [src, dst] : flows) {
      if (leaf_of_gpu(sh, a.gpus[src]) == leaf_of_gpu(sh, a.gpus[dst])) continue;
      const uint32_t via = a.down_rank(src, dst);
      EXPECT_EQ(a.circuits[via].leaf, leaf_of_gpu(sh, a.gpus[dst]));
      EXPECT_EQ(a.circuits[via].spine, a.circuits[src].spine);
      EXPECT_TRUE(up.insert(src).second) << "uplink circuit of rank " << src << " used twice";
      EXPECT_TRUE(down.insert(via).second) << "downlink circuit of rank " << via << " used twice";
    }
  };
  if (a.stage == Stage::OcsSpine) {
    EXPECT_TRUE(a.leaves.empty());
    for (const Circuit& c : a.circuits) EXPECT_EQ(c.spine, a.circuits[0].spine);
    // Every rank has a circuit of its own to the one spine: any
    // permutation, leaf-wise or not.
    Ids perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::mt19937 shuffle(n);
    std::shuffle(perm.begin(), perm.end(), shuffle);
    std::vector<std::pair<uint32_t, uint32_t>> flows;
    for (uint32_t r = 0; r < n; ++r) flows.emplace_back(r, perm[r]);
    check_pattern(flows);
    return;
  }
  const auto l = static_cast<uint32_t>(a.leaves.size());
  ASSERT_GT(l, 1u);
  ASSERT_EQ(n % l, 0u);
  const uint32_t s = n / l;
  std::vector<uint32_t> sm(o.spines, 0);
  for (uint32_t u = 0; u < s; ++u) {
    ++sm[a.circuits[u].spine];
    for (uint32_t v = 0; v < l; ++v) {
      EXPECT_EQ(a.circuits[v * s + u].spine, a.circuits[u].spine) << "unit " << u;
      EXPECT_EQ(a.circuits[v * s + u].leaf, a.leaves[v]);
    }
  }
  for (uint32_t m = 0; m < o.spines; ++m) EXPECT_LE(l * sm[m], sim.ocs.free_spine_ports(m));
  // Leaf-wise permutations: shifts by whole virtual leaves, a ring, and
  // halving-doubling partners when l is a power of two.
  for (uint32_t k = 1; k < l; ++k) {
    std::vector<std::pair<uint32_t, uint32_t>> flows;
    for (uint32_t r = 0; r < n; ++r) flows.emplace_back(r, (r + k * s) % n);
    check_pattern(flows);
  }
  std::vector<std::pair<uint32_t, uint32_t>> ring;
  for (uint32_t r = 0; r < n; ++r) ring.emplace_back(r, (r + 1) % n);
  check_pattern(ring);
  if (std::has_single_bit(l) && std::has_single_bit(s)) {
    for (uint32_t d = s; d < n; d *= 2) {
      std::vector<std::pair<uint32_t, uint32_t>> hd;
      for (uint32_t r = 0; r < n; ++r) hd.emplace_back(r, r ^ d);
      check_pattern(hd);
    }
  }
}

/// The optical state's counters against a recount from connected() and
/// the record of held circuits.
void check_state(const Sim& sim) {
  const OcsShape& o = sim.ocs.shape();
  std::vector<uint32_t> at_spine(o.spines, 0), held_at_spine(o.spines, 0);
  for (uint32_t n = 0; n < o.leaves; ++n) {
    for (uint32_t k = 0; k < o.switches; ++k) {
      uint32_t connected = 0, held = 0;
      for (uint32_t c = 0; c < o.leaf_ports; ++c) {
        const uint32_t m = sim.ocs.connected(n, k, c);
        const bool h = sim.holder[(std::size_t{n} * o.switches + k) * o.leaf_ports + c] != 0;
        EXPECT_EQ(sim.ocs.held(n, k, c), h);
        if (m == OcsState::kNone) {
          EXPECT_FALSE(h) << "a held circuit is unconnected";
          continue;
        }
        EXPECT_EQ(o.switch_of(m), k) << "a slot connected across OCSs";
        ++connected;
        ++at_spine[m];
        held += h;
        held_at_spine[m] += h;
      }
      EXPECT_LE(connected, o.leaf_ports);
      EXPECT_EQ(sim.ocs.free_leaf_ports(n, k), o.leaf_ports - held);
    }
  }
  for (uint32_t m = 0; m < o.spines; ++m) {
    EXPECT_EQ(sim.ocs.connected_at(m), at_spine[m]);
    EXPECT_LE(at_spine[m], o.spine_ports) << "spine " << m;
    EXPECT_EQ(sim.ocs.free_spine_ports(m), o.spine_ports - held_at_spine[m]);
  }
}

TEST(OcsVClos, InvariantsOverRandomAdmissions) {
  std::mt19937 rng(7);
  uint32_t admitted = 0, released = 0, rewired = 0, clos = 0, spine = 0, parallel = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto [cs, os] = random_shape(rng, 10, 8, 3, {1, 2, 4}, 4);
    Sim sim(cs, os);
    for (int step = 0; step < 60; ++step) {
      if (!sim.running.empty() && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        const std::size_t i = std::uniform_int_distribution<std::size_t>(0, sim.running.size() - 1)(rng);
        const Circuits circuits = sim.running[i].circuits;
        sim.release(i);
        ++released;
        // Released circuits stay connected.
        for (const Circuit& c : circuits) EXPECT_EQ(sim.ocs.connected(c.leaf, os.switch_of(c.spine), c.slot), c.spine);
      } else {
        const uint32_t n = random_size(rng, cs.gpus());
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, n);
        const Decision again = place_ocs_vclos(sim.cl, sim.ocs, n);  // deterministic
        EXPECT_EQ(d.why, again.why);
        EXPECT_EQ(d.allocation.has_value(), again.allocation.has_value());
        EXPECT_EQ((d.allocation ? d.allocation->circuits : Circuits{}),
                  (again.allocation ? again.allocation->circuits : Circuits{}));
        if (!d.allocation) continue;
        check_allocation(sim, *d.allocation, n);
        rewired += !d.allocation->switched_on.empty();
        clos += d.allocation->stage == Stage::OcsClos;
        // Parallel units: unit 1 on unit 0's spine.
        parallel += d.allocation->stage == Stage::OcsClos && d.allocation->circuits.size() > 1 &&
                    d.allocation->circuits[1].spine == d.allocation->circuits[0].spine &&
                    d.allocation->circuits[1].leaf == d.allocation->circuits[0].leaf;
        spine += d.allocation->stage == Stage::OcsSpine;
        sim.take(*d.allocation);
        ++admitted;
        for (const Circuit& c : d.allocation->circuits) {
          EXPECT_EQ(sim.ocs.connected(c.leaf, os.switch_of(c.spine), c.slot), c.spine);
          EXPECT_TRUE(sim.ocs.held(c.leaf, os.switch_of(c.spine), c.slot));
        }
      }
      check_state(sim);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GE(admitted + released, 1000u);
  EXPECT_GT(rewired, 50u);
  EXPECT_GT(clos, 50u);
  EXPECT_GT(spine, 50u);
  EXPECT_GT(parallel, 20u);
}

// CLUSTER2048's leaf-spine (L = 64, S = 32, T = 4, 8 servers per leaf)
// under one OCS, 4 and 32 (the spec's default): 300 random steps each (a
// release one time in three), `size` drawing a job's GPUs; every
// allocation checked (check_allocation, and `extra` before it) and the
// state after every step (check_state, and with `gpu_record` the GPUs'
// owners).  Returns the (OcsClos, OcsSpine) placements.
template <class Size, class Extra>
std::pair<uint32_t, uint32_t> walk_cluster2048(std::mt19937& rng, const OcsOptions& options, Size size, Extra extra,
                                               bool gpu_record);

TEST(OcsVClos, InvariantsOnCluster2048) {
  std::mt19937 rng(2048);
  const auto [clos, spine] = walk_cluster2048(
      rng, OcsOptions{}, [](std::mt19937& r) { return 1u << std::uniform_int_distribution<uint32_t>(0, 9)(r); },
      [](const Sim&, const Allocation&, uint32_t) {}, false);
  EXPECT_GT(clos, 20u);
  EXPECT_GT(spine, 20u);
}

// ---------------------------------------------------------------------------
// 5. Release, then take again.

TEST(OcsState, ReleaseKeepsCircuitsAndTheJobFitsAgain) {
  ClusterState cl(cluster_shape(2, 2, 4, 1, 2));
  OcsState ocs(ocs_shape(2, 2, 1, 2));
  for (uint32_t g : {0u, 4u, 5u, 6u}) cl.take(server_job({g}));
  const Decision d = place_ocs_vclos(cl, ocs, 4);
  ASSERT_TRUE(d.allocation);
  const Allocation a = *d.allocation;
  ASSERT_FALSE(a.switched_on.empty());
  cl.take(a);
  ocs.take(a);
  cl.release(a);
  ocs.release(a);
  for (const Circuit& c : a.circuits) {
    EXPECT_EQ(ocs.connected(c.leaf, 0, c.slot), c.spine);
    EXPECT_FALSE(ocs.held(c.leaf, 0, c.slot));
  }
  EXPECT_EQ(ocs.free_spine_ports(0), 4u);
  EXPECT_EQ(ocs.free_leaf_ports(0, 0), 4u);
  // The same job again: its circuits are still there, nothing to rewire.
  const Decision e = place_ocs_vclos(cl, ocs, 4);
  ASSERT_TRUE(e.allocation);
  EXPECT_EQ(e.allocation->circuits, a.circuits);
  EXPECT_TRUE(e.allocation->switched_off.empty());
  EXPECT_TRUE(e.allocation->switched_on.empty());
  cl.take(*e.allocation);
  ocs.take(*e.allocation);
  EXPECT_EQ(ocs.free_spine_ports(0), 0u);
  // The first allocation's rewiring no longer applies: its circuits are
  // held, and its switched-off circuits are gone.
  ocs.release(*e.allocation);
  Allocation bare = a;
  bare.switched_off.clear();
  bare.switched_on.clear();
  ocs.take(bare);
  EXPECT_EQ(ocs.free_spine_ports(0), 0u);
}

TEST(OcsState, ReleaseThenTakeAgainOnRandomStates) {
  std::mt19937 rng(99);
  uint32_t checked = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const auto [cs, os] = random_shape(rng, 6, 4, 2, {1, 2}, 3);
    Sim sim(cs, os);
    for (int step = 0; step < 30; ++step) {
      const uint32_t n = random_size(rng, cs.gpus());
      const Decision d = place_ocs_vclos(sim.cl, sim.ocs, n);
      if (!d.allocation) {
        if (!sim.running.empty()) sim.release(0);
        continue;
      }
      sim.take(*d.allocation);
      if (d.allocation->circuits.empty()) continue;
      // Release the newest job and place the same size again: the same
      // stage, GPUs and circuits, with nothing to rewire.
      sim.release(sim.running.size() - 1);
      const Decision e = place_ocs_vclos(sim.cl, sim.ocs, n);
      ASSERT_TRUE(e.allocation);
      EXPECT_EQ(e.allocation->stage, d.allocation->stage);
      EXPECT_EQ(e.allocation->gpus, d.allocation->gpus);
      EXPECT_EQ(e.allocation->circuits, d.allocation->circuits);
      EXPECT_TRUE(e.allocation->switched_off.empty());
      EXPECT_TRUE(e.allocation->switched_on.empty());
      sim.take(*e.allocation);
      ++checked;
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(checked, 50u);
}

// ---------------------------------------------------------------------------
// 6. OCS-Releax: OCS-vClos without the whole-server locality rule.

OcsOptions releax() {
  OcsOptions o;
  o.whole_servers = false;
  return o;
}

/// Makes the GPUs busy, each a one-GPU job of its own.
void occupy(ClusterState& cl, const Ids& gpus) {
  for (uint32_t g : gpus) cl.take(server_job({g}));
}

// L = 2, S = 2, K = 1, lpp = 2: each leaf has P = 4 slots, 0 and 1 to
// spine 0, 2 and 3 to spine 1; spines have 4 ports.  T = 2, 2 servers per
// leaf (leaf 0: GPUs 0-3, leaf 1: GPUs 4-7).  GPUs 0, 1, 2 and 5 are busy:
// leaf 0 has GPU 3 idle (server 1), leaf 1 GPU 4 (server 2) and 6, 7
// (server 3, the only whole idle server).  A 4-GPU job:
//  - whole servers: 2 idle servers needed, 1 exists: refused for Gpus;
//  - Releax: 4 idle GPUs; no leaf has 4 (stage 1).  OcsSpine: both spines
//    have 4 free ports, spine 0 (tie, lower index).  Leaves by idle GPUs:
//    leaf 0 (1) gives GPU 3; leaf 1 (3) gives 3: server 2 (1 idle) first,
//    GPU 4, then server 3's 6 and 7.  Circuits to spine 0: leaf 0 reuses
//    slot 0; leaf 1 reuses slots 0 and 1 and rewires slot 2 off spine 1;
//    spine 0 is then full (4 circuits) and frees its lowest circuit
//    neither held nor claimed: leaf 0's slot 1.
TEST(OcsReleax, PlacesOnPartialServersWhatWholeServersRefuse) {
  EXPECT_TRUE(OcsOptions{}.whole_servers);
  ClusterState cl(cluster_shape(2, 2, 2, 2, 2));
  OcsState ocs(ocs_shape(2, 2, 1, 2));
  occupy(cl, {0, 1, 2, 5});

  const Decision w = place_ocs_vclos(cl, ocs, 4);
  EXPECT_FALSE(w.allocation);
  EXPECT_EQ(w.why, Refusal::Gpus);

  const Decision d = place_ocs_vclos(cl, ocs, 4, releax());
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.why, Refusal::None);
  const Allocation& a = *d.allocation;
  EXPECT_EQ(a.stage, Stage::OcsSpine);
  EXPECT_TRUE(a.servers.empty());
  EXPECT_EQ(a.gpus, (Ids{3, 4, 6, 7}));
  EXPECT_EQ(a.circuits, (Circuits{{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {1, 0, 2}}));
  EXPECT_EQ(a.switched_off, (Circuits{{0, 0, 1}, {1, 1, 2}}));
  EXPECT_EQ(a.switched_on, (Circuits{{1, 0, 2}}));
  EXPECT_TRUE(a.leaves.empty());

  cl.take(a);
  ocs.take(a);
  for (uint32_t server = 0; server < 4; ++server) EXPECT_EQ(cl.idle_gpus(server), 0u) << server;
  EXPECT_EQ(ocs.connected(0, 0, 1), OcsState::kNone);
  EXPECT_EQ(ocs.connected(1, 0, 2), 0u);
  EXPECT_EQ(ocs.connected_at(0), 4u);
  EXPECT_EQ(ocs.connected_at(1), 3u);
  EXPECT_EQ(ocs.free_spine_ports(0), 0u);
  EXPECT_EQ(ocs.free_leaf_ports(0, 0), 3u);
  EXPECT_EQ(ocs.free_leaf_ports(1, 0), 1u);
  // Only the job's own GPUs come back: no server was reserved whole.
  cl.release(a);
  ocs.release(a);
  EXPECT_EQ(cl.idle_gpus(1), 1u);
  EXPECT_EQ(cl.idle_gpus(2), 1u);
  EXPECT_EQ(cl.idle_servers(), 1u);
}

// L = 4, S = 2, K = 1, lpp = 1: slot 0 of every leaf to spine 0, slot 1 to
// spine 1; spines have 4 ports.  T = 4, 2 servers per leaf.  Every leaf has
// 4 idle GPUs and no server is idle: leaf 0's server 0 has GPUs 1, 2, 3
// idle and server 1 GPU 7; every other server 2 (leaf 1: 8, 11 | 13, 14;
// leaf 2: 18, 19 | 20, 21; leaf 3: 25, 27 | 28, 31).  An 8-GPU job:
//  - whole servers: refused for Gpus (no idle server);
//  - Releax: no leaf has 8; no spine has 8 free ports.  OCS-FINDCLOS:
//    l = 8/2 = 4, s = 2 (T does not divide s: skipped with whole servers),
//    every leaf has 2 idle GPUs, a unit takes 4/4 = 1 port of a spine, so
//    the spines carry 2 units and each leaf's 2 slots too: leaves 0-3.
//    Units: spine 0 then spine 1 (tie), one each.  GPUs: leaf 0 takes
//    server 1's GPU 7 first (1 idle), then server 0's lowest, 1; the other
//    leaves' servers tie, so their first server's two.  Each virtual leaf
//    reuses slot 0 (spine 0) and slot 1 (spine 1): nothing to rewire.
// Then a 3-GPU job: every leaf has 2 idle GPUs and no server 3, and both
// spines' ports are held: Gpus with whole servers, Network with Releax.
TEST(OcsReleax, OcsClosOnPartialServers) {
  ClusterState cl(cluster_shape(4, 2, 2, 4, 1));
  OcsState ocs(ocs_shape(4, 2, 1, 1));
  occupy(cl, {0, 4, 5, 6, 9, 10, 12, 15, 16, 17, 22, 23, 24, 26, 29, 30});

  const Decision w = place_ocs_vclos(cl, ocs, 8);
  EXPECT_FALSE(w.allocation);
  EXPECT_EQ(w.why, Refusal::Gpus);

  const Decision d = place_ocs_vclos(cl, ocs, 8, releax());
  ASSERT_TRUE(d.allocation);
  const Allocation& a = *d.allocation;
  EXPECT_EQ(a.stage, Stage::OcsClos);
  EXPECT_TRUE(a.servers.empty());
  EXPECT_EQ(a.leaves, (Ids{0, 1, 2, 3}));
  EXPECT_EQ(a.gpus, (Ids{7, 1, 8, 11, 18, 19, 25, 27}));
  EXPECT_EQ(a.circuits,
            (Circuits{{0, 0, 0}, {0, 1, 1}, {1, 0, 0}, {1, 1, 1}, {2, 0, 0}, {2, 1, 1}, {3, 0, 0}, {3, 1, 1}}));
  EXPECT_TRUE(a.switched_off.empty());
  EXPECT_TRUE(a.switched_on.empty());
  // Rank 0 (unit 0, spine 0) to rank 3 goes down rank 2's circuit.
  EXPECT_EQ(a.down_rank(0, 3), 2u);
  cl.take(a);
  ocs.take(a);

  const Decision w3 = place_ocs_vclos(cl, ocs, 3);
  EXPECT_FALSE(w3.allocation);
  EXPECT_EQ(w3.why, Refusal::Gpus);
  const Decision d3 = place_ocs_vclos(cl, ocs, 3, releax());
  EXPECT_FALSE(d3.allocation);
  EXPECT_EQ(d3.why, Refusal::Network);
}

// L = 2, S = 2, K = 1, lpp = 1, T = 4, 2 servers per leaf.  Leaf 0: GPUs
// 2, 3 (server 0) and 4, 5 (server 1) idle; leaf 1: GPU 10 (server 2) and
// 13, 15 (server 3).  No server has 3 idle GPUs:
//  - 3 GPUs: whole servers refuse (Gpus).  Releax stage 1: leaves with 3
//    idle GPUs are 0 (4) and 1 (3): leaf 1, server 2 (1 idle) first;
//  - 4 GPUs: leaf 0, its servers tie: server 0 first;
//  - 5 GPUs: 7 idle, no leaf has 5, spines have 2 ports, l = 2 does not
//    divide 5: Network;
//  - 8 GPUs: 7 idle: Gpus.
TEST(OcsReleax, SmallJobsSpillOverServersOfOneLeaf) {
  ClusterState cl(cluster_shape(2, 2, 2, 4, 1));
  OcsState ocs(ocs_shape(2, 2, 1, 1));
  occupy(cl, {0, 1, 6, 7, 8, 9, 11, 12, 14});
  EXPECT_EQ(place_ocs_vclos(cl, ocs, 3).why, Refusal::Gpus);
  EXPECT_EQ(place_ocs_vclos(cl, ocs, 4).why, Refusal::Gpus);

  const Decision d3 = place_ocs_vclos(cl, ocs, 3, releax());
  ASSERT_TRUE(d3.allocation);
  EXPECT_EQ(d3.allocation->stage, Stage::Leaf);
  EXPECT_EQ(d3.allocation->gpus, (Ids{10, 13, 15}));
  EXPECT_TRUE(d3.allocation->servers.empty());
  EXPECT_TRUE(d3.allocation->circuits.empty());

  const Decision d4 = place_ocs_vclos(cl, ocs, 4, releax());
  ASSERT_TRUE(d4.allocation);
  EXPECT_EQ(d4.allocation->stage, Stage::Leaf);
  EXPECT_EQ(d4.allocation->gpus, (Ids{2, 3, 4, 5}));
  EXPECT_TRUE(d4.allocation->servers.empty());

  const Decision d5 = place_ocs_vclos(cl, ocs, 5, releax());
  EXPECT_FALSE(d5.allocation);
  EXPECT_EQ(d5.why, Refusal::Network);
  const Decision d8 = place_ocs_vclos(cl, ocs, 8, releax());
  EXPECT_FALSE(d8.allocation);
  EXPECT_EQ(d8.why, Refusal::Gpus);

  // A job that fits one server's idle GPUs stays stage 0: servers 0, 1 and
  // 3 have 2 idle GPUs, the leaves no idle server (tie): server 0.
  const Decision d2 = place_ocs_vclos(cl, ocs, 2, releax());
  ASSERT_TRUE(d2.allocation);
  EXPECT_EQ(d2.allocation->stage, Stage::Server);
  EXPECT_EQ(d2.allocation->gpus, (Ids{2, 3}));
}

/// What OCS-Releax should decide, computed directly from ocs.hpp's rules
/// with idle GPUs recounted from gpu_busy; checks the decision against it.
/// Returns the stage decided.
std::optional<Stage> check_releax_decision(const ClusterState& cl, const OcsState& ocs, uint32_t n, const Decision& d) {
  const ClusterShape& sh = cl.shape();
  const OcsShape& o = ocs.shape();
  const uint32_t t = sh.gpus_per_server;
  Ids idle_server(sh.servers(), 0), idle(sh.leaves, 0);
  for (uint32_t g = 0; g < sh.gpus(); ++g) {
    if (cl.gpu_busy(g)) continue;
    ++idle_server[g / t];
    ++idle[g / t / sh.servers_per_leaf];
  }
  const uint32_t total = std::accumulate(idle.begin(), idle.end(), 0u);
  // A leaf's GPUs in the order a job takes them: servers by (idle GPUs,
  // index), slots ascending.
  auto in_leaf = [&](uint32_t leaf, uint32_t count) {
    std::vector<std::pair<uint32_t, uint32_t>> servers;  // (idle, server)
    for (uint32_t i = 0; i < sh.servers_per_leaf; ++i) {
      const uint32_t server = leaf * sh.servers_per_leaf + i;
      servers.emplace_back(idle_server[server], server);
    }
    std::sort(servers.begin(), servers.end());
    Ids gpus;
    for (const auto& [unused, server] : servers)
      for (uint32_t slot = 0; slot < t; ++slot)
        if (gpus.size() < count && !cl.gpu_busy(server * t + slot)) gpus.push_back(server * t + slot);
    return gpus;
  };
  Ids order(sh.leaves);  // leaves by (idle GPUs, index)
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return std::tie(idle[a], a) < std::tie(idle[b], b); });

  if (d.allocation) {
    const Allocation& a = *d.allocation;
    EXPECT_EQ(a.gpus.size(), n);
    EXPECT_TRUE(a.servers.empty());
    std::set<uint32_t> seen;
    for (uint32_t g : a.gpus) {
      EXPECT_FALSE(cl.gpu_busy(g)) << "GPU " << g;
      EXPECT_TRUE(seen.insert(g).second) << "GPU " << g << " twice";
    }
  }
  if (n <= t && *std::max_element(idle_server.begin(), idle_server.end()) >= n) {
    const std::optional<Allocation> local = place_local(cl, n);
    EXPECT_TRUE(local && d.allocation && d.allocation->stage == Stage::Server && d.allocation->gpus == local->gpus);
    return Stage::Server;
  }
  if (total < n) {
    EXPECT_FALSE(d.allocation);
    EXPECT_EQ(d.why, Refusal::Gpus) << "n " << n;
    return std::nullopt;
  }
  // Stage 1: the first leaf in best-fit order with n idle GPUs.
  for (uint32_t leaf : order) {
    if (idle[leaf] < n) continue;
    EXPECT_TRUE(d.allocation) << "n " << n << ": expected stage Leaf on leaf " << leaf;
    if (!d.allocation) return std::nullopt;
    EXPECT_EQ(d.allocation->stage, Stage::Leaf);
    EXPECT_EQ(d.allocation->gpus, in_leaf(leaf, n));
    EXPECT_TRUE(d.allocation->circuits.empty());
    return Stage::Leaf;
  }
  // OcsSpine: the first spine by (free ports, index) with n free ports
  // whose OCS's leaf ports reach n idle GPUs.
  Ids spines(o.spines);
  std::iota(spines.begin(), spines.end(), 0u);
  std::stable_sort(spines.begin(), spines.end(),
                   [&](uint32_t a, uint32_t b) { return ocs.free_spine_ports(a) < ocs.free_spine_ports(b); });
  for (uint32_t m : spines) {
    if (ocs.free_spine_ports(m) < n) continue;
    const uint32_t k = o.switch_of(m);
    uint32_t reach = 0;
    for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf) reach += std::min(idle[leaf], ocs.free_leaf_ports(leaf, k));
    if (reach < n) continue;
    EXPECT_TRUE(d.allocation) << "n " << n << ": expected OcsSpine on spine " << m;
    if (!d.allocation) return std::nullopt;
    const Allocation& a = *d.allocation;
    EXPECT_EQ(a.stage, Stage::OcsSpine);
    EXPECT_EQ(a.circuits.size(), n);
    for (const Circuit& c : a.circuits) EXPECT_EQ(c.spine, m);
    Ids want(sh.leaves, 0);
    uint32_t left = n;
    for (uint32_t leaf : order) {
      want[leaf] = std::min({idle[leaf], ocs.free_leaf_ports(leaf, k), left});
      left -= want[leaf];
    }
    Ids gpus;
    for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf) {
      const Ids some = in_leaf(leaf, want[leaf]);
      gpus.insert(gpus.end(), some.begin(), some.end());
    }
    EXPECT_EQ(a.gpus, gpus) << "n " << n;
    return Stage::OcsSpine;
  }
  // OcsClos: the first (l, s) with a feasible leaf set.
  for (uint32_t l = std::max<uint32_t>(1, std::bit_floor(n) / sh.spines); l <= sh.leaves; l *= 2) {
    if (l == 1 || n % l != 0) continue;
    const uint32_t s = n / l;
    const Ids leaves = brute_leaves(order, idle, ocs, l, s);
    if (leaves.empty()) continue;
    EXPECT_TRUE(d.allocation) << "n " << n << ": expected OcsClos with l " << l;
    if (!d.allocation) return std::nullopt;
    const Allocation& a = *d.allocation;
    EXPECT_EQ(a.stage, Stage::OcsClos);
    EXPECT_EQ(a.leaves, leaves) << "n " << n << " l " << l;
    Ids gpus;
    for (uint32_t leaf : leaves) {
      const Ids some = in_leaf(leaf, s);
      gpus.insert(gpus.end(), some.begin(), some.end());
    }
    EXPECT_EQ(a.gpus, gpus) << "n " << n << " l " << l;
    if (a.circuits.size() != n) return Stage::OcsClos;
    std::vector<uint32_t> sm(o.spines, 0);
    for (uint32_t u = 0; u < s; ++u) ++sm[a.circuits[u].spine];
    uint64_t cost = 0;
    for (uint32_t m = 0; m < o.spines; ++m) cost += uint64_t{ocs.free_spine_ports(m)} * sm[m];
    EXPECT_EQ(cost, brute_units(ocs, leaves, l, s, false).value_or(~uint64_t{0}));
    return Stage::OcsClos;
  }
  EXPECT_FALSE(d.allocation) << "n " << n << ": placed by " << to_string(d.allocation->stage);
  EXPECT_EQ(d.why, Refusal::Network);
  return std::nullopt;
}

TEST(OcsReleax, StagesMatchBruteForce) {
  std::mt19937 rng(5512);
  uint32_t leaf = 0, spine = 0, clos = 0, odd_clos = 0, network = 0, gpus = 0, gained = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const auto [cs, os] = random_shape(rng, 5, 4, 2, {1, 2, 4}, 3);
    Sim sim(cs, os);
    for (int step = 0; step < 20; ++step) {
      if (!sim.running.empty() && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        sim.release(std::uniform_int_distribution<std::size_t>(0, sim.running.size() - 1)(rng));
      } else {
        // Mostly Releax jobs, some on whole servers: both must cope with the other's leftovers.
        const OcsOptions opt = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? OcsOptions{} : releax();
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, random_size(rng, cs.gpus()), opt);
        if (d.allocation) sim.take(*d.allocation);
      }
      for (uint32_t n = 1; n <= cs.gpus(); ++n) {
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, n, releax());
        const std::optional<Stage> st = check_releax_decision(sim.cl, sim.ocs, n, d);
        leaf += st == Stage::Leaf;
        spine += st == Stage::OcsSpine;
        clos += st == Stage::OcsClos;
        odd_clos += st == Stage::OcsClos && (n / d.allocation->leaves.size()) % cs.gpus_per_server != 0;
        network += !d.allocation && d.why == Refusal::Network;
        gpus += !d.allocation && d.why == Refusal::Gpus;
        // Whatever whole servers place, any idle GPUs place too.
        const Decision w = place_ocs_vclos(sim.cl, sim.ocs, n);
        EXPECT_TRUE(!w.allocation || d.allocation) << "n " << n;
        gained += !w.allocation && d.allocation;
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  // The cases the comparison covers.
  EXPECT_GT(leaf, 1000u);
  EXPECT_GT(spine, 1000u);
  EXPECT_GT(clos, 1000u);
  EXPECT_GT(odd_clos, 500u);
  EXPECT_GT(network, 1000u);
  EXPECT_GT(gpus, 1000u);
  EXPECT_GT(gained, 1000u);
}

/// Checks a Releax allocation's GPUs against the state it was decided on
/// (before take), by the simulation's own record: exactly n, each once,
/// none held by a running job, no server reserved; stage 0 on one server,
/// stage 1 on one leaf.
void check_releax_gpus(const Sim& sim, const Allocation& a, uint32_t n) {
  const ClusterShape& sh = sim.cl.shape();
  EXPECT_EQ(a.gpus.size(), n);
  EXPECT_TRUE(a.servers.empty());
  std::set<uint32_t> seen;
  for (uint32_t g : a.gpus) {
    ASSERT_LT(g, sh.gpus());
    EXPECT_EQ(sim.gpu_jobs[g], 0u) << "GPU " << g << " is another job's";
    EXPECT_TRUE(seen.insert(g).second) << "GPU " << g << " twice";
  }
  for (uint32_t g : a.gpus) {
    if (a.stage == Stage::Server) {
      EXPECT_EQ(g / sh.gpus_per_server, a.gpus[0] / sh.gpus_per_server);
    } else if (a.stage == Stage::Leaf) {
      EXPECT_EQ(leaf_of_gpu(sh, g), leaf_of_gpu(sh, a.gpus[0]));
    }
  }
}

/// Every GPU busy exactly when one running job holds it.
void check_gpu_record(const Sim& sim) {
  for (uint32_t g = 0; g < sim.cl.shape().gpus(); ++g) {
    EXPECT_LE(sim.gpu_jobs[g], 1u) << "GPU " << g << " held twice";
    EXPECT_EQ(sim.cl.gpu_busy(g), sim.gpu_jobs[g] == 1) << "GPU " << g;
  }
}

TEST(OcsReleax, InvariantsOverRandomAdmissions) {
  std::mt19937 rng(11);
  uint32_t admitted = 0, released = 0, rewired = 0, clos = 0, spine = 0, leaf = 0, parallel = 0, shared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto [cs, os] = random_shape(rng, 10, 8, 3, {1, 2, 4}, 4);
    Sim sim(cs, os);
    for (int step = 0; step < 60; ++step) {
      if (!sim.running.empty() && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        const std::size_t i = std::uniform_int_distribution<std::size_t>(0, sim.running.size() - 1)(rng);
        const Circuits circuits = sim.running[i].circuits;
        sim.release(i);
        ++released;
        for (const Circuit& c : circuits) EXPECT_EQ(sim.ocs.connected(c.leaf, os.switch_of(c.spine), c.slot), c.spine);
      } else {
        const uint32_t n = random_size(rng, cs.gpus());
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, n, releax());
        const Decision again = place_ocs_vclos(sim.cl, sim.ocs, n, releax());  // deterministic
        EXPECT_EQ(d.why, again.why);
        EXPECT_EQ((d.allocation ? d.allocation->gpus : Ids{}), (again.allocation ? again.allocation->gpus : Ids{}));
        EXPECT_EQ((d.allocation ? d.allocation->circuits : Circuits{}),
                  (again.allocation ? again.allocation->circuits : Circuits{}));
        if (!d.allocation) continue;
        const Allocation& a = *d.allocation;
        check_releax_gpus(sim, a, n);
        check_allocation(sim, a, n);
        if (::testing::Test::HasFailure()) return;  // before take() aborts on a GPU held twice
        rewired += !a.switched_on.empty();
        clos += a.stage == Stage::OcsClos;
        spine += a.stage == Stage::OcsSpine;
        leaf += a.stage == Stage::Leaf;
        parallel += a.stage == Stage::OcsClos && a.circuits.size() > 1 && a.circuits[1].spine == a.circuits[0].spine &&
                    a.circuits[1].leaf == a.circuits[0].leaf;
        // A server the job shares: some of its GPUs busy or left idle.
        std::set<uint32_t> servers;
        for (uint32_t g : a.gpus) servers.insert(g / cs.gpus_per_server);
        shared += servers.size() * cs.gpus_per_server != n;
        sim.take(a);
        ++admitted;
        for (const Circuit& c : a.circuits) EXPECT_TRUE(sim.ocs.held(c.leaf, os.switch_of(c.spine), c.slot));
      }
      check_state(sim);
      check_gpu_record(sim);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GE(admitted + released, 1000u);
  EXPECT_GT(rewired, 150u);
  EXPECT_GT(clos, 100u);
  EXPECT_GT(spine, 500u);
  EXPECT_GT(leaf, 400u);
  EXPECT_GT(parallel, 50u);
  EXPECT_GT(shared, 800u);
}

// CLUSTER2048's leaf-spine under 1, 4 and 32 OCSs with Releax: the same
// checks at scale (more leaves qualify for OCS-FINDCLOS than with whole
// servers), job sizes not only powers of two.
TEST(OcsReleax, InvariantsOnCluster2048) {
  std::mt19937 rng(4096);
  const auto [clos, spine] = walk_cluster2048(
      rng, releax(),
      [](std::mt19937& r) {
        const uint32_t e = std::uniform_int_distribution<uint32_t>(0, 9)(r);
        return std::uniform_int_distribution<int>(0, 1)(r) == 0 ? 1u << e : 3u << e / 2;
      },
      check_releax_gpus, true);
  EXPECT_GT(clos, 20u);
  EXPECT_GT(spine, 20u);
}

template <class Size, class Extra>
std::pair<uint32_t, uint32_t> walk_cluster2048(std::mt19937& rng, const OcsOptions& options, Size size, Extra extra,
                                               bool gpu_record) {
  uint32_t clos = 0, spine = 0;
  for (uint32_t k : {1u, 4u, 32u}) {
    Sim sim(cluster_shape(64, 32, 8, 4, 1), ocs_shape(64, 32, k, 1));
    for (int step = 0; step < 300; ++step) {
      if (!sim.running.empty() && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        sim.release(std::uniform_int_distribution<std::size_t>(0, sim.running.size() - 1)(rng));
      } else {
        const uint32_t n = size(rng);
        const Decision d = place_ocs_vclos(sim.cl, sim.ocs, n, options);
        if (!d.allocation) continue;
        extra(sim, *d.allocation, n);
        check_allocation(sim, *d.allocation, n);
        if (::testing::Test::HasFailure()) return {clos, spine};  // before take() aborts
        clos += d.allocation->stage == Stage::OcsClos;
        spine += d.allocation->stage == Stage::OcsSpine;
        sim.take(*d.allocation);
      }
      check_state(sim);
      if (gpu_record) check_gpu_record(sim);
      if (::testing::Test::HasFailure()) return {clos, spine};
    }
  }
  return {clos, spine};
}

}  // namespace
}  // namespace fabricsim::ctrl
