#include "jobs.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"

namespace fabricsim::app {

// The job kinds' factories, by workload.kind (workloads.cpp).
using JobFactory = std::unique_ptr<Job> (*)(const config::Config&, JobPlanning&);
JobFactory job_factory(const std::string& kind);

namespace {

/// A network that only numbers messages: what a job is planned into when
/// it is checked alone before a queued run (nothing is ever posted).
class RecordOnly final : public net::NetworkModel {
 public:
  explicit RecordOnly(const net::NetworkParams& np) : np_(np) {}
  net::MessageId create(net::EndpointId src, net::EndpointId dst, std::uint64_t bytes, std::uint32_t tag) override {
    const auto id = static_cast<net::MessageId>(messages_.size());
    messages_.push_back(net::new_message(id, src, dst, bytes, tag, np_.seed, np_.packet_bytes - np_.header_bytes));
    return id;
  }
  void post(net::MessageId, core::SimTime) override { FABRICSIM_ASSERT(false, "a planning network posts nothing"); }
  std::vector<net::Message>& messages() override { return messages_; }
  void set_listener(net::MessageListener*) override {}
  const net::LinkStats& link_stats() const override { return stats_; }
  const net::NetworkTotals& totals() const override { return totals_; }
  void finish(core::SimTime) override {}

