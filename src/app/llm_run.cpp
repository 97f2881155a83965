// workload.kind = "llm_dp": the routing paper's workload (ml-routing spec
// 5): concurrent 3D-parallel LLM jobs of which only the data-parallel ring
// allreduces are simulated, alternating with fixed compute gaps, with a
// central path controller ([controller], ctrl/two_tier.hpp) pinning each
// inter-ToR commodity to a spine.
//
// Everything that decides (ring step barriers, iteration ends, the
// controller) happens at global steps (par::GlobalSteps), so a run gives
// the same results on any number of ranks:
//   - a flow's delivery is known where its destination runs; that rank
//     requests a step at end + D (D = engine.control_latency_ns) and
//     contributes (message, end) there;
//   - at a step at t every rank learns the deliveries with end + D <= t; a
//     ring whose step is complete starts its next step at t (so a barrier
//     costs D: the spec's code starts it 1 ns later), an iteration ends at
//     the last of its rings' ends and the next allreduce starts a compute gap
//     later (a step requested for it);
//   - a controller decision is computed in the contributions of a second
//     step at the same t (every rank computes it, rank 0's is applied), so
//     that a solver whose result depends on wall time (CBC at its time
//     limit) cannot make ranks disagree, and its wall time is rank 0's.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "failures.hpp"
#include "fabricsim/ctrl/fabric.hpp"
#include "fabricsim/ctrl/two_tier.hpp"
#include "fabricsim/net/link_state.hpp"
#include "fabricsim/stats/run_output.hpp"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"
#include "workload.hpp"

