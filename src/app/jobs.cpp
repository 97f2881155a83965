#include "jobs.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"
#include "memory.hpp"
#include "scenario.hpp"
#include "topology_kinds.hpp"

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
  void create(net::MessageId id, net::EndpointId src, net::EndpointId dst, std::uint64_t bytes,
              std::uint32_t /*tag*/) override {
    net::place_message(messages_, id,
                       net::new_message(id, src, dst, bytes, np_.seed, np_.packet_bytes - np_.header_bytes));
  }
  void set_aside(std::size_t count) override { messages_.resize(messages_.size() + count, net::blank_message()); }
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
    if (kind == "trace" && c.get_bool("workload.trace_stream") && (queued_ || job_count() > 1))
      throw util::ConfigError("workload.trace_stream: a streamed trace is the run's only job (it feeds the task graph "
                              "as it runs; the other jobs are planned whole before it starts)");
    JobPlanning plan{graph, pool, static_cast<std::uint32_t>(j), comm_};
    return make(c, plan);
  } catch (const util::ConfigError& e) {
    const std::string where = c.locate(e.what());
    throw util::ConfigError(tables_ ? fmt::format("{} (job {})", where, j) : where);
  }
}

JobSet::JobSet(const config::Config& cfg, net::Network& network, core::Simulator& sim, const par::Comm* comm)
    : comm_(comm),
      net_(network),
      sim_(sim),
      timeline_(cfg.get_bool("output.timeline")),
      flows_(cfg.get_bool("output.flows")),
      queued_(cfg.get_string("workload.queue") != "none"),
      cfg_(cfg) {
  tables_ = cfg.job_count() > 0;
  const auto endpoints = static_cast<std::uint32_t>(network.topology().endpoint_count());
  const std::size_t n = job_count();
  if (!queued_ && cfg.get_string("workload.scheduler") != "free")
    throw util::ConfigError("workload.scheduler: places the jobs of a cluster queue; set workload.queue (fifo, edf or "
                            "fewest_gpus_first)");
  if (!queued_) {
    graph_ = std::make_unique<workload::TaskGraph>(network, sim);
    // share_endpoints: every job places itself on the whole fabric (tenants
    // on the same accelerators, their traffic sharing links and NICs).
    const bool shared = cfg.get_bool("workload.share_endpoints");
    workload::EndpointPool pool(endpoints);
    for (std::size_t j = 0; j < n; ++j) {
      if (shared) pool = workload::EndpointPool(endpoints);
      first_message_.push_back(network.message_count());
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
    const double deadline = job.get_float("workload.deadline_ns");
    if (deadline > 0 && deadline <= job.get_float("workload.start_ns")) {
      const std::string what = fmt::format("workload.deadline_ns: {} ns is not after the job's arrival (start_ns {} ns)",
                                           deadline, job.get_float("workload.start_ns"));
      throw util::ConfigError(tables_ ? fmt::format("{} (job {})", job.locate(what), j) : job.locate(what));
    }
    deadline_ps_.push_back(deadline > 0 ? core::SimTime::from_ns_f(deadline).ps() : -1);
  }
  const std::string& queue = cfg.get_string("workload.queue");
  order_ = queue == "edf" ? Order::Edf : queue == "fewest_gpus_first" ? Order::FewestGpus : Order::Fifo;
  const std::string& scheduler = cfg.get_string("workload.scheduler");
  scheduler_ = scheduler == "vclos"          ? Scheduler::VClos
               : scheduler == "ocs_vclos"    ? Scheduler::OcsVClos
               : scheduler == "whole_server" ? Scheduler::WholeServer
                                             : Scheduler::Free;
  allocation_.resize(n);
  reserved_.assign(n, 0);
  refused_.assign(n, {0, 0});
  if (scheduler_ != Scheduler::Free) setup_cluster(cfg);
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
  out.reserve(net_.message_count());
  for_each_planned([&](const workload::PlannedMessage& m) { out.push_back(m); });
  return out;
}

void JobSet::for_each_planned(const std::function<void(const workload::PlannedMessage&)>& f) const {
  // (Through message(id): a streamed trace's records on several processes
  // are described, not made.)
  const std::size_t n = net_.message_count();
  for (std::size_t id = 0; id < n; ++id) {
    const net::Message m = net_.message(static_cast<net::MessageId>(id));
    f({m.src, m.dst, m.bytes, core::SimTime::zero()});
  }
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
    if (cluster_ && allocation_[j]) cluster_->release(*allocation_[j]);
    if (ocs_ && allocation_[j]) ocs_->release(*allocation_[j]);
    changed_ = true;
  }
  ending_.resize(kept);
  // Jobs that arrived by then join the queue, in its order.
  const std::uint32_t head = waiting_.empty() ? UINT32_MAX : std::get<2>(*waiting_.begin());
  while (arrived_ < by_arrival_.size() && arrival_ps_[by_arrival_[arrived_]] <= known) {
    const std::uint32_t j = by_arrival_[arrived_++];
    std::int64_t key = 0;
    if (order_ == Order::Edf) key = deadline_ps_[j] < 0 ? std::numeric_limits<std::int64_t>::max() : deadline_ps_[j];
    if (order_ == Order::FewestGpus) key = size_[j];
    waiting_.emplace(key, arrival_ps_[j], j);
  }
  if (!waiting_.empty() && std::get<2>(*waiting_.begin()) != head) changed_ = true;
  // Decide only when the cluster (a release) or the head of the queue
  // changed: a partitioned run takes more steps (ranks that finish a job's
  // part early), and a refusal is counted once per such change, the same
  // on any rank count (an arrival behind a blocked head changes nothing).
  if (changed_) admit(t);
  changed_ = false;
}

