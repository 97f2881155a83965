// topoopt: TopoOpt's direct-connect servers (spec ../shared/spec/topoopt.md).
// topology.construction picks the wiring:
//   rings    circulant rings (TotientPerms / the code variant, or
//            ring_offsets), routed by hop count or by k shortest coin
//            routes per pair (routing.k_paths > 1: each message pinned to
//            one, VC = hop);
//   job      TOPOLOGYFINDER (ctrl/topology_finder.hpp) from the configured
//            job's traffic, planned on a provisional fabric of the same
//            servers (topoopt_job below); routed by hop count, or by the k
//            shortest routes per server pair (ServerPaths, as the
//            expander and rings of GPU servers);
//   expander the random regular multigraph of the authors' code.
// topology.gpu_servers = true puts gpus_per_server GPU endpoints under each
// server node (net::build_server_fabric).  Non-circulant fabrics route by
// shortest paths (hop count rules, VC = hop) or k shortest per pair.
#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fabricsim/ctrl/topology_finder.hpp"
#include "fabricsim/net/expander.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"
#include "jobs.hpp"
#include "topology_kinds.hpp"

namespace fabricsim::app {

namespace {

using util::ConfigError;
using Pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

std::uint32_t gpus_of(const config::Config& cfg) {
  return cfg.get_bool("topology.gpu_servers") ? cfg_u32(cfg, "topology.gpus_per_server") : 1;
}

net::ServerFabricParams server_fabric(const config::Config& cfg, const LinkClasses& links) {
  net::ServerFabricParams p;
  p.servers = cfg_u32(cfg, "topology.servers");
  p.gpus_per_server = gpus_of(cfg);
  p.link = links.fabric;
  p.intra.bandwidth_gbps = cfg.get_float("network.intra_server_gbps");
  p.intra.latency = core::SimTime::from_ns_f(cfg.get_float("network.intra_server_latency_ns"));
  return p;
}

std::string servers_text(const net::ServerFabricParams& p) {
  return p.gpus_per_server > 1 ? fmt::format("{} servers of {} GPUs", p.servers, p.gpus_per_server)
                               : fmt::format("{} servers", p.servers);
}

net::Topology build_rings(const config::Config& cfg, const LinkClasses& links) {
  net::TopoOptParams p;
  p.servers = cfg_u32(cfg, "topology.servers");
  p.degree = cfg_u32(cfg, "topology.degree");
  for (std::int64_t o : cfg.get_int_list("topology.ring_offsets")) p.ring_offsets.push_back(static_cast<std::uint32_t>(o));
  p.bidirectional_rings = cfg.get_bool("topology.bidirectional_rings");
  p.geo_code_variant = cfg.get_string("topology.ring_selection") == "code";
  p.link = links.fabric;
  net::Topology rings = net::build_topoopt(p);
  if (gpus_of(cfg) == 1) return rings;
  // The same rings between server nodes with GPUs under them.
  net::ServerFabricParams s = server_fabric(cfg, links);
  for (net::LinkId l = 0; l < rings.link_count(); ++l) {
    const net::Link& k = rings.link(l);
    if (!k.carries_data) continue;
    if (rings.link(k.reverse).carries_data) {
      if (l < k.reverse) s.duplex.emplace_back(k.src, k.dst);
    } else {
      s.directed.emplace_back(k.src, k.dst);
    }
  }
  s.description = rings.describe() + fmt::format(", servers of {} GPUs", s.gpus_per_server);
  return net::build_server_fabric(s);
}

net::Topology build_expander(const config::Config& cfg, const LinkClasses& links) {
  net::ServerFabricParams s = server_fabric(cfg, links);
  const std::uint32_t d = cfg_u32(cfg, "topology.degree");
  const auto seed = static_cast<std::uint64_t>(cfg.get_int("topology.expander_seed"));
  s.duplex = net::random_regular_multigraph(s.servers, d, seed);
  s.description = fmt::format("TopoOpt Expander baseline, {}, degree {} (random regular multigraph, seed {})",
                              servers_text(s), d, seed);
  return net::build_server_fabric(s);
}

/// AllReduce traffic among the configured jobs' messages (TOPOLOGYFINDER's
/// families, CoinChangeMod's routes): a DNN job's data- and tensor-parallel
/// reductions, a collective job's allreduce.
class AllReduceLabels {
 public:
  explicit AllReduceLabels(const config::Config& cfg) {
    const std::size_t jobs = cfg.job_count() > 0 ? cfg.job_count() : 1;
    for (std::size_t j = 0; j < jobs; ++j) {
      const config::Config c = cfg.job_count() > 0 ? cfg.job(j) : cfg;
      const std::string& kind = c.get_string("workload.kind");
      dnn_.push_back(kind == "dnn" ? 1 : 0);
      allreduce_op_.push_back(kind == "collective" && c.get_string("workload.op") == "allreduce" ? 1 : 0);
    }
  }
  bool dnn(std::uint32_t job) const { return dnn_[job] != 0; }
  bool allreduce(std::uint32_t job, std::uint32_t label) const {
    using workload::DnnPhase;
    const auto phase = static_cast<DnnPhase>(label & 0xFF);
    return dnn(job) ? phase == DnnPhase::DataParallel || phase == DnnPhase::TensorParallel : allreduce_op_[job] != 0;
  }

