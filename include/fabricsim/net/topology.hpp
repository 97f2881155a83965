// Network topology graphs and minimal-route candidate tables.
//
// A Topology is a plain graph: nodes (endpoints and switches) with numbered
// ports, and directed links.  Every cable is two directed links created
// together by Topology::connect(), a->b first and b->a right after it, so the
// ids of a cable's two halves are consecutive and each names the other in
// `reverse`.  Ports are numbered per node in the order the cables were
// connected (port p of node n is the pair nodes()[n].out[p] / in[p]).
//
// Builders (build_fat_tree, build_leaf_spine) emit endpoints first, so
// endpoint e is always node e in the graphs built here; code must still go
// through endpoint_node() because later topologies need not keep that.
//
// RoutingTable lists, for a packet at a node heading to an endpoint, the
// output ports on a minimal path.  Nothing here knows packets, events or MPI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/core/time.hpp"

namespace fabricsim::net {

using NodeId = std::uint32_t;
using LinkId = std::uint32_t;
using EndpointId = std::uint32_t;
using PortIndex = std::uint16_t;

inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
inline constexpr LinkId kNoLink = std::numeric_limits<LinkId>::max();
inline constexpr EndpointId kNoEndpoint = std::numeric_limits<EndpointId>::max();
/// Largest radix a node may have (ports are 16-bit indices).
inline constexpr std::uint32_t kMaxRadix = std::numeric_limits<PortIndex>::max();

enum class NodeKind : std::uint8_t { Endpoint = 0, Switch = 1 };

enum class LinkClass : std::uint8_t {
  Host = 0,         ///< endpoint <-> switch (NIC cable)
  Fabric = 1,       ///< switch <-> switch
  IntraServer = 2,  ///< GPU <-> intra-server switch (NVLink-like)
  Board = 3,        ///< PCB trace between accelerators on one board
  Global = 4,       ///< long-range cable (e.g. between Dragonfly groups)
};
inline constexpr int kLinkClassCount = 5;

const char* to_string(LinkClass cls);
const char* to_string(NodeKind kind);

struct LinkParams {
  double bandwidth_gbps = 100.0;
  core::SimTime latency = core::SimTime::from_ns(100);
};

/// Levels used by the builders: 0 endpoint, 1 leaf / top-of-rack, 2 spine
/// (2-level trees and leaf-spine) or level-2 aggregation switch (3-level
/// trees), 3 core.  An intra-server switch (leaf-spine with more than one GPU
/// per server) has level 1: it sits one hop above its GPUs like a leaf; tell
/// it apart by its IntraServer links or its "nvsw" name.
struct Node {
  NodeKind kind = NodeKind::Switch;
  std::uint8_t level = 0;
  /// May carry traffic for others (switches: yes; endpoints in the trees and
  /// leaf-spine built here: no).
  bool forwards = true;
  std::uint32_t radix = 0;
  /// Endpoint index if kind == Endpoint, else kNoEndpoint.
  EndpointId endpoint = kNoEndpoint;
  /// "ep12", "leaf3", "spine5", "l2sw7", "core1", "nvsw4", ...
  std::string name;
  /// out[port]: directed link leaving that port; in[port]: link arriving there.
  std::vector<LinkId> out;
  std::vector<LinkId> in;

  std::uint32_t ports_used() const { return static_cast<std::uint32_t>(out.size()); }
};

struct Link {
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  PortIndex src_port = 0;
  PortIndex dst_port = 0;
  LinkClass cls = LinkClass::Fabric;
  double bandwidth_gbps = 0.0;
  core::SimTime latency;
  /// The other direction of the same cable.
  LinkId reverse = kNoLink;
};

class Topology {
 public:
  /// Adds a node with `radix` ports (at most kMaxRadix, ConfigError beyond).
  /// An Endpoint node gets the next endpoint index.
  NodeId add_node(NodeKind node_kind, std::uint8_t level, std::uint32_t radix, std::string name,
                  bool forwards);

  /// Creates a cable: two directed links with consecutive ids (a->b, then
  /// b->a), each end taking the next free port of its node.  Throws
  /// util::ConfigError if either node has no free port left.
  std::pair<LinkId, LinkId> connect(NodeId a, NodeId b, LinkClass cls, const LinkParams& params);

