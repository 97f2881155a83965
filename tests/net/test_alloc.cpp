// Steady state allocates nothing per packet: count every operator new while
// a long permutation runs, after a warm-up that lets the event heap, packet
// pool, credit pool and queues reach their working size.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace fabricsim;

TEST(SteadyState, NoAllocationPerPacket) {
  net::FatTreeParams fp;
  fp.endpoints = 64;
  fp.radix = 16;
  fp.host = fp.fabric = net::LinkParams{400.0, core::SimTime::from_ns(20)};
  const net::Topology topo = net::build_fat_tree(fp);
  core::Simulator sim(topo.node_count());
  net::NetworkParams np;
  np.routing = net::RoutingAlgorithm::Adaptive;
  net::Network network(topo, np, sim);
  workload::TrafficParams tp;
  tp.pattern = workload::Pattern::Permutation;
  tp.message_bytes = 8u << 20;  // 8 MiB per endpoint: ~2,000 packets each
  workload::TrafficWorkload traffic(network, tp);

  // Warm up for a tenth of the transfer.
  const core::SimTime total = traffic.message_time();
  sim.run_until(core::SimTime::from_ps(total.ps() / 10));
  const std::uint64_t hops_before = network.totals().packet_hops;
  const std::uint64_t allocs_before = g_allocations.load();
  sim.run_until(core::SimTime::from_ps(total.ps() * 8 / 10));
  const std::uint64_t allocs = g_allocations.load() - allocs_before;
  const std::uint64_t hops = network.totals().packet_hops - hops_before;
  ASSERT_GT(hops, 100000u);
  // Containers may still double a few times while queues find their peak;
  // anything per packet would be in the hundreds of thousands.
  std::printf("allocations: %llu over %llu packet-hops\n", static_cast<unsigned long long>(allocs), static_cast<unsigned long long>(hops));
  EXPECT_LT(allocs, 200u) << allocs << " allocations over " << hops << " packet-hops";
  sim.run();
  EXPECT_EQ(network.totals().packets_delivered, network.totals().packets_injected);
}
