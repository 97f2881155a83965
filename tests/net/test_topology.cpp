// Tests of the topology builders and the minimal-route candidate tables.
//
// Expectations are derived independently of the implementation: switch counts
// from the spec's formulas and tables, link counts from cable arithmetic, and
// shortest distances from a plain BFS written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <chrono>
#include <cstdint>
#include <deque>
#include <ostream>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {
namespace {

using util::ConfigError;

std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

FatTreeParams fat_tree(std::uint32_t endpoints, std::uint32_t radix, std::uint32_t down = 0,
                       std::uint32_t levels = 0) {
  FatTreeParams p;
  p.endpoints = endpoints;
  p.radix = radix;
  p.down_ports = down;
  p.levels = levels;
  return p;
}

LeafSpineParams leaf_spine(std::uint32_t leaves, std::uint32_t spines, std::uint32_t servers_per_leaf,
                           std::uint32_t gpus, std::uint32_t radix, bool rail,
                           std::uint32_t links_per_pair = 1) {
  LeafSpineParams p;
  p.leaves = leaves;
  p.spines = spines;
  p.links_per_pair = links_per_pair;
  p.servers_per_leaf = servers_per_leaf;
  p.gpus_per_server = gpus;
  p.radix = radix;
  p.rail_optimized = rail;
  return p;
}

std::size_t count_named(const Topology& t, const std::string& prefix) {
  std::size_t n = 0;
  for (const Node& node : t.nodes()) {
    if (node.kind == NodeKind::Switch && node.name.rfind(prefix, 0) == 0 &&
        node.name.size() > prefix.size() &&
        std::isdigit(static_cast<unsigned char>(node.name[prefix.size()]))) {
      ++n;
    }
  }
  return n;
}

/// Graph invariants every builder must keep.
void check_structure(const Topology& t) {
  const auto& nodes = t.nodes();
  const auto& links = t.links();
  ASSERT_EQ(links.size() % 2, 0u);
  for (LinkId l = 0; l < links.size(); ++l) {
    const Link& link = links[l];
    ASSERT_EQ(links[link.reverse].reverse, l);
    ASSERT_EQ(link.reverse, (l % 2 == 0) ? l + 1 : l - 1) << "cable halves must be consecutive";
    ASSERT_EQ(links[link.reverse].src, link.dst);
    ASSERT_EQ(links[link.reverse].src_port, link.dst_port);
    ASSERT_EQ(nodes[link.src].out[link.src_port], l);
    ASSERT_EQ(nodes[link.dst].in[link.dst_port], l);
    ASSERT_NE(link.src, link.dst);
    const bool src_ep = nodes[link.src].kind == NodeKind::Endpoint;
    const bool dst_ep = nodes[link.dst].kind == NodeKind::Endpoint;
    if (link.cls == LinkClass::Host) {
      ASSERT_NE(src_ep, dst_ep);
    }
    if (link.cls == LinkClass::Fabric) {
      ASSERT_TRUE(!src_ep && !dst_ep);
    }
  }
  std::size_t endpoints = 0;
  for (NodeId n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    ASSERT_LE(node.out.size(), node.radix) << node.name;
    ASSERT_EQ(node.out.size(), node.in.size());
    if (node.kind == NodeKind::Endpoint) {
      ASSERT_EQ(t.endpoint_node(node.endpoint), n);
      ASSERT_FALSE(node.forwards);
      ASSERT_EQ(node.level, 0);
      ++endpoints;
    } else {
      ASSERT_EQ(node.endpoint, kNoEndpoint);
      ASSERT_TRUE(node.forwards);
    }
  }
  ASSERT_EQ(endpoints, t.endpoint_count());
}

/// Distance (in links) from every node to `dst`, intermediates forwarding.
std::vector<std::uint32_t> reference_distances(const Topology& t, NodeId dst) {
  constexpr std::uint32_t kInf = RoutingTable::kUnreachable;
  std::vector<std::uint32_t> dist(t.node_count(), kInf);
  std::deque<NodeId> queue{dst};
  dist[dst] = 0;
  while (!queue.empty()) {
    const NodeId y = queue.front();
    queue.pop_front();
    if (y != dst && !t.node(y).forwards) continue;
    for (LinkId l : t.node(y).in) {
      const NodeId x = t.link(l).src;
      if (dist[x] == kInf) {
        dist[x] = dist[y] + 1;
        queue.push_back(x);
      }
    }
  }
  return dist;
}

/// Walks every candidate path from `src` to `dst`: each step must go to a
/// node one hop closer (per the reference BFS), never through a node that
/// does not forward.  From an endpoint, levels must rise strictly and then
/// fall strictly (up*/down*); a walk may start at a switch too, where a
/// minimal path need not be up/down (a core not wired to a partial pod goes
/// down and up again), but no packet injected at an endpoint gets there.
/// With `exact`, the candidate set must be every such port.
void check_walk(const Topology& t, const RoutingTable& rt, NodeId src, EndpointId dst,
                const std::vector<std::uint32_t>& ref, bool exact) {
  const NodeId target = t.endpoint_node(dst);
  ASSERT_EQ(rt.hops(src, dst), ref[src]) << t.node(src).name << " -> ep" << dst;
  if (ref[src] == RoutingTable::kUnreachable) {
    ASSERT_TRUE(rt.candidates(src, dst).empty());
    return;
  }
  const bool updown = t.node(src).kind == NodeKind::Endpoint;
  // State: node * 2 + descended.
  std::vector<std::uint8_t> seen(t.node_count() * 2, 0);
  std::vector<std::pair<NodeId, bool>> stack{{src, false}};
  seen[src * 2] = 1;
  while (!stack.empty()) {
    const auto [x, descended] = stack.back();
    stack.pop_back();
    const auto cands = rt.candidates(x, dst);
    if (x == target) {
      ASSERT_TRUE(cands.empty());
      ASSERT_EQ(rt.hops(x, dst), 0u);
      continue;
    }
    ASSERT_EQ(rt.hops(x, dst), ref[x]) << t.node(x).name << " -> ep" << dst;
    ASSERT_FALSE(cands.empty()) << t.node(x).name << " -> ep" << dst;
    ASSERT_TRUE(std::is_sorted(cands.begin(), cands.end()));
    ASSERT_EQ(std::adjacent_find(cands.begin(), cands.end()), cands.end());
    const Node& xn = t.node(x);
    for (PortIndex p : cands) {
      ASSERT_LT(p, xn.out.size());
      const NodeId y = t.link(xn.out[p]).dst;
      const Node& yn = t.node(y);
      ASSERT_TRUE(y == target || yn.forwards) << "route through non-forwarding " << yn.name;
      ASSERT_EQ(ref[y] + 1, ref[x]) << xn.name << " port " << p << " is not minimal";
      const bool down = yn.level < xn.level;
      if (updown) {
        ASSERT_NE(yn.level, xn.level) << xn.name << " -> " << yn.name;
        ASSERT_FALSE(descended && !down) << "path rises after falling at " << xn.name;
      }
      const bool nd = descended || down;
      if (!seen[y * 2 + (nd ? 1 : 0)]) {
        seen[y * 2 + (nd ? 1 : 0)] = 1;
        stack.emplace_back(y, nd);
      }
    }
    if (exact) {
      std::size_t minimal = 0;
      for (LinkId l : xn.out) {
        const NodeId y = t.link(l).dst;
        if ((y == target || t.node(y).forwards) && ref[y] + 1 == ref[x]) ++minimal;
      }
      ASSERT_EQ(cands.size(), minimal) << xn.name << " -> ep" << dst << ": candidates incomplete";
    }
  }
}

/// All (or every `stride`-th) destination, from every endpoint and switch.
void check_all_routes(const Topology& t, std::uint32_t stride = 1, bool exact = true) {
  const RoutingTable rt(t);
  for (EndpointId dst = 0; dst < t.endpoint_count(); dst += stride) {
    const auto ref = reference_distances(t, t.endpoint_node(dst));
    for (NodeId src = 0; src < t.node_count(); ++src) {
      // Every endpoint reaches every endpoint (an intra-server switch only
      // reaches its own GPUs).
      if (t.node(src).kind == NodeKind::Endpoint) {
        ASSERT_NE(ref[src], RoutingTable::kUnreachable);
      }
      check_walk(t, rt, src, dst, ref, exact);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Diameter recomputed from the reference BFS.
int reference_diameter(const Topology& t) {
  std::uint32_t worst = 0;
  for (EndpointId dst = 0; dst < t.endpoint_count(); ++dst) {
    const auto ref = reference_distances(t, t.endpoint_node(dst));
    for (EndpointId src = 0; src < t.endpoint_count(); ++src) {
      if (src != dst) worst = std::max(worst, ref[t.endpoint_node(src)]);
    }
  }
  return static_cast<int>(worst);
}

template <class F>
void expect_config_error(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no ConfigError, expected one containing '" << fragment << "'";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), util::kExitConfigError);
  }
}

// ---------------------------------------------------------------------------
// Topology graph basics

TEST(Topology, Names) {
  EXPECT_STREQ(to_string(LinkClass::Host), "host");
  EXPECT_STREQ(to_string(LinkClass::Fabric), "fabric");
  EXPECT_STREQ(to_string(LinkClass::IntraServer), "intra_server");
  EXPECT_STREQ(to_string(LinkClass::Board), "board");
  EXPECT_STREQ(to_string(LinkClass::Global), "global");
  EXPECT_STREQ(to_string(NodeKind::Endpoint), "endpoint");
  EXPECT_STREQ(to_string(NodeKind::Switch), "switch");
}

TEST(Topology, ConnectTakesNextPortsAndPairsLinks) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::Endpoint, 0, 1, "ep0", false);
  const NodeId s = t.add_node(NodeKind::Switch, 1, 3, "sw0", true);
  const NodeId b = t.add_node(NodeKind::Endpoint, 0, 1, "ep1", false);
  const LinkParams lp{.bandwidth_gbps = 400.0, .latency = core::SimTime::from_ns(20)};
  const auto [ab, ba] = t.connect(a, s, LinkClass::Host, lp);
  const auto [cd, dc] = t.connect(b, s, LinkClass::Host, lp);
  EXPECT_EQ(ab, 0u);
  EXPECT_EQ(ba, 1u);
  EXPECT_EQ(cd, 2u);
  EXPECT_EQ(dc, 3u);
  EXPECT_EQ(t.link(cd).src_port, 0);
  EXPECT_EQ(t.link(cd).dst_port, 1);  // second port of the switch
  EXPECT_EQ(t.link(dc).reverse, cd);
  EXPECT_EQ(t.link(ab).latency, core::SimTime::from_ns(20));
  EXPECT_DOUBLE_EQ(t.link(ab).bandwidth_gbps, 400.0);
  EXPECT_EQ(t.endpoint_count(), 2u);
  EXPECT_EQ(t.endpoint_node(1), b);
  EXPECT_EQ(t.node(b).endpoint, 1u);
  EXPECT_EQ(t.switch_count(), 1u);
  EXPECT_EQ(t.count_links(LinkClass::Host), 4u);
  EXPECT_EQ(t.diameter(), 2);
  check_structure(t);
  // ep0 has one port only.
  expect_config_error([&] { t.connect(a, s, LinkClass::Host, lp); }, "ep0 has no free port");
  EXPECT_EQ(t.link_count(), 4u);  // failed connect leaves the graph unchanged
}

TEST(Topology, DiameterOfDisconnectedGraphIsMinusOne) {
  Topology t;
  const LinkParams lp;
  const NodeId a = t.add_node(NodeKind::Endpoint, 0, 1, "ep0", false);
  const NodeId b = t.add_node(NodeKind::Endpoint, 0, 1, "ep1", false);
  const NodeId s0 = t.add_node(NodeKind::Switch, 1, 2, "sw0", true);
  const NodeId s1 = t.add_node(NodeKind::Switch, 1, 2, "sw1", true);
  t.connect(a, s0, LinkClass::Host, lp);
  t.connect(b, s1, LinkClass::Host, lp);
  EXPECT_EQ(t.diameter(), -1);
  const RoutingTable rt(t);
  EXPECT_TRUE(rt.candidates(a, 1).empty());
  EXPECT_EQ(rt.hops(a, 1), RoutingTable::kUnreachable);
  EXPECT_EQ(rt.hops(a, 0), 0u);
  ASSERT_EQ(rt.candidates(s1, 1).size(), 1u);
  // Connect the switches: now a path of three cables.
  t.connect(s0, s1, LinkClass::Fabric, lp);
  EXPECT_EQ(t.diameter(), 3);
}

TEST(Topology, EndpointsDoNotForward) {
  // ep0 - sw0 - ep1 - sw1 - ep2: ep2 is unreachable from ep0 because ep1
  // does not forward.
  Topology t;
  const LinkParams lp;
  const NodeId e0 = t.add_node(NodeKind::Endpoint, 0, 1, "ep0", false);
  const NodeId e1 = t.add_node(NodeKind::Endpoint, 0, 2, "ep1", false);
  const NodeId e2 = t.add_node(NodeKind::Endpoint, 0, 1, "ep2", false);
  const NodeId s0 = t.add_node(NodeKind::Switch, 1, 2, "sw0", true);
  const NodeId s1 = t.add_node(NodeKind::Switch, 1, 2, "sw1", true);
  t.connect(e0, s0, LinkClass::Host, lp);
  t.connect(e1, s0, LinkClass::Host, lp);
  t.connect(e1, s1, LinkClass::Host, lp);
  t.connect(e2, s1, LinkClass::Host, lp);
  const RoutingTable rt(t);
  EXPECT_EQ(rt.hops(e0, 2), RoutingTable::kUnreachable);
  EXPECT_EQ(rt.hops(e0, 1), 2u);
  EXPECT_EQ(rt.hops(e1, 2), 2u);
  ASSERT_EQ(rt.candidates(e1, 2).size(), 1u);
  EXPECT_EQ(rt.candidates(e1, 2)[0], 1);  // its second port, towards sw1
  ASSERT_EQ(rt.candidates(e1, 0).size(), 1u);
  EXPECT_EQ(rt.candidates(e1, 0)[0], 0);
  EXPECT_EQ(t.diameter(), -1);
}

// ---------------------------------------------------------------------------
// Fat trees: the spec's configurations (hammingmesh.md sections 3.4, 4.2, 4.3)

struct SpecTree {
  std::uint32_t endpoints, down;
  std::uint32_t levels;
  std::vector<std::size_t> switches;  // per level, from the spec table (priced boxes)
  std::size_t fabric_cables;          // AoC per plane
  int diameter;
  /// Switches built per level: the spec's where each is a box, else the
  /// logical switches of the uniform tapered wiring (worked out by hand on
  /// the instantiations below, following FatTreeParams' rules).
  std::vector<std::size_t> logical;
};

void PrintTo(const SpecTree& s, std::ostream* os) {
  *os << s.endpoints << " endpoints, " << s.down << " down ports";
}

class SpecFatTree : public testing::TestWithParam<SpecTree> {};

TEST_P(SpecFatTree, SwitchAndLinkCountsMatchSpec) {
  const SpecTree& s = GetParam();
  const Topology t = build_fat_tree(fat_tree(s.endpoints, 64, s.down));
  check_structure(t);
  EXPECT_EQ(t.kind, "fat_tree");
  EXPECT_EQ(t.endpoint_count(), s.endpoints);
  // Formulas (brief): leaves = ceil(N/d), level 2 = ceil(leaves*u/k) (2 levels)
  // or ceil(leaves*u/(k/2)) (3 levels), cores = ceil(level2*(k/2)/k).
  const std::uint32_t k = 64, u = k - s.down, leaves = ceil_div(s.endpoints, s.down);
  std::vector<std::size_t> formula{leaves};
  if (s.levels == 2) {
    formula.push_back(ceil_div(leaves * u, k));
  } else {
    const std::uint32_t l2 = ceil_div(leaves * u, k / 2);
    formula.push_back(l2);
    formula.push_back(ceil_div(l2 * (k / 2), k));
  }
  EXPECT_EQ(formula, s.switches);
  std::size_t priced = 0;
  for (std::size_t n : s.switches) priced += n;
  EXPECT_EQ(t.physical_switches(), priced);
  std::vector<std::size_t> got;
  for (std::uint8_t level = 1; level <= s.levels; ++level) got.push_back(t.switch_count(level));
  EXPECT_EQ(got, s.logical);
  EXPECT_EQ(t.switch_count(static_cast<std::uint8_t>(s.levels + 1)), 0u);
  EXPECT_EQ(count_named(t, "leaf"), s.logical[0]);
  if (s.levels == 2) {
    EXPECT_EQ(count_named(t, "spine"), s.logical[1]);
  } else {
    EXPECT_EQ(count_named(t, "l2sw"), s.logical[1]);
    EXPECT_EQ(count_named(t, "core"), s.logical[2]);
  }
  // One DAC per endpoint, the spec's AoC count per plane; two directed links each.
  EXPECT_EQ(t.count_links(LinkClass::Host), 2u * s.endpoints);
  EXPECT_EQ(t.count_links(LinkClass::Fabric), 2u * s.fabric_cables);
  EXPECT_EQ(t.count_links(LinkClass::IntraServer), 0u);
  EXPECT_EQ(t.link_count(), 2u * (s.endpoints + s.fabric_cables));
  // Every leaf uses its up ports fully; endpoints one port each.
  for (const Node& n : t.nodes()) {
    if (n.kind == NodeKind::Endpoint) {
      EXPECT_EQ(n.ports_used(), 1u);
    }
    if (n.level == 1) {
      std::uint32_t up = 0;
      for (LinkId l : n.out) up += t.node(t.link(l).dst).level == 2 ? 1 : 0;
      EXPECT_EQ(up, u) << n.name;
    }
  }
  EXPECT_NE(t.describe().find(std::to_string(s.levels) + "-level fat tree, radix 64, " +
                              std::to_string(s.endpoints) + " endpoints"),
            std::string::npos)
      << t.describe();
}

TEST_P(SpecFatTree, DiameterMatchesSpec) {
  const SpecTree& s = GetParam();
  const Topology t = build_fat_tree(fat_tree(s.endpoints, 64, s.down));
  EXPECT_EQ(t.diameter(), s.diameter);
  // Spec formula for the full-bandwidth tree: 2(ceil(log_{k/2}(q/k)) + 1).
  if (s.down == 32) {
    EXPECT_EQ(s.diameter, s.endpoints <= 64 * 32 ? 4 : 6);
  }
}

TEST_P(SpecFatTree, CablesAndCostMatchSpec) {
  // Spec §4.1: DAC for endpoint cables, AoC between switches; 16 planes at
  // $14,280 per switch, $272 per DAC, $603 per AoC.  Table values (M$) of
  // §4.2/§4.3, keyed by endpoint count.
  const SpecTree& s = GetParam();
  const std::map<std::uint32_t, double> table = {{1024, 25.30},  {1050, 17.64},  {1071, 13.24},
                                                 {16384, 679.90}, {16380, 418.26}, {16422, 270.82}};
  const Topology t = build_fat_tree(fat_tree(s.endpoints, 64, s.down));
  const StructureReport r = structure_report(t, CostModel{.planes = 16});
  EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::DAC)], s.endpoints);
  EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::AoC)], s.fabric_cables);
  EXPECT_EQ(r.cables_by_type[static_cast<int>(CableType::None)], 0u);
  std::uint32_t switches = 0;
  for (std::size_t n : s.switches) switches += static_cast<std::uint32_t>(n);
  EXPECT_EQ(r.physical_switches, switches);
  const double expected_usd = 16.0 * (switches * 14280.0 + s.endpoints * 272.0 + static_cast<double>(s.fabric_cables) * 603.0);
  EXPECT_DOUBLE_EQ(r.cost_usd, expected_usd);
  EXPECT_NEAR(r.cost_usd / 1e6, table.at(s.endpoints), 0.005);
  EXPECT_EQ(r.diameter, s.diameter);
}

