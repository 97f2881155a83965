// An indexed min-heap over dense ids: each id is in the heap at most once
// with a key, and its key can be changed or the id removed in O(log n)
// through a position table.  Ties are broken by the id, so the order is
// total and does not depend on the order of pushes.  Keys are stored in the
// heap entries (a comparison reads no other array), and a batch of pushes
// can be heapified in O(n).  Storage grows to the largest id and heap size
// seen and is then reused: no allocation once the sizes are reached.
// Private to the flow model (src/net/flow/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace fabricsim::net::flow_detail {

template <class Key>
class IndexedHeap {
 public:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

  /// Makes ids [0, n) usable (grows only).
  void reserve_ids(std::size_t n) {
    if (pos_.size() < n) pos_.resize(n, kAbsent);
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }
  std::uint32_t top() const { return heap_.front().id; }
  Key top_key() const { return heap_.front().key; }

  /// Inserts `id` with `key`, or changes its key if it is already in.
  void set(std::uint32_t id, Key key) {
    reserve_ids(static_cast<std::size_t>(id) + 1);
    if (pos_[id] == kAbsent) {
      heap_.push_back(Entry{key, id});
      up(static_cast<std::uint32_t>(heap_.size() - 1));
      return;
    }
    const std::uint32_t at = pos_[id];
    const Key old = heap_[at].key;
    heap_[at].key = key;
    if (key < old) {
      up(at);
    } else {
      down(at);
    }
  }

  /// Appends an absent id without ordering; call heapify() before any
  /// other operation.
  void push_unordered(std::uint32_t id, Key key) {
    pos_[id] = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back(Entry{key, id});
  }
  void heapify() {
    for (std::size_t i = heap_.size() / 2; i-- > 0;) down(static_cast<std::uint32_t>(i));
  }

  /// Removes `id` if it is in.
  void erase(std::uint32_t id) {
    if (!contains(id)) return;
    const std::uint32_t at = pos_[id];
    const Entry last = heap_.back();
    heap_.pop_back();
    pos_[id] = kAbsent;
    if (last.id == id) return;
    heap_[at] = last;
    pos_[last.id] = at;
    up(at);
    down(pos_[last.id]);
  }

  void pop() { erase(heap_.front().id); }

  /// Empties the heap (ids stay usable).
  void clear() {
    for (const Entry& e : heap_) pos_[e.id] = kAbsent;
    heap_.clear();
  }

 private:
  struct Entry {
    Key key;
    std::uint32_t id;
  };
  static bool less(const Entry& a, const Entry& b) { return a.key < b.key || (!(b.key < a.key) && a.id < b.id); }
  void up(std::uint32_t at) {
    const Entry e = heap_[at];
    while (at > 0) {
      const std::uint32_t parent = (at - 1) / 2;
      if (!less(e, heap_[parent])) break;
      heap_[at] = heap_[parent];
      pos_[heap_[at].id] = at;
      at = parent;
    }
    heap_[at] = e;
    pos_[e.id] = at;
  }
  void down(std::uint32_t at) {
    const Entry e = heap_[at];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], e)) break;
      heap_[at] = heap_[child];
      pos_[heap_[at].id] = at;
      at = child;
    }
    heap_[at] = e;
    pos_[e.id] = at;
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> pos_;
};

}  // namespace fabricsim::net::flow_detail
