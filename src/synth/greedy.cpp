// TACOS-Greedy (tacos spec 5.4): an event-driven randomised greedy matching of
// requested (chunk, NPU) pairs to idle incoming links, with shorter-link-first,
// arrival-time analysis and chunk replacement (5.2) and jitter (5.3).
//
// Cost: state is kept per NPU (open requests, incoming links) and an NPU is
// matched again only when something that can change its matching happened
// (an incoming link freed, a neighbour upstream received a chunk), so an
// event costs the requests of the NPUs it touched, not all (chunk, NPU) pairs.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

std::string pair_text(std::uint32_t chunk, std::uint32_t npu) {
  return "(chunk " + std::to_string(chunk) + ", NPU " + std::to_string(npu) + ")";
}

// The instance-independent part: link costs, adjacency, requests (the
// postcondition pairs not in the precondition plus the relays).
struct Problem {
  std::uint32_t n = 0;
  std::uint32_t chunks = 0;
  std::vector<Link> links;
  std::vector<double> tau;                       // per link
  std::vector<std::vector<std::uint32_t>> in;    // per NPU: incoming link ids
  std::vector<std::vector<std::uint32_t>> outn;  // per NPU: out-neighbours (deduplicated)
  std::vector<std::uint8_t> post;                // chunk * n + npu
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pre;
  std::vector<std::vector<std::uint32_t>> requests;  // per NPU: requested chunks
  std::uint64_t post_open = 0;                       // post pairs not in pre
};

std::size_t idx(const Problem& p, std::uint32_t chunk, std::uint32_t npu) {
  return std::size_t{chunk} * p.n + npu;
}

// Multi-source Dijkstra over link times; parent link per NPU (kNone at sources
// and unreached NPUs).
std::vector<std::uint32_t> shortest_tree(const Problem& p, const std::vector<std::uint32_t>& sources,
                                         const std::vector<std::vector<std::uint32_t>>& out_links) {
  std::vector<double> dist(p.n, kNever);
  std::vector<std::uint32_t> parent(p.n, kNone);
  using Item = std::pair<double, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (auto s : sources) {
    dist[s] = 0.0;
    heap.emplace(0.0, s);
  }
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d > dist[u]) {
      continue;
    }
    for (auto e : out_links[u]) {
      const std::uint32_t v = p.links[e].dst;
      const double nd = d + p.tau[e];
      if (nd < dist[v]) {
        dist[v] = nd;
        parent[v] = e;
        heap.emplace(nd, v);
      }
    }
  }
  return parent;
}

