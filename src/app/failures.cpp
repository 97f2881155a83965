// [[failures]] rows into a link schedule (failures.hpp).
#include "failures.hpp"
#include "ocs_links.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

namespace {

using util::ConfigError;

std::string first_switch(const net::Topology& topo) {
  for (net::NodeId n = 0; n < topo.node_count(); ++n)
    if (topo.node(n).kind == net::NodeKind::Switch) return topo.node(n).name;
  return topo.node(static_cast<net::NodeId>(topo.node_count() - 1)).name;
}

/// The links an element names: a node (all its links, both ways), a cable
/// "A-B" (both directions of every cable between A and B) or "A->B".
std::vector<net::LinkId> element_links(const net::Topology& topo, const std::unordered_map<std::string, net::NodeId>& by_name,
                                       const std::string& element, const std::string& where) {
  std::vector<net::LinkId> out;
  const auto between = [&](net::NodeId a, net::NodeId b, bool both) {
    for (net::LinkId l : topo.node(a).out)
      if (topo.link(l).dst == b) {
        out.push_back(l);
        if (both) out.push_back(topo.link(l).reverse);
      }
    if (out.empty())
      throw ConfigError(fmt::format("{}: failures.element: '{}': no cable between {} and {}", where, element,
                                    topo.node(a).name, topo.node(b).name));
  };
  if (const auto it = by_name.find(element); it != by_name.end()) {
    for (net::LinkId l : topo.node(it->second).out) out.push_back(l);
    for (net::LinkId l : topo.node(it->second).in) out.push_back(l);
  } else if (const auto arrow = element.find("->"); arrow != std::string::npos) {
    const auto a = by_name.find(element.substr(0, arrow));
    const auto b = by_name.find(element.substr(arrow + 2));
    if (a == by_name.end() || b == by_name.end())
      throw ConfigError(fmt::format("{}: failures.element: '{}': no node named '{}'", where, element,
                                    a == by_name.end() ? element.substr(0, arrow) : element.substr(arrow + 2)));
    between(a->second, b->second, false);
  } else {
    // "A-B": the first '-' at which both sides name nodes (names may hold '-').
    for (std::size_t dash = element.find('-'); dash != std::string::npos; dash = element.find('-', dash + 1)) {
      const auto a = by_name.find(element.substr(0, dash));
      const auto b = by_name.find(element.substr(dash + 1));
      if (a != by_name.end() && b != by_name.end()) {
        between(a->second, b->second, true);
        break;
      }
    }
    if (out.empty())
      throw ConfigError(fmt::format(
          "{}: failures.element: '{}' is no node, cable (\"A-B\") or link (\"A->B\") of this topology; nodes are "
          "named as in the output's /nodes/name (e.g. '{}', '{}')",
          where, element, topo.node(0).name, first_switch(topo)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

net::LinkSchedule failure_schedule(const config::Config& cfg, const net::Topology& topo) {
  const bool analytic = cfg.get_string("network.model") == "analytic";
  net::LinkSchedule schedule;
  // An optical layer's circuits not connected at power-on start down
  // (net::LeafSpineParams::ocs_switches); the scheduler switches them.
  std::vector<net::LinkId> dark;
  if (const std::optional<OcsLinks> ocs = ocs_links(cfg, topo)) dark = ocs->power_on_down();
  for (net::LinkId l : dark) schedule.changes.push_back(net::LinkChange{core::SimTime::zero(), l, false});
  const auto& rows = cfg.rows("failures");
  if (rows.empty()) {
    schedule.sort();
    return schedule;
  }
  std::unordered_map<std::string, net::NodeId> by_name;
  for (net::NodeId n = 0; n < topo.node_count(); ++n) by_name.emplace(topo.node(n).name, n);
  // Per link, the intervals so far (from, until, where given): overlaps are refused.
  struct Down {
    std::int64_t from, until;
    std::string where;
  };
  std::map<net::LinkId, std::vector<Down>> down;
  for (const auto& row : rows) {
    const auto* element = row.find("failures.element");
    if (element == nullptr || std::get<std::string>(element->value).empty())
      throw ConfigError(fmt::format("{}: failures.element: required in every [[failures]] table (a node, \"A-B\" or "
                                    "\"A->B\")",
                                    element ? element->origin : row.origin));
    const auto* at = row.find("failures.at_ns");
    const auto* until = row.find("failures.until_ns");
    const std::int64_t from = at ? std::get<std::int64_t>(at->value) : 0;
    const std::int64_t to = until ? std::get<std::int64_t>(until->value) : 0;
    if (analytic && (from > 0 || to != 0))
      throw ConfigError(fmt::format("{}: failures.{}: the analytic model takes failures from time 0 on only (a "
                                    "message's whole path is fixed as it starts): use network.model = \"flow\" or "
                                    "\"packet\" for a failure at {} ns",
                                    from > 0 ? at->origin : until->origin, from > 0 ? "at_ns" : "until_ns",
                                    from > 0 ? from : to));
    if (to != 0 && to <= from)
      throw ConfigError(fmt::format("{}: failures.until_ns: {} is not after at_ns = {}", until->origin, to, from));
    const std::string& name = std::get<std::string>(element->value);
    const std::vector<net::LinkId> links = element_links(topo, by_name, name, element->origin);
    const std::int64_t end = to == 0 ? INT64_MAX : to;
    const std::string& where = at ? at->origin : element->origin;
    for (net::LinkId l : links) {
      if (std::binary_search(dark.begin(), dark.end(), l))
        throw ConfigError(fmt::format("{}: failures.element: '{}' includes {}->{}, an optical circuit not connected at "
                                      "power-on (topology.ocs_switches): only the scheduler switches those",
                                      element->origin, name, topo.node(topo.link(l).src).name,
                                      topo.node(topo.link(l).dst).name));
      for (const Down& d : down[l])
        if (from < d.until && d.from < end)
          throw ConfigError(fmt::format(
              "{}: failures.at_ns: '{}' takes down {}->{} from {} ns, which the row at {} has down from {} ns{}", where,
              name, topo.node(topo.link(l).src).name, topo.node(topo.link(l).dst).name, from, d.where, d.from,
              d.until == INT64_MAX ? " on" : fmt::format(" to {} ns", d.until)));
      down[l].push_back(Down{from, end, where});
      schedule.changes.push_back(net::LinkChange{core::SimTime::from_ns(from), l, false});
      if (to != 0) schedule.changes.push_back(net::LinkChange{core::SimTime::from_ns(to), l, true});
    }
  }
  schedule.sort();
  return schedule;
}

}  // namespace fabricsim::app
