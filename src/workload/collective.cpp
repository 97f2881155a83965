#include "fabricsim/workload/collective.hpp"

#include <algorithm>
#include <numeric>

#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

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
  }
  return "?";
}

double busbw_factor(CollectiveOp op, std::uint32_t ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::Allreduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce: return 1.0;
    default: return (n - 1) / n;
  }
}

std::vector<net::EndpointId> communicator(const CollectiveParams& p, std::uint32_t endpoints) {
  std::vector<net::EndpointId> out;
  if (p.placement == "list") {
    if (p.endpoints.size() < 2) throw ConfigError("workload.endpoints: a communicator needs at least 2 endpoints");
    std::vector<std::uint8_t> seen(endpoints, 0);
    for (std::uint32_t e : p.endpoints) {
      if (e >= endpoints)
        throw ConfigError("workload.endpoints: " + std::to_string(e) + " is not an endpoint (there are " +
                          std::to_string(endpoints) + ")");
      if (seen[e]) throw ConfigError("workload.endpoints: endpoint " + std::to_string(e) + " appears twice");
      seen[e] = 1;
      out.push_back(e);
    }
    return out;
  }
  const std::uint32_t n = p.ranks == 0 ? endpoints : p.ranks;
  if (n < 2 || n > endpoints)
    throw ConfigError("workload.ranks: " + std::to_string(n) + " ranks on " + std::to_string(endpoints) +
                      " endpoints (need 2 to " + std::to_string(endpoints) + ")");
  if (p.placement == "linear" || p.placement == "by_server") {
    // Endpoints are numbered server by server (GPU g of server s is s*G + g).
    for (std::uint32_t i = 0; i < n; ++i) out.push_back(i);
  } else if (p.placement == "by_rail") {
    // Rail by rail: GPU 0 of every server, then GPU 1, ...
    const std::uint32_t G = std::max(1u, p.gpus_per_server);
    if (endpoints % G != 0)
      throw ConfigError("workload.placement: by_rail needs whole servers of " + std::to_string(G) + " GPUs");
    const std::uint32_t servers = endpoints / G;
    for (std::uint32_t k = 0; k < n; ++k) out.push_back((k % servers) * G + k / servers);
  } else if (p.placement == "random") {
    std::vector<net::EndpointId> all(endpoints);
    std::iota(all.begin(), all.end(), 0u);
    util::RandomStream rng(p.seed, 0x434F'4D4D'0000ull);  // "COMM"
    for (std::uint32_t i = 0; i < n; ++i) std::swap(all[i], all[i + rng.below(endpoints - i)]);
    out.assign(all.begin(), all.begin() + n);
  } else {
    throw ConfigError("workload.placement: unknown placement '" + p.placement +
                      "' (linear, by_server, by_rail, random or list)");
  }
  return out;
}

