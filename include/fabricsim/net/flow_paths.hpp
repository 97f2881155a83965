// Paths of messages for the flow-level and analytic network models: what
// links a message between two endpoints crosses, with which share of its
// rate, and what latency its path adds.
//
// The models ask a PathProvider, so the run path can plug in the configured
// routing (app::flow_paths picks one).  Four providers are here:
//   * TablePaths: the minimal paths of a RoutingTable (the trees,
//     leaf-spine and custom graphs; no per-destination memory), which also
//     prefers, among equally short paths, those with the fewest links
//     outside an intra-server fabric, as the packet model does,
//   * RulesPaths: the routes the packet model's route rules allow
//     (StateRoutes: torus dimension order or Duato, HammingMesh/HyperX,
//     Dragonfly minimal, TopoOpt hop-count): a walk over (node, rule
//     state) taking, at each hop, the moves StateRoutes::options() offers,
//   * ListedRoutes: TopoOpt's k shortest (not necessarily minimal) coin
//     routes per pair (ListedPaths, routing.k_paths > 1),
//   * ShortestPaths: minimal paths by breadth-first distances over the
//     Topology, computed per destination on first use (4 bytes per node and
//     destination asked for); for graphs routed up*/down* (whose up/down
//     restriction it does not model) and for tests.
// Each either picks one path per message (PathSplit::Single) or splits the
// message evenly (PathSplit::Even, what per-packet spraying averages to;
// adaptive routing on an idle fabric likewise):
//   * TablePaths, ShortestPaths: Single picks at every node one candidate
//     by a hash of (seed, key, node) (the ECMP reading); Even splits evenly
//     over the candidates at every node;
//   * RulesPaths: Single takes the first move at every hop (RulePick::First:
//     dor, minimal, dmodk, as the packet model does deterministically) or
//     one by a hash of (seed, key, node) (RulePick::Hash: ecmp, and
//     adaptive in the analytic model); Even splits every (node, state)'s
//     share evenly over the distinct links its moves offer (a link offered
//     as several moves, e.g. Duato's adaptive and escape move, passes its
//     share on evenly over them), merging the shares per link;
//   * ListedRoutes: Single takes the route the packet model gives the
//     message (ListedPaths::choice: a hash of the engine seed and the message
//     id), Even splits evenly over the pair's k routes.
// Links on the paths are data-carrying; intermediate nodes forward.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/flow_rates.hpp"
#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/link_state.hpp"
#include "fabricsim/net/route_plan.hpp"
#include "fabricsim/net/route_policy.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

/// The route of one message.
struct FlowRoute {
  /// Single path: its links in order from the source, weight 1 each.  Split:
  /// every link some path uses, with the share of the message that crosses
  /// it, in breadth-first order from the source (each link once).
  std::vector<FlowLink> links;
  /// Links on a path (all paths of a route have as many, except ListedRoutes'
  /// split over routes of different lengths: there the longest's).
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
  /// The route of message `message` (its id in the model), what the flow
  /// and analytic models ask: route(src, dst, key) unless the provider
  /// picks by the message id as the packet model does (ListedRoutes).
  virtual void route_message(EndpointId src, EndpointId dst, std::uint64_t key, std::uint32_t message, FlowRoute& out) {
    (void)message;
    route(src, dst, key, out);
  }
  /// Link state ([[failures]]): from now on, routes only over links `live`
  /// says still lead to the destination (the packet model's choice among
  /// the live candidates), util::ConfigError where none is left.
  void set_live(LiveRoutes* live) { live_ = live; }
  /// The flows on each link now (the flow model's), read by a policy that
  /// picks by load when a flow starts (PickMechanism::LeastFlows).
  void set_load(std::function<std::size_t(LinkId)> load) { load_ = std::move(load); }

 protected:
  /// Whether failures filter the candidates now.
  bool filtering() const { return live_ != nullptr && live_->any_down(); }
  LiveRoutes* live_ = nullptr;
  std::function<std::size_t(LinkId)> load_;
};

enum class PathSplit : std::uint8_t { Single, Even };

namespace flow_detail {
/// Walks minimal paths given a candidate function (out-links of a node one
/// hop closer to the destination); shared by the providers.
class PathWalker {
 public:
  explicit PathWalker(const Topology& topo) : topo_(topo) {}
  template <class Candidates>
  /// PathSplit::Single: one candidate per node, picked by `ecmp` as the
  /// packet model picks it (`key`: the message's UDP source port).
  void walk(EndpointId src, EndpointId dst, std::uint64_t key, const Ecmp& ecmp, PathSplit split,
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
  ShortestPaths(const Topology& topo, PathSplit split, std::uint32_t seed = 0, EcmpHash hash = EcmpHash::Mix64);
  void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) override;
  /// Hops from node n to endpoint dst (kUnreachable if none).
  std::uint32_t distance(NodeId n, EndpointId dst);
  static constexpr std::uint32_t kUnreachable = 0xFFFFFFFFu;

