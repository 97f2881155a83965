// The two-tier path assignment (ctrl/two_tier.hpp) on the paper's fabric:
// 64 ToRs x 32 spines, 32 NICs per ToR.  Jobs of 256 NICs are packed on 8
// consecutive ToRs with their ring ranks in random order; the inter-ToR ring
// commodities, shuffled, give the instances (see instance()): each ToR
// sources and sinks at most 32, so without failures the optimum is max load
// 1.  The controller runs at every iteration start, so Greedy must stay far
// below the 10 ms budget for 1,500 commodities.  The ILP runs once with a
// 10 s limit; it calls CBC only where Greedy and the edge colouring both
// miss the lower bound (the failed-link instances).
// Counters: max_load, commodities, optimal (proven), and for Greedy the time
// per commodity (per_commodity, seconds).
//   bench_two_tier [--benchmark_filter=Greedy]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "fabricsim/ctrl/two_tier.hpp"

using namespace fabricsim;

namespace {

constexpr std::uint32_t kTors = 64, kSpines = 32, kNicsPerTor = 32, kJobNics = 256;
constexpr std::int64_t kCommodities = 1500;
constexpr std::uint32_t kFailedLinks = 16;

ctrl::Problem make_instance(std::size_t commodities, std::uint32_t failed_links) {
  ctrl::Problem q;
  q.tors = kTors;
  q.spines = kSpines;
  std::mt19937_64 rng(2024);
  for (std::uint32_t first = 0; first < kTors * kNicsPerTor; first += kJobNics) {
    std::vector<std::int32_t> ring(kJobNics);
    std::iota(ring.begin(), ring.end(), static_cast<std::int32_t>(first));
    std::shuffle(ring.begin(), ring.end(), rng);
    for (std::uint32_t k = 0; k < kJobNics; ++k) {
      const std::int32_t src = ring[k], dst = ring[(k + 1) % kJobNics];
      ctrl::Commodity c;
      c.src_tor = static_cast<std::uint32_t>(src) / kNicsPerTor;
      c.dst_tor = static_cast<std::uint32_t>(dst) / kNicsPerTor;
      if (c.src_tor == c.dst_tor) continue;  // intra-ToR: never reaches a spine
      c.src_nic = src;
      c.dst_nic = dst;
      c.src_tor_id = static_cast<std::int32_t>(c.src_tor);
      q.commodities.push_back(c);
    }
  }
  // Keep the first `commodities` after a shuffle, spread over all jobs.
  std::shuffle(q.commodities.begin(), q.commodities.end(), rng);
  q.commodities.resize(std::min(q.commodities.size(), commodities));
  if (failed_links > 0) {
    q.up_live.assign(std::size_t{kTors} * kSpines, 1);
    q.down_live.assign(std::size_t{kSpines} * kTors, 1);
    for (std::uint32_t k = 0; k < failed_links; ++k) {
      auto& mask = rng() % 2 == 0 ? q.up_live : q.down_live;
      mask[rng() % mask.size()] = 0;
    }
  }
  return q;
}

/// range(0) 1500: the 1,500-commodity instance; kAll: every inter-ToR ring
/// commodity (about 1,800), where most ToRs source and sink the full 32.
/// range(1): single failed links (random directed ToR-spine links), where
/// the edge colouring needs repairs and the ILP has to search.
constexpr std::int64_t kAll = 2048;
const ctrl::Problem& instance(std::int64_t commodities, std::int64_t failed_links) {
  static std::map<std::pair<std::int64_t, std::int64_t>, ctrl::Problem> made;
  auto it = made.find({commodities, failed_links});
  if (it == made.end()) {
    ctrl::Problem p = make_instance(static_cast<std::size_t>(commodities), static_cast<std::uint32_t>(failed_links));
    it = made.emplace(std::pair{commodities, failed_links}, std::move(p)).first;
  }
  return it->second;
}

void report(benchmark::State& state, const ctrl::Problem& p, const ctrl::Assignment& a) {
  state.counters["max_load"] = static_cast<double>(a.max_load);
  state.counters["commodities"] = static_cast<double>(p.commodities.size());
}

void instances(benchmark::internal::Benchmark* b) {
  b->ArgNames({"commodities", "failed_links"});
  b->Args({kCommodities, 0})->Args({kAll, 0})->Args({kCommodities, kFailedLinks})->Args({kAll, kFailedLinks});
}

template <class Algorithm>
void run(benchmark::State& state, Algorithm algorithm) {
  const ctrl::Problem& p = instance(state.range(0), state.range(1));
  ctrl::Assignment a;
  for (auto _ : state) {
    a = algorithm(p);
    benchmark::DoNotOptimize(a.spine.data());
  }
  report(state, p, a);
  state.counters["optimal"] = a.optimal ? 1.0 : 0.0;
}

void BM_Greedy(benchmark::State& state, ctrl::GreedyOrder order) {
  run(state, [order](const ctrl::Problem& p) { return ctrl::greedy(p, order); });
  // Time per commodity (one controller decision), seconds.
  state.counters["per_commodity"] =
      benchmark::Counter(state.counters["commodities"],
                         benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_Greedy, TorDegreeSorted, ctrl::GreedyOrder::TorDegreeSorted)
    ->Apply(instances)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Greedy, Input, ctrl::GreedyOrder::Input)->Apply(instances)->Unit(benchmark::kMicrosecond);

void BM_EdgeColoring(benchmark::State& state) {
  run(state, [](const ctrl::Problem& p) { return ctrl::edge_coloring(p); });
}
BENCHMARK(BM_EdgeColoring)->Apply(instances)->Unit(benchmark::kMicrosecond);

void BM_Annealing(benchmark::State& state) {
  run(state, [](const ctrl::Problem& p) { return ctrl::annealing(p, 1); });
}
BENCHMARK(BM_Annealing)->Apply(instances)->Unit(benchmark::kMillisecond);

// CBC with a 10 s limit, once ("optimal": whether it proved the optimum).
void BM_Ilp(benchmark::State& state) {
  run(state, [](const ctrl::Problem& p) { return ctrl::ilp(p, 10.0); });
}
BENCHMARK(BM_Ilp)->Apply(instances)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

// CBC alone (controller.ilp_start = "cold", the paper's ILP baseline), 60 s
// limit, on the 1,500-commodity instance without failures.
void BM_IlpCold(benchmark::State& state) {
  run(state, [](const ctrl::Problem& p) { return ctrl::ilp(p, 60.0, ctrl::IlpStart::Cold); });
}
BENCHMARK(BM_IlpCold)->Args({kCommodities, 0})->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
