// Fat-tree builder; the wiring rules are documented on FatTreeParams.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {

using detail::ceil_div;
using detail::num;
using detail::require_positive;

using util::ConfigError;

}  // namespace

Topology build_fat_tree(const FatTreeParams& params) {
  detail::validate_link_params(params.host, "topology.host_link");
  detail::validate_link_params(params.fabric, "topology.fabric_link");
  const std::uint64_t n = params.endpoints;
  const std::uint64_t k = params.radix;
  if (n == 0) throw ConfigError("topology.endpoints: must be at least 1");
  if (k < 2) throw ConfigError("topology.radix: must be at least 2, got " + num(k));
  if (k > kMaxRadix) {
    throw ConfigError("topology.radix: " + num(k) + " exceeds the supported " + num(kMaxRadix));
  }
  const std::uint64_t d = params.down_ports == 0 ? k / 2 : params.down_ports;
  if (d > k) {
    throw ConfigError("topology.down_ports: " + num(d) + " exceeds topology.radix " + num(k));
  }
  if (d == k) {
    throw ConfigError("topology.down_ports: " + num(d) + " leaves no up port on topology.radix " +
                      num(k));
  }
  const std::uint64_t u = k - d;
  const std::uint64_t h = k / 2;  // level-2 down (= up) ports in 3-level trees
  const std::uint64_t leaves = ceil_div(n, d);
  const std::uint64_t pods = ceil_div(leaves, h);

  std::uint64_t levels = params.levels;
  if (levels == 0) levels = leaves <= k ? 2 : 3;
  if (levels != 2 && levels != 3) {
    throw ConfigError("topology.levels: " + num(levels) +
                      " is not supported (0 = automatic, 2 or 3)");
  }
  if (levels == 2 && leaves > k) {
    throw ConfigError("topology.endpoints: " + num(n) + " does not fit a 2-level fat tree of radix " +
                      num(k) + " with " + num(d) + " down ports (at most " + num(k * d) +
                      "); use 3 levels");
  }
  if (levels == 3 && pods > k) {
    throw ConfigError("topology.endpoints: " + num(n) + " does not fit a 3-level fat tree of radix " +
                      num(k) + " with " + num(d) + " down ports (at most " + num(k * h * d) + ")");
  }

  // Switch counts.
  const std::uint64_t level2 = levels == 2 ? ceil_div(leaves * u, k) : ceil_div(leaves * u, h);
  const std::uint64_t cores = levels == 2 ? 0 : ceil_div(level2 * h, k);
  const std::uint64_t fabric_cables = levels == 2 ? leaves * u : 2 * leaves * u;
  const std::uint64_t total_nodes = n + leaves + level2 + cores;
  if (total_nodes >= kNoNode || 2 * (n + fabric_cables) >= kNoLink) {
    throw ConfigError("topology.endpoints: " + num(n) + " is too large");
  }

  Topology topo;
  topo.kind = "fat_tree";
  topo.reserve(total_nodes, 2 * (n + fabric_cables));
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.add_node(NodeKind::Endpoint, 0, 1, "ep" + num(e), false);
  }
  const auto radix = static_cast<std::uint32_t>(k);
  const auto first_leaf = static_cast<NodeId>(n);
  for (std::uint64_t i = 0; i < leaves; ++i) {
    topo.add_node(NodeKind::Switch, 1, radix, "leaf" + num(i), true);
  }
  const NodeId first_l2 = first_leaf + static_cast<NodeId>(leaves);
  for (std::uint64_t i = 0; i < level2; ++i) {
    topo.add_node(NodeKind::Switch, 2, radix, (levels == 2 ? "spine" : "l2sw") + num(i), true);
  }
  const NodeId first_core = first_l2 + static_cast<NodeId>(level2);
  for (std::uint64_t i = 0; i < cores; ++i) {
    topo.add_node(NodeKind::Switch, 3, radix, "core" + num(i), true);
  }

  // Endpoint cables: endpoint e on leaf e / d.
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.connect(static_cast<NodeId>(e), first_leaf + static_cast<NodeId>(e / d), LinkClass::Host,
                 params.host);
  }

  if (levels == 2) {
    // Up-link j of leaf i -> spine (i*u + j) mod spines.
    for (std::uint64_t i = 0; i < leaves; ++i) {
      for (std::uint64_t j = 0; j < u; ++j) {
        topo.connect(first_leaf + static_cast<NodeId>(i),
                     first_l2 + static_cast<NodeId>((i * u + j) % level2), LinkClass::Fabric,
                     params.fabric);
      }
    }
  } else {
    // Pods of h leaves; pod with r leaves has m = ceil(r*u/h) level-2 switches.
    std::uint64_t l2_base = 0;
    for (std::uint64_t pod = 0; pod < pods; ++pod) {
      const std::uint64_t leaf_base = pod * h;
      const std::uint64_t r = std::min(h, leaves - leaf_base);
      const std::uint64_t m = ceil_div(r * u, h);
      for (std::uint64_t i = 0; i < r; ++i) {
        for (std::uint64_t j = 0; j < u; ++j) {
          topo.connect(first_leaf + static_cast<NodeId>(leaf_base + i),
                       first_l2 + static_cast<NodeId>(l2_base + (i * u + j) % m), LinkClass::Fabric,
                       params.fabric);
        }
      }
      l2_base += m;
    }
    // Level-2 up-links, as many as leaf links, numbered globally: g -> core g mod cores.
    std::uint64_t g = 0;
    for (std::uint64_t q = 0; q < level2; ++q) {
      const NodeId sw = first_l2 + static_cast<NodeId>(q);
      const std::uint32_t down = topo.node(sw).ports_used();
      for (std::uint32_t j = 0; j < down; ++j, ++g) {
        topo.connect(sw, first_core + static_cast<NodeId>(g % cores), LinkClass::Fabric,
                     params.fabric);
      }
    }
  }

  std::string text = num(levels) + "-level fat tree, radix " + num(k) + ", " + num(n) +
                     " endpoints (" + num(leaves) + " leaves of " + num(d) + " down/" + num(u) +
                     " up, ";
  if (levels == 2) {
    text += num(level2) + " spines)";
  } else {
    text += num(level2) + " level-2 + " + num(cores) + " core switches)";
  }
  topo.set_description(std::move(text));
  return topo;
}

}  // namespace fabricsim::net
