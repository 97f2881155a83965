// The fluid estimate: exact link loads on a hand-checked case, and an upper
// bound that packet-level runs never beat (and meet on an incast).
#include <OsiClpSolverInterface.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <tuple>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/workload/fluid.hpp"
#include "fabricsim/workload/traffic.hpp"

using namespace fabricsim;
using core::SimTime;

namespace {
net::Topology tree(std::uint32_t endpoints, std::uint32_t radix, std::uint32_t down = 0) {
  net::FatTreeParams p;
  p.endpoints = endpoints;
  p.radix = radix;
  p.down_ports = down;
  p.host = p.fabric = net::LinkParams{400.0, SimTime::from_ns(20)};
  return net::build_fat_tree(p);
}

/// Runs the messages at packet level; their records after the run.
std::vector<net::Message> run_packets(const net::Topology& topo, const net::NetworkParams& np,
                                      const std::vector<workload::PlannedMessage>& plan) {
  core::Simulator sim(topo.node_count());
  net::Network network(topo, np, sim);
  for (const auto& m : plan) network.send(m.src, m.dst, m.bytes, m.post);
  sim.run();
  return network.messages();
}

/// Runs the messages and returns payload * 8 / makespan / (endpoints * 400 Gb/s).
double simulate(const net::Topology& topo, const net::NetworkParams& np,
                const std::vector<workload::PlannedMessage>& plan) {
  double payload = 0;
  SimTime first = SimTime::max(), last = SimTime::zero();
  for (const auto& m : run_packets(topo, np, plan)) {
    payload += static_cast<double>(m.bytes);
    first = std::min(first, m.post_time);
    last = std::max(last, m.end_time);
  }
  return payload * 8.0 / (last - first).ns() / (400.0 * static_cast<double>(topo.endpoint_count()));
}

/// 1 / the maximum of the LP (CLP), its objective's one column lambda.
double inverse_of_max(const CoinPackedMatrix& m, const std::vector<double>& col_lb, const std::vector<double>& col_ub,
                      const std::vector<double>& obj, const std::vector<double>& row_lb,
                      const std::vector<double>& row_ub) {
  OsiClpSolverInterface lp;
  lp.messageHandler()->setLogLevel(0);
  lp.loadProblem(m, col_lb.data(), col_ub.data(), obj.data(), row_lb.data(), row_ub.data());
  lp.setObjSense(-1.0);
  lp.initialSolve();
  EXPECT_TRUE(lp.isProvenOptimal());
  return 1.0 / lp.getObjValue();
}

/// The exact fluid makespan of the messages over any routes: the maximum
/// concurrent multicommodity flow, solved as an LP by CLP (written here, from
/// the definition, independently of bound_any_routes).  Commodities are
/// aggregated by source endpoint node (for an LP that loses nothing); links
/// that carry no data and transit through nodes that do not forward are
/// not used.  Returns 1 / lambda in ns, demands in wire bytes.
double exact_makespan_ns(const net::Topology& topo, const std::vector<workload::PlannedMessage>& plan,
                         const net::NetworkParams& np) {
  std::map<net::NodeId, std::map<net::NodeId, double>> demand;  // source node -> sink node -> bytes
  for (const auto& m : plan)
    if (m.src != m.dst)
      demand[topo.endpoint_node(m.src)][topo.endpoint_node(m.dst)] +=
          static_cast<double>(workload::wire_bytes(m.bytes, np));
  const int links = static_cast<int>(topo.link_count());
  const int nodes = static_cast<int>(topo.node_count());
  const int sources = static_cast<int>(demand.size());
  const int lambda = sources * links;  // the last column
  const int cols = lambda + 1;
  const double inf = 1e30;
  std::vector<double> col_lb(cols, 0.0), col_ub(cols, inf), obj(cols, 0.0);
  obj[lambda] = 1.0;
  CoinPackedMatrix m(false, 0, 0);
  std::vector<double> row_lb, row_ub;
  int k = 0;
  for (const auto& [s, sinks] : demand) {
    for (int v = 0; v < nodes; ++v) {
      // inflow - outflow - lambda * demand(v) = 0 at every node but s
      if (v == static_cast<int>(s)) continue;
      CoinPackedVector row;
      for (net::LinkId l : topo.node(v).in) row.insert(k * links + static_cast<int>(l), 1.0);
      for (net::LinkId l : topo.node(v).out) row.insert(k * links + static_cast<int>(l), -1.0);
      const auto it = sinks.find(static_cast<net::NodeId>(v));
      if (it != sinks.end()) row.insert(lambda, -it->second);
      m.appendRow(row);
      row_lb.push_back(0.0);
      row_ub.push_back(0.0);
      if (!topo.node(v).forwards)
        for (net::LinkId l : topo.node(v).out) col_ub[k * links + static_cast<int>(l)] = 0.0;
    }
    for (int l = 0; l < links; ++l)
      if (!topo.link(l).carries_data) col_ub[k * links + l] = 0.0;
    ++k;
  }
  for (int l = 0; l < links; ++l) {  // sum of flows <= capacity (bytes per ns)
    CoinPackedVector row;
    for (int j = 0; j < sources; ++j) row.insert(j * links + l, 1.0);
    m.appendRow(row);
    row_lb.push_back(-inf);
    row_ub.push_back(topo.link(l).carries_data ? topo.link(l).bandwidth_gbps / 8.0 : 0.0);
  }
  return inverse_of_max(m, col_lb, col_ub, obj, row_lb, row_ub);
}

workload::TrafficParams traffic(workload::Pattern pattern, std::uint32_t messages) {
  workload::TrafficParams tp;
  tp.pattern = pattern;
  tp.message_bytes = 65536;
  tp.messages = messages;
  tp.seed = 3;
  return tp;
}

net::Topology dragonfly(std::uint32_t groups) {
  net::DragonflyParams p;
  p.a = 4;
  p.p = 2;
  p.h = 2;
  p.groups = groups;
  p.host = p.local = p.global = net::LinkParams{400.0, SimTime::from_ns(20)};
  return net::build_dragonfly(p);
}

/// The exact fluid makespan of the messages over their minimal routes only,
/// split in any way: the maximum concurrent flow with one commodity per
/// (source, destination) node pair whose flow may use only the links of its
/// shortest routes (hop distances by BFS here, over links that carry data
/// and through nodes that forward), solved by CLP.  What adaptive minimal
/// routing could reach at best.  1 / lambda in ns.
double exact_minimal_makespan_ns(const net::Topology& topo, const std::vector<workload::PlannedMessage>& plan,
                                 const net::NetworkParams& np) {
  const int nodes = static_cast<int>(topo.node_count());
  const int links = static_cast<int>(topo.link_count());
  // Hop distances from every node.
  std::vector<std::vector<int>> dist(nodes, std::vector<int>(nodes, -1));
  for (int s = 0; s < nodes; ++s) {
    std::vector<int> queue{s};
    dist[s][s] = 0;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const int u = queue[i];
      if (u != s && !topo.node(u).forwards) continue;
      for (net::LinkId l : topo.node(u).out) {
        const int v = static_cast<int>(topo.link(l).dst);
        if (topo.link(l).carries_data && dist[s][v] < 0) {
          dist[s][v] = dist[s][u] + 1;
          queue.push_back(v);
        }
      }
    }
  }
  std::map<std::pair<int, int>, double> demand;
  for (const auto& m : plan)
    if (m.src != m.dst)
      demand[{static_cast<int>(topo.endpoint_node(m.src)), static_cast<int>(topo.endpoint_node(m.dst))}] +=
          static_cast<double>(workload::wire_bytes(m.bytes, np));
  const int pairs = static_cast<int>(demand.size());
  const int lambda = pairs * links;
  const double inf = 1e30;
  std::vector<double> col_lb(lambda + 1, 0.0), col_ub(lambda + 1, 0.0), obj(lambda + 1, 0.0);
  col_ub[lambda] = inf;
  obj[lambda] = 1.0;
  CoinPackedMatrix m(false, 0, 0);
  std::vector<double> row_lb, row_ub;
  int k = 0;
  for (const auto& [st, bytes] : demand) {
    const auto [s, t] = st;
    for (int l = 0; l < links; ++l) {  // a link of a shortest s-t route
      const auto& link = topo.link(static_cast<net::LinkId>(l));
      const int u = static_cast<int>(link.src), v = static_cast<int>(link.dst);
      if (link.carries_data && (u == s || topo.node(u).forwards) && dist[s][u] >= 0 && dist[v][t] >= 0 &&
          dist[s][u] + 1 + dist[v][t] == dist[s][t])
        col_ub[k * links + l] = inf;
    }
    for (int v = 0; v < nodes; ++v) {  // inflow - outflow = lambda x demand at t, 0 elsewhere but s
      if (v == s) continue;
      CoinPackedVector row;
      for (net::LinkId l : topo.node(v).in) row.insert(k * links + static_cast<int>(l), 1.0);
      for (net::LinkId l : topo.node(v).out) row.insert(k * links + static_cast<int>(l), -1.0);
      if (v == t) row.insert(lambda, -bytes);
      m.appendRow(row);
      row_lb.push_back(0.0);
      row_ub.push_back(0.0);
    }
    ++k;
  }
  for (int l = 0; l < links; ++l) {
    CoinPackedVector row;
    for (int j = 0; j < pairs; ++j) row.insert(j * links + l, 1.0);
    m.appendRow(row);
    row_lb.push_back(-inf);
    row_ub.push_back(topo.link(l).bandwidth_gbps / 8.0);
  }
  return inverse_of_max(m, col_lb, col_ub, obj, row_lb, row_ub);
}

