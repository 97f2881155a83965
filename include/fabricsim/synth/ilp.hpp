// TACOS-ILP and the TACCL-like baseline (tacos spec sections 3 and 4) for
// small instances, on COIN-OR CBC (private to the synth layer).
//
// Pipeline (spec 4.1): discretise every link into k_e = ceil(cost / f) >= 1
// timesteps (the time-expanded network, TEN), solve the spec's complete
// formulation (4.2) on TEN_T, searching t_f = T upward from a lower bound,
// then translate the step schedule back to continuous time.
//
// Readings beyond the spec:
//  * the t_f search starts at a lower bound on any schedule rather than at
//    the TEN diameter (spec 4.2), which a Gather to a central NPU need not
//    reach and congestion can exceed: the largest shortest path (in steps)
//    from the nearest holder of a chunk to an NPU wanting it and, with
//    congestion, the steps an NPU's in-links need to carry the chunks it
//    lacks (floor(T / k_e) chunks per link by T) and its out-links the
//    chunks only it holds;
//  * variables that are zero in every solution are left out of the model (a
//    chunk cannot be at an NPU before its shortest path from a holder, a send
//    into an NPU that already holds the chunk at step 0, or into a relay too
//    late to reach any NPU that wants the chunk by T, changes nothing);
//  * time_limit_s is the budget of the whole call (all CBC solves together);
//    when it runs out (spec 4.3) an incumbent is taken as is, and the pairs
//    it leaves open (time clustering) get shortest paths appended from the
//    last state; with no incumbent at all the schedule is shortest paths from
//    the precondition.  These shortest paths are earliest-arrival paths in
//    the TEN around the links that pairs routed before (farthest first)
//    reserved, so they add no congestion; from the precondition they also
//    bound the t_f search and are CBC's first incumbent once they fit in T;
//  * the time-domain translator processes the step sends in (step, link)
//    order, each starting as soon as its chunk is at the source and its link
//    is free, so the result always passes check(): a TACCL-like schedule's
//    congestion shows as serialisation.  Before that, every (chunk, NPU) is
//    kept received once (the earliest arrival in steps) and sends into relays
//    that never forward the chunk are dropped: reductions reverse these
//    schedules into in-trees.  With congestion, a send at step s starts by
//    s * f in continuous time, so the finish is at most steps * f.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {

/// The discretisation of a graph's links (spec 3.2).
struct TimeExpanded {
  double step_ns = 0.0;              ///< f
  std::vector<std::uint32_t> steps;  ///< per link: k_e = ceil(link_time_ns / f) >= 1
  /// The largest shortest path (in steps) between two live NPUs, over the
  /// pairs where one reaches the other; 0 without links.
  std::uint32_t diameter_steps = 0;
};

/// ceil(cost_ns / step_ns) with a relative tolerance (1e-9), so that a cost
/// of exactly k steps gives k despite rounding, and at least 1.  Throws
/// std::invalid_argument for a step that is not positive or a link of over
/// a million steps.
std::uint32_t link_steps(double cost_ns, double step_ns);

/// The TEN of g for chunks of chunk_bytes.  step_ns = 0: the smallest
/// positive link cost (the fastest link takes one step; 1 ns if every link
/// costs 0).  Throws std::invalid_argument for an invalid graph or a
/// negative step.
TimeExpanded time_expanded(const NpuGraph& g, std::uint64_t chunk_bytes, double step_ns = 0.0);

struct IlpOptions {
  /// false: the TACCL-like baseline, the same ILP without the congestion
  /// constraint (spec 7).
  bool congestion = true;
  /// The discretisation factor f; 0: the smallest link cost.
  double step_ns = 0.0;
  /// Budget of the whole call in seconds, shared by its CBC solves (wall
  /// clock); 0: none.
  double time_limit_s = 60.0;
  /// Time clustering (spec 4.4): solve windows of window_steps steps (0: the
  /// TEN diameter), each maximising arrivals, until the postcondition holds.
  /// A window without a new arrival is retried twice as long.
  bool clustering = false;
  std::uint32_t window_steps = 0;
  /// A model with more variables is refused with std::invalid_argument.
  std::uint64_t max_variables = 200000;
  /// Bound of the t_f search; 0: the makespan of the shortest-path schedule
  /// (feasible, so the search always ends).  When every T up to the bound is
  /// infeasible the result is that schedule (status says so).
  std::uint32_t max_steps = 0;
};

struct IlpResult {
  Schedule schedule;  ///< continuous time; passes check(g, c, schedule)
  /// The step schedule's makespan: the last step at which a postcondition
  /// pair starts to hold (t_f of the solved ILP without clustering).
  std::uint32_t steps = 0;
  /// Proven optimal: every smaller t_f proven infeasible and the last ILP
  /// solved to optimality (never with clustering or a fallback).
  bool optimal = false;
  /// The time limit cut a solve short (spec 4.3).
  bool early_terminated = false;
  /// Time-clustering windows solved (1 without clustering, 0 when no ILP was
  /// solved to a schedule).
  std::uint32_t windows = 0;
  double solve_seconds = 0.0;  ///< wall time of the whole call
  std::string status;          ///< how the schedule was obtained, in words
};

/// TACOS-ILP (or TACCL-like).  Throws std::invalid_argument as greedy() does
/// (invalid graph or collective, a postcondition pair unreachable from every
/// holder of its chunk), for a negative step or time limit, and for a model
/// over opt.max_variables (the message names the count and the limit).
IlpResult ilp(const NpuGraph& g, const Collective& c, const IlpOptions& opt = {});

}  // namespace fabricsim::synth
