// The two-tier path assignment (ctrl/two_tier.hpp) against independent
// computations: the spec's Fig. 2 toy worked by hand, Koenig's bound
// ceil(Delta / live spines), brute force on tiny instances, Theorem 2
// (Greedy <= 2 x OPT), a reference Greedy written here from the spec's
// text, and for the ECMP baseline net::Ecmp and the spec's formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/ctrl/two_tier.hpp"
#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::ctrl {
namespace {

using std::uint32_t;

Commodity commodity(uint32_t src, uint32_t dst, std::int32_t src_nic = 0, std::int32_t dst_nic = 0) {
  Commodity c;
  c.src_tor = src;
  c.dst_tor = dst;
  c.src_nic = src_nic;
  c.dst_nic = dst_nic;
  c.src_tor_id = static_cast<std::int32_t>(src);
  return c;
}

// Loads counted here, link by link, apart from the library's bookkeeping.
uint32_t reference_max_load(const Problem& p, const std::vector<std::int32_t>& spine) {
  std::vector<uint32_t> up(std::size_t{p.tors} * p.spines, 0), down(std::size_t{p.spines} * p.tors, 0);
  for (std::size_t i = 0; i < spine.size(); ++i) {
    if (spine[i] == kNoSpine) continue;
    const auto s = static_cast<uint32_t>(spine[i]);
    ++up[p.commodities[i].src_tor * p.spines + s];
    ++down[s * p.tors + p.commodities[i].dst_tor];
  }
  uint32_t m = 0;
  for (uint32_t l : up) m = std::max(m, l);
  for (uint32_t l : down) m = std::max(m, l);
  return m;
}

bool has_usable_spine(const Problem& p, const Commodity& c) {
  for (uint32_t s = 0; s < p.spines; ++s)
    if (p.usable(c, s)) return true;
  return false;
}

// Every commodity on a spine it can use (kNoSpine only where none exists),
// and the reported max load is the recomputed one.
void expect_valid(const Problem& p, const Assignment& a) {
  ASSERT_EQ(a.spine.size(), p.commodities.size());
  uint32_t unroutable = 0;
  for (std::size_t i = 0; i < a.spine.size(); ++i) {
    const Commodity& c = p.commodities[i];
    if (a.spine[i] == kNoSpine) {
      EXPECT_FALSE(has_usable_spine(p, c)) << "commodity " << i << " left unrouted";
      ++unroutable;
      continue;
    }
    ASSERT_GE(a.spine[i], 0);
    ASSERT_LT(static_cast<uint32_t>(a.spine[i]), p.spines);
    EXPECT_TRUE(p.usable(c, static_cast<uint32_t>(a.spine[i]))) << "commodity " << i;
  }
  EXPECT_EQ(a.unroutable, unroutable);
  EXPECT_EQ(a.max_load, reference_max_load(p, a.spine));
}

struct RandomSpec {
  uint32_t tors = 8;
  uint32_t spines = 4;
  uint32_t commodities = 20;
  uint32_t failed_spines = 0;  // the highest ids, all links (spec 8.6: highest-id failures)
  uint32_t failed_links = 0;   // random single directed links
};

Problem random_problem(std::uint64_t seed, const RandomSpec& spec) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.tors = spec.tors;
  p.spines = spec.spines;
  for (uint32_t i = 0; i < spec.commodities; ++i) {
    const auto src = static_cast<uint32_t>(rng() % spec.tors);
    const auto dst = static_cast<uint32_t>((src + 1 + rng() % (spec.tors - 1)) % spec.tors);
    p.commodities.push_back(commodity(src, dst, static_cast<std::int32_t>(src * 32 + rng() % 32),
                                      static_cast<std::int32_t>(dst * 32 + rng() % 32)));
  }
  if (spec.failed_spines > 0 || spec.failed_links > 0) {
    p.up_live.assign(std::size_t{p.tors} * p.spines, 1);
    p.down_live.assign(std::size_t{p.spines} * p.tors, 1);
  }
  for (uint32_t s = spec.spines - spec.failed_spines; s < spec.spines; ++s) {
    for (uint32_t t = 0; t < spec.tors; ++t) {
      p.up_live[t * p.spines + s] = 0;
      p.down_live[s * p.tors + t] = 0;
    }
  }
  for (uint32_t k = 0; k < spec.failed_links; ++k) {
    const auto t = static_cast<uint32_t>(rng() % spec.tors);
    const auto s = static_cast<uint32_t>(rng() % spec.spines);
    if (rng() % 2 == 0) {
      p.up_live[t * p.spines + s] = 0;
    } else {
      p.down_live[s * p.tors + t] = 0;
    }
  }
  return p;
}

