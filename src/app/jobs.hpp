// Task-graph jobs: a collective benchmark (workload.kind = "collective"),
// a DNN job ("dnn"), a trace replay ("trace"), alone or one per [[jobs]]
// table, all in one task graph on the shared fabric.  Each kind implements
// Job (jobs_<kind>.cpp) and is registered in workloads.cpp; JobSet is the
// run's Workload over them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/stats/run_output.hpp"
#include "fabricsim/workload/placement.hpp"
#include "fabricsim/workload/task_graph.hpp"
#include "workload.hpp"

namespace fabricsim::app {

/// The shared output tables of a run's jobs.
struct JobReports {
  std::vector<stats::JobRow> jobs;
  stats::DnnReport dnn;                 ///< /iterations (dnn and trace jobs)
  stats::CollectiveReport collectives;  ///< /collectives
  stats::TimelineReport timeline;       ///< output.timeline: this process's rows
  /// Per job: its first row in `dnn` (dnn, trace) or `collectives`.
  std::vector<std::size_t> first_row;
};

/// What a job is planned into: the run's task graph, the endpoints no
/// earlier job took, and its index (its tasks' label).
struct JobPlanning {
  workload::TaskGraph& graph;
  workload::EndpointPool& pool;
  std::uint32_t index;
};

/// What a job reads its results from after the run.
struct JobResults {
  const workload::TaskGraph& graph;
  const par::Comm& comm;
  bool timeline;  ///< output.timeline
};

class Job {
 public:
  /// The shared tables a kind's rows go to.
  enum Table : unsigned { kIterations = 1, kCollectives = 2, kTimeline = 4 };
  virtual ~Job() = default;
  virtual unsigned tables() const = 0;
  /// After the run, on every process (collective calls over ctx.comm): its
  /// row of /jobs, its rows appended to `out`'s tables.
  virtual stats::JobRow report(const JobResults& ctx, std::uint32_t index, JobReports& out) const = 0;
  /// Its table on stdout; its rows start at r.first_row[index].
  virtual void print(const JobReports& r, std::uint32_t index, bool several) const = 0;
};

/// The Workload of task-graph jobs.
class JobSet final : public Workload {
 public:
  /// Plans every job into one graph (nothing is posted until start()).
  /// Jobs get disjoint endpoints, in table order.  ConfigError located in
  /// the job's table.
  JobSet(const config::Config& cfg, net::Network& network, core::Simulator& sim);
  std::vector<workload::PlannedMessage> planned() const override;
  void start() override;
  std::uint64_t messages_total() const override { return net_.messages().size(); }
  bool posts_known_at_sender_only() const override { return true; }
  void report(const par::Comm& comm, bool complete) override;
  void write(stats::H5Writer& writer, const par::Comm& comm) const override;
  void print() const override;

 private:
  bool fills(Job::Table t) const;
  net::Network& net_;
  bool timeline_ = false;
  std::unique_ptr<workload::TaskGraph> graph_;
  std::vector<std::unique_ptr<Job>> jobs_;
  JobReports reports_;
};

}  // namespace fabricsim::app
