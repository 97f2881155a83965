// Routing by rules over (node, state): the routing of the direct topologies
// (torus, HyperX, HammingMesh, Dragonfly, forwarding-endpoint graphs).
//
// A RouteRules object says which moves a packet may make: in routing state
// s at node `at`, heading for target t, may it take link l, and in which
// state does it arrive?  The state carries what deadlock freedom needs (the
// virtual channel, a turn-model flag, an up/down phase, the dimension being
// routed) and decides the virtual channel of the buffer the packet occupies
// after the move (vc(state)).  StateRoutes then computes, per target, the
// length of the shortest *legal* route from every (node, state) by a
// backward breadth-first search, and offers at each hop the legal moves that
// stay on a shortest legal route.  Which of those a packet takes is the
// network's choice (least loaded for adaptive routing, the first for
// deterministic routing).
//
// The rules are small and local; the tables make every offered move
// provably lead to the target, and check_state_routes() proves the channel
// dependency graph of the reachable (channel, state) pairs acyclic
// (Dally & Seitz), or, for Duato-style adaptive rules, that of the escape
// moves alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabricsim/net/cdg.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

class RouteRules {
 public:
  static constexpr std::uint8_t kIllegal = 0xFF;
  virtual ~RouteRules() = default;
  /// Number of states (at most 254).
  virtual std::uint8_t state_count() const = 0;
  /// State of a packet at its source, before its first move.
  virtual std::uint8_t initial_state() const { return 0; }
  /// Moves over one link may lead to several states (Duato: the same link
  /// as an adaptive or as an escape move): alternatives() of them.
  virtual unsigned alternatives() const { return 1; }
  /// The state after taking link `l` (leaving `at`) in state `s` towards
  /// target `target` as alternative `alt`, or kIllegal.
  virtual std::uint8_t step(NodeId at, std::uint8_t s, LinkId l, std::uint32_t target, unsigned alt) const = 0;
  /// Virtual channel of the buffer a packet in state s occupies (the
  /// channel of the link it arrived over).
  virtual std::uint8_t vc(std::uint8_t s) const = 0;
  /// Virtual channels the rules use (1 + the largest vc()).
  virtual std::uint8_t vcs() const = 0;
  /// Whether step() looks at the target (then the tables are built per
  /// target from scratch; otherwise the move graph is built once).
  virtual bool depends_on_target() const { return false; }
  /// Duato-style rules: whether a move into state s is an escape move.  The
  /// escape moves alone must reach every target and be acyclic; the others
  /// (adaptive) may form cycles.  Plain rules: every move is an escape move.
  virtual bool escape(std::uint8_t /*s*/) const { return true; }
  /// One line for the run header, e.g. "torus dimension order, dateline VCs".
  virtual std::string describe() const = 0;
};

/// Rules of the built-in topologies.  Each takes the builder's parameters
/// (the topology alone does not keep them) and checks they match it.
/// Torus (build_torus): `adaptive` false: dimension order (lowest dimension
/// first, shorter direction, + on ties) with a dateline per dimension, 2 VCs;
/// true: Duato's minimal adaptive: any productive link on VC 2, or the
/// dimension-order escape link on its dateline VC 0/1; 3 VCs.
std::unique_ptr<RouteRules> torus_rules(const Topology& topo, const std::vector<std::uint32_t>& dims, bool adaptive);
/// HammingMesh / HyperX (build_hammingmesh): on boards north-last (a packet
/// that went north goes only north until it leaves the board), up/down in
/// the row and column networks, the VC raised at every board-to-network hop
/// (VC = networks entered so far: 3 VCs).  `row_first`: the row network may
/// not follow the column network (dimension order; HyperX DOR).
std::unique_ptr<RouteRules> hammingmesh_rules(const Topology& topo, std::uint32_t board_a, std::uint32_t board_b,
                                              std::uint32_t x, std::uint32_t y, bool row_first);
/// Switch-based HyperX (build_hyperx, same x, y, concentration): minimal
/// routes, each router-to-router hop correcting one coordinate, in either
/// order (`dimension_order`: X before Y); a router-to-router hop travels on
/// VC = router-to-router hops taken before it (0, then 1), so the channel
/// dependency graph is acyclic (2 VCs).  State: hops taken (0..2) | Y
/// dimension taken << 2.
std::unique_ptr<RouteRules> hyperx_rules(const Topology& topo, std::uint32_t x, std::uint32_t y,
                                         std::uint32_t concentration, bool dimension_order);
