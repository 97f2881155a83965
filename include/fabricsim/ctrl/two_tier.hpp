// Central path assignment on a two-tier Clos (leaf-spine): the routing
// paper's controllers (ml-routing spec sections 3-4).  A pure layer: a
// problem is ToRs, spines, which ToR-spine links are live and the
// commodities (inter-ToR flows); an assignment is one spine per commodity.
// The simulation side (the routing-controller workload, src/app) turns a
// spine into a route and pins it through the route store.
//
// Loads are counted in flows on the directed ToR->spine and spine->ToR
// links only (host links are ignored, as in the paper).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::ctrl {

/// One inter-ToR commodity.  `src_nic` / `dst_nic` / `src_tor_id` are the
/// ids the ECMP hash reads (the simulator's endpoint and node ids) and the
/// annealing's per-destination state; the algorithms read only the ToR
/// indices otherwise.
struct Commodity {
  std::uint32_t src_tor = 0;  // 0..tors-1
  std::uint32_t dst_tor = 0;  // 0..tors-1, != src_tor
  std::int32_t src_nic = 0;
  std::int32_t dst_nic = 0;
  std::int32_t src_tor_id = 0;  // the source ToR's id for the ECMP hash
};

struct Problem {
  std::uint32_t tors = 0;
  std::uint32_t spines = 0;
  /// Per directed link, 1 = live; empty = all live.  up[t * spines + s]:
  /// ToR t -> spine s; down[s * tors + t]: spine s -> ToR t.
  std::vector<std::uint8_t> up_live;
  std::vector<std::uint8_t> down_live;
  std::vector<Commodity> commodities;

  bool up(std::uint32_t t, std::uint32_t s) const { return up_live.empty() || up_live[t * spines + s] != 0; }
  bool down(std::uint32_t s, std::uint32_t t) const { return down_live.empty() || down_live[s * tors + t] != 0; }
  /// Whether commodity c can use spine s (both of its links live).
  bool usable(const Commodity& c, std::uint32_t s) const { return up(c.src_tor, s) && down(s, c.dst_tor); }
  /// Spines all of whose links are live, ascending.
  std::vector<std::uint32_t> live_spines() const;
};

/// Throws std::invalid_argument for a malformed problem (an index out of
/// range, a commodity within one ToR, mask sizes that do not match).
void validate(const Problem& p);

inline constexpr std::int32_t kNoSpine = -1;

struct Assignment {
  /// Per commodity, the spine, or kNoSpine where no live spine serves it.
  std::vector<std::int32_t> spine;
  /// max over ToR-spine links of the flows assigned to it (max_load()).
  std::uint32_t max_load = 0;
  /// The ILP: true when CBC proved the optimum; the exact combinatorial
  /// algorithms (edge colouring on a full live spine set) set it too.
  bool optimal = false;
  /// The ILP: false when CBC found no feasible assignment within its time
  /// limit (spine then holds the fallback's assignment, see ilp()).
  bool solved = true;
  /// Commodities with no live spine.
  std::uint32_t unroutable = 0;
};

/// L(e) per link and the max: recomputed from scratch (for tests and
/// reports).  Entries with kNoSpine add nothing.
std::uint32_t max_load(const Problem& p, const std::vector<std::int32_t>& spine);

enum class GreedyOrder : std::uint8_t {
  Input,            // the paper's Algorithm 1 in the order given
  TorDegreeSorted,  // the released code's McvlcRoutingStrategy order
};

/// Algorithm 1: each commodity in turn takes the usable spine with the
/// least path congestion max(L(src->s), L(s->dst)), ties to the lowest
/// spine id (strict <).  TorDegreeSorted: groups a_t (source ToR t) and
/// b_t (destination ToR t) by size descending, ties by the string key
/// ("a_10" < "a_2", as the code sorts), commodities inside a group by
/// index.  Run per connected component of the conflict graph (same source
/// or destination ToR), which in two tiers gives the same result as one
/// sequential pass in the same order.
Assignment greedy(const Problem& p, GreedyOrder order);

/// Edge colouring of the bipartite multigraph (source side ToR-, destination
/// side ToR+, one edge per commodity) with Delta colours (Koenig), colour i
/// -> the i-th live spine mod |live|: max load ceil(Delta / |live|), the
/// optimum in two tiers.  With single failed links (not whole spines) a
/// commodity whose colour's spine it cannot use is moved greedily to its
/// least loaded usable spine (optimal is then false).
Assignment edge_coloring(const Problem& p);

/// Hedera-style simulated annealing: the state maps each destination NIC to
/// a spine index (all flows to a destination share it); initial: the NIC's
/// position under its ToR mod |live|; moves: p = 0.5 swap the spines of two
/// random destinations, else swap two destinations under one ToR; energy:
/// the sum of the loads of the links at the maximum load; T0 = 1000,
/// T <- 0.99 T until T <= 0.1; accept better, else with exp((E - E')/T).
/// Seeded (deterministic for a seed).
Assignment annealing(const Problem& p, std::uint64_t seed);

enum class IlpStart : std::uint8_t {
  /// CBC starts from the better of greedy and the edge colouring, and is
  /// not called when that meets the lower bound max over ToRs of
  /// ceil(degree / usable spines) (then optimal, proven by the bound): what
  /// a run uses (on the paper's 64 x 32 fabric CBC alone takes tens of
  /// seconds to confirm a perfect colouring).
  Heuristics,
  /// CBC alone, from no incumbent and alpha in [0, commodities]: an exact
  /// solver independent of the other algorithms, for tests.
  Cold,
};

/// min alpha s.t. one spine per commodity, flows on each ToR-spine link <=
/// alpha, through COIN-OR CBC.  `time_limit_s` > 0: CBC (and its LP solver)
/// stop there; the best integer solution found is returned with optimal =
/// false, or, with none, solved = false and the greedy assignment.
Assignment ilp(const Problem& p, double time_limit_s, IlpStart start = IlpStart::Heuristics);

/// The spec's ECMP (4.1): among the usable spines in ascending id, index
/// wang_jenkins(src_tor_id + nonSeq(src_nic, dst_nic)) mod count, with
/// nonSeq(s, d) = |wang_jenkins(s + wang_jenkins(d))| (Java int wrap-around).
Assignment ecmp(const Problem& p);

/// What the controllers read besides the problem (the [controller] keys).
struct Options {
  GreedyOrder greedy_order = GreedyOrder::TorDegreeSorted;
  std::uint64_t seed = 1;          // annealing
  double ilp_time_limit_s = 10.0;  // ilp
  IlpStart ilp_start = IlpStart::Heuristics;
};

/// The registry of controllers, by controller.algorithm (besides "none"):
/// one entry per algorithm above.  How to add one: docs/architecture.md.
struct Controller {
  const char* name;
  Assignment (*plan)(const Problem& p, const Options& o);
};
const std::vector<Controller>& controllers();
/// nullptr for an unknown name.
const Controller* find_controller(const std::string& name);

}  // namespace fabricsim::ctrl
