// TOPOLOGYFINDER against hand-computed examples (the paper's n = 16 rings,
// a job with a family of two groups and MP demand, the two demand decays)
// and, on random jobs, the properties the fabric must have: d-regular (in
// and out), strongly connected, each matching round a matching of maximum
// weight (brute force over the round's demand, computed again in the test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <random>

#include "fabricsim/ctrl/topology_finder.hpp"

namespace fc = fabricsim::ctrl;
using Pair = std::pair<std::uint32_t, std::uint32_t>;
using Round = std::vector<Pair>;

namespace {

std::vector<double> matrix(std::uint32_t n, const std::map<Pair, double>& demand) {
  std::vector<double> m(std::size_t{n} * n, 0.0);
  for (const auto& [uv, b] : demand) m[std::size_t{uv.first} * n + uv.second] = b;
  return m;
}

/// Out- and in-degree of every server equal d, and every server reaches
/// every other (BFS from each, written here).
void expect_regular_connected(std::uint32_t n, std::uint32_t d, const std::vector<Pair>& links) {
  std::vector<std::uint32_t> out(n, 0), in(n, 0);
  std::vector<std::vector<std::uint32_t>> adj(n);
  for (const auto& [u, v] : links) {
    ASSERT_LT(u, n);
    ASSERT_LT(v, n);
    EXPECT_NE(u, v) << "self-loop";
    ++out[u];
    ++in[v];
    adj[u].push_back(v);
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    EXPECT_EQ(out[s], d) << "server " << s;
    EXPECT_EQ(in[s], d) << "server " << s;
  }
  for (std::uint32_t s = 0; s < n; ++s) {
    std::vector<std::uint8_t> seen(n, 0);
    std::queue<std::uint32_t> q;
    q.push(s);
    seen[s] = 1;
    std::uint32_t reached = 1;
    while (!q.empty()) {
      const std::uint32_t u = q.front();
      q.pop();
      for (std::uint32_t v : adj[u])
        if (!seen[v]) {
          seen[v] = 1;
          ++reached;
          q.push(v);
        }
    }
    EXPECT_EQ(reached, n) << "from server " << s;
  }
}

}  // namespace

TEST(TopologyFinder, PaperSixteenServersThreeRings) {
  // Spec §4.4 (Figs. 7-9): n = 16, 3 NICs, one AllReduce over all servers,
  // no MP: jumps +1, +3, +7 (16^(1/3) = 2.52 -> 3 -> 7.56 -> 7).
  fc::FinderInput in;
  in.servers = 16;
  in.degree = 3;
  fc::AllReduceFamily all;
  all.groups.push_back({});
  for (std::uint32_t s = 0; s < 16; ++s) all.groups[0].push_back(s);
  all.bytes = 1e9;
  in.allreduce.push_back(all);
  const fc::FinderResult r = fc::topology_finder(in);
  EXPECT_EQ(r.allreduce_degree, 3u);
  EXPECT_EQ(r.mp_degree, 0u);
  ASSERT_EQ(r.rings.size(), 3u);
  EXPECT_EQ(r.rings[0].step, 1u);
  EXPECT_EQ(r.rings[1].step, 3u);
  EXPECT_EQ(r.rings[2].step, 7u);
  for (const auto& ring : r.rings) EXPECT_EQ(ring.family, 0u);
  // Ring +3 is 0 -> 3 -> 6 -> ... : every server's successor.
  std::multiset<Pair> links(r.links.begin(), r.links.end());
  for (std::uint32_t s = 0; s < 16; ++s)
    for (std::uint32_t p : {1u, 3u, 7u}) EXPECT_EQ(links.count({s, (s + p) % 16}), 1u);
  EXPECT_TRUE(r.matchings.empty());
  EXPECT_TRUE(r.fill.empty());
  expect_regular_connected(16, 3, r.links);
}

