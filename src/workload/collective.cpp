#include "fabricsim/workload/collective.hpp"

#include <algorithm>
#include <limits>
#include <array>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/capacity.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"
#include "fabricsim/workload/placement.hpp"
#include "fabricsim/workload/tacos.hpp"

namespace fabricsim::workload {

using core::SimTime;
using util::ConfigError;

CollectiveOp parse_collective_op(const std::string& name) {
  if (name == "allreduce") return CollectiveOp::Allreduce;
  if (name == "reduce_scatter") return CollectiveOp::ReduceScatter;
  if (name == "allgather") return CollectiveOp::Allgather;
  if (name == "alltoall") return CollectiveOp::Alltoall;
  if (name == "broadcast") return CollectiveOp::Broadcast;
  if (name == "reduce") return CollectiveOp::Reduce;
  if (name == "barrier") return CollectiveOp::Barrier;
  if (name == "scatter") return CollectiveOp::Scatter;
  if (name == "gather") return CollectiveOp::Gather;
  throw ConfigError("workload.op: unknown collective '" + name + "'");
}

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::Allreduce: return "allreduce";
    case CollectiveOp::ReduceScatter: return "reduce_scatter";
    case CollectiveOp::Allgather: return "allgather";
    case CollectiveOp::Alltoall: return "alltoall";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::Reduce: return "reduce";
    case CollectiveOp::Barrier: return "barrier";
    case CollectiveOp::Scatter: return "scatter";
    case CollectiveOp::Gather: return "gather";
  }
  return "?";
}

double busbw_factor(CollectiveOp op, std::uint32_t ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::Allreduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce: return 1.0;
    case CollectiveOp::Barrier: return 0.0;
    default: return (n - 1) / n;
  }
}

std::vector<net::EndpointId> communicator(const CollectiveParams& p, std::uint32_t endpoints) {
  EndpointPool pool(endpoints);
  return communicator(p, pool);
}

std::vector<net::EndpointId> communicator(const CollectiveParams& p, EndpointPool& pool) {
  const std::uint32_t endpoints = pool.endpoints();
  const bool all = pool.free_count() == endpoints;
  std::vector<net::EndpointId> out;
  if (p.placement == "list") {
    if (p.endpoints.size() < 2) throw ConfigError("workload.endpoints: a communicator needs at least 2 endpoints");
    std::unordered_set<net::EndpointId> seen;
    for (std::uint32_t e : p.endpoints) {
      if (e >= endpoints)
        throw ConfigError("workload.endpoints: " + std::to_string(e) + " is not an endpoint (there are " +
                          std::to_string(endpoints) + ")");
      if (!pool.is_free(e))
        throw ConfigError("workload.endpoints: endpoint " + std::to_string(e) + " belongs to another job");
      if (!seen.insert(e).second)
        throw ConfigError("workload.endpoints: endpoint " + std::to_string(e) + " appears twice");
      out.push_back(e);
    }
    return out;
  }
  const std::uint32_t avail = pool.free_count();
  const std::uint32_t n = p.ranks == 0 ? avail : p.ranks;
  // (One rank: a training job's compute alone, no operation to run.)
  const bool compute_only = n == 1 && p.compute > SimTime::zero();
  if ((n < 2 && !compute_only) || n > avail)
    throw ConfigError("workload.ranks: " + std::to_string(n) + " ranks on " + std::to_string(avail) +
                      (all ? " endpoints" : " free endpoints") + " (need 2 to " + std::to_string(avail) + ")");
  PlacementRule rule;
  rule.placement = p.placement;
  rule.gpus_per_server = p.gpus_per_server;
  rule.order = [&p] { return p.available; };
  rule.seed = p.seed;
  rule.stream = 0x434F'4D4D'0000ull;  // "COMM"
  out = choose_endpoints(pool, n, rule);
  return out;
}

namespace {

// One point-to-point send of an operation's schedule (ranks are indices in
// the communicator).  `after`, `after2`: schedule indices of the messages
// whose arrival at `from` it waits for (-1: none); `reduced`: those arrivals
// are reduced first.  `wait`: a barrier of the schedule it waits for;
// `feed`: the barrier its arrival counts towards.
struct Send {
  std::uint32_t from, to;
  std::uint64_t bytes;
  std::int64_t after = -1;
  bool reduced = false;
  std::int64_t after2 = -1;
  std::int32_t wait = -1;
  std::int32_t feed = -1;
  std::uint8_t conn = 0;  // which of the schedule's concurrent instances (its own connections)
};

// A barrier at one rank: completes when every send feeding it has arrived
// (a reducing barrier reduces the last of them first).
struct Barrier {
  std::uint32_t rank;
  bool reduce;
  std::int32_t wait = -1;  // an earlier barrier at the same rank it also waits for
};

// A schedule's sends: a list whose push_back stops planning that outgrows
// the budget (the TaskGraph's plan_budget_left: a ring over 16k ranks is
// half a billion sends, 25 GB, before any task is made).  Counting, it
// stores nothing: append_collective runs each schedule once that way first,
// so that a plan too large for the memory limit is refused at once (it
// used to build until it had taken most of the machine: 52 s and 14.7 GB
// for that ring here), and one that fits is allocated once, at its size.
class SendList {
 public:
  /// `per_send`: counting, the bytes each counted send stands for (its
  /// schedule entry, task and message record); 0: a list that stores.
  SendList(std::uint64_t budget, std::uint64_t per_send) : budget_(budget), per_send_(per_send) {}
  /// Counting: also counts each sender's sends here (by rank index).
  void count_per_sender(std::vector<std::uint64_t>* per_from) { per_from_ = per_from; }
  void push_back(const Send& x) {
    if (per_send_ > 0) {
      ++count_;
      if (per_from_ != nullptr) ++(*per_from_)[x.from];
      if (count_ * per_send_ > budget_) throw PlanOverBudget(count_ * per_send_, budget_);
      return;
    }
    // Where the vector grows, its old and new arrays are held at once.
    if (v_.size() == v_.capacity()) {
      const std::uint64_t held = 3 * std::max<std::uint64_t>(v_.size(), 1) * sizeof(Send);
      if (held > budget_) throw PlanOverBudget(held, budget_);
    }
    v_.push_back(x);
  }
  bool counting() const { return per_send_ > 0; }
  std::size_t size() const { return counting() ? count_ : v_.size(); }
  /// Room for `n` sends in one allocation (within the budget).
  void reserve(std::size_t n) {
    if (counting()) return;
    if (n * sizeof(Send) > budget_) throw PlanOverBudget(n * sizeof(Send), budget_);
    v_.reserve(n);
  }
  // (Not while counting: nothing is stored.)
  Send& operator[](std::size_t i) {
    FABRICSIM_DEBUG_ASSERT(!counting(), "a schedule read back a send while it was being counted");
    return v_[i];
  }
  const Send& operator[](std::size_t i) const {
    FABRICSIM_DEBUG_ASSERT(!counting(), "a schedule read back a send while it was being counted");
    return v_[i];
  }

