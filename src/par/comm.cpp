#include "fabricsim/par/comm.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "fabricsim/util/error.hpp"

namespace fabricsim::par {

Comm::Comm(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void Comm::barrier() const { MPI_Barrier(comm_); }

int Comm::ranks_on_this_machine() const {
  MPI_Comm shared;
  MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared);
  int n = 1;
  MPI_Comm_size(shared, &n);
  MPI_Comm_free(&shared);
  return n;
}

std::int64_t Comm::allreduce_min(std::int64_t v) const {
  std::int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MIN, comm_);
  return out;
}
void Comm::allreduce_min(std::vector<std::int64_t>& v) const {
  if (size_ > 1) MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MIN, comm_);
}
void Comm::reduce_min_to_root(std::vector<std::uint32_t>& v) const {
  if (size_ == 1) return;
  // As 64-bit signed values, a piece at a time: Debian's MPICH 4.0.2
  // compares MPI_UINT32_T and MPI_UINT64_T as signed in MPI_MIN and
  // MPI_MAX (UINT32_MAX came out as the minimum of 5 and UINT32_MAX).
  constexpr std::size_t kPiece = std::size_t{1} << 18;
  std::vector<std::int64_t> piece;
  for (std::size_t from = 0; from < v.size(); from += kPiece) {
    const std::size_t n = std::min(kPiece, v.size() - from);
    piece.assign(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(from + n));
    MPI_Reduce(is_root() ? MPI_IN_PLACE : piece.data(), is_root() ? piece.data() : nullptr, static_cast<int>(n),
               MPI_INT64_T, MPI_MIN, 0, comm_);
    if (is_root())
      for (std::size_t i = 0; i < n; ++i) v[from + i] = static_cast<std::uint32_t>(piece[i]);
  }
}
void Comm::allreduce_max(std::vector<std::int64_t>& v) const {
  if (size_ > 1) MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MAX, comm_);
}
std::int64_t Comm::allreduce_max(std::int64_t v) const {
  std::int64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, comm_);
  return out;
}
std::uint64_t Comm::allreduce_sum(std::uint64_t v) const {
  std::uint64_t out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, MPI_SUM, comm_);
  return out;
}
double Comm::allreduce_max(double v) const {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return out;
}
double Comm::allreduce_sum(double v) const {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, comm_);
  return out;
}
std::vector<double> Comm::allgather(double v) const {
  std::vector<double> out(static_cast<std::size_t>(size_));
  MPI_Allgather(&v, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, comm_);
  return out;
}
std::vector<std::uint64_t> Comm::allgather(std::uint64_t v) const {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(size_));
  MPI_Allgather(&v, 1, MPI_UINT64_T, out.data(), 1, MPI_UINT64_T, comm_);
  return out;
}
void Comm::allgather(const std::int64_t* v, int n, std::vector<std::int64_t>& out) const {
  out.resize(static_cast<std::size_t>(size_) * static_cast<std::size_t>(n));
  MPI_Allgather(v, n, MPI_INT64_T, out.data(), n, MPI_INT64_T, comm_);
}

namespace {
// MPI's int counts and displacements from every rank's count; past
// 2^31 - 1 values in all, an internal limit (MPI counts in int).
std::int64_t int_layout(const std::vector<std::int64_t>& counts, std::vector<int>& c, std::vector<int>& displ) {
  c.resize(counts.size());
  displ.resize(counts.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    c[i] = static_cast<int>(counts[i]);
    displ[i] = static_cast<int>(total);
    total += counts[i];
  }
  if (total > INT32_MAX)
    throw util::UserError("internal limit: gathering " + std::to_string(total) + " values at one rank (at most 2^31 - 1)");
  return total;
}
}  // namespace

std::vector<std::int64_t> Comm::allgatherv(const std::vector<std::int64_t>& mine,
                                           std::vector<std::int64_t>* counts_out) const {
  const auto n = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> counts;
  allgather(&n, 1, counts);
  std::vector<int> c, displ;
  std::vector<std::int64_t> out(static_cast<std::size_t>(int_layout(counts, c, displ)));
  MPI_Allgatherv(mine.data(), static_cast<int>(n), MPI_INT64_T, out.data(), c.data(), displ.data(), MPI_INT64_T,
                 comm_);
  if (counts_out != nullptr) *counts_out = std::move(counts);
  return out;
}

std::vector<std::int64_t> Comm::gatherv(const std::vector<std::int64_t>& mine) const {
  const auto n = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> counts;
  allgather(&n, 1, counts);
  std::vector<int> c, displ;
  const std::int64_t total = int_layout(counts, c, displ);
  std::vector<std::int64_t> out(is_root() ? static_cast<std::size_t>(total) : 0);
  MPI_Gatherv(mine.data(), static_cast<int>(n), MPI_INT64_T, out.data(), c.data(), displ.data(), MPI_INT64_T, 0,
              comm_);
  return out;
}

std::string Comm::broadcast(const std::string& s, int root) const {
  std::uint64_t n = s.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm_);
  std::string out = rank_ == root ? s : std::string(n, '\0');
  if (n > 0) MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, root, comm_);
  return out;
}

std::string Comm::agree_on_error(const std::string& local_error) const {
  int code = 0;
  return agree_on_error(local_error, rank_, code);
}

std::string Comm::agree_on_error(const std::string& local_error, std::int64_t order, int& code) const {
  // The lowest (order, rank) among the failing ranks: MPI_MINLOC on the
  // order (MPI_LONG_INT: a long, 64 bits here, and an int); a rank that did
  // not fail offers the largest order and no rank.
  static_assert(sizeof(long) == sizeof(std::int64_t), "an order is a long");
  struct {
    long order;
    int rank;
  } in{local_error.empty() ? LONG_MAX : static_cast<long>(order), local_error.empty() ? size_ : rank_}, first{};
  MPI_Allreduce(&in, &first, 1, MPI_LONG_INT, MPI_MINLOC, comm_);
  if (first.rank >= size_) return {};
  std::string msg = broadcast(local_error, first.rank);
  int c = code;
  MPI_Bcast(&c, 1, MPI_INT, first.rank, comm_);
  code = c;
  return msg.empty() ? std::string("unknown error") : msg;
}

}  // namespace fabricsim::par
