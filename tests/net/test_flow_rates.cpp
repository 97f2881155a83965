// Tests of the flow-level rate solver (net::FlowRates, flow_rates.hpp).
//
// The expectations come from outside the implementation:
//   * hand-derived max-min shares of small instances (three flows over two
//     links, a parking-lot chain, caps, a flow split over two paths),
//   * an independent exact solver written here: the textbook progressive
//     filling in rational arithmetic, rescanning every link each round (no
//     heap, no incremental loads, no components), on random tiny instances,
//   * the defining property of max-min fairness on larger random instances
//     (feasible, and every flow at its cap or with a bottleneck link:
//     saturated, no flow on it faster),
//   * bit-for-bit equality of incremental recomputation with a fresh solver
//     recomputing from scratch after random sequences of starts and ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

#include "fabricsim/net/flow_rates.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim {
namespace {

using net::FlowId;
using net::FlowLink;
using net::FlowRates;
using net::kNoRateCap;
using net::LinkId;

// ------------------------------------------------ an exact reference solver

/// A fraction of int64s in lowest terms (denominator > 0).  The instances
/// are tiny, so overflow would be a test bug: it is checked.
struct Q {
  std::int64_t n = 0;
  std::int64_t d = 1;
  static Q make(std::int64_t num, std::int64_t den) {
    if (den < 0) {
      num = -num;
      den = -den;
    }
    const std::int64_t g = std::gcd(num < 0 ? -num : num, den);
    return g > 1 ? Q{num / g, den / g} : Q{num, den};
  }
  static std::int64_t mul(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) ADD_FAILURE() << "rational overflow in the reference solver";
    return r;
  }
  friend Q operator+(Q a, Q b) {
    const std::int64_t g = std::gcd(a.d, b.d);
    return make(mul(a.n, b.d / g) + mul(b.n, a.d / g), mul(a.d, b.d / g));
  }
  friend Q operator-(Q a, Q b) { return a + Q{-b.n, b.d}; }
  friend Q operator*(Q a, Q b) { return make(mul(a.n, b.n), mul(a.d, b.d)); }
  friend Q operator/(Q a, Q b) { return make(mul(a.n, b.d), mul(a.d, b.n)); }
  friend bool operator<(Q a, Q b) { return mul(a.n, b.d) < mul(b.n, a.d); }
  double value() const { return static_cast<double>(n) / static_cast<double>(d); }
};

struct RefFlow {
  std::vector<std::pair<LinkId, Q>> links;  // (link, weight)
  std::optional<Q> cap;
};

/// Textbook progressive filling: every round raises all unfrozen flows by
/// the largest common increment any link or cap allows, then freezes the
/// flows of saturated links and the flows at their caps.
std::vector<Q> reference_max_min(const std::vector<Q>& capacity, const std::vector<RefFlow>& flows) {
  std::vector<Q> rate(flows.size());
  std::vector<bool> frozen(flows.size(), false);
  for (;;) {
    std::optional<Q> step;
    auto consider = [&](Q s) {
      if (!step || s < *step) step = s;
    };
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      Q load;
      Q unfrozen;
      for (std::size_t f = 0; f < flows.size(); ++f)
        for (const auto& [link, w] : flows[f].links)
          if (link == l) {
            load = load + w * rate[f];
            if (!frozen[f]) unfrozen = unfrozen + w;
          }
      if (unfrozen.n != 0) consider((capacity[l] - load) / unfrozen);
    }
    for (std::size_t f = 0; f < flows.size(); ++f)
      if (!frozen[f] && flows[f].cap) consider(*flows[f].cap - rate[f]);
    if (!step) break;
    for (std::size_t f = 0; f < flows.size(); ++f)
      if (!frozen[f]) rate[f] = rate[f] + *step;
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      Q load;
      for (std::size_t f = 0; f < flows.size(); ++f)
        for (const auto& [link, w] : flows[f].links)
          if (link == l) load = load + w * rate[f];
      if (!(load < capacity[l]))
        for (std::size_t f = 0; f < flows.size(); ++f)
          for (const auto& [link, w] : flows[f].links)
            if (link == l) frozen[f] = true;
    }
    for (std::size_t f = 0; f < flows.size(); ++f)
      if (flows[f].cap && !(rate[f] < *flows[f].cap)) frozen[f] = true;
  }
  return rate;
}

// ------------------------------------------------------------------ helpers

std::vector<FlowLink> path(std::initializer_list<LinkId> links) {
  std::vector<FlowLink> out;
  for (LinkId l : links) out.push_back(FlowLink{l, 1.0});
  return out;
}