// Koenig's value ceil(Delta / live), Delta over the multigraph's both sides.
uint32_t koenig_bound(const Problem& p, uint32_t live) {
  std::vector<uint32_t> out(p.tors, 0), in(p.tors, 0);
  for (const Commodity& c : p.commodities) {
    ++out[c.src_tor];
    ++in[c.dst_tor];
  }
  const uint32_t delta = std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  return (delta + live - 1) / live;
}

// min over all assignments (each commodity on one of its usable spines) of
// the max load: exhaustive enumeration.
uint32_t brute_force_optimum(const Problem& p) {
  std::vector<std::vector<std::int32_t>> options;
  for (const Commodity& c : p.commodities) {
    std::vector<std::int32_t> o;
    for (uint32_t s = 0; s < p.spines; ++s)
      if (p.usable(c, s)) o.push_back(static_cast<std::int32_t>(s));
    if (o.empty()) o.push_back(kNoSpine);
    options.push_back(o);
  }
  std::vector<std::size_t> digit(options.size(), 0);
  std::vector<std::int32_t> spine(options.size());
  uint32_t best = UINT32_MAX;
  while (true) {
    for (std::size_t i = 0; i < options.size(); ++i) spine[i] = options[i][digit[i]];
    best = std::min(best, reference_max_load(p, spine));
    std::size_t i = 0;
    while (i < digit.size() && ++digit[i] == options[i].size()) digit[i++] = 0;
    if (i == digit.size()) break;
  }
  return best;
}

// ---------------------------------------------------------------------------
// Fig. 2 (spec 2.3): t1->t2, t2->t1, t2->t3, t3->t1 on four spines.

Problem fig2() {
  Problem p;
  p.tors = 4;
  p.spines = 4;
  p.commodities = {commodity(0, 1), commodity(1, 0), commodity(1, 2), commodity(2, 0)};
  return p;
}

