// What the synth tests share: hop distances written here (not the
// synthesizer's), and seeded random strongly connected graphs.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth::synth_test {

/// Hop distances from root (BFS over directed links); -1 where unreachable.
inline std::vector<int> bfs(const NpuGraph& g, std::uint32_t root) {
  std::vector<int> d(g.npus, -1);
  std::queue<std::uint32_t> q;
  d[root] = 0;
  q.push(root);
  while (!q.empty()) {
    const std::uint32_t u = q.front();
    q.pop();
    for (const Link& l : g.links) {
      if (l.src == u && d[l.dst] < 0) {
        d[l.dst] = d[u] + 1;
        q.push(l.dst);
      }
    }
  }
  return d;
}

/// n NPUs: a random spanning tree with links both ways, then extra_min +
/// rng() % extra_range (0: none) random one-way links; `make` gives each
/// link its alpha and bandwidth.
inline NpuGraph random_graph(std::mt19937_64& rng, std::uint32_t n, std::uint32_t extra_min,
                             std::uint32_t extra_range,
                             const std::function<Link(std::uint32_t, std::uint32_t)>& make) {
  NpuGraph g;
  g.npus = n;
  for (std::uint32_t v = 1; v < n; ++v) {
    const auto u = static_cast<std::uint32_t>(rng() % v);
    g.links.push_back(make(u, v));
    g.links.push_back(make(v, u));
  }
  const std::uint32_t extra = extra_min + (extra_range == 0 ? 0 : static_cast<std::uint32_t>(rng() % extra_range));
  for (std::uint32_t k = 0; k < extra; ++k) {
    const auto a = static_cast<std::uint32_t>(rng() % n), b = static_cast<std::uint32_t>(rng() % n);
    if (a != b) {
      g.links.push_back(make(a, b));
    }
  }
  return g;
}

}  // namespace fabricsim::synth::synth_test
