// The task graph executor: compute streams, message and join dependencies,
// delays, on a two-endpoint star whose message time is known exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

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


// Streaming (TaskGraph::Feeder): a graph fed while it runs runs exactly as
// the same graph planned in full, when each task is added before the first
// of its dependencies completes.  Random graphs on a 4-endpoint star:
// computes, messages, plain and reducing joins, delays, "left the NIC"
// dependencies, each task depending on a few of the 24 before it.  The
// planned run is the reference; the streaming run adds the tasks in order,
// each completion's hook adding up to the last task that depends on it,
// and reads each task's times in its hooks (its slot is reused after).
namespace stream {

struct Spec {
  TaskGraph::Kind kind;
  net::EndpointId at, dst;  // dst: a message's
  std::uint64_t value;      // compute ps, message bytes, join reduction (Gb/s, 0: none)
  struct Dep {
    std::size_t from;
    std::int64_t delay_ps;
    bool sent;
  };
  std::vector<Dep> deps;
};

net::EndpointId completes_at(const Spec& s) { return s.kind == TaskGraph::Kind::Message ? s.dst : s.at; }

std::vector<Spec> random_graph(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::uint64_t k) { return static_cast<std::uint64_t>(rng() % k); };
  std::vector<Spec> g;
  for (std::size_t i = 0; i < n; ++i) {
    Spec s{};
    const std::uint64_t kind = pick(10);
    s.kind = kind < 5 ? TaskGraph::Kind::Compute : kind < 8 ? TaskGraph::Kind::Message : TaskGraph::Kind::Join;
    s.at = static_cast<net::EndpointId>(pick(4));
    if (i >= 3) {
      // The first dependency decides where it begins (dependencies are local).
      const std::size_t first = i - 1 - pick(std::min<std::size_t>(i, 24));
      s.at = completes_at(g[first]);
      s.deps.push_back({first, pick(3) == 0 ? static_cast<std::int64_t>(pick(5000)) : 0, false});
      for (std::uint64_t extra = pick(3); extra > 0; --extra) {
        const std::size_t j = i - 1 - pick(std::min<std::size_t>(i, 24));
        if (std::any_of(s.deps.begin(), s.deps.end(), [&](const Spec::Dep& d) { return d.from == j; })) continue;
        if (completes_at(g[j]) == s.at) s.deps.push_back({j, 0, false});
        else if (g[j].kind == TaskGraph::Kind::Message && g[j].at == s.at) s.deps.push_back({j, 0, true});
      }
    }
    switch (s.kind) {
      case TaskGraph::Kind::Compute: s.value = 1'000 + pick(40'000); break;
      case TaskGraph::Kind::Message:
        s.dst = static_cast<net::EndpointId>((s.at + 1 + pick(3)) % 4);
        s.value = 1 + pick(20'000);
        break;
      case TaskGraph::Kind::Join:
        s.value = std::any_of(s.deps.begin(), s.deps.end(),
                              [&](const Spec::Dep& d) { return !d.sent && g[d.from].kind == TaskGraph::Kind::Message; }) &&
                          pick(2) == 0
                      ? 8
                      : 0;
        break;
    }
    g.push_back(s);
  }
  return g;
}

// Each task's times: start, end, sent (ps; -1 never), its message's id.
struct Times {
  std::vector<std::int64_t> start, end, sent;
  std::vector<net::MessageId> message;
  std::int64_t done = -1;
  explicit Times(std::size_t n) : start(n, -1), end(n, -1), sent(n, -1), message(n, 0) {}
};

TaskGraph::TaskId add(TaskGraph& g, const Spec& s) {
  switch (s.kind) {
    case TaskGraph::Kind::Compute: return g.add_compute(s.at, SimTime::from_ps(static_cast<std::int64_t>(s.value)));
    case TaskGraph::Kind::Message: return g.add_message(s.at, s.dst, s.value);
    case TaskGraph::Kind::Join: break;
  }
  return g.add_join(s.at, 0, static_cast<double>(s.value));
}