/// Dragonfly (build_dragonfly): the VC counts the global links taken so
/// far; at most `max_global` of them (1: minimal, 2: Valiant); VCs = max_global + 1.
std::unique_ptr<RouteRules> dragonfly_rules(const Topology& topo, std::uint32_t max_global);
/// Any graph whose endpoints forward (TopoOpt, custom graphs): shortest
/// paths with the VC = hops taken so far (acyclic by construction), so as
/// many VCs as the longest shortest path has links; `max_vcs` bounds it
/// (ConfigError naming network.vcs beyond).
std::unique_ptr<RouteRules> hop_count_rules(const Topology& topo, std::uint32_t max_vcs, bool shards = false);

/// Legal-route lengths computed from a topology's coordinates instead of
/// tabulated (the direct topologies at full size: the tables need one entry
/// per (target, node, state), 17.9 GB for a 16k-endpoint HammingMesh).
/// hops() must equal the length of the shortest legal route wherever a
/// packet can be (every (node, state) on some shortest legal route from a
/// source) and must never be below it elsewhere: StateRoutes::options() then
/// offers exactly the moves the tables offer, because a move is offered iff
/// it leads one hop closer.  It is the minimum over a family of concrete
/// legal routes, so it never undercuts; tests compare it with the tables
/// exhaustively on small instances.  Memory: O(nodes + links).
class RouteDistance {
 public:
  virtual ~RouteDistance() = default;
  /// Links of the shortest legal route from (at, s) to `target`, 0 at the
  /// target, StateRoutes::kUnreachable if there is none.
  virtual std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const = 0;
  /// The same over escape moves only (Duato rules); by default hops().
  virtual std::uint16_t escape_hops(NodeId at, std::uint8_t s, std::uint32_t target) const {
    return hops(at, s, target);
  }
  /// The ports of `at` that may be on a shortest legal route to `target`,
  /// ascending, into `ports` (so options() need not compute the distance
  /// beyond any other port); false (and `ports` untouched) to consider
  /// every port, the default.
  virtual bool candidate_ports(NodeId /*at*/, std::uint32_t /*target*/, std::vector<PortIndex>& /*ports*/) const {
    return false;
  }
};

/// Computed distances of the built-in direct topologies, for the rules of
/// the same name (same parameters).  Torus: both dimension order and Duato.
std::unique_ptr<RouteDistance> torus_distance(const Topology& topo, const std::vector<std::uint32_t>& dims,
                                              bool adaptive);
/// HammingMesh / HyperX (hammingmesh_rules).
std::unique_ptr<RouteDistance> hammingmesh_distance(const Topology& topo, std::uint32_t board_a,
                                                    std::uint32_t board_b, std::uint32_t x, std::uint32_t y,
                                                    bool row_first);
/// Switch-based HyperX (hyperx_rules): from a router, the coordinates that
/// differ from the target router's plus the endpoint link (unreachable when
/// they exceed the hops left, or with dimension order when X differs after
/// Y was taken); from a source endpoint one more.  Exact wherever a packet
/// can be (and at every router state).
/// candidate_ports: the (at most two) productive router ports, or the
/// target's endpoint port.
std::unique_ptr<RouteDistance> hyperx_distance(const Topology& topo, std::uint32_t x, std::uint32_t y,
                                               std::uint32_t concentration, bool dimension_order);
/// Dragonfly (dragonfly_rules(topo, max_global)), towards endpoints; with
/// `group_targets`, towards groups (target g = the routers of group g, the
/// Valiant first leg); `routers_per_group` is topology.a.
std::unique_ptr<RouteDistance> dragonfly_distance(const Topology& topo, std::uint32_t routers_per_group,
                                                  std::uint32_t max_global, bool group_targets);

class StateRoutes {
 public:
  static constexpr std::uint16_t kUnreachable = 0xFFFF;
  struct Option {
    PortIndex port;
    LinkId link;
    std::uint8_t state;  ///< state after the move
    std::uint8_t vc;     ///< vc(state): the channel requested
  };

  /// Targets: the endpoints (target e = endpoint e's node).  Throws
  /// util::ConfigError (naming routing.algorithm) if the tables would exceed
  /// `max_bytes`, or if some endpoint cannot reach another.
  StateRoutes(const Topology& topo, std::unique_ptr<RouteRules> rules, std::size_t max_bytes = std::size_t{1} << 30);
  /// Arbitrary targets: target t is reached at any node of targets[t].
  StateRoutes(const Topology& topo, std::unique_ptr<RouteRules> rules, std::vector<std::vector<NodeId>> targets,
              std::size_t max_bytes = std::size_t{1} << 30);
  /// Routes by the same rules with computed distances (no tables): targets
  /// are the endpoints, or `targets` when given.
  StateRoutes(const Topology& topo, std::unique_ptr<RouteRules> rules, std::unique_ptr<RouteDistance> distance,
              std::vector<std::vector<NodeId>> targets = {});

