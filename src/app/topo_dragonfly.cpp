// dragonfly: minimal or adaptive route rules, or Valiant / UGAL through a
// random intermediate group (the group of every node set up here).
#include "topology_kinds.hpp"

#include "fabricsim/net/state_routes.hpp"

namespace fabricsim::app {

namespace {

net::Topology build_dragonfly(const config::Config& cfg, const LinkClasses& links) {
  net::DragonflyParams p;
  p.a = cfg_u32(cfg, "topology.a");
  p.p = cfg_u32(cfg, "topology.p");
  p.h = cfg_u32(cfg, "topology.h");
  p.groups = cfg_u32(cfg, "topology.groups");
  p.arrangement = cfg.get_string("topology.arrangement");
  p.routers_per_switch = cfg_u32(cfg, "topology.routers_per_switch");
  p.host = links.host;
  p.local = links.fabric;
  p.global = links.fabric;
  return net::build_dragonfly(p);
}

void dragonfly_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  using A = net::RoutingAlgorithm;
  const A a = np.routing;
  const bool valiant = a == A::Valiant || a == A::UgalLocal || a == A::UgalGlobal;
  if (!valiant && a != A::Minimal && a != A::Adaptive)
    wrong_algorithm(cfg, topo.kind, "minimal, adaptive, valiant, ugal_local or ugal_global");
  const std::uint32_t per_group = cfg_u32(cfg, "topology.a");
  r.routes = std::make_unique<net::StateRoutes>(topo, net::dragonfly_rules(topo, valiant ? 2 : 1),
                                                net::dragonfly_distance(topo, per_group, valiant ? 2 : 1, false));
  if (valiant) {
    // Group of every node: routers are numbered group-major after the
    // endpoints (build_dragonfly); an endpoint is in its router's group.
    np.group_of.assign(topo.node_count(), 0);
    std::vector<std::vector<net::NodeId>> groups;
    for (net::NodeId n = 0; n < topo.node_count(); ++n) {
      if (topo.node(n).kind != net::NodeKind::Switch) continue;
      const std::uint32_t g = static_cast<std::uint32_t>((n - topo.endpoint_count()) / per_group);
      np.group_of[n] = g;
      if (groups.size() <= g) groups.resize(g + 1);
      groups[g].push_back(n);
    }
    for (net::NodeId n = 0; n < topo.node_count(); ++n)
      if (topo.node(n).kind == net::NodeKind::Endpoint) np.group_of[n] = np.group_of[topo.link(topo.node(n).out[0]).dst];
    // The first leg takes one global link (two could be as short, and
    // would leave none for the second leg): the state counts global
    // links in both tables, so the packet goes on in the same numbering.
    r.valiant = std::make_unique<net::StateRoutes>(topo, net::dragonfly_rules(topo, 1),
                                                   net::dragonfly_distance(topo, per_group, 1, true), std::move(groups));
    np.valiant_routes = r.valiant.get();
  }
  use_route_rules(np, r);
}

}  // namespace

extern const TopologyKind kDragonfly{"dragonfly", &build_dragonfly, &dragonfly_routing};

}  // namespace fabricsim::app
