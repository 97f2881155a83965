// TACOS collectives in the simulator: the NPU graph of a communicator on a
// fabric, and the plan (synthesized or read, always checked) that the
// "tacos" collective algorithm runs.  See workload/tacos.hpp.
#include "fabricsim/workload/tacos.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <unordered_map>

#include <fmt/format.h>

#include "fabricsim/synth/ilp.hpp"
#include "fabricsim/util/disjoint_sets.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::workload {

using util::ConfigError;

namespace {

// The unwinding degree of a switch of `members` endpoints.
std::uint32_t unwind_degree(const std::string& unwind, std::uint32_t members, const std::string& prefix) {
  if (unwind == "ring" || unwind == "bidirectional_ring") return 1;
  if (unwind == "max") return members - 1;
  std::uint32_t d = 0;
  const bool digits = !unwind.empty() && unwind.size() < 10 &&
                      std::all_of(unwind.begin(), unwind.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) d = static_cast<std::uint32_t>(std::stoul(unwind));
  if (d == 0)
    throw ConfigError(prefix + ".tacos_unwind: '" + unwind +
                      "' is not an unwinding (ring, bidirectional_ring, max or a degree from 1)");
  return std::min(d, members - 1);
}

std::string without(std::string text, const std::string& piece) {
  if (const auto at = text.find(piece); at != std::string::npos) text.erase(at, piece.size());
  return text;
}

std::uint64_t part(std::uint64_t S, std::uint64_t n, std::uint64_t j) { return S / n + (j < S % n ? 1 : 0); }

synth::Op synth_op(CollectiveOp op, const std::string& prefix) {
  switch (op) {
    case CollectiveOp::Allreduce: return synth::Op::AllReduce;
    case CollectiveOp::ReduceScatter: return synth::Op::ReduceScatter;
    case CollectiveOp::Allgather: return synth::Op::AllGather;
    case CollectiveOp::Broadcast: return synth::Op::Broadcast;
    case CollectiveOp::Reduce: return synth::Op::Reduce;
    case CollectiveOp::Scatter: return synth::Op::Scatter;
    case CollectiveOp::Gather: return synth::Op::Gather;
    default: break;
  }
  throw ConfigError(prefix + ".algorithm: tacos does not synthesize " + std::string(to_string(op)));
}

// The bytes every chunk carries: the operation's data split as evenly as
// the chunks allow (scatter and gather move all but the root's part).
std::vector<std::uint64_t> chunk_sizes(const CollectiveSpec& spec, const synth::NpuGraph& g, std::uint32_t chunks) {
  std::uint64_t total = spec.bytes;
  std::uint64_t live = 0;
  for (std::uint32_t v = 0; v < g.npus; ++v) live += g.is_failed(v) ? 0 : 1;
  if (spec.op == CollectiveOp::Scatter || spec.op == CollectiveOp::Gather) total -= part(spec.bytes, live, 0);
  std::vector<std::uint64_t> out(chunks);
  for (std::uint32_t c = 0; c < chunks; ++c) out[c] = part(total, chunks, c);
  return out;
}

}  // namespace

