// Tests of the Expander baseline's random d-regular multigraph
// (expander.hpp; spec ../shared/spec/topoopt.md §2.3).  Every graph is
// checked here from its edge list alone: n*d/2 edges, each server of degree
// exactly d, no self-loops, connected (BFS written here).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/net/expander.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {
namespace {

using util::ConfigError;
using Edges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// Adds a failure for every broken property of a d-regular connected multigraph on n servers.
void expect_valid(const Edges& edges, std::uint32_t n, std::uint32_t d) {
  SCOPED_TRACE("n " + std::to_string(n) + " d " + std::to_string(d));
  ASSERT_EQ(edges.size(), std::uint64_t{n} * d / 2);
  std::vector<std::uint32_t> degree(n, 0);
  std::vector<std::vector<std::uint32_t>> adj(n);
  for (const auto& [u, v] : edges) {
    ASSERT_LT(u, n);
    ASSERT_LT(v, n);
    ASSERT_LT(u, v) << "self-loop or unordered pair";
    ++degree[u];
    ++degree[v];
    adj[u].push_back(v);
    adj[v].push_back(u);
  }
  for (std::uint32_t s = 0; s < n; ++s) ASSERT_EQ(degree[s], d) << "server " << s;
  std::vector<bool> seen(n, false);
  std::deque<std::uint32_t> queue = {0};
  seen[0] = true;
  std::uint32_t reached = 1;
  while (!queue.empty()) {
    const std::uint32_t u = queue.front();
    queue.pop_front();
    for (std::uint32_t v : adj[u]) {
      if (!seen[v]) {
        seen[v] = true;
        ++reached;
        queue.push_back(v);
      }
    }
  }
  ASSERT_EQ(reached, n) << "not connected";
}

void expect_config_error(const std::function<void()>& f, const std::string& key) {
  try {
    f();
    ADD_FAILURE() << "no ConfigError, expected one naming " << key;
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(key + ":", 0), 0u) << e.what();
  }
}

TEST(Expander, SmallestGraphs) {
  EXPECT_EQ(random_regular_multigraph(2, 1, 0), (Edges{{0, 1}}));
  // Two servers: every cable joins them.
  EXPECT_EQ(random_regular_multigraph(2, 4, 5), (Edges(4, {0, 1})));
  // Three servers of degree 2: the triangle, whatever the seed.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Edges e = random_regular_multigraph(3, 2, seed);
    std::sort(e.begin(), e.end());
    EXPECT_EQ(e, (Edges{{0, 1}, {0, 2}, {1, 2}})) << seed;
  }
}

TEST(Expander, ManySizesAndSeeds) {
  for (std::uint32_t n = 2; n <= 200; ++n) {
    for (std::uint32_t d = 2; d <= 10; ++d) {
      if ((n * d) % 2 != 0) continue;
      for (std::uint64_t seed : {0ull, 1ull, 0xdeadbeefull}) {
        SCOPED_TRACE(seed);
        expect_valid(random_regular_multigraph(n, d, seed), n, d);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Expander, FewServersManyInterfaces) {
  // Few servers and many interfaces: the pairing often ends with every free
  // interface on one server, which the edge-swap repair must fix.
  for (std::uint32_t n = 3; n <= 8; ++n) {
    for (std::uint32_t d = 2; d <= 40; ++d) {
      if ((n * d) % 2 != 0) continue;
      for (std::uint64_t seed = 0; seed < 50; ++seed) {
        SCOPED_TRACE(seed);
        expect_valid(random_regular_multigraph(n, d, seed), n, d);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(Expander, LargeGraph) { expect_valid(random_regular_multigraph(4394, 8, 7), 4394, 8); }

TEST(Expander, DeterministicPerSeed) {
  const Edges a = random_regular_multigraph(64, 4, 42);
  EXPECT_EQ(random_regular_multigraph(64, 4, 42), a);
  EXPECT_NE(random_regular_multigraph(64, 4, 43), a);
  EXPECT_NE(random_regular_multigraph(64, 4, 0), a);
}

TEST(Expander, PinnedGraph) {
  // A regression pin, not an independent value: this implementation's graph
  // for (6, 3, seed 7).  It depends only on RandomStream's fixed integer
  // arithmetic, so it must be the same on every machine and compiler; a
  // deliberate change of the drawing rules updates it.
  const Edges got = random_regular_multigraph(6, 3, 7);
  expect_valid(got, 6, 3);
  const Edges pinned = {{0, 5}, {0, 4}, {2, 4}, {1, 2}, {1, 3}, {3, 5}, {0, 4}, {1, 5}, {2, 3}};
  EXPECT_EQ(got, pinned);
}

TEST(Expander, PairsEquallyLikely) {
  // The drawing is symmetric under relabelling the servers, so every pair
  // expects the same number of cables: 2000 graphs of (10, 3) have 30,000
  // cables over 45 pairs, 666.7 each (s.d. about 26); 20 % is over 5 s.d.
  constexpr std::uint32_t n = 10;
  std::vector<std::uint32_t> count(n * n, 0);
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    for (const auto& [u, v] : random_regular_multigraph(n, 3, seed)) ++count[u * n + v];
  }
  for (std::uint32_t u = 0; u < n; ++u) {
    for (std::uint32_t v = u + 1; v < n; ++v) {
      EXPECT_GT(count[u * n + v], 533u) << u << "-" << v;
      EXPECT_LT(count[u * n + v], 800u) << u << "-" << v;
    }
  }
}

TEST(Expander, ParallelCablesHappen) {
  // A multigraph, not a simple graph: some small graph repeats a pair.
  bool parallel = false;
  for (std::uint64_t seed = 0; seed < 100 && !parallel; ++seed) {
    Edges e = random_regular_multigraph(6, 4, seed);
    std::sort(e.begin(), e.end());
    parallel = std::adjacent_find(e.begin(), e.end()) != e.end();
  }
  EXPECT_TRUE(parallel);
}

TEST(Expander, BadInputsThrow) {
  expect_config_error([] { random_regular_multigraph(0, 2, 0); }, "topology.servers");
  expect_config_error([] { random_regular_multigraph(1, 2, 0); }, "topology.servers");
  expect_config_error([] { random_regular_multigraph(4, 0, 0); }, "topology.degree");
  expect_config_error([] { random_regular_multigraph(3, 1, 0); }, "topology.degree");
  expect_config_error([] { random_regular_multigraph(4, 1, 0); }, "topology.degree");
  expect_config_error([] { random_regular_multigraph(3, 3, 0); }, "topology.degree");  // 9 interfaces
  expect_config_error([] { random_regular_multigraph(5, 7, 0); }, "topology.degree");
  expect_config_error([] { random_regular_multigraph(4, 70000, 0); }, "topology.degree");
  expect_config_error([] { random_regular_multigraph(1u << 30, 4, 0); }, "topology.servers");
}

}  // namespace
}  // namespace fabricsim::net
