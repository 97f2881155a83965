// Computed legal-route lengths of the direct topologies (RouteDistance in
// state_routes.hpp): what the route tables hold, from coordinates.
//
// Each hops() is the minimum over a family of concrete legal routes of the
// topology's rules (route_rules.cpp), written out segment by segment, so it
// is never below the true shortest legal route; the family holds a shortest
// route from every (node, state) a packet can reach, so there it is exact.
// tests/net/test_route_distance.cpp checks both against the tables on small
// instances of every shape (merged, single-switch and tree networks, all
// rule variants).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

namespace {

constexpr std::uint16_t kFar = StateRoutes::kUnreachable;
constexpr std::uint32_t kInf = 1u << 20;  // larger than any route, small enough to add a few

std::uint16_t clamp_hops(std::uint32_t d) { return d >= kInf ? kFar : static_cast<std::uint16_t>(d); }

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

// ----------------------------------------------------- switch-based HyperX

// Endpoints ((Y*x + X)*c + k), then router Y*x + X (build_hyperx); state
// hops taken (0..2) | Y taken << 2 (route_rules.cpp).  From a router every
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

// -------------------------------------------------------------- Dragonfly

// Endpoints first, then router g*a + r; the state counts global links taken
// (at most max_global).  Routers of a group are fully connected and every
// pair of groups has at least one global cable (build_dragonfly), so:
//   same router: 1 (the host link); same group: 2 (local, host);
//   one global link: 2 + [no global cable leaves R for T's group, or lands
//   on T] + [...], i.e. 2 plus how many of (local hop before, local hop
//   after) the best cable between the groups needs;
//   two global links (Valiant budget) are shorter only as R -> v -> T over
//   two cables (3 links) when one global link needs both local hops (4).
// Group targets (the Valiant first leg, routers of group X): 0 inside X,
// 1 with a cable from R to X, else 2.
class DragonflyDistance final : public RouteDistance {
 public:
  DragonflyDistance(const Topology& topo, std::uint32_t a, std::uint32_t max_global, bool group_targets)
      : topo_(topo), a_(a), max_global_(max_global), group_targets_(group_targets) {
    if (topo.kind != "dragonfly" || a == 0)
      throw util::ConfigError("routing.algorithm: Dragonfly routing needs a dragonfly topology");
    endpoints_ = static_cast<NodeId>(topo.endpoint_count());
    const std::size_t routers = topo.node_count() - endpoints_;
    const auto groups = static_cast<std::uint32_t>(routers / a);
    router_.resize(endpoints_);
    for (NodeId e = 0; e < endpoints_; ++e) router_[e] = topo.link(topo.node(e).out[0]).dst - endpoints_;
    nbr_at_.assign(routers + 1, 0);
    for (std::size_t r = 0; r < routers; ++r) {
      const Node& node = topo.node(static_cast<NodeId>(endpoints_ + r));
      std::vector<std::uint32_t> peers;
      for (LinkId l : node.out)
        if (topo.link(l).cls == LinkClass::Global) peers.push_back(topo.link(l).dst - endpoints_);
      std::sort(peers.begin(), peers.end());
      nbr_.insert(nbr_.end(), peers.begin(), peers.end());
      nbr_at_[r + 1] = static_cast<std::uint32_t>(nbr_.size());
    }
    // Per router, the groups its cables reach, one bit each.
    words_ = (groups + 63) / 64;
    reach_.assign(routers * words_, 0);
    for (std::size_t r = 0; r < routers; ++r)
      for (std::uint32_t i = nbr_at_[r]; i < nbr_at_[r + 1]; ++i) {
        const std::uint32_t g = nbr_[i] / a_;
        reach_[r * words_ + g / 64] |= std::uint64_t{1} << (g % 64);
      }
  }

  std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const override {
    if (at < endpoints_) {
      if (!group_targets_ && topo_.endpoint_node(target) == at) return 0;
      if (s != 0) return kFar;  // an endpoint holds a packet only at its source
      const std::uint16_t d = hops(router_of(at) + endpoints_, s, target);
      return d == kFar ? kFar : static_cast<std::uint16_t>(d + 1);
    }
    const std::uint32_t r = at - endpoints_;
    const std::uint32_t g = r / a_;
    const std::uint32_t budget = s > max_global_ ? 0 : max_global_ - s;
    if (group_targets_) {
      if (g == target) return 0;
      if (budget == 0) return kFar;
      return reaches(r, target) ? 1 : 2;
    }
    const std::uint32_t t = router_of(topo_.endpoint_node(target));
    if (t == r) return 1;
    const std::uint32_t gt = t / a_;
    if (gt == g) return 2;
    if (budget == 0) return kFar;
    if (linked(r, t)) return 2;
    if (reaches(r, gt) || reaches(t, g)) return 3;
    if (budget >= 2 && share_peer(r, t)) return 3;
    return 4;
  }

