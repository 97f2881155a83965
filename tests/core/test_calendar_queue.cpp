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
}  // namespace

TEST(CalendarQueue, SameOrderAsHeapForDenseNearFutureEvents) { compare_with_heap(1, 200'000, 0.0, 0.0); }
TEST(CalendarQueue, SameOrderWithFarEvents) { compare_with_heap(2, 300'000, 0.05, 0.0); }
TEST(CalendarQueue, SameOrderWithSameBucketInsertionsAndPeeks) { compare_with_heap(3, 3'000, 0.02, 0.2); }
TEST(CalendarQueue, SameOrderWithSparseEvents) { compare_with_heap(4, 40'000'000, 0.1, 0.3); }

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
