// workload.kind = "trace": an execution-trace replay as a job.
#include <algorithm>

#include <fmt/format.h>

#include "fabricsim/workload/trace.hpp"
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
    stats::JobRow row;
    row.kind = "trace";
    row.model = job_->params().trace.name;
    row.endpoints = static_cast<std::uint32_t>(job_->params().endpoints.size());
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
    for (auto& ph : d.phase_ns) ph.push_back(0.0);  // (a trace's nodes carry no phase)
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

  void print(const JobReports& r, std::uint32_t index, bool) const override {
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
    if (t.kind_names.empty()) t.kind_names = {"compute", "send", "recv", "collective"};
    if (ctx.comm.is_root()) {
      const auto ns = [](std::int64_t ps) { return ps < 0 ? -1.0 : static_cast<double>(ps) / 1000.0; };
      fit(t.rows, count);
      fit(t.node_id, count);
      fit(t.name, count);
      fit(t.job, count);
      fit(t.rank, count);
      fit(t.endpoint, count);
      fit(t.kind, count);
      fit(t.start_ns, count);
      fit(t.end_ns, count);
      // This job's distinct names after those of the jobs before.
      const auto first_name = static_cast<std::uint32_t>(t.name_end.size());
      const std::uint64_t names_before = t.names.size();
      t.names.append(p.trace.names);
      for (std::uint64_t e : p.trace.name_ends) t.name_end.push_back(names_before + e);
      for (std::size_t i = 0; i < count; ++i) {
        const workload::PlannedTraceNode& n = job_->node(i);
        t.rows.push_back(t.total + i);
        t.job.push_back(index);
        t.rank.push_back(n.rank);
        t.endpoint.push_back(p.endpoints[n.rank]);
        t.node_id.push_back(n.id);
        t.kind.push_back(static_cast<std::uint8_t>(n.kind));
        t.start_ns.push_back(ns(times.start_ps[i]));
        t.end_ns.push_back(ns(times.end_ps[i]));
        t.name.push_back(first_name + n.name);
      }
    }
    t.total += count;
  }

  std::unique_ptr<workload::TraceJob> job_;
};

}  // namespace

std::unique_ptr<Job> make_trace_job(const config::Config& cfg, JobPlanning& plan) {
  return std::make_unique<TraceJob>(cfg, plan);
}

}  // namespace fabricsim::app