 private:
  std::vector<std::uint8_t> dnn_, allreduce_op_;
};

/// What TOPOLOGYFINDER reads from the job: its messages between servers,
/// AllReduce traffic (dnn: data- and tensor-parallel allreduces; a
/// collective job's allreduce) grouped into families, the rest as the MP
/// demand matrix.  A family is the servers an AllReduce kind (job, phase)
/// connects: the components of its messages' server pairs, one family per
/// (kind, component size).
///
/// `local`, when given: the servers of one shard (local[s] = its index in
/// the shard, n of them, UINT32_MAX outside), and only job `only`'s messages.
ctrl::FinderInput job_demand(const config::Config& cfg, const std::vector<LabelledMessage>& msgs, std::uint32_t n,
                             std::uint32_t gpus, std::uint32_t degree,
                             const std::vector<std::uint32_t>* local = nullptr, std::uint32_t only = 0) {
  const AllReduceLabels labels(cfg);
  ctrl::FinderInput in;
  in.servers = n;
  in.degree = degree;
  in.mp.assign(std::size_t{n} * n, 0.0);
  // AllReduce kinds: (job, phase) -> union-find over servers, bytes per root.
  struct Kind {
    std::vector<std::uint32_t> up;
    std::vector<double> bytes;
  };
  std::map<std::uint32_t, Kind> kinds;
  auto root = [](std::vector<std::uint32_t>& up, std::uint32_t v) {
    while (up[v] != v) v = up[v] = up[up[v]];
    return v;
  };
  for (const LabelledMessage& m : msgs) {
    std::uint32_t u = m.src / gpus, v = m.dst / gpus;
    if (u == v) continue;  // inside a server: its intra-server links
    if (local != nullptr) {
      if (m.job != only) continue;
      u = (*local)[u];
      v = (*local)[v];
    }
    const std::uint32_t job = m.job;
    if (!labels.allreduce(job, m.label)) {
      in.mp[std::size_t{u} * n + v] += static_cast<double>(m.bytes);
      continue;
    }
    Kind& k = kinds[job << 8 | (labels.dnn(job) ? m.label & 0xFF : 0u)];
    if (k.up.empty()) {
      k.up.resize(n);
      std::iota(k.up.begin(), k.up.end(), 0u);
      k.bytes.assign(n, 0.0);
    }
    const std::uint32_t a = root(k.up, u), b = root(k.up, v);
    if (a != b) {
      k.up[std::max(a, b)] = std::min(a, b);
      k.bytes[std::min(a, b)] += k.bytes[std::max(a, b)];
      k.bytes[std::max(a, b)] = 0;
    }
    k.bytes[std::min(a, b)] += static_cast<double>(m.bytes);
  }
  for (auto& [key, k] : kinds) {
    std::map<std::uint32_t, std::vector<std::uint32_t>> groups;  // root -> servers (ascending)
    for (std::uint32_t s = 0; s < n; ++s) groups[root(k.up, s)].push_back(s);
    std::map<std::size_t, ctrl::AllReduceFamily> by_size;
    for (auto& [r, members] : groups) {
      if (members.size() < 2) continue;
      ctrl::AllReduceFamily& f = by_size[members.size()];
      f.groups.push_back(members);
      f.bytes += k.bytes[r];
    }
    for (auto& [size, f] : by_size) in.allreduce.push_back(std::move(f));
  }
  return in;
}

/// The constructions that read the job's traffic need a task graph.
void require_job(const config::Config& cfg) {
  const std::string& kind = cfg.get_string("workload.kind");
  if (cfg.job_count() == 0 && kind != "dnn" && kind != "collective" && kind != "trace")
    throw ConfigError(fmt::format("topology.construction: \"{}\" wires the servers by a job's traffic: a dnn, "
                                  "collective or trace job, or [[jobs]] of them; workload.kind = \"{}\" has no task "
                                  "graph to read",
                                  cfg.get_string("topology.construction"), kind));
}

ctrl::FinderOptions finder_options(const config::Config& cfg) {
  ctrl::FinderOptions opt;
  opt.split = cfg.get_string("topology.degree_split") == "code" ? ctrl::DegreeSplit::Code : ctrl::DegreeSplit::Paper;
  opt.decay = cfg.get_string("topology.mp_decay") == "code" ? ctrl::MpDecay::Code : ctrl::MpDecay::Halve;
  opt.geo_code_variant = cfg.get_string("topology.ring_selection") == "code";
  opt.allreduce_degree = cfg_u32(cfg, "topology.allreduce_degree");
  return opt;
}

ctrl::FinderResult run_finder(const ctrl::FinderInput& in, const ctrl::FinderOptions& opt) {
  try {
    return ctrl::topology_finder(in, opt);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("topology.construction: ") + e.what());  // (the input is well formed)
  }
}

/// Adds the finder's links to the fabric, server i of the finder being
/// members[i], each marked as an AllReduce ring's or not.
void add_links(net::ServerFabricParams& s, const ctrl::FinderResult& r, const std::vector<std::uint32_t>& members) {
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    s.directed.emplace_back(members[r.links[i].first], members[r.links[i].second]);
    s.allreduce.push_back(i < r.ring_links ? 1 : 0);
  }
}

