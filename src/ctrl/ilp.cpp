// The ILP optimum of the two-tier path assignment (two_tier.hpp) through
// COIN-OR CBC: min alpha s.t. one spine per commodity and at most alpha
// flows on every ToR->spine and spine->ToR link (ml-routing spec 4.3).
#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "fabricsim/ctrl/two_tier.hpp"
#include "cbc_setup.hpp"

namespace fabricsim::ctrl {

namespace detail {
// two_tier.cpp: a lower bound on any assignment's max load.
std::uint32_t load_lower_bound(const Problem& p);
}  // namespace detail

Assignment ilp(const Problem& p, double time_limit_s, IlpStart how) {
  // The greedy assignment: the answer when CBC has none.
  Assignment start = greedy(p, GreedyOrder::TorDegreeSorted);  // validates p
  const std::size_t n = p.commodities.size();
  // CBC's first incumbent (and alpha's upper bound): the better of Greedy and
  // the edge colouring.  From Greedy alone CBC must find a perfect colouring
  // itself where every ToR is at full degree, which took it over 30 s
  // already at 32 ToRs x 16 spines (64 x 32 is the paper's fabric).
  const bool cold = how == IlpStart::Cold;
  const Assignment coloured = cold ? start : edge_coloring(p);
  const Assignment& incumbent = coloured.max_load < start.max_load ? coloured : start;
  // An incumbent at the lower bound is optimal, proven: CBC would only
  // confirm it, which still took it 47 s on 64 ToRs x 32 spines with every
  // ToR at full degree (2,048 commodities, a fully degenerate LP).  Without
  // single failed links this is always the case (Koenig); with them the
  // colouring's repair and Greedy can both miss, and CBC searches.
  const std::uint32_t lower_bound = detail::load_lower_bound(p);
  if (!cold && incumbent.max_load <= lower_bound) {
    Assignment a = incumbent;
    a.optimal = true;
    a.solved = true;
    return a;
  }

  // Columns: x[c][s] for every routable commodity c and spine s it can use,
  // then alpha.  Rows: one per routable commodity (sum x = 1), then one per
  // link some column uses (sum x - alpha <= 0).
  std::vector<std::uint32_t> col_commodity, col_spine;
  std::vector<int> row_of_commodity(n, -1);
  int rows = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Commodity& c = p.commodities[i];
    for (std::uint32_t s = 0; s < p.spines; ++s) {
      if (!p.usable(c, s)) continue;
      if (row_of_commodity[i] < 0) row_of_commodity[i] = rows++;
      col_commodity.push_back(static_cast<std::uint32_t>(i));
      col_spine.push_back(s);
    }
  }
  if (col_commodity.empty()) {  // nothing routable: nothing to decide (and no column for CBC)
    start.optimal = true;
    return start;
  }
  const std::size_t links = std::size_t{p.tors} * p.spines;
  std::vector<int> up_row(links, -1), down_row(links, -1);  // ToR-major: [t * spines + s]
  std::vector<int> row_index, col_index;
  std::vector<double> element;
  const auto x_count = static_cast<int>(col_commodity.size());
  const int alpha = x_count;
  for (int j = 0; j < x_count; ++j) {
    const Commodity& c = p.commodities[col_commodity[j]];
    const std::size_t up = std::size_t{c.src_tor} * p.spines + col_spine[j];
    const std::size_t down = std::size_t{c.dst_tor} * p.spines + col_spine[j];
    if (up_row[up] < 0) up_row[up] = rows++;
    if (down_row[down] < 0) down_row[down] = rows++;
    for (int r : {row_of_commodity[col_commodity[j]], up_row[up], down_row[down]}) {
      row_index.push_back(r);
      col_index.push_back(j);
      element.push_back(1.0);
    }
  }
  const int commodity_rows =
      static_cast<int>(n) - static_cast<int>(std::count(row_of_commodity.begin(), row_of_commodity.end(), -1));
  for (int r = commodity_rows; r < rows; ++r) {
    row_index.push_back(r);
    col_index.push_back(alpha);
    element.push_back(-1.0);
  }
  const CoinPackedMatrix matrix(true, row_index.data(), col_index.data(), element.data(),
                                static_cast<CoinBigIndex>(element.size()));