synth::NpuGraph npu_graph(const net::Topology& topo, const std::vector<net::EndpointId>& ranks,
                          const std::string& unwind, const std::string& prefix,
                          const std::vector<net::LinkId>& down_links) {
  synth::NpuGraph g;
  g.npus = static_cast<std::uint32_t>(ranks.size());
  std::vector<std::uint8_t> down(topo.links().size(), 0);
  for (net::LinkId l : down_links) down[l] = 1;
  const auto nodes = topo.nodes().size();
  std::vector<std::uint32_t> rank_of(nodes, UINT32_MAX);
  for (std::uint32_t r = 0; r < ranks.size(); ++r) rank_of[topo.endpoint_node(ranks[r])] = r;
  const auto& links = topo.links();
  // Direct cables between two ranks, and the switch components.
  util::DisjointSets<net::NodeId> comp(nodes);  // the switch components
  for (net::LinkId li = 0; li < links.size(); ++li) {
    const net::Link& l = links[li];
    if (!l.carries_data || down[li] != 0) continue;
    const bool s_ep = topo.nodes()[l.src].kind == net::NodeKind::Endpoint;
    const bool d_ep = topo.nodes()[l.dst].kind == net::NodeKind::Endpoint;
    if (s_ep && d_ep && rank_of[l.src] != UINT32_MAX && rank_of[l.dst] != UINT32_MAX)
      g.links.push_back(synth::Link{rank_of[l.src], rank_of[l.dst], l.latency.ns(), l.bandwidth_gbps});
    else if (!s_ep && !d_ep)
      comp.join_into(l.src, l.dst);
  }
  // Members of each switch component, with their uplink (bandwidth summed
  // over parallel cables, latency of the first) and downlink latency.
  struct Attach {
    std::uint32_t rank;
    double up_gbps = 0, up_ns = 0, down_ns = 0;
    double cable_gbps = 0;  // its fastest single cable into the group: what one message can use
  };
  struct Switch {
    std::vector<Attach> members;
    bool intra_server = false;
  };
  std::unordered_map<net::NodeId, std::size_t> index;
  std::vector<Switch> switches;
  for (std::uint32_t r = 0; r < ranks.size(); ++r) {
    const net::Node& ep = topo.nodes()[topo.endpoint_node(ranks[r])];
    for (net::LinkId li : ep.out) {
      const net::Link& l = links[li];
      if (!l.carries_data || down[li] != 0 || topo.nodes()[l.dst].kind != net::NodeKind::Switch) continue;
      const net::NodeId root = comp.find(l.dst);
      const auto [it, fresh] = index.try_emplace(root, switches.size());
      if (fresh) switches.emplace_back();
      Switch& sw = switches[it->second];
      sw.intra_server = sw.intra_server || l.cls == net::LinkClass::IntraServer;
      if (sw.members.empty() || sw.members.back().rank != r) {
        Attach a{r};
        a.up_ns = l.latency.ns();
        a.down_ns = l.reverse != net::kNoLink ? links[l.reverse].latency.ns() : a.up_ns;
        sw.members.push_back(a);
      }
      sw.members.back().up_gbps += l.bandwidth_gbps;
      sw.members.back().cable_gbps = std::max(sw.members.back().cable_gbps, l.bandwidth_gbps);
    }
  }
  // Pairs joined by a cable: the network routes a message between them over
  // it, never through a switch, so no unwound link may claim that path.
  std::set<std::pair<std::uint32_t, std::uint32_t>> direct;
  for (const synth::Link& l : g.links) direct.emplace(l.src, l.dst);
  const auto cabled = [&](const Attach& a, const Attach& b) { return direct.count({a.rank, b.rank}) > 0; };
  for (Switch& sw : switches) {
    const auto N = static_cast<std::uint32_t>(sw.members.size());
    if (N < 2) continue;
    const std::uint32_t d = sw.intra_server ? N - 1 : unwind_degree(unwind, N, prefix);
    const bool both = !sw.intra_server && unwind == "bidirectional_ring";
    if (!direct.empty() && d < N - 1) {
      // The ring order: rank order, but next the first member not cabled to
      // the last one where there is such (HammingMesh: a row switch joins
      // accelerators of several boards; neighbours on a board alternate).
      std::vector<Attach> order{sw.members[0]};
      std::vector<std::uint8_t> taken(N, 0);
      taken[0] = 1;
      while (order.size() < N) {
        std::uint32_t pick = N;
        for (std::uint32_t k = 0; k < N && pick == N; ++k)
          if (taken[k] == 0 && !cabled(order.back(), sw.members[k])) pick = k;
        for (std::uint32_t k = 0; k < N && pick == N; ++k)
          if (taken[k] == 0) pick = k;
        taken[pick] = 1;
        order.push_back(sw.members[pick]);
      }
      sw.members = std::move(order);
    }
    for (std::uint32_t k = 0; k < N; ++k) {
      const Attach& a = sw.members[k];
      // Its uplink shared by its d links, none faster than one cable (a
      // message takes one path).
      const double share = std::min(a.cable_gbps, a.up_gbps / (both && N > 2 ? 2.0 : static_cast<double>(d)));
      const auto add = [&](const Attach& b) {
        if (!cabled(a, b)) g.links.push_back(synth::Link{a.rank, b.rank, a.up_ns + b.down_ns, share});
      };
      for (std::uint32_t j = 1; j <= d; ++j) add(sw.members[(k + j) % N]);
      if (both && N > 2) add(sw.members[(k + N - 1) % N]);
    }
  }
  // A rank whose endpoint lost every link is a failed NPU.
  if (!down_links.empty()) {
    for (std::uint32_t r = 0; r < g.npus; ++r) {
      bool any = false;
      for (net::LinkId li : topo.nodes()[topo.endpoint_node(ranks[r])].out)
        any = any || (links[li].carries_data && down[li] == 0);
      if (!any) {
        if (g.failed.empty()) g.failed.assign(g.npus, 0);
        g.failed[r] = 1;
      }
    }
  }
  return g;
}

