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
#include <numeric>
#include <cstdlib>
#include <array>
#include <algorithm>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"
#include "net/route_detail.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {
using detail::num;
using detail::require_positive;
using util::ConfigError;
}  // namespace

Topology build_hyperx(const HyperXParams& params) {
  detail::check_builder_params(
      {{params.host, "topology.host_link"}, {params.fabric, "topology.fabric_link"}},
      {{params.x, "topology.x"}, {params.y, "topology.y"}, {params.concentration, "topology.concentration"}});
  detail::check_radix(params.radix);
  const std::uint64_t x = params.x;
  const std::uint64_t y = params.y;
  const std::uint64_t c = params.concentration;
  const std::uint64_t k = params.radix;
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
  // Endpoint cable, a router hop per coordinate that can differ, endpoint cable.
  topo.set_known_diameter(2 + (x > 1 ? 1 : 0) + (y > 1 ? 1 : 0));
  topo.set_description("switch-based 2D HyperX " + num(x) + "x" + num(y) + " routers, " + num(c) +
                       (c == 1 ? " endpoint" : " endpoints") + " per router (" + num(ports) + " ports each), " +
                       num(n) + " endpoints");
  return topo;
}


// ================================================================ routes
// Its route rules (RouteRules) and the legal-route lengths computed from
// coordinates (RouteDistance; see route_detail.hpp), kept with the builder
// whose numbering they read (state_routes.hpp).

namespace {

using route_detail::clamp_hops;
using route_detail::kFar;
using route_detail::kInf;

// ----------------------------------------------------- switch-based HyperX

// Endpoints first, then router Y*x + X (build_hyperx).  State: router hops
// taken (0..2) | Y dimension taken << 2.  A router-to-router hop is legal
// while fewer than two were taken (two fix both coordinates of a minimal
// route) and, in dimension order, an X hop only before any Y hop; endpoint
// links keep the state.  VC = router hops taken before the link (the first
// router hop VC 0, the second VC 1; endpoint links VC 0, or 1 into the
// destination after two hops): a packet waits only for a channel of a
// higher hop number, or for an ejection link that waits for nothing, so
// the dependency graph is acyclic.
class HyperXRules final : public RouteRules {
 public:
  HyperXRules(const Topology& topo, std::uint32_t x, std::uint32_t y, std::uint32_t c, bool dimension_order)
      : dor_(dimension_order) {
    const std::uint64_t routers = static_cast<std::uint64_t>(x) * y;
    const std::uint64_t n = routers * c;
    if (topo.kind != "hyperx" || topo.endpoint_count() != n || topo.node_count() != n + routers)
      throw util::ConfigError(
          "routing.algorithm: HyperX routing needs the switch-based HyperX built from topology.x, y and concentration");
    kind_.resize(topo.link_count());
    for (LinkId l = 0; l < topo.link_count(); ++l) {
      const Link& k = topo.link(l);
      if (k.src < n || k.dst < n) {
        kind_[l] = kHost;
      } else {
        const std::uint64_t ru = k.src - n, rv = k.dst - n;
        kind_[l] = ru / x == rv / x ? kRow : kCol;
      }
    }
  }
  std::uint8_t state_count() const override { return 8; }
  std::uint8_t vcs() const override { return 2; }
  std::uint8_t vc(std::uint8_t s) const override { return (s & 3u) == 0 ? 0 : static_cast<std::uint8_t>((s & 3u) - 1); }
  std::string describe() const override {
    return dor_ ? "HyperX dimension order (X then Y), VC per router hop"
                : "HyperX minimal adaptive (either dimension first), VC per router hop";
  }
  std::uint8_t step(NodeId, std::uint8_t s, LinkId l, std::uint32_t, unsigned) const override {
    const unsigned hops = s & 3u, col = (s >> 2) & 1u;
    switch (kind_[l]) {
      case kHost:
        return s;
      case kRow:
        if (hops >= 2 || (dor_ && col)) return kIllegal;
        return static_cast<std::uint8_t>((hops + 1) | col << 2);
      default:  // kCol
        if (hops >= 2) return kIllegal;
        return static_cast<std::uint8_t>((hops + 1) | 1u << 2);
    }
  }

