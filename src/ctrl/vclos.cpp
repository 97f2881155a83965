// vClos's resource schedulers (ctrl/vclos.hpp; ../shared/spec/vclos.md
// section 5): the cluster's free GPUs, servers and links, the best-fit
// stages 0 and 1, the whole_server baseline, FINDVCLOS, and vClos-ILP(l, s)
// solved by an exact branch and bound or by COIN-OR CBC.
#include "fabricsim/ctrl/vclos.hpp"

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/util/assert.hpp"
#include "placement_detail.hpp"
#include "cbc_setup.hpp"

namespace fabricsim::ctrl {

namespace {

using std::uint32_t;
using std::uint64_t;
using detail::ceil_div;
using detail::first_gpus;
using detail::idle_servers_of;
using detail::placed;
using detail::refused;

// ---------------------------------------------------------------------------
// Stages 0 and 1 and the whole-server spread.

/// Stage 0 (n <= T): best fit on one server.  Among the leaves with a
/// server that has n idle GPUs, the one with the fewest idle servers, then
/// in it the server with the fewest idle GPUs that still suffice: large
/// holes are kept for large jobs.
std::optional<Allocation> stage_server(const ClusterState& st, uint32_t n) {
  const ClusterShape& sh = st.shape();
  std::optional<uint32_t> best_server;
  uint32_t best_leaf_idle = 0;
  for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf) {
    // Strict <: ties keep the lower leaf (and leaves are visited in order).
    if (best_server && st.idle_servers(leaf) >= best_leaf_idle) continue;
    std::optional<uint32_t> in_leaf;
    uint32_t in_leaf_idle = 0;
    for (uint32_t i = 0; i < sh.servers_per_leaf; ++i) {
      const uint32_t server = leaf * sh.servers_per_leaf + i;
      const uint32_t idle = st.idle_gpus(server);
      if (idle >= n && (!in_leaf || idle < in_leaf_idle)) {
        in_leaf = server;
        in_leaf_idle = idle;
      }
    }
    if (!in_leaf) continue;
    best_server = in_leaf;
    best_leaf_idle = st.idle_servers(leaf);
  }
  if (!best_server) return std::nullopt;
  Allocation a;
  a.stage = Stage::Server;
  for (uint32_t slot = 0; slot < sh.gpus_per_server && a.gpus.size() < n; ++slot) {
    const uint32_t gpu = *best_server * sh.gpus_per_server + slot;
    if (!st.gpu_busy(gpu)) a.gpus.push_back(gpu);
  }
  FABRICSIM_ASSERT(a.gpus.size() == n, "server has fewer idle GPUs than its count says");
  return a;
}

/// Stage 1 (n > T): ceil(n/T) whole idle servers under the leaf with the
/// fewest idle servers that has enough; no spine link is used.
std::optional<Allocation> stage_leaf(const ClusterState& st, uint32_t n) {
  const ClusterShape& sh = st.shape();
  const uint32_t need = ceil_div(n, sh.gpus_per_server);
  std::optional<uint32_t> best;
  for (uint32_t leaf = 0; leaf < sh.leaves; ++leaf) {
    const uint32_t idle = st.idle_servers(leaf);
    if (idle >= need && (!best || idle < st.idle_servers(*best))) best = leaf;
  }
  if (!best) return std::nullopt;
  Allocation a;
  a.stage = Stage::Leaf;
  a.servers = idle_servers_of(st, *best, need);
  a.gpus = first_gpus(sh, a.servers, n);
  return a;
}

/// Stages 0 and 1, whichever applies to n.
std::optional<Allocation> local_stage(const ClusterState& st, uint32_t n) {
  return n <= st.shape().gpus_per_server ? stage_server(st, n) : stage_leaf(st, n);
}

/// The whole_server baseline's spread: whole idle servers from the leaves
/// with the most idle servers first, so that the job spans few leaves.
std::optional<Allocation> stage_servers(const ClusterState& st, uint32_t n) {
  const ClusterShape& sh = st.shape();
  const uint32_t need = ceil_div(n, sh.gpus_per_server);
  if (st.idle_servers() < need) return std::nullopt;
  std::vector<uint32_t> order(sh.leaves);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return st.idle_servers(a) > st.idle_servers(b); });
  Allocation a;
  a.stage = Stage::Servers;
  for (uint32_t leaf : order) {
    const uint32_t take = std::min(st.idle_servers(leaf), need - static_cast<uint32_t>(a.servers.size()));
    if (take == 0) break;  // sorted: no later leaf has any either, or the job is complete
    const std::vector<uint32_t> some = idle_servers_of(st, leaf, take);
    a.servers.insert(a.servers.end(), some.begin(), some.end());
  }
  a.gpus = first_gpus(sh, a.servers, n);
  return a;
}

