// Paths for the flow-level and analytic models (flow_paths.hpp).
#include "fabricsim/net/flow_paths.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {

namespace flow_detail {

namespace {
constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
}

void PathWalker::unreachable(EndpointId src, EndpointId dst) const {
  throw util::ConfigError("routing: no path from endpoint " + std::to_string(src) + " to endpoint " +
                          std::to_string(dst));
}

template <class Candidates>
void PathWalker::walk(EndpointId src, EndpointId dst, std::uint64_t key, const Ecmp& ecmp, PathSplit split,
                      Candidates&& candidates, FlowRoute& out) {
  out.clear();
  const NodeId s = topo_.endpoint_node(src);
  const NodeId d = topo_.endpoint_node(dst);
  double bottleneck = std::numeric_limits<double>::infinity();
  if (split == PathSplit::Single) {
    const auto sport = static_cast<std::uint16_t>(key);
    NodeId u = s;
    core::SimTime latency;
    while (u != d) {
      cand_.clear();
      candidates(u, cand_);
      if (cand_.empty() || out.hops > topo_.node_count()) unreachable(src, dst);
      const std::size_t pick = ecmp.pick(u, src, dst, sport, cand_.size());
      const Link& link = topo_.link(cand_[pick]);
      out.links.push_back(FlowLink{cand_[pick], 1.0});
      latency += link.latency;
      bottleneck = std::min(bottleneck, link.bandwidth_gbps);
      ++out.hops;
      u = link.dst;
    }
    out.propagation = latency;
    out.bottleneck_gbps = bottleneck;
    out.single = true;
    return;
  }
  // Even split: breadth-first, layer by layer (every minimal path reaches
  // the destination after the same number of hops), each node passing its
  // share on evenly over its candidates.
  if (slot_.size() < topo_.node_count()) slot_.assign(topo_.node_count(), kNoSlot);
  layer_.assign(1, Reached{s, 1.0, core::SimTime::zero()});
  bool single = true;
  while (!(layer_.size() == 1 && layer_[0].node == d)) {
    if (out.hops > topo_.node_count()) unreachable(src, dst);
    next_.clear();
    for (const Reached& r : layer_) {
      cand_.clear();
      if (r.node != d) candidates(r.node, cand_);
      if (cand_.empty()) unreachable(src, dst);
      const double share = r.weight / static_cast<double>(cand_.size());
      if (cand_.size() > 1) single = false;
      for (LinkId l : cand_) {
        const Link& link = topo_.link(l);
        out.links.push_back(FlowLink{l, share});
        bottleneck = std::min(bottleneck, link.bandwidth_gbps);
        const core::SimTime latency = r.latency + link.latency;
        if (slot_[link.dst] == kNoSlot) {
          slot_[link.dst] = static_cast<std::uint32_t>(next_.size());
          next_.push_back(Reached{link.dst, share, latency});
        } else {
          Reached& n = next_[slot_[link.dst]];
          n.weight += share;
          n.latency = std::max(n.latency, latency);
        }
      }
    }
    for (const Reached& n : next_) slot_[n.node] = kNoSlot;
    std::swap(layer_, next_);
    ++out.hops;
  }
  out.propagation = layer_[0].latency;
  out.bottleneck_gbps = bottleneck;
  out.single = single;
  if (single)
    for (FlowLink& fl : out.links) fl.weight = 1.0;  // exactly
}

}  // namespace flow_detail

ShortestPaths::ShortestPaths(const Topology& topo, PathSplit split, std::uint32_t seed, EcmpHash hash)
    : topo_(topo), split_(split), ecmp_(topo, hash, seed), dist_(topo.endpoint_count()), walker_(topo) {}

