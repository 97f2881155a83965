// The message ids of a trace from each rank's summary alone
// (trace_message_ids: what a streaming trace's pre-pass computes for its
// own ranks, docs/architecture.md "Streaming traces"), held against the
// ids TraceJob gives the messages as it plans the whole trace.  Random
// traces of sends, receives, computes and collectives in three groups,
// each rank's nodes added in an order other than their ids (a send is
// numbered in node order, a collective matched in id order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/trace.hpp"
#include "star.hpp"

namespace fabricsim::workload {
namespace {

using core::SimTime;

struct Built {
  Trace trace;
  std::vector<TraceRankMessages> summary;
  std::unique_ptr<TraceSends> sends = std::make_unique<TraceSends>();  // (rank after rank, node order)
};

// A trace of `R` ranks: per phase, each rank computes, sends to a few
// peers, receives what it was sent, and the members of each group run the
// phase's collective; each rank's nodes are then added in a shuffled
// order, their ids kept.
Built random_trace(std::uint64_t seed, std::uint32_t R, std::uint32_t phases) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::uint64_t k) { return static_cast<std::uint64_t>(rng() % k); };
  Built b;
  Trace& t = b.trace;
  t.file = "random";
  t.name = "random";
  t.ranks = R;
  for (std::uint32_t r = 0; r < R; ++r) t.rank_files.push_back("random." + std::to_string(r) + ".et");  // (ids per rank)
  const std::vector<std::vector<std::uint32_t>> group_members{{}, {1, 3, 5}, {0, 2}};
  std::vector<std::uint32_t> group_index{0};
  for (std::size_t g = 1; g < group_members.size(); ++g) group_index.push_back(t.add_group(group_members[g]));
  const std::vector<CollectiveOp> ops{CollectiveOp::Allreduce, CollectiveOp::Allgather, CollectiveOp::Alltoall,
                                      CollectiveOp::Broadcast, CollectiveOp::Barrier, CollectiveOp::ReduceScatter};
  struct Pending {
    std::uint64_t id;
    TraceNode n;
  };
  std::vector<std::vector<Pending>> nodes(R);
  std::vector<std::uint64_t> next_id(R, 0);
  std::int64_t tag = 0;
  for (std::uint32_t p = 0; p < phases; ++p) {
    for (std::uint32_t r = 0; r < R; ++r) {
      TraceNode c;
      c.kind = TraceNode::Kind::Compute;
      c.duration_ns = 100.0 + static_cast<double>(pick(1000));
      nodes[r].push_back({next_id[r]++, c});
    }
    for (std::uint32_t r = 0; r < R; ++r)
      for (std::uint64_t k = pick(3); k > 0; --k) {
        const auto to = static_cast<std::uint32_t>((r + 1 + pick(R - 1)) % R);
        TraceNode s;
        s.kind = TraceNode::Kind::Send;
        s.peer = to;
        s.bytes = 1 + pick(50'000);
        s.tag = tag++;
        TraceNode v = s;
        v.kind = TraceNode::Kind::Recv;
        v.peer = r;
        nodes[r].push_back({next_id[r]++, s});
        nodes[to].push_back({next_id[to]++, v});
      }
    for (std::size_t g = 0; g < group_members.size(); ++g) {
      if (pick(3) == 0) continue;  // (not every group every phase)
      TraceNode c;
      c.kind = TraceNode::Kind::Collective;
      c.op = ops[pick(ops.size())];
      c.group = group_index[g];
      c.bytes = c.op == CollectiveOp::Barrier ? 0 : 4096 * (1 + pick(64));
      const auto n = static_cast<std::uint32_t>(g == 0 ? R : group_members[g].size());
      c.root = c.op == CollectiveOp::Broadcast ? static_cast<std::uint32_t>(pick(n)) : 0;
      for (std::uint32_t r = 0; r < R; ++r)
        if (g == 0 || std::count(group_members[g].begin(), group_members[g].end(), r) > 0)
          nodes[r].push_back({next_id[r]++, c});
    }
  }
  b.summary.resize(R);
  std::uint64_t sent = 0;
  for (std::uint32_t r = 0; r < R; ++r) {
    for (const Pending& p : nodes[r]) {  // (id order)
      if (p.n.kind == TraceNode::Kind::Send) ++b.summary[r].sends;
      if (p.n.kind == TraceNode::Kind::Collective)
        b.summary[r].collectives.push_back({p.n.group, p.n.op, p.n.bytes, p.n.root, p.id});
    }
    std::shuffle(nodes[r].begin(), nodes[r].end(), rng);
    for (const Pending& p : nodes[r]) {
      t.add_node(p.id, r, p.n, "n", nullptr, nullptr);
      // (Sends in node order, as the planner numbers them: rank after rank.)
      if (p.n.kind == TraceNode::Kind::Send) b.sends->put(sent++, {p.n.bytes, p.n.tag, p.id, p.n.peer, 1});
    }
  }
  t.end_names();
  return b;
}

TEST(TraceIds, FromEachRanksSummaryAsThePlannerNumbersThem) {
  for (const char* algorithm : {"ring", "direct"}) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(::testing::Message() << algorithm << " seed " << seed);
      const std::uint32_t R = 6;
      net::Topology topo = testing::star(R, 100.0, SimTime::from_ns(1));
      net::NetworkParams np;
      core::Simulator sim(topo.node_count());
      net::Network net(topo, np, sim);
      TaskGraph g(net, sim);
      (void)g.add_message(0, 1, 10);  // (a message before the trace's: its ids start at 1)
      Built b = random_trace(seed, R, 12);
      // Per node (index order): rank, kind, its (group, k) if a collective.
      std::vector<std::pair<std::uint32_t, std::uint32_t>> coll_of(b.trace.nodes.size());
      std::vector<std::uint64_t> send_index(b.trace.nodes.size());
      {
        std::vector<std::uint64_t> sends(R, 0);
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::pair<std::uint64_t, std::size_t>>> by_id;
        for (std::size_t i = 0; i < b.trace.nodes.size(); ++i) {
          const std::uint32_t r = b.trace.heads[i].rank;
          if (b.trace.nodes[i].kind == TraceNode::Kind::Send) send_index[i] = sends[r]++;
          if (b.trace.nodes[i].kind == TraceNode::Kind::Collective)
            by_id[{r, b.trace.nodes[i].group}].emplace_back(b.trace.heads[i].id, i);
        }
        for (auto& [key, v] : by_id) {
          std::sort(v.begin(), v.end());
          for (std::size_t k = 0; k < v.size(); ++k)
            coll_of[v[k].second] = {key.second, static_cast<std::uint32_t>(k)};
        }
      }
      std::vector<net::EndpointId> eps(R);
      for (std::uint32_t r = 0; r < R; ++r) eps[r] = r;
      const std::vector<std::vector<std::uint32_t>> groups = b.trace.groups;
      const TraceMessageIds ids = trace_message_ids(b.summary, groups, eps, algorithm, topo, 1);
      TraceParams p;
      p.trace = std::move(b.trace);
      p.algorithm = algorithm;
      p.endpoints = eps;
      const std::vector<TraceNode> kinds_before = p.trace.nodes;  // (planning frees them)
      std::vector<std::uint32_t> rank_of;
      for (const PlannedTraceNode& h : p.trace.heads) rank_of.push_back(h.rank);
      TraceJob job(g, std::move(p), 0);
      EXPECT_EQ(ids.total + 1, net.messages().size());
      // Each collective's ids: from its first to the next one's (or the end).
      std::vector<std::uint64_t> starts;
      for (const auto& [key, first] : ids.first_collective) starts.push_back(first);
      std::sort(starts.begin(), starts.end());
      std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> seen;
      for (const auto& [task, node] : job.message_nodes()) {
        const net::MessageId m = g.task(task).message;
        if (kinds_before[node].kind == TraceNode::Kind::Send) {
          EXPECT_EQ(m, ids.first_send[rank_of[node]] + send_index[node]);
          continue;
        }
        const auto key = coll_of[node];
        ASSERT_EQ(ids.first_collective.count(key), 1u);
        const net::MessageId first = ids.first_collective.at(key);
        const auto next = std::upper_bound(starts.begin(), starts.end(), first);
        const std::uint64_t end = next == starts.end() ? ids.total + 1 : *next;
        EXPECT_GE(m, first);
        EXPECT_LT(m, end);
        ++seen[key];
      }
      // Every collective's range is its messages, all of them.
      for (const auto& [key, first] : ids.first_collective) {
        const auto next = std::upper_bound(starts.begin(), starts.end(), first);
        const std::uint64_t end = next == starts.end() ? ids.total + 1 : *next;
        EXPECT_EQ(seen[key], end - first);
      }
    }
  }
}