 private:
  std::uint32_t router_of(NodeId endpoint) const { return router_[endpoint]; }
  bool reaches(std::uint32_t r, std::uint32_t g) const {
    return (reach_[static_cast<std::size_t>(r) * words_ + g / 64] >> (g % 64)) & 1u;
  }
  bool linked(std::uint32_t r, std::uint32_t t) const {
    return std::binary_search(nbr_.begin() + nbr_at_[r], nbr_.begin() + nbr_at_[r + 1], t);
  }
  bool share_peer(std::uint32_t r, std::uint32_t t) const {
    auto i = nbr_.begin() + nbr_at_[r], ie = nbr_.begin() + nbr_at_[r + 1];
    auto j = nbr_.begin() + nbr_at_[t], je = nbr_.begin() + nbr_at_[t + 1];
    while (i != ie && j != je) {
      if (*i == *j) return true;
      if (*i < *j) ++i; else ++j;
    }
    return false;
  }
  const Topology& topo_;
  std::uint32_t a_;
  std::uint32_t max_global_;
  bool group_targets_;
  NodeId endpoints_ = 0;
  std::size_t words_ = 0;
  std::vector<std::uint32_t> router_;  // router index of each endpoint
  std::vector<std::uint32_t> nbr_;     // global peers of each router, sorted (router indices)
  std::vector<std::uint32_t> nbr_at_;
  std::vector<std::uint64_t> reach_;   // [router][group bit]: a global cable to that group
};

// ------------------------------------------------------------ HammingMesh

// Accelerator ((BY*x + BX)*b + i)*a + j, i growing southwards.  A board's
// row portals are W(i) = (i, 0) and E(i) = (i, a-1), each with a cable to a
// switch of its row network; column portals N(j) = (0, j), S(j) = (b-1, j).
// A state (route_rules.cpp) is vc (networks entered) | north << 2 |
// down << 3 | column used << 4.
//
// The family of routes: at most 2 - vc network traversals, in the orders
// the rules allow (row then column, column then row unless row_first), each
// from a portal of one board to a portal of the next in the same network;
// board segments are north-last Manhattan walks (a segment after a north
// move may only go on north); the boards are forced by the dimensions (one
// traversal: the line of the target; two: the corner board in the line of
// both).  In a network, a traversal enters at the portal's switch and leaves
// from the exit portal's switch: 2 links on one switch, 4 across a tree
// (up to any spine, down to the leaf).  From a switch, the packet leaves at
// a portal of its network on the board of its line that lines up with the
// target, and goes on from there.
class HammingMeshDistance final : public RouteDistance {
 public:
  HammingMeshDistance(const Topology& topo, std::uint32_t a, std::uint32_t b, std::uint32_t x, std::uint32_t y,
                      bool row_first)
      : topo_(topo), a_(a), b_(b), x_(x), row_first_(row_first) {
    const std::size_t accs = static_cast<std::size_t>(a) * b * x * y;
    if (topo.kind != "hammingmesh" || topo.endpoint_count() != accs)
      throw util::ConfigError("routing.algorithm: HammingMesh routing needs the topology built from topology.board_a/b, x, y");
    accs_ = static_cast<NodeId>(accs);
    if (x > 0xFFFF || y > 0xFFFF || a > 32 || b > 32)
      throw util::ConfigError("topology.x: computed HammingMesh routing supports up to 65535 x 65535 boards of 32 x 32");
    coord_.resize(accs);
    for (NodeId e = 0; e < accs_; ++e) {
      const Coord c = decode(e, a, b, x);
      coord_[e] = Packed{static_cast<std::uint16_t>(c.bx), static_cast<std::uint16_t>(c.by),
                         static_cast<std::uint8_t>(c.i), static_cast<std::uint8_t>(c.j)};
    }
    const std::size_t boards = static_cast<std::size_t>(x) * y;
    const std::size_t switches = topo.node_count() - accs;
    row_sw_.assign(boards * 2 * b, kNoNode);
    col_sw_.assign(boards * 2 * a, kNoNode);
    sw_.assign(switches, SwitchInfo{});
    // Networks: the switches joined by fabric links (union-find).
    std::vector<std::uint32_t> parent(switches);
    std::iota(parent.begin(), parent.end(), 0u);
    const auto find = [&](std::uint32_t v) {
      while (parent[v] != v) v = parent[v] = parent[parent[v]];
      return v;
    };
    for (const Link& l : topo.links())
      if (l.src >= accs_ && l.dst >= accs_) parent[find(l.src - accs_)] = find(l.dst - accs_);
    for (std::uint32_t s = 0; s < switches; ++s) {
      const Node& n = topo.node(accs_ + s);
      sw_[s].net = find(s);
      sw_[s].spine = n.level >= 2;
      sw_[s].col = n.name.rfind("col", 0) == 0;
    }
    for (NodeId e = 0; e < accs_; ++e) {
      const Coord c = coord(e);
      const std::size_t board = static_cast<std::size_t>(c.by) * x_ + c.bx;
      unsigned rows = 0, cols = 0;
      for (LinkId l : topo.node(e).out) {
        const NodeId v = topo.link(l).dst;
        if (v < accs_) continue;
        SwitchInfo& info = sw_[v - accs_];
        if (info.col) {
          // N before S on one accelerator (b = 1); else by position.
          const unsigned side = b_ == 1 ? cols++ : (c.i == 0 ? 0u : 1u);
          col_sw_[(board * 2 + side) * a_ + c.j] = v;
          info.line = c.bx;
        } else {
          const unsigned side = a_ == 1 ? rows++ : (c.j == 0 ? 0u : 1u);
          row_sw_[(board * 2 + side) * b_ + c.i] = v;
          info.line = c.by;
        }
      }
    }
    for (NodeId v : row_sw_)
      if (v == kNoNode) throw util::ConfigError("routing.algorithm: HammingMesh routing: a row portal is not cabled");
    for (NodeId v : col_sw_)
      if (v == kNoNode) throw util::ConfigError("routing.algorithm: HammingMesh routing: a column portal is not cabled");
    // A spine's line: that of any leaf of its network.
    std::vector<std::uint32_t> line_of_net(switches, 0);
    for (std::uint32_t s = 0; s < switches; ++s)
      if (!sw_[s].spine) line_of_net[sw_[s].net] = sw_[s].line;
    std::vector<std::uint8_t> tree_net(switches, 0);
    for (std::uint32_t s = 0; s < switches; ++s)
      if (sw_[s].spine) {
        sw_[s].line = line_of_net[sw_[s].net];
        tree_net[sw_[s].net] = 1;
      }
    for (std::uint32_t s = 0; s < switches; ++s) sw_[s].tree = tree_net[sw_[s].net] != 0;
    build_portals();
    // Each switch's ports by what is behind them: an accelerator's board
    // position along the switch's line (bx on a row network, by on a
    // column one), or kSwitchKey; sorted by (key, port).
    sw_port_base_.assign(switches + 1, 0);
    for (std::uint32_t s = 0; s < switches; ++s) {
      const Node& n = topo.node(accs_ + s);
      const std::size_t begin = sw_ports_.size();
      for (PortIndex p = 0; p < n.out.size(); ++p) {
        const NodeId v = topo.link(n.out[p]).dst;
        const std::uint32_t key = v >= accs_ ? kSwitchKey : (sw_[s].col ? coord(v).by : coord(v).bx);
        sw_ports_.emplace_back(key, p);
      }
      std::sort(sw_ports_.begin() + static_cast<std::ptrdiff_t>(begin), sw_ports_.end());
      sw_port_base_[s + 1] = sw_ports_.size();
    }
  }

