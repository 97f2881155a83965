// Tests of the TopoOpt builder and its ring algorithms.
//
// Expected values come from the spec (../shared/spec/topoopt.md): the
// TotientPerms example of §4.3 (n = 12), the SelectPermutations example of
// §4.4 (n = 16, jumps +1 +3 +7), the jumps the paper's rule gives for the
// §2.1 grid (worked out by hand here), and the bound of App. E.2.  Route
// lengths are checked against a coin-change relaxation written here (the
// spec's Algorithm 4 with its "+1" restored) and a plain BFS over the
// built graph's data-carrying links.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/net/updown.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {
namespace {

using util::ConfigError;
using Jumps = std::vector<std::uint32_t>;

constexpr std::uint32_t kInf = 0xffffffffu;

/// Minimum number of coins summing to r mod n, for every r: repeated
/// relaxation dist[r] = min(dist[r], dist[r - c] + 1) until nothing changes
/// (Bellman-Ford, independent of the library's BFS).
std::vector<std::uint32_t> brute_coin_change(std::uint32_t n, const Jumps& coins) {
  std::vector<std::uint32_t> dist(n, kInf);
  dist[0] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::uint32_t r = 0; r < n; ++r) {
      for (std::uint32_t c : coins) {
        const std::uint32_t prev = static_cast<std::uint32_t>((r + n - c % n) % n);
        if (dist[prev] != kInf && dist[prev] + 1 < dist[r]) {
          dist[r] = dist[prev] + 1;
          changed = true;
        }
      }
    }
  }
  return dist;
}

/// Coins of a TopoOpt instance: the jumps, plus n - p for bidirectional rings.
Jumps coins_of(std::uint32_t n, const Jumps& jumps, bool bidirectional) {
  Jumps coins = jumps;
  if (bidirectional)
    for (std::uint32_t p : jumps) coins.push_back(n - p);
  return coins;
}

/// BFS distances from `src` over data-carrying links through forwarding nodes.
std::vector<std::uint32_t> data_distances(const Topology& t, NodeId src) {
  std::vector<std::uint32_t> dist(t.node_count(), kInf);
  std::deque<NodeId> queue{src};
  dist[src] = 0;
  while (!queue.empty()) {
    const NodeId x = queue.front();
    queue.pop_front();
    if (x != src && !t.node(x).forwards) continue;
    for (LinkId l : t.node(x).out) {
      const Link& link = t.link(l);
      if (!link.carries_data) continue;
      if (dist[link.dst] == kInf) {
        dist[link.dst] = dist[x] + 1;
        queue.push_back(link.dst);
      }
    }
  }
  return dist;
}

TopoOptParams topoopt(std::uint32_t n, std::uint32_t d, bool bidirectional = false, Jumps offsets = {}) {
  TopoOptParams p;
  p.servers = n;
  p.degree = d;
  p.bidirectional_rings = bidirectional;
  p.ring_offsets = std::move(offsets);
  p.link.bandwidth_gbps = 100.0;
  p.link.latency = core::SimTime::from_ns(1000);
  return p;
}

/// The jumps of a built topology: the (dst - src) mod n of server 0's
/// data-carrying out-links, sorted (jump p and n - p both appear when bidirectional).
Jumps out_jumps(const Topology& t, NodeId s) {
  const auto n = static_cast<std::uint32_t>(t.endpoint_count());
  Jumps j;
  for (LinkId l : t.node(s).out) {
    const Link& link = t.link(l);
    if (link.carries_data) j.push_back((link.dst + n - s) % n);
  }
  std::sort(j.begin(), j.end());
  return j;
}

// ============================================================ TotientPerms

TEST(TopoOptTotientPerms, SpecExample) {
  EXPECT_EQ(totient_perms(12, 12), (Jumps{1, 5, 7, 11}));  // §4.3, Theorem 2
}

