// The three throughput shares of a traffic run (stats/throughput.hpp):
// over the makespan, per source, and in the steady window, against hand
// computations on spans with known times, and on a run whose completion
// times are analytic.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/stats/h5_writer.hpp"
#include "fabricsim/stats/throughput.hpp"

namespace fabricsim::stats {
namespace {

// Gb/s of `bytes` over `ps` picoseconds.
double gbps(double bytes, double ps) { return bytes * 8.0 / (ps / 1000.0); }

TEST(ThroughputShares, ASlowSourceLowersTheMakespanShareNotThePerSourceMean) {
  // Four sources of 800 Gb/s posting at 0; three finish at 1 us, one at 4 us.
  std::vector<SourceSpan> s(4);
  for (auto& x : s) {
    x.first_post_ps = 0;
    x.last_end_ps = 1'000'000;
    x.payload_bytes = 50'000;
    x.messages = 10;
    x.injection_gbps = 800;
  }
  s[3].last_end_ps = 4'000'000;
  const double total_inj = 3200;
  const ThroughputShares r = throughput_shares(s, 200'000, 0, total_inj);
  EXPECT_NEAR(r.makespan, gbps(200'000, 4e6) / total_inj, 1e-12);
  const double fast = gbps(50'000, 1e6) / 800, slow = gbps(50'000, 4e6) / 800;
  EXPECT_NEAR(r.per_source, (3 * fast + slow) / 4, 1e-12);
  EXPECT_GT(r.per_source, 2 * r.makespan);
  // Steady window: a tenth into [0, first source done = 1 us], to 1 us.
  EXPECT_EQ(r.steady_from_ps, 100'000);
  EXPECT_EQ(r.steady_to_ps, 1'000'000);
  EXPECT_EQ(r.steady, 0.0);  // nothing completed inside it (steady_bytes = 0)
  const ThroughputShares q = throughput_shares(s, 200'000, 90'000, total_inj);
  EXPECT_NEAR(q.steady, gbps(90'000, 900'000) / total_inj, 1e-12);
}

TEST(ThroughputShares, SourcesThatSentNothingOrTooLittleAreLeftOut) {
  std::vector<SourceSpan> s(3);
  s[0] = {0, 2'000'000, 100'000, 3, 400};
  s[1] = {1'000'000, 3'000'000, 100'000, 5, 400};
  // s[2] sent nothing: it counts in neither the mean nor the sending injection.
  const ThroughputShares r = throughput_shares(s, 200'000, 1000, 1200);
  EXPECT_NEAR(r.makespan, gbps(200'000, 3e6) / 1200, 1e-12);
  EXPECT_NEAR(r.per_source, (gbps(100'000, 2e6) + gbps(100'000, 2e6)) / 400 / 2, 1e-12);
  EXPECT_TRUE(std::isnan(r.steady)) << "3 messages from source 0: too few for a steady rate";
  s[0].messages = kSteadyMinMessages;
  const ThroughputShares q = throughput_shares(s, 200'000, 1000, 1200);
  EXPECT_EQ(q.steady_from_ps, 200'000);
  EXPECT_EQ(q.steady_to_ps, 2'000'000);
  EXPECT_NEAR(q.steady, gbps(1000, 1'800'000) / 800, 1e-12);
}

TEST(ThroughputShares, SpansOfARunWithAnalyticCompletions) {
  // A 3x3 torus of 400 Gb/s ports: accelerator 0 sends one message to each
  // of its four neighbours, accelerator 4 one message to 5.  Each message
  // has a link of its own, so each ends after its serialization plus the
  // link latency; source 0 injects over 4 links, source 4 over one of its 4.
  net::TorusParams tp;
  tp.dims = {3, 3};
  tp.boards = false;
  tp.link = {400, core::SimTime::from_ps(20'000)};
  const net::Topology topo = net::build_torus(tp);
  net::StateRoutes routes(topo, net::torus_rules(topo, {3, 3}, false));
  net::NetworkParams np;
  np.vcs = 2;
  np.packet_bytes = 8192;
  np.header_bytes = 64;
  np.buffer_bytes = 1u << 20;
  np.routing = net::RoutingAlgorithm::Dor;
  np.state_routes = &routes;
  core::Simulator sim(topo.node_count());
  net::Network network(topo, np, sim);
  const std::uint64_t bytes = 812'800;  // 100 full packets
  for (net::EndpointId peer : {1u, 2u, 3u, 6u}) network.send(0, peer, bytes, core::SimTime::zero());
  network.send(4, 5, bytes, core::SimTime::zero());
  sim.run_until(core::SimTime::max(), 10'000'000);
  network.finish(sim.now());
  const std::vector<std::uint8_t> owned(topo.endpoint_count(), 1);
  const auto spans = source_spans(topo, network, owned);
  const double end_ps = 100.0 * 8192 * 8 / 400 * 1000 + 20'000;
  EXPECT_NEAR(static_cast<double>(spans[0].last_end_ps), end_ps, 1.0);
  EXPECT_EQ(spans[0].payload_bytes, 4 * bytes);
  EXPECT_EQ(spans[0].messages, 4u);
  EXPECT_DOUBLE_EQ(spans[0].injection_gbps, 1600);
  EXPECT_EQ(spans[7].first_post_ps, INT64_MAX);
  const ThroughputShares r = throughput_shares(spans, 5 * bytes, 0, topo.total_injection_gbps());
  const double payload_share = 8128.0 / 8192.0;
  // Each source's links ran for the whole span, minus the latency.
  const double busy = (end_ps - 20'000) / end_ps;
  EXPECT_NEAR(r.per_source, (payload_share * busy + payload_share * busy / 4) / 2, 1e-9);
  EXPECT_NEAR(r.makespan, gbps(5.0 * bytes, end_ps) / (9 * 1600.0), 1e-12);
}

// The rows a process writes, given as runs (a streamed trace's ranks'
// rows at several processes): the same numbers, in the same order, as the
// list of every row they hold, written out here one by one, over random
// runs (gaps between them, empty ones, a first run from row 0).
TEST(H5WriterRowRuns, NumberRowsAsTheListOfThem) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    H5Writer::RowRuns runs;
    std::vector<std::uint64_t> list;
    std::uint64_t next = trial % 2 == 0 ? 0 : rng() % 5;
    const int count = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < count; ++k) {
      const std::uint64_t len = rng() % 4 == 0 ? 0 : 1 + rng() % 30;
      runs.add(next, len);
      for (std::uint64_t i = 0; i < len; ++i) list.push_back(next + i);
      next += len + rng() % 3;  // (runs may touch: a gap of 0)
    }
    ASSERT_EQ(runs.size(), list.size());
    const H5Writer::Rows rows(runs);
    ASSERT_EQ(rows.size(), list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      ASSERT_EQ(runs[i], list[i]) << "trial " << trial << ", row " << i;
      ASSERT_EQ(rows[i], list[i]);
    }
  }
}

}  // namespace
}  // namespace fabricsim::stats
