// Records on disk by index (include/fabricsim/util/spill_file.hpp).
#include "fabricsim/util/spill_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "fabricsim/util/error.hpp"

namespace fabricsim::util {

namespace {
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;  // read ahead 1 MiB
constexpr std::size_t kBatchBytes = std::size_t{512} << 10;  // puts written together
}

SpillFile::SpillFile(std::size_t record_bytes, std::string what)
    : record_bytes_(std::max<std::size_t>(record_bytes, 1)), what_(std::move(what)) {
  const char* tmp = std::getenv("TMPDIR");
  dir_ = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::string name = dir_ + "/fabricsim-spill-XXXXXX";
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) fail("cannot create a file in", errno);
  ::unlink(name.c_str());  // (nothing left behind; the descriptor keeps it)
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::fail(const std::string& doing, int err) const {
  throw UserError(what_ + ": " + doing + " " + dir_ + " (" + std::strerror(err) +
                  "; set TMPDIR to a writable directory with room)");
}

std::size_t SpillFile::memory_bytes() const {
  return block_.capacity() + batch_.capacity() + run_.capacity() + batch_index_.capacity() * sizeof(std::uint64_t);
}

void SpillFile::release_buffers() {
  flush();
  std::vector<char>().swap(block_);
  std::vector<char>().swap(batch_);
  std::vector<char>().swap(run_);
  std::vector<std::uint64_t>().swap(batch_index_);
  block_count_ = 0;
}

void SpillFile::write_at(std::uint64_t index, const char* p, std::size_t left) {
  auto off = static_cast<off_t>(index * record_bytes_);
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write its file in", n < 0 ? errno : ENOSPC);
    p += n;
    off += n;
    left -= static_cast<std::size_t>(n);
  }
}

void SpillFile::put(std::uint64_t index, const void* record) {
  if (batch_index_.size() * record_bytes_ >= kBatchBytes) flush();
  batch_index_.push_back(index);
  const auto* p = static_cast<const char*>(record);
  batch_.insert(batch_.end(), p, p + record_bytes_);
}

void SpillFile::flush() {
  const std::size_t n = batch_index_.size();
  if (n == 0) return;
  // In index order, a later put of the same index after an earlier one.
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t k = 0; k < n; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return batch_index_[a] < batch_index_[b]; });
  std::size_t k = 0;
  while (k < n) {
    // A run of consecutive indices (a repeated index ends it: written in turn).
    std::size_t e = k + 1;
    while (e < n && batch_index_[order[e]] == batch_index_[order[e - 1]] + 1) ++e;
    run_.resize((e - k) * record_bytes_);
    for (std::size_t x = k; x < e; ++x)
      std::memcpy(run_.data() + (x - k) * record_bytes_, batch_.data() + std::size_t{order[x]} * record_bytes_,
                  record_bytes_);
    write_at(batch_index_[order[k]], run_.data(), run_.size());
    k = e;
  }
  batch_index_.clear();
  batch_.clear();
  block_count_ = 0;  // (what was read ahead may be stale)
}

void SpillFile::get(std::uint64_t index, void* out) {
  flush();
  if (index < block_first_ || index >= block_first_ + block_count_) {
    const std::size_t per_block = std::max<std::size_t>(1, kBlockBytes / record_bytes_);
    block_.assign(per_block * record_bytes_, 0);
    std::size_t got = 0;
    const auto off = static_cast<off_t>(index * record_bytes_);
    while (got < block_.size()) {
      const ssize_t n = ::pread(fd_, block_.data() + got, block_.size() - got, off + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read its file in", errno);
      if (n == 0) break;  // past the end: records never put are zeros
      got += static_cast<std::size_t>(n);
    }
    block_first_ = index;
    block_count_ = per_block;
  }
  std::memcpy(out, block_.data() + (index - block_first_) * record_bytes_, record_bytes_);
}

}  // namespace fabricsim::util