TEST(TwoTier, Fig2GreedyByHand) {
  // Algorithm 1 in input order, all loads 0 at first:
  //   c0 t1->t2: every spine costs 0, the lowest wins: spine 0.
  //   c1 t2->t1: spine 0 costs max(L(t2->0), L(0->t1)) = max(0, 0) = 0: spine 0.
  //   c2 t2->t3: spine 0 costs L(t2->0) = 1, spine 1 costs 0: spine 1.
  //   c3 t3->t1: spine 0 costs L(0->t1) = 1, spine 1 costs max(L(t3->1), L(1->t1)) = 0: spine 1.
  // Every link then carries at most one flow.
  const Problem p = fig2();
  const Assignment a = greedy(p, GreedyOrder::Input);
  EXPECT_EQ(a.spine, (std::vector<std::int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(a.max_load, 1u);
  EXPECT_EQ(a.unroutable, 0u);
  expect_valid(p, a);

  // The collision the figure warns of: both flows leaving t2 on one uplink,
  // and (second case) both flows entering t1 on one downlink.
  EXPECT_EQ(max_load(p, {0, 2, 2, 1}), 2u);
  EXPECT_EQ(max_load(p, {0, 3, 1, 3}), 2u);
  EXPECT_EQ(max_load(p, {0, 1, 2, 3}), 1u);
  // Edge colouring and the ILP also find the collision-free optimum.
  EXPECT_EQ(edge_coloring(p).max_load, 1u);
  EXPECT_TRUE(edge_coloring(p).optimal);
  EXPECT_EQ(ilp(p, 0).max_load, 1u);
}

TEST(TwoTier, TorDegreeSortedBreaksTiesLikeStrings) {
  // Groups a_2 = {c0, c1}, a_10 = {c2, c3}, b_3 = {c0, c2}, b_4, b_5 of one.
  // Ties by string key: "a_10" < "a_2" < "b_3", so the order is c2 c3 c0 c1:
  //   c2 10->3: spine 0.   c3 10->5: L(10->0) = 1, so spine 1.
  //   c0 2->3: L(0->3) = 1, spine 1 is free: spine 1.   c1 2->4: spine 0.
  // A numeric tie-break (a_2 first) would give the input order's 0 1 1 0.
  Problem p;
  p.tors = 12;
  p.spines = 2;
  p.commodities = {commodity(2, 3), commodity(2, 4), commodity(10, 3), commodity(10, 5)};
  EXPECT_EQ(greedy(p, GreedyOrder::TorDegreeSorted).spine, (std::vector<std::int32_t>{1, 0, 0, 1}));
  EXPECT_EQ(greedy(p, GreedyOrder::Input).spine, (std::vector<std::int32_t>{0, 1, 1, 0}));
}

// The spec's Greedy, written plainly: string-keyed groups, a stable sort,
// then Algorithm 1 over explicit link loads.
std::vector<std::int32_t> reference_greedy(const Problem& p, bool sorted) {
  std::vector<std::size_t> order;
  if (!sorted) {
    for (std::size_t i = 0; i < p.commodities.size(); ++i) order.push_back(i);
  } else {
    struct Group {
      std::string key;
      std::vector<std::size_t> members;
    };
    std::vector<Group> groups;
    for (uint32_t t = 0; t < p.tors; ++t) {
      Group a{"a_" + std::to_string(t), {}}, b{"b_" + std::to_string(t), {}};
      for (std::size_t i = 0; i < p.commodities.size(); ++i) {
        if (p.commodities[i].src_tor == t) a.members.push_back(i);
        if (p.commodities[i].dst_tor == t) b.members.push_back(i);
      }
      groups.push_back(a);
      groups.push_back(b);
    }
    std::stable_sort(groups.begin(), groups.end(), [](const Group& x, const Group& y) {
      if (x.members.size() != y.members.size()) return x.members.size() > y.members.size();
      return x.key < y.key;
    });
    std::vector<bool> done(p.commodities.size(), false);
    for (const Group& g : groups) {
      for (std::size_t i : g.members) {
        if (!done[i]) order.push_back(i);
        done[i] = true;
      }
    }
  }
  std::vector<std::vector<uint32_t>> up(p.tors, std::vector<uint32_t>(p.spines, 0)), down = up;
  std::vector<std::int32_t> spine(p.commodities.size(), kNoSpine);
  for (std::size_t i : order) {
    const Commodity& c = p.commodities[i];
    long best = -1;
    for (uint32_t s = 0; s < p.spines; ++s) {
      if (!p.usable(c, s)) continue;
      const auto load = [&](std::size_t k) { return std::max(up[c.src_tor][k], down[c.dst_tor][k]); };
      if (best < 0 || load(s) < load(static_cast<std::size_t>(best))) best = s;
    }
    if (best < 0) continue;
    spine[i] = static_cast<std::int32_t>(best);
    ++up[c.src_tor][static_cast<std::size_t>(best)];
    ++down[c.dst_tor][static_cast<std::size_t>(best)];
  }
  return spine;
}

TEST(TwoTier, GreedyMatchesAReferenceImplementation) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    RandomSpec spec;
    spec.tors = 2 + static_cast<uint32_t>(seed % 13);
    spec.spines = 1 + static_cast<uint32_t>(seed % 7);
    spec.commodities = static_cast<uint32_t>(seed * 3 % 90);
    spec.failed_links = static_cast<uint32_t>(seed % 4);
    const Problem p = random_problem(seed, spec);
    for (bool sorted : {false, true}) {
      const Assignment a = greedy(p, sorted ? GreedyOrder::TorDegreeSorted : GreedyOrder::Input);
      EXPECT_EQ(a.spine, reference_greedy(p, sorted)) << "seed " << seed << " sorted " << sorted;
      expect_valid(p, a);
    }
  }
}

// ---------------------------------------------------------------------------
// Edge colouring: Koenig's optimum.

