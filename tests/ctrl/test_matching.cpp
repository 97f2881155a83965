// max_weight_matching (ctrl/matching.hpp) against answers computed apart
// from it: exhaustive dynamic programming over vertex subsets (n <= 16),
// CBC solving the matching ILP (n = 30..40), a Hungarian assignment on
// bipartite graphs (n = 200), and graphs built around a planted LP dual
// solution whose optimum weak duality gives (n up to 432).  Hand-made cases
// cover odd cycles, nested blossoms, T-blossoms expanded and relabelled, and
// graphs on which taking the heaviest edge first is wrong; the run's
// MatchingStats show that the blossom steps were taken.
#include <gtest/gtest.h>

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ctrl/cbc_setup.hpp"
#include "fabricsim/ctrl/matching.hpp"

namespace fabricsim::ctrl {
namespace {

using std::int64_t;
using std::size_t;
using std::uint32_t;

constexpr int64_t kNoEdge = std::numeric_limits<int64_t>::min();

/// Per vertex pair, the heaviest edge between them (any sign), kNoEdge
/// where there is none; self-loops are left out.
std::vector<int64_t> heaviest(uint32_t n, const std::vector<WeightedEdge>& edges) {
  std::vector<int64_t> w(size_t{n} * n, kNoEdge);
  for (const WeightedEdge& e : edges) {
    if (e.u == e.v) continue;
    int64_t& x = w[size_t{e.u} * n + e.v];
    x = std::max(x, e.weight);
    w[size_t{e.v} * n + e.u] = x;
  }
  return w;
}

/// The maximum matching weight, by dynamic programming over vertex subsets:
/// best[mask] leaves the lowest vertex of mask unmatched or matches it with
/// another vertex of mask (over every edge, whatever its sign).
int64_t brute_force(uint32_t n, const std::vector<WeightedEdge>& edges) {
  const std::vector<int64_t> w = heaviest(n, edges);
  std::vector<int64_t> best(size_t{1} << n, 0);
  for (uint32_t mask = 1; mask < (uint32_t{1} << n); ++mask) {
    const auto i = static_cast<uint32_t>(__builtin_ctz(mask));
    const uint32_t rest = mask & ~(uint32_t{1} << i);
    int64_t b = best[rest];
    for (uint32_t j = i + 1; j < n; ++j)
      if ((rest >> j & 1) != 0 && w[size_t{i} * n + j] != kNoEdge)
        b = std::max(b, w[size_t{i} * n + j] + best[rest & ~(uint32_t{1} << j)]);
    best[mask] = b;
  }
  return best[(size_t{1} << n) - 1];
}

/// mate is a matching of the graph over positive edges; returns its
/// weight, summed here (the heaviest edge per pair).
int64_t checked_weight(uint32_t n, const std::vector<WeightedEdge>& edges, const std::vector<uint32_t>& mate) {
  const std::vector<int64_t> w = heaviest(n, edges);
  EXPECT_EQ(mate.size(), size_t{n});
  if (mate.size() != n) return kNoEdge;
  int64_t total = 0;
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t m = mate[v];
    if (m == kUnmatched) continue;
    EXPECT_LT(m, n) << "vertex " << v;
    if (m >= n) return kNoEdge;
    EXPECT_NE(m, v) << "vertex " << v << " matched to itself";
    EXPECT_EQ(mate[m], v) << "vertex " << v << " -> " << m << " is not mutual";
    EXPECT_NE(w[size_t{v} * n + m], kNoEdge) << "pair " << v << "-" << m << " has no edge";
    if (w[size_t{v} * n + m] == kNoEdge) return kNoEdge;
    EXPECT_GT(w[size_t{v} * n + m], 0) << "pair " << v << "-" << m << " matched along a non-positive edge";
    if (v < m) total += w[size_t{v} * n + m];
  }
  EXPECT_EQ(matching_weight(mate, edges), total);
  return total;
}

/// Takes the heaviest remaining edge while both ends are free: the answer a
/// wrong matcher would give on the cases built to defeat it.
int64_t greedy_weight(uint32_t n, std::vector<WeightedEdge> edges) {
  std::stable_sort(edges.begin(), edges.end(),
                   [](const WeightedEdge& a, const WeightedEdge& b) { return a.weight > b.weight; });
  std::vector<bool> used(n, false);
  int64_t total = 0;
  for (const WeightedEdge& e : edges) {
    if (e.weight <= 0 || e.u == e.v || used[e.u] || used[e.v]) continue;
    used[e.u] = used[e.v] = true;
    total += e.weight;
  }
  return total;
}

void add(MatchingStats& total, const MatchingStats& s) {
  total.stages += s.stages;
  total.augmentations += s.augmentations;
  total.dual_updates += s.dual_updates;
  total.blossoms_formed += s.blossoms_formed;
  total.nested_blossoms_formed += s.nested_blossoms_formed;
  total.inner_expansions += s.inner_expansions;
  total.pieces_relabelled_s += s.pieces_relabelled_s;
  total.stage_end_expansions += s.stage_end_expansions;
  total.max_nesting = std::max(total.max_nesting, s.max_nesting);
}

/// Solves, checks validity, compares with brute force; returns the stats.
MatchingStats expect_optimal_small(uint32_t n, const std::vector<WeightedEdge>& edges, const std::string& what) {
  SCOPED_TRACE(what);
  MatchingStats stats;
  const std::vector<uint32_t> mate = max_weight_matching(n, edges, &stats);
  EXPECT_EQ(checked_weight(n, edges, mate), brute_force(n, edges));
  return stats;
}

uint32_t pick(std::mt19937_64& rng, uint32_t n) { return static_cast<uint32_t>(rng() % n); }
int64_t uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {  // [lo, hi]
  return lo + static_cast<int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

enum class WeightKind { Ties, Small, Large, LargeTies, Signed, Sparse };

/// A random graph on n vertices: density and weights by `kind`, plus a few
/// parallel edges and self-loops, in a shuffled order.
std::vector<WeightedEdge> random_graph(std::mt19937_64& rng, uint32_t n, WeightKind kind) {
  const double density = kind == WeightKind::Sparse ? std::min(1.0, 2.5 / std::max(1u, n))
                                                    : std::vector<double>{0.25, 0.5, 0.8, 1.0}[rng() % 4];
  auto weight = [&]() -> int64_t {
    switch (kind) {
      case WeightKind::Ties: return uniform(rng, 0, 3);
      case WeightKind::Small: return uniform(rng, 1, 20);
      case WeightKind::Large: return uniform(rng, 1, int64_t{1} << 40);
      case WeightKind::LargeTies: return (int64_t{1} << 40) + uniform(rng, -2, 2);
      case WeightKind::Signed: return uniform(rng, -6, 9);
      case WeightKind::Sparse: return uniform(rng, 1, 4);
    }
    return 0;
  };
  std::vector<WeightedEdge> edges;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = i + 1; j < n; ++j)
      if (coin(rng) < density)
        edges.push_back(rng() % 2 == 0 ? WeightedEdge{i, j, weight()} : WeightedEdge{j, i, weight()});
  const uint32_t extra = n == 0 ? 0 : static_cast<uint32_t>(rng() % 4);
  for (uint32_t k = 0; k < extra; ++k) {
    if (rng() % 3 == 0) {
      const uint32_t v = pick(rng, n);
      edges.push_back({v, v, uniform(rng, 1, 50)});  // a self-loop, heavier than anything: must be ignored
    } else if (!edges.empty()) {
      WeightedEdge e = edges[rng() % edges.size()];  // a parallel edge, lighter or heavier
      e.weight = weight();
      std::swap(e.u, e.v);
      edges.push_back(e);
    }
  }
  std::shuffle(edges.begin(), edges.end(), rng);
  return edges;
}

// --- Small cases worked by hand ------------------------------------------

TEST(Matching, EmptyAndTrivialGraphs) {
  EXPECT_TRUE(max_weight_matching(0, {}).empty());
  EXPECT_EQ(max_weight_matching(1, {}), std::vector<uint32_t>{kUnmatched});
  EXPECT_EQ(max_weight_matching(3, {}), std::vector<uint32_t>(3, kUnmatched));
  EXPECT_EQ(max_weight_matching(2, {{0, 1, 5}}), (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(max_weight_matching(2, {{1, 0, 5}}), (std::vector<uint32_t>{1, 0}));
  // Weights <= 0 never help and are never taken.
  EXPECT_EQ(max_weight_matching(2, {{0, 1, 0}}), std::vector<uint32_t>(2, kUnmatched));
  EXPECT_EQ(max_weight_matching(2, {{0, 1, -7}}), std::vector<uint32_t>(2, kUnmatched));
  // Self-loops are ignored, even heavy ones.
  EXPECT_EQ(max_weight_matching(2, {{0, 0, 100}, {1, 1, 100}}), std::vector<uint32_t>(2, kUnmatched));
  EXPECT_EQ(max_weight_matching(3, {{0, 0, 100}, {0, 1, 1}}), (std::vector<uint32_t>{1, 0, kUnmatched}));
  // Parallel edges: the heaviest counts.
  const std::vector<WeightedEdge> parallel{{0, 1, -5}, {1, 0, 7}, {0, 1, 3}, {1, 2, 6}};
  const std::vector<uint32_t> mate = max_weight_matching(3, parallel);
  EXPECT_EQ(mate, (std::vector<uint32_t>{1, 0, kUnmatched}));
  EXPECT_EQ(matching_weight(mate, parallel), 7);
  // Isolated vertices around one edge.
  EXPECT_EQ(max_weight_matching(5, {{3, 1, 2}}), (std::vector<uint32_t>{kUnmatched, 3, kUnmatched, 1, kUnmatched}));
}

TEST(Matching, MatchingWeightSumsTheHeaviestEdgePerMatchedPair) {
  const std::vector<WeightedEdge> edges{{0, 1, 4}, {1, 0, 9}, {2, 3, -1}, {1, 2, 50}, {3, 3, 8}};
  EXPECT_EQ(matching_weight({1, 0, 3, 2}, edges), 9 - 1);
  EXPECT_EQ(matching_weight({1, 0, kUnmatched, kUnmatched}, edges), 9);
  EXPECT_EQ(matching_weight({kUnmatched, 2, 1, kUnmatched}, edges), 50);
  EXPECT_EQ(matching_weight(std::vector<uint32_t>(4, kUnmatched), edges), 0);
  EXPECT_EQ(matching_weight({2, kUnmatched, 0, kUnmatched}, edges), 0);  // a pair with no edge adds nothing
  EXPECT_THROW(matching_weight({1, 0}, edges), std::invalid_argument);   // edges beyond the vertices
  EXPECT_THROW(matching_weight({7, kUnmatched}, {}), std::invalid_argument);
}

TEST(Matching, RejectsBadInput) {
  EXPECT_THROW(max_weight_matching(2, {{0, 2, 1}}), std::invalid_argument);
  EXPECT_THROW(max_weight_matching(2, {{5, 1, 1}}), std::invalid_argument);
  EXPECT_THROW(max_weight_matching(2, {{0, 1, kMaxMatchingWeight}}), std::invalid_argument);
  EXPECT_THROW(max_weight_matching(2, {{0, 1, -kMaxMatchingWeight}}), std::invalid_argument);
  EXPECT_THROW(max_weight_matching(2, {{0, 1, std::numeric_limits<int64_t>::min()}}), std::invalid_argument);
  // Just below the limit is fine, and exact.
  const int64_t big = kMaxMatchingWeight - 1;
  const std::vector<WeightedEdge> edges{{0, 1, big}, {1, 2, big}, {2, 3, big}, {0, 3, 1}, {0, 2, big - 1}};
  const std::vector<uint32_t> mate = max_weight_matching(4, edges);
  EXPECT_EQ(checked_weight(4, edges, mate), 2 * big);
}

TEST(Matching, OddCycles) {
  {  // A triangle: one edge, the heaviest; the odd cycle is shrunk on the way.
    const std::vector<WeightedEdge> tri{{0, 1, 5}, {1, 2, 5}, {2, 0, 5}};
    MatchingStats stats;
    EXPECT_EQ(checked_weight(3, tri, max_weight_matching(3, tri, &stats)), 5);
    EXPECT_GE(stats.blossoms_formed, 1u);
    const std::vector<WeightedEdge> tri2{{0, 1, 3}, {1, 2, 5}, {2, 0, 4}};
    EXPECT_EQ(checked_weight(3, tri2, max_weight_matching(3, tri2)), 5);
  }
  {  // A pentagon: two edges.
    std::vector<WeightedEdge> penta;
    for (uint32_t i = 0; i < 5; ++i) penta.push_back({i, (i + 1) % 5, 10});
    MatchingStats stats;
    EXPECT_EQ(checked_weight(5, penta, max_weight_matching(5, penta, &stats)), 20);
    EXPECT_GE(stats.blossoms_formed, 1u);
    // A light stem on 0 makes the matching perfect: 0-5 and the two pentagon edges that avoid 0.
    penta.push_back({0, 5, 1});
    EXPECT_EQ(checked_weight(6, penta, max_weight_matching(6, penta)), 21);
    // A stem on each vertex: two cycle edges leave one vertex for its stem, 20 + s, against all five stems,
    // 5 s: the stems win at s = 6 (30 > 26), the cycle at s = 4 (24 > 20).
    for (const int64_t s : {int64_t{6}, int64_t{4}}) {
      std::vector<WeightedEdge> stems;
      for (uint32_t i = 0; i < 5; ++i) {
        stems.push_back({i, (i + 1) % 5, 10});
        stems.push_back({i, 5 + i, s});
      }
      const int64_t want = std::max(5 * s, 20 + s);
      EXPECT_EQ(checked_weight(10, stems, max_weight_matching(10, stems)), want) << "stems of " << s;
      EXPECT_EQ(brute_force(10, stems), want);
    }
  }
  {  // A heptagon of edges weighing 1..7 around: three pairwise disjoint edges, at best 3 + 5 + 7.
    const std::vector<WeightedEdge> hepta{{0, 1, 1}, {1, 2, 2}, {2, 3, 3}, {3, 4, 4}, {4, 5, 5}, {5, 6, 6}, {6, 0, 7}};
    EXPECT_EQ(checked_weight(7, hepta, max_weight_matching(7, hepta)), 15);
    EXPECT_EQ(brute_force(7, hepta), 15);
  }
}

TEST(Matching, GreedyHeaviestFirstIsWrongHere) {
  {  // A path 0-1-2-3 of weights 2, 3, 2: the middle edge alone (3) loses to the two ends (4).
    const std::vector<WeightedEdge> path{{0, 1, 2}, {1, 2, 3}, {2, 3, 2}};
    EXPECT_EQ(greedy_weight(4, path), 3);
    EXPECT_EQ(checked_weight(4, path, max_weight_matching(4, path)), 4);
  }
  {  // A heavy triangle 1-2-3 (10 each) with a stem of 9 on every corner (0-1, 2-5, 3-4): any triangle edge
     // blocks two stems (10 + 9 = 19), the three stems make 27.  The first stage matches a triangle edge and
     // the next shrinks the triangle; the stems win only once that blossom is undone.
    const std::vector<WeightedEdge> g{{1, 2, 10}, {2, 3, 10}, {1, 3, 10}, {0, 1, 9}, {3, 4, 9}, {2, 5, 9}};
    EXPECT_EQ(greedy_weight(6, g), 19);
    MatchingStats stats;
    const std::vector<uint32_t> mate = max_weight_matching(6, g, &stats);
    EXPECT_EQ(checked_weight(6, g, mate), 27);
    EXPECT_EQ(mate, (std::vector<uint32_t>{1, 0, 5, 4, 3, 2}));
    EXPECT_GE(stats.blossoms_formed, 1u);
  }
  {  // A heavy triangle 0-1-3 (10, 10, 8) sharing vertex 0 with a light triangle 0-2-4 (8, 8, 3): the
     // heaviest edge 0-1 leaves only 2-4 (13); 1-3 with 0-2 or 0-4 makes 16.  The triangles are shrunk,
     // nested, and a T-blossom is expanded on the way.
    const std::vector<WeightedEdge> g{{0, 1, 10}, {0, 2, 8}, {0, 3, 10}, {0, 4, 8}, {1, 3, 8}, {2, 4, 3}};
    EXPECT_EQ(greedy_weight(5, g), 13);
    MatchingStats stats;
    EXPECT_EQ(checked_weight(5, g, max_weight_matching(5, g, &stats)), 16);
    EXPECT_GE(stats.nested_blossoms_formed, 1u);
    EXPECT_GE(stats.inner_expansions, 1u);
  }
  {  // A star's heaviest spoke (0-1, 5) against two spokes' far ends paired up: 0-2 (4) and 1-3 (4) make 8.
    const std::vector<WeightedEdge> g{{0, 1, 5}, {0, 2, 4}, {1, 3, 4}, {2, 3, 1}};
    EXPECT_EQ(greedy_weight(4, g), 6);
    EXPECT_EQ(checked_weight(4, g, max_weight_matching(4, g)), 8);
  }
}

TEST(Matching, NestedBlossoms) {
  // Three triangles {0,1,2}, {3,4,5}, {6,7,8} joined in a ring (2-3, 5-6, 8-0): the triangles are shrunk,
  // then the ring of three blossoms is itself an odd cycle.  Nine vertices: four edges at most.
  std::vector<WeightedEdge> ring;
  for (uint32_t t = 0; t < 3; ++t) {
    const uint32_t a = 3 * t;
    ring.push_back({a, a + 1, 4});
    ring.push_back({a + 1, a + 2, 4});
    ring.push_back({a + 2, a, 4});
    ring.push_back({a + 2, (a + 3) % 9, 3});
  }
  // Each triangle holds one matched edge at most: three of them and one link (2-3: 0-1, 4-5 and one of
  // {6,7,8}) make 15; two links and two triangle edges only 14.
  MatchingStats stats;
  EXPECT_EQ(checked_weight(9, ring, max_weight_matching(9, ring, &stats)), 15);
  EXPECT_EQ(brute_force(9, ring), 15);
  EXPECT_GE(stats.nested_blossoms_formed, 1u);
  EXPECT_GE(stats.max_nesting, 2u);
  // A stem 4-9 (5) makes a perfect matching possible: with 3-5 (4), 1-2 and 6-7 (4 each) and the link 8-0
  // (3) it makes 20; leaving {3,5} by both links (2-3, 5-6) makes only 5 + 3 + 3 + 4 + 4 = 19.
  ring.push_back({4, 9, 5});
  EXPECT_EQ(checked_weight(10, ring, max_weight_matching(10, ring, &stats)), 20);
  EXPECT_EQ(brute_force(10, ring), 20);
}

TEST(Matching, BlossomsWithinBlossomsAreExpandedAndRelabelled) {
  // Small graphs where a T-blossom reaches dual 0 and is expanded while its tree is growing, entered off its
  // base so that pieces of it are relabelled S; kept from a search over random graphs, and checked by brute
  // force.
  struct Case {
    uint32_t n;
    std::vector<WeightedEdge> edges;
  };
  const std::vector<Case> cases{
      {5, {{0, 1, 11}, {0, 3, 10}, {1, 2, 7}, {1, 3, 9}, {1, 4, 7}, {2, 3, 6}, {3, 4, 5}}},
      {5, {{0, 3, 7}, {1, 2, 7}, {1, 3, 10}, {2, 3, 8}, {2, 4, 4}, {3, 4, 7}}},
      {5, {{0, 1, 8}, {0, 2, 7}, {0, 3, 11}, {0, 4, 6}, {1, 3, 9}, {1, 4, 4}, {2, 4, 2}}},
      {7, {{0, 2, 6}, {1, 2, 12}, {1, 5, 8}, {1, 6, 11}, {2, 6, 9}, {3, 4, 6}, {3, 6, 8}, {4, 6, 6}, {5, 6, 2}}},
      {7,
       {{0, 1, 8},
        {0, 3, 7},
        {0, 6, 8},
        {1, 2, 8},
        {1, 3, 10},
        {1, 4, 12},
        {1, 5, 8},
        {1, 6, 10},
        {3, 4, 9},
        {3, 5, 4},
        {3, 6, 9},
        {4, 5, 4},
        {5, 6, 6}}},
  };
  MatchingStats total;
  for (size_t i = 0; i < cases.size(); ++i)
    add(total, expect_optimal_small(cases[i].n, cases[i].edges, "case " + std::to_string(i)));
  EXPECT_GE(total.inner_expansions, cases.size());
  EXPECT_GE(total.pieces_relabelled_s, 3u);
  EXPECT_GE(total.max_nesting, 2u);
}

// --- Random graphs against brute force ----------------------------------

TEST(Matching, ThousandsOfRandomGraphsMatchBruteForce) {
  const std::vector<WeightKind> kinds{WeightKind::Ties,      WeightKind::Small,  WeightKind::Large,
                                      WeightKind::LargeTies, WeightKind::Signed, WeightKind::Sparse};
  MatchingStats total;
  std::uint64_t graphs = 0;
  for (uint32_t n = 1; n <= 16; ++n) {
    const uint32_t reps = n <= 14 ? 150 : 25;
    for (size_t k = 0; k < kinds.size(); ++k) {
      for (uint32_t rep = 0; rep < reps; ++rep) {
        const std::uint64_t seed = (std::uint64_t{n} << 32) ^ (std::uint64_t{k} << 24) ^ rep;
        std::mt19937_64 rng(seed);
        const std::vector<WeightedEdge> edges = random_graph(rng, n, kinds[k]);
        MatchingStats stats;
        const std::vector<uint32_t> mate = max_weight_matching(n, edges, &stats);
        const int64_t got = checked_weight(n, edges, mate);
        const int64_t want = brute_force(n, edges);
        ASSERT_EQ(got, want) << "n = " << n << ", kind " << k << ", seed " << seed;
        add(total, stats);
        ++graphs;
      }
    }
  }
  EXPECT_EQ(graphs, 14u * 6 * 150 + 2u * 6 * 25);
  // The comparison went through every step of the algorithm, many times.
  EXPECT_GT(total.blossoms_formed, 1000u);
  EXPECT_GT(total.nested_blossoms_formed, 100u);
  EXPECT_GT(total.inner_expansions, 100u);
  EXPECT_GT(total.pieces_relabelled_s, 10u);
  EXPECT_GT(total.stage_end_expansions, 100u);
  EXPECT_GE(total.max_nesting, 3u);
  RecordProperty("graphs", std::to_string(graphs));
  RecordProperty("blossoms", std::to_string(total.blossoms_formed));
  RecordProperty("nested_blossoms", std::to_string(total.nested_blossoms_formed));
  RecordProperty("inner_expansions", std::to_string(total.inner_expansions));
  RecordProperty("pieces_relabelled_s", std::to_string(total.pieces_relabelled_s));
  RecordProperty("stage_end_expansions", std::to_string(total.stage_end_expansions));
  RecordProperty("max_nesting", std::to_string(total.max_nesting));
}

TEST(Matching, DeterministicAndIndependentOfLabelsAndEdgeOrder) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed + 1000);
    const uint32_t n = 20 + pick(rng, 40);
    const std::vector<WeightedEdge> edges = random_graph(rng, n, seed % 2 == 0 ? WeightKind::Ties : WeightKind::Small);
    const std::vector<uint32_t> mate = max_weight_matching(n, edges);
    EXPECT_EQ(max_weight_matching(n, edges), mate) << "seed " << seed;
    const int64_t weight = checked_weight(n, edges, mate);
    // The same graph with vertices renamed and edges reordered weighs the same.
    std::vector<uint32_t> name(n);
    std::iota(name.begin(), name.end(), 0u);
    std::shuffle(name.begin(), name.end(), rng);
    std::vector<WeightedEdge> renamed;
    for (const WeightedEdge& e : edges) renamed.push_back({name[e.v], name[e.u], e.weight});
    std::shuffle(renamed.begin(), renamed.end(), rng);
    EXPECT_EQ(checked_weight(n, renamed, max_weight_matching(n, renamed)), weight) << "seed " << seed;
  }
}

