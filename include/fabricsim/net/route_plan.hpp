// The routes of a run (issue 28 item 1): one route source and one policy,
// set up once per run by the topology kind's routing function
// (app/topology_kinds.hpp) and read by every network model.
//
//   route source   the trees' minimal-route table (the default), up*/down*
//                  (`up_down`), route rules (`state_routes`, with
//                  `valiant_routes` and `group_of` for Valiant / UGAL), and
//                  TopoOpt's coin routes (`listed_paths`, pinned per message);
//                  a message pinned in the route store follows its route
//                  before any of these;
//   policy         `routing`: how one of several candidates is picked
//                  (route_policy.hpp), with the shared ECMP hash.
//
// The packet model takes the plan with its NetworkParams (a RoutePlan) and
// asks it per hop; the flow and analytic models get their paths from
// make_flow_paths (flow_paths.hpp), which reads the same plan.
#pragma once

#include <cstdint>
#include <vector>

#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/route_policy.hpp"

namespace fabricsim::net {

class StateRoutes;
class ListedPaths;

struct RoutePlan {
  /// The policy (route_policy.hpp).
  RoutingAlgorithm routing = RoutingAlgorithm::Ecmp;
  EcmpHash ecmp_hash = EcmpHash::Mix64;
  std::uint32_t ecmp_seed = 0;
  /// Route over shortest up*/down* paths (UpDownRoutes) instead of all
  /// minimal paths: deadlock-free on any graph, used for custom graphs whose
  /// minimal routes have channel-dependency cycles.
  bool up_down = false;
  /// Route by rules (direct topologies, see state_routes.hpp) instead of the
  /// minimal-route table; owned by the caller, must outlive the Network.
  /// network.vcs must be at least its rules' vcs().
  const StateRoutes* state_routes = nullptr;
  /// Valiant and UGAL on a Dragonfly: routes towards each group (targets =
  /// the routers of a group), used for the first leg to the intermediate
  /// group; `group_of` gives the group of every node (kNoGroup for none).
  const StateRoutes* valiant_routes = nullptr;
  /// TopoOpt k-shortest paths (with state_routes = hop-count rules): each
  /// message is pinned to route hash(seed, message) mod count of its pair,
  /// hop i on VC i (a route longer than network.vcs is a ConfigError).
  const ListedPaths* listed_paths = nullptr;
  std::vector<std::uint32_t> group_of;

  const RoutePolicy& policy() const { return route_policy(routing); }
};

}  // namespace fabricsim::net
