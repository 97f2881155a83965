// ideal_switch: `topology.endpoints` endpoints on one non-blocking crossbar
// of as many ports (the "Best" / "Ideal Switch" baseline of vClos and
// TopoOpt: only the endpoints' own links limit a traffic pattern).  One
// candidate at the crossbar, so every routing algorithm of the trees routes
// it alike.
#include "topology_kinds.hpp"

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

std::uint32_t servers_of(const config::Config& cfg) {
  return cfg.get_bool("topology.gpu_servers") ? cfg_u32(cfg, "topology.gpus_per_server") : 1;
}

net::Topology build_ideal_switch(const config::Config& cfg, const LinkClasses& links) {
  const std::uint32_t n = cfg_u32(cfg, "topology.endpoints");
  if (n < 2) throw util::ConfigError("topology.endpoints: an ideal switch connects at least 2 endpoints");
  if (n > net::kMaxRadix)
    throw util::ConfigError("topology.endpoints: an ideal switch has one port per endpoint, at most " +
                            std::to_string(net::kMaxRadix));
  if (!(links.host.bandwidth_gbps > 0) || links.host.latency < core::SimTime::zero())
    throw util::ConfigError("network.host_link_gbps: an endpoint link needs a positive rate");
  // topology.gpu_servers: endpoints grouped into servers of gpus_per_server,
  // joined by an intra-server switch as on a leaf_spine (vClos' "Best"
  // with the same servers as the cluster it stands for).
  const std::uint32_t G = servers_of(cfg);
  if (n % G != 0)
    throw util::ConfigError("topology.endpoints: " + std::to_string(n) + " endpoints are not whole servers of " +
                            std::to_string(G) + " (topology.gpus_per_server, topology.gpu_servers = true)");
  const std::uint32_t nvswitches = G > 1 ? n / G : 0;
  net::Topology t;
  t.reserve(n + 1 + nvswitches, 2 * static_cast<std::size_t>(n) * (G > 1 ? 2 : 1));
  t.kind = "ideal_switch";
  for (std::uint32_t e = 0; e < n; ++e)
    t.add_node(net::NodeKind::Endpoint, 0, G > 1 ? 2 : 1, "ep" + std::to_string(e), false);
  const net::NodeId xbar = t.add_node(net::NodeKind::Switch, 1, n, "xbar0", true);
  for (std::uint32_t s = 0; s < nvswitches; ++s) t.add_node(net::NodeKind::Switch, 1, G, "nvsw" + std::to_string(s), true);
  for (std::uint32_t e = 0; e < n; ++e) t.connect(t.endpoint_node(e), xbar, net::LinkClass::Host, links.host);
  if (G > 1) {
    net::LinkParams intra;
    intra.bandwidth_gbps = cfg.get_float("network.intra_server_gbps");
    intra.latency = core::SimTime::from_ns_f(cfg.get_float("network.intra_server_latency_ns"));
    for (std::uint32_t e = 0; e < n; ++e)
      t.connect(t.endpoint_node(e), xbar + 1 + e / G, net::LinkClass::IntraServer, intra);
  }
  t.set_description("ideal switch: " + std::to_string(n) + " endpoints on one non-blocking " + std::to_string(n) +
                    "-port crossbar" + (G > 1 ? " (" + std::to_string(n / G) + " servers of " + std::to_string(G) +
                                                    " GPUs, each with an intra-server switch)"
                                              : std::string()));
  return t;
}

void ideal_switch_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing&) {
  require_table_policy(cfg, topo, np);
}

}  // namespace

extern const TopologyKind kIdealSwitch{"ideal_switch", &build_ideal_switch, &ideal_switch_routing, nullptr, nullptr,
                                       false, &servers_of};

}  // namespace fabricsim::app