Problem prepare(const NpuGraph& g, const Collective& c) {
  validate(g);
  Problem p;
  p.n = g.npus;
  p.chunks = c.chunks;
  p.links = g.links;
  const auto check_pair = [&](const std::pair<std::uint32_t, std::uint32_t>& pr, const char* what) {
    if (pr.first >= c.chunks || pr.second >= g.npus) {
      throw std::invalid_argument(std::string("synth: ") + what + " pair " + pair_text(pr.first, pr.second) +
                                  " out of range");
    }
    if (g.is_failed(pr.second)) {
      throw std::invalid_argument(std::string("synth: ") + what + " pair " + pair_text(pr.first, pr.second) +
                                  " is on a failed NPU");
    }
  };
  for (const auto& pr : c.pre) {
    check_pair(pr, "precondition");
  }
  for (const auto& pr : c.post) {
    check_pair(pr, "postcondition");
  }
  p.tau.resize(g.links.size());
  p.in.resize(p.n);
  p.outn.resize(p.n);
  std::vector<std::vector<std::uint32_t>> out_links(p.n);
  for (std::uint32_t e = 0; e < g.links.size(); ++e) {
    p.tau[e] = link_time_ns(g.links[e], c.chunk_bytes);
    p.in[g.links[e].dst].push_back(e);
    out_links[g.links[e].src].push_back(e);
    p.outn[g.links[e].src].push_back(g.links[e].dst);
  }
  for (auto& o : p.outn) {
    std::sort(o.begin(), o.end());
    o.erase(std::unique(o.begin(), o.end()), o.end());
  }

  const std::size_t cells = std::size_t{p.chunks} * p.n;
  std::vector<std::uint8_t> held(cells, 0), requested(cells, 0);
  p.post.assign(cells, 0);
  std::vector<std::vector<std::uint32_t>> holders(p.chunks);
  for (const auto& [ch, v] : c.pre) {
    if (held[idx(p, ch, v)] == 0) {
      held[idx(p, ch, v)] = 1;
      holders[ch].push_back(v);
      p.pre.emplace_back(ch, v);
    }
  }
  std::vector<std::vector<std::uint32_t>> targets(p.chunks);  // post NPUs lacking the chunk
  for (const auto& [ch, v] : c.post) {
    p.post[idx(p, ch, v)] = 1;
    if (held[idx(p, ch, v)] == 0 && requested[idx(p, ch, v)] == 0) {
      requested[idx(p, ch, v)] = 1;
      targets[ch].push_back(v);
      ++p.post_open;
    }
  }
  // Reachability and relays, one shortest-path tree per chunk (cached per
  // single source, the usual case).
  p.requests.resize(p.n);
  std::vector<std::vector<std::uint32_t>> tree_of_source(p.n);
  for (std::uint32_t ch = 0; ch < p.chunks; ++ch) {
    if (targets[ch].empty()) {
      continue;
    }
    std::vector<std::uint32_t> local;
    const std::vector<std::uint32_t>* tree = nullptr;
    if (holders[ch].size() == 1) {
      auto& cached = tree_of_source[holders[ch][0]];
      if (cached.empty()) {
        cached = shortest_tree(p, holders[ch], out_links);
      }
      tree = &cached;
    } else {
      local = shortest_tree(p, holders[ch], out_links);
      tree = &local;
    }
    for (auto v : targets[ch]) {
      p.requests[v].push_back(ch);
      if ((*tree)[v] == kNone) {
        throw std::invalid_argument("synth: postcondition pair " + pair_text(ch, v) +
                                    " is unreachable from every NPU holding the chunk");
      }
    }
    for (auto v : targets[ch]) {
      // Walk up to a holder; NPUs that neither hold nor request the chunk relay it.
      for (std::uint32_t w = p.links[(*tree)[v]].src; held[idx(p, ch, w)] == 0 && requested[idx(p, ch, w)] == 0;
           w = p.links[(*tree)[w]].src) {
        requested[idx(p, ch, w)] = 1;
        p.requests[w].push_back(ch);
      }
    }
  }
  return p;
}

struct Result {
  std::vector<Send> sends;
  double finish = 0.0;
};