CollectiveWorkload::CollectiveWorkload(net::Network& network, const CollectiveParams& params)
    : net_(network), params_(params) {
  ranks_ = communicator(params_, static_cast<std::uint32_t>(net_.topology().endpoint_count()));
  const bool ring_op = params_.op == CollectiveOp::Allreduce || params_.op == CollectiveOp::ReduceScatter ||
                       params_.op == CollectiveOp::Allgather;
  const std::string& a = params_.algorithm;
  const bool rooted = params_.op == CollectiveOp::Broadcast || params_.op == CollectiveOp::Reduce;
  const bool general = a == "ring" || a == "bidirectional_ring" || a == "direct" ||
                       ((a == "halving_doubling" || a == "double_binary_tree" || a == "hierarchical") &&
                        params_.op == CollectiveOp::Allreduce);
  if (a == "hierarchical") {
    const std::uint32_t G = params_.gpus_per_server;
    if (G < 2 || ranks_.size() % G != 0 || ranks_.size() / G < 2)
      throw ConfigError("workload.algorithm: hierarchical needs servers of several GPUs (a leaf_spine with "
                        "gpus_per_server > 1) and a communicator of at least two whole servers (" +
                        std::to_string(ranks_.size()) + " ranks, " + std::to_string(G) + " GPUs per server)");
  }
  const bool ok = params_.op == CollectiveOp::Alltoall ? a == "pairwise" || a == "direct"
                  : rooted                             ? a == "ring" || a == "tree"
                                                       : ring_op && general;
  if (rooted && params_.root >= ranks_.size())
    throw ConfigError("workload.root: " + std::to_string(params_.root) + " is not a rank of the " +
                      std::to_string(ranks_.size()) + "-rank communicator");
  if (!ok)
    throw ConfigError("workload.algorithm: '" + a + "' is not implemented for " + to_string(params_.op) +
                      " (allreduce: ring, bidirectional_ring, halving_doubling, double_binary_tree, hierarchical, direct; "
                      "reduce_scatter and "
                      "allgather: ring, bidirectional_ring, direct; alltoall: pairwise, direct; broadcast and reduce: "
                      "ring, tree)");
  if (params_.sizes.empty()) throw ConfigError("workload.sizes: give at least one size");
  for (std::uint64_t s : params_.sizes)
    if (s < ranks_.size())
      throw ConfigError("workload.sizes: " + std::to_string(s) + " bytes cannot be split over " +
                        std::to_string(ranks_.size()) + " ranks (at least one byte each)");
  if (params_.iterations == 0) throw ConfigError("workload.iterations: must be at least 1");
  net_.set_listener(this);
  plan();
}

namespace {

// One point-to-point send of an operation's schedule (ranks are indices in
// the communicator).  `after`: the schedule index of the message whose
// arrival at `from` it waits for (-1: none); `reduced`: that arrival is
// reduced first.
struct Send {
  std::uint32_t from, to;
  std::uint64_t bytes;
  std::int64_t after;
  bool reduced;
  bool after_all;  // waits for every earlier send to `from` of this operation (a phase barrier at `from`)
  std::int64_t after2 = -1;  // a second arrival it waits for (a tree node's second child)
  std::uint8_t phase = 0;    // composed algorithms: after_all waits for the receipts of phase - 1 (or of
                             // every earlier send when phase is 0)
};

// Rank r's part j of an S-byte buffer split n ways.
std::uint64_t part(std::uint64_t S, std::uint32_t n, std::uint32_t j) { return S / n + (j < S % n ? 1 : 0); }

// Ring (allreduce: 2(n-1) steps, the first n-1 reducing; reduce_scatter:
// n-1 reducing; allgather: n-1) in direction `dir` (+1: to r+1, -1: to r-1)
// and pairwise alltoall (step i: r -> r+i+1), every step's message in C
// chunks; chunk c of step s+1 waits for chunk c of step s.  Appends to
// `out`; index of (s, r, c): base + (s*n + r)*C + c.
void append_ring(std::vector<Send>& out, CollectiveOp op, std::uint64_t S, std::uint32_t n, std::uint64_t chunk_bytes,
                 int dir, const std::vector<std::uint32_t>* member = nullptr, std::uint8_t phase = 0) {
  // `member`: the ring's ranks (member[i] is its i-th), else 0..n-1.
  // `phase` > 0: a later phase of a composed algorithm; its first step
  // waits for the previous phase's receipts at the sender (after_all).
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
        const std::int64_t after =
            s == 0 ? -1 : static_cast<std::int64_t>(base + ((s - 1) * std::uint64_t{n} + prev_from) * C + c);
        Send x{rank_of(r), rank_of(to), bytes / C + (c < bytes % C ? 1 : 0), after, reduces && s >= 1 && s < n,
               phase > 0 && s == 0};
        x.phase = phase;
        out.push_back(x);
      }
    }
}

