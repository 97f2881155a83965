// The packet model on the direct topologies: accelerators that relay
// packets, route rules with per-hop virtual channels, Valiant/UGAL legs.
// Analytic latencies (relay latency = switch latency), conservation and
// losslessness under heavy traffic with tiny buffers, and route lengths:
// every packet of a minimal scheme crosses exactly the links of its route.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::net {
namespace {

using core::SimTime;

struct DirectRun {
  Topology topo;
  std::unique_ptr<StateRoutes> routes;
  std::unique_ptr<StateRoutes> valiant;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<Network> net;
  std::unique_ptr<workload::TrafficWorkload> work;

  void start(NetworkParams np) {
    np.state_routes = routes.get();
    np.valiant_routes = valiant.get();
    sim = std::make_unique<core::Simulator>(topo.node_count());
    net = std::make_unique<Network>(topo, np, *sim);
  }
  void run() {
    sim->run_until(SimTime::max(), 20'000'000);
    ASSERT_TRUE(sim->empty()) << "events left: livelock?";
    net->finish(sim->now());
  }
};

TorusParams ring(std::uint32_t n, double gbps, std::int64_t latency_ps) {
  TorusParams p;
  p.dims = {n};
  p.boards = false;
  p.link.bandwidth_gbps = gbps;
  p.link.latency = SimTime::from_ps(latency_ps);
  return p;
}

TEST(RelayLatency, SinglePacketAroundARingOfAccelerators) {
  // 100 Gb/s, 1000 + 64 bytes on the wire: 85,120 ps of serialization.
  // Each relaying accelerator adds the switch latency, like a switch:
  // end = hops * L + (hops - 1) * W + S (virtual cut-through).
  const std::int64_t L = 7'000, W = 33'000, S = 85'120;
  for (bool adaptive : {false, true}) {
    for (EndpointId dst : {1u, 3u, 4u, 5u, 7u}) {
      DirectRun r;
      r.topo = build_torus(ring(8, 100, L));
      r.routes = std::make_unique<StateRoutes>(r.topo, torus_rules(r.topo, {8}, adaptive));
      NetworkParams np;
      np.vcs = 3;
      np.routing = adaptive ? RoutingAlgorithm::Adaptive : RoutingAlgorithm::Dor;
      np.switch_latency = SimTime::from_ps(W);
      r.start(np);
      const std::int64_t post = 1'000'003;
      const MessageId id = r.net->send(0, dst, 1000, SimTime::from_ps(post));
      r.run();
      const std::int64_t hops = std::min<std::int64_t>(dst, 8 - dst);
      EXPECT_EQ(r.net->messages()[id].end_time.ps(), post + hops * L + (hops - 1) * W + S)
          << "0 -> " << dst << (adaptive ? " adaptive" : " dor");
      EXPECT_EQ(r.net->totals().packet_hops, static_cast<std::uint64_t>(hops));
    }
  }
}

TEST(RelayLatency, HyperXRowSwitchAcceleratorColumnSwitch) {
  // Hx1Mesh 4x4 (2D HyperX): from accelerator (0,0) to (3,2) the route is
  // accelerator -> row switch -> accelerator -> column switch ->
  // accelerator: 4 links, two switch traversals and one relay.
  HammingMeshParams p;
  p.board_a = p.board_b = 1;
  p.x = p.y = 4;
  p.radix = 64;
  p.host = {100.0, SimTime::from_ps(5'000)};
  p.fabric = p.host;
  DirectRun r;
  r.topo = build_hammingmesh(p);
  r.routes = std::make_unique<StateRoutes>(r.topo, hammingmesh_rules(r.topo, 1, 1, 4, 4, true));
  NetworkParams np;
  np.vcs = 3;
  np.routing = RoutingAlgorithm::Dor;
  np.switch_latency = SimTime::from_ps(40'000);
  r.start(np);
  const EndpointId dst = 2 * 4 + 3;  // board (X=3, Y=2)
  const MessageId id = r.net->send(0, dst, 1000, SimTime::zero());
  r.run();
  EXPECT_EQ(r.net->messages()[id].end_time.ps(), 4 * 5'000 + 3 * 40'000 + 85'120);
  EXPECT_EQ(r.net->totals().packet_hops, 4u);
}

// An accelerator with four ports (a 3x3 torus: +x, -x, +y, -y) sending one
// message to each neighbour: every message has a port of its own, so the
// four finish together after one message's serialization on its port: the
// accelerator injects at 4 x the link rate.  With send engines, the NIC
// sends that many messages at once and the rest wait: 1 engine is a
// quarter of the injection, 2 half, 4 all of it.
TEST(MultiPortInjection, FourPortsSendingToFourPeersInjectAtTheirSum) {
  const double gbps = 400;
  const std::int64_t L = 20'000;
  const std::uint64_t bytes = 4u << 20;
  for (std::uint32_t engines : {0u, 1u, 2u, 4u}) {
    DirectRun r;
    TorusParams tp;
    tp.dims = {3, 3};
    tp.boards = false;
    tp.link = {gbps, SimTime::from_ps(L)};
    r.topo = build_torus(tp);
    ASSERT_DOUBLE_EQ(r.topo.injection_gbps(0), 4 * gbps);
    r.routes = std::make_unique<StateRoutes>(r.topo, torus_rules(r.topo, {3, 3}, false));
    NetworkParams np;
    np.vcs = 2;
    np.packet_bytes = 8192;
    np.header_bytes = 64;
    np.buffer_bytes = 1u << 20;
    np.routing = RoutingAlgorithm::Dor;
    np.switch_latency = SimTime::from_ps(40'000);
    np.send_engines = engines;
    r.start(np);
    for (EndpointId peer : {1u, 2u, 3u, 6u}) r.net->send(0, peer, bytes, SimTime::zero());
    r.run();
    SimTime end = SimTime::zero();
    for (const auto& m : r.net->messages()) end = std::max(end, m.end_time);
    const std::uint64_t packets = (bytes + 8127) / 8128;
    const double one_message_ps = static_cast<double>(bytes + packets * 64) * 8.0 / gbps * 1000.0;
    const double at_once = engines == 0 ? 4.0 : engines;  // messages sent at a time
    // Analytic: 4 / at_once rounds of one message's serialization, plus the link latency.
    const double want_ps = 4.0 / at_once * one_message_ps + static_cast<double>(L);
    EXPECT_NEAR(static_cast<double>(end.ps()), want_ps, 0.01 * want_ps) << engines << " engines";
    const double share = static_cast<double>(4 * bytes) * 8.0 / (static_cast<double>(end.ps()) / 1000.0) /
                         r.topo.injection_gbps(0);
    EXPECT_NEAR(share, at_once / 4.0 * static_cast<double>(bytes) / static_cast<double>(bytes + packets * 64),
                0.01)
        << engines << " engines";
    EXPECT_LE(share, 1.0);
  }
}

// Synthetic traffic is paced at the sum of a source's injection links: a
// four-port accelerator posts its k-th message at k times a message's
// serialization at 4 x the link rate.
TEST(MultiPortInjection, TrafficIsPacedAtTheSumOfTheInjectionLinks) {
  TorusParams tp;
  tp.dims = {4, 4};
  tp.boards = false;
  tp.link = {400, SimTime::from_ps(20'000)};
  const Topology topo = build_torus(tp);
  NetworkParams np;
  np.packet_bytes = 8192;
  np.header_bytes = 64;
  workload::TrafficParams p;
  p.pattern = workload::Pattern::Alltoall;
  p.messages = 5;
  p.message_bytes = 100000;
  const auto plan = workload::plan_traffic(p, topo, np);
  const std::uint64_t wire = 100000 + 13 * 64;  // 13 packets of 8,128 payload bytes
  const double gap_ps = static_cast<double>(wire) * 8.0 / 1600.0 * 1000.0;
  ASSERT_EQ(plan.size(), 16u * 5u);
  for (std::size_t k = 0; k < 5; ++k)
    EXPECT_NEAR(static_cast<double>(plan[k].post.ps()), static_cast<double>(k) * gap_ps, 1.0 + static_cast<double>(k)) << k;
}

// TopoOpt, 16 servers, directed rings, k = 3: each message's packets cross
// exactly the links of one of the routes of its pair.
struct KPathRun {
  DirectRun r;
  std::unique_ptr<CoinPaths> paths;
  KPathRun() {
    TopoOptParams tp;
    tp.servers = 16;
    tp.degree = 3;
    r.topo = build_topoopt(tp);
    paths = std::make_unique<CoinPaths>(r.topo, 3);
    r.routes = std::make_unique<StateRoutes>(r.topo, hop_count_rules(r.topo, 8));
    NetworkParams np;
    np.vcs = 8;
    np.packet_bytes = 1024;
    np.buffer_bytes = 2048;
    np.listed_paths = paths.get();
    r.start(np);
  }
  // Total packet hops if every message took its pair's shortest / longest route.
  std::pair<std::uint64_t, std::uint64_t> hop_bounds() const {
    std::uint64_t lo = 0, hi = 0;
    std::vector<LinkId> links;
    for (const auto& m : r.net->messages()) {
      const std::uint64_t pk = (m.bytes + 959) / 960;
      std::size_t shortest = SIZE_MAX, longest = 0;
      for (std::size_t c = 0; c < paths->count(m.src, m.dst); ++c) {
        links.clear();
        paths->path(m.src, m.dst, c, links);
        shortest = std::min(shortest, links.size());
        longest = std::max(longest, links.size());
      }
      lo += pk * shortest;
      hi += pk * longest;
    }
    return {lo, hi};
  }
};

TEST(KShortestPaths, MessagesOfOnePairSpreadOverItsRoutes) {
  KPathRun k;
  for (int i = 0; i < 40; ++i) k.r.net->send(0, 5, 3000, SimTime::from_ps(1000 * i));
  k.r.run();
  // 5 = 1+1+3 in three orders with jumps {1, 3, 7}: routes of equal
  // length, two of them leaving over the +1 ring and one over the +3 ring.
  const auto [lo, hi] = k.hop_bounds();
  EXPECT_EQ(k.r.net->totals().packet_hops, lo);
  EXPECT_EQ(lo, hi);
  EXPECT_EQ(k.paths->count(0, 5), 3u);
  std::size_t first_links = 0;
  for (LinkId l : k.r.topo.node(k.r.topo.endpoint_node(0)).out) first_links += k.r.net->link_stats().flows[l] > 0 ? 1 : 0;
  EXPECT_GT(first_links, 1u);
}

TEST(KShortestPaths, AlltoallIsLosslessOnRoutesOfItsPairs) {
  KPathRun k;
  for (EndpointId s = 0; s < 16; ++s)
    for (EndpointId d = 0; d < 16; ++d)
      if (s != d) k.r.net->send(s, d, 2000, SimTime::zero());
  k.r.run();
  const auto& tot = k.r.net->totals();
  EXPECT_EQ(tot.packets_delivered, tot.packets_injected);
  EXPECT_EQ(tot.max_buffer_overshoot, 0u);
  EXPECT_GE(k.r.net->min_credits_seen(), 0);
  EXPECT_EQ(k.r.net->packets_in_flight(), 0u);
  for (const auto& m : k.r.net->messages()) EXPECT_TRUE(m.all_received());
  const auto [lo, hi] = k.hop_bounds();
  EXPECT_GE(tot.packet_hops, lo);
  EXPECT_LE(tot.packet_hops, hi);
}

enum class Kind { Torus, TorusBoards, Hx2, HyperX, Dragonfly };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Torus: return "torus";
    case Kind::TorusBoards: return "torus_boards";
    case Kind::Hx2: return "hx2";
    case Kind::HyperX: return "hyperx";
    case Kind::Dragonfly: return "dragonfly";
  }
  return "?";
}
const char* alg_name(RoutingAlgorithm a) {
  switch (a) {
    case RoutingAlgorithm::Dor: return "dor";
    case RoutingAlgorithm::Minimal: return "minimal";
    case RoutingAlgorithm::Adaptive: return "adaptive";
    case RoutingAlgorithm::Valiant: return "valiant";
    case RoutingAlgorithm::UgalLocal: return "ugal_local";
    case RoutingAlgorithm::UgalGlobal: return "ugal_global";
    default: return "other";
  }
}

using Param = std::tuple<Kind, RoutingAlgorithm, workload::Pattern>;
class DirectConservation : public ::testing::TestWithParam<Param> {};

TEST_P(DirectConservation, LosslessMinimalAndComplete) {
  const auto [kind, alg, pattern] = GetParam();
  DirectRun r;
  const bool valiant = alg == RoutingAlgorithm::Valiant || alg == RoutingAlgorithm::UgalLocal ||
                       alg == RoutingAlgorithm::UgalGlobal;
  NetworkParams np;
  np.vcs = 3;
  np.routing = alg;
  np.packet_bytes = 1024;
  np.buffer_bytes = 2048;  // two packets: credits run out all the time
  np.seed = 5;
  switch (kind) {
    case Kind::Torus:
    case Kind::TorusBoards: {
      TorusParams p;
      p.dims = {6, 4};
      p.boards = kind == Kind::TorusBoards;
      r.topo = build_torus(p);
      r.routes = std::make_unique<StateRoutes>(r.topo, torus_rules(r.topo, p.dims, alg == RoutingAlgorithm::Adaptive));
      break;
    }
    case Kind::Hx2:
    case Kind::HyperX: {
      HammingMeshParams p;
      p.board_a = p.board_b = kind == Kind::Hx2 ? 2 : 1;
      p.x = 3;
      p.y = kind == Kind::Hx2 ? 2 : 4;
      p.radix = 16;
      r.topo = build_hammingmesh(p);
      r.routes = std::make_unique<StateRoutes>(
          r.topo, hammingmesh_rules(r.topo, p.board_a, p.board_b, p.x, p.y, alg == RoutingAlgorithm::Dor));
      break;
    }
    case Kind::Dragonfly: {
      DragonflyParams p;
      p.a = 4;
      p.p = 2;
      p.h = 2;
      p.groups = 5;
      r.topo = build_dragonfly(p);
      r.routes = std::make_unique<StateRoutes>(r.topo, dragonfly_rules(r.topo, valiant ? 2 : 1));
      if (valiant) {
        std::vector<std::vector<NodeId>> groups(p.groups);
        np.group_of.assign(r.topo.node_count(), 0);
        for (NodeId n = 0; n < r.topo.node_count(); ++n)
          if (r.topo.node(n).kind == NodeKind::Switch) {
            const std::uint32_t g = (n - static_cast<NodeId>(r.topo.endpoint_count())) / p.a;
            np.group_of[n] = g;
            groups[g].push_back(n);
          }
        for (NodeId n = 0; n < r.topo.node_count(); ++n)
          if (r.topo.node(n).kind == NodeKind::Endpoint)
            np.group_of[n] = np.group_of[r.topo.link(r.topo.node(n).out[0]).dst];
        r.valiant = std::make_unique<StateRoutes>(r.topo, dragonfly_rules(r.topo, 1), std::move(groups));
      }
      break;
    }
  }
  r.start(np);
  workload::TrafficParams tp;
  tp.pattern = pattern;
  tp.message_bytes = 5000;  // 5 packets, the last one short
  tp.messages = pattern == workload::Pattern::Alltoall ? 0 : 3;
  tp.seed = 9;
  r.work = std::make_unique<workload::TrafficWorkload>(*r.net, tp);
  r.run();

  const Network& n = *r.net;
  const auto& tot = n.totals();
  std::uint64_t bytes = 0, packets = 0, route_hops = 0;
  for (const auto& m : n.messages()) {
    EXPECT_TRUE(m.all_received());
    EXPECT_NE(m.end_time, SimTime::max());
    bytes += m.bytes;
    const std::uint64_t pk = (m.bytes + np.packet_bytes - np.header_bytes - 1) / (np.packet_bytes - np.header_bytes);
    packets += pk;
    route_hops += pk * r.routes->hops(r.topo.endpoint_node(m.src), r.routes->rules().initial_state(), m.dst);
  }
  EXPECT_TRUE(r.work->done());
  EXPECT_EQ(tot.bytes_delivered, bytes);
  EXPECT_EQ(tot.packets_delivered, packets);
  EXPECT_EQ(tot.packets_injected, packets);
  EXPECT_EQ(n.packets_in_flight(), 0u);
  EXPECT_EQ(tot.max_buffer_overshoot, 0u);
  EXPECT_GE(n.min_credits_seen(), 0);
  EXPECT_LE(n.max_buffer_occupancy(), np.buffer_bytes);
  std::uint64_t tx = 0;
  for (auto c : n.link_stats().tx_packets) tx += c;
  EXPECT_EQ(tx, tot.packet_hops);
  // Minimal schemes: each packet crosses exactly its route's links;
  // Valiant detours are longer, UGAL in between.
  if (!valiant) {
    EXPECT_EQ(tot.packet_hops, route_hops);
  } else {
    EXPECT_GE(tot.packet_hops, route_hops);
  }
  if (alg == RoutingAlgorithm::Valiant && pattern == workload::Pattern::Alltoall) {
    EXPECT_GT(tot.packet_hops, route_hops);
  }
}

std::vector<Param> cases() {
  using A = RoutingAlgorithm;
  using P = workload::Pattern;
  std::vector<Param> out;
  for (P pat : {P::Alltoall, P::Uniform}) {
    for (Kind k : {Kind::Torus, Kind::TorusBoards})
      for (A a : {A::Dor, A::Adaptive}) out.emplace_back(k, a, pat);
    for (Kind k : {Kind::Hx2, Kind::HyperX})
      for (A a : {A::Dor, A::Minimal, A::Adaptive}) out.emplace_back(k, a, pat);
    for (A a : {A::Minimal, A::Adaptive, A::Valiant, A::UgalLocal, A::UgalGlobal}) out.emplace_back(Kind::Dragonfly, a, pat);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, DirectConservation, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Param>& pi) {
                           return std::string(kind_name(std::get<0>(pi.param))) + "_" +
                                  alg_name(std::get<1>(pi.param)) + "_" +
                                  (std::get<2>(pi.param) == workload::Pattern::Alltoall ? "alltoall" : "uniform");
                         });

}  // namespace
}  // namespace fabricsim::net
