// The dependent workloads of a run: a collective benchmark
// (workload.kind = "collective"), a DNN job (kind = "dnn"), a trace replay
// (kind = "trace"), or one of them per [[jobs]] table, all in one task
// graph on the shared fabric.
#pragma once

#include <memory>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/stats/run_output.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/dnn.hpp"
#include "fabricsim/workload/task_graph.hpp"
#include "fabricsim/workload/trace.hpp"

namespace fabricsim::app {

/// Whether the configuration runs task-graph jobs (rather than traffic).
bool runs_jobs(const config::Config& cfg);

class RunJobs {
 public:
  /// Plans every job into one graph and starts it.  Jobs get disjoint
  /// endpoints, in table order.  ConfigError located in the job's table.
  /// Builds every job's task graph (and so creates its messages); nothing
  /// is posted until start().
  RunJobs(const config::Config& cfg, net::Network& network, core::Simulator& sim);
  /// Posts what can begin at time zero: after the partition is set.
  void start();

  workload::TaskGraph& graph() { return *graph_; }
  /// DNN or trace jobs: rows of /iterations.
  bool has_iterations() const;
  bool has_dnn() const;
  bool has_collective() const;

  /// After the run, on every process: the rows of /jobs, /iterations and
  /// /collectives (collective calls over `comm`; every process gets the
  /// whole report, but the timeline, of which it holds its own rows).
  /// Throws UserError if `complete` and the graph did not
  /// finish.
  struct Reports {
    std::vector<stats::JobRow> jobs;
    stats::DnnReport dnn;
    stats::CollectiveReport collectives;
    stats::TimelineReport timeline;  ///< output.timeline: this process's rows
    /// Per job: its first row in `dnn` (dnn, trace) or `collectives`.
    std::vector<std::size_t> first_row;
  };
  Reports report(const par::Comm& comm, bool complete) const;

  /// The per-job tables on stdout: per DNN iteration its breakdown, per
  /// collective size the NCCL-tests columns.
  void print(const Reports& r) const;

 private:
  struct Job {
    std::unique_ptr<workload::DnnJob> dnn;
    std::unique_ptr<workload::CollectiveBenchmark> coll;
    std::unique_ptr<workload::TraceJob> trace;
  };
  net::Network& net_;
  bool timeline_ = false;
  std::unique_ptr<workload::TaskGraph> graph_;
  std::vector<Job> jobs_;
};

}  // namespace fabricsim::app
