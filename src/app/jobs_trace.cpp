// workload.kind = "trace": an execution-trace replay as a job.
#include <fmt/format.h>

#include "fabricsim/workload/trace.hpp"
#include "jobs.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

class TraceJob final : public Job {
 public:
  TraceJob(const config::Config& cfg, JobPlanning& plan)
      : job_(std::make_unique<workload::TraceJob>(plan.graph, trace_params(cfg, plan.pool), plan.index)) {}
  unsigned tables() const override { return kIterations; }

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
  std::unique_ptr<workload::TraceJob> job_;
};

}  // namespace

std::unique_ptr<Job> make_trace_job(const config::Config& cfg, JobPlanning& plan) {
  return std::make_unique<TraceJob>(cfg, plan);
}

}  // namespace fabricsim::app
