#include "fabricsim/net/cdg.hpp"

#include <algorithm>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::net {

namespace {

std::size_t index_of(Channel c, std::uint8_t vcs) { return static_cast<std::size_t>(c.link) * vcs + c.vc; }

}  // namespace

DependencyReport check_channel_dependencies(const Topology& topo, std::uint8_t vcs, const FirstChannels& first,
                                            const NextChannels& next) {
  FABRICSIM_ASSERT(vcs >= 1, "at least one virtual channel");
  const std::size_t n = topo.link_count() * vcs;
  // Dependency edges as sorted, deduplicated adjacency lists.
  std::vector<std::vector<std::uint32_t>> succ(n);
  std::vector<std::uint8_t> used(n, 0);
  std::vector<std::uint32_t> seen_for(n, UINT32_MAX);  // destination that last visited a channel
  // Each list is deduplicated when it has doubled since its last
  // deduplication (and holds more than 64): a list of d distinct successors
  // never exceeds 2d + 64 entries, and each appended entry is sorted
  // O(log d) times on average, so the work is near-linear in the
  // dependencies traversed.  (Deduplicating every long list after each
  // destination was quadratic: a 2,000-endpoint star took a minute.)
  std::vector<std::uint32_t> deduped(n, 32);
  const auto dedup = [&](std::size_t i) {
    std::sort(succ[i].begin(), succ[i].end());
    succ[i].erase(std::unique(succ[i].begin(), succ[i].end()), succ[i].end());
  };
  std::vector<Channel> buf, stack;
  for (EndpointId dst = 0; dst < topo.endpoint_count(); ++dst) {
    // Every channel a packet to dst can occupy, from every source, and what
    // each may wait for.
    stack.clear();
    for (EndpointId src = 0; src < topo.endpoint_count(); ++src) {
      if (src == dst) continue;
      buf.clear();
      first(src, dst, buf);
      for (Channel c : buf) {
        FABRICSIM_ASSERT(c.link < topo.link_count() && c.vc < vcs, "first channel out of range");
        const std::size_t i = index_of(c, vcs);
        if (seen_for[i] != dst) {
          seen_for[i] = dst;
          stack.push_back(c);
        }
      }
    }
    while (!stack.empty()) {
      const Channel c = stack.back();
      stack.pop_back();
      const std::size_t i = index_of(c, vcs);
      used[i] = 1;
      buf.clear();
      next(topo.link(c.link).dst, c, dst, buf);
      for (Channel d : buf) {
        FABRICSIM_ASSERT(d.link < topo.link_count() && d.vc < vcs, "next channel out of range");
        const std::size_t j = index_of(d, vcs);
        succ[i].push_back(static_cast<std::uint32_t>(j));
        if (succ[i].size() > 2 * std::size_t{deduped[i]}) {
          dedup(i);
          deduped[i] = static_cast<std::uint32_t>(std::max<std::size_t>(succ[i].size(), 32));
        }
        if (seen_for[j] != dst) {
          seen_for[j] = dst;
          stack.push_back(d);
        }
      }
    }
  }
  DependencyReport r;
  for (std::size_t i = 0; i < n; ++i) {
    dedup(i);
    r.dependencies += succ[i].size();
    r.channels_used += used[i];
  }
  // Iterative DFS with colours; a grey successor closes a cycle.
  enum : std::uint8_t { kWhite, kGrey, kBlack };
  std::vector<std::uint8_t> colour(n, kWhite);
  std::vector<std::pair<std::uint32_t, std::size_t>> path;  // (vertex, next successor index)
  for (std::size_t root = 0; root < n && r.acyclic; ++root) {
    if (colour[root] != kWhite || succ[root].empty()) continue;
    path.assign(1, {static_cast<std::uint32_t>(root), 0});
    colour[root] = kGrey;
    while (!path.empty() && r.acyclic) {
      auto& [v, k] = path.back();
      if (k == succ[v].size()) {
        colour[v] = kBlack;
        path.pop_back();
        continue;
      }
      const std::uint32_t w = succ[v][k++];
      if (colour[w] == kGrey) {
        r.acyclic = false;
        auto it = std::find_if(path.begin(), path.end(), [&](const auto& e) { return e.first == w; });
        for (; it != path.end(); ++it)
          r.cycle.push_back(Channel{static_cast<LinkId>(it->first / vcs), static_cast<std::uint8_t>(it->first % vcs)});
      } else if (colour[w] == kWhite) {
        colour[w] = kGrey;
        path.emplace_back(w, 0);
      }
    }
  }
  return r;
}

DependencyReport check_minimal_routing(const Topology& topo, const RoutingTable& routes, std::uint8_t vc) {
  const auto first = [&](EndpointId src, EndpointId dst, std::vector<Channel>& out) {
    const NodeId at = topo.endpoint_node(src);
    for (PortIndex p : routes.candidates(at, dst)) out.push_back(Channel{topo.node(at).out[p], vc});
  };
  const auto next = [&](NodeId at, Channel, EndpointId dst, std::vector<Channel>& out) {
    for (PortIndex p : routes.candidates(at, dst)) out.push_back(Channel{topo.node(at).out[p], vc});
  };
  return check_channel_dependencies(topo, static_cast<std::uint8_t>(vc + 1), first, next);
}

}  // namespace fabricsim::net