  const int cols = x_count + 1;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> col_lb(static_cast<std::size_t>(cols), 0.0), col_ub(static_cast<std::size_t>(cols), 1.0);
  std::vector<double> objective(static_cast<std::size_t>(cols), 0.0);
  // alpha between the lower bound (ceil(degree / usable spines) at some ToR;
  // the LP relaxation alone gives it unrounded) and the incumbent's max load,
  // integer.
  col_lb[alpha] = cold ? 0.0 : static_cast<double>(lower_bound);
  col_ub[alpha] = cold ? static_cast<double>(n) : static_cast<double>(incumbent.max_load);
  objective[alpha] = 1.0;
  std::vector<double> row_lb(static_cast<std::size_t>(rows), -inf), row_ub(static_cast<std::size_t>(rows), 0.0);
  for (int r = 0; r < commodity_rows; ++r) row_lb[r] = row_ub[r] = 1.0;

  OsiClpSolverInterface solver;
  detail::load_integer_program(solver, matrix, col_lb, col_ub, objective, row_lb, row_ub);
  CbcModel model(solver);
  detail::quiet_integer_model(model);  // (the objective is integer)
  if (time_limit_s > 0) {
    model.setMaximumSeconds(time_limit_s);
    // CBC checks its limit between nodes only, and the root LP alone takes
    // about 10 s on 64 ToRs x 32 spines x 1,800 commodities: CLP gets the
    // limit too.  A stopped LP can make CBC claim the optimum, hence the
    // clock below.
    if (auto* clp = dynamic_cast<OsiClpSolverInterface*>(model.solver())) {
      clp->getModelPtr()->setMaximumSeconds(time_limit_s);
    }
  }

  std::vector<double> initial(static_cast<std::size_t>(cols), 0.0);
  for (int j = 0; j < x_count; ++j)
    if (incumbent.spine[col_commodity[j]] == static_cast<std::int32_t>(col_spine[j])) initial[j] = 1.0;
  initial[alpha] = static_cast<double>(incumbent.max_load);
  if (!cold) model.setBestSolution(initial.data(), cols, initial[alpha], true);

  const auto started = std::chrono::steady_clock::now();
  model.branchAndBound();
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // Proven only if no limit cut a solve short (a solve stopped by the limit
  // means the limit had passed).
  const bool proven =
      model.isProvenOptimal() && !model.isSecondsLimitReached() && !(time_limit_s > 0 && elapsed_s >= time_limit_s);

  const double* best = model.bestSolution();
  if (best == nullptr) {
    start.solved = false;
    start.optimal = false;
    return start;
  }
  std::vector<std::int32_t> spine(n, kNoSpine);
  for (int j = 0; j < x_count; ++j)
    if (best[j] > 0.5) spine[col_commodity[j]] = static_cast<std::int32_t>(col_spine[j]);
  for (std::size_t i = 0; i < n; ++i) {
    if (row_of_commodity[i] >= 0 && spine[i] == kNoSpine) {
      // Only a numerical failure leaves a routable commodity without a
      // spine: keep the incumbent then.
      Assignment a = incumbent;
      a.optimal = false;
      return a;
    }
  }
  Assignment a;
  a.max_load = max_load(p, spine);  // from the assignment, not from CBC's alpha
  a.unroutable = static_cast<std::uint32_t>(n) - static_cast<std::uint32_t>(commodity_rows);
  a.spine = std::move(spine);
  a.optimal = proven;
  a.solved = true;
  return a;
}

}  // namespace fabricsim::ctrl