synth::Request tacos_request(const CollectiveSpec& spec, const synth::NpuGraph& g, const std::string& prefix) {
  synth::Request r;
  r.op = synth_op(spec.op, prefix);
  r.root = spec.root;
  std::uint64_t n = 0;  // live NPUs (a failed one takes no part)
  for (std::uint32_t v = 0; v < g.npus; ++v) n += g.is_failed(v) ? 0 : 1;
  const bool rooted = spec.op == CollectiveOp::Broadcast || spec.op == CollectiveOp::Reduce;
  const bool scatter = spec.op == CollectiveOp::Scatter || spec.op == CollectiveOp::Gather;
  // Each NPU's piece (rooted: the whole buffer at the root).
  const std::uint64_t moved = scatter ? spec.bytes - part(spec.bytes, n, 0) : spec.bytes;
  const std::uint64_t owners = rooted ? 1 : scatter ? n - 1 : n;
  const std::uint64_t piece = moved / owners;
  const std::uint64_t k =
      spec.chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, (piece + spec.chunk_bytes - 1) / spec.chunk_bytes);
  // Synthesis keeps a few words per (chunk, NPU): at most 2^24 of them.
  constexpr std::uint64_t kMaxCells = std::uint64_t{1} << 24;
  if (k * owners * n > kMaxCells || k > UINT32_MAX / owners)
    throw ConfigError(fmt::format("{}.chunk_bytes: {} chunks held or wanted by {} NPUs are more chunk-NPU pairs "
                                  "than tacos synthesizes ({}); raise chunk_bytes",
                                  prefix, k * owners, n, kMaxCells));
  if (piece < k || moved < k * owners)
    throw ConfigError(fmt::format("{}.sizes: {} bytes cannot be cut into {} chunks per NPU over {} NPUs",
                                  prefix, spec.bytes, k, n));
  r.chunks_per_npu = static_cast<std::uint32_t>(k);
  r.chunk_bytes = (moved + k * owners - 1) / (k * owners);
  return r;
}

