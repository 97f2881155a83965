#include "fabricsim/workload/placement.hpp"

#include <algorithm>
#include <unordered_map>

#include "fabricsim/util/error.hpp"

namespace fabricsim::workload {

EndpointPool::EndpointPool(std::uint32_t endpoints)
    : used_(endpoints, 0), tree_(std::size_t{endpoints} + 1, 0), free_(endpoints) {
  // Fenwick tree of all ones, built in linear time.
  for (std::size_t i = 1; i <= endpoints; ++i) {
    tree_[i] += 1;
    const std::size_t parent = i + (i & (~i + 1));
    if (parent <= endpoints) tree_[parent] += tree_[i];
  }
}

void EndpointPool::take(net::EndpointId e) {
  if (used_[e]) return;
  used_[e] = 1;
  --free_;
  taken_log_.push_back(e);
  for (std::size_t i = std::size_t{e} + 1; i < tree_.size(); i += i & (~i + 1)) --tree_[i];
}

void EndpointPool::release(net::EndpointId e) {
  if (!used_[e]) return;
  used_[e] = 0;
  ++free_;
  for (std::size_t i = std::size_t{e} + 1; i < tree_.size(); i += i & (~i + 1)) ++tree_[i];
  for (auto& [key, o] : orders_) o.cursor = 0;  // (the cursors assumed nothing is ever freed)
}

std::vector<net::EndpointId> EndpointPool::taken_since(std::size_t mark) const {
  return {taken_log_.begin() + static_cast<std::ptrdiff_t>(mark), taken_log_.end()};
}

std::vector<net::EndpointId> EndpointPool::first_free(std::uint32_t n, const std::string& key,
                                                      const std::function<std::vector<net::EndpointId>()>& make) {
  auto [it, fresh] = orders_.try_emplace(key);
  Order& o = it->second;
  if (fresh && make) o.ids = make();
  const std::size_t size = o.ids.empty() ? used_.size() : o.ids.size();
  const auto at = [&](std::size_t i) { return o.ids.empty() ? static_cast<net::EndpointId>(i) : o.ids[i]; };
  while (o.cursor < size && !is_free(at(o.cursor))) ++o.cursor;
  std::vector<net::EndpointId> out;
  for (std::size_t i = o.cursor; i < size && out.size() < n; ++i)
    if (is_free(at(i))) out.push_back(at(i));
  return out;
}

net::EndpointId EndpointPool::kth_free(std::uint32_t k) const {
  // Descend the Fenwick tree: the smallest position whose prefix count is k + 1.
  std::size_t pos = 0;
  std::size_t step = 1;
  while (step * 2 < tree_.size()) step *= 2;
  std::uint32_t left = k + 1;
  for (; step > 0; step /= 2)
    if (pos + step < tree_.size() && tree_[pos + step] < left) {
      pos += step;
      left -= tree_[pos];
    }
  return static_cast<net::EndpointId>(pos);  // (1-based pos + 1, minus one)
}

std::vector<net::EndpointId> EndpointPool::shuffled(std::uint32_t n, util::RandomStream& rng) const {
  // The swaps touch at most 2n positions: keep only those.
  std::unordered_map<std::uint32_t, net::EndpointId> moved;
  const auto value = [&](std::uint32_t i) {
    const auto it = moved.find(i);
    return it == moved.end() ? kth_free(i) : it->second;
  };
  std::vector<net::EndpointId> out(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto j = static_cast<std::uint32_t>(i + rng.below(free_ - i));
    const net::EndpointId vi = value(i), vj = value(j);
    moved[j] = vi;
    out[i] = vj;
  }
  return out;
}

std::vector<net::EndpointId> choose_endpoints(EndpointPool& pool, std::uint32_t n, const PlacementRule& rule) {
  if (!pool.assignment().empty()) {
    if (pool.assignment().size() != n)
      throw util::ConfigError("workload.placement: the scheduler assigned " + std::to_string(pool.assignment().size()) +
                              " endpoints to a job of " + std::to_string(n));
    return pool.assignment();
  }
  const std::string& p = rule.placement;
  if (p == "linear" || p == "by_server") return pool.first_free(n, "id");  // servers' GPUs are consecutive ids
  if (p == "by_board" || p == "grid") return pool.first_free(n, p, rule.order);
  if (p == "by_rail") {
    // Rail by rail: GPU 0 of every server, then GPU 1, ...
    const std::uint32_t G = std::max(1u, rule.gpus_per_server);
    const std::uint32_t endpoints = pool.endpoints();
    if (endpoints % G != 0)
      throw util::ConfigError("workload.placement: by_rail needs whole servers of " + std::to_string(G) + " GPUs");
    return pool.first_free(n, "by_rail/" + std::to_string(G), [G, endpoints] {
      std::vector<net::EndpointId> order(endpoints);
      for (std::uint32_t i = 0; i < endpoints; ++i) order[i] = (i % (endpoints / G)) * G + i / (endpoints / G);
      return order;
    });
  }
  if (p == "random") {
    util::RandomStream rng(rule.seed, rule.stream);
    return pool.shuffled(std::min(n, pool.free_count()), rng);
  }
  throw util::ConfigError("workload.placement: unknown placement '" + p +
                          "' (linear, by_server, by_rail, by_board, grid, random or list)");
}

}  // namespace fabricsim::workload
