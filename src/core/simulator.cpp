#include "fabricsim/core/simulator.hpp"

#include <cstdlib>

#include "fabricsim/util/error.hpp"

#include "fabricsim/util/assert.hpp"

namespace fabricsim::core {

Simulator::Simulator(std::size_t entity_count) : seq_(entity_count, 0) {
  FABRICSIM_ASSERT(entity_count <= EventQueue::kMaxEntities, "more entities than the event key can hold");
}

void Simulator::scheduled_in_the_past(SimTime at) const {
  // Times are int64 picoseconds (about 106 days): a sum that wraps lands
  // far before now, often below zero.  That is the configuration's doing
  // (a tiny rate or load, huge latencies or compute times), not a bug.
  if (at.ps() < 0 || now_.ps() > (std::int64_t{1} << 62))
    throw util::UserError(
        "simulated time overflowed its range (int64 picoseconds, about 106 days): some rate, load, latency, size "
        "or compute time in the configuration is too extreme (e.g. network.link_gbps, workload.load, "
        "*_latency_ns, a model's compute times)",
        util::kExitConfigError);
  FABRICSIM_ASSERT(at >= now_, "event scheduled in the past");
  std::abort();  // (not reached)
}

void Simulator::schedule(SimTime at, std::uint32_t priority, EntityId source, EntityId /*dest*/, HandlerFn fn,
                         void* target, std::uint32_t arg32, std::uint64_t arg0, std::uint64_t arg1) {
  schedule_bound(at, priority, source, bind(fn, target), arg32, arg0, arg1);
}

void Simulator::schedule_keyed(SimTime at, std::uint32_t priority, EntityId source, std::uint64_t tag, HandlerFn fn,
                               void* target, std::uint32_t arg32, std::uint64_t arg0, std::uint64_t arg1) {
  schedule_keyed_bound(at, priority, source, tag, bind(fn, target), arg32, arg0, arg1);
}

void Simulator::set_prefetch(BindingId binding, PrefetchFn fn) {
  if (prefetch_.size() <= binding) prefetch_.resize(binding + 1u);
  prefetch_[binding] = Prefetch{fn, queue_.binding_target(binding)};
}

std::uint64_t Simulator::run_until(SimTime end) { return run_until(end, UINT64_MAX); }

namespace {
constexpr std::size_t kPrefetchDistance = 4;
}

std::uint64_t Simulator::run_until(SimTime end, std::uint64_t max_events) {
  std::uint64_t n = 0;
  stop_ = false;
  Event ev;
  while (n < max_events && queue_.pop_before(end, ev)) {
    now_ = ev.key.time;
    if (const EventQueue::Entry* next = queue_.peek_ahead(kPrefetchDistance)) {
      const std::size_t b = next->meta >> 48;
      if (b < prefetch_.size() && prefetch_[b].fn)
        prefetch_[b].fn(prefetch_[b].target, static_cast<std::uint32_t>(next->meta), next->arg0);
    }
    prev_active_ = last_active_;
    last_active_ = now_;
    ev.handler(ev.target, ev);
    ++n;
    if (stop_) break;
  }
  processed_ += n;
  return n;
}

void Simulator::advance_to(SimTime t) {
  FABRICSIM_ASSERT(t >= now_ && t <= next_event_time(), "the clock moves forward to at most the next event");
  now_ = t;
  prev_active_ = last_active_;  // (a global step that changes nothing calls passive())
  last_active_ = t;
}

}  // namespace fabricsim::core
