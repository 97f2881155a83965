#include "fabricsim/core/event_queue.hpp"

#include <utility>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::core {

void EventQueue::reserve(std::size_t n) {
  heap_.reserve(n);
  pool_.reserve(n);
  free_.reserve(n);
}

void EventQueue::clear() {
  heap_.clear();
  free_.clear();
  for (std::size_t i = pool_.size(); i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
}

void EventQueue::push(const Event& ev) {
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    pool_[slot] = ev;
  } else {
    slot = static_cast<std::uint32_t>(pool_.size());
    pool_.push_back(ev);
  }
  FABRICSIM_DEBUG_ASSERT(ev.key.priority < 256 && ev.key.source < kMaxEntities, "key field out of range");
  heap_.push_back(pack(ev.key, slot));
  sift_up(heap_.size() - 1);
}

void EventQueue::pop(Event& out) {
  const std::uint32_t slot = heap_.front().slot;
  out = pool_[slot];
  free_.push_back(slot);
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void EventQueue::sift_up(std::size_t i) {
  Entry e = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / kArity;
    if (!less(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  Entry e = heap_[i];
  for (;;) {
    const std::size_t first = kArity * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t last = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < last; ++c)
      if (less(heap_[c], heap_[best])) best = c;
    if (!less(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

}  // namespace fabricsim::core