  const RouteRules& rules() const { return *rules_; }
  const Topology& topology() const { return topo_; }
  std::size_t target_count() const { return targets_.size(); }
  bool is_target(NodeId n, std::uint32_t target) const;
  const std::vector<NodeId>& target_nodes(std::uint32_t target) const { return targets_[target]; }
  /// Links of the shortest legal route from (at, s) to the target.
  std::uint16_t hops(NodeId at, std::uint8_t s, std::uint32_t target) const {
    return distance_ ? distance_->hops(at, s, target) : dist_[index(target, at, s)];
  }
  /// Whether some move is adaptive (Duato-style rules: escape moves besides).
  bool adaptive() const { return duato_; }
  /// Bytes of its distance tables (0 when computed).
  std::size_t table_bytes() const { return (dist_.capacity() + esc_dist_.capacity()) * sizeof(std::uint16_t); }
  /// Whether the distances are computed rather than tabulated.
  bool computed() const { return distance_ != nullptr; }
  /// Appends the moves on a shortest legal route (none at the target); with
  /// `escape_only`, only escape moves on a shortest legal escape route.
  void options(NodeId at, std::uint8_t s, std::uint32_t target, std::vector<Option>& out,
               bool escape_only = false) const;

 private:
  void build(std::size_t max_bytes);
  // Each node's data-carrying out-links, compact (options() reads these
  // per hop instead of the topology's larger node and link records).
  struct Out {  // one per port
    LinkId link;
    NodeId to;
    bool data;         // the link carries data
    bool to_forwards;  // the far end forwards packets
  };
  std::vector<std::size_t> out_base_;
  std::vector<Out> out_;
  void build_adjacency();
  std::uint16_t dist(NodeId at, std::uint8_t s, std::uint32_t target, bool escape) const;
  bool is_target_node(NodeId n, std::uint32_t target) const;
  std::size_t index(std::uint32_t target, NodeId n, std::uint8_t s) const {
    return (static_cast<std::size_t>(target) * nodes_ + n) * states_ + s;
  }
  const Topology& topo_;
  std::unique_ptr<RouteRules> rules_;
  std::vector<std::vector<NodeId>> targets_;
  std::vector<std::uint32_t> target_of_node_;  // for endpoint targets: target of each node, or UINT32_MAX
  std::size_t nodes_ = 0;
  std::size_t states_ = 0;
  bool endpoint_targets_ = true;
  std::vector<std::uint16_t> dist_;      // [target][node][state], all moves
  std::vector<std::uint16_t> esc_dist_;  // the same over escape moves (Duato rules only; else empty)
  bool duato_ = false;
  std::unique_ptr<RouteDistance> distance_;  // computed distances instead of the tables
};

/// The channel dependency graph of the routes a packet can actually take
/// (every (channel, state) reachable from some source towards some target
/// endpoint), with `escape_only`, of the escape moves alone.  Also sets
/// `unreachable_pairs` to the (source, destination) endpoint pairs with no
/// legal route.
DependencyReport check_state_routes(const StateRoutes& routes, bool escape_only, std::size_t* unreachable_pairs);

}  // namespace fabricsim::net

namespace fabricsim::net {

/// Routes listed per endpoint pair, one pinned per message (TopoOpt's
/// k-shortest-path routing, spec §4.5 notes: "implement k-shortest paths
/// with k = 1 as the default"; its packet simulator takes one listed path
/// per flow, uniformly at random).  A packet on hop h uses VC h (as with
/// hop_count_rules), so routes are deadlock-free when network.vcs covers
/// the longest of them.  Every process computes the same routes.
class ListedPaths {
 public:
  virtual ~ListedPaths() = default;
  /// Number of routes from src to dst (at most k; 0: none, a ConfigError
  /// where a message needs one).
  virtual std::size_t count(EndpointId src, EndpointId dst) const = 0;
  /// Appends the links of route `choice` (< count) from src to dst.
  virtual void path(EndpointId src, EndpointId dst, std::size_t choice, std::vector<LinkId>& out) const = 0;
  /// The route message `message` of the pair takes under engine seed
  /// `seed`: hash(seed, message) mod count, uniform over the pair's routes
  /// (the packet model's pick; the flow models take the same).
  std::size_t choice(EndpointId src, EndpointId dst, std::uint64_t seed, std::uint32_t message) const;
  /// count(src, dst), or a ConfigError naming the pair where it is 0.
  std::size_t require_routes(EndpointId src, EndpointId dst) const;
};

/// On a circulant TopoOpt fabric (topology.construction = "rings", one GPU
/// per server) the routes are translation-invariant, so for every residue
/// r of Z_n the k shortest loop-free coin sequences from 0 to r are found
/// once (k_shortest_coin_routes, Yen's algorithm) and a route from server
/// i applies them from i over its data links.
class CoinPaths : public ListedPaths {
 public:
  /// `topo` must be a TopoOpt fabric (servers 0..n-1, data links i -> i+p).
  CoinPaths(const Topology& topo, std::uint32_t k);
  std::size_t count(EndpointId src, EndpointId dst) const override;
  void path(EndpointId src, EndpointId dst, std::size_t choice, std::vector<LinkId>& out) const override;
  std::uint32_t max_hops() const { return max_hops_; }

