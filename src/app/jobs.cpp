#include "jobs.hpp"

#include <algorithm>
#include <limits>
#include <cstdint>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"
#include "scenario.hpp"

namespace fabricsim::app {

bool runs_jobs(const config::Config& cfg) {
  const std::string& kind = cfg.get_string("workload.kind");
  return cfg.job_count() > 0 || kind == "dnn" || kind == "collective" || kind == "trace";
}

RunJobs::RunJobs(const config::Config& cfg, net::Network& network, core::Simulator& sim)
    : net_(network),
      timeline_(cfg.get_bool("output.timeline")),
      graph_(std::make_unique<workload::TaskGraph>(network, sim)) {
  const bool tables = cfg.job_count() > 0;
  const std::vector<config::Config> cfgs = tables ? cfg.jobs() : std::vector<config::Config>{cfg};
  workload::EndpointPool pool(static_cast<std::uint32_t>(network.topology().endpoint_count()));
  for (std::size_t j = 0; j < cfgs.size(); ++j) {
    const config::Config& c = cfgs[j];
    try {
      const std::string& kind = c.get_string("workload.kind");
      Job job;
      if (kind == "dnn") {
        job.dnn = std::make_unique<workload::DnnJob>(*graph_, dnn_params(c, pool), static_cast<std::uint32_t>(j));
      } else if (kind == "collective") {
        const workload::CollectiveParams p = collective_params(c, &pool);
        if (pool.free_count() == 0) throw util::ConfigError("workload.ranks: no endpoints are left for this job");
        job.coll = std::make_unique<workload::CollectiveBenchmark>(*graph_, p, pool, static_cast<std::uint32_t>(j));
      } else if (kind == "trace") {
        job.trace = std::make_unique<workload::TraceJob>(*graph_, trace_params(c, pool), static_cast<std::uint32_t>(j));
      } else {
        throw util::ConfigError("workload.kind: a [[jobs]] table runs a dnn, collective or trace job, not '" + kind +
                                "' (set kind in [workload] or in the table)");
      }
      jobs_.push_back(std::move(job));
    } catch (const util::ConfigError& e) {
      const std::string where = c.locate(e.what());
      throw util::ConfigError(tables ? fmt::format("{} (job {})", where, j) : where);
    }
  }
}

void RunJobs::start() { graph_->start(core::SimTime::zero()); }

bool RunJobs::has_dnn() const {
  return std::any_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.dnn != nullptr; });
}

bool RunJobs::has_iterations() const {
  return std::any_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.dnn != nullptr || j.trace != nullptr; });
}

bool RunJobs::has_collective() const {
  return std::any_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.coll != nullptr; });
}

RunJobs::Reports RunJobs::report(const par::Comm& comm, bool complete) const {
  Reports out;
  if (complete && comm.allreduce_sum(graph_->completed()) != comm.allreduce_sum(graph_->local_tasks()))
    throw util::UserError("internal check failed: the task graph did not complete");
  const net::Topology& topo = net_.topology();
  for (std::size_t q = 0; q < workload::kDnnPhases - 1; ++q)  // all but the control joins
    out.dnn.phase_names.emplace_back(workload::to_string(static_cast<workload::DnnPhase>(q)));
  out.timeline.phase_names = out.dnn.phase_names;
  out.dnn.phase_ns.resize(out.dnn.phase_names.size());
  out.first_row.reserve(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    stats::JobRow row;
    // Its first row of /iterations (dnn, trace) or /collectives.
    out.first_row.push_back(jobs_[j].coll ? out.collectives.job.size() : out.dnn.job.size());
    if (const auto* dnn = jobs_[j].dnn.get()) {
      auto partial = dnn->partial(*graph_);
      comm.allreduce_max(partial.times);
      const auto& jp = dnn->params();
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
      auto& d = out.dnn;
      for (const auto& it : dnn->results(partial, *graph_)) {
        d.job.push_back(static_cast<std::uint32_t>(j));
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
          ++timed;
        }
      }
      // Over the timed iterations that finished; NaN if none did.
      row.mean_time_ns = timed > 0 ? row.mean_time_ns / timed : std::numeric_limits<double>::quiet_NaN();
      if (timeline_) {
        workload::DnnJob::Timeline t;
        dnn->timeline(*graph_, partial, out.timeline.total, comm.is_root(), t);
        out.timeline.total += dnn->timeline_rows(*graph_);
        auto& tl = out.timeline;
        tl.rows.insert(tl.rows.end(), t.row.begin(), t.row.end());
        tl.job.insert(tl.job.end(), t.job.begin(), t.job.end());
        tl.endpoint.insert(tl.endpoint.end(), t.endpoint.begin(), t.endpoint.end());
        tl.iteration.insert(tl.iteration.end(), t.iteration.begin(), t.iteration.end());
        tl.phase.insert(tl.phase.end(), t.phase.begin(), t.phase.end());
        tl.start_ns.insert(tl.start_ns.end(), t.start_ns.begin(), t.start_ns.end());
        tl.end_ns.insert(tl.end_ns.end(), t.end_ns.begin(), t.end_ns.end());
      }
    } else if (const auto* tj = jobs_[j].trace.get()) {
      auto partial = tj->partial(*graph_);
      comm.allreduce_max(partial.times);
      const auto res = tj->result(partial, *graph_);
      row.kind = "trace";
      row.model = tj->params().trace.name;
      row.endpoints = static_cast<std::uint32_t>(tj->params().endpoints.size());
      row.start_ns = res.start_ns;
      row.mean_time_ns = res.time_ns;
      auto& d = out.dnn;
      d.job.push_back(static_cast<std::uint32_t>(j));
      d.iteration.push_back(0);
      d.start_ns.push_back(res.start_ns);
      d.end_ns.push_back(res.end_ns);
      d.time_ns.push_back(res.time_ns);
      d.compute_ns.push_back(res.compute_ns);
      d.exposed_comm_ns.push_back(res.time_ns - res.compute_ns);
      d.finished.push_back(res.finished ? 1 : 0);
      for (auto& ph : d.phase_ns) ph.push_back(0.0);  // (a trace's nodes carry no phase)
    } else {
      // Each operation instance from its first post (known where its sender
      // runs) to its last arrival (where its receiver runs).
      const auto& bench = *jobs_[j].coll;
      const auto& inst = bench.instances();
      std::vector<std::int64_t> first(inst.size(), INT64_MAX), last(inst.size(), INT64_MIN);
      for (std::size_t i = 0; i < inst.size(); ++i)
        for (net::MessageId m = inst[i].first; m < inst[i].last; ++m) {
          const auto& msg = net_.messages()[m];
          if (net_.owns(topo.endpoint_node(msg.src))) first[i] = std::min(first[i], msg.post_time.ps());
          if (net_.owns(topo.endpoint_node(msg.dst))) last[i] = std::max(last[i], msg.end_time.ps());
        }
      comm.allreduce_min(first);
      comm.allreduce_max(last);  // SimTime::max(): some message never arrived (or was never posted)
      const auto& cp = bench.params();
      const auto n = static_cast<std::uint32_t>(bench.ranks().size());
      row.kind = "collective";
      row.op = workload::to_string(cp.op);
      row.algorithm = cp.algorithm;
      row.endpoints = n;
      row.start_ns = cp.start.ns();
      auto& c = out.collectives;
      for (std::size_t i = 0; i < inst.size(); ++i) {
        // Unfinished (engine.end_ns stopped it): a flag, end -1 and no bandwidth.
        const bool done = last[i] != INT64_MAX && last[i] != INT64_MIN && first[i] != INT64_MAX;
        const double t_ns = static_cast<double>(last[i] - first[i]) / 1000.0;
        const double alg = done ? static_cast<double>(inst[i].bytes) * 8.0 / t_ns  // Gb/s
                                : std::numeric_limits<double>::quiet_NaN();
        c.job.push_back(static_cast<std::uint32_t>(j));
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
      }
    }
    out.jobs.push_back(row);
  }
  return out;
}