namespace fabricsim::app {
namespace {

using core::SimTime;
using util::ConfigError;

// ------------------------------------------------------------------ models

/// The spec's Table 2 and its compute gaps (5.3: the released code's values).
struct LlmModel {
  const char* name;
  const char* label;
  std::int64_t params_b;  // parameters, billions
  std::uint32_t tp, pp;
  std::int64_t compute_ns;
};
constexpr LlmModel kModels[] = {
    {"bloom", "BLOOM", 176, 4, 12, 1238769231},
    {"gpt3", "GPT-3", 175, 8, 8, 1009615385},
    {"llama2_70b", "LLaMA2-70B", 70, 8, 16, 2692307693},
};
constexpr std::uint32_t kBloom = 0, kGpt3 = 1, kLlama = 2;

std::uint32_t model_index(const std::string& name) {
  for (std::uint32_t i = 0; i < std::size(kModels); ++i)
    if (name == kModels[i].name) return i;
  throw ConfigError("llm.models: unknown model '" + name + "' (bloom, gpt3, llama2_70b)");
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// The spec's chunk: S = ceil(ceil(1e9 * 4 * P_B / (TP * PP)) / DP) bytes.
std::uint64_t chunk_bytes(const LlmModel& m, std::uint32_t dp) {
  const std::int64_t shard = ceil_div(m.params_b * 4'000'000'000LL, std::int64_t{m.tp} * m.pp);
  return static_cast<std::uint64_t>(ceil_div(shard, dp));
}

struct JobSpec {
  std::uint32_t model;
  std::uint32_t dp;
  double start_s;  // the first allreduce (the first compute phase included)
};

/// The spec's exact mixes (5.5): scenario `jobs` at ring size `ring`.
std::vector<JobSpec> paper_mix(std::int64_t ring, std::int64_t jobs) {
  std::vector<JobSpec> add;
  if (ring == 2)
    add = {{kBloom, 2, 10.979}, {kLlama, 2, 8.055}, {kLlama, 2, 12.345}, {kBloom, 2, 10.452}, {kGpt3, 2, 6.502}};
  else if (ring == 4)
    add = {{kBloom, 4, 10.979}, {kLlama, 4, 6.756}, {kGpt3, 4, 6.502}, {kLlama, 4, 10.811}, {kGpt3, 4, 10.330}};
  else if (ring == 8)
    add = {{kBloom, 8, 2.314}, {kGpt3, 8, 6.502}, {kLlama, 2, 3.995}};
  else
    throw ConfigError(fmt::format("llm.ring: the paper's scenarios have ring sizes 2, 4 and 8, not {}", ring));
  if (jobs > static_cast<std::int64_t>(add.size()))
    throw ConfigError(fmt::format("llm.jobs: the paper ran at most {} jobs at ring size {} ({} do not fit into "
                                  "2,048 GPUs); use llm.mix = \"random\" or \"list\" for others",
                                  add.size(), ring, jobs));
  add.resize(static_cast<std::size_t>(jobs));
  return add;
}

std::vector<JobSpec> job_specs(const config::Config& cfg) {
  const std::string& mix = cfg.get_string("llm.mix");
  const std::int64_t jobs = cfg.get_int("llm.jobs");
  const std::int64_t ring = cfg.get_int("llm.ring");
  if (mix == "paper") return paper_mix(ring, jobs);
  std::vector<JobSpec> out;
  if (mix == "random") {
    if (ring == 1) throw ConfigError("llm.ring: a ring needs at least 2 members (0: random in {2, 4, 8})");
    util::RandomStream rng(static_cast<std::uint64_t>(cfg.get_int("llm.seed")), 0x6a6f6273);  // "jobs"
    for (std::int64_t j = 0; j < jobs; ++j) {
      JobSpec s{};
      s.model = static_cast<std::uint32_t>(rng.below(std::size(kModels)));
      s.dp = ring > 0 ? static_cast<std::uint32_t>(ring) : (2u << rng.below(3));
      // The released code: U_int[1e9, 10e9] ns plus the first compute phase.
      const auto start_ns = static_cast<std::int64_t>(1'000'000'000 + rng.below(9'000'000'001ull));
      s.start_s = static_cast<double>(start_ns + kModels[s.model].compute_ns) / 1e9;
      out.push_back(s);
    }
    return out;
  }
  const auto& models = cfg.get_string_list("llm.models");
  const auto& rings = cfg.get_int_list("llm.rings");
  const auto& starts = cfg.get_float_list("llm.starts_s");
  if (models.empty()) throw ConfigError("llm.models: llm.mix = \"list\" needs at least one job");
  if (rings.size() != models.size() || starts.size() != models.size())
    throw ConfigError(fmt::format("llm.rings: llm.models, llm.rings and llm.starts_s must list the same jobs ({}, "
                                  "{} and {} entries)",
                                  models.size(), rings.size(), starts.size()));
  for (std::size_t j = 0; j < models.size(); ++j)
    out.push_back({model_index(models[j]), static_cast<std::uint32_t>(rings[j]), starts[j]});
  return out;
}

// ------------------------------------------------------------------ state

constexpr net::MessageId kNoMessage = std::numeric_limits<net::MessageId>::max();

struct LlmJob {
  const LlmModel* model = nullptr;
  std::uint32_t dp = 0, rings = 0;  // rings = TP x PP = the GPUs of one replica
  std::uint64_t flow_bytes = 0;
  std::int64_t compute_ps = 0, start_ps = 0;
  std::uint32_t tors = 0;                // ToRs its GPUs occupy
  std::vector<net::EndpointId> nics;     // replica-major: nics[replica * rings + ring]
  net::EndpointId member(std::uint32_t ring, std::uint32_t i) const { return nics[std::size_t{i} * rings + ring]; }
  std::uint32_t steps() const { return 2 * (dp - 1); }
  // Run state (identical on every rank).
  std::uint32_t iteration = 0;
  bool in_phase = false, done = false;
  std::int64_t phase_start_ps = 0, next_start_ps = 0;
  std::vector<std::uint32_t> step, left, rings_finished_flag;  // per ring
  std::vector<std::uint8_t> starting;                          // per ring: a step starts at this time
  std::vector<std::int64_t> step_end_ps;                       // per ring: latest end in its current step
  std::uint32_t rings_finished = 0;
  std::vector<std::int32_t> spine;         // per commodity (ring * dp + i): the controller's, kNoSpine none
  std::vector<net::MessageId> current;     // per commodity: its flow in flight, kNoMessage none
};

struct RingRow {
  std::uint32_t job, iteration, ring;
  std::int64_t start_ps, end_ps;
};
struct DecisionRow {
  std::int64_t t_ps;
  std::string trigger;
  std::uint32_t commodities, max_load, repinned, unroutable, rank_jobs;
  double wall_us;
  bool optimal, solved;
};
struct FlowRow {  // per message
  std::uint32_t job, iteration, ring, step, member;
};

class LlmRun final : public Workload, public par::GlobalSteps, private net::MessageListener {
 public:
  LlmRun(const config::Config& cfg, net::Network& network);
  std::vector<workload::PlannedMessage> planned() const override;
  void start() override;
  std::uint64_t messages_total() const override { return net_.message_count(); }
  void report(const par::Comm& comm, bool complete) override;
  void write(stats::H5Writer& writer, const par::Comm& comm) const override;
  void print() const override;
  par::GlobalSteps* global_steps() override { return this; }
  SimTime delay() const override { return delay_; }
  void start(par::RecordExchange& requests) override;
  std::vector<std::int64_t> contribute(SimTime t) override;
  void apply(SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) override;

 private:
  void on_message_delivered(net::MessageId id) override;
  void place(const config::Config& cfg);
  void import_traffic_pairs(const config::Config& cfg, double size_scale, double time_scale);
  /// The commodities the controller plans now: (job, commodity index).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> active() const;
  /// The decision on the active set, as values to contribute.
  std::vector<std::int64_t> decide(SimTime t);
  void apply_decision(SimTime t, const std::int64_t* d, std::size_t n);
  void start_flows(SimTime t);

  net::Network& net_;
  const net::Topology& topo_;
  std::unique_ptr<ctrl::TwoTierFabric> fabric_;
  std::string algorithm_;                       // controller.algorithm
  const ctrl::Controller* controller_ = nullptr;  // null: "none"
  ctrl::Options options_;
  bool replan_flows_ = false;
  bool ilp_stop_ = false;
  std::string ilp_where_;  // "FILE:LINE:COL: controller.ilp_time_limit_s: "
  std::uint32_t iterations_ = 10;
  SimTime delay_;
  std::vector<LlmJob> jobs_;
  net::LinkStateRun links_;
  std::uint64_t link_version_ = 0;
  par::RecordExchange* requests_ = nullptr;
  // This rank's deliveries not yet contributed: (message, end ps).
  std::vector<std::pair<net::MessageId, std::int64_t>> delivered_;
  // Replicated: per message its place and end; the steps' pending work.
  std::vector<FlowRow> flows_;
  std::vector<std::int64_t> end_ps_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> to_start_;  // (job, ring) starting a step
  // Decisions pending, by the time they take effect (controller.latency_ns
  // after their trigger; with none, a second step at the trigger's time),
  // and their triggers.
  std::map<std::int64_t, std::string> pending_;
  SimTime latency_;  // controller.latency_ns
  std::vector<RingRow> rings_out_;
  std::vector<DecisionRow> decisions_;
  std::uint64_t failed_ = 0;  // report(): messages that lost bytes to a failure
};

LlmRun::LlmRun(const config::Config& cfg, net::Network& network) : net_(network), topo_(network.topology()) {
  algorithm_ = cfg.get_string("controller.algorithm");
  const std::string key = algorithm_ == "none" ? "workload.kind" : "controller.algorithm";
  fabric_ = std::make_unique<ctrl::TwoTierFabric>(topo_, key);
  controller_ = ctrl::find_controller(algorithm_);  // (the declared choices are the registry's and "none")
  options_.greedy_order = cfg.get_string("controller.greedy_order") == "input" ? ctrl::GreedyOrder::Input
                                                                               : ctrl::GreedyOrder::TorDegreeSorted;
  options_.seed = static_cast<std::uint64_t>(cfg.get_int("controller.seed"));
  options_.ilp_time_limit_s = cfg.get_float("controller.ilp_time_limit_s");
  options_.ilp_start =
      cfg.get_string("controller.ilp_start") == "cold" ? ctrl::IlpStart::Cold : ctrl::IlpStart::Heuristics;
  replan_flows_ = cfg.get_string("controller.replan") == "flows";
  ilp_stop_ = cfg.get_string("controller.ilp_on_limit") == "stop";
  ilp_where_ = cfg.locate("controller.ilp_time_limit_s: ");
  iterations_ = static_cast<std::uint32_t>(cfg.get_int("llm.iterations"));
  delay_ = SimTime::from_ns_f(cfg.get_float("engine.control_latency_ns"));
  latency_ = SimTime::from_ns_f(cfg.get_float("controller.latency_ns"));
  const double size_scale = cfg.get_float("llm.size_scale");
  const double time_scale = cfg.get_float("llm.time_scale");
  if (cfg.get_string("llm.mix") == "traffic_pairs") {
    import_traffic_pairs(cfg, size_scale, time_scale);
    links_.start(topo_, failure_schedule(cfg, topo_));
    return;
  }
  for (const JobSpec& s : job_specs(cfg)) {
    LlmJob j;
    j.model = &kModels[s.model];
    j.dp = s.dp;
    j.rings = j.model->tp * j.model->pp;
    j.flow_bytes = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(chunk_bytes(*j.model, s.dp)) * size_scale)));
    j.compute_ps = std::llround(static_cast<double>(j.model->compute_ns) * 1000.0 * time_scale);
    // A start before the control latency is taken at it (a step needs it).
    j.start_ps = std::max<std::int64_t>(std::llround(s.start_s * 1e12 * time_scale), delay_.ps());
    jobs_.push_back(std::move(j));
  }
  place(cfg);
  // Its own copy of the link state, to plan around failures.
  links_.start(topo_, failure_schedule(cfg, topo_));
}

