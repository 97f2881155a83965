// Computed route distances (RouteDistance, kept with each kind's builder) against the
// route tables they replace, on small instances of every shape: wherever a
// packet can be (every (node, state) on a shortest legal route from some
// source), the computed hops equal the tables' and the offered moves are the
// same; everywhere else the computed hops are never below the tables' (so
// no move off a shortest route is ever offered).  The channel-dependency
// check then runs over the computed routes themselves.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fabricsim/net/state_routes.hpp"

namespace fabricsim::net {
namespace {

// Compares `computed` with `table` (same rules and targets) for every target.
void expect_same(const StateRoutes& table, const StateRoutes& computed, bool endpoint_sources = true) {
  const Topology& t = table.topology();
  const std::size_t S = table.rules().state_count();
  std::vector<StateRoutes::Option> a, b;
  std::size_t reachable = 0;
  for (std::uint32_t x = 0; x < table.target_count(); ++x) {
    // Every (node, state) on a shortest legal route from an endpoint.
    std::vector<std::uint8_t> seen(t.node_count() * S, 0);
    std::vector<std::pair<NodeId, std::uint8_t>> work;
    for (EndpointId src = 0; src < t.endpoint_count() && endpoint_sources; ++src) {
      const NodeId n = t.endpoint_node(src);
      const std::uint8_t s0 = table.rules().initial_state();
      if (table.hops(n, s0, x) == StateRoutes::kUnreachable) continue;
      seen[n * S + s0] = 1;
      work.emplace_back(n, s0);
    }
    while (!work.empty()) {
      auto [n, s] = work.back();
      work.pop_back();
      ++reachable;
      ASSERT_EQ(computed.hops(n, s, x), table.hops(n, s, x))
          << table.rules().describe() << ": " << t.node(n).name << " state " << int(s) << " -> target " << x;
      for (bool esc : {false, true}) {
        a.clear();
        b.clear();
        table.options(n, s, x, a, esc);
        computed.options(n, s, x, b, esc);
        ASSERT_EQ(a.size(), b.size()) << t.node(n).name << " state " << int(s) << " -> " << x << " escape " << esc;
        for (std::size_t i = 0; i < a.size(); ++i) {
          EXPECT_EQ(a[i].link, b[i].link);
          EXPECT_EQ(a[i].state, b[i].state);
        }
      }
      a.clear();
      table.options(n, s, x, a);
      for (const auto& o : a) {
        const NodeId v = t.link(o.link).dst;
        if (!seen[v * S + o.state]) {
          seen[v * S + o.state] = 1;
          work.emplace_back(v, o.state);
        }
      }
    }
    // Elsewhere: never below the tables.
    for (NodeId n = 0; n < t.node_count(); ++n)
      for (std::uint8_t s = 0; s < S; ++s) {
        const std::uint16_t want = table.hops(n, s, x);
        const std::uint16_t got = computed.hops(n, s, x);
        ASSERT_GE(got, want) << table.rules().describe() << ": " << t.node(n).name << " state " << int(s)
                             << " -> target " << x;
      }
  }
  EXPECT_GT(reachable, 0u);
  EXPECT_TRUE(computed.computed());
  EXPECT_FALSE(table.computed());
}

void expect_acyclic(const StateRoutes& r, bool escape_only) {
  std::size_t unreachable = 1;
  const DependencyReport dep = check_state_routes(r, escape_only, &unreachable);
  EXPECT_EQ(unreachable, 0u);
  EXPECT_TRUE(dep.acyclic) << r.rules().describe();
}

TEST(RouteDistance, TorusMatchesTheTables) {
  for (auto dims : std::vector<std::vector<std::uint32_t>>{{5}, {4, 4}, {2, 4}, {3, 5}, {3, 3, 2}, {6, 4}}) {
    for (bool boards : {false, true}) {
      if (boards && (dims.size() < 2 || dims[0] % 2 || dims[1] % 2)) continue;
      TorusParams p;
      p.dims = dims;
      p.boards = boards;
      const Topology t = build_torus(p);
      for (bool adaptive : {false, true}) {
        SCOPED_TRACE(std::to_string(dims[0]) + " adaptive " + std::to_string(adaptive));
        StateRoutes table(t, torus_rules(t, dims, adaptive));
        StateRoutes comp(t, torus_rules(t, dims, adaptive), torus_distance(t, dims, adaptive));
        expect_same(table, comp);
        expect_acyclic(comp, adaptive);
      }
    }
  }
}

TEST(RouteDistance, HammingMeshMatchesTheTables) {
  struct Shape {
    std::uint32_t a, b, x, y, radix;
  };
  // Merged networks (one switch per board-row), one switch per network,
  // 2-level trees (even and odd up-link counts), Hx1 (HyperX), odd boards.
  const std::vector<Shape> shapes{{2, 2, 4, 4, 64}, {2, 2, 4, 4, 8}, {2, 2, 4, 4, 4}, {2, 2, 3, 4, 6},
                                  {1, 1, 4, 4, 4},  {1, 1, 5, 3, 6}, {4, 4, 2, 3, 8}, {4, 4, 3, 2, 64},
                                  {3, 2, 3, 2, 6},  {1, 2, 3, 3, 4}, {2, 1, 3, 3, 4}, {3, 3, 2, 2, 4}};
  for (const Shape& s : shapes) {
    HammingMeshParams p;
    p.board_a = s.a;
    p.board_b = s.b;
    p.x = s.x;
    p.y = s.y;
    p.radix = s.radix;
    const Topology t = build_hammingmesh(p);
    for (bool row_first : {false, true}) {
      SCOPED_TRACE(t.describe() + (row_first ? ", row first" : ", adaptive"));
      StateRoutes table(t, hammingmesh_rules(t, s.a, s.b, s.x, s.y, row_first));
      StateRoutes comp(t, hammingmesh_rules(t, s.a, s.b, s.x, s.y, row_first),
                       hammingmesh_distance(t, s.a, s.b, s.x, s.y, row_first));
      expect_same(table, comp);
      expect_acyclic(comp, false);
    }
  }
}

TEST(RouteDistance, DragonflyMatchesTheTables) {
  struct Shape {
    std::uint32_t a, p, h, groups;
    const char* arrangement;
  };
  const std::vector<Shape> shapes{{4, 2, 2, 9, "consecutive"}, {4, 2, 2, 5, "consecutive"},
                                  {2, 1, 2, 5, "palmtree"},    {3, 2, 3, 4, "consecutive"},
                                  {1, 2, 3, 4, "palmtree"},    {4, 1, 1, 5, "consecutive"}};
  for (const Shape& s : shapes) {
    DragonflyParams p;
    p.a = s.a;
    p.p = s.p;
    p.h = s.h;
    p.groups = s.groups;
    p.arrangement = s.arrangement;
    const Topology t = build_dragonfly(p);
    for (std::uint32_t max_global : {1u, 2u}) {
      SCOPED_TRACE(t.describe() + ", max global " + std::to_string(max_global));
      StateRoutes table(t, dragonfly_rules(t, max_global));
      StateRoutes comp(t, dragonfly_rules(t, max_global), dragonfly_distance(t, s.a, max_global, false));
      expect_same(table, comp);
      expect_acyclic(comp, false);
      // Towards groups (the Valiant first leg): from every router, every state.
      std::vector<std::vector<NodeId>> groups(s.groups);
      for (NodeId n = static_cast<NodeId>(t.endpoint_count()); n < t.node_count(); ++n)
        groups[(n - t.endpoint_count()) / s.a].push_back(n);
      StateRoutes gtable(t, dragonfly_rules(t, max_global), groups);
      StateRoutes gcomp(t, dragonfly_rules(t, max_global), dragonfly_distance(t, s.a, max_global, true), groups);
      for (std::uint32_t g = 0; g < s.groups; ++g)
        for (NodeId n = 0; n < t.node_count(); ++n)
          for (std::uint8_t st = 0; st <= max_global; ++st)
            ASSERT_EQ(gcomp.hops(n, st, g), gtable.hops(n, st, g)) << t.node(n).name << " state " << int(st)
                                                                 << " -> group " << g;
    }
  }
}

}  // namespace
}  // namespace fabricsim::net
