// Peak memory per rank, estimated before a run builds anything: what `info`
// prints and what engine.memory_limit_gib refuses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "fabricsim/config/config.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/capacity.hpp"

namespace fabricsim::app {

/// Bytes per rank, by what holds them.  Every rank holds the whole
/// topology, the route tables, the messages and (today) the state of every
/// link and node; partitioning adds transient copies of the graph.
struct MemoryEstimate {
  std::uint64_t process = 0;      ///< the program and its libraries (MPI, HDF5), measured once
  std::uint64_t description = 0;  ///< the topology's nodes and links
  std::uint64_t routes = 0;       ///< route tables (the trees' table, tabulated rules)
  std::uint64_t state = 0;        ///< links' buffers, credits, counters; nodes' wake-ups
  std::uint64_t series = 0;       ///< the links' time series (output.interval_ns): estimate_series
  double run_lower_bound_ns = 0;  ///< what the series are sized by: a traffic pattern's busiest source's
                                  ///< injection time, or planned jobs' Workload::end_lower_bound
  std::uint64_t messages = 0;     ///< every message of the workload, and its plan while it is posted
  std::uint64_t packets = 0;      ///< packets queued in switch buffers at once: at most the workload's
                                  ///< (traffic workloads), at most what the buffers hold
  std::uint64_t partition = 0;    ///< multi-rank runs: the node graph, the fluid estimate, METIS (freed
                                  ///< before the network state is allocated)
  std::uint64_t jobs = 0;         ///< task-graph jobs as planned (Workload::planned_bytes: tasks, their
                                  ///< messages, a trace's nodes), known once they are
  bool sizes_only = false;        ///< from sizes alone: routes and messages not counted
  std::uint64_t total() const {
    return process + description + routes + messages + packets + jobs + std::max(state + series, partition);
  }
  /// "program 32.0 MiB, topology 9.2 MiB, ...".
  std::string breakdown() const;
  /// "1.2 GiB per rank (program 32.0 MiB, ...)".
  std::string describe() const;
};

/// The estimate from sizes alone, before the topology exists (nodes and
/// directed links as a builder announces them; the route tables and the
/// messages, which need the built topology, are left at zero).
MemoryEstimate estimate_memory(const config::Config& cfg, int ranks, std::uint64_t nodes, std::uint64_t links);
/// The estimate for a built topology with its routing set up in `np`: adds
/// the route tables and the messages of a traffic workload (task-graph
/// jobs, planned later, are added then as MemoryEstimate::jobs).
MemoryEstimate estimate_memory(const config::Config& cfg, int ranks, const net::Topology& topo,
                               const net::NetworkParams& np);

/// Sets `est.series`, the links' time series (0 when output.interval_ns is
/// 0), for a run at least `est.run_lower_bound_ns` long (engine.end_ns
/// where set; the estimate takes twice the bound, as the network coarsens
/// the series to stay within its cells) whose busiest rank simulates
/// `local` of the fabric's `links`.
void estimate_series(MemoryEstimate& est, const config::Config& cfg, std::uint64_t links, std::uint64_t local);
/// Links a rank simulates an end of, before the partition is known.
std::uint64_t local_links_estimate(std::uint64_t links, int ranks);

/// engine.memory_limit_gib in bytes for one rank: the limit (0 = this
/// machine's physical memory) shared by `ranks_here` ranks on this machine.
std::uint64_t memory_limit_per_rank(const config::Config& cfg, int ranks_here);

/// ConfigError naming engine.memory_limit_gib and the estimate when the
/// estimate exceeds the limit.
void check_memory(const MemoryEstimate& est, std::uint64_t limit_per_rank, int ranks_here);

/// "12.3 MiB" (the workload layer's PlanOverBudget writes the same).
using util::human_bytes;

}  // namespace fabricsim::app