const std::vector<std::uint32_t>& ShortestPaths::distances(EndpointId dst) {
  if (live_ != nullptr && live_->version() != dist_version_) {
    // The link state changed: distances over the live links, afresh.
    for (auto& d : dist_) d.clear();
    dist_version_ = live_->version();
  }
  std::vector<std::uint32_t>& dist = dist_[dst];
  if (!dist.empty()) return dist;
  // Backward breadth-first search from the destination over data-carrying
  // links; a node that does not forward is reached (it may be a source) but
  // not passed through.
  dist.assign(topo_.node_count(), kUnreachable);
  const NodeId d = topo_.endpoint_node(dst);
  dist[d] = 0;
  queue_.assign(1, d);
  for (std::size_t i = 0; i < queue_.size(); ++i) {
    const NodeId v = queue_[i];
    if (v != d && !topo_.node(v).forwards) continue;
    for (LinkId l : topo_.node(v).in) {
      const Link& link = topo_.link(l);
      if (!link.carries_data || dist[link.src] != kUnreachable) continue;
      if (live_ != nullptr && !live_->up(l)) continue;
      dist[link.src] = dist[v] + 1;
      queue_.push_back(link.src);
    }
  }
  return dist;
}

std::uint32_t ShortestPaths::distance(NodeId n, EndpointId dst) { return distances(dst)[n]; }

void ShortestPaths::route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) {
  const std::vector<std::uint32_t>& dist = distances(dst);
  const NodeId d = topo_.endpoint_node(dst);
  walker_.walk(
      src, dst, key, ecmp_, split_,
      [&](NodeId u, std::vector<LinkId>& cand) {
        if (dist[u] == kUnreachable) return;
        for (LinkId l : topo_.node(u).out) {
          const Link& link = topo_.link(l);
          if (!link.carries_data || dist[link.dst] + 1 != dist[u]) continue;
          if (live_ != nullptr && !live_->up(l)) continue;
          if (link.dst != d && !topo_.node(link.dst).forwards) continue;
          cand.push_back(l);
        }
      },
      out);
}

TablePaths::TablePaths(const Topology& topo, const RoutingTable& table, const RoutePolicy& policy, PathSplit split,
                       std::uint32_t seed, EcmpHash hash)
    : topo_(topo),
      table_(table),
      policy_(policy),
      split_(policy.table_pick == nullptr ? PathSplit::Even : split),
      ecmp_(topo, hash, seed),
      divisors_(dmodk_divisors(topo)),
      walker_(topo) {}

TablePaths::TablePaths(const Topology& topo, const RoutingTable& table, PathSplit split, std::uint32_t seed,
                       bool dmodk, EcmpHash hash)
    : TablePaths(topo, table, route_policy(dmodk ? RoutingAlgorithm::DmodK : RoutingAlgorithm::Ecmp),
                 dmodk ? PathSplit::Single : split, seed, hash) {}

void TablePaths::route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) {
  const auto sport = static_cast<std::uint16_t>(key);
  walker_.walk(
      src, dst, key, ecmp_, split_,
      [&](NodeId u, std::vector<LinkId>& cand) {
        const Node& node = topo_.node(u);
        std::span<const PortIndex> ports = table_.candidates(u, dst);
        if (filtering()) {
          // Only the candidates that still lead to dst (what the packet model picks among).
          live_ports_.clear();
          for (PortIndex p : ports)
            if (live_->table_ok(table_, node.out[p], dst)) live_ports_.push_back(p);
          ports = live_ports_;
        }
        if (ports.empty()) return;
        if (split_ == PathSplit::Single && ports.size() > 1 && policy_.mechanism == PickMechanism::LeastFlows &&
            load_) {
          // Balanced ECMP: only the candidates with the fewest flows now.
          std::size_t least = std::numeric_limits<std::size_t>::max();
          for (PortIndex p : ports) least = std::min(least, load_(node.out[p]));
          least_ports_.clear();
          for (PortIndex p : ports)
            if (load_(node.out[p]) == least) least_ports_.push_back(p);
          ports = least_ports_;
        }
        if (split_ == PathSplit::Single && ports.size() > 1) {
          // The policy's pick, the packet model's function (route_policy.hpp).
          const PickContext c{topo_, ecmp_, divisors_, u, src, dst, sport};
          cand.push_back(node.out[ports[policy_.table_pick(c, ports)]]);
          return;
        }
        for (PortIndex p : ports) cand.push_back(node.out[p]);
      },
      out);
}

namespace {
constexpr std::uint32_t kNoRouteSlot = flow_detail::kNoSlot;
}

