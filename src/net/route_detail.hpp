// What the direct topologies' route rules and computed distances share
// (RouteRules, RouteDistance in state_routes.hpp).  Each kind keeps its own
// with its builder (torus.cpp, hammingmesh.cpp, hyperx.cpp, dragonfly.cpp),
// since both read the builder's numbering.
//
// A RouteDistance's hops() is the minimum over a family of concrete legal
// routes of the topology's rules, written out segment by segment, so it is
// never below the true shortest legal route; the family holds a shortest
// route from every (node, state) a packet can reach, so there it is exact.
// tests/net/test_route_distance.cpp checks both against the tables on small
// instances of every shape (merged, single-switch and tree networks, all
// rule variants).
#pragma once

#include <cstdint>

#include "fabricsim/net/state_routes.hpp"

namespace fabricsim::net::route_detail {

inline constexpr std::uint16_t kFar = StateRoutes::kUnreachable;
inline constexpr std::uint32_t kInf = 1u << 20;  // larger than any route, small enough to add a few

inline std::uint16_t clamp_hops(std::uint32_t d) { return d >= kInf ? kFar : static_cast<std::uint16_t>(d); }

}  // namespace fabricsim::net::route_detail
