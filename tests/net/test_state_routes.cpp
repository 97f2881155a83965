// Routing of the direct topologies (state_routes.hpp): on small instances of
// each topology, every endpoint reaches every other under every scheme, the
// routes are as long as the scheme promises (minimal where it is minimal),
// and the channel dependency graph is acyclic (for Duato's adaptive torus
// routing: that of its escape moves).  The checks are able to fail: the same
// moves without the virtual-channel rules give cycles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {
namespace {

// Shortest path in links between two endpoints, over links that carry data
// and through forwarding nodes,
// by a plain BFS written here (independent of the route tables).
std::vector<std::uint32_t> bfs_from(const Topology& t, NodeId src) {
  std::vector<std::uint32_t> d(t.node_count(), UINT32_MAX);
  std::vector<NodeId> q{src};
  d[src] = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const NodeId u = q[i];
    if (u != src && !t.node(u).forwards) continue;
    for (LinkId l : t.node(u).out) {
      if (!t.link(l).carries_data) continue;
      const NodeId v = t.link(l).dst;
      if (d[v] == UINT32_MAX) {
        d[v] = d[u] + 1;
        q.push_back(v);
      }
    }
  }
  return d;
}

struct Expect {
  bool minimal;  // every route is a shortest path
};

void check_routes(const StateRoutes& r, Expect e, const char* what) {
  SCOPED_TRACE(what);
  const Topology& t = r.topology();
  const std::uint8_t init = r.rules().initial_state();
  for (EndpointId s = 0; s < t.endpoint_count(); ++s) {
    const auto d = bfs_from(t, t.endpoint_node(s));
    for (EndpointId x = 0; x < t.endpoint_count(); ++x) {
      if (x == s) continue;
      const std::uint16_t h = r.hops(t.endpoint_node(s), init, x);
      ASSERT_NE(h, StateRoutes::kUnreachable) << s << " -> " << x;
      if (e.minimal) {
        EXPECT_EQ(h, d[t.endpoint_node(x)]) << s << " -> " << x;
      } else {
        EXPECT_GE(h, d[t.endpoint_node(x)]) << s << " -> " << x;
      }
    }
  }
  // Walk every offered move from every source: each walk ends at the
  // destination in exactly hops() links.
  std::vector<StateRoutes::Option> opts;
  for (EndpointId s = 0; s < t.endpoint_count(); ++s)
    for (EndpointId x = 0; x < t.endpoint_count(); ++x) {
      if (x == s) continue;
      NodeId at = t.endpoint_node(s);
      std::uint8_t st = init;
      std::uint32_t steps = 0;
      const std::uint32_t want = r.hops(at, st, x);
      // Follow the last option (the first is what deterministic routing takes).
      while (at != t.endpoint_node(x) && steps <= want) {
        opts.clear();
        r.options(at, st, x, opts);
        ASSERT_FALSE(opts.empty()) << "stuck at " << t.node(at).name;
        for (const auto& o : opts) EXPECT_LT(o.vc, r.rules().vcs());
        at = t.link(opts.back().link).dst;
        st = opts.back().state;
        ++steps;
      }
      EXPECT_EQ(steps, want) << s << " -> " << x;
    }
  std::size_t unreachable = 1;
  const DependencyReport dep = check_state_routes(r, false, &unreachable);
  EXPECT_EQ(unreachable, 0u);
  EXPECT_GT(dep.dependencies, 0u);
}

void expect_acyclic(const StateRoutes& r, bool escape_only) {
  std::size_t unreachable = 1;
  const DependencyReport dep = check_state_routes(r, escape_only, &unreachable);
  EXPECT_EQ(unreachable, 0u);
  EXPECT_TRUE(dep.acyclic) << r.rules().describe() << ": cycle of " << dep.cycle.size() << " channels";
}

Topology torus(std::vector<std::uint32_t> dims, bool boards) {
  TorusParams p;
  p.dims = std::move(dims);
  p.boards = boards;
  return build_torus(p);
}

