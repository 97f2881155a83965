// The task graph executor: compute streams, message and join dependencies,
// delays, on a two-endpoint star whose message time is known exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/task_graph.hpp"
#include "star.hpp"

namespace fabricsim::workload {
namespace {

using core::SimTime;

constexpr std::int64_t kLatency = 3'000, kSwitch = 50'000;  // ps

struct Star {
  net::Topology topo;
  net::NetworkParams np;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<net::Network> net;
  std::unique_ptr<TaskGraph> g;
  explicit Star(std::uint32_t n) : topo(testing::star(n, 100.0, SimTime::from_ps(kLatency))) {
    np.switch_latency = SimTime::from_ps(kSwitch);
    np.packet_bytes = 4096;
    np.header_bytes = 64;
    sim = std::make_unique<core::Simulator>(topo.node_count());
    net = std::make_unique<net::Network>(topo, np, *sim);
    g = std::make_unique<TaskGraph>(*net, *sim);
  }
  void run() {
    g->start(SimTime::zero());
    sim->run_until(SimTime::max());
    ASSERT_EQ(g->completed(), g->size());
  }
};

// A message of `bytes` alone on the star: 2L + W + serialization at 80 ps/byte.
std::int64_t message_ps(std::uint64_t bytes) {
  const std::uint64_t packets = (bytes + 4031) / 4032;
  return 2 * kLatency + kSwitch + static_cast<std::int64_t>((bytes + 64 * packets) * 80);
}

TEST(TaskGraph, ComputeMessageComputeChain) {
  Star s(2);
  const auto a = s.g->add_compute(0, SimTime::from_ns(10));
  const auto m = s.g->add_message(0, 1, 100'000);
  const auto b = s.g->add_compute(1, SimTime::from_ns(5));
  s.g->depend(a, m);
  s.g->depend(m, b);
  s.run();
  EXPECT_EQ(s.g->task(m).start.ps(), 10'000);
  EXPECT_EQ(s.g->task(b).end.ps(), 10'000 + message_ps(100'000) + 5'000);
}

TEST(TaskGraph, OneComputeStreamPerEndpointInReadyOrder) {
  Star s(2);
  const auto a = s.g->add_compute(0, SimTime::from_ns(10));
  const auto b = s.g->add_compute(0, SimTime::from_ns(7));
  const auto c = s.g->add_compute(1, SimTime::from_ns(3));  // another endpoint: in parallel
  s.run();
  EXPECT_EQ(s.g->task(a).end.ps(), 10'000);
  EXPECT_EQ(s.g->task(b).start.ps(), 10'000);
  EXPECT_EQ(s.g->task(b).end.ps(), 17'000);
  EXPECT_EQ(s.g->task(c).end.ps(), 3'000);
}

// The memory estimate's lower bound on a graph's length (it sizes a job's
// link time series): the busiest endpoint's compute in a row, its bytes in
// or out at its links' rate (80 ps a byte here), the latest start.  Derived
// by hand, then held against the run.
TEST(TaskGraph, EndLowerBoundIsComputeBytesOrLatestStart) {
  Star s(3);
  s.g->add_compute(0, SimTime::from_ns(10));
  s.g->add_compute(0, SimTime::from_ns(7));
  s.g->add_compute(1, SimTime::from_ns(3));
  EXPECT_EQ(s.g->end_lower_bound().ps(), 17'000);  // endpoint 0's computes, one after the other
  const auto m0 = s.g->add_message(0, 2, 100'000);
  const auto m1 = s.g->add_message(1, 2, 100'000);
  EXPECT_EQ(s.g->end_lower_bound().ps(), 200'000 * 80);  // endpoint 2 receives both
  const auto late = s.g->add_compute(1, SimTime::from_ns(1));
  s.g->not_before(late, SimTime::from_ns(20'000));
  EXPECT_EQ(s.g->end_lower_bound().ps(), 20'001'000);
  s.run();
  EXPECT_GE(s.g->task(late).end, SimTime::from_ps(20'001'000));
  EXPECT_GE(std::max(s.g->task(m0).end, s.g->task(m1).end).ps(), 200'000 * 80);
}

// Graphs whose events go to an owner's handler (a cluster queue's jobs):
// each event carries its graph's tag above the event kind, and the owner
// hands it to that graph.  Two graphs with tags 1 and 2 on one simulator,
// each with a compute stream and a message, run as they would alone.
struct Owner {
  std::vector<TaskGraph*> graphs;
  void on_event(const core::Event& ev) { graphs[TaskGraph::tag(ev)]->handle_event(ev); }
};
struct Forward final : net::MessageListener {
  std::vector<TaskGraph*> graphs;
  void on_message_delivered(net::MessageId id) override {
    for (TaskGraph* g : graphs) g->on_message_delivered(id);
  }
  void on_message_sent(net::MessageId id) override {
    for (TaskGraph* g : graphs) g->on_message_sent(id);
  }
  bool wants_sent() const override { return true; }
};

TEST(TaskGraph, GraphsSharingOneHandlerRunAsAlone) {
  Star s(4);
  Owner owner;
  const auto binding = s.sim->bind(core::Simulator::handler<Owner, &Owner::on_event>(), &owner);
  // (A graph's messages follow each other: each is planned whole, then the next is made.)
  std::unique_ptr<TaskGraph> graphs[3];
  // Per graph: two computes queued on one endpoint (the second starts when
  // the first ends), then a message, then a delayed join.
  TaskGraph::TaskId b[3], m[3], j[3];
  for (int k = 1; k <= 2; ++k) {
    graphs[k] = std::make_unique<TaskGraph>(*s.net, *s.sim, binding, k);
    TaskGraph& g = *graphs[k];
    const net::EndpointId src = k == 1 ? 0 : 2, dst = src + 1;
    (void)g.add_compute(src, SimTime::from_ns(10));  // the first compute: b queues behind it
    b[k] = g.add_compute(src, SimTime::from_ns(7));
    m[k] = g.add_message(src, dst, 10'000);
    j[k] = g.add_join(dst);
    g.depend(b[k], m[k]);
    g.depend(m[k], j[k], SimTime::from_ns(4));
  }
  TaskGraph& g1 = *graphs[1];
  TaskGraph& g2 = *graphs[2];
  owner.graphs = {nullptr, &g1, &g2};
  Forward fwd;
  fwd.graphs = {&g1, &g2};
  s.net->set_listener(&fwd);
  g1.start(SimTime::zero());
  g2.start(SimTime::zero());
  s.sim->run_until(SimTime::max());
  for (int k = 1; k <= 2; ++k) {
    const TaskGraph& g = *graphs[k];
    SCOPED_TRACE(k);
    ASSERT_EQ(g.completed(), g.size());
    EXPECT_EQ(g.task(b[k]).start.ps(), 10'000);
    EXPECT_EQ(g.task(m[k]).start.ps(), 17'000);
    EXPECT_EQ(g.task(j[k]).end.ps(), 17'000 + message_ps(10'000) + 4'000);
  }
}

TEST(TaskGraph, JoinsDelaysAndSendDependencies) {
  Star s(3);
  // Endpoint 0 sends to 1 and 2; endpoint 1 waits for its message plus a
  // 4 ns delay; endpoint 0's join waits until both messages have left its NIC.
  const auto m1 = s.g->add_message(0, 1, 8'000);
  const auto m2 = s.g->add_message(0, 2, 8'000);
  const auto after = s.g->add_compute(1, SimTime::from_ns(1));
  const auto left = s.g->add_join(0);
  s.g->depend(m1, after, SimTime::from_ns(4));
  s.g->depend_sent(m1, left);
  s.g->depend_sent(m2, left);
  // A reducing join at 2 takes the message's bytes at 8 Gb/s (1 ns per byte).
  const auto reduce = s.g->add_join(2, 0, 8.0);
  s.g->depend(m2, reduce);
  EXPECT_EQ(s.g->task(m1).sent(), SimTime::max());  // not yet
  s.run();
  const auto& msgs = s.net->messages();
  EXPECT_EQ(s.g->task(after).start, msgs[s.g->task(m1).message].end_time + SimTime::from_ns(4));
  // Both messages share the NIC: the join completes when the later one's last byte left it.
  const std::int64_t ser2 = 2 * (8'000 + 2 * 64) * 80;
  EXPECT_EQ(s.g->task(left).end.ps(), ser2);
  // Each message records when its last byte left (what a trace's send node
  // ends at): served a packet at a time, m1's 4,096 + 4,032 wire bytes go
  // first, third; m2's second, last.
  EXPECT_EQ(s.g->task(m1).sent().ps(), (4'096 + 4'096 + 4'032) * 80);
  EXPECT_EQ(s.g->task(m2).sent().ps(), ser2);
  EXPECT_EQ(s.g->task(reduce).end, msgs[s.g->task(m2).message].end_time + SimTime::from_ns(8'000));
}

}  // namespace
}  // namespace fabricsim::workload
