// Message records given back to the system a memory page at a time, once
// the model is done with them (docs/architecture.md, "Streaming traces",
// change 1, at one process).
//
// A model keeps its records in one vector, indexed by message id, and its
// hot path reads them there (`messages_[pkt.msg]`); nothing of that
// changes.  What changes is the memory under the vector: every page (4 KiB
// of the system's) all of whose records are released (the message was
// delivered and its listener told) is copied to a file in $TMPDIR and
// handed back (madvise(MADV_DONTNEED)); every page all of whose records
// are still blank (set aside by reserve_ids and not created) is handed back
// without a copy and made again, blanks, when one of them is created.  The
// records read from outside the model (Network::message) come from the
// file or are blanks where their page is gone, so a reader sees the same
// record whether or not it was dropped.  What a process then holds is the
// pages with a message in flight.
//
// The vector must not move while pages are gone (a move would copy the
// zeros the system maps there): a model that grows it calls restore()
// first, which makes every page again and stops dropping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fabricsim/net/network.hpp"

namespace fabricsim::util {
class SpillFile;
}

namespace fabricsim::net {

class RecordDrop {
 public:
  /// Drops from now on the records of `records` (the model's vector, which
  /// must stay where it is: restore() before it grows); the pages of blanks
  /// go at once.  Throws UserError naming $TMPDIR if its file cannot be made.
  explicit RecordDrop(std::vector<Message>& records);
  ~RecordDrop();
  RecordDrop(const RecordDrop&) = delete;
  RecordDrop& operator=(const RecordDrop&) = delete;

  /// The model is done with record `id` (once per record): it will neither
  /// read nor write it again; Network::message(id) still reads it.
  void release(MessageId id);
  /// Record `id` will never be made here (several processes: neither of
  /// its ends is this process's): counted as released, so that its page
  /// can go once the records of it made here are; nothing is copied.
  void absent(MessageId id);
  /// Whether record `id` was released (or is absent).
  bool released(MessageId id) const { return id < count_ && (released_[id / 64] >> (id % 64) & 1u) != 0; }
  /// Record `id` is about to be written (created): its pages made again
  /// where they were blanks handed back.
  void before_write(MessageId id);
  /// Writes record `id`, released or not: into its page where that is
  /// held, else into the file (what the end of a run on several processes
  /// does with a post time known at the sender's).  Not a blank's page.
  void write(MessageId id, const Message& m);
  /// Record `id` as it was when released (or now, if not released).
  Message read(MessageId id) const;
  /// Every page made again, the records in them as before; dropping ends
  /// (the caller discards this object).
  void restore();
  /// Pages handed back now (records copied to the file, or blanks).
  std::size_t pages_spilled() const { return spilled_; }
  std::size_t pages_blank() const { return blank_; }
  /// Bytes this keeps in memory (its page table, the file's buffers).
  std::size_t memory_bytes() const;

  static constexpr std::size_t kPageBytes = 4096;
  /// Hands back the pages wholly inside `records` (blanks just written,
  /// before a RecordDrop over them is made: it finds them blank, and
  /// nothing may read them in between).
  static void hand_back_blanks(std::span<Message> records);

 private:
  enum State : std::uint8_t { Resident = 0, Blank = 1, Spilled = 2 };
  // The pages record `id` overlaps that can be dropped (wholly inside the
  // records), as [first, last] page numbers; first > last if none.
  void pages_of(MessageId id, std::size_t& first, std::size_t& last) const;
  // The records page k overlaps: [lo, hi].
  void records_of(std::size_t k, std::size_t& lo, std::size_t& hi) const;
  char* page_address(std::size_t k) const;
  // release() (the record's pages held) or absent() (not made: perhaps blank).
  void count_released(MessageId id, bool absent);
  void hand_back(std::size_t k);
  // Blank records' bytes written into page k, and nowhere else.
  void write_blanks(std::size_t k);

  std::vector<Message>& records_;
  Message* data_;            // records_.data() when dropping began (asserted unchanged)
  std::size_t count_;        // records_.size() then: dropping never covers a record added later
  std::size_t skip_bytes_;   // from data_ to the first page boundary
  std::size_t pages_;        // pages wholly inside [data_, data_ + count_)
  std::vector<std::uint8_t> state_;
  std::vector<std::uint8_t> released_in_;  // per page, records released (at most 86 overlap a page)
  std::vector<std::uint64_t> released_;    // per record, a bit
  std::size_t spilled_ = 0, blank_ = 0;
  std::unique_ptr<util::SpillFile> file_;  // (mutable through the pointer: reads fill its buffer)
};

}  // namespace fabricsim::net
