#include "fabricsim/net/updown.hpp"

#include <string>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

UpDownRoutes::UpDownRoutes(const Topology& topo, std::size_t max_bytes) : topo_(topo), nodes_(topo.node_count()) {
  const std::size_t bytes = table_bytes(topo);
  if (bytes > max_bytes)
    throw util::ConfigError("routing.graph: up/down route tables for this graph would take " +
                            std::to_string(bytes >> 20) + " MiB (limit " + std::to_string(max_bytes >> 20) + " MiB)");
  // Root: the forwarding node with the most ports.
  for (NodeId n = 0; n < nodes_; ++n) {
    const Node& node = topo.node(n);
    if (!node.forwards) continue;
    if (root_ == kNoNode || node.out.size() > topo.node(root_).out.size()) root_ = n;
  }
  if (root_ == kNoNode) root_ = 0;
  // BFS levels from the root (through forwarding nodes; others are leaves).
  std::vector<std::uint32_t> level(nodes_, UINT32_MAX);
  std::vector<NodeId> frontier{root_}, next;
  level[root_] = 0;
  while (!frontier.empty()) {
    next.clear();
    for (NodeId u : frontier) {
      if (u != root_ && !topo.node(u).forwards) continue;
      for (LinkId l : topo.node(u).out) {
        if (!topo.link(l).carries_data) continue;
        const NodeId v = topo.link(l).dst;
        if (level[v] == UINT32_MAX) {
          level[v] = level[u] + 1;
          next.push_back(v);
        }
      }
    }
    frontier.swap(next);
  }
  down_.assign(topo.link_count(), 0);
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    const Link& k = topo.link(l);
    const bool up = level[k.dst] < level[k.src] || (level[k.dst] == level[k.src] && k.dst < k.src);
    down_[l] = up ? 0 : 1;
  }
  // Per destination, a backward BFS over (node, phase) states.
  dist_.assign(topo.endpoint_count() * nodes_ * 2, static_cast<std::uint16_t>(kUnreachable));
  std::vector<std::pair<NodeId, bool>> cur, nxt;
  for (EndpointId dst = 0; dst < topo.endpoint_count(); ++dst) {
    const NodeId d = topo.endpoint_node(dst);
    dist_[index(dst, d, false)] = 0;
    dist_[index(dst, d, true)] = 0;
    cur = {{d, false}, {d, true}};
    for (std::uint16_t depth = 1; !cur.empty(); ++depth) {
      nxt.clear();
      for (auto [v, vdown] : cur) {
        // Being at v, a packet must be at the destination or able to go on.
        if (v != d && !topo.node(v).forwards) continue;
        for (LinkId l : topo.node(v).in) {
          if (!topo.link(l).carries_data) continue;
          const NodeId u = topo.link(l).src;
          // Which phases at u reach (v, vdown) over l?
          const bool is_down = down_[l] != 0;
          for (bool udown : {false, true}) {
            if (is_down ? !vdown : (vdown || udown)) continue;  // down -> phase down; up only from and to up
            std::uint16_t& du = dist_[index(dst, u, udown)];
            if (du == kUnreachable) {
              du = depth;
              nxt.emplace_back(u, udown);
            }
          }
        }
      }
      cur.swap(nxt);
    }
  }
}

std::uint32_t UpDownRoutes::hops(NodeId at, bool down, EndpointId dst) const { return dist_[index(dst, at, down)]; }

void UpDownRoutes::candidates(NodeId at, bool down, EndpointId dst, std::vector<PortIndex>& out) const {
  const std::uint32_t here = dist_[index(dst, at, down)];
  if (here == 0 || here == kUnreachable) return;
  const Node& node = topo_.node(at);
  for (PortIndex p = 0; p < node.out.size(); ++p) {
    const LinkId l = node.out[p];
    if (!topo_.link(l).carries_data) continue;
    const bool is_down = down_[l] != 0;
    if (down && !is_down) continue;  // no going up after down
    const NodeId v = topo_.link(l).dst;
    if (v != topo_.endpoint_node(dst) && !topo_.node(v).forwards) continue;  // only forwarding nodes relay
    if (dist_[index(dst, v, is_down)] + 1u == here) out.push_back(p);
  }
}

}  // namespace fabricsim::net
