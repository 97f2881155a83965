// Minimal paths for the flow-level and analytic models (flow_paths.hpp).
#include "fabricsim/net/flow_paths.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {

namespace flow_detail {

namespace {
constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
}

void PathWalker::unreachable(EndpointId src, EndpointId dst) const {
  throw util::ConfigError("routing: no path from endpoint " + std::to_string(src) + " to endpoint " +
                          std::to_string(dst));
}

template <class Candidates>
void PathWalker::walk(EndpointId src, EndpointId dst, std::uint64_t key, std::uint64_t seed, PathSplit split,
                      Candidates&& candidates, FlowRoute& out) {
  out.clear();
  const NodeId s = topo_.endpoint_node(src);
  const NodeId d = topo_.endpoint_node(dst);
  double bottleneck = std::numeric_limits<double>::infinity();
  if (split == PathSplit::Single) {
    const std::uint64_t h = util::hash2(seed, key);
    NodeId u = s;
    core::SimTime latency;
    while (u != d) {
      cand_.clear();
      candidates(u, cand_);
      if (cand_.empty() || out.hops > topo_.node_count()) unreachable(src, dst);
      const std::size_t pick = cand_.size() == 1 ? 0 : util::hash2(h, u) % cand_.size();
      const Link& link = topo_.link(cand_[pick]);
      out.links.push_back(FlowLink{cand_[pick], 1.0});
      latency += link.latency;
      bottleneck = std::min(bottleneck, link.bandwidth_gbps);
      ++out.hops;
      u = link.dst;
    }
    out.propagation = latency;
    out.bottleneck_gbps = bottleneck;
    out.single = true;
    return;
  }
  // Even split: breadth-first, layer by layer (every minimal path reaches
  // the destination after the same number of hops), each node passing its
  // share on evenly over its candidates.
  if (slot_.size() < topo_.node_count()) slot_.assign(topo_.node_count(), kNoSlot);
  layer_.assign(1, Reached{s, 1.0, core::SimTime::zero()});
  bool single = true;
  while (!(layer_.size() == 1 && layer_[0].node == d)) {
    if (out.hops > topo_.node_count()) unreachable(src, dst);
    next_.clear();
    for (const Reached& r : layer_) {
      cand_.clear();
      if (r.node != d) candidates(r.node, cand_);
      if (cand_.empty()) unreachable(src, dst);
      const double share = r.weight / static_cast<double>(cand_.size());
      if (cand_.size() > 1) single = false;
      for (LinkId l : cand_) {
        const Link& link = topo_.link(l);
        out.links.push_back(FlowLink{l, share});
        bottleneck = std::min(bottleneck, link.bandwidth_gbps);
        const core::SimTime latency = r.latency + link.latency;
        if (slot_[link.dst] == kNoSlot) {
          slot_[link.dst] = static_cast<std::uint32_t>(next_.size());
          next_.push_back(Reached{link.dst, share, latency});
        } else {
          Reached& n = next_[slot_[link.dst]];
          n.weight += share;
          n.latency = std::max(n.latency, latency);
        }
      }
    }
    for (const Reached& n : next_) slot_[n.node] = kNoSlot;
    std::swap(layer_, next_);
    ++out.hops;
  }
  out.propagation = layer_[0].latency;
  out.bottleneck_gbps = bottleneck;
  out.single = single;
  if (single)
    for (FlowLink& fl : out.links) fl.weight = 1.0;  // exactly
}

}  // namespace flow_detail

ShortestPaths::ShortestPaths(const Topology& topo, PathSplit split, std::uint64_t seed)
    : topo_(topo), split_(split), seed_(seed), dist_(topo.endpoint_count()), walker_(topo) {}

const std::vector<std::uint32_t>& ShortestPaths::distances(EndpointId dst) {
  std::vector<std::uint32_t>& dist = dist_[dst];
  if (!dist.empty()) return dist;
  // Backward breadth-first search from the destination over data-carrying
  // links; a node that does not forward is reached (it may be a source) but
  // not passed through.
  dist.assign(topo_.node_count(), kUnreachable);
  const NodeId d = topo_.endpoint_node(dst);
  dist[d] = 0;
  queue_.assign(1, d);
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const NodeId v = queue_[i];
    if (v != d && !topo_.node(v).forwards) continue;
    for (LinkId l : topo_.node(v).in) {
      const Link& link = topo_.link(l);
      if (!link.carries_data || dist[link.src] != kUnreachable) continue;
      dist[link.src] = dist[v] + 1;
      queue_.push_back(link.src);
    }
  }
  return dist;
}

std::uint32_t ShortestPaths::distance(NodeId n, EndpointId dst) { return distances(dst)[n]; }

void ShortestPaths::route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) {
  const std::vector<std::uint32_t>& dist = distances(dst);
  const NodeId d = topo_.endpoint_node(dst);
  walker_.walk(
      src, dst, key, seed_, split_,
      [&](NodeId u, std::vector<LinkId>& cand) {
        if (dist[u] == kUnreachable) return;
        for (LinkId l : topo_.node(u).out) {
          const Link& link = topo_.link(l);
          if (!link.carries_data || dist[link.dst] + 1 != dist[u]) continue;
          if (link.dst != d && !topo_.node(link.dst).forwards) continue;
          cand.push_back(l);
        }
      },
      out);
}

TablePaths::TablePaths(const Topology& topo, const RoutingTable& table, PathSplit split, std::uint64_t seed)
    : topo_(topo), table_(table), split_(split), seed_(seed), walker_(topo) {}

void TablePaths::route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) {
  walker_.walk(
      src, dst, key, seed_, split_,
      [&](NodeId u, std::vector<LinkId>& cand) {
        const Node& node = topo_.node(u);
        for (PortIndex p : table_.candidates(u, dst)) cand.push_back(node.out[p]);
      },
      out);
}

}  // namespace fabricsim::net
