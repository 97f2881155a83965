// Channel-dependency-graph check: it must find the cycles that make a
// routing deadlock-prone and accept the schemes known to be deadlock-free.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fabricsim/net/cdg.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/net/updown.hpp"

namespace fabricsim::net {
namespace {

// A cycle must be a real one: each channel ends where the next begins, and
// the last leads back to the first.
void expect_valid_cycle(const Topology& t, const DependencyReport& r) {
  ASSERT_FALSE(r.cycle.empty());
  for (std::size_t i = 0; i < r.cycle.size(); ++i) {
    const Link& a = t.link(r.cycle[i].link);
    const Link& b = t.link(r.cycle[(i + 1) % r.cycle.size()].link);
    EXPECT_EQ(a.dst, b.src) << "cycle step " << i;
  }
}

// Small instances of the direct topologies: a 4x4 torus, a HammingMesh of
// 2x2 boards of 2x2, a Dragonfly of 5 groups of 4 routers.
std::vector<Topology> small_direct_topologies() {
  TorusParams torus;
  torus.dims = {4, 4};
  torus.boards = false;
  HammingMeshParams hm;
  hm.board_a = 2;
  hm.board_b = 2;
  hm.x = 2;
  hm.y = 2;
  hm.radix = 16;
  DragonflyParams df;
  df.a = 4;
  df.p = 2;
  df.h = 2;
  df.groups = 5;
  std::vector<Topology> out;
  out.push_back(build_torus(torus));
  out.push_back(build_hammingmesh(hm));
  out.push_back(build_dragonfly(df));
  return out;
}

TEST(ChannelDependencies, UpDownRoutingOnFatTreesIsAcyclic) {
  for (auto [endpoints, radix] : {std::pair{64u, 16u}, std::pair{100u, 8u}}) {  // 2 and 3 levels
    FatTreeParams p;
    p.endpoints = endpoints;
    p.radix = radix;
    const Topology t = build_fat_tree(p);
    const DependencyReport r = check_minimal_routing(t, RoutingTable(t));
    EXPECT_TRUE(r.acyclic) << t.describe();
    EXPECT_GT(r.dependencies, 0u);
    // With traffic between all pairs, every directed link is on some
    // minimal path, so every channel is used.
    EXPECT_EQ(r.channels_used, t.link_count());
  }
}

TEST(ChannelDependencies, LeafSpineWithServersIsAcyclic) {
  LeafSpineParams p;
  p.leaves = 4;
  p.spines = 2;
  p.servers_per_leaf = 2;
  p.gpus_per_server = 4;
  p.radix = 16;
  const Topology t = build_leaf_spine(p);
  EXPECT_TRUE(check_minimal_routing(t, RoutingTable(t)).acyclic);
}

TEST(ChannelDependencies, MinimalRoutingOnARingHasACycle) {
  // A ring of 4 (1-D torus): minimal routes of two hops chain the four
  // clockwise links into a cycle, the textbook deadlock.
  TorusParams p;
  p.dims = {4};
  p.boards = false;
  const Topology t = build_torus(p);
  const DependencyReport r = check_minimal_routing(t, RoutingTable(t));
  EXPECT_FALSE(r.acyclic);
  expect_valid_cycle(t, r);
  // Its cycle goes around the ring in one direction: 4 links, 4 nodes.
  std::set<NodeId> nodes;
  for (Channel c : r.cycle) nodes.insert(t.link(c.link).src);
  EXPECT_EQ(r.cycle.size(), 4u);
  EXPECT_EQ(nodes.size(), 4u);
}

TEST(ChannelDependencies, DatelineVirtualChannelsBreakTheRingCycle) {
  // The same ring with the classic dateline scheme, written here as the
  // routing under test: go the short way (clockwise on ties), start on VC 0
  // and switch to VC 1 after crossing the wrap-around link 3 -> 0 (or
  // 0 -> 3).  Its dependency graph must be acyclic.
  TorusParams p;
  p.dims = {4};
  p.boards = false;
  const Topology t = build_torus(p);
  const auto link_to = [&](NodeId from, NodeId to) {
    for (LinkId l : t.node(from).out)
      if (t.link(l).dst == to) return l;
    return kNoLink;
  };
  const auto step = [&](NodeId at, EndpointId dst, std::uint8_t vc, std::vector<Channel>& out) {
    const NodeId d = t.endpoint_node(dst);
    if (at == d) return;
    const int cw = static_cast<int>((d + 4 - at) % 4);
    const NodeId to = cw <= 2 ? (at + 1) % 4 : (at + 3) % 4;
    const bool wraps = (at == 3 && to == 0) || (at == 0 && to == 3);
    out.push_back(Channel{link_to(at, to), static_cast<std::uint8_t>(wraps ? 1 : vc)});
  };
  const auto first = [&](EndpointId src, EndpointId dst, std::vector<Channel>& out) {
    step(t.endpoint_node(src), dst, 0, out);
  };
  const auto next = [&](NodeId at, Channel in, EndpointId dst, std::vector<Channel>& out) {
    step(at, dst, in.vc, out);
  };
  const DependencyReport r = check_channel_dependencies(t, 2, first, next);
  EXPECT_TRUE(r.acyclic);
  // Without the VC switch the same routing is cyclic: the check can fail.
  const auto next_one_vc = [&](NodeId at, Channel, EndpointId dst, std::vector<Channel>& out) {
    step(at, dst, 0, out);
  };
  EXPECT_FALSE(check_channel_dependencies(t, 2, first, next_one_vc).acyclic);
}

TEST(ChannelDependencies, MinimalRoutingOnTheDirectTopologiesNeedsVirtualChannels) {
  // Why `fabricsim run` refuses these kinds until their VC schemes exist:
  // plain minimal routing on one VC has dependency cycles on each.
  for (const Topology& t : small_direct_topologies()) {
    const DependencyReport r = check_minimal_routing(t, RoutingTable(t));
    EXPECT_FALSE(r.acyclic) << t.describe();
    if (!r.acyclic) expect_valid_cycle(t, r);
  }
}

// One switch with n endpoints: a packet from i holds i's up channel while
// it waits for j's down channel, for every i != j, so the graph has exactly
// n (n - 1) distinct dependencies over 2n used channels, and no cycle.
// The lists grow by one per destination, which is where deduplicating every
// long list after each destination was quadratic; the count checks the
// amortized deduplication keeps each dependency once.
Topology star(std::uint32_t n) {
  Topology t;
  const NodeId s = t.add_node(NodeKind::Switch, 1, n, "s", true);
  std::vector<NodeId> e;
  for (std::uint32_t i = 0; i < n; ++i) e.push_back(t.add_node(NodeKind::Endpoint, 0, 1, std::string("e").append(std::to_string(i)), false));
  for (std::uint32_t i = 0; i < n; ++i) t.connect(e[i], s, LinkClass::Host, LinkParams{});
  return t;
}

TEST(ChannelDependencies, StarCountsEachDependencyOnce) {
  for (std::uint32_t n : {2u, 3u, 65u, 130u, 300u}) {
    const Topology t = star(n);
    const DependencyReport r = check_minimal_routing(t, RoutingTable(t));
    EXPECT_TRUE(r.acyclic) << n;
    EXPECT_EQ(r.channels_used, 2u * n) << n;
    EXPECT_EQ(r.dependencies, std::size_t{n} * (n - 1)) << n;
  }
}

TEST(ChannelDependencies, UpDownRoutingIsAcyclicOnEveryTopology) {
  // Up*/down* routes (what custom graphs with cycles run on) on the graphs
  // where minimal routing has cycles, and on a fat tree: acyclic, and every
  // endpoint reaches every other.
  std::vector<Topology> topologies = small_direct_topologies();
  TorusParams ring;
  ring.dims = {4};
  ring.boards = false;
  topologies.push_back(build_torus(ring));
  FatTreeParams ft;
  ft.endpoints = 32;
  ft.radix = 8;
  topologies.push_back(build_fat_tree(ft));
  for (const Topology& t : topologies) {
    SCOPED_TRACE(t.describe());
    const UpDownRoutes ud(t);
    std::vector<PortIndex> ports;
    const auto first = [&](EndpointId src, EndpointId dst, std::vector<Channel>& out) {
      const NodeId at = t.endpoint_node(src);
      ports.clear();
      ud.candidates(at, false, dst, ports);
      EXPECT_FALSE(ports.empty()) << "no first hop from " << src << " to " << dst;
      for (PortIndex p : ports) out.push_back(Channel{t.node(at).out[p], 0});
    };
    // After a down link only down links are legal, so the phase is whether
    // the arriving link went down.
    const auto next = [&](NodeId at, Channel in, EndpointId dst, std::vector<Channel>& out) {
      ports.clear();
      ud.candidates(at, ud.is_down(in.link), dst, ports);
      EXPECT_TRUE(!ports.empty() || at == t.endpoint_node(dst)) << "stranded at " << t.node(at).name;
      for (PortIndex p : ports) out.push_back(Channel{t.node(at).out[p], 0});
    };
    const DependencyReport r = check_channel_dependencies(t, 1, first, next);
    EXPECT_TRUE(r.acyclic);
    for (EndpointId s = 0; s < t.endpoint_count(); ++s)
      for (EndpointId d = 0; d < t.endpoint_count(); ++d)
        if (s != d) {
          EXPECT_LT(ud.hops(t.endpoint_node(s), false, d), UpDownRoutes::kUnreachable);
        }
    // Never shorter than a minimal route.
    const RoutingTable minimal(t);
    for (EndpointId d = 0; d < t.endpoint_count(); ++d)
      EXPECT_GE(ud.hops(t.endpoint_node(0), false, d), minimal.hops(t.endpoint_node(0), d));
  }
}

}  // namespace
}  // namespace fabricsim::net
