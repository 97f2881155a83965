// The optical layer's possible circuits as links of a leaf_spine topology
// (topology.ocs_switches; net::LeafSpineParams, ctrl/ocs.hpp): which link
// is circuit (leaf, spine, slot) each way, and which start down.
#pragma once

#include <optional>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/ctrl/ocs.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::app {

struct OcsLinks {
  ctrl::OcsShape shape;
  /// Per (leaf, spine, slot), at (leaf * S + spine) * P + slot: the link
  /// leaf -> spine and spine -> leaf.
  std::vector<net::LinkId> up, down;

  net::LinkId up_link(const ctrl::Circuit& c) const { return up[index(c)]; }
  net::LinkId down_link(const ctrl::Circuit& c) const { return down[index(c)]; }
  /// Both links of every circuit not connected at power-on, ascending.
  std::vector<net::LinkId> power_on_down() const;

 private:
  std::size_t index(const ctrl::Circuit& c) const {
    return (std::size_t{c.leaf} * shape.spines + c.spine) * shape.leaf_ports + c.slot;
  }
};

/// The run's optical layer; nullopt without one (not a leaf_spine, or
/// topology.ocs_switches = 0).
std::optional<OcsLinks> ocs_links(const config::Config& cfg, const net::Topology& topo);

}  // namespace fabricsim::app