TEST(TopoOptTotientPerms, EveryJumpCoprimeToNIsAHamiltonianRing) {
  for (std::uint32_t n : {2u, 3u, 8u, 16u, 30u, 128u, 432u}) {
    Jumps expected;
    for (std::uint32_t p = 1; p < n; ++p)
      if (std::gcd(p, n) == 1) expected.push_back(p);
    const Jumps got = totient_perms(n, n);
    EXPECT_EQ(got, expected) << n;
    for (std::uint32_t p : got) {
      // Following +p from 0 visits every server once before returning.
      std::vector<bool> seen(n, false);
      std::uint32_t s = 0, steps = 0;
      do {
        ASSERT_FALSE(seen[s]);
        seen[s] = true;
        s = (s + p) % n;
        ++steps;
      } while (s != 0);
      EXPECT_EQ(steps, n) << "n " << n << " jump " << p;
    }
  }
  EXPECT_EQ(totient_perms(128, 128).size(), 64u);  // phi(128)
  EXPECT_EQ(totient_perms(432, 432).size(), 144u);  // phi(432) = 432 * 1/2 * 2/3
}

TEST(TopoOptTotientPerms, GroupSmallerThanCluster) {
  // g = 4 of n = 12: the groups are the residue classes mod 3, {0,3,6,9},
  // {1,4,7,10}, {2,5,8,11}; p in {1, 3} coprime to 4 -> jumps 3 and 9.
  const Jumps jumps = totient_perms(12, 4);
  EXPECT_EQ(jumps, (Jumps{3, 9}));
  // Each jump rings every group: from i it reaches exactly i's residue class.
  const CoinChange cc = coin_change_mod(12, jumps);
  for (std::uint32_t r = 0; r < 12; ++r) EXPECT_EQ(cc.hops[r] != CoinChange::kUnreachable, r % 3 == 0) << r;
  for (std::uint32_t p : jumps) {
    const CoinChange one = coin_change_mod(12, {p});
    EXPECT_EQ(one.hops[3], p == 3 ? 1u : 3u);
    EXPECT_EQ(one.hops[9], p == 3 ? 3u : 1u);
  }
  EXPECT_EQ(totient_perms(16, 8), (Jumps{2, 6, 10, 14}));
  EXPECT_EQ(totient_perms(12, 1), Jumps{});
}

// ====================================================== SelectPermutations

TEST(TopoOptSelectPermutations, SpecExampleSixteenServersThreeNics) {
  // Figs. 7-9: 16^(1/3) = 2.52 -> 3; 3 * 2.52 = 7.56 -> 7.
  EXPECT_EQ(select_permutations(16, 3, totient_perms(16, 16)), (Jumps{1, 3, 7}));
}

TEST(TopoOptSelectPermutations, PaperGrid) {
  const Jumps c128 = totient_perms(128, 128);
  // x = 128^(1/4) = 3.364: 1, 3 (3.36), 11 (10.09), 37 (37.0).
  EXPECT_EQ(select_permutations(128, 4, c128), (Jumps{1, 3, 11, 37}));
  // 128^(1/8) = 1.83 < 2 -> x = 2: 1, 3 (2), 5 (6: 5 and 7 tie, smaller), 9, 17, 33, 65, 127 (130).
  EXPECT_EQ(select_permutations(128, 8, c128), (Jumps{1, 3, 5, 9, 17, 33, 65, 127}));
  // x = 432^(1/8) = 2.135 over the 144 jumps coprime to 432 (= 2^4 3^3).
  EXPECT_EQ(select_permutations(432, 8, totient_perms(432, 432)), (Jumps{1, 5, 11, 23, 49, 103, 221, 431}));
  EXPECT_EQ(select_permutations(128, 1, c128), (Jumps{1}));
}

