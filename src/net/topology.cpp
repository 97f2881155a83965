#include "fabricsim/net/topology.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "fabricsim/net/paper_cost.hpp"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

const char* to_string(LinkClass cls) {
  switch (cls) {
    case LinkClass::Host: return "host";
    case LinkClass::Fabric: return "fabric";
    case LinkClass::IntraServer: return "intra_server";
    case LinkClass::Board: return "board";
    case LinkClass::Global: return "global";
  }
  return "unknown";
}

const char* to_string(CableType type) {
  switch (type) {
    case CableType::None: return "none";
    case CableType::DAC: return "dac";
    case CableType::AoC: return "aoc";
  }
  return "unknown";
}

CableType default_cable(LinkClass cls) {
  switch (cls) {
    case LinkClass::Host: return CableType::DAC;
    case LinkClass::Fabric:
    case LinkClass::Global: return CableType::AoC;
    case LinkClass::Board:
    case LinkClass::IntraServer: return CableType::None;
  }
  return CableType::None;
}

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::Endpoint: return "endpoint";
    case NodeKind::Switch: return "switch";
  }
  return "unknown";
}

NodeId Topology::add_node(NodeKind node_kind, std::uint8_t level, std::uint32_t radix, std::string name,
                          bool forwards) {
  if (radix > kMaxRadix) {
    throw util::ConfigError("topology: node " + name + " has radix " + std::to_string(radix) +
                            ", more than the supported " + std::to_string(kMaxRadix));
  }
  FABRICSIM_ASSERT(nodes_.size() < kNoNode, "too many nodes");
  const auto id = static_cast<NodeId>(nodes_.size());
  Node n;
  n.kind = node_kind;
  n.level = level;
  n.forwards = forwards;
  n.radix = radix;
  n.name = std::move(name);
  if (node_kind == NodeKind::Endpoint) {
    n.endpoint = static_cast<EndpointId>(endpoint_nodes_.size());
    endpoint_nodes_.push_back(id);
  }
  n.out.reserve(radix);
  n.in.reserve(radix);
  nodes_.push_back(std::move(n));
  return id;
}

namespace {
thread_local SizeCheck* current_size_check = nullptr;
}  // namespace

SizeCheck::SizeCheck(Fn fn) : fn_(std::move(fn)), previous_(current_size_check) { current_size_check = this; }
SizeCheck::~SizeCheck() { current_size_check = previous_; }
void SizeCheck::apply(std::size_t nodes, std::size_t directed_links) {
  if (current_size_check != nullptr && current_size_check->fn_) current_size_check->fn_(nodes, directed_links);
}

void Topology::reserve(std::size_t nodes, std::size_t directed_links) {
  SizeCheck::apply(nodes, directed_links);
  nodes_.reserve(nodes);
  links_.reserve(directed_links);
}

std::pair<LinkId, LinkId> Topology::connect(NodeId a, NodeId b, LinkClass cls, const LinkParams& params,
                                            CableType cable) {
  FABRICSIM_ASSERT(a < nodes_.size() && b < nodes_.size(), "connect: node id out of range");
  FABRICSIM_ASSERT(a != b, "connect: a node cannot be cabled to itself");
  FABRICSIM_ASSERT(links_.size() + 2 < kNoLink, "too many links");
  for (NodeId n : {a, b}) {
    if (nodes_[n].out.size() >= nodes_[n].radix) {
      throw util::ConfigError("topology: node " + nodes_[n].name + " has no free port (radix " +
                              std::to_string(nodes_[n].radix) + ")");
    }
  }
  const auto ab = static_cast<LinkId>(links_.size());
  const LinkId ba = ab + 1;
  const auto pa = static_cast<PortIndex>(nodes_[a].out.size());
  const auto pb = static_cast<PortIndex>(nodes_[b].out.size());
  links_.push_back(Link{a, b, pa, pb, cls, cable, params.bandwidth_gbps, params.latency, ba});
  links_.push_back(Link{b, a, pb, pa, cls, cable, params.bandwidth_gbps, params.latency, ab});
  nodes_[a].out.push_back(ab);
  nodes_[a].in.push_back(ba);
  nodes_[b].out.push_back(ba);
  nodes_[b].in.push_back(ab);
  return {ab, ba};
}

