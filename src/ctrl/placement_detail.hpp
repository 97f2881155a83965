// What the cluster schedulers (vclos.cpp, ocs.cpp) share: picking idle
// servers and GPUs in rank order, and building a Decision.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "fabricsim/ctrl/vclos.hpp"
#include "fabricsim/util/assert.hpp"

namespace fabricsim::ctrl::detail {

inline std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return a / b + (a % b != 0 ? 1u : 0u); }

/// The `count` lowest-numbered fully idle servers of `leaf`.
inline std::vector<std::uint32_t> idle_servers_of(const ClusterState& st, std::uint32_t leaf, std::uint32_t count) {
  const ClusterShape& sh = st.shape();
  std::vector<std::uint32_t> out;
  out.reserve(count);
  const std::uint32_t first = leaf * sh.servers_per_leaf;
  for (std::uint32_t i = 0; i < sh.servers_per_leaf && out.size() < count; ++i)
    if (st.idle_gpus(first + i) == sh.gpus_per_server) out.push_back(first + i);
  FABRICSIM_ASSERT(out.size() == count, "leaf has fewer idle servers than its count says");
  return out;
}

/// The first n GPUs of `servers`, server by server, slot by slot (rank order).
inline std::vector<std::uint32_t> first_gpus(const ClusterShape& sh, const std::vector<std::uint32_t>& servers,
                                             std::uint32_t n) {
  std::vector<std::uint32_t> gpus;
  gpus.reserve(n);
  for (std::uint32_t server : servers)
    for (std::uint32_t slot = 0; slot < sh.gpus_per_server && gpus.size() < n; ++slot)
      gpus.push_back(server * sh.gpus_per_server + slot);
  FABRICSIM_ASSERT(gpus.size() == n, "servers hold fewer GPUs than the job needs");
  return gpus;
}

inline Decision placed(Allocation a) {
  Decision d;
  d.allocation = std::move(a);
  return d;
}

inline Decision refused(Refusal why) {
  Decision d;
  d.why = why;
  return d;
}

}  // namespace fabricsim::ctrl::detail
