// Routes listed per pair, one pinned per message (state_routes.hpp:
// ListedPaths): TopoOpt's k shortest coin routes on circulant rings
// (CoinPaths) and k shortest routes on any other server fabric
// (ServerPaths), both by Yen's algorithm (k_shortest_link_routes).
#include <algorithm>
#include <string>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {

namespace {

using Adjacency = std::vector<std::vector<std::pair<LinkId, NodeId>>>;

struct Route {
  std::vector<LinkId> links;
  std::vector<NodeId> nodes;  // nodes.size() = links.size() + 1
};

// Breadth-first search for a fewest-link route from `from` to `to` avoiding
// the banned nodes and links; links tried in the order of `out`.
class Bfs {
 public:
  explicit Bfs(std::size_t nodes) : parent_(nodes, kNoNode), via_(nodes, kNoLink), banned_(nodes, 0) {}
  std::vector<std::uint8_t>& banned() { return banned_; }
  bool run(const Adjacency& out, NodeId from, NodeId to, const std::vector<LinkId>& banned_links, Route& r) {
    std::fill(parent_.begin(), parent_.end(), kNoNode);
    queue_.assign(1, from);
    parent_[from] = from;
    for (std::size_t i = 0; i < queue_.size() && parent_[to] == kNoNode; ++i) {
      const NodeId u = queue_[i];
      for (const auto& [l, v] : out[u]) {
        if (parent_[v] != kNoNode || banned_[v]) continue;
        if (std::find(banned_links.begin(), banned_links.end(), l) != banned_links.end()) continue;
        parent_[v] = u;
        via_[v] = l;
        queue_.push_back(v);
      }
    }
    if (parent_[to] == kNoNode) return false;
    r.links.clear();
    r.nodes.clear();
    for (NodeId v = to; v != from; v = parent_[v]) {
      r.nodes.push_back(v);
      r.links.push_back(via_[v]);
    }
    r.nodes.push_back(from);
    std::reverse(r.nodes.begin(), r.nodes.end());
    std::reverse(r.links.begin(), r.links.end());
    return true;
  }

 private:
  std::vector<NodeId> parent_;
  std::vector<LinkId> via_;
  std::vector<std::uint8_t> banned_;
  std::vector<NodeId> queue_;
};

}  // namespace