 private:
  std::vector<Send> v_;
  std::vector<std::uint64_t>* per_from_ = nullptr;
  std::size_t count_ = 0;
  std::uint64_t budget_;
  std::uint64_t per_send_;
};

struct Schedule {
  explicit Schedule(std::uint64_t budget, std::uint64_t per_send = 0) : sends(budget, per_send) {}
  SendList sends;
  std::vector<Barrier> barriers;
  // One new barrier per rank 0..n-1.
  std::vector<std::int32_t> barrier_per_rank(std::uint32_t n, bool reduce) {
    std::vector<std::int32_t> ids(n);
    for (std::uint32_t r = 0; r < n; ++r) {
      ids[r] = static_cast<std::int32_t>(barriers.size());
      barriers.push_back(Barrier{r, reduce, -1});
    }
    return ids;
  }
};

// Rank r's part j of an S-byte buffer split n ways.
std::uint64_t part(std::uint64_t S, std::uint32_t n, std::uint32_t j) { return S / n + (j < S % n ? 1 : 0); }

// Ring (allreduce: 2(n-1) steps, the first n-1 reducing; reduce_scatter:
// n-1 reducing; allgather: n-1) in direction `dir` (+1: to r+1, -1: to r-1)
// and pairwise alltoall (step i: r -> r+i+1), every step's message in C
// chunks; chunk c of step s+1 waits for chunk c of step s.  `member`: the
// ring's ranks (member[i] is its i-th), else 0..n-1.  `wait` (by ring
// position): a barrier the first step's sends wait for (a later phase of a
// composed algorithm); `feed`: the barrier each position's receipts count
// towards.
void append_ring(Schedule& sc, CollectiveOp op, std::uint64_t S, std::uint32_t n, std::uint64_t chunk_bytes, int dir,
                 const std::vector<std::uint32_t>* member = nullptr, const std::vector<std::int32_t>* wait = nullptr,
                 const std::vector<std::int32_t>* feed = nullptr) {
  SendList& out = sc.sends;
  const auto rank_of = [&](std::uint32_t i) { return member ? (*member)[i] : i; };
  const bool allreduce = op == CollectiveOp::Allreduce;
  const bool reduces = allreduce || op == CollectiveOp::ReduceScatter;
  const bool alltoall = op == CollectiveOp::Alltoall;
  const std::uint32_t steps = allreduce ? 2 * (n - 1) : n - 1;
  const std::uint64_t smallest = S / n;
  const std::uint64_t C =
      chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, std::min(smallest, (smallest + chunk_bytes - 1) / chunk_bytes));
  const std::uint64_t base = out.size();
  const std::uint32_t fwd = dir > 0 ? 1 : n - 1;  // r + fwd = the next rank in this direction
  for (std::uint32_t s = 0; s < steps; ++s)
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t to = alltoall ? (r + s + 1) % n : (r + fwd) % n;
      const std::uint64_t bytes =
          alltoall ? part(S, n, to) : part(S, n, static_cast<std::uint32_t>((r + static_cast<std::uint64_t>(n - fwd) * (s % n)) % n));
      // The message r received in step s-1 came from r-1 (ring) or r-s (pairwise).
      const std::uint32_t prev_from = alltoall ? (r + n - s % n) % n : (r + n - fwd) % n;
      for (std::uint64_t c = 0; c < C; ++c) {
        Send x{rank_of(r), rank_of(to), bytes / C + (c < bytes % C ? 1 : 0)};
        x.after = s == 0 ? -1 : static_cast<std::int64_t>(base + ((s - 1) * std::uint64_t{n} + prev_from) * C + c);
        x.reduced = reduces && s >= 1 && s < n;
        if (wait && s == 0) x.wait = (*wait)[r];
        if (feed) x.feed = (*feed)[to];
        out.push_back(x);
      }
    }
}

// Two-level allreduce over equal groups of G ranks: a reduce-scatter ring
// in each group, an allreduce ring of each 1/G part across the groups
// (among the g-th members of every group), an allgather ring in each
// group.  A rank's second phase starts once it has received (and reduced)
// all of its first, its third once it has its second.  `hierarchical`: the
// groups are GPU servers; `torus_2d`: the rows of a grid, and a second
// instance on the columns, the other way round.
void append_two_level(Schedule& sc, std::uint64_t S, const std::vector<std::vector<std::uint32_t>>& groups,
                      std::uint32_t n, std::uint64_t chunk_bytes, int dir) {
  const auto G = static_cast<std::uint32_t>(groups[0].size());
  const auto k = static_cast<std::uint32_t>(groups.size());
  // Barriers by rank (schedule-wide ids), fed by the previous phase.
  const std::vector<std::int32_t> b1 = sc.barrier_per_rank(n, true), b2 = sc.barrier_per_rank(n, false);
  const auto by_position = [&](const std::vector<std::int32_t>& b, const std::vector<std::uint32_t>& members) {
    std::vector<std::int32_t> v;
    for (std::uint32_t r : members) v.push_back(b[r]);
    return v;
  };
  for (const auto& g : groups) {
    const auto f = by_position(b1, g);
    append_ring(sc, CollectiveOp::ReduceScatter, S, G, chunk_bytes, dir, &g, nullptr, &f);
  }
  std::vector<std::uint32_t> members;
  for (std::uint32_t j = 0; j < G; ++j) {
    members.clear();
    for (std::uint32_t q = 0; q < k; ++q) members.push_back(groups[q][j]);
    const auto w = by_position(b1, members), f = by_position(b2, members);
    append_ring(sc, CollectiveOp::Allreduce, part(S, G, j), k, chunk_bytes, dir, &members, &w, &f);
  }
  for (const auto& g : groups) {
    const auto w = by_position(b2, g);
    append_ring(sc, CollectiveOp::Allgather, S, G, chunk_bytes, dir, &g, &w, nullptr);
  }
}

// Two edge-disjoint Hamiltonian cycles of a rows x cols torus (spec
// hammingmesh.md 7.3), of the diagonal-switch kind: with D a union of the
// g = gcd(rows, cols) anti-diagonal classes (i + j) mod g, red goes
// (i,j) -> (i,j+1) off D and (i,j) -> (i+1,j) on D, green the other way
// round.  Every node then has one red and one green edge out and in (the
// classes are closed under (i-1, j+1)), so the two cover all 2 rows cols
// edges once; what is left is that both be single cycles.  For a square
// m x m grid D = {i + j = m - 1 (mod m)} is the spec's construction; for
// other shapes the first D of one or two classes that works is taken
// (it exists for 8x4, 9x3, 16x8, 6x4, 10x8, ..., not for e.g. 12x8 or
// 4x12, nor when rows and cols are coprime).  Grid position (i,j) is
// rank i*cols + j.  Empty when no such D is found.
std::vector<std::uint32_t> diagonal_cycle(std::uint32_t rows, std::uint32_t cols, const std::vector<std::uint8_t>& on_d,
                                          bool green) {
  const std::uint32_t g = static_cast<std::uint32_t>(on_d.size());
  std::vector<std::uint32_t> order;
  order.reserve(static_cast<std::size_t>(rows) * cols);
  std::uint32_t i = 0, j = 0;
  do {
    order.push_back(i * cols + j);
    const bool d = on_d[(i + j) % g] != 0;
    if (d == green)
      j = (j + 1) % cols;
    else
      i = (i + 1) % rows;
  } while ((i != 0 || j != 0) && order.size() <= static_cast<std::size_t>(rows) * cols);
  if (order.size() != static_cast<std::size_t>(rows) * cols) return {};
  return order;
}

std::array<std::vector<std::uint32_t>, 2> hamiltonian_cycles(std::uint32_t rows, std::uint32_t cols) {
  const std::uint32_t g = std::gcd(rows, cols);
  if (rows < 3 || cols < 3) return {};
  const auto attempt = [&](const std::vector<std::uint8_t>& on_d) -> std::array<std::vector<std::uint32_t>, 2> {
    auto red = diagonal_cycle(rows, cols, on_d, false);
    if (red.empty()) return {};
    auto green = diagonal_cycle(rows, cols, on_d, true);
    if (green.empty()) return {};
    return {std::move(red), std::move(green)};
  };
  std::vector<std::uint8_t> on_d(g, 0);
  for (std::uint32_t a = g; a-- > 0;) {  // one class, the last first (the square case)
    on_d[a] = 1;
    if (auto c = attempt(on_d); !c[0].empty()) return c;
    for (std::uint32_t b = a; b-- > 0;) {  // two classes
      on_d[b] = 1;
      if (auto c = attempt(on_d); !c[0].empty()) return c;
      on_d[b] = 0;
    }
    on_d[a] = 0;
  }
  return {};
}

