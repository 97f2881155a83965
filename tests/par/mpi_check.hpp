// What the MPI tests of tests/par share: a failed check is printed with its
// rank and counted; run() starts MPI, refuses a wrong number of ranks (exit
// 2), runs the body on every rank and exits 1 if any rank counted a failure.
#pragma once

#include <mpi.h>

#include <cstdio>

#include "fabricsim/par/comm.hpp"

namespace mpi_check {

inline int failures = 0;

inline void check(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAIL: %s\n", rank, what);
    ++failures;
  }
}

template <class Body>
int run(int argc, char** argv, int ranks, Body body) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    fabricsim::par::Comm comm(MPI_COMM_WORLD);
    if (comm.size() != ranks) {
      if (comm.is_root()) std::fprintf(stderr, "run with %d ranks\n", ranks);
      status = 2;
    } else {
      body(comm);
      int all = 0;
      MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      status = all == 0 ? 0 : 1;
    }
  }
  MPI_Finalize();
  return status;
}

}  // namespace mpi_check
