// OCS-reconfig heuristic (Algorithm 5); the rules and readings are documented
// in include/fabricsim/ctrl/ocs_reconfig.hpp.
#include "fabricsim/ctrl/ocs_reconfig.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "fabricsim/util/disjoint_sets.hpp"

namespace fabricsim::ctrl {

namespace {

using Link = std::pair<std::uint32_t, std::uint32_t>;

struct Entry {
  double t;
  std::uint32_t u;
  std::uint32_t v;
};

/// Priority-queue order: highest t on top, then smallest u, then smallest v.
struct Lower {
  bool operator()(const Entry& a, const Entry& b) const {
    if (a.t != b.t) return a.t < b.t;
    return std::tie(a.u, a.v) > std::tie(b.u, b.v);
  }
};

void check(std::uint32_t n, std::uint32_t d, const std::vector<double>& demand) {
  if (n < 2) throw std::invalid_argument("ocs_reconfig: at least 2 servers");
  if (d == 0) throw std::invalid_argument("ocs_reconfig: degree 0");
  if (demand.size() != std::size_t{n} * n) throw std::invalid_argument("ocs_reconfig: the demand is not n x n");
  for (double b : demand)
    if (!(b >= 0) || !std::isfinite(b)) throw std::invalid_argument("ocs_reconfig: negative or non-finite demand");
}

/// Index of the link of lowest original demand among those `eligible`
/// accepts (ties: smallest endpoints, then earliest); links.size() if none.
template <typename Pred>
std::size_t lowest_demand(const std::vector<Link>& links, const std::vector<double>& demand, std::uint32_t n,
                          Pred eligible) {
  std::size_t best = links.size();
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (!eligible(links[i])) continue;
    if (best == links.size()) {
      best = i;
      continue;
    }
    const auto [a, b] = links[i];
    const auto [c, e] = links[best];
    const double ti = demand[std::size_t{a} * n + b];
    const double tb = demand[std::size_t{c} * n + e];
    if (ti < tb || (ti == tb && links[i] < links[best])) best = i;
  }
  return best;
}

}  // namespace

OcsReconfigResult ocs_reconfig(std::uint32_t n, std::uint32_t d, const std::vector<double>& demand,
                               const OcsReconfigOptions& opt) {
  check(n, d, demand);
  OcsReconfigResult res;
  std::vector<Link>& links = res.links;
  std::vector<std::uint32_t> tx(n, d), rx(n, d);

  // Greedy loop.  One live entry per pair; entries whose transmitter or
  // receiver has run out of ports are dropped when they surface (ports never
  // come back).  Halving is exact in binary floating point, so ties behave
  // as in a plain scan.
  std::vector<Entry> init;
  for (std::uint32_t u = 0; u < n; ++u)
    for (std::uint32_t v = 0; v < n; ++v) {
      const double t = demand[std::size_t{u} * n + v];
      if (u != v && t > 0) init.push_back({t, u, v});
    }
  std::priority_queue<Entry, std::vector<Entry>, Lower> heap(Lower{}, std::move(init));
  const double decay = opt.discount ? 0.5 : 1.0;
  while (!heap.empty()) {
    Entry e = heap.top();
    heap.pop();
    if (tx[e.u] == 0 || rx[e.v] == 0) continue;
    links.emplace_back(e.u, e.v);
    --tx[e.u];
    --rx[e.v];
    e.t *= decay;
    if (e.t > 0 && tx[e.u] > 0 && rx[e.v] > 0) heap.push(e);
  }
  res.greedy_links = static_cast<std::uint32_t>(links.size());
  if (!opt.connect) return res;

  std::vector<std::uint8_t> changed(links.size(), 0);

  // 1. Fill free ports (zero demand between them).
  for (std::uint32_t u = 0; u < n; ++u) {
    while (tx[u] > 0) {
      std::uint32_t best = n;
      for (std::uint32_t v = 0; v < n; ++v)
        if (v != u && rx[v] > 0 && (best == n || rx[v] > rx[best])) best = v;
      if (best == n) break;
      links.emplace_back(u, best);
      changed.push_back(1);
      --tx[u];
      --rx[best];
    }
  }

  // 2. Splice the ports left at a single server s into existing links.
  for (std::uint32_t s = 0; s < n; ++s) {
    if (tx[s] != rx[s]) throw std::logic_error("ocs_reconfig: unbalanced free ports after the fill");
    while (tx[s] > 0) {
      const std::size_t i =
          lowest_demand(links, demand, n, [s](const Link& l) { return l.first != s && l.second != s; });
      if (i == links.size()) throw std::logic_error("ocs_reconfig: no link to splice into");
      const std::uint32_t b = links[i].second;
      links[i].second = s;
      changed[i] = 1;
      links.emplace_back(s, b);
      changed.push_back(1);
      --tx[s];
      --rx[s];
    }
  }

  // 3. Merge the weak components (strongly connected: every degree is d) by
  // rotating one lowest-demand link per component.
  util::DisjointSets<std::uint32_t> sets(n);
  for (const auto& [a, b] : links) sets.join(a, b);
  std::vector<std::uint32_t> roots;  // ascending by smallest member: a root is its component's smallest server
  for (std::uint32_t v = 0; v < n; ++v)
    if (sets.find(v) == v) roots.push_back(v);
  if (roots.size() >= 2) {
    std::vector<std::size_t> pick;
    for (std::uint32_t r : roots) {
      const std::size_t i =
          lowest_demand(links, demand, n, [&sets, r](const Link& l) { return sets.find(l.first) == r; });
      if (i == links.size()) throw std::logic_error("ocs_reconfig: a component without links");
      pick.push_back(i);
    }
    std::vector<std::uint32_t> heads;
    for (std::size_t i : pick) heads.push_back(links[i].second);
    for (std::size_t k = 0; k < pick.size(); ++k) {
      links[pick[k]].second = heads[(k + 1) % pick.size()];
      changed[pick[k]] = 1;
    }
  }

  for (std::uint8_t c : changed) res.repair_links += c;
  return res;
}

}  // namespace fabricsim::ctrl