Times planned(const std::vector<Spec>& specs) {
  Star s(4);
  std::vector<TaskGraph::TaskId> id;
  for (const Spec& sp : specs) {
    id.push_back(add(*s.g, sp));
    for (const Spec::Dep& d : sp.deps) {
      if (d.sent) s.g->depend_sent(id[d.from], id.back());
      else s.g->depend(id[d.from], id.back(), SimTime::from_ps(d.delay_ps));
    }
  }
  Times t(specs.size());
  s.g->set_on_done([&](SimTime at) { t.done = at.ps(); });
  s.run();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const TaskGraph::Task& k = s.g->task(id[i]);
    t.start[i] = k.start.ps();
    t.end[i] = k.end.ps();
    if (k.kind == TaskGraph::Kind::Message) {
      t.sent[i] = k.sent().ps();
      t.message[i] = k.message;
    }
  }
  return t;
}

struct Feeder final : TaskGraph::Feeder {
  const std::vector<Spec>& specs;
  TaskGraph& g;
  Times times;
  bool lag;                          // add nothing at time zero (what should have been begins late)
  std::size_t fed = 0;
  std::vector<std::size_t> last_dependent, last_sent_dependent;  // per task: the last that waits for it
  std::vector<TaskGraph::TaskId> id;                             // per task: its slot while it lives
  std::vector<std::size_t> spec_of;                              // per slot: its task
  std::vector<std::uint8_t> passed;                              // per task: its last hook has passed
  std::size_t in_hook = SIZE_MAX;
  bool in_sent_hook = false;
  std::uint64_t expected_late = 0;
  std::size_t most_slots = 0, most_live = 0, gone = 0;  // slots; tasks added whose last hook has not returned

  Feeder(const std::vector<Spec>& s, TaskGraph& graph, bool lagging)
      : specs(s), g(graph), times(s.size()), lag(lagging), last_dependent(s.size(), 0),
        last_sent_dependent(s.size(), 0), id(s.size(), TaskGraph::kNone), passed(s.size(), 0) {
    for (std::size_t i = 0; i < s.size(); ++i)
      for (const Spec::Dep& d : s[i].deps) (d.sent ? last_sent_dependent : last_dependent)[d.from] = i;
  }
  // Adds tasks fed ... up to `last`, with their dependencies.
  void feed_to(std::size_t last, bool started, SimTime now = SimTime::zero()) {
    for (; fed <= last && fed < specs.size(); ++fed) {
      const Spec& sp = specs[fed];
      // Late: every dependency met before it is added, the last before now.
      bool met = true;
      std::int64_t ready = 0;
      for (const Spec::Dep& d : sp.deps) {
        const bool sent_met = d.sent && times.sent[d.from] >= 0 && !(d.from == in_hook && in_sent_hook);
        met = met && ((passed[d.from] && d.from != in_hook) || sent_met);
        ready = std::max(ready, (d.sent ? times.sent[d.from] : times.end[d.from]) + d.delay_ps);
        if (!d.sent && sp.kind == TaskGraph::Kind::Join && sp.value > 0 && specs[d.from].kind == TaskGraph::Kind::Message)
          ready = std::max(ready, times.end[d.from] + core::serialization_time(specs[d.from].value, 8.0).ps());
      }
      expected_late += started && met && ready < now.ps();
      const TaskGraph::TaskId t = add(g, sp);
      id[fed] = t;
      if (spec_of.size() <= t) spec_of.resize(t + 1);
      spec_of[t] = fed;
      if (sp.kind == TaskGraph::Kind::Message) times.message[fed] = g.task(t).message;
      for (const Spec::Dep& d : sp.deps) {
        if (passed[d.from] && d.from != in_hook) {
          // Gone: what it left is the time it ended (or left its NIC).
          g.not_before(t, SimTime::from_ps((d.sent ? times.sent[d.from] : times.end[d.from]) + d.delay_ps));
        } else if (d.sent) {
          g.depend_sent(id[d.from], t);
        } else {
          g.depend(id[d.from], t, SimTime::from_ps(d.delay_ps));
        }
      }
      if (started) g.seal(t);
    }
    most_slots = std::max(most_slots, g.size());
    most_live = std::max(most_live, fed - gone + (in_hook != SIZE_MAX));
  }
  void on_task_done(TaskGraph::TaskId t, bool sent, SimTime at) override {
    const std::size_t i = spec_of[t];
    const TaskGraph::Task& k = g.task(t);
    if (sent) {
      times.sent[i] = at.ps();
      times.start[i] = k.start.ps();
    } else {
      times.start[i] = k.start.ps();
      times.end[i] = at.ps();
      passed[i] = 1;  // (a message completes after it has left its NIC: its last hook)
    }
    const bool last = !sent;
    in_hook = i;
    in_sent_hook = sent;
    // Lagging: nothing is added at time zero, so that what should have
    // been is added at the first completion after it.
    held_ = std::max(held_, sent ? last_sent_dependent[i] : last_dependent[i]);
    if (!lag || at > SimTime::zero()) feed_to(held_, true, at);
    in_hook = SIZE_MAX;
    gone += last;
    if (fed == specs.size() && !ended_) {
      ended_ = true;
      g.end_feeding(at);
    }
  }
  std::size_t held_ = 0;
  bool ended_ = false;
};

}  // namespace stream

