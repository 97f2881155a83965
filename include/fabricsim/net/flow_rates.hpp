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
// freezes at its cap).  Freezing a flow updates F_l and W_l of each of its
// links.  The links wait in an indexed binary heap keyed by (t_l, link id),
// so no step rescans the links, and the keys are lazy: freezing a flow can
// only raise t_l (exactly, (c - F - w x) / (W - w) >= t_l when x <= t_l),
// so a key in the heap is a lower bound; a popped link whose t_l has risen
// is queued again at its t_l, and a freeze costs no heap work.
//
// Incremental recomputation.  The max-min problem splits into independent
// problems, one per connected component of the bipartite flow-link graph
// (flows that share links, transitively).  add() and remove() only mark the
// links of the flow as dirty; recompute() collects the components of the
// dirty links (breadth-first over link -> flows -> links) and refills only
// those.  Several changes at the same simulated time are one call, and so
// one recomputation of the union of their components.  (On a fabric with
// few flows, or jobs on disjoint parts of it, a component is a small part of
// all flows; when every flow shares a core link with every other, it is all
// of them, and the cost is that of a full recomputation.)
//
// Complexity of one recompute(), over the component(s) recomputed with F
// flows, L links and I = sum over its flows of their link counts:
// O(I + (L + R) log L + K log K) time, R <= I the links queued again
// (FlowRateStats::links_requeued) and K the capped flows (sorted once), and
// no allocation in steady state (the scratch arrays are reused).  add() and
// remove() cost O(d log d + sum over the flow's d links of their flow
// counts) (the per-link lists are kept sorted by flow id).
//
// Determinism and exactness.  The per-link flow lists are sorted by flow id
// and events are ordered by (level, kind, id), so the floating-point
// operations of a component depend only on its flows, their ids, links,
// weights and caps, not on the order of earlier adds and removes or on other
// components: an incremental recompute() gives bit for bit the rates a
// recompute_all() from scratch gives.  Rounding can make a link's t_l a few
// ulps smaller than its key when it is popped; it then saturates at its key
// (the level never falls).  No other epsilon is used.
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
  std::uint64_t recomputations = 0;  ///< recompute() calls that found something to do
  std::uint64_t flows_touched = 0;   ///< flows refilled, summed over recomputations
  std::uint64_t links_touched = 0;   ///< links refilled, summed over recomputations
  std::uint64_t rates_changed = 0;   ///< flows reported as changed, summed
  std::uint64_t links_requeued = 0;  ///< popped links whose level had risen (lazy keys)
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
