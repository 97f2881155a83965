#include "fabricsim/workload/fluid.hpp"

#include <algorithm>
#include <unordered_map>

#include "fabricsim/net/state_routes.hpp"

namespace fabricsim::workload {

namespace {

// A routing's next hops: next(node, state, dst, out) appends the (link,
// state after) moves on a minimal route; the walk starts in `initial`.
struct Hop {
  net::LinkId link;
  std::uint8_t state;
};

template <class Next>
FluidEstimate estimate(const net::Topology& topo, Next&& next_hops, std::uint8_t initial,
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
  // Each pair's bytes spread over its routes' DAG: a node passes its share
  // on equally over its next hops, and every hop adds share x bytes to its
  // link's load.  The loads are added up directly, pair after pair, in a
  // fixed order: no routing matrix (a batch of one on the 16k trees, whose
  // routes spread over more than a thousand links per pair, took more
  // memory than the network's whole state).
  std::vector<std::pair<std::uint64_t, double>> pairs(pair_bytes.begin(), pair_bytes.end());
  std::sort(pairs.begin(), pairs.end());  // a fixed order, whatever the hash map's
  std::vector<double>& loads = est.link_bytes;
  struct At {
    net::NodeId node;
    std::uint8_t state;
    double share;
  };
  std::vector<At> frontier, next;
  std::vector<Hop> hops;
  std::unordered_map<std::uint64_t, std::size_t> slot;
  {
    for (const auto& [key, bytes] : pairs) {
      const auto src = static_cast<net::EndpointId>(key >> 32);
      const auto dst = static_cast<net::EndpointId>(key & 0xFFFFFFFFu);
      const net::NodeId target = topo.endpoint_node(dst);
      frontier.assign(1, At{topo.endpoint_node(src), initial, 1.0});
      // Minimal routes shorten the distance by one per hop, so the DAG is
      // walked level by level; (node, state) pairs reached twice in a level
      // are merged.
      while (!frontier.empty()) {
        next.clear();
        slot.clear();
        for (const At& at : frontier) {
          if (at.node == target) continue;
          hops.clear();
          next_hops(at.node, at.state, dst, hops);
          if (hops.empty()) continue;
          const double share = at.share / static_cast<double>(hops.size());
          for (const Hop& h : hops) {
            loads[h.link] += share * bytes;
            const net::NodeId to = topo.link(h.link).dst;
            auto [it, fresh] = slot.try_emplace(static_cast<std::uint64_t>(to) << 8 | h.state, next.size());
            if (fresh)
              next.push_back(At{to, h.state, share});
            else
              next[it->second].share += share;
          }
        }
        frontier.swap(next);
      }
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
    est.throughput_bound =
        std::min(1.0, est.payload_bytes * 8.0 / est.min_makespan_ns / std::max(topo.total_injection_gbps(), 1e-9));
  }
  return est;
}

}  // namespace

FluidEstimate estimate_fluid(const net::Topology& topo, const net::RoutingTable& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np) {
  const auto next = [&](net::NodeId node, std::uint8_t, net::EndpointId dst, std::vector<Hop>& out) {
    for (auto port : routes.candidates(node, dst)) out.push_back(Hop{topo.node(node).out[port], 0});
  };
  return estimate(topo, next, 0, messages, np);
}

FluidEstimate estimate_fluid(const net::Topology& topo, const net::StateRoutes& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np) {
  std::vector<net::StateRoutes::Option> opts;
  const auto next = [&](net::NodeId node, std::uint8_t state, net::EndpointId dst, std::vector<Hop>& out) {
    opts.clear();
    routes.options(node, state, dst, opts);
    for (const auto& o : opts) out.push_back(Hop{o.link, o.state});
  };
  return estimate(topo, next, routes.rules().initial_state(), messages, np);
}

}  // namespace fabricsim::workload