Result run_instance(const Problem& p, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&rng](std::size_t k) { return static_cast<std::size_t>(rng() % k); };
  const std::size_t cells = std::size_t{p.chunks} * p.n;
  std::vector<double> hold(cells, kNever);  // arrival time of the chunk at the NPU
  for (const auto& [ch, v] : p.pre) {
    hold[idx(p, ch, v)] = 0.0;
  }
  auto req = p.requests;
  std::vector<std::uint32_t> pos(cells, kNone);
  for (std::uint32_t v = 0; v < p.n; ++v) {
    for (std::uint32_t i = 0; i < req[v].size(); ++i) {
      pos[idx(p, req[v][i], v)] = i;
    }
  }
  const auto nl = p.links.size();
  std::vector<std::uint32_t> inflight(nl, kNone);
  std::vector<double> start(nl, 0.0);
  using Event = std::pair<double, std::uint32_t>;  // (end time, link): pops in link order at equal times
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;

  std::vector<std::uint8_t> dirty(p.n, 1);
  std::vector<std::uint32_t> dirty_list(p.n);
  for (std::uint32_t v = 0; v < p.n; ++v) {
    dirty_list[v] = v;
  }
  const auto mark = [&](std::uint32_t v) {
    if (dirty[v] == 0) {
      dirty[v] = 1;
      dirty_list.push_back(v);
    }
  };

  Result r;
  std::uint64_t open = p.post_open;
  std::vector<std::uint32_t> idle_in;
  double t = 0.0;
  for (;;) {
    // Greedy matching (spec 5.4) at the NPUs whose options changed.
    std::sort(dirty_list.begin(), dirty_list.end());
    for (auto v : dirty_list) {
      dirty[v] = 0;
      auto& rv = req[v];
      if (rv.empty()) {
        continue;
      }
      idle_in.clear();
      for (auto e : p.in[v]) {
        if (inflight[e] == kNone) {
          idle_in.push_back(e);
        }
      }
      // Requests in random order (an incremental Fisher-Yates shuffle), each
      // taking its shortest idle candidate link, ties at random.
      for (std::size_t i = 0; i < rv.size() && !idle_in.empty(); ++i) {
        const std::size_t j = i + pick(rv.size() - i);
        std::swap(rv[i], rv[j]);
        pos[idx(p, rv[i], v)] = static_cast<std::uint32_t>(i);
        pos[idx(p, rv[j], v)] = static_cast<std::uint32_t>(j);
        const std::uint32_t ch = rv[i];
        std::size_t best = kNone, ties = 0;
        for (std::size_t k = 0; k < idle_in.size(); ++k) {
          const std::uint32_t e = idle_in[k];
          if (hold[idx(p, ch, p.links[e].src)] > t) {
            continue;
          }
          if (best == kNone || p.tau[e] < p.tau[idle_in[best]]) {
            best = k;
            ties = 1;
          } else if (p.tau[e] == p.tau[idle_in[best]] && pick(++ties) == 0) {
            best = k;
          }
        }
        if (best == kNone) {
          continue;
        }
        const std::uint32_t e = idle_in[best];
        inflight[e] = ch;
        start[e] = t;
        events.emplace(t + p.tau[e], e);
        idle_in[best] = idle_in.back();
        idle_in.pop_back();
      }
    }
    dirty_list.clear();
    if (events.empty()) {
      break;
    }
    // Arrivals at the next event time, in link order.
    t = events.top().first;
    while (!events.empty() && events.top().first == t) {
      const std::uint32_t e = events.top().second;
      events.pop();
      const std::uint32_t u = p.links[e].src, v = p.links[e].dst;
      std::uint32_t ch = inflight[e];
      inflight[e] = kNone;
      mark(v);  // an incoming link of v is idle again
      if (hold[idx(p, ch, v)] <= t) {
        // Outdated: replace with a chunk v still requests that u held at the start.
        ch = kNone;
        std::size_t seen = 0;
        for (auto c2 : req[v]) {
          if (hold[idx(p, c2, u)] <= start[e] && pick(++seen) == 0) {
            ch = c2;
          }
        }
        if (ch == kNone) {
          continue;
        }
      }
      hold[idx(p, ch, v)] = t;
      auto& rv = req[v];
      const std::uint32_t at = pos[idx(p, ch, v)];
      rv[at] = rv.back();
      pos[idx(p, rv[at], v)] = at;
      rv.pop_back();
      pos[idx(p, ch, v)] = kNone;
      r.sends.push_back(Send{ch, e, start[e], t});
      if (p.post[idx(p, ch, v)] != 0) {
        r.finish = std::max(r.finish, t);
        --open;
      }
      for (auto w : p.outn[v]) {
        mark(w);
      }
    }
  }
  if (open != 0) {
    throw std::logic_error("synth: greedy stalled with " + std::to_string(open) + " postcondition pairs open");
  }
  std::sort(r.sends.begin(), r.sends.end(), [](const Send& a, const Send& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.link < b.link;
  });
  return r;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

}  // namespace

Schedule greedy(const NpuGraph& g, const Collective& c, const GreedyOptions& opt) {
  if (opt.instances == 0) {
    throw std::invalid_argument("synth: greedy needs at least one instance");
  }
  const Problem p = prepare(g, c);
  Result best;
  for (std::uint32_t i = 0; i < opt.instances; ++i) {
    Result r = run_instance(p, splitmix64(opt.seed ^ splitmix64(i)));
    if (i == 0 || r.finish < best.finish) {
      best = std::move(r);
    }
  }
  return Schedule{std::move(best.sends), best.finish};
}

}  // namespace fabricsim::synth
