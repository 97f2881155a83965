// The sequential event loop of one partition.  A sequential run is
// run_until(SimTime::max()); a parallel run calls run_until(window_end) once
// per synchronization window chosen by the par layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabricsim/core/event.hpp"
#include "fabricsim/core/calendar_queue.hpp"
#include "fabricsim/core/time.hpp"
#include "fabricsim/util/assert.hpp"

namespace fabricsim::core {

class Simulator {
 public:
  /// `entity_count` is the number of entities of the whole (global) model;
  /// entity ids are dense in [0, entity_count).
  explicit Simulator(std::size_t entity_count = 0);

  /// Binds a member function as an event handler at compile time.
  template <class C, void (C::*Method)(const Event&)>
  static HandlerFn handler() {
    return [](void* self, const Event& ev) { (static_cast<C*>(self)->*Method)(ev); };
  }

  SimTime now() const { return now_; }

  using BindingId = std::uint16_t;
  /// Registers a (handler, object) pair for the schedule_bound() calls,
  /// which then skip looking the pair up on every event.
  BindingId bind(HandlerFn fn, void* target) { return queue_.bind(fn, target); }
  /// Optional: a function that prefetches what an event of `binding` will
  /// touch, given its payload.  The loop calls it for an event a few places
  /// ahead in the queue, so the memory the handler needs is in cache by the
  /// time it runs (a packet network's state does not fit the cache).  Hints
  /// only: it must not change any state.
  /// (A second, closer call per event, to follow a pointer the first one
  /// fetched, cost more instructions than its hints saved; none used it.)
  using PrefetchFn = void (*)(void* target, std::uint32_t arg32, std::uint64_t arg0);
  void set_prefetch(BindingId binding, PrefetchFn fn);

  /// schedule() / schedule_keyed() with a registered handler binding.
  void schedule_bound(SimTime at, std::uint32_t priority, EntityId source, BindingId binding,
                      std::uint32_t arg32 = 0, std::uint64_t arg0 = 0, std::uint64_t arg1 = 0) {
    if (at < now_) [[unlikely]] scheduled_in_the_past(at);
    FABRICSIM_DEBUG_ASSERT(source < seq_.size(), "source entity out of range");
    queue_.push_fields(at, priority, source, seq_[source]++, binding, arg32, arg0, arg1);
  }
  void schedule_keyed_bound(SimTime at, std::uint32_t priority, EntityId source, std::uint64_t tag,
                            BindingId binding, std::uint32_t arg32 = 0, std::uint64_t arg0 = 0,
                            std::uint64_t arg1 = 0) {
    if (at < now_) [[unlikely]] scheduled_in_the_past(at);
    queue_.push_fields(at, priority, source, tag, binding, arg32, arg0, arg1);
  }

  /// Schedules an event at absolute time `at` (>= now()).  `source` is the
  /// entity on whose behalf it is scheduled; its sequence counter advances.
  void schedule(SimTime at, std::uint32_t priority, EntityId source, EntityId dest, HandlerFn fn,
                void* target, std::uint32_t arg32 = 0, std::uint64_t arg0 = 0, std::uint64_t arg1 = 0);

  /// Schedules an event with a key chosen by the caller instead of the
  /// source's counter.  For events that are idempotent per (source, tag) at a
  /// given time, such as "re-examine output port P at time t": the key then
  /// does not depend on when or by whom the event was requested, which keeps
  /// the event order independent of partitioning.  The caller must use a
  /// priority that no counter-keyed event of the same source uses.
  void schedule_keyed(SimTime at, std::uint32_t priority, EntityId source, std::uint64_t tag, HandlerFn fn,
                      void* target, std::uint32_t arg32 = 0, std::uint64_t arg0 = 0, std::uint64_t arg1 = 0);

  /// Inserts an event whose key was already assigned (for example, one that
  /// arrived from another rank).
  void insert(const Event& ev) { queue_.push(ev); }

  /// Allocates the next sequence number of `source` (used when an event is
  /// built by hand, e.g. sent across ranks).
  std::uint64_t next_sequence(EntityId source) { return seq_[source]++; }

  /// Processes, in key order, every event with time < end.  Returns the
  /// number of events processed.  now() is left at the time of the last
  /// event processed.
  std::uint64_t run_until(SimTime end);

  /// Moves the clock to `t` without an event: what happens at a global step
  /// at t (par/conservative.hpp) happens at t.  Needs now() <= t <= the
  /// earliest pending event.
  void advance_to(SimTime t);

  /// Processes events until none are left.
  std::uint64_t run() { return run_until(SimTime::max()); }

  /// Processes events with time < end, but returns early after `max_events`.
  std::uint64_t run_until(SimTime end, std::uint64_t max_events);

  bool empty() const { return queue_.empty(); }
  SimTime next_event_time() { return queue_.empty() ? SimTime::max() : queue_.top_time(); }
  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return queue_.size(); }
  std::size_t entity_count() const { return seq_.size(); }
  /// Requests that run_until return after the current event.
  void stop() { stop_ = true; }
  /// The time of the last event that was not passive (and of the last
  /// advance_to): where a run that ends when its work does ends, though
  /// passive events scheduled in advance (a link coming back up after the
  /// last packet) may have moved the clock further.
  SimTime last_active() const { return last_active_; }
  /// Called by the handler of the event being handled (or by a global
  /// step, after advance_to): it changed nothing that anything waits for
  /// (a scheduled link change with nothing on the link, a decision that
  /// kept everything as it was), so it does not count towards last_active().
  void passive() { last_active_ = prev_active_; }

 private:
  /// An event before now: simulated time wrapped past its int64-picosecond
  /// range (a util::UserError saying so), or an internal error.
  [[noreturn]] void scheduled_in_the_past(SimTime at) const;
  CalendarQueue queue_;
  std::vector<std::uint64_t> seq_;
  struct Prefetch {
    PrefetchFn fn = nullptr;
    void* target = nullptr;
  };
  std::vector<Prefetch> prefetch_;  // by binding id
  SimTime now_;
  SimTime last_active_;  // see last_active()
  SimTime prev_active_;  // last_active_ before the event being handled
  std::uint64_t processed_ = 0;
  bool stop_ = false;
};

}  // namespace fabricsim::core