void RunJobs::print(const Reports& r) const {
  const bool several = jobs_.size() > 1;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const auto& jr = r.jobs[j];
    // (This job's rows are the ones from first_row[j] on: scanning every
    // row per job was quadratic in the number of jobs.)
    if (jobs_[j].trace) {
      const auto& d = r.dnn;
      for (std::size_t i = r.first_row[j]; i < d.job.size() && d.job[i] == j; ++i)
        fmt::print(
            "\n# job {}: trace {} on {} endpoints: {:.3f} us, compute {:.3f} us (the busiest rank), exposed "
            "communication {:.3f} us\n",
            j, jr.model.empty() ? "(unnamed)" : jr.model, jr.endpoints, d.time_ns[i] / 1e3, d.compute_ns[i] / 1e3,
            d.exposed_comm_ns[i] / 1e3);
      continue;
    }
    if (jobs_[j].dnn) {
      // Per iteration: time, compute, exposed communication, and where the
      // time of the endpoint with the most compute went.
      const auto& d = r.dnn;
      fmt::print("\n# job {}: {} on {} endpoints (D {} x P {} x O {}, E {}), {} micro-batches, {}; mean "
                 "iteration {:.3f} ms\n",
                 j, jr.model, jr.endpoints, jr.data_parallel, jr.pipeline_parallel, jr.tensor_parallel,
                 jr.expert_parallel, jr.micro_batches, jr.schedule, jr.mean_time_ns / 1e6);
      fmt::print("# {:>5} {:>11} {:>11} {:>11}", "iter", "time (us)", "compute", "exposed");
      for (const auto& name : d.phase_names) fmt::print(" {:>11}", name.substr(0, 11));
      fmt::print("\n");
      for (std::size_t i = r.first_row[j]; i < d.job.size() && d.job[i] == j; ++i) {
        fmt::print("  {:>5} {:>11.2f} {:>11.2f} {:>11.2f}", d.iteration[i], d.time_ns[i] / 1e3, d.compute_ns[i] / 1e3,
                   d.exposed_comm_ns[i] / 1e3);
        for (const auto& ph : d.phase_ns) fmt::print(" {:>11.2f}", ph[i] / 1e3);
        fmt::print("\n");
      }
      continue;
    }
    // NCCL-tests layout: per size, the mean over the timed iterations.
    const auto& bench = *jobs_[j].coll;
    const auto& cp = bench.params();
    const auto& c = r.collectives;
    fmt::print("\n# {}{} ({}), {} ranks ({} placement), {} warm-up + {} timed iterations per size\n",
               several ? fmt::format("job {}: ", j) : std::string(), jr.op, jr.algorithm, jr.endpoints, cp.placement,
               cp.warmup, cp.iterations);
    fmt::print("# {:>12} {:>12} {:>6} {:>10} {:>9} {:>9}\n", "size", "count", "type", "time", "algbw", "busbw");
    fmt::print("# {:>12} {:>12} {:>6} {:>10} {:>9} {:>9}\n", "(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)");
    // This job's rows of the report, in instance order.
    const std::size_t row0 = r.first_row[j];
    for (std::size_t si = 0; si < cp.sizes.size(); ++si) {
      double t_ns = 0;
      int k = 0;
      for (std::size_t i = 0; i < bench.instances().size(); ++i)
        if (bench.instances()[i].size_index == si && c.iteration[row0 + i] >= 0 && c.finished[row0 + i]) {
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
}

}  // namespace fabricsim::app