void JobSet::setup_cluster(const config::Config& cfg) {
  const net::Topology& topo = net_.topology();
  const TopologyKind& kind = topology_kind(cfg.get_string("topology.kind"));
  const std::uint32_t T = kind.endpoints_per_server ? kind.endpoints_per_server(cfg) : 1;
  if (topo.kind == "ideal_switch") {
    // Best: one crossbar, i.e. one leaf of every server and no spine links.
    if (scheduler_ == Scheduler::VClos)
      throw util::ConfigError("workload.scheduler: vclos builds virtual Clos networks on leaves and spines; the ideal "
                              "switch (Best) has none: place by whole_server");
    ctrl::ClusterShape shape;
    shape.leaves = 1;
    shape.spines = 1;
    shape.links = {0};
    shape.gpus_per_server = T;
    shape.servers_per_leaf = static_cast<std::uint32_t>(topo.endpoint_count()) / T;
    gpu_endpoint_.resize(topo.endpoint_count());
    for (std::uint32_t e = 0; e < gpu_endpoint_.size(); ++e) gpu_endpoint_[e] = e;
    cluster_ = std::make_unique<ctrl::ClusterState>(std::move(shape));
    check_fits(cfg);
    return;
  }
  std::vector<std::vector<net::EndpointId>> under;  // endpoints per leaf, ascending
  ctrl::ClusterShape shape;
  if (scheduler_ == Scheduler::OcsVClos) {
    ocs_links_ = ocs_links(cfg, topo);
    if (!ocs_links_)
      throw util::ConfigError("workload.scheduler: ocs_vclos rewires an optical circuit layer between leaves and "
                              "spines: set topology.ocs_switches on a leaf_spine");
    if (cfg.get_string("network.model") == "analytic")
      throw util::ConfigError("workload.scheduler: ocs_vclos switches circuits during the run, which the analytic "
                              "model cannot (a message's path is fixed as it starts): use network.model = \"flow\" "
                              "or \"packet\"");
    const ctrl::OcsShape& o = ocs_links_->shape;
    ocs_ = std::make_unique<ctrl::OcsState>(o);
    ocs_options_.max_nodes = static_cast<std::uint64_t>(cfg.get_int("workload.ocs_max_nodes"));
    ocs_options_.whole_servers = cfg.get_bool("workload.ocs_whole_servers");
    reconfig_ = core::SimTime::from_ns_f(cfg.get_float("workload.ocs_reconfig_ns"));
    // Each endpoint's leaf, by its NIC cable (the builder's numbering:
    // leaves follow the endpoints).
    const auto first_leaf = static_cast<net::NodeId>(topo.endpoint_count());
    under.resize(o.leaves);
    leaf_of_.resize(topo.endpoint_count());
    host_up_.resize(topo.endpoint_count());
    for (net::EndpointId e = 0; e < topo.endpoint_count(); ++e) {
      for (const net::LinkId l : topo.node(topo.endpoint_node(e)).out) {
        const net::NodeId leaf = topo.link(l).dst;
        if (topo.link(l).cls != net::LinkClass::Host || leaf < first_leaf || leaf >= first_leaf + o.leaves) continue;
        leaf_of_[e] = leaf - first_leaf;
        host_up_[e] = l;
      }
      under[leaf_of_[e]].push_back(e);
    }
    shape.leaves = o.leaves;
    shape.spines = o.spines;
  } else {
    fabric_ = std::make_unique<ctrl::TwoTierFabric>(topo, "workload.scheduler");
    under = fabric_->endpoints_of_tors();
    shape.leaves = fabric_->tors();
    shape.spines = fabric_->spines();
  }
  shape.gpus_per_server = T;
  shape.servers_per_leaf = static_cast<std::uint32_t>(under[0].size() / T);
  gpu_endpoint_.assign(topo.endpoint_count(), 0);
  for (std::uint32_t t = 0; t < shape.leaves; ++t) {
    if (under[t].size() != std::size_t{shape.servers_per_leaf} * T || under[t].empty())
      throw util::ConfigError(fmt::format("workload.scheduler: every leaf needs the same number of whole servers of "
                                          "{} GPUs; leaf {} has {} endpoints, leaf 0 {}",
                                          T, t, under[t].size(), under[0].size()));
    for (std::size_t i = 0; i < under[t].size(); ++i) {
      const net::EndpointId e = under[t][i];
      if (e / T != under[t][i - i % T] / T || e % T != i % T)
        throw util::ConfigError("workload.scheduler: places whole servers under leaves, but the GPUs of server " +
                                std::to_string(e / T) + " hang off different leaves (topology.rail_optimized)");
      gpu_endpoint_[(t * shape.servers_per_leaf + i / T) * T + i % T] = e;
    }
  }
  shape.links.resize(std::size_t{shape.leaves} * shape.spines);
  for (std::uint32_t t = 0; t < shape.leaves; ++t)
    for (std::uint32_t m = 0; m < shape.spines; ++m)  // (OCS-vClos books circuits in its own state)
      shape.links[std::size_t{t} * shape.spines + m] = !fabric_ || fabric_->up(t, m) != net::kNoLink ? 1u : 0u;
  cluster_ = std::make_unique<ctrl::ClusterState>(std::move(shape));
  check_fits(cfg);
}

