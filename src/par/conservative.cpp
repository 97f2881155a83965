#include "fabricsim/par/conservative.hpp"

#include <mpi.h>

#include <algorithm>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::par {

RecordExchange::RecordExchange(const Comm& comm, std::vector<std::int32_t> link_owner)
    : comm_(comm), link_owner_(std::move(link_owner)), out_(static_cast<std::size_t>(comm.size())) {}

void RecordExchange::post(const core::RemoteRecord& record) {
  out_[static_cast<std::size_t>(link_owner_[record.link])].push_back(record);
  earliest_sent_ = std::min(earliest_sent_, record.key.time.ps());
  ++sent_;
}

const std::vector<core::RemoteRecord>& RecordExchange::exchange(core::SimTime local_next, core::SimTime& global_next) {
  const int n = comm_.size();
  const auto un = static_cast<std::size_t>(n);
  constexpr int kBytes = static_cast<int>(sizeof(core::RemoteRecord));
  // One row per rank: the records it sends to each rank, then its next time.
  std::vector<std::int64_t> row(un + 1);
  for (std::size_t r = 0; r < un; ++r) row[r] = static_cast<std::int64_t>(out_[r].size());
  row[un] = std::min(local_next.ps(), earliest_sent_);
  earliest_sent_ = INT64_MAX;
  table_.resize(un * (un + 1));
  MPI_Allgather(row.data(), n + 1, MPI_INT64_T, table_.data(), n + 1, MPI_INT64_T, comm_.raw());
  std::int64_t next = INT64_MAX;
  std::int64_t total = 0;
  for (std::size_t r = 0; r < un; ++r) {
    next = std::min(next, table_[r * (un + 1) + un]);
    for (std::size_t c = 0; c < un; ++c) total += table_[r * (un + 1) + c];
  }
  global_next = core::SimTime::from_ps(next);
  in_.clear();
  if (total == 0) return in_;  // every rank sees the same table: all skip the exchange
  std::vector<int> send_counts(un), recv_counts(un), send_displs(un), recv_displs(un);
  send_buf_.clear();
  int recv_total = 0;
  for (std::size_t r = 0; r < un; ++r) {
    auto& v = out_[r];
    send_displs[r] = static_cast<int>(send_buf_.size()) * kBytes;
    send_counts[r] = static_cast<int>(v.size()) * kBytes;
    send_buf_.insert(send_buf_.end(), v.begin(), v.end());
    v.clear();
    recv_counts[r] = static_cast<int>(table_[r * (un + 1) + static_cast<std::size_t>(comm_.rank())]) * kBytes;
    recv_displs[r] = recv_total;
    recv_total += recv_counts[r];
  }
  in_.resize(static_cast<std::size_t>(recv_total / kBytes));
  MPI_Alltoallv(send_buf_.data(), send_counts.data(), send_displs.data(), MPI_BYTE, in_.data(), recv_counts.data(),
                recv_displs.data(), MPI_BYTE, comm_.raw());
  return in_;
}

WindowStats run_conservative(core::Simulator& sim, const Comm& comm, RecordExchange& exchange,
                             core::SimTime lookahead, core::SimTime end,
                             const std::function<void(const core::RemoteRecord&)>& deliver,
                             const std::function<void()>& after_window) {
  FABRICSIM_ASSERT(lookahead > core::SimTime::zero(), "conservative windows need a positive lookahead");
  WindowStats st;
  core::SimTime previous_end = core::SimTime::zero();
  // The first agreement; afterwards each exchange carries the next one.
  core::SimTime next = core::SimTime::from_ps(comm.allreduce_min(sim.next_event_time().ps()));
  while (next != core::SimTime::max() && next < end) {
    if (st.windows > 0 && next > previous_end) ++st.skipped_stretches;
    const core::SimTime window_end = std::min(end, next + lookahead);  // next < max, lookahead bounded
    previous_end = window_end;
    sim.run_until(window_end);
    for (const auto& r : exchange.exchange(sim.next_event_time(), next)) {
      FABRICSIM_DEBUG_ASSERT(r.key.time >= window_end, "a remote record arrived after its time");
      deliver(r);
      ++st.records_received;
    }
    ++st.windows;
    if (after_window) after_window();
  }
  st.records_sent = exchange.records_sent();
  return st;
}

}  // namespace fabricsim::par