/// topology.job_shards: the spec's shared cluster (§2.2, §5.6): the optical
/// layer gives every job its own shard, TOPOLOGYFINDER on the job's own
/// servers (those its messages join) from its own traffic; jobs may not
/// share a server.  The servers no job joins (or only one server of) form
/// a shard of their own, wired in rings (TotientPerms over them), so every
/// server has its `degree` interfaces as the cost model counts them.
/// Shards are not connected to each other: no message crosses one.
net::Topology build_shards(const config::Config& cfg, net::ServerFabricParams s,
                           const std::vector<LabelledMessage>& msgs) {
  const std::uint32_t n = s.servers, gpus = s.gpus_per_server, d = cfg_u32(cfg, "topology.degree");
  const auto jobs = static_cast<std::uint32_t>(std::max<std::size_t>(cfg.job_count(), 1));
  std::vector<std::vector<std::uint32_t>> servers(jobs);
  std::vector<std::uint32_t> owner(n, UINT32_MAX);
  for (const LabelledMessage& m : msgs)
    for (const std::uint32_t srv : {m.src / gpus, m.dst / gpus}) {
      if (owner[srv] == UINT32_MAX) {
        owner[srv] = m.job;
        servers[m.job].push_back(srv);
      } else if (owner[srv] != m.job) {
        throw ConfigError(fmt::format("topology.job_shards: jobs {} and {} both use server {} (its GPUs {}..{}); "
                                      "a shard is one job's own servers: place the jobs on different servers",
                                      std::min(owner[srv], m.job), std::max(owner[srv], m.job), srv, srv * gpus,
                                      srv * gpus + gpus - 1));
      }
    }
  const ctrl::FinderOptions opt = finder_options(cfg);
  std::vector<std::uint32_t> local(n, UINT32_MAX);
  std::vector<std::string> parts;
  std::vector<std::uint32_t> idle;
  auto wire = [&](const std::vector<std::uint32_t>& members, const ctrl::FinderInput& in) {
    const ctrl::FinderResult r = run_finder(in, opt);
    add_links(s, r, members);
    return r.describe();
  };
  for (std::uint32_t j = 0; j < jobs; ++j) {
    std::vector<std::uint32_t>& mine = servers[j];
    if (mine.size() < 2) {  // (traffic inside one server only)
      idle.insert(idle.end(), mine.begin(), mine.end());
      continue;
    }
    std::sort(mine.begin(), mine.end());
    for (std::uint32_t i = 0; i < mine.size(); ++i) local[mine[i]] = i;
    const ctrl::FinderInput in = job_demand(cfg, msgs, static_cast<std::uint32_t>(mine.size()), gpus, d, &local, j);
    parts.push_back(fmt::format("job {} on servers {}..{} ({}): {}", j, mine.front(), mine.back(), mine.size(),
                                wire(mine, in)));
    for (const std::uint32_t srv : mine) local[srv] = UINT32_MAX;
  }
  for (std::uint32_t srv = 0; srv < n; ++srv)
    if (owner[srv] == UINT32_MAX) idle.push_back(srv);
  std::sort(idle.begin(), idle.end());
  if (idle.size() >= 2) {
    ctrl::FinderInput in;
    in.servers = static_cast<std::uint32_t>(idle.size());
    in.degree = d;
    in.allreduce.push_back(ctrl::AllReduceFamily{{std::vector<std::uint32_t>(in.servers)}, 1.0});
    std::iota(in.allreduce[0].groups[0].begin(), in.allreduce[0].groups[0].end(), 0u);
    ctrl::FinderOptions rings = opt;
    rings.allreduce_degree = d;
    add_links(s, run_finder(in, rings), idle);
    parts.push_back(fmt::format("{} servers of no job in rings", idle.size()));
  }
  if (parts.empty())
    throw ConfigError("topology.construction: \"job\" wires the servers by the job's traffic between them, but the "
                      "configured jobs send nothing from one server to another");
  s.description = fmt::format("TopoOpt shards, one per job (TOPOLOGYFINDER on each job's own servers), {}, degree {}: "
                              "{}",
                              servers_text(s), d, fmt::join(parts, "; "));
  s.shards = true;
  return net::build_server_fabric(s);
}

