// Time per max-min rate recomputation of the flow-level model (issue 20):
// N flows in flight over the links of the 1k-endpoint fat tree (radix 64,
// two levels: 32 leaves, 16 spines, 4,096 directed links), and per
// iteration one flow ends, another starts and the rates are recomputed
// (FlowRates::recompute), which is what the flow model does per event.
// Arguments: flows in flight; routes: 0 = one ECMP path per flow, 1 = split
// evenly over every minimal path (spraying); traffic: 0 = random pairs
// (every flow shares links with every other: one component), 1 = pairs
// within a leaf (32 independent components).  Counters: flows refilled per
// recomputation and changed rates per recomputation.  The FullRecompute
// benchmark refills everything (FlowRates::recompute_all) for comparison.
// Run with --benchmark_out=FILE.json to keep the numbers.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/flow_network.hpp"
#include "fabricsim/net/flow_paths.hpp"
#include "fabricsim/net/flow_rates.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/random.hpp"

using namespace fabricsim;

namespace {

constexpr std::size_t kPool = 20000;

struct Setup {
  net::Topology topo;
  std::vector<std::vector<net::FlowLink>> routes;  // a pool to draw new flows from
};

Setup make(bool split, bool local) {
  Setup s;
  net::FatTreeParams ftp;
  ftp.endpoints = 1024;
  ftp.radix = 64;
  s.topo = net::build_fat_tree(ftp);
  const net::RoutingTable table(s.topo);
  net::TablePaths paths(s.topo, table, split ? net::PathSplit::Even : net::PathSplit::Single, 1);
  util::RandomStream rng(42, split * 2 + local);
  net::FlowRoute route;
  s.routes.reserve(kPool);
  for (std::size_t i = 0; i < kPool; ++i) {
    const auto src = static_cast<net::EndpointId>(rng.below(1024));
    net::EndpointId dst = 0;
    if (local) {
      dst = static_cast<net::EndpointId>(src / 32 * 32 + rng.below(31));  // another endpoint of its leaf
      if (dst >= src) ++dst;
    } else {
      dst = static_cast<net::EndpointId>(rng.below(1023));
      if (dst >= src) ++dst;
    }
    paths.route(src, dst, i, route);
    s.routes.push_back(route.links);
  }
  return s;
}

template <bool Split, bool Local>
const Setup& variant() {
  static const Setup s = make(Split, Local);  // built on first use, never changed after
  return s;
}

const Setup& setup(bool split, bool local) {
  if (split) return local ? variant<true, true>() : variant<true, false>();
  return local ? variant<false, true>() : variant<false, false>();
}

}  // namespace

