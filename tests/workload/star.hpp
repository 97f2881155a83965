// The workload tests' fabric: n endpoints on one switch, every message's
// time known exactly (2 link latencies + switch latency + serialization).
#pragma once

#include <cstdint>
#include <string>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::workload::testing {

inline net::Topology star(std::uint32_t n, double gbps, core::SimTime latency) {
  net::Topology t;
  for (std::uint32_t i = 0; i < n; ++i) t.add_node(net::NodeKind::Endpoint, 0, 1, "ep" + std::to_string(i), false);
  const net::NodeId sw = t.add_node(net::NodeKind::Switch, 1, n, "sw", true);
  for (std::uint32_t i = 0; i < n; ++i) t.connect(i, sw, net::LinkClass::Host, net::LinkParams{gbps, latency});
  t.kind = "star";
  return t;
}

}  // namespace fabricsim::workload::testing
