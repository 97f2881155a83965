// The Expander baseline's random d-regular multigraph; the drawing rules are
// documented in expander.hpp (spec: ../shared/spec/topoopt.md §2.3).
#include "fabricsim/net/expander.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {

using detail::num;
using util::ConfigError;
using Edge = std::pair<std::uint32_t, std::uint32_t>;

/// Redraws of a same-server partner before switching to an exact draw among
/// the others: plenty while most free interfaces are elsewhere, and bounded
/// when nearly all of them sit on one server.
constexpr int kRedraws = 64;

Edge ordered(std::uint32_t a, std::uint32_t b) { return a < b ? Edge{a, b} : Edge{b, a}; }

void check_params(std::uint32_t n, std::uint32_t d) {
  if (n < 2) throw ConfigError("topology.servers: an expander needs at least 2 servers, got " + num(n));
  detail::require_positive(d, "topology.degree");
  if (d > kMaxRadix) {
    throw ConfigError("topology.degree: " + num(d) + " interfaces per server exceed the supported " + num(kMaxRadix));
  }
  if (d == 1 && n > 2) {
    throw ConfigError("topology.degree: a connected graph of degree 1 has exactly 2 servers, got " + num(n) +
                      " servers; use degree >= 2");
  }
  const std::uint64_t ifaces = std::uint64_t{n} * d;
  if (ifaces % 2 != 0) {
    throw ConfigError("topology.degree: " + num(n) + " servers of degree " + num(d) + " have an odd number (" +
                      num(ifaces) + ") of interfaces, and every cable uses two");
  }
  // Each cable becomes two directed links of a Topology.
  if (ifaces >= kNoLink) {
    throw ConfigError("topology.servers: " + num(n) + " servers of degree " + num(d) + " is too large");
  }
}

/// Fisher-Yates with the stream's own bounded draw.
template <typename T>
void shuffle(std::vector<T>& v, util::RandomStream& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace

std::vector<Edge> random_regular_multigraph(std::uint32_t n, std::uint32_t d, std::uint64_t seed) {
  check_params(n, d);
  util::RandomStream rng(seed, kExpanderStream);
  std::vector<Edge> edges;
  edges.reserve(static_cast<std::size_t>(std::uint64_t{n} * d / 2));

  // 1. The spanning path over a random permutation.
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  shuffle(order, rng);
  std::vector<std::uint32_t> free_count(n, d);
  for (std::uint32_t i = 0; i + 1 < n; ++i) {
    edges.push_back(ordered(order[i], order[i + 1]));
    --free_count[order[i]];
    --free_count[order[i + 1]];
  }

  // 2. Pair the remaining free interfaces.  `stubs` holds one entry (its
  // server) per free interface, in random order.
  std::vector<std::uint32_t> stubs;
  stubs.reserve(static_cast<std::size_t>(std::uint64_t{n} * d - 2 * (std::uint64_t{n} - 1)));
  for (std::uint32_t s = 0; s < n; ++s) stubs.insert(stubs.end(), free_count[s], s);
  shuffle(stubs, rng);
  while (!stubs.empty()) {
    const std::uint32_t a = stubs.back();
    const std::size_t others = stubs.size() - free_count[a];
    if (others == 0) break;  // only loops left: repaired below
    stubs.pop_back();
    --free_count[a];
    std::size_t j = stubs.size();
    for (int t = 0; t < kRedraws && j == stubs.size(); ++t) {
      const auto c = static_cast<std::size_t>(rng.below(stubs.size()));
      if (stubs[c] != a) j = c;
    }
    if (j == stubs.size()) {
      // The r-th free interface not on a: uniform among them, as the
      // unbounded redraw would be.
      auto r = rng.below(others);
      for (j = 0;; ++j) {
        if (stubs[j] != a && r-- == 0) break;
      }
    }
    const std::uint32_t b = stubs[j];
    stubs[j] = stubs.back();
    stubs.pop_back();
    --free_count[b];
    edges.push_back(ordered(a, b));
  }

  // 3. The free interfaces left (an even number) all sit on one server a:
  // splice a into an edge that avoids it, once per would-be loop.  Edges not
  // at a number ((n-2)d + left)/2 > 0 for n >= 3, and n = 2 never gets here
  // (its two servers always have equally many free interfaces).
  std::vector<std::size_t> candidates;
  for (std::size_t left = stubs.size(); left >= 2; left -= 2) {
    const std::uint32_t a = stubs.front();
    candidates.clear();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (edges[i].first != a && edges[i].second != a) candidates.push_back(i);
    }
    const std::size_t pick = candidates[static_cast<std::size_t>(rng.below(candidates.size()))];
    const auto [x, y] = edges[pick];
    edges[pick] = ordered(a, x);
    edges.push_back(ordered(a, y));
  }
  return edges;
}

}  // namespace fabricsim::net
