// DNN iterations: against the compute critical path on an ideal network,
// against the same allreduces run alone with no compute, and the overlap
// of gradient buckets with the backward pass.
#include <gtest/gtest.h>

#include <memory>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/dnn.hpp"
#include "star.hpp"

namespace fabricsim::workload {
namespace {

using core::SimTime;

struct Star {
  net::Topology topo;
  net::NetworkParams np;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<net::Network> net;
  std::unique_ptr<TaskGraph> g;
  // `ideal`: links of 10^9 Gb/s and no latency anywhere.
  Star(std::uint32_t n, bool ideal)
      : topo(testing::star(n, ideal ? 1e9 : 100.0, ideal ? SimTime::zero() : SimTime::from_ns(3))) {
    np.switch_latency = ideal ? SimTime::zero() : SimTime::from_ns(50);
    // Ideal: whole messages in one packet too, so that the picosecond
    // rounding of serialization is paid once per message and hop.
    np.packet_bytes = ideal ? 1u << 26 : 4096;
    np.buffer_bytes = ideal ? 1u << 28 : np.buffer_bytes;
    np.header_bytes = 64;
    sim = std::make_unique<core::Simulator>(topo.node_count());
    net = std::make_unique<net::Network>(topo, np, *sim);
    g = std::make_unique<TaskGraph>(*net, *sim);
  }
  std::vector<DnnIteration> run(DnnParams p) {
    for (net::EndpointId e = 0; e < dnn_endpoints(p); ++e) p.endpoints.push_back(e);
    DnnJob job(*g, p, 0);
    g->start(SimTime::zero());
    sim->run_until(SimTime::max());
    EXPECT_EQ(g->completed(), g->size());
    return job.results(job.partial(*g), *g);
  }
};

DnnModel uniform_model(std::uint32_t layers, double fwd, double bwd, std::uint64_t params) {
  DnnModel m;
  m.name = "uniform";
  m.minibatch = 64;
  for (std::uint32_t i = 0; i < layers; ++i) {
    DnnLayer l;
    l.name = "l";
    l.name += std::to_string(i);
    l.forward_ns = fwd;
    l.backward_ns = bwd;
    l.params = params;
    l.activation_bytes = 1 << 20;
    l.tp_allreduce_bytes = 1 << 18;
    l.tp_allreduces = 2;
    m.layers.push_back(l);
  }
  return m;
}

TEST(Dnn, IdealNetworkGivesTheComputeCriticalPath) {
  // P stages of one layer, M micro-batches of b samples: with no
  // communication time every pipeline schedule of uniform stages takes
  // (M + P - 1) (t_f + t_b) with t = b * per-sample / O, plus the optimizer.
  for (const char* schedule : {"gpipe", "1f1b"})
    for (std::uint32_t P : {1u, 4u})
      for (std::uint32_t O : {1u, 2u}) {
        SCOPED_TRACE(std::string(schedule) + " P=" + std::to_string(P) + " O=" + std::to_string(O));
        const std::uint32_t D = 2, M = 8;
        Star s(D * P * O, true);
        DnnParams p;
        p.model = uniform_model(P, 1000.0, 2000.0, 1'000'000);
        p.model.optimizer_ns = 500;
        p.data_parallel = D;
        p.pipeline_parallel = P;
        p.tensor_parallel = O;
        p.micro_batches = M;
        p.schedule = schedule;
        p.iterations = 2;
        const auto r = s.run(p);
        const double b = 64.0 / D / M;
        const double want = (M + P - 1) * (b * 3000.0 / O) + 500.0;
        ASSERT_EQ(r.size(), 2u);
        for (const auto& it : r) {
          EXPECT_NEAR(it.time_ns, want, 1e-4 * want);  // picoseconds of rounding per message and hop
          // Compute of one endpoint: M micro-batches through its stage.
          EXPECT_NEAR(it.compute_ns, M * b * 3000.0 / O + 500.0, 1e-9);
        }
      }
}

TEST(Dnn, WithoutComputeDataParallelIsItsAllreducesAlone) {
  // Three layers; buckets of one layer each (backward order: l2, l1, l0)
  // or one bucket of all: the iteration equals the same allreduces run back
  // to back by the collective benchmark on the same fabric.
  const std::uint64_t params[3] = {300'000, 500'000, 200'000};
  for (std::uint64_t bucket : {std::uint64_t{1}, std::uint64_t{0}}) {
    Star s(4, false);
    DnnParams p;
    p.model = uniform_model(3, 0.0, 0.0, 0);
    for (int i = 0; i < 3; ++i) p.model.layers[i].params = params[i];
    p.data_parallel = 4;
    p.bucket_bytes = bucket;
    const auto r = s.run(p);
    Star alone(4, false);
    CollectiveParams c;
    if (bucket)
      c.sizes = {4 * params[2], 4 * params[1], 4 * params[0]};
    else
      c.sizes = {4 * (params[0] + params[1] + params[2])};
    CollectiveBenchmark bench(*alone.g, c);
    alone.g->start(SimTime::zero());
    alone.sim->run_until(SimTime::max());
    SimTime a = SimTime::max(), z = SimTime::zero();
    for (const auto& m : alone.net->messages()) {
      a = std::min(a, m.post_time);
      z = std::max(z, m.end_time);
    }
    EXPECT_DOUBLE_EQ(r[0].time_ns, (z - a).ns()) << "bucket_bytes " << bucket;
    EXPECT_DOUBLE_EQ(r[0].exposed_comm_ns, r[0].time_ns);
  }
}

TEST(Dnn, GradientBucketsOverlapTheBackwardPass) {
  // Data parallel over 4 endpoints, 8 layers of 2 MB of gradients each.
  // One bucket after the backward pass: all of the allreduce is exposed.
  // Buckets of one layer: most of it hides behind the backward compute.
  double exposed[2], comm[2], time[2];
  for (int k = 0; k < 2; ++k) {
    Star s(4, false);
    DnnParams p;
    p.model = uniform_model(8, 20'000.0, 40'000.0, 500'000);  // 640 us of backward per layer
    p.data_parallel = 4;
    p.bucket_bytes = k == 0 ? 0 : 1;
    const auto r = s.run(p);
    exposed[k] = r[0].exposed_comm_ns;
    comm[k] = r[0].phase_ns[static_cast<int>(DnnPhase::DataParallel)];
    time[k] = r[0].time_ns;
    EXPECT_GT(comm[k], 0.0);
  }
  EXPECT_NEAR(exposed[0], comm[0], 1e-6 * comm[0]);
  EXPECT_LT(exposed[1], 0.5 * comm[1]);
  EXPECT_LT(time[1], time[0]);
}

TEST(Dnn, LayoutErrors) {
  DnnParams p;
  p.model = uniform_model(4, 1, 1, 1);
  p.pipeline_parallel = 5;
  EXPECT_THROW(dnn_endpoints(p), util::ConfigError);
  p.pipeline_parallel = 2;
  p.data_parallel = 3;
  EXPECT_THROW(dnn_endpoints(p), util::ConfigError);  // 64 samples do not split over 3 replicas
  p.data_parallel = 4;
  p.expert_parallel = 3;
  EXPECT_THROW(dnn_endpoints(p), util::ConfigError);
  p.expert_parallel = 2;
  EXPECT_EQ(dnn_endpoints(p), 8u);
}

}  // namespace
}  // namespace fabricsim::workload