// Direct: every rank sends its part j to rank j at once (alltoall: that is
// all; allreduce: reduce-scatter), and for allreduce each rank, once it has
// received and reduced all n-1 parts of its own, sends the result to every
// other rank (allgather); allgather alone is that second half.
void append_direct(Schedule& sc, CollectiveOp op, std::uint64_t S, std::uint32_t n) {
  const bool scatter = op != CollectiveOp::Allgather;
  const bool gather = op == CollectiveOp::Allreduce || op == CollectiveOp::Allgather;
  std::vector<std::int32_t> barrier;
  if (scatter && gather) barrier = sc.barrier_per_rank(n, true);
  if (scatter)
    for (std::uint32_t r = 0; r < n; ++r)
      for (std::uint32_t k = 1; k < n; ++k) {
        Send x{r, (r + k) % n, part(S, n, (r + k) % n)};
        if (gather) x.feed = barrier[x.to];
        sc.sends.push_back(x);
      }
  if (gather)
    for (std::uint32_t r = 0; r < n; ++r)
      for (std::uint32_t k = 1; k < n; ++k) {
        Send x{r, (r + k) % n, part(S, n, r)};
        if (scatter) x.wait = barrier[r];
        sc.sends.push_back(x);
      }
}

// Dissemination barrier: in round k (k < ceil(log2 n)) rank r sends a
// one-byte message to r + 2^k once it has received round k-1's message
// (from r - 2^(k-1)).
void append_barrier(Schedule& sc, std::uint32_t n) {
  const std::int64_t base = static_cast<std::int64_t>(sc.sends.size());
  std::uint32_t rounds = 0;
  while ((1u << rounds) < n) ++rounds;
  for (std::uint32_t k = 0; k < rounds; ++k)
    for (std::uint32_t r = 0; r < n; ++r) {
      Send x{r, (r + (1u << k)) % n, 1};
      if (k > 0) x.after = base + static_cast<std::int64_t>((k - 1) * n + (r + n - (1u << (k - 1))) % n);
      sc.sends.push_back(x);
    }
}

// One binary tree of a double binary tree allreduce over `S` bytes: ranks
// at heap positions (parent of position i: (i-1)/2; `reversed`: rank n-1-i
// at position i, so that the leaves of one tree are mostly inner nodes of
// the other).  Every non-root position sends its (reduced) data up once
// its children's have arrived; the root, and then every inner node, sends
// the result down once it has it.  C chunks pipeline through the tree.
void append_tree(Schedule& sc, std::uint64_t S, std::uint32_t n, std::uint64_t chunk_bytes, bool reversed) {
  const std::uint64_t C =
      chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, std::min<std::uint64_t>(S, (S + chunk_bytes - 1) / chunk_bytes));
  SendList& out = sc.sends;
  const auto rank = [&](std::uint32_t pos) { return reversed ? n - 1 - pos : pos; };
  const std::int64_t up0 = static_cast<std::int64_t>(out.size());
  const std::int64_t down0 = up0 + static_cast<std::int64_t>((n - 1) * C);
  const auto up = [&](std::uint32_t i, std::uint64_t c) { return up0 + static_cast<std::int64_t>((i - 1) * C + c); };
  const auto down = [&](std::uint32_t i, std::uint64_t c) { return down0 + static_cast<std::int64_t>((i - 1) * C + c); };
  const auto child = [&](std::uint32_t i, std::uint32_t k, std::uint64_t c) {
    const std::uint32_t ch = 2 * i + 1 + k;
    return ch < n ? up(ch, c) : std::int64_t{-1};
  };
  for (std::uint32_t i = 1; i < n; ++i)
    for (std::uint64_t c = 0; c < C; ++c) {
      Send x{rank(i), rank((i - 1) / 2), S / C + (c < S % C ? 1 : 0), child(i, 0, c), true, child(i, 1, c)};
      if (x.after < 0) x.reduced = false;
      out.push_back(x);
    }
  for (std::uint32_t i = 1; i < n; ++i)
    for (std::uint64_t c = 0; c < C; ++c) {
      const std::uint32_t p = (i - 1) / 2;
      Send x{rank(p), rank(i), S / C + (c < S % C ? 1 : 0), p == 0 ? child(0, 0, c) : down(p, c), p == 0,
             p == 0 ? child(0, 1, c) : -1};
      out.push_back(x);
    }
}

// Broadcast and reduce from/to `root`, in C chunks.  Ring: a chain from the
// root round the ring (reduce: from the rank after the root round to the
// root), each rank passing a chunk on once it has it (reduce: reduced with
// its own).  Tree: a binary tree in heap order over the ranks starting at
// the root (position i is rank (root + i) mod n); broadcast sends down,
// reduce up (a node sends once both children's chunks have arrived).
void append_rooted(Schedule& sc, CollectiveOp op, std::uint64_t S, std::uint32_t n, std::uint64_t chunk_bytes,
                   std::uint32_t root, bool tree) {
  const std::uint64_t C =
      chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, std::min<std::uint64_t>(S, (S + chunk_bytes - 1) / chunk_bytes));
  SendList& out = sc.sends;
  const bool reduce = op == CollectiveOp::Reduce;
  const std::int64_t base = static_cast<std::int64_t>(out.size());
  const auto bytes = [&](std::uint64_t c) { return S / C + (c < S % C ? 1 : 0); };
  // Index of the send into position i (i = 1..n-1) of chunk c: base + (i-1)*C + c.
  const auto into = [&](std::uint32_t i, std::uint64_t c) { return base + static_cast<std::int64_t>((i - 1) * C + c); };
  if (!tree) {
    // Chain positions 0..n-1; the send into position i comes from position i-1.
    const auto rank = [&](std::uint32_t i) { return reduce ? (root + 1 + i) % n : (root + i) % n; };
    for (std::uint32_t i = 1; i < n; ++i)
      for (std::uint64_t c = 0; c < C; ++c)
        out.push_back(Send{rank(i - 1), rank(i), bytes(c), i >= 2 ? into(i - 1, c) : -1, reduce && i >= 2});
    return;
  }
  const auto rank = [&](std::uint32_t i) { return (root + i) % n; };
  for (std::uint32_t i = 1; i < n; ++i)
    for (std::uint64_t c = 0; c < C; ++c) {
      const std::uint32_t p = (i - 1) / 2;
      if (!reduce) {  // parent -> i, once the parent has it
        out.push_back(Send{rank(p), rank(i), bytes(c), p == 0 ? -1 : into(p, c), false});
      } else {  // i -> parent, once i's children have arrived
        const std::uint32_t c1 = 2 * i + 1, c2 = 2 * i + 2;
        out.push_back(Send{rank(i), rank(p), bytes(c), c1 < n ? into(c1, c) : -1, c1 < n, c2 < n ? into(c2, c) : -1});
      }
    }
}