// --- Larger graphs: independent exact answers -------------------------------

/// The matching ILP (x_e binary, at most one chosen edge at each vertex)
/// solved exactly by CBC; every non-loop edge is a column.
int64_t cbc_optimum(uint32_t n, const std::vector<WeightedEdge>& edges) {
  std::vector<int> row, col;
  std::vector<double> element, objective;
  for (const WeightedEdge& e : edges) {
    if (e.u == e.v) continue;
    const auto c = static_cast<int>(objective.size());
    for (uint32_t v : {e.u, e.v}) {
      row.push_back(static_cast<int>(v));
      col.push_back(c);
      element.push_back(1.0);
    }
    objective.push_back(-static_cast<double>(e.weight));  // CBC minimises
  }
  if (objective.empty()) return 0;
  const CoinPackedMatrix matrix(true, row.data(), col.data(), element.data(),
                                static_cast<CoinBigIndex>(element.size()));
  std::vector<double> col_lb(objective.size(), 0.0), col_ub(objective.size(), 1.0);
  std::vector<double> row_lb(n, -std::numeric_limits<double>::infinity()), row_ub(n, 1.0);
  OsiClpSolverInterface solver;
  detail::load_integer_program(solver, matrix, col_lb, col_ub, objective, row_lb, row_ub);
  CbcModel model(solver);
  detail::quiet_integer_model(model);
  model.branchAndBound();
  EXPECT_TRUE(model.isProvenOptimal());
  const double* x = model.bestSolution();
  EXPECT_NE(x, nullptr);
  if (x == nullptr) return kNoEdge;
  // The weight of CBC's own solution, summed in integers (and checked to be a matching).
  std::vector<int> degree(n, 0);
  int64_t total = 0;
  size_t c = 0;
  for (const WeightedEdge& e : edges) {
    if (e.u == e.v) continue;
    if (x[c++] > 0.5) {
      total += e.weight;
      ++degree[e.u];
      ++degree[e.v];
    }
  }
  for (uint32_t v = 0; v < n; ++v) EXPECT_LE(degree[v], 1) << "CBC's solution at vertex " << v;
  EXPECT_EQ(static_cast<double>(total), -model.getObjValue());
  return total;
}

