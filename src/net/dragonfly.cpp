// Dragonfly builder; the wiring rules are documented on DragonflyParams.
//
// Node order: endpoints ((g*a + r)*p + e for endpoint e of router r of group
// g), then routers "routerN", N = g*a + r.  Cabling order: endpoint cables
// (endpoint order), then the intra-group cables of each group (pairs (r, s),
// r < s, in lexicographic order), then the global cables; so a router's ports
// are its p endpoints, its a-1 group peers in ascending order, then its h
// global cables (in the order they are created, which need not follow the
// group's global port numbers).
//
// Global ports: router r of group g owns the group's global ports r*h ..
// r*h+h-1.  With n = a*h ports per group and G groups, every port is cabled:
//   - consecutive: port k < q*(G-1), q = floor(n/(G-1)), goes to the
//     (k mod (G-1))-th other group in ascending order (group numbers without
//     g).  The last r = n mod (G-1) ports ("wrapping" past a whole number of
//     rounds) cannot follow that rule and still pair up (group g would want
//     an extra cable to groups that do not want one back), so they go to a
//     symmetric set of r groups: those at circular distance 1 .. floor(r/2)
//     on both sides, plus the opposite group g + G/2 when r is odd, in
//     ascending order of group number.  Every pair of groups thus gets q or
//     q+1 cables (q+1 exactly for the pairs in that set).
//   - palmtree: port k goes to group (g - k - 1) mod G; this is a pairing of
//     ports only when n = G-1, which palmtree therefore requires.
// The j-th port of g towards g' is cabled to the j-th port of g' towards g
// (ports in ascending order); cables are created by group g, then port k
// ascending, when the partner group is larger than g.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <cstdlib>
#include <array>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "net/route_detail.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {

using detail::ceil_div;
using detail::num;
using detail::require_positive;

using util::ConfigError;

}  // namespace