 private:
  enum : std::uint8_t { kHost, kRow, kCol };
  bool dor_;
  std::vector<std::uint8_t> kind_;
};

// ----------------------------------------------------- switch-based HyperX

// Endpoints ((Y*x + X)*c + k), then router Y*x + X (build_hyperx); state
// hops taken (0..2) | Y taken << 2 (its rules above).  From a router every
// router hop fixes at most one coordinate, and a hop to the router that
// shares the target's coordinate in that dimension fixes it, so the
// shortest legal route corrects each differing coordinate once and ends
// with the endpoint link: differing coordinates + 1, if the hops left
// allow that many (and, in dimension order, X still may be corrected when
// it differs); otherwise no legal route reaches the target.  Exact at
// every router state a rule produces (hops taken 0..2); at an endpoint other
// than the target only for the initial state (a packet is at an endpoint
// only at its source; elsewhere kUnreachable, above the tables' value).
class HyperXDistance final : public RouteDistance {
 public:
  HyperXDistance(const Topology& topo, std::uint32_t x, std::uint32_t y, std::uint32_t c, bool dimension_order)
      : topo_(topo), x_(x), c_(c), dor_(dimension_order) {
    const std::uint64_t routers = static_cast<std::uint64_t>(x) * y;
    const std::uint64_t n = routers * c;
    if (topo.kind != "hyperx" || topo.endpoint_count() != n || topo.node_count() != n + routers)
      throw util::ConfigError(
          "routing.algorithm: HyperX routing needs the switch-based HyperX built from topology.x, y and concentration");
    endpoints_ = static_cast<NodeId>(n);
    // candidate_ports() computes port numbers from coordinates: check the
    // builder's port order once.
    for (std::uint64_t r = 0; r < routers; ++r) {
      const Node& node = topo.node(endpoints_ + static_cast<NodeId>(r));
      const std::uint32_t X = static_cast<std::uint32_t>(r % x), Y = static_cast<std::uint32_t>(r / x);
      bool ok = node.out.size() == c + (x - 1) + (y - 1);
      for (std::uint32_t k = 0; ok && k < c; ++k) ok = topo.link(node.out[k]).dst == r * c + k;
      for (std::uint32_t X2 = 0; ok && X2 < x; ++X2)
        if (X2 != X) ok = topo.link(node.out[row_port(X, X2)]).dst == router(X2, Y);
      for (std::uint32_t Y2 = 0; ok && Y2 < y; ++Y2)
        if (Y2 != Y) ok = topo.link(node.out[col_port(Y, Y2)]).dst == router(X, Y2);
      if (!ok) throw util::ConfigError("routing.algorithm: HyperX routing: router " + node.name + " is not wired as build_hyperx wires it");
    }
  }

  std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const override {
    const NodeId dst = topo_.endpoint_node(target);
    if (at == dst) return 0;
    if (at < endpoints_) {
      if (s != 0) return kFar;  // an endpoint holds a packet only at its source
      const std::uint16_t d = from_router(at / c_, 0, dst / c_);
      return d == kFar ? kFar : static_cast<std::uint16_t>(d + 1);
    }
    return from_router(at - endpoints_, s, dst / c_);
  }

  bool candidate_ports(NodeId at, std::uint32_t target, std::vector<PortIndex>& ports) const override {
    if (at < endpoints_) return false;
    const std::uint32_t r = at - endpoints_, t = topo_.endpoint_node(target) / c_;
    if (r == t) {
      ports.push_back(static_cast<PortIndex>(topo_.endpoint_node(target) % c_));
      return true;
    }
    const std::uint32_t X = r % x_, Y = r / x_, TX = t % x_, TY = t / x_;
    if (X != TX) ports.push_back(static_cast<PortIndex>(row_port(X, TX)));
    if (Y != TY) ports.push_back(static_cast<PortIndex>(col_port(Y, TY)));
    return true;
  }

 private:
  std::uint16_t from_router(std::uint32_t r, std::uint8_t s, std::uint32_t t) const {
    const unsigned taken = s & 3u, col = (s >> 2) & 1u;
    if (taken > 2) return kFar;
    const bool dx = r % x_ != t % x_, dy = r / x_ != t / x_;
    if (dor_ && col && dx) return kFar;
    const unsigned need = (dx ? 1u : 0u) + (dy ? 1u : 0u);
    if (need > 2 - taken) return kFar;
    return static_cast<std::uint16_t>(need + 1);
  }
  std::uint32_t row_port(std::uint32_t X, std::uint32_t X2) const { return c_ + (X2 < X ? X2 : X2 - 1); }
  std::uint32_t col_port(std::uint32_t Y, std::uint32_t Y2) const {
    return c_ + (x_ - 1) + (Y2 < Y ? Y2 : Y2 - 1);
  }
  NodeId router(std::uint32_t X, std::uint32_t Y) const { return endpoints_ + Y * x_ + X; }

  const Topology& topo_;
  std::uint32_t x_, c_;
  bool dor_;
  NodeId endpoints_ = 0;
};

}  // namespace

std::unique_ptr<RouteRules> hyperx_rules(const Topology& topo, std::uint32_t x, std::uint32_t y,
                                         std::uint32_t concentration, bool dimension_order) {
  return std::make_unique<HyperXRules>(topo, x, y, concentration, dimension_order);
}

std::unique_ptr<RouteDistance> hyperx_distance(const Topology& topo, std::uint32_t x, std::uint32_t y,
                                               std::uint32_t concentration, bool dimension_order) {
  return std::make_unique<HyperXDistance>(topo, x, y, concentration, dimension_order);
}

}  // namespace fabricsim::net