// Recursive halving-doubling (Rabenseifner) allreduce: with m = floor(log2
// n) and p = 2^m, the n - p ranks above p first send their buffer to rank
// r - p (reduced there), the p ranks reduce-scatter by recursive halving
// (step k: exchange half of what is left with rank r xor p/2^(k+1)) and
// allgather by recursive doubling (distances 1, 2, ..., p/2, the bytes
// doubling from S/p), and the folded ranks get the result back.  Sizes
// round up, so S not divisible by p moves a few bytes more.
void append_halving_doubling(Schedule& sc, std::uint64_t S, std::uint32_t n) {
  std::uint32_t m = 0;
  while ((2u << m) <= n) ++m;
  const std::uint32_t p = 1u << m;
  SendList& out = sc.sends;
  std::vector<std::int64_t> last_recv(n, -1);  // schedule index of each rank's latest receive
  std::vector<std::uint8_t> last_reduced(n, 0);
  auto send = [&](std::uint32_t from, std::uint32_t to, std::uint64_t bytes) {
    out.push_back(Send{from, to, bytes, last_recv[from], static_cast<bool>(last_reduced[from])});
    return static_cast<std::int64_t>(out.size() - 1);
  };
  // Fold: rank p + i sends everything to rank i.
  std::vector<std::int64_t> fold_msg(n, -1);
  for (std::uint32_t r = p; r < n; ++r) fold_msg[r - p] = send(r, r - p, S);
  for (std::uint32_t r = 0; r + p < n; ++r) {
    last_recv[r] = fold_msg[r];
    last_reduced[r] = 1;
  }
  // Reduce-scatter by recursive halving, then allgather by recursive doubling.
  std::uint64_t bytes = S;
  for (int phase = 0; phase < 2; ++phase)
    for (std::uint32_t k = 0; k < m; ++k) {
      const std::uint32_t d = phase == 0 ? 1u << (m - 1 - k) : 1u << k;
      if (phase == 0) bytes = (bytes + 1) / 2;
      std::vector<std::int64_t> msg(p);
      for (std::uint32_t r = 0; r < p; ++r) msg[r] = send(r, r ^ d, bytes);
      for (std::uint32_t r = 0; r < p; ++r) {
        last_recv[r] = msg[r ^ d];
        last_reduced[r] = phase == 0 ? 1 : 0;
      }
      if (phase == 1) bytes = std::min<std::uint64_t>(S, bytes * 2);
    }
  // Unfold: rank i sends the result to rank p + i.
  for (std::uint32_t r = p; r < n; ++r) send(r - p, r, S);
}

// The algorithms: a name, the operations it implements, its smallest size
// per rank and channel (in bytes: every message carries at least one), and
// its schedule.  One entry per algorithm; a name not here is refused.
using Op = CollectiveOp;
constexpr unsigned op_bit(Op op) { return 1u << static_cast<unsigned>(op); }
constexpr unsigned kSplitOps = op_bit(Op::Allreduce) | op_bit(Op::ReduceScatter) | op_bit(Op::Allgather);
constexpr unsigned kRootedOps = op_bit(Op::Broadcast) | op_bit(Op::Reduce);
constexpr unsigned kScatterOps = op_bit(Op::Scatter) | op_bit(Op::Gather);

// What a schedule function may look at besides the operation: the
// communicator's size, its endpoints in rank order and the fabric (tacos
// synthesizes for the NPU graph they make).
struct ScheduleContext {
  std::uint32_t n;
  const net::Topology& topology;
  const std::vector<net::EndpointId>& ranks;
  std::uint64_t budget = UINT64_MAX;  ///< bytes its sends may take (SendList)
  std::size_t sends = 0;              ///< how many it makes, if known (counted): reserved at once
};

struct CollectiveAlgorithm {
  const char* name;
  unsigned ops;
  std::uint64_t bytes_per_rank;  ///< minimum size: this x ranks x channels (rooted ops: x channels; barrier: 0)
  void (*schedule)(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx);
};

std::pair<std::uint32_t, std::uint32_t> collective_grid(const CollectiveSpec& spec, std::uint32_t n);

// The sends appended since `from` form concurrent instance k, with
// connections of their own (as NCCL runs them on separate channels): its
// messages are not ordered behind another instance's to the same peer.
void mark_instance(Schedule& sc, std::size_t from, std::uint8_t k) {
  if (sc.sends.counting()) return;
  for (std::size_t i = from; i < sc.sends.size(); ++i) sc.sends[i].conn = k;
}

void schedule_ring(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  if (spec.op == Op::Broadcast || spec.op == Op::Reduce)  // a chain round the ring
    append_rooted(sc, spec.op, spec.bytes, n, spec.chunk_bytes, spec.root, false);
  else
    append_ring(sc, spec.op, spec.bytes, n, spec.chunk_bytes, +1);
}

void schedule_bidirectional_ring(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  // Half the buffer each way round (the first half one byte more when S is odd).
  const std::uint64_t S = spec.bytes;
  append_ring(sc, spec.op, S - S / 2, n, spec.chunk_bytes, +1);
  const std::size_t second = sc.sends.size();
  append_ring(sc, spec.op, S / 2, n, spec.chunk_bytes, -1);
  mark_instance(sc, second, 1);
}

void schedule_multi_ring(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  // Two edge-disjoint Hamiltonian cycles, each used in both directions:
  // four rings of a quarter of the data each.
  const std::uint64_t S = spec.bytes;
  const auto [rows, cols] = collective_grid(spec, n);
  const auto cycles = hamiltonian_cycles(rows, cols);
  const std::uint64_t quarter[4] = {S / 4 + (S % 4 > 0), S / 4 + (S % 4 > 1), S / 4 + (S % 4 > 2), S / 4};
  for (int k = 0; k < 4; ++k) {
    const std::size_t from = sc.sends.size();
    append_ring(sc, spec.op, quarter[k], n, spec.chunk_bytes, k % 2 == 0 ? +1 : -1, &cycles[k / 2]);
    mark_instance(sc, from, static_cast<std::uint8_t>(k));
  }
}

// TopoOpt's AllReduce over its rings (spec §5.2: one AllReduce load-balanced
// over the TotientPerms rings of its group, bytes split equally).  The
// communicator's servers (net::server_of_nodes; in ascending node order)
// are g members; every step p (gcd(p, g) = 1) for which the fabric has a
// data link from member i to member i + p, for all i, is a ring.  Each ring
// visits the servers in its step's order, a server's ranks consecutively
// (in rank order: the intra-server part rides its intra-server links), and
// carries 1/R of the buffer as its own instance.  Without such rings (one
// server, a switched fabric, an optical fabric of every circuit) it is the
// plain ring in rank order.
void schedule_topoopt_rings(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const net::Topology& topo = cx.topology;
  if (topo.ocs_degree > 0) {
    // An optical fabric's links are every possible circuit, not rings: the
    // plain ring, whose neighbours Algorithm 5 gives the circuits.
    append_ring(sc, spec.op, spec.bytes, cx.n, spec.chunk_bytes, +1);
    return;
  }
  const std::vector<net::NodeId> server = net::server_of_nodes(topo);
  std::vector<net::NodeId> servers;  // ascending
  std::unordered_map<net::NodeId, std::vector<std::uint32_t>> ranks_of;
  for (std::uint32_t r = 0; r < cx.n; ++r) {
    const net::NodeId s = server[topo.endpoint_node(cx.ranks[r])];
    if (ranks_of[s].empty()) servers.push_back(s);
    ranks_of[s].push_back(r);
  }
  std::sort(servers.begin(), servers.end());
  const auto g = static_cast<std::uint32_t>(servers.size());
  // Data links between servers (any node of one to any node of the other).
  std::unordered_set<std::uint64_t> linked;
  for (const net::Link& l : topo.links())
    if (l.carries_data && server[l.src] != server[l.dst])
      linked.insert(std::uint64_t{server[l.src]} << 32 | server[l.dst]);
  std::vector<std::uint32_t> steps;
  for (std::uint32_t p = 1; p < g && g > 1; ++p) {
    if (std::gcd(p, g) != 1) continue;
    bool ring = true;
    for (std::uint32_t i = 0; i < g && ring; ++i)
      ring = linked.count(std::uint64_t{servers[i]} << 32 | servers[(i + p) % g]) > 0;
    if (ring) steps.push_back(p);
  }
  if (steps.size() > 255) steps.resize(255);  // (instances are 8-bit)
  if (steps.empty()) {
    append_ring(sc, spec.op, spec.bytes, cx.n, spec.chunk_bytes, +1);
    return;
  }
  const std::uint64_t S = spec.bytes;
  const auto R = static_cast<std::uint32_t>(steps.size());
  for (std::uint32_t k = 0; k < R; ++k) {
    std::vector<std::uint32_t> order;
    order.reserve(cx.n);
    for (std::uint32_t i = 0, at = 0; i < g; ++i, at = (at + steps[k]) % g)
      for (std::uint32_t r : ranks_of[servers[at]]) order.push_back(r);
    const std::size_t from = sc.sends.size();
    append_ring(sc, spec.op, part(S, R, k), cx.n, spec.chunk_bytes, +1, &order);
    mark_instance(sc, from, static_cast<std::uint8_t>(k));
  }
}

