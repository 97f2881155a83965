// Counter-based random streams.  Every random choice in fabricsim draws from a
// stream keyed by (seed, stream id) -- typically the id of the entity making
// the choice -- never from a shared generator, so a choice does not depend on
// which other entities live in the same process or in what order they ran.
#pragma once

#include <cstdint>

namespace fabricsim::util {

/// SplitMix64 finalizer: a bijective 64-bit mixing function.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Hash of a pair of 64-bit words.
constexpr std::uint64_t hash2(std::uint64_t a, std::uint64_t b) {
  return mix64(mix64(a + 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull));
}

class RandomStream {
 public:
  constexpr RandomStream(std::uint64_t seed, std::uint64_t stream) : key_(hash2(seed, stream)) {}

  /// Next 64 uniformly distributed bits.
  constexpr std::uint64_t next() { return mix64(key_ + 0x9E3779B97F4A7C15ull * ++counter_); }

  /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias for
  /// n << 2^64 is far below anything a simulation could observe).
  constexpr std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }

  /// Uniform double in [0, 1).
  constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  constexpr std::uint64_t draws() const { return counter_; }

 private:
  std::uint64_t key_;
  std::uint64_t counter_ = 0;
};

}  // namespace fabricsim::util
