// Leaf-spine builder; the wiring rules are documented on LeafSpineParams.
#include <algorithm>
#include <cstdint>
#include <string>

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

Topology build_leaf_spine(const LeafSpineParams& params) {
  detail::check_builder_params({{params.host, "topology.host_link"},
                                 {params.fabric, "topology.fabric_link"},
                                 {params.intra_server, "topology.intra_server_link"}},
                                {{params.leaves, "topology.leaves"},
                                 {params.spines, "topology.spines"},
                                 {params.links_per_pair, "topology.links_per_pair"},
                                 {params.servers_per_leaf, "topology.servers_per_leaf"},
                                 {params.gpus_per_server, "topology.gpus_per_server"},
                                 {params.radix, "topology.radix"}});

  const std::uint64_t leaves = params.leaves;
  const std::uint64_t spines = params.spines;
  const std::uint64_t lpp = params.links_per_pair;
  const std::uint64_t spl = params.servers_per_leaf;
  const std::uint64_t gps = params.gpus_per_server;
  const std::uint64_t k = params.radix;
  if (k > kMaxRadix) {
    throw ConfigError("topology.radix: " + num(k) + " exceeds the supported " + num(kMaxRadix));
  }
  const std::uint64_t down = spl * gps;
  const std::uint64_t up = spines * lpp;
  if (down + up > k) {
    throw ConfigError("topology.radix: a leaf needs servers_per_leaf*gpus_per_server + "
                      "spines*links_per_pair = " + num(down) + " + " + num(up) + " = " +
                      num(down + up) + " ports, more than topology.radix " + num(k));
  }
  if (leaves * lpp > k) {
    throw ConfigError("topology.radix: a spine needs leaves*links_per_pair = " + num(leaves * lpp) +
                      " ports, more than topology.radix " + num(k));
  }
  const std::uint64_t ocs = params.ocs_switches;
  if (ocs > 0 && spines % ocs != 0)
    throw ConfigError("topology.ocs_switches: " + num(ocs) + " optical switches cannot share " + num(spines) +
                      " spines evenly (each holds spines/ocs_switches spines)");
  if (ocs > 0 && params.rail_optimized)
    throw ConfigError("topology.ocs_switches: an optical layer is modelled for a leaf-spine whose servers sit under "
                      "one leaf; not with rail_optimized");
  // Parallel cables per leaf-spine pair: the possible circuits (P) with an
  // optical layer, else the links themselves.
  const std::uint64_t per_pair = ocs > 0 ? spines / ocs * lpp : lpp;
  const bool rail = params.rail_optimized && gps > 1;
  if (rail && leaves % gps != 0) {
    throw ConfigError("topology.leaves: " + num(leaves) +
                      " is not a multiple of topology.gpus_per_server " + num(gps) +
                      " (needed by rail_optimized)");
  }
  const std::uint64_t servers = leaves * spl;
  const std::uint64_t gpus = servers * gps;
  const std::uint64_t nvswitches = gps > 1 ? servers : 0;
  const std::uint64_t cables = gpus + leaves * spines * per_pair + (gps > 1 ? gpus : 0);
  const std::uint64_t leaf_radix = ocs > 0 ? std::max(k, down + spines * per_pair) : k;
  const std::uint64_t spine_radix = ocs > 0 ? std::max(k, leaves * per_pair) : k;
  if (leaf_radix > kMaxRadix || spine_radix > kMaxRadix)
    throw ConfigError("topology.ocs_switches: " + num(ocs) + " optical switches give a switch " +
                      num(std::max(leaf_radix, spine_radix)) + " possible circuits, more than the supported " +
                      num(kMaxRadix) + ": use more optical switches");
  const std::uint64_t total_nodes = gpus + leaves + spines + nvswitches;
  if (total_nodes >= kNoNode || 2 * cables >= kNoLink) {
    throw ConfigError("topology.leaves: " + num(leaves) + " leaves give too large a topology");
  }

  Topology topo;
  topo.kind = "leaf_spine";
  topo.reserve(total_nodes, 2 * cables);
  const std::uint32_t gpu_radix = gps > 1 ? 2 : 1;
  for (std::uint64_t e = 0; e < gpus; ++e) {
    topo.add_node(NodeKind::Endpoint, 0, gpu_radix, "ep" + num(e), false);
  }
  const auto first_leaf = static_cast<NodeId>(gpus);
  for (std::uint64_t i = 0; i < leaves; ++i) {
    topo.add_node(NodeKind::Switch, 1, static_cast<std::uint32_t>(leaf_radix), "leaf" + num(i), true);
  }
  const NodeId first_spine = first_leaf + static_cast<NodeId>(leaves);
  for (std::uint64_t i = 0; i < spines; ++i) {
    topo.add_node(NodeKind::Switch, 2, static_cast<std::uint32_t>(spine_radix), "spine" + num(i), true);
  }
  const NodeId first_nvsw = first_spine + static_cast<NodeId>(spines);
  for (std::uint64_t s = 0; s < nvswitches; ++s) {
    topo.add_node(NodeKind::Switch, 1, static_cast<std::uint32_t>(gps), "nvsw" + num(s), true);
  }

  // NICs, in endpoint order: GPU g of server s is endpoint s*gps + g.
  for (std::uint64_t e = 0; e < gpus; ++e) {
    const std::uint64_t s = e / gps;
    const std::uint64_t g = e % gps;
    const std::uint64_t leaf = rail ? (s / (gps * spl)) * gps + g : s / spl;
    topo.connect(static_cast<NodeId>(e), first_leaf + static_cast<NodeId>(leaf), LinkClass::Host,
                 params.host);
  }
  for (std::uint64_t i = 0; i < leaves; ++i) {
    for (std::uint64_t j = 0; j < spines; ++j) {
      for (std::uint64_t c = 0; c < per_pair; ++c) {
        topo.connect(first_leaf + static_cast<NodeId>(i), first_spine + static_cast<NodeId>(j),
                     LinkClass::Fabric, params.fabric);
      }
    }
  }
  for (std::uint64_t e = 0; e < gpus && gps > 1; ++e) {
    topo.connect(static_cast<NodeId>(e), first_nvsw + static_cast<NodeId>(e / gps),
                 LinkClass::IntraServer, params.intra_server);
  }

  std::string text = "leaf-spine, " + num(leaves) + " leaves x " + num(spines) + " spines (" +
                     num(lpp) + (lpp == 1 ? " link" : " links") + " per pair), radix " + num(k) +
                     ", " + num(gpus) + " endpoints (" + num(servers) + " servers x " + num(gps) +
                     " GPUs" + (rail ? ", rail-optimized)" : ")") +
                     (ocs > 0 ? ", " + num(ocs) + " optical circuit switches (" + num(per_pair) +
                                    " possible circuits per leaf-spine pair)"
                              : "");
  topo.set_description(std::move(text));
  return topo;
}

}  // namespace fabricsim::net
