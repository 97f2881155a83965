// Topologies as modules (issue 28, item 4): one entry per `topology.kind`,
// with everything the run needs to know of that kind (how it is built from
// [topology], how it is routed, which placements it orders), so that the
// rest of the program never compares kind names.  Each kind lives in
// topo_<kind>.cpp and is listed once in topology_kinds.cpp;
// docs/architecture.md, "How to add a topology".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "scenario.hpp"

namespace fabricsim::app {

/// The link classes of [network], resolved (a builder takes what it uses).
struct LinkClasses {
  net::LinkParams host;    ///< endpoint to switch (network.host_link_*)
  net::LinkParams fabric;  ///< switch to switch (network.switch_link_*)
  net::LinkParams board;   ///< on a board (network.board_link_*)
};

/// The board grid of a HammingMesh layout: board_a x board_b accelerators
/// per board, x by y boards (by_board and grid placements).
struct BoardGrid {
  std::uint32_t a = 1, b = 1, x = 1, y = 1;
};

struct TopologyKind {
  const char* name;  ///< its topology.kind
  /// Builds it from [topology]; ConfigError naming the key.
  net::Topology (*build)(const config::Config& cfg, const LinkClasses& links);
  /// Checks routing.algorithm (wrong_algorithm() with the ones it takes)
  /// and sets up its routing in `np` and `r` (route rules, groups, notes);
  /// the trees need nothing beyond the check (the minimal-route table).
  void (*routing)(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r);
  /// Its accelerators' board grid (by_board, grid), if it has one.
  std::optional<BoardGrid> (*board_grid)(const config::Config& cfg) = nullptr;
  /// Its `grid` placement order where that is not a board grid's, if any.
  std::vector<net::EndpointId> (*grid_order)(const config::Config& cfg) = nullptr;
  /// Whether it takes routing.k_paths > 1 (k shortest routes per pair).
  bool k_shortest_paths = false;
  /// Its servers, if it groups endpoints into servers numbered server by
  /// server: endpoints per server (hierarchical collectives, by_server).
  std::uint32_t (*endpoints_per_server)(const config::Config& cfg) = nullptr;
};

/// The kind `topology.kind = name` (ConfigError if none).
const TopologyKind& topology_kind(const std::string& name);
/// Every kind, in registration order.
const std::vector<const TopologyKind*>& topology_kinds();

// Helpers the kinds share.
std::uint32_t cfg_u32(const config::Config& cfg, const char* name);
[[noreturn]] void wrong_algorithm(const config::Config& cfg, const std::string& kind, const std::string& allowed);
/// A kind routed by the trees' table takes every policy that picks among
/// the table's candidates (net::RoutePolicy::table_pick): wrong_algorithm() otherwise.
void require_table_policy(const config::Config& cfg, const net::Topology& topo, const net::NetworkParams& np);
/// A custom graph's routing (file, npu_graph): minimal where its channel
/// dependencies allow, else up*/down* (routing.graph).
void graph_file_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r);
/// A route-rules kind's routing, once its rules are in r.routes: points
/// np at them, checks network.vcs, writes the note.
void use_route_rules(net::NetworkParams& np, Routing& r);

}  // namespace fabricsim::app
