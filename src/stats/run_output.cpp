#include "fabricsim/stats/run_output.hpp"
#include "fabricsim/stats/throughput.hpp"
#include "fabricsim/util/assert.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace fabricsim::stats {

void write_collectives(H5Writer& out, const CollectiveReport& r, bool is_root) {
  out.group("/collectives");
  // Every process needs the row count and whether one job wrote them all
  // (attribute writes are collective too): the root's report decides, and
  // all processes hold the same report (it is gathered before writing).
  const std::uint64_t n = r.bytes.size();
  const bool one_job = n > 0 && std::all_of(r.job.begin(), r.job.end(), [&](std::uint32_t j) { return j == r.job[0]; });
  if (one_job) {
    out.attr("/collectives", "op", r.op[0]);
    out.attr("/collectives", "algorithm", r.algorithm[0]);
    out.attr("/collectives", "ranks", static_cast<std::uint64_t>(r.ranks[0]));
  }
  const RootRows w{out, is_root};
  w.col("/collectives/job", n, r.job);
  w.strings("/collectives/op", n, r.op);
  w.strings("/collectives/algorithm", n, r.algorithm);
  w.col("/collectives/ranks", n, r.ranks);
  w.col("/collectives/bytes", n, r.bytes);
  w.col("/collectives/iteration", n, r.iteration);
  w.col("/collectives/start_ns", n, r.start_ns);
  w.col("/collectives/end_ns", n, r.end_ns);
  w.col("/collectives/algbw_gbps", n, r.algbw_gbps);
  w.col("/collectives/busbw_gbps", n, r.busbw_gbps);
  w.col("/collectives/schedule_ns", n, r.schedule_ns);
  w.col("/collectives/synthesis_seconds", n, r.synthesis_seconds);
  w.col("/collectives/finished", n, r.finished);
}

void write_jobs(H5Writer& out, const std::vector<JobRow>& jobs, bool is_root) {
  out.group("/jobs");
  const std::uint64_t n = jobs.size();
  // One column: the field of every row.
  const auto column = [&](auto field) {
    std::vector<std::decay_t<decltype(jobs[0].*field)>> v;
    for (const auto& j : jobs) v.push_back(j.*field);
    return v;
  };
  const RootRows w{out, is_root};
  w.strings("/jobs/kind", n, column(&JobRow::kind));
  w.strings("/jobs/model", n, column(&JobRow::model));
  w.strings("/jobs/schedule", n, column(&JobRow::schedule));
  w.strings("/jobs/op", n, column(&JobRow::op));
  w.strings("/jobs/algorithm", n, column(&JobRow::algorithm));
  w.col("/jobs/data_parallel", n, column(&JobRow::data_parallel));
  w.col("/jobs/pipeline_parallel", n, column(&JobRow::pipeline_parallel));
  w.col("/jobs/tensor_parallel", n, column(&JobRow::tensor_parallel));
  w.col("/jobs/expert_parallel", n, column(&JobRow::expert_parallel));
  w.col("/jobs/micro_batches", n, column(&JobRow::micro_batches));
  w.col("/jobs/endpoints", n, column(&JobRow::endpoints));
  w.col("/jobs/start_ns", n, column(&JobRow::start_ns));
  w.col("/jobs/mean_iteration_ns", n, column(&JobRow::mean_time_ns));
  w.col("/jobs/p99_iteration_ns", n, column(&JobRow::p99_time_ns));
  w.col("/jobs/arrival_ns", n, column(&JobRow::arrival_ns));
  w.col("/jobs/end_ns", n, column(&JobRow::end_ns));
  w.strings("/jobs/stage", n, column(&JobRow::stage));
  w.col("/jobs/reserved", n, column(&JobRow::reserved));
  w.col("/jobs/virtual_leaves", n, column(&JobRow::virtual_leaves));
  w.col("/jobs/virtual_spines", n, column(&JobRow::virtual_spines));
  w.col("/jobs/refused_gpus", n, column(&JobRow::refused_gpus));
  w.col("/jobs/refused_network", n, column(&JobRow::refused_network));
  w.col("/jobs/deadline_ns", n, column(&JobRow::deadline_ns));
  w.col("/jobs/circuits_switched", n, column(&JobRow::circuits_switched));
  w.col("/jobs/scaling_factor", n, column(&JobRow::scaling_factor));
}

