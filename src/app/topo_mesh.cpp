// mesh: a 1D, 2D or 3D mesh of forwarding accelerators without
// wrap-around links (TACOS' Mesh, an on-package or wafer-scale fabric),
// routed in dimension order (lowest dimension first: xy routing), which on
// a mesh needs one virtual channel (no dateline: nothing wraps).  Node id =
// endpoint id = x + X (y + Y z).
#include "topology_kinds.hpp"

#include <cstdlib>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

std::vector<std::uint32_t> mesh_dims(const config::Config& cfg) {
  std::vector<std::uint32_t> d;
  for (std::int64_t v : cfg.get_int_list("topology.dims")) d.push_back(static_cast<std::uint32_t>(v));
  if (d.empty() || d.size() > 3)
    throw util::ConfigError("topology.dims: a mesh has 1, 2 or 3 dimensions, not " + std::to_string(d.size()));
  return d;
}

/// Coordinates of node n (dimension 0 fastest).
struct Coords {
  std::vector<std::uint32_t> dims;
  std::uint32_t of(std::uint32_t n, std::size_t d) const {
    for (std::size_t k = 0; k < d; ++k) n /= dims[k];
    return n % dims[d];
  }
};

net::Topology build_mesh(const config::Config& cfg, const LinkClasses& links) {
  const std::vector<std::uint32_t> dims = mesh_dims(cfg);
  std::uint64_t n = 1, cables = 0;
  for (std::uint32_t s : dims) n *= s;
  if (n < 2 || n > (1u << 24)) throw util::ConfigError("topology.dims: a mesh of 2 to 2^24 accelerators");
  for (std::size_t d = 0; d < dims.size(); ++d) cables += n / dims[d] * (dims[d] - 1);
  net::Topology t;
  t.kind = "mesh";
  t.reserve(n, 2 * cables);
  const auto radix = static_cast<std::uint32_t>(2 * dims.size());
  for (std::uint64_t e = 0; e < n; ++e) t.add_node(net::NodeKind::Endpoint, 0, radix, "ep" + std::to_string(e), true);
  const Coords c{dims};
  std::uint64_t stride = 1;
  std::string shape;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    for (std::uint64_t e = 0; e < n; ++e)
      if (c.of(static_cast<std::uint32_t>(e), d) + 1 < dims[d])
        t.connect(static_cast<net::NodeId>(e), static_cast<net::NodeId>(e + stride), net::LinkClass::Fabric,
                  links.fabric);
    stride *= dims[d];
    if (d > 0) shape += 'x';
    shape += std::to_string(dims[d]);
  }
  t.set_description("mesh " + shape + ", " + std::to_string(n) + " accelerators, no wrap-around (" +
                    std::to_string(cables) + " cables)");
  return t;
}

/// Dimension order: the only legal move corrects the lowest dimension in
/// which the node differs from the target, one step towards it.  Memoryless
/// (one state, one channel); the channel dependencies follow the dimension
/// order and, within a dimension, one direction, so they are acyclic.
class MeshRules final : public net::RouteRules {
 public:
  MeshRules(const net::Topology& topo, std::vector<std::uint32_t> dims) : topo_(topo), c_{std::move(dims)} {}
  std::uint8_t state_count() const override { return 1; }
  std::uint8_t step(net::NodeId at, std::uint8_t, net::LinkId l, std::uint32_t target, unsigned) const override {
    const net::NodeId to = topo_.link(l).dst;
    for (std::size_t d = 0; d < c_.dims.size(); ++d) {
      const std::uint32_t a = c_.of(at, d), t = c_.of(target, d);
      if (a == t) continue;
      const std::uint32_t want = a < t ? a + 1 : a - 1;
      for (std::size_t k = 0; k < c_.dims.size(); ++k)
        if (c_.of(to, k) != (k == d ? want : c_.of(at, k))) return kIllegal;
      return 0;
    }
    return kIllegal;  // at the target
  }
  std::uint8_t vc(std::uint8_t) const override { return 0; }
  std::uint8_t vcs() const override { return 1; }
  bool depends_on_target() const override { return true; }
  std::string describe() const override { return "mesh dimension order (xy), one VC"; }

 private:
  const net::Topology& topo_;
  Coords c_;
};

/// The dimension-order route's length: the Manhattan distance.
class MeshDistance final : public net::RouteDistance {
 public:
  explicit MeshDistance(std::vector<std::uint32_t> dims) : c_{std::move(dims)} {}
  std::uint16_t hops(net::NodeId at, std::uint8_t, std::uint32_t target) const override {
    std::uint32_t h = 0;
    for (std::size_t d = 0; d < c_.dims.size(); ++d)
      h += static_cast<std::uint32_t>(std::abs(static_cast<std::int64_t>(c_.of(at, d)) - c_.of(target, d)));
    return static_cast<std::uint16_t>(std::min<std::uint32_t>(h, net::StateRoutes::kUnreachable - 1));
  }

 private:
  Coords c_;
};

void mesh_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  if (np.routing != net::RoutingAlgorithm::Dor) wrong_algorithm(cfg, topo.kind, "dor");
  const std::vector<std::uint32_t> dims = mesh_dims(cfg);
  r.routes = std::make_unique<net::StateRoutes>(topo, std::make_unique<MeshRules>(topo, dims),
                                                std::make_unique<MeshDistance>(dims));
  use_route_rules(np, r);
}

std::vector<net::EndpointId> mesh_grid(const config::Config& cfg) {
  std::uint64_t n = 1;
  for (std::uint32_t d : mesh_dims(cfg)) n *= d;
  std::vector<net::EndpointId> out(n);
  for (std::uint64_t e = 0; e < n; ++e) out[e] = static_cast<net::EndpointId>(e);
  return out;
}

}  // namespace

extern const TopologyKind kMesh{"mesh", &build_mesh, &mesh_routing, nullptr, &mesh_grid};

}  // namespace fabricsim::app