TEST(StateRoutes, TorusDimensionOrderIsMinimalAndAcyclic) {
  for (auto dims : std::vector<std::vector<std::uint32_t>>{{5}, {4, 4}, {4, 6}, {3, 3, 3}, {2, 4}}) {
    const Topology t = torus(dims, false);
    StateRoutes r(t, torus_rules(t, dims, false));
    check_routes(r, {true}, "torus dor");
    expect_acyclic(r, false);
    // Dimension order: every route offers one direction per dimension, the
    // dimensions in increasing order; on the deterministic walk the first
    // option is taken and never goes back to a lower dimension.
  }
  // 2x2 boards change link classes, not the routing.
  const Topology tb = torus({4, 4}, true);
  StateRoutes rb(tb, torus_rules(tb, {4, 4}, false));
  check_routes(rb, {true}, "torus dor, boards");
  expect_acyclic(rb, false);
}

TEST(StateRoutes, TorusAdaptiveIsMinimalWithAnAcyclicEscapeNetwork) {
  for (auto dims : std::vector<std::vector<std::uint32_t>>{{5}, {4, 4}, {3, 5}, {3, 3, 3}}) {
    const Topology t = torus(dims, false);
    StateRoutes r(t, torus_rules(t, dims, true));
    check_routes(r, {true}, "torus adaptive");
    expect_acyclic(r, true);
    // The adaptive moves together with the escape moves do form cycles
    // (that is what Duato's condition allows): the full check must see one,
    // else this test would not show that the escape-only check matters.
    EXPECT_FALSE(check_state_routes(r, false, nullptr).acyclic);
    // Every hop offers the escape move among its options.
    std::vector<StateRoutes::Option> opts;
    for (NodeId at = 0; at < t.node_count(); ++at)
      for (EndpointId x = 0; x < t.endpoint_count(); ++x) {
        if (t.endpoint_node(x) == at) continue;
        for (std::uint8_t s = 0; s < r.rules().state_count(); ++s) {
          if (r.hops(at, s, x) == StateRoutes::kUnreachable) continue;
          opts.clear();
          r.options(at, s, x, opts);
          bool esc = false;
          for (const auto& o : opts) esc = esc || r.rules().escape(o.state);
          EXPECT_TRUE(esc) << "no escape move at " << at << " towards " << x;
        }
      }
  }
}

HammingMeshParams hm(std::uint32_t a, std::uint32_t b, std::uint32_t x, std::uint32_t y, std::uint32_t radix) {
  HammingMeshParams p;
  p.board_a = a;
  p.board_b = b;
  p.x = x;
  p.y = y;
  p.radix = radix;
  return p;
}

TEST(StateRoutes, HammingMeshAndHyperXAreMinimalAndAcyclic) {
  // Board-row switches (small clusters), per-accelerator-row trees (large
  // clusters, forced here by a small radix), HyperX (1x1 boards).
  const std::vector<HammingMeshParams> cases = {hm(2, 2, 2, 2, 16), hm(2, 2, 3, 2, 64), hm(4, 4, 2, 2, 64),
                                                hm(2, 2, 4, 4, 4),  hm(1, 1, 4, 4, 64), hm(1, 1, 4, 3, 4)};
  for (const auto& p : cases) {
    const Topology t = build_hammingmesh(p);
    for (bool row_first : {false, true}) {
      StateRoutes r(t, hammingmesh_rules(t, p.board_a, p.board_b, p.x, p.y, row_first));
      // Minimal adaptive is minimal; row-first is minimal on HyperX (both
      // orders are as long) and never shorter elsewhere.
      check_routes(r, {!row_first || (p.board_a == 1 && p.board_b == 1)}, t.describe().c_str());
      expect_acyclic(r, false);
      EXPECT_EQ(r.rules().vcs(), 3);
    }
  }
}