TEST(TopologyFinder, HandComputedJob) {
  // n = 6, d = 3.  One family of two groups {0,1,2} {3,4,5}, 600 bytes.
  // MP: 0->3 300, 3->0 100, 1->4 200, 2->5 50, 5->2 50, 0->4 150 (850).
  // d_A = ceil(3 * 600 / 1450) = ceil(1.24) = 2.  The family does not span
  // the servers, so one of the two is the ring over all (0->1->...->5->0);
  // the family gets the other: candidates {1, 2} for g = 3, the first is 1:
  // 0->1->2->0 and 3->4->5->3.  d_MP = 1: symmetric weights 03 = 400,
  // 14 = 200, 25 = 100, 04 = 150; the maximum matching is {03, 14, 25}
  // (700; {04, 25} is 250), and then no server has an interface left.
  fc::FinderInput in;
  in.servers = 6;
  in.degree = 3;
  in.allreduce.push_back({{{0, 1, 2}, {3, 4, 5}}, 600});
  in.mp = matrix(6, {{{0, 3}, 300}, {{3, 0}, 100}, {{1, 4}, 200}, {{2, 5}, 50}, {{5, 2}, 50}, {{0, 4}, 150}});
  const fc::FinderResult r = fc::topology_finder(in);
  EXPECT_EQ(r.allreduce_degree, 2u);
  EXPECT_EQ(r.mp_degree, 1u);
  ASSERT_EQ(r.rings.size(), 2u);
  EXPECT_EQ(r.rings[0].family, fc::FinderRing::kAllServers);
  EXPECT_EQ(r.rings[1].family, 0u);
  EXPECT_EQ(r.rings[1].step, 1u);
  EXPECT_EQ(r.family_rings, std::vector<std::uint32_t>{1});
  ASSERT_EQ(r.matchings.size(), 1u);
  EXPECT_EQ(r.matchings[0], (Round{{0, 3}, {1, 4}, {2, 5}}));
  const std::multiset<Pair> got(r.links.begin(), r.links.end());
  const std::multiset<Pair> want{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0},   // all servers
                                 {0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3},   // the family
                                 {0, 3}, {3, 0}, {1, 4}, {4, 1}, {2, 5}, {5, 2}};  // the matching
  EXPECT_EQ(got, want);
  expect_regular_connected(6, 3, r.links);
}

TEST(TopologyFinder, DemandDecayHalfAndCode) {
  // n = 4, d = 5, MP only: d_A = max(1, 0) = 1 (the ring over all), d_MP = 4.
  // Symmetric demand 01 = 1000, 23 = 600, 02 = 450, 13 = 450.
  // Halving: R1 {01,23} (1600 > 900) -> 500, 300; R2 {02,13} (900 > 800)
  // -> 225, 225; R3 {01,23} (800 > 450) -> 250, 150; R4 {02,13} (450 > 400).
  // Code (x c/(c+1) after the c-th link): R1 and R2 as above (x 1/2);
  // R3 {01,23} -> x 2/3: 333.3, 200; R4 {01,23} (533.3 > 450).
  fc::FinderInput in;
  in.servers = 4;
  in.degree = 5;
  in.mp = matrix(4, {{{0, 1}, 1000}, {{3, 2}, 600}, {{0, 2}, 450}, {{1, 3}, 450}});
  const Round a{{0, 1}, {2, 3}}, b{{0, 2}, {1, 3}};
  fc::FinderOptions halve;
  const fc::FinderResult h = fc::topology_finder(in, halve);
  EXPECT_EQ(h.allreduce_degree, 1u);
  EXPECT_EQ(h.mp_degree, 4u);
  EXPECT_EQ(h.matchings, (std::vector<Round>{a, b, a, b}));
  expect_regular_connected(4, 5, h.links);
  fc::FinderOptions code;
  code.decay = fc::MpDecay::Code;
  const fc::FinderResult c = fc::topology_finder(in, code);
  EXPECT_EQ(c.matchings, (std::vector<Round>{a, b, a, a}));
  expect_regular_connected(4, 5, c.links);
}

