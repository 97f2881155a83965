#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "fabricsim/config/config.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/flow_network.hpp"
#include "ocs_reconfig_run.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/workload/fluid.hpp"
#include "fabricsim/stats/h5_writer.hpp"
#include "fabricsim/stats/run_output.hpp"
#include "fabricsim/stats/throughput.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/signals.hpp"
#include "fabricsim/version_info.hpp"
#include "workload.hpp"
#include "failures.hpp"
#include "memory.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

using Clock = std::chrono::steady_clock;

// The resolved configuration is one attribute of /meta, in dense attribute
// storage (the 1.8 file format, h5_writer.cpp); a sanity bound far above
// any configuration written by hand or by a job-mix generator (100,000
// [[jobs]] tables of a few keys each are about 10 MB).
constexpr std::size_t kMetaConfigBytes = std::size_t{64} << 20;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string human_time_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.1f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.3f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{:.3f} s", ns / 1e9);
}

// ", 4 links of 400" when endpoint 0 injects over several links; "" for one.
std::string injection_links_note(const net::Topology& topo) {
  if (topo.endpoint_count() == 0) return "";
  std::size_t n = 0;
  double gbps = 0.0;
  bool same = true;
  for (net::LinkId l : topo.node(topo.endpoint_node(0)).out) {
    const auto& link = topo.link(l);
    // (As Topology::injection_gbps: the scale-out links only.)
    if (!link.carries_data || link.cls == net::LinkClass::IntraServer) continue;
    same = same && (n == 0 || link.bandwidth_gbps == gbps);
    gbps = link.bandwidth_gbps;
    ++n;
  }
  if (n <= 1) return "";
  return same ? fmt::format(", {} links of {:g}", n, gbps) : fmt::format(", {} links", n);
}

std::string human_rate(double r) {
  if (r >= 1e6) return fmt::format("{:.2f} M", r / 1e6);
  if (r >= 1e3) return fmt::format("{:.1f} k", r / 1e3);
  return fmt::format("{:.0f} ", r);
}

