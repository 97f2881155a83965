// Paths of messages for the flow-level and analytic network models: what
// links a message between two endpoints crosses, with which share of its
// rate, and what latency its path adds.
//
// The models ask a PathProvider, so the run path can plug in the configured
// routing.  Two providers are here, both over minimal paths (shortest in
// data-carrying links, intermediate nodes forwarding):
//   * ShortestPaths: breadth-first distances over the Topology, computed per
//     destination on first use (4 bytes per node and destination asked for;
//     for the direct topologies and custom graphs at the sizes a flow run
//     needs),
//   * TablePaths: the candidates of a RoutingTable (the trees, leaf-spine,
//     TopoOpt and custom graphs; no per-destination memory), which also
//     prefers, among equally short paths, those with the fewest links
//     outside an intra-server fabric, as the packet model does.
// Each either picks one path per message (PathSplit::Single, the ECMP
// reading: at every node one candidate by a hash of (seed, key, node)), or
// splits the message evenly over the candidates at every node
// (PathSplit::Even, what per-packet spraying averages to; adaptive routing
// on an idle fabric likewise).
#pragma once

#include <cstdint>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/flow_rates.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

/// The route of one message.
struct FlowRoute {
  /// Single path: its links in order from the source, weight 1 each.  Split:
  /// every link some path uses, with the share of the message that crosses
  /// it, in breadth-first order from the source (each link once).
  std::vector<FlowLink> links;
  /// Links on a path (all paths of a route have as many).
  std::uint32_t hops = 0;
  /// Sum of the links' propagation latencies, the largest over the paths.
  core::SimTime propagation;
  /// The smallest link rate on the route (Gb/s): where one packet's
  /// serialization is counted.
  double bottleneck_gbps = 0.0;
  /// Whether `links` is one path in order (weights 1).
  bool single = true;

  void clear() {
    links.clear();
    hops = 0;
    propagation = core::SimTime::zero();
    bottleneck_gbps = 0.0;
    single = true;
  }
};

class PathProvider {
 public:
  virtual ~PathProvider() = default;
  /// The route from endpoint `src` to endpoint `dst` (distinct); `key`
  /// tells messages of one pair apart (the message's ECMP entropy) where a
  /// provider picks one path of several.  Overwrites `out`.  Throws
  /// util::ConfigError if dst cannot be reached.
  virtual void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) = 0;
};

enum class PathSplit : std::uint8_t { Single, Even };

namespace flow_detail {
/// Walks minimal paths given a candidate function (out-links of a node one
/// hop closer to the destination); shared by the providers.
class PathWalker {
 public:
  explicit PathWalker(const Topology& topo) : topo_(topo) {}
  template <class Candidates>
  void walk(EndpointId src, EndpointId dst, std::uint64_t key, std::uint64_t seed, PathSplit split,
            Candidates&& candidates, FlowRoute& out);

 private:
  struct Reached {
    NodeId node;
    double weight;
    core::SimTime latency;
  };
  void unreachable(EndpointId src, EndpointId dst) const;
  const Topology& topo_;
  std::vector<LinkId> cand_;
  std::vector<Reached> layer_;
  std::vector<Reached> next_;
  std::vector<std::uint32_t> slot_;  // per node: its index in next_, or kNone
};
}  // namespace flow_detail

/// Minimal paths by breadth-first search over the topology.
class ShortestPaths : public PathProvider {
 public:
  ShortestPaths(const Topology& topo, PathSplit split, std::uint64_t seed = 0);
  void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) override;
  /// Hops from node n to endpoint dst (kUnreachable if none).
  std::uint32_t distance(NodeId n, EndpointId dst);
  static constexpr std::uint32_t kUnreachable = 0xFFFFFFFFu;

 private:
  const std::vector<std::uint32_t>& distances(EndpointId dst);
  const Topology& topo_;
  PathSplit split_;
  std::uint64_t seed_;
  std::vector<std::vector<std::uint32_t>> dist_;  // per destination endpoint, filled on first use
  std::vector<NodeId> queue_;
  flow_detail::PathWalker walker_;
};

class RoutingTable;

/// Minimal paths from the candidates of a RoutingTable (owned by the
/// caller, must outlive this).
class TablePaths : public PathProvider {
 public:
  TablePaths(const Topology& topo, const RoutingTable& table, PathSplit split, std::uint64_t seed = 0);
  void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) override;

 private:
  const Topology& topo_;
  const RoutingTable& table_;
  PathSplit split_;
  std::uint64_t seed_;
  flow_detail::PathWalker walker_;
};

}  // namespace fabricsim::net
