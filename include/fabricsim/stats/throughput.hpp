// How much of the injection bandwidth a traffic run got, three ways
// (docs/model.md, "Throughput of a traffic run: which number"): over the
// makespan, per source, and in the steady state while every source still
// sends.  Pure functions over per-source spans, so that a partitioned run
// combines its ranks' parts first (app/run.cpp) and tests can feed them.
#pragma once

#include <cstdint>
#include <vector>

#include "fabricsim/net/network.hpp"

namespace fabricsim::stats {

/// One source's traffic: its first post, the last completion of its
/// messages, its payload and its injection bandwidth (all its links).
struct SourceSpan {
  std::int64_t first_post_ps = INT64_MAX;  ///< INT64_MAX: the source sent nothing
  std::int64_t last_end_ps = -1;           ///< -1: none of its messages completed
  std::uint64_t payload_bytes = 0;
  std::uint32_t messages = 0;
  double injection_gbps = 0;
};

/// The steady share counts whole messages completed in its window, so it
/// needs several messages per source (an alltoall's rounds); with fewer it
/// is not reported (NaN).
inline constexpr std::uint32_t kSteadyMinMessages = 4;

struct ThroughputShares {
  /// All payload delivered / (last completion - first post) / the summed
  /// injection of every endpoint (what /summary and the run summary always printed).
  double makespan = 0;
  /// Mean over the sources that sent and finished of: payload / (its own
  /// last completion - its own first post) / its injection.  A tail of slow
  /// sources lowers `makespan` but barely this.
  double per_source = 0;
  /// Payload of the messages completed inside the steady window / its
  /// length / the summed injection of the sources: the rate while every
  /// source is still sending.  NaN when the window is empty or a source
  /// sent fewer than kSteadyMinMessages messages.
  double steady = 0;
  /// The steady window: from 10% into [first post, first source done] to
  /// the first source done (its last completion).
  std::int64_t steady_from_ps = 0;
  std::int64_t steady_to_ps = 0;
};

/// The steady window of these sources (see ThroughputShares); from >= to if empty.
void steady_window(const std::vector<SourceSpan>& sources, std::int64_t& from_ps, std::int64_t& to_ps);

/// The per-source spans of `messages` as far as this process knows them:
/// posts and payloads of all, completions only of the messages whose
/// destination `owned` (a partitioned run then takes the maximum of
/// last_end_ps over processes).
std::vector<SourceSpan> source_spans(const net::Topology& topo, const net::Network& network,
                                     const std::vector<std::uint8_t>& owned_endpoint);

/// Payload of the messages completed in [from_ps, to_ps] among those whose
/// destination is owned (summed over processes by the caller).
std::uint64_t completed_between(const net::Network& network,
                                const std::vector<std::uint8_t>& owned_endpoint, std::int64_t from_ps,
                                std::int64_t to_ps);

/// The three shares from the combined spans, the payload delivered in
/// total, and the payload completed in the steady window.
ThroughputShares throughput_shares(const std::vector<SourceSpan>& sources, std::uint64_t delivered_bytes,
                                   std::uint64_t steady_bytes, double total_injection_gbps);

}  // namespace fabricsim::stats