TEST(TwoTier, EdgeColoringReachesKoenigsBound) {
  int cases = 0;
  for (uint32_t failed : {0u, 1u, 4u, 8u}) {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      RandomSpec spec;
      spec.tors = seed % 3 == 0 ? 64 : 4 + static_cast<uint32_t>(seed % 16);
      spec.spines = 32;
      spec.commodities = static_cast<uint32_t>(50 + seed * 131 % 1500);
      spec.failed_spines = failed;
      const Problem p = random_problem(seed * 7919 + failed, spec);
      const Assignment a = edge_coloring(p);
      expect_valid(p, a);
      EXPECT_EQ(a.unroutable, 0u);
      EXPECT_EQ(a.max_load, koenig_bound(p, 32 - failed)) << "seed " << seed << " failed " << failed;
      EXPECT_TRUE(a.optimal);
      ++cases;
    }
  }
  // A dense multigraph: one ToR pair repeated, Delta far above the spines.
  Problem p;
  p.tors = 3;
  p.spines = 4;
  for (int i = 0; i < 37; ++i) p.commodities.push_back(commodity(0, 1));
  for (int i = 0; i < 20; ++i) p.commodities.push_back(commodity(2, 1));
  const Assignment a = edge_coloring(p);
  expect_valid(p, a);
  EXPECT_EQ(a.max_load, (57u + 3) / 4);
  EXPECT_EQ(cases, 48);
}

TEST(TwoTier, EdgeColoringRepairsSingleLinkFailures) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    RandomSpec spec;
    spec.tors = 8 + static_cast<uint32_t>(seed % 8);
    spec.spines = 4 + static_cast<uint32_t>(seed % 5);
    spec.commodities = 40 + static_cast<uint32_t>(seed % 60);
    spec.failed_links = 1 + static_cast<uint32_t>(seed % 6);
    const Problem p = random_problem(seed, spec);
    const Assignment a = edge_coloring(p);
    expect_valid(p, a);
    if (a.optimal) {
      EXPECT_EQ(a.max_load, ilp(p, 0).max_load) << "seed " << seed;
    }
  }
  // No spine with all links live: the colours have no spine, every
  // commodity goes to its least loaded usable spine, none is dropped.
  Problem p = fig2();
  p.up_live.assign(16, 1);
  for (uint32_t s = 0; s < 4; ++s) p.up_live[3 * 4 + s] = 0;  // ToR 3 (no traffic) cut off
  EXPECT_TRUE(p.live_spines().empty());
  const Assignment b = edge_coloring(p);
  expect_valid(p, b);
  EXPECT_EQ(b.unroutable, 0u);
  EXPECT_FALSE(b.optimal);
}

// ---------------------------------------------------------------------------
// Brute force on tiny instances; the ILP against edge colouring.

TEST(TwoTier, TinyInstancesMatchBruteForce) {
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    RandomSpec spec;
    spec.tors = 3;
    spec.spines = 2 + static_cast<uint32_t>(seed % 2);
    spec.commodities = 1 + static_cast<uint32_t>(seed % 6);
    spec.failed_links = seed % 3 == 0 ? 2 : 0;
    const Problem p = random_problem(seed, spec);
    const uint32_t best = brute_force_optimum(p);
    // CBC alone (no incumbent from the other algorithms, no bound shortcut)
    // and the run's ILP both reach the brute force's optimum.
    for (const IlpStart how : {IlpStart::Cold, IlpStart::Heuristics}) {
      const Assignment opt = ilp(p, 0, how);
      expect_valid(p, opt);
      EXPECT_EQ(opt.max_load, best) << "seed " << seed;
      EXPECT_TRUE(opt.optimal);
      EXPECT_TRUE(opt.solved);
    }
    const Assignment ec = edge_coloring(p);
    expect_valid(p, ec);
    if (spec.failed_links == 0) {
      EXPECT_EQ(ec.max_load, best) << "seed " << seed;
    } else {
      EXPECT_GE(ec.max_load, best);
    }
    if (ec.optimal) {
      EXPECT_EQ(ec.max_load, best) << "seed " << seed;
    }
  }
}

TEST(TwoTier, IlpEqualsEdgeColoring) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    RandomSpec spec;
    spec.tors = 6 + static_cast<uint32_t>(seed % 10);
    spec.spines = 3 + static_cast<uint32_t>(seed % 6);
    spec.commodities = 30 + static_cast<uint32_t>(seed * 17 % 120);
    spec.failed_spines = static_cast<uint32_t>(seed % 3);
    const Problem p = random_problem(seed, spec);
    const Assignment ec = edge_coloring(p);
    ASSERT_TRUE(ec.optimal);
    // CBC on its own, not seeded by the colouring (which would make this
    // hold by construction).
    const Assignment opt = ilp(p, 0, IlpStart::Cold);
    expect_valid(p, opt);
    EXPECT_TRUE(opt.optimal) << "seed " << seed;
    EXPECT_EQ(opt.max_load, ec.max_load) << "seed " << seed;
  }
}