void JobSet::check_fits(const config::Config& cfg) {
  vclos_.solver = cfg.get_string("workload.vclos_solver") == "ilp" ? ctrl::VClosSolver::Ilp : ctrl::VClosSolver::Search;
  vclos_.ilp_max_nodes = static_cast<std::uint64_t>(cfg.get_int("workload.vclos_ilp_max_nodes"));
  round_pow2_ = cfg.get_bool("workload.vclos_round_pow2");
  const std::uint32_t T = cluster_->shape().gpus_per_server;
  // Every job must fit the empty cluster as the scheduler places it.
  const ctrl::ClusterState empty(cluster_->shape());
  const std::unique_ptr<ctrl::OcsState> dark = ocs_ ? std::make_unique<ctrl::OcsState>(ocs_->shape()) : nullptr;
  std::unordered_map<std::uint32_t, bool> fits;
  for (std::size_t j = 0; j < size_.size(); ++j) {
    const std::uint32_t n = wanted(static_cast<std::uint32_t>(j));
    const auto [it, fresh] = fits.try_emplace(n, false);
    if (fresh)
      it->second = (scheduler_ == Scheduler::VClos      ? ctrl::place_vclos(empty, n, vclos_)
                    : scheduler_ == Scheduler::OcsVClos ? ctrl::place_ocs_vclos(empty, *dark, n, ocs_options_)
                                                        : ctrl::place_whole_server(empty, n))
                       .allocation.has_value();
    if (!it->second) {
      const std::string what = fmt::format(
          "workload.scheduler: the job needs {} GPUs{}, which {} cannot place even on the empty cluster ({} leaves "
          "of {} servers of {} GPUs)",
          size_[j], n != size_[j] ? fmt::format(" (rounded up to {}, a power of two)", n) : std::string(),
          cfg.get_string("workload.scheduler"), cluster_->shape().leaves, cluster_->shape().servers_per_leaf, T);
      throw util::ConfigError(tables_ ? fmt::format("{} (job {})", job_config(j).locate(what), j) : what);
    }
  }
}

