#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "fabricsim/config/config.hpp"
#include "fabricsim/par/partition.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/fluid.hpp"
#include "jobs.hpp"
#include "memory.hpp"
#include "workload.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

int info_loaded(const InfoOptions& opts, const config::Config& cfg);

int info_impl(const InfoOptions& opts) {
  const config::Config cfg = config::load(opts.config, opts.overrides);
  try {
    return info_loaded(opts, cfg);
  } catch (const util::ConfigError& e) {
    throw util::ConfigError(cfg.locate(e.what()));
  }
}

// Thrown from the builder's size announcement when `info` will not build.
struct TooLargeToBuild {
  std::size_t nodes, links;
};

// `info` on a fabric it does not build: the sizes the builder announced and
// the memory a run would need from them, in seconds.
int info_sizes_only(const InfoOptions& opts, const config::Config& cfg, std::size_t nodes, std::size_t links) {
  const int est_ranks = std::max(opts.ranks, 1);
  const MemoryEstimate memory = estimate_memory(cfg, est_ranks, nodes, links);
  const std::uint64_t limit = memory_limit_per_rank(cfg, est_ranks);
  if (opts.json) {
    fmt::print("{{\"config\": \"{}\", \"topology\": \"{}\", \"built\": false, \"nodes\": {}, \"directed_links\": {}, "
               "\"memory\": {{\"ranks\": {}, \"per_rank_bytes\": {}, \"limit_per_rank_bytes\": {}, \"program\": {}, "
               "\"topology\": {}, \"network_state\": {}, \"partitioning\": {}, \"sizes_only\": true}}}}\n",
               json_escape(cfg.source()), cfg.get_string("topology.kind"), nodes, links, est_ranks, memory.total(), limit,
               memory.process, memory.description, memory.state, memory.partition);
    return 0;
  }
  fmt::print("{} topology, not built: {} directed links is over {} (info --full builds it)\n",
             cfg.get_string("topology.kind"), links, kInfoBuildLinks);
  fmt::print("  config           {}\n", cfg.source());
  fmt::print("  nodes            {}\n", nodes);
  fmt::print("  links            {} directed ({} cables)\n", links, links / 2);
  fmt::print("  memory           {} estimated at {} rank{}, {} the limit of {} per rank "
             "(engine.memory_limit_gib shared by {} rank{} on this machine)\n",
             memory.describe(), est_ranks, est_ranks == 1 ? "" : "s", memory.total() <= limit ? "within" : "OVER",
             human_bytes(static_cast<double>(limit)), est_ranks, est_ranks == 1 ? "" : "s");
  return 0;
}

