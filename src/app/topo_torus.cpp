// torus: dimension-order (dor) or adaptive route rules; its accelerator ids
// are row-major over the grid already (the `grid` placement).
#include "topology_kinds.hpp"

#include "fabricsim/net/state_routes.hpp"

namespace fabricsim::app {

namespace {

std::vector<std::uint32_t> dims(const config::Config& cfg) {
  std::vector<std::uint32_t> out;
  for (std::int64_t d : cfg.get_int_list("topology.dims")) out.push_back(static_cast<std::uint32_t>(d));
  return out;
}

net::Topology build_torus(const config::Config& cfg, const LinkClasses& links) {
  net::TorusParams p;
  p.dims = dims(cfg);
  p.boards = cfg.get_bool("topology.boards");
  p.board = links.board;
  p.link = links.fabric;
  return net::build_torus(p);
}

void torus_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  using A = net::RoutingAlgorithm;
  const A a = np.routing;
  if (a != A::Dor && a != A::Adaptive) wrong_algorithm(cfg, topo.kind, "dor or adaptive");
  const std::vector<std::uint32_t> d = dims(cfg);
  r.routes = std::make_unique<net::StateRoutes>(topo, net::torus_rules(topo, d, a == A::Adaptive),
                                                net::torus_distance(topo, d, a == A::Adaptive));
  use_route_rules(np, r);
}

std::vector<net::EndpointId> torus_grid(const config::Config& cfg) {
  std::uint64_t n = 1;
  for (std::uint32_t d : dims(cfg)) n *= d;
  std::vector<net::EndpointId> out(n);
  for (std::uint64_t e = 0; e < n; ++e) out[e] = static_cast<net::EndpointId>(e);
  return out;
}

}  // namespace

extern const TopologyKind kTorus{"torus", &build_torus, &torus_routing, nullptr, &torus_grid};

}  // namespace fabricsim::app