 private:
  net::NetworkParams np_;
  std::vector<net::Message> messages_;
  net::LinkStats stats_;
  net::NetworkTotals totals_;
};

class PlanningNetwork final : public net::Network {
 public:
  PlanningNetwork(const net::Topology& topo, const net::NetworkParams& np, core::Simulator& sim)
      : Network(topo, np, sim, std::make_unique<RecordOnly>(np)) {}
};

}  // namespace

std::unique_ptr<Job> JobSet::make_job(std::size_t j, workload::TaskGraph& graph, workload::EndpointPool& pool,
                                      const config::Config& c) const {
  try {
    const std::string& kind = c.get_string("workload.kind");
    const JobFactory make = job_factory(kind);
    if (make == nullptr)
      throw util::ConfigError("workload.kind: a [[jobs]] table runs a dnn, collective or trace job, not '" + kind +
                              "' (set kind in [workload] or in the table)");
    if (queued_ && c.get_string("workload.placement") == "list")
      throw util::ConfigError("workload.placement: a queued job (workload.queue = \"fifo\") takes free endpoints "
                              "when it is admitted; `list` names fixed ones");
    JobPlanning plan{graph, pool, static_cast<std::uint32_t>(j)};
    return make(c, plan);
  } catch (const util::ConfigError& e) {
    const std::string where = c.locate(e.what());
    throw util::ConfigError(tables_ ? fmt::format("{} (job {})", where, j) : where);
  }
}

JobSet::JobSet(const config::Config& cfg, net::Network& network, core::Simulator& sim)
    : net_(network),
      sim_(sim),
      timeline_(cfg.get_bool("output.timeline")),
      queued_(cfg.get_string("workload.queue") == "fifo"),
      cfg_(cfg) {
  tables_ = cfg.job_count() > 0;
  const auto endpoints = static_cast<std::uint32_t>(network.topology().endpoint_count());
  const std::size_t n = job_count();
  if (!queued_) {
    graph_ = std::make_unique<workload::TaskGraph>(network, sim);
    // share_endpoints: every job places itself on the whole fabric (tenants
    // on the same accelerators, their traffic sharing links and NICs).
    const bool shared = cfg.get_bool("workload.share_endpoints");
    workload::EndpointPool pool(endpoints);
    for (std::size_t j = 0; j < n; ++j) {
      if (shared) pool = workload::EndpointPool(endpoints);
      jobs_.push_back(make_job(j, *graph_, pool, job_config(j)));
    }
    return;
  }
  if (cfg.get_bool("workload.share_endpoints"))
    throw util::ConfigError("workload.share_endpoints: a queued run (workload.queue = \"fifo\") admits jobs onto free "
                            "endpoints; sharing them is for workload.queue = \"none\"");
  // A queued run: each job planned alone on an empty fabric (its errors
  // found before the run, its size known), then dropped.  Jobs that differ
  // only in their arrival are planned once (a job mix repeats a few
  // shapes: 155 in the 1,000 jobs of inputs/leaf_spine_2048_job_mix.toml).
  core::Simulator scratch_sim(network.topology().node_count());
  const auto nothing_runs = scratch_sim.bind([](void*, const core::Event&) {}, nullptr);
  struct Shape {
    std::uint32_t size = 0;
    unsigned tables = 0;
  };
  std::unordered_map<std::string, Shape> shapes;
  for (std::size_t j = 0; j < n; ++j) {
    const config::Config job = job_config(j);
    config::Config shape = job;
    shape.set("workload.start_ns", config::Value(0.0), "job shape");
    const auto [it, fresh] = shapes.try_emplace(shape.to_toml());
    if (fresh) {
      PlanningNetwork scratch(network.topology(), network.params(), scratch_sim);
      workload::TaskGraph g(scratch, scratch_sim, nothing_runs, 0);
      workload::EndpointPool pool(endpoints);
      it->second.tables = make_job(j, g, pool, job)->tables();
      it->second.size = static_cast<std::uint32_t>(pool.take_mark());
    }
    size_.push_back(it->second.size);
    tables_of_.push_back(it->second.tables);
    arrival_ps_.push_back(core::SimTime::from_ns_f(job.get_float("workload.start_ns")).ps());
    kinds_.push_back(job.get_string("workload.kind"));
  }
  jobs_.resize(n);
  graphs_.resize(n);
  endpoints_.resize(n);
  admitted_ps_.assign(n, -1);
  done_ps_.assign(n, -1);
  finished_ranks_.assign(n, 0);
  local_done_ps_.assign(n, -1);
  ended_ps_.assign(n, -1);
  by_arrival_.resize(n);
  for (std::uint32_t j = 0; j < n; ++j) by_arrival_[j] = j;
  std::stable_sort(by_arrival_.begin(), by_arrival_.end(),
                   [this](std::uint32_t a, std::uint32_t b) { return arrival_ps_[a] < arrival_ps_[b]; });
  delay_ = core::SimTime::from_ns_f(cfg.get_float("engine.control_latency_ns"));
  pool_ = std::make_unique<workload::EndpointPool>(endpoints);
  graph_binding_ = sim.bind(core::Simulator::handler<JobSet, &JobSet::on_graph_event>(), this);
}

std::vector<workload::PlannedMessage> JobSet::planned() const {
  std::vector<workload::PlannedMessage> out;
  out.reserve(net_.messages().size());
  for (const auto& m : net_.messages()) out.push_back({m.src, m.dst, m.bytes, core::SimTime::zero()});
  return out;
}

void JobSet::start() {
  // (A queue starts with the engine: GlobalSteps::start.)
  if (!queued_) graph_->start(core::SimTime::zero());
}

// The cluster queue decides at global steps (par/conservative.hpp), D =
// engine.control_latency_ns after what calls for a decision: a job's
// arrival a (every rank requests a + D up front), and a job's end on a
// rank, f_r (that rank requests f_r + D).  At a step at t every rank
// reports the jobs whose tasks on it have all completed since its last
// report, with the time; every rank keeps the same table of them.  The
// decision at t reads only what was so by t - D: arrivals with a + D <= t,
// ends with max_r f_r + D <= t (a job's end is its last rank's).  A step
// exists at each such time (the last rank requested it), and on one rank
// those are the only steps; the others a partitioned run takes (ranks that
// finish a job's part early) find the state the last step left and decide
// nothing new.  So the same jobs start at the same times on any rank count.
void JobSet::start(par::RecordExchange& requests) {
  requests_ = &requests;
  for (std::size_t j = 0; j < job_count(); ++j)
    requests.request_step(core::SimTime::from_ps(arrival_ps_[j]) + delay_);
}

std::vector<std::int64_t> JobSet::contribute(core::SimTime) {
  std::vector<std::int64_t> out;
  out.reserve(2 * newly_done_.size());
  for (const std::uint32_t j : newly_done_) {
    out.push_back(j);
    out.push_back(local_done_ps_[j]);
  }
  newly_done_.clear();
  return out;
}

void JobSet::apply(core::SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) {
  const auto ranks = static_cast<std::uint32_t>(counts.size());
  // The reports (the order does not matter: a count and a maximum).
  for (std::size_t k = 0; k + 1 < all.size(); k += 2) {
    const auto j = static_cast<std::uint32_t>(all[k]);
    ended_ps_[j] = std::max(ended_ps_[j], all[k + 1]);
    if (++finished_ranks_[j] == ranks) ending_.push_back(j);
  }
  const std::int64_t known = t.ps() - delay_.ps();  // what the scheduler knows of at t
  // Jobs that ended by then free their endpoints, by end time, then index.
  std::sort(ending_.begin(), ending_.end(), [this](std::uint32_t a, std::uint32_t b) {
    return std::pair(ended_ps_[a], a) < std::pair(ended_ps_[b], b);
  });
  std::size_t kept = 0;
  for (const std::uint32_t j : ending_) {
    if (ended_ps_[j] > known) {
      ending_[kept++] = j;
      continue;
    }
    for (net::EndpointId e : endpoints_[j]) pool_->release(e);
  }
  ending_.resize(kept);
  // Jobs that arrived by then join the queue, in arrival order.
  while (arrived_ < by_arrival_.size() && arrival_ps_[by_arrival_[arrived_]] <= known)
    waiting_.push_back(by_arrival_[arrived_++]);
  admit(t);
}

void JobSet::admit(core::SimTime now) {
  // First come, first served: the oldest waiting job starts as soon as
  // enough endpoints are free; the ones behind it wait for it.
  while (waiting_head_ < waiting_.size() && pool_->free_count() >= size_[waiting_[waiting_head_]]) {
    const std::uint32_t j = waiting_[waiting_head_++];
    config::Config c = job_config(j);
    c.set("workload.start_ns", config::Value(now.ns()), "admitted by workload.queue");
    graphs_[j] = std::make_unique<workload::TaskGraph>(net_, sim_, graph_binding_, j);
    const std::size_t mark = pool_->take_mark();
    jobs_[j] = make_job(j, *graphs_[j], *pool_, c);
    endpoints_[j] = pool_->taken_since(mark);
    job_of_message_.resize(net_.messages().size(), j);
    net_.set_listener(this);
    admitted_ps_[j] = now.ps();
    // This rank's part done: reported at the next step; the step that
    // decides on it requested (an empty job: by every rank).
    const bool empty = graphs_[j]->size() == 0;
    graphs_[j]->set_on_done([this, j, empty](core::SimTime at) {
      local_done_ps_[j] = at.ps();
      newly_done_.push_back(j);
      if (empty || graphs_[j]->local_tasks() > 0) requests_->request_step(at + delay_);
    });
    graphs_[j]->start(now);
  }
}

void JobSet::on_graph_event(const core::Event& ev) {
  graphs_[workload::TaskGraph::tag(ev)]->handle_event(ev);
}

void JobSet::on_message_delivered(net::MessageId id) { graphs_[job_of_message_[id]]->on_message_delivered(id); }
void JobSet::on_message_sent(net::MessageId id) { graphs_[job_of_message_[id]]->on_message_sent(id); }

bool JobSet::fills(Job::Table t) const {
  // (A queued job never admitted, engine.end_ns, has no Job: its tables are
  // known from the check before the run, so the file has the same tables.)
  if (queued_) return std::any_of(tables_of_.begin(), tables_of_.end(), [t](unsigned x) { return (x & t) != 0; });
  return std::any_of(jobs_.begin(), jobs_.end(), [t](const auto& j) { return (j->tables() & t) != 0; });
}

void JobSet::report(const par::Comm& comm, bool complete) {
  if (complete) {
    std::uint64_t done = 0, tasks = 0;
    if (graph_) {
      done = graph_->completed();
      tasks = graph_->local_tasks();
    }
    for (std::size_t j = 0; j < graphs_.size(); ++j) {
      if (!graphs_[j]) {
        ++tasks;  // (never admitted: cannot be complete)
        continue;
      }
      done += graphs_[j]->completed();
      tasks += graphs_[j]->local_tasks();
    }
    if (comm.allreduce_sum(done) != comm.allreduce_sum(tasks))
      throw util::UserError("internal check failed: the task graph did not complete");
  }
  if (queued_) {
    // A job ended when its last rank's part did (also where no step
    // decided on it before engine.end_ns).
    std::vector<std::int64_t> first = local_done_ps_, last = local_done_ps_;
    comm.allreduce_min(first);
    comm.allreduce_max(last);
    for (std::size_t j = 0; j < done_ps_.size(); ++j) done_ps_[j] = first[j] < 0 ? -1 : last[j];
  }
  JobReports& out = reports_;
  for (std::size_t q = 0; q < workload::kDnnPhases - 1; ++q)  // all but the control joins
    out.dnn.phase_names.emplace_back(workload::to_string(static_cast<workload::DnnPhase>(q)));
  out.timeline.phase_names = out.dnn.phase_names;
  out.dnn.phase_ns.resize(out.dnn.phase_names.size());
  out.first_row.reserve(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (!jobs_[j]) {  // queued, never admitted (engine.end_ns)
      out.first_row.push_back(out.dnn.job.size());
      stats::JobRow row;
      row.kind = kinds_[j];
      row.endpoints = size_[j];
      row.start_ns = -1;
      row.mean_time_ns = std::numeric_limits<double>::quiet_NaN();
      row.arrival_ns = static_cast<double>(arrival_ps_[j]) / 1000.0;
      out.jobs.push_back(row);
      continue;
    }
    const JobResults ctx{queued_ ? *graphs_[j] : *graph_, comm, timeline_};
    // Its first row of /collectives, or of /iterations.
    out.first_row.push_back((jobs_[j]->tables() & Job::kCollectives) ? out.collectives.job.size() : out.dnn.job.size());
    stats::JobRow row = jobs_[j]->report(ctx, static_cast<std::uint32_t>(j), out);
    if (queued_) {
      row.arrival_ns = static_cast<double>(arrival_ps_[j]) / 1000.0;
      row.end_ns = done_ps_[j] < 0 ? -1.0 : static_cast<double>(done_ps_[j]) / 1000.0;
    } else {
      row.arrival_ns = row.start_ns;
    }
    out.jobs.push_back(row);
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
  // A queue of many jobs: its summary, and each job's table only for a few.
  if (queued_) {
    std::size_t admitted = 0, finished = 0;
    double wait = 0, jct = 0, last = 0;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      if (admitted_ps_[j] < 0) continue;
      ++admitted;
      wait += static_cast<double>(admitted_ps_[j] - arrival_ps_[j]) / 1e3;
      if (done_ps_[j] < 0) continue;
      ++finished;
      jct += static_cast<double>(done_ps_[j] - arrival_ps_[j]) / 1e3;
      last = std::max(last, static_cast<double>(done_ps_[j]) / 1e3);
    }
    fmt::print("# cluster queue (fifo): {} jobs, {} admitted, {} finished; mean wait {:.3f} ms, mean completion "
               "(wait + run) {:.3f} ms, last job done at {:.3f} ms (/jobs: arrival_ns, start_ns, end_ns)\n",
               jobs_.size(), admitted, finished, admitted ? wait / static_cast<double>(admitted) / 1e6 : 0.0,
               finished ? jct / static_cast<double>(finished) / 1e6 : 0.0, last / 1e6);
    if (jobs_.size() > 16) return;
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (jobs_[j]) jobs_[j]->print(reports_, static_cast<std::uint32_t>(j), several);
}

}  // namespace fabricsim::app
