// The routing policies (route_policy.hpp): one entry each.
#include "fabricsim/net/route_policy.hpp"

#include <algorithm>

#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

namespace {

// ECMP: the shared hash (ecmp.hpp) of (node, 5-tuple) mod the candidates.
std::size_t ecmp_table(const PickContext& c, std::span<const PortIndex> ports) {
  return c.ecmp.pick(c.at, c.src, c.dst, c.sport, ports.size());
}
std::size_t ecmp_rules(const PickContext& c, std::size_t k) { return c.ecmp.pick(c.at, c.src, c.dst, c.sport, k); }

// D-mod-k: up, the destination's digit for this level; down among parallel
// cables, its lowest digit, so that flows to different endpoints of one
// leaf take different cables.
std::size_t dmodk_table(const PickContext& c, std::span<const PortIndex> ports) {
  const Node& node = c.topo.node(c.at);
  const std::size_t k = ports.size();
  const bool down = c.topo.node(c.topo.link(node.out[ports[0]]).dst).level < node.level;
  return down ? c.dst % k : (c.dst / c.divisors[node.level]) % k;
}

// S-mod-k, source routing by a fixed per-leaf port bijection (vClos, spec
// 4.1: a GPU on port i of its leaf leaves on uplink i mod n): up, the
// source's digit for this level (the identity on port index at a leaf,
// `original_src % available_port_num`); down the route is unique, and among
// parallel cables the destination's lowest digit, as D-mod-k.  Contention-
// free for a leaf-wise permutation of leaf-contiguous ranks (Lemma 5.1).
std::size_t smodk_table(const PickContext& c, std::span<const PortIndex> ports) {
  const Node& node = c.topo.node(c.at);
  const std::size_t k = ports.size();
  const bool down = c.topo.node(c.topo.link(node.out[ports[0]]).dst).level < node.level;
  return down ? c.dst % k : (c.src / c.divisors[node.level]) % k;
}

const std::vector<RoutePolicy>& table() {
  static const std::vector<RoutePolicy> t = {
      {RoutingAlgorithm::Ecmp, "ecmp", &ecmp_table, &ecmp_rules},
      {RoutingAlgorithm::Spray, "spray", &ecmp_table, &ecmp_rules, PickMechanism::Random, ValiantLeg::None, true},
      {RoutingAlgorithm::Adaptive, "adaptive", &ecmp_table, &ecmp_rules, PickMechanism::LeastOccupied,
       ValiantLeg::None, true},
      {RoutingAlgorithm::DmodK, "dmodk", &dmodk_table, nullptr},
      {RoutingAlgorithm::SmodK, "smodk", &smodk_table, nullptr},
      {RoutingAlgorithm::BalancedEcmp, "balanced_ecmp", &ecmp_table, nullptr, PickMechanism::LeastFlows},
      {RoutingAlgorithm::Dor, "dor", nullptr, nullptr},
      {RoutingAlgorithm::Minimal, "minimal", nullptr, nullptr},
      {RoutingAlgorithm::Valiant, "valiant", nullptr, nullptr, PickMechanism::LeastOccupied, ValiantLeg::Valiant},
      {RoutingAlgorithm::UgalLocal, "ugal_local", nullptr, nullptr, PickMechanism::LeastOccupied,
       ValiantLeg::UgalLocal},
      {RoutingAlgorithm::UgalGlobal, "ugal_global", nullptr, nullptr, PickMechanism::LeastOccupied,
       ValiantLeg::UgalGlobal, false, true},
  };
  return t;
}

}  // namespace

const std::vector<RoutePolicy>& route_policies() { return table(); }

const RoutePolicy& route_policy(RoutingAlgorithm id) {
  for (const RoutePolicy& p : table())
    if (p.id == id) return p;
  throw util::UserError("internal: a routing algorithm without a policy entry");
}

RoutingAlgorithm parse_routing_algorithm(const std::string& name) {
  for (const RoutePolicy& p : table())
    if (name == p.name) return p.id;
  throw util::ConfigError("routing.algorithm: unknown algorithm '" + name + "'");
}

std::string table_policy_names() {
  std::vector<std::string> names;
  for (const RoutePolicy& p : table())
    if (p.table_pick != nullptr) names.emplace_back(p.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace fabricsim::net
