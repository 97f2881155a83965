// Tests of the HammingMesh, torus and Dragonfly builders.
//
// Expected values come from the spec (../shared/spec/hammingmesh.md): the
// counts and costs of its tables §4.2/§4.3 (with the readings of §4.4), the
// construction formulas of §3, and the diameters of §3.4; wiring is checked
// against coordinates computed here, and distances against a plain BFS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {
namespace {

using util::ConfigError;

constexpr double kSwitchUsd = 14280.0;
constexpr double kDacUsd = 272.0;
constexpr double kAocUsd = 603.0;
constexpr std::uint32_t kInf = 0xffffffffu;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// Spec §4.1: planes * (switches * 14280 + DAC * 272 + AoC * 603).
double cost_usd(const Topology& t, std::uint32_t planes) {
  return planes * (static_cast<double>(t.physical_switches()) * kSwitchUsd +
                   static_cast<double>(t.count_cables(CableType::DAC)) * kDacUsd +
                   static_cast<double>(t.count_cables(CableType::AoC)) * kAocUsd);
}

/// Graph invariants: paired cable halves, ports within radix.
void check_graph(const Topology& t) {
  const auto& nodes = t.nodes();
  const auto& links = t.links();
  ASSERT_EQ(links.size() % 2, 0u);
  for (LinkId l = 0; l < links.size(); ++l) {
    const Link& link = links[l];
    ASSERT_EQ(link.reverse, (l % 2 == 0) ? l + 1 : l - 1);
    ASSERT_EQ(links[link.reverse].src, link.dst);
    ASSERT_EQ(links[link.reverse].src_port, link.dst_port);
    ASSERT_EQ(links[link.reverse].cls, link.cls);
    ASSERT_EQ(links[link.reverse].cable, link.cable);
    ASSERT_EQ(nodes[link.src].out[link.src_port], l);
    ASSERT_EQ(nodes[link.dst].in[link.dst_port], l);
    ASSERT_NE(link.src, link.dst);
    ASSERT_LT(link.src_port, nodes[link.src].radix);
  }
  for (NodeId n = 0; n < nodes.size(); ++n) {
    ASSERT_LE(nodes[n].out.size(), nodes[n].radix) << nodes[n].name;
    ASSERT_EQ(nodes[n].out.size(), nodes[n].in.size());
    if (nodes[n].kind == NodeKind::Endpoint) {
      ASSERT_EQ(t.endpoint_node(nodes[n].endpoint), n);
    }
  }
}

/// BFS distances in cables from `src`, only through forwarding nodes and
/// links accepted by `use`.
std::vector<std::uint32_t> distances(const Topology& t, NodeId src,
                                     const std::function<bool(const Link&)>& use = nullptr) {
  std::vector<std::uint32_t> dist(t.node_count(), kInf);
  std::deque<NodeId> queue{src};
  dist[src] = 0;
  while (!queue.empty()) {
    const NodeId x = queue.front();
    queue.pop_front();
    if (x != src && !t.node(x).forwards) continue;
    for (LinkId l : t.node(x).out) {
      const Link& link = t.link(l);
      if (use && !use(link)) continue;
      if (dist[link.dst] == kInf) {
        dist[link.dst] = dist[x] + 1;
        queue.push_back(link.dst);
      }
    }
  }
  return dist;
}

// ============================================================ HammingMesh

HammingMeshParams hxmesh(std::uint32_t a, std::uint32_t b, std::uint32_t x, std::uint32_t y,
                         std::uint32_t radix = 64) {
  HammingMeshParams p;
  p.board_a = a;
  p.board_b = b;
  p.x = x;
  p.y = y;
  p.radix = radix;
  return p;
}

/// Coordinates of accelerator id ((Y*x + X)*b + i)*a + j.
struct Acc {
  std::uint32_t X, Y, i, j;
};
Acc coords(const HammingMeshParams& p, NodeId id) {
  Acc c{};
  c.j = id % p.board_a;
  id /= p.board_a;
  c.i = id % p.board_b;
  id /= p.board_b;
  c.X = id % p.x;
  c.Y = id / p.x;
  return c;
}
NodeId acc_id(const HammingMeshParams& p, std::uint32_t X, std::uint32_t Y, std::uint32_t i,
              std::uint32_t j) {
  return ((Y * p.x + X) * p.board_b + i) * p.board_a + j;
}

/// Is the row network one switch per board-row (rows) / board-column
/// (columns)?  The merged switch of a board-row has 2*b*x ports (W and E
/// edge of each of the b accelerator rows of its x boards).
bool rows_merged(const HammingMeshParams& p) { return 2ull * p.board_b * p.x <= p.radix; }
bool cols_merged(const HammingMeshParams& p) { return 2ull * p.board_a * p.y <= p.radix; }

/// Switches of one network with q accelerator cables (spec §3.2): a single
/// switch, or q/(k/2) leaves and leaves*(k/2)/k spines (rounded up).
std::uint64_t network_switches(std::uint64_t q, std::uint64_t k) {
  if (q <= k) return 1;
  const std::uint64_t leaves = ceil_div(q, k / 2);
  return leaves + ceil_div(leaves * (k / 2), k);
}
std::uint64_t network_fabric_cables(std::uint64_t q, std::uint64_t k) {
  return q <= k ? 0 : ceil_div(q, k / 2) * (k / 2);
}

struct HxCounts {
  std::uint64_t endpoints, switches, dac, aoc;
};
/// Per-plane counts from the construction of spec §3.2 / §4.1.
HxCounts expected_hx_counts(const HammingMeshParams& p) {
  const std::uint64_t a = p.board_a, b = p.board_b, x = p.x, y = p.y, k = p.radix;
  HxCounts c{};
  c.endpoints = a * b * x * y;
  std::uint64_t row_fabric = 0, col_fabric = 0;
  if (rows_merged(p)) {
    c.switches += y;
  } else {
    c.switches += y * b * network_switches(2 * x, k);
    row_fabric = y * b * network_fabric_cables(2 * x, k);
  }
  if (cols_merged(p)) {
    c.switches += x;
  } else {
    c.switches += x * a * network_switches(2 * y, k);
    col_fabric = x * a * network_fabric_cables(2 * y, k);
  }
  // Each accelerator row of each board has a W and an E edge cable (DAC);
  // each accelerator column an N and an S edge cable (AoC); trees add AoC.
  c.dac = 2 * b * x * y;
  c.aoc = 2 * a * x * y + row_fabric + col_fabric;
  return c;
}

/// Diameter formula of spec §3.4 (a tree term is 2 for a single switch).
int formula_diameter(const HammingMeshParams& p) {
  const auto tree = [&](std::uint64_t boards) {
    const double q = 2.0 * static_cast<double>(boards);
    const double k = p.radix;
    if (q <= k) return 2;
    return 2 * (static_cast<int>(std::ceil(std::log(q / k) / std::log(k / 2) - 1e-9)) + 1);
  };
  return 2 * static_cast<int>((p.board_a - 1) / 2 + (p.board_b - 1) / 2) + tree(p.x) + tree(p.y);
}

struct SpecHx {
  const char* name;
  std::uint32_t a, x;            // square boards and square global size
  std::uint64_t endpoints;       // spec table
  std::uint64_t switches_total;  // spec table, 4 planes
  std::uint64_t dac_plane;       // spec table (per plane)
  std::uint64_t aoc_plane;
  double cost_musd;
};
std::ostream& operator<<(std::ostream& os, const SpecHx& s) { return os << s.name; }

class SpecHammingMesh : public ::testing::TestWithParam<SpecHx> {};

// §4.2 gives totals over 4 planes; per plane is total / 4.  §4.3 gives DAC
// and AoC per plane; large Hx1Mesh switches read as 12,288 (§4.4.2).
INSTANTIATE_TEST_SUITE_P(
    Spec, SpecHammingMesh,
    ::testing::Values(SpecHx{"SmallHx1", 1, 32, 1024, 256, 8192 / 4, 8192 / 4, 10.82},
                      SpecHx{"SmallHx2", 2, 16, 1024, 128, 4096 / 4, 4096 / 4, 5.41},
                      SpecHx{"SmallHx4", 4, 8, 1024, 64, 2048 / 4, 2048 / 4, 2.71},
                      SpecHx{"LargeHx1", 1, 128, 16384, 12288, 32768, 98304, 448.23},
                      SpecHx{"LargeHx2", 2, 64, 16384, 6144, 16384, 49152, 224.12},
                      SpecHx{"LargeHx4", 4, 32, 16384, 1024, 8192, 8192, 43.29}),
    [](const ::testing::TestParamInfo<SpecHx>& param_info) { return std::string(param_info.param.name); });

TEST_P(SpecHammingMesh, BisectionMatchesSpec) {
  // Spec §3.4: cutting the lower boards from the upper ones cuts the 2a
  // column-edge cables of each of the x*y/2 lower boards, a*x*y cables,
  // against 2*x*y*a^2 injection links (4 per accelerator) of one half:
  // relative bisection 1/(2a).
  const SpecHx& s = GetParam();
  const Topology t = build_hammingmesh(hxmesh(s.a, s.a, s.x, s.x));
  // (Not structure_report: it would also compute the diameter, seconds for the large ones.)
  EXPECT_EQ(t.bisection_cables(), std::uint64_t{s.a} * s.x * s.x);
  EXPECT_EQ(t.bisection_injection_links(), 2 * std::uint64_t{s.x} * s.x * s.a * s.a);
  EXPECT_DOUBLE_EQ(static_cast<double>(t.bisection_cables()) / static_cast<double>(t.bisection_injection_links()),
                   1.0 / (2.0 * s.a));
}

TEST_P(SpecHammingMesh, CountsAndCostMatchSpecTable) {
  const SpecHx& s = GetParam();
  const HammingMeshParams p = hxmesh(s.a, s.a, s.x, s.x);
  const Topology t = build_hammingmesh(p);
  EXPECT_EQ(t.kind, "hammingmesh");
  const HxCounts c = expected_hx_counts(p);
  // The construction formulas reproduce the spec table ...
  EXPECT_EQ(c.endpoints, s.endpoints);
  EXPECT_EQ(c.switches * 4, s.switches_total);
  EXPECT_EQ(c.dac, s.dac_plane);
  EXPECT_EQ(c.aoc, s.aoc_plane);
  // ... and the builder the formulas.
  EXPECT_EQ(t.endpoint_count(), c.endpoints);
  EXPECT_EQ(t.switch_count(), c.switches);
  EXPECT_EQ(t.physical_switches(), c.switches);
  EXPECT_EQ(t.count_cables(CableType::DAC), c.dac);
  EXPECT_EQ(t.count_cables(CableType::AoC), c.aoc);
  EXPECT_EQ(t.count_links(LinkClass::Board) / 2, s.x * s.x * 2 * s.a * (s.a - 1));
  EXPECT_NEAR(cost_usd(t, 4) / 1e6, s.cost_musd, 0.005);
  EXPECT_FALSE(t.describe().empty());
}

/// Full wiring check against coordinates: accelerator nodes, board links,
/// edge cables to the right network and switch port, network sizes.
void check_hammingmesh_wiring(const HammingMeshParams& p) {
  SCOPED_TRACE("H" + std::to_string(p.board_a) + "x" + std::to_string(p.board_b) + "Mesh " +
               std::to_string(p.x) + "x" + std::to_string(p.y) + " radix " + std::to_string(p.radix));
  const Topology t = build_hammingmesh(p);
  ASSERT_NO_FATAL_FAILURE(check_graph(t));
  const std::uint32_t a = p.board_a, b = p.board_b, k = p.radix;
  const std::uint64_t n = std::uint64_t{a} * b * p.x * p.y;
  ASSERT_EQ(t.endpoint_count(), n);
  const HxCounts c = expected_hx_counts(p);
  ASSERT_EQ(t.switch_count(), c.switches);
  ASSERT_EQ(t.count_cables(CableType::DAC), c.dac);
  ASSERT_EQ(t.count_cables(CableType::AoC), c.aoc);

  for (NodeId e = 0; e < n; ++e) {
    const Node& node = t.node(e);
    ASSERT_EQ(node.kind, NodeKind::Endpoint);
    ASSERT_EQ(node.endpoint, e);
    ASSERT_TRUE(node.forwards);
    ASSERT_EQ(node.level, 0);
    ASSERT_EQ(node.radix, 4u);
    ASSERT_EQ(node.ports_used(), 4u) << "every accelerator uses E, W, N and S";
    const Acc ac = coords(p, e);
    std::multiset<NodeId> board_expected;
    if (ac.j > 0) board_expected.insert(acc_id(p, ac.X, ac.Y, ac.i, ac.j - 1));
    if (ac.j + 1 < a) board_expected.insert(acc_id(p, ac.X, ac.Y, ac.i, ac.j + 1));
    if (ac.i > 0) board_expected.insert(acc_id(p, ac.X, ac.Y, ac.i - 1, ac.j));
    if (ac.i + 1 < b) board_expected.insert(acc_id(p, ac.X, ac.Y, ac.i + 1, ac.j));
    std::multiset<NodeId> board_actual;
    std::uint32_t dac = 0, aoc = 0;
    for (LinkId l : node.out) {
      const Link& link = t.link(l);
      if (link.cls == LinkClass::Board) {
        ASSERT_EQ(link.cable, CableType::None);
        board_actual.insert(link.dst);
      } else {
        ASSERT_EQ(link.cls, LinkClass::Host);
        ASSERT_EQ(t.node(link.dst).kind, NodeKind::Switch);
        ASSERT_EQ(t.node(link.dst).level, 1);
        (link.cable == CableType::DAC ? dac : aoc) += 1;
      }
    }
    ASSERT_EQ(board_actual, board_expected) << node.name;
    // W/E edges to the row network (DAC), N/S edges to the column network (AoC).
    ASSERT_EQ(dac, (ac.j == 0 ? 1u : 0u) + (ac.j + 1 == a ? 1u : 0u)) << node.name;
    ASSERT_EQ(aoc, (ac.i == 0 ? 1u : 0u) + (ac.i + 1 == b ? 1u : 0u)) << node.name;
  }

  // Networks: connected components of switches over Fabric links.
  std::vector<std::uint32_t> comp(t.node_count(), kInf);
  std::vector<std::vector<NodeId>> members;
  for (NodeId s = static_cast<NodeId>(n); s < t.node_count(); ++s) {
    const Node& sw = t.node(s);
    ASSERT_EQ(sw.kind, NodeKind::Switch);
    ASSERT_TRUE(sw.forwards);
    ASSERT_EQ(sw.radix, k);
    if (comp[s] != kInf) continue;
    comp[s] = static_cast<std::uint32_t>(members.size());
    members.push_back({s});
    for (std::size_t q = 0; q < members.back().size(); ++q) {
      for (LinkId l : t.node(members.back()[q]).out) {
        const Link& link = t.link(l);
        if (link.cls != LinkClass::Fabric) continue;
        ASSERT_EQ(link.cable, CableType::AoC);
        if (comp[link.dst] == kInf) {
          comp[link.dst] = comp[s];
          members.back().push_back(link.dst);
        }
      }
    }
  }
  const std::uint64_t row_networks = rows_merged(p) ? p.y : std::uint64_t{p.y} * b;
  const std::uint64_t col_networks = cols_merged(p) ? p.x : std::uint64_t{p.x} * a;
  ASSERT_EQ(members.size(), row_networks + col_networks);

  for (const auto& net : members) {
    // The accelerator cables of the network: (accelerator, network index).
    std::vector<NodeId> leaves;
    std::size_t spines = 0;
    for (NodeId s : net) {
      if (t.node(s).level == 1) leaves.push_back(s);
      else ++spines;
    }
    std::sort(leaves.begin(), leaves.end());
    std::set<std::pair<NodeId, std::uint64_t>> actual;
    CableType type = CableType::None;
    for (std::size_t li = 0; li < leaves.size(); ++li) {
      const Node& sw = t.node(leaves[li]);
      for (LinkId l : sw.out) {
        const Link& link = t.link(l);
        if (link.cls != LinkClass::Host) continue;
        if (type == CableType::None) type = link.cable;
        ASSERT_EQ(link.cable, type) << "a network has only DAC (row) or only AoC (column) cables";
        // Endpoint ports first on every switch / leaf: index = leaf*(k/2) + port.
        const std::uint64_t index = leaves.size() == 1 ? link.src_port : li * (k / 2) + link.src_port;
        actual.insert({link.dst, index});
      }
    }
    ASSERT_NE(type, CableType::None);
    const bool row = type == CableType::DAC;
    const bool merged = row ? rows_merged(p) : cols_merged(p);
    const std::uint64_t boards = row ? p.x : p.y;
    ASSERT_EQ(net.size(), merged ? 1u : network_switches(2 * boards, k));
    if (!merged && 2 * boards > k) {
      ASSERT_EQ(leaves.size(), ceil_div(2 * boards, k / 2));
      ASSERT_EQ(spines, net.size() - leaves.size());
      // Every leaf: its endpoint ports then k/2 up-links spread evenly.
      for (NodeId leaf : leaves) {
        std::map<NodeId, std::uint32_t> per_spine;
        for (LinkId l : t.node(leaf).out) {
          if (t.link(l).cls == LinkClass::Fabric) {
            ASSERT_EQ(t.node(t.link(l).dst).level, 2);
            ++per_spine[t.link(l).dst];
          }
        }
        std::uint32_t lo = kInf, hi = 0, total = 0;
        for (const auto& [sp, cnt] : per_spine) {
          lo = std::min(lo, cnt);
          hi = std::max(hi, cnt);
          total += cnt;
        }
        ASSERT_EQ(total, k / 2);
        ASSERT_EQ(per_spine.size(), spines) << "each leaf reaches every spine";
        ASSERT_LE(hi - lo, 1u);
      }
    }
    // Expected cables: identify the network by one of its accelerators.
    const Acc first = coords(p, actual.begin()->first);
    std::set<std::pair<NodeId, std::uint64_t>> expected;
    if (row) {
      for (std::uint32_t X = 0; X < p.x; ++X) {
        for (std::uint32_t i = 0; i < b; ++i) {
          if (!merged && i != first.i) continue;
          const std::uint64_t base = merged ? 2ull * (X * b + i) : 2ull * X;
          expected.insert({acc_id(p, X, first.Y, i, 0), base});          // W edge
          expected.insert({acc_id(p, X, first.Y, i, a - 1), base + 1});  // E edge
        }
      }
    } else {
      for (std::uint32_t Y = 0; Y < p.y; ++Y) {
        for (std::uint32_t j = 0; j < a; ++j) {
          if (!merged && j != first.j) continue;
          const std::uint64_t base = merged ? 2ull * (Y * a + j) : 2ull * Y;
          expected.insert({acc_id(p, first.X, Y, 0, j), base});          // N edge
          expected.insert({acc_id(p, first.X, Y, b - 1, j), base + 1});  // S edge
        }
      }
    }
    ASSERT_EQ(actual, expected) << t.node(net[0]).name;
  }

  // Row (column) networks plus the board's E-W (N-S) links reach exactly the
  // accelerators of the row (column): the whole board-row when merged.
  for (NodeId src : {NodeId{0}, static_cast<NodeId>(n - 1), static_cast<NodeId>(n / 2)}) {
    const Acc s = coords(p, src);
    const auto row_dist = distances(t, src, [&](const Link& l) {
      if (l.cls == LinkClass::Host) return l.cable == CableType::DAC;
      if (l.cls == LinkClass::Board) return coords(p, l.src).i == coords(p, l.dst).i;
      return true;  // fabric links of the row trees (column trees are not reachable)
    });
    const auto col_dist = distances(t, src, [&](const Link& l) {
      if (l.cls == LinkClass::Host) return l.cable == CableType::AoC;
      if (l.cls == LinkClass::Board) return coords(p, l.src).j == coords(p, l.dst).j;
      return true;
    });
    for (NodeId e = 0; e < n; ++e) {
      const Acc d = coords(p, e);
      const bool in_row = d.Y == s.Y && (rows_merged(p) || d.i == s.i);
      const bool in_col = d.X == s.X && (cols_merged(p) || d.j == s.j);
      ASSERT_EQ(row_dist[e] != kInf, in_row) << "row of ep" << src << " vs ep" << e;
      ASSERT_EQ(col_dist[e] != kInf, in_col) << "column of ep" << src << " vs ep" << e;
    }
  }
}

TEST(HammingMesh, WiringSmallSpecConfigurations) {
  check_hammingmesh_wiring(hxmesh(1, 1, 32, 32));
  check_hammingmesh_wiring(hxmesh(2, 2, 16, 16));
  check_hammingmesh_wiring(hxmesh(4, 4, 8, 8));
}

TEST(HammingMesh, WiringLargeSpecConfigurations) {
  check_hammingmesh_wiring(hxmesh(1, 1, 128, 128));  // 256-port trees: 8 leaves + 4 spines
  check_hammingmesh_wiring(hxmesh(2, 2, 64, 64));    // 128-port trees: 4 leaves + 2 spines
  check_hammingmesh_wiring(hxmesh(4, 4, 32, 32));    // one 64-port switch per accelerator row
}

TEST(HammingMesh, WiringOtherShapes) {
  check_hammingmesh_wiring(hxmesh(3, 2, 5, 7));      // non-square, both dimensions merged
  check_hammingmesh_wiring(hxmesh(3, 2, 6, 4, 8));   // rows: 12-port trees of 3 leaves + 2 spines; columns single
  check_hammingmesh_wiring(hxmesh(2, 2, 16, 16, 16));  // 32-port trees on radix 16
  check_hammingmesh_wiring(hxmesh(1, 3, 4, 1, 64));  // one board-row
  check_hammingmesh_wiring(hxmesh(2, 1, 1, 40, 64)); // one board-column, column trees
}

TEST(HammingMesh, SwitchNamesAndLevels) {
  const Topology small = build_hammingmesh(hxmesh(2, 2, 16, 16));
  EXPECT_EQ(small.switch_count(1), 32u);
  EXPECT_EQ(small.switch_count(2), 0u);
  EXPECT_EQ(small.node(1024).name, "row0");
  EXPECT_EQ(small.node(1024 + 16).name, "col0");
  const Topology large = build_hammingmesh(hxmesh(2, 2, 64, 64));
  // 128 row trees and 128 column trees of 4 leaves + 2 spines.
  EXPECT_EQ(large.switch_count(1), 2u * 128 * 4);
  EXPECT_EQ(large.switch_count(2), 2u * 128 * 2);
  std::size_t rowleaf = 0, rowspine = 0, colleaf = 0, colspine = 0;
  for (const Node& node : large.nodes()) {
    if (node.kind != NodeKind::Switch) continue;
    const std::string& nm = node.name;
    if (nm.rfind("rowleaf", 0) == 0) { ++rowleaf; EXPECT_EQ(node.level, 1); }
    if (nm.rfind("rowspine", 0) == 0) { ++rowspine; EXPECT_EQ(node.level, 2); }
    if (nm.rfind("colleaf", 0) == 0) { ++colleaf; EXPECT_EQ(node.level, 1); }
    if (nm.rfind("colspine", 0) == 0) { ++colspine; EXPECT_EQ(node.level, 2); }
  }
  EXPECT_EQ(rowleaf, 512u);
  EXPECT_EQ(rowspine, 256u);
  EXPECT_EQ(colleaf, 512u);
  EXPECT_EQ(colspine, 256u);
}

TEST(HammingMesh, Hx1MeshIsA2DHyperX) {
  const HammingMeshParams p = hxmesh(1, 1, 32, 32);
  const Topology t = build_hammingmesh(p);
  ASSERT_EQ(t.endpoint_count(), 1024u);
  // Each accelerator: both DAC cables to its row's switch, both AoC cables
  // to its column's switch, and no board link.
  std::map<std::uint32_t, std::set<NodeId>> row_switches, col_switches;
  for (NodeId e = 0; e < 1024; ++e) {
    std::set<NodeId> dac, aoc;
    for (LinkId l : t.node(e).out) {
      ASSERT_EQ(t.link(l).cls, LinkClass::Host);
      (t.link(l).cable == CableType::DAC ? dac : aoc).insert(t.link(l).dst);
    }
    ASSERT_EQ(dac.size(), 1u);
    ASSERT_EQ(aoc.size(), 1u);
    row_switches[coords(p, e).Y].insert(*dac.begin());
    col_switches[coords(p, e).X].insert(*aoc.begin());
  }
  for (const auto& [r, s] : row_switches) ASSERT_EQ(s.size(), 1u) << "one switch per row";
  for (const auto& [c, s] : col_switches) ASSERT_EQ(s.size(), 1u) << "one switch per column";
  // Distances: 2 cables within a row or column (through its switch), 4 otherwise.
  for (NodeId src : {NodeId{0}, NodeId{33}, NodeId{517}, NodeId{1023}}) {
    const auto dist = distances(t, src);
    const Acc s = coords(p, src);
    for (NodeId e = 0; e < 1024; ++e) {
      if (e == src) continue;
      const Acc d = coords(p, e);
      const std::uint32_t want = (d.X == s.X || d.Y == s.Y) ? 2 : 4;
      ASSERT_EQ(dist[e], want) << "ep" << src << " -> ep" << e;
    }
  }
  EXPECT_EQ(t.diameter(), 4);
}

TEST(HammingMesh, SmallDiametersMatchSpecTable) {
  // Spec §3.4 table, small column: Hx1Mesh 4, Hx2Mesh 4.
  const HammingMeshParams hx1 = hxmesh(1, 1, 32, 32);
  const HammingMeshParams hx2 = hxmesh(2, 2, 16, 16);
  EXPECT_EQ(formula_diameter(hx1), 4);
  EXPECT_EQ(formula_diameter(hx2), 4);
  EXPECT_EQ(build_hammingmesh(hx1).diameter(), 4);
  EXPECT_EQ(build_hammingmesh(hx2).diameter(), 4);
}

TEST(HammingMesh, SmallHx4MeshDiameter) {
  // Spec §3.4 gives 8 for the small Hx4Mesh, the formula's value:
  // 2(1 + 1) board hops + 2 + 2.  The formula assumes a network per
  // accelerator row/column (the packet has to line up with the destination
  // column on the intermediate board).  The small construction merges the 4
  // accelerator rows of a board-row into one switch (spec §3.2: "a packet can
  // change accelerator row inside the switch"), so the worst pair is shorter:
  // 1 hop to a W/E edge + 2 cables through the row switch to a corner of the
  // intermediate board + 2 cables through the column switch + 1 hop = 6.
  const HammingMeshParams p = hxmesh(4, 4, 8, 8);
  EXPECT_EQ(formula_diameter(p), 8);
  const Topology t = build_hammingmesh(p);
  // Independent BFS from an interior accelerator (1,1) of board (0,0).
  const NodeId src = acc_id(p, 0, 0, 1, 1);
  const auto dist = distances(t, src);
  std::uint32_t worst = 0;
  for (NodeId e = 0; e < 1024; ++e) worst = std::max(worst, dist[e]);
  EXPECT_EQ(worst, 6u);
  EXPECT_EQ(dist[acc_id(p, 5, 5, 2, 2)], 6u);
  EXPECT_EQ(t.diameter(), 6);
  // With one network per accelerator row/column (radix 16 forces that on the
  // same 8x8 boards of 4x4) the formula's 8 holds.
  const HammingMeshParams per_row = hxmesh(4, 4, 8, 8, 16);
  EXPECT_EQ(formula_diameter(per_row), 8);
  EXPECT_EQ(build_hammingmesh(per_row).diameter(), 8);
}

TEST(HammingMesh, LargeModeDiametersMatchFormula) {
  // Radix-16 analogues of the large configurations (networks per accelerator
  // row, 2-level trees where 2x > 16): §3.4 formula, 8 for all three as in
  // the table's large column.  The 16k-accelerator configurations themselves
  // are not checked here: Topology::diameter() takes 6-9 s each on them in a
  // Release build (one BFS per accelerator); the same holds for the
  // 128x128 torus (128, about 5 s).
  for (const HammingMeshParams& p :
       {hxmesh(1, 1, 32, 32, 16), hxmesh(2, 2, 16, 16, 16), hxmesh(4, 4, 8, 8, 16)}) {
    EXPECT_EQ(formula_diameter(p), 8);
    EXPECT_EQ(build_hammingmesh(p).diameter(), 8) << p.board_a;
  }
}

TEST(HammingMesh, BadParametersThrow) {
  const auto expect_key = [](const HammingMeshParams& p, const std::string& key) {
    try {
      (void)build_hammingmesh(p);
      ADD_FAILURE() << "no error for " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  expect_key(hxmesh(0, 2, 4, 4), "topology.board_a");
  expect_key(hxmesh(2, 0, 4, 4), "topology.board_b");
  expect_key(hxmesh(2, 2, 0, 4), "topology.x");
  expect_key(hxmesh(2, 2, 4, 0), "topology.y");
  expect_key(hxmesh(2, 2, 4, 4, 1), "topology.radix");
  expect_key(hxmesh(2, 2, 4, 4, 70000), "topology.radix");
  // 2x = 4096 ports > 64*32: would need a 3-level tree.
  expect_key(hxmesh(1, 1, 2048, 2), "topology.x");
  expect_key(hxmesh(1, 1, 2, 2048), "topology.y");
  HammingMeshParams bad_link = hxmesh(2, 2, 4, 4);
  bad_link.host.bandwidth_gbps = 0;
  expect_key(bad_link, "topology.host_link");
  bad_link = hxmesh(2, 2, 4, 4);
  bad_link.board.bandwidth_gbps = -1;
  expect_key(bad_link, "topology.board_link");
}

// ================================================================== Torus

TorusParams torus(std::vector<std::uint32_t> dims, bool boards) {
  TorusParams p;
  p.dims = std::move(dims);
  p.boards = boards;
  return p;
}

/// Neighbours expected in a torus with wrap-around, and which are on-board.
void check_torus_wiring(const TorusParams& p) {
  const Topology t = build_torus(p);
  ASSERT_NO_FATAL_FAILURE(check_graph(t));
  std::uint64_t n = 1;
  for (std::uint32_t d : p.dims) n *= d;
  ASSERT_EQ(t.endpoint_count(), n);
  ASSERT_EQ(t.switch_count(), 0u);
  EXPECT_EQ(t.kind, "torus");
  std::uint64_t board_cables = 0;
  for (NodeId e = 0; e < n; ++e) {
    const Node& node = t.node(e);
    ASSERT_EQ(node.kind, NodeKind::Endpoint);
    ASSERT_TRUE(node.forwards);
    std::vector<std::uint32_t> c(p.dims.size());
    std::uint64_t rest = e;
    for (std::size_t d = 0; d < p.dims.size(); ++d) {
      c[d] = static_cast<std::uint32_t>(rest % p.dims[d]);
      rest /= p.dims[d];
    }
    const auto id = [&](const std::vector<std::uint32_t>& cc) {
      std::uint64_t v = 0;
      for (std::size_t d = p.dims.size(); d-- > 0;) v = v * p.dims[d] + cc[d];
      return static_cast<NodeId>(v);
    };
    std::set<std::pair<NodeId, bool>> expected;  // (neighbour, on board)
    for (std::size_t d = 0; d < p.dims.size(); ++d) {
      const std::uint32_t size = p.dims[d];
      if (size == 1) continue;
      for (int dir : {-1, 1}) {
        std::vector<std::uint32_t> cc = c;
        cc[d] = static_cast<std::uint32_t>((c[d] + size + dir) % size);
        const bool board = p.boards && d < 2 && c[d] / 2 == cc[d] / 2;
        expected.insert({id(cc), board});
      }
    }
    std::set<std::pair<NodeId, bool>> actual;
    for (LinkId l : node.out) {
      const Link& link = t.link(l);
      const bool board = link.cls == LinkClass::Board;
      if (board) {
        ASSERT_EQ(link.cable, CableType::None);
        ++board_cables;
      } else {
        ASSERT_EQ(link.cls, LinkClass::Global);
        ASSERT_EQ(link.cable, CableType::AoC);
      }
      actual.insert({link.dst, board});
    }
    ASSERT_EQ(actual.size(), node.out.size()) << "no parallel cables";
    ASSERT_EQ(actual, expected) << node.name;
    ASSERT_EQ(node.radix, node.ports_used());
  }
  // A 2x2 board has 4 internal links (each counted from both ends above).
  if (p.boards) {
    // Dimensions of size 2 have one link per pair too: a 2x2 board always
    // has 2 links along dimension 0 and 2 along dimension 1.
    EXPECT_EQ(board_cables / 2, n / 4 * 4);
  } else {
    EXPECT_EQ(board_cables, 0u);
  }
}

TEST(Torus, WiringAndBoards) {
  check_torus_wiring(torus({32, 32}, true));
  check_torus_wiring(torus({4, 6, 5}, false));
  check_torus_wiring(torus({4, 6, 3}, true));
  check_torus_wiring(torus({2, 4, 1}, true));
  check_torus_wiring(torus({2, 2}, true));
  check_torus_wiring(torus({7}, false));
  check_torus_wiring(torus({2}, false));
}

struct SpecTorus {
  std::uint32_t side;
  std::uint64_t aoc_plane;  // spec: 1,024 inter-board cables per plane (small); 16,384 (large)
  double cost_musd;
};

TEST(Torus, SpecCountsAndCost) {
  for (const SpecTorus& s : {SpecTorus{32, 1024, 2.47}, SpecTorus{128, 16384, 39.52}}) {
    const Topology t = build_torus(torus({s.side, s.side}, true));
    const std::uint64_t n = std::uint64_t{s.side} * s.side;
    EXPECT_EQ(t.endpoint_count(), n);
    EXPECT_EQ(t.switch_count(), 0u);
    EXPECT_EQ(t.physical_switches(), 0u);
    EXPECT_EQ(t.count_cables(CableType::DAC), 0u);
    // 2 cables per accelerator, 4 of them inside each 2x2 board.
    EXPECT_EQ(2 * n - 4 * (n / 4), s.aoc_plane);
    EXPECT_EQ(t.count_cables(CableType::AoC), s.aoc_plane);
    EXPECT_EQ(t.count_links(LinkClass::Board) / 2, n);
    // Spec §4.4.1: 4 planes, priced AoC.
    EXPECT_NEAR(cost_usd(t, 4) / 1e6, s.cost_musd, 0.005);
  }
}

TEST(Torus, WithoutBoardsEveryLinkIsACable) {
  const Topology t = build_torus(torus({32, 32}, false));
  EXPECT_EQ(t.count_cables(CableType::AoC), 2048u);
  EXPECT_EQ(t.count_links(LinkClass::Board), 0u);
}

TEST(Torus, Bisection) {
  // Halving the largest even dimension of a torus cuts two rings' worth of
  // links per line along it: 2 * (accelerators / size of that dimension).
  for (const std::vector<std::uint32_t>& dims :
       {std::vector<std::uint32_t>{32, 32}, std::vector<std::uint32_t>{8, 4, 6}, std::vector<std::uint32_t>{5, 6}}) {
    TorusParams p;
    p.dims = dims;
    p.boards = dims[0] % 2 == 0 && dims[1] % 2 == 0;  // boards do not change the cut (it falls between them)
    const Topology t = build_torus(p);
    std::uint64_t n = 1;
    std::uint32_t largest_even = 0;
    for (std::uint32_t d : dims) {
      n *= d;
      if (d % 2 == 0) largest_even = std::max(largest_even, d);
    }
    EXPECT_EQ(t.bisection_cables(), 2 * n / largest_even);
    EXPECT_EQ(t.bisection_injection_links(), n / 2 * 2 * dims.size());
  }
}

TEST(Torus, Diameters) {
  // Spec §3.4: 32 for the small 32x32 torus (16 + 16 cables).
  EXPECT_EQ(build_torus(torus({32, 32}, true)).diameter(), 32);
  EXPECT_EQ(build_torus(torus({4, 6, 5}, false)).diameter(), 2 + 3 + 2);
  EXPECT_EQ(build_torus(torus({2, 4, 1}, true)).diameter(), 1 + 2);
}

TEST(Torus, BadParametersThrow) {
  const auto expect_key = [](const TorusParams& p, const std::string& key) {
    try {
      (void)build_torus(p);
      ADD_FAILURE() << "no error for " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_key(torus({}, false), "topology.dims");
  expect_key(torus({32, 0}, false), "topology.dims");
  expect_key(torus({31, 32}, true), "topology.dims");
  expect_key(torus({32, 5}, true), "topology.dims");
  expect_key(torus({32}, true), "topology.dims");
  TorusParams bad = torus({4, 4}, true);
  bad.link.bandwidth_gbps = 0;
  expect_key(bad, "topology.link");
  EXPECT_NO_THROW((void)build_torus(torus({31, 5}, false)));
}

// ============================================================== Dragonfly

DragonflyParams dragonfly(std::uint32_t a, std::uint32_t p, std::uint32_t h, std::uint32_t groups,
                          std::string arrangement = "consecutive", std::uint32_t rps = 1) {
  DragonflyParams d;
  d.a = a;
  d.p = p;
  d.h = h;
  d.groups = groups;
  d.arrangement = std::move(arrangement);
  d.routers_per_switch = rps;
  return d;
}

struct DfWiring {
  /// global[g1][g2]: global cables between groups g1 and g2.
  std::vector<std::vector<std::uint32_t>> global;
  /// router_targets[router]: groups its global cables go to (sorted).
  std::vector<std::vector<std::uint32_t>> router_targets;
};

/// Checks nodes, router radix, groups fully connected, cable types; returns
/// the global wiring.
DfWiring check_dragonfly_wiring(const DragonflyParams& d) {
  const Topology t = build_dragonfly(d);
  DfWiring w;
  EXPECT_EQ(t.kind, "dragonfly");
  check_graph(t);
  const std::uint32_t routers = d.groups * d.a;
  const std::uint32_t n = routers * d.p;
  EXPECT_EQ(t.endpoint_count(), n);
  EXPECT_EQ(t.switch_count(), routers);
  EXPECT_EQ(t.switch_count(1), routers);
  EXPECT_EQ(t.physical_switches(), routers / d.routers_per_switch);
  const std::uint32_t radix = d.p + (d.a - 1) + d.h;
  std::vector<std::uint32_t> group_of(t.node_count(), kInf);
  std::vector<std::uint32_t> index_of(t.node_count(), kInf);  // router index in its group
  // Routers: identified through their endpoints (endpoint e -> router e / p).
  for (NodeId e = 0; e < n; ++e) {
    const Node& node = t.node(e);
    EXPECT_EQ(node.kind, NodeKind::Endpoint);
    EXPECT_FALSE(node.forwards);
    EXPECT_EQ(node.ports_used(), 1u);
    const Link& link = t.link(node.out[0]);
    EXPECT_EQ(link.cls, LinkClass::Host);
    EXPECT_EQ(link.cable, CableType::DAC);
    const std::uint32_t r = e / d.p;
    if (group_of[link.dst] == kInf) {
      group_of[link.dst] = r / d.a;
      index_of[link.dst] = r % d.a;
    }
    EXPECT_EQ(group_of[link.dst], r / d.a);
    EXPECT_EQ(index_of[link.dst], r % d.a) << "endpoints of one router share it";
  }
  w.global.assign(d.groups, std::vector<std::uint32_t>(d.groups, 0));
  w.router_targets.assign(routers, {});
  std::size_t seen_routers = 0;
  for (NodeId x = 0; x < t.node_count(); ++x) {
    const Node& node = t.node(x);
    if (node.kind != NodeKind::Switch) continue;
    ++seen_routers;
    EXPECT_TRUE(node.forwards);
    EXPECT_EQ(node.radix, radix);
    EXPECT_EQ(node.ports_used(), radix) << "every router port is cabled";
    const std::uint32_t g = group_of[x];
    EXPECT_NE(g, kInf);
    std::set<std::uint32_t> local_peers;
    std::uint32_t hosts = 0;
    for (LinkId l : node.out) {
      const Link& link = t.link(l);
      const NodeId y = link.dst;
      switch (link.cls) {
        case LinkClass::Host: ++hosts; break;
        case LinkClass::Fabric: {
          EXPECT_EQ(group_of[y], g) << "Fabric links stay inside a group";
          EXPECT_TRUE(local_peers.insert(index_of[y]).second) << "one cable per router pair";
          const bool same_box = d.routers_per_switch == 2 && index_of[x] / 2 == index_of[y] / 2;
          EXPECT_EQ(link.cable, same_box ? CableType::None : CableType::DAC);
          break;
        }
        case LinkClass::Global:
          EXPECT_NE(group_of[y], g) << "no global cable inside a group";
          EXPECT_EQ(link.cable, CableType::AoC);
          ++w.global[g][group_of[y]];
          w.router_targets[g * d.a + index_of[x]].push_back(group_of[y]);
          break;
        default: ADD_FAILURE() << "unexpected link class";
      }
    }
    EXPECT_EQ(hosts, d.p);
    EXPECT_EQ(local_peers.size(), d.a - 1u) << "routers of a group fully connected";
    EXPECT_EQ(w.router_targets[g * d.a + index_of[x]].size(), d.h);
    std::sort(w.router_targets[g * d.a + index_of[x]].begin(), w.router_targets[g * d.a + index_of[x]].end());
  }
  EXPECT_EQ(seen_routers, routers);
  return w;
}

/// Every pair of groups joined by global cables, counts within 1 of each other.
std::pair<std::uint32_t, std::uint32_t> global_pair_range(const DfWiring& w) {
  std::uint32_t lo = kInf, hi = 0;
  for (std::size_t g1 = 0; g1 < w.global.size(); ++g1) {
    for (std::size_t g2 = 0; g2 < w.global.size(); ++g2) {
      if (g1 == g2) continue;
      EXPECT_EQ(w.global[g1][g2], w.global[g2][g1]);
      lo = std::min(lo, w.global[g1][g2]);
      hi = std::max(hi, w.global[g1][g2]);
    }
  }
  return {lo, hi};
}

TEST(Dragonfly, SmallSpecCountsAndCost) {
  const DragonflyParams d = dragonfly(16, 8, 8, 8, "consecutive", 2);
  const Topology t = build_dragonfly(d);
  // Spec §4.2: 1,024 endpoints; 1,024 switches, 30,720 DAC and 8,192 AoC over 16 planes.
  EXPECT_EQ(t.endpoint_count(), 1024u);
  EXPECT_EQ(t.switch_count(), 128u);  // routers per plane
  const std::uint64_t routers = 8 * 16;
  const std::uint64_t dac = 8 * 16 * 8 + 8 * (16 * 15 / 2 - 16 / 2);
  const std::uint64_t aoc = 8 * 16 * 8 / 2;
  EXPECT_EQ(16 * routers / 2, 1024u);
  EXPECT_EQ(16 * dac, 30720u);
  EXPECT_EQ(16 * aoc, 8192u);
  EXPECT_EQ(t.physical_switches(), routers / 2);
  EXPECT_EQ(t.count_cables(CableType::DAC), dac);
  EXPECT_EQ(t.count_cables(CableType::AoC), aoc);
  EXPECT_EQ(t.count_cables(CableType::None), 8u * 8);  // one in-box link per switch
  EXPECT_NEAR(cost_usd(t, 16) / 1e6, 27.92, 0.005);
}

/// Diameter in cables derived from the global wiring: routers of one group
/// are 1 local cable apart; routers r, s of different groups are 1 router
/// hop apart when cabled directly, 2 when r has a global cable to s's group
/// or s one to r's group (local + global), else 3 (local, global, local);
/// plus the 2 endpoint cables.
int derived_dragonfly_diameter(const DragonflyParams& d, const DfWiring& w) {
  const std::uint32_t routers = d.groups * d.a;
  std::vector<std::vector<bool>> covers(routers, std::vector<bool>(d.groups, false));
  for (std::uint32_t r = 0; r < routers; ++r) {
    for (std::uint32_t g : w.router_targets[r]) covers[r][g] = true;
  }
  int worst = d.a > 1 ? 1 : 0;
  for (std::uint32_t r = 0; r < routers; ++r) {
    for (std::uint32_t s = 0; s < routers; ++s) {
      const std::uint32_t gr = r / d.a, gs = s / d.a;
      if (gr == gs) continue;
      worst = std::max(worst, (covers[r][gs] || covers[s][gr]) ? 2 : 3);
    }
  }
  return worst + 2;
}

TEST(Dragonfly, Diameters) {
  // Spec §3.4 gives 3 for the Dragonfly, counted between routers (local,
  // global, local): 5 cables with the 2 endpoint cables.  In the small
  // configuration a router's h = 8 consecutive global ports cover nearly all
  // 7 other groups, and no two routers that both miss each other's group
  // exist, so the worst path is endpoint, local, global, endpoint: 4.
  {
    const DragonflyParams d = dragonfly(16, 8, 8, 8, "consecutive", 2);
    const DfWiring w = check_dragonfly_wiring(d);
    EXPECT_EQ(derived_dragonfly_diameter(d, w), 4);
    EXPECT_EQ(build_dragonfly(d).diameter(), 4);
  }
  for (const DragonflyParams& d :
       {dragonfly(32, 17, 16, 30), dragonfly(4, 2, 2, 9, "palmtree"), dragonfly(4, 2, 2, 9)}) {
    // h < groups - 1: some router pairs need local, global, local.
    const DfWiring w = check_dragonfly_wiring(d);
    EXPECT_EQ(derived_dragonfly_diameter(d, w), 3 + 2);
    EXPECT_EQ(build_dragonfly(d).diameter(), 3 + 2);
  }
}

TEST(Dragonfly, LargeSpecCountsAndCost) {
  const DragonflyParams d = dragonfly(32, 17, 16, 30);
  const Topology t = build_dragonfly(d);
  EXPECT_EQ(t.endpoint_count(), 16320u);
  EXPECT_EQ(16u * t.switch_count(), 15360u);
  EXPECT_EQ(t.physical_switches(), 960u);
  EXPECT_EQ(30u * (17 * 32 + 31 * 32 / 2), 31200u);
  EXPECT_EQ(t.count_cables(CableType::DAC), 31200u);
  EXPECT_EQ(t.count_cables(CableType::AoC), 30u * 16 * 32 / 2);
  EXPECT_EQ(t.count_cables(CableType::AoC), 7680u);
  EXPECT_EQ(t.count_cables(CableType::None), 0u);
  EXPECT_NEAR(cost_usd(t, 16) / 1e6, 429.22, 0.005);
}

TEST(Dragonfly, SpecWiringConsecutive) {
  {
    // Small: 128 global ports per group over 7 other groups: 18 or 19 each.
    const DfWiring w = check_dragonfly_wiring(dragonfly(16, 8, 8, 8, "consecutive", 2));
    const auto [lo, hi] = global_pair_range(w);
    EXPECT_EQ(lo, 128u / 7);
    EXPECT_EQ(hi, 128u / 7 + 1);
  }
  {
    // Large: 512 global ports per group over 29 other groups: 17-18 per pair.
    const DfWiring w = check_dragonfly_wiring(dragonfly(32, 17, 16, 30));
    const auto [lo, hi] = global_pair_range(w);
    EXPECT_EQ(lo, 17u);
    EXPECT_EQ(hi, 18u);
    // Each group: 512 - 17*29 = 19 groups get 18 cables, 10 get 17.
    for (std::size_t g = 0; g < 30; ++g) {
      EXPECT_EQ(std::count(w.global[g].begin(), w.global[g].end(), 18u), 19) << g;
    }
  }
}

/// Router r of group g owns global ports r*h .. r*h+h-1; `rule(g, k)` gives
/// the target group of port k.  Checks routers whose ports all have k < limit.
void expect_router_targets(const DragonflyParams& d, const DfWiring& w, std::uint32_t limit,
                           const std::function<std::uint32_t(std::uint32_t, std::uint32_t)>& rule) {
  std::size_t checked = 0;
  for (std::uint32_t g = 0; g < d.groups; ++g) {
    for (std::uint32_t r = 0; r < d.a; ++r) {
      if ((r + 1) * d.h > limit) continue;
      std::vector<std::uint32_t> want;
      for (std::uint32_t k = r * d.h; k < (r + 1) * d.h; ++k) want.push_back(rule(g, k));
      std::sort(want.begin(), want.end());
      EXPECT_EQ(w.router_targets[g * d.a + r], want) << "group " << g << " router " << r;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST(Dragonfly, ConsecutiveArrangement) {
  // Port k -> the (k mod (G-1))-th other group in ascending order.
  const auto consecutive = [](std::uint32_t groups) {
    return [groups](std::uint32_t g, std::uint32_t k) {
      const std::uint32_t m = k % (groups - 1);
      return m < g ? m : m + 1;
    };
  };
  {
    const DragonflyParams d = dragonfly(4, 2, 2, 9);  // a*h = G-1: one cable per pair
    const DfWiring w = check_dragonfly_wiring(d);
    EXPECT_EQ(global_pair_range(w), std::make_pair(1u, 1u));
    expect_router_targets(d, w, d.a * d.h, consecutive(d.groups));
  }
  {
    const DragonflyParams d = dragonfly(4, 2, 3, 7);  // a*h = 2(G-1): two per pair
    const DfWiring w = check_dragonfly_wiring(d);
    EXPECT_EQ(global_pair_range(w), std::make_pair(2u, 2u));
    expect_router_targets(d, w, d.a * d.h, consecutive(d.groups));
  }
  {
    // Small spec config: 128 = 18*7 + 2; the first 126 ports follow the rule.
    const DragonflyParams d = dragonfly(16, 8, 8, 8, "consecutive", 2);
    const DfWiring w = check_dragonfly_wiring(d);
    expect_router_targets(d, w, 126, consecutive(d.groups));
  }
  {
    // Odd remainder: 11 ports per group, G = 6: 11 = 2*5 + 1, the extra
    // cable of each group goes to the opposite group g + 3.
    const DfWiring w = check_dragonfly_wiring(dragonfly(11, 1, 1, 6));
    EXPECT_EQ(global_pair_range(w), std::make_pair(2u, 3u));
    for (std::uint32_t g = 0; g < 6; ++g) EXPECT_EQ(w.global[g][(g + 3) % 6], 3u);
  }
}

TEST(Dragonfly, PalmtreeArrangement) {
  for (const DragonflyParams& d : {dragonfly(4, 2, 2, 9, "palmtree"), dragonfly(2, 3, 3, 7, "palmtree"),
                                   dragonfly(6, 1, 1, 7, "palmtree", 2)}) {
    const DfWiring w = check_dragonfly_wiring(d);
    EXPECT_EQ(global_pair_range(w), std::make_pair(1u, 1u));
    expect_router_targets(d, w, d.a * d.h, [&](std::uint32_t g, std::uint32_t k) {
      return (g + d.groups - k - 1) % d.groups;
    });
  }
}

TEST(Dragonfly, BadParametersThrow) {
  const auto expect_key = [](const DragonflyParams& d, const std::string& key) {
    try {
      (void)build_dragonfly(d);
      ADD_FAILURE() << "no error for " << key;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  expect_key(dragonfly(0, 8, 8, 8), "topology.a");
  expect_key(dragonfly(16, 0, 8, 8), "topology.p");
  expect_key(dragonfly(16, 8, 0, 8), "topology.h");
  expect_key(dragonfly(16, 8, 8, 1), "topology.groups");
  expect_key(dragonfly(16, 8, 8, 8, "random"), "topology.arrangement");
  expect_key(dragonfly(16, 8, 8, 8, "consecutive", 3), "topology.routers_per_switch");
  expect_key(dragonfly(16, 8, 8, 8, "consecutive", 0), "topology.routers_per_switch");
  expect_key(dragonfly(15, 8, 8, 8, "consecutive", 2), "topology.routers_per_switch");
  // a*h = 4 global links per group cannot reach 6 other groups.
  expect_key(dragonfly(2, 1, 2, 7), "topology.groups");
  // palmtree is defined for a*h = groups - 1 only.
  expect_key(dragonfly(16, 8, 8, 8, "palmtree"), "topology.arrangement");
  // 3 groups * 3 global ports: odd, cannot be paired.
  expect_key(dragonfly(1, 1, 3, 3), "topology.h");
  DragonflyParams bad = dragonfly(4, 2, 2, 9);
  bad.global.bandwidth_gbps = 0;
  expect_key(bad, "topology.global_link");
}

}  // namespace
}  // namespace fabricsim::net
