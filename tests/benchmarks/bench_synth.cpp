// TACOS-Greedy (synth/tacos.hpp) synthesising All-Gather, one 1 MiB chunk per
// NPU, on the spec's scalability topology Ring_FullyConnected_Switch (2 x 4
// NPUs per node, 200_100_50 GB/s, alpha 0.5 us) with 1, 8 and 64 nodes
// (8 to 512 NPUs; 512 x 511 requests at the top), one instance; and
// All-Reduce the same way (a reduce-scatter on the transposed graph, then an
// all-gather: two greedy runs).  The paper reports 6.1 min for 512 NPUs.
// Counters: npus, finish_us (the collective time of the synthesised schedule).
//   bench_synth [--benchmark_filter=BM_GreedyAllGather/npus:64$]
#include <benchmark/benchmark.h>

#include <cstdint>

#include "fabricsim/synth/tacos.hpp"

using namespace fabricsim;

namespace {

void BM_GreedyAllGather(benchmark::State& state) {
  const auto npus = static_cast<std::uint32_t>(state.range(0));
  const synth::NpuGraph g = synth::ring_fc_switch(npus / 8);
  const synth::Collective c = synth::all_gather(g, 1, 1U << 20U);
  synth::GreedyOptions opt;
  opt.instances = 1;
  double finish = 0.0;
  for (auto _ : state) {
    const synth::Schedule s = synth::greedy(g, c, opt);
    finish = s.finish_ns;
    benchmark::DoNotOptimize(s.sends.data());
  }
  state.counters["npus"] = static_cast<double>(npus);
  state.counters["finish_us"] = finish / 1000.0;
}
BENCHMARK(BM_GreedyAllGather)->ArgName("npus")->RangeMultiplier(2)->Range(8, 512)->Unit(benchmark::kMillisecond);

void BM_GreedyAllReduce(benchmark::State& state) {
  const auto npus = static_cast<std::uint32_t>(state.range(0));
  const synth::NpuGraph g = synth::ring_fc_switch(npus / 8);
  synth::Request r;
  r.op = synth::Op::AllReduce;
  r.chunk_bytes = 1U << 20U;
  synth::GreedyOptions opt;
  opt.instances = 1;
  double finish = 0.0;
  for (auto _ : state) {
    const synth::Schedule s = synth::synthesize(g, r, opt);
    finish = s.finish_ns;
    benchmark::DoNotOptimize(s.sends.data());
  }
  state.counters["npus"] = static_cast<double>(npus);
  state.counters["finish_us"] = finish / 1000.0;
}
BENCHMARK(BM_GreedyAllReduce)->ArgName("npus")->RangeMultiplier(2)->Range(8, 512)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
