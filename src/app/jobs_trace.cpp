// workload.kind = "trace": an execution-trace replay as a job.
#include <algorithm>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "chakra_trace.hpp"
#include "fabricsim/util/spill_file.hpp"
#include "fabricsim/workload/trace.hpp"
#include "fabricsim/workload/trace_stream.hpp"
#include "jobs.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

// Room for `n` more: a million-node trace's report columns sized for its
// rows, not up to twice them by doubling (several jobs still grow
// geometrically).
template <class V>
void fit(V& v, std::size_t n) {
  if (v.capacity() < v.size() + n) v.reserve(std::max(v.size() + n, v.capacity() + v.capacity() / 2));
}

// A trace job's row of /jobs and of /iterations (one "iteration": the
// whole trace; its nodes carry no phase).
stats::JobRow trace_rows(JobReports& out, std::uint32_t index, const std::string& model, std::size_t endpoints,
                         const workload::TraceJob::Result& res) {
  stats::JobRow row;
  row.kind = "trace";
  row.model = model;
  row.endpoints = static_cast<std::uint32_t>(endpoints);
  row.start_ns = res.start_ns;
  row.mean_time_ns = res.time_ns;
  row.p99_time_ns = res.time_ns;
  auto& d = out.dnn;
  d.job.push_back(index);
  d.iteration.push_back(0);
  d.start_ns.push_back(res.start_ns);
  d.end_ns.push_back(res.end_ns);
  d.time_ns.push_back(res.time_ns);
  d.compute_ns.push_back(res.compute_ns);
  d.exposed_comm_ns.push_back(res.time_ns - res.compute_ns);
  d.finished.push_back(res.finished ? 1 : 0);
  for (auto& ph : d.phase_ns) ph.push_back(0.0);
  return row;
}

// The kinds of /trace_nodes, on every process (the writer's collective calls).
void trace_node_kinds(stats::TraceNodesReport& t) {
  if (t.kind_names.empty()) t.kind_names = {"compute", "send", "recv", "collective"};
}

double ns_or_none(std::int64_t ps) { return ps < 0 ? -1.0 : static_cast<double>(ps) / 1000.0; }

// A trace job's distinct names, after those of the jobs before; returns
// the index of its first.
std::uint32_t append_names(stats::TraceNodesReport& t, const std::string& names,
                           const std::vector<std::uint64_t>& name_ends) {
  const auto first_name = static_cast<std::uint32_t>(t.name_end.size());
  const std::uint64_t names_before = t.names.size();
  t.names.append(names);
  for (std::uint64_t e : name_ends) t.name_end.push_back(names_before + e);
  return first_name;
}

// A trace job's `count` rows of /trace_nodes (the root's), its distinct
// names after those of the jobs before; node(i) gives row i's (rank, id,
// kind, name, start ps, end ps).
template <class Node>
void trace_node_rows(stats::TraceNodesReport& t, std::uint32_t index, std::size_t count, const std::string& names,
                     const std::vector<std::uint64_t>& name_ends, const std::vector<net::EndpointId>& endpoints,
                     Node node) {
  const auto ns = ns_or_none;
  fit(t.rows, count);
  fit(t.node_id, count);
  fit(t.name, count);
  fit(t.job, count);
  fit(t.rank, count);
  fit(t.endpoint, count);
  fit(t.kind, count);
  fit(t.start_ns, count);
  fit(t.end_ns, count);
  const std::uint32_t first_name = append_names(t, names, name_ends);
  for (std::size_t i = 0; i < count; ++i) {
    const auto [rank, id, kind, name, start_ps, end_ps] = node(i);
    t.rows.push_back(t.total + i);
    t.job.push_back(index);
    t.rank.push_back(rank);
    t.endpoint.push_back(endpoints[rank]);
    t.node_id.push_back(id);
    t.kind.push_back(static_cast<std::uint8_t>(kind));
    t.start_ns.push_back(ns(start_ps));
    t.end_ns.push_back(ns(end_ps));
    t.name.push_back(first_name + name);
  }
}