void schedule_halving_doubling(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  append_halving_doubling(sc, spec.bytes, n);
}

void schedule_double_binary_tree(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  // Two trees on two channels: a pair joined in both (a child in one, a
  // parent in the other) has a connection per tree.
  const std::uint64_t S = spec.bytes;
  append_tree(sc, S - S / 2, n, spec.chunk_bytes, false);
  const std::size_t second = sc.sends.size();
  append_tree(sc, S / 2, n, spec.chunk_bytes, true);
  mark_instance(sc, second, 1);
}

void schedule_torus_2d(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  // Half the data over rows then columns, the other half over columns
  // then rows the other way round: all four ports of a torus node busy.
  const std::uint64_t S = spec.bytes;
  const auto [rows, cols] = collective_grid(spec, n);
  std::vector<std::vector<std::uint32_t>> by_row(rows), by_col(cols);
  for (std::uint32_t r = 0; r < n; ++r) {
    by_row[r / cols].push_back(r);
    by_col[r % cols].push_back(r);
  }
  append_two_level(sc, S - S / 2, by_row, n, spec.chunk_bytes, +1);
  const std::size_t second = sc.sends.size();
  append_two_level(sc, S / 2, by_col, n, spec.chunk_bytes, -1);
  mark_instance(sc, second, 1);
}

void schedule_hierarchical(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  // Servers of G consecutive ranks.
  const std::uint32_t G = spec.gpus_per_server;
  std::vector<std::vector<std::uint32_t>> servers(n / G);
  for (std::uint32_t r = 0; r < n; ++r) servers[r / G].push_back(r);
  append_two_level(sc, spec.bytes, servers, n, spec.chunk_bytes, +1);
}

void schedule_direct(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  if (spec.op == Op::Scatter || spec.op == Op::Gather) {
    // Part j of the root's buffer straight to (from) rank j.
    for (std::uint32_t j = 0; j < n; ++j)
      if (j != spec.root)
        sc.sends.push_back(spec.op == Op::Scatter ? Send{spec.root, j, part(spec.bytes, n, j)}
                                                  : Send{j, spec.root, part(spec.bytes, n, j)});
    return;
  }
  append_direct(sc, spec.op, spec.bytes, n);
}

// A synthesized schedule (workload/tacos.hpp): one message per send.  A
// send of chunk c from u waits for the receipts of c at u that end before
// it starts in the schedule: one directly, several through a chain of
// barriers at u (each receipt feeds one barrier, each barrier waits for the
// previous one), reduced first when the send is a reducing one.  Sends of
// one logical link keep the schedule's order (the per-connection order of
// append_collective, as the sends are listed by start time).
void schedule_tacos(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  std::shared_ptr<const TacosPlan> plan = spec.tacos;
  if (!plan) plan = plan_tacos(cx.topology, cx.ranks, spec, TacosOptions{});
  const synth::Schedule& S = plan->schedule;
  const auto& links = plan->graph.links;
  const std::uint64_t npus = plan->graph.npus;
  const auto key = [&](std::uint32_t chunk, std::uint32_t npu) { return chunk * npus + npu; };
  // Receipts of every (chunk, NPU), in order of arrival in the schedule.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> receipts;
  for (std::uint32_t k = 0; k < S.sends.size(); ++k) receipts[key(S.sends[k].chunk, links[S.sends[k].link].dst)].push_back(k);
  for (auto& [_, v] : receipts)
    std::stable_sort(v.begin(), v.end(), [&](std::uint32_t a, std::uint32_t b) { return S.sends[a].end_ns < S.sends[b].end_ns; });
  struct Chain {
    std::size_t covered = 0;  // receipts fed into the chain's barriers
    std::int32_t last = -1;   // its latest barrier
  };
  std::unordered_map<std::uint64_t, Chain> chains;
  const std::size_t base = sc.sends.size();
  for (std::uint32_t k = 0; k < S.sends.size(); ++k) {
    const synth::Send& y = S.sends[k];
    const std::uint32_t u = links[y.link].src;
    Send x{u, links[y.link].dst, plan->chunk_bytes[y.chunk]};
    const auto it = receipts.find(key(y.chunk, u));
    std::size_t m = 0;  // receipts of the chunk at u before this send starts
    if (it != receipts.end()) {
      const double slack = 1e-9 * std::max(1.0, std::fabs(y.start_ns));
      while (m < it->second.size() && S.sends[it->second[m]].end_ns <= y.start_ns + slack) ++m;
    }
    if (m == 1) {
      x.after = static_cast<std::int64_t>(base + it->second[0]);
      x.reduced = y.reduce;
    } else if (m > 1) {
      Chain& ch = chains[key(y.chunk, u)];
      if (m > ch.covered) {
        const auto b = static_cast<std::int32_t>(sc.barriers.size());
        sc.barriers.push_back(Barrier{u, y.reduce, ch.last});
        if (!sc.sends.counting())
          for (std::size_t i = ch.covered; i < m; ++i) sc.sends[base + it->second[i]].feed = b;
        ch.covered = m;
        ch.last = b;
      }
      x.wait = ch.last;
    }
    sc.sends.push_back(x);
  }
}

void schedule_pairwise(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  append_ring(sc, spec.op, spec.bytes, n, spec.chunk_bytes, +1);  // (append_ring's alltoall steps)
}

void schedule_tree(Schedule& sc, const CollectiveSpec& spec, const ScheduleContext& cx) {
  const std::uint32_t n = cx.n;
  append_rooted(sc, spec.op, spec.bytes, n, spec.chunk_bytes, spec.root, true);
}

void schedule_dissemination(Schedule& sc, const CollectiveSpec&, const ScheduleContext& cx) { append_barrier(sc, cx.n); }

constexpr CollectiveAlgorithm kAlgorithms[] = {
    {"ring", kSplitOps | kRootedOps, 1, schedule_ring},
    {"bidirectional_ring", kSplitOps, 2, schedule_bidirectional_ring},
    {"multi_ring", kSplitOps, 4, schedule_multi_ring},
    {"topoopt_rings", kSplitOps, 1, schedule_topoopt_rings},
    {"halving_doubling", op_bit(Op::Allreduce), 1, schedule_halving_doubling},
    {"double_binary_tree", op_bit(Op::Allreduce), 2, schedule_double_binary_tree},
    {"torus_2d", op_bit(Op::Allreduce), 2, schedule_torus_2d},
    {"hierarchical", op_bit(Op::Allreduce), 1, schedule_hierarchical},
    {"direct", kSplitOps | op_bit(Op::Alltoall) | kScatterOps, 1, schedule_direct},
    {"pairwise", op_bit(Op::Alltoall), 1, schedule_pairwise},
    {"tree", kRootedOps, 1, schedule_tree},
    {"dissemination", op_bit(Op::Barrier), 0, schedule_dissemination},
    {"tacos", kSplitOps | kRootedOps | kScatterOps, 1, schedule_tacos},
};

