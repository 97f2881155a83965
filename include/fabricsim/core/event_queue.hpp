// Pending-event set: a 4-ary min-heap of compact 32-byte records that hold
// the whole event (key and payload), so a pop reads one contiguous entry and
// nothing else.  The heap's storage grows to the peak number of pending
// events and is then reused: no memory is allocated per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabricsim/core/event.hpp"
#include "fabricsim/util/assert.hpp"

namespace fabricsim::core {

class CalendarQueue;

class EventQueue {
 public:
  /// Entity ids, priorities, handler bindings and arg1 must fit the record.
  static constexpr std::uint32_t kMaxEntities = 1u << 24;
  static constexpr std::uint32_t kMaxPriority = 255;
  static constexpr std::size_t kMaxHandlers = 1u << 16;
  static constexpr std::uint64_t kMaxArg1 = 0xFFFF;

  EventQueue() = default;
  explicit EventQueue(std::size_t reserve) { this->reserve(reserve); }

  void reserve(std::size_t n) { heap_.reserve(n); }
  /// Registers a (handler, object) pair once; events pushed with the
  /// returned id skip the lookup.
  std::uint16_t bind(HandlerFn fn, void* target) { return binding(fn, target); }
  /// push() for an event whose handler and target are those of `binding`.
  void push_bound(const Event& ev, std::uint16_t binding_id) { push_entry(encode(ev, binding_id)); }
  /// Adds an event.  Its key keeps (time, priority, source) and the low 32
  /// bits of the sequence; `dest` is not stored, `arg1` keeps 16 bits.
  void push(const Event& ev);
  /// Removes the least event and copies it to `out`. Precondition: !empty().
  void pop(Event& out);
  SimTime top_time() const {
    return SimTime::from_ps(static_cast<std::int64_t>(heap_.front().hi ^ kTimeBias));
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// Records the heap can hold without allocating.
  std::size_t capacity() const { return heap_.capacity(); }
  void clear() { heap_.clear(); }

 private:
  friend class CalendarQueue;
  static constexpr std::uint64_t kTimeBias = std::uint64_t{1} << 63;
  // Read by Simulator's prefetch hints.
  friend class Simulator;
  // hi: the time (offset to unsigned); lo: priority (8 bits), source (24
  // bits) and the low 32 bits of the per-source sequence.  Compared as one
  // 128-bit number.  Truncating the sequence keeps the order deterministic
  // and partition-independent (it is still a per-source counter); it only
  // matters for two pending events of one source at the same time and
  // priority scheduled 2^32 events apart.  meta: handler binding (16 bits),
  // arg1 (16 bits), arg32 (32 bits).
  struct Binding {
    HandlerFn fn;
    void* target;
  };
  struct Entry {
    std::uint64_t hi;
    std::uint64_t lo;
    std::uint64_t arg0;
    std::uint64_t meta;
  };
  __extension__ using Key128 = unsigned __int128;
  static Key128 key(const Entry& e) { return (static_cast<Key128>(e.hi) << 64) | e.lo; }
  static bool less(const Entry& a, const Entry& b) { return key(a) < key(b); }
  /// 4-ary heap: half the depth of a binary heap, children on one or two cache lines.
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  std::uint16_t binding(HandlerFn fn, void* target);
  Entry encode(const Event& ev) { return encode(ev, binding(ev.handler, ev.target)); }
  Entry encode(const Event& ev, std::uint16_t binding_id) {
    return make_entry(ev.key.time, ev.key.priority, ev.key.source, ev.key.sequence, binding_id, ev.arg32, ev.arg0,
                      ev.arg1);
  }
  static Entry make_entry(SimTime at, std::uint32_t priority, EntityId source, std::uint64_t sequence,
                          std::uint16_t binding_id, std::uint32_t arg32, std::uint64_t arg0, std::uint64_t arg1) {
    FABRICSIM_DEBUG_ASSERT(priority <= kMaxPriority && source < kMaxEntities, "key field out of range");
    FABRICSIM_DEBUG_ASSERT(arg1 <= kMaxArg1, "arg1 out of range");
    Entry e;
    e.hi = static_cast<std::uint64_t>(at.ps()) ^ kTimeBias;
    e.lo = (static_cast<std::uint64_t>(priority) << 56) | (static_cast<std::uint64_t>(source) << 32) |
           static_cast<std::uint32_t>(sequence);
    e.arg0 = arg0;
    e.meta = (static_cast<std::uint64_t>(binding_id) << 48) | ((arg1 & kMaxArg1) << 32) | arg32;
    return e;
  }
  void decode(const Entry& e, Event& out) const {
    out.key.time = SimTime::from_ps(static_cast<std::int64_t>(e.hi ^ kTimeBias));
    out.key.priority = static_cast<std::uint32_t>(e.lo >> 56);
    out.key.source = static_cast<EntityId>((e.lo >> 32) & 0xFFFFFF);
    out.key.sequence = static_cast<std::uint32_t>(e.lo);
    const Binding& b = bindings_[e.meta >> 48];
    out.handler = b.fn;
    out.target = b.target;
    out.dest = kNoEntity;
    out.arg32 = static_cast<std::uint32_t>(e.meta);
    out.arg1 = (e.meta >> 32) & kMaxArg1;
    out.arg0 = e.arg0;
  }
  void push_entry(const Entry& e) {
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }
  const Entry& top_entry() const { return heap_.front(); }
  void pop_entry();

  std::vector<Entry> heap_;
  std::vector<Binding> bindings_;
  static constexpr std::size_t kBindingCache = 61;  // prime: spreads pointer bits
  std::uint16_t binding_cache_[kBindingCache] = {};
};

}  // namespace fabricsim::core
