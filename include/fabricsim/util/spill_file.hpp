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
  /// Writes record `index` (any order; a record never put reads as zeros).
  /// Throws UserError (a full disk) with the directory and the reason.
  void put(std::uint64_t index, const void* record);
  /// Copies record `index` to `out`, reading ahead in blocks: reading in
  /// increasing order costs one read per block.
  void get(std::uint64_t index, void* out);
  /// Bytes held in memory (the read-ahead block).
  std::size_t memory_bytes() const { return block_.capacity(); }

 private:
  [[noreturn]] void fail(const std::string& doing, int err) const;
  std::size_t record_bytes_;
  std::string what_, dir_;
  int fd_ = -1;
  std::vector<char> block_;            // records [block_first_, block_first_ + block_count_)
  std::uint64_t block_first_ = 0, block_count_ = 0;
};

}  // namespace fabricsim::util
