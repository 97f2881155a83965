// vClos's resource schedulers (ctrl/vclos.hpp) against independent
// computations: small cases worked by hand from the spec (vclos.md 5.2,
// 5.3), vClos-ILP(l, s) against exhaustive enumeration, the state's
// counters against a recount from the allocations kept here, and the
// search against CBC on a fragmented CLUSTER2048.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/ctrl/vclos.hpp"

namespace fabricsim::ctrl {
namespace {

using std::uint32_t;
using std::uint64_t;
using Ids = std::vector<uint32_t>;

ClusterShape shape(uint32_t leaves, uint32_t spines, uint32_t servers_per_leaf, uint32_t t,
                   std::vector<uint32_t> links = {}) {
  ClusterShape s;
  s.leaves = leaves;
  s.spines = spines;
  s.servers_per_leaf = servers_per_leaf;
  s.gpus_per_server = t;
  s.links = std::move(links);
  return s;
}

Allocation server_job(Ids gpus) {
  Allocation a;
  a.stage = Stage::Server;
  a.gpus = std::move(gpus);
  return a;
}

Ids all_gpus_of(const ClusterShape& sh, const Ids& servers) {
  Ids gpus;
  for (uint32_t server : servers)
    for (uint32_t slot = 0; slot < sh.gpus_per_server; ++slot) gpus.push_back(server * sh.gpus_per_server + slot);
  return gpus;
}

Allocation vclos_job(const ClusterShape& sh, Ids leaves, Ids spines, Ids servers) {
  Allocation a;
  a.stage = Stage::VirtualClos;
  a.leaves = std::move(leaves);
  a.spines = std::move(spines);
  a.gpus = all_gpus_of(sh, servers);
  a.servers = std::move(servers);
  return a;
}

// ---------------------------------------------------------------------------
// Quantities recounted from gpu_busy() and free_links() only.

uint32_t leaf_of_gpu(const ClusterShape& sh, uint32_t gpu) { return gpu / sh.gpus_per_server / sh.servers_per_leaf; }

bool server_idle(const ClusterState& st, uint32_t server) {
  for (uint32_t slot = 0; slot < st.shape().gpus_per_server; ++slot)
    if (st.gpu_busy(server * st.shape().gpus_per_server + slot)) return false;
  return true;
}

Ids idle_servers_in(const ClusterState& st, uint32_t leaf) {
  Ids out;
  for (uint32_t i = 0; i < st.shape().servers_per_leaf; ++i)
    if (server_idle(st, leaf * st.shape().servers_per_leaf + i)) out.push_back(leaf * st.shape().servers_per_leaf + i);
  return out;
}

uint64_t ports_of(const ClusterState& st, uint32_t spine) {
  uint64_t p = 0;
  for (uint32_t n = 0; n < st.shape().leaves; ++n) p += st.free_links(n, spine);
  return p;
}

/// The spec's objective: sum RPN(S_m) + sum RSN(L_n) * T.
uint64_t objective(const ClusterState& st, const Ids& leaves, const Ids& spines) {
  uint64_t c = 0;
  for (uint32_t n : leaves) c += uint64_t{idle_servers_in(st, n).size()} * st.shape().gpus_per_server;
  for (uint32_t m : spines) c += ports_of(st, m);
  return c;
}

struct BruteForce {
  bool feasible = false;
  uint64_t cost = 0;
  Ids leaves, spines;
};

/// vClos-ILP(l, s) by enumerating every leaf subset and every spine subset;
/// the minimum by (cost, sorted leaves, sorted spines).
BruteForce brute_force(const ClusterState& st, uint32_t l, uint32_t s) {
  const ClusterShape& sh = st.shape();
  BruteForce best;
  for (uint32_t lm = 0; lm < (1u << sh.leaves); ++lm) {
    if (static_cast<uint32_t>(std::popcount(lm)) != l) continue;
    Ids leaves;
    bool ok = true;
    for (uint32_t n = 0; n < sh.leaves; ++n) {
      if (((lm >> n) & 1u) == 0) continue;
      leaves.push_back(n);
      ok = ok && idle_servers_in(st, n).size() * sh.gpus_per_server >= s;
    }
    if (!ok) continue;
    for (uint32_t sm = 0; sm < (1u << sh.spines); ++sm) {
      if (static_cast<uint32_t>(std::popcount(sm)) != s) continue;
      Ids spines;
      for (uint32_t m = 0; m < sh.spines; ++m)
        if (((sm >> m) & 1u) != 0) spines.push_back(m);
      bool linked = true;
      for (uint32_t n : leaves)
        for (uint32_t m : spines) linked = linked && st.free_links(n, m) >= 1;
      if (!linked) continue;
      const uint64_t c = objective(st, leaves, spines);
      if (!best.feasible || c < best.cost ||
          (c == best.cost && std::tie(leaves, spines) < std::tie(best.leaves, best.spines))) {
        best = {true, c, leaves, spines};
      }
    }
  }
  return best;
}

/// Everything the state reports, for before/after comparisons.
struct Snapshot {
  std::vector<bool> busy;
  Ids idle_gpus, idle_servers, free_links, free_ports;
  uint32_t total_idle_servers = 0;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const ClusterState& st) {
  const ClusterShape& sh = st.shape();
  Snapshot s;
  for (uint32_t g = 0; g < sh.gpus(); ++g) s.busy.push_back(st.gpu_busy(g));
  for (uint32_t v = 0; v < sh.servers(); ++v) s.idle_gpus.push_back(st.idle_gpus(v));
  for (uint32_t n = 0; n < sh.leaves; ++n) s.idle_servers.push_back(st.idle_servers(n));
  for (uint32_t n = 0; n < sh.leaves; ++n)
    for (uint32_t m = 0; m < sh.spines; ++m) s.free_links.push_back(st.free_links(n, m));
  for (uint32_t m = 0; m < sh.spines; ++m) s.free_ports.push_back(st.free_ports(m));
  s.total_idle_servers = st.idle_servers();
  return s;
}

/// The counters a state should have with `running` taken, recounted here
/// from the allocations; also checks that no GPU is held twice and no pair
/// has more links reserved than it has.
Snapshot recount(const ClusterShape& sh, const std::vector<Allocation>& running) {
  std::vector<uint32_t> holders(sh.gpus(), 0);
  std::vector<uint32_t> used(std::size_t{sh.leaves} * sh.spines, 0);
  for (const Allocation& a : running) {
    std::vector<bool> mine(sh.gpus(), false);
    for (uint32_t g : a.gpus) mine[g] = true;
    for (uint32_t g : all_gpus_of(sh, a.servers)) mine[g] = true;
    for (uint32_t g = 0; g < sh.gpus(); ++g) holders[g] += mine[g] ? 1 : 0;
    if (a.stage == Stage::VirtualClos)
      for (uint32_t n : a.leaves)
        for (uint32_t m : a.spines) ++used[n * sh.spines + m];
  }
  Snapshot s;
  for (uint32_t g = 0; g < sh.gpus(); ++g) {
    EXPECT_LE(holders[g], 1u) << "GPU " << g << " in two jobs";
    s.busy.push_back(holders[g] > 0);
  }
  for (uint32_t v = 0; v < sh.servers(); ++v) {
    uint32_t idle = 0;
    for (uint32_t slot = 0; slot < sh.gpus_per_server; ++slot) idle += holders[v * sh.gpus_per_server + slot] == 0;
    s.idle_gpus.push_back(idle);
  }
  for (uint32_t n = 0; n < sh.leaves; ++n) {
    uint32_t idle = 0;
    for (uint32_t i = 0; i < sh.servers_per_leaf; ++i)
      idle += s.idle_gpus[n * sh.servers_per_leaf + i] == sh.gpus_per_server;
    s.idle_servers.push_back(idle);
    s.total_idle_servers += idle;
  }
  s.free_ports.assign(sh.spines, 0);
  for (uint32_t n = 0; n < sh.leaves; ++n) {
    for (uint32_t m = 0; m < sh.spines; ++m) {
      const uint32_t c = sh.links.empty() ? 1 : sh.links[n * sh.spines + m];
      EXPECT_LE(used[n * sh.spines + m], c) << "pair (" << n << ", " << m << ") over its links";
      const uint32_t free = used[n * sh.spines + m] <= c ? c - used[n * sh.spines + m] : 0;
      s.free_links.push_back(free);
      s.free_ports[m] += free;
    }
  }
  return s;
}

/// The allocation vclos_ilp must return for (leaves, spines): s/T lowest
/// idle servers per leaf, all their GPUs in order.
void expect_vclos_allocation(const ClusterState& st, const Allocation& a, const Ids& leaves, const Ids& spines,
                             uint32_t s) {
  EXPECT_EQ(a.stage, Stage::VirtualClos);
  EXPECT_EQ(a.leaves, leaves);
  EXPECT_EQ(a.spines, spines);
  Ids servers;
  for (uint32_t n : leaves) {
    const Ids idle = idle_servers_in(st, n);
    ASSERT_GE(idle.size(), s / st.shape().gpus_per_server);
    servers.insert(servers.end(), idle.begin(), idle.begin() + s / st.shape().gpus_per_server);
  }
  EXPECT_EQ(a.servers, servers);
  EXPECT_EQ(a.gpus, all_gpus_of(st.shape(), servers));
}

// ---------------------------------------------------------------------------

TEST(VClos, ShapeCheckAndNames) {
  EXPECT_EQ(shape(4, 4, 2, 2).check(), "");
  EXPECT_EQ(shape(2, 2, 1, 1, {1, 0, 2, 1}).check(), "");
  EXPECT_NE(shape(0, 4, 2, 2).check(), "");
  EXPECT_NE(shape(4, 0, 2, 2).check(), "");
  EXPECT_NE(shape(4, 4, 0, 2).check(), "");
  EXPECT_NE(shape(4, 4, 2, 0).check(), "");
  EXPECT_NE(shape(2, 2, 1, 1, {1, 1, 1}).check(), "");
  EXPECT_THROW(ClusterState(shape(2, 2, 1, 1, {1, 1, 1})), std::invalid_argument);
  EXPECT_STREQ(to_string(Stage::Server), "server");
  EXPECT_STREQ(to_string(Stage::Leaf), "leaf");
  EXPECT_STREQ(to_string(Stage::VirtualClos), "vclos");
  EXPECT_STREQ(to_string(Stage::Servers), "servers");
  EXPECT_STREQ(to_string(Refusal::None), "none");
  EXPECT_STREQ(to_string(Refusal::Gpus), "gpus");
  EXPECT_STREQ(to_string(Refusal::Network), "network");
  // A fresh state: everything idle, C_{n,m} free.
  const ClusterState st(shape(2, 3, 2, 2, {1, 2, 0, 3, 1, 1}));
  EXPECT_EQ(st.idle_servers(), 4u);
  EXPECT_EQ(st.free_ports(0), 4u);
  EXPECT_EQ(st.free_ports(1), 3u);
  EXPECT_EQ(st.free_ports(2), 1u);
  EXPECT_EQ(st.free_links(1, 0), 3u);
  EXPECT_EQ(st.idle_gpus(3), 2u);
}

// Stage 0: the leaf with the fewest idle servers, then the fullest server
// that still has N idle GPUs.
TEST(VClos, StageZeroBestFitByHand) {
  // 4 leaves x 2 servers x T = 2: leaf n holds servers 2n, 2n+1, GPUs 4n..4n+3.
  ClusterState st(shape(4, 4, 2, 2));
  st.take(server_job({0}));  // leaf 0: 1 idle server; server 0 has 1 idle GPU
  Decision d = place_vclos(st, 1);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.why, Refusal::None);
  EXPECT_EQ(d.allocation->stage, Stage::Server);
  EXPECT_EQ(d.allocation->gpus, Ids({1}));  // fills server 0 rather than opening server 1
  EXPECT_TRUE(d.allocation->servers.empty());
  // N = 2: server 0 has too few; server 1 is the only one in leaf 0 (1 idle server).
  d = place_whole_server(st, 2);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->gpus, Ids({2, 3}));