int info_loaded(const InfoOptions& opts, const config::Config& cfg) {
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<net::Topology> built;
  try {
    const net::SizeCheck size_check([&](std::size_t nodes, std::size_t links) {
      if (!opts.full && links > kInfoBuildLinks) throw TooLargeToBuild{nodes, links};
    });
    built.emplace(build_topology(cfg));
  } catch (const TooLargeToBuild& t) {
    return info_sizes_only(opts, cfg, t.nodes, t.links);
  }
  net::Topology& topo = *built;
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const net::StructureReport report = net::structure_report(topo, cost_model(cfg));
  const int diameter = report.diameter;
  // Fluid estimate of the configured traffic.
  net::NetworkParams np = network_params(cfg);
  // The route tables of a direct topology may be too large to build here
  // (16k endpoints); the structure is still worth reporting.
  Routing routing;
  bool routable = true;
  try {
    routing = setup_routing(cfg, topo, np);
  } catch (const util::ConfigError& e) {
    routing.note = std::string("cannot run: ") + e.what();
    routable = false;
  }
  const std::string& routing_note = routing.note;
  // Peak memory per rank of a run of this configuration on --ranks ranks
  // (1 by default), all on this machine.
  const int est_ranks = std::max(opts.ranks, 1);
  MemoryEstimate memory = estimate_memory(cfg, est_ranks, topo, np);
  const std::uint64_t memory_limit = memory_limit_per_rank(cfg, est_ranks);
  std::vector<workload::PlannedMessage> plan;
  // Task-graph jobs planned up front (workload.queue = "none"): the fluid
  // estimate of their messages; otherwise of workload.pattern's.
  const bool jobs_traffic = runs_jobs(cfg) && cfg.get_string("workload.queue") == "none";
  // The bound a run of this routing obeys: the minimal-route estimate where
  // packets take minimal routes, else the any-route bound (none if it was
  // over its budget).
  const bool minimal_routing = !(np.routing == net::RoutingAlgorithm::Valiant ||
                                 np.routing == net::RoutingAlgorithm::UgalLocal ||
                                 np.routing == net::RoutingAlgorithm::UgalGlobal || cfg.get_int("routing.k_paths") > 1);
  workload::FluidEstimate fluid;
  fluid.link_bytes.assign(topo.link_count(), 0.0);
  workload::AnyRouteBound any_route;
  // The fluid estimate routes every message: the one part of `info` whose
  // time grows with the fabric beyond seconds (71 s at 64k endpoints).
  // So do a pattern's messages, each planned and added to its pair's sum.
  const std::uint64_t pattern_messages =
      jobs_traffic ? 0 : workload::count_traffic(traffic_params(cfg), static_cast<std::uint32_t>(topo.endpoint_count()));
  const std::uint64_t info_limit = memory_limit_per_rank(cfg, 1);
  std::string fluid_left_out;  // why, if it is
  if (!opts.full && topo.link_count() > kInfoQuickLinks)
    fluid_left_out = fmt::format("{} directed links is over {} (info --full computes it; it routes every message, "
                                 "minutes on the largest fabrics)",
                                 topo.link_count(), kInfoQuickLinks);
  else if (pattern_messages > info_limit / kInfoFluidBytesPerMessage)
    fluid_left_out = fmt::format("planning {} messages would take about {}, over the {} of engine.memory_limit_gib "
                                 "(sample the pattern: workload.messages)",
                                 pattern_messages,
                                 human_bytes(static_cast<double>(pattern_messages) * kInfoFluidBytesPerMessage),
                                 human_bytes(static_cast<double>(info_limit)));
  else if (!opts.full && pattern_messages > kInfoQuickMessages)
    fluid_left_out = fmt::format("{} messages is over {} (info --full computes it; it routes every message)",
                                 pattern_messages, kInfoQuickMessages);
  const bool fluid_skipped = routable && !fluid_left_out.empty();
  if (routable && !fluid_skipped) {  // (a topology that cannot run gets no estimate, and its partition weighs nodes alike)
    if (jobs_traffic) {
      // The jobs' messages (a trace's too), all at once: the bound ignores
      // their dependencies, so a run cannot beat it.
      // (Planning them also tells what they hold: the memory estimate's jobs.)
      PlannedSize planned;
      for (const LabelledMessage& m : plan_messages(cfg, topo, &planned)) plan.push_back({m.src, m.dst, m.bytes, {}});
      memory.jobs = planned.bytes;
      memory.run_lower_bound_ns = planned.end_lower_bound.ns();
      estimate_series(memory, cfg, topo.link_count(), local_links_estimate(topo.link_count(), est_ranks));
    } else {
      plan = workload::plan_traffic(traffic_params(cfg), topo, np);
    }
    // The per-source share's bound holds where every source starts at once:
    // a pattern's traffic, not jobs' (whose sources start when their tasks do).
    const auto detail = jobs_traffic ? workload::FluidDetail::Bound : workload::FluidDetail::PerSourceBound;
    if (np.state_routes) {  // direct topologies: the routes of their rules
      fluid = workload::estimate_fluid(topo, *np.state_routes, plan, np, detail);
    } else {
      const net::RoutingTable routes(topo);  // minimal routes: what the estimate spreads traffic over
      fluid = workload::estimate_fluid(topo, routes, plan, np, detail);
    }
    // Where it is the routing's bound: within the quick budget, or the full
    // one with --full.  For minimal routing it is only a comparison, which
    // took 97% of info's 2.5 s on the 1k torus: computed with --full only,
    // at the quick budget.
    if (!minimal_routing || opts.full)
      any_route = workload::bound_any_routes(topo, plan, np,
                                             opts.full && !minimal_routing ? kInfoAnyRouteWorkFull : kInfoAnyRouteWork);
  }
  const bool have_bound = minimal_routing || any_route.computed;
  // (For minimal routing both are bounds, the any-route one when --full
  // computed it: the tighter one holds.)
  const double bound = !minimal_routing         ? any_route.throughput_bound
                       : any_route.computed     ? std::min(fluid.throughput_bound, any_route.throughput_bound)
                                                : fluid.throughput_bound;
  // The per-source share's: both are valid for minimal routing (-1: none).
  const double any_route_per_source = jobs_traffic || !any_route.computed ? -1.0 : any_route.per_source_bound;
  double per_source_bound = any_route_per_source;
  if (minimal_routing && fluid.per_source_bound >= 0)
    per_source_bound = per_source_bound < 0 ? fluid.per_source_bound : std::min(per_source_bound, fluid.per_source_bound);
  const auto json_bound = [](double b) { return b >= 0 ? fmt::format("{:.6f}", b) : std::string("null"); };
  // Jobs whose messages info did not plan: their memory is not known.  A
  // queue's jobs are planned only as they are admitted, so never here.
  const bool queued_jobs = runs_jobs(cfg) && !jobs_traffic;
  const bool jobs_unplanned = queued_jobs || (jobs_traffic && (!routable || fluid_skipped));
  // The work of a run: packets, packet-hops along the fluid routes (wire
  // bytes over all links per wire byte injected), events, core-hours.
  const double kEventsPerHop = 1.5;     // measured 1.1 (64k tree permutation) to 2.7 (torus alltoall)
  const double kEventsPerSecond = 1e6;  // per core; this VM: 1-6 M (docs/performance.md)
  double packets = 0, wire = 0, link_wire = 0;
  const std::uint64_t ppp = np.packet_bytes - np.header_bytes;  // payload per packet
  for (const auto& m : plan) {
    packets += static_cast<double>((m.bytes + ppp - 1) / ppp);
    wire += static_cast<double>(workload::wire_bytes(m.bytes, np));
  }
  for (double b : fluid.link_bytes) link_wire += b;
  const double hops_per_packet = wire > 0 ? link_wire / wire : 0;
  const double packet_hops = packets * hops_per_packet;
  const double events = packet_hops * kEventsPerHop;
  const double core_hours = events / kEventsPerSecond / 3600.0;
  std::string bn_name = "-", bn_class = "-";
  if (fluid.bottleneck != net::kNoLink) {
    const auto& l = topo.link(fluid.bottleneck);
    bn_name = topo.node(l.src).name + " -> " + topo.node(l.dst).name;
    bn_class = net::to_string(l.cls);
  }

  struct PartRow {
    std::string name;
    par::PartitionQuality q;
  };
  std::vector<PartRow> parts;
  if (opts.ranks > 0) {
    const par::Graph g = node_graph(topo, fluid.link_bytes, np.packet_bytes);
    const auto min_cut = core::SimTime::from_ns_f(cfg.get_float("engine.min_cut_latency_ns"));
    for (auto how : {par::Partitioner::Metis, par::Partitioner::Block, par::Partitioner::RoundRobin}) {
      const auto r = par::plan_partition(g, opts.ranks, how, min_cut,
                                         static_cast<std::uint64_t>(cfg.get_int("engine.seed")), topo.units);
      parts.push_back(PartRow{par::to_string(how), r.quality});
    }
  }

  if (opts.json) {
    std::string out = "{";
    out += fmt::format("\"config\": \"{}\", \"topology\": \"{}\", \"description\": \"{}\", ", json_escape(cfg.source()),
                       topo.kind, json_escape(topo.describe()));
    out += fmt::format("\"nodes\": {}, \"endpoints\": {}, \"switches\": {}, \"directed_links\": {}, "
                       "\"data_links\": {}, \"cables\": {}, ",
                       topo.node_count(), topo.endpoint_count(), topo.switch_count(), topo.link_count(),
                       topo.count_data_links(), topo.link_count() / 2);
    out += "\"links_by_class\": {";
    bool first = true;
    for (int c = 0; c < net::kLinkClassCount; ++c) {
      auto cls = static_cast<net::LinkClass>(c);
      if (!first) out += ", ";
      first = false;
      out += fmt::format("\"{}\": {}", net::to_string(cls), topo.count_links(cls));
    }
    out += "}, \"cables_by_type\": {";
    for (int t = 0; t < net::kCableTypeCount; ++t)
      out += fmt::format("{}\"{}\": {}", t ? ", " : "", net::to_string(static_cast<net::CableType>(t)),
                         report.cables_by_type[t]);
    out += fmt::format("}}, \"physical_switches\": {}, \"box_cables\": {}, \"cost_planes\": {}, \"cost_usd\": {:.2f}",
                       report.physical_switches, report.box_cables, report.planes, report.cost_usd);
    out += fmt::format(", \"paper_cost_usd\": {}", std::isfinite(report.paper_cost_usd)
                                                         ? fmt::format("{:.2f}", report.paper_cost_usd)
                                                         : std::string("null"));
    if (topo.kind == "topoopt")
      out += fmt::format(", \"servers\": {}, \"degree\": {}, \"interface_gbps\": {}, "
                         "\"cost_equivalent_fat_tree_gbps\": {}, \"cost_equivalent_fat_tree_usd\": {:.2f}",
                         report.servers, report.degree, report.interface_gbps, report.fat_tree_gbps,
                         report.fat_tree_cost_usd);
    if (topo.kind == "topoopt") {
      out += fmt::format(", \"server_hops_mean\": {:.6f}, \"server_hops\": [", report.server_hops_mean);
      for (std::size_t h = 0; h < report.server_hops.size(); ++h)
        out += fmt::format("{}{}", h ? ", " : "", report.server_hops[h]);
      out += "]";
    }
    out += fmt::format(", \"bisection_cables\": {}, \"bisection_relative\": {:.6f}", report.bisection_cables,
                       report.bisection_relative);
    out += fmt::format(", \"diameter\": {}, \"build_seconds\": {:.6f}", diameter, build_s);
    out += fmt::format(", \"memory\": {{\"ranks\": {}, \"per_rank_bytes\": {}, \"limit_per_rank_bytes\": {}, "
                       "\"program\": {}, \"topology\": {}, \"routes\": {}, \"network_state\": {}, \"messages\": {}, "
                       "\"queued_packets\": {}, \"planned_jobs\": {}, \"partitioning\": {}}}",
                       est_ranks, memory.total(), memory_limit, memory.process, memory.description, memory.routes,
                       memory.state + memory.series, memory.messages, memory.packets,
                       jobs_unplanned ? std::string("null") : std::to_string(memory.jobs),
                       memory.partition);
    out += fmt::format(", \"fluid_left_out\": {}, \"fluid_left_out_why\": {}, \"fluid_traffic\": \"{}\"",
                       fluid_skipped ? "true" : "false",
                       fluid_skipped ? "\"" + json_escape(fluid_left_out) + "\"" : std::string("null"),
                       jobs_traffic ? "jobs" : "pattern");
    if (!routable || fluid_skipped) {
      out += ", \"fluid\": null";
    } else {
      out += fmt::format(", \"fluid\": {{\"messages\": {}, \"payload_bytes\": {:.0f}, \"bottleneck_link\": {}, "
                         "\"bottleneck\": \"{}\", \"bottleneck_class\": \"{}\", \"bottleneck_bytes\": {:.1f}, "
                         "\"min_makespan_ns\": {:.3f}, \"throughput_bound\": {:.6f}, "
                         "\"equal_split_makespan_ns\": {:.3f}, \"equal_split_throughput\": {:.6f}, \"packets\": {:.0f}, "
                         "\"packet_hops\": {:.0f}, \"events\": {:.0f}, \"core_hours\": {:.6g}",
                         plan.size(), fluid.payload_bytes,
                         fluid.bottleneck == net::kNoLink ? -1 : static_cast<long long>(fluid.bottleneck), bn_name,
                         bn_class, fluid.bottleneck_bytes, fluid.min_makespan_ns, fluid.throughput_bound,
                         fluid.equal_split_makespan_ns, fluid.equal_split_throughput, packets, packet_hops, events,
                         core_hours);
      out += fmt::format(", \"per_source_throughput_bound\": {}", json_bound(fluid.per_source_bound));
      out += fmt::format(", \"any_route\": {}, \"minimal_routing\": {}, \"bound\": {}, \"per_source_bound\": {}}}",
                         any_route.computed
                             ? fmt::format("{{\"min_makespan_ns\": {:.3f}, \"throughput_bound\": {:.6f}, "
                                           "\"per_source_bound\": {}, \"rounds\": {}, \"sources\": {}}}",
                                           any_route.min_makespan_ns, any_route.throughput_bound,
                                           json_bound(any_route_per_source), any_route.rounds, any_route.sources)
                             : std::string("null"),
                         minimal_routing ? "true" : "false",
                         have_bound ? fmt::format("{:.6f}", bound) : std::string("null"), json_bound(per_source_bound));
    }
    if (!parts.empty()) {
      out += fmt::format(", \"ranks\": {}, \"partitions\": {{", opts.ranks);
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto& q = parts[i].q;
        out += fmt::format("{}\"{}\": {{\"edge_cut\": {}, \"lookahead_ns\": {}, \"imbalance\": {:.4f}, \"seconds\": {:.6f}}}",
                           i ? ", " : "", parts[i].name, q.edge_cut,
                           q.lookahead == core::SimTime::max() ? std::string("null") : fmt::format("{}", q.lookahead.ns()),
                           q.imbalance, q.seconds);
      }
      out += "}";
    }
    out += "}\n";
    std::fputs(out.c_str(), stdout);
    return 0;
  }

  fmt::print("{}\n", topo.describe());
  fmt::print("  config           {}\n", cfg.source());
  fmt::print("  nodes            {} ({} endpoints, {} switches)\n", topo.node_count(), topo.endpoint_count(),
             topo.switch_count());
  fmt::print("  links            {} directed ({} cables)\n", topo.link_count(), topo.link_count() / 2);
  for (int c = 0; c < net::kLinkClassCount; ++c) {
    auto cls = static_cast<net::LinkClass>(c);
    if (topo.count_links(cls) > 0)
      fmt::print("    {:<14} {} directed\n", net::to_string(cls), topo.count_links(cls));
  }
  if (topo.count_data_links() != topo.link_count())
    fmt::print("    one-way        {} carry data, {} only return credits (directed optical links)\n",
               topo.count_data_links(), topo.link_count() - topo.count_data_links());
  fmt::print("  cables           {} DAC, {} AoC, {} without cable (PCB, inside a box)\n",
             report.cables_by_type[static_cast<int>(net::CableType::DAC)],
             report.cables_by_type[static_cast<int>(net::CableType::AoC)],
             report.cables_by_type[static_cast<int>(net::CableType::None)]);
  fmt::print("  cost             {:.2f} M$ for {} plane{} ({} switch boxes per plane; cost.* prices)\n",
             report.cost_usd / 1e6, report.planes, report.planes == 1 ? "" : "s", report.physical_switches);
  if (report.box_cables > 0)
    fmt::print("                   switches of more than {} ports priced as 2-level fat trees of {}-port boxes, "
               "with {} AoC cables inside them per plane (cost.switch_ports)\n",
               cfg.get_int("cost.switch_ports"), cfg.get_int("cost.switch_ports"), report.box_cables);
  if (std::isfinite(report.paper_cost_usd))
    fmt::print("  paper cost       {:.4f} M$ (TopoOpt paper, Table 2: NICs, transceivers, switch ports, optics, "
               "fibres)\n",
               report.paper_cost_usd / 1e6);
  if (!report.server_hops.empty()) {
    std::string hist;
    for (std::size_t h = 1; h < report.server_hops.size(); ++h)
      hist += fmt::format("{}{}: {}", h > 1 ? ", " : "", h, report.server_hops[h]);
    fmt::print("  server hops      mean {:.3f} over ordered server pairs ({})\n", report.server_hops_mean, hist);
  }
  if (report.degree > 0) {
    if (report.fat_tree_gbps > 0)
      fmt::print("  same cost        a full-bisection fat tree of {} hosts at {} Gb/s per host ({:.4f} M$; TopoOpt "
                 "{} x {} Gb/s per server)\n",
                 report.servers, report.fat_tree_gbps, report.fat_tree_cost_usd / 1e6, report.degree,
                 report.interface_gbps);
    else
      fmt::print("  same cost        no listed fat-tree speed costs as little as this fabric\n");
  }
  if (report.bisection_cables > 0)
    fmt::print("  bisection        {} cables cut, {:.4f} of one half's injection links\n", report.bisection_cables,
               report.bisection_relative);
  if (!routing_note.empty()) fmt::print("  routing          {}\n", routing_note);
  fmt::print("  diameter         {} cables\n", diameter);
  fmt::print("  build time       {:.3f} s\n", build_s);
  fmt::print("  memory           {} peak per rank estimated at {} rank{}, {} the limit of {} per rank "
             "(engine.memory_limit_gib shared by {} rank{} on this machine)\n",
             human_bytes(static_cast<double>(memory.total())), est_ranks, est_ranks == 1 ? "" : "s",
             memory.total() <= memory_limit ? "within" : "OVER", human_bytes(static_cast<double>(memory_limit)),
             est_ranks, est_ranks == 1 ? "" : "s");
  fmt::print("                   {}{}\n", memory.breakdown(),
             !jobs_unplanned ? ""
             : queued_jobs   ? "; the queue's jobs, planned as they are admitted, are not counted"
                             : "; the jobs, not planned here, are not counted (info --full)");
  if (const std::string& model = cfg.get_string("network.model"); model != "packet")
    fmt::print("  network model    {} (one rank; the memory and work figures below are the packet model's)\n", model);
  if (jobs_traffic)
    fmt::print("  workload         {} task-graph job{} (workload.kind{}); the traffic figures below are their "
               "messages, all at once (dependencies ignored: a bound on the run's communication)\n",
               std::max<std::size_t>(cfg.job_count(), 1), cfg.job_count() > 1 ? "s" : "",
               cfg.job_count() > 0 ? ", [[jobs]]" : "");
  else if (runs_jobs(cfg))
    fmt::print("  workload         {} task-graph job{} (workload.kind{}) in a queue; the traffic figures below are "
               "those of workload.pattern, not of the jobs\n",
               std::max<std::size_t>(cfg.job_count(), 1), cfg.job_count() > 1 ? "s" : "",
               cfg.job_count() > 0 ? ", [[jobs]]" : "");
  else if (const std::string& kind = cfg.get_string("workload.kind"); kind != "traffic")
    fmt::print("  workload         {} (workload.kind); the traffic figures below are those of workload.pattern, not "
               "of its jobs\n",
               kind);
  if (!routable) fmt::print("  traffic          (no fluid estimate: the topology cannot run as configured)\n");
  else if (fluid_skipped)
    fmt::print("  fluid estimate   left out: {}\n", fluid_left_out);
  else {
  fmt::print("  traffic          {} messages, {:.1f} MiB payload ({})\n", plan.size(), fluid.payload_bytes / 1048576.0,
             jobs_traffic ? std::string("the jobs'") : cfg.get_string("workload.pattern"));
  fmt::print("  fluid estimate   bottleneck link {} ({}, {}) carries {:.1f} KiB\n",
             fluid.bottleneck == net::kNoLink ? -1 : static_cast<long long>(fluid.bottleneck), bn_name, bn_class,
             fluid.bottleneck_bytes / 1024.0);
  fmt::print("                   minimal routes: makespan >= {:.3f} us, throughput <= {:.1f}% of injection (split "
             "in any way; split equally, as ECMP and spraying expect: {:.3f} us, {:.1f}%)\n",
             fluid.min_makespan_ns / 1000.0, 100.0 * fluid.throughput_bound, fluid.equal_split_makespan_ns / 1000.0,
             100.0 * fluid.equal_split_throughput);
  if (any_route.computed)
    fmt::print("                   any routes:     makespan >= {:.3f} us, throughput <= {:.1f}% of injection "
               "({} length functions)\n",
               any_route.min_makespan_ns / 1000.0, 100.0 * any_route.throughput_bound, any_route.rounds);
  else if (minimal_routing && !opts.full)
    fmt::print("                   any routes:     not computed for minimal routing (info --full computes it)\n");
  else
    fmt::print("                   any routes:     left out ({} shortest-route trees per round over {} links is over "
               "the budget{})\n",
               any_route.sources, topo.link_count(), opts.full || minimal_routing ? "" : "; info --full allows more");
  fmt::print("                   bound for routing.algorithm = {}: {}\n", cfg.get_string("routing.algorithm"),
             have_bound ? fmt::format("{:.1f}% ({})", 100.0 * bound, minimal_routing ? "minimal routes" : "any routes")
                        : std::string("none computed (non-minimal routes; info --full)"));
  if (per_source_bound >= 0)
    fmt::print("                   per-source share (mean of each source's rate) <= {:.1f}% (sources that finish "
               "early count for more: docs/model.md)\n",
               100.0 * per_source_bound);
  fmt::print("  expected work    {:.3g} packets over {:.3g} packet-hops ({:.2f} links per packet on the fluid routes)\n",
             packets, packet_hops, hops_per_packet);
  fmt::print("                   ~{:.3g} events ({} per packet-hop), ~{:.3g} core-hours at {:.0f} M events/s per core\n",
             events, kEventsPerHop, core_hours, kEventsPerSecond / 1e6);
  }
  if (!parts.empty()) {
    fmt::print("  partition for {} ranks:\n", opts.ranks);
    fmt::print("    {:<12} {:>10} {:>14} {:>10} {:>10}\n", "partitioner", "edge cut", "lookahead", "imbalance", "time");
    for (const auto& r : parts) {
      fmt::print("    {:<12} {:>10} {:>14} {:>10.3f} {:>9.3f}s\n", r.name, r.q.edge_cut,
                 r.q.lookahead == core::SimTime::max() ? std::string("(none cut)") : fmt::format("{} ns", r.q.lookahead.ns()),
                 r.q.imbalance, r.q.seconds);
    }
  }
  return 0;
}

}  // namespace

int report_errors(const std::function<int()>& body) {
  try {
    return body();
  } catch (const util::UserError& e) {
    std::fprintf(stderr, "error: %s\n", util::one_line(e.what()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: unexpected failure: %s\n", util::one_line(e.what()).c_str());
    return 1;
  }
}

int info_command(const InfoOptions& opts) {
  return report_errors([&] { return info_impl(opts); });
}

int params_command() {
  std::fputs(config::params_markdown().c_str(), stdout);
  return 0;
}

}  // namespace fabricsim::app
