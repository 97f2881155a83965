// Network topology graphs and minimal-route candidate tables.
//
// A Topology is a plain graph: nodes (endpoints and switches) with numbered
// ports, and directed links.  Every cable is two directed links created
// together by Topology::connect(), a->b first and b->a right after it, so the
// ids of a cable's two halves are consecutive and each names the other in
// `reverse`.  Ports are numbered per node in the order the cables were
// connected (port p of node n is the pair nodes()[n].out[p] / in[p]).
// A cable made by Topology::connect_directed() is a one-way optical link:
// its b->a half has carries_data = false (it only returns flow-control
// credits), and every route, distance and routing table here ignores such
// halves.
//
// Builders (build_fat_tree, build_leaf_spine) emit endpoints first, so
// endpoint e is always node e in the graphs built here; code must still go
// through endpoint_node() because later topologies need not keep that.
//
// RoutingTable lists, for a packet at a node heading to an endpoint, the
// output ports on a minimal path.  Nothing here knows packets, events or MPI.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
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

/// How a cable is priced in the HammingMesh paper's cost model
/// (../shared/spec/hammingmesh.md §4.1): a direct-attach copper cable, an
/// active optical cable, or nothing (PCB traces, links inside one physical
/// switch or server).
enum class CableType : std::uint8_t { None = 0, DAC = 1, AoC = 2 };
inline constexpr int kCableTypeCount = 3;
const char* to_string(CableType type);
/// The default of a link class: Host -> DAC, Fabric and Global -> AoC,
/// Board and IntraServer -> None.  Builders pass another where their
/// topology's rule differs (e.g. Dragonfly: intra-group switch cables DAC).
CableType default_cable(LinkClass cls);

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
  CableType cable = CableType::None;
  double bandwidth_gbps = 0.0;
  core::SimTime latency;
  /// The other direction of the same cable.
  LinkId reverse = kNoLink;
  /// False for the reverse half of a directed (one-way) optical link
  /// (Topology::connect_directed, e.g. a TopoOpt ring hop): it exists so
  /// that the sender of the forward half gets its flow-control credits back,
  /// and carries no packets.  RoutingTable, UpDownRoutes, Topology::diameter
  /// and the destination grouping skip such links.
  bool carries_data = true;
};

/// A check of a fabric's size before it is built: while an object of this
/// class lives, Topology::reserve runs it on the calling thread with the
/// counts a builder is about to allocate (`run` refuses there a fabric whose
/// memory estimate exceeds engine.memory_limit_gib, before building it).
class SizeCheck {
 public:
  using Fn = std::function<void(std::size_t nodes, std::size_t directed_links)>;
  explicit SizeCheck(Fn fn);
  ~SizeCheck();
  SizeCheck(const SizeCheck&) = delete;
  SizeCheck& operator=(const SizeCheck&) = delete;
  /// Runs the check in force (none: nothing).
  static void apply(std::size_t nodes, std::size_t directed_links);

 private:
  Fn fn_;
  SizeCheck* previous_;
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
  std::pair<LinkId, LinkId> connect(NodeId a, NodeId b, LinkClass cls, const LinkParams& params) {
    return connect(a, b, cls, params, default_cable(cls));
  }
  /// Same, with the cable type given.
  std::pair<LinkId, LinkId> connect(NodeId a, NodeId b, LinkClass cls, const LinkParams& params, CableType cable);
  /// A directed link a -> b: a cable like connect() (a port at each end,
  /// consecutive ids, a->b first), whose b->a half has carries_data = false
  /// (it only carries the credits of the a->b half back to a).
  std::pair<LinkId, LinkId> connect_directed(NodeId a, NodeId b, LinkClass cls, const LinkParams& params,
                                             CableType cable);