TEST(TopoOptSelectPermutations, TiesGoToTheSmallerCandidate) {
  // x = 2 (16^(1/4) = 2): 1, 3 (target 2; 1 is used), 5 (6: 5 and 7), 9 (10: 9 and 11).
  EXPECT_EQ(select_permutations(16, 4, totient_perms(16, 16)), (Jumps{1, 3, 5, 9}));
  // 27^(1/3) is 3 in exact arithmetic (3.0000000000000004 in doubles):
  // target 3 ties 2 and 4.
  EXPECT_EQ(select_permutations(27, 3, totient_perms(27, 27)), (Jumps{1, 2, 5}));
  // The order of the candidates does not matter.
  EXPECT_EQ(select_permutations(16, 3, Jumps{15, 7, 3, 1, 9, 5, 13, 11}), (Jumps{1, 3, 7}));
}

TEST(TopoOptSelectPermutations, CodeVariant) {
  // Directed: ratio (15/1)^(1/2) = 3.87: 1, then the first unused >= 3.87
  // (5), then >= 19.4: none, so the largest unused (15).
  EXPECT_EQ(select_permutations_geo(16, 3, totient_perms(16, 16), false), (Jumps{1, 5, 15}));
  // Bidirectional: ratio 15^(1/3) = 2.47: 1, 3, 9 (>= 7.4).
  EXPECT_EQ(select_permutations_geo(16, 3, totient_perms(16, 16), true), (Jumps{1, 3, 9}));
}

// ========================================================== CoinChangeMod

TEST(TopoOptCoinChangeMod, MatchesRelaxation) {
  const std::vector<std::pair<std::uint32_t, Jumps>> cases = {
      {16, {1, 3, 7}},         {12, {1, 5, 7, 11}},  {12, {3, 9}},
      {128, {1, 3, 11, 37}},   {128, {1, 127, 11, 117}},
      {128, {1, 3, 5, 9, 17, 33, 65, 127}},          {432, {1, 5, 11, 23, 49, 103, 221, 431}},
      {10, {4, 6}},            {7, {7, 14, 3}},      {1, {1}}};
  for (const auto& [n, coins] : cases) {
    const CoinChange cc = coin_change_mod(n, coins);
    const std::vector<std::uint32_t> expected = brute_coin_change(n, coins);
    ASSERT_EQ(cc.hops.size(), n);
    ASSERT_EQ(cc.last.size(), n);
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t want = expected[r] == kInf ? CoinChange::kUnreachable : expected[r];
      ASSERT_EQ(cc.hops[r], want) << "n " << n << " r " << r;
      const Jumps route = coin_route(cc, r);
      if (r == 0 || want == CoinChange::kUnreachable) {
        EXPECT_EQ(cc.last[r], CoinChange::kNoCoin);
        EXPECT_TRUE(route.empty());
        continue;
      }
      // last[r]: the first coin, in the given order, that ends a minimal route.
      std::uint32_t first = CoinChange::kNoCoin;
      for (std::uint32_t c : coins) {
        if (c % n != 0 && expected[(r + n - c % n) % n] + 1 == expected[r]) {
          first = c;
          break;
        }
      }
      EXPECT_EQ(cc.last[r], first) << "n " << n << " r " << r;
      ASSERT_EQ(route.size(), want);
      EXPECT_EQ(route.back(), cc.last[r]);
      std::uint64_t sum = 0;
      for (std::uint32_t c : route) {
        EXPECT_NE(std::find(coins.begin(), coins.end(), c), coins.end());
        sum += c;
      }
      EXPECT_EQ(sum % n, r);
    }
  }
}

// ================================================================ builder

struct Case {
  std::uint32_t n, d;
  bool bidirectional;
  Jumps jumps;  // expected, worked out by hand from the paper's rule
};

