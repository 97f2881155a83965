// fat_tree and leaf_spine: routed by their minimal-route table (the
// up*/down* paths), among which ecmp, spray, adaptive or dmodk choose.
#include "topology_kinds.hpp"

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

using core::SimTime;

void tree_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing&) {
  require_table_policy(cfg, topo, np);
}

net::Topology build_fat_tree(const config::Config& cfg, const LinkClasses& links) {
  net::FatTreeParams p;
  p.endpoints = cfg_u32(cfg, "topology.endpoints");
  p.radix = cfg_u32(cfg, "topology.radix");
  p.down_ports = cfg_u32(cfg, "topology.down_ports");
  p.levels = cfg_u32(cfg, "topology.levels");
  if (p.levels == 1) throw util::ConfigError("topology.levels: a fat tree has 2 or 3 levels (0 = automatic)");
  p.host = links.host;
  p.fabric = links.fabric;
  return net::build_fat_tree(p);
}

net::Topology build_leaf_spine(const config::Config& cfg, const LinkClasses& links) {
  net::LeafSpineParams p;
  p.leaves = cfg_u32(cfg, "topology.leaves");
  p.spines = cfg_u32(cfg, "topology.spines");
  p.links_per_pair = cfg_u32(cfg, "topology.links_per_pair");
  p.servers_per_leaf = cfg_u32(cfg, "topology.servers_per_leaf");
  p.gpus_per_server = cfg_u32(cfg, "topology.gpus_per_server");
  p.radix = cfg_u32(cfg, "topology.radix");
  p.rail_optimized = cfg.get_bool("topology.rail_optimized");
  p.ocs_switches = cfg_u32(cfg, "topology.ocs_switches");
  p.host = links.host;
  p.fabric = links.fabric;
  p.intra_server.bandwidth_gbps = cfg.get_float("network.intra_server_gbps");
  p.intra_server.latency = SimTime::from_ns_f(cfg.get_float("network.intra_server_latency_ns"));
  return net::build_leaf_spine(p);
}

std::uint32_t leaf_spine_gpus_per_server(const config::Config& cfg) { return cfg_u32(cfg, "topology.gpus_per_server"); }

}  // namespace

extern const TopologyKind kFatTree{"fat_tree", &build_fat_tree, &tree_routing};

extern const TopologyKind kLeafSpine{"leaf_spine", &build_leaf_spine, &tree_routing, nullptr, nullptr, false,
                                     &leaf_spine_gpus_per_server};

}  // namespace fabricsim::app