/// One live progress line on a terminal, redrawn in place.
class Progress {
 public:
  Progress(bool enabled, bool always) : enabled_(enabled), always_(always), t0_(Clock::now()) {}
  void update(double sim_ns, std::uint64_t events, double fraction_done) {
    if (!enabled_) return;
    const double el = seconds_since(t0_);
    if (!always_ && el < 2.0) return;
    if (el - last_ < 0.25) return;
    last_ = el;
    std::string eta = "?";
    if (fraction_done > 0.001) eta = fmt::format("{:.0f} s", el * (1.0 - fraction_done) / fraction_done);
    std::fprintf(stderr, "\r[fabricsim] sim %s | %s events/s | %.1f%% done | ~%s left    ", human_time_ns(sim_ns).c_str(),
                 human_rate(static_cast<double>(events) / el).c_str(), 100.0 * fraction_done, eta.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", 100, "");
  }

 private:
  bool enabled_;
  bool always_;
  Clock::time_point t0_;
  double last_ = 0;
  bool shown_ = false;
};

// The phases of a run: load (run_impl), build the model, plan the
// workload, partition, simulate, gather the results, write, print.

/// The simulated fabric.  Every rank builds the whole topology (it is
/// small next to the simulation state) but simulates only the nodes of its
/// part.  Not movable: the network refers to the topology and the routing.
struct Model {
  net::Topology topo;
  net::NetworkParams np;
  Routing routing;  ///< (np points into it)
  MemoryEstimate memory_estimate;
  std::uint64_t memory_limit = UINT64_MAX;  ///< per rank (engine.memory_limit_gib or this machine's share)
  int ranks_here = 1;                       ///< ranks on the busiest machine
  std::unique_ptr<core::Simulator> sim;
  /// network.model; the flow and analytic models' routes (over `table`
  /// where the fabric routes by a minimal-route table).
  std::string model = "packet";
  std::unique_ptr<net::RoutingTable> table;
  std::unique_ptr<net::PathProvider> paths;
  std::unique_ptr<net::Network> network;
  net::FlowNetwork* flow = nullptr;  ///< the network when it is the flow model
  /// An optical TopoOpt fabric's reconfigurations (OCS-reconfig, SiP-ML), or null.
  std::unique_ptr<OcsReconfigRun> reconfig;
  double build_s = 0;
  Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
};

/// The flow and analytic models simulate the whole fabric in one process.
void check_one_rank_model(const std::string& model, const par::Comm& comm) {
  if (comm.size() > 1)
    throw util::ConfigError(fmt::format(
        "network.model: \"{}\" simulates the whole fabric in one process and runs on one rank, not {}: start it "
        "without mpiexec (or with -n 1); run many configurations as a Slurm array (jobs/slurm/flow_sweep.sbatch)",
        model, comm.size()));
}

/// Builds topology, routing and network.  Memory: every rank checks the
/// same estimate against the same limit (the smallest share of any
/// machine), once from the sizes a builder announces before it allocates,
/// once more with routes and messages before the network's state is
/// allocated.
void build_model(Model& m, const config::Config& cfg, const par::Comm& comm) {
  const auto t_build = Clock::now();
  const int ranks_here = static_cast<int>(comm.allreduce_max(static_cast<std::int64_t>(comm.ranks_on_this_machine())));
  const std::uint64_t memory_limit = static_cast<std::uint64_t>(comm.allreduce_min(
      static_cast<std::int64_t>(std::min<std::uint64_t>(memory_limit_per_rank(cfg, ranks_here), INT64_MAX))));
  m.topo = [&] {
    const net::SizeCheck size_check([&](std::size_t nodes, std::size_t links) {
      check_memory(estimate_memory(cfg, comm.size(), nodes, links), memory_limit, ranks_here);
    });
    return build_topology(cfg);
  }();
  m.np = network_params(cfg, cfg.get_string("network.model") == "packet");
  m.routing = setup_routing(cfg, m.topo, m.np);
  m.memory_estimate = estimate_memory(cfg, comm.size(), m.topo, m.np);
  check_memory(m.memory_estimate, memory_limit, ranks_here);
  m.memory_limit = memory_limit;
  m.ranks_here = ranks_here;
  if (const net::RoutePolicy& policy = net::route_policy(m.np.routing); policy.whole_fabric && comm.size() > 1)
    throw util::ConfigError(fmt::format(
        "routing.algorithm: {} reads the queues of the whole fabric, which one rank "
        "cannot see in a partitioned run; run it on one rank{}",
        policy.name, policy.leg == net::ValiantLeg::UgalGlobal ? " or use ugal_local" : ""));
  m.sim = std::make_unique<core::Simulator>(m.topo.node_count());
  m.model = cfg.get_string("network.model");
  if (net::route_policy(m.np.routing).mechanism == net::PickMechanism::LeastFlows && m.model == "packet")
    throw util::ConfigError("routing.algorithm: balanced_ecmp picks by the flows on each link when a flow starts, "
                            "which the flow model counts; use network.model = \"flow\" (at packet level, adaptive "
                            "picks by queues)");
  if (m.model == "packet") {
    m.network = std::make_unique<net::Network>(m.topo, m.np, *m.sim);
  } else {
    check_one_rank_model(m.model, comm);
    m.paths = net::make_flow_paths(m.topo, m.np, m.np.seed, m.model == "analytic", m.table);
    if (m.model == "flow") {
      net::FlowParams fp;
      static_cast<net::NetworkParams&>(fp) = m.np;
      fp.flow_cap_gbps = cfg.get_float("network.flow_rate_cap_gbps");
      auto flow = std::make_unique<net::FlowNetwork>(m.topo, fp, *m.paths, *m.sim);
      m.flow = flow.get();
      m.network = std::move(flow);
    } else {
      net::AnalyticParams ap;
      static_cast<net::NetworkParams&>(ap) = m.np;
      m.network = std::make_unique<net::AnalyticNetwork>(m.topo, ap, *m.paths, *m.sim);
    }
  }
  m.build_s = seconds_since(t_build);
}

/// Which rank simulates which node, and how the ranks exchange records.
struct Partitioning {
  std::string partitioner = "none";
  std::vector<std::int32_t> part;
  par::PartitionQuality quality;
  std::unique_ptr<par::RecordExchange> exchange;
  std::vector<std::int32_t> rank_distance;  ///< hops between this rank's part and each other one
  double seconds = 0;                       ///< (with the workload's planning)
};

/// Partitions a run on several ranks and sets the network's partition.
void partition_model(Partitioning& p, const config::Config& cfg, const par::Comm& comm, Model& m,
                     const Workload& work) {
  const net::Topology& topo = m.topo;
  net::Network& network = *m.network;
  p.part.assign(topo.node_count(), 0);
  p.quality.lookahead = core::SimTime::max();
  if (comm.size() == 1) return;
  p.partitioner = cfg.get_string("engine.partitioner");
  // The partition weighs each node by the packets it is expected to send.
  // A task graph's messages depend on each other and on compute, so their
  // total bytes, routed as if all were in flight at once, stand in for the
  // load (512 busy endpoints of 1,024 otherwise all fell to one rank: BERT
  // at 2 ranks, events imbalance 1.40).
  // (The plan, the estimate and the graphs are gone before the network
  // state is allocated.)
  {
    // (The network's own route table where it has one: a second one is the
    // largest transient of a large tree's partitioning.  The messages one
    // at a time: a vector of them was 24 bytes a message on top of the
    // start of a streamed trace's run.)
    const auto& np = m.np;
    const auto fluid = workload::estimate_fluid_loads(
        topo, np.state_routes ? nullptr : network.routing_table(), np.state_routes,
        [&](const std::function<void(const workload::PlannedMessage&)>& f) { work.for_each_planned(f); }, np);
    auto r = par::plan_partition(node_graph(topo, fluid.link_bytes, np.packet_bytes), comm.size(),
                                 par::parse_partitioner(p.partitioner),
                                 core::SimTime::from_ns_f(cfg.get_float("engine.min_cut_latency_ns")),
                                 static_cast<std::uint64_t>(cfg.get_int("engine.seed")), topo.units);
    p.part = std::move(r.part);
    p.quality = r.quality;
  }
  if (p.quality.lookahead == core::SimTime::zero())
    throw util::ConfigError(
        "engine.min_cut_latency_ns: a link of zero latency would be cut between ranks; "
        "raise engine.min_cut_latency_ns above 0");
  // Records of a link go to the rank of its receiving node; the ranks that
  // share a link form a graph whose hop distances bound the windows.
  std::vector<std::int32_t> link_owner(topo.link_count());
  std::vector<std::pair<std::int32_t, std::int32_t>> rank_edges;
  for (net::LinkId l = 0; l < topo.link_count(); ++l) {
    const auto& link = topo.link(l);
    link_owner[l] = p.part[link.dst];
    if (p.part[link.src] != p.part[link.dst]) rank_edges.emplace_back(p.part[link.src], p.part[link.dst]);
  }
  std::sort(rank_edges.begin(), rank_edges.end());
  rank_edges.erase(std::unique(rank_edges.begin(), rank_edges.end()), rank_edges.end());
  p.rank_distance = par::rank_distances(comm.size(), rank_edges, comm.rank());
  std::vector<std::int32_t> neighbours;  // cables go both ways: the ranks one hop away
  for (int rk = 0; rk < comm.size(); ++rk)
    if (p.rank_distance[static_cast<std::size_t>(rk)] == 1) neighbours.push_back(rk);
  p.exchange = std::make_unique<par::RecordExchange>(comm, std::move(link_owner), std::move(neighbours));
  network.set_partition(p.part, comm.rank(), p.exchange.get());
}

struct RunStats {
  core::SimTime end;      ///< engine.end_ns (max(): none)
  core::SimTime sim_end;  ///< the latest time any rank reached
  double run_s = 0;
  par::WindowStats windows;
};

/// A workload's global steps (a cluster queue): on one rank an exchange
/// with no neighbours, so that the run takes the same steps through the
/// conservative engine; on several, engine.control_latency_ns checked
/// against the bound the partition sets.
void prepare_global_steps(Partitioning& p, const config::Config& cfg, const par::Comm& comm, const Model& m) {
  if (comm.size() == 1) {
    p.exchange = std::make_unique<par::RecordExchange>(comm, std::vector<std::int32_t>(m.topo.link_count(), 0),
                                                       std::vector<std::int32_t>{});
    p.rank_distance.assign(1, 0);
    return;
  }
  if (p.quality.lookahead == core::SimTime::max()) return;  // nothing cut: the ranks never wait for each other
  const core::SimTime bound = core::SimTime::from_ps(
      comm.allreduce_max(par::min_step_delay(p.rank_distance, p.quality.lookahead).ps()));
  const double latency = cfg.get_float("engine.control_latency_ns");
  if (core::SimTime::from_ns_f(latency) < bound) {
    std::int64_t hops = 0;
    for (const auto d : p.rank_distance) hops = std::max<std::int64_t>(hops, d);
    hops = std::max<std::int64_t>(comm.allreduce_max(hops), 1);
    throw util::ConfigError(fmt::format(
        "engine.control_latency_ns: {} ns is too short for a global step on {} ranks: they are up to {} cut "
        "link{} apart and the lookahead is {} ns, so a decision needs at least {} ns (raise it, or use fewer ranks)",
        latency, comm.size(), hops, hops == 1 ? "" : "s", p.quality.lookahead.ns(), bound.ns()));
  }
}

/// The simulation itself, with a progress line on a terminal.
RunStats simulate(const config::Config& cfg, const par::Comm& comm, Model& m, Partitioning& p,
                  par::GlobalSteps* steps) {
  core::Simulator& sim = *m.sim;
  net::Network& network = *m.network;
  RunStats run;
  const std::string& progress_mode = cfg.get_string("output.progress");
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  Progress progress(comm.is_root() && progress_mode != "never" && (tty || progress_mode == "always"),
                    progress_mode == "always");
  const double end_ns = cfg.get_float("engine.end_ns");
  run.end = end_ns > 0 ? core::SimTime::from_ns_f(end_ns) : core::SimTime::max();
  network.set_end_time(run.end);
  // The share done: of the bytes this rank will receive, or, where the
  // records are made as the run goes (a streamed trace at one process:
  // blanks set aside, their bytes unknown yet), of the messages.
  bool by_messages = network.drops_delivered_records();
  std::uint64_t local_bytes = 0;  // bytes this rank will receive
  if (!by_messages)
    for (const auto& msg : network.messages()) {
      by_messages = by_messages || msg.bytes == 0;
      if (network.owns(m.topo.endpoint_node(msg.dst))) local_bytes += msg.bytes;
    }
  const auto share_done = [&] {
    if (by_messages)
      return network.message_count() ? static_cast<double>(network.totals().messages_delivered) /
                                           static_cast<double>(network.message_count())
                                     : 1.0;
    return local_bytes ? static_cast<double>(network.totals().bytes_delivered) / static_cast<double>(local_bytes)
                       : 1.0;
  };
  auto report = [&] { progress.update(sim.now().ns(), sim.events_processed(), share_done()); };
  const auto t_run = Clock::now();
  if (comm.size() == 1 && steps == nullptr) {
    while (!sim.empty() && sim.next_event_time() < run.end) {
      sim.run_until(run.end, 1u << 16);
      report();
    }
  } else {
    // With nothing cut, ranks are independent: one window covers the run
    // (with global steps, the ranks keep within a control latency of each other).
    const core::SimTime lookahead =
        p.quality.lookahead != core::SimTime::max() ? p.quality.lookahead
        : steps != nullptr ? steps->delay()
                           : core::SimTime::from_ps(INT64_MAX / 4);
    run.windows = par::run_conservative(
        sim, comm, *p.exchange, p.rank_distance, lookahead, run.end,
        [&](const core::RemoteRecord& r) { network.receive(r); }, report, steps);
  }
  run.run_s = seconds_since(t_run);
  progress.clear();
  // (The last event that did something: a link change scheduled after the
  // work was done does not stretch the run.)
  run.sim_end = core::SimTime::from_ps(comm.allreduce_max(sim.last_active().ps()));
  network.finish(run.sim_end);
  return run;
}

struct Results {
  net::NetworkTotals totals;  ///< sums over ranks
  std::vector<net::MessageId> failed_messages;  ///< lost bytes to failures (any rank), ascending
  std::map<net::LinkId, std::pair<std::uint64_t, std::uint64_t>> stranded;  ///< per link: packets, payload
  std::uint64_t events = 0;
  stats::ThroughputShares shares;
};

/// The results over all ranks (collective calls): the network's counters
/// (checked for conservation when the run was complete), /flows' post
/// times, the workload's report and the throughput.
Results gather_results(const par::Comm& comm, Model& m, Workload& work, const RunStats& run,
                       std::uint64_t messages_total) {
  const net::Topology& topo = m.topo;
  net::Network& network = *m.network;
  Results res;
  const auto& local = network.totals();
  net::NetworkTotals& totals = res.totals;
  totals.packets_injected = comm.allreduce_sum(local.packets_injected);
  totals.packets_delivered = comm.allreduce_sum(local.packets_delivered);
  totals.bytes_injected = comm.allreduce_sum(local.bytes_injected);
  totals.bytes_delivered = comm.allreduce_sum(local.bytes_delivered);
  totals.packet_hops = comm.allreduce_sum(local.packet_hops);
  totals.messages_delivered = comm.allreduce_sum(local.messages_delivered);
  totals.packets_dropped = comm.allreduce_sum(local.packets_dropped);
  totals.packets_stranded = comm.allreduce_sum(local.packets_stranded);
  totals.bytes_stranded = comm.allreduce_sum(local.bytes_stranded);
  totals.bytes_unsent = comm.allreduce_sum(local.bytes_unsent);
  {
    // Messages that lost bytes to failures, wherever that was seen (a
    // message may be marked on several ranks), and the links' stranded
    // counts, summed where the two ends of a cut link both counted.
    std::vector<std::int64_t> mine;
    for (net::MessageId id : network.failed_messages()) mine.push_back(id);
    std::vector<std::int64_t> all = comm.allgatherv(mine);
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    res.failed_messages.assign(all.begin(), all.end());
    std::vector<std::int64_t> triples;
    std::vector<net::LinkId> ids;
    const net::LinkStats& st = network.local_link_stats(ids);
    for (std::size_t o = 0; o < ids.size(); ++o)
      if (!st.stranded_packets.empty() && st.stranded_packets[o] > 0)
        triples.insert(triples.end(), {static_cast<std::int64_t>(ids[o]), static_cast<std::int64_t>(st.stranded_packets[o]),
                                       static_cast<std::int64_t>(st.stranded_bytes[o])});
    const std::vector<std::int64_t> every = comm.allgatherv(triples);
    for (std::size_t i = 0; i + 2 < every.size(); i += 3) {
      auto& [pk, by] = res.stranded[static_cast<net::LinkId>(every[i])];
      pk += static_cast<std::uint64_t>(every[i + 1]);
      by += static_cast<std::uint64_t>(every[i + 2]);
    }
  }
  const std::uint64_t in_flight = comm.allreduce_sum(network.packets_in_flight());
  res.events = comm.allreduce_sum(m.sim->events_processed());
  if (run.end == core::SimTime::max() && comm.is_root()) {
    // Lossless but for failures: everything injected arrived or was
    // stranded, and every message arrived unless it lost bytes.  (The
    // totals are global; rank 0 alone reports a violation.)
    const std::uint64_t failed = res.failed_messages.size();
    if (totals.packets_delivered + totals.packets_stranded != totals.packets_injected || in_flight != 0 ||
        (failed == 0 ? totals.messages_delivered != messages_total : totals.messages_delivered + failed > messages_total))
      throw util::UserError(fmt::format(
          "internal check failed: {} packets injected, {} delivered, {} stranded, {} of {} messages done, {} failed",
          totals.packets_injected, totals.packets_delivered, totals.packets_stranded, totals.messages_delivered,
          messages_total, failed));
  }
  if (work.posts_known_at_sender_only() && comm.size() > 1) {
    // /flows: a message's start is known where its sender runs, its row
    // is written where its receiver runs.  (A piece of 2^16 messages at a
    // time: a vector of every message's post time, and MPI's copy of it
    // in the reduction, were 7.9 MB on top of the run's peak for the
    // streamed trace benchmark's 491,520 messages, at the end of the run.)
    constexpr std::size_t kPiece = std::size_t{1} << 16;
    const std::size_t count = network.message_count();
    const bool drops = network.drops_delivered_records();
    std::vector<std::int64_t> posts;
    for (std::size_t from = 0; from < count; from += kPiece) {
      const std::size_t n = std::min(kPiece, count - from);
      posts.assign(n, INT64_MAX);
      for (std::size_t i = 0; i < n; ++i) {
        const net::Message rec = network.message(static_cast<net::MessageId>(from + i));
        if (network.owns(topo.endpoint_node(rec.src))) posts[i] = rec.post_time.ps();
      }
      comm.allreduce_min(posts);
      for (std::size_t i = 0; i < n; ++i) {
        const auto id = static_cast<net::MessageId>(from + i);
        // (Records dropped: only where its row is written, its receiver's
        // process, and only a time that changes it; elsewhere nothing reads
        // it, and a record not made here is not made for nothing.)
        if (drops) {
          const net::Message rec = network.message(id);
          if (rec.post_time.ps() == posts[i] || !network.owns(topo.endpoint_node(rec.dst))) continue;
        }
        network.set_post_time(id, core::SimTime::from_ps(posts[i]));
      }
    }
  }
  work.report(comm, run.end == core::SimTime::max() && res.failed_messages.empty());
  // Throughput three ways (stats/throughput.hpp): completions are known
  // where the receiver runs, so the sources' last completions and the
  // steady window's payload are combined over the ranks.
  std::vector<std::uint8_t> owned(topo.endpoint_count());
  for (net::EndpointId e = 0; e < owned.size(); ++e) owned[e] = network.owns(topo.endpoint_node(e)) ? 1 : 0;
  auto spans = stats::source_spans(topo, network, owned);
  std::vector<std::int64_t> last(spans.size());
  for (std::size_t e = 0; e < spans.size(); ++e) last[e] = spans[e].last_end_ps;
  comm.allreduce_max(last);
  for (std::size_t e = 0; e < spans.size(); ++e) spans[e].last_end_ps = last[e];
  std::int64_t from = 0, to = 0;
  stats::steady_window(spans, from, to);
  const std::uint64_t steady_bytes = comm.allreduce_sum(stats::completed_between(network, owned, from, to));
  res.shares = stats::throughput_shares(spans, totals.bytes_delivered, steady_bytes, topo.total_injection_gbps());
  return res;
}

/// The output file (collective calls); returns the engine telemetry it
/// wrote.  `temp_file` names the unfinished file as soon as it exists.
stats::EngineTelemetry write_output(const std::string& out_path, std::string& temp_file, const config::Config& cfg,
                                    const par::Comm& comm, const Model& m, const Partitioning& p, const RunStats& run,
                                    const Results& res, const Workload& work, Clock::time_point t_start) {
  const net::Topology& topo = m.topo;
  const auto t_write = Clock::now();
  stats::H5Writer writer(out_path, comm.raw());
  temp_file = writer.temp_path();
  // For the test suite: hold the unfinished output open, so that a test
  // can interrupt the write phase (tests/app/interrupt.sh).
  if (const char* hold = std::getenv("FABRICSIM_TEST_HOLD_OUTPUT")) ::sleep(static_cast<unsigned>(std::atoi(hold)));
  stats::RunMeta meta;
  meta.version = build_info::version;
  meta.git_sha = build_info::git_sha;
  meta.build = build_info::build;
  meta.config_toml = cfg.to_toml();
  meta.ranks = comm.size();
  meta.threads = omp_get_max_threads();
  meta.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  stats::write_meta(writer, meta);
  // The diameter (a BFS per destination group: seconds at 16k endpoints)
  // is shared out over the ranks.
  net::StructureReport structure = net::structure_report(topo, cost_model(cfg), static_cast<std::size_t>(comm.rank()),
                                                         static_cast<std::size_t>(comm.size()));
  structure.diameter = comm.allreduce_min(static_cast<std::int64_t>(structure.diameter)) < 0
                           ? -1
                           : static_cast<int>(comm.allreduce_max(static_cast<std::int64_t>(structure.diameter)));
  stats::write_topology(writer, topo, structure);
  stats::RunSummary summary;
  summary.sim_time_ns = run.sim_end.ns();
  summary.events = res.events;
  summary.wall_seconds = seconds_since(t_start);
  summary.events_per_second = run.run_s > 0 ? static_cast<double>(summary.events) / run.run_s : 0.0;
  stats::write_summary(writer, summary);
  stats::write_network(writer, *m.network, res.totals, p.part, cfg.get_bool("output.flows"), run.sim_end.ns(),
                       m.network->series_interval().ns(), &res.stranded, res.failed_messages.size());
  stats::write_throughput(writer, res.shares);
  stats::EngineTelemetry eng;
  eng.mode = comm.size() == 1 ? "sequential" : "partitioned";
  eng.partitioner = p.partitioner;
  eng.lookahead_ns = p.quality.lookahead == core::SimTime::max() ? 0.0 : p.quality.lookahead.ns();
  eng.edge_cut = p.quality.edge_cut;
  eng.windows = run.windows.windows;
  eng.skipped_stretches = run.windows.skipped_stretches;
  eng.critical_path_events = comm.size() == 1 ? res.events : run.windows.critical_events;
  eng.window_efficiency = eng.critical_path_events > 0
                              ? static_cast<double>(res.events) /
                                    (static_cast<double>(comm.size()) * static_cast<double>(eng.critical_path_events))
                              : 1.0;
  eng.remote_records_per_rank = comm.allgather(run.windows.records_received);
  eng.partition_seconds = p.seconds;
  eng.build_seconds = m.build_s;
  eng.run_seconds = run.run_s;
  eng.events_per_rank = comm.allgather(m.sim->events_processed());
  {
    const auto max_events = *std::max_element(eng.events_per_rank.begin(), eng.events_per_rank.end());
    const double mean = static_cast<double>(res.events) / comm.size();
    eng.event_imbalance = mean > 0 ? static_cast<double>(max_events) / mean : 1.0;
  }
  eng.run_seconds_per_rank = comm.allgather(run.run_s);
  eng.peak_memory_bytes_per_rank = comm.allgather(stats::peak_memory_bytes());
  eng.estimated_memory_bytes_per_rank = m.memory_estimate.total();
  eng.network_model = m.model;
  if (m.flow != nullptr) {
    const net::FlowModelStats& fs = m.flow->stats();
    eng.flows = fs.flows_started;
    eng.rate_recomputations = fs.rates.recomputations;
    eng.flows_refilled = fs.rates.flows_touched;
    eng.recompute_seconds = fs.recompute_seconds;
    eng.max_concurrent_flows = fs.max_concurrent;
  }
  eng.write_seconds = seconds_since(t_write);
  stats::write_engine(writer, eng);
  work.write(writer, comm);
  if (m.reconfig) m.reconfig->write(writer, comm);
  writer.commit();
  return eng;
}

/// The run's summary on stdout (rank 0), then the workload's tables.
void print_summary(const std::string& out_path, const config::Config& cfg, const par::Comm& comm, const Model& m,
                   const Partitioning& p, const RunStats& run, const Results& res, const stats::EngineTelemetry& eng,
                   const Workload& work) {
  const net::Topology& topo = m.topo;
  const auto& totals = res.totals;
  const auto& windows = run.windows;
  const double total_inj = topo.total_injection_gbps();
  const double inj = topo.endpoint_count() ? total_inj / static_cast<double>(topo.endpoint_count()) : 0.0;
  const double events_per_second = run.run_s > 0 ? static_cast<double>(res.events) / run.run_s : 0.0;
  std::uint64_t peak = 0;
  for (auto v : eng.peak_memory_bytes_per_rank) peak = std::max(peak, v);
  fmt::print("fabricsim {} (git {}): {}\n", build_info::version, build_info::git_sha, topo.describe());
  fmt::print("  config      {}\n", cfg.source());
  if (!m.routing.note.empty()) fmt::print("  routing     {}\n", m.routing.note);
  fmt::print("  simulated   {} in {:.3f} s run phase ({:.3f} s build), {} ranks [{}]{}\n",
             human_time_ns(run.sim_end.ns()), run.run_s, m.build_s, comm.size(), eng.mode,
             m.model == "packet" ? std::string() : fmt::format(", {} model", m.model));
  if (comm.size() > 1) {
    fmt::print(
        "  engine      {} partition: {} links cut, lookahead {} ns, events imbalance {:.3f}; {} windows ({} "
        "empty stretches skipped), {} remote records; window efficiency {:.0f}%\n",
        p.partitioner, p.quality.edge_cut, eng.lookahead_ns, eng.event_imbalance, windows.windows,
        windows.skipped_stretches,
        std::accumulate(eng.remote_records_per_rank.begin(), eng.remote_records_per_rank.end(), std::uint64_t{0}),
        100.0 * eng.window_efficiency);
    // A window costs a synchronization of a few microseconds: worth
    // tens of events.  Below that, waiting dominates.
    const double per_window =
        windows.windows ? static_cast<double>(eng.critical_path_events) / static_cast<double>(windows.windows) : 0.0;
    if (windows.windows > 1000 && per_window < 200)
      fmt::print(
          "  note        {:.0f} events per window on the busiest rank: this run is bound by synchronization, "
          "and fewer ranks (or one) are likely faster (docs/performance.md, \"Parallel runs\")\n",
          per_window);
  }
  fmt::print("  events      {} ({}events/s)\n", res.events, human_rate(events_per_second));
  if (m.flow != nullptr)
    fmt::print(
        "  flow model  {} flows, at most {} at once; {} rate recomputations, {:.1f} flows refilled and {:.2f} us "
        "each\n",
        eng.flows, eng.max_concurrent_flows, eng.rate_recomputations,
        eng.rate_recomputations ? static_cast<double>(eng.flows_refilled) / static_cast<double>(eng.rate_recomputations)
                                : 0.0,
        eng.rate_recomputations ? 1e6 * eng.recompute_seconds / static_cast<double>(eng.rate_recomputations) : 0.0);
  fmt::print("  delivered   {} of {} messages, {} payload, {} packets over {} packet-hops\n", totals.messages_delivered,
             m.network->message_count(), human_bytes(static_cast<double>(totals.bytes_delivered)),
             totals.packets_delivered, totals.packet_hops);
  if (!res.failed_messages.empty() || totals.packets_stranded > 0) {
    std::string some;
    for (std::size_t i = 0; i < std::min<std::size_t>(res.failed_messages.size(), 3); ++i) {
      const net::Message& f = m.network->message(res.failed_messages[i]);
      some += fmt::format("{}message {} (endpoint {} to {})", i ? ", " : "", res.failed_messages[i], f.src, f.dst);
    }
    fmt::print(
        "  failures    {} messages lost bytes to [[failures]]: {} packets ({}) stranded, {} never sent for want of a "
        "live route{}{}; see /summary and /links/stranded_*\n",
        res.failed_messages.size(), totals.packets_stranded, human_bytes(static_cast<double>(totals.bytes_stranded)),
        human_bytes(static_cast<double>(totals.bytes_unsent)), some.empty() ? "" : ": ", some);
  }
  fmt::print(
      "  throughput  {:.1f}% of injection bandwidth ({} endpoints x {:g} Gb/s{}) over the makespan; "
      "per source {:.1f}%, steady {}\n",
      100.0 * res.shares.makespan, topo.endpoint_count(), inj, injection_links_note(topo),
      100.0 * res.shares.per_source,
      std::isnan(res.shares.steady) ? std::string("n/a (fewer than 4 messages per source)")
                                    : fmt::format("{:.1f}%", 100.0 * res.shares.steady));
  fmt::print("  phases      build {:.3f} s, partition {:.3f} s, run {:.3f} s, write {:.3f} s\n", m.build_s, p.seconds,
             run.run_s, eng.write_seconds);
  if (comm.size() > 1) {
    std::string per_rank;
    for (std::size_t r = 0; r < eng.events_per_rank.size(); ++r)
      per_rank += fmt::format("{}{}", r ? ", " : "",
                              human_rate(static_cast<double>(eng.events_per_rank[r]) /
                                         std::max(eng.run_seconds_per_rank[r], 1e-9)));
    fmt::print("  per rank    events/s: {}\n", per_rank);
  }
  fmt::print("  memory      {} peak per rank (estimated {})\n", human_bytes(static_cast<double>(peak)),
             human_bytes(static_cast<double>(m.memory_estimate.total())));
  fmt::print("  output      {}\n", out_path);
  work.print();
  if (m.reconfig) m.reconfig->print();
}

/// Errors while setting up happen identically on every rank (every rank
/// reads the same configuration and builds the same model): they propagate,
/// and rank 0 reports them.  An error during the run or the write of a
/// partitioned run may hit one rank only: that rank reports it and aborts
/// the job rather than leave the others waiting in a collective call.
int run_loaded(const RunOptions& opts, const par::Comm& comm, const config::Config& cfg, Clock::time_point t_start);

/// A value the user set that nothing read in this run (on any rank) changed
/// nothing: say so, one line each, at the end (a cluster queue reads its
/// jobs' keys as it admits them, so only the end knows).  `workload.placement`
/// with `kind = "traffic"`, a packet-model key in a flow run, `output.file`
/// under `-o`.
void warn_unread(const config::Config& cfg, const par::Comm& comm) {
  std::vector<std::int64_t> read = cfg.read_flags();
  comm.allreduce_max(read);
  if (!comm.is_root()) return;
  // Keys only one network model reads (network_params, build_model).
  static const std::pair<const char*, const char*> kModelKeys[] = {
      {"network.buffer_bytes", "packet"}, {"network.crossbar_speedup", "packet"}, {"network.flow_rate_cap_gbps", "flow"}};
  const std::string& model = cfg.get_string("network.model");
  for (const std::string& s : cfg.unread_settings(read)) {
    std::string why;
    for (const auto& [key, reader] : kModelKeys)
      if (s.size() >= std::strlen(key) && s.compare(s.size() - std::strlen(key), std::string::npos, key) == 0 &&
          model != reader)
        why = fmt::format(" (only the {} model reads it; network.model is \"{}\")", reader, model);
    std::fprintf(stderr, "warning: %s: set, but this run never read it: it changed nothing%s\n",
                 util::one_line(s).c_str(), util::one_line(why).c_str());
  }
}

int run_impl(const RunOptions& opts, const par::Comm& comm) {
  const auto t_start = Clock::now();
  const config::Config cfg = config::load(opts.config, opts.overrides);
  try {
    return run_loaded(opts, comm, cfg, t_start);
  } catch (const util::ConfigError& e) {
    // A value the loader accepted but the model rejects: name its file and line.
    throw util::ConfigError(cfg.locate(e.what()));
  }
}

int run_loaded(const RunOptions& opts, const par::Comm& comm, const config::Config& cfg, Clock::time_point t_start) {
  const std::string out_path = opts.output ? *opts.output : cfg.get_string("output.file");
  // /meta keeps the resolved configuration as one HDF5 attribute: refuse
  // an absurd one now rather than fail at the write, after the run.
  if (const std::size_t toml_bytes = cfg.to_toml().size(); toml_bytes > kMetaConfigBytes)
    throw util::ConfigError(
        fmt::format("{}: the resolved configuration is {} bytes{}; the output keeps it in /meta "
                    "as one HDF5 attribute of at most {} bytes (split the run)",
                    cfg.job_count() > 0 ? "jobs" : "workload", toml_bytes,
                    cfg.job_count() > 0 ? fmt::format(" ({} [[jobs]] tables)", cfg.job_count()) : std::string(),
                    kMetaConfigBytes));
  // An unwritable path fails before any work; the temporary file is
  // created only to write (a run interrupted before leaves none).
  stats::H5Writer::check_writable(out_path, comm.raw());

  Model m;
  build_model(m, cfg, comm);
  // [[failures]] named against the fabric now, before any planning.
  net::LinkSchedule failures = failure_schedule(cfg, m.topo);
  // A task graph is planned before the partition (its messages weigh the
  // nodes) and started after it.
  const auto t_part = Clock::now();
  // Planning stops where it would outgrow what the limit leaves it (a
  // ring over 16k ranks: 25 GB of schedule before a task is made).
  m.network->set_plan_budget(m.memory_limit - std::min(m.memory_limit, m.memory_estimate.total()));
  const std::unique_ptr<Workload> work = make_workload(cfg, *m.network, *m.sim, comm);
  // Task graphs are known once planned: checked again with them, before
  // the partition and the run allocate more.
  // (Their length too: it sizes the links' time series.)
  m.memory_estimate.jobs = static_cast<std::uint64_t>(
      comm.allreduce_max(static_cast<std::int64_t>(std::min<std::uint64_t>(work->planned_bytes(), INT64_MAX))));
  m.memory_estimate.run_lower_bound_ns = std::max(m.memory_estimate.run_lower_bound_ns, work->end_lower_bound().ns());
  estimate_series(m.memory_estimate, cfg, m.topo.link_count(), local_links_estimate(m.topo.link_count(), comm.size()));
  if (m.memory_estimate.jobs > 0) check_memory(m.memory_estimate, m.memory_limit, m.ranks_here);
  // An optical fabric: its dark circuits start down, its controller takes the global steps.
  m.reconfig = make_ocs_reconfig(cfg, m.topo, *m.network, *work);
  if (m.reconfig) {
    for (const net::LinkId l : m.reconfig->power_on_down())
      failures.changes.push_back(net::LinkChange{core::SimTime::zero(), l, false});
    failures.sort();
  }
  Partitioning p;
  partition_model(p, cfg, comm, m, *work);
  if (comm.size() > 1) {
    // The links each rank simulates are known now, and the series' share
    // with them: a partition weighted by jobs' traffic can leave one rank
    // most of the idle links (a 64-GPU job on a 1k tree: 5 times the other's).
    std::int64_t local = 0;
    for (const net::Link& l : m.topo.links()) local += m.network->owns(l.src) || m.network->owns(l.dst);
    estimate_series(m.memory_estimate, cfg, m.topo.link_count(), static_cast<std::uint64_t>(comm.allreduce_max(local)));
    check_memory(m.memory_estimate, m.memory_limit, m.ranks_here);
  }
  par::GlobalSteps* const steps = m.reconfig ? m.reconfig.get() : work->global_steps();
  if (steps != nullptr) prepare_global_steps(p, cfg, comm, m);
  m.network->set_link_schedule(failures);
  if (comm.size() == 1) {
    work->start();
  } else {
    // A start can fail on one rank alone (a streamed trace reads its own
    // ranks' first nodes there): every rank stops with the same line.
    std::string failure;
    std::int64_t code = 0;
    try {
      work->start();
    } catch (const util::UserError& e) {
      failure = std::string(e.what()) + " (rank " + std::to_string(comm.rank()) + ")";
      code = e.exit_code();
    }
    if (const std::string message = comm.agree_on_error(failure); !message.empty())
      throw util::SharedError(message, static_cast<int>(comm.allreduce_max(code)));
  }
  p.seconds = seconds_since(t_part);

  std::string temp_file;
  try {
    // Fault injection for the test suite: one rank's first event fails.
    if (const char* f = std::getenv("FABRICSIM_TEST_FAIL_RANK"); f != nullptr && std::atoi(f) == comm.rank())
      m.sim->schedule(core::SimTime::zero(), 0, 0, 0,
                      [](void*, const core::Event&) {
                        throw util::UserError("injected failure (FABRICSIM_TEST_FAIL_RANK)");
                      },
                      nullptr);
    const RunStats run = simulate(cfg, comm, m, p, steps);
    // (After the run: a cluster queue creates its jobs' messages as it admits them.)
    const Results res = gather_results(comm, m, *work, run, work->messages_total());
    const stats::EngineTelemetry eng = write_output(out_path, temp_file, cfg, comm, m, p, run, res, *work, t_start);
    if (comm.is_root()) print_summary(out_path, cfg, comm, m, p, run, res, eng, *work);
    warn_unread(cfg, comm);
    return 0;
  } catch (const std::exception& e) {
    // One rank, or a failure every rank agreed on (the output writer's):
    // unwind normally, and run_command reports it once.
    if (comm.size() == 1 || dynamic_cast<const util::SharedError*>(&e) != nullptr) throw;
    // Otherwise this failure may be this rank's alone, and the others may be waiting
    // in a collective call: report it here and stop the whole job, before
    // any collective cleanup (closing the HDF5 file) could wait for them.
    const auto* ue = dynamic_cast<const util::UserError*>(&e);
    std::fprintf(stderr, "error: %s%s (rank %d)\n", ue ? "" : "unexpected failure: ", util::one_line(e.what()).c_str(),
                 comm.rank());
    std::fflush(stderr);
    std::remove(temp_file.c_str());
    // The launcher forwards the line above on its own schedule; an abort
    // right behind it can overtake it (the error would vanish).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    MPI_Abort(comm.raw(), ue ? ue->exit_code() : 1);
    throw;
  }
}

/// A process started by another MPI's launcher (Open MPI's mpiexec is often
/// the default `mpiexec` on shared machines) comes up as a lone MPICH
/// singleton: N copies would each run the whole job and race for the output.
std::string wrong_launcher(const par::Comm& comm) {
  const char* vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "SLURM_NTASKS"};
  if (comm.size() != 1) return {};
  for (const char* v : vars) {
    const char* val = std::getenv(v);
    if (val == nullptr) continue;
    if (std::string(v) == "SLURM_NTASKS") {
      // srun with MPICH's PMI works; only a plain multi-task step without it is wrong.
      if (std::atoi(val) > 1 && std::getenv("PMI_RANK") == nullptr && std::getenv("PMI_FD") == nullptr &&
          std::getenv("PMI_SIZE") == nullptr)
        return "started as one of several tasks, but MPI sees a single rank: launch with MPICH's mpiexec "
               "(mpiexec.mpich) or srun --mpi=pmi2";
      continue;
    }
    if (std::string(v) == "OMPI_COMM_WORLD_SIZE" && std::atoi(val) <= 1) continue;
    return "started by Open MPI's launcher, but fabricsim is built with MPICH: use mpiexec.mpich";
  }
  return {};
}

}  // namespace

int run_command(const RunOptions& opts) {
  par::Comm comm(MPI_COMM_WORLD);
  util::set_interrupt_reporting(comm.is_root());
  if (const std::string w = wrong_launcher(comm); !w.empty()) {
    // Each singleton thinks it is rank 0; let the launcher's rank 0 speak.
    const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
    if (r == nullptr) r = std::getenv("SLURM_PROCID");
    if (r == nullptr || std::string(r) == "0") std::fprintf(stderr, "error: %s\n", w.c_str());
    return 2;
  }
  std::string error;
  int code = 0;
  try {
    return run_impl(opts, comm);
  } catch (const util::UserError& e) {
    error = e.what();
    code = e.exit_code();
  } catch (const std::exception& e) {
    error = std::string("unexpected failure: ") + e.what();
    code = 1;
  }
  // Setup errors happen identically on every rank, and the engine turns an
  // error of one rank during the run into the same error on every rank
  // (errors of one rank elsewhere in the run phase abort the job in
  // run_impl): print once.
  if (comm.is_root()) std::fprintf(stderr, "error: %s\n", util::one_line(error).c_str());
  return code;
}

}  // namespace fabricsim::app