// Direct: every rank sends its part j to rank j at once (alltoall: that is
// all; allreduce: reduce-scatter), and for allreduce each rank, once it has
// received and reduced all n-1 parts of its own, sends the result to every
// other rank (allgather); allgather alone is that second half.
void append_direct(std::vector<Send>& out, CollectiveOp op, std::uint64_t S, std::uint32_t n) {
  const bool scatter = op != CollectiveOp::Allgather;
  const bool gather = op == CollectiveOp::Allreduce || op == CollectiveOp::Allgather;
  if (scatter)
    for (std::uint32_t r = 0; r < n; ++r)
      for (std::uint32_t k = 1; k < n; ++k) out.push_back(Send{r, (r + k) % n, part(S, n, (r + k) % n), -1, false, false});
  if (gather)
    for (std::uint32_t r = 0; r < n; ++r)
      for (std::uint32_t k = 1; k < n; ++k)
        out.push_back(Send{r, (r + k) % n, part(S, n, r), -1, op == CollectiveOp::Allreduce, scatter});
}

// One binary tree of a double binary tree allreduce over `S` bytes: ranks
// at heap positions (parent of position i: (i-1)/2; `reversed`: rank n-1-i
// at position i, so that the leaves of one tree are mostly inner nodes of
// the other).  Every non-root position sends its (reduced) data up once
// its children's have arrived; the root, and then every inner node, sends
// the result down once it has it.  C chunks pipeline through the tree.
void append_tree(std::vector<Send>& out, std::uint64_t S, std::uint32_t n, std::uint64_t chunk_bytes, bool reversed) {
  const std::uint64_t C =
      chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, std::min<std::uint64_t>(S, (S + chunk_bytes - 1) / chunk_bytes));
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
      Send x{rank(i), rank((i - 1) / 2), S / C + (c < S % C ? 1 : 0), child(i, 0, c), true, false};
      x.after2 = child(i, 1, c);
      if (x.after < 0) x.reduced = false;
      out.push_back(x);
    }
  for (std::uint32_t i = 1; i < n; ++i)
    for (std::uint64_t c = 0; c < C; ++c) {
      const std::uint32_t p = (i - 1) / 2;
      Send x{rank(p), rank(i), S / C + (c < S % C ? 1 : 0), p == 0 ? child(0, 0, c) : down(p, c), p == 0, false};
      if (p == 0) x.after2 = child(0, 1, c);
      out.push_back(x);
    }
}

