// The task graph executor: compute streams, message and join dependencies,
// delays, on a two-endpoint star whose message time is known exactly.
#include <gtest/gtest.h>

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
  s.run();
  const auto& msgs = s.net->messages();
  EXPECT_EQ(s.g->task(after).start, msgs[s.g->task(m1).message].end_time + SimTime::from_ns(4));
  // Both messages share the NIC: the join completes when the later one's last byte left it.
  const std::int64_t ser2 = 2 * (8'000 + 2 * 64) * 80;
  EXPECT_EQ(s.g->task(left).end.ps(), ser2);
  EXPECT_EQ(s.g->task(reduce).end, msgs[s.g->task(m2).message].end_time + SimTime::from_ns(8'000));
}

}  // namespace
}  // namespace fabricsim::workload