net::Topology torus(std::vector<std::uint32_t> dims) {
  net::TorusParams tp;
  tp.dims = std::move(dims);
  tp.boards = false;
  tp.link = net::LinkParams{400.0, SimTime::from_ns(20)};
  return net::build_torus(tp);
}
}  // namespace

TEST(AnyRouteBound, RingAlltoallIsItsVolume) {
  // A bidirectional ring of 8 forwarding endpoints (400 Gb/s = 50 B/ns per
  // direction), an alltoall of d wire bytes per pair: every message needs
  // min(i, 8 - i) hops, 16 per source over the 7 others, and 16 links carry
  // them, so the makespan is 8 d * 16 / (16 * 50) ns, which shortest routes
  // (the two antipodal ones split) reach.
  net::TorusParams tp;
  tp.dims = {8};
  tp.boards = false;
  tp.link = net::LinkParams{400.0, SimTime::from_ns(20)};
  const net::Topology ring = net::build_torus(tp);
  net::NetworkParams np;
  const auto plan = workload::plan_traffic(traffic(workload::Pattern::Alltoall, 0), ring, np);
  const double d = static_cast<double>(workload::wire_bytes(65536, np));
  const auto b = workload::bound_any_routes(ring, plan, np, 1e9);
  ASSERT_TRUE(b.computed);
  EXPECT_NEAR(b.min_makespan_ns, 8.0 * d * 16.0 / (16.0 * 50.0), 1e-6 * b.min_makespan_ns);
}