std::pair<LinkId, LinkId> Topology::connect_directed(NodeId a, NodeId b, LinkClass cls, const LinkParams& params,
                                                     CableType cable) {
  const auto ids = connect(a, b, cls, params, cable);
  links_[ids.second].carries_data = false;
  return ids;
}

std::size_t Topology::switch_count() const {
  return static_cast<std::size_t>(std::count_if(
      nodes_.begin(), nodes_.end(), [](const Node& n) { return n.kind == NodeKind::Switch; }));
}

std::size_t Topology::switch_count(std::uint8_t level) const {
  return static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [&](const Node& n) {
    return n.kind == NodeKind::Switch && n.level == level;
  }));
}

std::size_t Topology::count_links(LinkClass cls) const {
  return static_cast<std::size_t>(
      std::count_if(links_.begin(), links_.end(), [&](const Link& l) { return l.cls == cls; }));
}

std::size_t Topology::count_data_links() const {
  return static_cast<std::size_t>(
      std::count_if(links_.begin(), links_.end(), [](const Link& l) { return l.carries_data; }));
}

double Topology::injection_gbps(EndpointId e) const {
  // The scale-out injection: a GPU's NVLink-like link to its server's
  // switch (IntraServer) is not counted when it also has fabric links (a
  // leaf-spine's 100 Gb/s NIC beside a 3.6 Tb/s NVLink is a 100 Gb/s
  // endpoint); an endpoint with nothing else counts it.
  double sum = 0.0, intra = 0.0;
  for (LinkId l : nodes_[endpoint_nodes_[e]].out) {
    if (!links_[l].carries_data) continue;
    (links_[l].cls == LinkClass::IntraServer ? intra : sum) += links_[l].bandwidth_gbps;
  }
  return sum > 0.0 ? sum : intra;
}

double Topology::total_injection_gbps() const {
  double sum = 0.0;
  for (EndpointId e = 0; e < endpoint_nodes_.size(); ++e) sum += injection_gbps(e);
  return sum;
}

std::size_t Topology::count_cables(CableType type) const {
  // Count each cable once, by its first directed half (the one with the smaller id).
  std::size_t n = 0;
  for (LinkId l = 0; l < links_.size(); ++l)
    if (links_[l].cable == type && l < links_[l].reverse) ++n;
  return n;
}

SwitchBoxes switch_boxes(std::uint64_t ports, std::uint32_t box_ports) {
  SwitchBoxes b;
  if (ports <= box_ports) return b;
  const std::uint64_t half = box_ports / 2;
  if (half == 0 || ports > std::uint64_t{box_ports} * half)
    throw util::ConfigError("topology.radix: a switch of " + std::to_string(ports) +
                            " ports is more than a 2-level fat tree of " + std::to_string(box_ports) +
                            "-port boxes can make (" + std::to_string(std::uint64_t{box_ports} * half) +
                            "; cost.switch_ports)");
  const std::uint64_t leaves = (ports + half - 1) / half;
  b.cables = leaves * half;
  b.boxes = leaves + (b.cables + box_ports - 1) / box_ports;
  return b;
}

