// Conservative window synchronization over MPI.
//
// Every rank simulates its part of the model with its own core::Simulator.
// Events that cross ranks travel as fixed-size core::RemoteRecords over
// links whose latency is at least the lookahead L (the smallest latency of a
// link between parts).  Each window, every rank learns the earliest pending
// event e_s of every rank (an allgather; records received are in the queues
// by then), processes its local events before its own horizon
//   H_r = min over ranks s != r of (e_s + d(s, r) L),
// d being the hop distance between the parts (each hop between ranks takes a
// record and at least L), then exchanges the records posted during the
// window with its neighbours.  A rank's own next event does not enter H_r:
// its activity reaches it back only through a record it posts, so posting a
// record timed t lowers its horizon to t + L for the rest of the window (the
// earliest a reply can come; t >= now + L, so that is still ahead).  A rank
// whose activity stays inside its part thus runs ahead until another rank
// could reach it; with one shared horizon (min over all e_s, + L) such a
// rank crawled in steps of L while the others idled (gpt3 on the Hx2Mesh:
// 17.5 M windows of 7 events).  Where H_r < first + 2L (first: the earliest
// event anywhere), the rank keeps to the shared window [first, first + L)
// instead, so busy ranks work on the same stretch of time together rather
// than taking turns.  The run ends when no rank has an event left.
//
// Global steps (issue 28, item 6): a decision for the whole fabric at one
// simulated time t (a controller re-planning paths, a scheduler admitting a
// job, an optical switch rewiring).  Any rank may request one from an event
// at time tau, for t >= tau + D with D >= d_max L (d_max: the largest hop
// distance between ranks; min_step_delay()).  The invariant: when the
// request is gathered at the end of that window, no rank has processed an
// event at or after t.  The requester stops at t itself; any other rank r
// had the horizon H_r <= e_s + d(s, r) L <= tau + d_max L <= t, e_s <= tau
// being the requester's earliest event when the window opened (ranks that
// no record path connects are capped at first + d_max L while steps are
// enabled).  From then on every rank's horizon is capped at t; once no
// event before t is left anywhere, every rank contributes what it holds
// (GlobalSteps::contribute), all contributions are gathered, and every rank
// applies the same decision (GlobalSteps::apply: a pure function of the
// contributions, taken in a canonical order, never rank order) to its own
// nodes.  On one rank it is the same step at the same t, so results do not
// depend on the rank count.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "fabricsim/core/link.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/par/comm.hpp"

namespace fabricsim::par {

/// Collects outgoing records per destination rank and exchanges them.
class RecordExchange : public core::RemoteSink {
 public:
  /// `link_owner[l]` is the rank that receives records of link l;
  /// `neighbours` the ranks this one shares a link with (records only ever
  /// go to, and come from, them).
  RecordExchange(const Comm& comm, std::vector<std::int32_t> link_owner, std::vector<std::int32_t> neighbours);
  void post(const core::RemoteRecord& record) override;
  /// The window's horizon in ps; post() lowers it to record time + lookahead
  /// and stops `sim` (so the window goes on with the lower horizon).
  void open_window(std::int64_t horizon, std::int64_t lookahead, core::Simulator* sim) {
    horizon_ = horizon;
    lookahead_ = lookahead;
    sim_ = sim;
  }
  std::int64_t horizon() const { return horizon_; }

  /// Requests a global step at time `at` (see the header comment): from an
  /// event, `at` >= now + min_step_delay(); from GlobalSteps::apply, `at` >=
  /// the step's time.  This rank processes nothing at or after `at` before
  /// the step.  Throws util::UserError for a time too early.
  void request_step(core::SimTime at);
  /// The smallest delay a request from an event must keep (d_max L; set by
  /// run_conservative, 0 on one rank).
  core::SimTime min_step_delay() const { return core::SimTime::from_ps(min_step_delay_); }
  /// (run_conservative) The earliest request not yet served, INT64_MAX if none.
  std::int64_t pending_step() const { return steps_.empty() ? INT64_MAX : steps_.top(); }
  /// (run_conservative) The step at `t` serves every request up to t.
  void served_step(std::int64_t t) {
    while (!steps_.empty() && steps_.top() <= t) steps_.pop();
  }
  void set_min_step_delay(std::int64_t ps) { min_step_delay_ = ps; }
  /// (run_conservative) While a step at `t` is applied (INT64_MIN otherwise).
  void set_step_time(std::int64_t t) { step_time_ = t; }
  void set_clock(const core::Simulator* sim) { clock_ = sim; }
  /// Sends what was posted to each neighbour (one message per neighbour and
  /// window, possibly empty) and returns what the neighbours posted to us.
  const std::vector<core::RemoteRecord>& exchange();
  std::uint64_t records_sent() const { return sent_; }

