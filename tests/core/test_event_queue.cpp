#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "fabricsim/core/event_queue.hpp"

using namespace fabricsim::core;

namespace {
Event make(std::int64_t t_ps, std::uint32_t prio, EntityId src, std::uint64_t seq) {
  Event e;
  e.key = EventKey{SimTime::from_ps(t_ps), prio, src, seq};
  e.arg0 = static_cast<std::uint64_t>(t_ps);
  return e;
}
}  // namespace

TEST(EventKey, OrdersByTimeThenPriorityThenSourceThenSequence) {
  EXPECT_LT(make(1, 9, 9, 9).key, make(2, 0, 0, 0).key);
  EXPECT_LT(make(5, 0, 9, 9).key, make(5, 1, 0, 0).key);
  EXPECT_LT(make(5, 1, 2, 9).key, make(5, 1, 3, 0).key);
  EXPECT_LT(make(5, 1, 3, 4).key, make(5, 1, 3, 5).key);
  EXPECT_FALSE(make(5, 1, 3, 5).key < make(5, 1, 3, 5).key);
}

TEST(EventQueue, PopsInKeyOrderForRandomInsertions) {
  std::mt19937_64 rng(42);
  std::vector<Event> events;
  for (std::uint64_t i = 0; i < 5000; ++i)
    events.push_back(make(static_cast<std::int64_t>(rng() % 100), static_cast<std::uint32_t>(rng() % 3),
                          static_cast<EntityId>(rng() % 7), i));
  EventQueue q;
  for (const auto& e : events) q.push(e);
  std::vector<EventKey> expected;
  for (const auto& e : events) expected.push_back(e.key);
  std::sort(expected.begin(), expected.end());
  Event out;
  for (const auto& k : expected) {
    ASSERT_FALSE(q.empty());
    q.pop(out);
    EXPECT_EQ(out.key, k);
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, TiesResolvedIdenticallyWhateverTheInsertionOrder) {
  // Same-time events from different sources: the order must not depend on
  // the order they were inserted (it would, on another partitioning).
  std::vector<Event> events;
  for (EntityId s = 0; s < 20; ++s)
    for (std::uint64_t q = 0; q < 3; ++q) events.push_back(make(100, 0, s, q));
  std::vector<EventKey> reference;
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(events.begin(), events.end(), std::mt19937(static_cast<unsigned>(trial)));
    EventQueue q;
    for (const auto& e : events) q.push(e);
    std::vector<EventKey> order;
    Event out;
    while (!q.empty()) {
      q.pop(out);
      order.push_back(out.key);
    }
    if (trial == 0)
      reference = order;
    else
      EXPECT_EQ(order, reference);
  }
  EXPECT_TRUE(std::is_sorted(reference.begin(), reference.end()));
}

TEST(EventQueue, StorageIsReusedInSteadyState) {
  EventQueue q;
  for (std::uint64_t i = 0; i < 64; ++i) q.push(make(static_cast<std::int64_t>(i), 0, 0, i));
  const std::size_t cap = q.capacity();
  EXPECT_GE(cap, 64u);
  Event out;
  // Hold 64 pending events while a million flow through: the pool must not grow.
  for (std::uint64_t i = 0; i < 1000000; ++i) {
    q.pop(out);
    q.push(make(out.key.time.ps() + 64, 0, 0, 64 + i));
  }
  EXPECT_EQ(q.capacity(), cap);
  EXPECT_EQ(q.size(), 64u);
}

namespace {
void handler_a(void*, const Event&) {}
void handler_b(void*, const Event&) {}
}  // namespace

TEST(EventQueue, PayloadTravelsWithItsKey) {
  EventQueue q;
  int obj1 = 0, obj2 = 0;
  for (std::int64_t t : {30, 10, 20, 40}) {
    Event e = make(t, 7, 123456, static_cast<std::uint64_t>(t) + 1);
    e.arg32 = static_cast<std::uint32_t>(t * 3);
    e.arg1 = static_cast<std::uint64_t>(t + 5);
    e.handler = t % 20 == 0 ? &handler_a : &handler_b;
    e.target = t == 40 ? &obj2 : &obj1;
    q.push(e);
  }
  Event out;
  for (std::int64_t t : {10, 20, 30, 40}) {
    q.pop(out);
    EXPECT_EQ(out.key.time.ps(), t);
    EXPECT_EQ(out.key.priority, 7u);
    EXPECT_EQ(out.key.source, 123456u);
    EXPECT_EQ(out.key.sequence, static_cast<std::uint64_t>(t) + 1);
    EXPECT_EQ(out.arg0, static_cast<std::uint64_t>(t));
    EXPECT_EQ(out.arg32, static_cast<std::uint32_t>(t * 3));
    EXPECT_EQ(out.arg1, static_cast<std::uint64_t>(t + 5));
    EXPECT_EQ(out.handler, t % 20 == 0 ? &handler_a : &handler_b);
    EXPECT_EQ(out.target, t == 40 ? static_cast<void*>(&obj2) : static_cast<void*>(&obj1));
  }
}