// Every record made before the run from the summaries alone
// (trace_records: sends from the pre-pass's list, collectives by
// collective_records) is the record the planner creates for that id as it
// plans the whole trace: ends, size, ECMP port, packets.
TEST(TraceIds, RecordsMadeBeforeTheRunAreThePlannersRecords) {
  for (const char* algorithm : {"ring", "direct"}) {  // (what every operation of the trace implements)
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(::testing::Message() << algorithm << " seed " << seed);
      const std::uint32_t R = 6;
      net::Topology topo = testing::star(R, 100.0, SimTime::from_ns(1));
      struct Side {
        core::Simulator sim;
        net::Network net;
        TaskGraph g;
        explicit Side(const net::Topology& t) : sim(t.node_count()), net(t, net::NetworkParams{}, sim), g(net, sim) {
          (void)g.add_message(0, 1, 10);  // (a message before the trace's)
        }
      };
      Side planned(topo), made(topo);
      Built b = random_trace(seed, R, 10);
      std::vector<net::EndpointId> eps(R);
      for (std::uint32_t r = 0; r < R; ++r) eps[r] = static_cast<net::EndpointId>((r * 5 + 2) % R);  // (not in order)
      const std::vector<std::vector<std::uint32_t>> groups = b.trace.groups;
      const TraceMessageIds ids = trace_message_ids(b.summary, groups, eps, algorithm, topo, 1);
      ASSERT_EQ(made.net.reserve_ids(ids.total), 1u);
      trace_records(made.net, b.summary, *b.sends, groups, eps, algorithm, ids);
      TraceParams p;
      p.trace = std::move(b.trace);
      p.algorithm = algorithm;
      p.endpoints = eps;
      TraceJob job(planned.g, std::move(p), 0);
      ASSERT_EQ(planned.net.messages().size(), made.net.messages().size());
      for (std::size_t m = 1; m < made.net.messages().size(); ++m) {
        SCOPED_TRACE(m);
        const net::Message &x = planned.net.messages()[m], &y = made.net.messages()[m];
        ASSERT_GT(y.bytes, 0u);  // (made, not a blank set aside)
        EXPECT_EQ(y.src, x.src);
        EXPECT_EQ(y.dst, x.dst);
        EXPECT_EQ(y.bytes, x.bytes);
        EXPECT_EQ(y.flow_port, x.flow_port);
        EXPECT_EQ(y.packets, x.packets);
      }
    }
  }
}

