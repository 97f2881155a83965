#include "fabricsim/core/calendar_queue.hpp"

#include <algorithm>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::core {

namespace {
constexpr std::size_t kMask = CalendarQueue::kBuckets - 1;
static_assert((CalendarQueue::kBuckets & kMask) == 0, "bucket count must be a power of two");
}  // namespace

CalendarQueue::CalendarQueue() : ring_(kBuckets), occupied_(kBuckets / 64, 0) {
  // The cursor starts at time zero (the bias of the time encoding).
  cursor_ = bucket_of(EventQueue::kTimeBias);
}

void CalendarQueue::push_entry(const Entry& e) {
  // far_ also owns the handler bindings (encode/decode).
  const std::uint64_t b = bucket_of(e.hi);
  if (b < cursor_) rewind(b);  // the cursor had peeked past empty buckets
  ++size_;
  if (b >= cursor_ + kBuckets) {
    far_.push_entry(e);
    return;
  }
  auto& bucket = ring_[b & kMask];
  if (bucket.capacity() == 0 && !spare_.empty()) {
    // Reuse the storage of a drained bucket: only the few buckets in use
    // hold memory, and it circulates instead of being allocated anew.
    bucket.swap(spare_.back());
    spare_.pop_back();
  }
  if (b == cursor_ && sorted_) {
    // Into the bucket being drained: a small side heap, merged on pop, keeps
    // this O(log n) however crowded the bucket is.
    side_.push_back(e);
    std::push_heap(side_.begin(), side_.end(), later);
  } else {
    bucket.push_back(e);
  }
  occupied_[(b & kMask) >> 6] |= std::uint64_t{1} << (b & 63);
}

void CalendarQueue::rewind(std::uint64_t b) {
  // Forget what was drained from the current bucket, then give the ring
  // slots of [b, cursor) back to their new buckets: events they hold belong
  // to [b + kBuckets, cursor + kBuckets), beyond the new horizon.
  auto& cur = ring_[cursor_ & kMask];
  cur.erase(cur.begin(), cur.begin() + static_cast<std::ptrdiff_t>(std::min(drain_, cur.size())));
  cur.insert(cur.end(), side_.begin(), side_.end());
  side_.clear();
  drain_ = 0;
  sorted_ = false;
  // Rewinding a whole ring or more: every event in the ring is beyond it.
  const bool all = cursor_ - b >= kBuckets;
  const std::uint64_t from = all ? cursor_ : b;
  const std::uint64_t to = all ? cursor_ + kBuckets : cursor_;
  for (std::uint64_t a = from; a < to; ++a) {
    auto& slot = ring_[a & kMask];
    if (slot.empty()) continue;
    for (const Entry& e : slot) far_.push_entry(e);
    slot.clear();
    occupied_[(a & kMask) >> 6] &= ~(std::uint64_t{1} << (a & 63));
  }
  cursor_ = b;
}

std::size_t CalendarQueue::next_nonempty(std::size_t from) const {
  // First occupied ring slot at or after `from` (cyclically), or kBuckets.
  for (std::size_t scanned = 0; scanned <= kBuckets; scanned += 64) {
    const std::size_t word = ((from + scanned) & kMask) >> 6;
    std::uint64_t bits = occupied_[word];
    if (scanned == 0) bits &= ~std::uint64_t{0} << (from & 63);
    if (bits) return (word << 6) | static_cast<std::size_t>(__builtin_ctzll(bits));
  }
  return kBuckets;
}

void CalendarQueue::advance_to(std::uint64_t abs_bucket) {
  cursor_ = abs_bucket;
  drain_ = 0;
  sorted_ = false;
  // Bring far events that are now within the horizon into the ring.
  while (!far_.empty() && bucket_of(far_.top_entry().hi) < cursor_ + kBuckets) {
    const Entry e = far_.top_entry();
    far_.pop_entry();
    const std::uint64_t b = bucket_of(e.hi);
    auto& bucket = ring_[b & kMask];
    if (bucket.capacity() == 0 && !spare_.empty()) {
      bucket.swap(spare_.back());
      spare_.pop_back();
    }
    bucket.push_back(e);
    occupied_[(b & kMask) >> 6] |= std::uint64_t{1} << (b & 63);
  }
}

