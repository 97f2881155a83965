// Synthetic traffic patterns.  All messages are generated up front from
// per-purpose random streams keyed by the seed, so the traffic of a run does
// not depend on anything but its configuration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"

namespace fabricsim::workload {

enum class Pattern : std::uint8_t { Permutation, Uniform, Alltoall, Incast, Bisection, Ring };
Pattern parse_pattern(const std::string& name);

/// Which shift rounds an alltoall of fewer than p - 1 rounds runs
/// (workload.alltoall_sample): spread evenly over the p - 1 shifts at an odd
/// stride, the almost-local shift 1 left out (Spread) or taken as the first
/// round (SpreadLocal); or the first rounds 1 ... R, the most local ones (First).
enum class AlltoallSample : std::uint8_t { Spread, SpreadLocal, First };

/// The shifts of an alltoall sample of `rounds` rounds (0, or p - 1 and
/// more: every shift 1 ... p - 1) among `endpoints` = p, in the order they
/// run.  Spread: stride d = floor((p - 1) / R), made odd (d - 1 if even);
/// the R shifts 1 + o + k d, k = 0 ... R - 1, centred in 1 ... p - 1
/// (o = floor((p - 1 - (R - 1) d - 1) / 2)), or from 1 (SpreadLocal, o = 0).
std::vector<std::uint32_t> alltoall_shifts(std::uint32_t endpoints, std::uint32_t rounds, AlltoallSample sample);

struct TrafficParams {
  Pattern pattern = Pattern::Permutation;
  std::uint64_t message_bytes = 262144;
  std::uint32_t messages = 1;  ///< per source (alltoall: rounds, 0 = p-1)
  AlltoallSample alltoall_sample = AlltoallSample::Spread;
  core::SimTime start;
  double load = 1.0;
  std::uint32_t incast_sources = 0;  ///< 0 = every other endpoint
  std::uint32_t incast_target = 0;
  std::uint64_t seed = 1;
};

struct PlannedMessage {
  net::EndpointId src;
  net::EndpointId dst;
  std::uint64_t bytes;
  core::SimTime post;
};

/// The messages a pattern generates for `endpoints` endpoints, in the order
/// they will be posted (sorted by source, then post time).  `message_time[s]`
/// is the time one message takes at source s's injection rate (the sum of
/// its injection links: an endpoint with four ports is paced four times as
/// fast as one with one); with load L the k-th message of a source is
/// posted at start + k * message_time[s] / L.
std::vector<PlannedMessage> plan_traffic(const TrafficParams& params, std::uint32_t endpoints,
                                         const std::vector<core::SimTime>& message_time);
/// The same with one message time for every source.
std::vector<PlannedMessage> plan_traffic(const TrafficParams& params, std::uint32_t endpoints,
                                         core::SimTime message_time);
/// Per endpoint of `topo`: the time a message of params.message_bytes (with
/// its headers) takes at the endpoint's injection bandwidth
/// (Topology::injection_gbps).
std::vector<core::SimTime> injection_times(const TrafficParams& params, const net::Topology& topo,
                                           const net::NetworkParams& np);

/// How many messages plan_traffic returns, without planning them (what
/// the memory estimate needs before anything is built).
std::uint64_t count_traffic(const TrafficParams& params, std::uint32_t endpoints);

/// Bytes a message of `payload` bytes puts on the wire (headers included).
std::uint64_t wire_bytes(std::uint64_t payload, const net::NetworkParams& np);

/// The messages a traffic configuration posts on `topo` (what a run's
/// TrafficWorkload sends), for tools that need them without simulating.
std::vector<PlannedMessage> plan_traffic(const TrafficParams& params, const net::Topology& topo,
                                         const net::NetworkParams& np);

/// A seeded random permutation without fixed points (a derangement).
std::vector<std::uint32_t> random_derangement(std::uint32_t n, std::uint64_t seed);

/// Posts the planned messages on a network and tracks their completion.
class TrafficWorkload : public net::MessageListener {
 public:
  TrafficWorkload(net::Network& network, const TrafficParams& params);
  void on_message_delivered(net::MessageId id) override;
  std::uint64_t messages_total() const { return total_; }
  std::uint64_t messages_done() const { return done_; }
  bool done() const { return done_ == total_; }
  /// Time one message takes at the injection rate of endpoint 0 (all its
  /// injection links together).
  core::SimTime message_time() const { return message_time_; }

 private:
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;
  core::SimTime message_time_;
};

}  // namespace fabricsim::workload