  std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const override {
    const unsigned vc = s & 3u, north = (s >> 2) & 1u, down = (s >> 3) & 1u, col = (s >> 4) & 1u;
    if (vc > 2) return kFar;  // not a state a packet can be in
    const NodeId dst = topo_.endpoint_node(target);
    if (at == dst) return 0;
    const Coord t = coord(dst);
    if (at < accs_) return clamp_hops(from_acc(coord(at), vc, north != 0, col != 0, t));
    // A leaf's up-links often lead to the same spine (parallel cables), and
    // every spine of a network is as far: remember the last switch answer.
    const std::uint64_t key = (static_cast<std::uint64_t>(at) << 40) | (static_cast<std::uint64_t>(s) << 32) | target;
    if (key != memo_key_) {
      memo_key_ = key;
      memo_ = clamp_hops(from_switch(at, vc, down != 0, col != 0, t));
    }
    return memo_;
  }
  // From a switch, a shortest route leaves its network on the board of the
  // network's line that lines up with the target: leaving anywhere else
  // costs another traversal of this network (the other dimension's cannot
  // reach the target's board), at least 2 more links, and a board walk
  // between two portals of the dimension, which is at least 1 link on boards
  // more than one accelerator wide.  (On Hx1 boards, a board whose two
  // cables sit on different leaves of a tree bridges them as fast as a
  // spine does, so there every neighbour is evaluated.)  The other boards'
  // accelerators then need no distance.
  // So a switch offers its ports to switches and those to the accelerators
  // of the board in line with the target, found by the board's position
  // along the line (precomputed per switch, in port order).
  bool candidate_ports(NodeId at, std::uint32_t target, std::vector<PortIndex>& ports) const override {
    if (at < accs_) return false;
    const SwitchInfo& info = sw_[at - accs_];
    if (info.tree && (info.col ? b_ : a_) == 1) return false;
    const Coord t = coord(topo_.endpoint_node(target));
    const std::uint32_t key = info.col ? t.by : t.bx;
    const auto* first = sw_ports_.data() + sw_port_base_[at - accs_];
    const auto* last = sw_ports_.data() + sw_port_base_[at - accs_ + 1];
    const auto* acc = std::lower_bound(first, last, std::make_pair(key, PortIndex{0}));
    const auto* sw = std::lower_bound(first, last, std::make_pair(kSwitchKey, PortIndex{0}));
    // Merge the two ascending runs: the line's accelerators, the switches.
    const auto* acc_end = acc;
    while (acc_end != sw && acc_end->first == key) ++acc_end;
    while (acc != acc_end || sw != last) {
      if (sw == last || (acc != acc_end && acc->second < sw->second)) ports.push_back((acc++)->second);
      else ports.push_back((sw++)->second);
    }
    return true;
  }