INSTANTIATE_TEST_SUITE_P(
    Hammingmesh, SpecFatTree,
    // Logical switches of the tapered trees: 22 up-links of 25 leaves, 2 to
    // each of 11 spines (25 * 2 = 50 <= 64; 22's next divisor, 11, is too
    // many); 13 (prime) up-links of 21 leaves, 1 to each of 13 spines; 390
    // leaves: the smallest divisor >= 390/64 is 10, pods of 30 (13 pods),
    // 13 * 22 level-2 and 22 groups of 10 cores; 322 leaves: divisor 7, pods
    // of 28 (11 + a last one of 14), 12 * 13 level-2, 13 * 7 cores.
    testing::Values(SpecTree{1024, 32, 2, {32, 16}, 1024, 4, {32, 16}},                  // small nonblocking
                    SpecTree{1050, 42, 2, {25, 9}, 550, 4, {25, 11}},                    // small 50 % tapered
                    SpecTree{1071, 51, 2, {21, 5}, 273, 4, {21, 13}},                    // small 75 % tapered
                    SpecTree{16384, 32, 3, {512, 512, 256}, 32768, 6, {512, 512, 256}},  // large nonblocking
                    SpecTree{16380, 42, 3, {390, 269, 135}, 17160, 6, {390, 286, 220}},  // large 50 %
                    SpecTree{16422, 51, 3, {322, 131, 66}, 8372, 6, {322, 156, 91}}),    // large 75 %
    [](const testing::TestParamInfo<SpecTree>& param_info) {
      return "n" + std::to_string(param_info.param.endpoints) + "_d" +
             std::to_string(param_info.param.down);
    });

