// TOPOLOGYFINDER; the rules and readings are documented in
// include/fabricsim/ctrl/topology_finder.hpp.
#include "fabricsim/ctrl/topology_finder.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "fabricsim/ctrl/matching.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::ctrl {

namespace {

using Pair = std::pair<std::uint32_t, std::uint32_t>;

void check(const FinderInput& in, const FinderOptions& opt) {
  const std::uint32_t n = in.servers;
  if (n < 2) throw std::invalid_argument("topology_finder: at least 2 servers");
  if (in.degree == 0) throw std::invalid_argument("topology_finder: degree 0");
  if (opt.allreduce_degree > in.degree) throw std::invalid_argument("topology_finder: allreduce_degree > degree");
  if (!in.mp.empty() && in.mp.size() != std::size_t{n} * n)
    throw std::invalid_argument("topology_finder: the MP matrix is not n x n");
  for (double b : in.mp)
    if (!(b >= 0) || !std::isfinite(b)) throw std::invalid_argument("topology_finder: negative or non-finite MP bytes");
  for (const AllReduceFamily& f : in.allreduce) {
    if (!(f.bytes >= 0) || !std::isfinite(f.bytes))
      throw std::invalid_argument("topology_finder: negative or non-finite AllReduce bytes");
    std::vector<std::uint8_t> seen(n, 0);
    for (const auto& g : f.groups) {
      if (g.size() != f.group_size() || g.size() < 2)
        throw std::invalid_argument("topology_finder: a family's groups must have one size, at least 2");
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] >= n || (i > 0 && g[i] <= g[i - 1]))
          throw std::invalid_argument("topology_finder: group members must be ascending server ids below n");
        if (seen[g[i]]++) throw std::invalid_argument("topology_finder: a family's groups overlap");
      }
    }
  }
}

/// Steps coprime to g in 1..g-1 (TotientPerms in member space).
std::vector<std::uint32_t> coprime_steps(std::uint32_t g) {
  std::vector<std::uint32_t> steps;
  for (std::uint32_t p = 1; p < g; ++p)
    if (std::gcd(p, g) == 1) steps.push_back(p);
  return steps;
}

}  // namespace

std::vector<std::uint32_t> ring_order(const std::vector<std::uint32_t>& members, std::uint32_t step) {
  std::vector<std::uint32_t> order;
  const auto g = static_cast<std::uint32_t>(members.size());
  if (g == 0) return order;
  std::uint32_t i = 0;
  do {
    order.push_back(members[i]);
    i = static_cast<std::uint32_t>((std::uint64_t{i} + step) % g);
  } while (i != 0);
  return order;
}

