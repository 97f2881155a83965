#include "memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/updown.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/traffic.hpp"
#include "workload.hpp"
#include "scenario.hpp"

namespace fabricsim::app {
namespace {

// The resident size of `fabricsim run` on a fabric of a few dozen nodes
// (MPICH, HDF5, the C++ runtime and the binary): 33-36 MiB on Debian
// (/usr/bin/time -f %M, inputs/torus_small.toml and fat_tree_1k.toml
// with output.interval_ns = 0).
constexpr std::uint64_t kProcessBytes = std::uint64_t{32} << 20;

// Partitioning (multi-rank runs), per directed link: the node graph
// (neighbour, latency), the fluid estimate's per-link bytes and routes, the
// merged graph and its adjacency lists, METIS's copy; per node the vertex
// arrays.
constexpr std::uint64_t kPartitionPerLink = 128;
constexpr std::uint64_t kPartitionPerNode = 64;

// The trees' route table while it is built (per-thread searches, the port
// lists' index) takes about half its final size again.
constexpr double kTableBuildFactor = 1.5;

// A packet in a switch buffer: its pool slot and free-list entry, both in
// vectors that grow by doubling (see estimate_memory).
constexpr double kBytesPerQueuedPacket = 76;

// Time series: two series of 8-byte cells per link, at most 2^24 cells per
// series in all and 65,536 per link: the network doubles the interval while
// the run's bins would be more, so a long run ends with between half and
// all of them (model.cpp, NetworkImpl::finish); the same in all three
// models (the flow and analytic models keep them in the same form,
// flow_detail::LinkSeries).  At the end a link's series stops at its last
// nonzero bin, without spare room, and the write gathers every row, padded,
// into one array: between 1 and 2 times the cells' bytes at the peak, 1
// where few links carry traffic (measured, MiB above output.interval_ns = 0
// against the cells' MiB: inputs/torus_small.toml at interval_ns 1000 and
// 100, 22 of 12.6 and 189 of 126; a 64-GPU ResNet-50 job on
// inputs/chakra_bench_1024.toml's tree at 1000, 245 of 230 at 1 rank, 327
// of 228 on the busier of 2); 1.5 here.  The length of a run is not known
// before it; the estimate takes twice a lower bound (congestion makes runs
// longer): the time the busiest source of a traffic pattern needs to inject
// its bytes at its link rate, or the planned jobs' end_lower_bound.  A
// pattern on a fabric whose routes are long and shared runs longer still
// (the torus above: 134 us against 2 x 1.3 us), and so does one whose
// sources share a NIC (topology.gpus_per_nic), so their series are
// underestimated.
constexpr double kSeriesPeakPerCellByte = 1.5;

std::uint64_t series_bytes(const config::Config& cfg, std::uint64_t links, std::uint64_t local,
                           double lower_bound_ns) {
  double interval = cfg.get_float("output.interval_ns");
  if (interval <= 0 || links == 0) return 0;
  const double end = cfg.get_float("engine.end_ns");
  const double span = end > 0 ? end : 2.0 * lower_bound_ns;
  const auto max_cells = static_cast<double>(net::series_max_intervals(links));
  double cells = max_cells;
  if (std::isfinite(span)) {
    cells = std::max(std::ceil(span / interval), 1.0);
    while (cells > max_cells) {  // (as the network coarsens)
      interval *= 2;
      cells = std::max(std::ceil(span / interval), 1.0);
    }
  }
  return static_cast<std::uint64_t>(kSeriesPeakPerCellByte * 2.0 * cells * static_cast<double>(local) *
                                    sizeof(std::uint64_t));
}

std::uint64_t topology_bytes(std::uint64_t nodes, std::uint64_t links) {
  // Each link sits in one node's out list and one node's in list.
  return nodes * (sizeof(net::Node) + sizeof(net::NodeId)) + links * (sizeof(net::Link) + 2 * sizeof(net::LinkId));
}

std::uint64_t topology_bytes(const net::Topology& topo) {
  std::uint64_t b = topo.links().capacity() * sizeof(net::Link) + topo.endpoint_count() * sizeof(net::NodeId);
  for (const auto& n : topo.nodes()) {
    b += sizeof(net::Node) + (n.out.capacity() + n.in.capacity()) * sizeof(net::LinkId);
    if (n.name.size() > 15) b += n.name.capacity() + 1;  // beyond the string's inline buffer
  }
  return b;
}

}  // namespace

// Its share, plus the cut links it shares with others (METIS cuts a few
// percent on the large fabrics: 6,000 of the Dragonfly's 130,000 links at 4
// ranks).  A partition weighted by jobs' traffic can leave one rank most of
// the fabric's idle links; the run corrects the series' share once it is
// known (estimate_series).
std::uint64_t local_links_estimate(std::uint64_t links, int ranks) {
  if (ranks <= 1) return links;
  return std::min<std::uint64_t>(links, static_cast<std::uint64_t>(1.1 * static_cast<double>(links) / ranks));
}

std::string MemoryEstimate::breakdown() const {
  auto h = [](std::uint64_t b) { return human_bytes(static_cast<double>(b)); };
  std::string s = sizes_only ? fmt::format("program {}, topology {}, network state {}", h(process), h(description), h(state))
                             : fmt::format("program {}, topology {}, routes {}, network state and series {}, messages {}",
                                           h(process), h(description), h(routes), h(state + series), h(messages));
  if (packets > 0) s += fmt::format(", queued packets up to {}", h(packets));
  if (jobs > 0) s += fmt::format(", planned jobs {}", h(jobs));
  if (partition > 0) s += fmt::format(", partitioning {}", h(partition));
  return s;
}

std::string MemoryEstimate::describe() const {
  return fmt::format("{} per rank{} ({})", human_bytes(static_cast<double>(total())),
                     sizes_only ? " before routes and messages" : "", breakdown());
}

MemoryEstimate estimate_memory(const config::Config& cfg, int ranks, std::uint64_t nodes, std::uint64_t links) {
  MemoryEstimate e;
  e.sizes_only = true;
  e.process = kProcessBytes;
  e.description = topology_bytes(nodes, links);
  const auto vcs = static_cast<std::uint32_t>(cfg.get_int("network.vcs"));
  e.state = net::Network::state_bytes(nodes, links, local_links_estimate(links, ranks), vcs, false,
                                      cfg.get_float("output.interval_ns") > 0);
  if (ranks > 1) e.partition = links * kPartitionPerLink + nodes * kPartitionPerNode;
  return e;
}

MemoryEstimate estimate_memory(const config::Config& cfg, int ranks, const net::Topology& topo,
                               const net::NetworkParams& np) {
  MemoryEstimate e;
  const std::uint64_t nodes = topo.node_count(), links = topo.link_count();
  e.process = kProcessBytes;
  e.description = topology_bytes(topo);
  bool duato = false;
  if (np.state_routes != nullptr) {
    e.routes = np.state_routes->table_bytes() + (np.valiant_routes ? np.valiant_routes->table_bytes() : 0);
    duato = np.state_routes->adaptive();
  } else if (np.up_down) {
    e.routes = net::UpDownRoutes::table_bytes(topo);
  } else if (np.listed_paths == nullptr) {
    e.routes = static_cast<std::uint64_t>(kTableBuildFactor * static_cast<double>(net::RoutingTable::estimate_bytes(topo)));
  }
  e.state = net::Network::state_bytes(nodes, links, local_links_estimate(links, ranks), np.vcs, duato,
                                      np.interval > core::SimTime::zero());
  std::uint64_t count = 0;
  double busiest = 0;  // payload bytes of the busiest source (traffic patterns: they are even)
  if (!runs_jobs(cfg)) {
    const auto tp = traffic_params(cfg);
    count = workload::count_traffic(tp, static_cast<std::uint32_t>(topo.endpoint_count()));
    if (topo.endpoint_count() > 0)
      busiest = std::ceil(static_cast<double>(count) / static_cast<double>(topo.endpoint_count())) *
                static_cast<double>(tp.message_bytes);
    if (tp.pattern == workload::Pattern::Incast)
      busiest = static_cast<double>(count) * static_cast<double>(tp.message_bytes);  // all into one
  }
  if (topo.endpoint_count() > 0 && !topo.node(topo.endpoint_node(0)).out.empty())
    e.run_lower_bound_ns = busiest * 8.0 / std::max(topo.injection_gbps(0), 1e-9);
  estimate_series(e, cfg, links, local_links_estimate(links, ranks));
  // Packets queued in the switches: each takes a 32-byte slot in a pool
  // that grows by doubling, and a free-list entry (measured: 76 bytes a
  // packet, an incast of 4 GiB in 1 MiB messages on inputs/fat_tree_1k.toml,
  // whose 32 MB buffers hold the whole workload).  At most the workload's
  // packets, and at most what the buffers of a rank's links hold.
  if (count > 0 && np.packet_bytes > np.header_bytes) {
    const auto tp = traffic_params(cfg);
    const double payload = np.packet_bytes - np.header_bytes;
    const double workload_packets =
        static_cast<double>(count) * std::ceil(static_cast<double>(tp.message_bytes) / payload);
    const double buffer_packets = static_cast<double>(local_links_estimate(links, ranks)) * np.vcs *
                                  std::ceil(static_cast<double>(np.buffer_bytes) / np.packet_bytes);
    e.packets = static_cast<std::uint64_t>(kBytesPerQueuedPacket * std::min(workload_packets, buffer_packets));
  }
  // Every rank holds every message; the plan lives while they are posted.
  e.messages = count * (net::Network::message_bytes() + sizeof(workload::PlannedMessage));
  if (ranks > 1)
    e.partition = links * kPartitionPerLink + nodes * kPartitionPerNode + count * sizeof(workload::PlannedMessage);
  return e;
}

void estimate_series(MemoryEstimate& est, const config::Config& cfg, std::uint64_t links, std::uint64_t local) {
  est.series = series_bytes(cfg, links, local, est.run_lower_bound_ns);
}

std::uint64_t memory_limit_per_rank(const config::Config& cfg, int ranks_here) {
  double gib = cfg.get_float("engine.memory_limit_gib");
  std::uint64_t bytes = 0;
  if (gib > 0) {
    bytes = static_cast<std::uint64_t>(std::ldexp(gib, 30));
  } else {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return UINT64_MAX;
    bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  }
  return bytes / static_cast<std::uint64_t>(std::max(ranks_here, 1));
}

void check_memory(const MemoryEstimate& est, std::uint64_t limit_per_rank, int ranks_here) {
  if (est.total() <= limit_per_rank) return;
  const std::string limit = human_bytes(static_cast<double>(limit_per_rank) * std::max(ranks_here, 1));
  throw util::ConfigError(fmt::format(
      "engine.memory_limit_gib: this run needs an estimated {}; {} rank{} on this machine may use {} together "
      "(raise engine.memory_limit_gib, use more machines, or shrink the topology or workload)",
      est.describe(), ranks_here, ranks_here == 1 ? "" : "s", limit));
}

}  // namespace fabricsim::app
