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
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
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
  detail::validate_link_params(params.board, "topology.board_link");
  detail::validate_link_params(params.host, "topology.host_link");
  detail::validate_link_params(params.fabric, "topology.fabric_link");
  require_positive(params.board_a, "topology.board_a");
  require_positive(params.board_b, "topology.board_b");
  require_positive(params.x, "topology.x");
  require_positive(params.y, "topology.y");
  const std::uint64_t a = params.board_a;
  const std::uint64_t b = params.board_b;
  const std::uint64_t x = params.x;
  const std::uint64_t y = params.y;
  const std::uint64_t k = params.radix;
  if (k < 2) throw ConfigError("topology.radix: must be at least 2, got " + num(k));
  if (k > kMaxRadix) {
    throw ConfigError("topology.radix: " + num(k) + " exceeds the supported " + num(kMaxRadix));
  }
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

}  // namespace fabricsim::net
