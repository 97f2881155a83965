// Torus builder; the wiring rules are documented on TorusParams.
//
// Cables are created accelerator by accelerator (id order) and, for each,
// dimension by dimension, from the accelerator to its +1 neighbour, so an
// accelerator's ports are not in a fixed per-direction order: its +1 cable of
// dimension d is created at its own turn, its -1 cable at the turn of its -1
// neighbour.  Accelerator radix = the number of its cables (2 per dimension
// of size >= 3, 1 per dimension of size 2).
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

using detail::ceil_div;
using detail::num;
using detail::require_positive;

using util::ConfigError;

}  // namespace

Topology build_torus(const TorusParams& params) {
  detail::validate_link_params(params.board, "topology.board_link");
  detail::validate_link_params(params.link, "topology.link");
  const std::vector<std::uint32_t>& dims = params.dims;
  if (dims.empty()) throw ConfigError("topology.dims: needs at least one dimension");
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  std::uint64_t n = 1;
  std::uint64_t radix = 0;
  std::string shape;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) {
      throw ConfigError("topology.dims: dimension " + num(d) + " has size 0 (must be at least 1)");
    }
    n *= dims[d];
    if (n >= kLimit) throw ConfigError("topology.dims: too many accelerators");
    radix += dims[d] >= 3 ? 2 : dims[d] - 1;
    if (d > 0) shape += 'x';
    shape += num(dims[d]);
  }
  if (params.boards) {
    if (dims.size() < 2) {
      throw ConfigError("topology.dims: 2x2 boards need at least two dimensions (or topology.boards = false)");
    }
    if (dims[0] % 2 != 0 || dims[1] % 2 != 0) {
      throw ConfigError("topology.dims: 2x2 boards need even sizes in the first two dimensions, got " +
                        num(dims[0]) + " and " + num(dims[1]));
    }
  }
  const std::uint64_t cables = n * radix / 2;
  if (n >= kNoNode || 2 * cables >= kNoLink) throw ConfigError("topology.dims: too many accelerators");

  Topology topo;
  topo.kind = "torus";
  topo.reserve(n, 2 * cables);
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.add_node(NodeKind::Endpoint, 0, static_cast<std::uint32_t>(radix), "ep" + num(e), true);
  }
  std::vector<std::uint32_t> coord(dims.size(), 0);
  for (std::uint64_t e = 0; e < n; ++e) {
    std::uint64_t stride = 1;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const std::uint64_t size = dims[d];
      const std::uint64_t c = coord[d];
      // Size 1: no cable; size 2: only 0 -> 1 (1 -> 0 would be the same pair).
      if (size >= 3 || (size == 2 && c == 0)) {
        const std::uint64_t next = c + 1 == size ? e - c * stride : e + stride;
        // A board link joins two accelerators of one 2x2 board: coordinates
        // 2m and 2m+1 of dimension 0 or 1 (never a wrap-around link).
        const bool on_board = params.boards && d < 2 && c % 2 == 0 && c + 1 < size;
        if (on_board) {
          topo.connect(static_cast<NodeId>(e), static_cast<NodeId>(next), LinkClass::Board, params.board,
                       CableType::None);
        } else {
          topo.connect(static_cast<NodeId>(e), static_cast<NodeId>(next), LinkClass::Global, params.link,
                       CableType::AoC);
        }
      }
      stride *= size;
    }
    // Advance the mixed-radix coordinate (dimension 0 fastest).
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (++coord[d] < dims[d]) break;
      coord[d] = 0;
    }
  }

  std::string text = "torus " + shape + ", " + num(n) + " accelerators" +
                     (params.boards ? " on 2x2 boards" : "") + " (" + num(topo.count_cables(CableType::AoC)) +
                     " cables)";
  topo.set_description(std::move(text));
  // Bisection: halve the largest even dimension.
  std::size_t cut_dim = dims.size();
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d] % 2 == 0 && (cut_dim == dims.size() || dims[d] > dims[cut_dim])) cut_dim = d;
  if (cut_dim < dims.size()) {
    std::uint64_t stride = 1;
    for (std::size_t d = 0; d < cut_dim; ++d) stride *= dims[d];
    std::vector<std::uint8_t> side(n, 0);
    for (std::uint64_t e = 0; e < n; ++e) side[e] = static_cast<std::uint8_t>((e / stride) % dims[cut_dim] >= dims[cut_dim] / 2);
    topo.measure_bisection(side);
  }
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

// ------------------------------------------------------------------ torus

class TorusRules final : public RouteRules {
 public:
  TorusRules(const Topology& topo, std::vector<std::uint32_t> dims, bool adaptive)
      : topo_(topo), dims_(std::move(dims)), adaptive_(adaptive) {
    std::uint64_t n = 1;
    for (std::uint32_t d : dims_) {
      stride_.push_back(static_cast<std::uint32_t>(n));
      n *= d;
    }
    if (topo.kind != "torus" || n != topo.node_count() || n != topo.endpoint_count())
      throw util::ConfigError("routing.algorithm: torus routing needs the torus built from topology.dims");
    const std::size_t D = dims_.size();
    out_.assign(topo.node_count() * D * 2, kNoLink);
    dim_.resize(topo.link_count());
    plus_.resize(topo.link_count());
    wrap_.resize(topo.link_count());
    for (LinkId l = 0; l < topo.link_count(); ++l) {
      const Link& k = topo.link(l);
      std::size_t d = 0;
      while (coord(k.src, d) == coord(k.dst, d)) ++d;
      const std::uint32_t a = coord(k.src, d), b = coord(k.dst, d);
      const bool plus = b == (a + 1) % dims_[d];
      dim_[l] = static_cast<std::uint8_t>(d);
      plus_[l] = plus ? 1 : 0;
      wrap_[l] = plus ? (b < a) : (b > a);
      std::size_t slot = (k.src * D + d) * 2 + (plus ? 0 : 1);
      if (out_[slot] == kNoLink) out_[slot] = l;
    }
  }
  std::uint8_t state_count() const override {
    return static_cast<std::uint8_t>(adaptive_ ? 4 : 2 * dims_.size() + 1);
  }
  std::uint8_t initial_state() const override { return static_cast<std::uint8_t>(state_count() - 1); }
  unsigned alternatives() const override { return adaptive_ ? 2 : 1; }
  bool depends_on_target() const override { return adaptive_; }
  std::uint8_t vcs() const override { return adaptive_ ? 3 : 2; }
  std::uint8_t vc(std::uint8_t s) const override {
    if (s == initial_state()) return 0;
    return adaptive_ ? s : s % 2;
  }
  bool escape(std::uint8_t s) const override { return !adaptive_ || s != 2; }
  std::string describe() const override {
    return adaptive_ ? "torus minimal adaptive (Duato: dimension-order escape with dateline VCs 0/1, adaptive VC 2)"
                     : "torus dimension order with dateline VCs";
  }