 private:
  struct Coord {
    std::uint32_t bx, by, i, j;
  };
  struct Packed {  // an accelerator's coordinates, looked up instead of divided out
    std::uint16_t bx, by;
    std::uint8_t i, j;
  };
  struct SwitchInfo {
    std::uint32_t net = 0;   // network (component of fabric links)
    std::uint32_t line = 0;  // board-row (row network) or board-column (column network)
    bool spine = false;
    bool col = false;
    bool tree = false;  // its network has spines
  };
  // A portal: accelerator position on its board and the switch of its cable.
  struct Portal {
    std::uint32_t i, j;
    NodeId sw;
    std::uint32_t net;  // network of sw
  };
  static constexpr std::size_t kMaxPortals = 2 * 64;

  Coord coord(NodeId e) const {
    const Packed& p = coord_[e];
    return Coord{p.bx, p.by, p.i, p.j};
  }
  static Coord decode(NodeId e, std::uint32_t a, std::uint32_t b, std::uint32_t x) {
    Coord c;
    c.j = e % a;
    e /= a;
    c.i = e % b;
    e /= b;
    c.bx = e % x;
    c.by = e / x;
    return c;
  }
  static std::uint32_t manhattan(std::uint32_t pi, std::uint32_t pj, std::uint32_t qi, std::uint32_t qj) {
    return static_cast<std::uint32_t>(std::abs(static_cast<int>(pi) - static_cast<int>(qi)) +
                                      std::abs(static_cast<int>(pj) - static_cast<int>(qj)));
  }
  // A board walk from (pi, pj) to (qi, qj); after a north move only north.
  static std::uint32_t walk(bool north, std::uint32_t pi, std::uint32_t pj, std::uint32_t qi, std::uint32_t qj) {
    if (!north) return manhattan(pi, pj, qi, qj);
    return pj == qj && qi <= pi ? pi - qi : kInf;
  }
  // Enter at portal u, leave at portal v: links of the traversal.
  static std::uint32_t traverse(const Portal& u, const Portal& v) {
    if (u.sw == v.sw) return 2;
    return u.net == v.net ? 4 : kInf;
  }
  // The portals of board (bx, by) in one dimension (looked up: per board,
  // the row portals W then E by i, then the column portals N then S by j).
  std::size_t portals(bool col, std::uint32_t bx, std::uint32_t by, const Portal*& out) const {
    const std::size_t board = static_cast<std::size_t>(by) * x_ + bx;
    out = portal_.data() + board * per_board_ + (col ? 2 * b_ : 0);
    return col ? 2 * a_ : 2 * b_;
  }
  void build_portals() {
    per_board_ = 2 * (a_ + b_);
    const std::size_t boards = row_sw_.size() / (2 * b_);
    portal_.resize(boards * per_board_);
    for (std::size_t board = 0; board < boards; ++board) {
      Portal* out = portal_.data() + board * per_board_;
      for (unsigned side = 0; side < 2; ++side)
        for (std::uint32_t i = 0; i < b_; ++i) {
          const NodeId sw = row_sw_[(board * 2 + side) * b_ + i];
          *out++ = Portal{i, side == 0 ? 0 : a_ - 1, sw, sw_[sw - accs_].net};
        }
      for (unsigned side = 0; side < 2; ++side)
        for (std::uint32_t j = 0; j < a_; ++j) {
          const NodeId sw = col_sw_[(board * 2 + side) * a_ + j];
          *out++ = Portal{side == 0 ? 0 : b_ - 1, j, sw, sw_[sw - accs_].net};
        }
    }
  }
  bool may_enter(bool col_dim, bool col_used) const { return col_dim || !(row_first_ && col_used); }