std::uint32_t JobSet::wanted(std::uint32_t j) const {
  std::uint32_t n = size_[j];
  if ((scheduler_ == Scheduler::VClos || scheduler_ == Scheduler::OcsVClos) && round_pow2_ &&
      n > cluster_->shape().gpus_per_server)
    n = std::bit_ceil(n);
  return n;
}

ctrl::Refusal JobSet::place(std::uint32_t j) {
  if (scheduler_ == Scheduler::Free) return pool_->free_count() >= size_[j] ? ctrl::Refusal::None : ctrl::Refusal::Gpus;
  const std::uint32_t n = wanted(j);
  ctrl::Decision d = scheduler_ == Scheduler::VClos      ? ctrl::place_vclos(*cluster_, n, vclos_)
                     : scheduler_ == Scheduler::OcsVClos ? ctrl::place_ocs_vclos(*cluster_, *ocs_, n, ocs_options_)
                                                         : ctrl::place_whole_server(*cluster_, n);
  if (!d.allocation) return d.why;
  ctrl::Allocation& a = *d.allocation;
  cluster_->take(a);
  if (ocs_) ocs_->take(a);  // (asserts that nothing it switches off is held)
  std::vector<net::EndpointId> eps;
  eps.reserve(size_[j]);
  for (std::uint32_t r = 0; r < size_[j]; ++r) eps.push_back(gpu_endpoint_[a.gpus[r]]);
  pool_->assign(std::move(eps));
  reserved_[j] = a.servers.empty() ? static_cast<std::uint32_t>(a.gpus.size())
                                   : static_cast<std::uint32_t>(a.servers.size()) * cluster_->shape().gpus_per_server;
  allocation_[j] = std::move(a);
  return ctrl::Refusal::None;
}

bool JobSet::switch_circuits(std::uint32_t j, const ctrl::Allocation& a, core::SimTime now) {
  if (a.switched_off.empty() && a.switched_on.empty()) return false;
  std::vector<net::LinkId> off, on;
  const auto record = [&](const ctrl::Circuit& c, bool up) {
    switching_.time_ns.push_back(static_cast<double>(now.ps()) / 1000.0);
    switching_.job.push_back(j);
    switching_.leaf.push_back(c.leaf);
    switching_.spine.push_back(c.spine);
    switching_.slot.push_back(c.slot);
    switching_.on.push_back(up ? 1 : 0);
    (up ? on : off).push_back(ocs_links_->up_link(c));
    (up ? on : off).push_back(ocs_links_->down_link(c));
  };
  for (const ctrl::Circuit& c : a.switched_off) record(c, false);
  for (const ctrl::Circuit& c : a.switched_on) record(c, true);
  net_.switch_links(off, on);
  return !on.empty();
}

