#include "fabricsim/core/event_queue.hpp"

#include <utility>

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
  heap_.push_back(Entry{ev.key, slot});
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
    std::size_t parent = (i - 1) / 2;
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
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
    if (!less(heap_[child], e)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = e;
}

}  // namespace fabricsim::core