void write_placement(H5Writer& out, const PlacementReport& r, bool is_root) {
  out.group("/placement");
  const RootRows w{out, is_root};
  w.col("/placement/endpoint_job", r.endpoint_job.size(), r.endpoint_job);
  w.col("/placement/endpoint", r.endpoint.size(), r.endpoint);
  w.col("/placement/rank", r.rank.size(), r.rank);
  w.col("/placement/link_job", r.link_job.size(), r.link_job);
  w.col("/placement/leaf", r.leaf.size(), r.leaf);
  w.col("/placement/spine", r.spine.size(), r.spine);
  w.col("/placement/slot", r.slot.size(), r.slot);
}

void write_ocs(H5Writer& out, const OcsReport& r, bool is_root) {
  out.group("/ocs");
  const RootRows w{out, is_root};
  w.col("/ocs/time_ns", r.time_ns.size(), r.time_ns);
  w.col("/ocs/job", r.job.size(), r.job);
  w.col("/ocs/leaf", r.leaf.size(), r.leaf);
  w.col("/ocs/spine", r.spine.size(), r.spine);
  w.col("/ocs/slot", r.slot.size(), r.slot);
  w.col("/ocs/on", r.on.size(), r.on);
}

void write_reconfig(H5Writer& out, const ReconfigReport& r, bool is_root) {
  out.group("/reconfig");
  const RootRows w{out, is_root};
  const std::uint64_t n = r.time_ns.size();
  w.col("/reconfig/time_ns", n, r.time_ns);
  w.col("/reconfig/pause_end_ns", n, r.pause_end_ns);
  w.col("/reconfig/demand_bytes", n, r.demand_bytes);
  w.col("/reconfig/waiting_messages", n, r.waiting_messages);
  w.col("/reconfig/demand_links", n, r.demand_links);
  w.col("/reconfig/repair_links", n, r.repair_links);
  w.col("/reconfig/circuits_off", n, r.circuits_off);
  w.col("/reconfig/circuits_on", n, r.circuits_on);
  out.group("/reconfig_links");
  const std::uint64_t k = r.link_row.size();
  w.col("/reconfig_links/row", k, r.link_row);
  w.col("/reconfig_links/src", k, r.link_src);
  w.col("/reconfig_links/dst", k, r.link_dst);
  w.col("/reconfig_links/count", k, r.link_count);
}

void write_dnn(H5Writer& out, const DnnReport& r, bool is_root) {
  out.group("/iterations");
  const RootRows w{out, is_root};
  const std::uint64_t n = r.job.size();
  w.col("/iterations/job", n, r.job);
  w.col("/iterations/iteration", n, r.iteration);
  w.col("/iterations/start_ns", n, r.start_ns);
  w.col("/iterations/end_ns", n, r.end_ns);
  w.col("/iterations/time_ns", n, r.time_ns);
  w.col("/iterations/compute_ns", n, r.compute_ns);
  w.col("/iterations/exposed_comm_ns", n, r.exposed_comm_ns);
  w.col("/iterations/finished", n, r.finished);
  for (std::size_t q = 0; q < r.phase_names.size(); ++q)
    w.col("/iterations/" + r.phase_names[q] + "_ns", n, r.phase_ns[q]);
}

void write_timeline(H5Writer& out, const TimelineReport& t) {
  out.group("/timeline");
  std::string names;
  for (const auto& n : t.phase_names) names += (names.empty() ? "" : ",") + n;
  out.attr("/timeline", "phase_names", names);
  out.write_rows("/timeline/job", t.total, t.rows, t.job);
  out.write_rows("/timeline/endpoint", t.total, t.rows, t.endpoint);
  out.write_rows("/timeline/iteration", t.total, t.rows, t.iteration);
  out.write_rows("/timeline/phase", t.total, t.rows, t.phase);
  out.write_rows("/timeline/start_ns", t.total, t.rows, t.start_ns);
  out.write_rows("/timeline/end_ns", t.total, t.rows, t.end_ns);
}

