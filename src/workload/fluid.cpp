#include "fabricsim/workload/fluid.hpp"

#include <algorithm>
#include <unordered_map>

namespace fabricsim::workload {

FluidEstimate estimate_fluid(const net::Topology& topo, const net::RoutingTable& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np) {
  FluidEstimate est;
  est.link_bytes.assign(topo.link_count(), 0.0);
  // Flows with the same (source, destination) share their spread: add their
  // bytes first, then walk each pair's minimal-route DAG once.
  std::unordered_map<std::uint64_t, double> pair_bytes;
  for (const auto& m : messages) {
    pair_bytes[(static_cast<std::uint64_t>(m.src) << 32) | m.dst] += static_cast<double>(wire_bytes(m.bytes, np));
    est.payload_bytes += static_cast<double>(m.bytes);
  }
  std::vector<std::pair<net::NodeId, double>> frontier, next;
  std::unordered_map<net::NodeId, std::size_t> slot;
  for (const auto& [key, bytes] : pair_bytes) {
    const auto src = static_cast<net::EndpointId>(key >> 32);
    const auto dst = static_cast<net::EndpointId>(key & 0xFFFFFFFFu);
    const net::NodeId target = topo.endpoint_node(dst);
    frontier.assign(1, {topo.endpoint_node(src), bytes});
    // Minimal routes shorten the distance by one per hop, so the DAG is
    // walked level by level; nodes reached twice in a level are merged.
    while (!frontier.empty()) {
      next.clear();
      slot.clear();
      for (const auto& [node, amount] : frontier) {
        if (node == target) continue;
        const auto cands = routes.candidates(node, dst);
        const double share = amount / static_cast<double>(cands.size());
        for (auto port : cands) {
          const net::LinkId l = topo.node(node).out[port];
          est.link_bytes[l] += share;
          const net::NodeId to = topo.link(l).dst;
          auto [it, fresh] = slot.try_emplace(to, next.size());
          if (fresh)
            next.emplace_back(to, share);
          else
            next[it->second].second += share;
        }
      }
      frontier.swap(next);
    }
  }
  for (net::LinkId l = 0; l < topo.link_count(); ++l) {
    const double t = est.link_bytes[l] * 8.0 / topo.link(l).bandwidth_gbps;  // ns
    if (t > est.min_makespan_ns) {
      est.min_makespan_ns = t;
      est.bottleneck = l;
      est.bottleneck_bytes = est.link_bytes[l];
    }
  }
  if (est.min_makespan_ns > 0 && topo.endpoint_count() > 0) {
    const double inj = topo.link(topo.node(topo.endpoint_node(0)).out.front()).bandwidth_gbps;
    est.throughput_bound =
        std::min(1.0, est.payload_bytes * 8.0 / est.min_makespan_ns / (inj * static_cast<double>(topo.endpoint_count())));
  }
  return est;
}

}  // namespace fabricsim::workload
