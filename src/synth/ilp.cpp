// TACOS-ILP and TACCL-like (tacos spec 3, 4; synth/ilp.hpp): the TEN, the
// spec's complete formulation (4.2) on COIN-OR CBC, the t_f search, early
// termination (4.3), time clustering (4.4) and the time-domain translator.
#include "fabricsim/synth/ilp.hpp"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace fabricsim::synth {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kInf = std::numeric_limits<std::uint32_t>::max();
// Step counts stay far from kInf when added along paths.
constexpr double kMaxLinkSteps = 1e6;
// A longer budget is no budget (and would overflow the clock).
constexpr double kMaxSeconds = 1e9;

std::string pair_text(std::uint32_t chunk, std::uint32_t npu) {
  return "(chunk " + std::to_string(chunk) + ", NPU " + std::to_string(npu) + ")";
}

/// A send in the TEN: chunk over link, leaving at `step`, arriving at step + k_e.
struct StepSend {
  std::uint32_t chunk = 0;
  std::uint32_t link = 0;
  std::uint32_t step = 0;
};

// The instance: TEN, adjacency and the collective as (chunk, NPU) cells.
struct Ctx {
  const NpuGraph* g = nullptr;
  std::uint32_t n = 0;
  std::uint32_t chunks = 0;
  bool congestion = true;
  TimeExpanded ten;
  std::vector<double> cost;                     // per link, ns
  std::vector<std::vector<std::uint32_t>> in;   // per NPU: incoming link ids
  std::vector<std::vector<std::uint32_t>> out;  // per NPU: outgoing link ids
  std::vector<std::uint8_t> pre;                // per cell
  std::vector<std::uint8_t> post;               // per cell
  std::vector<std::uint8_t> live;               // per NPU

  std::size_t cell(std::uint32_t c, std::uint32_t v) const { return std::size_t{c} * n + v; }
  std::uint32_t src(std::uint32_t e) const { return g->links[e].src; }
  std::uint32_t dst(std::uint32_t e) const { return g->links[e].dst; }
  std::uint32_t k(std::uint32_t e) const { return ten.steps[e]; }
};

std::uint32_t add_sat(std::uint32_t a, std::uint32_t b) { return a == kInf || b == kInf ? kInf : a + b; }

// Multi-source Dijkstra in steps: init[v] is the step at which v starts
// (kInf: not a source); forward over out-links, or backward over in-links.
// parent (forward only): the link that reached each NPU, kInf at sources.
std::vector<std::uint32_t> step_dijkstra(const Ctx& x, std::vector<std::uint32_t> dist, bool backward,
                                         std::vector<std::uint32_t>* parent = nullptr) {
  using Item = std::pair<std::uint32_t, std::uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  if (parent != nullptr) {
    parent->assign(x.n, kInf);
  }
  for (std::uint32_t v = 0; v < x.n; ++v) {
    if (dist[v] != kInf) {
      heap.emplace(dist[v], v);
    }
  }
  while (!heap.empty()) {
    const auto [d, u] = heap.top();
    heap.pop();
    if (d > dist[u]) {
      continue;
    }
    for (auto e : backward ? x.in[u] : x.out[u]) {
      const std::uint32_t w = backward ? x.src(e) : x.dst(e);
      const std::uint32_t nd = d + x.k(e);
      if (nd < dist[w]) {
        dist[w] = nd;
        if (parent != nullptr) {
          (*parent)[w] = e;
        }
        heap.emplace(nd, w);
      }
    }
  }
  return dist;
}

Ctx prepare(const NpuGraph& g, const Collective& c, const IlpOptions& opt) {
  Ctx x;
  x.g = &g;
  x.ten = time_expanded(g, c.chunk_bytes, opt.step_ns);  // validates g
  x.n = g.npus;
  x.chunks = c.chunks;
  x.congestion = opt.congestion;
  x.in.resize(x.n);
  x.out.resize(x.n);
  for (std::uint32_t e = 0; e < g.links.size(); ++e) {
    x.cost.push_back(link_time_ns(g.links[e], c.chunk_bytes));
    x.out[g.links[e].src].push_back(e);
    x.in[g.links[e].dst].push_back(e);
  }
  x.live.assign(x.n, 1);
  for (std::uint32_t v = 0; v < x.n; ++v) {
    x.live[v] = g.is_failed(v) ? 0 : 1;
  }
  const std::size_t cells = std::size_t{x.chunks} * x.n;
  x.pre.assign(cells, 0);
  x.post.assign(cells, 0);
  const auto mark = [&](const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs, const char* what,
                        std::vector<std::uint8_t>& into) {
    for (const auto& [ch, v] : pairs) {
      if (ch >= c.chunks || v >= g.npus) {
        throw std::invalid_argument(std::string("synth: ") + what + " pair " + pair_text(ch, v) + " out of range");
      }
      if (g.is_failed(v)) {
        throw std::invalid_argument(std::string("synth: ") + what + " pair " + pair_text(ch, v) +
                                    " is on a failed NPU");
      }
      into[x.cell(ch, v)] = 1;
    }
  };
  mark(c.pre, "precondition", x.pre);
  mark(c.post, "postcondition", x.post);
  // Every open postcondition pair must be reachable from a holder.
  for (std::uint32_t ch = 0; ch < x.chunks; ++ch) {
    std::vector<std::uint32_t> init(x.n, kInf);
    bool open = false;
    for (std::uint32_t v = 0; v < x.n; ++v) {
      init[v] = x.pre[x.cell(ch, v)] != 0 ? 0 : kInf;
      open = open || (x.post[x.cell(ch, v)] != 0 && x.pre[x.cell(ch, v)] == 0);
    }
    if (!open) {
      continue;
    }
    const auto dist = step_dijkstra(x, init, false);
    for (std::uint32_t v = 0; v < x.n; ++v) {
      if (x.post[x.cell(ch, v)] != 0 && dist[v] == kInf) {
        throw std::invalid_argument("synth: postcondition pair " + pair_text(ch, v) +
                                    " is unreachable from every NPU holding the chunk");
      }
    }
  }
  return x;
}

