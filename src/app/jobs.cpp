#include "jobs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"

namespace fabricsim::app {

// The job kinds' factories, by workload.kind (workloads.cpp).
using JobFactory = std::unique_ptr<Job> (*)(const config::Config&, JobPlanning&);
JobFactory job_factory(const std::string& kind);

JobSet::JobSet(const config::Config& cfg, net::Network& network, core::Simulator& sim)
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
      const JobFactory make = job_factory(kind);
      if (make == nullptr)
        throw util::ConfigError("workload.kind: a [[jobs]] table runs a dnn, collective or trace job, not '" + kind +
                                "' (set kind in [workload] or in the table)");
      JobPlanning plan{*graph_, pool, static_cast<std::uint32_t>(j)};
      jobs_.push_back(make(c, plan));
    } catch (const util::ConfigError& e) {
      const std::string where = c.locate(e.what());
      throw util::ConfigError(tables ? fmt::format("{} (job {})", where, j) : where);
    }
  }
}

std::vector<workload::PlannedMessage> JobSet::planned() const {
  std::vector<workload::PlannedMessage> out;
  out.reserve(net_.messages().size());
  for (const auto& m : net_.messages()) out.push_back({m.src, m.dst, m.bytes, core::SimTime::zero()});
  return out;
}

void JobSet::start() { graph_->start(core::SimTime::zero()); }

bool JobSet::fills(Job::Table t) const {
  return std::any_of(jobs_.begin(), jobs_.end(), [t](const auto& j) { return (j->tables() & t) != 0; });
}

void JobSet::report(const par::Comm& comm, bool complete) {
  if (complete && comm.allreduce_sum(graph_->completed()) != comm.allreduce_sum(graph_->local_tasks()))
    throw util::UserError("internal check failed: the task graph did not complete");
  JobReports& out = reports_;
  for (std::size_t q = 0; q < workload::kDnnPhases - 1; ++q)  // all but the control joins
    out.dnn.phase_names.emplace_back(workload::to_string(static_cast<workload::DnnPhase>(q)));
  out.timeline.phase_names = out.dnn.phase_names;
  out.dnn.phase_ns.resize(out.dnn.phase_names.size());
  out.first_row.reserve(jobs_.size());
  const JobResults ctx{*graph_, comm, timeline_};
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    // Its first row of /collectives, or of /iterations.
    out.first_row.push_back((jobs_[j]->tables() & Job::kCollectives) ? out.collectives.job.size() : out.dnn.job.size());
    out.jobs.push_back(jobs_[j]->report(ctx, static_cast<std::uint32_t>(j), out));
  }
}

void JobSet::write(stats::H5Writer& writer, const par::Comm& comm) const {
  stats::write_jobs(writer, reports_.jobs, comm.is_root());
  if (fills(Job::kCollectives)) stats::write_collectives(writer, reports_.collectives, comm.is_root());
  if (fills(Job::kIterations)) stats::write_dnn(writer, reports_.dnn, comm.is_root());
  if (fills(Job::kTimeline) && timeline_) stats::write_timeline(writer, reports_.timeline);
}

void JobSet::print() const {
  const bool several = jobs_.size() > 1;
  for (std::size_t j = 0; j < jobs_.size(); ++j) jobs_[j]->print(reports_, static_cast<std::uint32_t>(j), several);
}

}  // namespace fabricsim::app