void JobSet::pin_routes(std::uint32_t j, std::size_t first_message) {
  const ctrl::Allocation& a = *allocation_[j];
  const bool ocs = a.stage == ctrl::Stage::OcsSpine || a.stage == ctrl::Stage::OcsClos;
  if (!ocs && a.stage != ctrl::Stage::VirtualClos) return;
  std::unordered_map<net::EndpointId, std::uint32_t> rank;
  const auto& eps = pool_->assignment();
  for (std::uint32_t r = 0; r < eps.size(); ++r) rank.emplace(eps[r], r);
  for (auto id = static_cast<net::MessageId>(first_message); id < net_.message_count(); ++id) {
    const net::Message& m = net_.message(id);
    const std::uint32_t src = rank.at(m.src);
    if (ocs) {
      // Up the source rank's own circuit, down the circuit of down_rank
      // (OcsClos: the same unit on the destination's virtual leaf), both
      // the job's alone; within a leaf the configured policy.
      if (leaf_of_[m.src] == leaf_of_[m.dst]) continue;
      const std::uint32_t down = a.down_rank(src, rank.at(m.dst));
      const std::array<net::LinkId, 4> route{host_up_[m.src], ocs_links_->up_link(a.circuits[src]),
                                             ocs_links_->down_link(a.circuits[down]),
                                             net_.topology().link(host_up_[m.dst]).reverse};
      net_.pin(static_cast<net::MessageId>(id), route);
    } else {
      // Source routing inside the job: rank r's traffic to another leaf
      // goes up to its virtual spine, spine_of_rank(r); the way down to the
      // destination's leaf is then the one link from that spine, reserved too.
      if (fabric_->tor_of(m.src) == fabric_->tor_of(m.dst)) continue;
      net_.pin(static_cast<net::MessageId>(id),
               fabric_->route(m.src, m.dst, static_cast<std::int32_t>(a.spine_of_rank(src))));
    }
  }
}

void JobSet::admit(core::SimTime now) {
  // The head of the queue starts as soon as the scheduler can place it;
  // the ones behind it wait for it (head of line).
  while (!waiting_.empty()) {
    const std::uint32_t j = std::get<2>(*waiting_.begin());
    const ctrl::Refusal why = place(j);
    if (why != ctrl::Refusal::None) {
      ++refused_[j][why == ctrl::Refusal::Gpus ? 0 : 1];
      break;
    }
    waiting_.erase(waiting_.begin());
    // OCS-vClos: circuits switched now (every rank alike: a global step);
    // the job starts once the optical switches have reconfigured.
    core::SimTime start = now;
    if (ocs_ && allocation_[j] && switch_circuits(j, *allocation_[j], now)) start = now + reconfig_;
    config::Config c = job_config(j);
    c.set("workload.start_ns", config::Value(start.ns()), "admitted by workload.queue");
    graphs_[j] = std::make_unique<workload::TaskGraph>(net_, sim_, graph_binding_, j);
    const std::size_t mark = pool_->take_mark();
    const std::size_t first_message = net_.message_count();
    jobs_[j] = make_job(j, *graphs_[j], *pool_, c);
    endpoints_[j] = pool_->taken_since(mark);
    if (allocation_[j]) pin_routes(j, first_message);
    pool_->clear_assignment();
    job_of_message_.resize(net_.message_count(), j);
    net_.set_listener(this);
    admitted_ps_[j] = start.ps();
    // This rank's part done: reported at the next step; the step that
    // decides on it requested (an empty job: by every rank).
    const bool empty = graphs_[j]->size() == 0;
    graphs_[j]->set_on_done([this, j, empty](core::SimTime at) {
      local_done_ps_[j] = at.ps();
      newly_done_.push_back(j);
      if (empty || graphs_[j]->local_tasks() > 0) requests_->request_step(at + delay_);
    });
    graphs_[j]->start(start);
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
      row.p99_time_ns = std::numeric_limits<double>::quiet_NaN();
      row.arrival_ns = static_cast<double>(arrival_ps_[j]) / 1000.0;
      scheduler_columns(j, row);
      out.jobs.push_back(row);
      continue;
    }
    const JobResults ctx{queued_ ? *graphs_[j] : *graph_, comm, timeline_, flows_};
    // Its first row of /collectives, or of /iterations.
    out.first_row.push_back((jobs_[j]->tables() & Job::kCollectives) ? out.collectives.job.size() : out.dnn.job.size());
    stats::JobRow row = jobs_[j]->report(ctx, static_cast<std::uint32_t>(j), out);
    if (queued_) {
      row.arrival_ns = static_cast<double>(arrival_ps_[j]) / 1000.0;
      row.end_ns = done_ps_[j] < 0 ? -1.0 : static_cast<double>(done_ps_[j]) / 1000.0;
      if (row.compute_total_ns > 0 && row.end_ns > row.start_ns)
        row.scaling_factor = row.compute_total_ns / (row.end_ns - row.start_ns);
      scheduler_columns(j, row);
    } else {
      row.arrival_ns = row.start_ns;
    }
    out.jobs.push_back(row);
  }
  // (By message: /flows/trace_node's rows are made from it in order.)
  std::sort(out.flow_trace_node.begin(), out.flow_trace_node.end());
  // The reports hold what the output and the tables read: the task graphs
  // go before the output is written (the peak of a large trace's run was
  // there: 602,112 tasks and their edges in the 1,024-rank benchmark).
  net_.set_listener(nullptr);
  graph_.reset();
  for (auto& g : graphs_) g.reset();
}