/// The released code's placement (spec 5.4): per replica, whole hosts packed
/// into random ToRs (all of a ToR's free NICs while at least a ToR's worth
/// is needed), then trimmed to the replica's GPUs.  Jobs in order, seeded.
void LlmRun::place(const config::Config& cfg) {
  const auto gph = static_cast<std::uint32_t>(cfg.get_int("llm.gpus_per_host"));
  const auto& under = fabric_->endpoints_of_tors();
  for (std::uint32_t t = 0; t < under.size(); ++t)
    if (under[t].size() % gph != 0)
      throw ConfigError(fmt::format("llm.gpus_per_host: {} does not divide the {} endpoints of ToR {}", gph,
                                    under[t].size(), topo_.node(fabric_->tor_node(t)).name));
  std::uint64_t need_all = 0;
  for (const LlmJob& j : jobs_) need_all += std::uint64_t{gph} * static_cast<std::uint64_t>(ceil_div(j.rings, gph)) * j.dp;
  if (need_all > topo_.endpoint_count()) {
    std::string list;
    for (const LlmJob& j : jobs_) list += fmt::format("{}{} DP {}", list.empty() ? "" : ", ", j.model->label, j.dp);
    throw ConfigError(fmt::format("llm.jobs: the job mix ({}) needs {} GPUs in whole hosts of {}, the fabric has {} "
                                  "endpoints",
                                  list, need_all, gph, topo_.endpoint_count()));
  }
  std::vector<std::size_t> used(under.size(), 0);  // NICs taken per ToR, from its first
  util::RandomStream rng(static_cast<std::uint64_t>(cfg.get_int("llm.seed")), 0x706c6163);  // "plac"
  for (LlmJob& j : jobs_) {
    std::vector<std::uint8_t> touched(under.size(), 0);
    for (std::uint32_t r = 0; r < j.dp; ++r) {
      std::size_t need = std::size_t{gph} * static_cast<std::size_t>(ceil_div(j.rings, gph));
      std::vector<net::EndpointId> got;
      while (need > 0) {
        std::vector<std::uint32_t> free_tors;
        for (std::uint32_t t = 0; t < under.size(); ++t)
          if (used[t] < under[t].size()) free_tors.push_back(t);
        const std::uint32_t t = free_tors[rng.below(free_tors.size())];
        const std::size_t free = under[t].size() - used[t];
        const std::size_t take = need >= under[t].size() ? free : std::min(need, free);
        for (std::size_t k = 0; k < take; ++k) got.push_back(under[t][used[t] + k]);
        used[t] += take;
        need -= take;
        touched[t] = 1;
      }
      got.resize(j.rings);
      j.nics.insert(j.nics.end(), got.begin(), got.end());
    }
    j.tors = static_cast<std::uint32_t>(std::count(touched.begin(), touched.end(), 1));
    j.spine.assign(std::size_t{j.rings} * j.dp, ctrl::kNoSpine);
    j.current.assign(std::size_t{j.rings} * j.dp, kNoMessage);
  }
}

