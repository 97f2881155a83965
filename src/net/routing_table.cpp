#include <algorithm>
#include <unordered_map>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/assert.hpp"
#include "net/topology_detail.hpp"

namespace fabricsim::net {

namespace {

struct PortListHash {
  std::size_t operator()(const std::vector<PortIndex>& ports) const {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (PortIndex p : ports) {
      h ^= p;
      h *= 0x100000001b3ull;
    }
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

struct SourceKeyHash {
  std::size_t operator()(const std::vector<std::uint64_t>& key) const {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint64_t v : key) h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

/// Deduplicating pool of port lists.
class ListPool {
 public:
  ListPool(std::vector<PortIndex>& pool, std::vector<std::uint32_t>& offsets)
      : pool_(pool), offsets_(offsets) {}

  std::uint32_t intern(const std::vector<PortIndex>& ports) {
    auto it = index_.find(ports);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(offsets_.size() - 1);
    FABRICSIM_ASSERT(id < std::numeric_limits<std::uint32_t>::max() - 2, "too many port lists");
    pool_.insert(pool_.end(), ports.begin(), ports.end());
    offsets_.push_back(static_cast<std::uint32_t>(pool_.size()));
    index_.emplace(ports, id);
    return id;
  }

 private:
  std::vector<PortIndex>& pool_;
  std::vector<std::uint32_t>& offsets_;
  std::unordered_map<std::vector<PortIndex>, std::uint32_t, PortListHash> index_;
};

}  // namespace

std::vector<std::uint32_t> dmodk_divisors(const Topology& topo) {
  std::uint8_t max_level = 0;
  for (const auto& n : topo.nodes()) max_level = std::max(max_level, n.level);
  std::vector<std::uint32_t> up_ports(max_level + 2u, 1);
  for (const auto& n : topo.nodes()) {
    if (n.kind != NodeKind::Switch) continue;
    std::uint32_t up = 0;
    for (LinkId l : n.out)
      if (topo.nodes()[topo.links()[l].dst].level > n.level) ++up;
    up_ports[n.level] = std::max(up_ports[n.level], std::max(up, 1u));
  }
  std::vector<std::uint32_t> divisor(max_level + 2u, 1);
  for (std::size_t lv = 2; lv < divisor.size(); ++lv) divisor[lv] = divisor[lv - 1] * up_ports[lv - 1];
  return divisor;
}

RoutingTable::RoutingTable(const Topology& topo) {
  const auto& nodes = topo.nodes();
  const auto& links = topo.links();
  const std::size_t endpoints = topo.endpoint_count();
  endpoint_node_.resize(endpoints);
  for (EndpointId e = 0; e < endpoints; ++e) endpoint_node_[e] = topo.endpoint_node(e);

  // Rows: one per forwarding node; non-forwarding nodes share a row when
  // their out-links (neighbour and tie weight, port by port) are identical.
  row_of_node_.assign(nodes.size(), 0);
  std::vector<NodeId> row_node;  // representative node of each row
  for (NodeId n = 0; n < nodes.size(); ++n) {
    if (nodes[n].forwards) {
      row_of_node_[n] = static_cast<std::uint32_t>(row_node.size());
      row_node.push_back(n);
    }
  }
  {
    std::unordered_map<std::vector<std::uint64_t>, std::uint32_t, SourceKeyHash> classes;
    std::vector<std::uint64_t> key;
    for (NodeId n = 0; n < nodes.size(); ++n) {
      if (nodes[n].forwards) continue;
      key.clear();
      for (LinkId l : nodes[n].out) {
        if (!links[l].carries_data) continue;
        key.push_back((std::uint64_t{links[l].dst} << 32) | detail::tie_weight(links[l].cls));
      }
      auto [it, inserted] =
          classes.try_emplace(key, static_cast<std::uint32_t>(row_node.size()));
      if (inserted) row_node.push_back(n);
      row_of_node_[n] = it->second;
    }
  }
  const std::size_t rows = row_node.size();

  const detail::ReverseGraph graph = detail::make_reverse_graph(topo);
  const detail::DestinationGroups groups = detail::group_destinations(topo);
  group_count_ = groups.size();
  group_of_ = groups.group_of;

  ListPool lists(pool_, list_offsets_);
  table_.assign(rows * group_count_, kNoList);
  hops_.assign(rows * group_count_, kNoHops);

  // One BFS per destination group, in parallel (OpenMP) over batches of
  // groups; each group's port lists go to its own flat buffer, and are then
  // interned in group order, so the table is the same for any thread count.
  struct GroupLists {
    std::vector<PortIndex> ports;
    std::vector<std::uint32_t> begin;  // per row; ~0u: no list for that row
    std::vector<std::uint32_t> end;
    std::vector<std::uint16_t> hops;   // per row (kNoHops: unreachable)
  };
  const std::size_t batch = 64;
  std::vector<GroupLists> lists_of(batch);
  for (std::uint32_t first = 0; first < group_count_; first += static_cast<std::uint32_t>(batch)) {
    const auto last = static_cast<std::uint32_t>(
        std::min<std::size_t>(group_count_, static_cast<std::size_t>(first) + batch));
#pragma omp parallel
    {
      detail::GroupBfs bfs(graph);
#pragma omp for schedule(static)
      for (std::int64_t gi = first; gi < static_cast<std::int64_t>(last); ++gi) {
        const auto g = static_cast<std::uint32_t>(gi);
        GroupLists& out = lists_of[g - first];
        out.ports.clear();
        out.begin.assign(rows, ~0u);
        out.end.assign(rows, 0);
        out.hops.assign(rows, kNoHops);
        bfs.run(groups, g);
        for (std::size_t r = 0; r < rows; ++r) {
          const NodeId x = row_node[r];
          const std::uint32_t d = bfs.dist[x];
          if (d == detail::kInf) continue;
          FABRICSIM_ASSERT(d < kNoHops, "path longer than 65534 links");
          out.hops[r] = static_cast<std::uint16_t>(d);
          if (d == 1) continue;  // the last hop (kFinalHop)
          out.begin[r] = static_cast<std::uint32_t>(out.ports.size());
          const Node& node = nodes[x];
          for (std::size_t p = 0; p < node.out.size(); ++p) {
            const Link& l = links[node.out[p]];
            const NodeId y = l.dst;
            if (l.carries_data && nodes[y].forwards && bfs.dist[y] == d - 1 &&
                bfs.sec[y] + detail::tie_weight(l.cls) == bfs.sec[x]) {
              out.ports.push_back(static_cast<PortIndex>(p));
            }
          }
          out.end[r] = static_cast<std::uint32_t>(out.ports.size());
          FABRICSIM_ASSERT(out.end[r] > out.begin[r], "BFS distance without a next hop");
        }
      }
    }
    // Into the tables row by row (a row's cells of the batch are adjacent;
    // group by group, every cell was a cache miss).  Most rows of a group
    // repeat the list of its row before (every leaf outside the group's
    // pod: all its up ports), which is compared, not hashed (perf: these
    // two made most of a 64k tree's table build).
    std::vector<PortIndex> ports;
    std::vector<std::uint32_t> prev_row(last - first, ~0u), prev_id(last - first, kNoList);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::uint32_t g = first; g < last; ++g) {
        const GroupLists& in = lists_of[g - first];
        const std::size_t slot = r * group_count_ + g;
        hops_[slot] = in.hops[r];
        if (in.hops[r] == 1) table_[slot] = kFinalHop;
        if (in.begin[r] == ~0u) continue;
        const auto b = in.ports.begin() + in.begin[r], e = in.ports.begin() + in.end[r];
        std::uint32_t& id = prev_id[g - first];
        const std::uint32_t pr = prev_row[g - first];
        if (id == kNoList || !std::equal(b, e, in.ports.begin() + in.begin[pr], in.ports.begin() + in.end[pr])) {
          ports.assign(b, e);
          id = lists.intern(ports);
        }
        prev_row[g - first] = static_cast<std::uint32_t>(r);
        table_[slot] = id;
      }
    }
  }