// A topology and a synthetic pattern of `messages` per source.
struct TrafficCase {
  const char* name;
  net::Topology topo;
  workload::Pattern pattern;
  std::uint32_t messages;
};

TEST(AnyRouteBound, NeverAboveTheExactLpAndClose) {
  std::vector<TrafficCase> cases;
  cases.push_back({"tree alltoall", tree(16, 8), workload::Pattern::Alltoall, 0});
  cases.push_back({"tapered tree permutation", tree(48, 16, 12), workload::Pattern::Permutation, 2});
  cases.push_back({"dragonfly uniform", dragonfly(9), workload::Pattern::Uniform, 6});
  cases.push_back({"dragonfly alltoall, 8 rounds", dragonfly(9), workload::Pattern::Alltoall, 8});
  cases.push_back({"dragonfly permutation", dragonfly(5), workload::Pattern::Permutation, 1});
  for (const auto& c : cases) {
    net::NetworkParams np;
    const auto plan = workload::plan_traffic(traffic(c.pattern, c.messages), c.topo, np);
    const auto b = workload::bound_any_routes(c.topo, plan, np, 1e9);
    ASSERT_TRUE(b.computed) << c.name;
    const double exact = exact_makespan_ns(c.topo, plan, np);
    EXPECT_LE(b.min_makespan_ns, exact * (1 + 1e-6)) << c.name;  // a bound
    EXPECT_GE(b.min_makespan_ns, 0.9 * exact) << c.name;        // and a useful one
    std::printf("[any-route] %-30s bound %.1f ns exact %.1f ns (%.3f) rounds %u\n", c.name, b.min_makespan_ns,
                exact, b.min_makespan_ns / exact, b.rounds);
  }
}