/// The released code's traffic_pairs files (its jobs_generator writer): one
/// file per job, a line per ring flow "src dst src_tor dst_tor start_time
/// flow_size compute_time stage_index" (NIC and ToR ids in its numbering,
/// times in ns, the ring's members in line order), replayed with exactly
/// those GPUs.
void LlmRun::import_traffic_pairs(const config::Config& cfg, double size_scale, double time_scale) {
  static constexpr LlmModel kImported{"traffic_pairs", "imported", 0, 0, 0, 0};
  const auto& files = cfg.get_string_list("llm.traffic_pairs");
  if (files.empty()) throw ConfigError("llm.traffic_pairs: llm.mix = \"traffic_pairs\" needs at least one file");
  const auto& ids = fabric_->ids();
  const std::int64_t first_nic = ids.nic_id(0);
  const auto endpoints = static_cast<std::int64_t>(topo_.endpoint_count());
  std::vector<std::uint8_t> taken(topo_.endpoint_count(), 0);
  for (const std::string& name : files) {
    const std::string path = name.empty() || name[0] == '/' ? name : cfg.base_dir() + "/" + name;
    std::ifstream in(path);
    if (!in) throw ConfigError(fmt::format("llm.traffic_pairs: cannot read '{}'", path));
    struct Line {
      std::int64_t v[8];
      int at;
    };
    std::vector<Line> lines;
    std::string text;
    for (int no = 1; std::getline(in, text); ++no) {
      const auto first = text.find_first_not_of(" \t\r");
      if (first == std::string::npos || text[first] == '#') continue;
      std::istringstream ls(text);
      Line l{{}, no};
      std::string extra;
      for (auto& x : l.v)
        if (!(ls >> x)) throw ConfigError(fmt::format("llm.traffic_pairs: {}:{}: want 8 integers (src dst src_tor "
                                                      "dst_tor start_time flow_size compute_time stage_index)",
                                                      path, no));
      if (ls >> extra) throw ConfigError(fmt::format("llm.traffic_pairs: {}:{}: more than 8 fields", path, no));
      lines.push_back(l);
    }
    if (lines.empty()) throw ConfigError(fmt::format("llm.traffic_pairs: {}: no ring flows", path));
    const auto bad = [&](const Line& l, const std::string& what) {
      return ConfigError(fmt::format("llm.traffic_pairs: {}:{}: {}", path, l.at, what));
    };
    // Rings by stage index (dense from 0), members in line order.
    std::int64_t rings = 0;
    for (const Line& l : lines) {
      if (l.v[7] < 0 || l.v[7] > 1'000'000) throw bad(l, fmt::format("stage_index {} out of range", l.v[7]));
      rings = std::max(rings, l.v[7] + 1);
    }
    std::vector<std::vector<const Line*>> ring(static_cast<std::size_t>(rings));
    for (const Line& l : lines) ring[static_cast<std::size_t>(l.v[7])].push_back(&l);
    const Line& l0 = lines.front();
    LlmJob j;
    j.model = &kImported;
    j.rings = static_cast<std::uint32_t>(rings);
    for (std::size_t r = 0; r < ring.size(); ++r)
      if (ring[r].empty()) throw bad(l0, fmt::format("no flow of stage_index {} (the rings must be numbered 0..{})", r, rings - 1));
    j.dp = static_cast<std::uint32_t>(ring[0].size());
    if (j.dp < 2) throw bad(*ring[0][0], "a ring of one member");
    std::vector<std::vector<net::EndpointId>> members(j.rings);
    for (std::size_t r = 0; r < ring.size(); ++r) {
      if (ring[r].size() != j.dp)
        throw bad(*ring[r][0], fmt::format("ring {} has {} members, ring 0 has {} (one data-parallel degree per job)",
                                           r, ring[r].size(), j.dp));
      for (std::size_t k = 0; k < ring[r].size(); ++k) {
        const Line& l = *ring[r][k];
        for (int f : {4, 5, 6})
          if (l.v[f] != l0.v[f])
            throw bad(l, fmt::format("{} {} differs from the file's first flow ({}): one per job",
                                     f == 4 ? "start_time" : f == 5 ? "flow_size" : "compute_time", l.v[f], l0.v[f]));
        for (int f : {0, 1}) {
          const std::int64_t e = l.v[f] - first_nic;
          if (e < 0 || e >= endpoints)
            throw bad(l, fmt::format("NIC {} is not one of this fabric's ({} to {} in the released code's numbering)",
                                     l.v[f], first_nic, first_nic + endpoints - 1));
          if (ids.tor_id(static_cast<net::EndpointId>(e)) != l.v[f + 2])
            throw bad(l, fmt::format("NIC {} hangs off ToR {} in this fabric, not {}", l.v[f],
                                     ids.tor_id(static_cast<net::EndpointId>(e)), l.v[f + 2]));
        }
        const Line& next = *ring[r][(k + 1) % ring[r].size()];
        if (l.v[1] != next.v[0])
          throw bad(l, fmt::format("the ring does not close: this flow ends at NIC {}, the next of ring {} starts at {}",
                                   l.v[1], r, next.v[0]));
        const auto e = static_cast<net::EndpointId>(l.v[0] - first_nic);
        if (taken[e]) throw bad(l, fmt::format("NIC {} is in two rings", l.v[0]));
        taken[e] = 1;
        members[r].push_back(e);
      }
    }
    if (l0.v[5] <= 0 || l0.v[4] < 0 || l0.v[6] < 0) throw bad(l0, "flow_size must be positive, the times not negative");
    j.flow_bytes = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(l0.v[5]) * size_scale)));
    j.compute_ps = std::llround(static_cast<double>(l0.v[6]) * 1000.0 * time_scale);
    j.start_ps = std::max<std::int64_t>(std::llround(static_cast<double>(l0.v[4]) * 1000.0 * time_scale), delay_.ps());
    j.nics.resize(std::size_t{j.rings} * j.dp);
    std::vector<std::uint8_t> touched(fabric_->tors(), 0);
    for (std::uint32_t r = 0; r < j.rings; ++r)
      for (std::uint32_t i = 0; i < j.dp; ++i) {
        j.nics[std::size_t{i} * j.rings + r] = members[r][i];
        touched[fabric_->tor_of(members[r][i])] = 1;
      }
    j.tors = static_cast<std::uint32_t>(std::count(touched.begin(), touched.end(), 1));
    j.spine.assign(std::size_t{j.rings} * j.dp, ctrl::kNoSpine);
    j.current.assign(std::size_t{j.rings} * j.dp, kNoMessage);
    jobs_.push_back(std::move(j));
  }
}

