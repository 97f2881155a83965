#include "fabricsim/par/conservative.hpp"

#include <mpi.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <string>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::par {

RecordExchange::RecordExchange(const Comm& comm, std::vector<std::int32_t> link_owner,
                               std::vector<std::int32_t> neighbours)
    : comm_(comm),
      link_owner_(std::move(link_owner)),
      out_(static_cast<std::size_t>(comm.size())),
      neighbours_(std::move(neighbours)) {}

void RecordExchange::post(const core::RemoteRecord& record) {
  out_[static_cast<std::size_t>(link_owner_[record.link])].push_back(record);
  // A reply to this record could come back at its time + L: not beyond that.
  const std::int64_t t = record.key.time.ps();
  if (t < horizon_ - lookahead_) {
    horizon_ = t + lookahead_;
    if (sim_ != nullptr) sim_->stop();
  }
  ++sent_;
}

void RecordExchange::request_step(core::SimTime at) {
  const std::int64_t t = at.ps();
  const std::int64_t now = step_time_ != INT64_MIN ? step_time_ : (clock_ != nullptr ? clock_->now().ps() : 0);
  const std::int64_t delay = step_time_ != INT64_MIN ? 0 : min_step_delay_;
  if (t < now || t - now < delay)
    throw util::UserError("a global step requested at " + std::to_string(t) + " ps, less than " +
                          std::to_string(delay) + " ps after now (" + std::to_string(now) +
                          " ps): the control latency must be at least the largest cut distance times the lookahead");
  steps_.push(t);
  // Nothing at or after t on this rank before the step.
  if (t < horizon_) {
    horizon_ = t;
    if (sim_ != nullptr) sim_->stop();
  }
}

const std::vector<core::RemoteRecord>& RecordExchange::exchange() {
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
  return in_;
}

std::vector<std::int32_t> rank_distances(int ranks, const std::vector<std::pair<std::int32_t, std::int32_t>>& edges,
                                         std::int32_t to) {
  std::vector<std::vector<std::int32_t>> adj(static_cast<std::size_t>(ranks));
  for (const auto& [a, b] : edges) {
    adj[static_cast<std::size_t>(a)].push_back(b);
    adj[static_cast<std::size_t>(b)].push_back(a);
  }
  std::vector<std::int32_t> d(static_cast<std::size_t>(ranks), -1);
  std::deque<std::int32_t> q{to};
  d[static_cast<std::size_t>(to)] = 0;
  while (!q.empty()) {
    const std::int32_t v = q.front();
    q.pop_front();
    for (const std::int32_t u : adj[static_cast<std::size_t>(v)])
      if (d[static_cast<std::size_t>(u)] < 0) {
        d[static_cast<std::size_t>(u)] = d[static_cast<std::size_t>(v)] + 1;
        q.push_back(u);
      }
  }
  return d;
}

core::SimTime min_step_delay(const std::vector<std::int32_t>& distance, core::SimTime lookahead) {
  std::int32_t most = distance.size() > 1 ? 1 : 0;
  for (const std::int32_t d : distance) most = std::max(most, d);
  return core::SimTime::from_ps(most * lookahead.ps());
}