RulesPaths::RulesPaths(const Topology& topo, const StateRoutes& routes, const RoutePolicy& policy, PathSplit split,
                       std::uint32_t seed, EcmpHash hash)
    : topo_(topo),
      routes_(routes),
      policy_(policy),
      split_(split),
      ecmp_(topo, hash, seed),
      divisors_(dmodk_divisors(topo)),
      states_(routes.rules().state_count()) {}

RulesPaths::RulesPaths(const Topology& topo, const StateRoutes& routes, PathSplit split, std::uint32_t seed,
                       RulePick pick, EcmpHash hash)
    : RulesPaths(topo, routes, route_policy(pick == RulePick::First ? RoutingAlgorithm::Dor : RoutingAlgorithm::Ecmp),
                 split, seed, hash) {}

void RulesPaths::unreachable(EndpointId src, EndpointId dst) const {
  throw util::ConfigError("routing: no legal route (" + routes_.rules().describe() + ") from endpoint " +
                          std::to_string(src) + " to endpoint " + std::to_string(dst));
}

namespace {
/// Keeps the moves that still reach dst over live links (live: null when none are down).
void live_only(LiveRoutes* live, const StateRoutes& routes, std::vector<StateRoutes::Option>& opts, EndpointId dst) {
  if (live == nullptr) return;
  std::size_t kept = 0;
  for (const auto& o : opts)
    if (live->rules_ok(routes, o.link, o.state, dst, false)) opts[kept++] = o;
  opts.resize(kept);
}
}  // namespace

void RulesPaths::add_link(LinkId l, double weight, FlowRoute& out) {
  if (link_slot_[l] == kNoRouteSlot) {
    link_slot_[l] = static_cast<std::uint32_t>(out.links.size());
    out.links.push_back(FlowLink{l, weight});
  } else {
    out.links[link_slot_[l]].weight += weight;
  }
}