TEST(FatTree, MeasuredBisectionIsTheTaperRatio) {
  // Half the leaves against the other half: the spines follow the majority
  // of their leaves (a tie goes to side 0), so the other half's up-links are
  // cut.  Nonblocking: as many up-links as endpoints (relative 1); 48 down /
  // 16 up: 16/48.
  for (auto [down, expected] : {std::pair{32u, 1.0}, std::pair{48u, 16.0 / 48.0}}) {
    const std::uint32_t leaves = 16;
    Topology t = build_fat_tree(fat_tree(leaves * down, 64, down));
    std::vector<std::uint8_t> side(t.endpoint_count());
    for (EndpointId e = 0; e < t.endpoint_count(); ++e) side[e] = e >= t.endpoint_count() / 2 ? 1 : 0;
    t.measure_bisection(side);
    EXPECT_EQ(t.bisection_cables(), std::size_t{leaves / 2} * (64 - down)) << "down " << down;
    EXPECT_DOUBLE_EQ(structure_report(t, CostModel{}).bisection_relative, expected);
  }
}

TEST(FatTree, SmallNonblockingWiring) {
  // 32 leaves (32 down / 32 up, 2 links to each spine) + 16 spines.
  const Topology t = build_fat_tree(fat_tree(1024, 64));
  const NodeId leaf0 = t.endpoint_node(0) + 1024;
  ASSERT_EQ(t.node(leaf0).name, "leaf0");
  std::vector<int> per_spine(16, 0);
  for (PortIndex p = 0; p < 64; ++p) {
    const NodeId peer = t.link(t.node(leaf0).out[p]).dst;
    if (p < 32) {
      EXPECT_EQ(peer, p) << "leaf ports 0..31 are its endpoints";
    } else {
      ASSERT_EQ(t.node(peer).level, 2);
      ++per_spine[peer - (1024 + 32)];
    }
  }
  EXPECT_EQ(per_spine, std::vector<int>(16, 2));
  for (NodeId s = 1024 + 32; s < 1024 + 48; ++s) {
    EXPECT_EQ(t.node(s).ports_used(), 64u);
    EXPECT_EQ(t.node(s).name.rfind("spine", 0), 0u);
  }
}