  // Leaves 0, 1, 2 at 1 idle server each (and a half-free server), leaf 3
  // at 2: N = 1 goes to the lowest of them, leaf 0, and its fullest server.
  st.take(server_job({5}));
  st.take(server_job({9}));
  d = place_vclos(st, 1);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->gpus, Ids({1}));
  st.take(*d.allocation);  // leaf 0: servers 0 (full), 1 (idle)
  // Still leaves 0, 1, 2 at 1 idle server: the leaf comes first, so N = 1
  // goes to leaf 0's server 1 (server 0 is full) although leaf 1 has a
  // fuller server (2, GPU 4).
  d = place_vclos(st, 1);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->gpus, Ids({2}));
  // N = 2 needs a server with 2 idle GPUs: leaf 0's server 1 (leaf 0 ties
  // leaves 1, 2 at 1 idle server and is lowest).
  d = place_vclos(st, 2);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->gpus, Ids({2, 3}));
}

// Stage 1: ceil(N/T) whole servers under the leaf with the fewest idle
// servers that has enough; a job of N not a multiple of T still holds them whole.
TEST(VClos, StageOneBestFitByHand) {
  // 3 leaves x 4 servers x T = 2: leaf n holds servers 4n..4n+3.
  const ClusterShape sh = shape(3, 3, 4, 2);
  ClusterState st(sh);
  st.take(server_job({2}));   // leaf 0: server 1 busy, idle {0, 2, 3}
  st.take(server_job({16}));  // leaf 2: server 8 busy
  st.take(server_job({21}));  // leaf 2: server 10 busy, idle {9, 11}
  // N = 4 (2 servers): leaves 0 (3), 1 (4), 2 (2) qualify; leaf 2 fits best.
  Decision d = place_vclos(st, 4);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->stage, Stage::Leaf);
  EXPECT_EQ(d.allocation->servers, Ids({9, 11}));
  EXPECT_EQ(d.allocation->gpus, Ids({18, 19, 22, 23}));
  // N = 5 (3 servers): leaves 0 (3) and 1 (4) qualify; leaf 0.
  d = place_whole_server(st, 5);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->stage, Stage::Leaf);
  EXPECT_EQ(d.allocation->servers, Ids({0, 2, 3}));
  EXPECT_EQ(d.allocation->gpus, Ids({0, 1, 4, 5, 6}));
  st.take(*d.allocation);
  EXPECT_TRUE(st.gpu_busy(7));  // whole server 3, beyond the job's 5 GPUs
  EXPECT_EQ(st.idle_servers(0), 0u);
  EXPECT_EQ(st.idle_gpus(3), 0u);
}

