// Torus builder; the wiring rules are documented on TorusParams.
//
// Cables are created accelerator by accelerator (id order) and, for each,
// dimension by dimension, from the accelerator to its +1 neighbour, so an
// accelerator's ports are not in a fixed per-direction order: its +1 cable of
// dimension d is created at its own turn, its -1 cable at the turn of its -1
// neighbour.  Accelerator radix = the number of its cables (2 per dimension
// of size >= 3, 1 per dimension of size 2).
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

}  // namespace fabricsim::net
