// workload.kind = "collective": an NCCL-tests style benchmark as a job.
#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/tacos.hpp"
#include "failures.hpp"
#include "jobs.hpp"
#include "memory.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

class CollectiveJob final : public Job {
 public:
  CollectiveJob(const config::Config& cfg, JobPlanning& plan) {
    workload::CollectiveParams p = collective_params(cfg, &plan.pool);
    if (p.tacos) {  // the fabric the schedule is synthesized for: without what is down from the start
      auto t = std::make_shared<workload::TacosOptions>(*p.tacos);
      for (const net::LinkChange& c : failure_schedule(cfg, plan.graph.network().topology()).changes)
        if (c.at == core::SimTime::zero() && !c.up) t->down_links.push_back(c.link);
      p.tacos = std::move(t);
    }
    // A planned message costs about 260 bytes (message, task, edges;
    // measured): the plan must fit the memory limit of one rank.
    p.max_messages = std::min<std::uint64_t>(p.max_messages, memory_limit_per_rank(cfg, 1) / 300);
    if (plan.pool.free_count() == 0) throw util::ConfigError("workload.ranks: no endpoints are left for this job");
    bench_ = std::make_unique<workload::CollectiveBenchmark>(plan.graph, p, plan.pool, plan.index);
  }
  unsigned tables() const override { return kCollectives; }

  stats::JobRow report(const JobResults& ctx, std::uint32_t index, JobReports& out) const override {
    // Each operation instance from its first post (known where its sender
    // runs) to its last arrival (where its receiver runs).
    const net::Network& net = ctx.graph.network();
    const net::Topology& topo = net.topology();
    const auto& inst = bench_->instances();
    std::vector<std::int64_t> first(inst.size(), INT64_MAX), last(inst.size(), INT64_MIN);
    for (std::size_t i = 0; i < inst.size(); ++i)
      for (net::MessageId m = inst[i].first; m < inst[i].last; ++m) {
        const auto& msg = net.message(m);
        if (net.owns(topo.endpoint_node(msg.src))) first[i] = std::min(first[i], msg.post_time.ps());
        if (net.owns(topo.endpoint_node(msg.dst))) last[i] = std::max(last[i], msg.end_time.ps());
      }
    ctx.comm.allreduce_min(first);
    ctx.comm.allreduce_max(last);  // SimTime::max(): some message never arrived (or was never posted)
    const auto& cp = bench_->params();
    const auto n = static_cast<std::uint32_t>(bench_->ranks().size());
    stats::JobRow row;
    row.kind = "collective";
    row.op = workload::to_string(cp.op);
    row.algorithm = cp.algorithm;
    row.endpoints = n;
    row.start_ns = cp.start.ns();
    // Every rank computes cp.compute before each operation (one rank: each iteration).
    row.compute_total_ns = cp.compute.ns() * static_cast<double>(n == 1 ? cp.warmup + cp.iterations : inst.size());
    auto& c = out.collectives;
    if (n == 1) return row;  // compute only (compute_ns): no operation, no /collectives rows
    for (std::size_t i = 0; i < inst.size(); ++i) {
      // Unfinished (engine.end_ns stopped it): a flag, end -1 and no bandwidth.
      const bool done = last[i] != INT64_MAX && last[i] != INT64_MIN && first[i] != INT64_MAX;
      const double t_ns = static_cast<double>(last[i] - first[i]) / 1000.0;
      const double alg = done ? static_cast<double>(inst[i].bytes) * 8.0 / t_ns  // Gb/s
                              : std::numeric_limits<double>::quiet_NaN();
      c.job.push_back(index);
      c.op.push_back(row.op);
      c.algorithm.push_back(row.algorithm);
      c.ranks.push_back(n);
      c.bytes.push_back(inst[i].bytes);
      c.iteration.push_back(inst[i].iteration);
      c.start_ns.push_back(first[i] == INT64_MAX ? -1.0 : static_cast<double>(first[i]) / 1000.0);
      c.end_ns.push_back(done ? static_cast<double>(last[i]) / 1000.0 : -1.0);
      c.finished.push_back(done ? 1 : 0);
      c.algbw_gbps.push_back(alg);
      c.busbw_gbps.push_back(alg * workload::busbw_factor(cp.op, n));
      const auto& plans = bench_->tacos_plans();
      const bool tacos = inst[i].size_index < plans.size();
      c.schedule_ns.push_back(tacos ? plans[inst[i].size_index]->schedule.finish_ns
                                    : std::numeric_limits<double>::quiet_NaN());
      c.synthesis_seconds.push_back(tacos ? plans[inst[i].size_index]->synthesis_seconds
                                          : std::numeric_limits<double>::quiet_NaN());
    }
    return row;
  }