// Single failed links: the colouring's repair and Greedy both miss the
// optimum on some of these, so the ILP has to search past its start.
TEST(TwoTier, IlpSearchesPastGreedyAndColouring) {
  int searched = 0;
  for (std::uint64_t seed = 1; seed <= 150; ++seed) {
    RandomSpec spec;
    spec.tors = 3 + static_cast<uint32_t>(seed % 2);
    spec.spines = 2 + static_cast<uint32_t>(seed % 2);
    spec.commodities = 8;
    spec.failed_links = 2 + static_cast<uint32_t>(seed % 2);
    const Problem p = random_problem(seed, spec);
    const uint32_t best = brute_force_optimum(p);
    const Assignment opt = ilp(p, 0);
    expect_valid(p, opt);
    EXPECT_EQ(opt.max_load, best) << "seed " << seed;
    EXPECT_TRUE(opt.optimal);
    searched += std::min(greedy(p, GreedyOrder::TorDegreeSorted).max_load, edge_coloring(p).max_load) > best ? 1 : 0;
  }
  EXPECT_GT(searched, 5);
}

// Every ToR sources and sinks exactly k (k random derangements of the
// ToRs), k a multiple of the spines: the optimum is k / spines, a perfect
// colouring that Greedy often misses.
TEST(TwoTier, RegularInstancesReachKOverSpines) {
  int greedy_missed = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    Problem p;
    p.tors = 8 + static_cast<uint32_t>(seed % 3) * 4;
    p.spines = 4;
    const uint32_t k = 4 * (1 + static_cast<uint32_t>(seed % 2));
    for (uint32_t r = 0; r < k; ++r) {
      std::vector<uint32_t> pi(p.tors);
      for (uint32_t t = 0; t < p.tors; ++t) pi[t] = t;
      const auto fixed_point = [&] {
        for (uint32_t t = 0; t < p.tors; ++t)
          if (pi[t] == t) return true;
        return false;
      };
      do {
        std::shuffle(pi.begin(), pi.end(), rng);
      } while (fixed_point());
      for (uint32_t t = 0; t < p.tors; ++t) p.commodities.push_back(commodity(t, pi[t]));
    }
    std::shuffle(p.commodities.begin(), p.commodities.end(), rng);
    const Assignment ec = edge_coloring(p);
    expect_valid(p, ec);
    EXPECT_EQ(ec.max_load, k / 4);
    const Assignment opt = ilp(p, 0);
    expect_valid(p, opt);
    EXPECT_EQ(opt.max_load, k / 4);
    EXPECT_TRUE(opt.optimal);
    greedy_missed += greedy(p, GreedyOrder::TorDegreeSorted).max_load > k / 4 ? 1 : 0;
  }
  EXPECT_GT(greedy_missed, 0);
}

// Full-degree ToRs with a few failed links: Greedy and the colouring's
// repair reach 2 where the bound is 1, and CBC's search (the root LP
// included) has to stop at the limit with the best assignment it has.
TEST(TwoTier, IlpStopsAtItsTimeLimit) {
  std::mt19937_64 rng(1);
  Problem p;
  p.tors = 32;
  p.spines = 16;
  for (uint32_t r = 0; r < 15; ++r) {
    std::vector<uint32_t> pi(p.tors);
    for (uint32_t t = 0; t < p.tors; ++t) pi[t] = t;
    const auto fixed_point = [&] {
      for (uint32_t t = 0; t < p.tors; ++t)
        if (pi[t] == t) return true;
      return false;
    };
    do {
      std::shuffle(pi.begin(), pi.end(), rng);
    } while (fixed_point());
    for (uint32_t t = 0; t < p.tors; ++t) p.commodities.push_back(commodity(t, pi[t]));
  }
  p.up_live.assign(std::size_t{p.tors} * p.spines, 1);
  for (int k = 0; k < 4; ++k) p.up_live[rng() % p.up_live.size()] = 0;
  const uint32_t start = std::min(greedy(p, GreedyOrder::TorDegreeSorted).max_load, edge_coloring(p).max_load);
  const auto t0 = std::chrono::steady_clock::now();
  const Assignment a = ilp(p, 0.3);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  expect_valid(p, a);
  EXPECT_TRUE(a.solved);
  EXPECT_LE(a.max_load, start);
  EXPECT_LT(elapsed, 5.0);  // without CLP's limit the root LP alone ran for seconds
  if (a.optimal) {
    EXPECT_EQ(a.max_load, 1u);  // 15 flows per ToR on 16 spines: the bound is 1
  }
}