net::Topology build_from_job(const config::Config& cfg, const LinkClasses& links) {
  net::ServerFabricParams s = server_fabric(cfg, links);
  const std::uint32_t d = cfg_u32(cfg, "topology.degree");
  const std::uint32_t fixed = cfg_u32(cfg, "topology.allreduce_degree");
  require_job(cfg);
  if (fixed > d)
    throw ConfigError(fmt::format("topology.allreduce_degree: {} is more than the servers' {} interfaces "
                                  "(topology.degree)",
                                  fixed, d));
  // Provisional fabric: the same servers and GPUs on one ring (planning
  // needs the endpoints only).
  net::ServerFabricParams provisional = s;
  for (std::uint32_t i = 0; i < s.servers; ++i) provisional.directed.emplace_back(i, (i + 1) % s.servers);
  provisional.description = "provisional";
  const std::vector<LabelledMessage> msgs = plan_messages(cfg, net::build_server_fabric(provisional));
  if (cfg.get_bool("topology.job_shards")) return build_shards(cfg, s, msgs);
  const ctrl::FinderInput in = job_demand(cfg, msgs, s.servers, s.gpus_per_server, d);
  double ar = 0, mp = 0;
  for (const auto& f : in.allreduce) ar += f.bytes;
  for (double b : in.mp) mp += b;
  if (!(ar + mp > 0))
    throw ConfigError("topology.construction: \"job\" wires the servers by the job's traffic between them, but the "
                      "configured job sends nothing from one server to another");
  if (fixed > 0 && fixed < d && !(mp > 0))
    throw ConfigError(fmt::format("topology.allreduce_degree: {} leaves {} interfaces for model-parallel matchings, "
                                  "but the job has no model-parallel traffic between servers to match (set it to {} "
                                  "or 0)",
                                  fixed, d - fixed, d));
  const ctrl::FinderResult r = run_finder(in, finder_options(cfg));
  std::vector<std::uint32_t> all(s.servers);
  std::iota(all.begin(), all.end(), 0u);
  add_links(s, r, all);
  s.description = fmt::format("TopoOpt from the job's traffic (TOPOLOGYFINDER), {}, degree {}: {}", servers_text(s), d,
                              r.describe());
  return net::build_server_fabric(s);
}

/// OCS-reconfig and SiP-ML: every possible circuit; which are lit is the
/// run's business (ocs_reconfig_run.hpp).
net::Topology build_optical(const config::Config& cfg, const LinkClasses& links) {
  require_job(cfg);
  net::ServerFabricParams s = server_fabric(cfg, links);
  const std::string& how = cfg.get_string("topology.construction");
  s.ocs_degree = cfg_u32(cfg, "topology.degree");
  if (s.ocs_degree == 0) throw ConfigError("topology.degree: must be at least 1");
  s.description = fmt::format("TopoOpt {} baseline, {}, degree {}: every possible circuit, {} lit per server and "
                              "rewired during the run",
                              how == "sip_ml" ? "SiP-ML" : how == "ocs_reconfig" ? "OCS-reconfig (FW)"
                                                                                 : "OCS-reconfig (noFW)",
                              servers_text(s), s.ocs_degree, s.ocs_degree);
  return net::build_server_fabric(s);
}

net::Topology build_topoopt(const config::Config& cfg, const LinkClasses& links) {
  const std::string& how = cfg.get_string("topology.construction");
  if (how == "job") return build_from_job(cfg, links);
  if (how == "ocs_reconfig" || how == "ocs_reconfig_nofw" || how == "sip_ml") return build_optical(cfg, links);
  if (how == "expander") return build_expander(cfg, links);
  return build_rings(cfg, links);
}