std::vector<std::vector<LinkId>> k_shortest_link_routes(const Adjacency& out, NodeId from, NodeId to,
                                                        std::uint32_t k) {
  std::vector<std::vector<LinkId>> result;
  if (from == to || k == 0) return result;
  Bfs bfs(out.size());
  std::vector<Route> a, b;
  std::vector<LinkId> banned_links;
  Route p;
  if (!bfs.run(out, from, to, banned_links, p)) return result;
  a.push_back(p);
  while (a.size() < k) {
    const Route last = a.back();
    for (std::size_t i = 0; i + 1 < last.nodes.size(); ++i) {
      // Spur from node i: the root (first i links) is kept, the links other
      // accepted routes with the same root take next are banned, and so are
      // the root's nodes (loop-free).
      auto& banned = bfs.banned();
      std::fill(banned.begin(), banned.end(), 0);
      banned_links.clear();
      for (const Route& q : a)
        if (q.links.size() > i &&
            std::equal(last.links.begin(), last.links.begin() + static_cast<std::ptrdiff_t>(i), q.links.begin()))
          banned_links.push_back(q.links[i]);
      for (std::size_t j = 0; j < i; ++j) banned[last.nodes[j]] = 1;
      Route spur;
      if (!bfs.run(out, last.nodes[i], to, banned_links, spur)) continue;
      Route total;
      total.nodes.assign(last.nodes.begin(), last.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      total.links.assign(last.links.begin(), last.links.begin() + static_cast<std::ptrdiff_t>(i));
      total.nodes.insert(total.nodes.end(), spur.nodes.begin(), spur.nodes.end());
      total.links.insert(total.links.end(), spur.links.begin(), spur.links.end());
      const auto same = [&](const Route& x) { return x.links == total.links; };
      if (std::none_of(a.begin(), a.end(), same) && std::none_of(b.begin(), b.end(), same)) b.push_back(total);
    }
    std::fill(bfs.banned().begin(), bfs.banned().end(), 0);
    if (b.empty()) break;
    // The shortest candidate; among equals the first found.
    const auto best = std::min_element(b.begin(), b.end(), [](const Route& x, const Route& y) {
      return x.links.size() < y.links.size();
    });
    a.push_back(*best);
    b.erase(best);
  }
  for (Route& q : a) result.push_back(std::move(q.links));
  return result;
}

std::vector<std::vector<std::uint32_t>> k_shortest_coin_routes(std::uint32_t n, const std::vector<std::uint32_t>& coins,
                                                               std::uint32_t r, std::uint32_t k) {
  // Z_n as a graph: residue u has a link u * C + c to u + coins[c] per coin.
  const auto C = static_cast<std::uint32_t>(coins.size());
  Adjacency out(n);
  for (std::uint32_t u = 0; u < n; ++u)
    for (std::uint32_t c = 0; c < C; ++c)
      out[u].emplace_back(u * C + c, static_cast<NodeId>((std::uint64_t{u} + coins[c]) % n));
  std::vector<std::vector<std::uint32_t>> result;
  if (n == 0 || r % n == 0) return result;
  for (const auto& links : k_shortest_link_routes(out, 0, r % n, k)) {
    std::vector<std::uint32_t> route;
    for (LinkId l : links) route.push_back(coins[l % C]);
    result.push_back(std::move(route));
  }
  return result;
}

std::size_t ListedPaths::require_routes(EndpointId src, EndpointId dst) const {
  const std::size_t routes = count(src, dst);
  if (routes == 0)
    throw util::ConfigError("routing: endpoint " + std::to_string(src) + " sends to endpoint " + std::to_string(dst) +
                            ", but no route joins them (servers in different shards, or a fabric not connected)");
  return routes;
}

std::size_t ListedPaths::choice(EndpointId src, EndpointId dst, std::uint64_t seed, std::uint32_t message) const {
  return util::hash2(seed ^ 0x4B50'4154'4853ull, message) % require_routes(src, dst);
}

CoinPaths::CoinPaths(const Topology& topo, std::uint32_t k) {
  if (topo.kind != "topoopt")
    throw util::ConfigError("routing.k_paths: k-shortest-path routing is for topoopt fabrics");
  n_ = static_cast<std::uint32_t>(topo.endpoint_count());
  // The jumps: from server 0's data links (the same at every server).
  for (LinkId l : topo.node(topo.endpoint_node(0)).out) {
    const Link& link = topo.link(l);
    if (!link.carries_data) continue;
    const std::uint32_t jump = (link.dst + n_ - link.src) % n_;
    if (std::find(jumps_.begin(), jumps_.end(), jump) == jumps_.end()) jumps_.push_back(jump);
  }
  const std::size_t J = jumps_.size();
  link_.assign(static_cast<std::size_t>(n_) * J, kNoLink);
  for (NodeId s = 0; s < n_; ++s)
    for (LinkId l : topo.node(topo.endpoint_node(s)).out) {
      const Link& link = topo.link(l);
      if (!link.carries_data) continue;
      const std::uint32_t jump = (link.dst + n_ - link.src) % n_;
      const std::size_t j = static_cast<std::size_t>(std::find(jumps_.begin(), jumps_.end(), jump) - jumps_.begin());
      if (link_[s * J + j] == kNoLink) link_[s * J + j] = l;  // parallel rings: the first
    }
  routes_.resize(n_);
  for (std::uint32_t r = 1; r < n_; ++r)
    for (const auto& route : k_shortest_coin_routes(n_, jumps_, r, k)) {
      std::vector<std::uint8_t> idx;
      for (std::uint32_t c : route)
        idx.push_back(static_cast<std::uint8_t>(std::find(jumps_.begin(), jumps_.end(), c) - jumps_.begin()));
      max_hops_ = std::max(max_hops_, static_cast<std::uint32_t>(idx.size()));
      routes_[r].push_back(std::move(idx));
    }
}

std::size_t CoinPaths::count(EndpointId src, EndpointId dst) const { return routes_[(dst + n_ - src) % n_].size(); }

void CoinPaths::path(EndpointId src, EndpointId dst, std::size_t choice, std::vector<LinkId>& out) const {
  const auto& route = routes_[(dst + n_ - src) % n_][choice];
  std::uint32_t at = src;
  for (std::uint8_t j : route) {
    const LinkId l = link_[static_cast<std::size_t>(at) * jumps_.size() + j];
    out.push_back(l);
    at = (at + jumps_[j]) % n_;
  }
}

ServerPaths::ServerPaths(const Topology& topo, std::uint32_t k) : k_(k) {
  const std::size_t endpoints = topo.endpoint_count();
  server_.resize(endpoints);
  up_.assign(endpoints, kNoLink);
  down_.assign(endpoints, kNoLink);
  for (EndpointId e = 0; e < endpoints; ++e) {
    const NodeId x = topo.endpoint_node(e);
    server_[e] = x;
    for (LinkId l : topo.node(x).out) {
      const Link& link = topo.link(l);
      if (link.cls != LinkClass::IntraServer || !link.carries_data) continue;
      server_[e] = link.dst;  // a GPU: its server is the node over its intra-server link
      up_[e] = l;
      down_[e] = link.reverse;
      break;
    }
  }
  out_.resize(topo.node_count());
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    const Link& link = topo.link(l);
    if (link.carries_data && link.cls != LinkClass::IntraServer) out_[link.src].emplace_back(l, link.dst);
  }
}