const CollectiveAlgorithm* find_algorithm(const std::string& name) {
  for (const auto& a : kAlgorithms)
    if (name == a.name) return &a;
  return nullptr;
}

// "allreduce: ring, ...; reduce_scatter: ...": what implements each operation.
std::string algorithms_by_op() {
  std::string out;
  for (unsigned o = 0; o <= static_cast<unsigned>(kLastCollectiveOp); ++o) {
    out += std::string(o ? "; " : "") + to_string(static_cast<Op>(o)) + ":";
    const char* sep = " ";
    for (const auto& a : kAlgorithms)
      if (a.ops & (1u << o)) {
        out += sep;
        out += a.name;
        sep = ", ";
      }
  }
  return out;
}

}  // namespace


std::vector<std::string> collective_algorithms() {
  std::vector<std::string> out;
  for (const auto& a : kAlgorithms) out.emplace_back(a.name);
  return out;
}

bool implements(const std::string& algorithm, CollectiveOp op) {
  const CollectiveAlgorithm* a = find_algorithm(algorithm);
  return a != nullptr && (a->ops & op_bit(op)) != 0;
}

std::uint64_t min_collective_bytes(const CollectiveSpec& spec, std::uint32_t n) {
  // Every message must carry at least one byte, in every channel.
  const std::uint64_t c = std::max(1u, spec.channels);
  if (spec.op == CollectiveOp::Barrier) return 0;
  if (spec.op == CollectiveOp::Broadcast || spec.op == CollectiveOp::Reduce) return c;
  const CollectiveAlgorithm* a = find_algorithm(spec.algorithm);
  return (a ? a->bytes_per_rank : 1) * n * c;
}

namespace {
// The grid of torus_2d and multi_ring: rows x columns.
std::pair<std::uint32_t, std::uint32_t> collective_grid(const CollectiveSpec& spec, std::uint32_t n) {
  std::uint32_t rows = spec.grid_rows;
  if (rows == 0) {
    rows = static_cast<std::uint32_t>(std::lround(std::sqrt(static_cast<double>(n))));
    if (rows * rows != n) return {0, 0};
  }
  if (rows == 0 || n % rows != 0) return {0, 0};
  return {rows, n / rows};
}
}  // namespace

void check_collective(const CollectiveSpec& spec, std::uint32_t n, const std::string& prefix) {
  const std::string& a = spec.algorithm;
  const CollectiveOp op = spec.op;
  const bool rooted = op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce || op == CollectiveOp::Scatter ||
                      op == CollectiveOp::Gather;
  if (find_algorithm(a) == nullptr)
    throw ConfigError(prefix + ".algorithm: unknown collective algorithm '" + a + "' (" + algorithms_by_op() + ")");
  if (!implements(a, op))
    throw ConfigError(prefix + ".algorithm: '" + a + "' is not implemented for " + to_string(op) + " (" +
                      algorithms_by_op() + ")");
  if (rooted && spec.root >= n)
    throw ConfigError(prefix + ".root: " + std::to_string(spec.root) + " is not a rank of the " + std::to_string(n) +
                      "-rank communicator");
  if (a == "tacos" && spec.channels > 1)
    throw ConfigError(prefix + ".channels: tacos synthesizes one schedule for the whole buffer (its chunks are "
                      "the parallelism); set channels = 1 and chunk_bytes for more chunks");
  if (a == "hierarchical") {
    const std::uint32_t G = spec.gpus_per_server;
    if (G < 2 || n % G != 0 || n / G < 2)
      throw ConfigError(prefix + ".algorithm: hierarchical needs servers of several GPUs (a leaf_spine with "
                        "gpus_per_server > 1) and a communicator of at least two whole servers (" +
                        std::to_string(n) + " ranks, " + std::to_string(G) + " GPUs per server)");
  }
  if (a == "torus_2d" || a == "multi_ring") {
    const auto [rows, cols] = collective_grid(spec, n);
    if (rows < 2 || cols < 2)
      throw ConfigError(prefix + ".grid_rows: " + a + " arranges the " + std::to_string(n) +
                        " ranks as a grid of rows x columns (both at least 2); " +
                        (spec.grid_rows == 0 ? std::string("the rank count is not a square, so give grid_rows")
                                             : std::to_string(spec.grid_rows) + " rows do not divide it"));
    if (a == "multi_ring" && hamiltonian_cycles(rows, cols)[0].empty())
      throw ConfigError(prefix + ".grid_rows: multi_ring found no two edge-disjoint Hamiltonian cycles of the "
                        "diagonal-switch kind on a " + std::to_string(rows) + " x " + std::to_string(cols) +
                        " grid (square grids of at least 3 x 3 have them, as do e.g. 8 x 4, 9 x 3, 16 x 8; "
                        "see docs/model.md); choose another grid_rows or torus_2d");
  }
  // Chunks of the buffer (a step moves at most all of it): each is a message.
  constexpr std::uint64_t kMaxChunks = 65536;
  if (spec.chunk_bytes > 0 && (spec.bytes + spec.chunk_bytes - 1) / spec.chunk_bytes > kMaxChunks)
    throw ConfigError(prefix + ".chunk_bytes: " + std::to_string(spec.bytes) + " bytes in chunks of " +
                      std::to_string(spec.chunk_bytes) + " are more than " + std::to_string(kMaxChunks) +
                      " chunks; raise chunk_bytes to at least " +
                      std::to_string((spec.bytes + kMaxChunks - 1) / kMaxChunks));
  // Reducing the whole buffer once must take less than 2^61 ps (simulated time is int64 picoseconds).
  if (spec.reduce_gbps > 0 && static_cast<double>(spec.bytes) * 8000.0 / spec.reduce_gbps > 0x1p61)
    throw ConfigError(prefix + ".reduce_gbps: reducing " + std::to_string(spec.bytes) + " bytes at " +
                      fmt::format("{:g}", spec.reduce_gbps) +
                      " Gb/s would take longer than the int64-picosecond range of simulated time (about 106 days)");
  if (spec.bytes < min_collective_bytes(spec, n))
    throw ConfigError(prefix + ".sizes: " + std::to_string(spec.bytes) + " bytes cannot be split over " +
                      std::to_string(n) + " ranks by " + a + " (at least " +
                      std::to_string(min_collective_bytes(spec, n)) + " bytes)");
}

