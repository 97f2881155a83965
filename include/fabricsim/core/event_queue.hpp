// Pending-event set: a binary min-heap of (key, slot) entries over a pool of
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
  EventQueue() = default;
  explicit EventQueue(std::size_t reserve) { this->reserve(reserve); }

  void reserve(std::size_t n);
  void push(const Event& ev);
  /// Removes the least event and copies it to `out`. Precondition: !empty().
  void pop(Event& out);
  const EventKey& top_key() const { return heap_.front().key; }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  /// Number of event records the pool holds (in use or free).
  std::size_t pool_capacity() const { return pool_.size(); }
  void clear();

 private:
  struct Entry {
    EventKey key;
    std::uint32_t slot;
  };
  static bool less(const Entry& a, const Entry& b) { return a.key < b.key; }
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);

  std::vector<Entry> heap_;
  std::vector<Event> pool_;
  std::vector<std::uint32_t> free_;
};

}  // namespace fabricsim::core
