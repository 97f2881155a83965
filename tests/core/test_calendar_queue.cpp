#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "fabricsim/core/calendar_queue.hpp"
#include "fabricsim/core/event_queue.hpp"

using namespace fabricsim::core;

namespace {
void handler(void*, const Event&) {}

Event make(std::int64_t t_ps, std::uint32_t prio, EntityId src, std::uint64_t seq) {
  Event e;
  e.key = EventKey{SimTime::from_ps(t_ps), prio, src, seq};
  e.handler = &handler;
  e.arg0 = seq;
  return e;
}

/// Drives a CalendarQueue and the reference heap with the same operations,
/// as a simulator would: every push is at or after the time of the last pop.
void compare_with_heap(std::uint64_t seed, std::int64_t max_delta_ps, double far_share, double peek_share) {
  std::mt19937_64 rng(seed);
  CalendarQueue cal;
  EventQueue ref;
  std::int64_t now = 0;
  std::uint64_t seq = 0;
  auto push_one = [&] {
    std::int64_t delta = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(max_delta_ps + 1));
    if (std::uniform_real_distribution<double>(0, 1)(rng) < far_share) delta += 50'000'000;  // far beyond the ring
    const Event e = make(now + delta, static_cast<std::uint32_t>(rng() % 3), static_cast<EntityId>(rng() % 50), seq++);
    cal.push(e);
    ref.push(e);
  };
  for (int i = 0; i < 200; ++i) push_one();
  for (int step = 0; step < 200000; ++step) {
    ASSERT_EQ(cal.size(), ref.size());
    if (ref.empty()) break;
    // Sometimes look at the next time first (the calendar may move its
    // cursor past empty buckets), then schedule something at `now`.
    if (std::uniform_real_distribution<double>(0, 1)(rng) < peek_share) {
      ASSERT_EQ(cal.top_time(), ref.top_time());
      const Event e = make(now, 0, 7, seq++);
      cal.push(e);
      ref.push(e);
    }
    Event a, b;
    cal.pop(a);
    ref.pop(b);
    ASSERT_EQ(a.key, b.key) << "step " << step;
    ASSERT_EQ(a.arg0, b.arg0);
    now = a.key.time.ps();
    const int pushes = static_cast<int>(rng() % 3);  // 0, 1 or 2: the set breathes
    for (int k = 0; k < pushes && step < 150000; ++k) push_one();
  }
  while (!ref.empty()) {
    ASSERT_FALSE(cal.empty());
    Event a, b;
    cal.pop(a);
    ref.pop(b);
    ASSERT_EQ(a.key, b.key);
  }
  EXPECT_TRUE(cal.empty());
}

/// Crowded buckets, as a synchronized packet workload makes them: bursts of
/// thousands of events at a few instants of one bucket, from many sources,
/// with sequences that are not in push order for some sources (keyed events)
/// and equal (time, priority, source) for several events.
void compare_bursts(std::uint64_t seed, std::uint32_t prio_max, EntityId src_max, bool shuffled_seq) {
  std::mt19937_64 rng(seed);
  CalendarQueue cal;
  EventQueue ref;
  std::int64_t now = 0;
  std::uint64_t seq = 0;
  for (int round = 0; round < 40; ++round) {
    const std::int64_t base = now + 1 + static_cast<std::int64_t>(rng() % 3000);
    const int burst = 64 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < burst; ++i) {
      const std::int64_t t = base + static_cast<std::int64_t>(rng() % 4) * 300;
      const auto prio = static_cast<std::uint32_t>(rng() % (prio_max + 1));
      const auto src = static_cast<EntityId>(rng() % 8 == 0 ? 3 : rng() % (std::uint64_t{src_max} + 1));
      const std::uint64_t s = shuffled_seq && rng() % 2 ? rng() % 100'000 : seq++;
      const Event e = make(t, prio, src, s);
      cal.push(e);
      ref.push(e);
    }
    // Drain about half, so later bursts land on partly drained state.
    const std::size_t drain = ref.size() / 2 + 1;
    for (std::size_t k = 0; k < drain && !ref.empty(); ++k) {
      Event a, b;
      cal.pop(a);
      ref.pop(b);
      ASSERT_EQ(a.key, b.key) << "round " << round << " pop " << k;
      now = a.key.time.ps();
    }
  }
  while (!ref.empty()) {
    Event a, b;
    cal.pop(a);
    ref.pop(b);
    ASSERT_EQ(a.key, b.key);
  }
  EXPECT_TRUE(cal.empty());
}
}  // namespace

TEST(CalendarQueue, SameOrderAsHeapForDenseNearFutureEvents) { compare_with_heap(1, 200'000, 0.0, 0.0); }
TEST(CalendarQueue, SameOrderWithFarEvents) { compare_with_heap(2, 300'000, 0.05, 0.0); }
TEST(CalendarQueue, SameOrderWithSameBucketInsertionsAndPeeks) { compare_with_heap(3, 3'000, 0.02, 0.2); }
TEST(CalendarQueue, SameOrderWithSparseEvents) { compare_with_heap(4, 40'000'000, 0.1, 0.3); }

TEST(CalendarQueue, SameOrderForCrowdedBuckets) { compare_bursts(5, 4, 2000, false); }
TEST(CalendarQueue, SameOrderForCrowdedBucketsWithUnorderedSequences) { compare_bursts(6, 4, 2000, true); }
TEST(CalendarQueue, SameOrderForCrowdedBucketsWithWideKeys) { compare_bursts(7, 255, 0xFFFFFF, true); }
TEST(CalendarQueue, SameOrderForCrowdedBucketsWithWideSources) { compare_bursts(8, 7, 0xFFFFFF, true); }

TEST(CalendarQueue, PushBeforeAPeekedFarEventRewinds) {
  CalendarQueue q;
  q.push(make(1'000'000'000, 0, 1, 0));  // 1 ms: far beyond the ring
  EXPECT_EQ(q.top_time().ps(), 1'000'000'000);  // the cursor jumps there
  q.push(make(5, 0, 1, 1));                     // then an earlier event arrives
  q.push(make(5'000'000, 0, 1, 2));
  Event e;
  q.pop(e);
  EXPECT_EQ(e.key.time.ps(), 5);
  q.pop(e);
  EXPECT_EQ(e.key.time.ps(), 5'000'000);
  q.pop(e);
  EXPECT_EQ(e.key.time.ps(), 1'000'000'000);
  EXPECT_TRUE(q.empty());
}