void JobSet::scheduler_columns(std::size_t j, stats::JobRow& row) const {
  row.refused_gpus = refused_[j][0];
  row.refused_network = refused_[j][1];
  row.deadline_ns = deadline_ps_[j] < 0 ? 0.0 : static_cast<double>(deadline_ps_[j]) / 1000.0;
  if (!allocation_[j]) return;
  const ctrl::Allocation& a = *allocation_[j];
  row.stage = ctrl::to_string(a.stage);
  row.reserved = reserved_[j];
  row.virtual_leaves = static_cast<std::uint32_t>(a.leaves.size());
  row.virtual_spines = static_cast<std::uint32_t>(a.stage == ctrl::Stage::OcsClos ? a.gpus.size() / a.leaves.size()
                                                                                  : a.spines.size());
  row.circuits_switched = static_cast<std::uint32_t>(a.switched_on.size());
}

void JobSet::write(stats::H5Writer& writer, const par::Comm& comm) const {
  stats::write_jobs(writer, reports_.jobs, comm.is_root());
  if (queued_) {
    // Every rank holds the same placements (decided at global steps).
    stats::PlacementReport p;
    for (std::uint32_t j = 0; j < endpoints_.size(); ++j) {
      for (std::uint32_t r = 0; r < endpoints_[j].size(); ++r) {
        p.endpoint_job.push_back(j);
        p.endpoint.push_back(endpoints_[j][r]);
        p.rank.push_back(r);
      }
      if (!allocation_[j]) continue;
      for (const ctrl::Circuit& c : allocation_[j]->circuits) {  // OCS-vClos: a circuit per rank
        p.link_job.push_back(j);
        p.leaf.push_back(c.leaf);
        p.spine.push_back(c.spine);
        p.slot.push_back(c.slot);
      }
      if (allocation_[j]->stage != ctrl::Stage::VirtualClos) continue;
      for (const std::uint32_t leaf : allocation_[j]->leaves)
        for (const std::uint32_t spine : allocation_[j]->spines) {
          p.link_job.push_back(j);
          p.leaf.push_back(leaf);
          p.spine.push_back(spine);
          p.slot.push_back(0);
        }
    }
    stats::write_placement(writer, p, comm.is_root());
    if (ocs_) stats::write_ocs(writer, switching_, comm.is_root());
  }
  if (fills(Job::kCollectives)) stats::write_collectives(writer, reports_.collectives, comm.is_root());
  if (fills(Job::kIterations)) stats::write_dnn(writer, reports_.dnn, comm.is_root());
  if (fills(Job::kTimeline) && timeline_) stats::write_timeline(writer, reports_.timeline);
  if (fills(Job::kTraceNodes) && (timeline_ || flows_)) stats::write_trace_nodes(writer, reports_.trace_nodes);
  if (fills(Job::kTraceNodes) && flows_) {
    // /flows/trace_node: the root makes every row as it is written (-1:
    // not a trace's message), from the pairs sorted by message (report),
    // not from a column of every message built first (16 bytes a message).
    // A streamed trace's by its run of ids (flow_trace_runs).
    const std::size_t nf = net_.message_count();
    const auto& pairs = reports_.flow_trace_node;
    const auto& runs = reports_.flow_trace_runs;
    writer.write_rows_made<std::int64_t>(
        "/flows/trace_node", nf, stats::H5Writer::Rows::run(0, comm.is_root() ? nf : 0), [&](std::size_t m) {
          for (const JobReports::FlowRowRun& r : runs)
            if (m >= r.first && m - r.first < r.rows.size()) {
              const std::uint32_t row = r.rows[m - r.first];
              if (row != UINT32_MAX) return static_cast<std::int64_t>(r.first_row + row);
            }
          const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair<net::MessageId, std::uint64_t>(
                                                                           static_cast<net::MessageId>(m), 0));
          return it != pairs.end() && it->first == m ? static_cast<std::int64_t>(it->second) : std::int64_t{-1};
        });
  }
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
    std::uint64_t refused_gpus = 0, refused_network = 0;
    for (const auto& r : refused_) {
      refused_gpus += r[0];
      refused_network += r[1];
    }
    fmt::print("# cluster queue ({}, scheduler {}): {} jobs, {} admitted, {} finished; mean wait {:.3f} ms, mean "
               "completion (wait + run) {:.3f} ms, last job done at {:.3f} ms; could not place a job {} times "
               "(gpus {}, network {}) (/jobs: arrival_ns, start_ns, end_ns, refused_*)\n",
               cfg_.get_string("workload.queue"), cfg_.get_string("workload.scheduler"), jobs_.size(), admitted,
               finished, admitted ? wait / static_cast<double>(admitted) / 1e6 : 0.0,
               finished ? jct / static_cast<double>(finished) / 1e6 : 0.0, last / 1e6, refused_gpus + refused_network,
               refused_gpus, refused_network);
    if (jobs_.size() > 16) return;
  }
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    if (jobs_[j]) jobs_[j]->print(reports_, static_cast<std::uint32_t>(j), several);
}

