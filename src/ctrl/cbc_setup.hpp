// What the ctrl layer's CBC users share (ilp.cpp: the path controllers'
// min-max ILP; vclos.cpp: vClos-ILP): an all-integer program loaded into a
// silenced CLP, and a silenced CbcModel over it.  Private to src/ctrl/.
#pragma once

#include <CbcModel.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <vector>

namespace fabricsim::ctrl::detail {

/// CBC and CLP write their logs to stdout by default; fabricsim's stdout
/// carries its own output only.
inline void silence(OsiSolverInterface& solver) {
  solver.messageHandler()->setLogLevel(0);
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);
}

/// Loads min objective . x subject to row_lb <= matrix x <= row_ub,
/// col_lb <= x <= col_ub, every column integer, into a silenced `solver`.
inline void load_integer_program(OsiClpSolverInterface& solver, const CoinPackedMatrix& matrix,
                                 const std::vector<double>& col_lb, const std::vector<double>& col_ub,
                                 const std::vector<double>& objective, const std::vector<double>& row_lb,
                                 const std::vector<double>& row_ub) {
  silence(solver);
  solver.loadProblem(matrix, col_lb.data(), col_ub.data(), objective.data(), row_lb.data(), row_ub.data());
  for (int j = 0; j < static_cast<int>(col_lb.size()); ++j) solver.setInteger(j);
}

/// Silences a model over such a program; its objective takes integer
/// values only, so any better solution is better by at least 1.
inline void quiet_integer_model(CbcModel& model) {
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  silence(*model.solver());
  model.setCutoffIncrement(0.999);
}

}  // namespace fabricsim::ctrl::detail
