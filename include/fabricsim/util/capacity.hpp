// Bytes a container holds (its capacity, not its size): what memory
// estimates of planned structures count.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim::util {

template <class T, class A>
std::uint64_t capacity_bytes(const std::vector<T, A>& v) {
  return static_cast<std::uint64_t>(v.capacity()) * sizeof(T);
}

}  // namespace fabricsim::util