void write_trace_nodes(H5Writer& out, const TraceNodesReport& t) {
  out.group("/trace_nodes");
  std::string names;
  for (const auto& n : t.kind_names) names += (names.empty() ? "" : ",") + n;
  out.attr("/trace_nodes", "kind_names", names);
  if (t.kept) {
    // Each column a pass over the kept rows, made as they are written.
    FABRICSIM_ASSERT(t.rows.empty(), "a streamed trace is the run's only job");
    TraceNodeRows& kept = *t.kept;
    const H5Writer::RowRuns* runs = kept.runs();
    const auto rows = runs == nullptr ? H5Writer::Rows::run(t.kept_first, kept.count()) : H5Writer::Rows(*runs);
    FABRICSIM_ASSERT(runs == nullptr || runs->size() == kept.count(), "a row number per kept row");
    TraceNodeRows::Row r;
    const auto column = [&](const char* dataset, auto get) {
      using T = decltype(get(r));
      out.write_rows_made<T>(dataset, t.total, rows, [&](std::size_t i) {
        kept.row(i, r);
        return get(r);
      });
    };
    column("/trace_nodes/job", [](const TraceNodeRows::Row& x) { return x.job; });
    column("/trace_nodes/rank", [](const TraceNodeRows::Row& x) { return x.rank; });
    column("/trace_nodes/endpoint", [](const TraceNodeRows::Row& x) { return x.endpoint; });
    column("/trace_nodes/node_id", [](const TraceNodeRows::Row& x) { return x.node_id; });
    column("/trace_nodes/kind", [](const TraceNodeRows::Row& x) { return x.kind; });
    column("/trace_nodes/start_ns", [](const TraceNodeRows::Row& x) { return x.start_ns; });
    column("/trace_nodes/end_ns", [](const TraceNodeRows::Row& x) { return x.end_ns; });
    out.write_string_rows_made("/trace_nodes/name", t.total, rows, [&](std::size_t i) {
      kept.row(i, r);
      FABRICSIM_ASSERT(r.name < t.name_end.size(), "a row's name is one of the report's");
      const std::uint64_t from = r.name == 0 ? 0 : t.name_end[r.name - 1];
      return std::string_view(t.names).substr(from, t.name_end[r.name] - from);
    });
    return;
  }
  out.write_rows("/trace_nodes/job", t.total, t.rows, t.job);
  out.write_rows("/trace_nodes/rank", t.total, t.rows, t.rank);
  out.write_rows("/trace_nodes/endpoint", t.total, t.rows, t.endpoint);
  out.write_rows("/trace_nodes/node_id", t.total, t.rows, t.node_id);
  out.write_rows("/trace_nodes/kind", t.total, t.rows, t.kind);
  out.write_rows("/trace_nodes/start_ns", t.total, t.rows, t.start_ns);
  out.write_rows("/trace_nodes/end_ns", t.total, t.rows, t.end_ns);
  out.write_string_rows("/trace_nodes/name", t.total, t.rows, t.names, t.name_end, t.name);
}

std::uint64_t peak_memory_bytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024u;  // Linux reports KiB
}

void write_meta(H5Writer& out, const RunMeta& m) {
  out.attr("/meta", "version", m.version);
  out.attr("/meta", "git_sha", m.git_sha);
  out.attr("/meta", "build", m.build);
  out.attr("/meta", "config", m.config_toml);
  out.attr("/meta", "ranks", m.ranks);
  out.attr("/meta", "threads", m.threads);
  out.attr("/meta", "seed", m.seed);
}

