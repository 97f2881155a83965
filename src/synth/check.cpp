// Independent schedule checkers for synth (written apart from greedy.cpp and
// reduce.cpp and sharing none of their code): replay the sends in time order.
// Reductions are checked by what each partial carries: the set of live NPUs
// whose inputs were combined into it, so double counting, lost inputs and
// partials sent before their inputs arrived are all visible.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool close(double a, double b, double scale = 1.0) {
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, scale, std::fabs(a), std::fabs(b)});
}

bool failed(const NpuGraph& g, std::uint32_t v) { return g.failed.size() == g.npus && g.failed[v] != 0; }

// Per send: link, chunk, endpoints and cost; then one transfer at a time per
// link.  "" when all hold.
std::string check_sends(const NpuGraph& g, std::uint32_t chunks, std::uint64_t chunk_bytes, const Schedule& s) {
  std::ostringstream why;
  for (std::size_t i = 0; i < s.sends.size(); ++i) {
    const Send& x = s.sends[i];
    if (x.link >= g.links.size()) {
      why << "send " << i << ": link " << x.link << " does not exist";
      return why.str();
    }
    if (x.chunk >= chunks) {
      why << "send " << i << ": chunk " << x.chunk << " does not exist";
      return why.str();
    }
    const Link& l = g.links[x.link];
    if (l.src >= g.npus || l.dst >= g.npus || failed(g, l.src) || failed(g, l.dst)) {
      why << "send " << i << ": link " << x.link << " touches a failed or missing NPU";
      return why.str();
    }
    const double cost = l.alpha_ns + 8.0 * static_cast<double>(chunk_bytes) / l.gbps;
    // The difference of two large times loses precision relative to the
    // times themselves (a reversed or shifted schedule), hence the scale.
    if (!(x.start_ns >= 0.0) || !close(x.end_ns - x.start_ns, cost, x.end_ns)) {
      why << "send " << i << ": times [" << x.start_ns << ", " << x.end_ns << "] do not match the link cost " << cost
          << " ns";
      return why.str();
    }
  }
  std::map<std::uint32_t, std::vector<std::pair<double, double>>> per_link;
  for (const Send& x : s.sends) {
    per_link[x.link].emplace_back(x.start_ns, x.end_ns);
  }
  for (auto& [link, spans] : per_link) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t k = 1; k < spans.size(); ++k) {
      if (spans[k].first < spans[k - 1].second) {
        why << "link " << link << ": transfers [" << spans[k - 1].first << ", " << spans[k - 1].second << "] and ["
            << spans[k].first << ", " << spans[k].second << "] overlap";
        return why.str();
      }
    }
  }
  return "";
}

// Send indices by start time (ties: index).
std::vector<std::size_t> start_order(const Schedule& s) {
  std::vector<std::size_t> order(s.sends.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return s.sends[a].start_ns < s.sends[b].start_ns || (s.sends[a].start_ns == s.sends[b].start_ns && a < b);
  });
  return order;
}

// A set of live NPUs' contributions, one bit per live rank.
struct Contributions {
  std::vector<std::uint64_t> bits;
  std::uint32_t count = 0;

  Contributions() = default;
  Contributions(std::uint32_t members, std::uint32_t own) : bits((members + 63) / 64, 0) { add(own); }
  void add(std::uint32_t k) {
    bits[k / 64] |= std::uint64_t{1} << (k % 64);
    ++count;
  }
  bool has(std::uint32_t k) const { return ((bits[k / 64] >> (k % 64)) & 1U) != 0; }
  /// A member of both, or -1.
  long long common(const Contributions& o) const {
    for (std::size_t w = 0; w < bits.size(); ++w) {
      const std::uint64_t both = bits[w] & o.bits[w];
      if (both != 0) {
        for (std::uint32_t b = 0; b < 64; ++b) {
          if (((both >> b) & 1U) != 0) {
            return static_cast<long long>(w * 64 + b);
          }
        }
      }
    }
    return -1;
  }
  void merge(const Contributions& o) {
    for (std::size_t w = 0; w < bits.size(); ++w) {
      bits[w] |= o.bits[w];
    }
    count += o.count;  // disjoint: checked before merging
  }
};

