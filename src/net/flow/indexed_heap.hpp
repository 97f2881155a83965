// An indexed binary min-heap over dense ids: each id is in the heap at most
// once with a key, and its key can be changed or the id removed in
// O(log n) through a position table.  Ties are broken by the id, so the
// order is total and does not depend on the order of pushes.  Storage grows
// to the largest id and heap size seen and is then reused: no allocation
// once the sizes are reached.  Private to the flow model (src/net/flow/).
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
    if (pos_.size() < n) {
      pos_.resize(n, kAbsent);
      key_.resize(n);
    }
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  bool contains(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kAbsent; }
  std::uint32_t top() const { return heap_.front(); }
  Key top_key() const { return key_[heap_.front()]; }
  Key key(std::uint32_t id) const { return key_[id]; }

  /// Inserts `id` with `key`, or changes its key if it is already in.
  void set(std::uint32_t id, Key key) {
    reserve_ids(static_cast<std::size_t>(id) + 1);
    if (pos_[id] == kAbsent) {
      key_[id] = key;
      pos_[id] = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(id);
      up(pos_[id]);
      return;
    }
    const Key old = key_[id];
    key_[id] = key;
    if (key < old) {
      up(pos_[id]);
    } else {
      down(pos_[id]);
    }
  }

  /// Removes `id` if it is in.
  void erase(std::uint32_t id) {
    if (!contains(id)) return;
    const std::uint32_t at = pos_[id];
    const std::uint32_t last = heap_.back();
    heap_.pop_back();
    pos_[id] = kAbsent;
    if (last == id) return;
    heap_[at] = last;
    pos_[last] = at;
    up(at);
    down(pos_[last]);
  }

  void pop() { erase(heap_.front()); }

  /// Empties the heap (ids stay usable).
  void clear() {
    for (std::uint32_t id : heap_) pos_[id] = kAbsent;
    heap_.clear();
  }

 private:
  bool less(std::uint32_t a, std::uint32_t b) const {
    return key_[a] < key_[b] || (!(key_[b] < key_[a]) && a < b);
  }
  void place(std::uint32_t at, std::uint32_t id) {
    heap_[at] = id;
    pos_[id] = at;
  }
  void up(std::uint32_t at) {
    const std::uint32_t id = heap_[at];
    while (at > 0) {
      const std::uint32_t parent = (at - 1) / 2;
      if (!less(id, heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, id);
  }
  void down(std::uint32_t at) {
    const std::uint32_t id = heap_[at];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], id)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, id);
  }

  std::vector<std::uint32_t> heap_;
  std::vector<std::uint32_t> pos_;
  std::vector<Key> key_;
};

}  // namespace fabricsim::net::flow_detail
