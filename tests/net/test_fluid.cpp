// The fluid estimate: exact link loads on a hand-checked case, and an upper
// bound that packet-level runs never beat (and meet on an incast).
#include <gtest/gtest.h>

#include <algorithm>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
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

/// Runs the messages and returns payload * 8 / makespan / (endpoints * 400 Gb/s).
double simulate(const net::Topology& topo, const net::NetworkParams& np,
                const std::vector<workload::PlannedMessage>& plan) {
  core::Simulator sim(topo.node_count());
  net::Network network(topo, np, sim);
  for (const auto& m : plan) network.send(m.src, m.dst, m.bytes, m.post);
  sim.run();
  double payload = 0;
  SimTime first = SimTime::max(), last = SimTime::zero();
  for (const auto& m : network.messages()) {
    payload += static_cast<double>(m.bytes);
    first = std::min(first, m.post_time);
    last = std::max(last, m.end_time);
  }
  return payload * 8.0 / (last - first).ns() / (400.0 * static_cast<double>(topo.endpoint_count()));
}
}  // namespace

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