std::vector<workload::PlannedMessage> LlmRun::planned() const {
  std::vector<workload::PlannedMessage> out;
  for (const LlmJob& j : jobs_)
    for (std::uint32_t r = 0; r < j.rings; ++r)
      for (std::uint32_t i = 0; i < j.dp; ++i)
        out.push_back({j.member(r, i), j.member(r, (i + 1) % j.dp), j.flow_bytes * j.steps(),
                       SimTime::from_ps(j.start_ps)});
  return out;
}

void LlmRun::start() { net_.set_listener(this); }

void LlmRun::start(par::RecordExchange& requests) {
  requests_ = &requests;
  for (LlmJob& j : jobs_) {
    j.next_start_ps = j.start_ps;
    requests.request_step(SimTime::from_ps(j.start_ps));
  }
  // A controller re-plans when links change (known up front: it plans at the
  // change itself, before the network applies it; at the control latency at
  // the earliest).
  if (controller_ != nullptr)
    for (const SimTime c : links_.later_times()) requests.request_step(std::max(c, delay_));
}

void LlmRun::on_message_delivered(net::MessageId id) {
  const SimTime now = net_.now();
  delivered_.emplace_back(id, now.ps());
  requests_->request_step(now + delay_);
}

std::vector<std::int64_t> LlmRun::contribute(SimTime t) {
  // [deliveries known by t - D: count, (id, end)...], then the decision.
  std::vector<std::int64_t> out{0};
  std::size_t kept = 0;
  for (const auto& [id, end] : delivered_) {
    if (end + delay_.ps() > t.ps()) {
      delivered_[kept++] = {id, end};
      continue;
    }
    out.push_back(static_cast<std::int64_t>(id));
    out.push_back(end);
    ++out[0];
  }
  delivered_.resize(kept);
  if (pending_.count(t.ps()) != 0) {
    const std::vector<std::int64_t> d = decide(t);
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> LlmRun::active() const {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
    const LlmJob& job = jobs_[j];
    if (!job.in_phase) continue;
    for (std::uint32_t r = 0; r < job.rings; ++r) {
      if (job.rings_finished_flag[r] != 0) continue;
      for (std::uint32_t i = 0; i < job.dp; ++i) {
        const std::uint32_t c = r * job.dp + i;
        // flows: only the flows in flight or starting now; phases: every
        // commodity of a ring not yet done.
        if (replan_flows_ && job.current[c] == kNoMessage && job.starting[r] == 0) continue;
        if (fabric_->tor_of(job.member(r, i)) == fabric_->tor_of(job.member(r, (i + 1) % job.dp))) continue;
        out.emplace_back(j, c);
      }
    }
  }
  return out;
}

std::vector<std::int64_t> LlmRun::decide(SimTime t) {
  const auto set = active();
  std::vector<ctrl::Commodity> comms;
  comms.reserve(set.size());
  for (const auto& [j, c] : set) {
    const LlmJob& job = jobs_[j];
    const std::uint32_t r = c / job.dp, i = c % job.dp;
    comms.push_back(fabric_->commodity(job.member(r, i), job.member(r, (i + 1) % job.dp)));
  }
  const ctrl::Problem p = fabric_->problem(std::move(comms), &links_.state());
  const auto t0 = std::chrono::steady_clock::now();
  const ctrl::Assignment a = controller_->plan(p, options_);
  const auto wall_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  if (algorithm_ == "ilp" && !a.optimal && ilp_stop_)
    throw ConfigError(ilp_where_ + fmt::format(
        "CBC proved no optimum for {} commodities within {} s (decision at {:.6f} s); "
        "raise the limit, or set controller.ilp_on_limit = \"fallback\"",
        p.commodities.size(), options_.ilp_time_limit_s, t.ns() / 1e9));
  // [spine per commodity of the active set..., max_load, wall_ns, optimal, solved, unroutable]
  std::vector<std::int64_t> out(a.spine.begin(), a.spine.end());
  out.push_back(a.max_load);
  out.push_back(wall_ns);
  out.push_back(a.optimal ? 1 : 0);
  out.push_back(a.solved ? 1 : 0);
  out.push_back(a.unroutable);
  return out;
}

void LlmRun::apply_decision(SimTime t, const std::int64_t* d, std::size_t n) {
  const auto set = active();
  FABRICSIM_ASSERT(n == set.size() + 5, "a controller decision of the wrong size");
  DecisionRow row{};
  row.t_ps = t.ps();
  row.trigger = pending_[t.ps()];
  row.commodities = static_cast<std::uint32_t>(set.size());
  row.max_load = static_cast<std::uint32_t>(d[set.size()]);
  row.wall_us = static_cast<double>(d[set.size() + 1]) / 1e3;
  row.optimal = d[set.size() + 2] != 0;
  row.solved = d[set.size() + 3] != 0;
  row.unroutable = static_cast<std::uint32_t>(d[set.size() + 4]);
  for (const LlmJob& job : jobs_) row.rank_jobs += job.in_phase ? 1 : 0;
  for (std::size_t k = 0; k < set.size(); ++k) {
    const auto [j, c] = set[k];
    LlmJob& job = jobs_[j];
    const auto s = static_cast<std::int32_t>(d[k]);
    if (s == job.spine[c]) continue;
    job.spine[c] = s;
    const net::MessageId m = job.current[c];
    if (m == kNoMessage || s == ctrl::kNoSpine) continue;
    const std::uint32_t r = c / job.dp, i = c % job.dp;
    net_.pin(m, fabric_->route(job.member(r, i), job.member(r, (i + 1) % job.dp), s));
    ++row.repinned;
  }
  decisions_.push_back(std::move(row));
}

void LlmRun::start_flows(SimTime t) {
  std::sort(to_start_.begin(), to_start_.end());
  for (const auto& [j, r] : to_start_) {
    LlmJob& job = jobs_[j];
    job.left[r] = job.dp;
    job.starting[r] = 0;
    for (std::uint32_t i = 0; i < job.dp; ++i) {
      const std::uint32_t c = r * job.dp + i;
      const net::EndpointId src = job.member(r, i), dst = job.member(r, (i + 1) % job.dp);
      const net::MessageId id = net_.create(src, dst, job.flow_bytes, j);
      if (controller_ != nullptr && job.spine[c] != ctrl::kNoSpine && fabric_->tor_of(src) != fabric_->tor_of(dst))
        net_.pin(id, fabric_->route(src, dst, job.spine[c]));
      net_.post(id, t);
      job.current[c] = id;
      flows_.push_back({j, job.iteration, r, job.step[r], i});
      end_ps_.push_back(-1);
    }
  }
  to_start_.clear();
}

void LlmRun::apply(SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) {
  // A decision due now: rank 0's (its contribution: its deliveries, then
  // the decision), on the active set as it was contributed, before this
  // step's deliveries; then the flows that waited for it.
  if (pending_.count(t.ps()) != 0) {
    const std::size_t n0 = static_cast<std::size_t>(counts[0]);
    const std::size_t skip = 1 + 2 * static_cast<std::size_t>(all[0]);
    apply_decision(t, all.data() + skip, n0 - skip);
    pending_.erase(t.ps());
    if (!to_start_.empty()) start_flows(t);
  }
  // Deliveries known by now, by message id (rank order does not matter).
  std::vector<std::pair<net::MessageId, std::int64_t>> done;
  for (std::size_t at = 0, s = 0; s < counts.size(); at += static_cast<std::size_t>(counts[s]), ++s)
    for (std::int64_t k = 0; k < all[at]; ++k)
      done.emplace_back(static_cast<net::MessageId>(all[at + 1 + 2 * k]), all[at + 2 + 2 * k]);
  std::sort(done.begin(), done.end());
  bool flows_changed = !done.empty();
  for (const auto& [id, end] : done) {
    const FlowRow& f = flows_[id];
    LlmJob& job = jobs_[f.job];
    end_ps_[id] = end;
    --job.left[f.ring];
    job.step_end_ps[f.ring] = std::max(job.step_end_ps[f.ring], end);
    job.current[f.ring * job.dp + f.member] = kNoMessage;
  }
  std::vector<std::string> why;
  // Rings whose step is complete: the next step, or the ring is done.
  bool phase_ended = false;
  for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
    LlmJob& job = jobs_[j];
    if (!job.in_phase) continue;
    for (std::uint32_t r = 0; r < job.rings; ++r) {
      if (job.rings_finished_flag[r] != 0 || job.left[r] != 0) continue;
      if (job.step[r] + 1 < job.steps()) {
        ++job.step[r];
        job.starting[r] = 1;
        to_start_.emplace_back(j, r);
        continue;
      }
      job.rings_finished_flag[r] = 1;
      ++job.rings_finished;
      rings_out_.push_back({j, job.iteration, r, job.phase_start_ps, job.step_end_ps[r]});
    }
    if (job.rings_finished < job.rings) continue;
    // The iteration ends with its last ring; the next allreduce a compute gap later.
    const std::int64_t end = std::max(job.phase_start_ps, *std::max_element(job.step_end_ps.begin(), job.step_end_ps.end()));
    job.in_phase = false;
    phase_ended = true;
    if (++job.iteration >= iterations_) {
      job.done = true;
      continue;
    }
    job.next_start_ps = std::max(end + job.compute_ps, t.ps());
    if (job.next_start_ps > t.ps()) requests_->request_step(SimTime::from_ps(job.next_start_ps));
  }
  // Allreduce phases starting now.
  bool phase_started = false;
  for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
    LlmJob& job = jobs_[j];
    if (job.in_phase || job.done || job.next_start_ps != t.ps()) continue;
    job.in_phase = true;
    phase_started = true;
    job.phase_start_ps = t.ps();
    job.step.assign(job.rings, 0);
    job.left.assign(job.rings, 0);
    job.step_end_ps.assign(job.rings, 0);
    job.rings_finished_flag.assign(job.rings, 0);
    job.rings_finished = 0;
    job.starting.assign(job.rings, 1);
    for (std::uint32_t r = 0; r < job.rings; ++r) to_start_.emplace_back(j, r);
  }
  links_.advance(t);
  const bool links_changed = links_.state().version() != link_version_;
  link_version_ = links_.state().version();
  std::size_t in_phase = 0;
  for (const LlmJob& job : jobs_) in_phase += job.in_phase ? 1 : 0;
  if (phase_started) why.emplace_back("phase_start");
  if (phase_ended && in_phase > 0) why.emplace_back("phase_end");
  if (links_changed) why.emplace_back("failure");
  if (replan_flows_ && (flows_changed || !to_start_.empty()) && why.empty() && in_phase > 0)
    why.emplace_back("flows");
  if (controller_ != nullptr && !why.empty() && in_phase > 0) {
    std::string& trigger = pending_[(t + latency_).ps()];
    for (const std::string& w : why)
      if (trigger.find(w) == std::string::npos) trigger += (trigger.empty() ? "" : "+") + w;
    requests_->request_step(t + latency_);  // (without latency: a second step now)
    // Without latency the flows starting now wait for the decision; with
    // it they start on the paths of the last one (a new job's commodities
    // by routing.algorithm) and are re-pinned when it comes.
    if (latency_ == SimTime::zero()) return;
  }
  start_flows(t);
}