std::uint64_t JobSet::planned_bytes() const {
  std::uint64_t b = static_cast<std::uint64_t>(net_.message_capacity()) * net::Network::message_bytes() +
                    job_of_message_.capacity() * sizeof(std::uint32_t);
  if (graph_) b += graph_->memory_bytes();
  for (const auto& g : graphs_)
    if (g) b += g->memory_bytes();
  for (const auto& j : jobs_)
    if (j) b += j->memory_bytes();
  return b;
}

core::SimTime JobSet::end_lower_bound() const {
  core::SimTime b;
  if (graph_) b = std::max(b, graph_->end_lower_bound());
  for (const auto& g : graphs_)
    if (g) b = std::max(b, g->end_lower_bound());
  return b;
}

void visit_planned_jobs(const config::Config& cfg, const net::Topology& topo,
                        const std::function<void(const workload::TaskGraph&, const net::Network&,
                                                 const std::vector<std::size_t>&)>& visit,
                        PlannedSize* size) {
  if (cfg.get_string("workload.queue") != "none")
    throw util::ConfigError("workload.queue: planning the jobs up front (a fabric built from their traffic, an "
                            "export) needs workload.queue = \"none\"");
  core::Simulator sim(topo.node_count());
  PlanningNetwork network(topo, network_params(cfg), sim);
  network.set_plan_budget(memory_limit_per_rank(cfg, 1));  // (one process plans here)
  const JobSet jobs(cfg, network, sim);
  if (size != nullptr) *size = {jobs.planned_bytes(), jobs.end_lower_bound()};
  visit(*jobs.plan_graph(), network, jobs.first_message());
}

std::vector<LabelledMessage> plan_messages(const config::Config& cfg, const net::Topology& topo,
                                           PlannedSize* size) {
  std::vector<LabelledMessage> out;
  visit_planned_jobs(cfg, topo, [&](const workload::TaskGraph& g, const net::Network& network,
                                    const std::vector<std::size_t>& first) {
    out.reserve(network.message_count());
    for (std::size_t t = 0; t < g.size(); ++t) {
      const auto& task = g.task(static_cast<workload::TaskGraph::TaskId>(t));
      if (task.kind != workload::TaskGraph::Kind::Message) continue;
      const net::Message& m = network.message(task.message);
      const auto job = static_cast<std::uint32_t>(
          std::upper_bound(first.begin(), first.end(), static_cast<std::size_t>(task.message)) - first.begin() - 1);
      out.push_back({m.src, m.dst, m.bytes, task.label, job});
    }
  }, size);
  return out;
}

}  // namespace fabricsim::app
