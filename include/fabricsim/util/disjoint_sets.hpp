// Disjoint sets over 0 ... n-1 (union-find with path halving): the
// components of a fabric's switches (HammingMesh's networks, TACOS's switch
// groups), the groups the partitioner keeps together, an OCS topology's
// weak components.  Written here rather than taken from Boost's
// disjoint_sets: two joins with a fixed root rule are all its users need,
// and their results (component ids, the partition) depend on that rule.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace fabricsim::util {

template <class Index>
class DisjointSets {
 public:
  explicit DisjointSets(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), Index{0}); }
  /// The root of x's set.
  Index find(Index x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  /// Joins the sets of a and b under the smaller root, so that a set's
  /// root is its smallest member; false if they were one set already.
  bool join(Index a, Index b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent_[std::max(a, b)] = std::min(a, b);
    return true;
  }
  /// Joins a's set into b's: b's root stays the root.
  void join_into(Index a, Index b) {
    const Index rb = find(b);
    parent_[find(a)] = rb;
  }

 private:
  std::vector<Index> parent_;
};

}  // namespace fabricsim::util