// Theorem 2: no link carries more than twice the optimum's Greedy paths.
TEST(TwoTier, GreedyIsWithinTwiceTheOptimum) {
  int greedy_above_optimum = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    RandomSpec spec;
    spec.tors = 3 + static_cast<uint32_t>(seed % 8);
    spec.spines = 2 + static_cast<uint32_t>(seed % 5);
    spec.commodities = 5 + static_cast<uint32_t>(seed * 7 % 40);
    spec.failed_spines = seed % 4 == 0 ? 1 : 0;
    const Problem p = random_problem(seed, spec);
    const Assignment opt = ilp(p, 0, IlpStart::Cold);  // CBC alone: the optimum, independently of Greedy
    ASSERT_TRUE(opt.optimal);
    for (GreedyOrder order : {GreedyOrder::Input, GreedyOrder::TorDegreeSorted}) {
      const Assignment g = greedy(p, order);
      expect_valid(p, g);
      EXPECT_LE(g.max_load, 2 * opt.max_load) << "seed " << seed;
      EXPECT_GE(g.max_load, opt.max_load) << "seed " << seed;
      greedy_above_optimum += g.max_load > opt.max_load ? 1 : 0;
    }
  }
  // Somewhere Greedy must miss the optimum for the bound to be tested.
  EXPECT_GT(greedy_above_optimum, 0);
}

// ---------------------------------------------------------------------------
// Annealing.

// The documented initial state: each destination NIC's rank among its ToR's
// distinct destination NICs, mod |live|, on live spines.
uint32_t annealing_initial_max_load(const Problem& p) {
  const std::vector<uint32_t> live = p.live_spines();
  std::vector<std::int32_t> spine(p.commodities.size(), kNoSpine);
  for (std::size_t i = 0; i < p.commodities.size(); ++i) {
    const Commodity& c = p.commodities[i];
    std::vector<std::int32_t> nics;
    for (const Commodity& o : p.commodities)
      if (o.dst_tor == c.dst_tor) nics.push_back(o.dst_nic);
    std::sort(nics.begin(), nics.end());
    nics.erase(std::unique(nics.begin(), nics.end()), nics.end());
    const auto rank = static_cast<std::size_t>(std::find(nics.begin(), nics.end(), c.dst_nic) - nics.begin());
    spine[i] = static_cast<std::int32_t>(live[rank % live.size()]);
  }
  return reference_max_load(p, spine);
}

TEST(TwoTier, AnnealingIsSeededAndNeverWorseThanItsStart) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    RandomSpec spec;
    spec.tors = 8 + static_cast<uint32_t>(seed % 8);
    spec.spines = 4 + static_cast<uint32_t>(seed % 4);
    spec.commodities = 60 + static_cast<uint32_t>(seed * 13 % 200);
    spec.failed_spines = static_cast<uint32_t>(seed % 2);
    const Problem p = random_problem(seed, spec);
    const Assignment a = annealing(p, seed);
    expect_valid(p, a);
    EXPECT_EQ(a.spine, annealing(p, seed).spine);
    EXPECT_LE(a.max_load, annealing_initial_max_load(p)) << "seed " << seed;
    EXPECT_GE(a.max_load, edge_coloring(p).max_load);
    // All flows to one destination NIC share a spine (the state is per NIC).
    for (std::size_t i = 0; i < p.commodities.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (p.commodities[i].dst_nic == p.commodities[j].dst_nic) {
          EXPECT_EQ(a.spine[i], a.spine[j]);
        }
  }
  // Single failed links: repaired commodities still get usable spines.
  RandomSpec spec;
  spec.tors = 10;
  spec.spines = 6;
  spec.commodities = 150;
  spec.failed_links = 5;
  const Problem p = random_problem(77, spec);
  expect_valid(p, annealing(p, 3));
  EXPECT_EQ(annealing(p, 3).spine, annealing(p, 3).spine);
}

