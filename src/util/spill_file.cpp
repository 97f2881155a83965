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

void SpillFile::put(std::uint64_t index, const void* record) {
  const auto* p = static_cast<const char*>(record);
  std::size_t left = record_bytes_;
  auto off = static_cast<off_t>(index * record_bytes_);
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write its file in", n < 0 ? errno : ENOSPC);
    p += n;
    off += n;
    left -= static_cast<std::size_t>(n);
  }
  if (index >= block_first_ && index < block_first_ + block_count_)
    std::memcpy(block_.data() + (index - block_first_) * record_bytes_, record, record_bytes_);
}

void SpillFile::get(std::uint64_t index, void* out) {
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