Topology build_dragonfly(const DragonflyParams& params) {
  detail::check_builder_params(
      {{params.host, "topology.host_link"}, {params.local, "topology.local_link"}, {params.global, "topology.global_link"}},
      {{params.a, "topology.a"}, {params.p, "topology.p"}, {params.h, "topology.h"}});
  const std::uint64_t a = params.a;
  const std::uint64_t p = params.p;
  const std::uint64_t h = params.h;
  const std::uint64_t groups = params.groups;
  if (groups < 2) throw ConfigError("topology.groups: must be at least 2, got " + num(groups));
  const bool palmtree = params.arrangement == "palmtree";
  if (!palmtree && params.arrangement != "consecutive") {
    throw ConfigError("topology.arrangement: unknown arrangement '" + params.arrangement +
                      "' (consecutive or palmtree)");
  }
  const std::uint64_t rps = params.routers_per_switch;
  if (rps != 1 && rps != 2) {
    throw ConfigError("topology.routers_per_switch: must be 1 or 2, got " + num(rps));
  }
  if (a % rps != 0) {
    throw ConfigError("topology.routers_per_switch: " + num(rps) + " does not divide topology.a " + num(a));
  }
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (a >= kLimit || h >= kLimit || p >= kLimit || groups >= kLimit) {
    throw ConfigError("topology.groups: " + num(groups) + " groups of " + num(a) + " routers is too large");
  }
  const std::uint64_t radix = p + (a - 1) + h;
  if (radix > kMaxRadix) {
    throw ConfigError("topology.a: router radix p + (a-1) + h = " + num(radix) + " exceeds the supported " +
                      num(kMaxRadix));
  }
  const std::uint64_t ports = a * h;  // global ports per group
  if (ports < groups - 1) {
    throw ConfigError("topology.groups: " + num(groups) + " groups need at least " + num(groups - 1) +
                      " global links per group to connect every pair, but topology.a * topology.h = " +
                      num(ports));
  }
  if (palmtree && ports != groups - 1) {
    throw ConfigError("topology.arrangement: palmtree needs topology.a * topology.h = topology.groups - 1 (" +
                      num(groups - 1) + "), got " + num(ports));
  }
  if ((groups * ports) % 2 != 0) {
    throw ConfigError("topology.h: groups * a * h = " + num(groups * ports) +
                      " global ports cannot be paired (must be even)");
  }
  const std::uint64_t routers = groups * a;
  const std::uint64_t n = routers * p;
  const std::uint64_t local_cables = groups * a * (a - 1) / 2;
  const std::uint64_t global_cables = groups * ports / 2;
  const std::uint64_t cables = n + local_cables + global_cables;
  if (routers >= kLimit || n >= kLimit || n + routers >= kNoNode || 2 * cables >= kNoLink) {
    throw ConfigError("topology.groups: " + num(groups) + " groups of " + num(a) + " routers is too large");
  }

  // target[g*ports + k]: the group that global port k of group g goes to.
  const std::uint64_t others = groups - 1;
  const std::uint64_t full = (ports / others) * others;
  const std::uint64_t rest = ports - full;
  std::vector<std::uint32_t> target(groups * ports);
  std::vector<std::uint32_t> extra;  // scratch: the groups of the last `rest` ports
  for (std::uint64_t g = 0; g < groups; ++g) {
    for (std::uint64_t k = 0; k < full; ++k) {
      if (palmtree) {
        target[g * ports + k] = static_cast<std::uint32_t>((g + groups - (k % groups) - 1) % groups);
      } else {
        const std::uint64_t m = k % others;
        target[g * ports + k] = static_cast<std::uint32_t>(m < g ? m : m + 1);
      }
    }
    extra.clear();
    for (std::uint64_t g2 = 0; g2 < groups; ++g2) {
      if (g2 == g) continue;
      const std::uint64_t dist = std::min((g2 + groups - g) % groups, (g + groups - g2) % groups);
      if (dist <= rest / 2 || (rest % 2 == 1 && 2 * dist == groups)) {
        extra.push_back(static_cast<std::uint32_t>(g2));
      }
    }
    for (std::uint64_t k = full; k < ports; ++k) target[g * ports + k] = extra[k - full];
  }

  // partner[g*ports + k]: the port (g'*ports + k') cabled to it.  Each port
  // is keyed by (smaller group, larger group, j, side) where j counts the
  // earlier ports of its group towards the same group; sorting pairs them.
  std::vector<std::uint64_t> partner(groups * ports);
  {
    struct Key {
      std::uint32_t lo, hi, j, side;
      std::uint64_t port;
    };
    std::vector<Key> keys;
    keys.reserve(groups * ports);
    std::vector<std::uint32_t> seen(groups, 0);
    for (std::uint64_t g = 0; g < groups; ++g) {
      for (std::uint64_t k = 0; k < ports; ++k) {
        const std::uint32_t t = target[g * ports + k];
        const auto gg = static_cast<std::uint32_t>(g);
        keys.push_back(Key{std::min(gg, t), std::max(gg, t), seen[t]++, gg < t ? 0u : 1u, g * ports + k});
      }
      for (std::uint64_t k = 0; k < ports; ++k) seen[target[g * ports + k]] = 0;
    }
    std::sort(keys.begin(), keys.end(), [](const Key& l, const Key& r) {
      if (l.lo != r.lo) return l.lo < r.lo;
      if (l.hi != r.hi) return l.hi < r.hi;
      if (l.j != r.j) return l.j < r.j;
      return l.side < r.side;
    });
    for (std::size_t i = 0; i < keys.size(); i += 2) {
      FABRICSIM_ASSERT(i + 1 < keys.size() && keys[i].lo == keys[i + 1].lo && keys[i].hi == keys[i + 1].hi &&
                           keys[i].j == keys[i + 1].j && keys[i].side == 0 && keys[i + 1].side == 1,
                       "dragonfly: unpaired global port");
      partner[keys[i].port] = keys[i + 1].port;
      partner[keys[i + 1].port] = keys[i].port;
    }
  }

  Topology topo;
  topo.kind = "dragonfly";
  topo.reserve(n + routers, 2 * cables);
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.add_node(NodeKind::Endpoint, 0, 1, "ep" + num(e), false);
  }
  const auto first_router = static_cast<NodeId>(n);
  for (std::uint64_t r = 0; r < routers; ++r) {
    topo.add_node(NodeKind::Switch, 1, static_cast<std::uint32_t>(radix), "router" + num(r), true);
  }
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.connect(static_cast<NodeId>(e), first_router + static_cast<NodeId>(e / p), LinkClass::Host, params.host,
                 CableType::DAC);
  }
  for (std::uint64_t g = 0; g < groups; ++g) {
    for (std::uint64_t r = 0; r < a; ++r) {
      for (std::uint64_t s = r + 1; s < a; ++s) {
        const bool same_box = rps == 2 && r / 2 == s / 2;
        topo.connect(first_router + static_cast<NodeId>(g * a + r), first_router + static_cast<NodeId>(g * a + s),
                     LinkClass::Fabric, params.local, same_box ? CableType::None : CableType::DAC);
      }
    }
  }
  for (std::uint64_t g = 0; g < groups; ++g) {
    for (std::uint64_t k = 0; k < ports; ++k) {
      const std::uint64_t other = partner[g * ports + k];
      if (other / ports <= g) continue;  // created from the smaller group
      const std::uint64_t r = k / h;
      const std::uint64_t r2 = (other % ports) / h;
      topo.connect(first_router + static_cast<NodeId>(g * a + r),
                   first_router + static_cast<NodeId>((other / ports) * a + r2), LinkClass::Global, params.global,
                   CableType::AoC);
    }
  }
  if (rps > 1) topo.set_physical_switches(routers / rps);
  topo.units.resize(n + routers);
  for (std::uint64_t e = 0; e < n; ++e) topo.units[e] = static_cast<std::uint32_t>(e / p / a);
  for (std::uint64_t r = 0; r < routers; ++r) topo.units[n + r] = static_cast<std::uint32_t>(r / a);

  std::string text = "dragonfly, " + num(groups) + " groups of " + num(a) + " routers (p = " + num(p) +
                     ", h = " + num(h) + ", radix " + num(radix) + "), " + num(n) + " endpoints, " +
                     params.arrangement + " global links";
  if (rps > 1) text += ", " + num(rps) + " routers per switch";
  topo.set_description(std::move(text));
  return topo;
}