// ---------------------------------------------------------------------------
// ECMP: the simulator's wang_jenkins ECMP, index into the usable spines.

TEST(TwoTier, EcmpMatchesTheSimulatorsEcmp) {
  net::LeafSpineParams params;
  params.leaves = 4;
  params.spines = 6;
  params.servers_per_leaf = 8;
  params.gpus_per_server = 1;
  params.radix = 16;
  const net::Topology topo = net::build_leaf_spine(params);
  const net::Ecmp wj(topo, net::EcmpHash::WangJenkins, 0);

  // Commodities carry the ids the simulator's hash reads for the endpoints.
  Problem p;
  p.tors = 4;
  p.spines = 6;
  std::vector<std::pair<net::EndpointId, net::EndpointId>> ends;
  for (net::EndpointId src = 0; src < 32; src += 3)
    for (net::EndpointId dst = 1; dst < 32; dst += 5)
      if (src / 8 != dst / 8) {
        Commodity c = commodity(src / 8, dst / 8, wj.nic_id(src), wj.nic_id(dst));
        c.src_tor_id = wj.tor_id(src);
        p.commodities.push_back(c);
        ends.emplace_back(src, dst);
      }
  ASSERT_GT(p.commodities.size(), 20u);

  const auto check = [&](const std::vector<uint32_t>& candidates) {
    const Assignment a = ecmp(p);
    expect_valid(p, a);
    for (std::size_t i = 0; i < p.commodities.size(); ++i) {
      const auto [src, dst] = ends[i];
      const std::size_t k = wj.pick(0, src, dst, 0, candidates.size());
      EXPECT_EQ(a.spine[i], static_cast<std::int32_t>(candidates[k])) << src << " -> " << dst;
    }
  };
  check({0, 1, 2, 3, 4, 5});
  // Spines 1 and 4 down: the index runs over 0 2 3 5.
  p.up_live.assign(4 * 6, 1);
  p.down_live.assign(6 * 4, 1);
  for (uint32_t t = 0; t < 4; ++t) {
    p.up_live[t * 6 + 1] = p.up_live[t * 6 + 4] = 0;
    p.down_live[1 * 4 + t] = p.down_live[4 * 4 + t] = 0;
  }
  check({0, 2, 3, 5});
}

// The spec's hash (4.1) on Java ints, in 64-bit arithmetic folded back to 32
// bits after every operation, independent of the library's uint32 route.
std::int64_t wrap(std::int64_t x) {
  x %= 4294967296LL;
  if (x < 0) x += 4294967296LL;
  return x >= 2147483648LL ? x - 4294967296LL : x;
}
std::int64_t shl(std::int64_t a, int n) { return wrap(a * (std::int64_t{1} << n)); }
std::int64_t sar(std::int64_t a, int n) {  // floor division: an arithmetic shift
  const std::int64_t d = std::int64_t{1} << n;
  return a >= 0 ? a / d : -((-a + d - 1) / d);
}
std::int64_t x32(std::int64_t a, std::int64_t b) {
  return wrap(static_cast<std::int64_t>(static_cast<uint32_t>(a) ^ static_cast<uint32_t>(b)));
}
std::int64_t java_hash(std::int64_t a) {
  a = wrap(wrap(a + 0x7ed55d16) + shl(a, 12));
  a = x32(x32(a, wrap(0xc761c23c)), sar(a, 19));
  a = wrap(wrap(a + 0x165667b1) + shl(a, 5));
  a = x32(wrap(a + wrap(0xd3a2646c)), shl(a, 9));
  a = wrap(wrap(a + wrap(0xfd7046c5)) + shl(a, 3));
  a = x32(x32(a, wrap(0xb55a4f09)), sar(a, 16));
  return a == -2147483648LL ? 2147483647LL : (a < 0 ? -a : a);
}

