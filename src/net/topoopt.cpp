// TopoOpt builder and its ring algorithms; the rules are documented on
// TopoOptParams and the functions in topology.hpp (spec:
// ../shared/spec/topoopt.md §2.1, §4.3-4.5).
//
// Readings taken here (the spec's ⚠ notes and [fabricsim] decisions):
//   - TotientPerms: jumps (n/g)*p with gcd(p, g) = 1 (spec §8, item 1).
//   - SelectPermutations: the next target is x times the jump chosen last
//     (not x^k times the first); the printed argmin has no tie rule, so ties
//     go to the smaller candidate.  Ties are decided with a small relative
//     tolerance, so that a target such as 27^(1/3) * 1 = 3.0000000000000004
//     ties 2 and 4 as it does in exact arithmetic.
//   - CoinChangeMod: the printed relaxation lacks its "+1" and starts the
//     first hop at 0; BFS over Z_n computes the intended minimum.
//   - Bidirectional rings: d/2 jumps are chosen among the candidates <= n/2
//     (p stands for the pair {p, n-p}; choosing both p and n-p would waste an
//     interface pair on the same ring twice).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {

using detail::num;
using detail::require_positive;

using util::ConfigError;

/// |a - target| < |b - target| with ties (within a relative 1e-9) false.
bool strictly_nearer(double a, double b, double target) {
  const double da = std::abs(a - target);
  const double db = std::abs(b - target);
  return da < db - 1e-9 * std::max(1.0, target);
}

void check_candidates(std::uint32_t d, const std::vector<std::uint32_t>& candidates) {
  FABRICSIM_ASSERT(d <= candidates.size(), "select_permutations: more rings than candidate jumps");
  std::vector<std::uint32_t> sorted(candidates);
  std::sort(sorted.begin(), sorted.end());
  FABRICSIM_ASSERT(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
                   "select_permutations: candidate jumps must be distinct");
}

}  // namespace

std::vector<std::uint32_t> totient_perms(std::uint32_t n, std::uint32_t g) {
  FABRICSIM_ASSERT(g >= 1 && n % g == 0, "totient_perms: the group size must divide n");
  const std::uint32_t stride = n / g;
  std::vector<std::uint32_t> jumps;
  for (std::uint32_t p = 1; p < g; ++p)
    if (std::gcd(p, g) == 1) jumps.push_back(stride * p);
  return jumps;
}

std::vector<std::uint32_t> select_permutations(std::uint32_t n, std::uint32_t d,
                                               const std::vector<std::uint32_t>& candidates) {
  check_candidates(d, candidates);
  std::vector<std::uint32_t> chosen;
  if (d == 0) return chosen;
  std::vector<std::uint8_t> used(candidates.size(), 0);
  const auto first = static_cast<std::size_t>(
      std::min_element(candidates.begin(), candidates.end()) - candidates.begin());
  used[first] = 1;
  chosen.push_back(candidates[first]);
  // App. E.2: below 2 the ratio is raised to 2 (O(log2 n) diameter).
  const double x = std::max(2.0, std::pow(static_cast<double>(n), 1.0 / d));
  while (chosen.size() < d) {
    const double target = x * chosen.back();
    std::size_t best = candidates.size();
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (used[i]) continue;
      const double c = candidates[i];
      if (best == candidates.size() || strictly_nearer(c, candidates[best], target) ||
          (!strictly_nearer(candidates[best], c, target) && candidates[i] < candidates[best])) {
        best = i;
      }
    }
    used[best] = 1;
    chosen.push_back(candidates[best]);
  }
  return chosen;
}

std::vector<std::uint32_t> select_permutations_geo(std::uint32_t /*n*/, std::uint32_t d,
                                                   const std::vector<std::uint32_t>& candidates,
                                                   bool bidirectional) {
  check_candidates(d, candidates);
  std::vector<std::uint32_t> chosen;
  if (d == 0) return chosen;
  std::vector<std::uint32_t> sorted(candidates);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint8_t> used(sorted.size(), 0);
  used[0] = 1;
  chosen.push_back(sorted[0]);
  const std::uint32_t steps = bidirectional ? d : d - 1;
  const double ratio =
      steps == 0 ? 1.0 : std::pow(static_cast<double>(sorted.back()) / sorted.front(), 1.0 / steps);
  while (chosen.size() < d) {
    const double target = ratio * chosen.back();
    // Smallest unused candidate >= target (within rounding), else the
    // largest unused one.
    std::size_t pick = sorted.size();
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (used[i]) continue;
      if (static_cast<double>(sorted[i]) >= target - 1e-9 * std::max(1.0, target)) {
        pick = i;
        break;
      }
    }
    if (pick == sorted.size()) {
      for (std::size_t i = sorted.size(); i-- > 0;) {
        if (!used[i]) {
          pick = i;
          break;
        }
      }
    }
    used[pick] = 1;
    chosen.push_back(sorted[pick]);
  }
  return chosen;
}

