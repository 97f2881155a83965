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

EventQueue::Entry EventQueue::encode(const Event& ev, std::uint16_t binding_id) {
  FABRICSIM_DEBUG_ASSERT(ev.key.priority <= kMaxPriority && ev.key.source < kMaxEntities, "key field out of range");
  FABRICSIM_DEBUG_ASSERT(ev.arg1 <= kMaxArg1, "arg1 out of range");
  Entry e;
  e.hi = static_cast<std::uint64_t>(ev.key.time.ps()) ^ kTimeBias;
  e.lo = (static_cast<std::uint64_t>(ev.key.priority) << 56) | (static_cast<std::uint64_t>(ev.key.source) << 32) |
         static_cast<std::uint32_t>(ev.key.sequence);
  e.arg0 = ev.arg0;
  e.meta = (static_cast<std::uint64_t>(binding_id) << 48) | ((ev.arg1 & kMaxArg1) << 32) | ev.arg32;
  return e;
}

void EventQueue::decode(const Entry& e, Event& out) const {
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
