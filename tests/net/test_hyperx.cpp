// The switch-based 2D HyperX (build_hyperx, hyperx_rules, hyperx_distance):
// the reading of the HammingMesh spec's HyperX as routers (§6 ⚠, §10.3).
//
// Expected values are derived here from the construction: x*y routers of
// c + (x-1) + (y-1) ports, x*y*(x-1 + y-1)/2 router cables plus one cable
// per endpoint, a diameter of 4 cables (endpoint, two router hops,
// endpoint), the spec's cost model (§4.1) applied to those counts, routes of
// (differing coordinates + 2) links from endpoint to endpoint, and an
// acyclic channel dependency graph; the computed distances are compared
// with the route tables exhaustively, and a packet-level alltoall with the
// fluid bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/fluid.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::net {
namespace {

using core::SimTime;

struct Shape {
  std::uint32_t x, y, c;
};

HyperXParams params(const Shape& s, std::uint32_t radix = 64) {
  HyperXParams p;
  p.x = s.x;
  p.y = s.y;
  p.concentration = s.c;
  p.radix = radix;
  p.host = p.fabric = LinkParams{400.0, SimTime::from_ns(20)};
  return p;
}

std::string name(const Shape& s) {
  return std::to_string(s.x) + "x" + std::to_string(s.y) + " c" + std::to_string(s.c);
}

// Router (X, Y) of a shape: node endpoints + Y*x + X.
NodeId router(const Shape& s, std::uint32_t X, std::uint32_t Y) { return s.x * s.y * s.c + Y * s.x + X; }

const std::vector<Shape> kShapes{{4, 4, 1}, {4, 3, 2}, {3, 5, 1}, {5, 1, 2}, {1, 4, 3}, {1, 1, 3}, {2, 2, 4}, {8, 8, 1}};

TEST(HyperX, StructureFollowsTheConstruction) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(name(s));
    const Topology t = build_hyperx(params(s));
    const std::uint64_t routers = std::uint64_t{s.x} * s.y, endpoints = routers * s.c;
    const std::uint64_t ports = s.c + (s.x - 1) + (s.y - 1);
    const std::uint64_t router_cables = routers * ((s.x - 1) + (s.y - 1)) / 2;
    EXPECT_EQ(t.kind, "hyperx");
    EXPECT_EQ(t.endpoint_count(), endpoints);
    EXPECT_EQ(t.switch_count(), routers);
    EXPECT_EQ(t.physical_switches(), routers);
    EXPECT_EQ(t.node_count(), endpoints + routers);
    EXPECT_EQ(t.link_count(), 2 * (router_cables + endpoints));
    EXPECT_EQ(t.count_cables(CableType::DAC), endpoints);
    EXPECT_EQ(t.count_cables(CableType::AoC), router_cables);
    EXPECT_EQ(t.count_cables(CableType::None), 0u);
    EXPECT_EQ(t.count_links(LinkClass::Host), 2 * endpoints);
    EXPECT_EQ(t.count_links(LinkClass::Fabric), 2 * router_cables);
    // Every router: its c endpoints, then one cable to every other router
    // of its row and of its column, and nothing else.
    for (std::uint32_t Y = 0; Y < s.y; ++Y)
      for (std::uint32_t X = 0; X < s.x; ++X) {
        const Node& r = t.node(router(s, X, Y));
        ASSERT_EQ(r.kind, NodeKind::Switch);
        ASSERT_EQ(r.out.size(), ports);
        std::multiset<NodeId> peers, want;
        for (std::uint32_t k = 0; k < s.c; ++k) {
          EXPECT_EQ(t.link(r.out[k]).dst, (Y * s.x + X) * s.c + k);
          EXPECT_EQ(t.link(r.out[k]).cls, LinkClass::Host);
          EXPECT_FALSE(t.node(t.link(r.out[k]).dst).forwards);
        }
        for (std::size_t p = s.c; p < r.out.size(); ++p) {
          peers.insert(t.link(r.out[p]).dst);
          EXPECT_EQ(t.link(r.out[p]).cls, LinkClass::Fabric);
        }
        for (std::uint32_t X2 = 0; X2 < s.x; ++X2)
          if (X2 != X) want.insert(router(s, X2, Y));
        for (std::uint32_t Y2 = 0; Y2 < s.y; ++Y2)
          if (Y2 != Y) want.insert(router(s, X, Y2));
        EXPECT_EQ(peers, want) << r.name;
      }
    // Diameter in cables: endpoint, one router hop per differing
    // coordinate, endpoint; only 2D grids have pairs differing in both.
    // (The builder states it, so that 128 x 128 routers need no BFS: the
    // BFS checks it here.)
    const int dims = (s.x > 1 ? 1 : 0) + (s.y > 1 ? 1 : 0);
    EXPECT_EQ(t.measured_diameter(0, 1), 2 + dims);
    EXPECT_EQ(t.diameter(), t.measured_diameter(0, 1));
  }
  EXPECT_EQ(build_hyperx(params({32, 32, 1})).measured_diameter(0, 1), 4);
}