// ---------------------------------------------------------------------------
// vClos-ILP(l, s).

/// The instance as both solvers see it: the eligible leaves (at least s/T
/// idle servers), their costs RSN * T, the spines' costs RPN, and per
/// eligible leaf the bit mask of the spines it has a free link to.
struct Instance {
  uint32_t l = 0, s = 0;
  uint32_t spines = 0;
  std::size_t words = 0;             // 64-bit words per spine mask
  std::vector<uint32_t> leaf;        // eligible leaves, ascending
  std::vector<uint64_t> leaf_cost;   // per eligible leaf
  std::vector<uint64_t> spine_cost;  // per spine
  std::vector<uint64_t> linked;      // eligible leaf e's mask at [e * words]

  const uint64_t* mask(std::size_t e) const { return linked.data() + e * words; }
};

Instance make_instance(const ClusterState& st, uint32_t l, uint32_t s) {
  const ClusterShape& sh = st.shape();
  Instance in;
  in.l = l;
  in.s = s;
  in.spines = sh.spines;
  in.words = (sh.spines + 63) / 64;
  in.spine_cost.resize(sh.spines);
  for (uint32_t m = 0; m < sh.spines; ++m) in.spine_cost[m] = st.free_ports(m);
  const uint32_t servers = s / sh.gpus_per_server;
  for (uint32_t n = 0; n < sh.leaves; ++n) {
    if (st.idle_servers(n) < servers) continue;
    in.leaf.push_back(n);
    in.leaf_cost.push_back(uint64_t{st.idle_servers(n)} * sh.gpus_per_server);
    const std::size_t at = in.linked.size();
    in.linked.resize(at + in.words, 0);
    for (uint32_t m = 0; m < sh.spines; ++m)
      if (st.free_links(n, m) >= 1) in.linked[at + m / 64] |= uint64_t{1} << (m % 64);
  }
  return in;
}

std::size_t popcount(const uint64_t* mask, std::size_t words) {
  std::size_t c = 0;
  for (std::size_t w = 0; w < words; ++w) c += static_cast<std::size_t>(std::popcount(mask[w]));
  return c;
}

bool has_bit(const uint64_t* mask, uint32_t m) { return ((mask[m / 64] >> (m % 64)) & 1u) != 0; }

/// Exact branch and bound over the leaf sets in lexicographic order (leaves
/// ascending, smaller index first), so that the first leaf set reaching the
/// optimum is the lexicographically smallest one; a leaf set's best spines
/// are the s cheapest spines linked to all its leaves (ties: lower index),
/// which is also the smallest spine list among its optimal ones.
///
/// Three devices keep it fast on fragmented CLUSTER2048 states (a few ms
/// per call; worst case it stays exponential), none of which loses the
/// lexicographically first optimum:
///  - leaves of equal cost and equal spine mask are interchangeable, and of
///    such a class the lowest-numbered ones give the smaller leaf list: a
///    class's members are only taken as a prefix (in index order);
///  - a spine can end in the solution only if at least `need` of the
///    remaining candidate leaves link to it, and a candidate only if it
///    links to s such spines: both are peeled off to a fixpoint at every
///    node (an infeasible branch mostly dies here, before any enumeration);
///  - a subtree with fewer spine sets than leaf sets left to try (large l,
///    small s) is solved by enumerating spine sets instead (by_spines).
class Search {
 public:
  explicit Search(const Instance& in)
      : in_(in), masks_((std::size_t{in.l} + 1) * in.words), children_(std::size_t{in.l} + 1), degree_(in.spines) {
    by_cost_.resize(in.spines);
    std::iota(by_cost_.begin(), by_cost_.end(), 0u);
    std::stable_sort(by_cost_.begin(), by_cost_.end(),
                     [&](uint32_t a, uint32_t b) { return in.spine_cost[a] < in.spine_cost[b]; });
    // Classes of interchangeable leaves: equal cost and equal mask.
    const std::size_t eligible = in.leaf.size();
    std::vector<uint32_t> order(eligible);
    std::iota(order.begin(), order.end(), 0u);
    auto key_less = [&](uint32_t a, uint32_t b) {
      if (in.leaf_cost[a] != in.leaf_cost[b]) return in.leaf_cost[a] < in.leaf_cost[b];
      return std::lexicographical_compare(in.mask(a), in.mask(a) + in.words, in.mask(b), in.mask(b) + in.words);
    };
    std::stable_sort(order.begin(), order.end(), key_less);  // members of a class stay in index order
    class_of_.resize(eligible);
    rank_in_class_.resize(eligible);
    for (std::size_t i = 0; i < eligible; ++i) {
      const bool same = i > 0 && !key_less(order[i - 1], order[i]);
      if (!same) taken_in_class_.push_back(0);
      class_of_[order[i]] = static_cast<uint32_t>(taken_in_class_.size() - 1);
      rank_in_class_[order[i]] = same ? rank_in_class_[order[i - 1]] + 1 : 0;
    }
  }