  /// Capacity hint for builders: every builder calls it with its node and
  /// link counts once it has validated its parameters and before it adds
  /// anything, and it first runs the SizeCheck in force, if any.
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
  /// Number of directed links of that class (two per cable, whether or not
  /// both halves carry data).
  std::size_t count_links(LinkClass cls) const;
  /// Number of directed links that carry data (all but the reverse halves
  /// of connect_directed cables).
  std::size_t count_data_links() const;
  /// Injection bandwidth of endpoint e in Gb/s: the sum of the data-carrying
  /// links leaving it (every port of a forwarding accelerator, e.g. the
  /// four of a HammingMesh or torus accelerator per plane; the one link of
  /// a NIC on a tree), without a leaf-spine GPU's NVLink-like link to its
  /// server's switch (the scale-out injection is its NIC's).
  double injection_gbps(EndpointId e) const;
  /// The same summed over every endpoint (what a throughput share divides by).
  double total_injection_gbps() const;
  /// Number of cables (not directed links) of that type.
  std::size_t count_cables(CableType type) const;
  /// Physical switch boxes for the cost model: switch_count() unless the
  /// builder packs several routers into one box (Dragonfly virtual routers,
  /// a tapered fat tree's logical switches).
  std::size_t physical_switches() const { return physical_set_ ? physical_switches_ : switch_count(); }
  /// Whether the builder counted the boxes (set_physical_switches).
  bool physical_switches_set() const { return physical_set_; }
  void set_physical_switches(std::size_t n) {
    physical_switches_ = n;
    physical_set_ = true;
  }

  /// A bisection the builder knows (e.g. HammingMesh: lower board-half
  /// against upper, spec §3.4): `endpoint_side[e]` is 0 or 1 for every
  /// endpoint, half of them each.  Switches go to the side of the majority
  /// of their neighbours (endpoints first, then switches by the switches
  /// already placed, in node order; ties to side 0), and the cables whose
  /// ends lie on different sides are counted.  The cut and the injection
  /// links of one half (ports of its endpoints) are kept for the report.
  void measure_bisection(const std::vector<std::uint8_t>& endpoint_side) { measure_bisection(endpoint_side, {}); }
  /// The same with switches the builder places itself: node_side[n] is 0
  /// or 1 for such a switch, anything else (or an empty vector) lets it
  /// vote as above.  (A HyperX router's column peers outnumber its
  /// endpoints, so the majority rule would put it on the wrong side.)
  void measure_bisection(const std::vector<std::uint8_t>& endpoint_side, const std::vector<std::uint8_t>& node_side);
  /// Cables crossing the measured bisection, 0 if none was measured.
  std::size_t bisection_cables() const { return bisection_cables_; }
  /// Ports of the endpoints of one half (the injection links the cut is compared with).
  std::size_t bisection_injection_links() const { return bisection_injection_; }

  /// Largest, over ordered pairs of distinct endpoints, of the shortest path
  /// length counted in cables (endpoint cables included), where intermediate
  /// nodes must forward and only links that carry data count.  0 with fewer than two endpoints, -1 if some pair is
  /// disconnected.  One multi-source BFS per destination group (endpoints with
  /// identical attachments), so a 16k-endpoint fat tree takes one BFS per leaf.
  int diameter() const { return diameter(0, 1); }
  /// The same over the destination groups g with g mod parts == part (one
  /// BFS each, in parallel with OpenMP): the diameter is the largest over
  /// the parts, -1 if any part has -1 (ranks share the work this way).
  /// `finite`: the longest distance between endpoints that reach each
  /// other, never -1 (a fabric of unconnected shards).
  int diameter(std::size_t part, std::size_t parts, bool finite = false) const;
  /// The diameter a builder knows by construction (a switch-based HyperX:
  /// 2 + its dimensions longer than 1), which diameter() returns without the
  /// BFS (16,384 BFS over 4 M links at 128 x 128 routers).  Its tests compare
  /// it with measured_diameter().
  void set_known_diameter(int d) { known_diameter_ = d; }
  /// The BFS of diameter(), whatever the builder knows.
  int measured_diameter(std::size_t part, std::size_t parts, bool finite = false) const;

  /// One line, e.g. "3-level fat tree, radix 64, 16384 endpoints (...)".
  std::string describe() const;
  void set_description(std::string text) { description_ = std::move(text); }

  /// "fat_tree", "leaf_spine".
  std::string kind;
  /// An optical fabric of every possible circuit (TopoOpt's OCS-reconfig
  /// and SiP-ML baselines): each server has this many transmit and receive
  /// ports, so at most this many of its circuits are lit at once (the
  /// rest are links kept down); 0 for every other fabric.
  std::uint32_t ocs_degree = 0;
  /// Shards that are not connected to each other (TopoOpt's shared cluster,
  /// topology.job_shards): routes exist inside each; no message may cross.
  bool shards = false;
  /// TopoOpt built from a job: the links of its AllReduce rings (G_A), in
  /// id order, over which CoinChangeMod routes AllReduce traffic; empty
  /// for every other fabric.
  std::vector<LinkId> allreduce_links;
  /// Per node, the unit a partition should keep on one rank where the
  /// balance allows it (a Dragonfly group: its routers and their endpoints,
  /// joined by most of its cables); empty when the builder names none.
  std::vector<std::uint32_t> units;

