// Every collective of the spec through TACOS-Greedy (synth/tacos.hpp, spec
// 2.1 and 5.5): op names, chunk numbering and synthesize().  Reductions are
// the non-combining counterpart synthesized on the transposed graph and
// played backwards: reversing an all-gather (broadcast) tree of a chunk turns
// every receipt into the one send of that NPU's partial toward the chunk's
// owner (the root), and every NPU's partial leaves only after the partials of
// the NPUs it fed in the forward run have arrived.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {
namespace {

constexpr const char* kOpNames[] = {"all_gather", "reduce_scatter", "all_reduce", "broadcast",
                                    "reduce",     "scatter",        "gather"};
constexpr Op kOps[] = {Op::AllGather, Op::ReduceScatter, Op::AllReduce, Op::Broadcast,
                       Op::Reduce,    Op::Scatter,       Op::Gather};

bool has_root(Op op) { return op == Op::Broadcast || op == Op::Reduce || op == Op::Scatter || op == Op::Gather; }

void require_root(const NpuGraph& g, const Request& r) {
  if (has_root(r.op) && (r.root >= g.npus || g.is_failed(r.root))) {
    throw std::invalid_argument(std::string("synth: ") + to_string(r.op) + " root " + std::to_string(r.root) +
                                " is out of range or failed");
  }
}

// G^T: the same link indices with src and dst swapped, so a schedule on G^T
// names the links of G it will run on once reversed.
NpuGraph transpose(const NpuGraph& g) {
  NpuGraph t = g;
  for (Link& l : t.links) {
    std::swap(l.src, l.dst);
  }
  return t;
}

// Sends in the order greedy() returns them: start time, then link.
void sort_sends(std::vector<Send>& sends) {
  std::stable_sort(sends.begin(), sends.end(), [](const Send& a, const Send& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.link < b.link;
  });
}

// Reverses a non-combining schedule `fwd` synthesized on gt = G^T into the
// reduction on G.  A send (c, l, s, e) of fwd ran gt.links[l].src ->
// gt.links[l].dst; reversed it runs on link l of G from the forward receiver
// to the forward sender over [F - e, F - s].  The forward receiver then sends
// its partial exactly once only if it received c exactly once; greedy()
// guarantees it (a receipt closes the request, a second in-flight copy
// arrives outdated and is replaced or dropped), but the reversal would
// silently count contributions twice otherwise, so it is verified here.
Schedule reverse(const NpuGraph& gt, std::uint32_t chunks, const Schedule& fwd) {
  std::vector<std::uint8_t> received(std::size_t{chunks} * gt.npus, 0);
  Schedule out;
  out.sends.reserve(fwd.sends.size());
  const double f = fwd.finish_ns;
  for (const Send& x : fwd.sends) {
    auto& seen = received[std::size_t{x.chunk} * gt.npus + gt.links[x.link].dst];
    if (seen != 0) {
      throw std::logic_error("synth: chunk " + std::to_string(x.chunk) + " reaches NPU " +
                             std::to_string(gt.links[x.link].dst) + " twice; the schedule cannot be reversed");
    }
    seen = 1;
    out.sends.push_back(Send{x.chunk, x.link, f - x.end_ns, f - x.start_ns, true});
    // The owner's last partial arrives last (every forward send starts at or
    // after the owner's first one), so the largest end is the finish.
    out.finish_ns = std::max(out.finish_ns, f - x.start_ns);
  }
  sort_sends(out.sends);
  return out;
}

Schedule reduce_scatter_of(const NpuGraph& g, const Request& r, const Synthesizer& one) {
  const NpuGraph gt = transpose(g);
  const Collective c = all_gather(gt, r.chunks_per_npu, r.chunk_bytes);
  return reverse(gt, c.chunks, one(gt, c));
}

}  // namespace

const char* to_string(Op op) {
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kOpNames) ? kOpNames[i] : "unknown";
}

Op parse_op(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kOpNames); ++i) {
    if (name == kOpNames[i]) {
      return kOps[i];
    }
  }
  throw std::invalid_argument("synth: unknown collective '" + name + "'");
}

std::uint32_t chunk_count(const NpuGraph& g, const Request& r) {
  require_root(g, r);
  std::uint32_t live = 0;
  for (std::uint32_t v = 0; v < g.npus; ++v) {
    live += g.is_failed(v) ? 0U : 1U;
  }
  switch (r.op) {
    case Op::Broadcast:
    case Op::Reduce: return r.chunks_per_npu;
    case Op::Scatter:
    case Op::Gather: return (live - 1) * r.chunks_per_npu;  // live >= 1: the root is live
    default: return live * r.chunks_per_npu;
  }
}

Schedule synthesize(const NpuGraph& g, const Request& r, const GreedyOptions& opt) {
  return synthesize_with(g, r, [&opt](const NpuGraph& h, const Collective& c) { return greedy(h, c, opt); });
}

Schedule synthesize_with(const NpuGraph& g, const Request& r, const Synthesizer& one) {
  require_root(g, r);
  switch (r.op) {
    case Op::AllGather: return one(g, all_gather(g, r.chunks_per_npu, r.chunk_bytes));
    case Op::Broadcast: return one(g, broadcast(g, r.root, r.chunks_per_npu, r.chunk_bytes));
    case Op::Scatter: return one(g, scatter(g, r.root, r.chunks_per_npu, r.chunk_bytes));
    case Op::Gather: return one(g, gather(g, r.root, r.chunks_per_npu, r.chunk_bytes));
    case Op::ReduceScatter: return reduce_scatter_of(g, r, one);
    case Op::Reduce: {
      const NpuGraph gt = transpose(g);
      const Collective c = broadcast(gt, r.root, r.chunks_per_npu, r.chunk_bytes);
      return reverse(gt, c.chunks, one(gt, c));
    }
    case Op::AllReduce: {
      // Same chunk numbering in both halves: chunk c is reduced at, then
      // broadcast from, the c / chunks_per_npu-th live NPU.
      Schedule s = reduce_scatter_of(g, r, one);
      const Schedule ag = one(g, all_gather(g, r.chunks_per_npu, r.chunk_bytes));
      const double shift = s.finish_ns;
      for (Send x : ag.sends) {
        x.start_ns += shift;
        x.end_ns += shift;
        s.sends.push_back(x);
      }
      s.finish_ns = shift + ag.finish_ns;
      sort_sends(s.sends);
      return s;
    }
  }
  throw std::invalid_argument("synth: unknown collective op " + std::to_string(static_cast<int>(r.op)));
}

}  // namespace fabricsim::synth