  /// The chosen eligible-leaf positions and spines, or nullopt.
  std::optional<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> run() {
    const std::size_t eligible = in_.leaf.size();
    if (in_.l == 0 || in_.s == 0 || in_.l > eligible || in_.s > in_.spines) return std::nullopt;
    // An incumbent's cost from a greedy pass (cheapest leaves first) only
    // bounds the search: the search must still find the lexicographically
    // first optimum, so it prunes on lb > bound_ and keeps the first set at
    // a cost <= bound_ (thereafter bound_ = best - 1).
    bound_ = greedy_cost();
    chosen_.assign(in_.l, 0);
    uint64_t* root = masks_.data();
    std::fill(root, root + in_.words, ~uint64_t{0});
    if (in_.spines % 64 != 0) root[in_.words - 1] = (uint64_t{1} << (in_.spines % 64)) - 1;
    dfs(0, 0, 0);
    if (!found_) return std::nullopt;
    return std::make_pair(best_leaves_, best_spines_);
  }

 private:
  /// The sum of the s cheapest spines in `mask` (and them, in `out`, when
  /// asked), or nullopt if it has fewer than s.
  std::optional<uint64_t> cheapest_spines(const uint64_t* mask, std::vector<uint32_t>* out) const {
    uint64_t sum = 0;
    uint32_t taken = 0;
    for (uint32_t m : by_cost_) {
      if (!has_bit(mask, m)) continue;
      sum += in_.spine_cost[m];
      if (out != nullptr) out->push_back(m);
      if (++taken == in_.s) return sum;
    }
    return std::nullopt;
  }

  std::size_t common(const uint64_t* mask, std::size_t e) const {
    std::size_t c = 0;
    for (std::size_t w = 0; w < in_.words; ++w) c += static_cast<std::size_t>(std::popcount(mask[w] & in_.mask(e)[w]));
    return c;
  }

