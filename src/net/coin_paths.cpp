// TopoOpt k-shortest-path routes (state_routes.hpp: CoinPaths).
#include <algorithm>
#include <string>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {

namespace {

struct CoinPath {
  std::vector<std::uint32_t> coins;  // coin indices
  std::vector<std::uint32_t> nodes;  // residues visited, nodes.size() = coins.size() + 1
};

// Shortest route from `from` to `to` over Z_n avoiding banned residues and
// banned (residue, coin) moves; BFS trying coins in order.
bool shortest(std::uint32_t n, const std::vector<std::uint32_t>& coins, std::uint32_t from, std::uint32_t to,
              const std::vector<std::uint8_t>& banned_node,
              const std::vector<std::pair<std::uint32_t, std::uint32_t>>& banned_move, CoinPath& out) {
  std::vector<std::uint32_t> parent(n, UINT32_MAX), via(n, 0);
  std::vector<std::uint32_t> q{from};
  parent[from] = from;
  for (std::size_t i = 0; i < q.size() && parent[to] == UINT32_MAX; ++i) {
    const std::uint32_t u = q[i];
    for (std::uint32_t c = 0; c < coins.size(); ++c) {
      const auto v = static_cast<std::uint32_t>((std::uint64_t{u} + coins[c]) % n);
      if (parent[v] != UINT32_MAX || banned_node[v]) continue;
      if (std::find(banned_move.begin(), banned_move.end(), std::make_pair(u, c)) != banned_move.end()) continue;
      parent[v] = u;
      via[v] = c;
      q.push_back(v);
    }
  }
  if (parent[to] == UINT32_MAX) return false;
  out.coins.clear();
  out.nodes.clear();
  for (std::uint32_t v = to; v != from; v = parent[v]) {
    out.nodes.push_back(v);
    out.coins.push_back(via[v]);
  }
  out.nodes.push_back(from);
  std::reverse(out.nodes.begin(), out.nodes.end());
  std::reverse(out.coins.begin(), out.coins.end());
  return true;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> k_shortest_coin_routes(std::uint32_t n, const std::vector<std::uint32_t>& coins,
                                                               std::uint32_t r, std::uint32_t k) {
  std::vector<std::vector<std::uint32_t>> result;
  if (r % n == 0 || k == 0) return result;
  std::vector<CoinPath> a, b;
  std::vector<std::uint8_t> banned(n, 0);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> moves;
  CoinPath p;
  if (!shortest(n, coins, 0, r, banned, moves, p)) return result;
  a.push_back(p);
  while (a.size() < k) {
    const CoinPath last = a.back();
    for (std::size_t i = 0; i + 1 < last.nodes.size(); ++i) {
      // Spur from node i: the root (first i moves) is kept, the moves other
      // accepted routes with the same root take next are banned, and so are
      // the root's nodes (loop-free).
      std::fill(banned.begin(), banned.end(), 0);
      moves.clear();
      for (const CoinPath& q : a)
        if (q.nodes.size() > i + 1 && std::equal(last.nodes.begin(), last.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                                 q.nodes.begin()))
          moves.emplace_back(q.nodes[i], q.coins[i]);
      for (std::size_t j = 0; j < i; ++j) banned[last.nodes[j]] = 1;
      CoinPath spur;
      if (!shortest(n, coins, last.nodes[i], r, banned, moves, spur)) continue;
      CoinPath total;
      total.nodes.assign(last.nodes.begin(), last.nodes.begin() + static_cast<std::ptrdiff_t>(i));
      total.coins.assign(last.coins.begin(), last.coins.begin() + static_cast<std::ptrdiff_t>(i));
      total.nodes.insert(total.nodes.end(), spur.nodes.begin(), spur.nodes.end());
      total.coins.insert(total.coins.end(), spur.coins.begin(), spur.coins.end());
      const auto same = [&](const CoinPath& x) { return x.coins == total.coins; };
      if (std::none_of(a.begin(), a.end(), same) && std::none_of(b.begin(), b.end(), same)) b.push_back(total);
    }
    if (b.empty()) break;
    // The shortest candidate; among equals the first found.
    const auto best = std::min_element(b.begin(), b.end(), [](const CoinPath& x, const CoinPath& y) {
      return x.coins.size() < y.coins.size();
    });
    a.push_back(*best);
    b.erase(best);
  }
  for (const CoinPath& q : a) {
    std::vector<std::uint32_t> route;
    for (std::uint32_t c : q.coins) route.push_back(coins[c]);
    result.push_back(std::move(route));
  }
  return result;
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

std::size_t CoinPaths::choice(EndpointId src, EndpointId dst, std::uint64_t seed, std::uint32_t message) const {
  return util::hash2(seed ^ 0x4B50'4154'4853ull, message) % count(src, dst);
}

void CoinPaths::path(EndpointId src, EndpointId dst, std::size_t choice, std::vector<LinkId>& out) const {
  const auto& route = routes_[(dst + n_ - src) % n_][choice];
  std::uint32_t at = src;
  for (std::uint8_t j : route) {
    const LinkId l = link_[static_cast<std::size_t>(at) * jumps_.size() + j];
    out.push_back(l);
    at = (at + jumps_[j]) % n_;
  }
}

}  // namespace fabricsim::net
