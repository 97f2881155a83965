// Reading a trace within what the memory limit leaves the jobs
// (Trace::read_budget), measured: this binary's operator new counts the
// bytes live on the heap (malloc_usable_size), so the most the trace ever
// held, copies of growing arrays included, is the allocator's figure, not
// the reader's own accounting.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/trace.hpp"

namespace {
std::atomic<std::int64_t> g_live{0}, g_peak{0};

void count(void* p, bool allocated) {
  const auto n = static_cast<std::int64_t>(malloc_usable_size(p));
  const std::int64_t live = allocated ? (g_live += n) : (g_live -= n);
  std::int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
}
}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  count(p, true);
  return p;
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  count(p, false);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace fabricsim::workload {
namespace {

constexpr std::uint64_t kNodes = 20'000;

struct Read {
  std::uint64_t nodes = 0;     // read before it stopped (kNodes: all)
  std::uint64_t written = 0;   // the bytes its nodes, dependencies and names need, the refused node's included
  std::int64_t peak = 0;       // the most the heap held beyond what it held before, while it read
  std::string error;
};

// kNodes nodes of 4 ranks (three dependencies each, 5000 distinct names),
// read within `budget`.
Read read(std::uint64_t budget) {
  Read r;
  const std::int64_t before = g_live.load();
  g_peak = before;
  {
    Trace t;
    t.file = "t.json";
    t.ranks = 4;
    t.read_budget = budget;
    std::string name;
    name.reserve(32);  // (no allocation while it reads)
    for (; r.nodes < kNodes; ++r.nodes) {
      const std::uint64_t i = r.nodes;
      TraceNode n;
      n.duration_ns = 1;
      const std::uint64_t deps[3] = {i - 1, i - 2, i - 3};
      const std::size_t count = std::min<std::uint64_t>(i, 3);  // (ids of earlier nodes; unchecked here)
      name = "node" + std::to_string(i % 5000);
      r.written += sizeof(TraceNode) + sizeof(PlannedTraceNode) + count * sizeof(std::uint64_t) +
                   (i < 5000 ? name.size() + sizeof(std::uint64_t) + 2 * sizeof(std::uint32_t) : 0);
      try {
        t.add_node(i, static_cast<std::uint32_t>(i % 4), n, name, deps, deps + count);
      } catch (const util::ConfigError& e) {
        r.error = e.what();
        break;
      }
    }
    r.peak = g_peak.load() - before;
  }
  return r;
}

// After every node the reader accepts, and while an array grows (its old
// one held with the new), the trace holds no more than the budget, by the
// allocator's count (2 KiB allowed for the allocator's rounding and the
// Trace's small members).  It is refused only where it needs that much: an
// array grown to twice its size, or to what is left, holds at most twice
// what is written in it, and while one is copied its old array is at most
// as much again, so a trace that writes W bytes is read within 4 W, and one
// refused at budget B had written more than B / 4 with the node it refused.
TEST(Trace, ReadingStaysWithinItsBudget) {
  const Read whole = read(UINT64_MAX);
  ASSERT_EQ(whole.nodes, kNodes);
  ASSERT_GT(whole.peak, static_cast<std::int64_t>(whole.written)) << "the allocator is not counted";
  EXPECT_EQ(read(4 * whole.written).nodes, kNodes);
  std::size_t refused = 0;
  for (std::uint64_t budget = 1000; budget < 4 * whole.written; budget = budget * 5 / 4) {
    const Read r = read(budget);
    EXPECT_LE(r.peak, static_cast<std::int64_t>(budget) + 2048) << "budget " << budget << ", " << r.nodes << " nodes";
    if (r.nodes == kNodes) continue;
    ++refused;
    EXPECT_GT(4 * r.written, budget) << "refused early, at node " << r.nodes;
    EXPECT_NE(r.error.find("engine.memory_limit_gib: reading the trace t.json would outgrow"), std::string::npos)
        << r.error;
  }
  EXPECT_GT(refused, 10u);
}

}  // namespace
}  // namespace fabricsim::workload
