// HammingMesh builder; the wiring rules are documented on HammingMeshParams.
//
// Cabling order (it fixes every port number, since Topology::connect gives
// each end its next free port):
//   1. board links, board by board: the E-W links of each on-board row (W to
//      E), then the S-N links of each on-board row pair (N to S);
//   2. accelerator-to-row-network cables, network by network, in the
//      network's endpoint-index order (W edge before E edge);
//   3. row-network leaf-to-spine cables (trees only), leaf by leaf;
//   4. and 5. the same for the column networks (N edge before S edge).
// Switch and leaf ports are therefore the documented endpoint indices, then
// (leaves) the up-links; spine ports are leaf-major.  An accelerator's ports
// follow the same order: its W and E board links, then its N and S board
// links, then W/E edge cables, then N/S edge cables (4 in all, whatever the
// position on the board).
#include <cstdint>
#include <numeric>
#include <cstdlib>
#include <array>
#include <algorithm>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/disjoint_sets.hpp"
#include "fabricsim/util/error.hpp"
#include "net/route_detail.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {

using detail::ceil_div;
using detail::num;
using detail::require_positive;

using util::ConfigError;

/// One dimension's global networks (rows or columns).
struct NetworkShape {
  bool merged = false;         ///< one switch per board-row (board-column)
  std::uint64_t networks = 0;  ///< number of networks
  std::uint64_t ports = 0;     ///< accelerator cables per network (q)
  std::uint64_t leaves = 0;    ///< per network: 1 for a single switch
  std::uint64_t spines = 0;    ///< per network: 0 for a single switch
  std::uint64_t up = 0;        ///< up-links per leaf (trees)

  std::uint64_t switches() const { return networks * (leaves + spines); }
  std::uint64_t fabric_cables() const { return networks * leaves * up; }
};

/// boards: boards along the network (x for rows, y for columns); lanes:
/// accelerator rows (columns) per board, b for rows, a for columns.
NetworkShape shape_network(std::uint64_t boards, std::uint64_t lanes, std::uint64_t other_boards,
                           std::uint64_t k, const char* key) {
  NetworkShape s;
  if (2 * lanes * boards <= k) {
    s.merged = true;
    s.networks = other_boards;
    s.ports = 2 * lanes * boards;
    s.leaves = 1;
    return s;
  }
  s.networks = other_boards * lanes;
  s.ports = 2 * boards;
  if (s.ports <= k) {
    s.leaves = 1;
    return s;
  }
  const std::uint64_t h = k / 2;
  if (s.ports > k * h) {
    throw ConfigError(std::string(key) + ": " + num(boards) + " boards give networks of " +
                      num(s.ports) + " ports, more than a 2-level fat tree of topology.radix " +
                      num(k) + " switches holds (" + num(k * h) + "); 3 levels are not supported");
  }
  s.leaves = ceil_div(s.ports, h);
  s.up = h;
  s.spines = ceil_div(s.leaves * h, k);
  return s;
}

}  // namespace