  uint64_t greedy_cost() const {
    std::vector<uint32_t> order(in_.leaf.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return in_.leaf_cost[a] < in_.leaf_cost[b]; });
    std::vector<uint64_t> mask(in_.words, ~uint64_t{0});
    std::vector<uint64_t> next(in_.words);
    uint64_t cost = 0;
    uint32_t taken = 0;
    for (uint32_t e : order) {
      for (std::size_t w = 0; w < in_.words; ++w) next[w] = mask[w] & in_.mask(e)[w];
      if (popcount(next.data(), in_.words) < in_.s) continue;
      mask.swap(next);
      cost += in_.leaf_cost[e];
      if (++taken == in_.l) break;
    }
    const std::optional<uint64_t> spines = taken == in_.l ? cheapest_spines(mask.data(), nullptr) : std::nullopt;
    // No greedy solution: no bound but the trivial one.
    return spines ? cost + *spines : std::numeric_limits<uint64_t>::max();
  }

  /// Peels the node's mask and candidates (see the class comment).  False
  /// if fewer than `need` candidates or s spines remain.
  bool peel(uint64_t* mask, std::vector<uint32_t>& children, uint32_t need) {
    for (;;) {
      if (children.size() < need) return false;
      std::fill(degree_.begin(), degree_.end(), 0u);
      for (uint32_t e : children) {
        for (std::size_t w = 0; w < in_.words; ++w) {
          for (uint64_t bits = mask[w] & in_.mask(e)[w]; bits != 0; bits &= bits - 1)
            ++degree_[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
        }
      }
      bool dropped = false;
      for (std::size_t w = 0; w < in_.words; ++w) {
        for (uint64_t bits = mask[w]; bits != 0; bits &= bits - 1) {
          const int b = std::countr_zero(bits);
          if (degree_[w * 64 + static_cast<std::size_t>(b)] < need) {
            mask[w] &= ~(uint64_t{1} << b);
            dropped = true;
          }
        }
      }
      if (!dropped) return popcount(mask, in_.words) >= in_.s;
      const std::size_t before = children.size();
      std::erase_if(children, [&](uint32_t e) { return common(mask, e) < in_.s; });
      if (children.size() == before) return popcount(mask, in_.words) >= in_.s;
    }
  }

  /// `depth` leaves chosen (chosen_[0..depth)), at cost `cost`, the next
  /// one from eligible position `from` on; masks_ at depth holds the spines
  /// linked to all of them.
  void dfs(uint32_t depth, std::size_t from, uint64_t cost) {
    uint64_t* mask = masks_.data() + std::size_t{depth} * in_.words;
    if (depth == in_.l) {
      std::vector<uint32_t> spines;
      const std::optional<uint64_t> spine_cost = cheapest_spines(mask, &spines);
      if (!spine_cost || cost + *spine_cost > bound_) return;
      found_ = true;
      std::sort(spines.begin(), spines.end());
      best_leaves_ = chosen_;
      best_spines_ = std::move(spines);
      // Later leaf sets are lexicographically larger: only a strictly
      // better one may replace this.
      bound_ = cost + *spine_cost - 1;
      return;
    }
    const uint32_t need = in_.l - depth;
    // The candidates: the later leaves that keep s spines linked to all.
    std::vector<uint32_t>& children = children_[depth];
    children.clear();
    for (std::size_t e = from; e < in_.leaf.size(); ++e)
      if (common(mask, e) >= in_.s) children.push_back(static_cast<uint32_t>(e));
    if (!peel(mask, children, need)) return;
    // Lower bound: the need cheapest candidates and the s cheapest spines
    // of the mask (which only shrinks further down).
    const std::optional<uint64_t> spine_bound = cheapest_spines(mask, nullptr);
    if (!spine_bound) return;
    costs_.resize(children.size());
    for (std::size_t i = 0; i < children.size(); ++i) costs_[i] = in_.leaf_cost[children[i]];
    std::nth_element(costs_.begin(), costs_.begin() + (need - 1), costs_.end());
    uint64_t lb = cost + *spine_bound;
    for (uint32_t i = 0; i < need; ++i) lb += costs_[i];
    if (lb > bound_) return;
    // Where choosing the spines is the smaller enumeration (many leaves
    // still to choose, few spines left: large l, small s), the subtree is
    // solved from the spine side instead.
    if (binomial(popcount(mask, in_.words), in_.s) <= binomial(children.size(), need)) {
      by_spines(depth, cost, mask, children);
      return;
    }
    uint64_t* next = masks_.data() + (std::size_t{depth} + 1) * in_.words;
    for (std::size_t i = 0; i + need <= children.size(); ++i) {
      const uint32_t e = children[i];
      uint32_t& taken = taken_in_class_[class_of_[e]];
      if (rank_in_class_[e] != taken) continue;  // a lower member of its class was left out
      for (std::size_t w = 0; w < in_.words; ++w) next[w] = mask[w] & in_.mask(e)[w];
      chosen_[depth] = e;
      ++taken;
      dfs(depth + 1, std::size_t{e} + 1, cost + in_.leaf_cost[e]);
      --taken;
    }
  }

  /// C(n, k), saturating (only compared).
  static double binomial(std::size_t n, std::size_t k) {
    if (k > n) return 0.0;
    double c = 1.0;
    for (std::size_t i = 1; i <= k && c < 1e300; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
    return c;
  }

  /// The subtree below chosen_[0..depth) (all completions by `children`),
  /// enumerated by spine sets: for a spine set, the best completion is the
  /// `need` cheapest candidates linked to all its spines (ties: lower
  /// index), the smallest list among its optimal ones.  Spine sets are
  /// enumerated in index order with a bound; unlike the leaf side, the
  /// order of discovery is not the tie-break order, so ties are compared
  /// explicitly (cost, then leaves, then spines) and pruning is strict.
  /// Spines of equal cost and equal links to the candidates are
  /// interchangeable and taken as a prefix, as leaves are.
  void by_spines(uint32_t depth, uint64_t cost, const uint64_t* mask, const std::vector<uint32_t>& children) {
    SpineSide side(in_, mask, children, in_.l - depth, cost, bound_);
    if (!side.solve()) return;
    found_ = true;
    best_leaves_.assign(chosen_.begin(), chosen_.begin() + depth);
    for (uint32_t i : side.leaves) best_leaves_.push_back(children[i]);
    best_spines_ = side.spines;
    bound_ = side.total - 1;
  }

  /// by_spines' enumeration.
  class SpineSide {
   public:
    SpineSide(const Instance& in, const uint64_t* mask, const std::vector<uint32_t>& children, uint32_t need,
              uint64_t cost, uint64_t bound)
        : in_(in), need_(need), base_(cost), bound_(bound) {
      for (uint32_t m = 0; m < in.spines; ++m)
        if (has_bit(mask, m)) spine_.push_back(m);
      const std::size_t p = spine_.size(), c = children.size();
      cw_ = (c + 63) / 64;
      col_.assign(p * cw_, 0);
      for (std::size_t j = 0; j < p; ++j)
        for (std::size_t i = 0; i < c; ++i)
          if (has_bit(in.mask(children[i]), spine_[j])) col_[j * cw_ + i / 64] |= uint64_t{1} << (i % 64);
      leaf_cost_.resize(c);
      for (std::size_t i = 0; i < c; ++i) leaf_cost_[i] = in.leaf_cost[children[i]];
      by_cost_.resize(c);
      std::iota(by_cost_.begin(), by_cost_.end(), 0u);
      std::stable_sort(by_cost_.begin(), by_cost_.end(),
                       [&](uint32_t a, uint32_t b) { return leaf_cost_[a] < leaf_cost_[b]; });
      // suffix_[j * (s + 1) + r]: the r cheapest spines among spine_[j..p).
      const uint32_t s = in.s;
      suffix_.assign((p + 1) * (s + 1), std::numeric_limits<uint64_t>::max());
      std::vector<uint64_t> costs;
      for (std::size_t j = p + 1; j-- > 0;) {
        if (j < p)
          costs.insert(std::upper_bound(costs.begin(), costs.end(), in.spine_cost[spine_[j]]),
                       in.spine_cost[spine_[j]]);
        uint64_t sum = 0;
        suffix_[j * (s + 1)] = 0;
        for (uint32_t r = 1; r <= s && r <= costs.size(); ++r) suffix_[j * (s + 1) + r] = sum += costs[r - 1];
      }
      // Classes of interchangeable spines.
      std::vector<uint32_t> order(p);
      std::iota(order.begin(), order.end(), 0u);
      auto key_less = [&](uint32_t a, uint32_t b) {
        const uint64_t ca = in.spine_cost[spine_[a]], cb = in.spine_cost[spine_[b]];
        if (ca != cb) return ca < cb;
        return std::lexicographical_compare(col(a), col(a) + cw_, col(b), col(b) + cw_);
      };
      std::stable_sort(order.begin(), order.end(), key_less);
      class_of_.resize(p);
      rank_in_class_.resize(p);
      for (std::size_t i = 0; i < p; ++i) {
        const bool same = i > 0 && !key_less(order[i - 1], order[i]);
        if (!same) taken_in_class_.push_back(0);
        class_of_[order[i]] = static_cast<uint32_t>(taken_in_class_.size() - 1);
        rank_in_class_[order[i]] = same ? rank_in_class_[order[i - 1]] + 1 : 0;
      }
      linked_.assign((std::size_t{s} + 1) * cw_, 0);
      for (std::size_t i = 0; i < c; ++i) linked_[i / 64] |= uint64_t{1} << (i % 64);
      chosen_.resize(s);
    }

    /// Whether a completion at a total cost <= bound exists; then the best
    /// in `total`, `leaves` (candidate positions, ascending), `spines`.
    bool solve() {
      enumerate(0, 0, 0);
      return found_;
    }

    uint64_t total = 0;
    std::vector<uint32_t> leaves, spines;

   private:
    const uint64_t* col(std::size_t j) const { return col_.data() + j * cw_; }

    /// The sum of the need_ cheapest candidates in `linked` (and them).
    std::optional<uint64_t> cheapest_leaves(const uint64_t* linked, std::vector<uint32_t>* out) const {
      uint64_t sum = 0;
      uint32_t taken = 0;
      if (need_ == 0) return sum;
      for (uint32_t i : by_cost_) {
        if (((linked[i / 64] >> (i % 64)) & 1u) == 0) continue;
        sum += leaf_cost_[i];
        if (out != nullptr) out->push_back(i);
        if (++taken == need_) return sum;
      }
      return std::nullopt;
    }

    void enumerate(uint32_t k, std::size_t from, uint64_t spine_sum) {
      const uint32_t s = in_.s;
      const uint64_t* linked = linked_.data() + std::size_t{k} * cw_;
      if (k == s) {
        std::vector<uint32_t> completion;
        const std::optional<uint64_t> leaf_sum = cheapest_leaves(linked, &completion);
        if (!leaf_sum) return;
        const uint64_t t = base_ + spine_sum + *leaf_sum;
        if (t > bound_) return;
        std::sort(completion.begin(), completion.end());
        std::vector<uint32_t> set(chosen_.begin(), chosen_.end());
        for (uint32_t& j : set) j = spine_[j];
        if (found_ && std::tie(t, completion, set) >= std::tie(total, leaves, spines)) return;
        found_ = true;
        total = t;
        leaves = std::move(completion);
        spines = std::move(set);
        return;
      }
      const std::optional<uint64_t> leaf_bound = cheapest_leaves(linked, nullptr);
      if (!leaf_bound || spine_.size() - from < s - k) return;
      const uint64_t lb = base_ + spine_sum + *leaf_bound + suffix_[from * (s + 1) + (s - k)];
      if (lb > bound_ || (found_ && lb > total)) return;
      uint64_t* next = linked_.data() + (std::size_t{k} + 1) * cw_;
      for (std::size_t j = from; j + (s - k) <= spine_.size(); ++j) {
        uint32_t& taken = taken_in_class_[class_of_[j]];
        if (rank_in_class_[j] != taken) continue;  // a lower member of its class was left out
        for (std::size_t w = 0; w < cw_; ++w) next[w] = linked[w] & col(j)[w];
        chosen_[k] = static_cast<uint32_t>(j);
        ++taken;
        enumerate(k + 1, j + 1, spine_sum + in_.spine_cost[spine_[j]]);
        --taken;
      }
    }

    const Instance& in_;
    uint32_t need_;
    uint64_t base_, bound_;
    std::vector<uint32_t> spine_;      // the mask's spines, ascending
    std::size_t cw_ = 0;               // 64-bit words per candidate set
    std::vector<uint64_t> col_;        // per spine: the candidates linked to it
    std::vector<uint64_t> leaf_cost_;  // per candidate
    std::vector<uint32_t> by_cost_;    // candidates by (cost, position)
    std::vector<uint64_t> suffix_;     // see the constructor
    std::vector<uint32_t> class_of_, rank_in_class_, taken_in_class_;
    std::vector<uint64_t> linked_;  // per level: candidates linked to all chosen spines
    std::vector<uint32_t> chosen_;  // spine positions
    bool found_ = false;
  };

  const Instance& in_;
  std::vector<uint32_t> by_cost_;                   // spines by (cost, index)
  std::vector<uint64_t> masks_;                     // per depth
  std::vector<std::vector<uint32_t>> children_;     // per depth
  std::vector<uint32_t> degree_;                    // per spine, scratch
  std::vector<uint64_t> costs_;                     // scratch
  std::vector<uint32_t> class_of_, rank_in_class_;  // per eligible leaf
  std::vector<uint32_t> taken_in_class_;            // per class, on the current path
  std::vector<uint32_t> chosen_;                    // eligible positions
  uint64_t bound_ = 0;
  bool found_ = false;
  std::vector<uint32_t> best_leaves_, best_spines_;
};


/// The spec's vClos-ILP through CBC.  With binaries l_n and s_m the link
/// variables are c_{n,m} = l_n * s_m (a virtual leaf takes one link to each
/// of the job's s spines: sum_m c = s l_n and sum_n c = l s_m force it), so
/// c_{n,m} <= C_{n,m} is l_n + s_m <= 1 where no link is free; and
/// T r_n = s l_n with r_n <= R_n only admits leaves with R_n >= s/T, whose
/// l_n are the only leaf columns.  Columns: l_n per eligible leaf, then s_m
/// per spine.
std::optional<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> solve_ilp(const Instance& in,
                                                                                 std::uint64_t max_nodes) {
  const std::size_t eligible = in.leaf.size();
  if (in.l == 0 || in.s == 0 || in.l > eligible || in.s > in.spines) return std::nullopt;
  const int leaf_cols = static_cast<int>(eligible);
  const int cols = leaf_cols + static_cast<int>(in.spines);
  std::vector<int> row_index, col_index;
  std::vector<double> element;
  auto put = [&](int row, int col) {
    row_index.push_back(row);
    col_index.push_back(col);
    element.push_back(1.0);
  };
  for (int j = 0; j < leaf_cols; ++j) put(0, j);     // sum l_n = l
  for (int j = leaf_cols; j < cols; ++j) put(1, j);  // sum s_m = s
  int rows = 2;
  for (std::size_t e = 0; e < eligible; ++e) {
    for (uint32_t m = 0; m < in.spines; ++m) {
      if (has_bit(in.mask(e), m)) continue;
      put(rows, static_cast<int>(e));  // l_n + s_m <= 1
      put(rows, leaf_cols + static_cast<int>(m));
      ++rows;
    }
  }
  const CoinPackedMatrix matrix(true, row_index.data(), col_index.data(), element.data(),
                                static_cast<CoinBigIndex>(element.size()));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> col_lb(static_cast<std::size_t>(cols), 0.0), col_ub(static_cast<std::size_t>(cols), 1.0);
  std::vector<double> objective(static_cast<std::size_t>(cols));
  for (std::size_t e = 0; e < eligible; ++e) objective[e] = static_cast<double>(in.leaf_cost[e]);
  for (uint32_t m = 0; m < in.spines; ++m) objective[eligible + m] = static_cast<double>(in.spine_cost[m]);
  std::vector<double> row_lb(static_cast<std::size_t>(rows), -inf), row_ub(static_cast<std::size_t>(rows), 1.0);
  row_lb[0] = row_ub[0] = in.l;
  row_lb[1] = row_ub[1] = in.s;

  OsiClpSolverInterface solver;
  detail::load_integer_program(solver, matrix, col_lb, col_ub, objective, row_lb, row_ub);
  CbcModel model(solver);
  detail::quiet_integer_model(model);  // (the objective is integer)
  model.setMaximumNodes(static_cast<int>(std::min<std::uint64_t>(max_nodes, INT_MAX)));
  model.branchAndBound();

  const double* best = model.bestSolution();
  if (best == nullptr) return std::nullopt;  // infeasible, or the node limit came first
  std::vector<uint32_t> leaves, spines;
  for (std::size_t e = 0; e < eligible; ++e)
    if (best[e] > 0.5) leaves.push_back(static_cast<uint32_t>(e));
  for (uint32_t m = 0; m < in.spines; ++m)
    if (best[eligible + m] > 0.5) spines.push_back(m);
  // CBC's solutions satisfy the rows to its tolerance, which on 0/1
  // columns with unit coefficients is exact; a miss would be a bug here.
  FABRICSIM_ASSERT(leaves.size() == in.l && spines.size() == in.s, "CBC's vClos has the wrong size");
  for (uint32_t e : leaves)
    for (uint32_t m : spines) FABRICSIM_ASSERT(has_bit(in.mask(e), m), "CBC's vClos uses a pair without a free link");
  return std::make_pair(std::move(leaves), std::move(spines));
}

}  // namespace