// The paper's 16k switch-based HyperX, 128 x 128 routers of one endpoint:
// 255 ports a router, priced as the 2-level fat tree of 64-port boxes that
// makes a 256-port switch (spec §4.3's Hx1Mesh row networks: 8 leaves of 32
// down / 32 up and 4 spines, 256 AoC cables inside), here derived by hand.
TEST(HyperX, RoutersOfMorePortsThanTheBoxArePricedAsTwoLevelTrees) {
  EXPECT_EQ(switch_boxes(64, 64).boxes, 1u);
  EXPECT_EQ(switch_boxes(64, 64).cables, 0u);
  EXPECT_EQ(switch_boxes(255, 64).boxes, 8u + 4u);
  EXPECT_EQ(switch_boxes(255, 64).cables, 8u * 32);
  EXPECT_EQ(switch_boxes(65, 64).boxes, 3u + 2u);  // 3 leaves (96 up-links) need 2 spines
  EXPECT_EQ(switch_boxes(65, 64).cables, 3u * 32);
  EXPECT_EQ(switch_boxes(2048, 64).boxes, 64u + 32u);
  EXPECT_THROW(switch_boxes(2049, 64), util::ConfigError);
  // 40 x 40 routers of one endpoint (the same path as the 128 x 128 input,
  // inputs/hyperx_routers_large.toml, which ctest's info run prices): 79
  // ports, 3 leaves of 32 down / 32 up and 2 spines, 96 inner cables.
  HyperXParams p = params({40, 40, 1});
  p.radix = 79;
  const Topology t = build_hyperx(p);
  const StructureReport r = structure_report(t, CostModel{16, 14280, 272, 603, 64});
  const double routers = 40.0 * 40, dac = routers, aoc = routers * 78 / 2, inner = routers * 96;
  EXPECT_EQ(r.physical_switches, routers * 5);
  EXPECT_EQ(r.box_cables, inner);
  EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::DAC)], dac);
  EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::AoC)], aoc);
  EXPECT_DOUBLE_EQ(r.cost_usd, 16 * (routers * 5 * 14280 + dac * 272 + (aoc + inner) * 603));
  EXPECT_EQ(r.diameter, 4);
  // One box per router when the box has the ports (the small input).
  const StructureReport small = structure_report(build_hyperx(params({32, 32, 1})), CostModel{16, 14280, 272, 603, 64});
  EXPECT_EQ(small.physical_switches, 1024u);
  EXPECT_EQ(small.box_cables, 0u);
}

TEST(HyperX, SmallInputCountsAndCost) {
  // inputs/hyperx_routers_small.toml: 32 x 32 routers, one endpoint each,
  // 63 ports per router (<= 64: one switch each), priced over 16 planes.
  const Shape s{32, 32, 1};
  const Topology t = build_hyperx(params(s));
  const double routers = 32 * 32, dac = 1024, aoc = 32.0 * 32 * (31 + 31) / 2;
  EXPECT_EQ(aoc, 31744);
  const double per_plane = routers * 14280 + dac * 272 + aoc * 603;  // spec §4.1
  EXPECT_DOUBLE_EQ(per_plane, 34042880);
  for (std::uint32_t planes : {1u, 4u, 16u}) {
    const StructureReport r = structure_report(t, CostModel{planes, 14280, 272, 603});
    EXPECT_EQ(r.switches, 1024u);
    EXPECT_EQ(r.physical_switches, 1024u);
    EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::DAC)], 1024u);
    EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::AoC)], 31744u);
    EXPECT_DOUBLE_EQ(r.cost_usd, planes * per_plane);
    EXPECT_EQ(r.diameter, 4);
    // Lower 16 rows against the upper 16: 16 x 16 column cables in each of
    // 32 columns, against 512 injection links: y / (2c) = 16.
    EXPECT_EQ(r.bisection_cables, 32u * 16 * 16);
    EXPECT_DOUBLE_EQ(r.bisection_relative, 16.0);
  }
  // With concentration the relative bisection is y / (2c).
  const StructureReport r = structure_report(build_hyperx(params({6, 4, 4})), CostModel{});
  EXPECT_EQ(r.bisection_cables, 6u * 2 * 2);
  EXPECT_DOUBLE_EQ(r.bisection_relative, 4.0 / 8.0);
}