void RulesPaths::route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) {
  out.clear();
  const NodeId s = topo_.endpoint_node(src);
  const NodeId d = topo_.endpoint_node(dst);
  // A legal route visits each (node, state) at most once.
  const std::size_t max_hops = topo_.node_count() * states_;
  thread_local std::vector<StateRoutes::Option> opts;
  double bottleneck = std::numeric_limits<double>::infinity();
  if (split_ == PathSplit::Single) {
    const auto sport = static_cast<std::uint16_t>(key);
    NodeId u = s;
    std::uint8_t state = routes_.rules().initial_state();
    core::SimTime latency;
    while (u != d) {
      opts.clear();
      routes_.options(u, state, dst, opts);
      live_only(filtering() ? live_ : nullptr, routes_, opts, dst);
      if (opts.empty() || out.hops > max_hops) unreachable(src, dst);
      std::size_t pick = 0;  // the first move, unless the policy picks (route_policy.hpp)
      if (policy_.rules_pick != nullptr && opts.size() > 1) {
        const PickContext c{topo_, ecmp_, divisors_, u, src, dst, sport};
        pick = policy_.rules_pick(c, opts.size());
      }
      const StateRoutes::Option& o = opts[pick];
      const Link& link = topo_.link(o.link);
      out.links.push_back(FlowLink{o.link, 1.0});
      latency += link.latency;
      bottleneck = std::min(bottleneck, link.bandwidth_gbps);
      ++out.hops;
      u = link.dst;
      state = o.state;
    }
    out.propagation = latency;
    out.bottleneck_gbps = bottleneck;
    out.single = true;
    return;
  }
  // Even split, layer by layer over (node, state): every move offered is
  // one hop closer on a shortest legal route, so all paths reach the
  // destination after the same number of hops (perhaps in several states).
  if (slot_.empty()) slot_.assign(topo_.node_count() * states_, kNoRouteSlot);
  if (link_slot_.empty()) link_slot_.assign(topo_.link_count(), kNoRouteSlot);
  layer_.assign(1, Reached{s, routes_.rules().initial_state(), 1.0, core::SimTime::zero()});
  bool single = true;
  const auto arrived = [&] {
    return std::all_of(layer_.begin(), layer_.end(), [&](const Reached& r) { return r.node == d; });
  };
  while (!arrived()) {
    if (out.hops > max_hops) unreachable(src, dst);
    next_.clear();
    LinkId layer_link = kNoLink;
    for (const Reached& r : layer_) {
      opts.clear();
      if (r.node != d) routes_.options(r.node, r.state, dst, opts);
      live_only(filtering() ? live_ : nullptr, routes_, opts, dst);
      if (opts.empty()) unreachable(src, dst);
      // The share goes evenly to the distinct links offered, and each
      // link's part evenly to the moves (states) that take it.
      distinct_.clear();
      for (const auto& o : opts)
        if (std::find(distinct_.begin(), distinct_.end(), o.link) == distinct_.end()) distinct_.push_back(o.link);
      const double per_link = r.weight / static_cast<double>(distinct_.size());
      for (const auto& o : opts) {
        const auto moves = static_cast<double>(
            std::count_if(opts.begin(), opts.end(), [&](const StateRoutes::Option& x) { return x.link == o.link; }));
        const double share = per_link / moves;
        const Link& link = topo_.link(o.link);
        if (layer_link == kNoLink) layer_link = o.link;
        if (o.link != layer_link) single = false;
        add_link(o.link, share, out);
        bottleneck = std::min(bottleneck, link.bandwidth_gbps);
        const core::SimTime latency = r.latency + link.latency;
        const std::size_t k = static_cast<std::size_t>(link.dst) * states_ + o.state;
        if (slot_[k] == kNoRouteSlot) {
          slot_[k] = static_cast<std::uint32_t>(next_.size());
          next_.push_back(Reached{link.dst, o.state, share, latency});
        } else {
          Reached& n = next_[slot_[k]];
          n.weight += share;
          n.latency = std::max(n.latency, latency);
        }
      }
    }
    for (const Reached& n : next_) slot_[static_cast<std::size_t>(n.node) * states_ + n.state] = kNoRouteSlot;
    std::swap(layer_, next_);
    ++out.hops;
  }
  for (const FlowLink& fl : out.links) link_slot_[fl.link] = kNoRouteSlot;
  core::SimTime propagation;
  for (const Reached& r : layer_) propagation = std::max(propagation, r.latency);
  out.propagation = propagation;
  out.bottleneck_gbps = bottleneck;
  out.single = single;
  if (single)
    for (FlowLink& fl : out.links) fl.weight = 1.0;  // exactly
}

ListedRoutes::ListedRoutes(const Topology& topo, const ListedPaths& paths, PathSplit split, std::uint64_t seed)
    : topo_(topo), paths_(paths), split_(split), seed_(seed) {}

void ListedRoutes::route(EndpointId src, EndpointId dst, std::uint64_t key, FlowRoute& out) {
  if (split_ == PathSplit::Even) return even(src, dst, out);
  single(src, dst, util::hash2(seed_, key) % paths_.require_routes(src, dst), out);
}

void ListedRoutes::route_message(EndpointId src, EndpointId dst, std::uint64_t key, std::uint32_t message,
                               FlowRoute& out) {
  if (split_ == PathSplit::Even) return even(src, dst, out);
  (void)key;
  single(src, dst, paths_.choice(src, dst, seed_, message), out);
}

void ListedRoutes::single(EndpointId src, EndpointId dst, std::size_t choice, FlowRoute& out) {
  out.clear();
  path_.clear();
  paths_.path(src, dst, choice, path_);
  if (filtering() && !live_->path_ok(path_.data(), path_.size()))
    // The packet model pins the same route: no other to take.
    throw util::ConfigError("routing: the listed route of endpoint " + std::to_string(src) + " to endpoint " +
                            std::to_string(dst) + " crosses a failed link");
  double bottleneck = std::numeric_limits<double>::infinity();
  for (LinkId l : path_) {
    const Link& link = topo_.link(l);
    out.links.push_back(FlowLink{l, 1.0});
    out.propagation += link.latency;
    bottleneck = std::min(bottleneck, link.bandwidth_gbps);
  }
  out.hops = static_cast<std::uint32_t>(path_.size());
  out.bottleneck_gbps = bottleneck;
  out.single = true;
}