// ---------------------------------------------------------------------------

std::string ClusterShape::check() const {
  if (leaves == 0) return "no leaves";
  if (spines == 0) return "no spines";
  if (servers_per_leaf == 0) return "no servers per leaf";
  if (gpus_per_server == 0) return "no GPUs per server";
  if (!links.empty() && links.size() != std::size_t{leaves} * spines)
    return "links has " + std::to_string(links.size()) +
           " entries, expected leaves * spines = " + std::to_string(std::size_t{leaves} * spines) + " (or none)";
  // The state's counters are 32 bits wide: GPU numbers and a spine's ports.
  if (std::uint64_t{leaves} * servers_per_leaf * gpus_per_server > std::numeric_limits<uint32_t>::max())
    return "too many GPUs";
  return "";
}

const char* to_string(Stage s) {
  switch (s) {
    case Stage::Server: return "server";
    case Stage::Leaf: return "leaf";
    case Stage::VirtualClos: return "vclos";
    case Stage::Servers: return "servers";
    case Stage::OcsSpine: return "ocs_spine";
    case Stage::OcsClos: return "ocs_clos";
  }
  return "?";
}

const char* to_string(Refusal r) {
  switch (r) {
    case Refusal::None: return "none";
    case Refusal::Gpus: return "gpus";
    case Refusal::Network: return "network";
  }
  return "?";
}

