// Splitting the simulated graph over ranks.  The par layer sees the model
// only as a weighted graph in CSR form: vertices are simulated nodes, edges
// are links with their latency (the lookahead of a cut edge).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/core/time.hpp"

namespace fabricsim::par {

enum class Partitioner : std::uint8_t { Metis, Block, RoundRobin };
Partitioner parse_partitioner(const std::string& name);
const char* to_string(Partitioner p);

/// Undirected graph in CSR form (each edge listed from both ends).
struct Graph {
  std::vector<std::int64_t> xadj;      ///< size n+1
  std::vector<std::int64_t> adjncy;    ///< neighbour vertex ids
  std::vector<core::SimTime> latency;  ///< per adjacency entry
  std::vector<std::int64_t> vwgt;      ///< vertex weights (estimated load), size n
  std::size_t vertex_count() const { return xadj.empty() ? 0 : xadj.size() - 1; }
};

struct PartitionQuality {
  std::uint64_t edge_cut = 0;         ///< undirected edges whose ends are in different parts
  core::SimTime lookahead;            ///< minimum latency over cut edges (max() if none cut)
  double imbalance = 1.0;             ///< max part weight / mean part weight
  double seconds = 0;                 ///< time the partitioner took
};

/// Assigns each vertex a part in [0, parts).  METIS k-way minimizes the cut,
/// with edge weights that make short-latency links expensive to cut.
std::vector<std::int32_t> partition(const Graph& g, int parts, Partitioner how, std::uint64_t seed = 1);
PartitionQuality evaluate(const Graph& g, const std::vector<std::int32_t>& part, int parts);

/// A run's partition: every vertex's part and how good it is.
struct PartitionPlan {
  std::vector<std::int32_t> part;
  PartitionQuality quality;
};
/// Splits the vertices over `ranks`, never cutting edges shorter than
/// `min_cut` (their ends are merged first).  Vertices of one unit (`units`,
/// per vertex, e.g. a Dragonfly's groups; empty: none) are merged as well
/// when whole units can balance: at least as many units as ranks, and the
/// ranks with ceil(units / ranks) of them at most 10% above the mean.  The
/// merged graph is split by `how`; the quality is measured on `g`.
PartitionPlan plan_partition(const Graph& g, int ranks, Partitioner how, core::SimTime min_cut, std::uint64_t seed,
                             const std::vector<std::uint32_t>& units = {});

}  // namespace fabricsim::par
