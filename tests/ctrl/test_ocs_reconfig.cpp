// Algorithm 5 (OCS-reconfig) against hand-computed examples (both discount
// modes, the fill, splice and merge steps of the repair) and, on hundreds of
// seeded random demands, against a plain O(n^2)-scan reference of the greedy
// loop written here, plus the properties the repaired fabric must have:
// d-regular (in and out), no self-loops, strongly connected (BFS from every
// server, written here).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <stdexcept>

#include "fabricsim/ctrl/ocs_reconfig.hpp"

namespace fc = fabricsim::ctrl;
using Pair = std::pair<std::uint32_t, std::uint32_t>;
using Links = std::vector<Pair>;

namespace {

std::vector<double> matrix(std::uint32_t n, const std::map<Pair, double>& demand) {
  std::vector<double> m(std::size_t{n} * n, 0.0);
  for (const auto& [uv, b] : demand) m[std::size_t{uv.first} * n + uv.second] = b;
  return m;
}

fc::OcsReconfigOptions opts(bool discount, bool connect) {
  fc::OcsReconfigOptions o;
  o.discount = discount;
  o.connect = connect;
  return o;
}

/// The greedy loop, by the letter: scan all pairs for the highest remaining
/// T (strictly greater wins, so the scan order gives the smallest u, then v).
Links reference_greedy(std::uint32_t n, std::uint32_t d, std::vector<double> t, bool discount) {
  std::vector<std::uint32_t> tx(n, d), rx(n, d);
  Links out;
  for (;;) {
    bool found = false;
    std::uint32_t bu = 0, bv = 0;
    for (std::uint32_t u = 0; u < n; ++u)
      for (std::uint32_t v = 0; v < n; ++v) {
        const double x = t[std::size_t{u} * n + v];
        if (u == v || tx[u] == 0 || rx[v] == 0 || !(x > 0)) continue;
        if (!found || x > t[std::size_t{bu} * n + bv]) {
          found = true;
          bu = u;
          bv = v;
        }
      }
    if (!found) return out;
    out.emplace_back(bu, bv);
    --tx[bu];
    --rx[bv];
    if (discount) t[std::size_t{bu} * n + bv] /= 2;
  }
}

bool strongly_connected(std::uint32_t n, const Links& links) {
  std::vector<std::vector<std::uint32_t>> adj(n);
  for (const auto& [a, b] : links) adj[a].push_back(b);
  for (std::uint32_t s = 0; s < n; ++s) {
    std::vector<bool> seen(n, false);
    std::queue<std::uint32_t> q;
    q.push(s);
    seen[s] = true;
    std::uint32_t count = 1;
    while (!q.empty()) {
      const std::uint32_t x = q.front();
      q.pop();
      for (std::uint32_t y : adj[x])
        if (!seen[y]) {
          seen[y] = true;
          ++count;
          q.push(y);
        }
    }
    if (count != n) return false;
  }
  return true;
}

/// Degrees within d (exactly d when `regular`), no self-loops, ids in range.
void expect_degrees(std::uint32_t n, std::uint32_t d, const Links& links, bool regular) {
  std::vector<std::uint32_t> out(n, 0), in(n, 0);
  for (const auto& [a, b] : links) {
    ASSERT_LT(a, n);
    ASSERT_LT(b, n);
    EXPECT_NE(a, b) << "self-loop at " << a;
    ++out[a];
    ++in[b];
  }
  for (std::uint32_t v = 0; v < n; ++v) {
    EXPECT_LE(out[v], d) << "server " << v;
    EXPECT_LE(in[v], d) << "server " << v;
    if (regular) {
      EXPECT_EQ(out[v], d) << "server " << v;
      EXPECT_EQ(in[v], d) << "server " << v;
    }
  }
}

}  // namespace

// n = 3: T(0,1) = 10, T(0,2) = 9, T(1,2) = 8, T(2,0) = 1.
// d = 1 (either mode): 0->1 (10) uses tx0 and rx1, so (0,2) is out; then
// 1->2 (8), then 2->0 (1).  A ring: the repair has nothing to do.
TEST(OcsReconfig, HandExampleDegreeOne) {
  const auto t = matrix(3, {{{0, 1}, 10}, {{0, 2}, 9}, {{1, 2}, 8}, {{2, 0}, 1}});
  const Links ring = {{0, 1}, {1, 2}, {2, 0}};
  for (bool discount : {true, false})
    for (bool connect : {true, false}) {
      const auto r = fc::ocs_reconfig(3, 1, t, opts(discount, connect));
      EXPECT_EQ(r.links, ring);
      EXPECT_EQ(r.greedy_links, 3u);
      EXPECT_EQ(r.repair_links, 0u);
    }
}