// ================================================================ routes
// Its route rules (RouteRules) and the legal-route lengths computed from
// coordinates (RouteDistance; see route_detail.hpp), kept with the builder
// whose numbering they read (state_routes.hpp).

namespace {

using route_detail::clamp_hops;
using route_detail::kFar;
using route_detail::kInf;

// -------------------------------------------------------------- Dragonfly

class DragonflyRules final : public RouteRules {
 public:
  DragonflyRules(const Topology& topo, std::uint32_t max_global) : max_global_(max_global) {
    if (topo.kind != "dragonfly") throw util::ConfigError("routing.algorithm: Dragonfly routing needs a dragonfly topology");
    global_.resize(topo.link_count());
    for (LinkId l = 0; l < topo.link_count(); ++l) global_[l] = topo.link(l).cls == LinkClass::Global ? 1 : 0;
  }
  std::uint8_t state_count() const override { return static_cast<std::uint8_t>(max_global_ + 1); }
  std::uint8_t vcs() const override { return static_cast<std::uint8_t>(max_global_ + 1); }
  std::uint8_t vc(std::uint8_t s) const override { return s; }
  std::string describe() const override {
    return max_global_ == 1 ? "Dragonfly minimal, VC per global hop" : "Dragonfly Valiant, VC per global hop";
  }
  std::uint8_t step(NodeId, std::uint8_t s, LinkId l, std::uint32_t, unsigned) const override {
    if (!global_[l]) return s;
    return s + 1u > max_global_ ? kIllegal : static_cast<std::uint8_t>(s + 1);
  }

 private:
  std::uint32_t max_global_;
  std::vector<std::uint8_t> global_;
};

// -------------------------------------------------------------- Dragonfly

// Endpoints first, then router g*a + r; the state counts global links taken
// (at most max_global).  Routers of a group are fully connected and every
// pair of groups has at least one global cable (build_dragonfly), so:
//   same router: 1 (the host link); same group: 2 (local, host);
//   one global link: 2 + [no global cable leaves R for T's group, or lands
//   on T] + [...], i.e. 2 plus how many of (local hop before, local hop
//   after) the best cable between the groups needs;
//   two global links (Valiant budget) are shorter only as R -> v -> T over
//   two cables (3 links) when one global link needs both local hops (4).
// Group targets (the Valiant first leg, routers of group X): 0 inside X,
// 1 with a cable from R to X, else 2.
class DragonflyDistance final : public RouteDistance {
 public:
  DragonflyDistance(const Topology& topo, std::uint32_t a, std::uint32_t max_global, bool group_targets)
      : topo_(topo), a_(a), max_global_(max_global), group_targets_(group_targets) {
    if (topo.kind != "dragonfly" || a == 0)
      throw util::ConfigError("routing.algorithm: Dragonfly routing needs a dragonfly topology");
    endpoints_ = static_cast<NodeId>(topo.endpoint_count());
    const std::size_t routers = topo.node_count() - endpoints_;
    const auto groups = static_cast<std::uint32_t>(routers / a);
    router_.resize(endpoints_);
    for (NodeId e = 0; e < endpoints_; ++e) router_[e] = topo.link(topo.node(e).out[0]).dst - endpoints_;
    nbr_at_.assign(routers + 1, 0);
    for (std::size_t r = 0; r < routers; ++r) {
      const Node& node = topo.node(static_cast<NodeId>(endpoints_ + r));
      std::vector<std::uint32_t> peers;
      for (LinkId l : node.out)
        if (topo.link(l).cls == LinkClass::Global) peers.push_back(topo.link(l).dst - endpoints_);
      std::sort(peers.begin(), peers.end());
      nbr_.insert(nbr_.end(), peers.begin(), peers.end());
      nbr_at_[r + 1] = static_cast<std::uint32_t>(nbr_.size());
    }
    // Per router, the groups its cables reach, one bit each.
    words_ = (groups + 63) / 64;
    reach_.assign(routers * words_, 0);
    for (std::size_t r = 0; r < routers; ++r)
      for (std::uint32_t i = nbr_at_[r]; i < nbr_at_[r + 1]; ++i) {
        const std::uint32_t g = nbr_[i] / a_;
        reach_[r * words_ + g / 64] |= std::uint64_t{1} << (g % 64);
      }
  }

