// Bytes a container holds (its capacity, not its size): what memory
// estimates of planned structures count; and bytes as a person reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace fabricsim::util {

template <class T, class A>
std::uint64_t capacity_bytes(const std::vector<T, A>& v) {
  return static_cast<std::uint64_t>(v.capacity()) * sizeof(T);
}

/// "12.3 MiB": one decimal, in the largest binary unit (B ... TiB) that
/// leaves at least 1.
inline std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", b, units[u]);
}

}  // namespace fabricsim::util
