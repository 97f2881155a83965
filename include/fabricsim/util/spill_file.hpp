// Fixed-size records kept on disk by index, not in memory (issue 33: a
// streamed trace's million /trace_nodes rows are written as their nodes
// complete and read back in order when the output is written).  The file
// is made in $TMPDIR (else /tmp) and unlinked at once, so nothing is left
// behind however the run ends; only the descriptor names it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::util {

class SpillFile {
 public:
  /// `what` names the records in error lines ("the /trace_nodes rows").
  /// Throws UserError naming the directory if the file cannot be made.
  SpillFile(std::size_t record_bytes, std::string what);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  std::size_t record_bytes() const { return record_bytes_; }
  /// Writes record `index` (any order; a record never put reads as zeros;
  /// a record put twice reads as the last).  Puts wait in a batch, written
  /// sorted, a run of consecutive records a call: records that complete
  /// near in order (each trace rank's) cost a system call per run, not each.
  /// Throws UserError (a full disk) with the directory and the reason.
  void put(std::uint64_t index, const void* record);
  /// Writes the batch now (get() does first), so that a full disk is
  /// reported here.
  void flush();
  /// Copies record `index` to `out`, reading ahead in blocks: reading in
  /// increasing order costs one read per block.
  void get(std::uint64_t index, void* out);
  /// Writes the batch and lets the buffers go (a file kept for a rare
  /// get, as an error line's).
  void release_buffers();
  /// Bytes held in memory (the batch and the read-ahead block).
  std::size_t memory_bytes() const;

 private:
  [[noreturn]] void fail(const std::string& doing, int err) const;
  void write_at(std::uint64_t index, const char* p, std::size_t bytes);
  std::size_t record_bytes_;
  std::string what_, dir_;
  int fd_ = -1;
  std::vector<std::uint64_t> batch_index_;  // puts not written yet, in the order put
  std::vector<char> batch_, run_;
  std::vector<char> block_;            // records [block_first_, block_first_ + block_count_)
  std::uint64_t block_first_ = 0, block_count_ = 0;
};

}  // namespace fabricsim::util
