// Thin wrapper over an MPI communicator.  Library code receives the
// communicator as a parameter and never names MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::par {

class Comm {
 public:
  explicit Comm(MPI_Comm comm);
  MPI_Comm raw() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  /// The ranks of this communicator that share this rank's machine (its
  /// memory), this one included.
  int ranks_on_this_machine() const;

  void barrier() const;
  std::int64_t allreduce_min(std::int64_t v) const;
  std::int64_t allreduce_max(std::int64_t v) const;
  std::uint64_t allreduce_sum(std::uint64_t v) const;
  double allreduce_max(double v) const;
  double allreduce_sum(double v) const;
  std::vector<double> allgather(double v) const;
  /// Element-wise minimum / maximum over ranks, in place.
  void allreduce_min(std::vector<std::int64_t>& v) const;
  void allreduce_max(std::vector<std::int64_t>& v) const;
  /// Element-wise minimum over ranks, at rank 0 (in place there; the
  /// others' `v` is left as it was).  Any length: sent in pieces.
  /// (Not MPI_UINT32_T: Debian's MPICH 4.0.2 takes the minimum and maximum
  /// of unsigned types as if they were signed; comm.cpp.)
  void reduce_min_to_root(std::vector<std::uint32_t>& v) const;
  std::vector<std::uint64_t> allgather(std::uint64_t v) const;
  /// `n` values of every rank into `out`, rank after rank (resized to
  /// ranks x n; no allocation once it has that size).
  void allgather(const std::int64_t* v, int n, std::vector<std::int64_t>& out) const;
  /// Every rank's values, rank after rank, whatever their numbers (each
  /// rank's count in `counts`, if given).
  std::vector<std::int64_t> allgatherv(const std::vector<std::int64_t>& mine,
                                       std::vector<std::int64_t>* counts = nullptr) const;
  /// Every rank's values, rank after rank, at rank 0 (empty elsewhere).
  std::vector<std::int64_t> gatherv(const std::vector<std::int64_t>& mine) const;
  /// Broadcasts a string from `root` to every rank.
  std::string broadcast(const std::string& s, int root = 0) const;

  /// Collective error agreement: every rank passes whether it failed and its
  /// message; if any rank failed, every rank returns the message of the
  /// lowest failing rank (so it can be printed once, by rank 0, and every
  /// rank can exit non-zero).  Returns an empty string when all succeeded.
  std::string agree_on_error(const std::string& local_error) const;
  /// The same, the failing rank chosen by `order` (the lowest wins, ties
  /// the lowest rank; a rank that did not fail passes anything): errors
  /// found in a shared order, a trace's files read by several processes,
  /// agree on the one that a single process going in that order finds
  /// first.  `code` (in: this rank's exit code) comes back as the chosen
  /// rank's.
  std::string agree_on_error(const std::string& local_error, std::int64_t order, int& code) const;

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace fabricsim::par