  std::vector<PortIndex> ports;
  // Last hop: for each endpoint, every neighbour's ports straight to it
  // (lightest tie weight only, ascending port).
  struct Direct {
    NodeId node;
    std::uint32_t weight;
    PortIndex port;
  };
  std::vector<Direct> direct;
  for (EndpointId e = 0; e < endpoints; ++e) {
    direct.clear();
    for (LinkId l : nodes[endpoint_node_[e]].in) {
      const Link& link = links[l];
      if (!link.carries_data) continue;
      direct.push_back({link.src, detail::tie_weight(link.cls), link.src_port});
    }
    std::sort(direct.begin(), direct.end(), [](const Direct& a, const Direct& b) {
      if (a.node != b.node) return a.node < b.node;
      if (a.weight != b.weight) return a.weight < b.weight;
      return a.port < b.port;
    });
    for (std::size_t i = 0; i < direct.size();) {
      std::size_t j = i;
      ports.clear();
      while (j < direct.size() && direct[j].node == direct[i].node) {
        if (direct[j].weight == direct[i].weight) ports.push_back(direct[j].port);
        ++j;
      }
      final_node_.push_back(direct[i].node);
      final_list_.push_back(lists.intern(ports));
      i = j;
    }
    final_offsets_.push_back(static_cast<std::uint32_t>(final_node_.size()));
  }
}

std::uint32_t RoutingTable::final_list(NodeId at, EndpointId dst) const {
  for (std::uint32_t i = final_offsets_[dst]; i < final_offsets_[dst + 1]; ++i) {
    if (final_node_[i] == at) return final_list_[i];
  }
  FABRICSIM_ASSERT(false, "last-hop entry missing");
  return kNoList;
}

std::span<const PortIndex> RoutingTable::candidates(NodeId at, EndpointId dst) const {
  if (endpoint_node_[dst] == at) return {};
  std::uint32_t id = table_[row_of_node_[at] * group_count_ + group_of_[dst]];
  if (id == kFinalHop) id = final_list(at, dst);
  if (id == kNoList) return {};
  return list(id);
}

std::uint32_t RoutingTable::hops(NodeId at, EndpointId dst) const {
  if (endpoint_node_[dst] == at) return 0;
  const std::uint16_t h = hops_[row_of_node_[at] * group_count_ + group_of_[dst]];
  return h == kNoHops ? kUnreachable : h;
}

std::size_t RoutingTable::estimate_bytes(const Topology& topo) {
  // Rows: the forwarding nodes plus about one class of sources per
  // destination group (the endpoints of a leaf); a table cell per (row,
  // group) with its hop count, and the last-hop entries per endpoint.
  const detail::DestinationGroups groups = detail::group_destinations(topo);
  std::size_t forwarding = 0;
  for (const auto& n : topo.nodes()) forwarding += n.forwards ? 1 : 0;
  const std::size_t g = groups.members.size();
  return (forwarding + g) * g * (sizeof(std::uint32_t) + sizeof(std::uint16_t)) +
         topo.endpoint_count() * (sizeof(NodeId) + 3 * sizeof(std::uint32_t) + sizeof(NodeId)) +
         topo.node_count() * sizeof(std::uint32_t);
}

std::size_t RoutingTable::memory_bytes() const {
  return sizeof(*this) + endpoint_node_.capacity() * sizeof(NodeId) +
         group_of_.capacity() * sizeof(std::uint32_t) +
         row_of_node_.capacity() * sizeof(std::uint32_t) +
         table_.capacity() * sizeof(std::uint32_t) + hops_.capacity() * sizeof(std::uint16_t) +
         pool_.capacity() * sizeof(PortIndex) + list_offsets_.capacity() * sizeof(std::uint32_t) +
         final_offsets_.capacity() * sizeof(std::uint32_t) +
         final_node_.capacity() * sizeof(NodeId) + final_list_.capacity() * sizeof(std::uint32_t);
}

}  // namespace fabricsim::net
