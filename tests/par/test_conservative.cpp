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
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/util/error.hpp"

using fabricsim::core::SimTime;
namespace core = fabricsim::core;
namespace par = fabricsim::par;

namespace {

constexpr std::int64_t kL = 20'000;  // ps
constexpr int kHops = 30;

int failures = 0;
void check(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAIL: %s\n", rank, what);
    ++failures;
  }
}

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
  MPI_Init(&argc, &argv);
  {
    par::Comm comm(MPI_COMM_WORLD);
    if (comm.size() != 3) {
      if (comm.is_root()) std::fprintf(stderr, "run with 3 ranks\n");
      MPI_Finalize();
      return 2;
    }
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

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    failures = all;
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