 private:
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<NodeId> endpoint_nodes_;
  std::string description_;
  std::size_t physical_switches_ = 0;
  bool physical_set_ = false;
  int known_diameter_ = -2;  // -2: none
  std::size_t bisection_cables_ = 0;
  std::size_t bisection_injection_ = 0;
};

/// Folded-Clos fat tree of radix-k switches.
///
/// Level 1 (leaves): d = down_ports (0 -> k/2) endpoint ports, u = k - d up.
///   leaves = ceil(endpoints / d); endpoint e attaches to leaf e / d (the last
///   leaf may be partly filled).  Leaf ports: its endpoints first, then its
///   up-links.  h = k/2.
///
/// Untapered (d = h, the default): the original wiring.
/// 2 levels: spines = ceil(leaves * u / k).  Up-link j of leaf i goes to spine
///   (i*u + j) mod spines: each leaf spreads its u links as evenly as possible
///   over all spines (u >= spines whenever leaves <= k), parallel links when
///   u > spines; every leaf has the same number to every spine when spines
///   divides u (e.g. 32 leaves, 16 spines), not otherwise.  Requires leaves <= k.
/// 3 levels (nonblocking above level 1):
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
///
/// Tapered (d != h): uniform wiring over logical switches, so that a leaf's
///   u up-links reach every other leaf alike (the uneven rule above leaves a
///   50 % tapered tree's leaf pairs 2 or 3 cables per spine, and the pairs
///   with fewer shared cables well below the taper ratio).  Several logical
///   switches share one physical box: physical_switches() is the paper's
///   count (spec §4.2-4.3), the level-2 and core ports the tree needs over
///   k-port boxes, ceil(leaves*u/k) spines, or ceil(leaves*u/h) level-2 and
///   ceil(that * h / k) cores; cables are the same in number and kind.
/// 2 levels: c = the largest divisor of u with leaves * c <= k; u/c logical
///   spines of leaves * c ports; up-link j of leaf i goes to spine j mod (u/c),
///   so every leaf has c cables to every spine.  Where spines divides u this
///   is the untapered rule's wiring, switch for switch (c = u/spines).
///   Example: 25 leaves of 42 down / 22 up: 11 spines of 50 ports, 2 cables
///   from each leaf, priced as 9 switches; 21 leaves of 51/13: 13 spines of
///   21 ports, priced as 5.
/// 3 levels: a group size g, pods of p leaves (consecutive leaves, the last
///   pod may be smaller), u level-2 switches per pod, u groups of g cores:
///   - exact: g = the smallest divisor of `leaves` with leaves/g <= k and
///     g <= h, p = the largest multiple of g up to h.  Every pod size is a
///     multiple of g, so every pod has (its leaves)/g cables to every core:
///     the cores see each pod in proportion to its leaves, and a pod reaches
///     every other through every core.
///   - otherwise (no such divisor, e.g. a prime number of leaves above k):
///     p = h, g = h / c with c the largest divisor of h with pods * c <= k;
///     the full pods have c cables to every core, but a smaller last pod of
///     r leaves only reaches part of each group (its level-2 switches' r
///     up-links go round-robin over the g cores), so traffic into or out of
///     it is not spread over all cores.
///   Leaf i (pod i / p) has one cable to each of its pod's u level-2
///   switches "l2sw" (pod * u + j, j < u).  Level-2 switch pod*u + j has as
///   many up-links as its pod has leaves; up-link s goes to core j*g + s mod g.
///   Example: 390 leaves of 42/22 (16,380 endpoints): g = 10, 13 pods of 30,
///   286 level-2 switches of 60 ports, 220 cores of 39 ports (3 cables from
///   each pod), priced as 269 + 135; 322 leaves of 51/13: g = 7, pods of 28
///   (the last of 14), 156 level-2, 91 cores of 46 ports, priced as 131 + 66.
/// levels = 0 picks 2 when leaves <= k, else 3.
/// Switch order and names: leaves "leafN", then "spineN" (2 levels) or
/// "l2swN" then "coreN" (3 levels); levels 1, 2, 3.  A logical switch (one
/// of several in a box) has the radix of the ports it uses.
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
/// ocs_switches = K > 0: an optical circuit layer between leaves and spines
/// (ctrl/ocs.hpp; K divides spines, not rail_optimized).  OCS k holds the
/// ports of spines [k*g, (k+1)*g) (g = spines/K) and P = g*links_per_pair
/// up-ports of every leaf, and any of those leaf ports can be circuit-
/// connected to any of those spines.  The topology holds every possible
/// circuit: P parallel Fabric cables between each leaf and each spine
/// (slot c = the c-th, leaf-major, spine, then slot); at power-on slot c is
/// connected to spine k*g + c/links_per_pair (the canonical wiring) and the
/// others start down (app::failure_schedule).  A switch's radix counts the
/// possible circuits; the radix check above counts its physical ports.
struct LeafSpineParams {
  std::uint32_t leaves = 64;
  std::uint32_t spines = 32;
  std::uint32_t links_per_pair = 1;
  std::uint32_t servers_per_leaf = 4;
  std::uint32_t gpus_per_server = 8;
  std::uint32_t radix = 64;
  bool rail_optimized = false;
  std::uint32_t ocs_switches = 0;
  LinkParams host;
  LinkParams fabric;
  LinkParams intra_server{.bandwidth_gbps = 1000.0, .latency = core::SimTime::from_ns(20)};
};
Topology build_leaf_spine(const LeafSpineParams& params);