namespace {

// `per_send` > 0: counts the sends (and lists the barriers) without storing
// them, each send standing for `per_send` bytes of the budget (SendList).
Schedule collective_schedule(const CollectiveSpec& spec, const ScheduleContext& cx, std::uint64_t per_send = 0,
                             std::vector<std::uint64_t>* per_from = nullptr) {
  // (A barrier is a dissemination, whatever its algorithm says.)
  const CollectiveAlgorithm* a =
      spec.op == CollectiveOp::Barrier ? find_algorithm("dissemination") : find_algorithm(spec.algorithm);
  if (a == nullptr || (a->ops & op_bit(spec.op)) == 0)
    throw ConfigError("workload.algorithm: " +
                      (a == nullptr ? "unknown collective algorithm '" + spec.algorithm + "'"
                                    : "'" + spec.algorithm + "' is not implemented for " + to_string(spec.op)) +
                      " (" + algorithms_by_op() + ")");
  Schedule sc(cx.budget, per_send);
  sc.sends.count_per_sender(per_from);
  if (per_send == 0) sc.sends.reserve(cx.sends);
  a->schedule(sc, spec, cx);
  return sc;
}

// An operation's channels: the buffer split `channels` ways (the first
// parts a byte larger), a schedule to synthesize synthesized once for all
// of them (tacos runs on one channel, check_collective's rule).
std::vector<CollectiveSpec> channel_specs(const CollectiveSpec& spec, const net::Topology& topo,
                                          const std::vector<net::EndpointId>& ranks) {
  // A barrier has no buffer to split: one channel.
  const std::uint32_t channels = spec.op == CollectiveOp::Barrier ? 1 : std::max(1u, spec.channels);
  CollectiveSpec whole = spec;
  if (whole.algorithm == "tacos" && whole.op != CollectiveOp::Barrier && !whole.tacos && channels == 1)
    whole.tacos = plan_tacos(topo, ranks, spec, TacosOptions{});
  std::vector<CollectiveSpec> parts(channels, whole);
  for (std::uint32_t c = 0; c < channels; ++c) parts[c].bytes = spec.bytes / channels + (c < spec.bytes % channels ? 1 : 0);
  return parts;
}

// Each channel's sends, counted without storing them (and per sender into
// `per_from`, if given), each standing for `per_send` bytes of `budget`
// (less what the channels before left planned: all but their schedules);
// PlanOverBudget naming the operation once they are over it.
std::vector<std::size_t> count_sends(const std::vector<CollectiveSpec>& parts, const net::Topology& topo,
                                     const std::vector<net::EndpointId>& ranks, std::uint64_t budget,
                                     std::uint64_t total_budget, std::uint64_t per_send,
                                     std::vector<std::uint64_t>* per_from) {
  const auto n = static_cast<std::uint32_t>(ranks.size());
  const CollectiveSpec& spec = parts[0];
  std::vector<std::size_t> counted(parts.size());
  std::uint64_t sends = 0;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    const std::uint64_t spent = sends * (per_send - std::min<std::uint64_t>(per_send, sizeof(Send)));
    const ScheduleContext cx{n, topo, ranks, budget > spent ? budget - spent : 0};
    try {
      counted[c] = collective_schedule(parts[c], cx, per_send, per_from).sends.size();
    } catch (const PlanOverBudget& e) {
      throw PlanOverBudget(
          e.planned() + spent, total_budget,
          fmt::format("one {} by {} over {} ranks is more than {} messages, at least {} of tasks, messages and "
                      "schedule",
                      to_string(spec.op), spec.op == CollectiveOp::Barrier ? "dissemination" : spec.algorithm, n,
                      sends + e.planned() / per_send, util::human_bytes(static_cast<double>(e.planned() + spent))));
    }
    sends += counted[c];
  }
  return counted;
}

}  // namespace

std::vector<std::uint64_t> collective_sends(const CollectiveSpec& spec, const net::Topology& topo,
                                            const std::vector<net::EndpointId>& ranks) {
  std::vector<std::uint64_t> per_from(ranks.size(), 0);
  count_sends(channel_specs(spec, topo, ranks), topo, ranks, UINT64_MAX, UINT64_MAX, 1, &per_from);
  return per_from;
}

void collective_records(net::Network& net, const CollectiveSpec& spec, const std::vector<net::EndpointId>& ranks,
                        net::MessageId first_id, bool describe) {
  const auto n = static_cast<std::uint32_t>(ranks.size());
  const net::Topology& topo = net.topology();
  const std::vector<CollectiveSpec> parts = channel_specs(spec, topo, ranks);
  // (As append_collective: counted first, each schedule then built once at
  // its size; only its sends' records are kept.)
  const std::vector<std::size_t> counted = count_sends(parts, topo, ranks, net.plan_budget(), net.plan_budget(),
                                                       sizeof(Send) + net::Network::message_bytes(), nullptr);
  net::MessageId next_id = first_id;
  for (std::size_t c = 0; c < parts.size(); ++c) {
    const Schedule sc = collective_schedule(parts[c], ScheduleContext{n, topo, ranks, net.plan_budget(), counted[c]});
    for (std::size_t k = 0; k < sc.sends.size(); ++k) {
      const Send& x = sc.sends[k];
      if (describe)
        net.describe_at(next_id++, ranks[x.from], ranks[x.to], x.bytes);
      else
        net.create_at(next_id++, ranks[x.from], ranks[x.to], x.bytes, 0);
    }
  }
}

std::vector<TaskGraph::TaskId> append_collective(TaskGraph& g, const CollectiveSpec& spec,
                                                 const std::vector<net::EndpointId>& ranks,
                                                 const std::vector<TaskGraph::TaskId>& begin, std::uint32_t label,
                                                 net::MessageId first_id, const std::vector<std::uint8_t>* here) {
  using TaskId = TaskGraph::TaskId;
  net::MessageId next_id = first_id;
  const auto n = static_cast<std::uint32_t>(ranks.size());
  FABRICSIM_ASSERT(here == nullptr || (here->size() == n && first_id != kNoId), "a member's part: ids set aside");
  // Member r's events are this process's (every member's without `here`).
  const auto at_here = [&](std::uint32_t r) { return here == nullptr || (*here)[r] != 0; };
  const auto has_begin = [&](std::uint32_t r) { return !begin.empty() && begin[r] != TaskGraph::kNone; };
  std::vector<TaskId> end(n, TaskGraph::kNone);
  for (std::uint32_t r = 0; r < n; ++r) {
    if (!at_here(r)) continue;
    end[r] = g.add_join(ranks[r], label);
    if (has_begin(r)) g.depend(begin[r], end[r]);
  }
  const net::Topology& topo = g.network().topology();
  const std::vector<CollectiveSpec> parts = channel_specs(spec, topo, ranks);
  // Count every channel's sends first, storing none: an operation that
  // cannot fit (each send is at least its schedule entry, its task and its
  // message record) is refused before any of it is built, and each
  // schedule is then allocated once, at its size.  (The graph's own arrays
  // keep growing by doubling: reserved at each operation's size they came
  // out larger at the end of a job of many, 766 MiB against 729 for
  // jobs/papers/topoopt/dedicated.toml.)
  const std::vector<std::size_t> counted =
      count_sends(parts, topo, ranks, g.plan_budget_left(), g.network().plan_budget(),
                  sizeof(Send) + sizeof(TaskGraph::Task) + net::Network::message_bytes(), nullptr);
  for (std::size_t c = 0; c < parts.size(); ++c) {
    const CollectiveSpec& part = parts[c];
    const Schedule sc = collective_schedule(part, ScheduleContext{n, topo, ranks, g.plan_budget_left(), counted[c]});
    std::vector<TaskId> msg(sc.sends.size(), TaskGraph::kNone), bar(sc.barriers.size(), TaskGraph::kNone);
    for (std::size_t k = 0; k < sc.sends.size(); ++k) {
      const Send& x = sc.sends[k];
      if (!at_here(x.from) && !at_here(x.to)) {  // (its id still taken)
        ++next_id;
        continue;
      }
      msg[k] = first_id == kNoId ? g.add_message(ranks[x.from], ranks[x.to], x.bytes, label)
                                 : g.add_message_at(next_id++, ranks[x.from], ranks[x.to], x.bytes, label);
    }
    for (std::size_t b = 0; b < sc.barriers.size(); ++b) {
      if (!at_here(sc.barriers[b].rank)) continue;
      bar[b] = g.add_join(ranks[sc.barriers[b].rank], label, sc.barriers[b].reduce ? spec.reduce_gbps : 0);
      if (sc.barriers[b].wait >= 0) g.depend(bar[static_cast<std::size_t>(sc.barriers[b].wait)], bar[b]);
    }
    // A member's part (`here`): a dependency is added where its task
    // completes (or, a message, leaves its NIC) here; the others, which
    // only a message begun elsewhere would wait for, are not.  Every
    // dependency is local to its sender's or receiver's endpoint.
    std::unordered_map<std::uint64_t, TaskId> last_on_connection;
    for (std::size_t k = 0; k < sc.sends.size(); ++k) {
      const Send& x = sc.sends[k];
      const bool from = at_here(x.from), to = at_here(x.to);
      if (from) {  // (what the sender waits for)
        if (has_begin(x.from)) g.depend(begin[x.from], msg[k]);
        for (const std::int64_t a : {x.after, x.after2}) {
          if (a < 0) continue;
          const SimTime reduce = x.reduced && spec.reduce_gbps > 0
                                     ? core::serialization_time(sc.sends[static_cast<std::size_t>(a)].bytes, spec.reduce_gbps)
                                     : SimTime::zero();
          g.depend(msg[static_cast<std::size_t>(a)], msg[k], reduce);
        }
        if (x.wait >= 0) g.depend(bar[static_cast<std::size_t>(x.wait)], msg[k]);
      }
      if (to) {  // (what waits for its arrival)
        if (x.feed >= 0) g.depend(msg[k], bar[static_cast<std::size_t>(x.feed)]);
        g.depend(msg[k], end[x.to]);
      }
      if (!from) continue;
      g.depend_sent(msg[k], end[x.from]);
      // Per (sender, receiver) connection of the channel and instance,
      // messages go in schedule order.
      const std::uint64_t connection = ((static_cast<std::uint64_t>(x.from) * n + x.to) << 8) | x.conn;
      const auto [it, fresh] = last_on_connection.try_emplace(connection, msg[k]);
      if (!fresh) {
        g.depend_sent(it->second, msg[k]);
        it->second = msg[k];
      }
    }
  }
  return end;
}