 private:
  const Comm& comm_;
  std::vector<std::int32_t> link_owner_;
  std::vector<std::vector<core::RemoteRecord>> out_;
  std::vector<core::RemoteRecord> in_;
  std::vector<std::int32_t> neighbours_;
  std::vector<MPI_Request> requests_;
  std::int64_t horizon_ = INT64_MAX;
  std::int64_t lookahead_ = 0;
  core::Simulator* sim_ = nullptr;
  std::uint64_t sent_ = 0;
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> steps_;
  std::int64_t min_step_delay_ = 0;
  std::int64_t step_time_ = INT64_MIN;
  const core::Simulator* clock_ = nullptr;
};

/// What a run with global steps decides at them (see the header comment).
class GlobalSteps {
 public:
  virtual ~GlobalSteps() = default;
  /// The delay kept by a request from an event (the configured control
  /// latency): at least min_step_delay() (checked; run_conservative throws
  /// util::UserError otherwise).  Zero: the bound itself.  Ranks that no
  /// record path connects are kept within it of each other.
  virtual core::SimTime delay() const { return core::SimTime::zero(); }
  /// Before the first window, on every rank: request the steps known up
  /// front (a cluster queue's arrivals) through `requests`, and keep it for
  /// requests from events.
  virtual void start(RecordExchange& requests) { (void)requests; }
  /// This rank's part of the state the decision at `t` needs (opaque values).
  virtual std::vector<std::int64_t> contribute(core::SimTime t) = 0;
  /// Every rank's contribution, rank after rank (`counts[s]` values of rank
  /// s): compute the decision from them in a canonical order that does not
  /// depend on which rank held what, and apply it to this rank's nodes.
  virtual void apply(core::SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) = 0;
};

struct WindowStats {
  std::uint64_t windows = 0;
  /// Windows whose earliest event (over all ranks) lay past the previous
  /// window's earliest event + L: the time in between held no event on any
  /// rank and was skipped.
  std::uint64_t skipped_stretches = 0;
  std::uint64_t records_received = 0;
  /// Sum over windows of the most events any rank processed in it: the
  /// run's critical path in events.  events / (ranks x this) is the share of
  /// the ranks' time spent on events rather than waiting for the slowest.
  std::uint64_t critical_events = 0;
  std::uint64_t records_sent = 0;
  std::uint64_t global_steps = 0;
};

/// Hop distances from rank `to` to every rank over the graph of ranks that
/// share a link (`edges`: pairs of ranks, either order); -1 where none leads.
std::vector<std::int32_t> rank_distances(int ranks, const std::vector<std::pair<std::int32_t, std::int32_t>>& edges,
                                         std::int32_t to);

/// The smallest delay of a global step request: the largest finite hop
/// distance of `distance` (at least 1 with several ranks) times the lookahead.
core::SimTime min_step_delay(const std::vector<std::int32_t>& distance, core::SimTime lookahead);

/// Runs `sim` to completion (or to `end`) in conservative windows.
/// `distance[s]` is rank_distances(..., this rank)[s].
/// `deliver` hands each received record to the model; `after_window` is
/// called on every rank after each window (progress reporting).
/// An exception on any rank (from an event, `deliver` or `after_window`)
/// reaches every rank at the end of that window as the same
/// util::SharedError (the lowest failing rank's message, naming the rank,
/// and the highest exit code), so all ranks unwind and exit together.
/// `steps`: global steps requested through exchange.request_step() (none if
/// null; the same object on every rank).  The distances of every rank must
/// be the same graph's (rank_distances), so that every rank computes the
/// same min_step_delay.
WindowStats run_conservative(core::Simulator& sim, const Comm& comm, RecordExchange& exchange,
                             const std::vector<std::int32_t>& distance, core::SimTime lookahead, core::SimTime end,
                             const std::function<void(const core::RemoteRecord&)>& deliver,
                             const std::function<void()>& after_window = {}, GlobalSteps* steps = nullptr);

}  // namespace fabricsim::par