/// Feasibility and the bottleneck property, with a relative tolerance.
void expect_max_min(const FlowRates& fr, const std::vector<FlowId>& ids) {
  constexpr double kTol = 1e-9;
  for (LinkId l = 0; l < fr.link_count(); ++l)
    EXPECT_LE(fr.load(l), fr.capacity(l) * (1 + kTol)) << "link " << l << " overloaded";
  for (FlowId f : ids) {
    const double x = fr.rate(f);
    EXPECT_GT(x, 0.0);
    if (x >= fr.cap(f) * (1 - kTol)) continue;
    bool bottleneck = false;
    for (const FlowLink& fl : fr.links(f)) {
      if (fr.load(fl.link) < fr.capacity(fl.link) * (1 - kTol)) continue;
      bool fastest = true;
      for (FlowId g : ids)
        for (const FlowLink& gl : fr.links(g))
          if (gl.link == fl.link && fr.rate(g) > x * (1 + kTol)) fastest = false;
      bottleneck = bottleneck || fastest;
    }
    EXPECT_TRUE(bottleneck) << "flow " << f << " at " << x << " has no bottleneck link";
  }
}

std::set<FlowId> as_set(std::span<const FlowId> s) { return {s.begin(), s.end()}; }

// ---------------------------------------------------------- known instances