StructureReport structure_report(const Topology& topo, const CostModel& cost, std::size_t part, std::size_t parts) {
  StructureReport r;
  r.endpoints = topo.endpoint_count();
  r.switches = topo.switch_count();
  r.physical_switches = topo.physical_switches();
  if (!topo.physical_switches_set()) {
    // A switch of more ports than the priced box: the boxes of the 2-level
    // tree that makes it, and its inner cables.
    r.physical_switches = 0;
    for (const Node& n : topo.nodes()) {
      if (n.kind != NodeKind::Switch) continue;
      const SwitchBoxes b = switch_boxes(n.radix, cost.switch_ports);
      r.physical_switches += b.boxes;
      r.box_cables += b.cables;
    }
  }
  for (int c = 0; c < kLinkClassCount; ++c) r.cables_by_class[c] = topo.count_links(static_cast<LinkClass>(c)) / 2;
  for (int t = 0; t < kCableTypeCount; ++t) r.cables_by_type[t] = topo.count_cables(static_cast<CableType>(t));
  r.planes = cost.planes;
  r.cost_usd = cost.planes * (static_cast<double>(r.physical_switches) * cost.switch_usd +
                              static_cast<double>(r.cables_by_type[static_cast<int>(CableType::DAC)]) * cost.dac_usd +
                              static_cast<double>(r.cables_by_type[static_cast<int>(CableType::AoC)] + r.box_cables) *
                                  cost.aoc_usd);
  r.diameter = topo.diameter(part, parts, topo.shards);  // (shards: the longest route inside one)
  try {
    r.paper_cost_usd = paper_cost(topo).total();
  } catch (const util::ConfigError&) {
    r.paper_cost_usd = std::numeric_limits<double>::quiet_NaN();  // (a link speed Table 2 cannot price)
  }
  if (topo.kind == "topoopt") {
    // Servers: nodes with Global links out; a uniform degree and speed give
    // TopoOpt(n, d, B) and its cost-equivalent Fat-tree.
    std::vector<std::uint32_t> out(topo.node_count(), 0);
    std::vector<std::vector<NodeId>> next(topo.node_count());
    double gbps = -1;
    for (const Link& l : topo.links()) {
      if (l.cls != LinkClass::Global || !l.carries_data) continue;
      ++out[l.src];
      gbps = gbps < 0 || gbps == l.bandwidth_gbps ? l.bandwidth_gbps : 0.0;
    }
    std::uint32_t degree = 0;
    for (std::uint32_t o : out) {
      if (o == 0) continue;
      ++r.servers;
      degree = degree == 0 || degree == o ? o : UINT32_MAX;
    }
    // An optical fabric holds every circuit; d of a server's are lit at once
    // and which ones changes during the run: its hop counts are not the
    // fabric's (the run's /reconfig table has the circuits it lit).
    if (topo.ocs_degree > 0) degree = topo.ocs_degree;
    if (topo.ocs_degree == 0)
      for (const Link& l : topo.links())
        if (l.cls == LinkClass::Global && l.carries_data) next[l.src].push_back(l.dst);
    // Hops between every ordered pair of servers: BFS over the Global data links.
    std::vector<std::int32_t> dist(topo.node_count());
    std::vector<NodeId> queue;
    double sum = 0, pairs = 0;
    for (NodeId s = 0; s < topo.node_count(); ++s) {
      if (out[s] == 0) continue;
      std::fill(dist.begin(), dist.end(), -1);
      dist[s] = 0;
      queue.assign(1, s);
      for (std::size_t i = 0; i < queue.size(); ++i)
        for (NodeId v : next[queue[i]])
          if (dist[v] < 0) {
            dist[v] = dist[queue[i]] + 1;
            queue.push_back(v);
          }
      for (NodeId v : queue) {
        if (v == s) continue;
        const auto h = static_cast<std::size_t>(dist[v]);
        if (r.server_hops.size() <= h) r.server_hops.resize(h + 1, 0);
        ++r.server_hops[h];
        sum += dist[v];
        ++pairs;
      }
    }
    r.server_hops_mean = pairs > 0 ? sum / pairs : 0.0;
    if (degree != UINT32_MAX && gbps > 0 && r.servers > 0) {
      r.degree = degree;
      r.interface_gbps = gbps;
      try {
        const CostEquivalent eq = cost_equivalent_fat_tree(r.servers, degree, gbps);
        r.fat_tree_gbps = eq.gbps;
        r.fat_tree_cost_usd = eq.fat_tree.total();
      } catch (const util::ConfigError&) {
      }
    }
  }
  r.bisection_cables = topo.bisection_cables();
  if (topo.bisection_injection_links() > 0)
    r.bisection_relative =
        static_cast<double>(topo.bisection_cables()) / static_cast<double>(topo.bisection_injection_links());
  return r;
}