// Same demand, d = 2, discount (T halved after each link):
//   1. 0->1 (10 -> 5); tx0 = 1, rx1 = 1.   2. 0->2 (9 -> 4.5); tx0 = 0, rx2 = 1.
//   3. 1->2 (8 -> 4); tx1 = 1, rx2 = 0.    4. 2->0 (1 -> 0.5); tx2 = 1, rx0 = 1.
//   5. 2->0 (0.5); tx2 = 0, rx0 = 0.  Left: tx1 = rx1 = 1 only (a self pair): stop.
// Repair: the fill finds no v != 1 with a free receive port; splice server 1
// into the lowest-demand link not touching it: 2->0 (T = 1; index 3, the
// earlier of the two copies) becomes 2->1, and 1->0 is appended.
// Discount = 1 (SiP-ML): T is not halved, so 0->1 twice (tx0, rx1 run out),
// then 1->2 twice, then 2->0 twice: every port used, a ring doubled.
TEST(OcsReconfig, HandExampleDegreeTwo) {
  const auto t = matrix(3, {{{0, 1}, 10}, {{0, 2}, 9}, {{1, 2}, 8}, {{2, 0}, 1}});
  auto r = fc::ocs_reconfig(3, 2, t, opts(true, false));
  EXPECT_EQ(r.links, (Links{{0, 1}, {0, 2}, {1, 2}, {2, 0}, {2, 0}}));
  EXPECT_EQ(r.greedy_links, 5u);
  EXPECT_EQ(r.repair_links, 0u);

  r = fc::ocs_reconfig(3, 2, t, opts(true, true));
  EXPECT_EQ(r.links, (Links{{0, 1}, {0, 2}, {1, 2}, {2, 1}, {2, 0}, {1, 0}}));
  EXPECT_EQ(r.greedy_links, 5u);
  EXPECT_EQ(r.repair_links, 2u);

  const Links doubled = {{0, 1}, {0, 1}, {1, 2}, {1, 2}, {2, 0}, {2, 0}};
  for (bool connect : {true, false}) {
    r = fc::ocs_reconfig(3, 2, t, opts(false, connect));
    EXPECT_EQ(r.links, doubled);
    EXPECT_EQ(r.greedy_links, 6u);
    EXPECT_EQ(r.repair_links, 0u);
  }
}

// n = 4, d = 1: T(0,1) = 5, T(1,0) = 4, T(2,3) = 3, T(3,2) = 2.  Greedy:
// 0->1, 1->0, 2->3, 3->2: two 2-cycles.  Merge: components {0,1} and {2,3};
// their lowest-demand links 1->0 (4) and 3->2 (2) swap heads: 1->2, 3->0.
TEST(OcsReconfig, HandExampleMergeTwoComponents) {
  const auto t = matrix(4, {{{0, 1}, 5}, {{1, 0}, 4}, {{2, 3}, 3}, {{3, 2}, 2}});
  auto r = fc::ocs_reconfig(4, 1, t, opts(true, false));
  EXPECT_EQ(r.links, (Links{{0, 1}, {1, 0}, {2, 3}, {3, 2}}));
  r = fc::ocs_reconfig(4, 1, t, opts(true, true));
  EXPECT_EQ(r.links, (Links{{0, 1}, {1, 2}, {2, 3}, {3, 0}}));
  EXPECT_EQ(r.greedy_links, 4u);
  EXPECT_EQ(r.repair_links, 2u);
}

// Ties and the fill.  n = 3, d = 1, T = 1 off the diagonal: 0->1 (smallest
// pair), then 1->0 (smallest u with a port, then smallest v); server 2's
// ports have no partner.  All-zero demand: no greedy link; fill 0->1, 1->0
// (most free receive ports, then smallest id), server 2 left: splice into
// the lowest-demand link 0->1 (tie with 1->0 broken by endpoints):
// 0->2, 1->0, 2->1.  With T = 1 the splice picks 0->1 too.
TEST(OcsReconfig, HandExampleTiesAndFill) {
  std::vector<double> ones(9, 1.0);
  auto r = fc::ocs_reconfig(3, 1, ones, opts(true, false));
  EXPECT_EQ(r.links, (Links{{0, 1}, {1, 0}}));
  r = fc::ocs_reconfig(3, 1, ones, opts(true, true));
  EXPECT_EQ(r.links, (Links{{0, 2}, {1, 0}, {2, 1}}));
  EXPECT_EQ(r.greedy_links, 2u);
  EXPECT_EQ(r.repair_links, 2u);

  const std::vector<double> zero(9, 0.0);
  r = fc::ocs_reconfig(3, 1, zero, opts(true, false));
  EXPECT_TRUE(r.links.empty());
  r = fc::ocs_reconfig(3, 1, zero, opts(true, true));
  EXPECT_EQ(r.links, (Links{{0, 2}, {1, 0}, {2, 1}}));
  EXPECT_EQ(r.greedy_links, 0u);
  EXPECT_EQ(r.repair_links, 3u);
}