TEST(FatTree, TaperedTwoLevelWiresEveryLeafAlikeToEverySpine) {
  // 50 %: 25 leaves x 22 up: 2 cables from every leaf to each of 11
  // logical spines of 50 ports (2 per leaf).  75 %: 21 leaves x 13 up: one
  // cable to each of 13 spines of 21 ports.  (tests/net/test_tapered.cpp
  // checks more trees and what the wiring delivers.)
  struct Case {
    std::uint32_t endpoints, down, leaves, spines, per_pair;
  };
  for (const Case& c : {Case{1050, 42, 25, 11, 2}, Case{1071, 51, 21, 13, 1}}) {
    const Topology t = build_fat_tree(fat_tree(c.endpoints, 64, c.down));
    const NodeId first_spine = c.endpoints + c.leaves;
    ASSERT_EQ(t.switch_count(2), c.spines);
    for (NodeId leaf = c.endpoints; leaf < first_spine; ++leaf) {
      std::vector<std::uint32_t> per_spine(c.spines, 0);
      for (LinkId l : t.node(leaf).out) {
        if (t.link(l).cls == LinkClass::Fabric) ++per_spine[t.link(l).dst - first_spine];
      }
      EXPECT_EQ(per_spine, std::vector<std::uint32_t>(c.spines, c.per_pair)) << t.node(leaf).name;
    }
    for (NodeId s = first_spine; s < first_spine + c.spines; ++s) {
      EXPECT_EQ(t.node(s).ports_used(), c.leaves * c.per_pair);
      EXPECT_EQ(t.node(s).radix, c.leaves * c.per_pair);
    }
  }
}