// --- Step-level shortest paths (the fallback, the t_f bound, warm starts).

using Busy = std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>;  // per link: [from, to) sorted

// The first step >= t0 at which the link is free for k steps.
std::uint32_t free_slot(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& busy, std::uint32_t t0,
                        std::uint32_t k) {
  std::uint32_t t = t0;
  for (const auto& [from, to] : busy) {
    if (to <= t) {
      continue;
    }
    if (from >= t + k) {
      break;
    }
    t = to;
  }
  return t;
}

void reserve(Busy& busy, std::uint32_t e, std::uint32_t from, std::uint32_t k) {
  auto& b = busy[e];
  b.insert(std::upper_bound(b.begin(), b.end(), std::make_pair(from, from + k)), std::make_pair(from, from + k));
}

// Routes every postcondition pair not held in `arrive` (per cell: the step
// the chunk is at the NPU, kInf: never), farthest pair first (static steps
// from the chunk's copies), each on an earliest-arrival path from the
// chunk's current copies given the links' reservations in `busy` (with
// congestion: a hop takes the first slot its link has free; without, it
// leaves at once).  The sends reserve their links.
void route(const Ctx& x, std::vector<std::uint32_t>& arrive, Busy& busy, std::vector<StepSend>& sends) {
  struct Pair {
    std::uint32_t dist = 0, chunk = 0, npu = 0;
  };
  std::vector<Pair> pairs;
  for (std::uint32_t ch = 0; ch < x.chunks; ++ch) {
    std::vector<std::uint32_t> init(x.n);
    bool open = false;
    for (std::uint32_t v = 0; v < x.n; ++v) {
      init[v] = arrive[x.cell(ch, v)];
      open = open || (x.post[x.cell(ch, v)] != 0 && init[v] == kInf);
    }
    if (!open) {
      continue;
    }
    const auto dist = step_dijkstra(x, init, false);
    for (std::uint32_t v = 0; v < x.n; ++v) {
      if (x.post[x.cell(ch, v)] != 0 && init[v] == kInf) {
        pairs.push_back(Pair{dist[v], ch, v});
      }
    }
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.dist > b.dist; });
  using Item = std::pair<std::uint32_t, std::uint32_t>;
  std::vector<std::uint32_t> label(x.n), parent(x.n), leave(x.n), path;
  for (const Pair& p : pairs) {
    if (arrive[x.cell(p.chunk, p.npu)] != kInf) {
      continue;  // a relay of an earlier pair
    }
    // Dijkstra on arrival steps: leaving later never arrives earlier (FIFO).
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    for (std::uint32_t v = 0; v < x.n; ++v) {
      label[v] = arrive[x.cell(p.chunk, v)];
      parent[v] = kInf;
      if (label[v] != kInf) {
        heap.emplace(label[v], v);
      }
    }
    while (!heap.empty()) {
      const auto [t, u] = heap.top();
      heap.pop();
      if (t > label[u]) {
        continue;
      }
      for (auto e : x.out[u]) {
        const std::uint32_t w = x.dst(e);
        const std::uint32_t start = x.congestion ? free_slot(busy[e], t, x.k(e)) : t;
        if (start + x.k(e) < label[w]) {
          label[w] = start + x.k(e);
          parent[w] = e;
          leave[w] = start;
          heap.emplace(label[w], w);
        }
      }
    }
    if (label[p.npu] == kInf) {
      throw std::logic_error("synth: ilp route lost " + pair_text(p.chunk, p.npu));
    }
    path.clear();
    for (std::uint32_t w = p.npu; arrive[x.cell(p.chunk, w)] == kInf; w = x.src(parent[w])) {
      path.push_back(w);
    }
    for (auto w : path) {
      const std::uint32_t e = parent[w];
      if (x.congestion) {
        reserve(busy, e, leave[w], x.k(e));
      }
      arrive[x.cell(p.chunk, w)] = label[w];
      sends.push_back(StepSend{p.chunk, e, leave[w]});
    }
  }
}

// The fewest steps in which `links` (each busy k_e steps per chunk) carry `count` chunks.
std::uint32_t steps_to_carry(const Ctx& x, const std::vector<std::uint32_t>& links, std::uint64_t count) {
  std::uint32_t t = 0;
  for (std::uint64_t carried = 0; carried < count && !links.empty(); ++t) {
    carried = 0;
    for (auto e : links) {
      carried += (t + 1) / x.k(e);
    }
  }
  return t;
}