/// HammingMesh Ha x bMesh, one plane (../shared/spec/hammingmesh.md §3).
///
/// x * y boards of a * b accelerators (endpoints that forward), each board a
/// 2D mesh of Board links (no wrap-around).  Accelerator id and node id
/// ((Y*x + X)*b + i)*a + j for board (X, Y), on-board row i (N->S), column j
/// (W->E).  Board links E(i,j)-W(i,j+1), S(i,j)-N(i+1,j).  Every accelerator
/// has 4 ports, numbered in cabling order (hammingmesh.cpp): its W and E
/// board links, then N and S board links, then its W/E edge cables, then N/S
/// (the spec's fixed E=0, W=1, N=2, S=3 cannot hold together with the switch
/// numbering below, as both ends of a cable take their next free port).
/// Global networks, "logically fully connected", decided per dimension:
///   - rows: if a board-row switch fits, 2*b*x <= radix (the paper's small
///     clusters): one switch per board-row Y joining the W edge of every
///     (X, i) at switch port 2*(X*b + i) and the E edge at 2*(X*b + i) + 1
///     (spec §3.3); columns alike when 2*a*y <= radix (N even, S odd);
///   - else (large clusters): one network per accelerator-row (Y, i) with
///     q = 2*x endpoints (W of board X at 2X, E at 2X+1): a single switch if
///     q <= radix, else a 2-level fat tree of ceil(q/(radix/2)) leaves
///     (radix/2 down, radix/2 up, up-links spread evenly over
///     ceil(leaves*(radix/2)/radix) spines); columns alike with q = 2*y.
///     More than radix*radix/2 needs 3 levels: error.
/// Note: with one switch per board-row a packet can change accelerator row
/// inside the switch, so the small Hx4Mesh has diameter 6 cables, not the 8
/// of the spec's §3.4 formula (which assumes per-accelerator-row networks).
/// Accelerator-to-row-network cables are DAC, accelerator-to-column-network
/// cables AoC, switch-to-switch AoC, board links free (spec §4.1).  Link
/// classes: Board, Host (accelerator-switch), Fabric (switch-switch).
/// Hx1Mesh (a = b = 1) is the 2D HyperX.  Switch names "rowN"/"colN" (single
/// switches), "rowleafN", "rowspineN", "colleafN", "colspineN" (trees).
struct HammingMeshParams {
  std::uint32_t board_a = 2;  ///< accelerators per board, East-West
  std::uint32_t board_b = 2;  ///< accelerators per board, North-South
  std::uint32_t x = 16;       ///< boards per board-row
  std::uint32_t y = 16;       ///< boards per board-column
  std::uint32_t radix = 64;   ///< ports per switch
  LinkParams board{.bandwidth_gbps = 400.0, .latency = core::SimTime::from_ns(1)};
  LinkParams host;
  LinkParams fabric;
};
Topology build_hammingmesh(const HammingMeshParams& params);