CollectiveBenchmark::CollectiveBenchmark(TaskGraph& g, const CollectiveParams& params, std::uint32_t label)
    : params_(params) {
  EndpointPool pool(static_cast<std::uint32_t>(g.network().topology().endpoint_count()));
  plan(g, pool, label);
}

CollectiveBenchmark::CollectiveBenchmark(TaskGraph& g, const CollectiveParams& params, EndpointPool& pool,
                                         std::uint32_t label)
    : params_(params) {
  plan(g, pool, label);
}

void CollectiveBenchmark::plan(TaskGraph& g, EndpointPool& pool, std::uint32_t label) {
  const net::Network& net = g.network();
  ranks_ = communicator(params_, pool);
  for (net::EndpointId e : ranks_) pool.take(e);
  params_.available.clear();  // (an order of every endpoint: not kept per job)
  params_.available.shrink_to_fit();
  const auto n = static_cast<std::uint32_t>(ranks_.size());
  if (params_.sizes.empty()) throw ConfigError("workload.sizes: give at least one size");
  if (params_.iterations == 0) throw ConfigError("workload.iterations: must be at least 1");
  std::vector<TaskGraph::TaskId> prev;  // every rank's end of the previous operation
  if (params_.start > SimTime::zero()) {  // the first one waits for the start time
    for (net::EndpointId e : ranks_) {
      prev.push_back(g.add_join(e, label));
      g.not_before(prev.back(), params_.start);
    }
  }
  for (std::uint32_t si = 0; si < params_.sizes.size(); ++si) {
    CollectiveSpec spec;
    spec.op = params_.op;
    spec.algorithm = params_.algorithm;
    spec.bytes = params_.op == CollectiveOp::Barrier ? 0 : params_.sizes[si];
    spec.chunk_bytes = params_.chunk_bytes;
    spec.channels = params_.channels;
    spec.reduce_gbps = params_.reduce_gbps;
    spec.root = params_.root;
    spec.gpus_per_server = params_.gpus_per_server;
    spec.grid_rows = params_.grid_rows;
    if (n > 1) check_collective(spec, n);
    if (spec.algorithm == "tacos" && n > 1) {  // once per size, for every iteration; the first size's written out
      TacosOptions opt = params_.tacos ? *params_.tacos : TacosOptions{};
      if (si > 0) opt.schedule_out.clear();
      spec.tacos = plan_tacos(net.topology(), ranks_, spec, opt);
      tacos_.push_back(spec.tacos);
    }
    for (std::int32_t it = -static_cast<std::int32_t>(params_.warmup); it < static_cast<std::int32_t>(params_.iterations);
         ++it) {
      CollectiveInstance inst;
      inst.size_index = si;
      inst.iteration = it;
      inst.bytes = spec.bytes;
      // A training iteration: compute first, its overlapped part alongside.
      std::vector<TaskGraph::TaskId> overlapped;
      if (params_.compute > SimTime::zero()) {
        const SimTime tail = SimTime::from_ps(static_cast<std::int64_t>(
            std::llround(static_cast<double>(params_.compute.ps()) * params_.overlap)));
        const SimTime head = params_.compute - tail;
        const bool first = prev.empty();
        if (first) prev.resize(n, TaskGraph::kNone);
        for (std::uint32_t r = 0; r < n; ++r) {
          const TaskGraph::TaskId a = g.add_compute(ranks_[r], head, label);
          if (!first) g.depend(prev[r], a);
          prev[r] = a;
          if (tail > SimTime::zero()) overlapped.push_back(g.add_compute(ranks_[r], tail, label));
        }
        for (std::uint32_t r = 0; r < overlapped.size(); ++r) g.depend(prev[r], overlapped[r]);
      }
      inst.first = static_cast<net::MessageId>(net.message_count());
      if (n > 1) prev = append_collective(g, spec, ranks_, prev, label);
      inst.last = static_cast<net::MessageId>(net.message_count());
      for (std::uint32_t r = 0; r < overlapped.size(); ++r) {
        const TaskGraph::TaskId end = g.add_join(ranks_[r], label);
        g.depend(prev[r], end);
        g.depend(overlapped[r], end);
        prev[r] = end;
      }
      instances_.push_back(inst);
      // Sizes x iterations x the messages of one operation: within the
      // memory the run may use and the 32-bit message ids (checked from the
      // first instance of each size, before the others are planned).
      const double left = static_cast<double>(params_.iterations) - 1 - it;
      const double total = static_cast<double>(net.message_count()) + left * (inst.last - inst.first);
      const auto most = std::min<std::uint64_t>(params_.max_messages, std::numeric_limits<net::MessageId>::max());
      if (total > static_cast<double>(most))
        throw ConfigError(fmt::format(
            "workload.iterations: {} runs of {} messages each (size {}, {} ranks) make at least {:.0f} messages; "
            "a run can hold {} ({}), so lower workload.iterations, workload.warmup or the sizes",
            params_.warmup + params_.iterations, inst.last - inst.first, spec.bytes, n, total, most,
            most < std::numeric_limits<net::MessageId>::max() ? "what engine.memory_limit_gib, or this machine's "
                                                                "memory, leaves for them"
                                                              : "32-bit message ids"));
    }
  }
}

CollectiveWorkload::CollectiveWorkload(net::Network& network, const CollectiveParams& params)
    : net_(network),
      first_message_(static_cast<net::MessageId>(network.message_count())),
      graph_(network, network.simulator()),
      bench_(graph_, params) {
  graph_.start(params.start);
}

std::uint64_t CollectiveWorkload::messages_done() const {
  std::uint64_t k = 0;
  for (net::MessageId m = first_message_; m < net_.message_count(); ++m)
    if (net_.message(m).end_time != SimTime::max()) ++k;
  return k;
}

}  // namespace fabricsim::workload
