// Event-queue throughput (events/s) under the classic "hold" model: a fixed
// number of pending events; each step pops the least and pushes one a random
// increment later.  Run with --benchmark_out=FILE.json to keep the numbers.
#include <benchmark/benchmark.h>

#include "fabricsim/core/event_queue.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/util/random.hpp"

using namespace fabricsim::core;

static void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<std::uint64_t>(state.range(0));
  EventQueue q(pending);
  fabricsim::util::RandomStream rng(1, 2);
  std::uint64_t seq = 0;
  for (std::uint64_t i = 0; i < pending; ++i) {
    Event e;
    e.key = EventKey{SimTime::from_ps(static_cast<std::int64_t>(rng.below(1000000))), 0,
                     static_cast<EntityId>(i % 1024), seq++};
    q.push(e);
  }
  Event out;
  for (auto _ : state) {
    q.pop(out);
    out.key.time += SimTime::from_ps(static_cast<std::int64_t>(rng.below(1000000)));
    out.key.sequence = seq++;
    q.push(out);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueueHold)->Arg(1 << 10)->Arg(1 << 14)->Arg(1 << 18);

namespace {
struct Chain {
  Simulator* sim;
  std::uint64_t seed_draws = 0;
  void on_event(const Event& ev) {
    sim->schedule(sim->now() + SimTime::from_ps(1 + static_cast<std::int64_t>(ev.arg0 % 977)), 0, ev.key.source,
                  ev.key.source,
                  Simulator::handler<Chain, &Chain::on_event>(), this, 0, ev.arg0 * 6364136223846793005ull + 1);
  }
};
}  // namespace

// Full engine loop: pop, dispatch through the bound handler, schedule.
static void BM_SimulatorDispatch(benchmark::State& state) {
  const auto entities = static_cast<std::uint32_t>(state.range(0));
  Simulator sim(entities);
  Chain c{&sim};
  for (std::uint32_t e = 0; e < entities; ++e)
    sim.schedule(SimTime::from_ps(e), 0, e, e, Simulator::handler<Chain, &Chain::on_event>(), &c, 0, e);
  for (auto _ : state) sim.run_until(SimTime::max(), 1);
  state.SetItemsProcessed(state.iterations());
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulatorDispatch)->Arg(1 << 10)->Arg(1 << 16);

BENCHMARK_MAIN();