TEST(HyperX, BadParametersThrowNamingTheKey) {
  const auto expect_key = [](const HyperXParams& p, const std::string& key) {
    try {
      (void)build_hyperx(p);
      ADD_FAILURE() << "no error for " << key;
    } catch (const util::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  expect_key(params({0, 4, 1}), "topology.x");
  expect_key(params({4, 0, 1}), "topology.y");
  expect_key(params({4, 4, 0}), "topology.concentration");
  expect_key(params({1, 1, 1}), "topology.x");  // a single endpoint
  // 128 x 128 routers need 1 + 127 + 127 = 255 ports; 32 x 32 with 16
  // endpoints 78: more than one 64-port switch.
  expect_key(params({128, 128, 1}), "topology.radix");
  expect_key(params({32, 32, 16}), "topology.radix");
  EXPECT_NO_THROW(build_hyperx(params({22, 22, 22})));  // 22 + 21 + 21 = 64 ports
  expect_key(params({22, 22, 23}), "topology.radix");
  expect_key(params({4, 4, 1}, 1), "topology.radix");
}

// ----------------------------------------------------------------- routing

// The same rules with every move on VC 0: shows the check can fail.
class OneVc final : public RouteRules {
 public:
  explicit OneVc(std::unique_ptr<RouteRules> inner) : inner_(std::move(inner)) {}
  std::uint8_t state_count() const override { return inner_->state_count(); }
  std::uint8_t initial_state() const override { return inner_->initial_state(); }
  std::uint8_t step(NodeId at, std::uint8_t s, LinkId l, std::uint32_t t, unsigned a) const override {
    return inner_->step(at, s, l, t, a);
  }
  std::uint8_t vc(std::uint8_t) const override { return 0; }
  std::uint8_t vcs() const override { return 1; }
  std::string describe() const override { return "one VC"; }

 private:
  std::unique_ptr<RouteRules> inner_;
};

void expect_acyclic(const StateRoutes& r) {
  std::size_t unreachable = 1;
  const DependencyReport dep = check_state_routes(r, false, &unreachable);
  EXPECT_EQ(unreachable, 0u) << r.rules().describe();
  EXPECT_TRUE(dep.acyclic) << r.rules().describe() << ": cycle of " << dep.cycle.size() << " channels";
  EXPECT_GT(dep.dependencies, 0u);
}

TEST(HyperX, RoutesAreMinimalAndDeadlockFree) {
  for (const Shape& s : kShapes) {
    const Topology t = build_hyperx(params(s));
    for (bool dor : {false, true}) {
      SCOPED_TRACE(name(s) + (dor ? " dor" : " adaptive"));
      const StateRoutes table(t, hyperx_rules(t, s.x, s.y, s.c, dor));
      const StateRoutes comp(t, hyperx_rules(t, s.x, s.y, s.c, dor), hyperx_distance(t, s.x, s.y, s.c, dor));
      EXPECT_EQ(table.rules().vcs(), 2);
      expect_acyclic(table);
      expect_acyclic(comp);
      // Endpoint to endpoint: the host cable, one router hop per differing
      // coordinate, the host cable.
      std::vector<StateRoutes::Option> opts;
      for (EndpointId a = 0; a < t.endpoint_count(); ++a)
        for (EndpointId b = 0; b < t.endpoint_count(); ++b) {
          if (a == b) continue;
          const std::uint32_t ra = a / s.c, rb = b / s.c;
          const unsigned differ = (ra % s.x != rb % s.x ? 1u : 0u) + (ra / s.x != rb / s.x ? 1u : 0u);
          ASSERT_EQ(table.hops(t.endpoint_node(a), 0, b), differ + 2);
          ASSERT_EQ(comp.hops(t.endpoint_node(a), 0, b), differ + 2);
          // At the source's router: both productive hops (adaptive) or the
          // X hop first (dimension order).
          opts.clear();
          comp.options(router(s, ra % s.x, ra / s.x), 0, b, opts);
          const unsigned expect = differ == 0 ? 1 : dor && differ == 2 ? 1 : differ;
          ASSERT_EQ(opts.size(), expect);
          if (dor && differ == 2) {
            EXPECT_EQ(t.link(opts[0].link).dst, router(s, rb % s.x, ra / s.x));
          }
        }
    }
    if (s.x >= 2 && s.y >= 2) {
      // One VC, either dimension first: around a square of routers A, B, C,
      // D, a packet on A->B may wait for B->C (A to C), one on B->C for
      // C->D (B to D), and so on back to A->B: a cycle.
      const StateRoutes one(t, std::make_unique<OneVc>(hyperx_rules(t, s.x, s.y, s.c, false)));
      EXPECT_FALSE(check_state_routes(one, false, nullptr).acyclic) << name(s);
    }
  }
}

// Computed distances against the tables (the pattern of
// test_route_distance.cpp): equal hops and the same offered moves at every
// (node, state) a packet can reach, never below the tables elsewhere.
TEST(HyperX, ComputedDistanceMatchesTheTables) {
  for (const Shape& s : kShapes) {
    const Topology t = build_hyperx(params(s));
    for (bool dor : {false, true}) {
      SCOPED_TRACE(name(s) + (dor ? " dor" : " adaptive"));
      const StateRoutes table(t, hyperx_rules(t, s.x, s.y, s.c, dor));
      const StateRoutes comp(t, hyperx_rules(t, s.x, s.y, s.c, dor), hyperx_distance(t, s.x, s.y, s.c, dor));
      EXPECT_TRUE(comp.computed());
      EXPECT_FALSE(table.computed());
      const std::size_t S = table.rules().state_count();
      std::vector<StateRoutes::Option> a, b;
      std::size_t reachable = 0;
      for (std::uint32_t x = 0; x < table.target_count(); ++x) {
        std::vector<std::uint8_t> seen(t.node_count() * S, 0);
        std::vector<std::pair<NodeId, std::uint8_t>> work;
        for (EndpointId src = 0; src < t.endpoint_count(); ++src) {
          const NodeId n = t.endpoint_node(src);
          seen[n * S] = 1;
          work.emplace_back(n, 0);
        }
        while (!work.empty()) {
          auto [n, st] = work.back();
          work.pop_back();
          ++reachable;
          ASSERT_EQ(comp.hops(n, st, x), table.hops(n, st, x)) << t.node(n).name << " state " << int(st) << " -> " << x;
          a.clear();
          b.clear();
          table.options(n, st, x, a);
          comp.options(n, st, x, b);
          ASSERT_EQ(a.size(), b.size()) << t.node(n).name << " state " << int(st) << " -> " << x;
          for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i].link, b[i].link);
            EXPECT_EQ(a[i].state, b[i].state);
            EXPECT_EQ(a[i].vc, b[i].vc);
          }
          for (const auto& o : a) {
            const NodeId v = t.link(o.link).dst;
            if (!seen[v * S + o.state]) {
              seen[v * S + o.state] = 1;
              work.emplace_back(v, o.state);
            }
          }
        }
        for (NodeId n = 0; n < t.node_count(); ++n)
          for (std::uint8_t st = 0; st < S; ++st) ASSERT_GE(comp.hops(n, st, x), table.hops(n, st, x));
      }
      EXPECT_GT(reachable, t.endpoint_count());
    }
  }
}

