// npu_graph: the TACOS spec's NPU graphs (section 6) as a fabric, built from
// the synth layer's generators so that the simulator and the synthesizer
// see the same links: accelerators that forward, joined directly.  A link
// present both ways with the same alpha and bandwidth is one cable; a link
// one way only is a one-way cable (Topology::connect_directed).  Routed
// like a `file` graph (minimal, or up*/down* where minimal routes could
// deadlock); a schedule's sends cross one link each.
#include "topology_kinds.hpp"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "fabricsim/synth/tacos.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

synth::NpuGraph npu_graph_of(const config::Config& cfg) {
  const std::string& kind = cfg.get_string("topology.npu_graph");
  const double alpha = cfg.get_float("topology.npu_alpha_ns");
  const double gbps = cfg.get_float("topology.npu_gbps");
  const std::vector<std::int64_t>& dims = cfg.get_int_list("topology.dims");
  const auto want = [&](std::size_t n, const char* shape, std::int64_t most) {
    if (dims.size() != n)
      throw util::ConfigError(fmt::format("topology.dims: npu_graph = \"{}\" takes dims = {}", kind, shape));
    std::int64_t product = 1;
    for (std::int64_t d : dims) product *= d;
    if (product < 2 || product > most)
      throw util::ConfigError(
          fmt::format("topology.dims: npu_graph = \"{}\" of 2 to {} NPUs, not {}", kind, most, product));
  };
  const auto u = [&](std::size_t i) { return static_cast<std::uint32_t>(dims[i]); };
  constexpr std::int64_t kMost = 1 << 16;
  if (kind == "mesh" || kind == "ring_ring") {
    want(2, "[rows, cols]", kMost);
    return kind == "mesh" ? synth::mesh(u(0), u(1), alpha, gbps) : synth::ring_ring(u(0), u(1), alpha, gbps);
  }
  if (kind == "ring" || kind == "bidirectional_ring" || kind == "fully_connected") {
    want(1, "[n]", kind == "fully_connected" ? 4096 : kMost);
    return kind == "fully_connected" ? synth::fully_connected(u(0), alpha, gbps)
                                     : synth::ring(u(0), kind == "bidirectional_ring", alpha, gbps);
  }
  if (kind == "ring_fc_switch") {
    if (dims.size() != 1 || dims[0] < 1 || dims[0] > 4096)
      throw util::ConfigError("topology.dims: npu_graph = \"ring_fc_switch\" takes dims = [nodes], 1 to 4096 nodes");
    return synth::ring_fc_switch(u(0), alpha);
  }
  if (kind == "switch_switch_8x4") return synth::switch_switch_8x4(alpha);
  return synth::dragonfly_4x5(alpha);
}

net::Topology build_npu_graph(const config::Config& cfg, const LinkClasses&) {
  const synth::NpuGraph g = npu_graph_of(cfg);
  // Pair every link with an unused one the other way of the same kind.
  using Key = std::tuple<std::uint32_t, std::uint32_t, double, double>;
  std::multimap<Key, std::size_t> open;
  std::vector<std::pair<std::size_t, std::size_t>> cables;  // (link, reverse or SIZE_MAX)
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    const synth::Link& l = g.links[i];
    const auto it = open.find(Key{l.dst, l.src, l.alpha_ns, l.gbps});
    if (it != open.end()) {
      cables[it->second].second = i;
      open.erase(it);
    } else {
      open.emplace(Key{l.src, l.dst, l.alpha_ns, l.gbps}, cables.size());
      cables.emplace_back(i, SIZE_MAX);
    }
  }
  std::vector<std::uint32_t> degree(g.npus, 0);
  for (const auto& [i, r] : cables) {
    ++degree[g.links[i].src];
    ++degree[g.links[i].dst];
  }
  net::Topology t;
  t.kind = "npu_graph";
  t.reserve(g.npus, 2 * cables.size());
  for (std::uint32_t v = 0; v < g.npus; ++v) {
    if (degree[v] > net::kMaxRadix)
      throw util::ConfigError(fmt::format("topology.dims: NPU {} would have {} links, more than a node's {} ports", v,
                                          degree[v], net::kMaxRadix));
    t.add_node(net::NodeKind::Endpoint, 0, std::max(degree[v], 1u), "npu" + std::to_string(v), true);
  }
  std::size_t one_way = 0;
  for (const auto& [i, r] : cables) {
    const synth::Link& l = g.links[i];
    net::LinkParams p;
    p.bandwidth_gbps = l.gbps;
    p.latency = core::SimTime::from_ns_f(l.alpha_ns);
    if (r != SIZE_MAX) {
      t.connect(l.src, l.dst, net::LinkClass::Board, p, net::CableType::None);
    } else {
      t.connect_directed(l.src, l.dst, net::LinkClass::Board, p, net::CableType::None);
      ++one_way;
    }
  }
  t.set_description(fmt::format("npu_graph {}: {} NPUs, {} links ({} one-way)", cfg.get_string("topology.npu_graph"),
                                g.npus, cables.size(), one_way));
  return t;
}

}  // namespace

extern const TopologyKind kNpuGraph{"npu_graph", &build_npu_graph, &graph_file_routing};

}  // namespace fabricsim::app