CoinChange coin_change_mod(std::uint32_t n, const std::vector<std::uint32_t>& coins) {
  FABRICSIM_ASSERT(n >= 1, "coin_change_mod: n must be at least 1");
  CoinChange cc;
  cc.hops.assign(n, CoinChange::kUnreachable);
  cc.last.assign(n, CoinChange::kNoCoin);
  cc.hops[0] = 0;
  std::vector<std::uint32_t> frontier{0}, next;
  for (std::uint32_t level = 1; !frontier.empty(); ++level) {
    next.clear();
    for (std::uint32_t r : frontier) {
      for (std::uint32_t c : coins) {
        const auto s = static_cast<std::uint32_t>((std::uint64_t{r} + c) % n);
        if (cc.hops[s] == CoinChange::kUnreachable) {
          cc.hops[s] = level;
          next.push_back(s);
        }
      }
    }
    frontier.swap(next);
  }
  // The last coin: the first in the given order that steps from a residue
  // one hop closer (a rule independent of the BFS's visiting order).
  for (std::uint32_t r = 1; r < n; ++r) {
    if (cc.hops[r] == CoinChange::kUnreachable) continue;
    for (std::uint32_t c : coins) {
      const auto prev = static_cast<std::uint32_t>((std::uint64_t{r} + n - c % n) % n);
      if (c % n != 0 && cc.hops[prev] + 1 == cc.hops[r]) {
        cc.last[r] = c;
        break;
      }
    }
  }
  return cc;
}

std::vector<std::uint32_t> coin_route(const CoinChange& change, std::uint32_t r) {
  const auto n = static_cast<std::uint32_t>(change.hops.size());
  std::vector<std::uint32_t> route;
  if (r >= n || change.hops[r] == CoinChange::kUnreachable) return route;
  while (r != 0) {
    const std::uint32_t c = change.last[r];
    route.push_back(c);
    r = static_cast<std::uint32_t>((std::uint64_t{r} + n - c % n) % n);
  }
  std::reverse(route.begin(), route.end());
  return route;
}

Topology build_topoopt(const TopoOptParams& params) {
  detail::validate_link_params(params.link, "topology.link");
  const std::uint64_t n = params.servers;
  const std::uint64_t d = params.degree;
  const bool bidir = params.bidirectional_rings;
  if (n < 2) throw ConfigError("topology.servers: must be at least 2, got " + num(n));
  require_positive(d, "topology.degree");
  if (bidir && d % 2 != 0) {
    throw ConfigError("topology.degree: bidirectional rings use interfaces in pairs (jump p and n-p), so the "
                      "degree must be even, got " +
                      num(d));
  }
  // Ports per server: 2 per directed ring (a sending and a receiving cable),
  // 2 per bidirectional jump pair (the cables to i+p and to i-p): 2d or d.
  const std::uint64_t rings = bidir ? d / 2 : d;
  const std::uint64_t radix = 2 * rings;
  if (radix > kMaxRadix) {
    throw ConfigError("topology.degree: " + num(d) + " interfaces need " + num(radix) +
                      " ports per server, more than the supported " + num(kMaxRadix));
  }
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (n >= kLimit || 2 * n * rings >= kNoLink) {
    throw ConfigError("topology.servers: " + num(n) + " servers of degree " + num(d) + " is too large");
  }
  const auto n32 = static_cast<std::uint32_t>(n);

  std::vector<std::uint32_t> jumps;
  std::string how;
  if (!params.ring_offsets.empty()) {
    jumps = params.ring_offsets;
    if (jumps.size() != rings) {
      throw ConfigError("topology.ring_offsets: " + num(jumps.size()) + " jumps given, but degree " + num(d) +
                        (bidir ? " with bidirectional rings needs degree/2 = " : " with directed rings needs ") +
                        num(rings));
    }
    std::uint32_t g = n32;
    for (std::uint32_t p : jumps) {
      if (p == 0 || p >= n) {
        throw ConfigError("topology.ring_offsets: jump " + num(p) + " is outside 1.." + num(n - 1));
      }
      g = std::gcd(g, p);
    }
    // The circulant (directed or not) is strongly connected exactly when
    // its jumps generate Z_n.
    if (g != 1) {
      throw ConfigError("topology.ring_offsets: the rings do not connect every server (all jumps and " + num(n) +
                        " share the factor " + num(g) + ")");
    }
    how = "topology.ring_offsets";
  } else {
    std::vector<std::uint32_t> candidates = totient_perms(n32, n32);
    if (bidir) std::erase_if(candidates, [&](std::uint32_t p) { return 2 * std::uint64_t{p} > n; });
    if (rings > candidates.size()) {
      throw ConfigError("topology.degree: " + num(n) + " servers have only " + num(candidates.size()) +
                        (bidir ? " distinct ring pairs" : " distinct rings") + " (jumps coprime to " + num(n) +
                        "), " + num(d) + " interfaces need " + num(rings) +
                        "; give topology.ring_offsets to repeat jumps");
    }
    jumps = params.geo_code_variant
                ? select_permutations_geo(n32, static_cast<std::uint32_t>(rings), candidates, bidir)
                : select_permutations(n32, static_cast<std::uint32_t>(rings), candidates);
    how = params.geo_code_variant ? "choose_n_geo" : "SelectPermutations";
  }

  Topology topo;
  topo.kind = "topoopt";
  topo.reserve(n, 2 * n * rings);
  for (std::uint64_t i = 0; i < n; ++i) {
    topo.add_node(NodeKind::Endpoint, 0, static_cast<std::uint32_t>(radix), "srv" + num(i), true);
  }
  for (std::uint32_t p : jumps) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto a = static_cast<NodeId>(i);
      const auto b = static_cast<NodeId>((i + p) % n);
      if (bidir) {
        topo.connect(a, b, LinkClass::Global, params.link, CableType::AoC);
      } else {
        topo.connect_directed(a, b, LinkClass::Global, params.link, CableType::AoC);
      }
    }
  }

  std::string text = "TopoOpt direct-connect, " + num(n) + " servers, degree " + num(d) + ", rings";
  for (std::uint32_t p : jumps) text += (bidir ? " +-" : " +") + num(p);
  text += bidir ? " (bidirectional" : " (directed";
  text += ", " + how + ")";
  topo.set_description(std::move(text));
  return topo;
}