// whole_server's spread: most idle servers first, no links; and its refusals.
TEST(VClos, WholeServerSpreadByHand) {
  const ClusterShape sh = shape(3, 3, 4, 2);
  ClusterState st(sh);
  st.take(server_job({2}));   // leaf 0: idle {0, 2, 3}
  st.take(server_job({16}));  // leaf 2: idle {9, 10, 11}
  st.take(server_job({18}));  // leaf 2: idle {10, 11}
  // N = 14: 7 servers; no leaf has 7; 3 + 4 + 2 = 9 idle: leaf 1 (4), then leaf 0 (3).
  Decision d = place_whole_server(st, 14);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->stage, Stage::Servers);
  EXPECT_EQ(d.allocation->servers, Ids({4, 5, 6, 7, 0, 2, 3}));
  EXPECT_EQ(d.allocation->gpus, Ids({8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 4, 5, 6, 7}));
  const Snapshot before = snapshot(st);
  st.take(*d.allocation);
  for (uint32_t m = 0; m < 3; ++m) EXPECT_EQ(st.free_ports(m), before.free_ports[m]);  // no links
  // 2 idle servers left: N = 6 needs 3.
  d = place_whole_server(st, 6);
  EXPECT_FALSE(d.allocation);
  EXPECT_EQ(d.why, Refusal::Gpus);
  // N <= T with no server of N idle GPUs: never split.
  ClusterState halves(shape(2, 2, 1, 2));
  halves.take(server_job({0}));
  halves.take(server_job({2}));
  d = place_whole_server(halves, 2);
  EXPECT_FALSE(d.allocation);
  EXPECT_EQ(d.why, Refusal::Gpus);
  d = place_vclos(halves, 2);
  EXPECT_EQ(d.why, Refusal::Gpus);
  d = place_vclos(halves, 1);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->gpus, Ids({1}));
}