void topoopt_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  using A = net::RoutingAlgorithm;
  const A a = np.routing;
  if (a != A::Minimal && a != A::Adaptive && a != A::Spray && a != A::Ecmp)
    wrong_algorithm(cfg, topo.kind, "minimal, adaptive, spray or ecmp");
  const std::uint32_t k_paths = cfg_u32(cfg, "routing.k_paths");
  if (k_paths > 1 && topo.ocs_degree > 0)
    throw ConfigError("routing.k_paths: OCS-reconfig and SiP-ML pin every message to the lit circuits at each "
                      "reconfiguration; k shortest routes per pair need a fixed fabric (set routing.k_paths = 1)");
  if (k_paths > 1 && cfg.get_string("topology.construction") == "rings" && gpus_of(cfg) == 1) {
    // Circulant: the k shortest coin routes per residue.
    auto coin = std::make_unique<net::CoinPaths>(topo, k_paths);
    if (coin->max_hops() > np.vcs)
      throw ConfigError("network.vcs: the " + std::to_string(k_paths) + " shortest routes of some pair take " +
                        std::to_string(coin->max_hops()) + " hops, one virtual channel each; set network.vcs = " +
                        std::to_string(coin->max_hops()));
    r.listed = std::move(coin);
  } else if (k_paths > 1) {
    // Any other fabric (built from a job, the expander, rings of GPU
    // servers): the k shortest routes of each server pair, found as
    // messages ask (a route longer than network.vcs stops the run there).
    r.listed = std::make_unique<net::ServerPaths>(topo, k_paths);
  }
  np.listed_paths = r.listed.get();
  // (The flow model has no virtual channels: its runs never need
  // network.vcs to cover the hops of an optical fabric's every circuit.)
  const bool channels = topo.ocs_degree == 0 || cfg.get_string("network.model") == "packet";
  r.routes = std::make_unique<net::StateRoutes>(topo, net::hop_count_rules(topo, channels ? np.vcs : 255, topo.shards));
  if (!channels) np.vcs = std::max<std::uint32_t>(np.vcs, r.routes->rules().vcs());
  if (r.listed) {
    np.state_routes = r.routes.get();
    r.note = std::to_string(k_paths) + " shortest loop-free routes per pair (Yen), one per message, VC = hop";
    return;
  }
  use_route_rules(np, r);
}

}  // namespace

void pin_allreduce_routes(const config::Config& cfg, const JobSet& jobs, net::Network& network) {
  const net::Topology& topo = network.topology();
  if (topo.allreduce_links.empty() || jobs.plan_graph() == nullptr ||
      cfg.get_string("routing.allreduce_routes") != "rings")
    return;
  // k_paths > 1 pinned every message to one of its pair's k shortest routes;
  // otherwise messages follow the fabric's shortest paths, which between
  // ring neighbours are their ring links already.
  const bool listed = network.params().listed_paths != nullptr;
  const net::ServerPaths rings = net::ServerPaths::allreduce(topo);
  const AllReduceLabels labels(cfg);
  const workload::TaskGraph& g = *jobs.plan_graph();
  const auto& first = jobs.first_message();
  const std::uint64_t seed = network.params().seed;
  std::vector<net::LinkId> path;
  for (std::size_t t = 0; t < g.size(); ++t) {
    const auto& task = g.task(static_cast<workload::TaskGraph::TaskId>(t));
    if (task.kind != workload::TaskGraph::Kind::Message) continue;
    const auto job = static_cast<std::uint32_t>(
        std::upper_bound(first.begin(), first.end(), static_cast<std::size_t>(task.message)) - first.begin() - 1);
    if (!labels.allreduce(job, task.label)) continue;
    const net::Message& m = network.message(task.message);
    const std::size_t choice = rings.choice(m.src, m.dst, seed, task.message);
    const std::size_t hops = rings.server_hops(m.src, m.dst, choice);
    // Inside a server; or one server hop without k_paths, whose shortest path is the ring link already.
    if (hops == 0 || (!listed && hops == 1)) continue;
    path.clear();
    rings.path(m.src, m.dst, choice, path);
    network.pin(task.message, path, net::PinnedVc::PerHop, true);
  }
}

extern const TopologyKind kTopoOpt{"topoopt", &build_topoopt, &topoopt_routing, nullptr, nullptr, true, &gpus_of};

}  // namespace fabricsim::app