TEST(StateRoutes, DragonflyMinimalAndValiantLegsAreAcyclic) {
  for (const char* arrangement : {"consecutive", "palmtree"}) {
    DragonflyParams p;
    p.a = 4;
    p.p = 2;
    p.h = 2;
    p.groups = 9;
    p.arrangement = arrangement;
    const Topology t = build_dragonfly(p);
    StateRoutes minimal(t, dragonfly_rules(t, 1));
    check_routes(minimal, {false}, arrangement);
    expect_acyclic(minimal, false);
    // Dragonfly-minimal is local-global-local, not the graph's shortest
    // path (which may take two global links): count it from the wiring.
    const auto router = [&](EndpointId e) { return t.link(t.node(t.endpoint_node(e)).out[0]).dst; };
    const auto group = [&](NodeId r) { return (r - t.endpoint_count()) / p.a; };
    for (EndpointId s = 0; s < t.endpoint_count(); ++s)
      for (EndpointId x = 0; x < t.endpoint_count(); ++x) {
        if (s == x) continue;
        const NodeId rs = router(s), rd = router(x);
        std::uint32_t want = 2 + (rs != rd ? 1 : 0);
        if (group(rs) != group(rd)) {
          want = UINT32_MAX;
          for (LinkId l = 0; l < t.link_count(); ++l) {
            const Link& k = t.link(l);
            if (k.cls != LinkClass::Global || group(k.src) != group(rs) || group(k.dst) != group(rd)) continue;
            want = std::min<std::uint32_t>(want, 3 + (k.src != rs ? 1 : 0) + (k.dst != rd ? 1 : 0));
          }
        }
        EXPECT_EQ(minimal.hops(t.endpoint_node(s), 0, x), want) << s << " -> " << x;
      }
    StateRoutes two(t, dragonfly_rules(t, 2));
    check_routes(two, {false}, arrangement);
    expect_acyclic(two, false);
  }
}

TEST(StateRoutes, HopCountVirtualChannelsMakeAnyGraphAcyclic) {
  const Topology t = torus({7}, false);
  StateRoutes r(t, hop_count_rules(t, 8));
  check_routes(r, {true}, "ring, hop count");
  expect_acyclic(r, false);
  EXPECT_EQ(r.rules().vcs(), 3);  // diameter of a 7-ring
  EXPECT_THROW(hop_count_rules(t, 2), util::ConfigError);
}

TEST(StateRoutes, TopoOptRoutesAreTheCoinChangeRoutesOverDataLinks) {
  // Directed rings: the reverse half of every cable carries no data, so a
  // route from i to j has exactly the CoinChangeMod coin count of
  // (j - i) mod n (not the shorter count the reverse halves would give).
  for (bool bidirectional : {false, true}) {
    TopoOptParams p;
    p.servers = 16;
    p.degree = bidirectional ? 4 : 3;
    p.bidirectional_rings = bidirectional;
    const Topology t = build_topoopt(p);
    StateRoutes r(t, hop_count_rules(t, 8));
    std::vector<std::uint32_t> coins;
    for (LinkId l = 0; l < t.link_count(); ++l)
      if (t.link(l).src == 0 && t.link(l).carries_data) coins.push_back(t.link(l).dst);
    const CoinChange cc = coin_change_mod(16, coins);
    for (EndpointId s = 0; s < 16; ++s)
      for (EndpointId x = 0; x < 16; ++x)
        if (s != x) {
          EXPECT_EQ(r.hops(t.endpoint_node(s), 0, x), cc.hops[(x + 16 - s) % 16]) << s << " -> " << x;
        }
    check_routes(r, {true}, bidirectional ? "topoopt bidirectional" : "topoopt directed");
    expect_acyclic(r, false);
    std::vector<StateRoutes::Option> opts;
    for (NodeId at = 0; at < t.node_count(); ++at) {
      opts.clear();
      r.options(at, 0, (at + 5) % 16, opts);
      for (const auto& o : opts) EXPECT_TRUE(t.link(o.link).carries_data);
    }
  }
}