  // From each portal of a board onwards to the target, by the routes
  // from_acc takes: h[d][u] for the board's u-th portal in dimension d, the
  // least of one traversal in d into the target's board (vc < 2, the board
  // in line) and two, d to the corner board and then the other dimension
  // (vc == 0).  It depends on the board, the target, vc and col, not on
  // where on the board a packet is: an accelerator and its board
  // neighbours, and a switch's exits onto one board, share it (a few
  // entries are kept).  The minima of the chained steps are taken once per
  // portal instead of once per (portal, portal, portal) path.
  struct Onward {
    std::uint64_t board_key = UINT64_MAX;  // board, vc, col
    std::uint64_t target_key = UINT64_MAX;
    std::array<std::array<std::uint32_t, kMaxPortals>, 2> h;
  };
  const Onward& onward(std::uint32_t bx, std::uint32_t by, unsigned vc, bool col, const Coord& t) const {
    const std::uint64_t bkey = (static_cast<std::uint64_t>(by) * x_ + bx) | std::uint64_t{vc} << 32 |
                               std::uint64_t{col} << 34;
    const std::uint64_t tkey = static_cast<std::uint64_t>(t.bx) << 32 | static_cast<std::uint64_t>(t.by) << 16 |
                               t.i << 8 | t.j;
    for (const Onward& o : onward_)
      if (o.board_key == bkey && o.target_key == tkey) return o;
    Onward& on = onward_[onward_next_];
    onward_next_ = (onward_next_ + 1) % onward_.size();
    on.board_key = bkey;
    on.target_key = tkey;
    const Portal *p0, *p1, *q, *r;
    std::array<std::uint32_t, kMaxPortals> tail, R, C;
    for (bool d : {false, true}) {
      auto& h = on.h[d];
      const std::size_t np = portals(d, bx, by, p0);
      for (std::size_t u = 0; u < np; ++u) h[u] = kInf;
      if (vc < 2 && may_enter(d, col) && (d ? bx == t.bx : by == t.by)) {
        // One traversal, in dimension d, into the target's board.
        const std::size_t ne = portals(d, t.bx, t.by, p1);
        for (std::size_t v = 0; v < ne; ++v) tail[v] = manhattan(p1[v].i, p1[v].j, t.i, t.j);
        for (std::size_t u = 0; u < np; ++u)
          for (std::size_t v = 0; v < ne; ++v) h[u] = std::min(h[u], traverse(p0[u], p1[v]) + tail[v]);
      }
      const bool d2 = !d;
      if (vc < 1 && may_enter(d, col) && may_enter(d2, col || d)) {
        // Two traversals: d to the corner board, then the other dimension.
        const std::uint32_t cx = d ? bx : t.bx, cy = d ? t.by : by;
        const std::size_t nq = portals(d, cx, cy, q);
        const std::size_t nr = portals(d2, cx, cy, r);
        const std::size_t ne = portals(d2, t.bx, t.by, p1);
        for (std::size_t w = 0; w < ne; ++w) tail[w] = manhattan(p1[w].i, p1[w].j, t.i, t.j);
        for (std::size_t k = 0; k < nr; ++k) {
          R[k] = kInf;
          for (std::size_t w = 0; w < ne; ++w) R[k] = std::min(R[k], traverse(r[k], p1[w]) + tail[w]);
        }
        for (std::size_t v = 0; v < nq; ++v) {
          C[v] = kInf;
          for (std::size_t k = 0; k < nr; ++k) C[v] = std::min(C[v], manhattan(q[v].i, q[v].j, r[k].i, r[k].j) + R[k]);
        }
        for (std::size_t u = 0; u < np; ++u)
          for (std::size_t v = 0; v < nq; ++v) h[u] = std::min(h[u], traverse(p0[u], q[v]) + C[v]);
      }
    }
    return on;
  }