void Topology::measure_bisection(const std::vector<std::uint8_t>& endpoint_side,
                                 const std::vector<std::uint8_t>& node_side) {
  FABRICSIM_ASSERT(endpoint_side.size() == endpoint_count(), "one side per endpoint");
  FABRICSIM_ASSERT(node_side.empty() || node_side.size() == nodes_.size(), "one side per node");
  constexpr std::uint8_t kUnplaced = 2;
  std::vector<std::uint8_t> side(nodes_.size(), kUnplaced);
  for (NodeId n = 0; n < node_side.size(); ++n)
    if (nodes_[n].kind == NodeKind::Switch && node_side[n] < kUnplaced) side[n] = node_side[n];
  bisection_injection_ = 0;
  for (EndpointId e = 0; e < endpoint_count(); ++e) {
    side[endpoint_nodes_[e]] = endpoint_side[e];
    if (endpoint_side[e] == 0) {
      for (LinkId l : nodes_[endpoint_nodes_[e]].out) bisection_injection_ += links_[l].carries_data ? 1 : 0;
    }
  }
  // Switches: by the majority of their placed neighbours; repeat until all
  // are placed (switches with only switch neighbours follow those).
  for (bool progress = true; progress;) {
    progress = false;
    for (NodeId n = 0; n < nodes_.size(); ++n) {
      if (side[n] != kUnplaced) continue;
      std::size_t votes[2] = {0, 0};
      for (LinkId l : nodes_[n].out)
        if (side[links_[l].dst] != kUnplaced) ++votes[side[links_[l].dst]];
      if (votes[0] + votes[1] == 0) continue;
      side[n] = votes[1] > votes[0] ? 1 : 0;
      progress = true;
    }
  }
  bisection_cables_ = 0;
  for (LinkId l = 0; l < links_.size(); ++l) {
    const Link& k = links_[l];
    if (l < k.reverse && side[k.src] != kUnplaced && side[k.dst] != kUnplaced && side[k.src] != side[k.dst])
      ++bisection_cables_;
  }
}

void detail::require_positive(std::uint64_t value, const char* key) {
  if (value == 0) throw util::ConfigError(std::string(key) + ": must be at least 1");
}

int Topology::diameter(std::size_t part, std::size_t parts, bool finite) const {
  if (known_diameter_ != -2) return endpoint_count() < 2 ? 0 : known_diameter_;
  return measured_diameter(part, parts, finite);
}

int Topology::measured_diameter(std::size_t part, std::size_t parts, bool finite) const {
  if (endpoint_count() < 2) return 0;
  const detail::ReverseGraph graph = detail::make_reverse_graph(*this);
  const detail::DestinationGroups groups = detail::group_destinations(*this);
  std::uint32_t worst = 0;
  bool disconnected = false;
  const auto count = static_cast<std::int64_t>(groups.size());
#pragma omp parallel reduction(max : worst) reduction(|| : disconnected)
  {
    detail::GroupBfs bfs(graph);
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t gi = static_cast<std::int64_t>(part); gi < count; gi += static_cast<std::int64_t>(parts)) {
      const auto g = static_cast<std::uint32_t>(gi);
      bfs.run(groups, g);
      const bool alone = groups.members[g] == 1;
      for (EndpointId e = 0; e < endpoint_count(); ++e) {
        // A group of one: its own endpoint is not a pair.  In larger groups
        // dist is the distance to the other members, a genuine pair.
        if (alone && groups.group_of[e] == g) continue;
        const std::uint32_t d = bfs.dist[endpoint_nodes_[e]];
        if (d == detail::kInf) disconnected = true;
        else worst = std::max(worst, d);
      }
    }
  }
  return disconnected && !finite ? -1 : static_cast<int>(worst);
}

std::string Topology::describe() const {
  if (!description_.empty()) return description_;
  return kind + ", " + std::to_string(nodes_.size()) + " nodes, " +
         std::to_string(endpoint_count()) + " endpoints";
}