/// Switch-based 2D HyperX (Ahn et al., SC '09): the reading of the
/// HammingMesh spec's HyperX (../shared/spec/hammingmesh.md §6 ⚠, §10.3) in
/// which it is one of the "other topologies", built of routers rather than
/// of forwarding accelerators (build_hammingmesh with 1x1 boards is the
/// other reading).  x * y routers at coordinates (X, Y), node and name
/// "routerN" with N = Y*x + X after the endpoints; every two routers of a
/// row (same Y) are joined by one cable and every two of a column (same X)
/// by one cable (all-to-all along each dimension); `concentration` (c)
/// endpoints per router, endpoint (and node) ((Y*x + X)*c + k), k < c, that
/// do not forward.  Cabling order (hyperx.cpp): endpoint cables, then row
/// cables (rows ascending, pairs (X, X'), X < X', in lexicographic order),
/// then column cables (likewise), so a router's ports are its c endpoints
/// (k ascending), its x-1 row peers (X' ascending: port c + X' - [X' > X]),
/// its y-1 column peers (port c + (x-1) + Y' - [Y' > Y]).  A router needs
/// c + (x-1) + (y-1) ports, at most `radix` (ConfigError naming
/// topology.radix otherwise: one router is one switch box, never packed
/// into several).  Endpoint cables Host/DAC, router cables Fabric/AoC (spec
/// §4.1); every router one switch in the cost model.  Units: a router with
/// its endpoints.  Bisection: the lower half of the rows against the upper
/// (y even; else the columns when x is even), routers with their endpoints:
/// x*y*y/4 cables, y/(2c) of the injection of one half.
struct HyperXParams {
  std::uint32_t x = 32;
  std::uint32_t y = 32;
  std::uint32_t concentration = 1;
  std::uint32_t radix = 64;
  LinkParams host;
  LinkParams fabric;
};
Topology build_hyperx(const HyperXParams& params);

/// Torus of any number of dimensions, accelerators forwarding (no switches).
/// dims = {d0, d1, ...}; accelerator id = c0 + d0*(c1 + d1*(c2 + ...)); each
/// accelerator links to its +1 neighbour in every dimension with wrap-around
/// (a dimension of size 2 gets one cable, of size 1 none).  With boards
/// (2x2 boards in the first two dimensions, which must be even), a link
/// between two accelerators of one board is a Board link (free), others are
/// Global cables (priced AoC, spec §4.4).  Without boards every link is a
/// Global AoC cable.
struct TorusParams {
  std::vector<std::uint32_t> dims{32, 32};
  bool boards = true;
  LinkParams board{.bandwidth_gbps = 400.0, .latency = core::SimTime::from_ns(1)};
  LinkParams link;
};
Topology build_torus(const TorusParams& params);

/// Dragonfly: groups of `a` routers, `p` endpoints per router, `h` global
/// links per router; routers of a group fully connected (Fabric); global
/// links (Global class, AoC) by `arrangement`: "consecutive" (router r of a
/// group takes global ports r*h .. r*h+h-1 of its group, and the group's
/// global port k < q*(groups-1), q = floor(a*h/(groups-1)), goes to the
/// (k mod (groups-1))-th other group in ascending order; the r remaining
/// ports go to the groups at distance 1..r/2 on both sides, plus the
/// opposite group when r is odd, so every pair of groups gets q or q+1
/// links; see dragonfly.cpp) or "palmtree" (Camarero et al.: group g's
/// global port k goes to group (g - k - 1) mod groups; needs a*h =
/// groups - 1).
/// Endpoint cables DAC, intra-group cables DAC, global cables AoC (spec
/// §4.1).  routers_per_switch = 2 packs pairs of routers (2i, 2i+1 of a
/// group) into one physical switch: their link is a Fabric link with no
/// cable, and physical_switches() counts boxes (spec §4.2).
struct DragonflyParams {
  std::uint32_t a = 16;
  std::uint32_t p = 8;
  std::uint32_t h = 8;
  std::uint32_t groups = 8;
  std::string arrangement = "consecutive";
  std::uint32_t routers_per_switch = 1;
  LinkParams host;
  LinkParams local;
  LinkParams global;
};
Topology build_dragonfly(const DragonflyParams& params);