TEST(FlowRates, ThreeFlowsOverTwoLinks) {
  // Link 0 (10 Gb/s) carries flows 0 and 1; link 1 (4 Gb/s) flows 1 and 2.
  // Link 1 saturates first at 2 each; flow 0 then takes the rest of link 0.
  FlowRates fr({10.0, 4.0});
  fr.add(0, path({0}));
  fr.add(1, path({0, 1}));
  fr.add(2, path({1}));
  EXPECT_EQ(as_set(fr.recompute()), (std::set<FlowId>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(fr.rate(0), 8.0);
  EXPECT_DOUBLE_EQ(fr.rate(1), 2.0);
  EXPECT_DOUBLE_EQ(fr.rate(2), 2.0);
  EXPECT_DOUBLE_EQ(fr.load(0), 10.0);
  EXPECT_DOUBLE_EQ(fr.load(1), 4.0);
  // Flow 2 ends: flow 1 has link 1 to itself, 4; flow 0 gets the other 6.
  fr.remove(2);
  EXPECT_EQ(as_set(fr.recompute()), (std::set<FlowId>{0, 1}));
  EXPECT_DOUBLE_EQ(fr.rate(0), 6.0);
  EXPECT_DOUBLE_EQ(fr.rate(1), 4.0);
  // A third flow on link 0: 10/3 each, below link 1's 4.
  fr.add(2, path({0}));
  EXPECT_EQ(as_set(fr.recompute()), (std::set<FlowId>{0, 1, 2}));
  for (FlowId f = 0; f < 3; ++f) EXPECT_DOUBLE_EQ(fr.rate(f), 10.0 / 3) << f;
  EXPECT_TRUE(fr.recompute().empty());  // nothing changed since
}

TEST(FlowRates, ParkingLot) {
  // A chain of three 1 Gb/s links; one flow over all three and one over
  // each link: everyone gets 1/2.
  FlowRates fr({1.0, 1.0, 1.0});
  fr.add(0, path({0, 1, 2}));
  for (FlowId f = 1; f <= 3; ++f) fr.add(f, path({static_cast<LinkId>(f - 1)}));
  fr.recompute();
  for (FlowId f = 0; f <= 3; ++f) EXPECT_DOUBLE_EQ(fr.rate(f), 0.5) << f;
}

TEST(FlowRates, CapsFreeBandwidthForOthers) {
  FlowRates fr({10.0});
  fr.add(0, path({0}), 1.0);
  fr.add(1, path({0}));
  fr.recompute();
  EXPECT_DOUBLE_EQ(fr.rate(0), 1.0);
  EXPECT_DOUBLE_EQ(fr.rate(1), 9.0);
  // A cap above the fair share does not bind.
  fr.set_cap(0, 7.0);
  EXPECT_EQ(as_set(fr.recompute()), (std::set<FlowId>{0, 1}));
  EXPECT_DOUBLE_EQ(fr.rate(0), 5.0);
  EXPECT_DOUBLE_EQ(fr.rate(1), 5.0);
  // A flow over no links gets its cap (or infinity).
  fr.add(2, {}, 3.0);
  fr.add(3, {});
  EXPECT_EQ(as_set(fr.recompute()), (std::set<FlowId>{2, 3}));
  EXPECT_DOUBLE_EQ(fr.rate(2), 3.0);
  EXPECT_EQ(fr.rate(3), kNoRateCap);
}

TEST(FlowRates, SplitFlow) {
  // Flow 0 is split half and half over links 0 (10 Gb/s) and 1 (4 Gb/s);
  // flow 1 uses link 0, flow 2 link 1.  Link 1 saturates when
  // t/2 + t = 4: t = 8/3 for flows 0 and 2; flow 1 gets 10 - 4/3 = 26/3.
  FlowRates fr({10.0, 4.0});
  fr.add(0, std::vector<FlowLink>{{0, 0.5}, {1, 0.5}});
  fr.add(1, path({0}));
  fr.add(2, path({1}));
  fr.recompute();
  EXPECT_NEAR(fr.rate(0), 8.0 / 3, 1e-12);
  EXPECT_NEAR(fr.rate(2), 8.0 / 3, 1e-12);
  EXPECT_NEAR(fr.rate(1), 26.0 / 3, 1e-12);
  // Repeated links of two paths merge into one entry.
  fr.add(3, std::vector<FlowLink>{{1, 0.25}, {0, 0.5}, {1, 0.25}});
  ASSERT_EQ(fr.links(3).size(), 2u);
  EXPECT_EQ(fr.links(3)[0], (FlowLink{0, 0.5}));
  EXPECT_EQ(fr.links(3)[1], (FlowLink{1, 0.5}));
}

TEST(FlowRates, OnlyTheTouchedComponentIsRecomputed) {
  // Two groups of flows on disjoint links: a change in one leaves the other
  // untouched and unreported.
  FlowRates fr({10.0, 10.0, 10.0, 10.0});
  fr.add(0, path({0, 1}));
  fr.add(1, path({1}));
  fr.add(2, path({2, 3}));
  fr.add(3, path({3}));
  fr.recompute();
  const auto before = fr.stats();
  fr.add(4, path({0}));
  EXPECT_EQ(as_set(fr.recompute()), (std::set<FlowId>{4}));  // 0 and 1 stay at 5
  EXPECT_EQ(fr.stats().flows_touched - before.flows_touched, 3u);
  // Flow 1 ends: flow 0 is still held at 5 by link 0, shared with flow 4;
  // nothing changes, and nothing is refilled: link 1 (flow 1's) froze no
  // flow that is left, and it no longer saturates.
  fr.remove(1);
  EXPECT_TRUE(fr.recompute().empty());
  EXPECT_DOUBLE_EQ(fr.rate(0), 5.0);
  EXPECT_DOUBLE_EQ(fr.rate(2), 5.0);
  EXPECT_EQ(fr.stats().flows_touched - before.flows_touched, 3u);
}

// ------------------------------------------------- random vs the reference

TEST(FlowRates, RandomTinyInstancesMatchTheExactSolver) {
  util::RandomStream rng(7, 1);
  for (int trial = 0; trial < 400; ++trial) {
    const auto links = static_cast<std::uint32_t>(1 + rng.below(5));
    const auto flows = static_cast<std::uint32_t>(1 + rng.below(7));
    std::vector<Q> cap_q(links);
    std::vector<double> cap(links);
    for (std::uint32_t l = 0; l < links; ++l) {
      const auto c = static_cast<std::int64_t>(1 + rng.below(20));
      cap_q[l] = Q::make(c, 1);
      cap[l] = static_cast<double>(c);
    }
    FlowRates fr(cap);
    std::vector<RefFlow> ref(flows);
    std::vector<FlowId> ids;
    for (std::uint32_t f = 0; f < flows; ++f) {
      std::vector<FlowLink> fl;
      // One to three links; a third of the flows split 1/2 + 1/2 or
      // 1/3 + 2/3 over two links.
      const std::uint64_t kind = rng.below(3);
      const auto a = static_cast<LinkId>(rng.below(links));
      if (kind == 0 && links > 1) {
        auto b = static_cast<LinkId>(rng.below(links - 1));
        if (b >= a) ++b;
        const std::int64_t third = rng.below(2) == 0 ? 2 : 3;
        fl = {{a, 1.0 / static_cast<double>(third)}, {b, 1.0 - 1.0 / static_cast<double>(third)}};
        ref[f].links = {{a, Q::make(1, third)}, {b, Q::make(third - 1, third)}};
      } else {
        std::set<LinkId> chosen{a};
        const auto extra = rng.below(3);
        for (std::uint64_t k = 0; k < extra; ++k) chosen.insert(static_cast<LinkId>(rng.below(links)));
        for (LinkId l : chosen) {
          fl.push_back({l, 1.0});
          ref[f].links.push_back({l, Q::make(1, 1)});
        }
      }
      double flow_cap = kNoRateCap;
      if (rng.below(4) == 0) {
        const auto c = static_cast<std::int64_t>(1 + rng.below(8));
        flow_cap = static_cast<double>(c);
        ref[f].cap = Q::make(c, 1);
      }
      fr.add(f, fl, flow_cap);
      ids.push_back(f);
    }
    fr.recompute();
    const std::vector<Q> expected = reference_max_min(cap_q, ref);
    for (std::uint32_t f = 0; f < flows; ++f)
      EXPECT_NEAR(fr.rate(f), expected[f].value(), 1e-9 * std::max(1.0, expected[f].value()))
          << "trial " << trial << " flow " << f;
    expect_max_min(fr, ids);
  }
}

TEST(FlowRates, RandomLargeInstancesAreMaxMinFair) {
  util::RandomStream rng(11, 2);
  for (int trial = 0; trial < 20; ++trial) {
    const std::uint32_t links = 40;
    std::vector<double> cap(links);
    for (double& c : cap) c = 1.0 + static_cast<double>(rng.below(400));
    FlowRates fr(cap);
    std::vector<FlowId> ids;
    for (FlowId f = 0; f < 150; ++f) {
      std::set<LinkId> chosen;
      const auto len = 1 + rng.below(5);
      for (std::uint64_t k = 0; k < len; ++k) chosen.insert(static_cast<LinkId>(rng.below(links)));
      std::vector<FlowLink> fl;
      for (LinkId l : chosen) fl.push_back({l, 1.0});
      if (fl.size() >= 2 && rng.below(3) == 0) fl[0].weight = fl[1].weight = 0.5;  // two paths
      fr.add(f, fl, rng.below(5) == 0 ? 0.5 + static_cast<double>(rng.below(50)) : kNoRateCap);
      ids.push_back(f);
    }
    fr.recompute();
    expect_max_min(fr, ids);
  }
}

// -------------------------------------------- incremental == from scratch

TEST(FlowRates, IncrementalEqualsFromScratchBitForBit) {
  util::RandomStream rng(3, 4);
  const std::uint32_t links = 60;
  std::vector<double> cap(links);
  for (double& c : cap) c = 25.0 * static_cast<double>(1 + rng.below(16));  // 25..400 Gb/s
  struct Spec {
    std::vector<FlowLink> links;
    double cap = kNoRateCap;
  };
  std::vector<Spec> spec(300);
  FlowRates fr(cap);
  std::vector<double> previous(spec.size(), -1.0);
  std::vector<FlowId> active;
  for (int step = 0; step < 3000; ++step) {
    // A batch of one to three starts or ends at the same instant.
    const auto batch = 1 + rng.below(3);
    std::set<FlowId> started;
    for (std::uint64_t b = 0; b < batch; ++b) {
      if (!active.empty() && rng.below(8) == 0) {
        // A cap changes (up, down, or away).
        const FlowId id = active[rng.below(active.size())];
        spec[id].cap = rng.below(3) == 0 ? kNoRateCap : 1.0 + static_cast<double>(rng.below(100));
        fr.set_cap(id, spec[id].cap);
      } else if (!active.empty() && (rng.below(2) == 0 || active.size() > 120)) {
        const auto at = rng.below(active.size());
        fr.remove(active[at]);
        previous[active[at]] = -1.0;
        active.erase(active.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        FlowId id = 0;
        while (fr.active(id)) ++id;  // lowest free id, as a caller reusing slots would
        Spec& s = spec[id];
        s.links.clear();
        // Mostly short paths within a "pod" of 12 links, sometimes across:
        // several components come and go.
        const auto pod = rng.below(5) * 12;
        const auto len = 1 + rng.below(4);
        std::set<LinkId> chosen;
        for (std::uint64_t k = 0; k < len; ++k)
          chosen.insert(static_cast<LinkId>(rng.below(10) == 0 ? rng.below(links) : pod + rng.below(12)));
        for (LinkId l : chosen) s.links.push_back({l, 1.0});
        if (rng.below(4) == 0) {
          // Two paths: the first link on one of them, another link on the other.
          auto other = static_cast<LinkId>(pod + rng.below(12));
          while (chosen.count(other)) other = (other + 1) % links;
          s.links[0].weight = 0.5;
          s.links.push_back({other, 0.5});
        }
        s.cap = rng.below(6) == 0 ? 5.0 + static_cast<double>(rng.below(200)) : kNoRateCap;
        fr.add(id, s.links, s.cap);
        started.insert(id);
        active.push_back(id);
      }
    }
    const std::set<FlowId> changed = as_set(fr.recompute());
    // Every flow that started is reported, and every flow whose rate moved.
    for (FlowId id : active) {
      if (started.count(id) || fr.rate(id) != previous[id]) {
        EXPECT_TRUE(changed.count(id)) << "step " << step << ": flow " << id << " changed but was not reported";
      }
      previous[id] = fr.rate(id);
    }
    for (FlowId id : changed) EXPECT_TRUE(fr.active(id));
    if (step % 7 == 0) {
      // A fresh solver, flows added in another order, recomputed from scratch.
      FlowRates fresh(cap);
      std::vector<FlowId> order = active;
      std::reverse(order.begin(), order.end());
      for (FlowId id : order) fresh.add(id, spec[id].links, spec[id].cap);
      fresh.recompute_all();
      for (FlowId id : active) ASSERT_EQ(fr.rate(id), fresh.rate(id)) << "step " << step << ": flow " << id;
      // And the incremental solver's own from-scratch pass agrees too.
      EXPECT_TRUE(fr.recompute_all().empty()) << "step " << step;
      expect_max_min(fr, active);
    }
  }
  EXPECT_LT(fr.stats().flows_touched, fr.stats().recomputations * 120u);  // components, not everything
}

TEST(FlowRates, IncrementalEqualsFromScratchOnAFatTreeWithTies) {
  // A two-level fat tree with equal capacities: 64 hosts, 8 leaves, 4
  // spines; flows between random hosts over one random spine.  Equal
  // capacities and equal flow counts make many links saturate at exactly
  // the same level, where the lazy keys' history decides the last bits
  // (a link made dirty in mid-fill must get the key a fill from zero has).
  constexpr std::uint32_t kHosts = 256, kLeaves = 16, kSpines = 8, kPerLeaf = kHosts / kLeaves;
  // Links: host up [0, 64), host down [64, 128), leaf->spine, spine->leaf.
  const auto up = [](std::uint32_t h) { return static_cast<LinkId>(h); };
  const auto down = [](std::uint32_t h) { return static_cast<LinkId>(kHosts + h); };
  const auto to_spine = [](std::uint32_t leaf, std::uint32_t s) { return static_cast<LinkId>(2 * kHosts + leaf * kSpines + s); };
  const auto from_spine = [](std::uint32_t leaf, std::uint32_t s) {
    return static_cast<LinkId>(2 * kHosts + kLeaves * kSpines + leaf * kSpines + s);
  };
  const std::vector<double> cap(2 * kHosts + 2 * kLeaves * kSpines, 100.0);
  for (std::uint32_t flows : {250u, 600u}) {
    util::RandomStream rng(5, flows);
    std::vector<std::vector<FlowLink>> spec(flows);
    std::vector<double> flow_cap(flows, kNoRateCap);
    auto draw = [&](FlowId id) {
      const auto src = static_cast<std::uint32_t>(rng.below(kHosts));
      auto dst = static_cast<std::uint32_t>(rng.below(kHosts - 1));
      if (dst >= src) ++dst;
      spec[id] = path({up(src), down(dst)});
      if (src / kPerLeaf != dst / kPerLeaf) {
        const auto s = static_cast<std::uint32_t>(rng.below(kSpines));
        spec[id].push_back({to_spine(src / kPerLeaf, s), 1.0});
        spec[id].push_back({from_spine(dst / kPerLeaf, s), 1.0});
      }
      flow_cap[id] = rng.below(8) == 0 ? 5.0 * static_cast<double>(1 + rng.below(8)) : kNoRateCap;
    };
    FlowRates fr(cap);
    for (FlowId id = 0; id < flows; ++id) {
      draw(id);
      fr.add(id, spec[id], flow_cap[id]);
    }
    fr.recompute();
    std::vector<bool> on(flows, true);
    for (int step = 0; step < 400; ++step) {
      const auto batch = 1 + rng.below(3);
      for (std::uint64_t b = 0; b < batch; ++b) {
        const auto id = static_cast<FlowId>(rng.below(flows));
        if (on[id]) fr.remove(id);
        if (on[id] && rng.below(4) == 0) {
          on[id] = false;
          continue;
        }
        draw(id);
        fr.add(id, spec[id], flow_cap[id]);
        on[id] = true;
      }
      fr.recompute();
      if (step % 5 != 0) continue;
      FlowRates fresh(cap);
      for (FlowId id = flows; id-- > 0;)
        if (on[id]) fresh.add(id, spec[id], flow_cap[id]);
      fresh.recompute_all();
      for (FlowId id = 0; id < flows; ++id) {
        if (on[id]) {
          ASSERT_EQ(fr.rate(id), fresh.rate(id)) << flows << " flows, step " << step << ": flow " << id;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fabricsim
