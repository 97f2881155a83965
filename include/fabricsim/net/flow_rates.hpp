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
// freezes at its cap).  Events are ordered by (level, kind: link before
// cap, link or flow id).  The keys are lazy: freezing a flow can only raise
// t_l (exactly, (c - F - w x) / (W - w) >= t when x <= t), so a key is a
// lower bound; a link whose t_l has risen by the time it comes up is
// queued again at its t_l, otherwise it saturates at its key.  The queues
// are binary heaps (links by key, capped flows by cap).
//
// Incremental recomputation, along the bottleneck structure.  Each flow
// remembers the event that froze it (its bottleneck link, or its cap); with
// its rate that is its position in the event order.  A change reaches other
// flows only through the links whose state it changes, and those only
// through the flows they freeze, so recompute() simulates the fill only on
// "dirty" links and lets every other flow freeze, implicitly, at the same
// event and rate as last time:
// - Start.  The fill restarts at a level below which nothing can change:
//   the smallest of the old rate of a removed flow, the old rate or new
//   cap of a flow whose cap changed, and, for each link of an added flow,
//   the lowest level at which that link can now saturate (computed from the
//   old rates on it, sorted), less a relative 1e-9.  Every flow frozen
//   before it keeps its rate.  The links of added, removed and recapped
//   flows are dirty; added and recapped flows are refilled.
// - A flow is refilled (its freeze simulated) when it is added or recapped,
//   when a dirty link froze it last time (its saturation is not known to
//   repeat: "claimed" when the link is first popped, or at the start for a
//   link whose flows changed), or when a dirty link saturates while it is
//   unfrozen.  A refilled flow makes its links dirty.
// - A flow that is not refilled freezes at its old event: that event's link
//   is clean up to there (no refilled flow on it), so it saturates as it
//   did.  Evaluating a dirty link therefore reads, per flow, either its
//   simulated state or whether its old position comes before the link's.
// - Keys.  A link made dirty in mid-fill gets the key a fill from zero
//   would have for it then: the lazy key's value depends on when it was
//   computed (when flows froze at exactly that level since, rounding can
//   leave the new evaluation a few ulps below the key, and the link
//   saturates at the key), so the key is replayed from the first one
//   (every flow unfrozen: c / summed weight, kept per link) through each
//   pop a fill from zero made before the current position.
// - Pruning.  A popped link with no refilled flow unfrozen on it, whose
//   other unfrozen flows (at its last evaluation) all froze last time below
//   its key, has none left and is skipped without a pass; one in that state
//   when it would be queued again is parked, and queued again (replayed)
//   only if a flow on it is refilled later.  A link made dirty in mid-fill
//   that froze no flow last time and carries under 95% of its capacity at
//   the current rates is deferred: not simulated, on the assumption that
//   it stays unsaturated (a link never saturated changes no rate).  At the
//   end every deferred link must be below its capacity by a relative 1e-9
//   (far above rounding: such a link never saturates in a fill) and every
//   refilled flow frozen; else the fill is undone (rates, events, reports
//   restored) and done again with every dirty link simulated (~1.5% of
//   changes at 10k flows, ~10% at 1k).
// Jobs on disjoint parts of a fabric, and changes that move few rates,
// touch few flows and links (1k random flows on the 1k fat tree: ~10 flows
// refilled per change, ~7 of which change rate, where the component above
// the restart level held ~635).  With many flows per link, though, a change
// genuinely moves many rates: at 10k random flows on that tree one start
// and one end move ~2,500 rates (by 1e-1 to 1e-12 relative; bit changes
// propagate the same way), and those are refilled; bench_flow_rates
// measures these cases.
//
// Complexity of one recompute(): O(sum over the pops and replay steps of
// the dirty links of their flow counts + P log P + A), P the pops (links
// queued again: FlowRateStats::links_requeued) and A = sum over the added
// flows' links of d log d (the restart bound, d the flows on the link); the
// flows refilled and the links made dirty each cost O(their links) more
// (a deferred link O(its flow count), twice); an undone fill is done
// twice.
// No allocation in steady state (the scratch arrays are reused).  add() and
// remove() cost O(d log d + sum over the flow's d links of their flow
// counts) (per-link lists sorted by id, and their summed weights).
//
// Determinism and exactness.  A link's t_l is evaluated by summing its
// flow list (sorted by flow id) every time, from the set of frozen flows
// and their rates, never accumulated in the order flows froze; events are
// ordered by (level, kind, id), and a dirty link's key is the one a fill
// from zero has.  So the floating-point result depends only on the flows,
// their ids, links, weights and caps, not on the order of earlier adds and
// removes, on the restart level, on which links were dirty or on other
// components: an incremental recompute() gives bit for bit the rates a
// recompute_all() from scratch gives (tested, also against fills from zero
// on the fat tree).  Rounding can make a link's t_l a few ulps smaller
// than its key when it is popped; it then saturates at its key (the level
// never falls).  No other epsilon is used.
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
  std::uint64_t links_touched = 0;    ///< links made dirty (simulated), summed over recomputations
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