// Reductions: reduce_scatter, reduce, all_reduce (reducing sends, then the
// all-gather half with plain sends of fully reduced chunks).
std::string check_reduction(const NpuGraph& g, const Request& r, const std::vector<std::uint32_t>& live,
                            std::uint32_t chunks, const Schedule& s) {
  std::ostringstream why;
  const auto members = static_cast<std::uint32_t>(live.size());
  std::vector<std::uint32_t> rank(g.npus, 0);
  for (std::uint32_t k = 0; k < members; ++k) {
    rank[live[k]] = k;
  }
  const auto owner = [&](std::uint32_t c) { return r.op == Op::Reduce ? r.root : live[c / r.chunks_per_npu]; };
  const std::size_t cells = std::size_t{chunks} * g.npus;
  const auto cell = [&](std::uint32_t c, std::uint32_t v) { return std::size_t{c} * g.npus + v; };
  std::vector<Contributions> held(cells);  // empty until touched: the NPU's own input only
  const auto partial = [&](std::uint32_t c, std::uint32_t v) -> Contributions& {
    Contributions& h = held[cell(c, v)];
    if (h.bits.empty()) {
      h = Contributions(members, rank[v]);
    }
    return h;
  };
  std::vector<double> sent(cells, kInf);  // start of the NPU's partial send of the chunk
  // When the NPU first holds the chunk fully reduced: its partial is
  // complete, or (all_reduce) a plain send of the chunk reached it.
  std::vector<double> full(cells, kInf);
  if (members == 1) {
    for (std::uint32_t c = 0; c < chunks; ++c) {
      full[cell(c, live[0])] = 0.0;
    }
  }
  std::vector<Contributions> carried(s.sends.size());
  for (std::size_t i = 0; i < s.sends.size(); ++i) {
    if (!s.sends[i].reduce && r.op != Op::AllReduce) {
      why << "send " << i << ": a plain (non-reducing) send in a " << to_string(r.op);
      return why.str();
    }
  }

  std::set<std::pair<double, std::size_t>> pending;  // (end, send)
  std::string error;
  const auto land = [&](double upto) {
    while (error.empty() && !pending.empty() && pending.begin()->first <= upto) {
      const std::size_t i = pending.begin()->second;
      pending.erase(pending.begin());
      const Send& y = s.sends[i];
      const std::uint32_t u = g.links[y.link].src, v = g.links[y.link].dst;
      const std::size_t at = cell(y.chunk, v);
      if (!y.reduce) {
        full[at] = std::min(full[at], y.end_ns);
        continue;
      }
      Contributions& mine = partial(y.chunk, v);
      const long long twice = mine.common(carried[i]);
      if (twice >= 0) {
        why << "send " << i << ": the partial of chunk " << y.chunk << " from NPU " << u << " counts the contribution"
            << " of NPU " << live[static_cast<std::size_t>(twice)] << " twice at NPU " << v;
        error = why.str();
        return;
      }
      if (sent[at] < kInf) {
        why << "send " << i << ": NPU " << v << " receives a partial of chunk " << y.chunk << " at " << y.end_ns
            << " ns, after sending its own at " << sent[at] << " ns";
        error = why.str();
        return;
      }
      mine.merge(carried[i]);
      if (mine.count == members) {
        full[at] = std::min(full[at], y.end_ns);
      }
    }
  };
  for (auto i : start_order(s)) {
    const Send& x = s.sends[i];
    land(x.start_ns);
    if (!error.empty()) {
      return error;
    }
    const std::uint32_t u = g.links[x.link].src;
    const std::size_t at = cell(x.chunk, u);
    if (x.reduce) {
      if (sent[at] < kInf) {
        why << "send " << i << ": NPU " << u << " sends a partial of chunk " << x.chunk << " twice (at " << sent[at]
            << " and " << x.start_ns << " ns)";
        return why.str();
      }
      sent[at] = x.start_ns;
      carried[i] = partial(x.chunk, u);
    } else if (!(full[at] <= x.start_ns)) {
      why << "send " << i << ": chunk " << x.chunk << " is not fully reduced at NPU " << u << " at " << x.start_ns
          << " ns";
      return why.str();
    }
    pending.emplace(x.end_ns, i);
  }
  land(kInf);
  if (!error.empty()) {
    return error;
  }

  // Postcondition: the owner holds every input (all_reduce: every live NPU
  // holds the full reduction); finish = the latest such moment.
  double last = 0.0;
  for (std::uint32_t c = 0; c < chunks; ++c) {
    const std::uint32_t o = owner(c);
    const Contributions& mine = partial(c, o);
    if (r.op != Op::AllReduce && mine.count != members) {
      for (std::uint32_t k = 0; k < members; ++k) {
        if (!mine.has(k)) {
          why << "chunk " << c << " at NPU " << o << " lacks the contribution of NPU " << live[k];
          return why.str();
        }
      }
    }
    if (r.op != Op::AllReduce) {
      last = std::max(last, full[cell(c, o)]);
      continue;
    }
    for (auto v : live) {
      if (!(full[cell(c, v)] < kInf)) {
        why << "chunk " << c << " never reaches NPU " << v << " fully reduced";
        return why.str();
      }
      last = std::max(last, full[cell(c, v)]);
    }
  }
  if (!close(last, s.finish_ns)) {
    why << "finish " << s.finish_ns << " ns differs from the last needed arrival " << last << " ns";
    return why.str();
  }
  return "";
}

}  // namespace

