#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabricsim/core/link.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/util/error.hpp"

using namespace fabricsim::core;

namespace {

struct Recorder {
  Simulator* sim = nullptr;
  std::vector<std::pair<std::int64_t, std::uint64_t>> seen;  // (time ps, arg0)
  void on_event(const Event& ev) { seen.emplace_back(sim->now().ps(), ev.arg0); }
};

struct PingPong {
  Simulator* sim = nullptr;
  Link* to_b = nullptr;
  Link* to_a = nullptr;
  int remaining = 0;
  std::vector<std::int64_t> arrivals;
  void at_a(const Event&) { bounce(to_b, 0); }
  void at_b(const Event&) { bounce(to_a, 1); }
  void bounce(Link* l, EntityId self) {
    arrivals.push_back(sim->now().ps());
    if (remaining-- > 0) l->send(*sim, sim->now(), 0, self, 0, 0, 0);
  }
};

}  // namespace

TEST(SimTime, UnitsAndSerialization) {
  EXPECT_EQ(SimTime::from_ns(3).ps(), 3000);
  EXPECT_EQ(SimTime::from_ns_f(1.2345).ps(), 1235);  // rounded to the picosecond
  // 4096 bytes at 400 Gb/s: 4096*8/400 ns = 81.92 ns exactly.
  EXPECT_EQ(serialization_time(4096, 400).ps(), 81920);
  // 1 byte at 3 Gb/s = 2666.67 ps, rounded up.
  EXPECT_EQ(serialization_time(1, 3).ps(), 2667);
}

TEST(Simulator, ProcessesInTimeOrderAndAdvancesNow) {
  Simulator sim(2);
  Recorder r{&sim, {}};
  auto h = Simulator::handler<Recorder, &Recorder::on_event>();
  for (std::int64_t t : {50, 10, 30}) sim.schedule(SimTime::from_ps(t), 0, 0, 1, h, &r, 0, static_cast<std::uint64_t>(t));
  EXPECT_EQ(sim.run(), 3u);
  ASSERT_EQ(r.seen.size(), 3u);
  EXPECT_EQ(r.seen[0], (std::pair<std::int64_t, std::uint64_t>{10, 10}));
  EXPECT_EQ(r.seen[2], (std::pair<std::int64_t, std::uint64_t>{50, 50}));
  EXPECT_EQ(sim.now().ps(), 50);
  EXPECT_EQ(sim.events_processed(), 3u);
}

TEST(Simulator, RunUntilStopsBeforeTheBoundary) {
  Simulator sim(1);
  Recorder r{&sim, {}};
  auto h = Simulator::handler<Recorder, &Recorder::on_event>();
  for (std::int64_t t : {10, 20, 30, 40}) sim.schedule(SimTime::from_ps(t), 0, 0, 0, h, &r, 0, 0);
  EXPECT_EQ(sim.run_until(SimTime::from_ps(30)), 2u);  // 30 is not below 30
  EXPECT_EQ(sim.next_event_time().ps(), 30);
  EXPECT_EQ(sim.run_until(SimTime::from_ps(31)), 1u);
  EXPECT_EQ(sim.run_until(SimTime::from_ps(31)), 0u);
  EXPECT_EQ(sim.run(), 1u);
  EXPECT_TRUE(sim.empty());
  EXPECT_EQ(sim.next_event_time(), SimTime::max());
}

// A time sum that wraps past the int64-picosecond range lands before now:
// a user error that says so (exit 2), not an internal assertion.
TEST(Simulator, TimeThatWrapsIsAUserError) {
  Simulator sim(1);
  Recorder r{&sim, {}};
  auto h = Simulator::handler<Recorder, &Recorder::on_event>();
  const SimTime late = SimTime::from_ps(std::int64_t{1} << 62) + SimTime::from_ps(std::int64_t{1} << 61);
  sim.schedule(late, 0, 0, 0, h, &r, 0, 0);
  EXPECT_EQ(sim.run(), 1u);
  // From there, another 2^62 ps wraps below zero.
  const SimTime wrapped = SimTime::from_ps(static_cast<std::int64_t>(
      static_cast<std::uint64_t>(late.ps()) + (std::uint64_t{1} << 62)));
  try {
    sim.schedule(wrapped, 0, 0, 0, h, &r, 0, 0);
    FAIL() << "no error";
  } catch (const fabricsim::util::UserError& e) {
    EXPECT_EQ(e.exit_code(), fabricsim::util::kExitConfigError);
    EXPECT_NE(std::string(e.what()).find("simulated time overflowed"), std::string::npos) << e.what();
  }
}