// Stage 2 on an empty 4 x 4 cluster of 2-server leaves: 8 GPUs need 4
// servers, no leaf has them: l = 8 / S = 2 virtual leaves x s = 4 spines.
TEST(VClos, VirtualClosOnEmptyClusterByHand) {
  const ClusterShape sh = shape(4, 4, 2, 2);
  ClusterState st(sh);
  Decision d = place_vclos(st, 8);
  ASSERT_TRUE(d.allocation);
  const Allocation first = *d.allocation;
  EXPECT_EQ(first.stage, Stage::VirtualClos);
  EXPECT_EQ(first.leaves, Ids({0, 1}));
  EXPECT_EQ(first.spines, Ids({0, 1, 2, 3}));
  EXPECT_EQ(first.servers, Ids({0, 1, 2, 3}));
  EXPECT_EQ(first.gpus, Ids({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(first.spine_of_rank(5), 1u);
  EXPECT_EQ(first.spine_of_rank(3), 3u);
  st.take(first);
  for (uint32_t m = 0; m < 4; ++m) EXPECT_EQ(st.free_ports(m), 2u);
  EXPECT_EQ(st.free_links(0, 2), 0u);
  EXPECT_EQ(st.free_links(2, 2), 1u);
  d = place_vclos(st, 8);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->leaves, Ids({2, 3}));
  st.take(*d.allocation);
  d = place_vclos(st, 4);
  EXPECT_EQ(d.why, Refusal::Gpus);
  // N = 6 (not a power of two; the app rounds up): 3 servers, no leaf has
  // them, and no l | 6 with T | 6/l and l > 1 exists: Network, not Gpus.
  d = place_vclos(ClusterState(sh), 6);
  EXPECT_EQ(d.why, Refusal::Network);
  // The whole_server baseline on the empty cluster: leaves 0 and 1 (2 each, lowest first).
  d = place_whole_server(ClusterState(sh), 8);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->stage, Stage::Servers);
  EXPECT_EQ(d.allocation->servers, Ids({0, 1, 2, 3}));
}

// Best fit on spines: an earlier job left spines 2 and 3 with 2 free ports,
// 0 and 1 with 4; a 4-GPU job over two 1-server leaves takes 2 and 3.
TEST(VClos, VirtualClosPrefersSpinesWithFewestFreePortsByHand) {
  const ClusterShape sh = shape(4, 4, 2, 2);
  ClusterState st(sh);
  for (uint32_t gpu : {0u, 4u, 8u, 12u}) st.take(server_job({gpu}));  // one server per leaf busy
  st.take(vclos_job(sh, {2, 3}, {2, 3}, {5, 7}));                     // leaves 2, 3 now full
  EXPECT_EQ(st.free_ports(0), 4u);
  EXPECT_EQ(st.free_ports(2), 2u);
  // N = 4: two servers, no leaf has two idle; l = max(1, 4/4) = 1 is
  // skipped, l = 2, s = 2: leaves 0 and 1 (1 idle server each), spines of
  // cost 2 + 2 rather than 4 + 4.  Objective 2*2 + 2*2 = 8.
  const Decision d = place_vclos(st, 4);
  ASSERT_TRUE(d.allocation);
  expect_vclos_allocation(st, *d.allocation, {0, 1}, {2, 3}, 2);
  EXPECT_EQ(d.allocation->servers, Ids({1, 3}));
  EXPECT_EQ(d.allocation->gpus, Ids({2, 3, 6, 7}));
  EXPECT_EQ(objective(st, d.allocation->leaves, d.allocation->spines), 8u);
  const std::optional<Allocation> ilp = vclos_ilp(st, 2, 2, {VClosSolver::Ilp, 1000});
  ASSERT_TRUE(ilp);
  EXPECT_EQ(objective(st, ilp->leaves, ilp->spines), 8u);
}

// Best fit on leaves and a missing link: 4 leaves x 4 servers, idle 3, 2,
// 3, 2; leaf 3 has no link to spine 0.  N = 8: no leaf has 4 servers;
// l = 2, s = 4 needs every spine: leaf 1 (cost 4) and, leaf 3 excluded,
// leaf 0 (cost 6, lower than leaf 2).
TEST(VClos, VirtualClosPrefersFullestLeavesByHand) {
  std::vector<uint32_t> links(16, 1);
  links[3 * 4 + 0] = 0;
  const ClusterShape sh = shape(4, 4, 4, 2, links);
  ClusterState st(sh);
  // Leaf n holds servers 4n..4n+3, GPUs 8n..8n+7.
  st.take(server_job({0}));       // leaf 0: idle {1, 2, 3}
  st.take(server_job({8, 10}));   // leaf 1: idle {6, 7}
  st.take(server_job({22}));      // leaf 2: idle {8, 9, 10}
  st.take(server_job({24, 27}));  // leaf 3: idle {14, 15}
  const Decision d = place_vclos(st, 8);
  ASSERT_TRUE(d.allocation);
  expect_vclos_allocation(st, *d.allocation, {0, 1}, {0, 1, 2, 3}, 4);
  EXPECT_EQ(d.allocation->servers, Ids({1, 2, 6, 7}));
  // 6 + 4 + free ports 3 + 4 + 4 + 4.
  EXPECT_EQ(objective(st, d.allocation->leaves, d.allocation->spines), 25u);
  // With s = 2 instead (vclos_ilp alone): leaves 1, 3
  // (cost 4 each), spines 1, 2 (4 ports each: spine 0 has 3 but no link to leaf 3).
  const std::optional<Allocation> small = vclos_ilp(st, 2, 2);
  ASSERT_TRUE(small);
  expect_vclos_allocation(st, *small, {1, 3}, {1, 2}, 2);
}

// Network fragmentation: two earlier vClos jobs hold the links so that the
// two leaves with an idle server share no free spine; enough servers, no vClos.
TEST(VClos, NetworkFragmentationByHand) {
  const ClusterShape sh = shape(4, 4, 2, 2);
  ClusterState st(sh);
  st.take(vclos_job(sh, {0, 2}, {0, 1}, {0, 4}));  // leaves 0, 2 keep spines 2, 3
  st.take(vclos_job(sh, {1, 3}, {2, 3}, {2, 6}));  // leaves 1, 3 keep spines 0, 1
  st.take(server_job({10}));                       // leaf 2's other server
  st.take(server_job({14}));                       // leaf 3's other server
  ASSERT_EQ(st.idle_servers(), 2u);                // servers 1 (leaf 0) and 3 (leaf 1)
  Decision d = place_vclos(st, 4);
  EXPECT_FALSE(d.allocation);
  EXPECT_EQ(d.why, Refusal::Network);
  EXPECT_FALSE(vclos_ilp(st, 2, 2, {VClosSolver::Ilp, 1000}));
  // Without isolation the servers are there.
  d = place_whole_server(st, 4);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->stage, Stage::Servers);
  EXPECT_EQ(d.allocation->servers, Ids({1, 3}));
  EXPECT_EQ(d.allocation->gpus, Ids({2, 3, 6, 7}));
  // Too few servers: Gpus, not Network.
  d = place_vclos(st, 6);
  EXPECT_EQ(d.why, Refusal::Gpus);
  // Releasing the first job frees its links: leaves 0 and 1 share spines 0, 1 again.
  st.release(vclos_job(sh, {0, 2}, {0, 1}, {0, 4}));
  d = place_vclos(st, 8);              // 4 idle servers: 0, 1 (leaf 0), 3 (leaf 1), 4 (leaf 2)
  EXPECT_EQ(d.why, Refusal::Network);  // l = 2, s = 4: leaf 0 and another 2-server leaf: none
  d = place_vclos(st, 4);
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->stage, Stage::Leaf);  // leaf 0 is whole again
}

