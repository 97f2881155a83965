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
#pragma once

#include <cstdint>
#include <functional>
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
};

/// Hop distances from rank `to` to every rank over the graph of ranks that
/// share a link (`edges`: pairs of ranks, either order); -1 where none leads.
std::vector<std::int32_t> rank_distances(int ranks, const std::vector<std::pair<std::int32_t, std::int32_t>>& edges,
                                         std::int32_t to);

/// Runs `sim` to completion (or to `end`) in conservative windows.
/// `distance[s]` is rank_distances(..., this rank)[s].
/// `deliver` hands each received record to the model; `after_window` is
/// called on every rank after each window (progress reporting).
/// An exception on any rank (from an event, `deliver` or `after_window`)
/// reaches every rank at the end of that window as the same
/// util::SharedError (the lowest failing rank's message, naming the rank,
/// and the highest exit code), so all ranks unwind and exit together.
WindowStats run_conservative(core::Simulator& sim, const Comm& comm, RecordExchange& exchange,
                             const std::vector<std::int32_t>& distance, core::SimTime lookahead, core::SimTime end,
                             const std::function<void(const core::RemoteRecord&)>& deliver,
                             const std::function<void()>& after_window = {});

}  // namespace fabricsim::par