namespace detail {

void validate_link_params(const LinkParams& p, const char* key) {
  if (!(p.bandwidth_gbps > 0.0)) {
    throw util::ConfigError(std::string(key) + ".bandwidth_gbps: must be > 0, got " +
                      std::to_string(p.bandwidth_gbps));
  }
  if (p.latency < core::SimTime::zero()) {
    throw util::ConfigError(std::string(key) + ".latency_ns: must be >= 0, got " +
                      std::to_string(p.latency.ns()));
  }
}

void check_builder_params(std::initializer_list<NamedLink> links, std::initializer_list<NamedCount> counts) {
  for (const NamedLink& l : links) validate_link_params(l.params, l.key);
  for (const NamedCount& c : counts) require_positive(c.value, c.key);
}

void check_radix(std::uint64_t radix) {
  if (radix < 2) throw util::ConfigError("topology.radix: must be at least 2, got " + num(radix));
  if (radix > kMaxRadix)
    throw util::ConfigError("topology.radix: " + num(radix) + " exceeds the supported " + num(kMaxRadix));
}

ReverseGraph make_reverse_graph(const Topology& topo) {
  ReverseGraph g;
  const auto& nodes = topo.nodes();
  g.offsets.resize(nodes.size() + 1);
  g.forwards.resize(nodes.size());
  // Links that carry no data (reverse halves of directed links) are no
  // edges of the routing graph.
  std::uint32_t total = 0;
  for (std::size_t y = 0; y < nodes.size(); ++y) {
    g.offsets[y] = total;
    for (LinkId l : nodes[y].in) total += topo.link(l).carries_data ? 1 : 0;
    g.forwards[y] = nodes[y].forwards ? 1 : 0;
  }
  g.offsets[nodes.size()] = total;
  g.pred.reserve(total);
  g.weight.reserve(total);
  for (const Node& n : nodes) {
    for (LinkId l : n.in) {
      const Link& link = topo.link(l);
      if (!link.carries_data) continue;
      g.pred.push_back(link.src);
      g.weight.push_back(tie_weight(link.cls));
    }
  }
  return g;
}

namespace {
struct KeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& key) const {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint64_t v : key) {
      h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return static_cast<std::size_t>(h);
  }
};
}  // namespace

DestinationGroups group_destinations(const Topology& topo) {
  DestinationGroups groups;
  groups.group_of.resize(topo.endpoint_count());
  groups.seed_offsets.push_back(0);
  std::unordered_map<std::vector<std::uint64_t>, std::uint32_t, KeyHash> index;
  std::vector<std::uint64_t> key;
  for (EndpointId e = 0; e < topo.endpoint_count(); ++e) {
    const Node& node = topo.node(topo.endpoint_node(e));
    key.clear();
    for (LinkId l : node.in) {
      const Link& link = topo.link(l);
      if (!link.carries_data) continue;
      key.push_back((std::uint64_t{link.src} << 32) | tie_weight(link.cls));
    }
    // Sorted by (node, weight): keep the first (lightest) entry per node.
    std::sort(key.begin(), key.end());
    key.erase(std::unique(key.begin(), key.end(),
                          [](std::uint64_t a, std::uint64_t b) { return (a >> 32) == (b >> 32); }),
              key.end());
    auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(groups.members.size()));
    if (inserted) {
      groups.members.push_back(0);
      for (std::uint64_t k : key) {
        groups.seed_node.push_back(static_cast<NodeId>(k >> 32));
        groups.seed_weight.push_back(static_cast<std::uint32_t>(k & 0xffffffffu));
      }
      groups.seed_offsets.push_back(static_cast<std::uint32_t>(groups.seed_node.size()));
    }
    groups.group_of[e] = it->second;
    ++groups.members[it->second];
  }
  return groups;
}

GroupBfs::GroupBfs(const ReverseGraph& graph) : graph_(graph) {
  const std::size_t n = graph.forwards.size();
  dist.assign(n, kInf);
  sec.assign(n, kInf);
  current_.reserve(n);
  next_.reserve(n);
}

