// Fluid estimate of a workload's link loads: every message's bytes spread
// over its minimal routes, split equally among the minimal next hops at each
// node (the expected load under ECMP hashing or spraying, and what adaptive
// routing aims for).  From it: the most loaded link relative to its rate,
// hence a lower bound on the time to deliver everything and an upper bound on
// the throughput a packet-level run can reach.
#pragma once

#include <cstdint>
#include <vector>

#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::workload {

struct FluidEstimate {
  std::vector<double> link_bytes;  ///< expected wire bytes per directed link
  net::LinkId bottleneck = net::kNoLink;
  double bottleneck_bytes = 0;
  double min_makespan_ns = 0;      ///< max over links of bytes * 8 / rate
  double payload_bytes = 0;
  /// Upper bound on delivered payload * 8 / makespan / (endpoints * injection rate).
  double throughput_bound = 0;
};

FluidEstimate estimate_fluid(const net::Topology& topo, const net::RoutingTable& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np);
/// The same over the moves of route rules (direct topologies): the spread
/// follows the routes packets can take, and needs no per-destination table.
FluidEstimate estimate_fluid(const net::Topology& topo, const net::StateRoutes& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np);

}  // namespace fabricsim::workload