void ListedRoutes::even(EndpointId src, EndpointId dst, FlowRoute& out) {
  std::size_t count = paths_.count(src, dst);
  if (count <= 1) return single(src, dst, paths_.choice(src, dst, seed_, 0), out);
  out.clear();
  if (link_slot_.empty()) link_slot_.assign(topo_.link_count(), kNoRouteSlot);
  if (routes_.size() < count) routes_.resize(count);
  std::size_t longest = 0;
  std::size_t live = 0;  // the routes still up, first
  for (std::size_t c = 0; c < count; ++c) {
    routes_[live].clear();
    paths_.path(src, dst, c, routes_[live]);
    if (filtering() && !live_->path_ok(routes_[live].data(), routes_[live].size())) continue;
    longest = std::max(longest, routes_[live].size());
    ++live;
  }
  if (live == 0)
    throw util::ConfigError("routing: every listed route of endpoint " + std::to_string(src) + " to endpoint " +
                            std::to_string(dst) + " crosses a failed link");
  count = live;
  // Links hop by hop over the routes (breadth-first), each once.
  const double share = 1.0 / static_cast<double>(count);
  double bottleneck = std::numeric_limits<double>::infinity();
  for (std::size_t h = 0; h < longest; ++h)
    for (std::size_t c = 0; c < count; ++c) {
      if (h >= routes_[c].size()) continue;
      const LinkId l = routes_[c][h];
      bottleneck = std::min(bottleneck, topo_.link(l).bandwidth_gbps);
      if (link_slot_[l] == kNoRouteSlot) {
        link_slot_[l] = static_cast<std::uint32_t>(out.links.size());
        out.links.push_back(FlowLink{l, share});
      } else {
        out.links[link_slot_[l]].weight += share;
      }
    }
  for (const FlowLink& fl : out.links) link_slot_[fl.link] = kNoRouteSlot;
  for (std::size_t c = 0; c < count; ++c) {
    core::SimTime latency;
    for (LinkId l : routes_[c]) latency += topo_.link(l).latency;
    out.propagation = std::max(out.propagation, latency);
  }
  out.hops = static_cast<std::uint32_t>(longest);
  out.bottleneck_gbps = bottleneck;
  out.single = false;
}

std::unique_ptr<PathProvider> make_flow_paths(const Topology& topo, const RoutePlan& plan, std::uint64_t seed,
                                              bool analytic, std::unique_ptr<RoutingTable>& table) {
  const RoutePolicy& policy = plan.policy();
  if (policy.leg != ValiantLeg::None)
    throw util::ConfigError(std::string("routing.algorithm: ") + policy.name +
                            " chooses non-minimal paths by the queues of the packet model; network.model = \"" +
                            (analytic ? "analytic" : "flow") +
                            "\" has none (use minimal or adaptive, or the packet model)");
  if (policy.mechanism == PickMechanism::LeastFlows &&
      (analytic || plan.listed_paths != nullptr || plan.state_routes != nullptr || plan.up_down))
    throw util::ConfigError(std::string("routing.algorithm: ") + policy.name +
                            " picks by the flow model's flows per link on a routing table's candidates (fat_tree, "
                            "leaf_spine, file, ideal_switch); " +
                            (analytic ? "the analytic model has no such count: use network.model = \"flow\""
                                      : "this topology routes otherwise"));
  const PathSplit split = !analytic && policy.flow_split ? PathSplit::Even : PathSplit::Single;
  if (plan.listed_paths != nullptr) return std::make_unique<ListedRoutes>(topo, *plan.listed_paths, split, seed);
  if (plan.state_routes != nullptr)
    return std::make_unique<RulesPaths>(topo, *plan.state_routes, policy, split, plan.ecmp_seed, plan.ecmp_hash);
  if (plan.up_down) return std::make_unique<ShortestPaths>(topo, split, plan.ecmp_seed, plan.ecmp_hash);
  table = std::make_unique<RoutingTable>(topo);
  return std::make_unique<TablePaths>(topo, *table, policy, split, plan.ecmp_seed, plan.ecmp_hash);
}

}  // namespace fabricsim::net