TEST(OcsReconfig, InvalidInput) {
  const std::vector<double> ok(9, 1.0);
  EXPECT_THROW(fc::ocs_reconfig(1, 1, {0.0}), std::invalid_argument);
  EXPECT_THROW(fc::ocs_reconfig(3, 0, ok), std::invalid_argument);
  EXPECT_THROW(fc::ocs_reconfig(3, 1, std::vector<double>(8, 1.0)), std::invalid_argument);
  auto bad = ok;
  bad[1] = -1;
  EXPECT_THROW(fc::ocs_reconfig(3, 1, bad), std::invalid_argument);
  bad[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(fc::ocs_reconfig(3, 1, bad), std::invalid_argument);
  bad[1] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(fc::ocs_reconfig(3, 1, bad), std::invalid_argument);
  bad[1] = 1;
  bad[4] = -1;  // the diagonal is ignored but must still be a valid number
  EXPECT_THROW(fc::ocs_reconfig(3, 1, bad), std::invalid_argument);
  EXPECT_NO_THROW(fc::ocs_reconfig(3, 1, ok));
}

namespace {

/// Seeded random demands of several shapes: all zero, one pair, sparse with
/// ties (small integers), sparse continuous, dense.
std::vector<double> random_demand(std::mt19937_64& rng, std::uint32_t n, int shape) {
  std::vector<double> t(std::size_t{n} * n, 0.0);
  std::uniform_int_distribution<std::uint32_t> node(0, n - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> small(1, 4);
  switch (shape) {
    case 0: break;
    case 1: {
      const std::uint32_t u = node(rng);
      std::uint32_t v = node(rng);
      if (v == u) v = (u + 1) % n;
      t[std::size_t{u} * n + v] = 1e9;
      break;
    }
    default:
      for (std::uint32_t u = 0; u < n; ++u)
        for (std::uint32_t v = 0; v < n; ++v) {
          const double p = shape == 4 ? 1.0 : 0.15;
          if (unit(rng) >= p) continue;
          t[std::size_t{u} * n + v] = shape == 2 ? small(rng) : unit(rng) * 1e6;  // diagonal too: ignored
        }
  }
  return t;
}

}  // namespace

TEST(OcsReconfig, RandomGreedyMatchesReferenceAndRepairConnects) {
  std::mt19937_64 rng(20230417);
  std::uniform_int_distribution<std::uint32_t> nd(2, 12), dd(1, 4);
  std::uniform_int_distribution<int> shapes(0, 4);
  int already_fine = 0, repaired = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const std::uint32_t n = nd(rng), d = dd(rng);
    const int shape = shapes(rng);
    const auto t = random_demand(rng, n, shape);
    SCOPED_TRACE(testing::Message() << "iter " << iter << " n " << n << " d " << d << " shape " << shape);
    for (bool discount : {true, false}) {
      const Links ref = reference_greedy(n, d, t, discount);

      const auto plain = fc::ocs_reconfig(n, d, t, opts(discount, false));
      EXPECT_EQ(plain.links, ref);
      EXPECT_EQ(plain.greedy_links, ref.size());
      EXPECT_EQ(plain.repair_links, 0u);
      expect_degrees(n, d, plain.links, false);
      // Maximal: no positive-demand pair is left with a free port at both ends.
      std::vector<std::uint32_t> out(n, 0), in(n, 0);
      for (const auto& [a, b] : plain.links) {
        ++out[a];
        ++in[b];
      }
      for (std::uint32_t u = 0; u < n; ++u)
        for (std::uint32_t v = 0; v < n; ++v) {
          if (u != v && out[u] < d && in[v] < d) {
            EXPECT_EQ(t[std::size_t{u} * n + v], 0.0) << u << "->" << v;
          }
        }

      const auto fw = fc::ocs_reconfig(n, d, t, opts(discount, true));
      EXPECT_EQ(fw.greedy_links, ref.size());
      EXPECT_EQ(fw.links.size(), std::size_t{n} * d);
      expect_degrees(n, d, fw.links, true);
      EXPECT_TRUE(strongly_connected(n, fw.links));
      EXPECT_LE(fw.repair_links, fw.links.size());
      EXPECT_GE(fw.repair_links, fw.links.size() - ref.size());
      // A greedy result that is already d-regular and strongly connected is kept as is.
      if (ref.size() == std::size_t{n} * d && strongly_connected(n, ref)) {
        ++already_fine;
        EXPECT_EQ(fw.links, ref);
        EXPECT_EQ(fw.repair_links, 0u);
      } else {
        ++repaired;
        EXPECT_GT(fw.repair_links, 0u);
      }

      // Deterministic.
      const auto again = fc::ocs_reconfig(n, d, t, opts(discount, true));
      EXPECT_EQ(again.links, fw.links);
      EXPECT_EQ(again.repair_links, fw.repair_links);
    }
  }
  // Both branches were exercised.
  EXPECT_GT(already_fine, 10);
  EXPECT_GT(repaired, 100);
}

// A larger fabric: the repair still yields a d-regular, strongly connected graph.
TEST(OcsReconfig, LargerFabric) {
  std::mt19937_64 rng(7);
  for (std::uint32_t n : {64u, 128u}) {
    const std::uint32_t d = 4;
    const auto t = random_demand(rng, n, 3);
    const auto r = fc::ocs_reconfig(n, d, t);
    expect_degrees(n, d, r.links, true);
    EXPECT_TRUE(strongly_connected(n, r.links));
    EXPECT_EQ(reference_greedy(n, d, t, true), fc::ocs_reconfig(n, d, t, opts(true, false)).links);
  }
}
