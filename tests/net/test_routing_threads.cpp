// Routing tables are built with OpenMP; the result must not depend on the
// number of threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <vector>

#include "fabricsim/net/topology.hpp"

using namespace fabricsim;

namespace {
std::vector<std::vector<net::PortIndex>> all_candidates(const net::Topology& topo) {
  const net::RoutingTable rt(topo);
  std::vector<std::vector<net::PortIndex>> out;
  for (net::NodeId n = 0; n < topo.node_count(); ++n)
    for (net::EndpointId d = 0; d < topo.endpoint_count(); d += 7) {
      const auto c = rt.candidates(n, d);
      out.emplace_back(c.begin(), c.end());
    }
  return out;
}
}  // namespace

TEST(RoutingTableThreads, SameTableForAnyThreadCount) {
  net::FatTreeParams p;
  p.endpoints = 1000;  // 3 levels of radix-16 switches, 125 destination groups (two batches)
  p.radix = 16;
  const net::Topology topo = net::build_fat_tree(p);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = all_candidates(topo);
  omp_set_num_threads(3);
  const auto three = all_candidates(topo);
  omp_set_num_threads(saved);
  EXPECT_EQ(one, three);
  EXPECT_GT(one.size(), 1000u);
}
