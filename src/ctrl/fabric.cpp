// The two-tier view of a topology (fabric.hpp).
#include "fabricsim/ctrl/fabric.hpp"

#include <fmt/format.h>

#include <unordered_map>

#include "fabricsim/util/error.hpp"

namespace fabricsim::ctrl {

using util::ConfigError;

TwoTierFabric::TwoTierFabric(const net::Topology& topo, const std::string& key)
    : ids_(topo, net::EcmpHash::WangJenkins, 0) {
  const auto endpoints = topo.endpoint_count();
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::unordered_map<net::NodeId, std::uint32_t> tor_index, spine_index;
  tor_of_.assign(endpoints, kNone);
  host_up_.assign(endpoints, net::kNoLink);
  host_down_.assign(endpoints, net::kNoLink);
  // ToRs: where an endpoint's NIC cable leads.
  for (net::EndpointId e = 0; e < endpoints; ++e) {
    const net::Node& n = topo.node(topo.endpoint_node(e));
    for (net::LinkId l : n.out) {
      const net::Link& link = topo.link(l);
      if (link.cls != net::LinkClass::Host) continue;
      if (topo.node(link.dst).kind != net::NodeKind::Switch) break;
      auto [it, fresh] = tor_index.try_emplace(link.dst, static_cast<std::uint32_t>(tor_node_.size()));
      if (fresh) tor_node_.push_back(link.dst);
      tor_of_[e] = it->second;
      host_up_[e] = l;
      host_down_[e] = link.reverse;
      break;
    }
    if (tor_of_[e] == kNone)
      throw ConfigError(fmt::format("{}: plans paths on a two-tier Clos (leaf_spine, or a 2-level fat_tree); "
                                    "endpoint {} of this {} topology hangs off no switch by a NIC cable",
                                    key, n.name, topo.kind));
  }
  // Spines: every other switch a ToR's fabric cables reach.
  for (const net::NodeId t : tor_node_)
    for (net::LinkId l : topo.node(t).out) {
      const net::Link& link = topo.link(l);
      if (link.cls == net::LinkClass::Host || topo.node(link.dst).kind != net::NodeKind::Switch) continue;
      if (tor_index.count(link.dst) != 0)
        throw ConfigError(fmt::format("{}: plans paths on a two-tier Clos (leaf_spine, or a 2-level fat_tree); "
                                      "ToRs {} and {} of this {} topology are cabled to each other",
                                      key, topo.node(t).name, topo.node(link.dst).name, topo.kind));
      auto [it, fresh] = spine_index.try_emplace(link.dst, static_cast<std::uint32_t>(spine_node_.size()));
      if (fresh) spine_node_.push_back(link.dst);
    }
  if (spine_node_.empty())
    throw ConfigError(fmt::format("{}: plans paths on a two-tier Clos; this {} topology has no spine switches", key,
                                  topo.kind));
  // A spine must be a spine: nothing but ToRs below it.
  for (const net::NodeId s : spine_node_)
    for (net::LinkId l : topo.node(s).out)
      if (tor_index.count(topo.link(l).dst) == 0)
        throw ConfigError(fmt::format("{}: plans paths on a two-tier Clos; switch {} of this {} topology is cabled "
                                      "to {}, which is no ToR (three tiers or more)",
                                      key, topo.node(s).name, topo.kind, topo.node(topo.link(l).dst).name));
  up_.assign(std::size_t{tors()} * spines(), net::kNoLink);
  down_.assign(std::size_t{tors()} * spines(), net::kNoLink);
  for (std::uint32_t t = 0; t < tors(); ++t)
    for (net::LinkId l : topo.node(tor_node_[t]).out) {
      const auto it = spine_index.find(topo.link(l).dst);
      if (it == spine_index.end()) continue;
      const std::uint32_t s = it->second;
      if (up_[std::size_t{t} * spines() + s] != net::kNoLink)
        throw ConfigError(fmt::format("{}: plans one path per spine; {} and {} are joined by more than one cable "
                                      "(topology.links_per_pair must be 1)",
                                      key, topo.node(tor_node_[t]).name, topo.node(spine_node_[s]).name));
      up_[std::size_t{t} * spines() + s] = l;
      down_[std::size_t{s} * tors() + t] = topo.link(l).reverse;
    }
  for (std::uint32_t t = 0; t < tors(); ++t)
    for (std::uint32_t s = 0; s < spines(); ++s) {
      if (up(t, s) != net::kNoLink) continue;
      throw ConfigError(fmt::format("{}: plans paths on a two-tier Clos where every ToR reaches every spine; {} has "
                                    "no cable to {} in this {} topology",
                                    key, topo.node(tor_node_[t]).name, topo.node(spine_node_[s]).name, topo.kind));
    }
  under_.resize(tors());
  for (net::EndpointId e = 0; e < endpoints; ++e) under_[tor_of_[e]].push_back(e);
}

Commodity TwoTierFabric::commodity(net::EndpointId src, net::EndpointId dst) const {
  Commodity c;
  c.src_tor = tor_of_[src];
  c.dst_tor = tor_of_[dst];
  c.src_nic = ids_.nic_id(src);
  c.dst_nic = ids_.nic_id(dst);
  c.src_tor_id = ids_.tor_id(src);
  return c;
}

Problem TwoTierFabric::problem(std::vector<Commodity> commodities, const net::LinkState* state) const {
  Problem p;
  p.tors = tors();
  p.spines = spines();
  p.commodities = std::move(commodities);
  if (state != nullptr && state->any_down()) {
    p.up_live.assign(up_.size(), 1);
    p.down_live.assign(down_.size(), 1);
    for (std::size_t i = 0; i < up_.size(); ++i) p.up_live[i] = state->up(up_[i]) ? 1 : 0;
    for (std::size_t i = 0; i < down_.size(); ++i) p.down_live[i] = state->up(down_[i]) ? 1 : 0;
  }
  return p;
}

std::vector<net::LinkId> TwoTierFabric::route(net::EndpointId src, net::EndpointId dst, std::int32_t spine) const {
  const std::uint32_t a = tor_of_[src], b = tor_of_[dst];
  if (a == b) return {host_up_[src], host_down_[dst]};
  const auto s = static_cast<std::uint32_t>(spine);
  return {host_up_[src], up(a, s), down(s, b), host_down_[dst]};
}

}  // namespace fabricsim::ctrl
