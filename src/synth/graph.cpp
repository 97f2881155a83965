// NPU graphs, generators and collectives for TACOS (synth/tacos.hpp).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {
namespace {

constexpr double kGbpsPerGBps = 8.0;

void add_link(NpuGraph& g, std::uint32_t src, std::uint32_t dst, double alpha_ns, double gbps) {
  g.links.push_back(Link{src, dst, alpha_ns, gbps});
}

// A ring over `members` in order; n = 2 gives one link per direction.
void add_ring(NpuGraph& g, const std::vector<std::uint32_t>& members, bool bidirectional, double alpha_ns,
              double gbps) {
  const auto n = members.size();
  if (n < 2) {
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    add_link(g, members[i], members[(i + 1) % n], alpha_ns, gbps);
  }
  if (bidirectional && n > 2) {
    for (std::size_t i = 0; i < n; ++i) {
      add_link(g, members[(i + 1) % n], members[i], alpha_ns, gbps);
    }
  }
}

void add_full(NpuGraph& g, const std::vector<std::uint32_t>& members, double alpha_ns, double gbps) {
  for (auto a : members) {
    for (auto b : members) {
      if (a != b) {
        add_link(g, a, b, alpha_ns, gbps);
      }
    }
  }
}

std::vector<std::uint32_t> live(const NpuGraph& g) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = 0; i < g.npus; ++i) {
    if (!g.is_failed(i)) {
      v.push_back(i);
    }
  }
  return v;
}

void check_root(const NpuGraph& g, std::uint32_t root) {
  if (root >= g.npus || g.is_failed(root)) {
    throw std::invalid_argument("synth: collective root " + std::to_string(root) + " is out of range or failed");
  }
}

}  // namespace

void validate(const NpuGraph& g) {
  if (!g.failed.empty() && g.failed.size() != g.npus) {
    throw std::invalid_argument("synth: failed mask has " + std::to_string(g.failed.size()) + " entries for " +
                                std::to_string(g.npus) + " NPUs");
  }
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    const Link& l = g.links[i];
    const std::string where = "synth: link " + std::to_string(i) + " (" + std::to_string(l.src) + "->" +
                              std::to_string(l.dst) + ")";
    if (l.src >= g.npus || l.dst >= g.npus) {
      throw std::invalid_argument(where + ": NPU index out of range");
    }
    if (l.src == l.dst) {
      throw std::invalid_argument(where + ": self-loop");
    }
    if (!(l.gbps > 0.0)) {
      throw std::invalid_argument(where + ": bandwidth must be positive");
    }
    if (!(l.alpha_ns >= 0.0)) {
      throw std::invalid_argument(where + ": alpha must be non-negative");
    }
    if (g.is_failed(l.src) || g.is_failed(l.dst)) {
      throw std::invalid_argument(where + ": touches a failed NPU");
    }
  }
}

double link_time_ns(const Link& l, std::uint64_t chunk_bytes) {
  return l.alpha_ns + static_cast<double>(chunk_bytes) * 8.0 / l.gbps;
}

NpuGraph mesh(std::uint32_t rows, std::uint32_t cols, double alpha_ns, double gbps) {
  NpuGraph g;
  g.npus = rows * cols;
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t c = 0; c < cols; ++c) {
      const std::uint32_t v = r * cols + c;
      if (c + 1 < cols) {
        add_link(g, v, v + 1, alpha_ns, gbps);
        add_link(g, v + 1, v, alpha_ns, gbps);
      }
      if (r + 1 < rows) {
        add_link(g, v, v + cols, alpha_ns, gbps);
        add_link(g, v + cols, v, alpha_ns, gbps);
      }
    }
  }
  return g;
}

NpuGraph ring_ring(std::uint32_t rows, std::uint32_t cols, double alpha_ns, double gbps) {
  NpuGraph g;
  g.npus = rows * cols;
  for (std::uint32_t r = 0; r < rows; ++r) {
    std::vector<std::uint32_t> m;
    for (std::uint32_t c = 0; c < cols; ++c) {
      m.push_back(r * cols + c);
    }
    add_ring(g, m, true, alpha_ns, gbps);
  }
  for (std::uint32_t c = 0; c < cols; ++c) {
    std::vector<std::uint32_t> m;
    for (std::uint32_t r = 0; r < rows; ++r) {
      m.push_back(r * cols + c);
    }
    add_ring(g, m, true, alpha_ns, gbps);
  }
  return g;
}

NpuGraph ring(std::uint32_t n, bool bidirectional, double alpha_ns, double gbps) {
  NpuGraph g;
  g.npus = n;
  std::vector<std::uint32_t> m(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    m[i] = i;
  }
  add_ring(g, m, bidirectional, alpha_ns, gbps);
  return g;
}

NpuGraph fully_connected(std::uint32_t n, double alpha_ns, double gbps) {
  NpuGraph g;
  g.npus = n;
  add_full(g, live(g), alpha_ns, gbps);
  return g;
}

void unwind_switch(NpuGraph& g, const std::vector<std::uint32_t>& members, std::uint32_t degree, double alpha_ns,
                   double switch_gbps_per_npu) {
  const auto n = static_cast<std::uint32_t>(members.size());
  if (degree == 0 || degree >= n) {
    throw std::invalid_argument("synth: unwinding degree " + std::to_string(degree) + " outside 1.." +
                                std::to_string(n > 0 ? n - 1 : 0) + " for a switch of " + std::to_string(n) +
                                " NPUs");
  }
  const double per_link = switch_gbps_per_npu / static_cast<double>(degree);
  for (std::uint32_t k = 0; k < n; ++k) {
    for (std::uint32_t j = 1; j <= degree; ++j) {
      add_link(g, members[k], members[(k + j) % n], alpha_ns, per_link);
    }
  }
}