TEST(VClos, TakeReleaseRoundTrip) {
  // 3 leaves x 3 servers x T = 2: leaf n holds servers 3n..3n+2, GPUs 6n..6n+5.
  const ClusterShape sh = shape(3, 4, 3, 2, {2, 1, 1, 0, 1, 1, 2, 1, 1, 3, 1, 1});
  ClusterState st(sh);
  const Snapshot fresh = snapshot(st);
  const Allocation small = server_job({1});
  const Allocation whole = [&] {
    Allocation a;
    a.stage = Stage::Leaf;
    a.servers = {4, 5};
    a.gpus = {8, 9, 10};  // N = 3 holds both servers
    return a;
  }();
  const Allocation x = vclos_job(sh, {0, 2}, {0, 1, 2}, {1, 6});
  const Allocation y = vclos_job(sh, {1, 2}, {1, 3}, {3, 7});
  st.take(small);
  EXPECT_EQ(st.idle_gpus(0), 1u);
  EXPECT_EQ(st.idle_servers(0), 2u);
  st.take(whole);
  EXPECT_TRUE(st.gpu_busy(11));
  EXPECT_EQ(st.idle_servers(1), 1u);
  const Snapshot before_x = snapshot(st);
  st.take(x);
  const Snapshot with_x = snapshot(st);
  EXPECT_EQ(st.free_links(0, 0), 1u);
  EXPECT_EQ(st.free_links(0, 3), 0u);  // untouched (never had one)
  EXPECT_EQ(st.free_links(2, 2), 0u);
  EXPECT_EQ(st.free_ports(0), 2u);
  EXPECT_EQ(st.free_ports(1), 3u);
  EXPECT_EQ(st.free_ports(3), 2u);
  st.take(y);
  EXPECT_EQ(st.free_links(0, 0), 1u);
  EXPECT_EQ(st.free_links(2, 1), 1u);
  EXPECT_EQ(st.free_links(1, 3), 0u);
  EXPECT_EQ(st.free_ports(1), 1u);
  EXPECT_EQ(st.idle_servers(), 2u);  // servers 2 and 8
  EXPECT_EQ(recount(sh, {small, whole, x, y}), snapshot(st));
  st.release(y);
  EXPECT_EQ(snapshot(st), with_x);
  st.release(x);  // frees exactly its 6 links (and its servers)
  EXPECT_EQ(snapshot(st), before_x);
  st.release(small);
  st.release(whole);
  EXPECT_EQ(snapshot(st), fresh);
}