ClusterState::ClusterState(ClusterShape shape) : shape_(std::move(shape)) {
  if (const std::string why = shape_.check(); !why.empty()) throw std::invalid_argument("ctrl::ClusterShape: " + why);
  busy_.assign(shape_.gpus(), 0);
  idle_gpus_.assign(shape_.servers(), shape_.gpus_per_server);
  idle_servers_.assign(shape_.leaves, shape_.servers_per_leaf);
  free_links_.resize(std::size_t{shape_.leaves} * shape_.spines);
  free_ports_.assign(shape_.spines, 0);
  for (uint32_t n = 0; n < shape_.leaves; ++n) {
    for (uint32_t m = 0; m < shape_.spines; ++m) {
      const uint32_t c = shape_.links_between(n, m);
      free_links_[std::size_t{n} * shape_.spines + m] = c;
      free_ports_[m] += c;
    }
  }
}

std::uint32_t ClusterState::idle_servers() const {
  return std::accumulate(idle_servers_.begin(), idle_servers_.end(), 0u);
}

namespace {

/// The GPUs an allocation holds: its gpus and every GPU of its servers,
/// each once.
std::vector<uint32_t> held_gpus(const ClusterShape& sh, const Allocation& a) {
  std::vector<uint32_t> gpus = a.gpus;
  std::sort(gpus.begin(), gpus.end());
  FABRICSIM_ASSERT(std::adjacent_find(gpus.begin(), gpus.end()) == gpus.end(), "a GPU twice in one allocation");
  for (uint32_t server : a.servers) {
    FABRICSIM_ASSERT(server < sh.servers(), "no such server");
    for (uint32_t slot = 0; slot < sh.gpus_per_server; ++slot) gpus.push_back(server * sh.gpus_per_server + slot);
  }
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  FABRICSIM_ASSERT(gpus.empty() || gpus.back() < sh.gpus(), "no such GPU");
  return gpus;
}

}  // namespace

