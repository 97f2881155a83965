// Pending-event set for the short, dense scheduling horizon of a packet
// network: a calendar (ring of time buckets) in front of a heap.
//
// Time is cut into buckets of 2^kBucketShift ps; a ring of kBuckets buckets
// covers the near future.  Pushing an event into the ring appends it to its
// bucket (O(1)); when the cursor reaches a bucket, the bucket is sorted once
// by the full event key and drained in order.  Events beyond the ring's
// horizon wait in an EventQueue heap and move into the ring as it advances;
// events pushed into the bucket being drained go to a small side heap.
// The order of events is exactly the key order, as with EventQueue alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabricsim/core/event.hpp"
#include "fabricsim/core/event_queue.hpp"

namespace fabricsim::core {

class CalendarQueue {
 public:
  static constexpr unsigned kBucketShift = 11;  // 2.048 ns per bucket
  static constexpr std::size_t kBuckets = 4096;  // ~8.4 us horizon

  CalendarQueue();
  void push(const Event& ev) { push_entry(far_.encode(ev)); }
  /// See EventQueue::bind and push_bound.
  std::uint16_t bind(HandlerFn fn, void* target) { return far_.bind(fn, target); }
  void* binding_target(std::uint16_t binding_id) const { return far_.bindings_[binding_id].target; }
  void push_bound(const Event& ev, std::uint16_t binding_id) { push_entry(far_.encode(ev, binding_id)); }
  /// push_bound() without building an Event first.
  void push_fields(SimTime at, std::uint32_t priority, EntityId source, std::uint64_t sequence,
                   std::uint16_t binding_id, std::uint32_t arg32, std::uint64_t arg0, std::uint64_t arg1) {
    push_entry(EventQueue::make_entry(at, priority, source, sequence, binding_id, arg32, arg0, arg1));
  }
  /// Removes the least event into `out`.  Precondition: !empty().
  void pop(Event& out);
  /// Time of the least event.  Precondition: !empty().
  SimTime top_time();
  /// Pops the least event into `out` if the queue holds one before `end`
  /// (the event loop's step: one look at the queue instead of two).
  bool pop_before(SimTime end, Event& out) {
    if (size_ == 0) return false;
    if (sorted_ && drain_ < cur_size_ && side_.empty()) {  // the common case: next in the sorted bucket
      if (static_cast<std::int64_t>(cur_[drain_].hi ^ EventQueue::kTimeBias) >= end.ps()) return false;
      far_.decode(cur_[drain_++], out);
      --size_;
      return true;
    }
    if (top_time() >= end) return false;
    pop(out);
    return true;
  }
  bool empty() const { return size_ == 0; }
  /// The event `k` places after the least one in the bucket being drained,
  /// or nullptr: a hint for prefetching (ignores the side heap).
  const EventQueue::Entry* peek_ahead(std::size_t k) const {
    return sorted_ && drain_ + k < cur_size_ ? &cur_[drain_ + k] : nullptr;
  }
  std::size_t size() const { return size_; }

 private:
  using Entry = EventQueue::Entry;
  void push_entry(const Entry& e);
  /// Comparator for the side min-heap (std heaps are max-heaps).
  static bool later(const Entry& x, const Entry& y) { return EventQueue::less(y, x); }
  static std::uint64_t bucket_of(std::uint64_t hi) { return hi >> kBucketShift; }
  /// Makes the bucket at the cursor non-empty and sorted (precondition: !empty()).
  void settle();
  /// Sorts one bucket's events into key order.
  void sort_bucket(std::vector<Entry>& v);
  void advance_to(std::uint64_t abs_bucket);
  void rewind(std::uint64_t abs_bucket);
  std::size_t next_nonempty(std::size_t from) const;
  /// Whether the least event is in the side heap rather than the bucket.
  bool side_first() const;

  std::vector<std::vector<Entry>> ring_;
  std::vector<std::uint64_t> occupied_;  // bitmap of non-empty ring buckets
  std::vector<std::vector<Entry>> spare_;  // storage of drained buckets, for reuse
  std::vector<Entry> scratch_;            // radix sort buffer
  std::vector<Entry> side_;               // min-heap: pushed into the current bucket while it drains
  EventQueue far_;                       // beyond the horizon
  std::uint64_t cursor_ = 0;             // absolute bucket number of the current bucket
  std::size_t drain_ = 0;                // next index to pop in the current (sorted) bucket
  bool sorted_ = false;                  // the current bucket is sorted from drain_ on
  // While sorted_: the current bucket's entries (it does not change while
  // it drains: pushes into it go to side_), for the pop fast path.
  const Entry* cur_ = nullptr;
  std::size_t cur_size_ = 0;
  std::size_t size_ = 0;
};

}  // namespace fabricsim::core