WindowStats run_conservative(core::Simulator& sim, const Comm& comm, RecordExchange& exchange,
                             const std::vector<std::int32_t>& distance, core::SimTime lookahead, core::SimTime end,
                             const std::function<void(const core::RemoteRecord&)>& deliver,
                             const std::function<void()>& after_window, GlobalSteps* steps) {
  FABRICSIM_ASSERT(lookahead > core::SimTime::zero(), "conservative windows need a positive lookahead");
  FABRICSIM_ASSERT(distance.size() == static_cast<std::size_t>(comm.size()), "one distance per rank");
  WindowStats st;
  const std::int64_t l = lookahead.ps();
  const auto plus = [](std::int64_t t, std::int64_t dt) { return t > INT64_MAX - dt ? INT64_MAX : t + dt; };
  std::vector<std::int64_t> reach(distance.size(), INT64_MAX);  // d(s, r) L; max where s cannot reach us
  for (std::size_t s = 0; s < distance.size(); ++s)
    if (distance[s] > 0) reach[s] = distance[s] > INT64_MAX / l ? INT64_MAX : distance[s] * l;
  // Per rank: its earliest pending event (records received included) and
  // the events it processed in the window just ended.
  // A failure on one rank (an event handler's error, memory) must not leave
  // the others waiting for it in the next exchange, nor end the job with
  // MPI_Abort, which may lose the failing rank's message on its way through
  // the launcher: the failing rank stops simulating but keeps to the
  // window's exchange, the next gather tells every rank, and all of them
  // throw the same SharedError, which unwinds normally and is printed once.
  std::string failure;
  int failure_code = 0;
  const auto fail = [&](const std::exception& e) {
    if (failure_code != 0) return;
    const auto* ue = dynamic_cast<const util::UserError*>(&e);
    failure = std::string(ue ? "" : "unexpected failure: ") + e.what() + " (rank " + std::to_string(comm.rank()) + ")";
    failure_code = ue ? ue->exit_code() : 1;
  };
  // Global steps: one delay bound for every rank (the largest distance
  // anywhere); a rank that no record path reaches from rank s keeps its
  // horizon below e_s + that bound, so it cannot run past a step s may
  // request.
  std::int64_t step_delay = 0;
  if (steps != nullptr) {
    const std::int64_t mine = min_step_delay(distance, lookahead).ps();
    const std::int64_t bound = comm.size() > 1 ? comm.allreduce_max(mine) : mine;
    step_delay = steps->delay().ps() > 0 ? steps->delay().ps() : bound;
    if (step_delay < bound)
      throw util::UserError("a global step delay of " + std::to_string(step_delay) +
                            " ps is below the largest cut distance times the lookahead (" + std::to_string(bound) +
                            " ps)");
    exchange.set_min_step_delay(step_delay);
    exchange.set_clock(&sim);
    steps->start(exchange);
  }
  constexpr std::size_t kFields = 4;  // next event time, events in the window, failed, earliest step requested
  std::vector<std::int64_t> gathered;
  std::uint64_t counted = sim.events_processed();
  const auto gather = [&] {
    const std::int64_t mine[kFields] = {sim.next_event_time().ps(),
                                        static_cast<std::int64_t>(sim.events_processed() - counted),
                                        failure_code != 0 ? 1 : 0, exchange.pending_step()};
    counted = sim.events_processed();
    comm.allgather(mine, kFields, gathered);
    std::int64_t most = 0;
    bool failed = false;
    for (std::size_t s = 0; s < distance.size(); ++s) {
      most = std::max(most, gathered[kFields * s + 1]);
      failed = failed || gathered[kFields * s + 2] != 0;
    }
    st.critical_events += static_cast<std::uint64_t>(most);
    if (!failed) return;
    const std::string message = comm.agree_on_error(failure);
    const auto code = static_cast<int>(comm.allreduce_max(std::int64_t{failure_code}));
    throw util::SharedError(message, code);
  };
  // The step at t: every rank's contribution gathered, the same decision
  // applied everywhere (an exception still takes part in the gather, and
  // the failure is agreed at the next gather).
  const auto global_step = [&](std::int64_t t) {
    std::vector<std::int64_t> mine;
    try {
      if (failure_code == 0) mine = steps->contribute(core::SimTime::from_ps(t));
    } catch (const std::exception& e) {
      fail(e);
    }
    std::vector<std::int64_t> counts;
    const std::vector<std::int64_t> all = comm.size() > 1 ? comm.allgatherv(mine, &counts) : mine;
    if (comm.size() == 1) counts.assign(1, static_cast<std::int64_t>(mine.size()));
    exchange.served_step(t);
    exchange.set_step_time(t);
    if (t > sim.now().ps()) sim.advance_to(core::SimTime::from_ps(t));
    try {
      if (failure_code == 0) steps->apply(core::SimTime::from_ps(t), all, counts);
    } catch (const std::exception& e) {
      fail(e);
    }
    exchange.set_step_time(INT64_MIN);
    ++st.global_steps;
  };
  gather();
  std::int64_t previous_first = INT64_MIN;
  for (;;) {
    std::int64_t first = INT64_MAX;
    std::int64_t step = INT64_MAX;
    for (std::size_t s = 0; s < distance.size(); ++s) {
      first = std::min(first, gathered[kFields * s]);
      step = std::min(step, gathered[kFields * s + 3]);
    }
    if (steps != nullptr && step != INT64_MAX && step <= first && step < end.ps()) {
      global_step(step);  // no event before it is left anywhere
      gather();
      continue;
    }
    if (first == INT64_MAX || first >= end.ps()) break;
    if (st.windows > 0 && first > plus(previous_first, l)) ++st.skipped_stretches;
    previous_first = first;
    std::int64_t horizon = end.ps();
    for (std::size_t s = 0; s < distance.size(); ++s)
      if (reach[s] != INT64_MAX) horizon = std::min(horizon, plus(gathered[kFields * s], reach[s]));
    // Run ahead only when no other rank can reach this one within 2L of the
    // earliest event anywhere; otherwise keep to the shared window
    // [first, first + L).  Without this, two busy ranks a little apart
    // leapfrog: the one behind runs to the other's e + L while that one
    // waits, then the roles swap, and the ranks take turns instead of
    // working together (16k fat tree, 2 ranks: 1.8x slower).
    if (horizon < plus(first, 2 * l)) horizon = std::min(horizon, plus(first, l));
    if (steps != nullptr) {
      // Not past a step gathered; and not past what a rank that cannot
      // reach this one might yet request (e_s + the delay bound).
      horizon = std::min(horizon, step);
      for (std::size_t s = 0; s < distance.size(); ++s)
        if (reach[s] == INT64_MAX && static_cast<int>(s) != comm.rank())
          horizon = std::min(horizon, plus(gathered[kFields * s], step_delay));
    }
    exchange.open_window(horizon, l, &sim);
    try {
      // post() lowers the horizon and stops the run: go on up to the new one.
      while (sim.next_event_time().ps() < exchange.horizon()) sim.run_until(core::SimTime::from_ps(exchange.horizon()));
    } catch (const std::exception& e) {
      fail(e);
    }
    [[maybe_unused]] const core::SimTime window_end = core::SimTime::from_ps(exchange.horizon());
    exchange.open_window(INT64_MAX, l, nullptr);
    const auto& received = exchange.exchange();  // also after a failure: the neighbours wait for it
    try {
      if (failure_code == 0)
        for (const auto& r : received) {
          FABRICSIM_DEBUG_ASSERT(r.key.time >= window_end, "a remote record arrived after its time");
          deliver(r);
          ++st.records_received;
        }
      ++st.windows;
      if (after_window && failure_code == 0) after_window();
    } catch (const std::exception& e) {
      fail(e);
    }
    gather();
  }
  st.records_sent = exchange.records_sent();
  return st;
}

}  // namespace fabricsim::par