void ClusterState::take(const Allocation& a) { book(a, true); }
void ClusterState::release(const Allocation& a) { book(a, false); }

void ClusterState::book(const Allocation& a, bool take) {
  const uint32_t t = shape_.gpus_per_server;
  for (uint32_t gpu : held_gpus(shape_, a)) {
    FABRICSIM_ASSERT((busy_[gpu] == 0) == take, take ? "take: GPU already busy" : "release: GPU not busy");
    busy_[gpu] = take ? 1 : 0;
    const uint32_t server = gpu / t;
    const uint32_t leaf = server / shape_.servers_per_leaf;
    if (take && idle_gpus_[server]-- == t) --idle_servers_[leaf];
    if (!take && ++idle_gpus_[server] == t) ++idle_servers_[leaf];
  }
  if (a.stage != Stage::VirtualClos) return;
  for (uint32_t n : a.leaves) {
    FABRICSIM_ASSERT(n < shape_.leaves, "no such leaf");
    for (uint32_t m : a.spines) {
      FABRICSIM_ASSERT(m < shape_.spines, "no such spine");
      uint32_t& free = free_links_[std::size_t{n} * shape_.spines + m];
      FABRICSIM_ASSERT(take ? free > 0 : free < shape_.links_between(n, m),
                       take ? "take: no free link between the leaf and the spine" : "release: link not reserved");
      free = take ? free - 1 : free + 1;
      free_ports_[m] = take ? free_ports_[m] - 1 : free_ports_[m] + 1;
    }
  }
}