TEST(TaskGraph, StreamingRunsAsPlannedWhenFedBeforeItsDependenciesComplete) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    const std::size_t n = 3000;
    const auto specs = stream::random_graph(seed, n);
    const stream::Times want = stream::planned(specs);
    Star s(4);
    stream::Feeder f(specs, *s.g, false);
    s.g->set_feeder(&f);
    s.g->set_on_done([&](SimTime at) { f.times.done = at.ps(); });
    f.feed_to(2, false);  // the tasks without dependencies, before the start
    s.g->start(SimTime::zero());
    s.sim->run_until(SimTime::max());
    ASSERT_EQ(f.fed, n);
    EXPECT_EQ(s.g->added(), n);
    EXPECT_EQ(f.expected_late, 0u);
    EXPECT_EQ(s.g->late(), 0u);
    EXPECT_EQ(f.times.done, want.done);
    for (std::size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(i);
      ASSERT_EQ(f.times.start[i], want.start[i]);
      ASSERT_EQ(f.times.end[i], want.end[i]);
      ASSERT_EQ(f.times.sent[i], want.sent[i]);
      ASSERT_EQ(f.times.message[i], want.message[i]);
    }
    // What it held: a slot per task in flight (added, its last hook not
    // passed), not one per task it ran.
    EXPECT_LE(f.most_slots, f.most_live);
    EXPECT_LT(f.most_slots, n / 4);
  }
}

// Fed too late (nothing added at time zero: the third task, which has no
// dependencies, after the first completion), tasks whose dependencies had
// all been met before they were added begin when added: late() counts
// them, as the feeder finds them from the times it read, and the graph
// still runs to its end.
TEST(TaskGraph, StreamingCountsTasksAddedAfterTheirDependencies) {
  // (A first task that is a compute: a first completion after time zero.)
  std::uint64_t seed = 7;
  while (stream::random_graph(seed, 1)[0].kind != TaskGraph::Kind::Compute) ++seed;
  const auto specs = stream::random_graph(seed, 2000);
  Star s(4);
  stream::Feeder f(specs, *s.g, true);
  s.g->set_feeder(&f);
  s.g->set_on_done([&](SimTime at) { f.times.done = at.ps(); });
  f.feed_to(1, false);
  s.g->start(SimTime::zero());
  s.sim->run_until(SimTime::max());
  ASSERT_EQ(f.fed, specs.size());
  EXPECT_GT(f.expected_late, 0u);
  EXPECT_EQ(s.g->late(), f.expected_late);
  EXPECT_GE(f.times.done, 0);
}

}  // namespace
}  // namespace fabricsim::workload