Topology build_server_fabric(const ServerFabricParams& params) {
  detail::validate_link_params(params.link, "topology.link");
  const std::uint64_t n = params.servers;
  const std::uint64_t g = params.gpus_per_server;
  if (n < 2) throw ConfigError("topology.servers: must be at least 2, got " + num(n));
  if (g == 0) throw ConfigError("topology.gpus_per_server: must be at least 1");
  // Ports: one at each end of every link (a one-way link's credit half uses
  // the same two ports), plus a server's GPUs.
  std::vector<std::uint64_t> ports(n, g > 1 ? g : 0);
  const std::uint64_t d = params.ocs_degree;
  if (d > 0) {
    if (!params.directed.empty() || !params.duplex.empty())
      throw ConfigError("topology: an optical fabric has every circuit, not a given wiring");
    for (auto& p : ports) p += 2 * (n - 1) * d;
  }
  for (const auto* list : {&params.directed, &params.duplex}) {
    for (const auto& [u, v] : *list) {
      if (u >= n || v >= n || u == v)
        throw ConfigError("topology.servers: a link joins " + num(u) + " and " + num(v) + ", not two of the " +
                          num(n) + " servers");
      ++ports[u];
      ++ports[v];
    }
  }
  const std::uint64_t radix = *std::max_element(ports.begin(), ports.end());
  if (radix > kMaxRadix)
    throw ConfigError("topology.degree: a server needs " + num(radix) + " ports, more than the supported " +
                      num(kMaxRadix));
  const std::uint64_t links =
      2 * (params.directed.size() + params.duplex.size() + n * (n - 1) * d + (g > 1 ? n * g : 0));
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (n * g >= kLimit || links >= kNoLink)
    throw ConfigError("topology.servers: " + num(n) + " servers of " + num(g) + " GPUs is too large");
  Topology topo;
  topo.kind = "topoopt";
  topo.reserve(n * (g > 1 ? g + 1 : 1), links);
  for (std::uint64_t s = 0; s < n; ++s) {
    topo.add_node(g > 1 ? NodeKind::Switch : NodeKind::Endpoint, g > 1 ? 1 : 0, static_cast<std::uint32_t>(ports[s]),
                  "srv" + num(s), true);
  }
  if (g > 1) {
    for (std::uint64_t e = 0; e < n * g; ++e) topo.add_node(NodeKind::Endpoint, 0, 1, "gpu" + num(e), false);
    for (std::uint64_t e = 0; e < n * g; ++e)
      topo.connect(static_cast<NodeId>(n + e), static_cast<NodeId>(e / g), LinkClass::IntraServer, params.intra,
                   CableType::None);
  }
  for (std::uint64_t u = 0; u < n && d > 0; ++u)
    for (std::uint64_t v = 0; v < n; ++v)
      for (std::uint64_t k = 0; k < d && u != v; ++k)
        topo.connect_directed(static_cast<NodeId>(u), static_cast<NodeId>(v), LinkClass::Global, params.link,
                              CableType::AoC);
  topo.ocs_degree = static_cast<std::uint32_t>(d);
  topo.shards = params.shards;
  for (std::size_t i = 0; i < params.directed.size(); ++i) {
    const auto& [u, v] = params.directed[i];
    const LinkId l = topo.connect_directed(static_cast<NodeId>(u), static_cast<NodeId>(v), LinkClass::Global,
                                           params.link, CableType::AoC)
                         .first;
    if (i < params.allreduce.size() && params.allreduce[i]) topo.allreduce_links.push_back(l);
  }
  for (const auto& [u, v] : params.duplex)
    topo.connect(static_cast<NodeId>(u), static_cast<NodeId>(v), LinkClass::Global, params.link, CableType::AoC);
  // A server's node forwards but is no switch box (nothing to price).
  topo.set_physical_switches(0);
  topo.set_description(params.description);
  return topo;
}

}  // namespace fabricsim::net