TEST(FatTree, LevelsAreChosenAutomatically) {
  EXPECT_EQ(build_fat_tree(fat_tree(2048, 64)).switch_count(3), 0u);  // 64 leaves fit 2 levels
  // 2049 endpoints: 65 leaves -> 3 levels, 65 level-2, ceil(65*32/64) = 33 cores.
  EXPECT_EQ(build_fat_tree(fat_tree(2049, 64)).switch_count(3), 33u);
  EXPECT_EQ(build_fat_tree(fat_tree(2048, 64, 0, 3)).switch_count(3), 32u);  // forced 3 levels
  EXPECT_EQ(build_fat_tree(fat_tree(8, 64)).switch_count(), 2u);  // 1 leaf + 1 spine
}

TEST(FatTree, NonPowerOfTwoEndpoints) {
  // 1000 endpoints: 32 leaves, the last with 8 endpoints; 16 spines.
  const Topology t = build_fat_tree(fat_tree(1000, 64));
  check_structure(t);
  EXPECT_EQ(t.switch_count(1), 32u);
  EXPECT_EQ(t.switch_count(2), 16u);
  EXPECT_EQ(t.node(1000 + 31).ports_used(), 8u + 32u);
  EXPECT_EQ(t.diameter(), 4);
  check_all_routes(t, 13);
}

TEST(FatTree, SmallTreesAllPairsRoutes) {
  // Exhaustive: every node to every endpoint, every candidate path.
  struct Case {
    std::uint32_t endpoints, radix, down, levels;
    int diameter;
  };
  for (const Case& c : {Case{32, 8, 0, 0, 4},     // 8 leaves x 4 down, 2 levels
                        Case{30, 8, 0, 0, 4},     // partial last leaf
                        Case{37, 8, 5, 0, 4},     // tapered, 8 leaves, 3 spines
                        Case{128, 8, 0, 0, 6},    // 3 levels, 8 full pods of 4 leaves
                        Case{100, 8, 0, 0, 6},    // 25 leaves: partial pod of 1 leaf
                        Case{97, 8, 5, 0, 6},     // tapered 3 levels, 20 leaves, 5 pods
                        Case{90, 8, 6, 0, 6},     // 75 % tapered 3 levels, partial pod of 3
                        Case{55, 8, 5, 0, 6},     // tapered 3 levels, 11 leaves: pods of 4, 4, 3
                        Case{24, 8, 0, 3, 6},     // forced 3 levels, 2 pods
                        Case{16, 8, 0, 3, 4},     // forced 3 levels, one pod
                        Case{5, 4, 3, 0, 4},      // 2 leaves, 1 up port each, 1 spine
                        Case{2, 4, 0, 0, 2}}) {   // one leaf
    SCOPED_TRACE(testing::Message() << c.endpoints << " endpoints, radix " << c.radix << ", down "
                                    << c.down << ", levels " << c.levels);
    const Topology t = build_fat_tree(fat_tree(c.endpoints, c.radix, c.down, c.levels));
    check_structure(t);
    if (HasFatalFailure()) return;
    EXPECT_EQ(t.diameter(), c.diameter);
    EXPECT_EQ(t.diameter(), reference_diameter(t));
    check_all_routes(t);
    if (HasFatalFailure()) return;
  }
}