// Broadcast and reduce from/to `root`, in C chunks.  Ring: a chain from the
// root round the ring (reduce: from the rank after the root round to the
// root), each rank passing a chunk on once it has it (reduce: reduced with
// its own).  Tree: a binary tree in heap order over the ranks starting at
// the root (position i is rank (root + i) mod n); broadcast sends down,
// reduce up (a node sends once both children's chunks have arrived).
void append_rooted(std::vector<Send>& out, CollectiveOp op, std::uint64_t S, std::uint32_t n, std::uint64_t chunk_bytes,
                   std::uint32_t root, bool tree) {
  const std::uint64_t C =
      chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, std::min<std::uint64_t>(S, (S + chunk_bytes - 1) / chunk_bytes));
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
        out.push_back(Send{rank(i - 1), rank(i), bytes(c), i >= 2 ? into(i - 1, c) : -1, reduce && i >= 2, false});
    return;
  }
  const auto rank = [&](std::uint32_t i) { return (root + i) % n; };
  for (std::uint32_t i = 1; i < n; ++i)
    for (std::uint64_t c = 0; c < C; ++c) {
      const std::uint32_t p = (i - 1) / 2;
      if (!reduce) {  // parent -> i, once the parent has it
        out.push_back(Send{rank(p), rank(i), bytes(c), p == 0 ? -1 : into(p, c), false, false});
      } else {  // i -> parent, once i's children have arrived
        const std::uint32_t c1 = 2 * i + 1, c2 = 2 * i + 2;
        Send x{rank(i), rank(p), bytes(c), c1 < n ? into(c1, c) : -1, c1 < n, false};
        x.after2 = c2 < n ? into(c2, c) : -1;
        out.push_back(x);
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
std::vector<Send> halving_doubling_schedule(std::uint64_t S, std::uint32_t n) {
  std::uint32_t m = 0;
  while ((2u << m) <= n) ++m;
  const std::uint32_t p = 1u << m;
  std::vector<Send> out;
  std::vector<std::int64_t> last_recv(n, -1);  // schedule index of each rank's latest receive
  std::vector<std::uint8_t> last_reduced(n, 0);
  auto send = [&](std::uint32_t from, std::uint32_t to, std::uint64_t bytes) {
    out.push_back(Send{from, to, bytes, last_recv[from], static_cast<bool>(last_reduced[from]), false});
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
  return out;
}

}  // namespace

void CollectiveWorkload::plan() {
  const auto n = static_cast<std::uint32_t>(ranks_.size());
  base_ = static_cast<net::MessageId>(net_.messages().size());
  std::uint32_t prev_gate0 = UINT32_MAX;  // gates of the previous operation: [prev_gate0 + rank]
  for (std::uint32_t si = 0; si < params_.sizes.size(); ++si) {
    const std::uint64_t S = params_.sizes[si];
    std::vector<Send> sched;
    if (params_.algorithm == "halving_doubling") {
      sched = halving_doubling_schedule(S, n);
    } else if (params_.op == CollectiveOp::Broadcast || params_.op == CollectiveOp::Reduce) {
      append_rooted(sched, params_.op, S, n, params_.chunk_bytes, params_.root, params_.algorithm == "tree");
    } else if (params_.algorithm == "hierarchical") {
      // Servers of G consecutive ranks: reduce-scatter inside each server,
      // allreduce of each 1/G part among the ranks of the same local index
      // across servers, allgather inside each server.
      const std::uint32_t G = params_.gpus_per_server, servers = n / G;
      std::vector<std::uint32_t> members;
      for (std::uint32_t sv = 0; sv < servers; ++sv) {
        members.clear();
        for (std::uint32_t g = 0; g < G; ++g) members.push_back(sv * G + g);
        append_ring(sched, CollectiveOp::ReduceScatter, S, G, params_.chunk_bytes, +1, &members, 0);
      }
      for (std::uint32_t g = 0; g < G; ++g) {
        members.clear();
        for (std::uint32_t sv = 0; sv < servers; ++sv) members.push_back(sv * G + g);
        append_ring(sched, CollectiveOp::Allreduce, part(S, G, g), servers, params_.chunk_bytes, +1, &members, 1);
      }
      for (std::uint32_t sv = 0; sv < servers; ++sv) {
        members.clear();
        for (std::uint32_t g = 0; g < G; ++g) members.push_back(sv * G + g);
        append_ring(sched, CollectiveOp::Allgather, S, G, params_.chunk_bytes, +1, &members, 2);
      }
    } else if (params_.algorithm == "double_binary_tree") {
      append_tree(sched, S - S / 2, n, params_.chunk_bytes, false);
      append_tree(sched, S / 2, n, params_.chunk_bytes, true);
    } else if (params_.algorithm == "direct") {
      append_direct(sched, params_.op, S, n);
    } else if (params_.algorithm == "bidirectional_ring") {
      // Half the buffer each way round (the first half one byte more when S is odd).
      append_ring(sched, params_.op, S - S / 2, n, params_.chunk_bytes, +1);
      append_ring(sched, params_.op, S / 2, n, params_.chunk_bytes, -1);
    } else {
      append_ring(sched, params_.op, S, n, params_.chunk_bytes, +1);
    }
    for (std::int32_t it = -static_cast<std::int32_t>(params_.warmup); it < static_cast<std::int32_t>(params_.iterations);
         ++it) {
      CollectiveInstance inst;
      inst.size_index = si;
      inst.iteration = it;
      inst.bytes = S;
      const auto first = static_cast<std::uint32_t>(msgs_.size());
      inst.first = base_ + first;
      const auto gate0 = static_cast<std::uint32_t>(gates_.size());
      gates_.resize(gates_.size() + n);
      // A rank's operation ends when it has received everything and its own
      // messages have all left its NIC.
      for (const Send& x : sched) {
        ++gates_[gate0 + x.to].remaining;
        ++gates_[gate0 + x.from].remaining;
      }
      // Phase barriers (after_all): a rank's after_all sends of phase p > 0
      // wait for every send of phase p-1 to it; with phase 0 (direct), for
      // every send to it that is not itself an after_all send.  Gate of
      // (rank r, barrier phase p): phase[p * n + r].
      std::uint8_t max_phase = 0;
      for (const Send& x : sched) max_phase = std::max(max_phase, x.phase);
      const std::size_t phases = max_phase + 1u;
      std::vector<std::uint32_t> phase(phases * n, UINT32_MAX);
      const auto counts_toward = [&](const Send& x) -> std::int32_t {  // barrier phase it counts for, or -1
        if (x.after_all && x.phase == 0) return -1;
        return x.phase == 0 ? (max_phase == 0 ? 0 : 1) : (x.phase < max_phase ? x.phase + 1 : -1);
      };
      {
        std::vector<std::uint32_t> count(phases * n, 0);
        std::vector<std::uint8_t> has_barrier(phases * n, 0);
        for (const Send& x : sched) {
          const std::int32_t b = counts_toward(x);
          if (b >= 0) ++count[static_cast<std::size_t>(b) * n + x.to];
          if (x.after_all) has_barrier[static_cast<std::size_t>(x.phase) * n + x.from] = 1;
        }
        for (std::size_t k = 0; k < phases * n; ++k)
          if (has_barrier[k]) {
            phase[k] = static_cast<std::uint32_t>(gates_.size());
            gates_.push_back(Gate{count[k], 0, 0});
          }
      }
      for (const Send& x : sched) {
        const net::MessageId id = net_.create(ranks_[x.from], ranks_[x.to], x.bytes, 0);
        FABRICSIM_ASSERT(id == base_ + msgs_.size(), "collective message ids out of order");
        Msg m;
        m.gate = gate0 + x.to;
        m.sgate = gate0 + x.from;
        m.waits = static_cast<std::uint8_t>((x.after >= 0 ? 1 : 0) + (x.after2 >= 0 ? 1 : 0) +
                                            (prev_gate0 != UINT32_MAX ? 1 : 0) + (x.after_all ? 1 : 0));
        const std::int32_t b = counts_toward(x);
        if (b >= 0 && phase[static_cast<std::size_t>(b) * n + x.to] != UINT32_MAX) {
          m.gate2 = phase[static_cast<std::size_t>(b) * n + x.to];
          // The barrier reduces what it waited for (direct allreduce's
          // scatter, hierarchical's intra-server reduce-scatter).
          m.reduce = params_.op == CollectiveOp::Allreduce && x.phase == 0;
        }
        msgs_.push_back(m);
      }
      // Per (sender, receiver) connection, messages go in schedule order.
      for (std::size_t k = 0; k < sched.size(); ++k) {
        const std::uint64_t key = static_cast<std::uint64_t>(sched[k].from) * n + sched[k].to;
        const auto last = conn_last_.find(key);
        const std::uint32_t idx = first + static_cast<std::uint32_t>(k);
        if (last != conn_last_.end()) {
          msgs_[last->second].fifo_next = idx;
          ++msgs_[idx].waits;
        }
        conn_last_[key] = idx;
      }
      for (std::size_t kk = 0; kk < phases * n; ++kk)
        if (phase[kk] != UINT32_MAX) {
          const auto r = static_cast<std::uint32_t>(kk % n);
          const auto ph = static_cast<std::uint8_t>(kk / n);
          Gate& g = gates_[phase[kk]];
          g.post_begin = static_cast<std::uint32_t>(post_list_.size());
          for (std::size_t k = 0; k < sched.size(); ++k)
            if (sched[k].from == r && sched[k].after_all && sched[k].phase == ph)
              post_list_.push_back(first + static_cast<std::uint32_t>(k));
          g.post_end = static_cast<std::uint32_t>(post_list_.size());
        }
      for (std::size_t k = 0; k < sched.size(); ++k)
        for (std::int64_t a : {sched[k].after, sched[k].after2}) {
          if (a < 0) continue;
          Msg& trigger = msgs_[first + static_cast<std::uint32_t>(a)];
          std::uint32_t& slot = trigger.next == UINT32_MAX ? trigger.next : trigger.next2;
          FABRICSIM_ASSERT(slot == UINT32_MAX, "a message triggers at most two sends");
          slot = first + static_cast<std::uint32_t>(k);
          trigger.reduce = sched[k].reduced;
        }
      // The previous operation's gate of rank r releases every send of rank r here.
      if (prev_gate0 != UINT32_MAX)
        for (std::uint32_t r = 0; r < n; ++r) {
          Gate& g = gates_[prev_gate0 + r];
          g.post_begin = static_cast<std::uint32_t>(post_list_.size());
          for (std::size_t k = 0; k < sched.size(); ++k)
            if (sched[k].from == r) post_list_.push_back(first + static_cast<std::uint32_t>(k));
          g.post_end = static_cast<std::uint32_t>(post_list_.size());
        }
      prev_gate0 = gate0;
      inst.last = base_ + static_cast<net::MessageId>(msgs_.size());
      instances_.push_back(inst);
    }
  }
  const CollectiveInstance& first = instances_.front();
  for (std::uint32_t i = first.first - base_; i < first.last - base_; ++i)
    if (msgs_[i].waits == 0) post(i, params_.start);
}

void CollectiveWorkload::post(std::uint32_t i, SimTime at) { net_.post(base_ + i, at); }

void CollectiveWorkload::on_message_sent(net::MessageId id) {
  if (id < base_ || id - base_ >= msgs_.size()) return;
  const Msg& m = msgs_[id - base_];
  const SimTime now = net_.now();
  if (m.fifo_next != UINT32_MAX) {
    Msg& t = msgs_[m.fifo_next];
    t.ready = std::max(t.ready, now);
    if (--t.waits == 0) post(m.fifo_next, t.ready);
  }
  close_gate(m.sgate, now, false, 0);
}

void CollectiveWorkload::close_gate(std::uint32_t gi, SimTime now, bool reduce, std::uint64_t bytes) {
  if (gi == UINT32_MAX) return;
  Gate& g = gates_[gi];
  if (--g.remaining != 0) return;
  const SimTime ready =
      reduce && params_.reduce_gbps > 0 ? now + core::serialization_time(bytes, params_.reduce_gbps) : now;
  for (std::uint32_t k = g.post_begin; k < g.post_end; ++k) {
    Msg& t = msgs_[post_list_[k]];
    t.ready = std::max(t.ready, ready);
    if (--t.waits == 0) post(post_list_[k], t.ready);
  }
}

void CollectiveWorkload::on_message_delivered(net::MessageId id) {
  ++done_;
  if (id < base_ || id - base_ >= msgs_.size()) return;
  const std::uint32_t i = id - base_;
  const SimTime now = net_.messages()[id].end_time;
  const Msg& m = msgs_[i];
  const auto release = [&](std::uint32_t j, SimTime ready) {
    Msg& t = msgs_[j];
    t.ready = std::max(t.ready, ready);
    if (--t.waits == 0) post(j, t.ready);
  };
  if (m.next != UINT32_MAX) {
    // The sends waiting for it leave once it is here (and reduced).
    SimTime ready = now;
    if (m.reduce && params_.reduce_gbps > 0)
      ready = now + core::serialization_time(net_.messages()[id].bytes, params_.reduce_gbps);
    release(m.next, ready);
    if (m.next2 != UINT32_MAX) release(m.next2, ready);
  }
  // A phase barrier's receipts are reduced first (direct allreduce).
  close_gate(m.gate2, now, m.reduce, net_.messages()[id].bytes);
  close_gate(m.gate, now, false, 0);
}

}  // namespace fabricsim::workload
