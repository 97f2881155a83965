// Conservative window synchronization over MPI.
//
// Every rank simulates its part of the model with its own core::Simulator.
// Events that cross ranks travel as fixed-size core::RemoteRecords over
// links whose latency is at least the lookahead L (the smallest latency of a
// link between parts).  Each window: agree on the earliest pending event t
// over all ranks (allreduce-min, so empty stretches of time are skipped),
// process every local event before t + L, then exchange the records posted
// during the window.  A record sent in the window arrives at t + L or later,
// so it is in its receiver's queue before its time comes.  The run ends
// when no rank has an event left and no record is in transit.
#pragma once

#include <cstdint>
#include <functional>
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
  /// Collective: sends what was posted to each neighbour (one message per
  /// neighbour and window, possibly empty), returns what the neighbours
  /// posted to us, and sets `global_next` to the earliest event time over all
  /// ranks after the exchange: an allreduce-min of min(each rank's
  /// `local_next`, the earliest record it sent).
  const std::vector<core::RemoteRecord>& exchange(core::SimTime local_next, core::SimTime& global_next);
  std::uint64_t records_sent() const { return sent_; }

 private:
  const Comm& comm_;
  std::vector<std::int32_t> link_owner_;
  std::vector<std::vector<core::RemoteRecord>> out_;
  std::vector<core::RemoteRecord> in_;
  std::vector<core::RemoteRecord> send_buf_;
  std::vector<std::int32_t> neighbours_;
  std::vector<MPI_Request> requests_;
  std::vector<core::RemoteRecord> scratch_;
  std::int64_t earliest_sent_ = INT64_MAX;
  std::uint64_t sent_ = 0;
};

struct WindowStats {
  std::uint64_t windows = 0;
  /// Windows that started past the end of the previous one: the time in
  /// between held no event on any rank and was skipped.
  std::uint64_t skipped_stretches = 0;
  std::uint64_t records_received = 0;
  std::uint64_t records_sent = 0;
};

/// Runs `sim` to completion (or to `end`) in conservative windows.
/// `deliver` hands each received record to the model; `after_window` is
/// called on every rank after each window (progress reporting).
WindowStats run_conservative(core::Simulator& sim, const Comm& comm, RecordExchange& exchange,
                             core::SimTime lookahead, core::SimTime end,
                             const std::function<void(const core::RemoteRecord&)>& deliver,
                             const std::function<void()>& after_window = {});

}  // namespace fabricsim::par