/// TopoOpt direct-connect fabric (../shared/spec/topoopt.md §2.1, §4.3-4.5;
/// Wang et al., NSDI '23), for one dedicated job whose AllReduce group is the
/// whole cluster (g = n): n servers, each with d interfaces, joined by
/// circulant rings "server i -> server (i + p) mod n" for a set of jumps p.
/// No switches: servers are Endpoint nodes that forward (host forwarding),
/// named "srvN", level 0.
///
/// Jumps: ring_offsets if given, else chosen as the paper does:
/// select_permutations(n, rings, candidates) over the candidates
/// totient_perms(n, n) (every p coprime to n; each gives a Hamiltonian ring),
/// with rings = d (directed) or d/2 (bidirectional, candidates p <= n/2
/// only, since p stands for the pair {p, n-p}); geo_code_variant uses
/// select_permutations_geo instead.
///
/// Interfaces, ports and cables.  The paper counts transmit and receive
/// sides of an interface separately (spec §2.1, "Link direction"); a
/// fabricsim port is one cable, both directions (out[p] / in[p]).
///   - Directed (default, the paper's semantics): an interface of server i is
///     one directed link out (to i+p) and one in (from i-p), two different
///     neighbours, so it takes two ports: every ring hop i -> i+p is one
///     Topology::connect_directed cable (i's port sends, i+p's port
///     receives; the i+p -> i half carries only credits).  Each server has d
///     data links out and d in, radix 2d, and the fabric n*d cables (one per
///     simplex fibre through the patch panel).  A repeated jump, or p = n/2,
///     gives parallel cables.
///   - bidirectional_rings: every jump p also adds jump n-p on the same fibre
///     pair (spec [code]): one cable i - (i+p) per server and jump, both
///     halves data.  d must be even; d/2 jumps, radix d (one port per
///     interface), n*d/2 cables.  p = n/2 (or p and n-p both given) gives
///     parallel cables.
/// Cables are created ring by ring (jumps in the order chosen or given),
/// server by server (i = 0..n-1, each from i to i+p), so a server's ports are
/// not in a fixed per-ring order (as in the torus).
///
/// Links are Global class, cables AoC in the cost model: the spec's own cost
/// model (NICs, transceivers, patch-panel ports, 1x2 switches, fibre; spec
/// §3) is not implemented, so `fabricsim info` prices each optical link as
/// one AoC cable.
///
/// ring_offsets, if not empty: the jumps, each in 1..n-1, d of them
/// (directed) or d/2 (bidirectional; the n-p are added); repeats allowed
/// (parallel rings in the multigraph).  They must generate Z_n (gcd of n and
/// all jumps = 1), i.e. the graph must be strongly connected; otherwise
/// util::ConfigError naming topology.ring_offsets.  The description lists
/// the jumps and where they came from, e.g. "TopoOpt direct-connect, 128
/// servers, degree 4, rings +1 +3 +11 +37 (directed, SelectPermutations)"
/// ("+-p" for bidirectional pairs; "topology.ring_offsets" when given).
struct TopoOptParams {
  std::uint32_t servers = 128;
  std::uint32_t degree = 4;  ///< d: interfaces per server
  std::vector<std::uint32_t> ring_offsets;  ///< empty = choose (SelectPermutations)
  bool bidirectional_rings = false;
  bool geo_code_variant = false;  ///< choose jumps with select_permutations_geo
  LinkParams link;
};
Topology build_topoopt(const TopoOptParams& params);

/// A direct-connect fabric of servers that forward, from explicit links:
/// TopoOpt built from a job (ctrl/topology_finder.hpp), the expander
/// baseline, and rings on servers of several GPUs.  `directed` links u -> v
/// are one-way optical links (Topology::connect_directed), `duplex` pairs
/// cables; parallel links repeat.  gpus_per_server = 1: server s is
/// endpoint s, an Endpoint node "srvS" that forwards (as build_topoopt);
/// more: server s is a forwarding node "srvS" (NodeKind::Switch, level 1,
/// nodes 0..n-1) with gpus_per_server GPU endpoints "gpuE" (E = s * G + g,
/// nodes n + E, level 0, not forwarding), each on one IntraServer cable of
/// `intra` (cable type None).  Server links are class Global, AoC.  kind
/// "topoopt".  ConfigError naming topology.degree if a server needs more
/// than kMaxRadix ports, topology.servers if a link names a server >= n.
struct ServerFabricParams {
  std::uint32_t servers = 0;
  std::uint32_t gpus_per_server = 1;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> directed;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> duplex;
  LinkParams link;
  LinkParams intra;
  std::string description;
  /// Every possible circuit instead of `directed` / `duplex`: `ocs_degree`
  /// parallel directed links from each server to each other one
  /// (Topology::ocs_degree; links u -> v in the order u, v, slot).
  std::uint32_t ocs_degree = 0;
  /// `directed` / `duplex` form shards not connected to each other (Topology::shards).
  bool shards = false;
  /// Per `directed` entry (or empty): 1 if it is an AllReduce ring's link
  /// (Topology::allreduce_links).
  std::vector<std::uint8_t> allreduce;
};
Topology build_server_fabric(const ServerFabricParams& params);