void write_topology(H5Writer& out, const net::Topology& topo, const net::StructureReport& r) {
  out.attr("/topology", "kind", topo.kind);
  out.attr("/topology", "description", topo.describe());
  out.attr("/topology", "endpoints", static_cast<std::uint64_t>(r.endpoints));
  out.attr("/topology", "switches", static_cast<std::uint64_t>(r.switches));
  out.attr("/topology", "physical_switches", static_cast<std::uint64_t>(r.physical_switches));
  out.attr("/topology", "box_cables", static_cast<std::uint64_t>(r.box_cables));
  for (int c = 0; c < net::kLinkClassCount; ++c)
    out.attr("/topology", std::string("cables_") + net::to_string(static_cast<net::LinkClass>(c)),
             static_cast<std::uint64_t>(r.cables_by_class[c]));
  for (int t = 0; t < net::kCableTypeCount; ++t)
    out.attr("/topology", std::string("cable_type_") + net::to_string(static_cast<net::CableType>(t)),
             static_cast<std::uint64_t>(r.cables_by_type[t]));
  out.attr("/topology", "cost_planes", static_cast<std::uint64_t>(r.planes));
  out.attr("/topology", "cost_usd", r.cost_usd);
  out.attr("/topology", "paper_cost_usd", r.paper_cost_usd);
  if (topo.kind == "topoopt") {
    out.attr("/topology", "servers", r.servers);
    out.attr("/topology", "degree", static_cast<std::uint64_t>(r.degree));
    out.attr("/topology", "interface_gbps", r.interface_gbps);
    out.attr("/topology", "cost_equivalent_fat_tree_gbps", r.fat_tree_gbps);
    out.attr("/topology", "cost_equivalent_fat_tree_usd", r.fat_tree_cost_usd);
    if (topo.ocs_degree == 0) {  // (an optical fabric's lit circuits change during the run)
      out.attr("/topology", "server_hops", r.server_hops);
      out.attr("/topology", "server_hops_mean", r.server_hops_mean);
    }
  }
  out.attr("/topology", "diameter", static_cast<std::int64_t>(r.diameter));
  out.attr("/topology", "bisection_cables", static_cast<std::uint64_t>(r.bisection_cables));
  out.attr("/topology", "bisection_relative", r.bisection_relative);
}

void write_summary(H5Writer& out, const RunSummary& s) {
  out.attr("/summary", "sim_time_ns", s.sim_time_ns);
  out.attr("/summary", "events", s.events);
  out.attr("/summary", "wall_seconds", s.wall_seconds);
  out.attr("/summary", "events_per_second", s.events_per_second);
}

void write_engine(H5Writer& out, const EngineTelemetry& e) {
  out.attr("/engine", "mode", e.mode);
  out.attr("/engine", "build_seconds", e.build_seconds);
  out.attr("/engine", "partition_seconds", e.partition_seconds);
  out.attr("/engine", "run_seconds", e.run_seconds);
  out.attr("/engine", "write_seconds", e.write_seconds);
  out.attr("/engine", "events_per_rank", e.events_per_rank);
  out.attr("/engine", "run_seconds_per_rank", e.run_seconds_per_rank);
  std::vector<double> rate(e.events_per_rank.size(), 0.0);
  for (std::size_t r = 0; r < rate.size() && r < e.run_seconds_per_rank.size(); ++r)
    if (e.run_seconds_per_rank[r] > 0) rate[r] = static_cast<double>(e.events_per_rank[r]) / e.run_seconds_per_rank[r];
  out.attr("/engine", "events_per_second_per_rank", rate);
  out.attr("/engine", "peak_memory_bytes_per_rank", e.peak_memory_bytes_per_rank);
  out.attr("/engine", "estimated_memory_bytes_per_rank", e.estimated_memory_bytes_per_rank);
  out.attr("/engine", "partitioner", e.partitioner);
  out.attr("/engine", "lookahead_ns", e.lookahead_ns);
  out.attr("/engine", "edge_cut", e.edge_cut);
  out.attr("/engine", "windows", e.windows);
  out.attr("/engine", "skipped_stretches", e.skipped_stretches);
  out.attr("/engine", "critical_path_events", e.critical_path_events);
  out.attr("/engine", "window_efficiency", e.window_efficiency);
  out.attr("/engine", "event_imbalance", e.event_imbalance);
  out.attr("/engine", "remote_records_per_rank", e.remote_records_per_rank);
  out.attr("/engine", "network_model", e.network_model);
  out.attr("/engine", "flows", e.flows);
  out.attr("/engine", "rate_recomputations", e.rate_recomputations);
  out.attr("/engine", "flows_refilled", e.flows_refilled);
  out.attr("/engine", "recompute_seconds", e.recompute_seconds);
  out.attr("/engine", "max_concurrent_flows", e.max_concurrent_flows);
}