  /// Capacity hint for builders.
  void reserve(std::size_t nodes, std::size_t directed_links);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Node& node(NodeId n) const { return nodes_[n]; }
  const Link& link(LinkId l) const { return links_[l]; }
  std::size_t node_count() const { return nodes_.size(); }
  std::size_t link_count() const { return links_.size(); }

  std::size_t endpoint_count() const { return endpoint_nodes_.size(); }
  NodeId endpoint_node(EndpointId e) const { return endpoint_nodes_[e]; }
  std::size_t switch_count() const;
  /// Number of switches at `level`.
  std::size_t switch_count(std::uint8_t level) const;
  /// Number of directed links of that class (two per cable).
  std::size_t count_links(LinkClass cls) const;

  /// Largest, over ordered pairs of distinct endpoints, of the shortest path
  /// length counted in cables (endpoint cables included), where intermediate
  /// nodes must forward.  0 with fewer than two endpoints, -1 if some pair is
  /// disconnected.  One multi-source BFS per destination group (endpoints with
  /// identical attachments), so a 16k-endpoint fat tree takes one BFS per leaf.
  int diameter() const;

  /// One line, e.g. "3-level fat tree, radix 64, 16384 endpoints (...)".
  std::string describe() const;
  void set_description(std::string text) { description_ = std::move(text); }

  /// "fat_tree", "leaf_spine".
  std::string kind;

 private:
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<NodeId> endpoint_nodes_;
  std::string description_;
};

/// Folded-Clos fat tree of radix-k switches.
///
/// Level 1 (leaves): d = down_ports (0 -> k/2) endpoint ports, u = k - d up.
///   leaves = ceil(endpoints / d); endpoint e attaches to leaf e / d (the last
///   leaf may be partly filled).  Leaf ports: its endpoints first, then its
///   up-links.
/// 2 levels: spines = ceil(leaves * u / k).  Up-link j of leaf i goes to spine
///   (i*u + j) mod spines: each leaf spreads its u links as evenly as possible
///   over all spines (u >= spines whenever leaves <= k), parallel links when
///   u > spines.  Requires leaves <= k.
/// 3 levels (nonblocking above level 1, h = k/2):
///   pods of h leaves; a full pod has u level-2 switches ("l2sw") and each of
///   its leaves has one link to each of them; the last, partial pod of r < h
///   leaves has ceil(r*u/h) level-2 switches and leaf i's up-link j goes to
///   its pod's level-2 switch (i*u + j) mod m.  Level-2 count = ceil(leaves*u/h).
///   Every level-2 switch has as many up-links as it has leaf links (h for
///   full pods).  Cores = ceil(level2 * h / k).  Level-2 up-links are numbered
///   globally (level-2 switches in order, then their up-links) and up-link g
///   goes to core g mod cores.  A full pod's up-links are thus a run of u*h >=
///   cores consecutive numbers, so every full pod reaches every core and any
///   two pods share a core (up/down paths of 6 cables between pods).
///   Requires ceil(leaves / h) <= k pods.
/// levels = 0 picks 2 when leaves <= k, else 3.
/// Switch order and names: leaves "leafN", then "spineN" (2 levels) or
/// "l2swN" then "coreN" (3 levels); levels 1, 2, 3.
struct FatTreeParams {
  std::uint32_t endpoints = 1024;
  std::uint32_t radix = 64;
  std::uint32_t down_ports = 0;  ///< 0 = radix / 2
  std::uint32_t levels = 0;      ///< 0 = smallest that fits, else 2 or 3
  LinkParams host;
  LinkParams fabric;
};
Topology build_fat_tree(const FatTreeParams& params);

/// Two-tier leaf-spine with servers of several GPUs.
///
/// leaves x spines switches of `radix` ports, links_per_pair parallel Fabric
/// cables between every leaf and every spine.  Servers = leaves *
/// servers_per_leaf, GPUs (endpoints) = servers * gpus_per_server; GPU g of
/// server s is endpoint s * gpus_per_server + g, with one NIC (Host cable to a
/// leaf) each.  With gpus_per_server > 1 each server has an intra-server
/// switch "nvswS" (level 1, radix gpus_per_server) with one IntraServer cable
/// to each of its GPUs; GPU port 0 is the NIC, port 1 the intra-server link.
///   Non-rail: server s sits entirely under leaf s / servers_per_leaf.
///   rail_optimized: leaves form rail groups of gpus_per_server consecutive
///   leaves (leaves must be a multiple of gpus_per_server); rail group r holds
///   servers [r*G*spl, (r+1)*G*spl) (G = gpus_per_server, spl =
///   servers_per_leaf) and GPU g of each of them attaches to leaf r*G + g.
///   Either way every leaf has servers_per_leaf * gpus_per_server GPU ports.
/// Leaf ports: GPU NICs in endpoint order, then up-links spine-major.  Spine
/// ports: leaf-major.  Leaf needs servers_per_leaf*gpus_per_server +
/// spines*links_per_pair <= radix; a spine needs leaves*links_per_pair <= radix.
/// Example: 64 leaves x 32 spines, radix 64, 4 servers per leaf of 8 GPUs,
/// 1 link per pair -> 2048 GPUs, 256 intra-server switches.
struct LeafSpineParams {
  std::uint32_t leaves = 64;
  std::uint32_t spines = 32;
  std::uint32_t links_per_pair = 1;
  std::uint32_t servers_per_leaf = 4;
  std::uint32_t gpus_per_server = 8;
  std::uint32_t radix = 64;
  bool rail_optimized = false;
  LinkParams host;
  LinkParams fabric;
  LinkParams intra_server{.bandwidth_gbps = 1000.0, .latency = core::SimTime::from_ns(20)};
};
Topology build_leaf_spine(const LeafSpineParams& params);

/// Minimal-route candidates.
///
/// A minimal path is a shortest path in links whose intermediate nodes all
/// forward; among those of equal length, the ones crossing the fewest links
/// outside the intra-server fabric (classes other than IntraServer) win, so
/// two GPUs of one server talk through their intra-server switch rather than
/// through a leaf.  On the trees built here minimal paths are exactly the
/// up*/down* paths.
///
/// Storage: destinations are grouped by their attachment (endpoints whose
/// in-neighbours and link classes are identical, e.g. all endpoints of one
/// leaf); nodes that do not forward are grouped as sources by their
/// out-neighbours.  A table of (row, group) -> port-list id points into a
/// deduplicated pool of port lists; the last hop (a node linked directly to
/// the destination) is a per-endpoint lookup.  One BFS per group.
class RoutingTable {
 public:
  static constexpr std::uint32_t kUnreachable = std::numeric_limits<std::uint32_t>::max();