TEST(Matching, RandomGraphsOfThirtyToFortyAgreeWithCbc) {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    std::mt19937_64 rng(seed + 77);
    const uint32_t n = 30 + static_cast<uint32_t>(seed % 3) * 5;  // 30, 35, 40
    const WeightKind kind = std::vector<WeightKind>{WeightKind::Ties, WeightKind::Small, WeightKind::Signed}[seed % 3];
    std::vector<WeightedEdge> edges = random_graph(rng, n, kind);
    if (seed >= 6) {  // sparse odd cycles and triangles: where the LP relaxation is fractional
      edges.clear();
      for (uint32_t v = 0; v < n; ++v) edges.push_back({v, (v + 1 + pick(rng, 3)) % n, uniform(rng, 1, 9)});
    }
    MatchingStats stats;
    const std::vector<uint32_t> mate = max_weight_matching(n, edges, &stats);
    EXPECT_EQ(checked_weight(n, edges, mate), cbc_optimum(n, edges)) << "seed " << seed << ", n = " << n;
  }
}

/// max-weight bipartite matching by the Hungarian method: left vertices
/// 0..a-1 are each assigned a distinct right vertex 0..b-1 (a <= b) of least
/// total cost -max(w, 0); the pairs of weight 0 stand for "unmatched".
int64_t hungarian_optimum(uint32_t a, uint32_t b, const std::vector<int64_t>& w /* a x b, kNoEdge = none */) {
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
  auto cost = [&](uint32_t i, uint32_t j) { return -std::max<int64_t>(0, w[size_t{i} * b + j]); };
  // 1-based rows and columns; column 0 is the virtual start.  u, v: potentials; row_of[j]: the row on column j.
  std::vector<int64_t> u(a + 1, 0), v(b + 1, 0);
  std::vector<uint32_t> row_of(b + 1, 0), way(b + 1, 0);
  for (uint32_t i = 1; i <= a; ++i) {
    row_of[0] = i;
    uint32_t j0 = 0;
    std::vector<int64_t> min_reduced(b + 1, kInf);
    std::vector<bool> used(b + 1, false);
    do {
      used[j0] = true;
      const uint32_t i0 = row_of[j0];
      int64_t delta = kInf;
      uint32_t j1 = 0;
      for (uint32_t j = 1; j <= b; ++j) {
        if (used[j]) continue;
        const int64_t reduced = cost(i0 - 1, j - 1) - u[i0] - v[j];
        if (reduced < min_reduced[j]) {
          min_reduced[j] = reduced;
          way[j] = j0;
        }
        if (min_reduced[j] < delta) {
          delta = min_reduced[j];
          j1 = j;
        }
      }
      for (uint32_t j = 0; j <= b; ++j) {
        if (used[j]) {
          u[row_of[j]] += delta;
          v[j] -= delta;
        } else {
          min_reduced[j] -= delta;
        }
      }
      j0 = j1;
    } while (row_of[j0] != 0);
    do {
      const uint32_t j1 = way[j0];
      row_of[j0] = row_of[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  int64_t total = 0;
  for (uint32_t j = 1; j <= b; ++j)
    if (row_of[j] != 0) total -= cost(row_of[j] - 1, j - 1);
  return total;
}

TEST(Matching, BipartiteGraphsAgreeWithHungarian) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    std::mt19937_64 rng(seed + 500);
    const uint32_t a = 60 + pick(rng, 41), b = a + pick(rng, 20);  // up to ~200 vertices
    const double density = seed % 2 == 0 ? 1.0 : 0.1;
    std::vector<int64_t> w(size_t{a} * b, kNoEdge);
    std::vector<WeightedEdge> edges;
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (uint32_t i = 0; i < a; ++i)
      for (uint32_t j = 0; j < b; ++j) {
        if (coin(rng) >= density) continue;
        const int64_t x = seed % 3 == 0 ? uniform(rng, 0, 3) : uniform(rng, -100, 1000);
        w[size_t{i} * b + j] = x;
        edges.push_back({i, a + j, x});  // left i is vertex i, right j is vertex a + j
      }
    std::shuffle(edges.begin(), edges.end(), rng);
    const std::vector<uint32_t> mate = max_weight_matching(a + b, edges);
    EXPECT_EQ(checked_weight(a + b, edges, mate), hungarian_optimum(a, b, w)) << "seed " << seed;
  }
}

/// A graph built around a planted optimal LP dual: vertex duals y >= 0 and a
/// laminar family of odd sets with duals z > 0, each a cycle of an odd number
/// of pieces (vertices or smaller sets); a planted matching that leaves
/// exactly one vertex of every set unmatched inside it; every edge ij weighs
/// y_i + y_j + (z of the sets holding both) less a slack >= 0 that is 0 on the
/// planted edges (and often elsewhere).  Weak duality: every matching M has
/// w(M) <= sum_{ij in M} (y_i + y_j + z's) <= sum y + sum_B z_B (|B| - 1) / 2,
/// and the planted matching reaches it (its only unmatched vertex has y = 0).
struct Planted {
  uint32_t n = 0;
  std::vector<WeightedEdge> edges;
  std::vector<uint32_t> planted_mate;
  int64_t optimum = 0;
};

Planted planted_graph(std::mt19937_64& rng, uint32_t n, double density, uint32_t set_merges) {
  Planted p;
  p.n = n;
  std::vector<int64_t> y(n);
  for (int64_t& x : y) x = uniform(rng, 1, 40);  // > 0: every planted edge is positive
  // Pieces at the top level: (base vertex, member vertices); the sets and their z.
  struct Piece {
    uint32_t base;
    std::vector<uint32_t> members;
  };
  std::vector<Piece> top;
  for (uint32_t v = 0; v < n; ++v) top.push_back({v, {v}});
  std::vector<std::vector<bool>> in_set;  // per set, per vertex
  std::vector<int64_t> z;
  p.planted_mate.assign(n, kUnmatched);
  for (uint32_t m = 0; m < set_merges && top.size() >= 3; ++m) {
    const uint32_t k = std::min<uint32_t>(static_cast<uint32_t>(top.size()) - (top.size() % 2 == 0 ? 1 : 0),
                                          std::vector<uint32_t>{3, 3, 5, 7}[rng() % 4]);
    std::shuffle(top.begin(), top.end(), rng);
    Piece merged{top[0].base, {}};
    for (uint32_t i = 0; i < k; ++i)
      merged.members.insert(merged.members.end(), top[i].members.begin(), top[i].members.end());
    for (uint32_t i = 1; i + 1 < k; i += 2) {  // pair up the other pieces' bases: the set stays full
      p.planted_mate[top[i].base] = top[i + 1].base;
      p.planted_mate[top[i + 1].base] = top[i].base;
    }
    std::vector<bool> member(n, false);
    for (uint32_t v : merged.members) member[v] = true;
    in_set.push_back(std::move(member));
    z.push_back(uniform(rng, 1, 30));
    top.erase(top.begin(), top.begin() + k);
    top.push_back(std::move(merged));
  }
  std::shuffle(top.begin(), top.end(), rng);
  for (size_t i = 0; i + 1 < top.size(); i += 2) {
    p.planted_mate[top[i].base] = top[i + 1].base;
    p.planted_mate[top[i + 1].base] = top[i].base;
  }
  if (top.size() % 2 == 1) y[top.back().base] = 0;  // the one unmatched vertex
  auto tight_weight = [&](uint32_t i, uint32_t j) {
    int64_t w = y[i] + y[j];
    for (size_t s = 0; s < z.size(); ++s)
      if (in_set[s][i] && in_set[s][j]) w += z[s];
    return w;
  };
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = i + 1; j < n; ++j) {
      if (p.planted_mate[i] == j) {
        p.edges.push_back({i, j, tight_weight(i, j)});
      } else if (coin(rng) < density) {
        const int64_t slack = rng() % 3 == 0 ? 0 : uniform(rng, 1, 25);
        p.edges.push_back({i, j, tight_weight(i, j) - slack});
      }
    }
  std::shuffle(p.edges.begin(), p.edges.end(), rng);
  p.optimum = std::accumulate(y.begin(), y.end(), int64_t{0});
  for (size_t s = 0; s < z.size(); ++s) {
    const auto size = static_cast<int64_t>(std::count(in_set[s].begin(), in_set[s].end(), true));
    p.optimum += z[s] * (size - 1) / 2;
  }
  return p;
}