namespace {
/// The values of the given rows.
template <class T, class F>
std::vector<T> pick(const std::vector<std::uint64_t>& rows, F&& f) {
  std::vector<T> v;
  v.reserve(rows.size());
  for (auto r : rows) v.push_back(f(static_cast<std::size_t>(r)));
  return v;
}

// The rows i < n where owned(i), `count` of them (SIZE_MAX: counted here
// first).  (Reserved, not grown: a list of a million rows is 8 MB, not the
// 16 MiB a doubling one can reach.)
template <class Pred>
std::vector<std::uint64_t> rows_where(std::size_t n, Pred&& owned, std::size_t count = SIZE_MAX) {
  if (count == SIZE_MAX) {
    count = 0;
    for (std::size_t i = 0; i < n; ++i) count += owned(i) ? 1 : 0;
  }
  std::vector<std::uint64_t> rows;
  rows.reserve(count);
  for (std::size_t i = 0; i < n; ++i)
    if (owned(i)) rows.push_back(i);
  return rows;
}
}  // namespace

void write_network(H5Writer& out, const net::Network& network, const net::NetworkTotals& totals,
                   const std::vector<std::int32_t>& node_rank, bool write_flows, double sim_time_ns,
                   double interval_ns, const std::map<net::LinkId, std::pair<std::uint64_t, std::uint64_t>>* stranded,
                   std::uint64_t messages_failed) {
  const auto& topo = network.topology();
  const std::size_t nl = topo.link_count();
  const auto& L = topo.links();
  // Each process writes the rows of what it simulated: a link's counters live
  // with its sending node, a message's completion with its destination.  The
  // counters come by local index (the process holds nothing per link of the
  // whole fabric): at[k] is the local index of rows[k].
  std::vector<net::LinkId> ids;
  const auto& st = network.local_link_stats(ids);
  std::vector<std::uint64_t> rows;
  std::vector<std::size_t> at;
  for (std::size_t o = 0; o < ids.size(); ++o)
    if (network.owns(L[ids[o]].src)) {
      rows.push_back(ids[o]);
      at.push_back(o);
    }
  // The values of the rows' counters (f takes a local index).
  const auto local = [&](auto f) {
    using T = decltype(f(std::size_t{0}));
    std::vector<T> v;
    v.reserve(at.size());
    for (auto o : at) v.push_back(f(o));
    return v;
  };
  out.write_rows("/links/src", nl, rows, pick<std::uint32_t>(rows, [&](std::size_t i) { return L[i].src; }));
  out.write_rows("/links/dst", nl, rows, pick<std::uint32_t>(rows, [&](std::size_t i) { return L[i].dst; }));
  out.write_rows("/links/src_port", nl, rows, pick<std::uint16_t>(rows, [&](std::size_t i) { return L[i].src_port; }));
  out.write_rows("/links/dst_port", nl, rows, pick<std::uint16_t>(rows, [&](std::size_t i) { return L[i].dst_port; }));
  out.write_rows("/links/class", nl, rows,
                 pick<std::uint8_t>(rows, [&](std::size_t i) { return static_cast<std::uint8_t>(L[i].cls); }));
  out.write_rows("/links/carries_data", nl, rows,
                 pick<std::uint8_t>(rows, [&](std::size_t i) { return static_cast<std::uint8_t>(L[i].carries_data); }));
  out.write_rows("/links/bandwidth_gbps", nl, rows, pick<double>(rows, [&](std::size_t i) { return L[i].bandwidth_gbps; }));
  out.write_rows("/links/latency_ns", nl, rows, pick<double>(rows, [&](std::size_t i) { return L[i].latency.ns(); }));
  out.write_rows("/links/tx_bytes", nl, rows, local([&](std::size_t o) { return std::uint64_t{st.tx_bytes[o]}; }));
  out.write_rows("/links/originated_bytes", nl, rows, local([&](std::size_t o) {
                   return st.originated_bytes.empty() ? std::uint64_t{0} : std::uint64_t{st.originated_bytes[o]};
                 }));
  out.write_rows("/links/forwarded_bytes", nl, rows, local([&](std::size_t o) {
                   return st.forwarded_bytes.empty() ? std::uint64_t{0} : std::uint64_t{st.forwarded_bytes[o]};
                 }));
  out.write_rows("/links/tx_packets", nl, rows, local([&](std::size_t o) { return std::uint64_t{st.tx_packets[o]}; }));
  out.write_rows("/links/busy_ns", nl, rows,
                 local([&](std::size_t o) { return static_cast<double>(st.busy_ps[o]) / 1000.0; }));
  out.write_rows("/links/utilization", nl, rows, local([&](std::size_t o) {
                   return sim_time_ns > 0 ? static_cast<double>(st.busy_ps[o]) / 1000.0 / sim_time_ns : 0.0;
                 }));
  out.write_rows("/links/max_queue_bytes", nl, rows,
                 local([&](std::size_t o) { return std::uint64_t{st.max_queue_bytes[o]}; }));
  out.write_rows("/links/stall_ns", nl, rows,
                 local([&](std::size_t o) { return static_cast<double>(st.stall_ps[o]) / 1000.0; }));
  out.write_rows("/links/flows", nl, rows, local([&](std::size_t o) { return std::uint32_t{st.flows[o]}; }));
  out.write_rows("/links/max_flows", nl, rows,
                 local([&](std::size_t o) { return st.max_flows.empty() ? 0u : st.max_flows[o]; }));
  // Stranded by failures: summed over the ranks (both ends of a cut link may count) by the caller.
  const auto stranded_of = [&](std::size_t l, bool bytes) -> std::uint64_t {
    if (stranded == nullptr) return 0;
    const auto it = stranded->find(static_cast<net::LinkId>(l));
    return it == stranded->end() ? 0 : (bytes ? it->second.second : it->second.first);
  };
  out.write_rows("/links/stranded_packets", nl, rows,
                 pick<std::uint64_t>(rows, [&](std::size_t i) { return stranded_of(i, false); }));
  out.write_rows("/links/stranded_bytes", nl, rows,
                 pick<std::uint64_t>(rows, [&](std::size_t i) { return stranded_of(i, true); }));
  std::string names;
  for (int c = 0; c < net::kLinkClassCount; ++c) {
    if (c) names += ",";
    names += net::to_string(static_cast<net::LinkClass>(c));
  }
  out.attr("/links", "class_names", names);

  if (network.series_bins() > 0) {  // (the same on every rank: the writes are collective)
    const std::uint64_t cols = network.series_bins();
    std::vector<std::uint64_t> tx, q;
    tx.reserve(rows.size() * cols);
    q.reserve(rows.size() * cols);
    // A row may end at its last nonzero bin (NetworkImpl::finish): padded here.
    const auto append_row = [cols](std::vector<std::uint64_t>& dst, const std::vector<std::uint64_t>& row) {
      const std::size_t n = std::min<std::size_t>(row.size(), cols);
      dst.insert(dst.end(), row.begin(), row.begin() + static_cast<std::ptrdiff_t>(n));
      dst.resize(dst.size() + (cols - n), 0);
    };
    for (auto o : at) {
      append_row(tx, st.series_tx_bytes[o]);
      append_row(q, st.series_queue_bytes[o]);
    }
    out.write_matrix_rows("/links/timeseries/tx_bytes", nl, cols, rows, tx);
    out.write_matrix_rows("/links/timeseries/queue_bytes", nl, cols, rows, q);
    out.attr_on_dataset("/links/timeseries/tx_bytes", "interval_ns", interval_ns);
    out.attr_on_dataset("/links/timeseries/queue_bytes", "interval_ns", interval_ns);
    if (!st.series_flows.empty()) {  // (the flow model, which runs on one rank)
      std::vector<double> fl;
      fl.reserve(rows.size() * cols);
      for (auto o : at) fl.insert(fl.end(), st.series_flows[o].begin(), st.series_flows[o].end());
      out.write_matrix_rows("/links/timeseries/flows", nl, cols, rows, fl);
      out.attr_on_dataset("/links/timeseries/flows", "interval_ns", interval_ns);
    }
  }

  const std::size_t nn = topo.node_count();
  const auto& N = topo.nodes();
  const auto node_rows = rows_where(nn, [&](std::size_t i) { return network.owns(static_cast<net::NodeId>(i)); });
  out.write_rows("/nodes/kind", nn, node_rows,
                 pick<std::uint8_t>(node_rows, [&](std::size_t i) { return static_cast<std::uint8_t>(N[i].kind); }));
  out.write_rows("/nodes/level", nn, node_rows, pick<std::uint8_t>(node_rows, [&](std::size_t i) { return N[i].level; }));
  out.write_rows("/nodes/rank", nn, node_rows, pick<std::int32_t>(node_rows, [&](std::size_t i) { return node_rank[i]; }));
  out.write_string_rows("/nodes/name", nn, node_rows,
                        pick<std::string>(node_rows, [&](std::size_t i) { return N[i].name; }));

  if (write_flows) {
    // Each column made from the records as it is written, a piece at a
    // time; at one process every row is this one's (a run, no list).  A
    // record is read through message(id): its memory may have gone back
    // to the system, its contents to a file, read in order.
    const std::size_t nf = network.message_count();
    const auto rec = [&](std::size_t i) { return network.message(static_cast<net::MessageId>(i)); };
    const auto mine = [&](std::size_t i) { return network.owns(topo.endpoint_node(rec(i).dst)); };
    std::size_t count = 0;
    for (std::size_t i = 0; i < nf; ++i) count += mine(i) ? 1 : 0;
    std::vector<std::uint64_t> own;
    if (count < nf) own = rows_where(nf, mine, count);
    const H5Writer::Rows frows = count < nf ? H5Writer::Rows(own) : H5Writer::Rows::run(0, nf);
    const auto column = [&](const char* name, auto f) {
      using T = decltype(f(net::Message{}));
      out.write_rows_made<T>(name, nf, frows, [&](std::size_t i) { return f(rec(frows[i])); });
    };
    column("/flows/src", [](const net::Message& m) { return std::uint32_t{m.src}; });
    column("/flows/dst", [](const net::Message& m) { return std::uint32_t{m.dst}; });
    column("/flows/bytes", [](const net::Message& m) { return std::uint64_t{m.bytes}; });
    column("/flows/start_ns", [](const net::Message& m) { return m.post_time.ns(); });
    column("/flows/end_ns", [](const net::Message& m) {
      return m.end_time == core::SimTime::max() ? -1.0 : m.end_time.ns();
    });
  }

  out.attr("/summary", "packets_injected", totals.packets_injected);
  out.attr("/summary", "packets_delivered", totals.packets_delivered);
  out.attr("/summary", "bytes_injected", totals.bytes_injected);
  out.attr("/summary", "bytes_delivered", totals.bytes_delivered);
  out.attr("/summary", "packets_dropped", totals.packets_dropped);
  out.attr("/summary", "packets_stranded", totals.packets_stranded);
  out.attr("/summary", "bytes_stranded", totals.bytes_stranded);
  out.attr("/summary", "bytes_unsent", totals.bytes_unsent);
  out.attr("/summary", "messages_failed", messages_failed);
  out.attr("/summary", "packet_hops", totals.packet_hops);
  out.attr("/summary", "messages_delivered", totals.messages_delivered);
  out.attr("/summary", "messages", static_cast<std::uint64_t>(network.message_count()));
  out.attr("/summary", "endpoints", static_cast<std::uint64_t>(topo.endpoint_count()));
  // Per endpoint, all its injection links together (the mean if endpoints differ).
  out.attr("/summary", "injection_gbps",
           topo.endpoint_count() ? topo.total_injection_gbps() / static_cast<double>(topo.endpoint_count()) : 0.0);
}

void write_throughput(H5Writer& out, const ThroughputShares& shares) {
  out.attr("/summary", "throughput_share", shares.makespan);
  out.attr("/summary", "per_source_share", shares.per_source);
  out.attr("/summary", "steady_share", shares.steady);
  out.attr("/summary", "steady_from_ns", static_cast<double>(shares.steady_from_ps) / 1000.0);
  out.attr("/summary", "steady_to_ns", static_cast<double>(shares.steady_to_ps) / 1000.0);
}

}  // namespace fabricsim::stats
