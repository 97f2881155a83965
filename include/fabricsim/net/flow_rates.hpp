// Max-min fair rates of flows over directed links, recomputed incrementally
// (the rate solver of the flow-level network model, issue 20).
//
// Model.  Link l has a capacity c_l > 0 (Gb/s).  Flow f has a rate x_f and
// crosses a set of links, each with a weight w_fl in (0, 1]: the share of
// the flow's rate that crosses it.  A flow on one path has weight 1 on each
// of its links; a flow split over several paths with fixed shares (packet
// spraying, adaptive routing averaged) has, on each link, the sum of the
// shares of the paths that use it (add() merges repeated links).  Flow f may
// have a cap x_f <= cap_f.  A rate vector is feasible when
// sum_f w_fl x_f <= c_l on every link; the max-min fair one is the feasible
// vector in which no rate can grow without lowering a rate that is not
// larger.  Equivalently, every flow is either at its cap or has a
// bottleneck: a saturated link on which no flow has a larger rate.
//
// Algorithm (progressive filling, "water-filling").  All unfrozen flows
// share one level t that rises from 0; link l saturates at
//     t_l = (c_l - F_l) / W_l,
// F_l the load of the flows already frozen on it, W_l the summed weight of
// its unfrozen flows.  The next event is the smallest t_l (a link saturates:
// every unfrozen flow on it freezes at t) or the smallest cap (that flow
// freezes at its cap).  The links come up in (t_l, link id) order, so no
// step rescans the links, and the keys are lazy: freezing a flow can only
// raise t_l (exactly, (c - F - w x) / (W - w) >= t when x <= t), so a key
// is a lower bound; a link whose t_l has risen by the time it comes up is
// queued again at its t_l, and a freeze costs no queue work.  The queue is
// the links sorted once by their first t_l, plus an indexed binary heap for
// the links queued again (few: a sort is cheaper than as many heap pops).
//
// Incremental recomputation, in two cuts.
// 1. Components.  The problem splits into independent problems, one per
//    connected component of the bipartite flow-link graph.  add(), remove()
//    and set_cap() only mark the flow's links dirty; recompute() collects
//    what is connected to the dirty links (breadth-first over link -> flows
//    -> links) and refills only that.  Several changes at one simulated
//    instant are one call, so one refill of the union.
// 2. Restart level.  Progressive filling is the same below the first level
//    at which a change can matter, so every flow whose rate is below it
//    keeps its rate and stays frozen (its load is fixed), and only the
//    other flows are refilled, from there; the breadth-first search does
//    not pass through kept flows either, so flows linked to the change only
//    through kept flows are not touched.  The level is the smallest of: the
//    old rate of a removed flow (its links saturated at or above it), the
//    old rate or new cap of a flow whose cap changed, and, for each link of
//    an added flow, the lowest level at which that link can now saturate
//    (computed from the old rates on it, sorted), less a relative 1e-9.
// On a fabric where every flow shares a core link with every other and all
// rates are alike (uniform traffic on a fat tree), both cuts save little
// and the cost approaches that of a full refill; jobs on disjoint parts of
// a fabric, or a change at a high level, cost a small part of it
// (bench_flow_rates measures both).
//
// Complexity of one recompute(), over the F flows refilled, the L links
// they cross and I = sum of those links' flow counts: O(I x (1 + R/L) +
// L log L + R log R + K log K + A) time, R the links queued again (lazy keys,
// FlowRateStats::links_requeued), K the capped flows refilled (sorted
// once) and A = sum over the added flows' links of d log d (the restart
// bound, d the flows on the link); no allocation in steady state (the
// scratch arrays are reused).  add() and remove() cost O(d log d + sum over
// the flow's d links of their flow counts) (per-link lists sorted by id).
//
// Determinism and exactness.  A link's t_l is evaluated by summing its
// flow list (sorted by flow id) every time, from the set of frozen flows
// and their rates, never accumulated in the order flows froze; events are
// ordered by (level, kind, id).  So the floating-point result depends only
// on the flows, their ids, links, weights and caps, not on the order of
// earlier adds and removes, on the restart level or on other components:
// an incremental recompute() gives bit for bit the rates a recompute_all()
// from scratch gives (tested).  Rounding can make a link's t_l a few ulps
// smaller than its key when it is popped; it then saturates at its key (the
// level never falls).  No other epsilon is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