std::optional<Allocation> place_local(const ClusterState& state, std::uint32_t n) { return local_stage(state, n); }

Decision place_whole_server(const ClusterState& state, std::uint32_t n) {
  FABRICSIM_ASSERT(n > 0, "a job of no GPUs");
  if (std::optional<Allocation> a = local_stage(state, n)) return placed(std::move(*a));
  // A small job is never split over servers (the locality rule).
  if (n <= state.shape().gpus_per_server) return refused(Refusal::Gpus);
  if (std::optional<Allocation> a = stage_servers(state, n)) return placed(std::move(*a));
  return refused(Refusal::Gpus);
}

Decision place_vclos(const ClusterState& state, std::uint32_t n, const VClosOptions& options) {
  FABRICSIM_ASSERT(n > 0, "a job of no GPUs");
  const ClusterShape& sh = state.shape();
  if (std::optional<Allocation> a = local_stage(state, n)) return placed(std::move(*a));
  if (n <= sh.gpus_per_server || state.idle_servers() < ceil_div(n, sh.gpus_per_server)) return refused(Refusal::Gpus);
  // FINDVCLOS: the fewest, fullest virtual leaves first.  N should be a power
  // of two (the app rounds up); for other N the (l, s) that divide it
  // exactly with T | s may not exist, and the job is refused as Network.
  const uint32_t pow2 = std::bit_floor(n);
  for (uint64_t l = std::max<uint32_t>(1, pow2 / sh.spines); l <= sh.leaves; l *= 2) {
    const uint64_t s = n / l;
    if (l == 1 || s > sh.spines || s == 0 || n % l != 0 || s % sh.gpus_per_server != 0) continue;
    if (std::optional<Allocation> a = vclos_ilp(state, static_cast<uint32_t>(l), static_cast<uint32_t>(s), options))
      return placed(std::move(*a));
  }
  return refused(Refusal::Network);
}

std::optional<Allocation> vclos_ilp(const ClusterState& state, std::uint32_t l, std::uint32_t s,
                                    const VClosOptions& options) {
  const ClusterShape& sh = state.shape();
  // Whole servers per virtual leaf: a caller's error otherwise.
  FABRICSIM_ASSERT(l > 0 && s > 0 && s % sh.gpus_per_server == 0, "vClos-ILP needs l, s > 0 and T | s");
  const Instance in = make_instance(state, l, s);
  std::optional<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> chosen;
  if (options.solver == VClosSolver::Search) {
    chosen = Search(in).run();
  } else {
    chosen = solve_ilp(in, options.ilp_max_nodes);
  }
  if (!chosen) return std::nullopt;
  Allocation a;
  a.stage = Stage::VirtualClos;
  for (uint32_t e : chosen->first) a.leaves.push_back(in.leaf[e]);  // eligible positions ascend with leaves
  a.spines = std::move(chosen->second);
  std::sort(a.spines.begin(), a.spines.end());
  for (uint32_t leaf : a.leaves) {
    const std::vector<uint32_t> servers = idle_servers_of(state, leaf, s / sh.gpus_per_server);
    a.servers.insert(a.servers.end(), servers.begin(), servers.end());
  }
  a.gpus = first_gpus(sh, a.servers, l * s);
  return a;
}

}  // namespace fabricsim::ctrl
