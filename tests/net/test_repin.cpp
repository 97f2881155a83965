// Pinned routes and re-pinning in flight (issue 28, item 2), on a leaf-spine
// of 2 leaves and 2 spines with one endpoint per leaf: a 1 MiB message from
// ep0 to ep1 is pinned through spine 0 before it is posted and re-pinned
// through spine 1 at t_r = 40 us, by a global step (the way a controller
// re-pins).  Run on 2 ranks (ctest), each process also running the same
// alone (MPI_COMM_SELF).
//  - packet model: every byte delivered once (bytes and packets injected =
//    delivered, the message complete once); the spine-0 path carries
//    exactly the packets the NIC started before t_r (back to back at the
//    link rate: ceil(t_r / packet time)), the spine-1 path the rest, each
//    link of a path the same bytes; 2 ranks give the same end time and
//    per-link bytes as 1;
//  - flow model: the spine-0 path carries rate x t_r bytes (the flow at
//    the full 100 Gb/s), spine 1 the rest; the message ends when the bytes
//    at the link rate, the last packet and the new path's latency say;
//  - analytic model: a pin before the post is followed; a re-pin after the
//    message started is refused with a message naming it;
//  - a link list that is not a route between the message's endpoints is
//    refused, naming the message.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/flow_network.hpp"
#include "fabricsim/net/flow_paths.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/route_store.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/util/error.hpp"

namespace core = fabricsim::core;
namespace net = fabricsim::net;
namespace par = fabricsim::par;
using core::SimTime;

namespace {

int failures = 0;
int world_rank = 0;
void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAIL: %s\n", world_rank, what.c_str());
    ++failures;
  }
}