TEST(StateRoutes, WithoutTheVirtualChannelRulesTheSameMovesDeadlock) {
  // One state, every link legal: minimal routing on one VC.  On a ring and
  // on a HammingMesh the dependency graph then has a cycle.
  class AnyMove final : public RouteRules {
   public:
    std::uint8_t state_count() const override { return 1; }
    std::uint8_t vcs() const override { return 1; }
    std::uint8_t vc(std::uint8_t) const override { return 0; }
    std::string describe() const override { return "any minimal move, one VC"; }
    std::uint8_t step(NodeId, std::uint8_t, LinkId, std::uint32_t, unsigned) const override { return 0; }
  };
  const Topology ring = torus({5}, false);
  EXPECT_FALSE(check_state_routes(StateRoutes(ring, std::make_unique<AnyMove>()), false, nullptr).acyclic);
  const Topology h = build_hammingmesh(hm(2, 2, 2, 2, 16));
  EXPECT_FALSE(check_state_routes(StateRoutes(h, std::make_unique<AnyMove>()), false, nullptr).acyclic);
}

TEST(StateRoutes, RulesRefuseTheWrongTopology) {
  const Topology t = torus({4, 4}, false);
  EXPECT_THROW(torus_rules(t, {4, 5}, false), util::ConfigError);
  EXPECT_THROW(hammingmesh_rules(t, 2, 2, 2, 2, false), util::ConfigError);
  EXPECT_THROW(dragonfly_rules(t, 1), util::ConfigError);
}

}  // namespace
}  // namespace fabricsim::net

