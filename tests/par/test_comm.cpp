// par::Comm's collectives over 3 ranks, each against the value computed
// here from every rank's input (which every rank can make: a function of
// the rank):
//  - reduce_min_to_root over more values than one piece (2^18), with
//    values above 2^31 and UINT32_MAX ("none"): Debian's MPICH 4.0.2 takes
//    MPI_MIN of MPI_UINT32_T as signed, so a test of small values alone
//    would not see it; the others' vectors are left as they were;
//  - gatherv and allgatherv with a different count per rank (one empty).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "fabricsim/par/comm.hpp"
#include "mpi_check.hpp"

namespace par = fabricsim::par;

namespace {

using mpi_check::check;

constexpr std::size_t kValues = (std::size_t{1} << 18) * 2 + 12345;  // three pieces

// Rank r's value i: UINT32_MAX at about one in three, else one of a few
// values, half of them above 2^31.
std::uint32_t value(int r, std::size_t i) {
  const std::uint64_t h = (i * 2654435761u + static_cast<std::uint64_t>(r) * 40503u) % 7;
  if (h < 2) return UINT32_MAX;
  const std::uint32_t big = (h % 2 == 0) ? 0x80000000u : 0u;
  return big + static_cast<std::uint32_t>((i * 7 + static_cast<std::size_t>(r) * 3) % 1000);
}

// Rank r's values for the gathers: r * 2 of them (rank 0 none).
std::vector<std::int64_t> mine(int r) {
  std::vector<std::int64_t> v;
  for (int k = 0; k < r * 2; ++k) v.push_back(r * 100 + k - (k % 2 == 0 ? 0 : 1000000000000LL));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  return mpi_check::run(argc, argv, 3, [](const par::Comm& comm) {
    const int r = comm.rank();

    std::vector<std::uint32_t> v(kValues);
    for (std::size_t i = 0; i < kValues; ++i) v[i] = value(r, i);
    comm.reduce_min_to_root(v);
    bool ok = true;
    std::size_t big_minima = 0;
    for (std::size_t i = 0; i < kValues && ok; ++i) {
      std::uint32_t want = value(r, i);
      if (r == 0) {
        want = UINT32_MAX;
        for (int s = 0; s < 3; ++s) want = std::min(want, value(s, i));
        if (want >= 0x80000000u && want != UINT32_MAX) ++big_minima;
      }
      ok = v[i] == want;
    }
    check(ok, "reduce_min_to_root: the unsigned minimum at rank 0, the others' values unchanged", r);
    if (r == 0) check(big_minima > 1000, "(the test's minima include values above 2^31)", r);

    std::vector<std::int64_t> all_want;
    for (int s = 0; s < 3; ++s) {
      const auto m = mine(s);
      all_want.insert(all_want.end(), m.begin(), m.end());
    }
    std::vector<std::int64_t> counts;
    const auto everyone = comm.allgatherv(mine(r), &counts);
    check(everyone == all_want, "allgatherv: every rank's values, rank after rank", r);
    check(counts == std::vector<std::int64_t>{0, 2, 4}, "allgatherv: each rank's count", r);
    const auto gathered = comm.gatherv(mine(r));
    check(r == 0 ? gathered == all_want : gathered.empty(), "gatherv: every rank's values at rank 0 only", r);
  });
}
