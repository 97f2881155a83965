// Private helpers shared by Topology::diameter() and RoutingTable: the
// reverse adjacency of a topology, destination groups and the per-group BFS.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::net::detail {

inline constexpr std::uint32_t kInf = std::numeric_limits<std::uint32_t>::max();

/// Tie-break weight of a link: minimal paths are shortest in links, and among
/// equally short ones those with the smallest sum of these weights win.
/// IntraServer links weigh 0, all others 1.
inline std::uint32_t tie_weight(LinkClass cls) { return cls == LinkClass::IntraServer ? 0u : 1u; }

/// Builder helpers: ceiling division, a number as text for messages, and
/// "KEY: must be at least 1" for a zero count.
inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }
inline std::string num(std::uint64_t v) { return std::to_string(v); }
void require_positive(std::uint64_t value, const char* key);

/// Throws util::ConfigError unless bandwidth > 0 and latency >= 0; `key` is
/// the config key prefix used in the message, e.g. "topology.host_link".
void validate_link_params(const LinkParams& params, const char* key);

/// The checks every builder starts with, in this order: each link class
/// valid (validate_link_params), each count at least 1 (require_positive).
/// ConfigError naming the key of the first that fails.
struct NamedLink {
  const LinkParams& params;
  const char* key;
};
struct NamedCount {
  std::uint64_t value;
  const char* key;
};
void check_builder_params(std::initializer_list<NamedLink> links, std::initializer_list<NamedCount> counts);
/// topology.radix at least 2 and at most kMaxRadix.
void check_radix(std::uint64_t radix);

/// Incoming links of every node as CSR: for node y, entries
/// [offsets[y], offsets[y+1]) give the source node x and tie weight of each
/// link x -> y.
struct ReverseGraph {
  std::vector<std::uint32_t> offsets;
  std::vector<NodeId> pred;
  std::vector<std::uint32_t> weight;
  std::vector<std::uint8_t> forwards;  ///< per node
};
ReverseGraph make_reverse_graph(const Topology& topo);

/// Destination groups: endpoints whose in-neighbours (with the smallest tie
/// weight of their links to the endpoint) are identical.  Group ids follow
/// the order of each group's first endpoint.
struct DestinationGroups {
  std::vector<std::uint32_t> group_of;  ///< per endpoint
  std::vector<std::uint32_t> members;   ///< per group: number of endpoints
  /// BFS seeds of group g: [seed_offsets[g], seed_offsets[g+1]) of
  /// (node at distance 1, tie weight of its link to the group's endpoints).
  std::vector<std::uint32_t> seed_offsets;
  std::vector<NodeId> seed_node;
  std::vector<std::uint32_t> seed_weight;

  std::size_t size() const { return members.size(); }
};
DestinationGroups group_destinations(const Topology& topo);

/// Multi-source BFS towards one destination group, on the reverse graph.
/// dist[x] is the number of links from x to any endpoint of the group other
/// than x itself (kInf if none), passing only through forwarding nodes;
/// sec[x] is the smallest tie-weight sum over those shortest paths.
class GroupBfs {
 public:
  explicit GroupBfs(const ReverseGraph& graph);
  void run(const DestinationGroups& groups, std::uint32_t group);

  std::vector<std::uint32_t> dist;
  std::vector<std::uint32_t> sec;

 private:
  const ReverseGraph& graph_;
  std::vector<NodeId> current_;
  std::vector<NodeId> next_;
};

}  // namespace fabricsim::net::detail