  explicit RoutingTable(const Topology& topo);

  /// Output ports of `at` on a minimal path to endpoint `dst`, ascending.
  /// Empty when at is dst's node or dst is unreachable.
  std::span<const PortIndex> candidates(NodeId at, EndpointId dst) const;
  /// Shortest distance in links (0 at the destination, kUnreachable if none).
  std::uint32_t hops(NodeId at, EndpointId dst) const;

  std::size_t group_count() const { return group_count_; }
  std::uint32_t group_of(EndpointId e) const { return group_of_[e]; }
  std::size_t distinct_lists() const { return list_offsets_.size() - 1; }
  std::size_t memory_bytes() const;

 private:
  static constexpr std::uint32_t kNoList = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kFinalHop = kNoList - 1;
  static constexpr std::uint16_t kNoHops = std::numeric_limits<std::uint16_t>::max();

  std::span<const PortIndex> list(std::uint32_t id) const {
    return {pool_.data() + list_offsets_[id], pool_.data() + list_offsets_[id + 1]};
  }
  std::uint32_t final_list(NodeId at, EndpointId dst) const;

  std::size_t group_count_ = 0;
  std::vector<NodeId> endpoint_node_;
  std::vector<std::uint32_t> group_of_;     ///< per endpoint
  std::vector<std::uint32_t> row_of_node_;  ///< per node
  std::vector<std::uint32_t> table_;        ///< [row * groups + group] -> list id
  std::vector<std::uint16_t> hops_;         ///< [row * groups + group]
  std::vector<PortIndex> pool_;
  std::vector<std::uint32_t> list_offsets_{0};
  /// Last hop: for endpoint e, entries [final_offsets_[e], final_offsets_[e+1])
  /// of (neighbour node, list id of its ports straight to e).
  std::vector<std::uint32_t> final_offsets_{0};
  std::vector<NodeId> final_node_;
  std::vector<std::uint32_t> final_list_;
};

}  // namespace fabricsim::net