// With congestion: an NPU receives each chunk it lacks over its in-links, and
// a chunk held by one NPU only leaves it over its out-links at least once.
std::uint32_t link_bound(const Ctx& x) {
  std::vector<std::uint64_t> need(x.n, 0), sole(x.n, 0);
  for (std::uint32_t ch = 0; ch < x.chunks; ++ch) {
    std::uint32_t holders = 0, holder = 0;
    bool wanted = false;
    for (std::uint32_t v = 0; v < x.n; ++v) {
      const std::size_t i = x.cell(ch, v);
      if (x.pre[i] != 0) {
        ++holders;
        holder = v;
      } else if (x.post[i] != 0) {
        ++need[v];
        wanted = true;
      }
    }
    if (holders == 1 && wanted) {
      ++sole[holder];
    }
  }
  std::uint32_t bound = 0;
  for (std::uint32_t v = 0; v < x.n; ++v) {
    bound = std::max({bound, steps_to_carry(x, x.in[v], need[v]), steps_to_carry(x, x.out[v], sole[v])});
  }
  return bound;
}

std::vector<std::uint32_t> arrivals_of_pre(const Ctx& x) {
  std::vector<std::uint32_t> arrive(x.pre.size(), kInf);
  for (std::size_t i = 0; i < arrive.size(); ++i) {
    if (x.pre[i] != 0) {
      arrive[i] = 0;
    }
  }
  return arrive;
}

std::uint32_t makespan(const Ctx& x, const std::vector<std::uint32_t>& arrive) {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < arrive.size(); ++i) {
    if (x.post[i] != 0) {
      m = std::max(m, arrive[i]);
    }
  }
  return m;
}

// --- The ILP on TEN_T (spec 4.2), from the cells `held` at step 0.

struct XVar {
  std::uint32_t chunk = 0;
  std::uint32_t link = 0;
  std::uint32_t step = 0;
};

struct Model {
  std::uint32_t horizon = 0;
  bool hard_post = true;
  std::vector<std::int64_t> h_base;  // per cell: column of h[c,v,h_from], -1: no h variable
  std::vector<std::uint32_t> h_from;
  std::vector<std::uint32_t> h_to;  // last step with an h variable
  int h_count = 0;
  std::vector<XVar> xs;  // column h_count + i
  bool trivially_infeasible = false;
  // The LP in CoinPackedMatrix triplets.
  std::vector<int> row_index, col_index;
  std::vector<double> element, col_lb, col_ub, objective, row_lb, row_ub;
  int rows = 0;

  int cols() const { return h_count + static_cast<int>(xs.size()); }
  // The column of h[c,v,t]; the variable must exist (h_from <= t <= h_to).
  std::size_t hcol(std::size_t cell, std::uint32_t t) const {
    return static_cast<std::size_t>(h_base[cell]) + (t - h_from[cell]);
  }
  int h(std::size_t cell, std::uint32_t t) const { return static_cast<int>(hcol(cell, t)); }
  int add_row(double lb, double ub) {
    row_lb.push_back(lb);
    row_ub.push_back(ub);
    return rows++;
  }
  void add(int row, int col, double value) {
    row_index.push_back(row);
    col_index.push_back(col);
    element.push_back(value);
  }
};

