#include "fabricsim/par/conservative.hpp"

#include <mpi.h>

#include <algorithm>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::par {

RecordExchange::RecordExchange(const Comm& comm, std::vector<std::int32_t> link_owner,
                               std::vector<std::int32_t> neighbours)
    : comm_(comm),
      link_owner_(std::move(link_owner)),
      out_(static_cast<std::size_t>(comm.size())),
      neighbours_(std::move(neighbours)) {}

void RecordExchange::post(const core::RemoteRecord& record) {
  out_[static_cast<std::size_t>(link_owner_[record.link])].push_back(record);
  earliest_sent_ = std::min(earliest_sent_, record.key.time.ps());
  ++sent_;
}

const std::vector<core::RemoteRecord>& RecordExchange::exchange(core::SimTime local_next, core::SimTime& global_next) {
  constexpr int kTag = 4711;
  constexpr int kBytes = static_cast<int>(sizeof(core::RemoteRecord));
  // Point-to-point with the neighbours only; MPI keeps messages between a
  // pair in order, and every window sends exactly one to each neighbour.
  requests_.assign(neighbours_.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < neighbours_.size(); ++i) {
    auto& v = out_[static_cast<std::size_t>(neighbours_[i])];
    MPI_Isend(v.data(), static_cast<int>(v.size()) * kBytes, MPI_BYTE, neighbours_[i], kTag, comm_.raw(), &requests_[i]);
  }
  in_.clear();
  for (const std::int32_t from : neighbours_) {
    MPI_Status status;
    MPI_Probe(from, kTag, comm_.raw(), &status);
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    const std::size_t old = in_.size();
    in_.resize(old + static_cast<std::size_t>(bytes / kBytes));
    MPI_Recv(in_.data() + old, bytes, MPI_BYTE, from, kTag, comm_.raw(), MPI_STATUS_IGNORE);
  }
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  for (const std::int32_t to : neighbours_) out_[static_cast<std::size_t>(to)].clear();
  global_next = core::SimTime::from_ps(comm_.allreduce_min(std::min(local_next.ps(), earliest_sent_)));
  earliest_sent_ = INT64_MAX;
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
