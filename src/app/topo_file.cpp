// file: a custom graph (graph_file.cpp), routed minimally where its channel
// dependencies allow, else up*/down* (routing.graph).
#include "topology_kinds.hpp"

#include "fabricsim/net/cdg.hpp"
#include "fabricsim/util/error.hpp"
#include "graph_file.hpp"

namespace fabricsim::app {

namespace {

net::Topology build_file(const config::Config& cfg, const LinkClasses& links) {
  const std::string& file = cfg.get_string("topology.file");
  const std::string path = file.front() == '/' || cfg.base_dir() == "." ? file : cfg.base_dir() + "/" + file;
  return build_graph_file(path, links.host, links.fabric);
}

std::string graph_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np) {
  const std::string& how = cfg.get_string("routing.graph");
  if (how == "up_down") {
    np.up_down = true;
    return "up*/down* (routing.graph)";
  }
  const net::DependencyReport r = net::check_minimal_routing(topo, net::RoutingTable(topo));
  if (r.acyclic) return "minimal (its channel dependency graph is acyclic)";
  if (how == "auto") {
    np.up_down = true;
    return "up*/down* (minimal routes would have a channel-dependency cycle)";
  }
  std::string cycle;
  for (std::size_t i = 0; i < r.cycle.size() && i < 8; ++i)
    cycle += topo.node(topo.link(r.cycle[i].link).src).name + " -> ";
  cycle += r.cycle.size() > 8 ? "..." : topo.node(topo.link(r.cycle.back().link).dst).name;
  throw util::ConfigError("routing.graph: minimal routing on this graph has a channel-dependency cycle (" + cycle +
                          "), so lossless traffic could deadlock; use \"up_down\" or \"auto\"");
}

}  // namespace

void graph_file_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing& r) {
  require_table_policy(cfg, topo, np);
  r.note = graph_routing(cfg, topo, np);
}

extern const TopologyKind kGraphFile{"file", &build_file, &graph_file_routing};

}  // namespace fabricsim::app
