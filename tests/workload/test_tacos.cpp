// workload/tacos.hpp: the NPU graph a communicator sees on a fabric (direct
// cables, switch groups unwound by the spec's rules), checked against the
// links worked out by hand here from each builder's documented wiring.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/tacos.hpp"

using namespace fabricsim;

namespace {

// (src, dst) -> (count, gbps, alpha): parallel links counted.
using LinkMap = std::map<std::pair<std::uint32_t, std::uint32_t>, std::tuple<int, double, double>>;

LinkMap links_of(const synth::NpuGraph& g) {
  LinkMap m;
  for (const synth::Link& l : g.links) {
    auto& [count, gbps, alpha] = m[{l.src, l.dst}];
    ++count;
    gbps = l.gbps;
    alpha = l.alpha_ns;
  }
  return m;
}

std::vector<net::EndpointId> all_ranks(const net::Topology& t) {
  std::vector<net::EndpointId> r(t.endpoint_count());
  for (net::EndpointId e = 0; e < r.size(); ++e) r[e] = e;
  return r;
}

net::Topology leaf_spine_2x4() {
  net::LeafSpineParams p;
  p.leaves = 2;
  p.spines = 2;
  p.servers_per_leaf = 1;
  p.gpus_per_server = 4;
  p.radix = 8;
  p.host = {.bandwidth_gbps = 400, .latency = core::SimTime::from_ns(30)};
  p.fabric = {.bandwidth_gbps = 400, .latency = core::SimTime::from_ns(50)};
  p.intra_server = {.bandwidth_gbps = 1200, .latency = core::SimTime::from_ns(10)};
  return net::build_leaf_spine(p);
}

}  // namespace

// Two servers of 4 GPUs: each server's intra-server switch is unwound fully
// connected (12 links of 1200/3 Gb/s, alpha 10 + 10 ns); the leaf-spine
// (one switch group) is a ring over the 8 GPUs in rank order at the NIC's
// 400 Gb/s, alpha 30 + 30 ns.
TEST(TacosNpuGraph, LeafSpineIntraServerFullyConnectedAndRingAcross) {
  const net::Topology t = leaf_spine_2x4();
  const synth::NpuGraph g = workload::npu_graph(t, all_ranks(t), "ring");
  ASSERT_EQ(g.npus, 8u);
  LinkMap want;
  for (std::uint32_t s = 0; s < 2; ++s)
    for (std::uint32_t a = 0; a < 4; ++a)
      for (std::uint32_t b = 0; b < 4; ++b)
        if (a != b) want[{4 * s + a, 4 * s + b}] = {1, 400.0, 20.0};
  for (std::uint32_t r = 0; r < 8; ++r) {
    auto& [count, gbps, alpha] = want[{r, (r + 1) % 8}];
    if (count == 0) {
      want[{r, (r + 1) % 8}] = {1, 400.0, 60.0};
    } else {
      // Inside a server the ring link parallels an intra-server one.
      count = 2;
    }
  }
  const LinkMap got = links_of(g);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [pair, v] : want) {
    const auto it = got.find(pair);
    ASSERT_NE(it, got.end()) << pair.first << "->" << pair.second;
    EXPECT_EQ(std::get<0>(it->second), std::get<0>(v)) << pair.first << "->" << pair.second;
    if (std::get<0>(v) == 1) {
      EXPECT_DOUBLE_EQ(std::get<1>(it->second), std::get<1>(v)) << pair.first << "->" << pair.second;
      EXPECT_DOUBLE_EQ(std::get<2>(it->second), std::get<2>(v)) << pair.first << "->" << pair.second;
    }
  }
}

// A fat tree is one switch group: degree d gives the next d members at 1/d
// of the NIC; bidirectional_ring both neighbours at half; max all others.
TEST(TacosNpuGraph, FatTreeUnwindings) {
  net::FatTreeParams p;
  p.endpoints = 8;
  p.radix = 4;
  p.host = {.bandwidth_gbps = 240, .latency = core::SimTime::from_ns(7)};
  const net::Topology t = net::build_fat_tree(p);
  const auto ranks = all_ranks(t);
  for (const auto& [unwind, degree, share] : {std::tuple{"ring", 1u, 240.0}, std::tuple{"2", 2u, 120.0},
                                               std::tuple{"3", 3u, 80.0}, std::tuple{"max", 7u, 240.0 / 7}}) {
    const LinkMap got = links_of(workload::npu_graph(t, ranks, unwind));
    ASSERT_EQ(got.size(), 8u * degree) << unwind;
    for (std::uint32_t r = 0; r < 8; ++r)
      for (std::uint32_t j = 1; j <= degree; ++j) {
        const auto it = got.find({r, (r + j) % 8});
        ASSERT_NE(it, got.end()) << unwind;
        EXPECT_DOUBLE_EQ(std::get<1>(it->second), share) << unwind;
        EXPECT_DOUBLE_EQ(std::get<2>(it->second), 14.0) << unwind;
      }
  }
  const LinkMap bi = links_of(workload::npu_graph(t, ranks, "bidirectional_ring"));
  ASSERT_EQ(bi.size(), 16u);
  for (std::uint32_t r = 0; r < 8; ++r) {
    EXPECT_DOUBLE_EQ(std::get<1>(bi.at({r, (r + 1) % 8})), 120.0);
    EXPECT_DOUBLE_EQ(std::get<1>(bi.at({r, (r + 7) % 8})), 120.0);
  }
  // A sub-communicator in another order: the ring follows its ranks.
  const LinkMap sub = links_of(workload::npu_graph(t, {5, 2, 7}, "ring"));
  EXPECT_EQ(sub.size(), 3u);
  EXPECT_TRUE(sub.count({0, 1}) && sub.count({1, 2}) && sub.count({2, 0}));
  EXPECT_THROW(workload::npu_graph(t, ranks, "0"), util::ConfigError);
  EXPECT_THROW(workload::npu_graph(t, ranks, "fast"), util::ConfigError);
}

// Links down from the start are left out; an endpoint without a live link
// is a failed NPU.
TEST(TacosNpuGraph, DownLinksAndFailedNpus) {
  const net::Topology t = leaf_spine_2x4();
  // GPU 5's links (its NIC and its intra-server cable), both directions.
  std::vector<net::LinkId> down;
  const net::Node& gpu5 = t.nodes()[t.endpoint_node(5)];
  for (net::LinkId l : gpu5.out) {
    down.push_back(l);
    down.push_back(t.links()[l].reverse);
  }
  const synth::NpuGraph g = workload::npu_graph(t, all_ranks(t), "ring", "workload", down);
  ASSERT_EQ(g.failed.size(), 8u);
  for (std::uint32_t r = 0; r < 8; ++r) EXPECT_EQ(g.failed[r] != 0, r == 5) << r;
  for (const synth::Link& l : g.links) EXPECT_TRUE(l.src != 5 && l.dst != 5);
  // The ring skips the dead member: 4 -> 6 closes it.
  EXPECT_TRUE(links_of(g).count({4, 6}));
}
