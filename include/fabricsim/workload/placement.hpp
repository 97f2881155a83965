// The endpoints still free for the jobs of a run, and the placements'
// choices among them, in time linear in what a job takes (a run of
// thousands of [[jobs]] tables must not rescan every endpoint per job).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fabricsim/net/network.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::workload {

class EndpointPool {
 public:
  /// Endpoints 0 .. endpoints-1, all free.
  explicit EndpointPool(std::uint32_t endpoints);
  std::uint32_t endpoints() const { return static_cast<std::uint32_t>(used_.size()); }
  std::uint32_t free_count() const { return free_; }
  bool is_free(net::EndpointId e) const { return used_[e] == 0; }
  /// Marks `e` as taken (by the job being placed).
  void take(net::EndpointId e);
  /// Frees `e` again (its job ended: a cluster queue, workload.queue).
  void release(net::EndpointId e);
  /// A mark in the log of takes, and the endpoints taken since a mark (what
  /// one job's placement took).
  std::size_t take_mark() const { return taken_log_.size(); }
  std::vector<net::EndpointId> taken_since(std::size_t mark) const;
  /// The first `n` free endpoints along an order of all endpoints (`key`
  /// names it, `make` builds it the first time; an empty order is id
  /// order), in that order; fewer if fewer are free along it.  A cursor
  /// per order skips what earlier jobs took, so a run of many jobs scans
  /// each order about once.
  std::vector<net::EndpointId> first_free(std::uint32_t n, const std::string& key,
                                          const std::function<std::vector<net::EndpointId>()>& make = {});
  /// A scheduler's choice for the next job placed (a cluster queue's
  /// whole-server or vClos placement): every placement rule then returns
  /// exactly these, in this rank order, until clear_assignment().
  void assign(std::vector<net::EndpointId> endpoints) { assigned_ = std::move(endpoints); }
  void clear_assignment() { assigned_.clear(); }
  const std::vector<net::EndpointId>& assignment() const { return assigned_; }
  /// Whether first_free has seen the order `key`.
  bool has_order(const std::string& key) const { return orders_.count(key) > 0; }
  /// The k-th free endpoint in id order (k < free_count()), in O(log endpoints).
  net::EndpointId kth_free(std::uint32_t k) const;
  /// The first `n` of the free endpoints (id order) after the partial
  /// Fisher-Yates shuffle that swaps position i with i + rng.below(free - i)
  /// for i < n: the same draw as shuffling the whole list, in O(n log endpoints).
  std::vector<net::EndpointId> shuffled(std::uint32_t n, util::RandomStream& rng) const;

 private:
  struct Order {
    std::vector<net::EndpointId> ids;  // empty: id order
    std::size_t cursor = 0;            // every entry before it is taken
  };
  std::vector<std::uint8_t> used_;
  std::vector<std::uint32_t> tree_;  // Fenwick tree of free flags (1-based)
  std::uint32_t free_ = 0;
  std::map<std::string, Order> orders_;
  std::vector<net::EndpointId> taken_log_;
  std::vector<net::EndpointId> assigned_;
};

/// How a job's endpoints are chosen among the free ones: the one placement
/// module behind workload.placement for every job kind (collectives' communicators,
/// dnn and trace jobs); `list` is read by the callers, which validate it
/// with their own keys.
struct PlacementRule {
  /// linear, by_server (id order), by_rail, by_board, grid (an order of
  /// every endpoint, `order`), random.
  std::string placement = "linear";
  std::uint32_t gpus_per_server = 1;                     ///< by_rail
  std::function<std::vector<net::EndpointId>()> order;   ///< by_board, grid (built once per pool)
  std::uint64_t seed = 0, stream = 0;                    ///< random: RandomStream(seed, stream)
};

/// `n` free endpoints of `pool` in rank order by `rule` (the pool's
/// assignment instead, when it has one; it must hold `n`).  Does not take
/// them.  Fewer than `n` only when fewer are free along the rule's order.
/// ConfigError (workload.placement) for an unknown rule, or by_rail on
/// endpoints that are not whole servers.
std::vector<net::EndpointId> choose_endpoints(EndpointPool& pool, std::uint32_t n, const PlacementRule& rule);

}  // namespace fabricsim::workload