void CalendarQueue::sort_bucket(std::vector<Entry>& v) {
  // A crowded bucket (thousands of events at one instant in a synchronized
  // workload) is sorted by a stable LSD radix sort on (time within the
  // bucket, priority, source), one byte per pass, skipping the bytes that
  // are the same in every entry.  Events that tie on those fields (one
  // source, one time) are usually already in sequence order, because a
  // source's events are pushed in the order it scheduled them; the runs
  // that are not get a comparison sort.  The result is exactly the key
  // order, as a comparison sort of the whole bucket would give, at a
  // fraction of its cost (no data-dependent branches per comparison).
  const auto by_key = [](const Entry& x, const Entry& y) { return EventQueue::less(x, y); };
  const std::size_t n = v.size();
  if (n < 64) {
    std::sort(v.begin(), v.end(), by_key);
    return;
  }
  // Radix key: time offset (11 bits) | priority (3 bits) | source (24 bits).
  constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kBucketShift) - 1;
  std::uint64_t any_prio = 0;
  for (const Entry& e : v) any_prio |= e.lo >> 59;  // priority bits 3..7
  if (any_prio != 0) {
    std::sort(v.begin(), v.end(), by_key);
    return;
  }
  const auto radix_key = [](const Entry& e) {
    return ((e.hi & kOffsetMask) << 27) | ((e.lo >> 56) << 24) | ((e.lo >> 32) & 0xFFFFFF);
  };
  constexpr unsigned kDigits = 5;  // 38 key bits
  std::uint32_t count[kDigits][256] = {};
  for (const Entry& e : v) {
    const std::uint64_t k = radix_key(e);
    for (unsigned d = 0; d < kDigits; ++d) ++count[d][(k >> (8 * d)) & 0xFF];
  }
  scratch_.resize(n);
  Entry* src = v.data();
  Entry* dst = scratch_.data();
  for (unsigned d = 0; d < kDigits; ++d) {
    std::uint32_t* c = count[d];
    if (c[(radix_key(src[0]) >> (8 * d)) & 0xFF] == n) continue;  // this byte never varies
    std::uint32_t sum = 0;
    for (unsigned b = 0; b < 256; ++b) {
      const std::uint32_t t = c[b];
      c[b] = sum;
      sum += t;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Entry& e = src[i];
      dst[c[(radix_key(e) >> (8 * d)) & 0xFF]++] = e;
    }
    std::swap(src, dst);
  }
  if (src != v.data()) v.swap(scratch_);
  // Runs that tie on (time, priority, source): order them by sequence.
  for (std::size_t i = 0; i + 1 < n;) {
    std::size_t j = i + 1;
    while (j < n && v[j].hi == v[i].hi && (v[j].lo >> 32) == (v[i].lo >> 32)) ++j;
    if (j - i > 1 && !std::is_sorted(v.begin() + static_cast<std::ptrdiff_t>(i),
                                     v.begin() + static_cast<std::ptrdiff_t>(j), by_key))
      std::sort(v.begin() + static_cast<std::ptrdiff_t>(i), v.begin() + static_cast<std::ptrdiff_t>(j), by_key);
    i = j;
  }
}

void CalendarQueue::settle() {
  for (;;) {
    auto& cur = ring_[cursor_ & kMask];
    if (drain_ < cur.size() || !side_.empty()) {
      if (!sorted_) {
        sort_bucket(cur);
        sorted_ = true;
        cur_ = cur.data();
        cur_size_ = cur.size();
      }
      return;
    }
    // The current bucket is used up: hand its storage to the spares and
    // move to the next one.
    cur.clear();
    spare_.emplace_back();
    spare_.back().swap(cur);
    occupied_[(cursor_ & kMask) >> 6] &= ~(std::uint64_t{1} << (cursor_ & 63));
    const std::size_t slot = next_nonempty((cursor_ + 1) & kMask);
    if (slot != kBuckets) {
      const std::uint64_t ahead = (slot - (cursor_ & kMask)) & kMask;
      advance_to(cursor_ + (ahead == 0 ? kBuckets : ahead));
    } else {
      // The ring is empty: jump to the first far event.
      FABRICSIM_ASSERT(!far_.empty(), "calendar queue lost track of its events");
      advance_to(bucket_of(far_.top_entry().hi));
    }
  }
}

bool CalendarQueue::side_first() const {
  const auto& cur = ring_[cursor_ & kMask];
  if (side_.empty()) return false;
  if (drain_ >= cur.size()) return true;
  return EventQueue::less(side_.front(), cur[drain_]);
}

SimTime CalendarQueue::top_time() {
  settle();
  const Entry& e = side_first() ? side_.front() : ring_[cursor_ & kMask][drain_];
  return SimTime::from_ps(static_cast<std::int64_t>(e.hi ^ EventQueue::kTimeBias));
}

void CalendarQueue::pop(Event& out) {
  settle();
  if (side_first()) {
    far_.decode(side_.front(), out);
    std::pop_heap(side_.begin(), side_.end(), later);
    side_.pop_back();
  } else {
    far_.decode(ring_[cursor_ & kMask][drain_++], out);
  }
  --size_;
}

}  // namespace fabricsim::core