void LlmRun::report(const par::Comm& comm, bool complete) {
  (void)comm;
  failed_ = 0;
  for (const auto e : end_ps_) failed_ += e < 0 ? 1 : 0;
  if (complete && failed_ == 0)
    for (const LlmJob& j : jobs_)
      if (!j.done) throw util::UserError("internal check failed: an llm_dp job did not finish its iterations");
}

// ------------------------------------------------------------------ output

/// Per job: the allreduce time per iteration (max over its rings of ring
/// end - iteration start), its mean, FCT and throughput over its flows.
struct JobStats {
  std::vector<double> ar_ns;  // per finished iteration
  double mean_ar_ns = NAN, fct_ns = NAN, gbps = NAN;
  std::uint64_t flows = 0;
};

std::vector<JobStats> job_stats(const std::vector<LlmJob>& jobs, const std::vector<RingRow>& rings,
                                const std::vector<FlowRow>& flows, const std::vector<std::int64_t>& end_ps,
                                const std::vector<net::Message>& messages) {
  std::vector<JobStats> out(jobs.size());
  std::vector<std::vector<double>> per_iter(jobs.size());
  for (const RingRow& r : rings) {
    auto& v = per_iter[r.job];
    if (v.size() <= r.iteration) v.resize(r.iteration + 1, 0.0);
    v[r.iteration] = std::max(v[r.iteration], static_cast<double>(r.end_ps - r.start_ps) / 1e3);
  }
  std::vector<double> fct(jobs.size(), 0), tput(jobs.size(), 0);
  for (std::size_t id = 0; id < flows.size(); ++id) {
    if (end_ps[id] < 0) continue;
    const auto j = flows[id].job;
    const double d = static_cast<double>(end_ps[id] - messages[id].post_time.ps()) / 1e3;
    fct[j] += d;
    tput[j] += static_cast<double>(messages[id].bytes) * 8.0 / d;
    ++out[j].flows;
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    // Only iterations whose every ring ended (a complete allreduce).
    std::uint32_t complete = 0;
    for (const RingRow& r : rings) complete += r.job == j ? 1 : 0;
    const std::size_t iters = complete / jobs[j].rings;
    out[j].ar_ns.assign(per_iter[j].begin(), per_iter[j].begin() + static_cast<std::ptrdiff_t>(iters));
    if (iters > 0)
      out[j].mean_ar_ns = std::accumulate(out[j].ar_ns.begin(), out[j].ar_ns.end(), 0.0) / static_cast<double>(iters);
    if (out[j].flows > 0) {
      out[j].fct_ns = fct[j] / static_cast<double>(out[j].flows);
      out[j].gbps = tput[j] / static_cast<double>(out[j].flows);
    }
  }
  return out;
}

