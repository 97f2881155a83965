// The flow models' routes on the direct topologies (flow_paths.hpp:
// RulesPaths over the packet model's route rules, ListedRoutes over TopoOpt's
// k shortest coin routes).  Expectations:
//   * one path per message (dor, minimal): the packet model takes the first
//     move the rules offer at every hop, so a message's packets cross
//     exactly the links of RulesPaths' route, and a batch of messages puts
//     the same bytes on every link in the packet and in the flow model;
//   * torus dimension order: X is corrected before Y;
//   * every link of a route is a move the rules allow in the state the
//     route reaches it in (HammingMesh's north-last and up/down rules);
//   * an even split is a unit flow from source to destination: shares on
//     the links out of the source and into the destination sum to 1, every
//     other node passes on what it receives, and (all paths equally long)
//     the shares sum to the number of hops;
//   * coin routes: message m of a pair takes the packet model's route
//     (CoinPaths::choice), or an even split over the pair's k routes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/core/time.hpp"
#include "fabricsim/net/flow_network.hpp"
#include "fabricsim/net/flow_paths.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {
namespace {

using core::SimTime;

/// A small direct fabric with its route rules (not movable: the rules
/// refer to the topology).
struct Fabric {
  std::string name;
  Topology topo;
  std::unique_ptr<StateRoutes> routes;
  RoutingAlgorithm alg = RoutingAlgorithm::Dor;
  Fabric() = default;
  Fabric(Fabric&&) = delete;
};

std::unique_ptr<Fabric> torus(bool adaptive) {
  auto fp = std::make_unique<Fabric>();
  Fabric& f = *fp;
  f.name = adaptive ? "torus 5x5 adaptive" : "torus 5x5 dor";
  TorusParams p;
  p.dims = {5, 5};
  p.boards = false;
  p.link = {100.0, SimTime::from_ns(10)};
  f.topo = build_torus(p);
  f.routes = std::make_unique<StateRoutes>(f.topo, torus_rules(f.topo, p.dims, adaptive),
                                           torus_distance(f.topo, p.dims, adaptive));
  f.alg = adaptive ? RoutingAlgorithm::Adaptive : RoutingAlgorithm::Dor;
  return fp;
}

std::unique_ptr<Fabric> hammingmesh(RoutingAlgorithm alg) {
  auto fp = std::make_unique<Fabric>();
  Fabric& f = *fp;
  f.name = std::string("hammingmesh 2x2 boards 3x2 ") + (alg == RoutingAlgorithm::Dor ? "dor" : "minimal/adaptive");
  HammingMeshParams p;
  p.board_a = p.board_b = 2;
  p.x = 3;
  p.y = 2;
  p.radix = 16;
  p.host = {100.0, SimTime::from_ns(10)};
  p.fabric = p.host;
  f.topo = build_hammingmesh(p);
  f.routes = std::make_unique<StateRoutes>(f.topo, hammingmesh_rules(f.topo, p.board_a, p.board_b, p.x, p.y,
                                                                     alg == RoutingAlgorithm::Dor));
  f.alg = alg;
  return fp;
}

std::unique_ptr<Fabric> hyperx(RoutingAlgorithm alg) {
  auto fp = std::make_unique<Fabric>();
  Fabric& f = *fp;
  f.name = std::string("hyperx 3x3 ") + (alg == RoutingAlgorithm::Dor ? "dor" : "minimal/adaptive");
  HyperXParams p;
  p.x = p.y = 3;
  p.concentration = 2;
  p.radix = 16;
  p.host = {100.0, SimTime::from_ns(10)};
  p.fabric = p.host;
  f.topo = build_hyperx(p);
  f.routes = std::make_unique<StateRoutes>(f.topo, hyperx_rules(f.topo, p.x, p.y, p.concentration,
                                                                alg == RoutingAlgorithm::Dor));
  f.alg = alg;
  return fp;
}

std::unique_ptr<Fabric> dragonfly() {
  auto fp = std::make_unique<Fabric>();
  Fabric& f = *fp;
  f.name = "dragonfly minimal";
  DragonflyParams p;
  p.a = 4;
  p.p = 2;
  p.h = 2;
  p.groups = 5;
  f.topo = build_dragonfly(p);
  f.routes = std::make_unique<StateRoutes>(f.topo, dragonfly_rules(f.topo, 1));
  f.alg = RoutingAlgorithm::Minimal;
  return fp;
}

std::unique_ptr<Fabric> topoopt(RoutingAlgorithm alg) {
  auto fp = std::make_unique<Fabric>();
  Fabric& f = *fp;
  f.name = "topoopt 16 servers degree 3";
  TopoOptParams p;
  p.servers = 16;
  p.degree = 3;
  f.topo = build_topoopt(p);
  f.routes = std::make_unique<StateRoutes>(f.topo, hop_count_rules(f.topo, 8));
  f.alg = alg;
  return fp;
}

NetworkParams packet_params(const Fabric& f) {
  NetworkParams np;
  np.vcs = 8;
  np.routing = f.alg;
  np.packet_bytes = 1024;
  np.buffer_bytes = 4096;
  np.seed = 7;
  np.state_routes = f.routes.get();
  return np;
}

FlowParams flow_params(const NetworkParams& np) {
  FlowParams fp;
  static_cast<NetworkParams&>(fp) = np;
  return fp;
}

/// Bytes per link after the packet model carried `msgs` (src, dst, bytes), all posted at 0.
std::vector<std::uint64_t> packet_tx(const Topology& topo, const NetworkParams& np,
                                     const std::vector<std::tuple<EndpointId, EndpointId, std::uint64_t>>& msgs) {
  core::Simulator sim(topo.node_count());
  Network net(topo, np, sim);
  for (const auto& [s, d, b] : msgs) net.send(s, d, b, SimTime::zero());
  sim.run_until(SimTime::max(), 50'000'000);
  EXPECT_TRUE(sim.empty());
  net.finish(sim.now());
  for (const auto& m : net.messages()) EXPECT_TRUE(m.all_received());
  return net.link_stats().tx_bytes;
}

/// The same in the flow model over `paths`.
std::vector<std::uint64_t> flow_tx(const Topology& topo, const NetworkParams& np, PathProvider& paths,
                                   const std::vector<std::tuple<EndpointId, EndpointId, std::uint64_t>>& msgs) {
  core::Simulator sim(topo.node_count());
  FlowNetwork net(topo, flow_params(np), paths, sim);
  for (const auto& [s, d, b] : msgs) net.send(s, d, b, SimTime::zero());
  sim.run();
  net.finish(sim.now());
  EXPECT_EQ(net.totals().messages_delivered, msgs.size());
  return net.link_stats().tx_bytes;
}

std::set<LinkId> used(const std::vector<std::uint64_t>& tx) {
  std::set<LinkId> s;
  for (LinkId l = 0; l < tx.size(); ++l)
    if (tx[l] > 0) s.insert(l);
  return s;
}

std::set<LinkId> links_of(const FlowRoute& r) {
  std::set<LinkId> s;
  for (const FlowLink& fl : r.links) s.insert(fl.link);
  return s;
}

/// Pairs to try: every destination from a few sources.
std::vector<std::pair<EndpointId, EndpointId>> some_pairs(const Topology& topo) {
  std::vector<std::pair<EndpointId, EndpointId>> out;
  const auto n = static_cast<EndpointId>(topo.endpoint_count());
  for (EndpointId s : {EndpointId{0}, n / 3, n - 1})
    for (EndpointId d = 0; d < n; ++d)
      if (s != d) out.emplace_back(s, d);
  return out;
}

/// Follows a single path through the rules: every link must be an offered
/// move in the state reached so far, and the path must end at dst.
void expect_legal(const Fabric& f, EndpointId src, EndpointId dst, const FlowRoute& r) {
  NodeId at = f.topo.endpoint_node(src);
  std::uint8_t state = f.routes->rules().initial_state();
  std::vector<StateRoutes::Option> opts;
  for (const FlowLink& fl : r.links) {
    opts.clear();
    f.routes->options(at, state, dst, opts);
    const auto it =
        std::find_if(opts.begin(), opts.end(), [&](const StateRoutes::Option& o) { return o.link == fl.link; });
    ASSERT_NE(it, opts.end()) << f.name << ": " << src << " -> " << dst << ": link " << fl.link << " at node " << at
                              << " is not a legal move";
    at = f.topo.link(fl.link).dst;
    state = it->state;
  }
  EXPECT_EQ(at, f.topo.endpoint_node(dst)) << f.name << ": " << src << " -> " << dst;
  EXPECT_EQ(r.hops, r.links.size());
  EXPECT_EQ(r.hops, f.routes->hops(f.topo.endpoint_node(src), f.routes->rules().initial_state(), dst));
}

/// An even split is a unit flow from src to dst whose shares sum to its hops.
void expect_unit_flow(const Topology& topo, EndpointId src, EndpointId dst, const FlowRoute& r,
                      const std::string& what) {
  std::map<NodeId, double> net_out;  // out minus in
  double total = 0.0;
  std::set<LinkId> seen;
  for (const FlowLink& fl : r.links) {
    EXPECT_TRUE(seen.insert(fl.link).second) << what << ": link " << fl.link << " twice";
    EXPECT_GT(fl.weight, 0.0) << what;
    EXPECT_LE(fl.weight, 1.0 + 1e-12) << what;
    net_out[topo.link(fl.link).src] += fl.weight;
    net_out[topo.link(fl.link).dst] -= fl.weight;
    total += fl.weight;
  }
  const NodeId s = topo.endpoint_node(src), d = topo.endpoint_node(dst);
  for (const auto& [n, v] : net_out) {
    const double expect = n == s ? 1.0 : n == d ? -1.0 : 0.0;
    EXPECT_NEAR(v, expect, 1e-12) << what << ": node " << n;
  }
  EXPECT_NEAR(total, static_cast<double>(r.hops), 1e-12) << what;
}

// -------------------------------------------------------------- RulesPaths

TEST(FlowRulesPaths, TorusDimensionOrderCorrectsXThenY) {
  const auto fp = torus(false);
  const Fabric& f = *fp;
  RulesPaths paths(f.topo, *f.routes, PathSplit::Single, 0, RulePick::First);
  FlowRoute r;
  // (0,0) -> (2,2): +x, +x, +y, +y.
  paths.route(0, 12, 0, r);
  std::vector<NodeId> nodes{f.topo.endpoint_node(0)};
  for (const FlowLink& fl : r.links) nodes.push_back(f.topo.link(fl.link).dst);
  EXPECT_EQ(nodes, (std::vector<NodeId>{0, 1, 2, 7, 12}));
  EXPECT_TRUE(r.single);
  // Every pair: minimal in each ring, and no X move after a Y move.
  for (EndpointId s = 0; s < 25; ++s)
    for (EndpointId d = 0; d < 25; ++d) {
      if (s == d) continue;
      paths.route(s, d, 0, r);
      const auto ring = [](std::uint32_t a, std::uint32_t b) { return std::min((a + 5 - b) % 5, (b + 5 - a) % 5); };
      EXPECT_EQ(r.hops, ring(s % 5, d % 5) + ring(s / 5, d / 5)) << s << " -> " << d;
      bool y_seen = false;
      for (const FlowLink& fl : r.links) {
        const Link& l = f.topo.link(fl.link);
        const bool y_move = l.src % 5 == l.dst % 5;
        if (y_move) y_seen = true;
        EXPECT_FALSE(!y_move && y_seen) << s << " -> " << d << ": X after Y";
      }
      expect_legal(f, s, d, r);
    }
}

TEST(FlowRulesPaths, OneMessageCrossesTheLinksOfItsRouteInThePacketModel) {
  std::vector<std::unique_ptr<Fabric>> fabrics;
  fabrics.push_back(torus(false));
  fabrics.push_back(hammingmesh(RoutingAlgorithm::Dor));
  fabrics.push_back(hammingmesh(RoutingAlgorithm::Minimal));
  fabrics.push_back(hyperx(RoutingAlgorithm::Dor));
  fabrics.push_back(hyperx(RoutingAlgorithm::Minimal));
  fabrics.push_back(dragonfly());
  fabrics.push_back(topoopt(RoutingAlgorithm::Minimal));
  for (const auto& fp : fabrics) {
    const Fabric& f = *fp;
    const NetworkParams np = packet_params(f);
    RulesPaths paths(f.topo, *f.routes, PathSplit::Single, 0, RulePick::First);
    FlowRoute r;
    for (const auto& [s, d] : some_pairs(f.topo)) {
      paths.route(s, d, 0, r);
      expect_legal(f, s, d, r);
      EXPECT_EQ(used(packet_tx(f.topo, np, {{s, d, 3000}})), links_of(r)) << f.name << ": " << s << " -> " << d;
    }
  }
}

TEST(FlowRulesPaths, BatchPutsThePacketModelsBytesOnEveryLink) {
  // Many messages at once (queues and credits in the packet model, shared
  // rates in the flow model): per-link bytes depend only on the routes.
  std::vector<std::unique_ptr<Fabric>> fabrics;
  fabrics.push_back(torus(false));
  fabrics.push_back(hammingmesh(RoutingAlgorithm::Minimal));
  fabrics.push_back(hyperx(RoutingAlgorithm::Dor));
  fabrics.push_back(topoopt(RoutingAlgorithm::Minimal));
  for (const auto& fp : fabrics) {
    const Fabric& f = *fp;
    const NetworkParams np = packet_params(f);
    util::RandomStream rng(3, 4);
    std::vector<std::tuple<EndpointId, EndpointId, std::uint64_t>> msgs;
    const auto n = static_cast<std::uint32_t>(f.topo.endpoint_count());
    for (int i = 0; i < 60; ++i) {
      const auto s = static_cast<EndpointId>(rng.below(n));
      auto d = static_cast<EndpointId>(rng.below(n - 1));
      if (d >= s) ++d;
      msgs.emplace_back(s, d, 1 + rng.below(20000));
    }
    RulesPaths paths(f.topo, *f.routes, PathSplit::Single, np.ecmp_seed, RulePick::First);
    const auto p = packet_tx(f.topo, np, msgs);
    const auto q = flow_tx(f.topo, np, paths, msgs);
    for (LinkId l = 0; l < f.topo.link_count(); ++l)
      EXPECT_NEAR(static_cast<double>(q[l]), static_cast<double>(p[l]), 1.0 + 1e-9 * static_cast<double>(p[l]))
          << f.name << ": link " << l;
  }
}

TEST(FlowRulesPaths, HashedSingleRoutesAreLegalAndSpread) {
  // RulePick::Hash (ecmp, the analytic model's adaptive): legal, and
  // different keys take different routes where the rules offer several.
  std::vector<std::unique_ptr<Fabric>> fabrics;
  fabrics.push_back(torus(true));
  fabrics.push_back(hammingmesh(RoutingAlgorithm::Adaptive));
  fabrics.push_back(topoopt(RoutingAlgorithm::Ecmp));
  for (const auto& fp : fabrics) {
    const Fabric& f = *fp;
    RulesPaths paths(f.topo, *f.routes, PathSplit::Single, 11, RulePick::Hash);
    FlowRoute r;
    bool spread = false;
    for (const auto& [s, d] : some_pairs(f.topo)) {
      std::set<std::set<LinkId>> distinct;
      for (std::uint64_t key = 0; key < 16; ++key) {
        paths.route(s, d, key, r);
        expect_legal(f, s, d, r);
        distinct.insert(links_of(r));
      }
      if (distinct.size() > 1) spread = true;
    }
    EXPECT_TRUE(spread) << f.name;
  }
}

TEST(FlowRulesPaths, EvenSplitIsAUnitFlowOverLegalMoves) {
  std::vector<std::unique_ptr<Fabric>> fabrics;
  fabrics.push_back(torus(true));
  fabrics.push_back(torus(false));
  fabrics.push_back(hammingmesh(RoutingAlgorithm::Adaptive));
  fabrics.push_back(hyperx(RoutingAlgorithm::Adaptive));
  fabrics.push_back(dragonfly());
  fabrics.push_back(topoopt(RoutingAlgorithm::Spray));
  for (const auto& fp : fabrics) {
    const Fabric& f = *fp;
    RulesPaths even(f.topo, *f.routes, PathSplit::Even);
    RulesPaths one(f.topo, *f.routes, PathSplit::Single, 5, RulePick::Hash);
    FlowRoute r, p;
    bool split = false;
    for (const auto& [s, d] : some_pairs(f.topo)) {
      even.route(s, d, 0, r);
      const std::string what = f.name + ": " + std::to_string(s) + " -> " + std::to_string(d);
      expect_unit_flow(f.topo, s, d, r, what);
      EXPECT_EQ(r.hops, f.routes->hops(f.topo.endpoint_node(s), f.routes->rules().initial_state(), d)) << what;
      if (!r.single) split = true;
      if (r.single) {
        EXPECT_EQ(r.links.size(), r.hops) << what;
      }
      // Every single path the rules allow lies within the split.
      const std::set<LinkId> all = links_of(r);
      for (std::uint64_t key = 0; key < 8; ++key) {
        one.route(s, d, key, p);
        for (const FlowLink& fl : p.links) EXPECT_TRUE(all.count(fl.link)) << what;
      }
      EXPECT_GT(r.bottleneck_gbps, 0.0) << what;
    }
    if (f.alg != RoutingAlgorithm::Dor) {
      EXPECT_TRUE(split) << f.name;
    }
  }
}

TEST(FlowRulesPaths, TorusAdaptiveSplitsOverDistinctLinksNotMoves) {
  // Duato's rules offer the dimension-order link twice (as the escape move
  // and as an adaptive move): the share goes to the links, not the moves.
  // From (0,0) to (1,1): half over +x, half over +y, then on to (1,1).
  const auto fp = torus(true);
  const Fabric& f = *fp;
  RulesPaths even(f.topo, *f.routes, PathSplit::Even);
  FlowRoute r;
  even.route(0, 6, 0, r);
  ASSERT_EQ(r.hops, 2u);
  ASSERT_EQ(r.links.size(), 4u);
  for (const FlowLink& fl : r.links) EXPECT_DOUBLE_EQ(fl.weight, 0.5) << "link " << fl.link;
  EXPECT_FALSE(r.single);
}

TEST(FlowRulesPaths, HammingMeshRoutesDifferFromPlainShortestPaths) {
  // The rules (north-last on boards, up/down in the networks) rule out some
  // minimal paths: the breadth-first provider the flow model used before
  // takes links no legal route takes.
  const auto fp = hammingmesh(RoutingAlgorithm::Minimal);
  const Fabric& f = *fp;
  RulesPaths rules(f.topo, *f.routes, PathSplit::Even);
  ShortestPaths bfs(f.topo, PathSplit::Even);
  FlowRoute a, b;
  std::size_t differ = 0;
  for (EndpointId s = 0; s < f.topo.endpoint_count(); ++s)
    for (EndpointId d = 0; d < f.topo.endpoint_count(); ++d) {
      if (s == d) continue;
      rules.route(s, d, 0, a);
      bfs.route(s, d, 0, b);
      const std::set<LinkId> la = links_of(a), lb = links_of(b);
      // Legal routes here are minimal: within the minimal paths.
      for (LinkId l : la) EXPECT_TRUE(lb.count(l)) << s << " -> " << d;
      if (la != lb) ++differ;
    }
  EXPECT_GT(differ, 0u);
}

// -------------------------------------------------------------- ListedRoutes

struct CoinFabric {
  Topology topo;
  std::unique_ptr<StateRoutes> routes;
  std::unique_ptr<CoinPaths> coins;
  CoinFabric() {
    TopoOptParams tp;
    tp.servers = 16;
    tp.degree = 3;
    topo = build_topoopt(tp);
    coins = std::make_unique<CoinPaths>(topo, 3);
    routes = std::make_unique<StateRoutes>(topo, hop_count_rules(topo, 8));
  }
};

TEST(FlowCoinRoutes, EachMessageTakesThePacketModelsRoute) {
  CoinFabric c;
  NetworkParams np;
  np.vcs = 8;
  np.packet_bytes = 1024;
  np.buffer_bytes = 2048;
  np.seed = 13;
  np.state_routes = c.routes.get();
  np.listed_paths = c.coins.get();
  // 40 messages of one pair with 3 routes (5 = 1+1+3 in three orders with
  // jumps {1, 3, 7}), and a random batch.
  std::vector<std::tuple<EndpointId, EndpointId, std::uint64_t>> msgs;
  for (int i = 0; i < 40; ++i) msgs.emplace_back(0, 5, 3000 + i);
  util::RandomStream rng(1, 2);
  for (int i = 0; i < 60; ++i) {
    const auto s = static_cast<EndpointId>(rng.below(16));
    auto d = static_cast<EndpointId>(rng.below(15));
    if (d >= s) ++d;
    msgs.emplace_back(s, d, 1 + rng.below(9000));
  }
  ASSERT_EQ(c.coins->count(0, 5), 3u);
  ListedRoutes paths(c.topo, *c.coins, PathSplit::Single, np.seed);
  const auto p = packet_tx(c.topo, np, msgs);
  const auto q = flow_tx(c.topo, np, paths, msgs);
  for (LinkId l = 0; l < c.topo.link_count(); ++l)
    EXPECT_NEAR(static_cast<double>(q[l]), static_cast<double>(p[l]), 1.0 + 1e-9 * static_cast<double>(p[l]))
        << "link " << l;
  // The pair's messages spread over its first links (not all on one route).
  std::size_t first_links = 0;
  for (LinkId l : c.topo.node(c.topo.endpoint_node(0)).out) first_links += p[l] > 0 ? 1 : 0;
  EXPECT_GT(first_links, 1u);
  // route_message is the route of CoinPaths::choice.
  FlowRoute r;
  std::vector<LinkId> expect;
  for (std::uint32_t id = 0; id < 10; ++id) {
    paths.route_message(0, 5, 0, id, r);
    expect.clear();
    c.coins->path(0, 5, c.coins->choice(0, 5, np.seed, id), expect);
    std::vector<LinkId> got;
    for (const FlowLink& fl : r.links) got.push_back(fl.link);
    EXPECT_EQ(got, expect) << "message " << id;
    EXPECT_TRUE(r.single);
    EXPECT_EQ(r.hops, expect.size());
  }
}

TEST(FlowCoinRoutes, EvenSplitsOverThePairsRoutes) {
  CoinFabric c;
  ListedRoutes paths(c.topo, *c.coins, PathSplit::Even, 1);
  FlowRoute r;
  std::vector<LinkId> links;
  for (EndpointId d = 1; d < 16; ++d) {
    paths.route_message(0, d, 0, 0, r);
    const std::size_t k = c.coins->count(0, d);
    std::map<LinkId, double> expect;
    std::size_t longest = 0, total = 0;
    for (std::size_t i = 0; i < k; ++i) {
      links.clear();
      c.coins->path(0, d, i, links);
      for (LinkId l : links) expect[l] += 1.0 / static_cast<double>(k);
      longest = std::max(longest, links.size());
      total += links.size();
    }
    std::map<LinkId, double> got;
    for (const FlowLink& fl : r.links) {
      EXPECT_FALSE(got.count(fl.link)) << "link " << fl.link << " twice";
      got[fl.link] = fl.weight;
    }
    ASSERT_EQ(got.size(), expect.size()) << "0 -> " << d;
    for (const auto& [l, w] : expect) EXPECT_NEAR(got[l], w, 1e-12) << "0 -> " << d << " link " << l;
    EXPECT_EQ(r.hops, longest);
    EXPECT_EQ(r.single, k == 1);
    double sum = 0.0;
    for (const FlowLink& fl : r.links) sum += fl.weight;
    EXPECT_NEAR(sum, static_cast<double>(total) / static_cast<double>(k), 1e-12);
  }
}

}  // namespace
}  // namespace fabricsim::net