TEST(FatTree, SpecTreesRoutesSampled) {
  check_all_routes(build_fat_tree(fat_tree(1024, 64)), 29);
  check_all_routes(build_fat_tree(fat_tree(1050, 64, 42)), 31);
  check_all_routes(build_fat_tree(fat_tree(1071, 64, 51)), 37);
}

TEST(FatTree, LeafCandidatesForRemoteDestinationAreAllUpPorts) {
  for (std::uint32_t down : {32u, 42u, 51u}) {
    const std::uint32_t n = 21 * 51;  // two-level in all three cases
    const Topology t = build_fat_tree(fat_tree(n, 64, down));
    const RoutingTable rt(t);
    const NodeId leaf0 = n;
    const EndpointId remote = n - 1;  // on the last leaf
    const auto cands = rt.candidates(leaf0, remote);
    ASSERT_EQ(cands.size(), 64u - down);
    for (std::size_t i = 0; i < cands.size(); ++i) EXPECT_EQ(cands[i], down + i);
    EXPECT_EQ(rt.hops(leaf0, remote), 3u);
    EXPECT_EQ(rt.hops(0, remote), 4u);
    // Same leaf: straight down on the destination's port.
    ASSERT_EQ(rt.candidates(leaf0, 5).size(), 1u);
    EXPECT_EQ(rt.candidates(leaf0, 5)[0], 5);
    EXPECT_EQ(rt.hops(0, 5), 2u);
  }
}

TEST(FatTree, ThreeLevelCandidates) {
  // 3-level, k = 8, d = 5, u = 3, 97 endpoints: 20 leaves, pods of 4 leaves,
  // 5 pods all full; level 2 = ceil(20*3/4) = 15, cores = ceil(15*4/8) = 8
  // priced.  Tapered, so wired over logical switches: 4 (the smallest
  // divisor of 20 at least 20/8) cores per group, 3 groups: 12 cores of 5
  // ports, one cable from each pod.
  const Topology t = build_fat_tree(fat_tree(97, 8, 5));
  EXPECT_EQ(t.switch_count(1), 20u);
  EXPECT_EQ(t.switch_count(2), 15u);
  EXPECT_EQ(t.switch_count(3), 12u);
  EXPECT_EQ(t.physical_switches(), 20u + 15u + 8u);
  const RoutingTable rt(t);
  const NodeId leaf0 = 97;
  // Remote pod: all 3 up ports; at a level-2 switch all 4 up ports.
  EXPECT_EQ(rt.candidates(leaf0, 96).size(), 3u);
  EXPECT_EQ(rt.hops(0, 96), 6u);
  const NodeId l2 = t.link(t.node(leaf0).out[t.node(leaf0).ports_used() - 1]).dst;
  ASSERT_EQ(t.node(l2).level, 2);
  EXPECT_EQ(rt.candidates(l2, 96).size(), 4u);
  // Same pod, other leaf: 3 up ports at the leaf, then one down port.
  EXPECT_EQ(rt.candidates(leaf0, 3 * 5).size(), 3u);
  EXPECT_EQ(rt.candidates(l2, 3 * 5).size(), 1u);
  EXPECT_EQ(rt.hops(0, 3 * 5), 4u);
}

