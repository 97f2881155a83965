// hammingmesh, and hyperx (a 2D HyperX: by default the HammingMesh of 1x1
// boards, the "hx1mesh" reading of spec §3; hyperx_model = "routers" its
// switch-based reading, §6): route rules (adaptive, minimal or dor), board
// placements.
#include "topology_kinds.hpp"

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

bool hx1mesh(const config::Config& cfg) {
  return cfg.get_string("topology.kind") == "hyperx" && cfg.get_string("topology.hyperx_model") == "hx1mesh";
}

std::optional<BoardGrid> grid_of(const config::Config& cfg) {
  const bool one = hx1mesh(cfg);
  BoardGrid g;
  g.a = one ? 1 : cfg_u32(cfg, "topology.board_a");
  g.b = one ? 1 : cfg_u32(cfg, "topology.board_b");
  g.x = cfg_u32(cfg, "topology.x");
  g.y = cfg_u32(cfg, "topology.y");
  return g;
}

net::Topology build_hammingmesh(const config::Config& cfg, const LinkClasses& links) {
  const bool hyperx = cfg.get_string("topology.kind") == "hyperx";
  net::HammingMeshParams p;
  const BoardGrid g = *grid_of(cfg);
  p.board_a = g.a;
  p.board_b = g.b;
  p.x = g.x;
  p.y = g.y;
  p.radix = cfg_u32(cfg, "topology.radix");
  p.board = links.board;
  p.host = links.host;
  p.fabric = links.fabric;
  net::Topology t = net::build_hammingmesh(p);
  if (hyperx)
    t.set_description("2D HyperX " + std::to_string(p.x) + "x" + std::to_string(p.y) +
                      " (hx1mesh model: forwarding accelerators, one plane): " + t.describe());
  return t;
}

void hammingmesh_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  using A = net::RoutingAlgorithm;
  const A a = np.routing;
  if (a != A::Dor && a != A::Adaptive && a != A::Minimal) wrong_algorithm(cfg, topo.kind, "adaptive, minimal or dor");
  const BoardGrid g = *grid_of(cfg);
  r.routes = std::make_unique<net::StateRoutes>(topo, net::hammingmesh_rules(topo, g.a, g.b, g.x, g.y, a == A::Dor),
                                                net::hammingmesh_distance(topo, g.a, g.b, g.x, g.y, a == A::Dor));
  use_route_rules(np, r);
}

net::Topology build_hyperx(const config::Config& cfg, const LinkClasses& links) {
  if (cfg.get_string("topology.hyperx_model") != "routers") {
    if (cfg.get_int("topology.concentration") != 1)
      throw util::ConfigError(
          "topology.concentration: the hx1mesh model of a HyperX has one accelerator per grid point "
          "(set topology.hyperx_model = \"routers\" for routers with several endpoints)");
    return build_hammingmesh(cfg, links);
  }
  net::HyperXParams p;
  p.x = cfg_u32(cfg, "topology.x");
  p.y = cfg_u32(cfg, "topology.y");
  p.concentration = cfg_u32(cfg, "topology.concentration");
  p.radix = cfg_u32(cfg, "topology.radix");
  p.host = links.host;
  p.fabric = links.fabric;
  return net::build_hyperx(p);
}

void hyperx_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  if (hx1mesh(cfg)) return hammingmesh_routing(cfg, topo, np, r);
  using A = net::RoutingAlgorithm;
  const A a = np.routing;
  if (a != A::Dor && a != A::Adaptive && a != A::Minimal) wrong_algorithm(cfg, topo.kind, "adaptive, minimal or dor");
  const std::uint32_t x = cfg_u32(cfg, "topology.x"), y = cfg_u32(cfg, "topology.y");
  const std::uint32_t c = cfg_u32(cfg, "topology.concentration");
  r.routes = std::make_unique<net::StateRoutes>(topo, net::hyperx_rules(topo, x, y, c, a == A::Dor),
                                                net::hyperx_distance(topo, x, y, c, a == A::Dor));
  use_route_rules(np, r);
}

std::optional<BoardGrid> hyperx_grid(const config::Config& cfg) {
  return hx1mesh(cfg) ? grid_of(cfg) : std::nullopt;
}

}  // namespace

extern const TopologyKind kHammingMesh{"hammingmesh", &build_hammingmesh, &hammingmesh_routing, &grid_of};
extern const TopologyKind kHyperX{"hyperx", &build_hyperx, &hyperx_routing, &hyperx_grid};

}  // namespace fabricsim::app
