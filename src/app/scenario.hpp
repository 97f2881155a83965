// Turns a resolved configuration into the objects of one run.
#pragma once

#include <memory>

#include "fabricsim/config/config.hpp"
#include "fabricsim/par/partition.hpp"
#include "fabricsim/net/flow_paths.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/dnn.hpp"
#include "fabricsim/workload/placement.hpp"
#include "chakra_trace.hpp"
#include "fabricsim/workload/trace.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::app {

net::Topology build_topology(const config::Config& cfg);
/// The routing of a run: for the direct topologies the route tables (which
/// the NetworkParams point into, so this must outlive the Network).
struct Routing {
  std::unique_ptr<net::StateRoutes> routes;
  std::unique_ptr<net::StateRoutes> valiant;
  std::unique_ptr<net::ListedPaths> listed;  ///< TopoOpt k-shortest paths (routing.k_paths > 1)
  std::string note;  ///< for the run header ("" for the trees)
};
/// Checks routing.algorithm against the topology and sets up its routing in
/// np: the trees route by their minimal-route table (nothing to do); a
/// `file` graph by minimal routes if their channel dependency graph is
/// acyclic, else up*/down* (routing.graph); torus, HammingMesh/HyperX,
/// Dragonfly and TopoOpt by their route rules (state_routes.hpp).
/// ConfigError for an algorithm the topology has no routing for, too few
/// network.vcs, or (routing.graph = "minimal") a cyclic graph.
Routing setup_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np);
/// The cost section of the configuration.
net::CostModel cost_model(const config::Config& cfg);
/// The network section.  packet_keys false (a run of the flow or analytic
/// model): the keys only the packet model's switches read (buffer_bytes,
/// crossbar_speedup) are left at their defaults and unread, so that a run
/// warns where the user set them (config::Config::unread_settings).
net::NetworkParams network_params(const config::Config& cfg, bool packet_keys = true);
workload::TrafficParams traffic_params(const config::Config& cfg);
/// The endpoints of a hammingmesh in the order of placement "by_board":
/// board after board in a snake over the board grid, each board's
/// accelerators along a cycle of its mesh (consecutive ranks are
/// board-link neighbours, so rings of a board's size stay on the board).
/// ConfigError on other topologies.
std::vector<net::EndpointId> board_order(const config::Config& cfg);
/// workload.placement = "grid": hammingmesh or torus accelerators row-major over their global coordinates.
std::vector<net::EndpointId> grid_order(const config::Config& cfg);
/// workload.kind = "collective": its parameters (sizes from `sizes`, or
/// the min_bytes..max_bytes range by step_factor; by_board's and grid's
/// order unless `pool` already has it).
workload::CollectiveParams collective_params(const config::Config& cfg, const workload::EndpointPool* pool = nullptr);
/// A dnn job's parameters (the model file loaded, relative to the
/// configuration's directory), with its endpoints placed among those free
/// in `pool` (which it then takes); ConfigError naming the key.
workload::DnnParams dnn_params(const config::Config& cfg, workload::EndpointPool& pool);
/// A trace job's parameters (the trace loaded, relative to the
/// configuration's directory), its ranks placed like a dnn job's; reading
/// stops with the memory limit's error past `read_budget` bytes.
/// workload.trace, relative to the configuration file.
std::string trace_path(const config::Config& cfg);
/// A Chakra trace's reading options from workload.trace_* (its group file
/// relative to the configuration file).
ChakraOptions chakra_options(const config::Config& cfg);
workload::TraceParams trace_params(const config::Config& cfg, workload::EndpointPool& pool,
                                   std::uint64_t read_budget = UINT64_MAX);
/// `n` endpoints of a dnn or trace job by workload.placement (linear,
/// by_server, by_board, grid, random, list) among those free in `pool`,
/// which it then takes; ConfigError naming the key (`what` starts the
/// message when too few are free).
std::vector<net::EndpointId> place_job(const config::Config& cfg, std::uint32_t n, workload::EndpointPool& pool,
                                       const std::string& what);

/// The node graph the partitioners split: vertices weighted by the packets
/// the fluid estimate expects each node to send (plus one), edges carrying
/// link latencies.
par::Graph node_graph(const net::Topology& topo, const std::vector<double>& link_bytes, std::uint32_t packet_bytes);

}  // namespace fabricsim::app