std::shared_ptr<const TacosPlan> plan_tacos(const net::Topology& topo, const std::vector<net::EndpointId>& ranks,
                                            const CollectiveSpec& spec, const TacosOptions& opt) {
  const std::string& prefix = opt.prefix;
  auto plan = std::make_shared<TacosPlan>();
  plan->graph = npu_graph(topo, ranks, opt.unwind, prefix, opt.down_links);
  plan->request = tacos_request(spec, plan->graph, prefix);
  synth::Request checked = plan->request;
  if (!opt.schedule_in.empty()) {
    std::ifstream in(opt.schedule_in);
    if (!in) throw ConfigError(prefix + ".tacos_schedule: cannot read '" + opt.schedule_in + "'");
    synth::Request file;
    try {
      plan->schedule = synth::read_schedule(in, opt.schedule_in, plan->graph, file);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(prefix + ".tacos_schedule: " + e.what());
    }
    const auto mismatch = [&](const std::string& what, const std::string& has, const std::string& wants) {
      throw ConfigError(prefix + ".tacos_schedule: '" + opt.schedule_in + "' is a schedule of " + what + " " + has +
                        ", this run needs " + wants);
    };
    if (file.op != checked.op) mismatch("op", synth::to_string(file.op), synth::to_string(checked.op));
    if (file.root != checked.root &&
        (spec.op == CollectiveOp::Broadcast || spec.op == CollectiveOp::Reduce || spec.op == CollectiveOp::Scatter ||
         spec.op == CollectiveOp::Gather))
      mismatch("root", std::to_string(file.root), std::to_string(checked.root));
    if (file.chunks_per_npu != checked.chunks_per_npu)
      mismatch("chunks_per_npu", std::to_string(file.chunks_per_npu),
               std::to_string(checked.chunks_per_npu) + " (from chunk_bytes and the size)");
    // Its times are checked against its own chunk size.
    checked = file;
    plan->from_file = true;
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    synth::IlpOptions ilp;
    ilp.congestion = opt.synthesizer == "ilp";
    ilp.step_ns = opt.step_ns;
    ilp.time_limit_s = opt.ilp_time_limit_s;
    ilp.clustering = opt.ilp_clustering;
    ilp.window_steps = opt.ilp_window_steps;
    ilp.max_variables = opt.ilp_max_variables;
    const auto by_ilp = [&](const synth::NpuGraph& g, const synth::Collective& c) {
      synth::IlpResult res = synth::ilp(g, c, ilp);
      plan->ilp_status.push_back(res.status);
      return std::move(res.schedule);
    };
    try {
      if (opt.synthesizer == "greedy")
        plan->schedule = synth::synthesize(plan->graph, plan->request, synth::GreedyOptions{opt.seed, opt.instances});
      else
        plan->schedule = synth::synthesize_with(plan->graph, plan->request, by_ilp);
    } catch (const std::invalid_argument& e) {
      if (opt.synthesizer != "greedy" && std::string(e.what()).find("max_variables") != std::string::npos)
        throw ConfigError(prefix + ".tacos_ilp_max_variables: " + without(e.what(), " (IlpOptions::max_variables)") +
                          " (" + std::to_string(ranks.size()) +
                          " ranks, " + std::to_string(plan->request.chunks_per_npu) +
                          " chunks per NPU: raise the limit, use fewer chunks or tacos_synthesizer = \"greedy\")");
      throw ConfigError(prefix + ".algorithm: tacos cannot synthesize " + std::string(to_string(spec.op)) + " on the " +
                        std::to_string(ranks.size()) + " ranks' NPU graph (" + e.what() +
                        "); a communicator on part of a direct-connect fabric may be cut off from itself");
    }
    plan->synthesis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const std::string why = synth::check(plan->graph, checked, plan->schedule);
  if (!why.empty()) {
    if (plan->from_file)
      throw ConfigError(prefix + ".tacos_schedule: '" + opt.schedule_in + "' is not a valid " +
                        synth::to_string(checked.op) + " schedule on these ranks: " + why);
    throw std::logic_error("tacos: synthesized schedule fails its check: " + why);
  }
  plan->chunk_bytes = chunk_sizes(spec, plan->graph, synth::chunk_count(plan->graph, plan->request));
  if (!opt.schedule_out.empty()) {
    // Every process writes the same text to a file of its own and renames
    // it over the target: the file is whole, never half-written.
    const std::string tmp = opt.schedule_out + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      if (out) synth::write_schedule(out, plan->graph, checked, plan->schedule);
      if (!out) {
        std::remove(tmp.c_str());
        throw ConfigError(prefix + ".tacos_write_schedule: cannot write '" + opt.schedule_out + "'");
      }
    }
    if (std::rename(tmp.c_str(), opt.schedule_out.c_str()) != 0) {
      std::remove(tmp.c_str());
      throw ConfigError(prefix + ".tacos_write_schedule: cannot write '" + opt.schedule_out + "'");
    }
  }
  return plan;
}

}  // namespace fabricsim::workload