// A collective planned onto ids set aside (append_collective's first_id,
// how a streaming trace numbers a collective it meets out of order) is the
// collective planned as its messages are created: the same records at the
// same ids, and the same run.
TEST(TraceIds, CollectiveOnIdsSetAsideIsTheCollectiveNumberedInOrder) {
  for (const char* algorithm : {"ring", "halving_doubling", "direct"}) {
    SCOPED_TRACE(algorithm);
    const std::uint32_t R = 8;
    net::Topology topo = testing::star(R, 100.0, SimTime::from_ns(1));
    std::vector<net::EndpointId> eps(R);
    for (std::uint32_t r = 0; r < R; ++r) eps[r] = r;
    CollectiveSpec spec;
    spec.op = CollectiveOp::Allreduce;
    spec.algorithm = algorithm;
    spec.bytes = 1 << 20;
    struct Side {
      net::Topology topo;
      core::Simulator sim;
      net::Network net;
      TaskGraph g;
      explicit Side(const net::Topology& t) : topo(t), sim(topo.node_count()), net(topo, net::NetworkParams{}, sim), g(net, sim) {}
    };
    Side a(topo), b(topo);
    (void)append_collective(a.g, spec, eps, {});
    std::uint64_t count = 0;
    for (std::uint64_t c : collective_sends(spec, topo, eps)) count += c;
    const net::MessageId first = b.net.reserve_ids(count);
    (void)append_collective(b.g, spec, eps, {}, 0, first);
    ASSERT_EQ(a.net.messages().size(), b.net.messages().size());
    for (Side* s : {&a, &b}) {
      s->g.start(SimTime::zero());
      s->sim.run_until(SimTime::max());
    }
    for (std::size_t m = 0; m < a.net.messages().size(); ++m) {
      SCOPED_TRACE(m);
      const net::Message &x = a.net.messages()[m], &y = b.net.messages()[m];
      EXPECT_EQ(y.src, x.src);
      EXPECT_EQ(y.dst, x.dst);
      EXPECT_EQ(y.bytes, x.bytes);
      EXPECT_EQ(y.end_time, x.end_time);
    }
  }
}

}  // namespace
}  // namespace fabricsim::workload