const std::vector<Case>& grid() {
  static const std::vector<Case> cases = {
      {128, 4, false, {1, 3, 11, 37}},
      {128, 8, false, {1, 3, 5, 9, 17, 33, 65, 127}},
      // Bidirectional: d/2 jumps from the candidates <= 64, x = 128^(1/(d/2)):
      // d = 4: x = 11.3 -> 1, 11; d = 8: x = 3.36 -> 1, 3, 11, 37.
      {128, 4, true, {1, 11}},
      {128, 8, true, {1, 3, 11, 37}},
      {432, 8, false, {1, 5, 11, 23, 49, 103, 221, 431}},
  };
  return cases;
}

TEST(TopoOpt, StructureDirected) {
  for (const Case& c : grid()) {
    if (c.bidirectional) continue;
    const Topology t = build_topoopt(topoopt(c.n, c.d));
    SCOPED_TRACE(t.describe());
    EXPECT_EQ(t.kind, "topoopt");
    EXPECT_EQ(t.endpoint_count(), c.n);
    EXPECT_EQ(t.node_count(), c.n);
    EXPECT_EQ(t.switch_count(), 0u);
    // One cable per directed ring hop: n*d cables, n*d data links.
    EXPECT_EQ(t.link_count(), 2u * c.n * c.d);
    EXPECT_EQ(t.count_data_links(), std::size_t{c.n} * c.d);
    EXPECT_EQ(t.count_cables(CableType::AoC), std::size_t{c.n} * c.d);
    EXPECT_EQ(t.count_links(LinkClass::Global), t.link_count());
    for (NodeId s = 0; s < c.n; ++s) {
      const Node& node = t.node(s);
      EXPECT_EQ(node.kind, NodeKind::Endpoint);
      EXPECT_TRUE(node.forwards);
      EXPECT_EQ(node.name, "srv" + std::to_string(s));
      EXPECT_EQ(node.endpoint, s);
      EXPECT_EQ(node.radix, 2 * c.d);
      EXPECT_EQ(node.out.size(), 2u * c.d);
      std::size_t data_out = 0, data_in = 0;
      for (LinkId l : node.out) data_out += t.link(l).carries_data ? 1 : 0;
      for (LinkId l : node.in) data_in += t.link(l).carries_data ? 1 : 0;
      EXPECT_EQ(data_out, c.d);
      EXPECT_EQ(data_in, c.d);
      Jumps want = c.jumps;
      std::sort(want.begin(), want.end());
      EXPECT_EQ(out_jumps(t, s), want);
    }
    // Every cable: a->b carries data along +p, its b->a half only credits.
    for (LinkId l = 0; l < t.link_count(); l += 2) {
      const Link& fwd = t.link(l);
      const Link& back = t.link(l + 1);
      EXPECT_TRUE(fwd.carries_data);
      EXPECT_FALSE(back.carries_data);
      EXPECT_EQ(fwd.reverse, l + 1);
      EXPECT_EQ(back.reverse, l);
      EXPECT_EQ(back.src, fwd.dst);
      EXPECT_EQ(back.dst, fwd.src);
      EXPECT_EQ(t.node(fwd.src).out[fwd.src_port], l);
      EXPECT_EQ(t.node(fwd.dst).in[fwd.dst_port], l);
      EXPECT_DOUBLE_EQ(fwd.bandwidth_gbps, 100.0);
      EXPECT_EQ(fwd.latency, core::SimTime::from_ns(1000));
      EXPECT_EQ(fwd.cable, CableType::AoC);
    }
  }
}

TEST(TopoOpt, StructureBidirectional) {
  for (const Case& c : grid()) {
    if (!c.bidirectional) continue;
    const Topology t = build_topoopt(topoopt(c.n, c.d, true));
    SCOPED_TRACE(t.describe());
    EXPECT_EQ(t.switch_count(), 0u);
    // d/2 jumps, one cable per server and jump, both halves data.
    EXPECT_EQ(t.link_count(), std::size_t{c.n} * c.d);
    EXPECT_EQ(t.count_data_links(), t.link_count());
    EXPECT_EQ(t.count_cables(CableType::AoC), std::size_t{c.n} * c.d / 2);
    for (NodeId s = 0; s < c.n; ++s) {
      EXPECT_EQ(t.node(s).radix, c.d);
      EXPECT_EQ(t.node(s).out.size(), c.d);
      Jumps want = coins_of(c.n, c.jumps, true);
      std::sort(want.begin(), want.end());
      EXPECT_EQ(out_jumps(t, s), want);
    }
  }
}