Topology build_hammingmesh(const HammingMeshParams& params) {
  detail::check_builder_params({{params.board, "topology.board_link"},
                                 {params.host, "topology.host_link"},
                                 {params.fabric, "topology.fabric_link"}},
                                {{params.board_a, "topology.board_a"},
                                 {params.board_b, "topology.board_b"},
                                 {params.x, "topology.x"},
                                 {params.y, "topology.y"}});
  detail::check_radix(params.radix);
  const std::uint64_t a = params.board_a;
  const std::uint64_t b = params.board_b;
  const std::uint64_t x = params.x;
  const std::uint64_t y = params.y;
  const std::uint64_t k = params.radix;
  // Guard the products below against overflow before multiplying.
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (a * b >= kLimit || x * y >= kLimit || a * b * x * y >= kLimit) {
    throw ConfigError("topology.x: " + num(x) + "x" + num(y) + " boards of " + num(a) + "x" + num(b) +
                      " accelerators is too large");
  }

  // Rows: b accelerator rows per board, x boards per board-row, y board-rows.
  const NetworkShape rows = shape_network(x, b, y, k, "topology.x");
  // Columns: a accelerator columns per board, y boards per board-column.
  const NetworkShape cols = shape_network(y, a, x, k, "topology.y");

  const std::uint64_t n = a * b * x * y;
  const std::uint64_t board_cables = x * y * (b * (a - 1) + a * (b - 1));
  const std::uint64_t host_cables = 2 * b * x * y + 2 * a * x * y;
  const std::uint64_t cables = board_cables + host_cables + rows.fabric_cables() + cols.fabric_cables();
  const std::uint64_t total_nodes = n + rows.switches() + cols.switches();
  if (total_nodes >= kNoNode || 2 * cables >= kNoLink) {
    throw ConfigError("topology.x: " + num(x) + "x" + num(y) + " boards of " + num(a) + "x" + num(b) +
                      " accelerators is too large");
  }

  Topology topo;
  topo.kind = "hammingmesh";
  topo.reserve(total_nodes, 2 * cables);
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.add_node(NodeKind::Endpoint, 0, 4, "ep" + num(e), true);
  }
  const auto radix = static_cast<std::uint32_t>(k);
  // Switches: per dimension (rows, then columns), single switches or all
  // leaves then all spines; network m's leaves are m*leaves .. m*leaves+leaves-1.
  struct Ids {
    NodeId first_leaf = 0;
    NodeId first_spine = 0;
  };
  auto add_switches = [&](const NetworkShape& s, const std::string& dim) {
    Ids ids;
    ids.first_leaf = static_cast<NodeId>(topo.node_count());
    const bool tree = s.spines > 0;
    for (std::uint64_t i = 0; i < s.networks * s.leaves; ++i) {
      topo.add_node(NodeKind::Switch, 1, radix, dim + (tree ? "leaf" : "") + num(i), true);
    }
    ids.first_spine = static_cast<NodeId>(topo.node_count());
    for (std::uint64_t i = 0; i < s.networks * s.spines; ++i) {
      topo.add_node(NodeKind::Switch, 2, radix, dim + "spine" + num(i), true);
    }
    return ids;
  };
  const Ids row_ids = add_switches(rows, "row");
  const Ids col_ids = add_switches(cols, "col");

  auto acc = [&](std::uint64_t bx, std::uint64_t by, std::uint64_t i, std::uint64_t j) {
    return static_cast<NodeId>(((by * x + bx) * b + i) * a + j);
  };

  // 1. Board links.
  for (std::uint64_t by = 0; by < y; ++by) {
    for (std::uint64_t bx = 0; bx < x; ++bx) {
      for (std::uint64_t i = 0; i < b; ++i) {
        for (std::uint64_t j = 0; j + 1 < a; ++j) {
          topo.connect(acc(bx, by, i, j), acc(bx, by, i, j + 1), LinkClass::Board, params.board,
                       CableType::None);
        }
      }
      for (std::uint64_t i = 0; i + 1 < b; ++i) {
        for (std::uint64_t j = 0; j < a; ++j) {
          topo.connect(acc(bx, by, i, j), acc(bx, by, i + 1, j), LinkClass::Board, params.board,
                       CableType::None);
        }
      }
    }
  }

  // Accelerator cable `index` of network `net` goes to this switch.
  auto network_switch = [](const NetworkShape& s, const Ids& ids, std::uint64_t net,
                           std::uint64_t index) {
    const std::uint64_t leaf = s.spines > 0 ? index / s.up : 0;
    return ids.first_leaf + static_cast<NodeId>(net * s.leaves + leaf);
  };
  auto connect_tree = [&](const NetworkShape& s, const Ids& ids) {
    if (s.spines == 0) return;
    // Up-link u of leaf l (within a network) -> spine (l*up + u) mod spines.
    for (std::uint64_t net = 0; net < s.networks; ++net) {
      for (std::uint64_t l = 0; l < s.leaves; ++l) {
        for (std::uint64_t u = 0; u < s.up; ++u) {
          topo.connect(ids.first_leaf + static_cast<NodeId>(net * s.leaves + l),
                       ids.first_spine + static_cast<NodeId>(net * s.spines + (l * s.up + u) % s.spines),
                       LinkClass::Fabric, params.fabric, CableType::AoC);
        }
      }
    }
  };

  // 2./3. Row networks: W edge of (X, i) then its E edge.
  if (rows.merged) {
    for (std::uint64_t by = 0; by < y; ++by) {
      const NodeId sw = row_ids.first_leaf + static_cast<NodeId>(by);
      for (std::uint64_t bx = 0; bx < x; ++bx) {
        for (std::uint64_t i = 0; i < b; ++i) {
          topo.connect(acc(bx, by, i, 0), sw, LinkClass::Host, params.host, CableType::DAC);
          topo.connect(acc(bx, by, i, a - 1), sw, LinkClass::Host, params.host, CableType::DAC);
        }
      }
    }
  } else {
    for (std::uint64_t by = 0; by < y; ++by) {
      for (std::uint64_t i = 0; i < b; ++i) {
        const std::uint64_t net = by * b + i;
        for (std::uint64_t bx = 0; bx < x; ++bx) {
          topo.connect(acc(bx, by, i, 0), network_switch(rows, row_ids, net, 2 * bx), LinkClass::Host,
                       params.host, CableType::DAC);
          topo.connect(acc(bx, by, i, a - 1), network_switch(rows, row_ids, net, 2 * bx + 1),
                       LinkClass::Host, params.host, CableType::DAC);
        }
      }
    }
    connect_tree(rows, row_ids);
  }

  // 4./5. Column networks: N edge of (Y, j) then its S edge.
  if (cols.merged) {
    for (std::uint64_t bx = 0; bx < x; ++bx) {
      const NodeId sw = col_ids.first_leaf + static_cast<NodeId>(bx);
      for (std::uint64_t by = 0; by < y; ++by) {
        for (std::uint64_t j = 0; j < a; ++j) {
          topo.connect(acc(bx, by, 0, j), sw, LinkClass::Host, params.host, CableType::AoC);
          topo.connect(acc(bx, by, b - 1, j), sw, LinkClass::Host, params.host, CableType::AoC);
        }
      }
    }
  } else {
    for (std::uint64_t bx = 0; bx < x; ++bx) {
      for (std::uint64_t j = 0; j < a; ++j) {
        const std::uint64_t net = bx * a + j;
        for (std::uint64_t by = 0; by < y; ++by) {
          topo.connect(acc(bx, by, 0, j), network_switch(cols, col_ids, net, 2 * by), LinkClass::Host,
                       params.host, CableType::AoC);
          topo.connect(acc(bx, by, b - 1, j), network_switch(cols, col_ids, net, 2 * by + 1),
                       LinkClass::Host, params.host, CableType::AoC);
        }
      }
    }
    connect_tree(cols, col_ids);
  }

  auto describe_dim = [](const NetworkShape& s, const char* unit) {
    if (s.merged) return num(s.networks) + " " + unit + " switches";
    if (s.spines == 0) return num(s.networks) + " single switches";
    return num(s.networks) + " 2-level trees of " + num(s.leaves) + "+" + num(s.spines);
  };
  std::string text = "HammingMesh H" + num(a) + "x" + num(b) + "Mesh, " + num(x) + "x" + num(y) +
                     " boards, radix " + num(k) + ", " + num(n) + " accelerators (rows: " +
                     describe_dim(rows, "board-row") + ", columns: " +
                     describe_dim(cols, "board-column") + ")";
  topo.set_description(std::move(text));
  // The spec's bisection (§3.4): the lower half of the board-rows against the
  // upper half (or the left board-columns against the right ones when y is
  // odd and x even).
  if (y % 2 == 0 || x % 2 == 0) {
    std::vector<std::uint8_t> side(n, 0);
    for (std::uint64_t e = 0; e < n; ++e) {
      const std::uint64_t board = e / (a * b);
      side[e] = y % 2 == 0 ? static_cast<std::uint8_t>(board / x >= y / 2)
                           : static_cast<std::uint8_t>(board % x >= x / 2);
    }
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

// ------------------------------------------------------------ HammingMesh

// Accelerator ((BY*x + BX)*b + i)*a + j, i growing southwards.  A board's
// row portals are W(i) = (i, 0) and E(i) = (i, a-1), each with a cable to a
// switch of its row network; column portals N(j) = (0, j), S(j) = (b-1, j).
// A state (its rules above) is vc (networks entered) | north << 2 |
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
    util::DisjointSets<std::uint32_t> nets(switches);
    for (const Link& l : topo.links())
      if (l.src >= accs_ && l.dst >= accs_) nets.join_into(l.src - accs_, l.dst - accs_);
    for (std::uint32_t s = 0; s < switches; ++s) {
      const Node& n = topo.node(accs_ + s);
      sw_[s].net = nets.find(s);
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

std::unique_ptr<RouteRules> hammingmesh_rules(const Topology& topo, std::uint32_t board_a, std::uint32_t board_b,
                                              std::uint32_t x, std::uint32_t y, bool row_first) {
  return std::make_unique<HammingMeshRules>(topo, board_a, board_b, x, y, row_first);
}

std::unique_ptr<RouteDistance> hammingmesh_distance(const Topology& topo, std::uint32_t board_a,
                                                    std::uint32_t board_b, std::uint32_t x, std::uint32_t y,
                                                    bool row_first) {
  return std::make_unique<HammingMeshDistance>(topo, board_a, board_b, x, y, row_first);
}

}  // namespace fabricsim::net