void GroupBfs::run(const DestinationGroups& groups, std::uint32_t group) {
  std::fill(dist.begin(), dist.end(), kInf);
  std::fill(sec.begin(), sec.end(), kInf);
  current_.clear();
  for (std::uint32_t i = groups.seed_offsets[group]; i < groups.seed_offsets[group + 1]; ++i) {
    const NodeId s = groups.seed_node[i];
    dist[s] = 1;
    sec[s] = groups.seed_weight[i];
    current_.push_back(s);
  }
  std::uint32_t level = 1;
  while (!current_.empty()) {
    next_.clear();
    const std::uint32_t nd = level + 1;
    for (NodeId y : current_) {
      if (!graph_.forwards[y]) continue;  // may be a source, never an intermediate
      const std::uint32_t sy = sec[y];
      for (std::uint32_t i = graph_.offsets[y]; i < graph_.offsets[y + 1]; ++i) {
        const NodeId x = graph_.pred[i];
        const std::uint32_t sx = sy + graph_.weight[i];
        if (dist[x] == kInf) {
          dist[x] = nd;
          sec[x] = sx;
          next_.push_back(x);
        } else if (dist[x] == nd && sx < sec[x]) {
          sec[x] = sx;
        }
      }
    }
    current_.swap(next_);
    level = nd;
  }
}

}  // namespace detail
std::vector<LinkId> parallel_links(const Topology& topo) {
  std::vector<LinkId> next(topo.link_count());
  std::unordered_map<std::uint64_t, std::pair<LinkId, LinkId>> ends;  // (src, dst): first and last so far
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    next[l] = l;
    const Link& k = topo.link(l);
    if (!k.carries_data) continue;
    const std::uint64_t key = std::uint64_t{k.src} << 32 | k.dst;
    const auto [it, fresh] = ends.try_emplace(key, l, l);
    if (fresh) continue;
    next[it->second.second] = l;
    next[l] = it->second.first;
    it->second.second = l;
  }
  return next;
}

std::vector<NodeId> server_of_nodes(const Topology& topo) {
  // Union-find over IntraServer links; the smallest id of a group is its root.
  std::vector<NodeId> up(topo.node_count());
  for (NodeId v = 0; v < up.size(); ++v) up[v] = v;
  auto root = [&](NodeId v) {
    while (up[v] != v) v = up[v] = up[up[v]];
    return v;
  };
  for (const Link& l : topo.links()) {
    if (l.cls != LinkClass::IntraServer) continue;
    const NodeId a = root(l.src), b = root(l.dst);
    if (a != b) up[std::max(a, b)] = std::min(a, b);
  }
  for (NodeId v = 0; v < up.size(); ++v) up[v] = root(v);
  return up;
}

Topology with_shared_nics(const Topology& base, std::uint32_t gpus, const LinkParams& intra) {
  if (gpus <= 1) return base;
  const std::size_t eps = base.endpoint_count();
  Topology t;
  t.kind = base.kind;
  t.reserve(base.node_count() + eps * gpus, base.link_count() + 2 * eps * gpus);
  for (const Node& n : base.nodes()) {
    const bool server = n.kind == NodeKind::Endpoint;
    if (server && std::uint64_t{n.radix} + gpus > kMaxRadix)
      throw util::ConfigError("topology.gpus_per_nic: " + std::to_string(gpus) + " GPUs need more ports than a node has");
    t.add_node(server ? NodeKind::Switch : n.kind, server ? 0 : n.level, server ? n.radix + gpus : n.radix, n.name,
               server ? true : n.forwards);
  }
  const auto& links = base.links();
  for (LinkId l = 0; l < links.size(); l += 2) {
    const Link& k = links[l];
    FABRICSIM_ASSERT(k.reverse == l + 1, "with_shared_nics: links come in pairs");
    const LinkParams p{k.bandwidth_gbps, k.latency};
    if (links[l + 1].carries_data) t.connect(k.src, k.dst, k.cls, p, k.cable);
    else t.connect_directed(k.src, k.dst, k.cls, p, k.cable);
  }
  for (EndpointId e = 0; e < eps; ++e) {
    const NodeId srv = base.endpoint_node(e);
    for (std::uint32_t g = 0; g < gpus; ++g) {
      const NodeId gpu = t.add_node(NodeKind::Endpoint, 0, 1, base.node(srv).name + ".g" + std::to_string(g), false);
      t.connect(gpu, srv, LinkClass::IntraServer, intra, CableType::None);
    }
  }
  t.set_physical_switches(base.physical_switches());
  t.set_description(base.describe() + ", each endpoint a server of " + std::to_string(gpus) +
                    " GPUs behind its NIC");
  return t;
}

}  // namespace fabricsim::net