class TraceJob final : public Job {
 public:
  TraceJob(const config::Config& cfg, JobPlanning& plan)
      : job_(std::make_unique<workload::TraceJob>(plan.graph, trace_params(cfg, plan.pool, plan.graph.plan_budget_left()),
                                                  plan.index)) {}
  unsigned tables() const override { return kIterations | kTraceNodes; }
  std::uint64_t memory_bytes() const override { return job_->memory_bytes(); }

  stats::JobRow report(const JobResults& ctx, std::uint32_t index, JobReports& out) const override {
    auto partial = job_->partial(ctx.graph);
    ctx.comm.allreduce_max(partial.times);
    const auto res = job_->result(partial, ctx.graph);
    stats::JobRow row = trace_rows(out, index, job_->params().trace.name, job_->params().endpoints.size(), res);
    if (ctx.timeline || ctx.flows) {
      const std::uint64_t first_row = out.trace_nodes.total;
      node_rows(ctx, index, out.trace_nodes);
      if (ctx.flows && ctx.comm.is_root()) {
        fit(out.flow_trace_node, job_->message_nodes().size());
        for (const auto& [task, node] : job_->message_nodes())
          out.flow_trace_node.emplace_back(ctx.graph.task(task).message, first_row + node);
      }
    }
    return row;
  }

  void print(const JobReports& r, std::uint32_t index, bool several) const override { print_rows(r, index, several); }
  static void print_rows(const JobReports& r, std::uint32_t index, bool) {
    const auto& jr = r.jobs[index];
    const auto& d = r.dnn;
    for (std::size_t i = r.first_row[index]; i < d.job.size() && d.job[i] == index; ++i)
      fmt::print(
          "\n# job {}: trace {} on {} endpoints: {:.3f} us, compute {:.3f} us (the busiest rank), exposed "
          "communication {:.3f} us\n",
          index, jr.model.empty() ? "(unnamed)" : jr.model, jr.endpoints, d.time_ns[i] / 1e3, d.compute_ns[i] / 1e3,
          d.exposed_comm_ns[i] / 1e3);
  }

 private:
  // Every node's row of /trace_nodes, its times gathered from the processes
  // that simulate its two ends; the root writes them.
  void node_rows(const JobResults& ctx, std::uint32_t index, stats::TraceNodesReport& t) const {
    auto times = job_->node_times(ctx.graph);
    ctx.comm.allreduce_max(times.start_ps);
    ctx.comm.allreduce_max(times.end_ps);
    const auto& p = job_->params();
    const std::size_t count = job_->node_count();
    trace_node_kinds(t);
    if (ctx.comm.is_root())
      trace_node_rows(t, index, count, p.trace.names, p.trace.name_ends, p.endpoints, [&](std::size_t i) {
        const workload::PlannedTraceNode& n = job_->node(i);
        return std::make_tuple(n.rank, n.id, n.kind, n.name, times.start_ps[i], times.end_ps[i]);
      });
    t.total += count;
  }

  std::unique_ptr<workload::TraceJob> job_;
};