std::string check(const NpuGraph& g, const Collective& c, const Schedule& s) {
  std::ostringstream why;
  if (auto bad = check_sends(g, c.chunks, c.chunk_bytes, s); !bad.empty()) {
    return bad;
  }
  // Causality: replay in start order, applying every arrival with end <= start first.
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> at;  // (chunk, npu) -> first time held
  for (const auto& pr : c.pre) {
    at[pr] = 0.0;
  }
  std::set<std::pair<double, std::size_t>> pending;  // (end, send)
  const auto land = [&](double upto) {
    while (!pending.empty() && pending.begin()->first <= upto) {
      const Send& y = s.sends[pending.begin()->second];
      const auto key = std::make_pair(y.chunk, g.links[y.link].dst);
      auto it = at.find(key);
      if (it == at.end() || y.end_ns < it->second) {
        at[key] = y.end_ns;
      }
      pending.erase(pending.begin());
    }
  };
  for (auto i : start_order(s)) {
    const Send& x = s.sends[i];
    land(x.start_ns);
    const std::uint32_t u = g.links[x.link].src;
    if (at.find({x.chunk, u}) == at.end()) {
      why << "send " << i << ": chunk " << x.chunk << " is not at NPU " << u << " at " << x.start_ns << " ns";
      return why.str();
    }
    pending.emplace(x.end_ns, i);
  }
  land(kInf);
  // Postcondition and finish time.
  double last = 0.0;
  for (const auto& pr : c.post) {
    auto it = at.find(pr);
    if (it == at.end()) {
      why << "postcondition (chunk " << pr.first << ", NPU " << pr.second << ") never holds";
      return why.str();
    }
    last = std::max(last, it->second);
  }
  if (!close(last, s.finish_ns)) {
    why << "finish " << s.finish_ns << " ns differs from the last needed arrival " << last << " ns";
    return why.str();
  }
  return "";
}

std::string check(const NpuGraph& g, const Request& r, const Schedule& s) {
  std::vector<std::uint32_t> live;
  for (std::uint32_t v = 0; v < g.npus; ++v) {
    if (!failed(g, v)) {
      live.push_back(v);
    }
  }
  const bool rooted = r.op == Op::Broadcast || r.op == Op::Reduce || r.op == Op::Scatter || r.op == Op::Gather;
  if (rooted && (r.root >= g.npus || failed(g, r.root))) {
    return "request: root " + std::to_string(r.root) + " is out of range or failed";
  }
  const bool reduction = r.op == Op::ReduceScatter || r.op == Op::Reduce || r.op == Op::AllReduce;
  if (!reduction) {
    for (std::size_t i = 0; i < s.sends.size(); ++i) {
      if (s.sends[i].reduce) {
        return "send " + std::to_string(i) + ": a reducing send in a " + to_string(r.op);
      }
    }
    Collective c;
    switch (r.op) {
      case Op::Broadcast: c = broadcast(g, r.root, r.chunks_per_npu, r.chunk_bytes); break;
      case Op::Scatter: c = scatter(g, r.root, r.chunks_per_npu, r.chunk_bytes); break;
      case Op::Gather: c = gather(g, r.root, r.chunks_per_npu, r.chunk_bytes); break;
      default: c = all_gather(g, r.chunks_per_npu, r.chunk_bytes); break;
    }
    return check(g, c, s);
  }
  const auto members = static_cast<std::uint32_t>(live.size());
  const std::uint32_t chunks = r.op == Op::Reduce ? r.chunks_per_npu : members * r.chunks_per_npu;
  if (auto bad = check_sends(g, chunks, r.chunk_bytes, s); !bad.empty()) {
    return bad;
  }
  return check_reduction(g, r, live, chunks, s);
}

}  // namespace fabricsim::synth