TEST(TopoOpt, Description) {
  EXPECT_EQ(build_topoopt(topoopt(128, 4)).describe(),
            "TopoOpt direct-connect, 128 servers, degree 4, rings +1 +3 +11 +37 (directed, SelectPermutations)");
  EXPECT_EQ(build_topoopt(topoopt(128, 4, true)).describe(),
            "TopoOpt direct-connect, 128 servers, degree 4, rings +-1 +-11 (bidirectional, SelectPermutations)");
  EXPECT_EQ(build_topoopt(topoopt(16, 2, false, {5, 3})).describe(),
            "TopoOpt direct-connect, 16 servers, degree 2, rings +5 +3 (directed, topology.ring_offsets)");
  TopoOptParams geo = topoopt(16, 3);
  geo.geo_code_variant = true;
  EXPECT_EQ(build_topoopt(geo).describe(),
            "TopoOpt direct-connect, 16 servers, degree 3, rings +1 +5 +15 (directed, choose_n_geo)");
}

TEST(TopoOpt, AveragePathLengthEqualsCoinChange) {
  for (const Case& c : grid()) {
    const Topology t = build_topoopt(topoopt(c.n, c.d, c.bidirectional));
    SCOPED_TRACE(t.describe());
    const Jumps coins = coins_of(c.n, c.jumps, c.bidirectional);
    // Graph: BFS over data links from every server, all ordered pairs.
    std::uint64_t graph_sum = 0;
    std::uint32_t graph_max = 0;
    for (NodeId s = 0; s < c.n; ++s) {
      const std::vector<std::uint32_t> dist = data_distances(t, s);
      for (NodeId u = 0; u < c.n; ++u) {
        if (u == s) continue;
        ASSERT_NE(dist[u], kInf);
        // Translation invariance: the distance depends on (u - s) mod n only.
        graph_sum += dist[u];
        graph_max = std::max(graph_max, dist[u]);
      }
    }
    const double graph_avg = static_cast<double>(graph_sum) / (static_cast<double>(c.n) * (c.n - 1));
    // Coin change, computed here: every ordered pair (s, u) needs the
    // coins of residue (u - s) mod n; each residue r != 0 occurs n times.
    const std::vector<std::uint32_t> coin = brute_coin_change(c.n, coins);
    std::uint64_t coin_sum = 0;
    std::uint32_t coin_max = 0;
    for (std::uint32_t r = 1; r < c.n; ++r) {
      coin_sum += coin[r];
      coin_max = std::max(coin_max, coin[r]);
    }
    const double coin_avg = static_cast<double>(coin_sum) / (c.n - 1);
    EXPECT_DOUBLE_EQ(graph_avg, coin_avg);
    EXPECT_EQ(graph_max, coin_max);
    // The library's CoinChangeMod agrees, and Topology::diameter() is the
    // largest coin count.
    const CoinChange cc = coin_change_mod(c.n, coins);
    EXPECT_EQ(*std::max_element(cc.hops.begin(), cc.hops.end()), coin_max);
    EXPECT_EQ(t.diameter(), static_cast<int>(coin_max));
    // Theorem 1 / App. E.2: with k rings chosen with ratio x = max(2,
    // n^(1/k)), routes need at most k*x coins.
    const double k = static_cast<double>(c.jumps.size());
    const double x = std::max(2.0, std::pow(static_cast<double>(c.n), 1.0 / k));
    EXPECT_LE(coin_max, static_cast<std::uint32_t>(std::ceil(k * x))) << "k " << k << " x " << x;
    std::printf("  %s: average path %.4f, diameter %u\n", t.describe().c_str(), graph_avg, graph_max);
  }
}