// `open`: the cells whose arrival the objective rewards (postcondition pairs
// not held); hard_post: they must hold at T (the t_f search), else the model
// maximises arrivals only (a time-clustering window).
Model build(const Ctx& x, const std::vector<std::uint8_t>& held, std::uint32_t horizon, bool hard_post,
            std::uint64_t max_variables) {
  Model m;
  m.horizon = horizon;
  m.hard_post = hard_post;
  const std::size_t cells = held.size();
  std::vector<std::uint8_t> open(cells, 0);
  for (std::size_t i = 0; i < cells; ++i) {
    open[i] = x.post[i] != 0 && held[i] == 0 ? 1 : 0;
  }
  // earliest: shortest path in steps from a holder; to_post: from the NPU to
  // an open pair of the chunk (a relay later than T - to_post is useless).
  std::vector<std::uint32_t> earliest(cells, kInf), to_post(cells, kInf);
  for (std::uint32_t ch = 0; ch < x.chunks; ++ch) {
    std::vector<std::uint32_t> from(x.n, kInf), to(x.n, kInf);
    for (std::uint32_t v = 0; v < x.n; ++v) {
      from[v] = held[x.cell(ch, v)] != 0 ? 0 : kInf;
      to[v] = open[x.cell(ch, v)] != 0 ? 0 : kInf;
    }
    from = step_dijkstra(x, from, false);
    to = step_dijkstra(x, to, true);
    for (std::uint32_t v = 0; v < x.n; ++v) {
      earliest[x.cell(ch, v)] = from[v];
      to_post[x.cell(ch, v)] = to[v];
    }
  }
  // h variables: a cell not held, reachable by T and still of use then.
  m.h_base.assign(cells, -1);
  m.h_from.assign(cells, 0);
  m.h_to.assign(cells, 0);
  std::uint64_t variables = 0;
  for (std::size_t i = 0; i < cells; ++i) {
    const std::uint32_t v = static_cast<std::uint32_t>(i % x.n);
    if (held[i] != 0 || x.live[v] == 0 || earliest[i] == kInf || add_sat(earliest[i], to_post[i]) > horizon) {
      if (open[i] != 0 && hard_post) {
        m.trivially_infeasible = true;  // cannot reach it by T
      }
      continue;
    }
    m.h_from[i] = std::max<std::uint32_t>(1, earliest[i]);
    m.h_to[i] = horizon - to_post[i];
    m.h_base[i] = static_cast<std::int64_t>(variables);
    variables += m.h_to[i] - m.h_from[i] + 1;
  }
  // x variables: the source holds the chunk (or may, by then) and the
  // receiver can use it.
  std::uint64_t x_count = 0;
  const auto for_each_x = [&](const auto& fn) {
    for (std::uint32_t ch = 0; ch < x.chunks; ++ch) {
      for (std::uint32_t e = 0; e < x.g->links.size(); ++e) {
        const std::size_t s = x.cell(ch, x.src(e)), d = x.cell(ch, x.dst(e));
        if (m.h_base[d] < 0 || (held[s] == 0 && m.h_base[s] < 0)) {
          continue;
        }
        const std::uint32_t first = held[s] != 0 ? 0 : m.h_from[s];
        for (std::uint32_t t = first; t + x.k(e) <= horizon; ++t) {
          if ((held[s] == 0 && t > m.h_to[s]) || t + x.k(e) > m.h_to[d]) {
            continue;
          }
          fn(ch, e, t);
        }
      }
    }
  };
  for_each_x([&](std::uint32_t, std::uint32_t, std::uint32_t) { ++x_count; });
  variables += x_count;
  if (variables > max_variables) {
    throw std::invalid_argument("synth: the ILP on TEN_" + std::to_string(horizon) + " has " +
                                std::to_string(variables) + " variables, over the limit of " +
                                std::to_string(max_variables) + " (IlpOptions::max_variables)");
  }
  if (m.trivially_infeasible) {
    return m;
  }
  m.h_count = static_cast<int>(variables - x_count);
  m.xs.reserve(x_count);
  for_each_x([&](std::uint32_t ch, std::uint32_t e, std::uint32_t t) { m.xs.push_back(XVar{ch, e, t}); });

  const int cols = m.cols();
  m.col_lb.assign(static_cast<std::size_t>(cols), 0.0);
  m.col_ub.assign(static_cast<std::size_t>(cols), 1.0);
  m.objective.assign(static_cast<std::size_t>(cols), 0.0);
  // Objective (CBC minimises): maximise the open pairs' h over t = 1..T.
  // (post): the open pairs hold at T.
  for (std::size_t i = 0; i < cells; ++i) {
    if (open[i] == 0 || m.h_base[i] < 0) {
      continue;
    }
    for (std::uint32_t t = m.h_from[i]; t <= m.h_to[i]; ++t) {
      m.objective[m.hcol(i, t)] = -1.0;
    }
    if (hard_post) {
      m.col_lb[m.hcol(i, horizon)] = 1.0;
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  // (cons): a send needs the chunk at the source when it leaves and puts it
  // at the receiver when it arrives.  Arrivals are collected for (flow).
  std::vector<std::vector<std::pair<std::uint32_t, int>>> arrivals(cells);  // (step, column)
  for (std::size_t j = 0; j < m.xs.size(); ++j) {
    const XVar& s = m.xs[j];
    const int col = m.h_count + static_cast<int>(j);
    const std::size_t from = x.cell(s.chunk, x.src(s.link)), to = x.cell(s.chunk, x.dst(s.link));
    const std::uint32_t at = s.step + x.k(s.link);
    if (held[from] == 0) {
      const int r = m.add_row(-inf, 0.0);
      m.add(r, col, 1.0);
      m.add(r, m.h(from, s.step), -1.0);
    }
    const int r = m.add_row(-inf, 0.0);
    m.add(r, col, 1.0);
    m.add(r, m.h(to, at), -1.0);
    arrivals[to].emplace_back(at, col);
  }
  // (keep) h[t+1] >= h[t] and (flow) h[t] <= h[t-1] + arrivals at t.
  for (std::size_t i = 0; i < cells; ++i) {
    if (m.h_base[i] < 0) {
      continue;
    }
    auto& arr = arrivals[i];
    std::sort(arr.begin(), arr.end());
    std::size_t a = 0;
    for (std::uint32_t t = m.h_from[i]; t <= m.h_to[i]; ++t) {
      if (t < m.h_to[i]) {
        const int r = m.add_row(-inf, 0.0);
        m.add(r, m.h(i, t), 1.0);
        m.add(r, m.h(i, t + 1), -1.0);
      }
      const int r = m.add_row(-inf, 0.0);
      m.add(r, m.h(i, t), 1.0);
      if (t > m.h_from[i]) {
        m.add(r, m.h(i, t - 1), -1.0);
      }
      for (; a < arr.size() && arr[a].first <= t; ++a) {
        if (arr[a].first == t) {
          m.add(r, arr[a].second, -1.0);
        }
      }
    }
  }
  // (cong): a link carries at most one chunk over the k_e steps each send
  // keeps it busy.  Left out for TACCL-like.
  if (x.congestion) {
    std::vector<std::vector<std::pair<std::uint32_t, int>>> on_link(x.g->links.size());
    for (std::size_t j = 0; j < m.xs.size(); ++j) {
      on_link[m.xs[j].link].emplace_back(m.xs[j].step, m.h_count + static_cast<int>(j));
    }
    std::vector<int> window;
    for (std::uint32_t e = 0; e < on_link.size(); ++e) {
      auto& sends = on_link[e];
      std::sort(sends.begin(), sends.end());
      for (std::uint32_t t = 0; t < horizon; ++t) {
        window.clear();
        for (const auto& [step, col] : sends) {
          if (step <= t && step + x.k(e) > t) {
            window.push_back(col);
          }
        }
        if (window.size() < 2) {
          continue;
        }
        const int r = m.add_row(-inf, 1.0);
        for (int col : window) {
          m.add(r, col, 1.0);
        }
      }
    }
  }
  return m;
}

enum class Outcome : std::uint8_t { Solved, Infeasible, NoIncumbent };

struct Solution {
  Outcome outcome = Outcome::NoIncumbent;
  bool proven = false;        // optimal (Solved) or infeasible, with no limit cutting the solve short
  bool time_limited = false;  // the limit cut the solve short
  std::vector<StepSend> sends;
};

/// CBC and CLP write their logs to stdout by default; fabricsim's stdout
/// carries its own output only.
void silence(OsiSolverInterface& solver) {
  solver.messageHandler()->setLogLevel(0);
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);
}

// Solves the model within limit_s (0: none); `start` (sends on TEN_T that
// satisfy the model) becomes CBC's first incumbent when not empty.
Solution solve(const Ctx& x, const Model& m, double limit_s, const std::vector<StepSend>& start) {
  Solution out;
  if (m.trivially_infeasible) {
    out.outcome = Outcome::Infeasible;
    out.proven = true;
    return out;
  }
  const int cols = m.cols();
  if (cols == 0) {
    out.outcome = Outcome::Solved;
    out.proven = true;
    return out;
  }
  const CoinPackedMatrix matrix(true, m.row_index.data(), m.col_index.data(), m.element.data(),
                                static_cast<CoinBigIndex>(m.element.size()));
  OsiClpSolverInterface solver;
  silence(solver);
  solver.loadProblem(matrix, m.col_lb.data(), m.col_ub.data(), m.objective.data(), m.row_lb.data(), m.row_ub.data());
  for (int j = 0; j < cols; ++j) {
    solver.setInteger(j);
  }
  CbcModel model(solver);
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  silence(*model.solver());
  // Without the post rows, no send at all is a solution too.
  if (!start.empty() || !m.hard_post) {
    // The start's h follows from its sends: a cell holds from its first arrival.
    std::vector<double> initial(static_cast<std::size_t>(cols), 0.0);
    std::vector<std::uint32_t> first(m.h_base.size(), kInf);
    for (const StepSend& s : start) {
      const std::size_t d = x.cell(s.chunk, x.dst(s.link));
      first[d] = std::min(first[d], s.step + x.k(s.link));
    }
    double value = 0.0;
    for (std::size_t i = 0; i < first.size(); ++i) {
      if (m.h_base[i] < 0 || first[i] == kInf) {
        continue;
      }
      for (std::uint32_t t = std::max(first[i], m.h_from[i]); t <= m.h_to[i]; ++t) {
        initial[m.hcol(i, t)] = 1.0;
        value += m.objective[m.hcol(i, t)];
      }
    }
    // build() lists the x variables in (chunk, link, step) order.
    const auto key = [](const XVar& v) { return std::make_tuple(v.chunk, v.link, v.step); };
    for (const StepSend& s : start) {
      const XVar want{s.chunk, s.link, s.step};
      const auto it = std::lower_bound(m.xs.begin(), m.xs.end(), want,
                                       [&](const XVar& a, const XVar& b) { return key(a) < key(b); });
      if (it != m.xs.end() && key(*it) == key(want)) {
        initial[static_cast<std::size_t>(m.h_count) + static_cast<std::size_t>(it - m.xs.begin())] = 1.0;
      }
    }
    // With check, CBC drops a start that breaks a row.
    model.setBestSolution(initial.data(), cols, value, true);
  }
  // CBC's own driver (CbcMain: cuts, heuristics) rather than a bare
  // branchAndBound(): with hand-picked cuts and heuristics the latter solved
  // mesh 4x4 all-gather to optimality several times slower and overran a
  // 60 s limit by minutes on mesh 4x5.  The driver keeps the start given
  // above.  Its preprocessing stays off: CglPreProcess::postProcess crashed
  // when a tiny limit stopped the search, and without it mesh 3x3 all-gather
  // of 2 chunks solved 3x faster.  Wall-clock time: the budget is the
  // caller's, on a possibly busy machine.
  // CBC checks "-sec" between nodes only, and its first LP on a large TEN
  // (Clp's idiot crash and primal simplex) ran past a 1 s limit for 70 s
  // on Ring_Ring 6x6: Clp gets the limit too, and the idiot crash (which
  // never looks at the clock) is off.  A stopped LP can make CBC claim the
  // optimum; the elapsed time below tells.
  if (limit_s > 0) {
    if (auto* clp = dynamic_cast<OsiClpSolverInterface*>(model.solver())) {
      clp->getModelPtr()->setMaximumSeconds(limit_s);
    }
  }
  // "-sec" reads 6 decimals, and 0 would mean no limit.
  const std::string seconds = std::to_string(std::max(limit_s, 1e-3));
  std::vector<const char*> args = {"fabricsim", "-log",    "0",           "-slog", "0",     "-idiot",
                                   "0",         "-timeMode", "elapsed", "-preprocess", "off"};
  if (limit_s > 0) {
    args.push_back("-sec");
    args.push_back(seconds.c_str());
  }
  args.push_back("-solve");
  args.push_back("-quit");
  const auto started = Clock::now();
  CbcSolverUsefulData data;
  CbcMain0(model, data);
  CbcMain1(
      static_cast<int>(args.size()), args.data(), model, [](CbcModel*, int) { return 0; }, data);
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  out.time_limited = model.isSecondsLimitReached() || (limit_s > 0 && elapsed >= limit_s);
  const double* best = model.bestSolution();
  if (best == nullptr) {
    if (model.isProvenInfeasible() && !out.time_limited) {
      out.outcome = Outcome::Infeasible;
      out.proven = true;
    } else {
      out.outcome = Outcome::NoIncumbent;
    }
    return out;
  }
  out.outcome = Outcome::Solved;
  out.proven = model.isProvenOptimal() && !out.time_limited;
  for (std::size_t j = 0; j < m.xs.size(); ++j) {
    if (best[static_cast<std::size_t>(m.h_count) + j] > 0.5) {
      out.sends.push_back(StepSend{m.xs[j].chunk, m.xs[j].link, m.xs[j].step});
    }
  }
  return out;
}

// --- From step sends to a schedule.

// Keeps, per (chunk, NPU), the earliest arrival in steps of sends that are
// causal (the chunk at the source when they leave), into NPUs that do not
// hold the chunk from the start; `arrive` gets the cells' arrival steps.
std::vector<StepSend> first_receipts(const Ctx& x, std::vector<StepSend> sends, std::vector<std::uint32_t>& arrive) {
  std::sort(sends.begin(), sends.end(), [&](const StepSend& a, const StepSend& b) {
    const std::uint32_t ta = a.step + x.k(a.link), tb = b.step + x.k(b.link);
    if (ta != tb) {
      return ta < tb;
    }
    return a.step != b.step ? a.step < b.step : (a.link != b.link ? a.link < b.link : a.chunk < b.chunk);
  });
  // Sorted by arrival, a send's source receipt (arriving by its start) comes first.
  std::vector<StepSend> kept;
  for (const StepSend& s : sends) {
    const std::size_t from = x.cell(s.chunk, x.src(s.link)), to = x.cell(s.chunk, x.dst(s.link));
    if (arrive[from] <= s.step && arrive[to] == kInf) {
      arrive[to] = s.step + x.k(s.link);
      kept.push_back(s);
    }
  }
  return kept;
}

// Drops sends into NPUs that neither want the chunk nor pass it on.
std::vector<StepSend> prune_relays(const Ctx& x, const std::vector<StepSend>& sends) {
  std::vector<std::uint32_t> forwards(x.post.size(), 0);
  std::vector<std::uint32_t> receipt(x.post.size(), kInf);  // index of the send into the cell
  for (std::uint32_t i = 0; i < sends.size(); ++i) {
    ++forwards[x.cell(sends[i].chunk, x.src(sends[i].link))];
    receipt[x.cell(sends[i].chunk, x.dst(sends[i].link))] = i;
  }
  std::vector<std::uint8_t> drop(sends.size(), 0);
  std::vector<std::size_t> queue;
  for (std::size_t i = 0; i < x.post.size(); ++i) {
    if (receipt[i] != kInf && x.post[i] == 0 && forwards[i] == 0) {
      queue.push_back(i);
    }
  }
  while (!queue.empty()) {
    const std::size_t i = queue.back();
    queue.pop_back();
    const std::uint32_t r = receipt[i];
    drop[r] = 1;
    const std::size_t from = x.cell(sends[r].chunk, x.src(sends[r].link));
    if (--forwards[from] == 0 && receipt[from] != kInf && x.post[from] == 0) {
      queue.push_back(from);
    }
  }
  std::vector<StepSend> kept;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    if (drop[i] == 0) {
      kept.push_back(sends[i]);
    }
  }
  return kept;
}