TEST(Simulator, RunUntilHonoursEventBudget) {
  Simulator sim(1);
  Recorder r{&sim, {}};
  auto h = Simulator::handler<Recorder, &Recorder::on_event>();
  for (std::int64_t t = 0; t < 10; ++t) sim.schedule(SimTime::from_ps(t), 0, 0, 0, h, &r, 0, 0);
  EXPECT_EQ(sim.run_until(SimTime::max(), 4), 4u);
  EXPECT_EQ(sim.pending(), 6u);
}

TEST(Simulator, SameTimeEventsOrderedByPriorityThenSourceThenSequence) {
  Simulator sim(3);
  Recorder r{&sim, {}};
  auto h = Simulator::handler<Recorder, &Recorder::on_event>();
  const SimTime t = SimTime::from_ps(5);
  sim.schedule(t, 1, 0, 0, h, &r, 0, 1);  // priority 1
  sim.schedule(t, 0, 2, 0, h, &r, 0, 2);  // source 2
  sim.schedule(t, 0, 1, 0, h, &r, 0, 3);  // source 1, seq 0
  sim.schedule(t, 0, 1, 0, h, &r, 0, 4);  // source 1, seq 1
  sim.run();
  std::vector<std::uint64_t> order;
  for (auto& s : r.seen) order.push_back(s.second);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{3, 4, 2, 1}));
}

TEST(Link, DeliversAfterItsLatency) {
  Simulator sim(2);
  PingPong pp{&sim, nullptr, nullptr, 5, {}};
  Link ab(0, Port{0, 0}, Port{1, 0}, SimTime::from_ns(7));
  Link ba(1, Port{1, 0}, Port{0, 0}, SimTime::from_ns(3));
  ab.bind_receiver(Simulator::handler<PingPong, &PingPong::at_b>(), &pp);
  ba.bind_receiver(Simulator::handler<PingPong, &PingPong::at_a>(), &pp);
  pp.to_b = &ab;
  pp.to_a = &ba;
  ab.send(sim, SimTime::zero(), 0, 0, 0, 0, 0);
  sim.run();
  // Arrivals alternate at b (+7 ns) and a (+3 ns).
  std::vector<std::int64_t> expected = {7000, 10000, 17000, 20000, 27000, 30000};
  EXPECT_EQ(pp.arrivals, expected);
}

namespace {
struct Sink : RemoteSink {
  std::vector<RemoteRecord> got;
  void post(const RemoteRecord& r) override { got.push_back(r); }
};
}  // namespace

TEST(Link, RemoteLinkPostsRecordsWithTheSameKey) {
  Simulator local(2), remote(2);
  Recorder r{&remote, {}};
  Sink sink;
  Link l(4, Port{0, 0}, Port{1, 0}, SimTime::from_ns(2));
  l.bind_receiver(Simulator::handler<Recorder, &Recorder::on_event>(), &r);
  l.make_remote(&sink);
  l.send(local, SimTime::from_ns(1), 3, 0, 9, 77, 88);
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].key.time.ps(), 3000);
  EXPECT_EQ(sink.got[0].key.priority, 3u);
  EXPECT_EQ(sink.got[0].link, 4u);
  EXPECT_TRUE(local.empty());
  remote.insert(l.to_event(sink.got[0]));
  remote.run();
  ASSERT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(r.seen[0], (std::pair<std::int64_t, std::uint64_t>{3000, 77}));
}
