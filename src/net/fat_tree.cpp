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

/// The largest divisor of `value` that is at most `limit` (1 if none larger).
std::uint64_t largest_divisor_at_most(std::uint64_t value, std::uint64_t limit) {
  for (std::uint64_t c = std::min(value, limit); c > 1; --c)
    if (value % c == 0) return c;
  return 1;
}

}  // namespace

Topology build_fat_tree(const FatTreeParams& params) {
  detail::check_builder_params({{params.host, "topology.host_link"}, {params.fabric, "topology.fabric_link"}},
                                {{params.endpoints, "topology.endpoints"}});
  detail::check_radix(params.radix);
  const std::uint64_t n = params.endpoints;
  const std::uint64_t k = params.radix;
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

  // Switch counts as priced (the HammingMesh paper's, spec §4.2-4.3): the
  // level-2 and core ports a tree of this size needs, over `radix`-port
  // switches.
  const std::uint64_t level2_priced = levels == 2 ? ceil_div(leaves * u, k) : ceil_div(leaves * u, h);
  const std::uint64_t cores_priced = levels == 2 ? 0 : ceil_div(level2_priced * h, k);
  const std::uint64_t fabric_cables = levels == 2 ? leaves * u : 2 * leaves * u;

  // Untapered trees (down_ports = radix/2) keep their original wiring; the
  // others are wired uniformly over logical switches (wiring rules on
  // FatTreeParams).  2 levels: c2 cables from each leaf to each logical
  // spine.  3 levels: pods of pod_size leaves (the last may be smaller), u
  // level-2 switches per pod, u groups of `group` cores; level-2 switch j of
  // a pod spreads its up-links round-robin over core group j.
  const bool uniform = d != h;
  std::uint64_t level2 = level2_priced;
  std::uint64_t cores = cores_priced;
  std::uint64_t c2 = 0, pod_size = h, group = 0, core_ports = 0;
  if (uniform && levels == 2) {
    c2 = largest_divisor_at_most(u, k / leaves);
    level2 = u / c2;
  } else if (uniform) {
    // Exact when the group size divides every pod: the smallest divisor of
    // `leaves` that a core can take (leaves/group <= k ports) and a pod can
    // hold, pods then the largest multiple of it up to h.  Otherwise pods of
    // h and groups of h/c (c: cables from a full pod to each core).
    for (std::uint64_t t = ceil_div(leaves, k); t <= std::min(h, leaves); ++t) {
      if (leaves % t == 0) {
        group = t;
        break;
      }
    }
    if (group != 0) {
      pod_size = (h / group) * group;
    } else {
      group = h / largest_divisor_at_most(h, k / pods);
    }
    const std::uint64_t npods = ceil_div(leaves, pod_size);
    level2 = npods * u;
    cores = u * group;
    for (std::uint64_t p = 0; p < npods; ++p) core_ports += ceil_div(std::min(pod_size, leaves - p * pod_size), group);
  }
  // Logical switches: more of them than the priced boxes (several share a box).
  const bool logical = level2 != level2_priced || cores != cores_priced;
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
    // A logical switch has the ports it uses: a spine c2 per leaf, a
    // level-2 switch of a pod of r leaves r down and r up.
    std::uint32_t ports = radix;
    if (logical && levels == 2) ports = static_cast<std::uint32_t>(leaves * c2);
    if (logical && levels == 3) ports = static_cast<std::uint32_t>(2 * std::min(pod_size, leaves - (i / u) * pod_size));
    topo.add_node(NodeKind::Switch, 2, ports, (levels == 2 ? "spine" : "l2sw") + num(i), true);
  }
  const NodeId first_core = first_l2 + static_cast<NodeId>(level2);
  for (std::uint64_t i = 0; i < cores; ++i) {
    const auto ports = logical ? static_cast<std::uint32_t>(core_ports) : radix;
    topo.add_node(NodeKind::Switch, 3, ports, "core" + num(i), true);
  }

  // Endpoint cables: endpoint e on leaf e / d.
  for (std::uint64_t e = 0; e < n; ++e) {
    topo.connect(static_cast<NodeId>(e), first_leaf + static_cast<NodeId>(e / d), LinkClass::Host,
                 params.host);
  }

  if (levels == 2) {
    // Up-link j of leaf i -> spine (i*u + j) mod spines; uniform: spine
    // j mod spines, which is the same whenever spines divides u.
    for (std::uint64_t i = 0; i < leaves; ++i) {
      for (std::uint64_t j = 0; j < u; ++j) {
        const std::uint64_t spine = uniform ? j % level2 : (i * u + j) % level2;
        topo.connect(first_leaf + static_cast<NodeId>(i), first_l2 + static_cast<NodeId>(spine),
                     LinkClass::Fabric, params.fabric);
      }
    }
  } else if (uniform) {
    // Pod p has u level-2 switches p*u + j; each leaf of the pod has one
    // cable to each.  Level-2 switch p*u + j has as many up-links as leaves
    // below it; up-link s -> core j*group + s mod group.
    for (std::uint64_t i = 0; i < leaves; ++i) {
      for (std::uint64_t j = 0; j < u; ++j) {
        topo.connect(first_leaf + static_cast<NodeId>(i),
                     first_l2 + static_cast<NodeId>((i / pod_size) * u + j), LinkClass::Fabric, params.fabric);
      }
    }
    for (std::uint64_t q = 0; q < level2; ++q) {
      const std::uint64_t r = std::min(pod_size, leaves - (q / u) * pod_size);
      for (std::uint64_t s = 0; s < r; ++s) {
        topo.connect(first_l2 + static_cast<NodeId>(q),
                     first_core + static_cast<NodeId>((q % u) * group + s % group), LinkClass::Fabric,
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
  if (logical) topo.set_physical_switches(leaves + level2_priced + cores_priced);

  std::string text = num(levels) + "-level fat tree, radix " + num(k) + ", " + num(n) +
                     " endpoints (" + num(leaves) + " leaves of " + num(d) + " down/" + num(u) +
                     " up, ";
  if (levels == 2 && !logical) {
    text += num(level2) + " spines)";
  } else if (levels == 2) {
    text += num(level2) + " logical spines of " + num(leaves * c2) + " ports, " + num(c2) + " cable" +
            (c2 == 1 ? "" : "s") + " from each leaf; priced as " + num(level2_priced) + " switches)";
  } else if (!uniform) {
    text += num(level2) + " level-2 + " + num(cores) + " core switches)";
  } else {
    text += num(level2) + " level-2 + " + num(cores) + " core switches, pods of " + num(pod_size) +
            " leaves, core groups of " + num(group);
    if (logical) text += "; logical, priced as " + num(level2_priced) + " + " + num(cores_priced);
    text += ")";
  }
  topo.set_description(std::move(text));
  return topo;
}

}  // namespace fabricsim::net