TEST(HyperX, RulesRefuseAnotherTopology) {
  const Topology t = build_hyperx(params({4, 4, 1}));
  EXPECT_THROW(hyperx_rules(t, 4, 4, 2, false), util::ConfigError);
  EXPECT_THROW(hyperx_distance(t, 4, 5, 1, false), util::ConfigError);
  HammingMeshParams hm;
  hm.board_a = hm.board_b = 1;
  hm.x = hm.y = 4;
  const Topology h = build_hammingmesh(hm);
  EXPECT_THROW(hyperx_rules(h, 4, 4, 1, false), util::ConfigError);
}

// --------------------------------------------------------- packets vs fluid

/// Runs the messages and returns payload * 8 / makespan / (endpoints * rate).
double simulate(const Topology& t, const StateRoutes& routes, NetworkParams np,
                const std::vector<workload::PlannedMessage>& plan) {
  np.state_routes = &routes;
  core::Simulator sim(t.node_count());
  Network network(t, np, sim);
  for (const auto& m : plan) network.send(m.src, m.dst, m.bytes, m.post);
  sim.run();
  EXPECT_TRUE(sim.empty());
  double payload = 0;
  SimTime first = SimTime::max(), last = SimTime::zero();
  for (const auto& m : network.messages()) {
    EXPECT_TRUE(m.all_received());
    payload += static_cast<double>(m.bytes);
    first = std::min(first, m.post_time);
    last = std::max(last, m.end_time);
  }
  const double gbps = t.link(t.node(t.endpoint_node(0)).out[0]).bandwidth_gbps;
  return payload * 8.0 / (last - first).ns() / (gbps * static_cast<double>(t.endpoint_count()));
}

