// The conservative window protocol on a toy model, 3 ranks in a chain
// (0 - 1 - 2), lookahead L = 20 ns:
//  - a "ball" bounces 0 1 2 1 0 1 2 ... as remote records with delays
//    L + (hop mod 3) ns; every rank checks it saw the ball exactly at the
//    times and hops computed here, never in its past (the simulator refuses
//    an event scheduled in the past);
//  - rank 0 also ticks every 3 ns up to 3 us, all inside its part;
//  - rank 2 has one event at 10 us.
// After the ball stops (about 0.7 us) only rank 0 is busy: it must run its
// ticks to the end without a window per L (150 windows with one shared
// horizon); and rank 2's distance from rank 0 is two hops.
// Then a failure: rank 2's event at 1 us throws while rank 0 ticks; every
// rank must get the same SharedError (rank 2's message and exit code) at
// the end of that window, and rank 0 must stop before its ticks run out.
// Then a global step (issue 28, item 6; described below) and a refused one.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/util/error.hpp"
#include "mpi_check.hpp"

using fabricsim::core::SimTime;
namespace core = fabricsim::core;
namespace par = fabricsim::par;

namespace {

constexpr std::int64_t kL = 20'000;  // ps
constexpr int kHops = 30;

using mpi_check::check;

// Link ids: 0 = 0->1, 1 = 1->0, 2 = 1->2, 3 = 2->1; a record is owned by its link's receiver.
int bounce(int hop) {  // rank holding the ball after `hop` hops
  static const int seq[4] = {0, 1, 2, 1};
  return seq[hop % 4];
}
std::uint32_t link_between(int from, int to) {
  if (from == 0) return 0;
  if (from == 2) return 3;
  return to == 0 ? 1 : 2;
}

struct Toy {
  core::Simulator sim{3};
  par::RecordExchange* ex = nullptr;
  int rank = 0;
  std::vector<std::pair<std::int64_t, int>> balls;  // (time, hop) seen here
  int ticks = 0;
  core::Simulator::BindingId ball_b = 0, tick_b = 0;

  void on_ball(const core::Event& ev) {
    const int hop = static_cast<int>(ev.arg32);
    balls.emplace_back(sim.now().ps(), hop);
    if (hop == kHops) return;
    const int to = bounce(hop + 1);
    const SimTime at = sim.now() + SimTime::from_ps(kL + (hop % 3) * 1000);
    ex->post(core::RemoteRecord{core::EventKey{at, 0, static_cast<core::EntityId>(rank), 0}, link_between(rank, to),
                                static_cast<std::uint32_t>(hop + 1), 0, 0});
  }
  void on_tick(const core::Event&) {
    ++ticks;
    if (sim.now() < SimTime::from_ps(3'000'000))
      sim.schedule_bound(sim.now() + SimTime::from_ps(3000), 1, static_cast<core::EntityId>(rank), tick_b);
  }
};

}  // namespace