/// A flow's id, chosen by the caller (dense ids keep the arrays small: they
/// are sized to the largest id used).
using FlowId = std::uint32_t;

/// One link a flow crosses and the share of the flow's rate that crosses it.
struct FlowLink {
  LinkId link = kNoLink;
  double weight = 1.0;
  friend bool operator==(const FlowLink&, const FlowLink&) = default;
};

inline constexpr double kNoRateCap = std::numeric_limits<double>::infinity();

/// Work counters of a FlowRates.
struct FlowRateStats {
  std::uint64_t recomputations = 0;   ///< recompute() calls that found something to do
  std::uint64_t flows_touched = 0;    ///< flows refilled, summed over recomputations
  std::uint64_t links_touched = 0;    ///< links refilled, summed over recomputations
  std::uint64_t rates_changed = 0;    ///< flows reported as changed, summed
  std::uint64_t links_requeued = 0;   ///< popped links whose level had risen (lazy keys)
  std::size_t largest_component = 0;  ///< most flows refilled by one recompute()
};

class FlowRatesImpl;

class FlowRates {
 public:
  /// One capacity per link (Gb/s, each > 0), indexed by LinkId.
  explicit FlowRates(std::vector<double> capacity_gbps);
  /// The capacities of a topology's links (Link::bandwidth_gbps).
  static std::vector<double> capacities(const Topology& topo);
  ~FlowRates();
  FlowRates(FlowRates&&) noexcept;
  FlowRates& operator=(FlowRates&&) noexcept;
  FlowRates(const FlowRates&) = delete;
  FlowRates& operator=(const FlowRates&) = delete;

  /// Starts flow `id` (not active) over `links` (weights in (0, 1]; a
  /// link given twice is one entry with the summed weight, at most 1 + 1e-9),
  /// capped at `cap_gbps` (> 0; kNoRateCap for none).  Its rate is 0 until
  /// the next recompute().  A flow over no links gets its cap (which may be
  /// infinite).
  void add(FlowId id, std::span<const FlowLink> links, double cap_gbps = kNoRateCap);
  /// Ends an active flow.
  void remove(FlowId id);
  /// Changes an active flow's cap (takes effect at the next recompute()).
  void set_cap(FlowId id, double cap_gbps);

  /// Refills the components touched since the last call.  Returns the flows
  /// whose rate differs (in any bit) from the rate they had, flows added
  /// since the last call included, removed ones not: the only flows whose
  /// completion an event-driven caller must reschedule.  The span is valid
  /// until the next call of a non-const member.
  std::span<const FlowId> recompute();
  /// The same for every active flow, as if from scratch (for tests and
  /// checks; gives the same rates as recompute()).
  std::span<const FlowId> recompute_all();

  bool active(FlowId id) const;
  /// The rate of an active flow (Gb/s) as of the last recompute().
  double rate(FlowId id) const;
  double cap(FlowId id) const;
  /// The links of a flow, ascending by link id, weights merged (an ended
  /// flow's stay readable until its id is added again).
  std::span<const FlowLink> links(FlowId id) const;
  /// Active flows on link l.
  std::size_t flows_on(LinkId l) const;
  /// Load of link l at the current rates: sum of weight x rate (Gb/s).
  double load(LinkId l) const;
  double capacity(LinkId l) const;
  std::size_t link_count() const;
  std::size_t active_count() const;
  /// Whether add() or remove() happened since the last recompute().
  bool dirty() const;
  const FlowRateStats& stats() const;

 private:
  std::unique_ptr<FlowRatesImpl> impl_;
};

}  // namespace fabricsim::net