TEST(FatTree, LargeNonblockingBuildAndRoutingTable) {
  const auto t0 = std::chrono::steady_clock::now();
  const Topology t = build_fat_tree(fat_tree(16384, 64));
  const auto t1 = std::chrono::steady_clock::now();
  const RoutingTable rt(t);
  const auto t2 = std::chrono::steady_clock::now();
  const auto ms = [](auto a, auto b) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
  };
  RecordProperty("build_ms", std::to_string(ms(t0, t1)));
  RecordProperty("routing_ms", std::to_string(ms(t1, t2)));
  RecordProperty("routing_bytes", std::to_string(rt.memory_bytes()));
  std::printf("16k fat tree: build %lld ms, routing table %lld ms, %zu bytes, %zu groups, %zu lists\n",
              static_cast<long long>(ms(t0, t1)), static_cast<long long>(ms(t1, t2)),
              rt.memory_bytes(), rt.group_count(), rt.distinct_lists());
  check_structure(t);
  EXPECT_EQ(rt.group_count(), 512u);  // one destination group per leaf
  EXPECT_LT(rt.memory_bytes(), 64u << 20);
  const NodeId leaf0 = 16384;
  const NodeId l2_first = 16384 + 512;
  const NodeId core_first = l2_first + 512;
  // Leaf to a remote pod: 32 up ports; level-2 switch: 32 up ports; core: down.
  EXPECT_EQ(rt.candidates(leaf0, 16383).size(), 32u);
  EXPECT_EQ(rt.candidates(l2_first, 16383).size(), 32u);
  EXPECT_EQ(rt.hops(0, 16383), 6u);
  EXPECT_EQ(rt.hops(core_first, 16383), 3u);
  EXPECT_GE(rt.candidates(core_first, 16383).size(), 1u);
  EXPECT_EQ(rt.hops(0, 40), 4u);  // same pod
  EXPECT_EQ(rt.hops(0, 1), 2u);   // same leaf
  // Sampled walks: a few destinations, all nodes.
  for (EndpointId dst : {0u, 1u, 33u, 1023u, 1024u, 8191u, 16383u}) {
    const auto ref = reference_distances(t, t.endpoint_node(dst));
    for (NodeId src = 0; src < t.node_count(); src += 97) {
      check_walk(t, rt, src, dst, ref, true);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(FatTree, LargeTaperedRoutesSampled) {
  for (std::uint32_t down : {42u, 51u}) {
    const std::uint32_t n = down == 42 ? 16380 : 16422;
    const Topology t = build_fat_tree(fat_tree(n, 64, down));
    const RoutingTable rt(t);
    // Destinations in the first pod, the middle and the last (partial) pod.
    for (EndpointId dst : {0u, n / 2, n - 1}) {
      const auto ref = reference_distances(t, t.endpoint_node(dst));
      for (NodeId src = 0; src < t.node_count(); src += 61) {
        check_walk(t, rt, src, dst, ref, true);
        if (HasFatalFailure()) return;
      }
    }
    // A leaf to a destination in a full remote pod uses all its up ports.
    EXPECT_EQ(rt.candidates(n, n / 2).size(), 64u - down);
  }
}

TEST(FatTree, BadParametersThrow) {
  expect_config_error([] { build_fat_tree(fat_tree(1024, 64, 70)); },
                      "topology.down_ports: 70 exceeds topology.radix 64");
  expect_config_error([] { build_fat_tree(fat_tree(1024, 64, 64)); }, "topology.down_ports: 64");
  expect_config_error([] { build_fat_tree(fat_tree(0, 64)); }, "topology.endpoints");
  expect_config_error([] { build_fat_tree(fat_tree(16, 1)); }, "topology.radix");
  expect_config_error([] { build_fat_tree(fat_tree(16, 70000)); }, "topology.radix");
  expect_config_error([] { build_fat_tree(fat_tree(16, 8, 0, 4)); }, "topology.levels: 4");
  expect_config_error([] { build_fat_tree(fat_tree(16, 8, 0, 1)); }, "topology.levels: 1");
  // 2 levels fit k*d = 256 endpoints at k = 8 (d = 4); 3 levels k*(k/2)*d = 128.
  expect_config_error([] { build_fat_tree(fat_tree(33, 8, 0, 2)); }, "2-level");
  EXPECT_NO_THROW(build_fat_tree(fat_tree(32, 8, 0, 2)));
  expect_config_error([] { build_fat_tree(fat_tree(129, 8)); }, "3-level");
  EXPECT_NO_THROW(build_fat_tree(fat_tree(128, 8)));
  auto bad_link = fat_tree(16, 8);
  bad_link.host.bandwidth_gbps = 0.0;
  expect_config_error([&] { build_fat_tree(bad_link); }, "topology.host_link.bandwidth_gbps");
  bad_link = fat_tree(16, 8);
  bad_link.fabric.latency = core::SimTime::from_ns(-1);
  expect_config_error([&] { build_fat_tree(bad_link); }, "topology.fabric_link.latency_ns");
}

// ---------------------------------------------------------------------------
// Leaf-spine (ml-routing.md section 2, vclos.md section 2.1)

TEST(LeafSpine, Canonical2048Counts) {
  const Topology t = build_leaf_spine(leaf_spine(64, 32, 4, 8, 64, false));
  check_structure(t);
  EXPECT_EQ(t.kind, "leaf_spine");
  EXPECT_EQ(t.endpoint_count(), 2048u);
  EXPECT_EQ(count_named(t, "leaf"), 64u);
  EXPECT_EQ(count_named(t, "spine"), 32u);
  EXPECT_EQ(count_named(t, "nvsw"), 256u);
  EXPECT_EQ(t.switch_count(), 64u + 32u + 256u);
  EXPECT_EQ(t.switch_count(2), 32u);
  EXPECT_EQ(t.count_links(LinkClass::Host), 2u * 2048);
  EXPECT_EQ(t.count_links(LinkClass::Fabric), 2u * 64 * 32);  // 2048 ToR->spine + 2048 back
  EXPECT_EQ(t.count_links(LinkClass::IntraServer), 2u * 2048);
  for (const Node& n : t.nodes()) {
    if (n.name.rfind("leaf", 0) == 0 || n.name.rfind("spine", 0) == 0) {
      EXPECT_EQ(n.ports_used(), 64u) << n.name;  // fully used 64-port switches
    }
  }
  EXPECT_EQ(t.diameter(), 4);
  EXPECT_NE(t.describe().find("2048 endpoints"), std::string::npos) << t.describe();
}

TEST(LeafSpine, CanonicalRoutes) {
  const Topology t = build_leaf_spine(leaf_spine(64, 32, 4, 8, 64, false));
  const RoutingTable rt(t);
  const auto nvsw_of = [&](EndpointId e) { return t.link(t.node(t.endpoint_node(e)).out[1]).dst; };
  const auto leaf_of = [&](EndpointId e) { return t.link(t.node(t.endpoint_node(e)).out[0]).dst; };
  // Same server (GPUs 0..7): through the intra-server switch only.
  for (EndpointId dst = 1; dst < 8; ++dst) {
    const auto c = rt.candidates(t.endpoint_node(0), dst);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0], 1);
    EXPECT_EQ(t.link(t.node(0).out[1]).cls, LinkClass::IntraServer);
    EXPECT_EQ(rt.hops(0, dst), 2u);
    const NodeId sw = nvsw_of(0);
    EXPECT_EQ(t.node(sw).name, "nvsw0");
    ASSERT_EQ(rt.candidates(sw, dst).size(), 1u);
    EXPECT_EQ(t.link(t.node(sw).out[rt.candidates(sw, dst)[0]]).dst, t.endpoint_node(dst));
  }
  // Same leaf, other server: NIC then down from the leaf.
  ASSERT_EQ(leaf_of(0), leaf_of(31));
  ASSERT_NE(nvsw_of(0), nvsw_of(31));
  ASSERT_EQ(rt.candidates(0, 31).size(), 1u);
  EXPECT_EQ(rt.candidates(0, 31)[0], 0);
  EXPECT_EQ(rt.hops(0, 31), 2u);
  // Other leaf: 4 hops, one shortest path per spine (32 up ports, 32..63).
  EXPECT_EQ(rt.hops(0, 32), 4u);
  const auto up = rt.candidates(leaf_of(0), 32);
  ASSERT_EQ(up.size(), 32u);
  EXPECT_EQ(up.front(), 32);
  EXPECT_EQ(up.back(), 63);
  // An intra-server switch reaches only its own GPUs (GPUs do not forward).
  EXPECT_EQ(rt.hops(nvsw_of(0), 8), RoutingTable::kUnreachable);
  EXPECT_TRUE(rt.candidates(nvsw_of(0), 8).empty());
  // Exhaustive walks for a sample of destinations.
  for (EndpointId dst : {0u, 7u, 31u, 32u, 1000u, 2047u}) {
    const auto ref = reference_distances(t, t.endpoint_node(dst));
    for (NodeId src = 0; src < t.node_count(); src += 3) {
      check_walk(t, rt, src, dst, ref, false);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(LeafSpine, RailOptimizedRoutes) {
  // 16 leaves = 2 rail groups of 8; 2 servers per leaf -> 16 servers per group.
  const Topology t = build_leaf_spine(leaf_spine(16, 8, 2, 8, 32, true));
  check_structure(t);
  ASSERT_EQ(t.endpoint_count(), 16u * 2 * 8);
  const auto leaf_index = [&](EndpointId e) {
    const NodeId leaf = t.link(t.node(t.endpoint_node(e)).out[0]).dst;
    EXPECT_EQ(t.node(leaf).name.rfind("leaf", 0), 0u);
    return leaf - t.endpoint_count();
  };
  // Rule: GPU g of server s attaches to leaf (s / (8*2))*8 + g.
  for (EndpointId e = 0; e < t.endpoint_count(); ++e) {
    const std::uint32_t s = e / 8, g = e % 8;
    EXPECT_EQ(leaf_index(e), (s / 16) * 8 + g) << "ep" << e;
  }
  // Every leaf holds 16 GPUs.
  for (NodeId leaf = 256; leaf < 256 + 16; ++leaf) EXPECT_EQ(t.node(leaf).ports_used(), 16u + 8u);
  const RoutingTable rt(t);
  EXPECT_EQ(rt.hops(0, 8), 2u);    // GPU 0 of servers 0 and 1: same rail leaf
  EXPECT_EQ(rt.candidates(0, 8)[0], 0);
  EXPECT_EQ(rt.hops(0, 1), 2u);    // same server: NVLink
  ASSERT_EQ(rt.candidates(0, 1).size(), 1u);
  EXPECT_EQ(rt.candidates(0, 1)[0], 1);
  EXPECT_EQ(rt.hops(0, 9), 4u);    // GPU 1 of server 1: other rail leaf, via a spine
  EXPECT_EQ(rt.candidates(0, 9)[0], 0);
  EXPECT_EQ(leaf_index(128), 8u);  // GPU 0 of server 16 (second rail group): leaf 8
  EXPECT_EQ(rt.hops(0, 128), 4u);
  EXPECT_EQ(rt.candidates(t.endpoint_node(0) + 256, 128).size(), 8u);  // leaf0 -> 8 spines
  EXPECT_EQ(t.diameter(), 4);
  EXPECT_EQ(t.diameter(), reference_diameter(t));
  check_all_routes(t, 1, false);
}

TEST(LeafSpine, SmallNonRailAllPairs) {
  // 4 leaves x 2 spines with 2 links per pair, 3 servers of 2 GPUs per leaf.
  const Topology t = build_leaf_spine(leaf_spine(4, 2, 3, 2, 10, false, 2));
  check_structure(t);
  EXPECT_EQ(t.endpoint_count(), 24u);
  EXPECT_EQ(t.count_links(LinkClass::Fabric), 2u * 4 * 2 * 2);
  EXPECT_EQ(t.diameter(), 4);
  const RoutingTable rt(t);
  EXPECT_EQ(rt.candidates(t.endpoint_node(0) + 24, 23).size(), 4u);  // leaf0: 2 spines x 2 links
  check_all_routes(t, 1, false);
}

TEST(LeafSpine, OneGpuPerServerHasNoIntraServerSwitch) {
  const Topology t = build_leaf_spine(leaf_spine(4, 2, 3, 1, 8, true));
  check_structure(t);
  EXPECT_EQ(t.switch_count(), 6u);
  EXPECT_EQ(t.count_links(LinkClass::IntraServer), 0u);
  EXPECT_EQ(t.node(0).radix, 1u);
  EXPECT_EQ(t.diameter(), 4);
  check_all_routes(t);
}

TEST(LeafSpine, BadParametersThrow) {
  expect_config_error([] { build_leaf_spine(leaf_spine(64, 33, 4, 8, 64, false)); },
                      "a leaf needs servers_per_leaf*gpus_per_server + spines*links_per_pair = 32 + 33");
  expect_config_error([] { build_leaf_spine(leaf_spine(65, 32, 1, 8, 64, false)); },
                      "a spine needs leaves*links_per_pair = 65");
  expect_config_error([] { build_leaf_spine(leaf_spine(12, 4, 1, 8, 64, true)); },
                      "topology.leaves: 12 is not a multiple of topology.gpus_per_server 8");
  expect_config_error([] { build_leaf_spine(leaf_spine(0, 4, 1, 8, 64, false)); },
                      "topology.leaves: must be at least 1");
  expect_config_error([] { build_leaf_spine(leaf_spine(4, 0, 1, 8, 64, false)); }, "topology.spines");
  expect_config_error([] { build_leaf_spine(leaf_spine(4, 4, 1, 0, 64, false)); },
                      "topology.gpus_per_server");
  auto p = leaf_spine(4, 4, 1, 8, 64, false);
  p.intra_server.bandwidth_gbps = -5.0;
  expect_config_error([&] { build_leaf_spine(p); }, "topology.intra_server_link.bandwidth_gbps");
}

}  // namespace
}  // namespace fabricsim::net