int main(int argc, char** argv) {
  return mpi_check::run(argc, argv, 3, [](const par::Comm& comm) {
    const int r = comm.rank();
    Toy toy;
    toy.rank = r;
    toy.ball_b = toy.sim.bind(core::Simulator::handler<Toy, &Toy::on_ball>(), &toy);
    toy.tick_b = toy.sim.bind(core::Simulator::handler<Toy, &Toy::on_tick>(), &toy);
    std::vector<std::int32_t> neighbours = r == 1 ? std::vector<std::int32_t>{0, 2} : std::vector<std::int32_t>{1};
    par::RecordExchange ex(comm, {1, 0, 2, 1}, neighbours);
    toy.ex = &ex;
    const auto distance = par::rank_distances(3, {{0, 1}, {2, 1}}, r);
    check(distance == (r == 0 ? std::vector<std::int32_t>{0, 1, 2}
                              : r == 1 ? std::vector<std::int32_t>{1, 0, 1} : std::vector<std::int32_t>{2, 1, 0}),
          "rank distances of the chain", r);
    if (r == 0) {
      toy.sim.schedule_bound(SimTime::from_ps(50'000), 0, 0, toy.ball_b, 0);
      toy.sim.schedule_bound(SimTime::zero(), 1, 0, toy.tick_b);
    }
    if (r == 2) toy.sim.schedule_bound(SimTime::from_ps(10'000'000), 1, 2, toy.tick_b);
    const auto st = par::run_conservative(
        toy.sim, comm, ex, distance, SimTime::from_ps(kL), SimTime::max(),
        [&](const core::RemoteRecord& rec) {
          toy.sim.schedule_bound(rec.key.time, 0, static_cast<core::EntityId>(r), toy.ball_b, rec.arg32);
        });
    // The ball's path, computed independently of the engine.
    std::vector<std::pair<std::int64_t, int>> expect;
    std::int64_t t = 50'000;
    for (int hop = 0; hop <= kHops; ++hop) {
      if (bounce(hop) == r) expect.emplace_back(t, hop);
      t += kL + (hop % 3) * 1000;
    }
    check(toy.balls == expect, "the ball at the expected times and hops", r);
    if (r == 0) check(toy.ticks == 1001, "rank 0 ran all 1001 ticks", r);
    if (r == 2) check(toy.ticks == 1, "rank 2 ran its event at 10 us", r);
    // The ball takes a window per hop at most; the ticks after it none each.
    check(st.windows <= kHops + 6, "no window per lookahead once only rank 0 is busy", r);
    if (r == 0) std::printf("windows %llu\n", static_cast<unsigned long long>(st.windows));

    // One rank fails: all of them learn it, with its message, and stop.
    Toy failing;
    failing.rank = r;
    failing.tick_b = failing.sim.bind(core::Simulator::handler<Toy, &Toy::on_tick>(), &failing);
    par::RecordExchange ex2(comm, {1, 0, 2, 1}, neighbours);
    failing.ex = &ex2;
    if (r == 0) failing.sim.schedule_bound(SimTime::zero(), 1, 0, failing.tick_b);
    if (r == 2)
      failing.sim.schedule(SimTime::from_ps(1'000'000), 0, 2, 2,
                           [](void*, const core::Event&) { throw fabricsim::util::UserError("boom", 7); }, nullptr);
    std::string caught;
    int code = 0;
    try {
      par::run_conservative(failing.sim, comm, ex2, distance, SimTime::from_ps(kL), SimTime::max(),
                            [](const core::RemoteRecord&) {});
    } catch (const fabricsim::util::SharedError& e) {
      caught = e.what();
      code = e.exit_code();
    }
    check(caught == "boom (rank 2)", "every rank gets the failing rank's message", r);
    check(code == 7, "every rank gets the failing rank's exit code", r);
    if (r == 0) check(failing.ticks > 0 && failing.ticks < 1001, "rank 0 stops soon after the failure", r);

    // A global step: rank 0, busy ticking, asks at 1 us for a step 100 ns
    // later (the bound is d_max L = 40 ns); it contributes 42 (a decision
    // input only it holds), and every rank applies "mode = the sum of the
    // contributions" and schedules an event on its own node at the step's
    // time.  Rank 2's node, two hops away, must see the decision there and
    // at its own event at 5 us; no rank may have processed anything at or
    // after the step's time before it.  Run on 3 ranks, and on one rank
    // (MPI_COMM_SELF) with rank 0's events only: the same step time.
    struct Stepper : par::GlobalSteps {
      core::Simulator sim{3};
      par::RecordExchange* ex = nullptr;
      int rank = 0;
      std::int64_t last_event = -1, step_at = -1, seen_at_step = -1, mode = 0, mode_at_5us = -1;
      bool early = false;
      int ticks = 0, ticks_after_step_before_apply = 0;
      core::Simulator::BindingId tick_b = 0, mark_b = 0, probe_b = 0;
      std::vector<std::int64_t> contribute(SimTime) override {
        return rank == 0 ? std::vector<std::int64_t>{42} : std::vector<std::int64_t>{};
      }
      void apply(SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>&) override {
        if (last_event >= t.ps()) early = true;
        step_at = t.ps();
        mode = 0;
        for (std::int64_t v : all) mode += v;
        sim.schedule_bound(t, 0, static_cast<core::EntityId>(rank), mark_b);
      }
      void on_tick(const core::Event&) {
        last_event = sim.now().ps();
        ++ticks;
        if (step_at < 0 && sim.now().ps() >= 1'100'000) ++ticks_after_step_before_apply;
        if (sim.now().ps() == 999'000) ex->request_step(sim.now() + SimTime::from_ps(100'000));
        if (sim.now() < SimTime::from_ps(3'000'000))
          sim.schedule_bound(sim.now() + SimTime::from_ps(3000), 1, static_cast<core::EntityId>(rank), tick_b);
      }
      void on_mark(const core::Event&) { last_event = seen_at_step = sim.now().ps(); }
      void on_probe(const core::Event&) {
        last_event = sim.now().ps();
        mode_at_5us = mode;
      }
    };
    const auto run_steps = [&](const par::Comm& c, const std::vector<std::int32_t>& dist,
                               std::vector<std::int32_t> owners, std::vector<std::int32_t> nbrs, Stepper& st_) {
      st_.rank = c.size() == 1 ? 0 : r;
      st_.tick_b = st_.sim.bind(core::Simulator::handler<Stepper, &Stepper::on_tick>(), &st_);
      st_.mark_b = st_.sim.bind(core::Simulator::handler<Stepper, &Stepper::on_mark>(), &st_);
      st_.probe_b = st_.sim.bind(core::Simulator::handler<Stepper, &Stepper::on_probe>(), &st_);
      par::RecordExchange exs(c, std::move(owners), std::move(nbrs));
      st_.ex = &exs;
      if (st_.rank == 0) st_.sim.schedule_bound(SimTime::zero(), 1, 0, st_.tick_b);
      if (c.size() > 1 && r == 2) st_.sim.schedule_bound(SimTime::from_ps(5'000'000), 1, 2, st_.probe_b);
      return par::run_conservative(st_.sim, c, exs, dist, SimTime::from_ps(kL), SimTime::max(),
                                   [](const core::RemoteRecord&) {}, {}, &st_);
    };
    Stepper stepper;
    const auto sst = run_steps(comm, distance, {1, 0, 2, 1}, neighbours, stepper);
    check(sst.global_steps == 1, "one global step", r);
    check(stepper.step_at == 1'099'000, "the step at the requested time on every rank", r);
    check(!stepper.early, "no rank past the step's time before it", r);
    check(stepper.seen_at_step == 1'099'000, "each rank's node acts at the step's time", r);
    check(stepper.mode == 42, "every rank applies the decision of rank 0's contribution", r);
    if (r == 2) check(stepper.mode_at_5us == 42, "rank 2's later event sees the decision", r);
    if (r == 0) check(stepper.ticks == 1001 && stepper.ticks_after_step_before_apply == 0,
                      "rank 0 ticks on after the step, none past it before", r);
    if (r == 0) {
      par::Comm self(MPI_COMM_SELF);
      Stepper alone;
      const auto ast = run_steps(self, {0}, {0, 0, 0, 0}, {}, alone);
      check(ast.global_steps == 1 && alone.step_at == stepper.step_at && alone.mode == 42 &&
                alone.seen_at_step == stepper.seen_at_step && alone.ticks == stepper.ticks,
            "on one rank: the same step at the same time", r);
    }

    // A request closer than d_max L (40 ns) is refused on every rank.
    struct Hasty : par::GlobalSteps {
      core::Simulator sim{3};
      par::RecordExchange* ex = nullptr;
      std::vector<std::int64_t> contribute(SimTime) override { return {}; }
      void apply(SimTime, const std::vector<std::int64_t>&, const std::vector<std::int64_t>&) override {}
      void on_event(const core::Event&) { ex->request_step(sim.now() + SimTime::from_ps(30'000)); }
    };
    Hasty hasty;
    par::RecordExchange ex3(comm, {1, 0, 2, 1}, neighbours);
    hasty.ex = &ex3;
    const auto hb = hasty.sim.bind(core::Simulator::handler<Hasty, &Hasty::on_event>(), &hasty);
    if (r == 1) hasty.sim.schedule_bound(SimTime::from_ps(7000), 0, 1, hb);
    std::string refused;
    try {
      par::run_conservative(hasty.sim, comm, ex3, distance, SimTime::from_ps(kL), SimTime::max(),
                            [](const core::RemoteRecord&) {}, {}, &hasty);
    } catch (const fabricsim::util::SharedError& e) {
      refused = e.what();
    }
    check(refused.find("less than 40000 ps after now") != std::string::npos && refused.find("(rank 1)") != std::string::npos,
          "a step closer than the bound is refused on every rank", r);

  });
}
