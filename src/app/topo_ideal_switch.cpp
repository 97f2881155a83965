// ideal_switch: `topology.endpoints` endpoints on one non-blocking crossbar
// of as many ports (the "Best" / "Ideal Switch" baseline of vClos and
// TopoOpt: only the endpoints' own links limit a traffic pattern).  One
// candidate at the crossbar, so every routing algorithm of the trees routes
// it alike.
#include "topology_kinds.hpp"

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

net::Topology build_ideal_switch(const config::Config& cfg, const LinkClasses& links) {
  const std::uint32_t n = cfg_u32(cfg, "topology.endpoints");
  if (n < 2) throw util::ConfigError("topology.endpoints: an ideal switch connects at least 2 endpoints");
  if (n > net::kMaxRadix)
    throw util::ConfigError("topology.endpoints: an ideal switch has one port per endpoint, at most " +
                            std::to_string(net::kMaxRadix));
  if (!(links.host.bandwidth_gbps > 0) || links.host.latency < core::SimTime::zero())
    throw util::ConfigError("network.host_link_gbps: an endpoint link needs a positive rate");
  net::Topology t;
  t.reserve(n + 1, 2 * static_cast<std::size_t>(n));
  t.kind = "ideal_switch";
  for (std::uint32_t e = 0; e < n; ++e) t.add_node(net::NodeKind::Endpoint, 0, 1, "ep" + std::to_string(e), false);
  const net::NodeId xbar = t.add_node(net::NodeKind::Switch, 1, n, "xbar0", true);
  for (std::uint32_t e = 0; e < n; ++e) t.connect(t.endpoint_node(e), xbar, net::LinkClass::Host, links.host);
  t.set_description("ideal switch: " + std::to_string(n) + " endpoints on one non-blocking " + std::to_string(n) +
                    "-port crossbar");
  return t;
}

void ideal_switch_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np, Routing&) {
  require_table_policy(cfg, topo, np);
}

}  // namespace

extern const TopologyKind kIdealSwitch{"ideal_switch", &build_ideal_switch, &ideal_switch_routing};

}  // namespace fabricsim::app
