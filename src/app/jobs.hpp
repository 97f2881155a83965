// Task-graph jobs: a collective benchmark (workload.kind = "collective"),
// a DNN job ("dnn"), a trace replay ("trace"), alone or one per [[jobs]]
// table, all in one task graph on the shared fabric.  Each kind implements
// Job (jobs_<kind>.cpp) and is registered in workloads.cpp; JobSet is the
// run's Workload over them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/ctrl/fabric.hpp"
#include "fabricsim/ctrl/ocs.hpp"
#include "fabricsim/ctrl/vclos.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/stats/run_output.hpp"
#include "fabricsim/workload/placement.hpp"
#include "fabricsim/workload/task_graph.hpp"
#include "ocs_links.hpp"
#include "workload.hpp"

namespace fabricsim::app {

/// The shared output tables of a run's jobs.
struct JobReports {
  std::vector<stats::JobRow> jobs;
  stats::DnnReport dnn;                 ///< /iterations (dnn and trace jobs)
  stats::CollectiveReport collectives;  ///< /collectives
  stats::TimelineReport timeline;       ///< output.timeline: this process's rows
  stats::TraceNodesReport trace_nodes;  ///< output.timeline or output.flows, trace jobs: every node (the root's rows)
  /// output.flows, trace jobs: (network message, the row of /trace_nodes of
  /// its node), the root's; sorted by message once every job reported.
  std::vector<std::pair<net::MessageId, std::uint64_t>> flow_trace_node;
  /// The same for a streamed trace, by run of ids, not by pair: its
  /// messages [first, first + rows.size()), each one's row first_row +
  /// rows[k] (UINT32_MAX: none), the root's (4 bytes a message, where the
  /// pairs took 16 and, while they were gathered, 32).
  struct FlowRowRun {
    net::MessageId first = 0;
    std::uint64_t first_row = 0;
    std::vector<std::uint32_t> rows;
  };
  std::vector<FlowRowRun> flow_trace_runs;
  /// Per job: its first row in `dnn` (dnn, trace) or `collectives`.
  std::vector<std::size_t> first_row;
};

/// What a job is planned into: the run's task graph, the endpoints no
/// earlier job took, and its index (its tasks' label).
struct JobPlanning {
  workload::TaskGraph& graph;
  workload::EndpointPool& pool;
  std::uint32_t index;
  const par::Comm* comm = nullptr;  ///< the run's processes (null: planning outside a run, one process)
  int processes() const { return comm != nullptr ? comm->size() : 1; }
};

/// What a job reads its results from after the run.
struct JobResults {
  const workload::TaskGraph& graph;
  const par::Comm& comm;
  bool timeline;  ///< output.timeline
  bool flows;     ///< output.flows
};

class Job {
 public:
  /// The shared tables a kind's rows go to.
  enum Table : unsigned { kIterations = 1, kCollectives = 2, kTimeline = 4, kTraceNodes = 8 };
  virtual ~Job() = default;
  virtual unsigned tables() const = 0;
  /// After the run, on every process (collective calls over ctx.comm): its
  /// row of /jobs, its rows appended to `out`'s tables.
  virtual stats::JobRow report(const JobResults& ctx, std::uint32_t index, JobReports& out) const = 0;
  /// Its table on stdout; its rows start at r.first_row[index].
  virtual void print(const JobReports& r, std::uint32_t index, bool several) const = 0;
  /// Bytes it holds beyond its tasks and messages (a trace's nodes).
  virtual std::uint64_t memory_bytes() const { return 0; }
};

/// The Workload of task-graph jobs, in one of two ways (workload.queue):
/// * "none": every job is planned before the run, into one graph, on
///   disjoint endpoints in table order, and starts at its start_ns;
/// * "fifo", "edf", "fewest_gpus_first": a cluster queue.  Every job is
///   first planned alone on an empty fabric (so a bad table is refused
///   before the run, and its size is known).  During the run a job arrives
///   at its start_ns and waits, in the queue's order, until the resource
///   scheduler (workload.scheduler: free endpoints, whole servers, vClos;
///   ctrl/vclos.hpp) places it; it is then planned into its own graph on
///   those endpoints, starts, and frees them when its last task completes.
///   Each decision is a global step, engine.control_latency_ns after its
///   cause (jobs.cpp), so every rank plans the same jobs at the same time.
class JobSet final : public Workload, public par::GlobalSteps, private net::MessageListener {
 public:
  /// ConfigError located in the job's table.
  /// `comm`: the run's processes (a streamed trace at one makes its records
  /// as it reads them and drops them once delivered; at several they share
  /// its pre-pass); null: one process, planning outside a run.
  JobSet(const config::Config& cfg, net::Network& network, core::Simulator& sim, const par::Comm* comm = nullptr);
  std::vector<workload::PlannedMessage> planned() const override;
  void for_each_planned(const std::function<void(const workload::PlannedMessage&)>& f) const override;
  void start() override;
  /// workload.queue = "none": the graph every job was planned into.
  const workload::TaskGraph* plan_graph() const { return graph_.get(); }
  /// workload.queue = "none": the first network message of each job (they
  /// are planned one after the other).
  const std::vector<std::size_t>& first_message() const { return first_message_; }
  std::uint64_t messages_total() const override { return net_.message_count(); }
  std::uint64_t planned_bytes() const override;
  core::SimTime end_lower_bound() const override;
  bool posts_known_at_sender_only() const override { return true; }
  void report(const par::Comm& comm, bool complete) override;
  void write(stats::H5Writer& writer, const par::Comm& comm) const override;
  void print() const override;
  par::GlobalSteps* global_steps() override { return queued_ ? this : nullptr; }
  // The cluster queue's decisions (par::GlobalSteps).
  core::SimTime delay() const override { return delay_; }
  void start(par::RecordExchange& requests) override;
  std::vector<std::int64_t> contribute(core::SimTime t) override;
  void apply(core::SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) override;