// The time-domain translator (spec 4.1): sends in (step, link) order, each
// as soon as its chunk is at the source and its link is free.
Schedule translate(const Ctx& x, std::vector<StepSend> sends) {
  std::sort(sends.begin(), sends.end(), [](const StepSend& a, const StepSend& b) {
    return a.step != b.step ? a.step < b.step : (a.link != b.link ? a.link < b.link : a.chunk < b.chunk);
  });
  constexpr double kNever = std::numeric_limits<double>::infinity();
  std::vector<double> at(x.pre.size(), kNever);
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (x.pre[i] != 0) {
      at[i] = 0.0;
    }
  }
  std::vector<double> link_free(x.g->links.size(), 0.0);
  Schedule s;
  for (const StepSend& m : sends) {
    const double start = std::max(at[x.cell(m.chunk, x.src(m.link))], link_free[m.link]);
    const double end = start + x.cost[m.link];
    link_free[m.link] = end;
    at[x.cell(m.chunk, x.dst(m.link))] = end;
    s.sends.push_back(Send{m.chunk, m.link, start, end, false});
  }
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (x.post[i] != 0) {
      s.finish_ns = std::max(s.finish_ns, at[i]);
    }
  }
  std::stable_sort(s.sends.begin(), s.sends.end(), [](const Send& a, const Send& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.link < b.link;
  });
  return s;
}

