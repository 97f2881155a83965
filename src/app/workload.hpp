// The workload of a run, as the run sees it: one interface that every
// workload kind implements, and the registry that makes one from the
// configuration by `workload.kind` (workloads.cpp; "how to add a
// workload" in docs/architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <functional>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/stats/h5_writer.hpp"
#include "fabricsim/workload/fluid.hpp"

namespace fabricsim::app {

/// The phases of a run call these in order, on every process: the factory
/// builds the workload (a task graph's messages exist from then on),
/// planned() weighs the partition, start() posts what begins at time zero,
/// report() gathers the results after the run, write() and print() output
/// them.
class Workload {
 public:
  virtual ~Workload() = default;
  /// The messages the partitioner weighs (as if all were in flight at once).
  virtual std::vector<workload::PlannedMessage> planned() const = 0;
  /// The same messages one at a time, in the same order (the partitioner's
  /// walk, which needs no vector of them).  Default: over planned().
  virtual void for_each_planned(const std::function<void(const workload::PlannedMessage&)>& f) const {
    for (const auto& m : planned()) f(m);
  }
  /// After the partition is set: posts what can begin at time zero.
  virtual void start() = 0;
  /// Messages a complete run delivers (the conservation check).
  virtual std::uint64_t messages_total() const = 0;
  /// Bytes of what it planned before the run that the memory estimate
  /// cannot know from the configuration (task graphs, their messages, a
  /// trace's nodes); 0 where it can.
  virtual std::uint64_t planned_bytes() const { return 0; }
  /// A lower bound on the run's length from what it planned (task graphs:
  /// TaskGraph::end_lower_bound), zero where it planned nothing: what the
  /// memory estimate sizes the link time series by for jobs.
  virtual core::SimTime end_lower_bound() const { return {}; }
  /// Whether a message's post time is known only where its sender runs
  /// (a task graph posts when dependencies are met): /flows then combines
  /// them over the ranks.
  virtual bool posts_known_at_sender_only() const { return false; }
  /// After the run, on every process (collective calls over `comm`):
  /// gathers the results.  `complete`: the run was not cut short by
  /// engine.end_ns; UserError if it should have finished and did not.
  /// Called once; it may free what only the run read (write and print
  /// read what it gathered).
  virtual void report(const par::Comm& comm, bool complete) = 0;
  /// Its tables in the output file (collective: every process).
  virtual void write(stats::H5Writer& writer, const par::Comm& comm) const = 0;
  /// Its tables on stdout (rank 0 only).
  virtual void print() const = 0;
  /// The decisions it takes for the whole fabric at global steps (a
  /// cluster queue's admissions), or null: the run then goes through the
  /// conservative engine on one rank too, so that steps fall alike.
  virtual par::GlobalSteps* global_steps() { return nullptr; }
};

/// The workload of `cfg` (workload.kind, or its [[jobs]] tables) on
/// `network`, in a run of `comm`'s processes (collective: every process
/// calls it).  ConfigError naming the key (and the job's table).
std::unique_ptr<Workload> make_workload(const config::Config& cfg, net::Network& network, core::Simulator& sim,
                                        const par::Comm& comm);

/// Whether the configuration runs task-graph jobs (rather than traffic).
bool runs_jobs(const config::Config& cfg);

}  // namespace fabricsim::app
