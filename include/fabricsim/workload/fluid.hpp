// Fluid estimate of a workload's link loads: every message's bytes spread
// over its minimal routes, split equally at each node among the minimal next
// hops (the expected load under ECMP hashing or spraying).  From it: the most
// loaded link relative to its rate, the equal split's makespan; and, over
// the same routes split in any way (what adaptive routing may find), a
// lower bound on the time to deliver everything and an upper bound on the
// throughput a packet-level run of minimal routing can reach.
#pragma once

#include <cstdint>
#include <functional>
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
  double payload_bytes = 0;
  /// The equal split's makespan (max over links of bytes * 8 / rate, the
  /// bottleneck's) and payload * 8 / it / (endpoints * injection rate): what
  /// ECMP hashing and spraying expect.  Not a bound for routing that chooses
  /// among the minimal routes by load: a permutation on the 32x32 torus
  /// takes 180 us split equally and 134 us adaptive at packet level.
  double equal_split_makespan_ns = 0;
  double equal_split_throughput = 0;
  /// A lower bound on the makespan of any split of the messages over their
  /// minimal routes (the dual of the maximum concurrent flow restricted to
  /// them, from length functions of the equal split's loads): at most the
  /// equal split's, and equal to it where the equal split is the best split
  /// (symmetric traffic on symmetric fabrics).
  double min_makespan_ns = 0;
  /// Upper bound on delivered payload * 8 / makespan / (endpoints *
  /// injection rate) for any minimal routing: from min_makespan_ns.
  double throughput_bound = 0;
  /// Upper bound on the per-source share (per_source_bound below) over the
  /// same routes, split in any way; -1: not asked for, or none (a source
  /// that sends only to itself).
  double per_source_bound = -1;
};

/// What estimate_fluid computes beyond the equal split's loads: Loads
/// alone (what the partitioner weighs nodes by); Bound, the makespan and
/// throughput bounds over any split (a second walk over the routes);
/// PerSourceBound, the per-source share's bound too, valid where every
/// source posts its first message at the same time (synthetic traffic), as
/// per_source_bound says.
enum class FluidDetail : std::uint8_t { Loads, Bound, PerSourceBound };

FluidEstimate estimate_fluid(const net::Topology& topo, const net::RoutingTable& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np,
                             FluidDetail detail = FluidDetail::Bound);
/// The same over the moves of route rules (direct topologies): the spread
/// follows the routes packets can take, and needs no per-destination table.
FluidEstimate estimate_fluid(const net::Topology& topo, const net::StateRoutes& routes,
                             const std::vector<PlannedMessage>& messages, const net::NetworkParams& np,
                             FluidDetail detail = FluidDetail::Bound);
/// The messages one at a time, in order, from a workload that need not
/// hold them all (Workload::for_each_planned).
using PlannedMessages = std::function<void(const std::function<void(const PlannedMessage&)>&)>;
/// FluidDetail::Loads alone (the partitioner's weights) over messages given
/// one at a time: the same loads as estimate_fluid over them in a vector,
/// without the vector.  `table` or `rules`, whichever routes (neither: a
/// table made here).
FluidEstimate estimate_fluid_loads(const net::Topology& topo, const net::RoutingTable* table,
                                   const net::StateRoutes* rules, const PlannedMessages& messages,
                                   const net::NetworkParams& np);

/// The per-source share (stats::throughput_shares: the mean over sending
/// sources s of payload_s x 8 / (T_s - t0) / injection rate_s, T_s its
/// last delivery, t0 the common first post) is not bounded by the makespan
/// bound: sources that finish early count for more.  What bounds it is the
/// order of completion.  Given x_s >= 0 (ns) such that any set S of sources
/// needs at least sum over S of x_s to deliver its own traffic (from a
/// length function: x_s = s's bytes x their route lengths / the fabric's
/// length-weighted capacity), the k-th source to finish has T >= L_k, the
/// sum of the k smallest x; it also has T_s >= its wire bytes x 8 / its
/// injection rate.  So the k-th term is at most min(max_s payload_s /
/// wire_s, max_s payload_s x 8 / rate_s / L_k), and the share at most the
/// mean of those.  Exact for an incast of n equal messages through one
/// link at the injection rate, served one source after another: H_n / n.
/// `x` per endpoint (those that send nothing are skipped); -1 where a
/// sending source puts nothing on the network.
double per_source_bound(const net::Topology& topo, const std::vector<PlannedMessage>& messages,
                        const net::NetworkParams& np, const std::vector<double>& x);

/// A lower bound on the makespan of delivering the messages, all posted at
/// once, over any routes at all (minimal or not, split in any way): the
/// fluid estimate above assumes minimal routes, which Valiant and UGAL
/// paths, or k > 1 listed routes, can beat.
///
/// It is the dual of the multicommodity-flow LP: for any lengths l >= 0 on
/// the links, a message of d wire bytes whose shortest route is dist_l long
/// occupies at least d * dist_l of the length-weighted capacity, of which the
/// network offers sum_e c_e l_e per ns; so the makespan is at least
/// sum_k d_k dist_l(k) / sum_e c_e l_e.  Lengths tried: 1 on a node's links
/// out (its injection cut) or in (ejection), then l = 1 / c and rounds of
/// multiplicative updates toward the links the last round's shortest routes
/// overload (Garg and Koenemann's scheme, a fixed number of rounds, so the
/// result repeats).  Every round's value is a valid bound; the largest is
/// kept.  Links that carry no data and transit through nodes that do not
/// forward are not used.
struct AnyRouteBound {
  bool computed = false;            ///< false: over the work budget (no bound)
  double min_makespan_ns = 0;
  double throughput_bound = 0;      ///< as FluidEstimate::throughput_bound, <= 1
  std::uint32_t rounds = 0;         ///< length functions from shortest routes tried
  std::uint32_t sources = 0;        ///< shortest-route trees per round
  /// The per-source share's bound (per_source_bound below) from the same
  /// length functions and the ejection cut, the least found; -1: none.
  double per_source_bound = -1;
};

/// work_budget: edge relaxations of all rounds together (one round costs
/// sources x (links + nodes)); with less than one round's worth, nothing is
/// computed.  max_rounds caps the rounds below the budget.
AnyRouteBound bound_any_routes(const net::Topology& topo, const std::vector<PlannedMessage>& messages,
                               const net::NetworkParams& np, double work_budget, std::uint32_t max_rounds = 16);

}  // namespace fabricsim::workload