 private:
  bool fills(Job::Table t) const;
  std::unique_ptr<Job> make_job(std::size_t j, workload::TaskGraph& graph, workload::EndpointPool& pool,
                                const config::Config& c) const;
  // The cluster queue (workload.queue = "fifo").
  void on_graph_event(const core::Event& ev);  ///< a job graph's event (one binding for all)
  void admit(core::SimTime now);
  /// The cluster the scheduler sees (whole_server, vclos), from the topology.
  void setup_cluster(const config::Config& cfg);
  /// Every job fits the empty cluster as the scheduler places it (ConfigError naming the job).
  void check_fits(const config::Config& cfg);
  /// Where job j goes now (the pool's assignment set), or why not.
  ctrl::Refusal place(std::uint32_t j);
  /// The GPUs job j asks the scheduler for (vclos: rounded up to a power of two).
  std::uint32_t wanted(std::uint32_t j) const;
  /// Job j's scheduler columns of /jobs.
  void scheduler_columns(std::size_t j, stats::JobRow& row) const;
  /// A vClos or OCS-vClos job's cross-leaf messages pinned to their virtual
  /// spines (vClos: reserved links; OCS-vClos: its circuits).
  void pin_routes(std::uint32_t j, std::size_t first_message);
  /// An OCS-vClos placement's rewiring applied to the network's links;
  /// whether it switched any circuit on.
  bool switch_circuits(std::uint32_t j, const ctrl::Allocation& a, core::SimTime now);
  void on_message_delivered(net::MessageId id) override;
  void on_message_sent(net::MessageId id) override;
  bool wants_sent() const override { return true; }

