// Routing policies: how one of several equally good candidates is chosen,
// declared once each (src/net/route_policies.cpp) and read by every model.
//
// A run's routes come from one route source, set up per topology kind
// (app/topology_kinds.hpp): the trees' minimal-route table, up*/down* on
// custom graphs, or route rules (StateRoutes) on the direct topologies; a
// message pinned in the route store (route_store.hpp) follows its route
// instead.  Where the source offers several candidates, the policy picks:
//
//   * a deterministic policy (ecmp, dmodk, smodk, and the rules kinds' first
//     move) is a pure function of (topology, node, candidates, message's
//     5-tuple) -- `table_pick` / `rules_pick` -- and every model calls the
//     same function: the packet model per hop, the flow and analytic
//     models along their path walks, so a message takes the same path in
//     all three;
//   * a dynamic policy reads what only the packet model has: `mechanism`
//     names it (a random draw of the node's stream: spray; the least
//     occupied output: adaptive, and Valiant / UGAL among rule moves), and
//     `flow_split` is the flow model's static reading of it (an even split;
//     the analytic model takes one path per message, by the ECMP hash);
//   * Valiant and UGAL add a first leg through an intermediate Dragonfly
//     group (`leg`), drawn in one place (NetworkImpl::draw_group).
//
// Adding a policy: an enumerator below, its entry (and pick function) in
// route_policies.cpp, its name among routing.algorithm's choices in
// src/config/parameters.cpp (docs/architecture.md, "How to add a routing
// policy").  A table policy is then accepted by every kind routed by the
// table; the rules kinds list what they take (their rules depend on it).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

enum class RoutingAlgorithm : std::uint8_t { Ecmp, Spray, Adaptive, DmodK, Dor, Minimal, Valiant, UgalLocal, UgalGlobal, SmodK, BalancedEcmp };

/// What a deterministic pick reads: the same in every model.
struct PickContext {
  const Topology& topo;
  const Ecmp& ecmp;
  const std::vector<std::uint32_t>& divisors;  ///< dmodk_divisors(topo), per level
  NodeId at;
  EndpointId src;
  EndpointId dst;
  std::uint16_t sport;  ///< the message's UDP source port (ECMP entropy)
};

/// Which packet-model mechanism a dynamic policy uses (None: deterministic).
/// LeastFlows: the flow model's count of flows on each candidate link when
/// a flow starts (vClos' balanced ECMP); the pick then breaks ties among the
/// least loaded.  The packet and analytic models have no such count and
/// refuse it (run.cpp, make_flow_paths).
enum class PickMechanism : std::uint8_t { None, Random, LeastOccupied, LeastFlows };
/// The first leg of Valiant and UGAL (Dragonfly route rules).
enum class ValiantLeg : std::uint8_t { None, Valiant, UgalLocal, UgalGlobal, SmodK };

struct RoutePolicy {
  RoutingAlgorithm id;
  const char* name;  ///< routing.algorithm
  /// Trees' table (and up*/down*): index among the ports `ports` of node
  /// c.at (ascending, each a minimal next hop towards c.dst).  nullptr:
  /// the policy does not route by the table.
  std::size_t (*table_pick)(const PickContext& c, std::span<const PortIndex> ports) = nullptr;
  /// Route rules: index among `k` moves (in the rules' order).  nullptr:
  /// the first move (dimension order, minimal; and any dynamic policy's
  /// flow reading).
  std::size_t (*rules_pick)(const PickContext& c, std::size_t k) = nullptr;
  PickMechanism mechanism = PickMechanism::None;
  ValiantLeg leg = ValiantLeg::None;
  /// The flow model's reading: even split over the candidates (spray,
  /// adaptive) instead of one path by the pick.
  bool flow_split = false;
  /// Reads the state of the whole fabric at a decision (UGAL-G's path
  /// occupancy), which one rank of a partitioned run cannot see: refused
  /// on several ranks.
  bool whole_fabric = false;
};

/// Every policy, in declaration order.
const std::vector<RoutePolicy>& route_policies();
const RoutePolicy& route_policy(RoutingAlgorithm id);
/// util::ConfigError naming routing.algorithm for an unknown name.
RoutingAlgorithm parse_routing_algorithm(const std::string& name);
/// The names of the policies that route by the table, "a, b or c" (for errors).
std::string table_policy_names();

}  // namespace fabricsim::net
