#include "graph_file.hpp"
#include "toml_file.hpp"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

using util::ConfigError;
using namespace toml_file;

net::Topology build_graph_file(const std::string& path, const net::LinkParams& host, const net::LinkParams& fabric) {
  const toml::table root = parse_file(path, "topology.file");
  check_keys(root, {"node", "link"}, path, "graph");
  const toml::array* nodes = root["node"].as_array();
  const toml::array* links = root["link"].as_array();
  if (nodes == nullptr || nodes->empty())
    throw ConfigError(fmt::format("{}: graph: no [[node]] tables", path));
  if (links == nullptr || links->empty())
    throw ConfigError(fmt::format("{}: graph: no [[link]] tables", path));

  // First pass over the links: each node's degree (its default radix).
  std::map<std::string, std::uint32_t> degree;
  for (const toml::node& ln : *links) {
    const toml::table& l = as_table(ln, path, "link");
    for (const char* end : {"a", "b"}) ++degree[get_string(l, end, path, "link", true)];
  }

  net::Topology topo;
  topo.kind = "file";
  topo.reserve(nodes->size(), 2 * links->size());
  std::map<std::string, net::NodeId> ids;
  for (const toml::node& nn : *nodes) {
    const toml::table& n = as_table(nn, path, "node");
    check_keys(n, {"name", "kind", "radix", "forwards"}, path, "node");
    const std::string name = get_string(n, "name", path, "node", true);
    const std::string kind = get_string(n, "kind", path, "node", true);
    if (kind != "endpoint" && kind != "switch")
      throw ConfigError(fmt::format("{}: node.kind: '{}' (endpoint or switch)", at(path, n["kind"].node()->source()),
                                    kind));
    if (ids.count(name) != 0)
      throw ConfigError(fmt::format("{}: node.name: '{}' is defined twice", at(path, n.source()), name));
    std::uint32_t radix = degree.count(name) != 0 ? degree[name] : 0;
    if (const toml::node* r = n.get("radix")) {
      const auto v = r->value<std::int64_t>();
      if (!v || *v < 1 || *v > net::kMaxRadix)
        throw ConfigError(fmt::format("{}: node.radix: expected an integer in [1, {}]", at(path, r->source()),
                                      net::kMaxRadix));
      radix = static_cast<std::uint32_t>(*v);
    }
    bool forwards = kind == "switch";
    if (const toml::node* f = n.get("forwards")) {
      const auto v = f->value<bool>();
      if (!v) throw ConfigError(fmt::format("{}: node.forwards: expected a boolean", at(path, f->source())));
      if (kind == "switch" && !*v)
        throw ConfigError(fmt::format("{}: node.forwards: a switch always forwards", at(path, f->source())));
      forwards = *v;
    }
    ids[name] = topo.add_node(kind == "endpoint" ? net::NodeKind::Endpoint : net::NodeKind::Switch,
                              kind == "endpoint" ? 0 : 1, std::max<std::uint32_t>(radix, 1), name, forwards);
  }
  const std::map<std::string, net::LinkClass> classes = {{"host", net::LinkClass::Host},
                                                         {"fabric", net::LinkClass::Fabric},
                                                         {"intra_server", net::LinkClass::IntraServer},
                                                         {"board", net::LinkClass::Board},
                                                         {"global", net::LinkClass::Global}};
  const std::map<std::string, net::CableType> cables = {
      {"none", net::CableType::None}, {"dac", net::CableType::DAC}, {"aoc", net::CableType::AoC}};
  for (const toml::node& ln : *links) {
    const toml::table& l = as_table(ln, path, "link");
    check_keys(l, {"a", "b", "class", "gbps", "latency_ns", "cable", "directed"}, path, "link");
    net::NodeId ends[2];
    int i = 0;
    for (const char* end : {"a", "b"}) {
      const std::string name = get_string(l, end, path, "link", true);
      const auto it = ids.find(name);
      if (it == ids.end())
        throw ConfigError(fmt::format("{}: link.{}: no node named '{}'", at(path, l[end].node()->source()), end, name));
      ends[i++] = it->second;
    }
    if (ends[0] == ends[1])
      throw ConfigError(fmt::format("{}: link: a node cannot be linked to itself", at(path, l.source())));
    const bool has_endpoint = topo.node(ends[0]).kind == net::NodeKind::Endpoint ||
                              topo.node(ends[1]).kind == net::NodeKind::Endpoint;
    const std::string cls_name = get_string(l, "class", path, "link", false, has_endpoint ? "host" : "fabric");
    const auto cls = classes.find(cls_name);
    if (cls == classes.end())
      throw ConfigError(fmt::format("{}: link.class: '{}' (host, fabric, intra_server, board or global)",
                                    at(path, l["class"].node()->source()), cls_name));
    const net::LinkParams& base = has_endpoint ? host : fabric;
    net::LinkParams lp;
    lp.bandwidth_gbps = get_number(l, "gbps", path, "link", base.bandwidth_gbps, 0.0);
    const double lat = get_number(l, "latency_ns", path, "link", static_cast<double>(base.latency.ps()) / 1000.0, -1e-300);
    // The ranges of network.link_gbps (intra_server_gbps) and network.link_latency_ns.
    for (const auto& [key, v, max] : {std::tuple{"gbps", lp.bandwidth_gbps, 1e7}, std::tuple{"latency_ns", lat, 1e9}})
      if (!(v <= max))
        throw ConfigError(fmt::format("{}: link.{}: {} is above {}", at(path, l[key].node()->source()), key, v, max));
    lp.latency = core::SimTime::from_ns_f(lat);
    net::CableType cable = net::default_cable(cls->second);
    if (const toml::node* c = l.get("cable")) {
      const auto v = c->value<std::string>();
      const auto it = v ? cables.find(*v) : cables.end();
      if (it == cables.end())
        throw ConfigError(fmt::format("{}: link.cable: expected \"dac\", \"aoc\" or \"none\"", at(path, c->source())));
      cable = it->second;
    }
    bool directed = false;  // a one-way link a -> b (its b -> a half only returns credits)
    if (const toml::node* d = l.get("directed")) {
      const toml::value<bool>* v = d->as_boolean();
      if (v == nullptr)
        throw ConfigError(fmt::format("{}: link.directed: expected a boolean", at(path, d->source())));
      directed = v->get();
    }
    try {
      if (directed)
        topo.connect_directed(ends[0], ends[1], cls->second, lp, cable);
      else
        topo.connect(ends[0], ends[1], cls->second, lp, cable);
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: link: {}", at(path, l.source()), e.what()));
    }
  }
  if (topo.endpoint_count() < 2) throw ConfigError(fmt::format("{}: graph: needs at least two endpoints", path));
  for (const auto& n : topo.nodes()) {
    if (n.out.empty())
      throw ConfigError(fmt::format("{}: graph: node '{}' has no links", path, n.name));
  }
  if (topo.diameter() < 0)
    throw ConfigError(fmt::format("{}: graph: some endpoints cannot reach each other (paths may only pass through "
                                  "switches and endpoints with forwards = true)",
                                  path));
  topo.set_description(fmt::format("graph {}: {} endpoints, {} switches, {} cables", path, topo.endpoint_count(),
                                   topo.switch_count(), topo.link_count() / 2));
  return topo;
}

}  // namespace fabricsim::app