  std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const override {
    if (at < endpoints_) {
      if (!group_targets_ && topo_.endpoint_node(target) == at) return 0;
      if (s != 0) return kFar;  // an endpoint holds a packet only at its source
      const std::uint16_t d = hops(router_of(at) + endpoints_, s, target);
      return d == kFar ? kFar : static_cast<std::uint16_t>(d + 1);
    }
    const std::uint32_t r = at - endpoints_;
    const std::uint32_t g = r / a_;
    const std::uint32_t budget = s > max_global_ ? 0 : max_global_ - s;
    if (group_targets_) {
      if (g == target) return 0;
      if (budget == 0) return kFar;
      return reaches(r, target) ? 1 : 2;
    }
    const std::uint32_t t = router_of(topo_.endpoint_node(target));
    if (t == r) return 1;
    const std::uint32_t gt = t / a_;
    if (gt == g) return 2;
    if (budget == 0) return kFar;
    if (linked(r, t)) return 2;
    if (reaches(r, gt) || reaches(t, g)) return 3;
    if (budget >= 2 && share_peer(r, t)) return 3;
    return 4;
  }

 private:
  std::uint32_t router_of(NodeId endpoint) const { return router_[endpoint]; }
  bool reaches(std::uint32_t r, std::uint32_t g) const {
    return (reach_[static_cast<std::size_t>(r) * words_ + g / 64] >> (g % 64)) & 1u;
  }
  bool linked(std::uint32_t r, std::uint32_t t) const {
    return std::binary_search(nbr_.begin() + nbr_at_[r], nbr_.begin() + nbr_at_[r + 1], t);
  }
  bool share_peer(std::uint32_t r, std::uint32_t t) const {
    auto i = nbr_.begin() + nbr_at_[r], ie = nbr_.begin() + nbr_at_[r + 1];
    auto j = nbr_.begin() + nbr_at_[t], je = nbr_.begin() + nbr_at_[t + 1];
    while (i != ie && j != je) {
      if (*i == *j) return true;
      if (*i < *j) ++i; else ++j;
    }
    return false;
  }
  const Topology& topo_;
  std::uint32_t a_;
  std::uint32_t max_global_;
  bool group_targets_;
  NodeId endpoints_ = 0;
  std::size_t words_ = 0;
  std::vector<std::uint32_t> router_;  // router index of each endpoint
  std::vector<std::uint32_t> nbr_;     // global peers of each router, sorted (router indices)
  std::vector<std::uint32_t> nbr_at_;
  std::vector<std::uint64_t> reach_;   // [router][group bit]: a global cable to that group
};

}  // namespace

std::unique_ptr<RouteRules> dragonfly_rules(const Topology& topo, std::uint32_t max_global) {
  return std::make_unique<DragonflyRules>(topo, max_global);
}

std::unique_ptr<RouteDistance> dragonfly_distance(const Topology& topo, std::uint32_t routers_per_group,
                                                  std::uint32_t max_global, bool group_targets) {
  return std::make_unique<DragonflyDistance>(topo, routers_per_group, max_global, group_targets);
}

}  // namespace fabricsim::net