namespace fabricsim::net {
namespace {

// Every loop-free coin route from 0 to r of at most `max_len` coins, by
// depth-first enumeration (independent of Yen's algorithm).
void all_routes(std::uint32_t n, const std::vector<std::uint32_t>& coins, std::uint32_t at, std::uint32_t r,
                std::vector<std::uint8_t>& seen, std::size_t len, std::size_t max_len, std::vector<std::size_t>& lengths) {
  if (at == r) {
    lengths.push_back(len);
    return;
  }
  if (len == max_len) return;
  for (std::uint32_t c : coins) {
    const std::uint32_t v = (at + c) % n;
    if (seen[v]) continue;
    seen[v] = 1;
    all_routes(n, coins, v, r, seen, len + 1, max_len, lengths);
    seen[v] = 0;
  }
}

TEST(KShortestCoinRoutes, MatchTheShortestLoopFreeRoutesByEnumeration) {
  for (const auto& [n, coins] : std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>>{
           {16, {1, 3, 7}}, {12, {1, 5}}, {15, {1, 4, 11}}, {10, {1, 9}}}) {
    for (std::uint32_t r = 1; r < n; ++r) {
      const auto routes = k_shortest_coin_routes(n, coins, r, 6);
      ASSERT_FALSE(routes.empty());
      // Valid, loop-free, distinct.
      for (std::size_t i = 0; i < routes.size(); ++i) {
        std::vector<std::uint8_t> seen(n, 0);
        std::uint32_t at = 0;
        seen[0] = 1;
        for (std::uint32_t c : routes[i]) {
          at = (at + c) % n;
          EXPECT_FALSE(seen[at]) << "loop in route " << i << " to " << r;
          seen[at] = 1;
        }
        EXPECT_EQ(at, r);
        for (std::size_t j = 0; j < i; ++j) EXPECT_NE(routes[i], routes[j]);
        if (i > 0) {
          EXPECT_GE(routes[i].size(), routes[i - 1].size()) << "not shortest first";
        }
      }
      // The lengths are the smallest ones among all loop-free routes.
      std::vector<std::size_t> lengths;
      std::vector<std::uint8_t> seen(n, 0);
      seen[0] = 1;
      all_routes(n, coins, 0, r, seen, 0, n, lengths);
      std::sort(lengths.begin(), lengths.end());
      ASSERT_GE(lengths.size(), routes.size());
      EXPECT_EQ(routes.size(), std::min<std::size_t>(6, lengths.size()));
      for (std::size_t i = 0; i < routes.size(); ++i) EXPECT_EQ(routes[i].size(), lengths[i]) << n << " r " << r;
      // k = 1 is CoinChangeMod's length.
      EXPECT_EQ(routes[0].size(), coin_change_mod(n, coins).hops[r]);
    }
  }
}

TEST(KShortestCoinRoutes, PathsFollowTheDataLinksOfTheFabric) {
  TopoOptParams p;
  p.servers = 16;
  p.degree = 3;
  const Topology t = build_topoopt(p);
  const CoinPaths paths(t, 4);
  std::vector<LinkId> links;
  for (EndpointId s = 0; s < 16; ++s)
    for (EndpointId d = 0; d < 16; ++d) {
      if (s == d) continue;
      ASSERT_GE(paths.count(s, d), 1u);
      for (std::size_t c = 0; c < paths.count(s, d); ++c) {
        links.clear();
        paths.path(s, d, c, links);
        NodeId at = t.endpoint_node(s);
        for (LinkId l : links) {
          EXPECT_TRUE(t.link(l).carries_data);
          EXPECT_EQ(t.link(l).src, at);
          at = t.link(l).dst;
        }
        EXPECT_EQ(at, t.endpoint_node(d));
        EXPECT_LE(links.size(), paths.max_hops());
      }
    }
}

// ------------------------------------------------- k shortest on any graph

using Adjacency = std::vector<std::vector<std::pair<LinkId, NodeId>>>;

// Every loop-free route from `at` to `to` by depth-first enumeration (written
// here, independent of Yen's algorithm): their lengths.
void all_link_routes(const Adjacency& out, NodeId at, NodeId to, std::vector<std::uint8_t>& seen, std::size_t len,
                     std::vector<std::size_t>& lengths) {
  if (at == to) {
    lengths.push_back(len);
    return;
  }
  for (const auto& [l, v] : out[at]) {
    if (seen[v]) continue;
    seen[v] = 1;
    all_link_routes(out, v, to, seen, len + 1, lengths);
    seen[v] = 0;
  }
}

TEST(KShortestLinkRoutes, MatchEnumerationOnRandomMultigraphs) {
  // Small random directed multigraphs with parallel links (which are routes
  // of their own): the k routes are valid, loop-free, distinct, shortest
  // first, and their lengths are the k smallest of the enumeration.
  std::uint64_t state = 12345;
  auto next = [&](std::uint32_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>((state >> 33) % bound);
  };
  for (int trial = 0; trial < 40; ++trial) {
    const std::uint32_t n = 4 + next(4), links = n + next(2 * n);
    Adjacency out(n);
    std::vector<std::pair<NodeId, NodeId>> ends;
    for (LinkId l = 0; l < links; ++l) {
      const NodeId u = next(n);
      NodeId v = next(n - 1);
      if (v >= u) ++v;
      out[u].emplace_back(l, v);
      ends.emplace_back(u, v);
    }
    for (NodeId s = 0; s < n; ++s)
      for (NodeId d = 0; d < n; ++d) {
        if (s == d) continue;
        const std::uint32_t k = 1 + next(6);
        const auto routes = k_shortest_link_routes(out, s, d, k);
        std::vector<std::size_t> lengths;
        std::vector<std::uint8_t> seen(n, 0);
        seen[s] = 1;
        all_link_routes(out, s, d, seen, 0, lengths);
        std::sort(lengths.begin(), lengths.end());
        ASSERT_EQ(routes.size(), std::min<std::size_t>(k, lengths.size())) << "trial " << trial;
        for (std::size_t i = 0; i < routes.size(); ++i) {
          std::vector<std::uint8_t> visited(n, 0);
          NodeId at = s;
          visited[s] = 1;
          for (LinkId l : routes[i]) {
            ASSERT_EQ(ends[l].first, at) << "route " << i << " does not follow its links";
            at = ends[l].second;
            EXPECT_FALSE(visited[at]) << "loop";
            visited[at] = 1;
          }
          EXPECT_EQ(at, d);
          EXPECT_EQ(routes[i].size(), lengths[i]) << "trial " << trial << " " << s << " -> " << d;
          for (std::size_t j = 0; j < i; ++j) EXPECT_NE(routes[i], routes[j]);
        }
      }
  }
}

TEST(ServerPaths, OnCirculantRingsAgreeWithTheCoinRoutes) {
  // Two independent constructions of TopoOpt's k shortest routes: per
  // residue over Z_n (CoinPaths) and per server pair over the links
  // (ServerPaths) give the same number of routes of the same lengths.
  TopoOptParams p;
  p.servers = 12;
  p.degree = 3;
  const Topology t = build_topoopt(p);
  const CoinPaths coin(t, 5);
  const ServerPaths server(t, 5);
  std::vector<LinkId> a, b;
  for (EndpointId s = 0; s < 12; ++s)
    for (EndpointId d = 0; d < 12; ++d) {
      if (s == d) continue;
      ASSERT_EQ(server.count(s, d), coin.count(s, d));
      std::vector<std::size_t> la, lb;
      for (std::size_t c = 0; c < coin.count(s, d); ++c) {
        a.clear();
        b.clear();
        coin.path(s, d, c, a);
        server.path(s, d, c, b);
        la.push_back(a.size());
        lb.push_back(b.size());
      }
      EXPECT_EQ(la, lb) << s << " -> " << d;
    }
  EXPECT_EQ(server.max_hops(), coin.max_hops());
}

TEST(ServerPaths, GpuRoutesGoThroughTheirServers) {
  // 5 servers of 3 GPUs; links 0->1->2->3->4->0 and a cable 0<->2 twice.
  ServerFabricParams p;
  p.servers = 5;
  p.gpus_per_server = 3;
  p.directed = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}};
  p.duplex = {{0, 2}, {0, 2}};
  p.link.bandwidth_gbps = 100;
  p.intra.bandwidth_gbps = 1000;
  const Topology t = build_server_fabric(p);
  const ServerPaths paths(t, 4);
  std::vector<LinkId> links;
  for (EndpointId s = 0; s < 15; ++s)
    for (EndpointId d = 0; d < 15; ++d) {
      if (s == d) continue;
      const std::size_t count = paths.count(s, d);
      ASSERT_GE(count, 1u);
      std::size_t prev = 0;
      for (std::size_t c = 0; c < count; ++c) {
        links.clear();
        paths.path(s, d, c, links);
        ASSERT_GE(links.size(), 2u);
        EXPECT_EQ(t.link(links.front()).src, t.endpoint_node(s));
        EXPECT_EQ(t.link(links.front()).cls, LinkClass::IntraServer);
        EXPECT_EQ(t.link(links.back()).dst, t.endpoint_node(d));
        EXPECT_EQ(t.link(links.back()).cls, LinkClass::IntraServer);
        NodeId at = t.endpoint_node(s);
        for (LinkId l : links) {
          EXPECT_TRUE(t.link(l).carries_data);
          EXPECT_EQ(t.link(l).src, at);
          at = t.link(l).dst;
        }
        EXPECT_GE(links.size(), prev);
        prev = links.size();
      }
      if (s / 3 == d / 3) {
        EXPECT_EQ(count, 1u);
      }
    }
  // Server 0 to server 2 (GPU 0 to GPU 6): the two parallel cables are two
  // 1-hop routes, then 0->1->2; server 0 has no other link out: exactly 3.
  EXPECT_EQ(paths.count(0, 6), 3u);
  links.clear();
  paths.path(0, 6, 2, links);
  EXPECT_EQ(links.size(), 4u);  // up, 0->1, 1->2, down
  // Server 2 to server 0: 2->0 twice, 2->3->4->0.
  EXPECT_EQ(paths.count(6, 0), 3u);
}

TEST(ServerPaths, APairInDifferentShardsIsAConfigError) {
  ServerFabricParams p;
  p.servers = 4;
  p.directed = {{0, 1}, {1, 0}, {2, 3}, {3, 2}};
  p.shards = true;
  p.link.bandwidth_gbps = 100;
  const Topology t = build_server_fabric(p);
  const ServerPaths paths(t, 2);
  EXPECT_EQ(paths.count(0, 1), 1u);
  EXPECT_EQ(paths.count(0, 2), 0u);
  EXPECT_THROW((void)paths.choice(0, 2, 1, 7), util::ConfigError);
}

}  // namespace
}  // namespace fabricsim::net
