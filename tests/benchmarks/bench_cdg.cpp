// The channel-dependency check (net::check_minimal_routing) on a custom
// graph with one large switch (issue 27): a star of N endpoints, where each
// of the N up channels gains one dependency per destination (N (N - 1) in
// all).  `fabricsim info` on a graph file runs this check; deduplicating
// every long successor list after each destination made it quadratic in N
// (2,000 endpoints: 20 s), amortized deduplication makes it near-linear in
// the dependencies.  For comparison, the 1k-endpoint fat tree (radix 64).
// Counters: dependencies found, and dependencies per second.
//   bench_cdg [--benchmark_filter=BM_CdgStar/2000]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/net/cdg.hpp"
#include "fabricsim/net/topology.hpp"

using namespace fabricsim;

namespace {

net::Topology star(std::uint32_t n) {
  net::Topology t;
  const net::NodeId s = t.add_node(net::NodeKind::Switch, 1, n, "s", true);
  std::vector<net::NodeId> e;
  for (std::uint32_t i = 0; i < n; ++i)
    e.push_back(t.add_node(net::NodeKind::Endpoint, 0, 1, std::string("e").append(std::to_string(i)), false));
  for (std::uint32_t i = 0; i < n; ++i) t.connect(e[i], s, net::LinkClass::Host, net::LinkParams{});
  return t;
}

void run(benchmark::State& state, const net::Topology& t) {
  const net::RoutingTable routes(t);
  std::size_t deps = 0;
  for (auto _ : state) {
    const net::DependencyReport r = net::check_minimal_routing(t, routes);
    deps = r.dependencies;
    benchmark::DoNotOptimize(r.acyclic);
  }
  state.counters["dependencies"] = static_cast<double>(deps);
  state.counters["deps_per_s"] =
      benchmark::Counter(static_cast<double>(deps) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_CdgStar(benchmark::State& state) { run(state, star(static_cast<std::uint32_t>(state.range(0)))); }
BENCHMARK(BM_CdgStar)->Arg(500)->Arg(1000)->Arg(2000)->Unit(benchmark::kMillisecond);

void BM_CdgFatTree1k(benchmark::State& state) {
  net::FatTreeParams p;
  p.endpoints = 1024;
  p.radix = 64;
  run(state, net::build_fat_tree(p));
}
BENCHMARK(BM_CdgFatTree1k)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