// A streamed trace's rows of /trace_nodes, put on disk as their nodes are
// done (util::SpillFile, 40 bytes a row) and read back, in order, as the
// output is written: the stream's sink, the report's kept rows.
class SpilledRows final : public workload::TraceStream::RowSink, public stats::TraceNodeRows {
 public:
  SpilledRows(std::uint64_t count, std::vector<net::EndpointId> endpoints)
      : file_(sizeof(Record), "workload.trace_stream: the /trace_nodes rows"), count_(count),
        endpoints_(std::move(endpoints)) {}
  // Row i of the report: of job `job`, its names from the report's `first_name`.
  void name_rows(std::uint32_t job, std::uint32_t first_name) {
    job_ = job;
    first_name_ = first_name;
  }
  void put(std::uint64_t row, const workload::TraceStream::Row& r) override {
    const Record x{r.id, r.start_ps, r.end_ps, r.name, r.rank, static_cast<std::uint32_t>(r.kind), 0};
    file_.put(row, &x);
  }
  // A row's start, set after it was put (a receive's, from its message's
  // post time, known at the end where another process posted it).
  void set_start(std::uint64_t row, std::int64_t start_ps) {
    Record x{};
    file_.get(row, &x);
    x.start_ps = start_ps;
    file_.put(row, &x);
  }
  // On several processes: the rows this one writes (its ranks'), in order,
  // by their numbers in the table, its first row `first`; the file holds
  // them at their numbers in the trace (the others' places are holes).
  void own(stats::H5Writer::RowRuns rows, std::uint64_t first) {
    own_ = std::move(rows);
    own_first_ = first;
    partitioned_ = true;
  }
  const stats::H5Writer::RowRuns* runs() const override { return partitioned_ ? &own_ : nullptr; }
  std::uint64_t count() const override { return partitioned_ ? own_.size() : count_; }
  void row(std::uint64_t i, Row& out) override {
    Record x{};
    file_.get(partitioned_ ? own_[i] - own_first_ : i, &x);
    out.job = job_;
    out.rank = x.rank;
    out.endpoint = endpoints_.at(x.rank);
    out.node_id = x.id;
    out.kind = static_cast<std::uint8_t>(x.kind);
    out.start_ns = ns_or_none(x.start_ps);
    out.end_ns = ns_or_none(x.end_ps);
    out.name = first_name_ + x.name;
  }
  void flush() { file_.flush(); }
  // The file's batch, the run it writes and its read-ahead (512 KiB, 512 KiB
  // and 1 MiB at most), and the endpoints.
  std::uint64_t memory_bytes() const { return (2u << 20) + endpoints_.capacity() * sizeof(net::EndpointId); }

 private:
  struct Record {  // (no padding: every byte written is set)
    std::uint64_t id;
    std::int64_t start_ps, end_ps;
    std::uint32_t name, rank, kind, unused;
  };
  static_assert(sizeof(Record) == 40, "a spilled row has no padding");
  util::SpillFile file_;
  std::uint64_t count_;
  stats::H5Writer::RowRuns own_;
  std::uint64_t own_first_ = 0;
  bool partitioned_ = false;
  std::vector<net::EndpointId> endpoints_;
  std::uint32_t job_ = 0, first_name_ = 0;
};

