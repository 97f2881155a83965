// Tapered fat trees (down_ports != radix/2): the uniform wiring over logical
// switches (FatTreeParams), the HammingMesh paper's switch and cable counts
// and cost (spec §4.1-4.2), and what the wiring delivers: the fluid bound of a
// bisection and of an alltoall is set by the leaves' u up-links alone, the
// taper ratio u/d (less the header share of the bytes on the wire).
//
// Expectations come from the graph and the traffic plan, not from the
// builder's internals or the estimate: cables are counted per leaf and
// spine (or per pod and core), and the expected bound is worked out from the
// bytes each leaf sends and receives across its up-links.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/fluid.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim {
namespace {

using core::SimTime;
using net::LinkClass;
using net::LinkId;
using net::NodeId;
using net::Topology;

constexpr double kGbps = 400.0;

Topology tree(std::uint32_t endpoints, std::uint32_t radix, std::uint32_t down) {
  net::FatTreeParams p;
  p.endpoints = endpoints;
  p.radix = radix;
  p.down_ports = down;
  p.host = p.fabric = net::LinkParams{kGbps, SimTime::from_ns(20)};
  return net::build_fat_tree(p);
}

std::string name(const Topology& t) { return t.describe(); }

/// Cables from node `a` to each neighbour at `level`.
std::map<NodeId, std::uint32_t> cables_to_level(const Topology& t, NodeId a, std::uint8_t level) {
  std::map<NodeId, std::uint32_t> out;
  for (LinkId l : t.node(a).out) {
    const NodeId b = t.link(l).dst;
    if (t.node(b).level == level && t.node(b).kind == net::NodeKind::Switch) ++out[b];
  }
  return out;
}

std::vector<NodeId> nodes_at(const Topology& t, std::uint8_t level) {
  std::vector<NodeId> out;
  for (NodeId n = 0; n < t.node_count(); ++n)
    if (t.node(n).kind == net::NodeKind::Switch && t.node(n).level == level) out.push_back(n);
  return out;
}

// ----------------------------------------------------------------- wiring

struct Shape {
  std::uint32_t endpoints, radix, down;
};

TEST(TaperedFatTree, TwoLevelsEveryLeafHasTheSameCablesToEverySpine) {
  // The paper's 50 % and 75 % trees, and small ones that the rule
  // "up-link j of leaf i -> spine (i*u + j) mod spines" (kept for untapered
  // trees) would wire unevenly: 9 leaves of 10 down / 6 up over
  // ceil(54/16) = 4 spines (6 is not a multiple of 4), the same with a
  // partly filled last leaf, and more up-links than down (5 / 11).
  for (const Shape& s : {Shape{1050, 64, 42}, Shape{1071, 64, 51}, Shape{90, 16, 10}, Shape{85, 16, 10},
                         Shape{40, 16, 5}}) {
    const Topology t = tree(s.endpoints, s.radix, s.down);
    SCOPED_TRACE(name(t));
    ASSERT_EQ(t.switch_count(3), 0u);
    const std::uint32_t u = s.radix - s.down;
    const auto leaves = nodes_at(t, 1);
    const auto spines = nodes_at(t, 2);
    ASSERT_EQ(leaves.size(), (s.endpoints + s.down - 1) / s.down);
    // Every (leaf, spine) pair has the same number of cables, c.
    const std::uint32_t c = u / static_cast<std::uint32_t>(spines.size());
    ASSERT_EQ(c * spines.size(), u) << "the spines must share the u up-links of a leaf equally";
    for (NodeId leaf : leaves) {
      const auto per_spine = cables_to_level(t, leaf, 2);
      ASSERT_EQ(per_spine.size(), spines.size()) << t.node(leaf).name << " misses a spine";
      for (const auto& [spine, n] : per_spine) EXPECT_EQ(n, c) << t.node(leaf).name << " - " << t.node(spine).name;
    }
    // A logical spine fits a box: its ports are those it uses, at most k.
    for (NodeId sp : spines) {
      EXPECT_EQ(t.node(sp).ports_used(), leaves.size() * c);
      EXPECT_LE(t.node(sp).radix, s.radix);
    }
  }
}

TEST(TaperedFatTree, ThreeLevelsEveryPodReachesEveryCoreInProportionToItsLeaves) {
  // Pods: the leaves that share level-2 switches.  Every leaf has one cable
  // to each of its pod's u level-2 switches, a level-2 switch has as many
  // up-links as leaves, and every core has x(A) cables from pod A with
  // x(A) / up(A) the same for all pods (so a pod reaches every other through
  // every core, in proportion).  Small: 20 leaves of 5/3 and 15 leaves of
  // 6/2 (radix 8); the paper's large 50 % and 75 % trees.
  for (const Shape& s : {Shape{97, 8, 5}, Shape{90, 8, 6}, Shape{16380, 64, 42}, Shape{16422, 64, 51}}) {
    const Topology t = tree(s.endpoints, s.radix, s.down);
    SCOPED_TRACE(name(t));
    const std::uint32_t u = s.radix - s.down;
    ASSERT_GT(t.switch_count(3), 0u);
    std::map<std::set<NodeId>, std::vector<NodeId>> pods;  // level-2 set -> its leaves
    for (NodeId leaf : nodes_at(t, 1)) {
      const auto per_l2 = cables_to_level(t, leaf, 2);
      ASSERT_EQ(per_l2.size(), u) << t.node(leaf).name;
      std::set<NodeId> l2;
      for (const auto& [sw, n] : per_l2) {
        EXPECT_EQ(n, 1u);
        l2.insert(sw);
      }
      pods[l2].push_back(leaf);
    }
    std::map<NodeId, std::size_t> pod_of;  // level-2 switch -> pod index
    std::vector<std::uint64_t> up(pods.size(), 0);
    std::size_t index = 0;
    for (const auto& [l2, pod_leaves] : pods) {
      for (NodeId sw : l2) {
        ASSERT_EQ(pod_of.count(sw), 0u) << "two pods share " << t.node(sw).name;
        pod_of[sw] = index;
        const auto down = cables_to_level(t, sw, 1);
        std::uint32_t ups = 0;
        for (const auto& [core, n] : cables_to_level(t, sw, 3)) ups += n;
        EXPECT_EQ(down.size(), pod_leaves.size());
        EXPECT_EQ(ups, pod_leaves.size()) << t.node(sw).name;
        up[index] += ups;
      }
      ++index;
    }
    for (NodeId core : nodes_at(t, 3)) {
      std::vector<std::uint64_t> x(pods.size(), 0);
      for (const auto& [sw, n] : cables_to_level(t, core, 2)) x[pod_of.at(sw)] += n;
      for (std::size_t a = 0; a < pods.size(); ++a) {
        EXPECT_GT(x[a], 0u) << t.node(core).name << " misses pod " << a;
        EXPECT_EQ(x[a] * up[0], x[0] * up[a]) << t.node(core).name << ", pod " << a;
      }
      EXPECT_LE(t.node(core).ports_used(), s.radix);
    }
  }
}

TEST(TaperedFatTree, ThreeLevelsWithoutAGroupSizeThatDividesEveryPod) {
  // 11 leaves (a prime above the radix 8) of 5 down / 3 up: no divisor of 11
  // between 11/8 and 4, so pods of h = 4 leaves (4, 4, 3) and groups of
  // h/c = 2 cores, c = 2 the largest divisor of 4 with 3 pods * c <= 8.  The
  // full pods have 2 cables to every core; the last pod's level-2 switches
  // have 3 up-links, 2 to one core of their group and 1 to the other: it
  // reaches every core, but not in proportion (FatTreeParams says so).
  const Topology t = tree(55, 8, 5);
  SCOPED_TRACE(name(t));
  ASSERT_EQ(t.switch_count(1), 11u);
  ASSERT_EQ(t.switch_count(2), 3u * 3u);
  ASSERT_EQ(t.switch_count(3), 3u * 2u);
  EXPECT_EQ(t.physical_switches(), 11u + 9u + 5u);  // ceil(33/4) = 9 level-2, ceil(9*4/8) = 5 cores
  const auto l2 = nodes_at(t, 2);
  for (std::size_t pod = 0; pod < 3; ++pod) {
    std::map<NodeId, std::uint32_t> per_core;
    for (std::size_t j = 0; j < 3; ++j)
      for (const auto& [core, n] : cables_to_level(t, l2[pod * 3 + j], 3)) per_core[core] += n;
    ASSERT_EQ(per_core.size(), 6u) << "pod " << pod;
    std::multiset<std::uint32_t> counts;
    for (const auto& [core, n] : per_core) counts.insert(n);
    const std::multiset<std::uint32_t> expected =
        pod < 2 ? std::multiset<std::uint32_t>{2, 2, 2, 2, 2, 2} : std::multiset<std::uint32_t>{2, 1, 2, 1, 2, 1};
    EXPECT_EQ(counts, expected) << "pod " << pod;
  }
}

TEST(TaperedFatTree, SmallTreesKeepThePapersSwitchAndCableCountsAndCost) {
  // Spec §4.1-4.2, one plane priced x16: 64-port switches $14,280, DAC $272
  // (endpoint cables), AoC $603 (leaf-spine cables).  Boxes: the spine ports
  // over 64-port switches, ceil(leaves * u / 64).  (SpecFatTree in
  // test_topology.cpp checks the large trees of §4.3 too.)
  struct Case {
    std::uint32_t endpoints, down, leaves, boxes;
    double table_musd;
  };
  for (const Case& c : {Case{1050, 42, 25, 9, 17.64}, Case{1071, 51, 21, 5, 13.24}}) {
    const Topology t = tree(c.endpoints, 64, c.down);
    SCOPED_TRACE(name(t));
    const std::uint32_t u = 64 - c.down;
    EXPECT_EQ(c.boxes, (c.leaves * u + 63) / 64);
    const auto r = net::structure_report(t, net::CostModel{.planes = 16});
    EXPECT_EQ(r.physical_switches, c.leaves + c.boxes);
    EXPECT_EQ(r.cables_by_type[static_cast<int>(net::CableType::DAC)], c.endpoints);
    EXPECT_EQ(r.cables_by_type[static_cast<int>(net::CableType::AoC)], c.leaves * u);
    EXPECT_EQ(r.cables_by_type[static_cast<int>(net::CableType::None)], 0u);
    const double usd = 16.0 * ((c.leaves + c.boxes) * 14280.0 + c.endpoints * 272.0 + c.leaves * u * 603.0);
    EXPECT_DOUBLE_EQ(r.cost_usd, usd);
    EXPECT_NEAR(r.cost_usd / 1e6, c.table_musd, 0.005);
    EXPECT_EQ(r.diameter, 4);
  }
}

// ------------------------------------------------------------ fluid bound

/// Wire bytes of a message: payload plus a header per packet.
double wire(std::uint64_t payload, const net::NetworkParams& np) {
  const std::uint64_t per_packet = np.packet_bytes - np.header_bytes;
  return static_cast<double>(payload + (payload + per_packet - 1) / per_packet * np.header_bytes);
}

/// The bound the taper allows: every byte between two leaves crosses u
/// up-links of its source leaf and u down-links of its destination leaf,
/// spread evenly; every byte crosses its endpoints' links.  The busiest of
/// these links sets the shortest makespan; throughput = payload * 8 /
/// makespan / (endpoints * link rate).
double taper_bound(const Topology& t, std::uint32_t down, std::uint32_t up,
                   const std::vector<workload::PlannedMessage>& plan, const net::NetworkParams& np) {
  const std::size_t n = t.endpoint_count();
  const std::size_t leaves = (n + down - 1) / down;
  std::vector<double> ep_out(n, 0), ep_in(n, 0), leaf_out(leaves, 0), leaf_in(leaves, 0);
  double payload = 0;
  for (const auto& m : plan) {
    const double w = wire(m.bytes, np);
    payload += static_cast<double>(m.bytes);
    ep_out[m.src] += w;
    ep_in[m.dst] += w;
    if (m.src / down != m.dst / down) {
      leaf_out[m.src / down] += w;
      leaf_in[m.dst / down] += w;
    }
  }
  double busiest = 0;  // bytes on the busiest link
  for (double b : ep_out) busiest = std::max(busiest, b);
  for (double b : ep_in) busiest = std::max(busiest, b);
  for (double b : leaf_out) busiest = std::max(busiest, b / up);
  for (double b : leaf_in) busiest = std::max(busiest, b / up);
  const double makespan_ns = busiest * 8.0 / kGbps;
  return std::min(1.0, payload * 8.0 / makespan_ns / (kGbps * static_cast<double>(n)));
}

struct FluidCase {
  Shape shape;
  bool alltoall;  // else bisection
};

TEST(TaperedFatTree, FluidBoundOfBisectionAndAlltoallIsTheTaperRatio) {
  // The inputs' packets (8 KiB, 64-byte headers) and 1 MiB messages for the
  // bisection (every endpoint of the lower half paired with one of the upper
  // half); the full alltoall of 64 KiB messages (every ordered pair).  Large
  // trees: bisection only (an alltoall of 16k endpoints is 268 M pairs).
  net::NetworkParams np;
  np.packet_bytes = 8192;
  np.header_bytes = 64;
  for (const FluidCase& c :
       {FluidCase{{1050, 64, 42}, false}, FluidCase{{1050, 64, 42}, true}, FluidCase{{1071, 64, 51}, false},
        FluidCase{{1071, 64, 51}, true}, FluidCase{{90, 16, 10}, false}, FluidCase{{90, 16, 10}, true},
        FluidCase{{97, 8, 5}, false}, FluidCase{{97, 8, 5}, true}, FluidCase{{16380, 64, 42}, false},
        FluidCase{{16422, 64, 51}, false}}) {
    const Shape& s = c.shape;
    const Topology t = tree(s.endpoints, s.radix, s.down);
    SCOPED_TRACE(name(t) + (c.alltoall ? ", alltoall" : ", bisection"));
    const std::uint32_t d = s.down, u = s.radix - s.down;
    workload::TrafficParams tp;
    tp.pattern = c.alltoall ? workload::Pattern::Alltoall : workload::Pattern::Bisection;
    tp.message_bytes = c.alltoall ? 65536 : 1048576;
    tp.messages = c.alltoall ? 0 : 1;
    const auto plan = workload::plan_traffic(tp, t, np);
    const auto est = workload::estimate_fluid(t, net::RoutingTable(t), plan, np);
    const double expected = taper_bound(t, d, u, plan, np);
    EXPECT_NEAR(est.throughput_bound, expected, 1e-9 * expected);

    // The same in closed form, the taper ratio u/d times the payload share
    // of the wire bytes: a bisection's full leaves lie on one side and send
    // all of their d endpoints' bytes across (an odd count leaves one
    // endpoint idle); in an alltoall each of a full leaf's d endpoints sends
    // N - d of its N - 1 messages across, so u/d * (N-1)/(N-d).
    const double n = s.endpoints;
    const double share = static_cast<double>(tp.message_bytes) / wire(tp.message_bytes, np);
    const double closed = c.alltoall ? double(u) / d * (n - 1) / (n - d) * share
                                     : double(u) / d * share * (2 * (s.endpoints / 2)) / n;
    EXPECT_NEAR(est.throughput_bound, closed, 1e-9 * closed);
    std::printf("[tapered] %5u endpoints, radix %2u, %2u down / %2u up, %-9s u/d %.4f  fluid bound %.4f\n",
                s.endpoints, s.radix, d, u, c.alltoall ? "alltoall" : "bisection", double(u) / d,
                est.throughput_bound);
  }
}

}  // namespace
}  // namespace fabricsim
