// TACOS-ILP / TACCL-like (synth/ilp.hpp) against independent expectations:
// the TEN's discretisation worked out by hand, known step optima (rings,
// fully connected), a brute-force search over every step schedule of tiny
// instances written here, Greedy's finish on homogeneous graphs (whose event
// times are a step schedule, so the ILP's optimum can be no later), and the
// independent checker on every schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <tuple>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "fabricsim/synth/ilp.hpp"
#include "fabricsim/synth/tacos.hpp"
#include "graphs.hpp"

namespace fabricsim::synth {
namespace {

using synth_test::bfs;

using std::uint32_t;

constexpr double kAlpha = 500.0;
constexpr double kGbps = 800.0;  // 100 GB/s
constexpr std::uint64_t kBytes = 1U << 20U;
// tau = alpha + beta * size, computed here from the spec's formula.
const double kTau = kAlpha + static_cast<double>(kBytes) * 8.0 / kGbps;

// A safety net only: every instance here solves in well under a second.
IlpOptions options(bool congestion = true) {
  IlpOptions o;
  o.congestion = congestion;
  // A guard, not a budget: the tests ask for optimal schedules, which CBC
  // proves in seconds (4 s for all of ValidOnHeterogeneousGraphs in a
  // Release build); under ASan on a slow day one solve took more than 30 s
  // and came back as an incumbent (CI, 2026-12-02).
  o.time_limit_s = 300.0;
  return o;
}


// The largest hop distance from a chunk's nearest holder to an NPU wanting it.
int hop_lower_bound(const NpuGraph& g, const Collective& c) {
  std::map<uint32_t, std::vector<uint32_t>> holders;
  for (const auto& [ch, v] : c.pre) {
    holders[ch].push_back(v);
  }
  int bound = 0;
  for (const auto& [ch, v] : c.post) {
    int best = -1;
    for (auto h : holders[ch]) {
      const int d = bfs(g, h)[v];
      if (d >= 0 && (best < 0 || d < best)) {
        best = d;
      }
    }
    bound = std::max(bound, best);
  }
  return bound;
}

// Every (chunk, NPU) is received at most once and never by an NPU holding
// the chunk from the start; every NPU receiving a chunk it does not want
// passes it on.
std::string receipts_problem(const NpuGraph& g, const Collective& c, const Schedule& s) {
  std::set<std::pair<uint32_t, uint32_t>> pre(c.pre.begin(), c.pre.end()), post(c.post.begin(), c.post.end()), got,
      sent;
  for (const Send& x : s.sends) {
    sent.emplace(x.chunk, g.links[x.link].src);
  }
  for (const Send& x : s.sends) {
    const std::pair<uint32_t, uint32_t> key{x.chunk, g.links[x.link].dst};
    if (pre.count(key) != 0) {
      return "chunk " + std::to_string(key.first) + " sent to NPU " + std::to_string(key.second) + " holding it";
    }
    if (!got.insert(key).second) {
      return "chunk " + std::to_string(key.first) + " received twice by NPU " + std::to_string(key.second);
    }
    if (post.count(key) == 0 && sent.count(key) == 0) {
      return "relay NPU " + std::to_string(key.second) + " never passes chunk " + std::to_string(key.first) + " on";
    }
  }
  return "";
}

void expect_valid(const NpuGraph& g, const Collective& c, const IlpResult& r, const std::string& what) {
  EXPECT_EQ(check(g, c, r.schedule), "") << what << " (" << r.status << ")";
  EXPECT_EQ(receipts_problem(g, c, r.schedule), "") << what;
}

// --- The time-expanded network.

TEST(SynthTen, DiscretisationOfTheSpecExample) {
  // f = 2.3 (spec 3.2's example): ceil(l / f) per link.  6.9 / 2.3 is
  // 3.0000000000000004 in doubles: a plain ceil would give 4.
  EXPECT_EQ(link_steps(2.3, 2.3), 1U);
  EXPECT_EQ(link_steps(4.6, 2.3), 2U);
  EXPECT_EQ(link_steps(6.9, 2.3), 3U);
  EXPECT_EQ(link_steps(5.0, 2.3), 3U);  // 2.17 steps: the ceil guarantees completion
  EXPECT_EQ(link_steps(1.0, 2.3), 1U);
  EXPECT_EQ(link_steps(0.0, 2.3), 1U);  // a link takes at least one step
  EXPECT_EQ(link_steps(9.2 + 1e-6, 2.3), 5U);
  EXPECT_THROW(link_steps(1.0, 0.0), std::invalid_argument);

  // A directed triangle 0 -> 1 -> 2 -> 0 of alpha-only links (chunk_bytes 0).
  NpuGraph g;
  g.npus = 3;
  g.links = {Link{0, 1, 2.3, kGbps}, Link{1, 2, 4.6, kGbps}, Link{2, 0, 6.9, kGbps}};
  const TimeExpanded t = time_expanded(g, 0, 2.3);
  EXPECT_DOUBLE_EQ(t.step_ns, 2.3);
  EXPECT_EQ(t.steps, (std::vector<uint32_t>{1, 2, 3}));
  // 1 -> 0 goes 1 -> 2 -> 0: 2 + 3 steps, the longest shortest path.
  EXPECT_EQ(t.diameter_steps, 5U);
  // Default f: the smallest link cost, 2.3 -> ceil(4.6 / 2.3), ceil(6.9 / 2.3).
  const TimeExpanded d = time_expanded(g, 0);
  EXPECT_DOUBLE_EQ(d.step_ns, 2.3);
  EXPECT_EQ(d.steps, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_THROW(time_expanded(g, 0, -1.0), std::invalid_argument);
}

TEST(SynthTen, HeterogeneousLinksAndFailedNpus) {
  // alpha 500 ns, 1 MiB chunks: 800 Gbit/s -> 10985.76 ns, 400 -> 21471.52,
  // 1600 -> 5742.88 (computed by hand from alpha + 8 * 2^20 / gbps).
  NpuGraph g;
  g.npus = 4;
  g.links = {Link{0, 1, kAlpha, 800.0}, Link{1, 2, kAlpha, 400.0}, Link{2, 3, kAlpha, 1600.0},
             Link{3, 0, kAlpha, 800.0}};
  const TimeExpanded d = time_expanded(g, kBytes);
  EXPECT_NEAR(d.step_ns, 5742.88, 1e-6);
  // 10985.76 / 5742.88 = 1.91 -> 2; 21471.52 / 5742.88 = 3.74 -> 4.
  EXPECT_EQ(d.steps, (std::vector<uint32_t>{2, 4, 1, 2}));
  // One way round: 3 -> 2 crosses every link but the 1-step 2 -> 3.
  EXPECT_EQ(d.diameter_steps, 2U + 2U + 4U);
  const TimeExpanded f = time_expanded(g, kBytes, 10985.76);
  EXPECT_EQ(f.steps, (std::vector<uint32_t>{1, 2, 1, 1}));
  // A failed NPU takes no part in the diameter.
  NpuGraph m = mesh(1, 4, kAlpha, kGbps);
  EXPECT_EQ(time_expanded(m, kBytes).diameter_steps, 3U);
  remove_npus(m, {3});
  EXPECT_EQ(time_expanded(m, kBytes).diameter_steps, 2U);
}

// --- Known optima.

TEST(SynthIlp, RingsAndFullyConnectedAllGather) {
  // Unidirectional ring: one in-link per NPU and n-1 chunks to receive.
  for (uint32_t n : {3U, 4U, 5U}) {
    const NpuGraph g = ring(n, false, kAlpha, kGbps);
    const Collective c = all_gather(g, 1, kBytes);
    const IlpResult r = ilp(g, c, options());
    EXPECT_EQ(r.steps, n - 1) << n;
    EXPECT_TRUE(r.optimal) << r.status;
    EXPECT_NEAR(r.schedule.finish_ns, (n - 1) * kTau, 1e-6 * kTau);
    EXPECT_EQ(r.schedule.sends.size(), std::size_t{n} * (n - 1));
    expect_valid(g, c, r, "uni ring " + std::to_string(n));
  }
  // Fully connected: every chunk goes straight to every NPU in one step.
  {
    const NpuGraph g = fully_connected(4, kAlpha, kGbps);
    const Collective c = all_gather(g, 1, kBytes);
    const IlpResult r = ilp(g, c, options());
    EXPECT_EQ(r.steps, 1U);
    EXPECT_NEAR(r.schedule.finish_ns, kTau, 1e-6 * kTau);
    expect_valid(g, c, r, "fully connected 4");
  }
  // Bidirectional ring: two in-links and n-1 chunks: ceil((n-1)/2) steps,
  // reached by sending every chunk both ways.
  for (uint32_t n : {4U, 5U, 6U, 7U}) {
    const NpuGraph g = ring(n, true, kAlpha, kGbps);
    const Collective c = all_gather(g, 1, kBytes);
    const IlpResult r = ilp(g, c, options());
    EXPECT_EQ(r.steps, (n - 1 + 1) / 2) << n;
    EXPECT_TRUE(r.optimal);
    EXPECT_NEAR(r.schedule.finish_ns, ((n - 1 + 1) / 2) * kTau, 1e-6 * kTau);
    expect_valid(g, c, r, "bi ring " + std::to_string(n));
  }
}

TEST(SynthIlp, ScatterOnFourNpuRingIsFarthestFirst) {
  // Spec Fig. 5: link 0 -> 1 carries all three chunks and c3 needs 3 hops:
  // >= 3 tau, which farthest-first reaches.  NPUs 1 and 2 relay.
  const NpuGraph g = ring(4, false, kAlpha, kGbps);
  const Collective c = scatter(g, 0, 1, kBytes);
  const IlpResult r = ilp(g, c, options());
  EXPECT_EQ(r.steps, 3U);
  EXPECT_NEAR(r.schedule.finish_ns, 3 * kTau, 1e-6 * kTau);
  EXPECT_EQ(r.schedule.sends.size(), 3U + 2U + 1U);  // one hop per chunk per link on its path
  expect_valid(g, c, r, "scatter");
}

TEST(SynthIlp, MultiStepLinksPipelineThroughARelay) {
  // 0 -> 1 -> 2 at tau per hop and a direct 0 -> 2 at 2 tau (f = tau: k = 1,
  // 1, 2); NPU 0 holds three chunks NPU 2 wants.  The direct link delivers
  // one chunk by 2 and no second before 4; the relay path one per step from
  // 2 on: c_a direct and c_b, c_c through NPU 1 arrive at 2, 2 and 3 steps.
  // Three chunks over 2 in-links in 2 steps would need the direct link twice.
  NpuGraph g;
  g.npus = 3;
  g.links = {Link{0, 1, kAlpha, kGbps}, Link{1, 2, kAlpha, kGbps}, Link{0, 2, kAlpha + kTau, kGbps}};
  Collective c;
  c.chunks = 3;
  c.pre = {{0, 0}, {1, 0}, {2, 0}};
  c.post = {{0, 2}, {1, 2}, {2, 2}};
  c.chunk_bytes = kBytes;
  const IlpResult r = ilp(g, c, options());
  EXPECT_EQ(time_expanded(g, kBytes).steps, (std::vector<uint32_t>{1, 1, 2}));
  EXPECT_EQ(r.steps, 3U);
  EXPECT_TRUE(r.optimal);
  EXPECT_NEAR(r.schedule.finish_ns, 3 * kTau, 1e-6 * kTau);
  expect_valid(g, c, r, "pipeline");
}

// --- Brute force over step schedules (tiny instances).

// The fewest steps of any schedule in which each link carries one chunk at a
// time and a chunk sent at step t over a link of k steps is at the receiver
// (and may leave it) from t + k: breadth-first over (pairs held, chunk and
// steps left per link), each idle link choosing nothing or a chunk its
// source holds and its receiver lacks.  -1 past max_steps.
int brute_force(const NpuGraph& g, const std::vector<uint32_t>& k, const Collective& c, int max_steps) {
  const uint32_t n = g.npus, links = static_cast<uint32_t>(g.links.size());
  // State: bit ch * n + v for a held pair (below bit 16), then 5 bits per
  // link: the chunk in flight plus 1 (0: idle) and the steps it has left.
  const auto bit = [&](uint32_t ch, uint32_t v) { return std::uint64_t{1} << (ch * n + v); };
  const auto shift = [](uint32_t e) { return 16U + 5U * e; };
  std::uint64_t start = 0, goal = 0;
  for (const auto& [ch, v] : c.pre) {
    start |= bit(ch, v);
  }
  for (const auto& [ch, v] : c.post) {
    goal |= bit(ch, v);
  }
  std::unordered_set<std::uint64_t> frontier{start};
  for (int step = 0; step <= max_steps; ++step) {
    std::unordered_set<std::uint64_t> next;
    for (const std::uint64_t s : frontier) {
      if ((s & goal) == goal) {
        return step;
      }
      std::function<void(uint32_t, std::uint64_t)> choose = [&](uint32_t e, std::uint64_t t) {
        if (e == links) {
          std::uint64_t a = t;  // one step passes
          for (uint32_t l = 0; l < links; ++l) {
            const std::uint64_t slot = (a >> shift(l)) & 31U;
            if (slot == 0) {
              continue;
            }
            const std::uint64_t chunk = (slot & 7U) - 1, left = (slot >> 3U) - 1;
            a &= ~(std::uint64_t{31} << shift(l));
            if (left == 0) {
              a |= bit(static_cast<uint32_t>(chunk), g.links[l].dst);
            } else {
              a |= ((left << 3U) | (chunk + 1)) << shift(l);
            }
          }
          next.insert(a);
          return;
        }
        if (((t >> shift(e)) & 31U) != 0) {
          choose(e + 1, t);  // busy
          return;
        }
        choose(e + 1, t);  // idle
        for (uint32_t ch = 0; ch < c.chunks; ++ch) {
          if ((t & bit(ch, g.links[e].src)) != 0 && (t & bit(ch, g.links[e].dst)) == 0) {
            choose(e + 1, t | ((std::uint64_t{k[e]} << 3U) | (ch + 1)) << shift(e));
          }
        }
      };
      choose(0, s);
    }
    frontier = std::move(next);
  }
  return -1;
}

TEST(SynthIlp, EqualsBruteForceOnThreeNpus) {
  std::mt19937_64 rng(5);
  int compared = 0;
  for (int trial = 0; trial < 40 && compared < 16; ++trial) {
    // Random directed links among 3 NPUs, each of 1-3 steps (alpha-only
    // links with f = 1 ns: k = alpha).
    NpuGraph g;
    g.npus = 3;
    std::vector<uint32_t> k;
    for (uint32_t a = 0; a < 3; ++a) {
      for (uint32_t b = 0; b < 3; ++b) {
        if (a != b && rng() % 4 != 0) {
          k.push_back(1 + static_cast<uint32_t>(rng() % 3));
          g.links.push_back(Link{a, b, static_cast<double>(k.back()), kGbps});
        }
      }
    }
    Collective c;
    switch (trial % 4) {
      case 0: c = all_gather(g, 1, 0); break;
      case 1: c = broadcast(g, 0, 3, 0); break;
      case 2: c = gather(g, 1, 2, 0); break;
      default: c = scatter(g, 2, 2, 0); break;
    }
    IlpOptions o = options();
    o.step_ns = 1.0;
    IlpResult r;
    try {
      r = ilp(g, c, o);
    } catch (const std::invalid_argument&) {
      continue;  // some pair unreachable: nothing to compare
    }
    ASSERT_EQ(time_expanded(g, 0, 1.0).steps, k);
    const int best = brute_force(g, k, c, 12);
    ASSERT_GE(best, 0) << "trial " << trial;
    EXPECT_EQ(r.steps, static_cast<uint32_t>(best)) << "trial " << trial << ": " << r.status;
    EXPECT_TRUE(r.optimal) << "trial " << trial;
    // Each send at step s starts by s * f: the finish is at most steps * f.
    EXPECT_LE(r.schedule.finish_ns, best * 1.0 + 1e-9) << "trial " << trial;
    expect_valid(g, c, r, "trial " + std::to_string(trial));
    ++compared;
  }
  EXPECT_GE(compared, 10);
}

// --- Against Greedy on homogeneous graphs.

// Heterogeneous: alpha 250-750 ns, 200-1600 Gbit/s; with 64 KiB chunks the
// costs stay within 6x of each other (a TEN of a few steps per link).
NpuGraph random_graph(std::mt19937_64& rng, uint32_t n, bool homogeneous) {
  const double gbps[] = {200.0, 400.0, 800.0, 1600.0};
  return synth_test::random_graph(rng, n, n, 0, [&](uint32_t a, uint32_t b) {
    return homogeneous ? Link{a, b, kAlpha, kGbps} : Link{a, b, 250.0 + static_cast<double>(rng() % 501), gbps[rng() % 4]};
  });
}

TEST(SynthIlp, NeverWorseThanGreedyOnHomogeneousGraphs) {
  // With one link cost, f = tau and Greedy's events fall on multiples of tau:
  // its schedule is a congestion-free step schedule, so the optimal t_f is
  // at most Greedy's, and the translated ILP schedule finishes by t_f * tau.
  struct Case {
    std::string name;
    NpuGraph g;
    Collective c;
  };
  std::vector<Case> cases;
  const auto add = [&](const std::string& name, const NpuGraph& g) {
    cases.push_back({name + " all_gather", g, all_gather(g, 1, kBytes)});
    cases.push_back({name + " broadcast", g, broadcast(g, g.npus - 1, 2, kBytes)});
    cases.push_back({name + " scatter", g, scatter(g, 0, 1, kBytes)});
    cases.push_back({name + " gather", g, gather(g, g.npus / 2, 1, kBytes)});
  };
  add("mesh 2x2", mesh(2, 2, kAlpha, kGbps));
  add("mesh 2x3", mesh(2, 3, kAlpha, kGbps));
  add("mesh 3x3", mesh(3, 3, kAlpha, kGbps));
  add("ring 5", ring(5, true, kAlpha, kGbps));
  add("uni ring 5", ring(5, false, kAlpha, kGbps));
  cases.push_back(
      {"mesh 2x3 all_gather x2", mesh(2, 3, kAlpha, kGbps), all_gather(mesh(2, 3, kAlpha, kGbps), 2, kBytes)});
  std::mt19937_64 rng(3);
  for (int i = 0; i < 6; ++i) {
    add("random " + std::to_string(i), random_graph(rng, 4 + static_cast<uint32_t>(rng() % 3), true));
  }
  for (const Case& k : cases) {
    const IlpResult r = ilp(k.g, k.c, options());
    const Schedule gr = greedy(k.g, k.c, {});
    EXPECT_TRUE(r.optimal) << k.name << ": " << r.status;
    EXPECT_LE(r.schedule.finish_ns, gr.finish_ns * (1 + 1e-9)) << k.name;
    EXPECT_LE(r.schedule.finish_ns, r.steps * kTau * (1 + 1e-9)) << k.name;
    EXPECT_GE(static_cast<int>(r.steps), hop_lower_bound(k.g, k.c)) << k.name;
    expect_valid(k.g, k.c, r, k.name);
  }
}

TEST(SynthIlp, ValidOnHeterogeneousGraphs) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 12; ++trial) {
    const NpuGraph g = random_graph(rng, 3 + static_cast<uint32_t>(rng() % 3), false);
    const std::uint64_t bytes = 65536;
    Collective c;
    switch (trial % 4) {
      case 0: c = all_gather(g, 1, bytes); break;
      case 1: c = broadcast(g, 0, 2, bytes); break;
      case 2: c = scatter(g, 1, 1, bytes); break;
      default: c = gather(g, 2, 1, bytes); break;
    }
    const TimeExpanded t = time_expanded(g, bytes);
    const IlpResult r = ilp(g, c, options());
    EXPECT_TRUE(r.optimal) << trial << ": " << r.status;
    EXPECT_LE(r.schedule.finish_ns, r.steps * t.step_ns * (1 + 1e-9)) << trial;
    expect_valid(g, c, r, "trial " + std::to_string(trial));
    const IlpResult taccl = ilp(g, c, options(false));
    EXPECT_LE(taccl.steps, r.steps) << trial;
    expect_valid(g, c, taccl, "TACCL-like trial " + std::to_string(trial));
  }
}

// --- TACCL-like.

TEST(SynthIlp, TacclLikeNeedsNoMoreStepsAndStillPassesCheck) {
  // Without the congestion rows every chunk can take a shortest path at
  // once: t_f is the hop lower bound; links it overbooks serialise in time.
  const std::vector<std::pair<NpuGraph, Collective>> cases = {
      {mesh(3, 3, kAlpha, kGbps), all_gather(mesh(3, 3, kAlpha, kGbps), 1, kBytes)},
      {mesh(2, 3, kAlpha, kGbps), all_gather(mesh(2, 3, kAlpha, kGbps), 2, kBytes)},
      {ring(5, false, kAlpha, kGbps), all_gather(ring(5, false, kAlpha, kGbps), 1, kBytes)},
      {mesh(3, 3, kAlpha, kGbps), scatter(mesh(3, 3, kAlpha, kGbps), 4, 1, kBytes)},
  };
  for (const auto& [g, c] : cases) {
    const IlpResult tacos = ilp(g, c, options());
    const IlpResult taccl = ilp(g, c, options(false));
    EXPECT_LE(taccl.steps, tacos.steps);
    EXPECT_EQ(static_cast<int>(taccl.steps), hop_lower_bound(g, c));
    expect_valid(g, c, taccl, "TACCL-like");
  }
  // Uni ring 5: 4 chunks must cross each link whatever the steps say.
  const NpuGraph g = ring(5, false, kAlpha, kGbps);
  const IlpResult taccl = ilp(g, all_gather(g, 1, kBytes), options(false));
  EXPECT_GE(taccl.schedule.finish_ns, 4 * kTau * (1 - 1e-9));
}

// --- Time clustering, early termination, fallbacks, limits.

TEST(SynthIlp, TimeClusteringGivesValidSchedules) {
  const NpuGraph g = mesh(3, 3, kAlpha, kGbps);
  for (const Collective& c : {all_gather(g, 1, kBytes), scatter(g, 0, 1, kBytes), broadcast(g, 4, 3, kBytes)}) {
    for (uint32_t window : {0U, 1U, 2U}) {
      IlpOptions o = options();
      o.clustering = true;
      o.window_steps = window;
      const IlpResult r = ilp(g, c, o);
      EXPECT_FALSE(r.optimal);
      EXPECT_GE(r.windows, 1U) << r.status;
      // The concatenated windows take at least the hop bound.
      EXPECT_GE(static_cast<int>(r.steps), hop_lower_bound(g, c));
      // Window 1 on the scatter: the farther chunks need relays whose moves
      // earn nothing in a window, which is then lengthened.
      expect_valid(g, c, r, "window " + std::to_string(window));
    }
  }
  // Windows of 2 steps on a 4-step all-gather: at least 2 of them.
  IlpOptions o = options();
  o.clustering = true;
  o.window_steps = 2;
  EXPECT_GE(ilp(g, all_gather(g, 1, kBytes), o).windows, 2U);
}

TEST(SynthIlp, EarlyTerminationStillGivesValidSchedules) {
  const NpuGraph g = mesh(3, 3, kAlpha, kGbps);
  for (const Collective& c : {all_gather(g, 1, kBytes), all_gather(g, 2, kBytes), gather(g, 4, 2, kBytes)}) {
    for (bool clustering : {false, true}) {
      IlpOptions o = options();
      o.time_limit_s = 0.001;
      o.clustering = clustering;
      o.window_steps = 2;
      const IlpResult r = ilp(g, c, o);
      EXPECT_TRUE(r.early_terminated || r.optimal) << r.status;
      EXPECT_FALSE(r.status.empty());
      EXPECT_GE(static_cast<int>(r.steps), hop_lower_bound(g, c));
      expect_valid(g, c, r, r.status);
    }
  }
}

TEST(SynthIlp, ShortestPathFallbackBeyondMaxSteps) {
  // t_f = 2 is infeasible for the unidirectional ring of 4 (3 steps): no
  // ILP schedule, so shortest paths from the precondition.  On a
  // unidirectional ring every chunk has one path and 3 links to cross.
  const NpuGraph g = ring(4, false, kAlpha, kGbps);
  const Collective c = all_gather(g, 1, kBytes);
  IlpOptions o = options();
  o.max_steps = 2;
  const IlpResult r = ilp(g, c, o);
  EXPECT_NE(r.status.find("shortest paths from the precondition"), std::string::npos) << r.status;
  EXPECT_FALSE(r.optimal);
  EXPECT_EQ(r.windows, 0U);
  EXPECT_GE(r.steps, 3U);
  expect_valid(g, c, r, "fallback");
}

TEST(SynthIlp, RefusesModelsOverTheVariableLimitAndBadInput) {
  const NpuGraph g = mesh(3, 3, kAlpha, kGbps);
  const Collective c = all_gather(g, 1, kBytes);
  IlpOptions o = options();
  o.max_variables = 100;
  try {
    ilp(g, c, o);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("variables"), std::string::npos) << what;
    EXPECT_NE(what.find("limit of 100"), std::string::npos) << what;
    const auto has = what.find(" has ");
    ASSERT_NE(has, std::string::npos) << what;
    EXPECT_GT(std::stoull(what.substr(has + 5)), 100U) << what;
  }
  o = options();
  o.time_limit_s = -1.0;
  EXPECT_THROW(ilp(g, c, o), std::invalid_argument);
  NpuGraph oneway;  // 0 -> 1 only: broadcast from 1 cannot reach 0
  oneway.npus = 2;
  oneway.links.push_back(Link{0, 1, kAlpha, kGbps});
  EXPECT_NO_THROW(ilp(oneway, broadcast(oneway, 0, 1, kBytes), options()));
  EXPECT_THROW(ilp(oneway, broadcast(oneway, 1, 1, kBytes), options()), std::invalid_argument);
  Collective bad = c;
  bad.pre.emplace_back(9, 0);  // chunk 9 of 9
  EXPECT_THROW(ilp(g, bad, options()), std::invalid_argument);
  // Nothing to do: no sends, no steps.
  Collective none;
  none.chunks = 1;
  none.pre = {{0, 3}};
  none.post = {{0, 3}};
  const IlpResult r = ilp(g, none, options());
  EXPECT_TRUE(r.schedule.sends.empty());
  EXPECT_EQ(r.steps, 0U);
  EXPECT_EQ(check(g, none, r.schedule), "");
}

}  // namespace
}  // namespace fabricsim::synth