TEST(AnyRouteBound, BelowTheMinimalRoutesWhereValiantPathsHelp) {
  // Group to group: in an alltoall round of shift 8 = 4 routers x 2
  // endpoints, the 8 endpoints of each group all send to the next group, over
  // the one cable between them; routes through other groups carry more.
  const net::Topology df = dragonfly(9);
  net::NetworkParams np;
  std::vector<workload::PlannedMessage> plan;
  const auto n = static_cast<net::EndpointId>(df.endpoint_count());
  for (net::EndpointId s = 0; s < n; ++s) plan.push_back({s, (s + 8) % n, 65536, SimTime::zero()});
  const auto minimal = workload::estimate_fluid(df, net::RoutingTable(df), plan, np);
  const auto b = workload::bound_any_routes(df, plan, np, 1e9);
  const double exact = exact_makespan_ns(df, plan, np);
  std::printf("[any-route] group shift: bound %.1f ns exact %.1f ns (%.3f) minimal routes %.1f ns\n",
              b.min_makespan_ns, exact, b.min_makespan_ns / exact, minimal.min_makespan_ns);
  EXPECT_LT(exact, 0.5 * minimal.min_makespan_ns);  // non-minimal routes beat the minimal estimate
  EXPECT_LE(b.min_makespan_ns, exact * (1 + 1e-6));
  EXPECT_GE(b.min_makespan_ns, 0.9 * exact);
}

TEST(SplitBound, NeverAboveTheExactMinimalRouteLp) {
  // The minimal-route bound holds for any split over the minimal routes
  // (adaptive routing's), so it is at most the exact LP restricted to them,
  // which is at most the equal split's makespan.  Where the equal split is
  // the best split (the tree's alltoall), all three meet.
  struct Case {
    const char* name;
    net::Topology topo;
    workload::Pattern pattern;
    std::uint32_t messages;
    bool state_routes;  // the torus's adaptive rules; else the minimal routing table
  };
  std::vector<Case> cases;
  cases.push_back({"tree alltoall", tree(16, 8), workload::Pattern::Alltoall, 0, false});
  cases.push_back({"tapered tree permutation", tree(48, 16, 12), workload::Pattern::Permutation, 2, false});
  cases.push_back({"dragonfly permutation", dragonfly(5), workload::Pattern::Permutation, 1, false});
  cases.push_back({"torus 8x8 permutation", torus({8, 8}), workload::Pattern::Permutation, 1, true});
  cases.push_back({"torus 8x8 uniform", torus({8, 8}), workload::Pattern::Uniform, 4, true});
  for (const auto& c : cases) {
    net::NetworkParams np;
    const auto plan = workload::plan_traffic(traffic(c.pattern, c.messages), c.topo, np);
    const auto est = c.state_routes ? workload::estimate_fluid(
                                          c.topo, net::StateRoutes(c.topo, net::torus_rules(c.topo, {8, 8}, true)), plan, np)
                                    : workload::estimate_fluid(c.topo, net::RoutingTable(c.topo), plan, np);
    const double exact = exact_minimal_makespan_ns(c.topo, plan, np);
    std::printf("[split] %-26s bound %.1f ns exact %.1f ns (%.3f) equal split %.1f ns\n", c.name,
                est.min_makespan_ns, exact, est.min_makespan_ns / exact, est.equal_split_makespan_ns);
    EXPECT_LE(est.min_makespan_ns, exact * (1 + 1e-6)) << c.name;                // a bound
    EXPECT_GE(est.equal_split_makespan_ns, exact * (1 - 1e-6)) << c.name;        // the equal split is one split
    EXPECT_GE(est.min_makespan_ns, 0.85 * exact) << c.name;                      // and a useful one
    if (c.pattern == workload::Pattern::Alltoall && !c.state_routes) {  // symmetric: the equal split is the best
      EXPECT_NEAR(est.min_makespan_ns, est.equal_split_makespan_ns, 1e-9 * est.equal_split_makespan_ns) << c.name;
    }
  }
}