constexpr std::uint64_t kBytes = 1 << 20;
const SimTime kRepin = SimTime::from_ns(40'000);

net::Topology fabric() {
  net::LeafSpineParams p;
  p.leaves = 2;
  p.spines = 2;
  p.servers_per_leaf = 1;
  p.gpus_per_server = 1;
  p.radix = 4;
  return net::build_leaf_spine(p);
}

net::NodeId node(const net::Topology& t, const std::string& name) {
  for (net::NodeId n = 0; n < t.node_count(); ++n)
    if (t.nodes()[n].name == name) return n;
  throw std::runtime_error("no node " + name);
}
net::LinkId link(const net::Topology& t, net::NodeId a, net::NodeId b) {
  for (net::LinkId l : t.nodes()[a].out)
    if (t.link(l).dst == b) return l;
  throw std::runtime_error("no link");
}
/// ep0 -> leaf0 -> spine s -> leaf1 -> ep1
std::vector<net::LinkId> via(const net::Topology& t, int s) {
  const net::NodeId e0 = t.endpoint_node(0), e1 = t.endpoint_node(1), l0 = node(t, "leaf0"), l1 = node(t, "leaf1");
  const net::NodeId sp = node(t, "spine" + std::to_string(s));
  return {link(t, e0, l0), link(t, l0, sp), link(t, sp, l1), link(t, l1, e1)};
}

/// The controller's decision at t_r: the message moves to spine 1.
struct Repin final : par::GlobalSteps {
  net::Network& network;
  std::vector<net::LinkId> route;
  Repin(net::Network& n, std::vector<net::LinkId> r) : network(n), route(std::move(r)) {}
  SimTime delay() const override { return SimTime::from_ns(1000); }
  void start(par::RecordExchange& requests) override { requests.request_step(kRepin); }
  std::vector<std::int64_t> contribute(SimTime) override { return {}; }
  void apply(SimTime, const std::vector<std::int64_t>&, const std::vector<std::int64_t>&) override {
    network.pin(0, route);
  }
};

struct Outcome {
  std::int64_t end_ps = -1;
  std::vector<std::int64_t> tx;  // per link, over the ranks
  std::uint64_t bytes_in = 0, bytes_out = 0, packets_in = 0, packets_out = 0, delivered = 0;
};

/// The packet model on `comm`'s ranks (ep0's side on rank 0, ep1's on the last).
Outcome packet_run(const par::Comm& comm) {
  const net::Topology t = fabric();
  core::Simulator sim(t.node_count());
  net::NetworkParams np;
  net::Network network(t, np, sim);
  std::vector<std::int32_t> part(t.node_count(), 0);
  const int last = comm.size() - 1;
  for (const char* n : {"leaf1", "spine1"}) part[node(t, n)] = last;
  part[t.endpoint_node(1)] = last;
  std::vector<std::int32_t> owner(t.link_count());
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;
  SimTime lookahead = SimTime::max();
  for (net::LinkId l = 0; l < t.link_count(); ++l) {
    owner[l] = part[t.link(l).dst];
    if (part[t.link(l).src] != part[t.link(l).dst]) {
      edges.emplace_back(part[t.link(l).src], part[t.link(l).dst]);
      lookahead = std::min(lookahead, t.link(l).latency);
    }
  }
  if (lookahead == SimTime::max()) lookahead = SimTime::from_ns(1000);
  const auto distance = par::rank_distances(comm.size(), edges, comm.rank());
  std::vector<std::int32_t> neighbours;
  for (int r = 0; r < comm.size(); ++r)
    if (distance[static_cast<std::size_t>(r)] == 1) neighbours.push_back(r);
  par::RecordExchange exchange(comm, owner, neighbours);
  if (comm.size() > 1) network.set_partition(part, comm.rank(), &exchange);
  const net::MessageId id = network.create(0, 1, kBytes);
  network.pin(id, via(t, 0));
  network.post(id, SimTime::zero());
  Repin steps(network, via(t, 1));
  par::run_conservative(
      sim, comm, exchange, distance, lookahead, SimTime::max(), [&](const core::RemoteRecord& r) { network.receive(r); },
      {}, &steps);
  Outcome o;
  const net::Message& m = network.messages()[id];
  o.end_ps = comm.allreduce_max(m.all_received() ? m.end_time.ps() : -1);
  const auto& st = network.link_stats();
  o.tx.assign(st.tx_bytes.begin(), st.tx_bytes.end());
  comm.allreduce_max(o.tx);
  const auto& tot = network.totals();
  o.bytes_in = comm.allreduce_sum(tot.bytes_injected);
  o.bytes_out = comm.allreduce_sum(tot.bytes_delivered);
  o.packets_in = comm.allreduce_sum(tot.packets_injected);
  o.packets_out = comm.allreduce_sum(tot.packets_delivered);
  o.delivered = comm.allreduce_sum(tot.messages_delivered);
  return o;
}

void check_packet(const Outcome& o, const std::string& where) {
  const net::Topology t = fabric();
  const net::NetworkParams np;
  const std::uint64_t payload = np.packet_bytes - np.header_bytes;
  const std::uint64_t packets = (kBytes + payload - 1) / payload;
  check(o.end_ps > 0, where + ": the message completed");
  check(o.delivered == 1 && o.bytes_in == kBytes && o.bytes_out == kBytes && o.packets_in == packets &&
            o.packets_out == packets,
        where + ": every byte and packet delivered once");
  const auto a = via(t, 0), b = via(t, 1);
  // Packets are all full but the last; the NIC starts one every packet time.
  const SimTime per = core::serialization_time(np.packet_bytes, t.link(a[0]).bandwidth_gbps);
  const std::uint64_t before = static_cast<std::uint64_t>((kRepin.ps() + per.ps() - 1) / per.ps());
  const std::uint64_t wire = kBytes + packets * np.header_bytes;
  check(o.tx[a[1]] == static_cast<std::int64_t>(before * np.packet_bytes),
        where + ": spine 0 carried the packets started before the re-pin (" + std::to_string(o.tx[a[1]]) + " bytes, " +
            std::to_string(before) + " packets expected)");
  check(o.tx[a[2]] == o.tx[a[1]] && o.tx[b[2]] == o.tx[b[1]], where + ": each link of a path carried the same bytes");
  check(o.tx[a[1]] + o.tx[b[1]] == static_cast<std::int64_t>(wire), where + ": the two spines carried every byte once");
  check(o.tx[a[0]] == static_cast<std::int64_t>(wire) && o.tx[a[3]] == static_cast<std::int64_t>(wire),
        where + ": the NIC links carried the whole message");
}

void flow_and_analytic() {
  const net::Topology t = fabric();
  const auto a = via(t, 0), b = via(t, 1);
  net::RoutingTable table(t);
  net::TablePaths paths(t, table, net::PathSplit::Single);
  {
    core::Simulator sim(t.node_count());
    net::FlowParams fp;
    net::FlowNetwork network(t, fp, paths, sim);
    const net::MessageId id = network.create(0, 1, kBytes);
    network.pin(id, a);
    network.post(id, SimTime::zero());
    sim.run_until(kRepin);
    sim.advance_to(kRepin);  // (as a global step does)
    network.pin(id, b);
    sim.run_until(SimTime::max());
    network.finish(sim.now());
    const auto& st = network.link_stats();
    const net::Message& m = network.messages()[id];
    const std::uint64_t payload = fp.packet_bytes - fp.header_bytes;
    const std::uint64_t packets = (kBytes + payload - 1) / payload;
    const double wire = static_cast<double>(kBytes + packets * fp.header_bytes);
    const double rate = t.link(a[0]).bandwidth_gbps / 8.0;  // bytes per ns
    const double old_bytes = rate * kRepin.ns();
    check(std::abs(static_cast<double>(st.tx_bytes[a[1]]) - old_bytes) <= 1.0,
          "flow: spine 0 carried rate x t_r bytes (" + std::to_string(st.tx_bytes[a[1]]) + ", expected " +
              std::to_string(old_bytes) + ")");
    check(std::abs(static_cast<double>(st.tx_bytes[b[1]]) - (wire - old_bytes)) <= 1.0,
          "flow: spine 1 carried the rest");
    check(m.all_received() && network.totals().messages_delivered == 1 &&
              network.totals().bytes_delivered == kBytes,
          "flow: every byte delivered once");
    // The bytes at the link rate (the last packet included), then the new path's latency.
    SimTime latency = SimTime::zero();
    for (net::LinkId l : b) latency += t.link(l).latency;
    latency += fp.switch_latency * static_cast<std::int64_t>(b.size() - 1);
    const double expected_ns = wire / rate + latency.ns();
    check(std::abs(m.end_time.ns() - expected_ns) < 0.01,
          "flow: ends at " + std::to_string(m.end_time.ns()) + " ns, expected " + std::to_string(expected_ns));
  }
  {
    // Re-pinned 300 times before it starts (a controller re-routing the
    // messages still to come at every change): no version is used up, and
    // the message takes the last route, shorter or longer than the one
    // before (RouteStore::replace in place, or appended).
    core::Simulator sim(t.node_count());
    net::FlowParams fp;
    net::FlowNetwork network(t, fp, paths, sim);
    const net::MessageId id = network.create(0, 1, kBytes);
    network.pin(id, a);
    for (int k = 0; k < 300; ++k) network.pin(id, k % 2 == 0 ? b : a);
    network.post(id, SimTime::zero());
    sim.run_until(SimTime::max());
    const auto& st = network.link_stats();
    check(network.messages()[id].all_received() && st.tx_bytes[a[1]] > 0 && st.tx_bytes[b[1]] == 0,
          "flow: 300 pins before the start, the last one's route taken");
    net::RouteStore store;
    store.pin(7, a);
    store.replace(7, std::vector<net::LinkId>{a[0]});
    check(store.version(7) == 0 && store.route(7).size() == 1 && store.route(7)[0] == a[0],
          "store: a replace keeps version 0 and shortens in place");
    store.replace(7, b);
    check(store.version(7) == 0 && std::vector<net::LinkId>(store.route(7).begin(), store.route(7).end()) == b,
          "store: a longer replace is the whole new route");
  }
  {
    core::Simulator sim(t.node_count());
    net::AnalyticParams ap;
    net::AnalyticNetwork network(t, ap, paths, sim);
    const net::MessageId id = network.create(0, 1, kBytes);
    network.pin(id, b);
    network.post(id, SimTime::zero());
    sim.run_until(kRepin);
    std::string refused;
    try {
      network.pin(id, a);
    } catch (const fabricsim::util::UserError& e) {
      refused = e.what();
    }
    check(refused.find("message 0") != std::string::npos && refused.find("started") != std::string::npos,
          "analytic: a re-pin after the start is refused: '" + refused + "'");
    sim.run_until(SimTime::max());
    const auto& st = network.link_stats();
    check(st.tx_bytes[b[1]] > 0 && st.tx_bytes[a[1]] == 0, "analytic: the pinned route is followed");
  }
  {
    core::Simulator sim(t.node_count());
    net::Network network(t, net::NetworkParams{}, sim);
    const net::MessageId id = network.create(0, 1, kBytes);
    std::string refused;
    try {
      network.pin(id, std::vector<net::LinkId>{a[0], b[2], a[3]});
    } catch (const fabricsim::util::UserError& e) {
      refused = e.what();
    }
    check(refused.find("message 0") != std::string::npos && refused.find("not a route") != std::string::npos,
          "a broken route is refused: '" + refused + "'");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const par::Comm world(MPI_COMM_WORLD);
    const par::Comm self(MPI_COMM_SELF);
    world_rank = world.rank();
    try {
      const Outcome one = packet_run(self);
      check_packet(one, "packet, 1 rank");
      const Outcome many = packet_run(world);
      check_packet(many, "packet, " + std::to_string(world.size()) + " ranks");
      check(one.end_ps == many.end_ps && one.tx == many.tx, "packet: the same end time and link bytes on 1 and " +
                                                                std::to_string(world.size()) + " ranks");
      flow_and_analytic();
    } catch (const std::exception& e) {
      check(false, std::string("exception: ") + e.what());
    }
    const auto total = world.allreduce_sum(static_cast<std::uint64_t>(failures));
    if (world.is_root()) std::printf(total == 0 ? "PASS\n" : "FAILED (%lld)\n", static_cast<long long>(total));
    failures = static_cast<int>(total);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