/// The contention-free allreduce: 2(N-1) steps of S at the NIC rate (spec 5.2).
double ideal_ns(const LlmJob& j, double gbps) {
  return static_cast<double>(j.steps()) * static_cast<double>(j.flow_bytes) * 8.0 / gbps;
}

double nic_gbps(const net::Topology& topo) {
  const net::Node& n = topo.node(topo.endpoint_node(0));
  for (net::LinkId l : n.out)
    if (topo.link(l).cls == net::LinkClass::Host) return topo.link(l).bandwidth_gbps;
  return topo.link(n.out[0]).bandwidth_gbps;
}

void LlmRun::write(stats::H5Writer& writer, const par::Comm& comm) const {
  const stats::RootRows w{writer, comm.is_root()};
  writer.group("/llm");
  const auto stats = job_stats(jobs_, rings_out_, flows_, end_ps_, net_.messages());
  const double gbps = nic_gbps(topo_);
  {
    std::vector<std::string> model;
    std::vector<std::uint32_t> dp, tp, pp, gpus, rings, tors, iters;
    std::vector<std::uint64_t> bytes;
    std::vector<double> start, mean, ideal, fct, tput;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      const LlmJob& job = jobs_[j];
      model.emplace_back(job.model->name);
      dp.push_back(job.dp);
      tp.push_back(job.model->tp);
      pp.push_back(job.model->pp);
      gpus.push_back(job.rings * job.dp);
      rings.push_back(job.rings);
      tors.push_back(job.tors);
      iters.push_back(static_cast<std::uint32_t>(stats[j].ar_ns.size()));
      bytes.push_back(job.flow_bytes);
      start.push_back(static_cast<double>(job.start_ps) / 1e3);
      mean.push_back(stats[j].mean_ar_ns);
      ideal.push_back(ideal_ns(job, gbps));
      fct.push_back(stats[j].fct_ns);
      tput.push_back(stats[j].gbps);
    }
    w.strings("/llm/jobs/model", model);
    w.col("/llm/jobs/data_parallel", dp);
    w.col("/llm/jobs/tensor_parallel", tp);
    w.col("/llm/jobs/pipeline_parallel", pp);
    w.col("/llm/jobs/gpus", gpus);
    w.col("/llm/jobs/rings", rings);
    w.col("/llm/jobs/tors", tors);
    w.col("/llm/jobs/flow_bytes", bytes);
    w.col("/llm/jobs/start_ns", start);
    w.col("/llm/jobs/iterations_done", iters);
    w.col("/llm/jobs/allreduce_mean_ns", mean);
    w.col("/llm/jobs/allreduce_ideal_ns", ideal);
    w.col("/llm/jobs/fct_mean_ns", fct);
    w.col("/llm/jobs/throughput_mean_gbps", tput);
  }
  {
    std::vector<std::uint32_t> job, replica, position, endpoint;
    for (std::uint32_t j = 0; j < jobs_.size(); ++j)
      for (std::size_t k = 0; k < jobs_[j].nics.size(); ++k) {
        job.push_back(j);
        replica.push_back(static_cast<std::uint32_t>(k / jobs_[j].rings));
        position.push_back(static_cast<std::uint32_t>(k % jobs_[j].rings));
        endpoint.push_back(jobs_[j].nics[k]);
      }
    w.col("/llm/placement/job", job);
    w.col("/llm/placement/replica", replica);
    w.col("/llm/placement/ring", position);
    w.col("/llm/placement/endpoint", endpoint);
  }
  {
    std::vector<std::uint32_t> job, iter, ring;
    std::vector<double> start, end;
    for (const RingRow& r : rings_out_) {
      job.push_back(r.job);
      iter.push_back(r.iteration);
      ring.push_back(r.ring);
      start.push_back(static_cast<double>(r.start_ps) / 1e3);
      end.push_back(static_cast<double>(r.end_ps) / 1e3);
    }
    w.col("/llm/rings/job", job);
    w.col("/llm/rings/iteration", iter);
    w.col("/llm/rings/ring", ring);
    w.col("/llm/rings/start_ns", start);
    w.col("/llm/rings/end_ns", end);
  }
  {
    std::vector<std::uint32_t> job, iter;
    std::vector<double> ar;
    for (std::uint32_t j = 0; j < jobs_.size(); ++j)
      for (std::size_t i = 0; i < stats[j].ar_ns.size(); ++i) {
        job.push_back(j);
        iter.push_back(static_cast<std::uint32_t>(i));
        ar.push_back(stats[j].ar_ns[i]);
      }
    w.col("/llm/iterations/job", job);
    w.col("/llm/iterations/iteration", iter);
    w.col("/llm/iterations/allreduce_ns", ar);
  }
  {
    std::vector<std::uint32_t> job, iter, ring, step, member;
    for (const FlowRow& f : flows_) {
      job.push_back(f.job);
      iter.push_back(f.iteration);
      ring.push_back(f.ring);
      step.push_back(f.step);
      member.push_back(f.member);
    }
    w.col("/llm/flows/job", job);
    w.col("/llm/flows/iteration", iter);
    w.col("/llm/flows/ring", ring);
    w.col("/llm/flows/step", step);
    w.col("/llm/flows/member", member);
  }
  {
    std::vector<std::string> trig;
    std::vector<double> t, wall;
    std::vector<std::uint32_t> comms, load, repinned, unroutable, jobs, optimal, solved;
    for (const DecisionRow& d : decisions_) {
      t.push_back(static_cast<double>(d.t_ps) / 1e3);
      trig.push_back(d.trigger);
      comms.push_back(d.commodities);
      load.push_back(d.max_load);
      repinned.push_back(d.repinned);
      unroutable.push_back(d.unroutable);
      jobs.push_back(d.rank_jobs);
      wall.push_back(d.wall_us);
      optimal.push_back(d.optimal ? 1 : 0);
      solved.push_back(d.solved ? 1 : 0);
    }
    w.col("/llm/decisions/time_ns", t);
    w.strings("/llm/decisions/trigger", trig);
    w.col("/llm/decisions/commodities", comms);
    w.col("/llm/decisions/max_link_load", load);
    w.col("/llm/decisions/repinned", repinned);
    w.col("/llm/decisions/unroutable", unroutable);
    w.col("/llm/decisions/jobs_in_allreduce", jobs);
    w.col("/llm/decisions/wall_us", wall);
    w.col("/llm/decisions/optimal", optimal);
    w.col("/llm/decisions/solved", solved);
  }
  writer.attr("/llm", "controller", algorithm_);
}

