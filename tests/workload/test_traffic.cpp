// The alltoall's sampled shift rounds (issue 34): a sample of R < p - 1
// rounds is spread evenly over the p - 1 shifts, checked here against the
// properties the documentation promises rather than against the formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::workload {
namespace {

TEST(AlltoallSample, AFullRunIsEveryShiftInOrder) {
  for (std::uint32_t p : {2u, 3u, 16u, 1024u, 1050u})
    for (AlltoallSample s : {AlltoallSample::Spread, AlltoallSample::SpreadLocal, AlltoallSample::First})
      for (std::uint32_t rounds : {0u, p - 1, p, 5 * p}) {
        const auto shifts = alltoall_shifts(p, rounds, s);
        ASSERT_EQ(shifts.size(), p - 1);
        for (std::uint32_t i = 0; i < p - 1; ++i) EXPECT_EQ(shifts[i], i + 1);
      }
  EXPECT_TRUE(alltoall_shifts(1, 0, AlltoallSample::Spread).empty());
}

TEST(AlltoallSample, FirstIsTheMostLocalShifts) {
  const auto shifts = alltoall_shifts(1024, 32, AlltoallSample::First);
  ASSERT_EQ(shifts.size(), 32u);
  for (std::uint32_t i = 0; i < 32; ++i) EXPECT_EQ(shifts[i], i + 1);
}

// For every p up to 300 and every R < p - 1: R distinct shifts in 1 ... p - 1
// at one odd stride d, the largest odd d with R d <= p - 1 (an even stride
// on an even p would reach only even shifts); spread: centred (the gaps
// before the first and after the last differ by at most one), so shift 1 is
// left out whenever there is room for it; spread_local: from shift 1.
TEST(AlltoallSample, SpreadIsEvenOddStridedAndCentred) {
  for (std::uint32_t p = 3; p <= 300; ++p)
    for (std::uint32_t r = 1; r < p - 1; ++r)
      for (AlltoallSample s : {AlltoallSample::Spread, AlltoallSample::SpreadLocal}) {
        SCOPED_TRACE(::testing::Message() << "p " << p << ", R " << r << (s == AlltoallSample::Spread ? "" : ", local"));
        const auto shifts = alltoall_shifts(p, r, s);
        ASSERT_EQ(shifts.size(), r);
        ASSERT_EQ(std::set<std::uint32_t>(shifts.begin(), shifts.end()).size(), r);
        ASSERT_TRUE(std::is_sorted(shifts.begin(), shifts.end()));
        ASSERT_GE(shifts.front(), 1u);
        ASSERT_LE(shifts.back(), p - 1);
        std::uint32_t d = 1;
        while ((d + 2) * r <= p - 1) d += 2;  // the largest odd stride that fits
        for (std::size_t k = 1; k < shifts.size(); ++k) ASSERT_EQ(shifts[k] - shifts[k - 1], d);
        const std::uint32_t before = shifts.front() - 1, after = p - 1 - shifts.back();
        if (s == AlltoallSample::SpreadLocal) {
          ASSERT_EQ(shifts.front(), 1u);
        } else {
          ASSERT_LE(before > after ? before - after : after - before, 1u);
          if (before + after >= 2) {
            ASSERT_GT(shifts.front(), 1u);
          }
        }
      }
}

TEST(AlltoallSample, TheBuiltInPatternRunsTheSample) {
  TrafficParams tp;
  tp.pattern = Pattern::Alltoall;
  tp.messages = 4;
  tp.message_bytes = 1000;
  const std::uint32_t p = 64;
  const auto plan = plan_traffic(tp, p, core::SimTime::from_ns(1));
  const auto shifts = alltoall_shifts(p, 4, AlltoallSample::Spread);
  ASSERT_EQ(plan.size(), std::size_t{p} * 4);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i].src, i / 4);
    EXPECT_EQ(plan[i].dst, (plan[i].src + shifts[i % 4]) % p);
  }
  EXPECT_NE(shifts[0], 1u);  // (63 shifts, 4 rounds: room to leave shift 1 out)
}

}  // namespace
}  // namespace fabricsim::workload
