// workload.kind = "dnn": DNN training iterations as a job.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "fabricsim/workload/dnn.hpp"
#include "jobs.hpp"
#include "memory.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

// A planned task costs about 100 bytes: the plan must fit the memory limit
// of one rank (checked by the job, dnn_endpoints).
workload::DnnParams budgeted(workload::DnnParams p, const config::Config& cfg) {
  p.max_tasks = memory_limit_per_rank(cfg, 1) / 100;
  return p;
}

class DnnJob final : public Job {
 public:
  DnnJob(const config::Config& cfg, JobPlanning& plan)
      : job_(std::make_unique<workload::DnnJob>(plan.graph, budgeted(dnn_params(cfg, plan.pool), cfg), plan.index)) {}
  unsigned tables() const override { return kIterations | kTimeline; }

  stats::JobRow report(const JobResults& ctx, std::uint32_t index, JobReports& out) const override {
    auto partial = job_->partial(ctx.graph);
    ctx.comm.allreduce_max(partial.times);
    const auto& jp = job_->params();
    stats::JobRow row;
    row.kind = "dnn";
    row.model = jp.model.name;
    row.schedule = jp.schedule;
    row.data_parallel = jp.data_parallel;
    row.pipeline_parallel = jp.pipeline_parallel;
    row.tensor_parallel = jp.tensor_parallel;
    row.expert_parallel = jp.expert_parallel;
    row.micro_batches = jp.micro_batches;
    row.endpoints = static_cast<std::uint32_t>(jp.endpoints.size());
    row.start_ns = jp.start.ns();
    int timed = 0;
    std::vector<double> times;
    auto& d = out.dnn;
    for (const auto& it : job_->results(partial, ctx.graph)) {
      d.job.push_back(index);
      d.iteration.push_back(it.iteration);
      d.start_ns.push_back(it.start_ns);
      d.end_ns.push_back(it.end_ns);
      d.time_ns.push_back(it.time_ns);
      d.compute_ns.push_back(it.compute_ns);
      d.exposed_comm_ns.push_back(it.exposed_comm_ns);
      d.finished.push_back(it.finished ? 1 : 0);
      for (std::size_t q = 0; q < d.phase_ns.size(); ++q) d.phase_ns[q].push_back(it.phase_ns[q]);
      if (it.iteration >= 0 && it.finished) {
        row.mean_time_ns += it.time_ns;
        times.push_back(it.time_ns);
        ++timed;
      }
    }
    // Over the timed iterations that finished; NaN if none did.
    row.mean_time_ns = timed > 0 ? row.mean_time_ns / timed : std::numeric_limits<double>::quiet_NaN();
    row.p99_time_ns = std::numeric_limits<double>::quiet_NaN();
    if (!times.empty()) {  // nearest rank: the ceil(0.99 k)-th smallest of k
      std::sort(times.begin(), times.end());
      const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(times.size())));
      row.p99_time_ns = times[std::max<std::size_t>(rank, 1) - 1];
    }
    if (ctx.timeline) append_timeline(ctx, partial, out.timeline);
    return row;
  }

  void print(const JobReports& r, std::uint32_t index, bool) const override {
    // Per iteration: time, compute, exposed communication, and where the
    // time of the endpoint with the most compute went.
    const auto& jr = r.jobs[index];
    const auto& d = r.dnn;
    fmt::print(
        "\n# job {}: {} on {} endpoints (D {} x P {} x O {}, E {}), {} micro-batches, {}; mean "
        "iteration {:.3f} ms\n",
        index, jr.model, jr.endpoints, jr.data_parallel, jr.pipeline_parallel, jr.tensor_parallel, jr.expert_parallel,
        jr.micro_batches, jr.schedule, jr.mean_time_ns / 1e6);
    fmt::print("# {:>5} {:>11} {:>11} {:>11}", "iter", "time (us)", "compute", "exposed");
    for (const auto& name : d.phase_names) fmt::print(" {:>11}", name.substr(0, 11));
    fmt::print("\n");
    for (std::size_t i = r.first_row[index]; i < d.job.size() && d.job[i] == index; ++i) {
      fmt::print("  {:>5} {:>11.2f} {:>11.2f} {:>11.2f}", d.iteration[i], d.time_ns[i] / 1e3, d.compute_ns[i] / 1e3,
                 d.exposed_comm_ns[i] / 1e3);
      for (const auto& ph : d.phase_ns) fmt::print(" {:>11.2f}", ph[i] / 1e3);
      fmt::print("\n");
    }
  }

 private:
  void append_timeline(const JobResults& ctx, const workload::DnnJob::Partial& partial,
                       stats::TimelineReport& tl) const {
    workload::DnnJob::Timeline t;
    job_->timeline(ctx.graph, partial, tl.total, ctx.comm.is_root(), t);
    tl.total += job_->timeline_rows(ctx.graph);
    tl.rows.insert(tl.rows.end(), t.row.begin(), t.row.end());
    tl.job.insert(tl.job.end(), t.job.begin(), t.job.end());
    tl.endpoint.insert(tl.endpoint.end(), t.endpoint.begin(), t.endpoint.end());
    tl.iteration.insert(tl.iteration.end(), t.iteration.begin(), t.iteration.end());
    tl.phase.insert(tl.phase.end(), t.phase.begin(), t.phase.end());
    tl.start_ns.insert(tl.start_ns.end(), t.start_ns.begin(), t.start_ns.end());
    tl.end_ns.insert(tl.end_ns.end(), t.end_ns.begin(), t.end_ns.end());
  }

  std::unique_ptr<workload::DnnJob> job_;
};

}  // namespace

std::unique_ptr<Job> make_dnn_job(const config::Config& cfg, JobPlanning& plan) {
  return std::make_unique<DnnJob>(cfg, plan);
}

}  // namespace fabricsim::app
