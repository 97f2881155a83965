// Flow-level and analytic network models (issue 20): the same messages,
// listener and link counters as the packet model (network.hpp), at a
// fraction of its cost.  Both run on one process (the model is global).
//
// FlowNetwork: each posted message is a flow over the route a PathProvider
// gives it (one path, or a fixed split over several).  Rates are max-min
// fair over the link capacities (FlowRates), with an optional cap per flow,
// and are recomputed once per simulated instant at which flows started or
// ended (one event after every post and end at that instant), for the
// components of flows that share links with them only; the flows whose rate
// changed get a new finish time.  Finish times wait in an indexed heap and
// only the earliest is an event on the Simulator.
//
// A message of P payload bytes is, on the wire, W = P + packets x header
// bytes (packets = ceil(P / (packet_bytes - header_bytes)), as the packet
// model cuts it; FlowParams::headers = false counts P only).  All but its
// last packet are the flow: they cross at the allocated rate.  When they
// have, the last packet's serialization at the route's bottleneck rate, the
// route's propagation and a switch latency per intermediate node follow:
//     delivered = end of the flow + ser(last packet, bottleneck)
//                 + propagation + (hops - 1) x switch_latency.
// On an idle path of one rate g this is W / g + propagation + switch
// latencies, what the packet model gives with virtual cut-through
// (docs/model.md, "a single packet crossing h links"); a one-packet message
// is no flow at all, only that latency.  Under sharing the last packet goes
// at line rate, as it does when packets of several messages interleave.
//
// Link counters: tx_bytes integrates weight x rate over time (plus the last
// packets), busy_ps the utilization (load / capacity) over time plus the
// last packets' serialization; both exact sums up to floating-point
// rounding of the integral, written as integers.  tx_packets counts each
// message's packets times its weight on the link (rounded); flows counts the
// messages whose route uses the link.  No queues or stalls.  Time series
// (NetworkParams::interval > 0): each link's bytes per interval, its load
// integrated over the interval plus the last packets (coarsened like the
// packet model's to at most 65,536 intervals and 2^24 link-intervals);
// queue series are zero.  Send engines (NetworkParams::send_engines): a
// NIC has at most that many messages leaving it at once; the others wait,
// in post order, until one has left (its last packet serialized).
//
// AnalyticNetwork: the TACOS link model (../shared/spec/tacos.md sections
// 2.2 and 8): every directed link serves one transfer at a time, first come
// first served, and a transfer of n bytes occupies it for
//     alpha + beta x n,  alpha = the link's latency, beta x n = ser(n, rate).
// A message store-and-forwards along its single path: it queues for its
// first link at its post time; when it has crossed link k it queues for link
// k + 1 after the switch latency (its arrival there); it is delivered when
// it has crossed the last link.  n counts payload bytes only unless
// AnalyticParams::headers is set, so beta x n is the formulas' term.
// busy_ps counts the occupancy (alpha + beta x n), tx_bytes the n.  Time
// series (NetworkParams::interval > 0, the same rules as the flow model's):
// a transfer's n bytes are sent evenly over beta x n from the moment the
// link starts serving it, alpha (propagation) after them, cut into the
// intervals in whole bytes (the bytes sent by each boundary rounded down),
// so each link's row sums exactly to its tx_bytes; bytes booked past the
// end a run is cut at (Network::set_end_time) count in the last interval.
// Queue series are zero (max_queue_bytes is 0 too).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/core/time.hpp"
#include "fabricsim/net/flow_paths.hpp"
#include "fabricsim/net/flow_rates.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

/// The packet model's parameters (packet and header sizes, switch latency,
/// seed, send engines; routing and buffers do not apply: the routes come
/// from the PathProvider) and the flow model's own.
struct FlowParams : NetworkParams {
  /// Count the packets' headers in the bytes on the wire.
  bool headers = true;
  /// Rate cap of every flow (Gb/s); 0: none.  set_rate_cap() overrides it
  /// per message.
  double flow_cap_gbps = 0.0;
  /// Refill every flow at every recomputation instead of only the ones a
  /// change can affect (for checks: the results must be identical).
  bool full_recompute = false;
  // NetworkParams::seed: seed of the messages' ECMP source ports (message
  // m's is 49152 + hash2(seed, m) mod 16384, as in the packet model); a
  // message's port is the key its PathProvider picks its path by.
  // NetworkParams::send_engines: flows a NIC has in flight at once; later
  // posts wait, in post order, for one of them to end (0: no limit).
};

/// Work and size counters of a flow-level run.
struct FlowModelStats {
  std::uint64_t flows_started = 0;  ///< messages that became flows
  std::uint64_t recompute_events = 0;
  std::uint64_t reschedules = 0;   ///< finish times changed by a recomputation
  std::size_t max_concurrent = 0;  ///< most flows active at once
  std::uint64_t repinned = 0;      ///< flows moved to a new route in flight (Network::pin)
  std::uint64_t rerouted = 0;      ///< flows moved off a failed link to a live route ([[failures]])
  std::uint64_t paused = 0;        ///< flows stopped by Network::pause_flows (each time)
  std::uint64_t held = 0;          ///< messages that started waiting (paused, or no live route yet)
  /// Wall-clock time spent in rate recomputations, estimated from timing
  /// one in 16 (the first, the 17th, ...) and scaling to all of them.
  double recompute_seconds = 0;
  FlowRateStats rates;
};

class FlowNetworkImpl;

class FlowNetwork : public Network {
 public:
  /// `paths` must outlive the network.  `sim` needs at least
  /// topo.node_count() entities (events are keyed by the source endpoint's
  /// node, the model's own events by node 0).
  FlowNetwork(const Topology& topo, const FlowParams& params, PathProvider& paths, core::Simulator& sim);
  ~FlowNetwork() override;

  /// Caps one message's rate (Gb/s, > 0) before it is posted.
  void set_rate_cap(MessageId id, double gbps);
  const FlowParams& flow_params() const;
  /// The current rate of a message in flight (Gb/s), 0 otherwise.
  double rate_gbps(MessageId id) const;
  const FlowModelStats& stats() const;
  /// The rate solver (read-only: rates and loads of the flows in flight).
  const FlowRates& rates() const;

 private:
  FlowNetwork(const Topology& topo, const FlowParams& params, core::Simulator& sim,
              std::unique_ptr<FlowNetworkImpl> impl);
  FlowNetworkImpl& impl_;
};

struct AnalyticParams : NetworkParams {
  /// Count the packets' headers in n (off: the alpha-beta formulas' n).
  bool headers = false;
  // NetworkParams::seed: as FlowParams'.
};

class AnalyticNetwork : public Network {
 public:
  /// `paths` must give single paths (PathSplit::Single); must outlive this.
  AnalyticNetwork(const Topology& topo, const AnalyticParams& params, PathProvider& paths, core::Simulator& sim);
  ~AnalyticNetwork() override;
};

}  // namespace fabricsim::net
