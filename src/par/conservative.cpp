#include "fabricsim/par/conservative.hpp"

#include <mpi.h>

#include <algorithm>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::par {

RecordExchange::RecordExchange(const Comm& comm, std::vector<std::int32_t> link_owner)
    : comm_(comm), link_owner_(std::move(link_owner)), out_(static_cast<std::size_t>(comm.size())) {}

void RecordExchange::post(const core::RemoteRecord& record) {
  out_[static_cast<std::size_t>(link_owner_[record.link])].push_back(record);
  ++sent_;
}

const std::vector<core::RemoteRecord>& RecordExchange::exchange() {
  const int n = comm_.size();
  constexpr int kBytes = static_cast<int>(sizeof(core::RemoteRecord));
  std::vector<int> send_counts(static_cast<std::size_t>(n)), recv_counts(static_cast<std::size_t>(n));
  std::vector<int> send_displs(static_cast<std::size_t>(n)), recv_displs(static_cast<std::size_t>(n));
  send_buf_.clear();
  for (int r = 0; r < n; ++r) {
    auto& v = out_[static_cast<std::size_t>(r)];
    send_displs[static_cast<std::size_t>(r)] = static_cast<int>(send_buf_.size()) * kBytes;
    send_counts[static_cast<std::size_t>(r)] = static_cast<int>(v.size()) * kBytes;
    send_buf_.insert(send_buf_.end(), v.begin(), v.end());
    v.clear();
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_.raw());
  int total = 0;
  for (int r = 0; r < n; ++r) {
    recv_displs[static_cast<std::size_t>(r)] = total;
    total += recv_counts[static_cast<std::size_t>(r)];
  }
  in_.resize(static_cast<std::size_t>(total / kBytes));
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
  for (;;) {
    // Records from the previous window are already delivered, so the
    // minimum over ranks of the next event time is the global next event.
    const std::int64_t next = comm.allreduce_min(sim.next_event_time().ps());
    if (next == core::SimTime::max().ps() || core::SimTime::from_ps(next) >= end) break;
    if (st.windows > 0 && core::SimTime::from_ps(next) > previous_end) ++st.skipped_stretches;
    const core::SimTime window_end =
        std::min(end, core::SimTime::from_ps(next) + lookahead);  // next + L cannot overflow: next < max
    previous_end = window_end;
    sim.run_until(window_end);
    for (const auto& r : exchange.exchange()) {
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
