// Switch-based 2D HyperX builder; the wiring rules are documented on
// HyperXParams.
//
// Node order: endpoints ((Y*x + X)*c + k), then routers "routerN",
// N = Y*x + X.  Cabling order (it fixes every port number, since
// Topology::connect gives each end its next free port): the endpoint cables
// in endpoint order; then the row cables, row Y by row, pairs (X, X') with
// X < X' in lexicographic order; then the column cables, column X by column,
// pairs (Y, Y') likewise.  A router therefore sees its row peers in
// ascending X' and then its column peers in ascending Y'.
#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {
using detail::num;
using detail::require_positive;
using util::ConfigError;
}  // namespace

Topology build_hyperx(const HyperXParams& params) {
  detail::validate_link_params(params.host, "topology.host_link");
  detail::validate_link_params(params.fabric, "topology.fabric_link");
  require_positive(params.x, "topology.x");
  require_positive(params.y, "topology.y");
  require_positive(params.concentration, "topology.concentration");
  const std::uint64_t x = params.x;
  const std::uint64_t y = params.y;
  const std::uint64_t c = params.concentration;
  const std::uint64_t k = params.radix;
  if (k < 2) throw ConfigError("topology.radix: must be at least 2, got " + num(k));
  if (k > kMaxRadix) throw ConfigError("topology.radix: " + num(k) + " exceeds the supported " + num(kMaxRadix));
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (x * y >= kLimit || x * y * c >= kLimit) {
    throw ConfigError("topology.x: " + num(x) + "x" + num(y) + " routers of " + num(c) + " endpoints is too large");
  }
  const std::uint64_t ports = c + (x - 1) + (y - 1);
  if (ports > k) {
    // One router is one switch box: no packing of a router into several.
    throw ConfigError("topology.radix: a router of a " + num(x) + "x" + num(y) + " HyperX needs concentration + " +
                      "(x-1) + (y-1) = " + num(c) + " + " + num(x - 1) + " + " + num(y - 1) + " = " + num(ports) +
                      " ports, more than topology.radix " + num(k) +
                      " (one switch per router: use fewer endpoints per router or a smaller grid)");
  }
  const std::uint64_t routers = x * y;
  const std::uint64_t n = routers * c;
  if (n < 2) throw ConfigError("topology.x: a HyperX needs at least 2 endpoints, got " + num(n));
  const std::uint64_t fabric_cables = routers * ((x - 1) + (y - 1)) / 2;
  const std::uint64_t cables = n + fabric_cables;
  if (n + routers >= kNoNode || 2 * cables >= kNoLink) {
    throw ConfigError("topology.x: " + num(x) + "x" + num(y) + " routers of " + num(c) + " endpoints is too large");
  }

  Topology topo;
  topo.kind = "hyperx";
  topo.reserve(n + routers, 2 * cables);
  for (std::uint64_t e = 0; e < n; ++e) topo.add_node(NodeKind::Endpoint, 0, 1, "ep" + num(e), false);
  const auto first_router = static_cast<NodeId>(n);
  for (std::uint64_t r = 0; r < routers; ++r) {
    topo.add_node(NodeKind::Switch, 1, static_cast<std::uint32_t>(ports), "router" + num(r), true);
  }
  const auto router = [&](std::uint64_t X, std::uint64_t Y) { return first_router + static_cast<NodeId>(Y * x + X); };
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.connect(static_cast<NodeId>(e), first_router + static_cast<NodeId>(e / c), LinkClass::Host, params.host,
                 CableType::DAC);
  }
  for (std::uint64_t Y = 0; Y < y; ++Y)
    for (std::uint64_t X = 0; X < x; ++X)
      for (std::uint64_t X2 = X + 1; X2 < x; ++X2)
        topo.connect(router(X, Y), router(X2, Y), LinkClass::Fabric, params.fabric, CableType::AoC);
  for (std::uint64_t X = 0; X < x; ++X)
    for (std::uint64_t Y = 0; Y < y; ++Y)
      for (std::uint64_t Y2 = Y + 1; Y2 < y; ++Y2)
        topo.connect(router(X, Y), router(X, Y2), LinkClass::Fabric, params.fabric, CableType::AoC);

  // A router and its endpoints: one unit for the partitioner.
  topo.units.resize(n + routers);
  for (std::uint64_t e = 0; e < n; ++e) topo.units[e] = static_cast<std::uint32_t>(e / c);
  for (std::uint64_t r = 0; r < routers; ++r) topo.units[n + r] = static_cast<std::uint32_t>(r);

  // Bisection: lower rows against upper rows (or columns), each router on
  // its endpoints' side.
  if (y % 2 == 0 || x % 2 == 0) {
    const bool by_rows = y % 2 == 0;
    std::vector<std::uint8_t> endpoint_side(n);
    std::vector<std::uint8_t> node_side(n + routers);
    for (std::uint64_t r = 0; r < routers; ++r) {
      const std::uint64_t X = r % x, Y = r / x;
      const std::uint8_t side = by_rows ? (Y >= y / 2 ? 1 : 0) : (X >= x / 2 ? 1 : 0);
      node_side[n + r] = side;
      for (std::uint64_t i = 0; i < c; ++i) endpoint_side[r * c + i] = node_side[r * c + i] = side;
    }
    topo.measure_bisection(endpoint_side, node_side);
  }
  topo.set_description("switch-based 2D HyperX " + num(x) + "x" + num(y) + " routers, " + num(c) +
                       (c == 1 ? " endpoint" : " endpoints") + " per router (" + num(ports) + " ports each), " +
                       num(n) + " endpoints");
  return topo;
}

}  // namespace fabricsim::net
