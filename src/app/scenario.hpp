// Turns a resolved configuration into the objects of one run.
#pragma once

#include <memory>

#include "fabricsim/config/config.hpp"
#include "fabricsim/par/partition.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::app {

net::Topology build_topology(const config::Config& cfg);
/// Whether traffic can run on this topology kind (its deadlock-free routing exists).
bool topology_routable(const std::string& kind);
/// For a `file` graph, the routing `routing.graph` asks for: minimal if its
/// channel dependency graph is acyclic, else up*/down* (auto), or as forced;
/// sets np.up_down and returns a description ("" for other kinds).
/// ConfigError for "minimal" on a graph whose minimal routes have a cycle.
std::string graph_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np);
/// The cost section of the configuration.
net::CostModel cost_model(const config::Config& cfg);
net::NetworkParams network_params(const config::Config& cfg);
workload::TrafficParams traffic_params(const config::Config& cfg);

/// The node graph the partitioners split: vertices weighted by the packets
/// the fluid estimate expects each node to send (plus one), edges carrying
/// link latencies.
par::Graph node_graph(const net::Topology& topo, const std::vector<double>& link_bytes, std::uint32_t packet_bytes);

struct PartitionResult {
  std::vector<std::int32_t> part;
  par::PartitionQuality quality;
};
/// Splits the nodes over `ranks`, never cutting links shorter than
/// `min_cut` (their ends are merged first).
PartitionResult partition_nodes(const par::Graph& g, int ranks, par::Partitioner how, core::SimTime min_cut,
                                std::uint64_t seed);

}  // namespace fabricsim::app