  std::uint8_t step(NodeId at, std::uint8_t s, LinkId l, std::uint32_t target, unsigned alt) const override {
    const std::size_t d = dim_[l];
    if (!adaptive_) {
      // State 2*d + vc: routing dimension d on dateline channel vc.
      const bool fresh = s == initial_state();
      const std::size_t cur = fresh ? 0 : s / 2;
      if (!fresh && d < cur) return kIllegal;
      const unsigned vc = (!fresh && d == cur ? s % 2 : 0u) | wrap_[l];
      return static_cast<std::uint8_t>(2 * d + vc);
    }
    if (alt == 0) return 2;  // adaptive: any link (the tables keep the productive ones)
    // Escape: the dimension-order link only, on the dateline VC: 0 while the
    // wrap-around is still ahead in this dimension, 1 once it is not.
    const NodeId dst = topo_.endpoint_node(target);
    if (l != dor_link(at, dst)) return kIllegal;
    const std::uint32_t v = coord(topo_.link(l).dst, d), t = coord(dst, d);
    const bool ahead = plus_[l] ? t < v : t > v;
    return ahead ? 0 : 1;
  }

 private:
  std::uint32_t coord(NodeId n, std::size_t d) const { return (n / stride_[d]) % dims_[d]; }
  LinkId dor_link(NodeId at, NodeId dst) const {
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const std::uint32_t a = coord(at, d), b = coord(dst, d);
      if (a == b) continue;
      const std::uint32_t fwd = (b + dims_[d] - a) % dims_[d];
      const bool plus = fwd <= dims_[d] - fwd;
      const LinkId l = out_[(at * dims_.size() + d) * 2 + (plus ? 0 : 1)];
      return l != kNoLink ? l : out_[(at * dims_.size() + d) * 2 + (plus ? 1 : 0)];
    }
    return kNoLink;
  }
  const Topology& topo_;
  std::vector<std::uint32_t> dims_;
  std::vector<std::uint32_t> stride_;
  bool adaptive_;
  std::vector<LinkId> out_;  // [node][dim][+/-]
  std::vector<std::uint8_t> dim_, plus_, wrap_;
};

// ------------------------------------------------------------------ torus

// Dimension order (state 2d + vc: routing dimension d; initial 2D): the
// dimensions below d must already match, the rest cost their ring distance.
// Duato (states 0, 1, 2 and initial 3): any productive link is an adaptive
// move from any state, and the escape path is the dimension-order one, both
// minimal: the ring distances summed.
class TorusDistance final : public RouteDistance {
 public:
  TorusDistance(const Topology& topo, std::vector<std::uint32_t> dims, bool adaptive)
      : topo_(topo), dims_(std::move(dims)), adaptive_(adaptive) {
    std::uint64_t n = 1;
    for (std::uint32_t d : dims_) {
      stride_.push_back(static_cast<std::uint32_t>(n));
      n *= d;
    }
    if (topo.kind != "torus" || n != topo.node_count())
      throw util::ConfigError("routing.algorithm: torus routing needs the torus built from topology.dims");
  }
  std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const override {
    const NodeId dst = topo_.endpoint_node(target);
    const std::size_t D = dims_.size();
    std::size_t from = 0;
    if (!adaptive_ && s != 2 * D) {
      from = s / 2u;
      for (std::size_t d = 0; d < from; ++d)
        if (coord(at, d) != coord(dst, d)) return kFar;
    }
    std::uint32_t sum = 0;
    for (std::size_t d = from; d < D; ++d) {
      const std::uint32_t fwd = (coord(dst, d) + dims_[d] - coord(at, d)) % dims_[d];
      sum += std::min(fwd, dims_[d] - fwd);
    }
    return static_cast<std::uint16_t>(sum);
  }

 private:
  std::uint32_t coord(NodeId n, std::size_t d) const { return (n / stride_[d]) % dims_[d]; }
  const Topology& topo_;
  std::vector<std::uint32_t> dims_;
  std::vector<std::uint32_t> stride_;
  bool adaptive_;
};

}  // namespace

std::unique_ptr<RouteRules> torus_rules(const Topology& topo, const std::vector<std::uint32_t>& dims, bool adaptive) {
  return std::make_unique<TorusRules>(topo, dims, adaptive);
}

std::unique_ptr<RouteDistance> torus_distance(const Topology& topo, const std::vector<std::uint32_t>& dims,
                                              bool adaptive) {
  return std::make_unique<TorusDistance>(topo, dims, adaptive);
}

}  // namespace fabricsim::net