  std::uint32_t from_acc(const Coord& n, unsigned vc, bool north, bool col, const Coord& t) const {
    std::uint32_t best = kInf;
    if (n.bx == t.bx && n.by == t.by) best = walk(north, n.i, n.j, t.i, t.j);
    if (vc >= 2) return best;
    const Onward& on = onward(n.bx, n.by, vc, col, t);
    const Portal* p0;
    for (bool d : {false, true}) {
      const std::size_t np = portals(d, n.bx, n.by, p0);
      for (std::size_t u = 0; u < np; ++u) {
        const std::uint32_t w = walk(north, n.i, n.j, p0[u].i, p0[u].j);
        if (w < kInf) best = std::min(best, w + on.h[d][u]);
      }
    }
    return std::min(best, kInf);
  }

  std::uint32_t from_switch(NodeId at, unsigned vc, bool down, bool col, const Coord& t) const {
    const SwitchInfo& info = sw_[at - accs_];
    // Leave on the board of this network's line that lines up with the target.
    const std::uint32_t bx = info.col ? info.line : t.bx;
    const std::uint32_t by = info.col ? t.by : info.line;
    const Portal* p;
    const std::size_t np = portals(info.col, bx, by, p);
    std::uint32_t best = kInf;
    for (std::size_t u = 0; u < np; ++u) {
      std::uint32_t leave;
      if (p[u].sw == at) {
        leave = 1;
      } else if (sw_[p[u].sw - accs_].net != info.net) {
        continue;
      } else if (info.spine) {
        leave = 2;
      } else if (!down) {
        leave = 3;
      } else {
        continue;
      }
      const Coord c{bx, by, p[u].i, p[u].j};
      best = std::min(best, leave + from_acc(c, vc, false, col, t));
    }
    return best;
  }

  const Topology& topo_;
  std::uint32_t a_, b_, x_;
  bool row_first_;
  NodeId accs_ = 0;
  std::vector<NodeId> row_sw_;  // [board][W, E][i]
  std::vector<NodeId> col_sw_;  // [board][N, S][j]
  std::vector<SwitchInfo> sw_;  // [node - accelerators]
  std::vector<Packed> coord_;   // [accelerator]
  std::vector<Portal> portal_;  // [board][row W, row E, column N, column S portals]
  mutable std::array<Onward, 4> onward_;  // the last boards' onward costs (see onward())
  mutable std::size_t onward_next_ = 0;
  static constexpr std::uint32_t kSwitchKey = 0xFFFFFFFFu;
  std::vector<std::pair<std::uint32_t, PortIndex>> sw_ports_;  // per switch, sorted (see the constructor)
  std::vector<std::size_t> sw_port_base_;
  std::size_t per_board_ = 0;
  mutable std::uint64_t memo_key_ = UINT64_MAX;  // the last switch query (node, state, target)
  mutable std::uint16_t memo_ = 0;
};

}  // namespace

std::unique_ptr<RouteDistance> torus_distance(const Topology& topo, const std::vector<std::uint32_t>& dims,
                                              bool adaptive) {
  return std::make_unique<TorusDistance>(topo, dims, adaptive);
}

std::unique_ptr<RouteDistance> hammingmesh_distance(const Topology& topo, std::uint32_t board_a,
                                                    std::uint32_t board_b, std::uint32_t x, std::uint32_t y,
                                                    bool row_first) {
  return std::make_unique<HammingMeshDistance>(topo, board_a, board_b, x, y, row_first);
}

std::unique_ptr<RouteDistance> hyperx_distance(const Topology& topo, std::uint32_t x, std::uint32_t y,
                                               std::uint32_t concentration, bool dimension_order) {
  return std::make_unique<HyperXDistance>(topo, x, y, concentration, dimension_order);
}

std::unique_ptr<RouteDistance> dragonfly_distance(const Topology& topo, std::uint32_t routers_per_group,
                                                  std::uint32_t max_global, bool group_targets) {
  return std::make_unique<DragonflyDistance>(topo, routers_per_group, max_global, group_targets);
}

}  // namespace fabricsim::net