FinderResult topology_finder(const FinderInput& in, const FinderOptions& opt) {
  check(in, opt);
  const std::uint32_t n = in.servers;
  const std::uint32_t d = in.degree;
  FinderResult r;
  r.family_rings.assign(in.allreduce.size(), 0);

  // ---- degree split
  double ar = 0, mp = 0;
  for (const auto& f : in.allreduce) ar += f.bytes;
  for (std::uint32_t u = 0; u < n && !in.mp.empty(); ++u)
    for (std::uint32_t v = 0; v < n; ++v)
      if (u != v) mp += in.mp[std::size_t{u} * n + v];
  std::uint32_t d_a = d;
  if (opt.allreduce_degree > 0) {
    d_a = opt.allreduce_degree;
  } else if (ar + mp > 0) {
    const double share = static_cast<double>(d) * ar / (ar + mp);
    const double raw = opt.split == DegreeSplit::Paper ? std::ceil(share) : std::nearbyint(share);
    d_a = std::clamp(static_cast<std::uint32_t>(raw), 1u, d);
  }
  r.allreduce_degree = d_a;
  r.allreduce_bytes = ar;
  r.mp_bytes = mp;

  std::vector<std::uint32_t> free(n, d);
  auto add_ring = [&](const std::vector<std::uint32_t>& members, std::uint32_t step) {
    const auto g = static_cast<std::uint32_t>(members.size());
    for (std::uint32_t i = 0; i < g; ++i) {
      r.links.emplace_back(members[i], members[(i + step) % g]);
      --free[members[i]];
    }
  };

  // ---- connectivity ring, unless a family is one group of every server
  std::uint32_t left = d_a;
  // The spanning family with the most bytes (first on ties), if any: it is
  // kept one ring however the other families split d_A.
  std::uint32_t spanning = FinderRing::kAllServers;
  for (std::uint32_t k = 0; k < in.allreduce.size(); ++k) {
    const AllReduceFamily& f = in.allreduce[k];
    if (f.groups.size() == 1 && f.group_size() == n && f.bytes > 0 &&
        (spanning == FinderRing::kAllServers || f.bytes > in.allreduce[spanning].bytes))
      spanning = k;
  }
  if (spanning == FinderRing::kAllServers) {
    std::vector<std::uint32_t> all(n);
    std::iota(all.begin(), all.end(), 0u);
    add_ring(all, 1);
    r.rings.push_back({FinderRing::kAllServers, 1});
    --left;
  }
  const std::size_t all_ring_links = r.links.size();

  // ---- AllReduce rings, families in descending bytes
  std::vector<std::uint32_t> order(in.allreduce.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return in.allreduce[a].bytes > in.allreduce[b].bytes; });
  const std::uint32_t total = left;
  for (std::uint32_t k : order) {
    if (left == 0 || !(ar > 0)) break;
    const AllReduceFamily& f = in.allreduce[k];
    if (!(f.bytes > 0) || f.groups.empty()) continue;
    const std::uint32_t g = f.group_size();
    const std::vector<std::uint32_t> cand = coprime_steps(g);
    auto dk = static_cast<std::uint32_t>(std::ceil(static_cast<double>(total) * f.bytes / ar - 1e-12));
    const bool reserve = spanning != FinderRing::kAllServers && r.family_rings[spanning] == 0 && k != spanning;
    if (reserve && left == 1) continue;  // (the last ring is the spanning family's)
    dk = std::min({std::max(dk, 1u), left - (reserve ? 1 : 0), static_cast<std::uint32_t>(cand.size())});
    const std::vector<std::uint32_t> steps = opt.geo_code_variant ? net::select_permutations_geo(g, dk, cand, false)
                                                                  : net::select_permutations(g, dk, cand);
    for (std::uint32_t p : steps) {
      for (const auto& members : f.groups) add_ring(members, p);
      r.rings.push_back({k, p});
    }
    r.family_rings[k] = dk;
    left -= dk;
  }
  r.mp_degree = d - d_a + left;
  const std::size_t ring_links = r.links.size();
  r.ring_links = ring_links;

  // ---- MP: rounds of maximum-weight matching with decaying demand
  if (!in.mp.empty()) {
    std::vector<double> t(std::size_t{n} * n, 0.0);
    for (std::uint32_t u = 0; u < n; ++u)
      for (std::uint32_t v = u + 1; v < n; ++v)
        t[std::size_t{u} * n + v] = in.mp[std::size_t{u} * n + v] + in.mp[std::size_t{v} * n + u];
    std::vector<std::uint32_t> parallel(std::size_t{n} * n, 0);
    std::vector<WeightedEdge> edges;
    while (true) {
      edges.clear();
      for (std::uint32_t u = 0; u < n; ++u) {
        if (free[u] == 0) continue;
        for (std::uint32_t v = u + 1; v < n; ++v) {
          if (free[v] == 0) continue;
          const double w = std::nearbyint(t[std::size_t{u} * n + v]);
          if (w >= 1) edges.push_back({u, v, static_cast<std::int64_t>(w)});
        }
      }
      if (edges.empty()) break;
      const std::vector<std::uint32_t> mate = max_weight_matching(n, edges);
      std::vector<Pair> round;
      for (std::uint32_t u = 0; u < n; ++u) {
        const std::uint32_t v = mate[u];
        if (v == kUnmatched || v < u) continue;
        round.emplace_back(u, v);
        r.links.emplace_back(u, v);
        r.links.emplace_back(v, u);
        --free[u];
        --free[v];
        const std::size_t at = std::size_t{u} * n + v;
        const std::uint32_t c = ++parallel[at];
        t[at] *= opt.decay == MpDecay::Halve ? 0.5 : static_cast<double>(c) / (c + 1);
      }
      if (round.empty()) break;  // (every edge has weight >= 1, so a round matches one)
      r.matchings.push_back(std::move(round));
    }
  }

  // ---- spare interfaces: directed rings over the servers that have one
  while (true) {
    std::vector<std::uint32_t> with;
    for (std::uint32_t s = 0; s < n; ++s)
      if (free[s] > 0) with.push_back(s);
    if (with.size() == 1) {
      // A lone server with spare interfaces (the others are all taken):
      // each spare goes into an existing link a -> b as a -> s -> b, which
      // keeps every degree and the connectivity.  Links split: MP and fill
      // first (newest first), then the ring over all servers, then any.
      const std::uint32_t s = with[0];
      auto splittable = [&](std::size_t i) { return r.links[i].first != s && r.links[i].second != s; };
      while (free[s] > 0) {
        std::size_t pick = r.links.size();
        for (std::size_t i = r.links.size(); i-- > ring_links && pick == r.links.size();)
          if (splittable(i)) pick = i;
        for (std::size_t i = 0; i < all_ring_links && pick == r.links.size(); ++i)
          if (splittable(i)) pick = i;
        for (std::size_t i = 0; i < r.links.size() && pick == r.links.size(); ++i)
          if (splittable(i)) pick = i;
        if (pick == r.links.size()) break;  // (n = 2: every link touches s; both servers are always alike there)
        const std::uint32_t b = r.links[pick].second;
        r.links[pick].second = s;
        r.links.emplace_back(s, b);
        r.fill.emplace_back(s, b);
        ++r.detours;
        --free[s];
      }
      r.spare = free[s];
      break;
    }
    if (with.empty()) break;
    for (std::size_t i = 0; i < with.size(); ++i) {
      const Pair link{with[i], with[(i + 1) % with.size()]};
      r.fill.push_back(link);
      r.links.push_back(link);
      --free[with[i]];
    }
  }
  return r;
}

std::string FinderResult::describe() const {
  std::string s = fmt::format("AllReduce {:.0f} B, MP {:.0f} B; d_A {} (", allreduce_bytes, mp_bytes, allreduce_degree);
  bool first = true;
  for (const FinderRing& ring : rings) {
    s += first ? "" : ", ";
    first = false;
    s += ring.family == FinderRing::kAllServers ? fmt::format("all +{}", ring.step)
                                                : fmt::format("family {} +{}", ring.family, ring.step);
  }
  s += fmt::format("), d_MP {} ({} matching rounds)", mp_degree, matchings.size());
  if (!fill.empty()) s += fmt::format(", {} links closing spare interfaces", fill.size());
  if (detours > 0) s += fmt::format(" ({} through a lone server)", detours);
  return s;
}

}  // namespace fabricsim::ctrl