double seconds_left(Clock::time_point deadline, bool limited) {
  if (!limited) {
    return 0.0;  // no limit
  }
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

}  // namespace

std::uint32_t link_steps(double cost_ns, double step_ns) {
  if (!(step_ns > 0.0)) {
    throw std::invalid_argument("synth: the TEN step must be positive");
  }
  const double q = cost_ns / step_ns;
  const double k = std::ceil(q - 1e-9 * std::max(1.0, q));
  if (!(k <= kMaxLinkSteps)) {
    throw std::invalid_argument("synth: a link of " + std::to_string(cost_ns) + " ns takes over " +
                                std::to_string(kMaxLinkSteps) + " steps of " + std::to_string(step_ns) + " ns");
  }
  return k < 1.0 ? 1U : static_cast<std::uint32_t>(k);
}

TimeExpanded time_expanded(const NpuGraph& g, std::uint64_t chunk_bytes, double step_ns) {
  validate(g);
  if (!(step_ns >= 0.0)) {
    throw std::invalid_argument("synth: the TEN step must not be negative");
  }
  TimeExpanded t;
  t.step_ns = step_ns;
  if (step_ns == 0.0) {
    double smallest = std::numeric_limits<double>::infinity();
    for (const Link& l : g.links) {
      const double c = link_time_ns(l, chunk_bytes);
      if (c > 0.0) {
        smallest = std::min(smallest, c);
      }
    }
    t.step_ns = std::isfinite(smallest) ? smallest : 1.0;
  }
  for (const Link& l : g.links) {
    t.steps.push_back(link_steps(link_time_ns(l, chunk_bytes), t.step_ns));
  }
  // Diameter: Dijkstra in steps from every live NPU.
  Ctx x;
  x.g = &g;
  x.n = g.npus;
  x.ten.steps = t.steps;
  x.in.resize(x.n);
  x.out.resize(x.n);
  for (std::uint32_t e = 0; e < g.links.size(); ++e) {
    x.out[g.links[e].src].push_back(e);
    x.in[g.links[e].dst].push_back(e);
  }
  for (std::uint32_t s = 0; s < g.npus; ++s) {
    if (g.is_failed(s)) {
      continue;
    }
    std::vector<std::uint32_t> init(g.npus, kInf);
    init[s] = 0;
    for (auto d : step_dijkstra(x, init, false)) {
      if (d != kInf) {
        t.diameter_steps = std::max(t.diameter_steps, d);
      }
    }
  }
  return t;
}