 private:
  const std::vector<std::uint32_t>& distances(EndpointId dst);
  const Topology& topo_;
  PathSplit split_;
  Ecmp ecmp_;
  std::vector<std::vector<std::uint32_t>> dist_;  // per destination endpoint, filled on first use
  std::uint64_t dist_version_ = 0;  // the link state's version dist_ was computed at
  std::vector<NodeId> queue_;
  flow_detail::PathWalker walker_;
};

class RoutingTable;

/// Minimal paths from the candidates of a RoutingTable (owned by the
/// caller, must outlive this).
class TablePaths : public PathProvider {
 public:
  /// PathSplit::Single: one path per message, at every node the candidate
  /// `policy` picks (route_policy.hpp: the packet model's function, so the
  /// same path); Even: an even split over the candidates.
  TablePaths(const Topology& topo, const RoutingTable& table, const RoutePolicy& policy, PathSplit split,
             std::uint32_t seed = 0, EcmpHash hash = EcmpHash::Mix64);
  /// The same by ECMP, or with `dmodk` by D-mod-k (`split` is then ignored).
  TablePaths(const Topology& topo, const RoutingTable& table, PathSplit split, std::uint32_t seed = 0,
             bool dmodk = false, EcmpHash hash = EcmpHash::Mix64);
  void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) override;

 private:
  const Topology& topo_;
  const RoutingTable& table_;
  const RoutePolicy& policy_;
  PathSplit split_;
  Ecmp ecmp_;
  std::vector<std::uint32_t> divisors_;  ///< dmodk_divisors(topo), per level
  std::vector<PortIndex> live_ports_;
  std::vector<PortIndex> least_ports_;
  flow_detail::PathWalker walker_;
};

class StateRoutes;

/// Which move RulesPaths takes with PathSplit::Single where the rules offer
/// several: the first (in port order, as the packet model's deterministic
/// algorithms do) or one by the ECMP hash (ecmp.hpp), as the packet model's ecmp.
enum class RulePick : std::uint8_t { First, Hash };

/// The routes of a StateRoutes (owned by the caller, must outlive this)
/// towards the endpoints: from the source endpoint's node in the rules'
/// initial state, each hop one of the moves StateRoutes::options() offers
/// (all on shortest legal routes, so every path of a route has the same
/// length).  Memory: 4 bytes per (node, state) and per link, allocated on
/// first use.
class RulesPaths : public PathProvider {
 public:
  /// PathSplit::Single: at every hop the move `policy` picks (its
  /// rules_pick, or the first move), as the packet model does.
  RulesPaths(const Topology& topo, const StateRoutes& routes, const RoutePolicy& policy, PathSplit split,
             std::uint32_t seed = 0, EcmpHash hash = EcmpHash::Mix64);
  RulesPaths(const Topology& topo, const StateRoutes& routes, PathSplit split, std::uint32_t seed = 0,
             RulePick pick = RulePick::Hash, EcmpHash hash = EcmpHash::Mix64);
  void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) override;

 private:
  struct Reached {
    NodeId node;
    std::uint8_t state;
    double weight;
    core::SimTime latency;
  };
  [[noreturn]] void unreachable(EndpointId src, EndpointId dst) const;
  void add_link(LinkId l, double weight, FlowRoute& out);
  const Topology& topo_;
  const StateRoutes& routes_;
  const RoutePolicy& policy_;
  PathSplit split_;
  Ecmp ecmp_;
  std::vector<std::uint32_t> divisors_;
  std::size_t states_;
  std::vector<std::uint32_t> slot_;       // per (node, state): its index in next_, or none
  std::vector<std::uint32_t> link_slot_;  // per link: its index in out.links, or none
  std::vector<Reached> layer_;
  std::vector<Reached> next_;
  std::vector<LinkId> distinct_;
};

class ListedPaths;

/// TopoOpt's k shortest routes per pair (ListedPaths: CoinPaths on circulant
/// rings, ServerPaths on any other server fabric; owned by the caller, must
/// outlive this).  Single: route_message() takes the route the packet
/// model gives the message (ListedPaths::choice under the engine seed
/// `seed`); route() without a message id picks by a hash of (seed, key).
/// Even: each of the pair's routes carries an equal share (the packet
/// model keeps one route per message under every algorithm: this is the
/// average over many messages of a pair), shares merged per link.
class ListedRoutes : public PathProvider {
 public:
  ListedRoutes(const Topology& topo, const ListedPaths& paths, PathSplit split, std::uint64_t seed = 1);
  void route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) override;
  void route_message(EndpointId src, EndpointId dst, std::uint64_t key, std::uint32_t message, FlowRoute& out) override;

 private:
  void single(EndpointId src, EndpointId dst, std::size_t choice, FlowRoute& out);
  void even(EndpointId src, EndpointId dst, FlowRoute& out);
  const Topology& topo_;
  const ListedPaths& paths_;
  PathSplit split_;
  std::uint64_t seed_;
  std::vector<LinkId> path_;
  std::vector<std::vector<LinkId>> routes_;
  std::vector<std::uint32_t> link_slot_;  // per link: its index in out.links, or none
};

/// The flow and analytic models' paths from a run's route plan: TopoOpt's
/// coin routes (the message's own by `seed`, the engine seed, as the packet
/// model picks it), the route rules of the direct topologies (RulesPaths),
/// up*/down* graphs on plain minimal paths (the up/down restriction is a
/// deadlock rule the flow models need not obey), else the minimal-route
/// table (TablePaths, built into `table`).  The policy's static reading: an
/// even split for the dynamic policies in the flow model, one path by its
/// pick otherwise (route_policy.hpp).  util::ConfigError for Valiant and
/// UGAL, whose paths only the packet model's queues decide.
std::unique_ptr<PathProvider> make_flow_paths(const Topology& topo, const RoutePlan& plan, std::uint64_t seed,
                                              bool analytic, std::unique_ptr<RoutingTable>& table);

}  // namespace fabricsim::net