/// `base` with every endpoint turned into a server of `gpus` GPUs behind one
/// NIC (the TopoOpt paper's servers on its fat-tree and ideal-switch
/// baselines): endpoint node "X" becomes a forwarding node "X" (Switch,
/// level 0, same ports, links, classes and ids), and its GPUs "X.gG" are
/// new Endpoint nodes after all of base's, on one IntraServer cable of
/// `intra` each; GPU endpoint e is GPU e % gpus of base endpoint e / gpus.
/// Switch boxes, description and kind are base's.  gpus = 1 returns base.
Topology with_shared_nics(const Topology& base, std::uint32_t gpus, const LinkParams& intra);

/// TotientPerms (spec §4.3): the ring jumps of an AllReduce group of size g
/// (g divides n; the groups are the residue classes mod n/g): (n/g) * p for
/// every p in 1..g-1 with gcd(p, g) = 1, ascending.  g = n gives every jump
/// coprime to n, e.g. totient_perms(12, 12) = {1, 5, 7, 11}.  Requires
/// 1 <= g, g divides n.
std::vector<std::uint32_t> totient_perms(std::uint32_t n, std::uint32_t g);

/// SelectPermutations (spec §4.4, the paper's variant): d jumps from
/// `candidates`, close to a geometric sequence.  The first is the smallest
/// candidate q; then d-1 times the unused candidate nearest to x * q (q the
/// jump chosen last; ties to the smaller candidate), x = n^(1/d), or 2 if
/// that is below 2.  In the order chosen, e.g. n = 16, d = 3, candidates
/// totient_perms(16, 16) -> {1, 3, 7}.  Requires d <= candidates.size()
/// (candidates distinct).
std::vector<std::uint32_t> select_permutations(std::uint32_t n, std::uint32_t d,
                                               const std::vector<std::uint32_t>& candidates);

/// The released code's variant (spec §4.4, choose_n_geo): ratio =
/// (max / min candidate)^(1 / (d - 1)) (^(1/d) when bidirectional; 1 when
/// that exponent is undefined), and the next jump is the smallest unused
/// candidate >= ratio * q (the largest unused one if none is).  Same
/// requirements as select_permutations.
std::vector<std::uint32_t> select_permutations_geo(std::uint32_t n, std::uint32_t d,
                                                   const std::vector<std::uint32_t>& candidates,
                                                   bool bidirectional);

/// CoinChangeMod (spec §4.5): minimal routes over circulant rings.  For
/// every residue r of Z_n, hops[r] is the fewest coins (jumps, taken mod n)
/// summing to r mod n (BFS over Z_n with the coins as generators; hops[0] =
/// 0; kUnreachable if no sum gives r), and last[r] the coin a minimal route
/// to r ends with: the first coin c, in the order given, with hops[(r - c)
/// mod n] = hops[r] - 1 (kNoCoin for r = 0 and unreachable r).  The route
/// from server i to j is coin_route(r = (j - i) mod n), the same for every i.
struct CoinChange {
  static constexpr std::uint32_t kUnreachable = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kNoCoin = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> hops;
  std::vector<std::uint32_t> last;
};
CoinChange coin_change_mod(std::uint32_t n, const std::vector<std::uint32_t>& coins);
/// The coins of the minimal route to residue r, in the order they are taken
/// from the source (unwinding last[]); empty for r = 0 or unreachable r.
std::vector<std::uint32_t> coin_route(const CoinChange& change, std::uint32_t r);

/// Prices of the cost model (../shared/spec/hammingmesh.md §4.1): capital
/// cost of switches and cables only, for `planes` identical planes.
struct CostModel {
  std::uint32_t planes = 1;
  double switch_usd = 14280.0;
  double dac_usd = 272.0;
  double aoc_usd = 603.0;
  /// Ports of the priced switch box.  A switch of more ports (where the
  /// builder counts no boxes itself) is priced as the nonblocking 2-level
  /// fat tree of such boxes that makes it (switch_boxes()).
  std::uint32_t switch_ports = 64;
};