ServerPaths ServerPaths::allreduce(const Topology& topo) {
  ServerPaths p(topo, kAllReduceRoutes);
  p.shortest_only_ = true;
  p.fallback_ = std::move(p.out_);
  p.out_.assign(topo.node_count(), {});
  for (LinkId l : topo.allreduce_links) p.out_[topo.link(l).src].emplace_back(l, topo.link(l).dst);
  for (auto& links : p.out_) std::sort(links.begin(), links.end());
  return p;
}

const std::vector<std::vector<LinkId>>& ServerPaths::server_routes(NodeId u, NodeId v) const {
  const std::uint64_t key = std::uint64_t{u} << 32 | v;
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto routes = k_shortest_link_routes(out_, u, v, k_);
  if (routes.empty() && !fallback_.empty()) routes = k_shortest_link_routes(fallback_, u, v, k_);
  if (shortest_only_ && !routes.empty()) {
    const std::size_t len = routes.front().size();
    routes.erase(std::find_if(routes.begin(), routes.end(), [&](const auto& r) { return r.size() > len; }),
                 routes.end());
  }
  return cache_.emplace(key, std::move(routes)).first->second;
}

std::size_t ServerPaths::server_hops(EndpointId src, EndpointId dst, std::size_t choice) const {
  const NodeId u = server_[src], v = server_[dst];
  return u == v ? 0 : server_routes(u, v).at(choice).size();
}

std::size_t ServerPaths::count(EndpointId src, EndpointId dst) const {
  const NodeId u = server_[src], v = server_[dst];
  return u == v ? 1 : server_routes(u, v).size();
}

void ServerPaths::path(EndpointId src, EndpointId dst, std::size_t choice, std::vector<LinkId>& out) const {
  const std::size_t first = out.size();
  if (up_[src] != kNoLink) out.push_back(up_[src]);
  const NodeId u = server_[src], v = server_[dst];
  if (u != v) {
    const auto& route = server_routes(u, v).at(choice);
    out.insert(out.end(), route.begin(), route.end());
  }
  if (down_[dst] != kNoLink) out.push_back(down_[dst]);
  max_hops_ = std::max(max_hops_, static_cast<std::uint32_t>(out.size() - first));
}

}  // namespace fabricsim::net