/// Random earlier jobs taken straight through take(): partial servers and
/// virtual Clos jobs on random leaves and spines with free links.
std::vector<Allocation> fragment(ClusterState& st, std::mt19937_64& rng, uint32_t jobs) {
  const ClusterShape& sh = st.shape();
  std::vector<Allocation> taken;
  for (uint32_t j = 0; j < jobs; ++j) {
    if (rng() % 2 == 0) {
      const auto server = static_cast<uint32_t>(rng() % sh.servers());
      Ids gpus;
      for (uint32_t slot = 0; slot < sh.gpus_per_server; ++slot) {
        const uint32_t g = server * sh.gpus_per_server + slot;
        if (!st.gpu_busy(g) && rng() % 2 == 0) gpus.push_back(g);
      }
      if (gpus.empty()) continue;
      taken.push_back(server_job(gpus));
    } else {
      Ids leaves, spines, servers;
      for (uint32_t n = 0; n < sh.leaves; ++n)
        if (rng() % 2 == 0 && !idle_servers_in(st, n).empty()) leaves.push_back(n);
      for (uint32_t m = 0; m < sh.spines; ++m) {
        bool linked = rng() % 2 == 0;
        for (uint32_t n : leaves) linked = linked && st.free_links(n, m) >= 1;
        if (linked) spines.push_back(m);
      }
      if (leaves.empty() || spines.empty()) continue;
      for (uint32_t n : leaves) servers.push_back(idle_servers_in(st, n).back());
      taken.push_back(vclos_job(sh, leaves, spines, servers));
    }
    st.take(taken.back());
  }
  return taken;
}

TEST(VClos, IlpMatchesBruteForceOnSmallStates) {
  std::mt19937_64 rng(20230805);
  uint32_t feasible = 0, infeasible = 0;
  for (int instance = 0; instance < 300; ++instance) {
    const auto leaves = static_cast<uint32_t>(2 + rng() % 4);
    const auto spines = static_cast<uint32_t>(2 + rng() % 4);
    const auto per_leaf = static_cast<uint32_t>(1 + rng() % 3);
    const auto t = static_cast<uint32_t>(1 + rng() % 2);
    std::vector<uint32_t> links(std::size_t{leaves} * spines);
    for (uint32_t& c : links) c = static_cast<uint32_t>(rng() % 3);
    ClusterState st(shape(leaves, spines, per_leaf, t, links));
    fragment(st, rng, static_cast<uint32_t>(rng() % 6));
    for (uint32_t l = 1; l <= leaves; ++l) {
      for (uint32_t s = t; s <= spines; s += t) {
        SCOPED_TRACE("instance " + std::to_string(instance) + " l " + std::to_string(l) + " s " + std::to_string(s));
        const BruteForce want = brute_force(st, l, s);
        const std::optional<Allocation> got = vclos_ilp(st, l, s);
        ASSERT_EQ(got.has_value(), want.feasible);
        (want.feasible ? feasible : infeasible) += 1;
        if (got) expect_vclos_allocation(st, *got, want.leaves, want.spines, s);
        // CBC on every third (l, s), to keep the run short.
        if ((l + s + static_cast<uint32_t>(instance)) % 3 != 0) continue;
        const std::optional<Allocation> ilp = vclos_ilp(st, l, s, {VClosSolver::Ilp, 100000});
        ASSERT_EQ(ilp.has_value(), want.feasible);
        if (!ilp) continue;
        EXPECT_EQ(objective(st, ilp->leaves, ilp->spines), want.cost);
        ASSERT_EQ(ilp->leaves.size(), l);
        ASSERT_EQ(ilp->spines.size(), s);
        EXPECT_TRUE(std::is_sorted(ilp->leaves.begin(), ilp->leaves.end()));
        EXPECT_TRUE(std::is_sorted(ilp->spines.begin(), ilp->spines.end()));
        for (uint32_t n : ilp->leaves) {
          EXPECT_GE(idle_servers_in(st, n).size() * t, s);
          for (uint32_t m : ilp->spines) EXPECT_GE(st.free_links(n, m), 1u);
        }
      }
    }
  }
  // The instances exercise both outcomes.
  EXPECT_GT(feasible, 200u);
  EXPECT_GT(infeasible, 200u);
}