namespace fabricsim::net {
namespace {

TEST(FlowTablePaths, DmodKPutsThePacketModelsBytesOnEveryLink) {
  // D-mod-k is deterministic per destination: a batch of messages in the
  // flow model must load exactly the links the packet model's D-mod-k does,
  // on a two-level and a three-level fat tree (and a hash would not: the
  // flow model once took a hashed path here, 27% off on a DNN job).
  for (std::uint32_t endpoints : {32u, 128u}) {
    FatTreeParams ftp;
    ftp.endpoints = endpoints;
    ftp.radix = 8;
    const Topology topo = build_fat_tree(ftp);
    NetworkParams np;
    np.routing = RoutingAlgorithm::DmodK;
    np.buffer_bytes = 1 << 20;
    util::RandomStream rng(5, 6);
    std::vector<std::tuple<EndpointId, EndpointId, std::uint64_t>> msgs;
    for (int i = 0; i < 80; ++i) {
      const auto s = static_cast<EndpointId>(rng.below(endpoints));
      auto d = static_cast<EndpointId>(rng.below(endpoints - 1));
      if (d >= s) ++d;
      msgs.emplace_back(s, d, 1 + rng.below(30000));
    }
    const RoutingTable table(topo);
    TablePaths dmodk(topo, table, PathSplit::Single, 0, true);
    TablePaths hashed(topo, table, PathSplit::Single, 0, false);
    const auto p = packet_tx(topo, np, msgs);
    const auto q = flow_tx(topo, np, dmodk, msgs);
    const auto h = flow_tx(topo, np, hashed, msgs);
    std::size_t differ = 0;
    for (LinkId l = 0; l < topo.link_count(); ++l) {
      EXPECT_NEAR(static_cast<double>(q[l]), static_cast<double>(p[l]), 1.0 + 1e-9 * static_cast<double>(p[l]))
          << endpoints << " endpoints: link " << l;
      if (std::abs(static_cast<double>(h[l]) - static_cast<double>(p[l])) > 1.0) ++differ;
    }
    EXPECT_GT(differ, 0u) << "the hashed paths should differ somewhere (else this test shows nothing)";
  }
}

}  // namespace
}  // namespace fabricsim::net