  const par::Comm* comm_;
  net::Network& net_;
  core::Simulator& sim_;
  bool timeline_ = false;
  bool flows_ = false;  // output.flows
  bool queued_ = false;                       ///< workload.queue = "fifo"
  bool tables_ = false;                       ///< [[jobs]] tables (errors name the job)
  const config::Config& cfg_;                 ///< the run's (outlives the workload)
  std::size_t job_count() const { return tables_ ? cfg_.job_count() : 1; }
  /// Job j's configuration, made when needed (config::Config::job).
  config::Config job_config(std::size_t j) const { return tables_ ? cfg_.job(j) : cfg_; }
  std::unique_ptr<workload::TaskGraph> graph_;  ///< "none": every job's tasks
  std::vector<std::size_t> first_message_;      ///< "none": per job, its first message id
  std::vector<std::unique_ptr<Job>> jobs_;    ///< (fifo: null until admitted)
  JobReports reports_;
  // fifo: per job its own graph, size, endpoints, and times (ps; -1: not yet).
  std::vector<std::unique_ptr<workload::TaskGraph>> graphs_;
  std::vector<std::uint32_t> size_;
  std::vector<unsigned> tables_of_;  ///< Job::tables() of each job, from the check before the run
  std::vector<std::string> kinds_;   ///< workload.kind of each job
  std::vector<std::vector<net::EndpointId>> endpoints_;
  std::vector<std::int64_t> arrival_ps_, admitted_ps_, done_ps_;  ///< done_ps_: from report()
  std::vector<std::uint32_t> job_of_message_;  ///< network message -> job
  /// Arrived, not admitted: (order key, arrival, job), the head first.
  std::set<std::tuple<std::int64_t, std::int64_t, std::uint32_t>> waiting_;
  enum class Order : std::uint8_t { Fifo, Edf, FewestGpus };
  Order order_ = Order::Fifo;
  std::vector<std::int64_t> deadline_ps_;  ///< workload.deadline_ns (-1: none)
  bool changed_ = false;                   ///< arrivals or releases since the last admission
  // The resource scheduler (workload.scheduler).
  enum class Scheduler : std::uint8_t { Free, WholeServer, VClos, OcsVClos };
  Scheduler scheduler_ = Scheduler::Free;
  std::unique_ptr<ctrl::ClusterState> cluster_;
  std::unique_ptr<ctrl::TwoTierFabric> fabric_;   ///< vclos: the leaves, spines and routes
  std::vector<net::EndpointId> gpu_endpoint_;     ///< the scheduler's GPU index -> endpoint
  ctrl::VClosOptions vclos_;
  // ocs_vclos: the optical layer's circuits, as the scheduler and as links.
  std::unique_ptr<ctrl::OcsState> ocs_;
  std::optional<OcsLinks> ocs_links_;
  ctrl::OcsOptions ocs_options_;
  core::SimTime reconfig_;                        ///< workload.ocs_reconfig_ns
  stats::OcsReport switching_;                    ///< /ocs (every rank alike)
  std::vector<std::uint32_t> leaf_of_;            ///< ocs_vclos: endpoint -> leaf
  std::vector<net::LinkId> host_up_;              ///< ocs_vclos: endpoint -> its leaf (NIC cable)
  bool round_pow2_ = true;
  std::vector<std::optional<ctrl::Allocation>> allocation_;  ///< per job, while it holds it (and after, for /jobs)
  std::vector<std::uint32_t> reserved_;                      ///< endpoints reserved (whole servers, rounding)
  std::vector<std::array<std::uint32_t, 2>> refused_;        ///< times job j could not be placed: gpus, network
  std::unique_ptr<workload::EndpointPool> pool_;
  core::Simulator::BindingId graph_binding_ = 0;
  // The global steps: every rank holds the same table of reports.
  core::SimTime delay_;                            ///< engine.control_latency_ns
  par::RecordExchange* requests_ = nullptr;
  std::vector<std::uint32_t> by_arrival_;          ///< jobs by (arrival, index)
  std::size_t arrived_ = 0;                        ///< of by_arrival_, in the queue
  std::vector<std::uint32_t> finished_ranks_;      ///< ranks that reported the job's part done
  std::vector<std::uint32_t> ending_;              ///< reported by every rank, endpoints not yet freed
  std::vector<std::int64_t> local_done_ps_;        ///< this rank's part done (-1: not yet)
  std::vector<std::int64_t> ended_ps_;             ///< the latest part done reported so far
  std::vector<std::uint32_t> newly_done_;          ///< to report at the next step
};

/// A message of a planned job, with its task's label (dnn: job << 8 |
/// phase; collective and trace: the job's index).
struct LabelledMessage {
  net::EndpointId src = 0;
  net::EndpointId dst = 0;
  std::uint64_t bytes = 0;
  std::uint32_t label = 0;
  std::uint32_t job = 0;  ///< its job's index (table order)
};
/// The messages of the configured task-graph jobs (workload.kind dnn,
/// collective or trace, or [[jobs]]; workload.queue = "none"), planned on
/// `topo` into a network that only numbers them, without running anything:
/// what TopoOpt's construction from a job reads (topo_topoopt.cpp).
/// ConfigError as a run of the same configuration would give.
/// What planned jobs hold and how long they run at least: what the memory
/// estimate adds for them (JobSet::planned_bytes, end_lower_bound).
struct PlannedSize {
  std::uint64_t bytes = 0;
  core::SimTime end_lower_bound;
};
/// `size`, if given: the planned jobs' PlannedSize.
std::vector<LabelledMessage> plan_messages(const config::Config& cfg, const net::Topology& topo,
                                           PlannedSize* size = nullptr);
/// The configured task-graph jobs planned on `topo` as plan_messages does
/// (nothing runs), handed to `visit` with the graph, its network and the
/// first message of each job.
void visit_planned_jobs(const config::Config& cfg, const net::Topology& topo,
                        const std::function<void(const workload::TaskGraph&, const net::Network&,
                                                 const std::vector<std::size_t>&)>& visit,
                        PlannedSize* size = nullptr);
/// TopoOpt built from a job (Topology::allreduce_links): pins the jobs'
/// AllReduce messages to CoinChangeMod's routes over the AllReduce rings
/// (net::ServerPaths::allreduce; one of them by the message, as listed
/// routes are picked).  With routing.k_paths = 1 only those of servers no
/// ring link joins directly (a group without a ring of its own); with
/// k_paths > 1 all, which were pinned to the k shortest routes of their
/// pair meanwhile.  Nothing on other fabrics, or with
/// routing.allreduce_routes = "shortest".  (src/app/topo_topoopt.cpp)
void pin_allreduce_routes(const config::Config& cfg, const JobSet& jobs, net::Network& network);

}  // namespace fabricsim::app
