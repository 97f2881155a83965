// What a run writes into its HDF5 file (see docs/output.md for the schema).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "fabricsim/net/network.hpp"
#include "fabricsim/stats/h5_writer.hpp"

namespace fabricsim::stats {

struct ThroughputShares;  // throughput.hpp

struct RunMeta {
  std::string version;
  std::string git_sha;
  std::string build;  // build type and options ("Release", "Release, PGO", ...)
  std::string config_toml;
  std::int64_t ranks = 1;
  std::int64_t threads = 1;
  std::uint64_t seed = 0;
};

struct RunSummary {
  double sim_time_ns = 0;
  std::uint64_t events = 0;
  double wall_seconds = 0;
  double events_per_second = 0;
};

/// Engine telemetry, per rank where it is a vector.
struct EngineTelemetry {
  double build_seconds = 0;
  double partition_seconds = 0;
  double run_seconds = 0;
  double write_seconds = 0;
  std::vector<std::uint64_t> events_per_rank;
  std::vector<double> run_seconds_per_rank;
  std::vector<std::uint64_t> peak_memory_bytes_per_rank;
  std::uint64_t estimated_memory_bytes_per_rank = 0;  ///< the estimate checked against engine.memory_limit_gib
  std::string mode;  ///< "sequential" or "partitioned"
  std::string partitioner;
  double lookahead_ns = 0;
  std::uint64_t edge_cut = 0;
  std::uint64_t windows = 0;
  std::uint64_t skipped_stretches = 0;
  std::uint64_t critical_path_events = 0;  ///< sum over windows of the most events of any rank
  double window_efficiency = 1.0;          ///< events / (ranks x critical_path_events)
  double event_imbalance = 1.0;  ///< max events per rank / mean
  std::vector<std::uint64_t> remote_records_per_rank;  ///< records received
  /// network.model, and the flow model's work (zero for the others): flows
  /// started, rate recomputations, flows refilled by them, wall seconds
  /// spent in them, most flows in flight at once.
  std::string network_model = "packet";
  std::uint64_t flows = 0;
  std::uint64_t rate_recomputations = 0;
  std::uint64_t flows_refilled = 0;
  double recompute_seconds = 0;
  std::uint64_t max_concurrent_flows = 0;
};

/// A table whose rows are all written by the root (every process makes the
/// collective calls, the others with no rows): rows 0..n-1.
struct RootRows {
  H5Writer& out;
  bool is_root;
  std::vector<std::uint64_t> rows(std::uint64_t n) const {
    std::vector<std::uint64_t> r;
    if (is_root)
      for (std::uint64_t i = 0; i < n; ++i) r.push_back(i);
    return r;
  }
  template <typename V>
  void col(const std::string& name, std::uint64_t n, const V& v) const {
    out.write_rows(name, n, rows(n), is_root ? v : V{});
  }
  /// A column every process holds whole (n = its size).
  template <typename V>
  void col(const std::string& name, const V& v) const {
    col(name, v.size(), v);
  }
  void strings(const std::string& name, std::uint64_t n, const std::vector<std::string>& v) const {
    out.write_string_rows(name, n, rows(n), is_root ? v : std::vector<std::string>{});
  }
  void strings(const std::string& name, const std::vector<std::string>& v) const { strings(name, v.size(), v); }
};

void write_meta(H5Writer& out, const RunMeta& meta);
/// /topology: kind, description and the structure report (counts per plane,
/// cost for cost.planes planes, diameter).
void write_topology(H5Writer& out, const net::Topology& topo, const net::StructureReport& report);
void write_summary(H5Writer& out, const RunSummary& summary);
void write_engine(H5Writer& out, const EngineTelemetry& engine);
/// The three throughput shares of /summary (makespan, per source, steady).
void write_throughput(H5Writer& out, const ThroughputShares& shares);
/// /links, /links/timeseries, /nodes, /flows and the network counters of
/// /summary.  Collective: each process writes the rows of the nodes it
/// simulated (Network::owns); `totals` are the counters summed over all
/// processes and `node_rank` the process of every node.
void write_network(H5Writer& out, const net::Network& network, const net::NetworkTotals& totals,
                   const std::vector<std::int32_t>& node_rank, bool write_flows, double sim_time_ns,
                   double interval_ns,
                   const std::map<net::LinkId, std::pair<std::uint64_t, std::uint64_t>>* stranded = nullptr,
                   std::uint64_t messages_failed = 0);

/// The collective benchmarks of a run (workload.kind = "collective", or
/// [[jobs]] of that kind): one row of /collectives per operation instance.
struct CollectiveReport {
  std::vector<std::uint32_t> job;    ///< job index (0 without [[jobs]])
  std::vector<std::string> op;
  std::vector<std::string> algorithm;
  std::vector<std::uint32_t> ranks;
  std::vector<std::uint64_t> bytes;
  std::vector<std::int64_t> iteration;  ///< < 0: warm-up
  std::vector<double> start_ns;
  std::vector<double> end_ns;
  std::vector<double> algbw_gbps;  ///< NaN when unfinished
  std::vector<double> busbw_gbps;  ///< NaN when unfinished
  /// algorithm "tacos": the schedule's own completion time in its alpha-beta
  /// link model (the synthesizer's estimate), and the wall time synthesis
  /// took (0: read from a file); NaN for other algorithms.
  std::vector<double> schedule_ns;
  std::vector<double> synthesis_seconds;
  /// 0 when engine.end_ns stopped the instance before its last message
  /// arrived (end_ns then -1: nothing is derived from an end that did not happen).
  std::vector<std::uint8_t> finished;
};
/// /collectives: datasets per instance; when every row is of one job, also
/// attributes op, algorithm, ranks.  Collective call; the root's report is
/// written.
void write_collectives(H5Writer& out, const CollectiveReport& report, bool is_root);

/// One row of /jobs: a collective benchmark or a DNN job.
struct JobRow {
  std::string kind;       ///< "collective" or "dnn"
  std::string model;      ///< dnn
  std::string schedule;   ///< dnn
  std::string op;         ///< collective
  std::string algorithm;  ///< collective
  std::uint32_t data_parallel = 0, pipeline_parallel = 0, tensor_parallel = 0, expert_parallel = 0;
  std::uint32_t micro_batches = 0, endpoints = 0;
  double start_ns = 0;
  double mean_time_ns = 0;  ///< dnn: over the timed iterations
  /// dnn: the 99th percentile (nearest rank) of the timed iterations that
  /// finished; trace: its time (the shared cluster's tail, spec §5.6).
  double p99_time_ns = 0;
  /// A cluster queue (workload.queue = "fifo"): when the job arrived and
  /// when its last task completed (start_ns: when it was admitted); -1
  /// where unknown (end_ns without a queue, or a job still waiting or
  /// running when engine.end_ns stopped the run).
  double arrival_ns = -1;
  double end_ns = -1;
  /// A cluster queue's resource scheduler (workload.scheduler): how the job
  /// was placed ("" for `free` or not admitted; server, leaf, vclos,
  /// servers), the endpoints it reserved (whole servers, a rounded-up
  /// vClos; 0 for `free`), its virtual Clos (l leaves x s spines, 0 if
  /// none), and the times it could not be placed, by cause.
  std::string stage;
  std::uint32_t reserved = 0, virtual_leaves = 0, virtual_spines = 0;
  std::uint32_t refused_gpus = 0, refused_network = 0;
  double deadline_ns = 0;  ///< workload.deadline_ns (0: none)
  /// ocs_vclos: optical circuits switched on for the job at its placement
  /// (0: it started at once, on circuits already there).
  std::uint32_t circuits_switched = 0;
  /// The vClos paper's scaling factor (Eq. 1), SF = T_n / (n T): for a
  /// training job (compute_ns), its compute over its run time (NaN without
  /// compute, without a cluster queue or unfinished).
  double scaling_factor = std::numeric_limits<double>::quiet_NaN();
  /// (Not written.) A rank's compute over the whole job, ns (0: none).
  double compute_total_ns = 0;
};
/// /jobs.  Collective call; the root's rows are written.
void write_jobs(H5Writer& out, const std::vector<JobRow>& jobs, bool is_root);

/// A cluster queue's placements (/placement): each admitted job's endpoints
/// in rank order, and the leaf-spine links its scheduler reserved, one row
/// each: vclos one per (virtual leaf, virtual spine), slot 0; ocs_vclos one
/// optical circuit per rank, in rank order (slot: the leaf's port on the
/// spine's optical switch).
struct PlacementReport {
  std::vector<std::uint32_t> endpoint_job, endpoint, rank;
  std::vector<std::uint32_t> link_job, leaf, spine, slot;
};
/// /placement.  Collective call; the root's rows are written.
void write_placement(H5Writer& out, const PlacementReport& r, bool is_root);

/// The optical layer's switching (/ocs, ocs_vclos): one row per circuit
/// switched off or on, in the order done, with the time and the job whose
/// placement did it.
struct OcsReport {
  std::vector<double> time_ns;
  std::vector<std::uint32_t> job, leaf, spine, slot;
  std::vector<std::uint8_t> on;
};
/// /ocs.  Collective call; the root's rows are written.
void write_ocs(H5Writer& out, const OcsReport& r, bool is_root);

/// An optical fabric's reconfigurations (TopoOpt's OCS-reconfig, SiP-ML):
/// /reconfig, one row per decision (time 0: the circuits at power-on), and
/// /reconfig_links, the lit circuits after each decision that changed them.
struct ReconfigReport {
  std::vector<double> time_ns;       ///< the decision
  std::vector<double> pause_end_ns;  ///< flows resume on the new circuits; -1: nothing changed, no pause
  std::vector<std::uint64_t> demand_bytes;  ///< wire bytes not yet sent between servers (the heuristic's input)
  std::vector<std::uint32_t> waiting_messages;  ///< messages with bytes not yet sent
  std::vector<std::uint32_t> demand_links, repair_links;  ///< Algorithm 5's greedy links, its connectivity repair's
  std::vector<std::uint32_t> circuits_off, circuits_on;
  std::vector<std::uint32_t> link_row, link_src, link_dst, link_count;  ///< /reconfig_links
};
/// /reconfig and /reconfig_links.  Collective call; the root's rows are written.
void write_reconfig(H5Writer& out, const ReconfigReport& r, bool is_root);

/// DNN jobs: one row per job and iteration in /iterations.
struct DnnReport {
  std::vector<std::string> phase_names;  ///< columns <name>_ns of /iterations
  std::vector<std::uint32_t> job;
  std::vector<std::int64_t> iteration;  ///< < 0: warm-up
  std::vector<double> start_ns, end_ns, time_ns, compute_ns, exposed_comm_ns;
  /// 0 when engine.end_ns stopped the iteration (end_ns -1, time_ns and
  /// exposed_comm_ns NaN).
  std::vector<std::uint8_t> finished;
  std::vector<std::vector<double>> phase_ns;  ///< per phase, per row
};
/// Collective call; the root's report is written.
void write_dnn(H5Writer& out, const DnnReport& report, bool is_root);

/// /timeline (output.timeline): per DNN endpoint its compute tasks and its
/// communications.  Collective call; each process writes the rows it
/// holds (`rows` are their global row numbers, `total` the row count).
struct TimelineReport {
  std::uint64_t total = 0;
  std::vector<std::string> phase_names;
  std::vector<std::uint64_t> rows;
  std::vector<std::uint32_t> job, endpoint;
  std::vector<std::int32_t> iteration;
  std::vector<std::uint8_t> phase;
  std::vector<double> start_ns, end_ns;
};
void write_timeline(H5Writer& out, const TimelineReport& t);

/// Rows of /trace_nodes kept outside the report's columns (a streamed
/// trace's, on disk as its nodes completed): row(i, out) gives the i-th,
/// asked for in increasing i, several times over (once per column).
class TraceNodeRows {
 public:
  struct Row {
    std::uint32_t job = 0, rank = 0, endpoint = 0;
    std::uint64_t node_id = 0;
    std::uint8_t kind = 0;
    double start_ns = -1, end_ns = -1;
    std::uint32_t name = 0;  ///< of the report's distinct names
  };
  virtual ~TraceNodeRows() = default;
  virtual std::uint64_t count() const = 0;
  virtual void row(std::uint64_t i, Row& out) = 0;
  /// The rows' numbers in the table, when this process's rows are not the
  /// run from kept_first (a partitioned streamed trace: its ranks' runs);
  /// null: that run.
  virtual const H5Writer::RowRuns* runs() const { return nullptr; }
};

/// /trace_nodes (output.timeline = true, trace jobs): one row per trace
/// node, job by job, in the trace's order (rank by rank, file order);
/// written by the root (`rows` empty elsewhere), from its columns or, for a
/// streamed trace (the run's only job), from `kept` (rows from kept_first;
/// on several processes each its own ranks', the rows kept->runs() gives).
struct TraceNodesReport {
  std::uint64_t total = 0;
  std::vector<std::string> kind_names;
  std::vector<std::uint64_t> rows;
  std::vector<std::uint32_t> job, rank, endpoint;
  std::vector<std::uint64_t> node_id;
  std::vector<std::uint8_t> kind;
  std::vector<double> start_ns, end_ns;
  /// Row i's name is the name[i]-th of the distinct names, stored one after
  /// another: the k-th is names[name_end[k - 1], name_end[k]) (a trace's
  /// names repeat across its ranks and iterations).
  std::vector<std::uint32_t> name;
  std::string names;
  std::vector<std::uint64_t> name_end;
  std::shared_ptr<TraceNodeRows> kept;
  std::uint64_t kept_first = 0;
};
void write_trace_nodes(H5Writer& out, const TraceNodesReport& t);

/// Peak resident memory of this process, in bytes.
std::uint64_t peak_memory_bytes();

}  // namespace fabricsim::stats