TEST(Matching, PlantedDualOptimumUpToServerScale) {
  MatchingStats total;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    std::mt19937_64 rng(seed + 9000);
    const uint32_t n = std::vector<uint32_t>{12, 60, 128, 201, 432}[seed % 5];
    const double density = seed % 3 == 0 ? 1.0 : 0.3;
    const Planted p = planted_graph(rng, n, density, n / 3);
    // The generator's own claim: the planted matching reaches the bound.
    ASSERT_EQ(checked_weight(n, p.edges, p.planted_mate), p.optimum) << "seed " << seed;
    if (n <= 16) {
      ASSERT_EQ(brute_force(n, p.edges), p.optimum);
    }
    MatchingStats stats;
    const std::vector<uint32_t> mate = max_weight_matching(n, p.edges, &stats);
    EXPECT_EQ(checked_weight(n, p.edges, mate), p.optimum) << "seed " << seed << ", n = " << n;
    add(total, stats);
  }
  // The planted odd sets made the algorithm shrink (and nest) blossoms at scale, not only augment.
  EXPECT_GT(total.blossoms_formed, 100u);
  EXPECT_GT(total.nested_blossoms_formed, 10u);
  EXPECT_GT(total.inner_expansions, 10u);
  RecordProperty("blossoms", std::to_string(total.blossoms_formed));
  RecordProperty("nested_blossoms", std::to_string(total.nested_blossoms_formed));
  RecordProperty("inner_expansions", std::to_string(total.inner_expansions));
  RecordProperty("max_nesting", std::to_string(total.max_nesting));
}

