// topoopt: TopoOpt's direct-connect rings (TotientPerms / the code
// variant), routed by hop count, or by k shortest coin routes per pair
// (routing.k_paths > 1: each message pinned to one, VC = hop).
#include "topology_kinds.hpp"

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

net::Topology build_topoopt(const config::Config& cfg, const LinkClasses& links) {
  net::TopoOptParams p;
  p.servers = cfg_u32(cfg, "topology.servers");
  p.degree = cfg_u32(cfg, "topology.degree");
  for (std::int64_t o : cfg.get_int_list("topology.ring_offsets")) p.ring_offsets.push_back(static_cast<std::uint32_t>(o));
  p.bidirectional_rings = cfg.get_bool("topology.bidirectional_rings");
  p.geo_code_variant = cfg.get_string("topology.ring_selection") == "code";
  p.link = links.fabric;
  return net::build_topoopt(p);
}

void topoopt_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  using A = net::RoutingAlgorithm;
  const A a = np.routing;
  if (a != A::Minimal && a != A::Adaptive && a != A::Spray && a != A::Ecmp)
    wrong_algorithm(cfg, topo.kind, "minimal, adaptive, spray or ecmp");
  const std::uint32_t k_paths = cfg_u32(cfg, "routing.k_paths");
  if (k_paths > 1) {
    r.coin = std::make_unique<net::CoinPaths>(topo, k_paths);
    if (r.coin->max_hops() > np.vcs)
      throw util::ConfigError("network.vcs: the " + std::to_string(k_paths) + " shortest routes of some pair take " +
                              std::to_string(r.coin->max_hops()) + " hops, one virtual channel each; set network.vcs = " +
                              std::to_string(r.coin->max_hops()));
    np.coin_paths = r.coin.get();
  }
  r.routes = std::make_unique<net::StateRoutes>(topo, net::hop_count_rules(topo, np.vcs));
  if (r.coin) {
    np.state_routes = r.routes.get();
    r.note = std::to_string(k_paths) + " shortest loop-free routes per pair (Yen), one per message, VC = hop";
    return;
  }
  use_route_rules(np, r);
}

}  // namespace

extern const TopologyKind kTopoOpt{"topoopt", &build_topoopt, &topoopt_routing, nullptr, nullptr, true};

}  // namespace fabricsim::app