NpuGraph switch_switch_8x4(double alpha_ns) {
  NpuGraph g;
  g.npus = 32;
  for (std::uint32_t node = 0; node < 4; ++node) {
    std::vector<std::uint32_t> m;
    for (std::uint32_t i = 0; i < 8; ++i) {
      m.push_back(node * 8 + i);
    }
    unwind_switch(g, m, 7, alpha_ns, 300.0 * kGbpsPerGBps);
  }
  for (std::uint32_t i = 0; i < 8; ++i) {
    unwind_switch(g, {i, 8 + i, 16 + i, 24 + i}, 1, alpha_ns, 25.0 * kGbpsPerGBps);
  }
  return g;
}

NpuGraph ring_fc_switch(std::uint32_t nodes, double alpha_ns) {
  NpuGraph g;
  g.npus = nodes * 8;
  for (std::uint32_t node = 0; node < nodes; ++node) {
    const std::uint32_t base = node * 8;
    for (std::uint32_t i2 = 0; i2 < 4; ++i2) {
      add_ring(g, {base + 2 * i2, base + 2 * i2 + 1}, true, alpha_ns, 200.0 * kGbpsPerGBps);
    }
    for (std::uint32_t i1 = 0; i1 < 2; ++i1) {
      add_full(g, {base + i1, base + i1 + 2, base + i1 + 4, base + i1 + 6}, alpha_ns, 100.0 * kGbpsPerGBps);
    }
  }
  if (nodes >= 2) {
    for (std::uint32_t l = 0; l < 8; ++l) {
      std::vector<std::uint32_t> m;
      for (std::uint32_t node = 0; node < nodes; ++node) {
        m.push_back(node * 8 + l);
      }
      unwind_switch(g, m, 1, alpha_ns, 50.0 * kGbpsPerGBps);
    }
  }
  return g;
}

NpuGraph dragonfly_4x5(double alpha_ns) {
  NpuGraph g;
  g.npus = 20;
  for (std::uint32_t grp = 0; grp < 5; ++grp) {
    add_full(g, {grp * 4, grp * 4 + 1, grp * 4 + 2, grp * 4 + 3}, alpha_ns, 400.0 * kGbpsPerGBps);
  }
  for (std::uint32_t a = 0; a < 5; ++a) {
    for (std::uint32_t b = a + 1; b < 5; ++b) {
      const std::uint32_t u = a * 4 + (b - 1) % 4, v = b * 4 + a % 4;
      add_link(g, u, v, alpha_ns, 200.0 * kGbpsPerGBps);
      add_link(g, v, u, alpha_ns, 200.0 * kGbpsPerGBps);
    }
  }
  return g;
}

void remove_npus(NpuGraph& g, const std::vector<std::uint32_t>& npus) {
  if (g.failed.empty()) {
    g.failed.assign(g.npus, 0);
  }
  for (auto v : npus) {
    if (v >= g.npus) {
      throw std::invalid_argument("synth: cannot remove NPU " + std::to_string(v) + " of " + std::to_string(g.npus));
    }
    g.failed[v] = 1;
  }
  g.links.erase(std::remove_if(g.links.begin(), g.links.end(),
                               [&](const Link& l) { return g.is_failed(l.src) || g.is_failed(l.dst); }),
                g.links.end());
}

Collective all_gather(const NpuGraph& g, std::uint32_t chunks_per_npu, std::uint64_t chunk_bytes) {
  Collective c;
  c.chunk_bytes = chunk_bytes;
  const auto npus = live(g);
  for (auto src : npus) {
    for (std::uint32_t k = 0; k < chunks_per_npu; ++k) {
      const std::uint32_t id = c.chunks++;
      c.pre.emplace_back(id, src);
      for (auto dst : npus) {
        if (dst != src) {
          c.post.emplace_back(id, dst);
        }
      }
    }
  }
  return c;
}

Collective broadcast(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks, std::uint64_t chunk_bytes) {
  check_root(g, root);
  Collective c;
  c.chunk_bytes = chunk_bytes;
  c.chunks = chunks;
  const auto npus = live(g);
  for (std::uint32_t id = 0; id < chunks; ++id) {
    c.pre.emplace_back(id, root);
    for (auto dst : npus) {
      if (dst != root) {
        c.post.emplace_back(id, dst);
      }
    }
  }
  return c;
}

namespace {

/// One chunk set per non-root live NPU, between it and the root: from the
/// root (scatter) or to it (gather).
Collective root_exchange(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks_per_npu,
                         std::uint64_t chunk_bytes, bool to_root) {
  check_root(g, root);
  Collective c;
  c.chunk_bytes = chunk_bytes;
  for (auto npu : live(g)) {
    if (npu == root) {
      continue;
    }
    for (std::uint32_t k = 0; k < chunks_per_npu; ++k) {
      const std::uint32_t id = c.chunks++;
      c.pre.emplace_back(id, to_root ? npu : root);
      c.post.emplace_back(id, to_root ? root : npu);
    }
  }
  return c;
}

}  // namespace

Collective scatter(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks_per_npu, std::uint64_t chunk_bytes) {
  return root_exchange(g, root, chunks_per_npu, chunk_bytes, false);
}

Collective gather(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks_per_npu, std::uint64_t chunk_bytes) {
  return root_exchange(g, root, chunks_per_npu, chunk_bytes, true);
}

}  // namespace fabricsim::synth