/// A switch of `ports` ports built from `box_ports`-port boxes as a
/// nonblocking 2-level fat tree (the HammingMesh paper's 256-port row and
/// column networks, spec §4.3): ceil(ports / (box_ports / 2)) leaves of
/// box_ports / 2 ports down and up, spines for their up-links, one cable per
/// up-link.  One box (no cable) when ports <= box_ports.  ConfigError naming
/// topology.radix beyond box_ports^2 / 2 ports (two levels).
struct SwitchBoxes {
  std::uint64_t boxes = 1;
  std::uint64_t cables = 0;
};
SwitchBoxes switch_boxes(std::uint64_t ports, std::uint32_t box_ports);

/// What `fabricsim info` prints and a run writes to /topology.  Counts are
/// for one plane; cost_usd covers cost.planes planes.
struct StructureReport {
  std::size_t endpoints = 0;
  std::size_t switches = 0;           ///< routers (switch nodes)
  std::size_t physical_switches = 0;  ///< switch boxes priced
  /// AoC cables inside switches of more than CostModel::switch_ports ports
  /// (priced, not simulated: such a switch is simulated as one).
  std::size_t box_cables = 0;
  std::array<std::size_t, kLinkClassCount> cables_by_class{};
  std::array<std::size_t, kCableTypeCount> cables_by_type{};
  std::uint32_t planes = 1;
  double cost_usd = 0.0;
  int diameter = 0;  ///< in cables, endpoint cables included (Topology::diameter)
  /// Measured bisection (Topology::measure_bisection), 0 if the builder has none.
  std::size_t bisection_cables = 0;
  /// bisection_cables / injection links of one half (the spec's relative bisection).
  double bisection_relative = 0.0;
  /// The TopoOpt paper's price of the fabric (Table 2, net::paper_cost).
  double paper_cost_usd = 0.0;
  /// topoopt fabrics: servers, interfaces per server and their speed (0
  /// when they differ), and the cost-equivalent Fat-tree's link speed and
  /// price (cost_equivalent_fat_tree; 0 when none is cheap enough).
  std::uint64_t servers = 0;
  std::uint32_t degree = 0;
  double interface_gbps = 0.0;
  double fat_tree_gbps = 0.0;
  double fat_tree_cost_usd = 0.0;
  /// topoopt fabrics: ordered server pairs by the hops of their shortest
  /// route over the server-to-server links (index h: pairs h hops apart;
  /// the spec's path-length distribution), and the mean.
  std::vector<std::uint64_t> server_hops;
  double server_hops_mean = 0.0;
};
/// (The diameter over the destination groups of `part` of `parts`, see
/// Topology::diameter: combine the parts' reports.)
StructureReport structure_report(const Topology& topo, const CostModel& cost, std::size_t part = 0,
                                 std::size_t parts = 1);

/// D-mod-k routing on a tree: at a switch of level l the up-port index is
/// (destination endpoint / divisor[l]) mod (candidates), divisor[l] the
/// product of the up-port counts of the levels below (1 for levels 0 and
/// 1).  Shared by the packet model and the flow models' paths.
std::vector<std::uint32_t> dmodk_divisors(const Topology& topo);

/// The server of every node: nodes joined by IntraServer links (a server's
/// GPUs and its intra-server switch, a TopoOpt server and its GPUs) share
/// one id, every other node has one of its own (the smallest node id of the
/// group).  A byte a link sends is originated when the link's source node
/// is in the message's source endpoint's server, forwarded otherwise
/// (LinkStats::originated_bytes).
std::vector<NodeId> server_of_nodes(const Topology& topo);

/// Per link, the next data link parallel to it (the same source and
/// destination node), in a ring over each such set (itself when it has
/// none): a TopoOpt server's several circuits to one neighbour, which a
/// pinned hop spreads over (Network::spread_pinned_hops).
std::vector<LinkId> parallel_links(const Topology& topo);

/// Minimal-route candidates.
///
/// A minimal path is a shortest path in data-carrying links (see
/// Link::carries_data) whose intermediate nodes all forward; among those of equal length, the ones crossing the fewest links
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
  /// Roughly what memory_bytes() will be on `topo`, without the searches
  /// (one pass over the links): for the memory estimate before a run.
  static std::size_t estimate_bytes(const Topology& topo);

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