// --- Larger random graphs: no short improvement -----------------------------

/// An improving exchange of at most two matched edges, described, if any:
/// an edge between free vertices; a free vertex taking over a matched edge's
/// end; an augmenting path of three edges; two matched edges swapped for the
/// other two edges on their four ends; a free vertex taking over one end of a
/// matched edge whose other end takes over a second matched edge's end.
std::optional<std::string> short_improvement(uint32_t n, const std::vector<WeightedEdge>& edges,
                                             const std::vector<uint32_t>& mate) {
  const std::vector<int64_t> raw = heaviest(n, edges);
  auto w = [&](uint32_t i, uint32_t j) {  // a missing or non-positive edge is never worth taking
    return i == j ? int64_t{0} : std::max<int64_t>(0, raw[size_t{i} * n + j]);
  };
  std::vector<uint32_t> free_vertices, matched;  // matched: the lower end of each pair
  for (uint32_t v = 0; v < n; ++v) {
    if (mate[v] == kUnmatched)
      free_vertices.push_back(v);
    else if (v < mate[v])
      matched.push_back(v);
  }
  for (uint32_t a : free_vertices)
    for (uint32_t b : free_vertices)
      if (a < b && w(a, b) > 0) return "free-free edge " + std::to_string(a) + "-" + std::to_string(b);
  for (uint32_t a : free_vertices)
    for (uint32_t lo : matched)
      for (uint32_t b : {lo, mate[lo]}) {
        const uint32_t c = mate[b];
        if (w(a, b) > w(b, c)) return "free " + std::to_string(a) + " takes " + std::to_string(b);
        for (uint32_t d : free_vertices)
          if (d != a && w(a, b) + w(c, d) > w(b, c)) return "augmenting path of three edges";
        for (uint32_t lo2 : matched)
          for (uint32_t d : {lo2, mate[lo2]}) {
            const uint32_t e = mate[d];
            if (lo2 != lo && w(a, b) + w(c, d) > w(b, c) + w(d, e)) return "alternating path of four edges";
          }
      }
  for (size_t x = 0; x < matched.size(); ++x)
    for (size_t y = x + 1; y < matched.size(); ++y) {
      const uint32_t a = matched[x], b = mate[a], c = matched[y], d = mate[c];
      const int64_t now = w(a, b) + w(c, d);
      if (w(a, c) + w(b, d) > now || w(a, d) + w(b, c) > now) return "alternating 4-cycle";
    }
  return std::nullopt;
}