TEST(TopologyFinder, DegreeSplitRoundingAndFixed) {
  // 4 x 700 / 1000 = 2.8 -> paper ceil 3, code round 3; 4 x 600 / 1000 = 2.4
  // -> ceil 3, round 2.  A fixed allreduce_degree wins over both.
  for (const auto& [ar, paper, code] : std::vector<std::tuple<double, std::uint32_t, std::uint32_t>>{
           {700, 3, 3}, {600, 3, 2}, {10, 1, 1}}) {
    fc::FinderInput in;
    in.servers = 8;
    in.degree = 4;
    in.allreduce.push_back({{{0, 1, 2, 3, 4, 5, 6, 7}}, ar});
    in.mp = matrix(8, {{{0, 5}, (1000 - ar) / 2}, {{6, 1}, (1000 - ar) / 2}});
    EXPECT_EQ(fc::topology_finder(in).allreduce_degree, paper) << ar;
    fc::FinderOptions o;
    o.split = fc::DegreeSplit::Code;
    EXPECT_EQ(fc::topology_finder(in, o).allreduce_degree, code) << ar;
    o.allreduce_degree = 4;
    const fc::FinderResult r = fc::topology_finder(in, o);
    EXPECT_EQ(r.allreduce_degree, 4u);
    EXPECT_TRUE(r.matchings.empty());
    expect_regular_connected(8, 4, r.links);
  }
}

TEST(TopologyFinder, RingOrder) {
  EXPECT_EQ(fc::ring_order({10, 11, 12, 13, 14}, 2), (std::vector<std::uint32_t>{10, 12, 14, 11, 13}));
  EXPECT_EQ(fc::ring_order({3, 7, 9, 20}, 1), (std::vector<std::uint32_t>{3, 7, 9, 20}));
}

namespace {

/// Maximum matching weight over the servers with an interface left, by
/// bitmask DP (n <= 12), for the round-by-round check.
std::int64_t best_matching(std::uint32_t n, const std::vector<std::int64_t>& w, const std::vector<std::uint32_t>& free) {
  std::vector<std::int64_t> dp(std::size_t{1} << n, 0);
  for (std::uint32_t mask = 1; mask < (1u << n); ++mask) {
    const auto i = static_cast<std::uint32_t>(__builtin_ctz(mask));
    const std::uint32_t rest = mask & ~(1u << i);
    std::int64_t best = dp[rest];
    if (free[i] > 0)
      for (std::uint32_t j = i + 1; j < n; ++j)
        if ((rest >> j & 1) && free[j] > 0 && w[std::size_t{i} * n + j] > 0)
          best = std::max(best, w[std::size_t{i} * n + j] + dp[rest & ~(1u << j)]);
    dp[mask] = best;
  }
  return dp.back();
}

}  // namespace

