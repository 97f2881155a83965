#include "topology_kinds.hpp"

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

// The kinds (topo_<kind>.cpp).  A new kind: its file, one line here and its
// name in topology.kind's choices (config/parameters.cpp).
extern const TopologyKind kFatTree, kLeafSpine, kHammingMesh, kHyperX, kTorus, kDragonfly, kTopoOpt, kGraphFile,
    kIdealSwitch, kMesh, kNpuGraph;

const std::vector<const TopologyKind*>& topology_kinds() {
  static const std::vector<const TopologyKind*> all = {&kFatTree,  &kLeafSpine, &kHammingMesh, &kHyperX,    &kTorus,
                                                       &kDragonfly, &kTopoOpt,  &kGraphFile,   &kIdealSwitch, &kMesh, &kNpuGraph};
  return all;
}

const TopologyKind& topology_kind(const std::string& name) {
  for (const TopologyKind* k : topology_kinds())
    if (name == k->name) return *k;
  throw util::ConfigError("topology.kind: unsupported kind '" + name + "'");
}

std::uint32_t cfg_u32(const config::Config& cfg, const char* name) {
  return static_cast<std::uint32_t>(cfg.get_int(name));
}

void wrong_algorithm(const config::Config& cfg, const std::string& kind, const std::string& allowed) {
  throw util::ConfigError("routing.algorithm: '" + cfg.get_string("routing.algorithm") + "' does not route a " + kind +
                          " topology (use " + allowed + ")");
}

void require_table_policy(const config::Config& cfg, const net::Topology& topo, const net::NetworkParams& np) {
  if (net::route_policy(np.routing).table_pick == nullptr) wrong_algorithm(cfg, topo.kind, net::table_policy_names());
}

void use_route_rules(net::NetworkParams& np, Routing& r) {
  using A = net::RoutingAlgorithm;
  np.state_routes = r.routes.get();
  if (r.routes->rules().vcs() > np.vcs)
    throw util::ConfigError("network.vcs: " + r.routes->rules().describe() + " needs " +
                            std::to_string(r.routes->rules().vcs()) + " virtual channels; set network.vcs = " +
                            std::to_string(r.routes->rules().vcs()));
  r.note = r.routes->rules().describe();
  const A a = np.routing;
  if (a == A::UgalLocal || a == A::UgalGlobal || a == A::Adaptive)
    r.note += std::string(", ") + (a == A::Adaptive ? "least-loaded choice" : a == A::UgalLocal ? "UGAL-L" : "UGAL-G");
}

}  // namespace fabricsim::app