// workload.trace_stream: the trace replayed as it is read (a Chakra trace,
// the run's only job, on one process: docs/architecture.md, "Streaming
// traces").  Its rows of /trace_nodes and /flows are the planned replay's.
class StreamTraceJob final : public Job {
 public:
  StreamTraceJob(const config::Config& cfg, JobPlanning& plan) {
    const std::string path = trace_path(cfg);
    if (!is_chakra_trace(path))
      throw util::ConfigError("workload.trace_stream: streams a Chakra trace (one .et file per rank), not " + path);
    // (At one process the stream reads every rank and makes each record as
    // it reads its node: the pre-pass keeps no send nodes.  At several the
    // processes share the pre-pass, each reading every P-th file, and keep
    // every rank's send nodes on disk: TraceSends.)
    source_ = std::make_unique<ChakraStream>(path, chakra_options(cfg), plan.processes() > 1, plan.comm);
    const std::uint32_t R = source_->ranks();
    if (source_->open_at_most() < R)
      fmt::print(stderr,
                 "note: workload.trace_stream: {} rank files, {} open at once (the open-file limit, ulimit -n): the "
                 "others are closed and opened again where they were left, which takes longer\n",
                 R, source_->open_at_most());
    workload::TraceStreamParams p;
    p.algorithm = cfg.get_string("workload.algorithm");
    if (p.algorithm == "auto") p.algorithm = "ring";
    p.start = core::SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
    p.window = static_cast<std::uint32_t>(cfg.get_int("workload.trace_stream_window"));
    p.endpoints = place_job(cfg, R, plan.pool, "workload.trace: the trace");
    net::Network& net = plan.graph.network();
    p.ids = workload::trace_message_ids(source_->summary(), source_->groups(), p.endpoints, p.algorithm,
                                        net.topology(), static_cast<net::MessageId>(net.message_count()),
                                        source_->files());
    // (Several processes with no message: nothing to describe, nothing to
    // drop; set_partition refuses records dropped there otherwise.)
    const bool drop = plan.processes() == 1 || p.ids.total > 0;
    const net::MessageId first = drop ? net.reserve_ids_dropped(p.ids.total) : net.reserve_ids(p.ids.total);
    first_id_ = first;
    FABRICSIM_ASSERT(R == 0 || first == p.ids.first_send[0], "the trace's ids set aside where numbered");
    // The stream makes each record as it reads its node, and a record's
    // memory goes back once the model is done with it (a page at a time,
    // its contents to a file: Network::drop_delivered_records), so what
    // the run holds of them is what is in flight.  On several processes
    // every message is first described (16 bytes: its ends and size), so
    // that a packet is routed by its description on every process it
    // passes, a receiver's process makes the record as its first packet
    // arrives if its node is not read yet, and a message's record is made
    // only where its sender or receiver runs (Network::describe_at).
    p.sends = source_->take_sends();
    if (plan.processes() > 1)
      workload::trace_records(net, source_->summary(), *p.sends, source_->groups(), p.endpoints, p.algorithm,
                              p.ids, /*describe=*/true);
    p.first_row.assign(R + 1, 0);
    for (std::uint32_t r = 0; r < R; ++r) p.first_row[r + 1] = p.first_row[r] + source_->node_counts()[r];
    endpoints_ = p.endpoints;
    start_ = p.start;
    window_ = p.window;
    rows_ = std::make_shared<SpilledRows>(p.first_row[R], p.endpoints);
    first_rows_ = p.first_row;
    stream_ = std::make_unique<workload::TraceStream>(plan.graph, *source_, std::move(p), plan.index, *rows_);
  }
  unsigned tables() const override { return kIterations | kTraceNodes; }
  // What it holds besides the graph's tasks in flight and the message
  // records (counted with the graph and the network): each message's row
  // (at the end the report's, moved there); the names and their index
  // (at the end the report's, moved there too); each rank's open file (its
  // read buffer and a parsed node) and its window of nodes (their tasks,
  // edges, entries and rows, about 300 bytes each); the rows' read-ahead;
  // and the writer's piece of string rows (1 MiB at most, at one process).
  // Not its rows: those are on disk (SpilledRows).
  std::uint64_t memory_bytes() const override {
    const std::uint64_t ranks = source_->ranks(), names = source_->name_ends().size();
    constexpr std::uint64_t kNameIndex = 2 * sizeof(std::uint32_t);
    constexpr std::uint64_t kReader = ChakraRankReader::kReadBlockBytes + 8 * 1024, kLiveNode = 300,
                            kWritePiece = 1 << 20;
    return stream_->message_rows().capacity() * sizeof(std::uint32_t) + source_->names().capacity() +
           names * (sizeof(std::uint64_t) + kNameIndex) +
           ranks * (kReader + std::uint64_t{window_} * kLiveNode) + rows_->memory_bytes() +
           std::min<std::uint64_t>(rows_->count() * 32, kWritePiece);
  }