TEST(AnyRouteBound, OverTheBudgetComputesNothing) {
  const net::Topology topo = tree(16, 8);
  net::NetworkParams np;
  const auto plan = workload::plan_traffic(traffic(workload::Pattern::Alltoall, 0), topo, np);
  const auto b = workload::bound_any_routes(topo, plan, np, 10.0);
  EXPECT_FALSE(b.computed);
  EXPECT_GT(b.sources, 0u);
}

TEST(Fluid, SplitsEquallyOverMinimalNextHops) {
  // 4 leaves of 4 down / 4 up, 2 spines, two cables per leaf-spine pair.
  const net::Topology topo = tree(16, 8);
  const net::RoutingTable routes(topo);
  net::NetworkParams np;  // 4096-byte packets, 64-byte headers
  const std::vector<workload::PlannedMessage> plan = {{0, 15, 4032, SimTime::zero()}};  // one full packet
  const auto est = workload::estimate_fluid(topo, routes, plan, np);
  double total = 0;
  for (net::LinkId l = 0; l < topo.link_count(); ++l) {
    const auto& link = topo.link(l);
    const auto& a = topo.node(link.src);
    const auto& b = topo.node(link.dst);
    double expect = 0;
    if (a.name == "ep0" || b.name == "ep15") expect = 4096;         // host links at both ends
    else if (a.name == "leaf0" && b.level == 2) expect = 4096 / 4.0;  // four up-ports
    else if (a.level == 2 && b.name == "leaf3") expect = 4096 / 4.0;  // two spines x two cables
    EXPECT_DOUBLE_EQ(est.link_bytes[l], expect) << a.name << " -> " << b.name;
    total += est.link_bytes[l];
  }
  EXPECT_DOUBLE_EQ(total, 4096.0 * 4);  // four hops
  EXPECT_DOUBLE_EQ(est.payload_bytes, 4032);
  EXPECT_NEAR(est.min_makespan_ns, 4096 * 8 / 400.0, 1e-9);
}