void LlmRun::print() const {
  const auto stats = job_stats(jobs_, rings_out_, flows_, end_ps_, net_.messages());
  const double gbps = nic_gbps(topo_);
  fmt::print("# llm_dp: {} job{}, controller {} (/llm)\n", jobs_.size(), jobs_.size() == 1 ? "" : "s", algorithm_);
  fmt::print("{:>3} {:<11} {:>3} {:>5} {:>4} {:>12} {:>9} {:>14} {:>14} {:>7} {:>12} {:>10}\n", "job", "model", "dp",
             "gpus", "tors", "flow_MB", "iters", "allreduce_ms", "ideal_ms", "ratio", "fct_ms", "tput_Gbps");
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const LlmJob& job = jobs_[j];
    const double ideal = ideal_ns(job, gbps);
    fmt::print("{:>3} {:<11} {:>3} {:>5} {:>4} {:>12.3f} {:>9} {:>14.3f} {:>14.3f} {:>7.3f} {:>12.3f} {:>10.2f}\n", j,
               job.model->label, job.dp, job.rings * job.dp, job.tors, static_cast<double>(job.flow_bytes) / 1e6,
               stats[j].ar_ns.size(), stats[j].mean_ar_ns / 1e6, ideal / 1e6, stats[j].mean_ar_ns / ideal,
               stats[j].fct_ns / 1e6, stats[j].gbps);
  }
  if (!decisions_.empty()) {
    double wall = 0, wall_max = 0;
    std::uint32_t comm_max = 0, load_max = 0, unproven = 0;
    std::uint64_t repinned = 0, unroutable = 0;
    for (const DecisionRow& d : decisions_) {
      wall += d.wall_us;
      wall_max = std::max(wall_max, d.wall_us);
      comm_max = std::max(comm_max, d.commodities);
      load_max = std::max(load_max, d.max_load);
      repinned += d.repinned;
      unroutable += d.unroutable;
      unproven += (algorithm_ == "ilp" && !d.optimal) ? 1 : 0;
    }
    fmt::print("# controller {}: {} decisions, up to {} commodities, max link load {} flows, {} flows re-pinned in "
               "flight; decision wall time mean {:.1f} us, max {:.1f} us{}{}\n",
               algorithm_, decisions_.size(), comm_max, load_max, repinned,
               wall / static_cast<double>(decisions_.size()), wall_max,
               unproven ? fmt::format("; {} decisions at the ILP time limit without a proven optimum", unproven) : "",
               unroutable ? fmt::format("; {} commodities had no live spine", unroutable) : "");
  }
  if (failed_ > 0)
    fmt::print("# llm_dp: {} ring flows did not arrive (lost bytes to a failure, /summary messages_failed, or cut "
               "off by engine.end_ns); their rings stopped\n",
               failed_);
}

}  // namespace

std::unique_ptr<Workload> make_llm_run(const config::Config& cfg, net::Network& network) {
  return std::make_unique<LlmRun>(cfg, network);
}

}  // namespace fabricsim::app
