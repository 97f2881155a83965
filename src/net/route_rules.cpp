// The routing rules of the built-in direct topologies (see state_routes.hpp).
#include <algorithm>
#include <string>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

namespace {

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

// ------------------------------------------------------------ HammingMesh

class HammingMeshRules final : public RouteRules {
 public:
  HammingMeshRules(const Topology& topo, std::uint32_t a, std::uint32_t b, std::uint32_t x, std::uint32_t y,
                   bool row_first)
      : row_first_(row_first) {
    const std::size_t accs = static_cast<std::size_t>(a) * b * x * y;
    if (topo.kind != "hammingmesh" || topo.endpoint_count() != accs)
      throw util::ConfigError("routing.algorithm: HammingMesh routing needs the topology built from topology.board_a/b, x, y");
    kind_.resize(topo.link_count());
    for (LinkId l = 0; l < topo.link_count(); ++l) {
      const Link& k = topo.link(l);
      const Node& u = topo.node(k.src);
      const Node& v = topo.node(k.dst);
      if (u.kind == NodeKind::Endpoint && v.kind == NodeKind::Endpoint) {
        // Accelerator id ((Y*x + X)*b + i)*a + j: i grows southwards.
        const std::uint32_t iu = (k.src / a) % b, iv = (k.dst / a) % b;
        kind_[l] = iv + 1 == iu ? kNorth : kBoard;
      } else if (u.kind == NodeKind::Endpoint) {
        kind_[l] = v.name.rfind("col", 0) == 0 ? kEnterCol : kEnterRow;
      } else if (v.kind == NodeKind::Endpoint) {
        kind_[l] = kExit;
      } else {
        kind_[l] = v.level > u.level ? kUp : kDown;
      }
    }
  }
  // State: vc (networks entered, 0..2) | north << 2 | down << 3 | column used << 4.
  std::uint8_t state_count() const override { return 32; }
  std::uint8_t vcs() const override { return 3; }
  std::uint8_t vc(std::uint8_t s) const override { return s & 3; }
  std::string describe() const override {
    return row_first_ ? "HammingMesh/HyperX row network before column network, north-last boards, VC per network hop"
                      : "HammingMesh/HyperX minimal adaptive, north-last boards, VC per network hop";
  }
  std::uint8_t step(NodeId, std::uint8_t s, LinkId l, std::uint32_t, unsigned) const override {
    const unsigned vc = s & 3, north = (s >> 2) & 1, down = (s >> 3) & 1, col = (s >> 4) & 1;
    switch (kind_[l]) {
      case kBoard:
        if (north) return kIllegal;  // north last
        return static_cast<std::uint8_t>(vc | col << 4);
      case kNorth:
        return static_cast<std::uint8_t>(vc | 1u << 2 | col << 4);
      case kEnterRow:
        if (vc == 2 || (row_first_ && col)) return kIllegal;
        return static_cast<std::uint8_t>((vc + 1) | col << 4);
      case kEnterCol:
        if (vc == 2) return kIllegal;
        return static_cast<std::uint8_t>((vc + 1) | 1u << 4);
      case kUp:
        if (down) return kIllegal;
        return static_cast<std::uint8_t>(vc | col << 4);
      case kDown:
        return static_cast<std::uint8_t>(vc | 1u << 3 | col << 4);
      default:  // kExit
        return static_cast<std::uint8_t>(vc | col << 4);
    }
  }

 private:
  enum : std::uint8_t { kBoard, kNorth, kEnterRow, kEnterCol, kExit, kUp, kDown };
  bool row_first_;
  std::vector<std::uint8_t> kind_;
};

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

// -------------------------------------------------------------- Dragonfly

class DragonflyRules final : public RouteRules {
 public:
  DragonflyRules(const Topology& topo, std::uint32_t max_global) : max_global_(max_global) {
    if (topo.kind != "dragonfly") throw util::ConfigError("routing.algorithm: Dragonfly routing needs a dragonfly topology");
    global_.resize(topo.link_count());
    for (LinkId l = 0; l < topo.link_count(); ++l) global_[l] = topo.link(l).cls == LinkClass::Global ? 1 : 0;
  }
  std::uint8_t state_count() const override { return static_cast<std::uint8_t>(max_global_ + 1); }
  std::uint8_t vcs() const override { return static_cast<std::uint8_t>(max_global_ + 1); }
  std::uint8_t vc(std::uint8_t s) const override { return s; }
  std::string describe() const override {
    return max_global_ == 1 ? "Dragonfly minimal, VC per global hop" : "Dragonfly Valiant, VC per global hop";
  }
  std::uint8_t step(NodeId, std::uint8_t s, LinkId l, std::uint32_t, unsigned) const override {
    if (!global_[l]) return s;
    return s + 1u > max_global_ ? kIllegal : static_cast<std::uint8_t>(s + 1);
  }

 private:
  std::uint32_t max_global_;
  std::vector<std::uint8_t> global_;
};

// ------------------------------------------------------------- hop count

class HopCountRules final : public RouteRules {
 public:
  explicit HopCountRules(std::uint32_t hops) : hops_(hops) {}
  std::uint8_t state_count() const override { return static_cast<std::uint8_t>(hops_ + 1); }
  std::uint8_t vcs() const override { return static_cast<std::uint8_t>(hops_); }
  std::uint8_t vc(std::uint8_t s) const override { return s == 0 ? 0 : static_cast<std::uint8_t>(s - 1); }
  std::string describe() const override { return "shortest paths, VC = hops taken"; }
  std::uint8_t step(NodeId, std::uint8_t s, LinkId, std::uint32_t, unsigned) const override {
    return s + 1u > hops_ ? kIllegal : static_cast<std::uint8_t>(s + 1);
  }

 private:
  std::uint32_t hops_;
};

}  // namespace

std::unique_ptr<RouteRules> hyperx_rules(const Topology& topo, std::uint32_t x, std::uint32_t y,
                                         std::uint32_t concentration, bool dimension_order) {
  return std::make_unique<HyperXRules>(topo, x, y, concentration, dimension_order);
}

std::unique_ptr<RouteRules> dragonfly_rules(const Topology& topo, std::uint32_t max_global) {
  return std::make_unique<DragonflyRules>(topo, max_global);
}

std::unique_ptr<RouteRules> hop_count_rules(const Topology& topo, std::uint32_t max_vcs) {
  const int d = topo.diameter();
  if (d < 0) throw util::ConfigError("topology: some endpoints cannot reach each other");
  if (static_cast<std::uint32_t>(d) > max_vcs)
    throw util::ConfigError("network.vcs: shortest-path routing on this graph needs " + std::to_string(d) +
                            " virtual channels (one per hop of its longest shortest path), " +
                            std::to_string(max_vcs) + " given");
  return std::make_unique<HopCountRules>(static_cast<std::uint32_t>(std::max(d, 1)));
}

std::unique_ptr<RouteRules> torus_rules(const Topology& topo, const std::vector<std::uint32_t>& dims, bool adaptive) {
  return std::make_unique<TorusRules>(topo, dims, adaptive);
}

std::unique_ptr<RouteRules> hammingmesh_rules(const Topology& topo, std::uint32_t board_a, std::uint32_t board_b,
                                              std::uint32_t x, std::uint32_t y, bool row_first) {
  return std::make_unique<HammingMeshRules>(topo, board_a, board_b, x, y, row_first);
}

}  // namespace fabricsim::net