// The partitioner's walk over messages given one at a time (no vector of
// them: Workload::for_each_planned) gives the loads of the vector's walk,
// over a routing table (given, or made by the walk) and over route rules.
TEST(Fluid, LoadsOverMessagesOneAtATimeAreTheVectorsLoads) {
  std::mt19937_64 rng(3);
  net::NetworkParams np;
  auto plan_for = [&](std::uint32_t endpoints) {
    std::vector<workload::PlannedMessage> plan;
    for (int k = 0; k < 500; ++k)
      plan.push_back({static_cast<net::EndpointId>(rng() % endpoints), static_cast<net::EndpointId>(rng() % endpoints),
                      1 + rng() % 100'000, SimTime::zero()});
    return plan;
  };
  auto one_at_a_time = [](const std::vector<workload::PlannedMessage>& plan) {
    return [&plan](const std::function<void(const workload::PlannedMessage&)>& f) {
      for (const auto& m : plan) f(m);
    };
  };
  const net::Topology t = tree(16, 8);
  const net::RoutingTable routes(t);
  const auto plan = plan_for(16);
  const auto want = workload::estimate_fluid(t, routes, plan, np, workload::FluidDetail::Loads);
  for (const net::RoutingTable* table : {&routes, static_cast<const net::RoutingTable*>(nullptr)}) {
    const auto got = workload::estimate_fluid_loads(t, table, nullptr, one_at_a_time(plan), np);
    EXPECT_EQ(got.link_bytes, want.link_bytes);
    EXPECT_EQ(got.payload_bytes, want.payload_bytes);
  }
  const net::Topology ring = torus({8, 8});
  const net::StateRoutes rules(ring, net::torus_rules(ring, {8, 8}, true));
  const auto rplan = plan_for(64);
  const auto rwant = workload::estimate_fluid(ring, rules, rplan, np, workload::FluidDetail::Loads);
  const auto rgot = workload::estimate_fluid_loads(ring, nullptr, &rules, one_at_a_time(rplan), np);
  EXPECT_EQ(rgot.link_bytes, rwant.link_bytes);
  EXPECT_GT(*std::max_element(rgot.link_bytes.begin(), rgot.link_bytes.end()), 0.0);
}

TEST(Fluid, BoundsPacketLevelThroughput) {
  struct Case {
    const char* name;
    net::Topology topo;
    workload::Pattern pattern;
    net::RoutingAlgorithm routing;
    std::uint32_t incast_sources;
  };
  std::vector<Case> cases;
  cases.push_back({"permutation adaptive", tree(64, 16), workload::Pattern::Permutation,
                   net::RoutingAlgorithm::Adaptive, 0});
  cases.push_back({"permutation ecmp", tree(64, 16), workload::Pattern::Permutation, net::RoutingAlgorithm::Ecmp, 0});
  cases.push_back({"alltoall spray", tree(32, 8), workload::Pattern::Alltoall, net::RoutingAlgorithm::Spray, 0});
  cases.push_back({"tapered bisection", tree(96, 16, 12), workload::Pattern::Bisection,
                   net::RoutingAlgorithm::Adaptive, 0});
  cases.push_back({"incast 9", tree(64, 16), workload::Pattern::Incast, net::RoutingAlgorithm::Adaptive, 9});
  for (const auto& c : cases) {
    net::NetworkParams np;
    np.routing = c.routing;
    workload::TrafficParams tp;
    tp.pattern = c.pattern;
    tp.message_bytes = 262144;
    tp.messages = c.pattern == workload::Pattern::Alltoall ? 0 : 1;
    tp.incast_sources = c.incast_sources;
    const auto plan = workload::plan_traffic(tp, c.topo, np);
    const auto est = workload::estimate_fluid(c.topo, net::RoutingTable(c.topo), plan, np);
    const double sim = simulate(c.topo, np, plan);
    EXPECT_LE(sim, est.throughput_bound * (1 + 1e-9)) << c.name;
    if (c.pattern == workload::Pattern::Incast) {
      EXPECT_GE(sim, 0.97 * est.throughput_bound) << c.name;
    }
    std::printf("[fluid] %-22s bound %.4f simulated %.4f\n", c.name, est.throughput_bound, sim);
  }
}

namespace {
/// The per-source share of a packet-level run, as stats::throughput_shares
/// defines it (written here from the definition): the mean over sending
/// sources of payload x 8 / (last delivery - first post) / 400 Gb/s.
double simulate_per_source(const net::Topology& topo, const net::NetworkParams& np,
                           const std::vector<workload::PlannedMessage>& plan) {
  std::map<net::EndpointId, std::tuple<double, SimTime, SimTime>> per;  // payload, first post, last end
  for (const auto& m : run_packets(topo, np, plan)) {
    auto [it, fresh] = per.try_emplace(m.src, 0.0, SimTime::max(), SimTime::zero());
    auto& [payload, first, last] = it->second;
    payload += static_cast<double>(m.bytes);
    first = std::min(first, m.post_time);
    last = std::max(last, m.end_time);
  }
  double sum = 0;
  for (const auto& [src, v] : per) sum += std::get<0>(v) * 8.0 / (std::get<2>(v) - std::get<1>(v)).ns() / 400.0;
  return sum / static_cast<double>(per.size());
}
}  // namespace

TEST(PerSourceBound, IncastIsHarmonic) {
  // n equal messages into one endpoint, whose link runs at the injection
  // rate: the k-th source to finish cannot be done before k messages have
  // crossed that link, so its share is at most P / (k W) (P payload, W wire
  // bytes), and the mean at most (P / W) H_n / n; served one after another
  // they reach it.  Both bounds find it: the minimal routes' most loaded
  // link, the any-route ejection cut.
  const net::Topology topo = tree(16, 8);
  net::NetworkParams np;
  for (std::uint32_t n : {1u, 5u, 9u, 15u}) {
    workload::TrafficParams tp;
    tp.pattern = workload::Pattern::Incast;
    tp.message_bytes = 262144;
    tp.incast_sources = n;
    const auto plan = workload::plan_traffic(tp, topo, np);
    ASSERT_EQ(plan.size(), n);
    const double ratio = 262144.0 / static_cast<double>(workload::wire_bytes(262144, np));
    double harmonic = 0;
    for (std::uint32_t k = 1; k <= n; ++k) harmonic += 1.0 / k;
    const double expect = ratio * harmonic / n;
    const auto est = workload::estimate_fluid(topo, net::RoutingTable(topo), plan, np, workload::FluidDetail::PerSourceBound);
    EXPECT_NEAR(est.per_source_bound, expect, 1e-12) << n;
    const auto any = workload::bound_any_routes(topo, plan, np, 1e9);
    ASSERT_TRUE(any.computed);
    EXPECT_NEAR(any.per_source_bound, expect, 1e-12) << n;
    // Not asked for: none.
    EXPECT_LT(workload::estimate_fluid(topo, net::RoutingTable(topo), plan, np).per_source_bound, 0);
  }
}

TEST(PerSourceBound, SendingOnlyToItselfHasNone) {
  const net::Topology topo = tree(16, 8);
  net::NetworkParams np;
  const std::vector<workload::PlannedMessage> plan = {{0, 1, 4096, SimTime::zero()}, {2, 2, 4096, SimTime::zero()}};
  EXPECT_LT(workload::per_source_bound(topo, plan, np, std::vector<double>(16, 1.0)), 0);
  EXPECT_GT(workload::per_source_bound(topo, {plan[0]}, np, std::vector<double>(16, 1.0)), 0);
}

TEST(PerSourceBound, BoundsPacketLevelRunsAboveTheMakespanBound) {
  // Packet runs' per-source share never beats either bound; on the tapered
  // trees and the incast it exceeds the makespan bound, which is why it
  // needs its own.
  std::vector<TrafficCase> cases;
  cases.push_back({"alltoall tree", tree(32, 8), workload::Pattern::Alltoall, 0});
  cases.push_back({"alltoall tapered", tree(48, 16, 12), workload::Pattern::Alltoall, 0});
  cases.push_back({"permutation tapered", tree(96, 16, 12), workload::Pattern::Permutation, 2});
  cases.push_back({"incast", tree(64, 16), workload::Pattern::Incast, 1});
  bool above = false;
  for (const auto& c : cases) {
    net::NetworkParams np;
    np.routing = net::RoutingAlgorithm::Adaptive;
    workload::TrafficParams tp;
    tp.pattern = c.pattern;
    tp.message_bytes = 65536;
    tp.messages = c.messages;
    tp.incast_sources = 12;
    const auto plan = workload::plan_traffic(tp, c.topo, np);
    const auto est = workload::estimate_fluid(c.topo, net::RoutingTable(c.topo), plan, np, workload::FluidDetail::PerSourceBound);
    const auto any = workload::bound_any_routes(c.topo, plan, np, 1e9);
    const double sim = simulate_per_source(c.topo, np, plan);
    EXPECT_LE(sim, est.per_source_bound * (1 + 1e-9)) << c.name;
    EXPECT_LE(sim, any.per_source_bound * (1 + 1e-9)) << c.name;
    EXPECT_GE(est.per_source_bound, est.throughput_bound * (1 - 1e-9)) << c.name;
    above = above || sim > est.throughput_bound;
    std::printf("[per-source] %-20s makespan bound %.4f per-source bound %.4f (any routes %.4f) simulated %.4f\n",
                c.name, est.throughput_bound, est.per_source_bound, any.per_source_bound, sim);
  }
  EXPECT_TRUE(above) << "no case where the per-source share exceeds the makespan bound";
}