TEST(TwoTier, EcmpFollowsTheSpecsFormula) {
  // index = hash(srcTor + nonSeq(srcNic, dstNic)) mod |usable spines|,
  // nonSeq(s, d) = |hash(s + hash(d))|, additions wrapping as Java ints
  // (large ids make them wrap).
  RandomSpec spec;
  spec.tors = 16;
  spec.spines = 7;
  spec.commodities = 300;
  spec.failed_links = 10;
  Problem p = random_problem(5, spec);
  std::mt19937_64 rng(11);
  for (Commodity& c : p.commodities) {
    c.src_nic = static_cast<std::int32_t>(wrap(static_cast<std::int64_t>(rng() % 4294967296ULL)));
    c.dst_nic = static_cast<std::int32_t>(wrap(static_cast<std::int64_t>(rng() % 4294967296ULL)));
    c.src_tor_id = static_cast<std::int32_t>(wrap(static_cast<std::int64_t>(rng() % 4294967296ULL)));
  }
  const Assignment a = ecmp(p);
  expect_valid(p, a);
  for (std::size_t i = 0; i < p.commodities.size(); ++i) {
    const Commodity& c = p.commodities[i];
    std::vector<std::int32_t> usable;
    for (uint32_t s = 0; s < p.spines; ++s)
      if (p.usable(c, s)) usable.push_back(static_cast<std::int32_t>(s));
    if (usable.empty()) {
      EXPECT_EQ(a.spine[i], kNoSpine);
      continue;
    }
    const std::int64_t non_seq = java_hash(wrap(c.src_nic + java_hash(c.dst_nic)));
    const std::int64_t h = java_hash(wrap(c.src_tor_id + non_seq));
    EXPECT_EQ(a.spine[i], usable[static_cast<std::size_t>(h) % usable.size()]) << i;
  }
}

// ---------------------------------------------------------------------------
// Problems and masks.

TEST(TwoTier, LiveSpinesAndUnroutableCommodities) {
  Problem p = fig2();
  p.up_live.assign(16, 1);
  p.down_live.assign(16, 1);
  p.up_live[1 * 4 + 2] = 0;    // t2 -> spine 2
  p.down_live[3 * 4 + 0] = 0;  // spine 3 -> t1
  EXPECT_EQ(p.live_spines(), (std::vector<uint32_t>{0, 1}));
  // Cut t3 -> t1 (commodity 3) off every spine.
  for (uint32_t s = 0; s < 4; ++s) p.up_live[2 * 4 + s] = 0;
  for (const Assignment& a : {greedy(p, GreedyOrder::Input), greedy(p, GreedyOrder::TorDegreeSorted), edge_coloring(p),
                              annealing(p, 1), ilp(p, 0), ecmp(p)}) {
    expect_valid(p, a);
    EXPECT_EQ(a.spine[3], kNoSpine);
    EXPECT_EQ(a.unroutable, 1u);
  }
}

TEST(TwoTier, ValidateRejectsMalformedProblems) {
  const Problem good = fig2();
  EXPECT_NO_THROW(validate(good));
  Problem p = good;
  p.commodities[1].src_tor = 4;
  EXPECT_THROW(validate(p), std::invalid_argument);
  p = good;
  p.commodities[2].dst_tor = 9;
  EXPECT_THROW(greedy(p, GreedyOrder::Input), std::invalid_argument);
  p = good;
  p.commodities[0].dst_tor = p.commodities[0].src_tor;
  EXPECT_THROW(edge_coloring(p), std::invalid_argument);
  p = good;
  p.up_live.assign(15, 1);
  EXPECT_THROW(ilp(p, 0), std::invalid_argument);
  p = good;
  p.down_live.assign(17, 1);
  EXPECT_THROW(annealing(p, 1), std::invalid_argument);
  EXPECT_THROW(ecmp(p), std::invalid_argument);
  EXPECT_THROW(max_load(good, {0, 1}), std::invalid_argument);
  EXPECT_THROW(max_load(good, {0, 1, 4, 0}), std::invalid_argument);
  try {
    p = good;
    p.commodities[3].src_tor = 7;
    validate(p);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("commodity 3"), std::string::npos) << e.what();
  }
  // An empty problem is fine and routes nothing.
  Problem empty;
  empty.tors = 2;
  empty.spines = 2;
  EXPECT_EQ(ilp(empty, 0).spine.size(), 0u);
  EXPECT_EQ(edge_coloring(empty).max_load, 0u);
}

}  // namespace
}  // namespace fabricsim::ctrl