IlpResult ilp(const NpuGraph& g, const Collective& c, const IlpOptions& opt) {
  const auto started = Clock::now();
  if (!(opt.time_limit_s >= 0.0)) {
    throw std::invalid_argument("synth: the ILP time limit must not be negative");
  }
  const Ctx x = prepare(g, c, opt);
  const bool limited = opt.time_limit_s > 0.0 && opt.time_limit_s < kMaxSeconds;
  const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(limited ? opt.time_limit_s : 0.0));
  IlpResult r;

  // The shortest-path schedule from the precondition: the fallback, the t_f
  // search's bound and a warm start.
  std::vector<std::uint32_t> sp_arrive = arrivals_of_pre(x);
  Busy sp_busy(g.links.size());
  std::vector<StepSend> shortest;
  route(x, sp_arrive, sp_busy, shortest);
  const std::uint32_t sp_steps = makespan(x, sp_arrive);
  // Lower bound: the farthest open pair from its chunk's nearest holder.
  std::uint32_t lower = 0;
  for (std::uint32_t ch = 0; ch < x.chunks; ++ch) {
    std::vector<std::uint32_t> init(x.n);
    for (std::uint32_t v = 0; v < x.n; ++v) {
      init[v] = x.pre[x.cell(ch, v)] != 0 ? 0 : kInf;
    }
    const auto dist = step_dijkstra(x, init, false);
    for (std::uint32_t v = 0; v < x.n; ++v) {
      if (x.post[x.cell(ch, v)] != 0) {
        lower = std::max(lower, dist[v]);  // reachable: prepare() checked
      }
    }
  }
  if (x.congestion) {
    lower = std::max(lower, link_bound(x));
  }

  std::vector<StepSend> sends;  // on the whole step axis
  std::vector<std::uint8_t> held = x.pre;
  bool have_schedule = false;
  if (lower == 0) {
    r.optimal = true;
    r.status = "the precondition already satisfies the postcondition";
    have_schedule = true;
  } else if (!opt.clustering) {
    const std::uint32_t bound = opt.max_steps != 0 ? std::min(opt.max_steps, sp_steps) : sp_steps;
    for (std::uint32_t horizon = lower; horizon <= bound; ++horizon) {
      const double left = seconds_left(deadline, limited);
      if (limited && left <= 0.0) {
        r.early_terminated = true;
        r.status = "time limit before t_f = " + std::to_string(horizon) + ": shortest paths from the precondition";
        break;
      }
      const Model m = build(x, held, horizon, true, opt.max_variables);
      const Solution s = solve(x, m, left, horizon >= sp_steps ? shortest : std::vector<StepSend>{});
      if (s.outcome == Outcome::Infeasible) {
        continue;
      }
      if (s.outcome == Outcome::NoIncumbent) {
        r.early_terminated = true;
        r.status = "time limit at t_f = " + std::to_string(horizon) +
                   " without an incumbent: shortest paths from the precondition";
        break;
      }
      sends = s.sends;
      have_schedule = true;
      r.windows = 1;
      r.optimal = s.proven;
      r.early_terminated = s.time_limited;
      const std::string at = "t_f = " + std::to_string(horizon);
      r.status = s.proven         ? "optimal at " + at
                 : s.time_limited ? "time limit at " + at + ": incumbent taken"
                                  : at + ", optimality not proven";
      if (!s.proven && horizon == lower) {
        r.status += " (t_f is the lower bound: the step count is optimal)";
      }
      break;
    }
    if (!have_schedule && r.status.empty()) {
      r.status = "no feasible t_f up to " + std::to_string(bound) + ": shortest paths from the precondition";
    }
  } else {
    // Time clustering: windows maximising arrivals, each from the state the
    // previous ones left.
    const std::uint32_t base_window =
        opt.window_steps != 0 ? opt.window_steps : std::max<std::uint32_t>(1, x.ten.diameter_steps);
    std::uint32_t window = base_window;
    std::uint32_t offset = 0;
    std::vector<std::uint32_t> arrive = arrivals_of_pre(x);
    const auto open_left = [&]() {
      for (std::size_t i = 0; i < held.size(); ++i) {
        if (x.post[i] != 0 && held[i] == 0) {
          return true;
        }
      }
      return false;
    };
    while (open_left()) {
      const double left = seconds_left(deadline, limited);
      if (limited && left <= 0.0) {
        r.early_terminated = true;
        break;
      }
      // Warm start: shortest paths from this state, the sends done by the window's end.
      std::vector<std::uint32_t> local(held.size(), kInf);
      for (std::size_t i = 0; i < held.size(); ++i) {
        local[i] = held[i] != 0 ? 0 : kInf;
      }
      Busy local_busy(g.links.size());
      std::vector<StepSend> paths, start;
      route(x, local, local_busy, paths);
      const std::uint32_t rest = makespan(x, local);
      for (const StepSend& s : paths) {
        if (s.step + x.k(s.link) <= window) {
          start.push_back(s);
        }
      }
      const Model m = build(x, held, window, false, opt.max_variables);
      const Solution s = solve(x, m, left, start);
      r.early_terminated = r.early_terminated || s.time_limited;
      std::vector<StepSend> moved;
      for (StepSend t : s.sends) {
        t.step += offset;
        moved.push_back(t);
      }
      std::vector<std::uint32_t> next = arrive;
      moved = first_receipts(x, moved, next);
      std::uint32_t progress = 0, end = 0;
      for (const StepSend& t : moved) {
        end = std::max(end, t.step + x.k(t.link));
        const std::size_t d = x.cell(t.chunk, x.dst(t.link));
        progress += x.post[d] != 0 ? 1 : 0;
      }
      if (progress == 0) {
        // No pair arrived: a window too short for the relays a chunk needs
        // (or a solve cut short); retry longer, up to the shortest paths'.
        if (s.time_limited || window >= rest) {
          break;
        }
        window = std::min(2 * window, rest);
        continue;
      }
      for (const StepSend& t : moved) {
        held[x.cell(t.chunk, x.dst(t.link))] = 1;
        sends.push_back(t);
      }
      arrive = std::move(next);
      offset = end;
      window = base_window;
      ++r.windows;
    }
    r.status =
        "time clustering: " + std::to_string(r.windows) + " windows of " + std::to_string(base_window) + " steps";
  }

  // Completion: the earliest receipt per (chunk, NPU); the pairs still open
  // get shortest paths from the last state (from the precondition when no
  // ILP gave a schedule); relays that never forward are dropped.
  std::vector<std::uint32_t> arrive = arrivals_of_pre(x);
  sends = first_receipts(x, sends, arrive);
  Busy busy(g.links.size());
  if (x.congestion) {
    for (const StepSend& s : sends) {
      reserve(busy, s.link, s.step, x.k(s.link));
    }
  }
  const std::size_t before = sends.size();
  std::uint32_t open_pairs = 0;
  for (std::size_t i = 0; i < arrive.size(); ++i) {
    open_pairs += x.post[i] != 0 && arrive[i] == kInf ? 1 : 0;
  }
  route(x, arrive, busy, sends);
  if (sends.size() != before && opt.clustering) {
    r.status += "; shortest paths appended from the last state for " + std::to_string(open_pairs) + " open pairs";
  }
  sends = prune_relays(x, sends);
  r.steps = makespan(x, arrive);
  r.schedule = translate(x, std::move(sends));
  r.solve_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return r;
}

}  // namespace fabricsim::synth