/// vClos-ILP(l, s) by enumerating the leaf subsets only: for a leaf set the
/// best spines are the s cheapest linked to all its leaves, lower index
/// first on equal cost (the smallest list among its optimal ones).  For
/// clusters too large for brute_force.
BruteForce by_leaf_subsets(const ClusterState& st, uint32_t l, uint32_t s) {
  const ClusterShape& sh = st.shape();
  std::vector<uint32_t> spine_order(sh.spines);
  for (uint32_t m = 0; m < sh.spines; ++m) spine_order[m] = m;
  std::stable_sort(spine_order.begin(), spine_order.end(),
                   [&](uint32_t a, uint32_t b) { return ports_of(st, a) < ports_of(st, b); });
  BruteForce best;
  for (uint32_t lm = 0; lm < (1u << sh.leaves); ++lm) {
    if (static_cast<uint32_t>(std::popcount(lm)) != l) continue;
    Ids leaves;
    for (uint32_t n = 0; n < sh.leaves; ++n)
      if (((lm >> n) & 1u) != 0) leaves.push_back(n);
    if (!std::all_of(leaves.begin(), leaves.end(),
                     [&](uint32_t n) { return idle_servers_in(st, n).size() * sh.gpus_per_server >= s; }))
      continue;
    Ids spines;
    for (uint32_t m : spine_order) {
      if (spines.size() == s) break;
      if (std::all_of(leaves.begin(), leaves.end(), [&](uint32_t n) { return st.free_links(n, m) >= 1; }))
        spines.push_back(m);
    }
    if (spines.size() < s) continue;
    std::sort(spines.begin(), spines.end());
    const uint64_t c = objective(st, leaves, spines);
    // Bit-mask order is not the lists' order: compare.
    if (!best.feasible || c < best.cost || (c == best.cost && leaves < best.leaves)) best = {true, c, leaves, spines};
  }
  return best;
}

// Larger random states (up to 12 leaves, 12 spines, links 0 to 2), where
// the search branches deeper and switches between leaf and spine
// enumeration: exact agreement with the leaf-subset enumeration, and CBC
// reaches the same objective.
TEST(VClos, SearchMatchesLeafEnumerationOnMediumStates) {
  std::mt19937_64 rng(512);
  uint32_t feasible = 0;
  for (int instance = 0; instance < 40; ++instance) {
    const auto leaves = static_cast<uint32_t>(8 + rng() % 5);
    const auto spines = static_cast<uint32_t>(4 + rng() % 9);
    const auto per_leaf = static_cast<uint32_t>(1 + rng() % 4);
    const uint32_t t = 1u << (rng() % 2);
    std::vector<uint32_t> links(std::size_t{leaves} * spines);
    const uint64_t holes = rng() % 4;  // in 10: none to a third of the pairs unlinked
    for (uint32_t& c : links) c = rng() % 10 < holes ? 0 : static_cast<uint32_t>(1 + rng() % 2);
    ClusterState st(shape(leaves, spines, per_leaf, t, links));
    fragment(st, rng, static_cast<uint32_t>(rng() % 12));
    for (uint32_t l = 1; l <= leaves; ++l) {
      for (uint32_t s = t; s <= spines; s += t) {
        SCOPED_TRACE("instance " + std::to_string(instance) + " l " + std::to_string(l) + " s " + std::to_string(s));
        const BruteForce want = by_leaf_subsets(st, l, s);
        const std::optional<Allocation> got = vclos_ilp(st, l, s);
        ASSERT_EQ(got.has_value(), want.feasible);
        if (!got) continue;
        ++feasible;
        expect_vclos_allocation(st, *got, want.leaves, want.spines, s);
        if ((l * 7 + s + static_cast<uint32_t>(instance)) % 5 != 0) continue;  // CBC on a fifth
        const std::optional<Allocation> ilp = vclos_ilp(st, l, s, {VClosSolver::Ilp, 100000});
        ASSERT_TRUE(ilp);
        EXPECT_EQ(objective(st, ilp->leaves, ilp->spines), want.cost);
      }
    }
  }
  EXPECT_GT(feasible, 300u);
}

