// Pending-event set: a 4-ary min-heap of (key, slot) entries over a pool of
// fixed-size event records.  Slots are recycled through a free list, so once
// the pool and the heap have grown to the peak number of pending events no
// memory is allocated per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabricsim/core/event.hpp"

namespace fabricsim::core {

class EventQueue {
 public:
  /// Entity ids and priorities must fit the packed key.
  static constexpr std::uint32_t kMaxEntities = 1u << 24;
  static constexpr std::uint32_t kMaxPriority = 255;

  EventQueue() = default;
  explicit EventQueue(std::size_t reserve) { this->reserve(reserve); }

  void reserve(std::size_t n);
  void push(const Event& ev);
  /// Removes the least event and copies it to `out`. Precondition: !empty().
  void pop(Event& out);
  const EventKey& top_key() const { return pool_[heap_.front().slot].key; }
  SimTime top_time() const {
    return SimTime::from_ps(static_cast<std::int64_t>(heap_.front().hi ^ (std::uint64_t{1} << 63)));
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// Number of event records the pool holds (in use or free).
  std::size_t pool_capacity() const { return pool_.size(); }
  void clear();

 private:
  // The key packed into two words compared as one 128-bit number: the time
  // (offset to unsigned), then priority (8 bits), source (24+ bits) and the
  // low 32 bits of the per-source sequence.  Packing halves the heap entry
  // and turns the four-field comparison into two.  Truncating the sequence
  // keeps the order deterministic and partition-independent (it is still a
  // per-source counter); it only matters for two pending events of one
  // source at the same time and priority scheduled 2^32 events apart.
  struct Entry {
    std::uint64_t hi;
    std::uint64_t lo;
    std::uint32_t slot;
  };
  static bool less(const Entry& a, const Entry& b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
  static Entry pack(const EventKey& k, std::uint32_t slot) {
    return Entry{static_cast<std::uint64_t>(k.time.ps()) ^ (std::uint64_t{1} << 63),
                 (static_cast<std::uint64_t>(k.priority) << 56) | (static_cast<std::uint64_t>(k.source) << 32) |
                     static_cast<std::uint32_t>(k.sequence),
                 slot};
  }
  /// 4-ary heap: half the depth of a binary heap, children on one cache line.
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Entry> heap_;
  std::vector<Event> pool_;
  std::vector<std::uint32_t> free_;
};

}  // namespace fabricsim::core