TEST(TopoOpt, DiameterIsTheLargestCoinCount) {
  for (std::uint32_t n : {2u, 3u, 5u, 12u, 16u, 30u, 64u}) {
    for (std::uint32_t d = 1; d <= 6; ++d) {
      for (bool bidir : {false, true}) {
        if (bidir && d % 2 != 0) continue;
        Jumps candidates = totient_perms(n, n);
        if (bidir) std::erase_if(candidates, [&](std::uint32_t p) { return 2 * p > n; });
        const std::uint32_t rings = bidir ? d / 2 : d;
        if (rings > candidates.size()) {
          EXPECT_THROW(build_topoopt(topoopt(n, d, bidir)), ConfigError) << n << " " << d;
          continue;
        }
        const Topology t = build_topoopt(topoopt(n, d, bidir));
        const Jumps jumps = select_permutations(n, rings, candidates);
        const std::vector<std::uint32_t> coin = brute_coin_change(n, coins_of(n, jumps, bidir));
        EXPECT_EQ(t.diameter(), static_cast<int>(*std::max_element(coin.begin(), coin.end())))
            << t.describe();
      }
    }
  }
}

TEST(TopoOpt, RoutingTableFollowsDataLinksOnly) {
  for (bool bidir : {false, true}) {
    const std::uint32_t n = 30;
    const Topology t = build_topoopt(topoopt(n, 4, bidir));
    const Jumps coins = coins_of(n, out_jumps(t, 0), false);
    const std::vector<std::uint32_t> coin = brute_coin_change(n, coins);
    const RoutingTable routes(t);
    for (NodeId s = 0; s < n; ++s) {
      for (EndpointId u = 0; u < n; ++u) {
        const std::uint32_t r = (u + n - s) % n;
        ASSERT_EQ(routes.hops(s, u), coin[r]) << s << " -> " << u;
        for (PortIndex p : routes.candidates(s, u)) {
          const Link& l = t.link(t.node(s).out[p]);
          ASSERT_TRUE(l.carries_data);
          ASSERT_EQ(routes.hops(l.dst, u) + 1, coin[r]);
        }
      }
    }
    // Up*/down* never offers a credit-only half either.
    const UpDownRoutes updown(t);
    std::vector<PortIndex> ports;
    for (NodeId s = 0; s < n; ++s) {
      for (EndpointId u = 0; u < n; ++u) {
        for (bool down : {false, true}) {
          ports.clear();
          updown.candidates(s, down, u, ports);
          for (PortIndex p : ports) ASSERT_TRUE(t.link(t.node(s).out[p]).carries_data);
        }
      }
    }
  }
}

TEST(TopoOpt, OneWayLinkIsNotAPathBack) {
  // Two forwarding endpoints and one directed link: 0 reaches 1, not back.
  Topology t;
  const NodeId a = t.add_node(NodeKind::Endpoint, 0, 1, "a", true);
  const NodeId b = t.add_node(NodeKind::Endpoint, 0, 1, "b", true);
  const auto [ab, ba] = t.connect_directed(a, b, LinkClass::Global, LinkParams{}, CableType::AoC);
  EXPECT_TRUE(t.link(ab).carries_data);
  EXPECT_FALSE(t.link(ba).carries_data);
  EXPECT_EQ(t.count_data_links(), 1u);
  EXPECT_EQ(t.count_cables(CableType::AoC), 1u);
  EXPECT_EQ(t.diameter(), -1);
  const RoutingTable routes(t);
  EXPECT_EQ(routes.hops(a, 1), 1u);
  EXPECT_EQ(routes.hops(b, 0), RoutingTable::kUnreachable);
  EXPECT_TRUE(routes.candidates(b, 0).empty());
  // A second directed link back makes a 2-cycle of diameter 1.
  Topology t2;
  t2.add_node(NodeKind::Endpoint, 0, 2, "a", true);
  t2.add_node(NodeKind::Endpoint, 0, 2, "b", true);
  t2.connect_directed(0, 1, LinkClass::Global, LinkParams{}, CableType::AoC);
  t2.connect_directed(1, 0, LinkClass::Global, LinkParams{}, CableType::AoC);
  EXPECT_EQ(t2.diameter(), 1);
  const RoutingTable routes2(t2);
  ASSERT_EQ(routes2.candidates(1, 0).size(), 1u);
  EXPECT_EQ(routes2.candidates(1, 0)[0], 1);  // port 1: the cable 1 -> 0, not the credit half of 0 -> 1
}

