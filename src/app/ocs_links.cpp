// The optical layer's circuits as topology links (ocs_links.hpp).
#include "ocs_links.hpp"

#include <algorithm>
#include <string>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::app {

std::vector<net::LinkId> OcsLinks::power_on_down() const {
  std::vector<net::LinkId> out;
  const std::uint32_t g = shape.spines_per_switch();
  for (std::uint32_t n = 0; n < shape.leaves; ++n)
    for (std::uint32_t m = 0; m < shape.spines; ++m)
      for (std::uint32_t c = 0; c < shape.leaf_ports; ++c) {
        if (shape.power_on_spine(m / g, c) == m) continue;
        const ctrl::Circuit circuit{n, m, c};
        out.push_back(up_link(circuit));
        out.push_back(down_link(circuit));
      }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<OcsLinks> ocs_links(const config::Config& cfg, const net::Topology& topo) {
  if (cfg.get_string("topology.kind") != "leaf_spine" || cfg.get_int("topology.ocs_switches") == 0) return std::nullopt;
  OcsLinks o;
  o.shape.leaves = static_cast<std::uint32_t>(cfg.get_int("topology.leaves"));
  o.shape.spines = static_cast<std::uint32_t>(cfg.get_int("topology.spines"));
  o.shape.switches = static_cast<std::uint32_t>(cfg.get_int("topology.ocs_switches"));
  const auto lpp = static_cast<std::uint32_t>(cfg.get_int("topology.links_per_pair"));
  o.shape.leaf_ports = o.shape.spines / o.shape.switches * lpp;
  o.shape.spine_ports = o.shape.leaves * lpp;
  FABRICSIM_ASSERT(o.shape.check().empty(), "OCS shape inconsistent with the leaf_spine builder");
  // The builder's numbering (net::build_leaf_spine): endpoints, then
  // leaves, then spines; the parallel cables of a pair in slot order.
  const auto first_leaf = static_cast<net::NodeId>(topo.endpoint_count());
  const net::NodeId first_spine = first_leaf + o.shape.leaves;
  const std::size_t pairs = std::size_t{o.shape.leaves} * o.shape.spines;
  o.up.assign(pairs * o.shape.leaf_ports, net::kNoLink);
  o.down.assign(pairs * o.shape.leaf_ports, net::kNoLink);
  std::vector<std::uint32_t> seen(pairs, 0);
  for (net::LinkId l = 0; l < topo.link_count(); ++l) {
    const net::Link& link = topo.link(l);
    if (link.src < first_leaf || link.src >= first_spine || link.dst < first_spine ||
        link.dst >= first_spine + o.shape.spines)
      continue;
    const std::size_t pair = std::size_t{link.src - first_leaf} * o.shape.spines + (link.dst - first_spine);
    const std::size_t at = pair * o.shape.leaf_ports + seen[pair]++;
    FABRICSIM_ASSERT(seen[pair] <= o.shape.leaf_ports, "more leaf-spine cables than possible circuits");
    o.up[at] = l;
    o.down[at] = link.reverse;
  }
  FABRICSIM_ASSERT(std::find(o.up.begin(), o.up.end(), net::kNoLink) == o.up.end(), "a possible circuit has no link");
  return o;
}

}  // namespace fabricsim::app