TEST(Matching, LargeRandomGraphsHaveNoShortImprovement) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    std::mt19937_64 rng(seed + 4242);
    const uint32_t n = 40 + pick(rng, 161);
    const WeightKind kind = std::vector<WeightKind>{WeightKind::Ties, WeightKind::Small, WeightKind::Large,
                                                    WeightKind::Signed, WeightKind::Sparse}[seed % 5];
    const std::vector<WeightedEdge> edges = random_graph(rng, n, kind);
    const std::vector<uint32_t> mate = max_weight_matching(n, edges);
    const int64_t weight = checked_weight(n, edges, mate);
    EXPECT_GE(weight, greedy_weight(n, edges)) << "seed " << seed;
    const std::optional<std::string> better = short_improvement(n, edges, mate);
    EXPECT_FALSE(better.has_value()) << "seed " << seed << ": " << better.value_or("");
  }
  // The check itself finds an improvement in a poor matching: the path 0-1-2-3 (2, 3, 2) matched in the middle.
  EXPECT_TRUE(short_improvement(4, {{0, 1, 2}, {1, 2, 3}, {2, 3, 2}}, {kUnmatched, 2, 1, kUnmatched}).has_value());
}

// --- Scale --------------------------------------------------------------

TEST(Matching, DenseGraphAtServerScaleFinishes) {
  // A fabric build's size: 432 servers, every pair an edge (93,096 edges), and a deeply nested case (two
  // weights only, so that tight odd cycles abound).
  for (const int64_t max_weight : {int64_t{1'000'000}, int64_t{2}}) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(max_weight));
    const uint32_t n = 432;
    std::vector<WeightedEdge> edges;
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t j = i + 1; j < n; ++j) edges.push_back({i, j, uniform(rng, 1, max_weight)});
    const std::vector<uint32_t> mate = max_weight_matching(n, edges);
    const int64_t weight = checked_weight(n, edges, mate);
    EXPECT_EQ(std::count(mate.begin(), mate.end(), kUnmatched), 0);  // complete graph, positive weights
    if (max_weight == 2) {
      EXPECT_EQ(weight, 432);  // a perfect matching of weight-2 edges exists (half of all pairs)
    }
  }
}

}  // namespace
}  // namespace fabricsim::ctrl
