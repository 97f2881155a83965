#include "fabricsim/core/event_queue.hpp"

#include "fabricsim/util/assert.hpp"

namespace fabricsim::core {

std::uint16_t EventQueue::binding(HandlerFn fn, void* target) {
  // A simulation binds a handful of (handler, object) pairs; a small
  // direct-mapped cache finds them without searching.
  const auto h = static_cast<std::size_t>(((reinterpret_cast<std::uintptr_t>(fn) >> 4) ^
                                           (reinterpret_cast<std::uintptr_t>(target) >> 3)) %
                                          kBindingCache);
  const std::uint16_t cached = binding_cache_[h];
  if (cached < bindings_.size() && bindings_[cached].fn == fn && bindings_[cached].target == target) return cached;
  std::size_t i = 0;
  while (i < bindings_.size() && !(bindings_[i].fn == fn && bindings_[i].target == target)) ++i;
  if (i == bindings_.size()) {
    FABRICSIM_ASSERT(bindings_.size() < kMaxHandlers, "too many distinct event handlers");
    bindings_.push_back(Binding{fn, target});
  }
  binding_cache_[h] = static_cast<std::uint16_t>(i);
  return static_cast<std::uint16_t>(i);
}

void EventQueue::push(const Event& ev) { push_entry(encode(ev)); }

void EventQueue::pop(Event& out) {
  decode(heap_.front(), out);
  pop_entry();
}

void EventQueue::pop_entry() {
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
  // Bottom-up: the element moved to the root almost always belongs near the
  // bottom, so first walk the hole down along the smallest children without
  // comparing against it, then let it rise from there.  Saves one of the
  // arity+1 comparisons per level.
  const std::size_t n = heap_.size();
  const Entry e = heap_[i];
  for (;;) {
    const std::size_t first = kArity * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    Key128 best_key = key(heap_[first]);
    const std::size_t last = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < last; ++c) {
      const Key128 k = key(heap_[c]);
      if (k < best_key) {
        best_key = k;
        best = c;
      }
    }
    heap_[i] = heap_[best];
    i = best;
  }
  const Key128 ek = key(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!(ek < key(heap_[parent]))) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

}  // namespace fabricsim::core