  void print(const JobReports& r, std::uint32_t index, bool several) const override {
    // NCCL-tests layout: per size, the mean over the timed iterations.
    const auto& jr = r.jobs[index];
    const auto& cp = bench_->params();
    const auto& c = r.collectives;
    if (jr.endpoints == 1) {
      fmt::print("\n# {}one rank: {} iterations of {:.3f} us of compute, no communication\n",
                 several ? fmt::format("job {}: ", index) : std::string(), cp.warmup + cp.iterations,
                 cp.compute.ns() / 1000.0);
      return;
    }
    fmt::print("\n# {}{} ({}), {} ranks ({}), {} warm-up + {} timed iterations per size\n",
               several ? fmt::format("job {}: ", index) : std::string(), jr.op, jr.algorithm, jr.endpoints,
               jr.stage.empty() ? cp.placement + " placement" : "placed by the scheduler: " + jr.stage, cp.warmup,
               cp.iterations);
    fmt::print("# {:>12} {:>12} {:>6} {:>10} {:>9} {:>9}\n", "size", "count", "type", "time", "algbw", "busbw");
    fmt::print("# {:>12} {:>12} {:>6} {:>10} {:>9} {:>9}\n", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)");
    const std::size_t row0 = r.first_row[index];  // this job's rows, in instance order
    const auto& plans = bench_->tacos_plans();
    for (std::size_t si = 0; si < plans.size(); ++si)
      fmt::print("# tacos, {} B: {} sends of {} chunks, {:.3f} us in the schedule's alpha-beta model, {}\n",
                 cp.sizes[si], plans[si]->schedule.sends.size(), plans[si]->chunk_bytes.size(),
                 plans[si]->schedule.finish_ns / 1000.0,
                 plans[si]->from_file ? std::string("read from a file")
                                      : fmt::format("synthesized in {:.3f} s", plans[si]->synthesis_seconds));
    for (std::size_t si = 0; si < plans.size(); ++si)
      for (const std::string& st : plans[si]->ilp_status) fmt::print("#   ILP: {}\n", st);
    for (std::size_t si = 0; si < cp.sizes.size(); ++si) {
      double t_ns = 0;
      int k = 0;
      for (std::size_t i = 0; i < bench_->instances().size(); ++i)
        if (bench_->instances()[i].size_index == si && c.iteration[row0 + i] >= 0 && c.finished[row0 + i]) {
          t_ns += c.end_ns[row0 + i] - c.start_ns[row0 + i];
          ++k;
        }
      if (k == 0) {  // (engine.end_ns stopped every timed instance of this size)
        fmt::print("  {:>12} {:>12} {:>6} {:>10} {:>9} {:>9}\n", cp.sizes[si], cp.sizes[si] / 4, "float", "unfinished",
                   "-", "-");
        continue;
      }
      t_ns /= k;
      const double algbw = static_cast<double>(cp.sizes[si]) / t_ns;  // bytes per ns = GB/s
      fmt::print("  {:>12} {:>12} {:>6} {:>10.2f} {:>9.2f} {:>9.2f}\n", cp.sizes[si], cp.sizes[si] / 4, "float",
                 t_ns / 1000.0, algbw, algbw * workload::busbw_factor(cp.op, jr.endpoints));
    }
  }

 private:
  std::unique_ptr<workload::CollectiveBenchmark> bench_;
};

}  // namespace

std::unique_ptr<Job> make_collective_job(const config::Config& cfg, JobPlanning& plan) {
  return std::make_unique<CollectiveJob>(cfg, plan);
}

}  // namespace fabricsim::app