TEST(TopoOpt, HandGivenOffsets) {
  // Repeats are parallel rings: n = 8, jumps {1, 1, 3}.
  const Topology t = build_topoopt(topoopt(8, 3, false, {1, 1, 3}));
  EXPECT_EQ(out_jumps(t, 0), (Jumps{1, 1, 3}));
  EXPECT_EQ(t.count_cables(CableType::AoC), 24u);
  // p = n/2 in directed mode: two one-way cables between i and i+4.
  const Topology half = build_topoopt(topoopt(8, 2, false, {1, 4}));
  EXPECT_EQ(out_jumps(half, 0), (Jumps{1, 4}));
  const std::vector<std::uint32_t> half_coins = brute_coin_change(8, {1, 4});
  EXPECT_EQ(half.diameter(), static_cast<int>(*std::max_element(half_coins.begin(), half_coins.end())));
  // Bidirectional: degree/2 jumps.
  const Topology bi = build_topoopt(topoopt(10, 4, true, {1, 3}));
  EXPECT_EQ(out_jumps(bi, 0), (Jumps{1, 3, 7, 9}));
  EXPECT_EQ(bi.node(0).radix, 4u);
}

void expect_config_error(const TopoOptParams& p, const std::string& fragment) {
  try {
    build_topoopt(p);
    ADD_FAILURE() << "no error, expected one containing '" << fragment << "'";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TopoOpt, BadParametersThrow) {
  expect_config_error(topoopt(8, 2, false, {0, 1}), "topology.ring_offsets: jump 0 is outside 1..7");
  expect_config_error(topoopt(8, 2, false, {1, 8}), "topology.ring_offsets: jump 8 is outside 1..7");
  expect_config_error(topoopt(8, 2, false, {2, 4}), "topology.ring_offsets: the rings do not connect");
  expect_config_error(topoopt(8, 2, true, {2}), "topology.ring_offsets:");
  expect_config_error(topoopt(8, 3, false, {1, 3}), "topology.ring_offsets: 2 jumps given, but degree 3");
  expect_config_error(topoopt(8, 4, true, {1, 3, 5, 7}), "topology.ring_offsets: 4 jumps given");
  expect_config_error(topoopt(8, 3, true), "topology.degree: bidirectional rings");
  expect_config_error(topoopt(8, 0), "topology.degree: must be at least 1");
  expect_config_error(topoopt(1, 1), "topology.servers: must be at least 2");
  // phi(8) = 4 rings exist; 2 pairs (1 and 3) when bidirectional.
  expect_config_error(topoopt(8, 5), "topology.degree: 8 servers have only 4 distinct rings");
  expect_config_error(topoopt(8, 6, true), "topology.degree: 8 servers have only 2 distinct ring pairs");
  TopoOptParams bad_link = topoopt(8, 2);
  bad_link.link.bandwidth_gbps = 0.0;
  expect_config_error(bad_link, "topology.link.bandwidth_gbps");
  expect_config_error(topoopt(8, 40000), "topology.degree: 40000 interfaces need 80000 ports");
}

}  // namespace
}  // namespace fabricsim::net
