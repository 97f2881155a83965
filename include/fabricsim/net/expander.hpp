// The Expander baseline's graph (spec: ../shared/spec/topoopt.md §2.3,
// "Expander", a [code] reading): a random d-regular multigraph on the
// servers, drawn the way the TopoOpt authors' code draws it.  Only the
// graph; a caller turns the edges into cables.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace fabricsim::net {

/// Stream id of the expander's draws: RandomStream(seed, kExpanderStream) ("expander" in ASCII).
inline constexpr std::uint64_t kExpanderStream = 0x657870616e646572ULL;

/// A random d-regular undirected multigraph on n servers (no self-loops; parallel edges allowed), drawn as the
/// TopoOpt authors' code does:
///   1. a random spanning path over a uniformly random permutation of the servers (so the graph is connected);
///   2. a random pairing of the remaining free interfaces: the free interfaces are shuffled, and the last one
///      is paired with a uniformly drawn other one; a partner on the same server is redrawn (rejection, at most
///      64 tries, then a uniform draw among the partners on other servers, which is the same distribution);
///   3. if the only free interfaces left are all on one server a (2m of them), each of their m loops is
///      repaired by an edge swap: a uniformly drawn existing edge (x, y) with x, y != a becomes (a, x) and
///      (a, y).  Degrees stay d, no loop appears, and the graph stays connected (x and y now meet through a).
///      Such an edge always exists for n >= 3; for n = 2 the case cannot arise.
/// Each edge is one duplex cable using one interface at each end, returned as (u, v) with u < v: the n - 1 path
/// edges first (in path order), then the pairing's edges in the order drawn; a repair rewrites the swapped edge
/// in place and appends the second new edge.  n*d/2 edges in all.
///
/// Requires n >= 2, d >= 1, d = 1 only for n = 2 (one cable), n*d even, d <= kMaxRadix, n*d < 2^32 - 1 (the
/// links of a Topology); throws util::ConfigError naming topology.servers or topology.degree otherwise.
/// Randomness: util::RandomStream(seed, kExpanderStream) and its own bounded draw (below()), never a standard
/// distribution, so the same (n, d, seed) gives the same graph on every machine and compiler.
std::vector<std::pair<std::uint32_t, std::uint32_t>> random_regular_multigraph(std::uint32_t n, std::uint32_t d,
                                                                               std::uint64_t seed);

}  // namespace fabricsim::net