  stats::JobRow report(const JobResults& ctx, std::uint32_t index, JobReports& out) const override {
    const par::Comm& comm = ctx.comm;
    if (const std::uint64_t late = comm.allreduce_sum(ctx.graph.late()); late > 0 && comm.is_root())
      fmt::print(stderr,
                 "warning: workload.trace_stream: {} nodes were read after their dependencies had completed and began "
                 "late (the planned replay would have begun them earlier); raise workload.trace_stream_window\n",
                 late);
    // (The stream and the rows are the job's, not its state: the report
    // finishes them, as TraceJob's reads its graph.)
    stream_->finish();
    // A receive whose message another process posted begins at its post
    // time, in every record by now (run.cpp, before the reports).
    for (const auto& [r, id] : stream_->posted_elsewhere()) {
      const core::SimTime post = ctx.graph.network().message(id).post_time;
      rows_->set_start(r, post == core::SimTime::max() ? -1 : post.ps());
    }
    rows_->flush();  // (a full disk reported before the output is begun)
    // Each process's ranks: the job is finished when all of them are.
    const bool finished = comm.allreduce_min(stream_->all_done() ? 1 : 0) == 1;
    const std::int64_t end = std::max(start_.ps(), comm.allreduce_max(stream_->last_end_ps()));
    workload::TraceJob::Result res;  // (as TraceJob::result)
    res.start_ns = start_.ns();
    res.finished = finished;
    res.end_ns = finished ? static_cast<double>(end) / 1000.0 : -1.0;
    res.time_ns = finished ? res.end_ns - res.start_ns : std::numeric_limits<double>::quiet_NaN();
    res.compute_ns = comm.allreduce_max(stream_->compute_ns());
    stats::JobRow row = trace_rows(out, index, source_->name(), endpoints_.size(), res);
    if (ctx.timeline || ctx.flows) {
      stats::TraceNodesReport& t = out.trace_nodes;
      const std::uint64_t first_row = t.total;
      trace_node_kinds(t);
      // Each process writes its own ranks' rows (on one, every row).
      if (comm.size() > 1) {
        // (A run of rows per rank read, not a number per row: that list was
        // 4.4 MB at the end of the run for the benchmark at 2 processes.)
        stats::H5Writer::RowRuns own;
        for (std::uint32_t r = 0; r < endpoints_.size(); ++r)
          if (stream_->reads(r)) own.add(first_row + first_rows_[r], first_rows_[r + 1] - first_rows_[r]);
        rows_->own(std::move(own), first_row);
      }
      if (comm.is_root() || comm.size() > 1) {
        // (The stream's names moved where they are the run's only ones, as a
        // streamed trace is its only job: not copied beside them.)
        if (t.names.empty() && t.name_end.empty()) {
          source_->take_names(t.names, t.name_end);
          rows_->name_rows(index, 0);
        } else {
          rows_->name_rows(index, append_names(t, source_->names(), source_->name_ends()));
        }
        t.kept = rows_;
        t.kept_first = first_row;
      }
      t.total += first_rows_.back();
      if (ctx.flows) {
        // (The root writes /flows/trace_node: every process's senders'
        // rows, each message's set by the one process that read its node;
        // the others' UINT32_MAX.)
        JobReports::FlowRowRun run{first_id_, first_row, stream_->take_message_rows()};
        comm.reduce_min_to_root(run.rows);
        if (comm.is_root()) out.flow_trace_runs.push_back(std::move(run));
      }
    }
    return row;
  }

  void print(const JobReports& r, std::uint32_t index, bool several) const override {
    TraceJob::print_rows(r, index, several);
  }

 private:
  std::unique_ptr<ChakraStream> source_;
  std::shared_ptr<SpilledRows> rows_;
  std::unique_ptr<workload::TraceStream> stream_;
  std::vector<net::EndpointId> endpoints_;
  std::vector<std::uint64_t> first_rows_;  // per rank, and the count at the end
  core::SimTime start_;
  net::MessageId first_id_ = 0;
  std::uint32_t window_ = 0;
};

}  // namespace

std::unique_ptr<Job> make_trace_job(const config::Config& cfg, JobPlanning& plan) {
  if (cfg.get_bool("workload.trace_stream")) return std::make_unique<StreamTraceJob>(cfg, plan);
  return std::make_unique<TraceJob>(cfg, plan);
}

}  // namespace fabricsim::app
