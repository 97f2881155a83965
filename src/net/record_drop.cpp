// Message records handed back a page at a time (include/fabricsim/net/record_drop.hpp).
#include "fabricsim/net/record_drop.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/spill_file.hpp"

namespace fabricsim::net {

namespace {
constexpr std::size_t kRecord = sizeof(Message);
}

RecordDrop::RecordDrop(std::vector<Message>& records)
    : records_(records), data_(records.data()), count_(records.size()) {
  const auto base = reinterpret_cast<std::uintptr_t>(data_);
  skip_bytes_ = static_cast<std::size_t>((kPageBytes - base % kPageBytes) % kPageBytes);
  const std::size_t total = count_ * kRecord;
  pages_ = total > skip_bytes_ ? (total - skip_bytes_) / kPageBytes : 0;
  state_.assign(pages_, Resident);
  released_in_.assign(pages_, 0);
  released_.assign((count_ + 63) / 64, 0);
  file_ = std::make_unique<util::SpillFile>(kRecord, "the delivered messages' records");
  // Pages of blanks (set aside, not created) go now, with nothing to keep
  // (all found first: a record across a boundary is read for both pages).
  for (std::size_t k = 0; k < pages_; ++k) {
    std::size_t lo = 0, hi = 0;
    records_of(k, lo, hi);
    bool blanks = true;
    for (std::size_t r = lo; r <= hi && blanks; ++r) blanks = records_[r].bytes == 0;
    if (blanks) state_[k] = Blank;
  }
  for (std::size_t k = 0; k < pages_; ++k)
    if (state_[k] == Blank) {
      ::madvise(page_address(k), kPageBytes, MADV_DONTNEED);
      ++blank_;
    }
}

RecordDrop::~RecordDrop() = default;

void RecordDrop::hand_back_blanks(std::span<Message> records) {
  const auto b0 = reinterpret_cast<std::uintptr_t>(records.data());
  const std::uintptr_t b1 = b0 + records.size_bytes();
  const std::uintptr_t p0 = (b0 + kPageBytes - 1) / kPageBytes * kPageBytes, p1 = b1 / kPageBytes * kPageBytes;
  if (p0 < p1) ::madvise(reinterpret_cast<void*>(p0), p1 - p0, MADV_DONTNEED);
}

char* RecordDrop::page_address(std::size_t k) const {
  return reinterpret_cast<char*>(data_) + skip_bytes_ + k * kPageBytes;
}

void RecordDrop::records_of(std::size_t k, std::size_t& lo, std::size_t& hi) const {
  lo = (skip_bytes_ + k * kPageBytes) / kRecord;
  hi = (skip_bytes_ + (k + 1) * kPageBytes - 1) / kRecord;
}

void RecordDrop::pages_of(MessageId id, std::size_t& first, std::size_t& last) const {
  first = 1;
  last = 0;
  const std::size_t b0 = std::size_t{id} * kRecord, b1 = b0 + kRecord - 1;
  if (pages_ == 0 || b1 < skip_bytes_) return;
  const std::size_t f = b0 < skip_bytes_ ? 0 : (b0 - skip_bytes_) / kPageBytes;
  const std::size_t l = std::min((b1 - skip_bytes_) / kPageBytes, pages_ - 1);
  if (f <= l) {
    first = f;
    last = l;
  }
}

void RecordDrop::release(MessageId id) { count_released(id, false); }

void RecordDrop::absent(MessageId id) { count_released(id, true); }

void RecordDrop::count_released(MessageId id, bool absent) {
  FABRICSIM_ASSERT(records_.data() == data_, "the records moved while pages were dropped");
  if (id >= count_) return;  // (added after dropping began: kept)
  std::uint64_t& word = released_[id / 64];
  const std::uint64_t bit = std::uint64_t{1} << (id % 64);
  FABRICSIM_ASSERT((word & bit) == 0, "a message record released twice");
  word |= bit;
  std::size_t first = 0, last = 0;
  pages_of(id, first, last);
  for (std::size_t k = first; k <= last; ++k) {
    // (An absent record's page may be one of blanks, gone already: it
    // stays gone; a page held goes with its last record.)
    FABRICSIM_ASSERT(absent ? state_[k] != Spilled : state_[k] == Resident,
                     "a record released in a page not held, or absent from one handed back");
    std::size_t lo = 0, hi = 0;
    records_of(k, lo, hi);
    if (++released_in_[k] == hi - lo + 1 && state_[k] == Resident) hand_back(k);
  }
}

void RecordDrop::write(MessageId id, const Message& m) {
  FABRICSIM_ASSERT(records_.data() == data_, "the records moved while pages were dropped");
  std::size_t first = 0, last = 0;
  pages_of(id, first, last);
  bool spilled = false;
  for (std::size_t k = first; k <= last; ++k) {
    FABRICSIM_ASSERT(state_[k] != Blank, "a record written into a page of blanks handed back");
    spilled = spilled || state_[k] == Spilled;
  }
  if (id < count_ && spilled)
    file_->put(id, &m);  // (a record across two pages: read() takes the file's copy if either went)
  else
    records_[id] = m;
}

void RecordDrop::hand_back(std::size_t k) {
  std::size_t lo = 0, hi = 0;
  records_of(k, lo, hi);
  for (std::size_t r = lo; r <= hi; ++r) {
    // A record across two pages was copied whole when the first of them
    // went; its bytes in that one are zeros now.
    std::size_t first = 0, last = 0;
    pages_of(static_cast<MessageId>(r), first, last);
    bool copied = false;
    for (std::size_t j = first; j <= last; ++j) copied = copied || (j != k && state_[j] == Spilled);
    if (!copied) file_->put(r, &records_[r]);
  }
  ::madvise(page_address(k), kPageBytes, MADV_DONTNEED);
  state_[k] = Spilled;
  ++spilled_;
}

void RecordDrop::before_write(MessageId id) {
  FABRICSIM_ASSERT(records_.data() == data_, "the records moved while pages were dropped");
  if (id >= count_) return;
  std::size_t first = 0, last = 0;
  pages_of(id, first, last);
  for (std::size_t k = first; k <= last; ++k) {
    FABRICSIM_ASSERT(state_[k] != Spilled, "a released message record written");
    if (state_[k] != Blank) continue;
    write_blanks(k);
    state_[k] = Resident;
    --blank_;
  }
}

void RecordDrop::write_blanks(std::size_t k) {
  // Only the bytes in page k: a record across its edge has its other part
  // in a page of its own state (one still gone would be faulted in, held
  // while counted as gone; read() reads such a record as a blank).
  static const Message blank = blank_message();
  const auto* from = reinterpret_cast<const unsigned char*>(&blank);
  auto* base = reinterpret_cast<unsigned char*>(data_);
  const std::size_t p0 = skip_bytes_ + k * kPageBytes, p1 = p0 + kPageBytes;
  std::size_t lo = 0, hi = 0;
  records_of(k, lo, hi);
  for (std::size_t r = lo; r <= hi; ++r) {
    const std::size_t r0 = r * kRecord, a = std::max(r0, p0), b = std::min(r0 + kRecord, p1);
    std::memcpy(base + a, from + (a - r0), b - a);
  }
}

Message RecordDrop::read(MessageId id) const {
  if (id >= count_) return records_[id];
  std::size_t first = 0, last = 0;
  pages_of(id, first, last);
  bool blank = false;
  for (std::size_t k = first; k <= last; ++k) {
    if (state_[k] == Spilled) {
      Message m;
      file_->get(id, &m);
      return m;
    }
    blank = blank || state_[k] == Blank;
  }
  return blank ? blank_message() : records_[id];
}

void RecordDrop::restore() {
  FABRICSIM_ASSERT(records_.data() == data_, "the records moved while pages were dropped");
  for (std::size_t k = 0; k < pages_; ++k) {
    if (state_[k] != Spilled) continue;
    std::size_t lo = 0, hi = 0;
    records_of(k, lo, hi);
    for (std::size_t r = lo; r <= hi; ++r) file_->get(r, &records_[r]);
  }
  for (std::size_t k = 0; k < pages_; ++k)
    if (state_[k] == Blank) write_blanks(k);
  state_.assign(pages_, Resident);
  spilled_ = blank_ = 0;
}

std::size_t RecordDrop::memory_bytes() const {
  return state_.capacity() + released_in_.capacity() + released_.capacity() * sizeof(std::uint64_t) +
         file_->memory_bytes();
}

}  // namespace fabricsim::net