TEST(HyperX, AlltoallMeetsTheFluidBound) {
  // 8x8 routers, one endpoint each: 14 router ports for one endpoint, so
  // the endpoint links are the bottleneck and the bound is the payload
  // share of the wire, 4032 / 4096 of injection.  The shift schedule (all
  // 63 rounds): one permutation at a time, each on at most two paths.
  {
    const Shape s{8, 8, 1};
    const Topology t = build_hyperx(params(s));
    const StateRoutes routes(t, hyperx_rules(t, 8, 8, 1, false), hyperx_distance(t, 8, 8, 1, false));
    NetworkParams np;  // 4096-byte packets, 64-byte headers
    np.vcs = 2;
    np.routing = RoutingAlgorithm::Adaptive;
    workload::TrafficParams tp;
    tp.pattern = workload::Pattern::Alltoall;
    tp.messages = 0;
    tp.message_bytes = 4032 * 16;  // 16 full packets
    const auto plan = workload::plan_traffic(tp, t, np);
    ASSERT_EQ(plan.size(), 64u * 63);
    const auto est = workload::estimate_fluid(t, routes, plan, np);
    EXPECT_NEAR(est.throughput_bound, 4032.0 / 4096, 1e-9);
    const double sim = simulate(t, routes, np, plan);
    std::printf("[hyperx] 8x8 c1 shift alltoall: bound %.4f simulated %.4f\n", est.throughput_bound, sim);
    EXPECT_LE(sim, est.throughput_bound * (1 + 1e-9));
    EXPECT_GE(sim, 0.97 * est.throughput_bound);
  }
  // 4x4 routers of 8 endpoints: the router links are the bottleneck.  All
  // 128 x 127 messages posted at once (the NICs interleave them: uniform
  // traffic).  In units of one message per ordered endpoint pair, a router
  // sends c^2 = 64 units to each of the 6 routers one hop away and of the 9
  // two hops away: 64 x (6 + 2 x 9) = 1,536 unit-hops over router links,
  // 16 x 1,536 in all, spread evenly (the grid is symmetric in X and Y, and
  // the fluid splits the two orders equally) over 16 x 6 directed router
  // links: 256 units each, while an endpoint link carries 127.  The bound
  // is 127/256 of the wire rate.  Dimension order loads them alike: a row
  // link A->B carries A's traffic to the 4 routers of B's column, a column
  // link into D the traffic of the 4 routers of A's row to D, 4 x 64 = 256.
  for (bool dor : {false, true}) {
    const Shape s{4, 4, 8};
    const Topology t = build_hyperx(params(s));
    const StateRoutes routes(t, hyperx_rules(t, 4, 4, 8, dor), hyperx_distance(t, 4, 4, 8, dor));
    NetworkParams np;
    np.vcs = 2;
    np.routing = dor ? RoutingAlgorithm::Dor : RoutingAlgorithm::Adaptive;
    std::vector<workload::PlannedMessage> plan;
    for (EndpointId a = 0; a < 128; ++a)
      for (EndpointId b = 0; b < 128; ++b)
        if (a != b) plan.push_back({a, b, 4032 * 96, SimTime::zero()});
    const auto est = workload::estimate_fluid(t, routes, plan, np);
    EXPECT_NEAR(est.throughput_bound, 127.0 / 256 * 4032 / 4096, 1e-9);
    const double sim = simulate(t, routes, np, plan);
    std::printf("[hyperx] 4x4 c8 uniform alltoall, %s: bound %.4f simulated %.4f\n", dor ? "dor" : "adaptive",
                est.throughput_bound, sim);
    EXPECT_LE(sim, est.throughput_bound * (1 + 1e-9));
    // Measured: 0.987 of the bound with dimension order, 0.964 adaptive
    // (local choices at the first router unbalance the second hops a
    // little, where uniform traffic is already balanced by either order).
    EXPECT_GE(sim, (dor ? 0.97 : 0.95) * est.throughput_bound);
  }
}

}  // namespace
}  // namespace fabricsim::net