TEST(TopologyFinder, RandomJobsRegularConnectedMaximumRounds) {
  std::mt19937_64 rng(20261129);
  int rounds_checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto n = static_cast<std::uint32_t>(2 + rng() % 11);  // 2..12
    const auto d = static_cast<std::uint32_t>(1 + rng() % 6);
    fc::FinderInput in;
    in.servers = n;
    in.degree = d;
    // Up to two families: a random group size dividing a random prefix.
    for (int f = 0; f < static_cast<int>(rng() % 3); ++f) {
      const auto g = static_cast<std::uint32_t>(2 + rng() % (n - 1));
      std::vector<std::uint32_t> perm(n);
      std::iota(perm.begin(), perm.end(), 0u);
      std::shuffle(perm.begin(), perm.end(), rng);
      fc::AllReduceFamily fam;
      const auto groups = static_cast<std::uint32_t>(1 + rng() % (n / g));
      for (std::uint32_t k = 0; k < groups; ++k) {
        std::vector<std::uint32_t> members(perm.begin() + k * g, perm.begin() + (k + 1) * g);
        std::sort(members.begin(), members.end());
        fam.groups.push_back(members);
      }
      fam.bytes = static_cast<double>(rng() % 5000);
      in.allreduce.push_back(fam);
    }
    if (rng() % 4 != 0) {
      in.mp.assign(std::size_t{n} * n, 0.0);
      for (auto& b : in.mp)
        if (rng() % 3 == 0) b = static_cast<double>(rng() % 4000);
    }
    fc::FinderOptions opt;
    opt.decay = rng() % 2 ? fc::MpDecay::Halve : fc::MpDecay::Code;
    const fc::FinderResult r = fc::topology_finder(in, opt);
    ASSERT_EQ(r.spare, 0u) << "trial " << trial;
    expect_regular_connected(n, d, r.links);
    if (testing::Test::HasFailure()) {
      ADD_FAILURE() << "trial " << trial;
      return;
    }
    // Replay the rounds: each must be a maximum-weight matching of the
    // decayed demand among servers with interfaces left.
    std::vector<std::uint32_t> free(n, d);
    for (const fc::FinderRing& ring : r.rings) {
      if (ring.family == fc::FinderRing::kAllServers) {
        for (auto& f : free) --f;
      } else {
        for (const auto& g : in.allreduce[ring.family].groups)
          for (std::uint32_t s : g) --free[s];
      }
    }
    std::vector<double> t(std::size_t{n} * n, 0.0);
    for (std::uint32_t u = 0; u < n && !in.mp.empty(); ++u)
      for (std::uint32_t v = u + 1; v < n; ++v) t[u * n + v] = in.mp[u * n + v] + in.mp[v * n + u];
    std::vector<std::uint32_t> links(std::size_t{n} * n, 0);
    for (const Round& round : r.matchings) {
      std::vector<std::int64_t> w(std::size_t{n} * n, 0);
      for (std::size_t i = 0; i < t.size(); ++i) w[i] = static_cast<std::int64_t>(std::nearbyint(t[i]));
      std::int64_t got = 0;
      for (const auto& [u, v] : round) {
        ASSERT_LT(u, v);
        ASSERT_GT(free[u], 0u);
        ASSERT_GT(free[v], 0u);
        got += w[u * n + v];
      }
      EXPECT_EQ(got, best_matching(n, w, free)) << "trial " << trial;
      ++rounds_checked;
      for (const auto& [u, v] : round) {
        --free[u];
        --free[v];
        const std::uint32_t c = ++links[u * n + v];
        t[u * n + v] *= opt.decay == fc::MpDecay::Halve ? 0.5 : static_cast<double>(c) / (c + 1);
      }
    }
    // After the last round no positive demand is left between two servers
    // with an interface left.
    for (std::uint32_t u = 0; u < n; ++u)
      for (std::uint32_t v = u + 1; v < n; ++v)
        if (free[u] > 0 && free[v] > 0) {
          EXPECT_LT(std::nearbyint(t[u * n + v]), 1.0) << "trial " << trial;
        }
  }
  EXPECT_GT(rounds_checked, 300);
}

TEST(TopologyFinder, RefusesBadInput) {
  fc::FinderInput in;
  in.servers = 4;
  in.degree = 2;
  in.allreduce.push_back({{{0, 1}, {1, 2}}, 10});  // overlapping groups
  EXPECT_THROW(fc::topology_finder(in), std::invalid_argument);
  in.allreduce = {{{{0, 1}, {2}}, 10}};  // unequal sizes
  EXPECT_THROW(fc::topology_finder(in), std::invalid_argument);
  in.allreduce.clear();
  in.mp.assign(3, 0.0);  // wrong size
  EXPECT_THROW(fc::topology_finder(in), std::invalid_argument);
  in.mp.clear();
  in.degree = 0;
  EXPECT_THROW(fc::topology_finder(in), std::invalid_argument);
}