// One flow ends, one starts, rates recomputed (the incremental path).
static void BM_FlowRecompute(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  const Setup& s = setup(state.range(1) != 0, state.range(2) != 0);
  net::FlowRates fr(net::FlowRates::capacities(s.topo));
  std::vector<std::size_t> route_of(flows);
  for (std::size_t f = 0; f < flows; ++f) {
    route_of[f] = f;
    fr.add(static_cast<net::FlowId>(f), s.routes[f]);
  }
  fr.recompute();
  util::RandomStream rng(7, 7);
  std::size_t next = flows;
  const auto before = fr.stats();
  for (auto _ : state) {
    const auto f = static_cast<net::FlowId>(rng.below(flows));
    fr.remove(f);
    route_of[f] = next++ % s.routes.size();
    fr.add(f, s.routes[route_of[f]]);
    benchmark::DoNotOptimize(fr.recompute().size());
  }
  const auto& after = fr.stats();
  const auto n = static_cast<double>(after.recomputations - before.recomputations);
  state.counters["flows_touched"] = static_cast<double>(after.flows_touched - before.flows_touched) / n;
  state.counters["rates_changed"] = static_cast<double>(after.rates_changed - before.rates_changed) / n;
  state.counters["links_requeued"] = static_cast<double>(after.links_requeued - before.links_requeued) / n;
  state.counters["recomputes_per_second"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowRecompute)
    ->ArgNames({"flows", "split", "local"})
    ->ArgsProduct({{1000, 10000}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// Everything refilled from scratch, for comparison.
static void BM_FlowFullRecompute(benchmark::State& state) {
  const auto flows = static_cast<std::size_t>(state.range(0));
  const Setup& s = setup(state.range(1) != 0, false);
  net::FlowRates fr(net::FlowRates::capacities(s.topo));
  for (std::size_t f = 0; f < flows; ++f) fr.add(static_cast<net::FlowId>(f), s.routes[f]);
  fr.recompute();
  for (auto _ : state) benchmark::DoNotOptimize(fr.recompute_all().size());
}
BENCHMARK(BM_FlowFullRecompute)
    ->ArgNames({"flows", "split"})
    ->ArgsProduct({{1000, 10000}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

// The whole flow engine: on the 1k fat tree every endpoint sends a chain of
// 1 MiB messages to its partner in a random permutation (the next one when
// the previous is delivered; arguments: messages per endpoint, and 1 to
// send each next message to a random endpoint instead, which puts flows of
// different sizes and start times on shared links), so 1,024 flows are in
// flight at once, on ECMP paths.  Reports simulated messages and
// engine events per wall-clock second.
namespace {
struct Chain : net::MessageListener {
  net::FlowNetwork* fn = nullptr;
  std::vector<net::EndpointId> partner;
  std::vector<std::uint32_t> left;
  bool random = false;
  util::RandomStream rng{10, 10};
  void on_message_delivered(net::MessageId id) override {
    const net::EndpointId src = fn->messages()[id].src;
    if (left[src]-- <= 1) return;
    net::EndpointId dst = partner[src];
    if (random) {
      dst = static_cast<net::EndpointId>(rng.below(1023));
      if (dst >= src) ++dst;
    }
    fn->send(src, dst, 1 << 20, fn->now());
  }
};
}  // namespace

static void BM_FlowNetworkPermutation(benchmark::State& state) {
  const auto per_endpoint = static_cast<std::uint32_t>(state.range(0));
  const Setup& s = setup(false, false);
  const net::RoutingTable table(s.topo);
  std::uint64_t messages = 0;
  std::uint64_t events = 0;
  std::uint64_t recomputes = 0;
  std::uint64_t touched = 0;
  for (auto _ : state) {
    core::Simulator sim(s.topo.node_count());
    net::TablePaths paths(s.topo, table, net::PathSplit::Single, 1);
    net::FlowNetwork fn(s.topo, net::FlowParams{}, paths, sim);
    Chain chain;
    chain.fn = &fn;
    chain.partner.resize(1024);
    for (net::EndpointId e = 0; e < 1024; ++e) chain.partner[e] = e;
    util::RandomStream rng(9, 9);
    for (net::EndpointId e = 1024; e-- > 1;) std::swap(chain.partner[e], chain.partner[rng.below(e + 1)]);
    for (net::EndpointId e = 0; e < 1024; ++e)
      if (chain.partner[e] == e) std::swap(chain.partner[e], chain.partner[(e + 1) % 1024]);
    chain.left.assign(1024, per_endpoint);
    chain.random = state.range(1) != 0;
    fn.set_listener(&chain);
    for (net::EndpointId e = 0; e < 1024; ++e) fn.send(e, chain.partner[e], 1 << 20, core::SimTime::zero());
    sim.run();
    messages += fn.totals().messages_delivered;
    events += sim.events_processed();
    recomputes += fn.stats().rates.recomputations;
    touched += fn.stats().rates.flows_touched;
  }
  state.counters["flows_touched"] = static_cast<double>(touched) / static_cast<double>(recomputes);
  state.counters["recomputes_per_message"] = static_cast<double>(recomputes) / static_cast<double>(messages);
  state.counters["messages_per_second"] =
      benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsRate);
  state.counters["events_per_second"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowNetworkPermutation)
    ->ArgNames({"messages", "random"})
    ->Args({4, 0})
    ->Args({4, 1})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