 private:
  std::uint32_t n_ = 0;
  std::vector<std::uint32_t> jumps_;              // distinct jumps of the data links
  std::vector<LinkId> link_;                      // [server * jumps + j]
  std::vector<std::vector<std::vector<std::uint8_t>>> routes_;  // [r][route] -> jump indices
  std::uint32_t max_hops_ = 0;
};

/// Any other direct-connect server fabric (build_server_fabric: TopoOpt
/// built from a job, the expander, rings on servers of several GPUs): the k
/// shortest loop-free routes of each server pair over the servers' data
/// links (k_shortest_link_routes: Yen's algorithm on the directed
/// multigraph, so parallel links are routes of their own; shortest first,
/// ties in link order).  A GPU's route is its intra-server link up, the
/// servers' route, the link down; two GPUs of one server have the one
/// route through their server.  A pair's routes are found when a message
/// first asks for them and kept, so memory follows the pairs that carry
/// traffic, not n^2 (the same on every process: the routes of a pair do
/// not depend on which pairs were asked before).  Not thread-safe.
class ServerPaths : public ListedPaths {
 public:
  ServerPaths(const Topology& topo, std::uint32_t k);
  /// CoinChangeMod on a TopoOpt fabric built from a job (spec §4.5,
  /// Alg. 1's R = COINCHANGEMOD(n, G_A)): the fewest-hop routes over the
  /// AllReduce rings' links alone (Topology::allreduce_links), every one of
  /// that length (up to kAllReduceRoutes): parallel ring links between
  /// neighbours, or, for a group without a ring of its own, its multi-hop
  /// routes over the others' rings.  A pair the rings do not join falls
  /// back to its shortest routes over every link.
  static ServerPaths allreduce(const Topology& topo);
  static constexpr std::uint32_t kAllReduceRoutes = 16;
  /// Links between servers on route `choice` of the pair (its length
  /// without the intra-server links).
  std::size_t server_hops(EndpointId src, EndpointId dst, std::size_t choice) const;
  std::size_t count(EndpointId src, EndpointId dst) const override;
  void path(EndpointId src, EndpointId dst, std::size_t choice, std::vector<LinkId>& out) const override;
  /// The longest route handed out so far, in links (intra-server ones included).
  std::uint32_t max_hops() const { return max_hops_; }

 private:
  const std::vector<std::vector<LinkId>>& server_routes(NodeId u, NodeId v) const;
  std::uint32_t k_ = 1;
  bool shortest_only_ = false;  // keep the routes of the first's length only
  std::vector<std::vector<std::pair<LinkId, NodeId>>> fallback_;  // every data link (allreduce(): out_ is G_A)
  std::vector<NodeId> server_;  // endpoint -> its server node
  std::vector<LinkId> up_;      // endpoint -> its link to the server (kNoLink: the endpoint is the server)
  std::vector<LinkId> down_;    // endpoint -> the server's link to it
  std::vector<std::vector<std::pair<LinkId, NodeId>>> out_;  // node -> data links to other servers, id order
  mutable std::unordered_map<std::uint64_t, std::vector<std::vector<LinkId>>> cache_;
  mutable std::uint32_t max_hops_ = 0;
};

/// Yen's k shortest loop-free routes from `from` to `to` (from != to) in a
/// directed multigraph given as out[node] = its (link, head) pairs: link
/// sequences visiting no node twice, fewest links first (ties in the order
/// Yen's algorithm finds them, deterministic: links tried in the order
/// given).  Fewer than k if there are not that many.
std::vector<std::vector<LinkId>> k_shortest_link_routes(
    const std::vector<std::vector<std::pair<LinkId, NodeId>>>& out, NodeId from, NodeId to, std::uint32_t k);

/// Yen's k shortest loop-free routes over Z_n with the given coins (jumps)
/// from 0 to r: coin sequences whose partial sums never repeat, shortest
/// first (ties in the order Yen's algorithm finds them, which is
/// deterministic: coins are tried in the order given).  Fewer than k if
/// there are not that many; empty for r = 0.
std::vector<std::vector<std::uint32_t>> k_shortest_coin_routes(std::uint32_t n, const std::vector<std::uint32_t>& coins,
                                                               std::uint32_t r, std::uint32_t k);

}  // namespace fabricsim::net
