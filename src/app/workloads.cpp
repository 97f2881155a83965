// The registry of workload kinds: one line per `workload.kind`.  A kind is
// a task-graph job (it may also be a [[jobs]] table; Job, jobs.hpp) or a
// workload of its own (Workload, workload.hpp).  How to add one:
// docs/architecture.md, "How to add a workload".
#include <string>

#include "fabricsim/util/error.hpp"
#include "jobs.hpp"
#include "workload.hpp"

namespace fabricsim::app {

using JobFactory = std::unique_ptr<Job> (*)(const config::Config&, JobPlanning&);
using RunFactory = std::unique_ptr<Workload> (*)(const config::Config&, net::Network&);

// The kinds' factories, each defined in its own file.
std::unique_ptr<Workload> make_traffic(const config::Config& cfg, net::Network& network);  // traffic_run.cpp
std::unique_ptr<Job> make_collective_job(const config::Config& cfg, JobPlanning& plan);    // jobs_collective.cpp
std::unique_ptr<Job> make_dnn_job(const config::Config& cfg, JobPlanning& plan);           // jobs_dnn.cpp
std::unique_ptr<Job> make_trace_job(const config::Config& cfg, JobPlanning& plan);         // jobs_trace.cpp
std::unique_ptr<Workload> make_llm_run(const config::Config& cfg, net::Network& network);  // llm_run.cpp

namespace {

struct WorkloadKind {
  const char* name;
  JobFactory job;  ///< a task-graph job, or
  RunFactory run;  ///< a workload of its own
};

const WorkloadKind* find_kind(const std::string& name) {
  static const WorkloadKind kinds[] = {
      {"traffic", nullptr, make_traffic},
      {"collective", make_collective_job, nullptr},
      {"dnn", make_dnn_job, nullptr},
      {"trace", make_trace_job, nullptr},
      {"llm_dp", nullptr, make_llm_run},
  };
  for (const auto& k : kinds)
    if (name == k.name) return &k;
  return nullptr;
}

}  // namespace

JobFactory job_factory(const std::string& kind) {
  const WorkloadKind* k = find_kind(kind);
  return k ? k->job : nullptr;
}

bool runs_jobs(const config::Config& cfg) {
  return cfg.job_count() > 0 || job_factory(cfg.get_string("workload.kind"));
}

std::unique_ptr<Workload> make_workload(const config::Config& cfg, net::Network& network, core::Simulator& sim,
                                        const par::Comm& comm) {
  const std::string& kind = cfg.get_string("workload.kind");
  // The path controllers plan the llm_dp workload's ring flows (its phases
  // are their triggers); another workload would join through the same
  // ctrl:: algorithms and a driver of its own.
  if (cfg.get_string("controller.algorithm") != "none" && (kind != "llm_dp" || cfg.job_count() > 0))
    throw util::ConfigError("controller.algorithm: plans the ring flows of workload.kind = \"llm_dp\" only (here \"" +
                            kind + "\"); set it to \"none\" or use routing.algorithm");
  if (runs_jobs(cfg)) {
    auto jobs = std::make_unique<JobSet>(cfg, network, sim, &comm);
    pin_allreduce_routes(cfg, *jobs, network);
    return jobs;
  }
  const WorkloadKind* k = find_kind(kind);
  if (k == nullptr || k->run == nullptr) throw util::ConfigError("workload.kind: unknown kind '" + kind + "'");
  return k->run(cfg, network);
}

}  // namespace fabricsim::app