// Admissions and releases on L = 16, S = 8: the state always equals the
// recount from the running jobs, and every job's shape is as promised.
TEST(VClos, RandomSequenceKeepsInvariants) {
  std::vector<uint32_t> links(16 * 8, 1);
  std::mt19937_64 rng(7);
  for (uint32_t& c : links) c = rng() % 4 == 0 ? 2 : 1;
  const ClusterShape sh = shape(16, 8, 4, 4, links);
  ClusterState st(sh);
  std::vector<Allocation> running;
  uint32_t stages[4] = {}, gpus_refusals = 0, network_refusals = 0;
  for (int step = 0; step < 1500; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    if (!running.empty() && rng() % 5 < 2) {
      const std::size_t i = rng() % running.size();
      st.release(running[i]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      const uint32_t n = 1u << (rng() % 7);  // 1 .. 64
      const uint32_t need = (n + 3) / 4;
      const Decision d = place_vclos(st, n);
      if (!d.allocation) {
        ASSERT_NE(d.why, Refusal::None);
        const Snapshot now = snapshot(st);
        if (n <= 4) {
          ASSERT_EQ(d.why, Refusal::Gpus);
          for (uint32_t v = 0; v < sh.servers(); ++v) EXPECT_LT(now.idle_gpus[v], n);
        } else if (d.why == Refusal::Gpus) {
          EXPECT_LT(now.total_idle_servers, need);
          ++gpus_refusals;
        } else {
          EXPECT_GE(now.total_idle_servers, need);
          // CBC agrees that no candidate (l, s) has a virtual Clos.
          for (uint32_t l = 2; l <= 16; l *= 2) {
            if (n % l == 0 && n / l <= 8 && (n / l) % 4 == 0) {
              EXPECT_FALSE(vclos_ilp(st, l, n / l, {VClosSolver::Ilp, 100000}));
            }
          }
          ++network_refusals;
        }
      } else {
        const Allocation& a = *d.allocation;
        ASSERT_EQ(d.why, Refusal::None);
        ASSERT_EQ(a.gpus.size(), n);
        ++stages[static_cast<int>(a.stage)];
        for (uint32_t g : a.gpus) EXPECT_FALSE(st.gpu_busy(g));
        if (n <= 4) {
          EXPECT_EQ(a.stage, Stage::Server);
          for (uint32_t g : a.gpus) EXPECT_EQ(g / 4, a.gpus[0] / 4);
        } else {
          EXPECT_EQ(a.servers.size(), need);
          for (uint32_t v : a.servers) EXPECT_TRUE(server_idle(st, v));
        }
        if (a.stage == Stage::Leaf) {
          for (uint32_t g : a.gpus) EXPECT_EQ(leaf_of_gpu(sh, g), leaf_of_gpu(sh, a.gpus[0]));
        }
        if (a.stage == Stage::VirtualClos) {
          const auto s = static_cast<uint32_t>(a.spines.size());
          EXPECT_EQ(a.leaves.size() * s, n);
          EXPECT_GE(a.leaves.size(), 2u);
          for (uint32_t n_ : a.leaves)
            for (uint32_t m : a.spines) EXPECT_GE(st.free_links(n_, m), 1u) << "no link for pair";
          // Rank r lies under its virtual leaf's leaf.
          for (uint32_t r = 0; r < n; ++r) EXPECT_EQ(leaf_of_gpu(sh, a.gpus[r]), a.leaves[r / s]) << "rank " << r;
        }
        st.take(a);
        running.push_back(a);
      }
    }
    ASSERT_EQ(snapshot(st), recount(sh, running));
  }
  // The sequence visits every outcome.
  EXPECT_GT(stages[static_cast<int>(Stage::Server)], 0u);
  EXPECT_GT(stages[static_cast<int>(Stage::Leaf)], 0u);
  EXPECT_GT(stages[static_cast<int>(Stage::VirtualClos)], 0u);
  EXPECT_GT(gpus_refusals, 0u);
  EXPECT_GT(network_refusals, 0u);
}

// CLUSTER2048 (64 leaves x 32 spines, 8 servers of 4 GPUs per leaf),
// fragmented by admissions and releases: the search ends and reaches CBC's
// objective.
TEST(VClos, SearchAgreesWithCbcOnFragmentedCluster2048) {
  const ClusterShape sh = shape(64, 32, 8, 4);
  ClusterState st(sh);
  std::mt19937_64 rng(2048);
  std::vector<Allocation> running;
  // Fill with jobs of 1 to 128 GPUs (mostly multi-server) until 30 are
  // refused, then end a random half of them: idle servers scattered over
  // the leaves, spine links held by the virtual Clos jobs left.
  for (uint32_t refusals = 0; refusals < 30;) {
    std::optional<Allocation> a;
    if (rng() % 3 == 0) {  // a narrower virtual Clos than FINDVCLOS's first choice: spines differ
      const auto l = static_cast<uint32_t>(2u << (rng() % 3));
      a = vclos_ilp(st, l, 4u << (rng() % 2));
    } else {
      a = place_vclos(st, rng() % 4 == 0 ? 1u << (rng() % 3) : 8u << (rng() % 5)).allocation;
    }
    if (!a) {
      ++refusals;
      continue;
    }
    st.take(*a);
    running.push_back(*a);
  }
  std::shuffle(running.begin(), running.end(), rng);
  for (std::size_t keep = running.size() / 2; running.size() > keep;) {
    st.release(running.back());
    running.pop_back();
  }
  ASSERT_EQ(snapshot(st), recount(sh, running));
  uint32_t agreed = 0;
  for (const auto& [l, s] : std::vector<std::pair<uint32_t, uint32_t>>{
           {2, 32}, {4, 16}, {8, 8}, {16, 4}, {2, 16}, {4, 8}, {8, 16}, {16, 8}, {32, 4}}) {
    SCOPED_TRACE("l " + std::to_string(l) + " s " + std::to_string(s));
    const std::optional<Allocation> search = vclos_ilp(st, l, s);
    const std::optional<Allocation> ilp = vclos_ilp(st, l, s, {VClosSolver::Ilp, 100000});
    ASSERT_EQ(search.has_value(), ilp.has_value());
    if (!search) continue;
    EXPECT_EQ(objective(st, search->leaves, search->spines), objective(st, ilp->leaves, ilp->spines));
    ++agreed;
  }
  EXPECT_GE(agreed, 3u);
}

}  // namespace
}  // namespace fabricsim::ctrl
