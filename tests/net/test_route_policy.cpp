// The routing policies' registry (route_policy.hpp) against the declared
// parameter and the models' use of it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fabricsim/config/config.hpp"
#include "fabricsim/net/route_policy.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"

using namespace fabricsim;

TEST(RoutePolicy, RegistryAndParameterNameTheSamePolicies) {
  // A policy declared in one place and not the other would be either
  // unreachable from a configuration or accepted and then refused.
  const config::ParamDecl* d = config::find_parameter("routing.algorithm");
  ASSERT_NE(d, nullptr);
  std::set<std::string> declared(d->choices.begin(), d->choices.end());
  std::set<std::string> registered;
  for (const auto& p : net::route_policies()) {
    EXPECT_TRUE(registered.insert(p.name).second) << p.name << " registered twice";
    EXPECT_EQ(net::parse_routing_algorithm(p.name), p.id) << p.name;
    EXPECT_EQ(&net::route_policy(p.id), &p) << p.name;
  }
  EXPECT_EQ(declared, registered);
  EXPECT_THROW(net::parse_routing_algorithm("nope"), util::ConfigError);
}

TEST(RoutePolicy, EveryTablePolicyPicksACandidateAtEveryNodeOfATree) {
  // Each deterministic table policy on a 3-level fat tree: for every
  // (node, destination) with several candidates, and several messages of
  // every source, an index in range; D-mod-k's choice checked by hand at
  // a leaf (up: the destination's digit at that level).
  net::FatTreeParams fp;
  fp.endpoints = 64;
  fp.radix = 8;
  const net::Topology topo = net::build_fat_tree(fp);
  const net::RoutingTable table(topo);
  const net::Ecmp ecmp(topo, net::EcmpHash::Murmur3, 7);
  const std::vector<std::uint32_t> div = net::dmodk_divisors(topo);
  for (const auto& p : net::route_policies()) {
    if (p.table_pick == nullptr) continue;
    for (net::NodeId n = 0; n < topo.node_count(); ++n) {
      if (topo.node(n).kind != net::NodeKind::Switch) continue;
      for (net::EndpointId dst = 0; dst < topo.endpoint_count(); dst += 5) {
        const auto ports = table.candidates(n, dst);
        if (ports.size() < 2) continue;
        for (net::EndpointId src = 0; src < topo.endpoint_count(); src += 7) {
          const net::PickContext c{topo, ecmp, div, n, src, dst, static_cast<std::uint16_t>(src * 31 + dst)};
          const std::size_t i = p.table_pick(c, ports);
          ASSERT_LT(i, ports.size()) << p.name;
          if (p.id == net::RoutingAlgorithm::DmodK) {
            const bool down = topo.node(topo.link(topo.node(n).out[ports[0]]).dst).level < topo.node(n).level;
            EXPECT_EQ(i, down ? dst % ports.size() : (dst / div[topo.node(n).level]) % ports.size());
          }
          if (p.id == net::RoutingAlgorithm::Ecmp) {
            EXPECT_EQ(i, ecmp.hash(n, src, dst, c.sport) % ports.size());
          }
        }
      }
    }
  }
}
