// Simulated time: a signed 64-bit count of picoseconds behind a strong type.
// int64 picoseconds cover +-106 days of simulated time exactly, which is far
// beyond any network run, and keep all arithmetic exact and deterministic.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace fabricsim::core {

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ps(std::int64_t ps) { return SimTime(ps); }
  static constexpr SimTime from_ns(std::int64_t ns) { return SimTime(ns * 1000); }
  /// Nanoseconds given as a double are rounded to the nearest picosecond.
  static constexpr SimTime from_ns_f(double ns) {
    double ps = ns * 1000.0;
    return SimTime(static_cast<std::int64_t>(ps >= 0 ? ps + 0.5 : ps - 0.5));
  }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double ns() const { return static_cast<double>(ps_) / 1000.0; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr SimTime& operator+=(SimTime o) { ps_ += o.ps_; return *this; }
  constexpr SimTime& operator-=(SimTime o) { ps_ -= o.ps_; return *this; }
  friend constexpr SimTime operator+(SimTime a, SimTime b) { return SimTime(a.ps_ + b.ps_); }
  friend constexpr SimTime operator-(SimTime a, SimTime b) { return SimTime(a.ps_ - b.ps_); }
  friend constexpr SimTime operator*(SimTime a, std::int64_t k) { return SimTime(a.ps_ * k); }
  friend constexpr auto operator<=>(SimTime a, SimTime b) = default;

 private:
  constexpr explicit SimTime(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

/// Time to serialize `bytes` on a link of `gbps` gigabits per second, in
/// picoseconds, rounded up so that a link never goes faster than its rate.
/// Computed as bytes * 8000 / gbps ps; exact when gbps divides 8000*bytes.
constexpr SimTime serialization_time(std::uint64_t bytes, double gbps) {
  double ps = static_cast<double>(bytes) * 8000.0 / gbps;
  auto whole = static_cast<std::int64_t>(ps);
  if (static_cast<double>(whole) < ps - 1e-6) ++whole;
  return SimTime::from_ps(whole);
}

}  // namespace fabricsim::core
