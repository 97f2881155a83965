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
/// For a `file` graph, ConfigError unless its minimal routing is free of
/// channel-dependency cycles (the built-in routable kinds are up/down).
void require_deadlock_free(const net::Topology& topo);
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
