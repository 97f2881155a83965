// Tests of the packet-level network model (src/net/network.cpp).
//
// Every expectation is derived here, independently of the implementation,
// from the semantics written down in docs/model.md:
//   * serialization of b bytes at g Gb/s = ceil(b * 8000 / g) ps,
//   * a packet starting at t on a link of latency L has its head at the far
//     end at t + L and its tail at t + L + ser,
//   * a switch lets a packet compete for its output switch_latency after its
//     head arrived; virtual cut-through delays the start on a faster output
//     so that transmission cannot end before the tail arrived,
//   * a message of m bytes is ceil(m / (P - H)) packets, each with H header
//     bytes on the wire,
//   * ECMP hashes the 5-tuple with a per-switch seed (formula in docs/model.md
//     and reproduced below), D-mod-k picks (dst / D) mod k,
//   * the network is lossless and credit flow controlled.
// The tests are the safety net for performance work on the model, so they
// pin exact times (to the picosecond) wherever the model makes them exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/random.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim {
namespace {

using core::SimTime;
using net::EndpointId;
using net::LinkId;
using net::LinkParams;
using net::MessageId;
using net::Network;
using net::NetworkParams;
using net::NodeId;
using net::NodeKind;
using net::RoutingAlgorithm;
using net::Topology;

// ---------------------------------------------------------------- helpers

/// A link rate as an exact fraction num/den Gb/s, so that expected
/// serialization times are computed with integers: ceil(b * 8000 * den / num).
struct Rate {
  std::int64_t num = 100;
  std::int64_t den = 1;
  double gbps() const { return static_cast<double>(num) / static_cast<double>(den); }
};

std::int64_t ser_ps(std::uint64_t bytes, Rate r) {
  __extension__ using u128 = unsigned __int128;
  const u128 n = static_cast<u128>(bytes) * 8000u * static_cast<u128>(r.den);
  const u128 d = static_cast<u128>(r.num);
  return static_cast<std::int64_t>((n + d - 1) / d);
}

struct Hop {
  Rate rate;
  std::int64_t latency_ps = 0;
};

/// endpoint 0 - switch - ... - switch - endpoint 1, one cable per hop.
/// `hops.size()` links, hops.size() - 1 switches (a single hop joins the two
/// endpoints directly).
Topology build_chain(const std::vector<Hop>& hops) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::Endpoint, 0, 1, "ep0", false);
  const NodeId b = t.add_node(NodeKind::Endpoint, 0, 1, "ep1", false);
  std::vector<NodeId> path{a};
  for (std::size_t i = 0; i + 1 < hops.size(); ++i)
    path.push_back(t.add_node(NodeKind::Switch, 1, 2, "sw" + std::to_string(i), true));
  path.push_back(b);
  for (std::size_t i = 0; i < hops.size(); ++i) {
    const bool host = t.node(path[i]).kind == NodeKind::Endpoint || t.node(path[i + 1]).kind == NodeKind::Endpoint;
    t.connect(path[i], path[i + 1], host ? net::LinkClass::Host : net::LinkClass::Fabric,
              LinkParams{hops[i].rate.gbps(), SimTime::from_ps(hops[i].latency_ps)});
  }
  return t;
}

/// One switch with `endpoints` endpoints (endpoint i on switch port i).
Topology build_star(std::uint32_t endpoints, LinkParams lp) {
  Topology t;
  for (std::uint32_t e = 0; e < endpoints; ++e) t.add_node(NodeKind::Endpoint, 0, 1, "ep" + std::to_string(e), false);
  const NodeId sw = t.add_node(NodeKind::Switch, 1, endpoints, "sw0", true);
  for (std::uint32_t e = 0; e < endpoints; ++e) t.connect(t.endpoint_node(e), sw, net::LinkClass::Host, lp);
  return t;
}

net::FatTreeParams fat_tree(std::uint32_t endpoints, std::uint32_t radix, std::uint32_t down = 0,
                            LinkParams host = {}, LinkParams fabric = {}) {
  net::FatTreeParams p;
  p.endpoints = endpoints;
  p.radix = radix;
  p.down_ports = down;
  p.host = host;
  p.fabric = fabric;
  return p;
}

/// Expected tail arrival of one packet of `wire` bytes crossing `hops` on an
/// idle network, posted at `post`, from the per-hop rules of docs/model.md:
///   head at the switch  = start + L
///   may compete         = head + switch_latency
///   tail at the switch  = start + L + ser_in
///   virtual cut-through: the start on the next link is delayed so that its
///   transmission does not end before the tail has arrived and crossed the
///   same switch pipeline (tail + switch_latency; docs/model.md only says
///   "before the tail has arrived", see SlowerThenFasterOutputVirtualCutThrough).
std::int64_t expected_single_packet_ps(const std::vector<Hop>& hops, std::uint64_t wire, std::int64_t sw_ps,
                                       std::int64_t post_ps) {
  std::int64_t start = post_ps;
  for (std::size_t i = 0; i + 1 < hops.size(); ++i) {
    const std::int64_t s_in = ser_ps(wire, hops[i].rate);
    const std::int64_t s_out = ser_ps(wire, hops[i + 1].rate);
    const std::int64_t eligible = start + hops[i].latency_ps + sw_ps;
    const std::int64_t tail = start + hops[i].latency_ps + s_in + sw_ps;
    start = std::max(eligible, tail - s_out);
  }
  return start + hops.back().latency_ps + ser_ps(wire, hops.back().rate);
}

/// Everything a test wants from one run.
struct Model {
  Topology topo;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<Network> net;
  std::unique_ptr<workload::TrafficWorkload> work;

  Model(Topology t, const NetworkParams& np) : topo(std::move(t)) {
    sim = std::make_unique<core::Simulator>(topo.node_count());
    net = std::make_unique<Network>(topo, np, *sim);
  }
  void traffic(const workload::TrafficParams& tp) { work = std::make_unique<workload::TrafficWorkload>(*net, tp); }
  /// Runs until no event is left.  A livelock (events forever, e.g. an
  /// output waking itself at the same instant) fails the test instead of
  /// hanging it: no run here needs anywhere near kEventCap events.
  static constexpr std::uint64_t kEventCap = 5'000'000;
  void run() {
    sim->run_until(SimTime::max(), kEventCap);
    if (!sim->empty()) {
      ADD_FAILURE() << "still " << sim->pending() << " events pending after " << kEventCap
                    << " events at t = " << sim->now().ps() << " ps: livelock?";
    }
    net->finish(sim->now());
  }
};

std::uint64_t packets_of(std::uint64_t bytes, const NetworkParams& np) {
  const std::uint64_t ppp = np.packet_bytes - np.header_bytes;
  return (bytes + ppp - 1) / ppp;
}

/// Makespan throughput in Gb/s: payload bits / (last end - first post).
double makespan_gbps(const Network& n) {
  std::uint64_t bytes = 0;
  SimTime first = SimTime::max();
  SimTime last = SimTime::zero();
  for (const auto& m : n.messages()) {
    bytes += m.bytes;
    first = std::min(first, m.post_time);
    last = std::max(last, m.end_time);
  }
  return static_cast<double>(bytes) * 8000.0 / static_cast<double>((last - first).ps());
}

double goodput_gbps(const net::Message& m) {
  return static_cast<double>(m.bytes) * 8000.0 / static_cast<double>((m.end_time - m.post_time).ps());
}

/// Checks every conservation law and flow-control invariant of a finished run.
void expect_conserved(const Model& r) {
  const Network& n = *r.net;
  const auto& tot = n.totals();
  const auto& st = n.link_stats();
  const auto& np = n.params();
  const Topology& topo = r.topo;

  std::uint64_t msg_bytes = 0;
  std::uint64_t msg_packets = 0;
  std::size_t unfinished = 0;
  for (const auto& m : n.messages()) {
    msg_bytes += m.bytes;
    msg_packets += packets_of(m.bytes, np);
    if (m.end_time == SimTime::max() || m.end_time <= m.post_time) ++unfinished;
    EXPECT_EQ(m.received_packets, packets_of(m.bytes, np));
    EXPECT_EQ(m.sent_packets, packets_of(m.bytes, np));
  }
  EXPECT_EQ(unfinished, 0u) << "messages without a valid end_time";
  EXPECT_EQ(tot.packets_injected, msg_packets);
  EXPECT_EQ(tot.packets_injected, tot.packets_delivered);
  EXPECT_EQ(tot.bytes_injected, msg_bytes);
  EXPECT_EQ(tot.bytes_delivered, msg_bytes);
  EXPECT_EQ(tot.messages_delivered, n.messages().size());
  EXPECT_EQ(n.packets_in_flight(), 0u);
  EXPECT_EQ(tot.packets_dropped, 0u);
  EXPECT_EQ(tot.max_buffer_overshoot, 0u);
  EXPECT_GE(n.min_credits_seen(), 0);
  EXPECT_LE(n.max_buffer_occupancy(), np.buffer_bytes);
  if (r.work) {
    EXPECT_TRUE(r.work->done());
    EXPECT_EQ(r.work->messages_done(), n.messages().size());
  }

  std::uint64_t hops = 0;
  std::uint64_t from_ep_packets = 0;
  std::uint64_t from_ep_bytes = 0;
  std::uint64_t to_ep_packets = 0;
  std::uint64_t to_ep_bytes = 0;
  std::uint64_t first_packets_from_ep = 0;
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    hops += st.tx_packets[l];
    const auto& link = topo.link(l);
    // busy time is the sum of serialization times: at least tx_bytes at rate.
    EXPECT_GE(st.busy_ps[l], static_cast<std::int64_t>(static_cast<double>(st.tx_bytes[l]) * 8000.0 /
                                                        link.bandwidth_gbps) - 1);
    EXPECT_LE(st.busy_ps[l], static_cast<std::int64_t>(static_cast<double>(st.tx_bytes[l]) * 8000.0 /
                                                        link.bandwidth_gbps) +
                                 static_cast<std::int64_t>(st.tx_packets[l]) + 1);
    EXPECT_GE(st.tx_bytes[l], st.tx_packets[l] * (np.header_bytes + 1));
    EXPECT_LE(st.tx_bytes[l], st.tx_packets[l] * np.packet_bytes);
    if (topo.node(link.src).kind == NodeKind::Endpoint) {
      from_ep_packets += st.tx_packets[l];
      from_ep_bytes += st.tx_bytes[l];
      first_packets_from_ep += st.flows[l];
    }
    if (topo.node(link.dst).kind == NodeKind::Endpoint) {
      to_ep_packets += st.tx_packets[l];
      to_ep_bytes += st.tx_bytes[l];
    }
  }
  EXPECT_EQ(hops, tot.packet_hops);
  EXPECT_EQ(from_ep_packets, tot.packets_injected);
  EXPECT_EQ(to_ep_packets, tot.packets_delivered);
  EXPECT_EQ(from_ep_bytes, msg_bytes + msg_packets * np.header_bytes);
  EXPECT_EQ(to_ep_bytes, msg_bytes + msg_packets * np.header_bytes);
  // Every message's first packet leaves its source NIC exactly once.
  EXPECT_EQ(first_packets_from_ep, n.messages().size());

  // Routing is minimal whatever the algorithm: every packet crosses exactly
  // as many links as the shortest path between its endpoints, so the link
  // counters add up to the path lengths (flows: first packets only).
  const net::RoutingTable rt(topo);
  std::uint64_t expect_hops = 0;
  std::uint64_t expect_flow_hops = 0;
  for (const auto& m : n.messages()) {
    const std::uint64_t h = rt.hops(topo.endpoint_node(m.src), m.dst);
    expect_hops += h * packets_of(m.bytes, np);
    expect_flow_hops += h;
  }
  std::uint64_t flow_hops = 0;
  for (LinkId l = 0; l < topo.link_count(); ++l) flow_hops += st.flows[l];
  EXPECT_EQ(tot.packet_hops, expect_hops) << "some packet took a non-minimal path";
  EXPECT_EQ(flow_hops, expect_flow_hops);
}

// =================================================== 1. single packet latency

struct LatencyCase {
  const char* name;
  std::vector<Hop> hops;
  std::int64_t switch_ps;
  std::uint64_t payload;
  std::int64_t expected_ps;  // written out by hand from the formulas
};

void run_single_packet(const LatencyCase& c) {
  SCOPED_TRACE(c.name);
  NetworkParams np;
  np.switch_latency = SimTime::from_ps(c.switch_ps);
  Model r(build_chain(c.hops), np);
  const std::int64_t post = 1'234'567;  // not at zero on purpose
  const MessageId id = r.net->send(0, 1, c.payload, SimTime::from_ps(post));
  r.run();
  const auto& m = r.net->messages()[id];
  ASSERT_EQ(m.packets, 1u);
  // The hand-written number and the per-hop recurrence must agree.
  EXPECT_EQ(expected_single_packet_ps(c.hops, c.payload + np.header_bytes, c.switch_ps, post), post + c.expected_ps);
  EXPECT_EQ(m.end_time.ps(), post + c.expected_ps);
  expect_conserved(r);
  EXPECT_EQ(r.net->totals().packet_hops, c.hops.size());
}

TEST(SinglePacketLatency, EqualRateChainsOfOneToFourLinks) {
  // wire = 1000 + 64 = 1064 bytes; at 100 Gb/s: 1064 * 80 = 85,120 ps.
  const Rate g100{100};
  const std::int64_t s = 85'120;
  const std::int64_t sw = 77'777;
  const std::vector<LatencyCase> cases = {
      {"1 link (NIC to NIC)", {{g100, 5'000}}, sw, 1000, s + 5'000},
      {"2 links", {{g100, 5'000}, {g100, 11'000}}, sw, 1000, s + 16'000 + 1 * sw},
      {"3 links", {{g100, 5'000}, {g100, 11'000}, {g100, 250'000}}, sw, 1000, s + 266'000 + 2 * sw},
      {"4 links", {{g100, 5'000}, {g100, 11'000}, {g100, 250'000}, {g100, 1}}, sw, 1000, s + 266'001 + 3 * sw},
      {"4 links, zero latencies", {{g100, 0}, {g100, 0}, {g100, 0}, {g100, 0}}, 0, 1000, s},
  };
  for (const auto& c : cases) run_single_packet(c);
}

TEST(SinglePacketLatency, InexactSerializationRoundsUp) {
  // 3 Gb/s: 1 byte payload + 64 header = 65 bytes -> 65 * 8000 / 3 = 173,333.33 -> 173,334 ps.
  const Rate g3{3};
  EXPECT_EQ(ser_ps(65, g3), 173'334);
  run_single_packet({"3 Gb/s, 3 links", {{g3, 1'000}, {g3, 2'000}, {g3, 3'000}}, 500, 1, 173'334 + 6'000 + 2 * 500});
  // 12.5 Gb/s = 25/2: 4096 bytes -> 4096 * 640 = 2,621,440 ps exactly.
  const Rate g12_5{25, 2};
  run_single_packet({"12.5 Gb/s, 2 links", {{g12_5, 1'000}, {g12_5, 2'000}}, 40'000, 4032, 2'621'440 + 3'000 + 40'000});
}

TEST(SinglePacketLatency, FasterThenSlowerOutput) {
  // 400 -> 100 Gb/s.  wire 1064 B: ser 21,280 ps at 400, 85,120 ps at 100.
  // The slower output starts as soon as the packet may compete
  // (head + switch latency), its tail has long arrived by the time the
  // output needs it: end = L1 + sw + L2 + ser(100G).
  run_single_packet({"400->100", {{Rate{400}, 10'000}, {Rate{100}, 20'000}}, 50'000, 1000,
                     10'000 + 50'000 + 20'000 + 85'120});
  // 400 -> 100 -> 100 -> 400 with sw = 0: hop 2 and 3 equal, hop 4 faster
  // than hop 3: start4 = tail3 - ser(400) where tail3 = start3 + L3 + 85,120.
  // start2 = 10,000; start3 = 10,000 + 20,000 = 30,000;
  // start4 = max(30,000 + 30,000, 30,000 + 30,000 + 85,120 - 21,280) = 123,840;
  // end = 123,840 + 40,000 + 21,280 = 185,120 = L1+L2+L3+L4 + ser(100G).
  run_single_packet({"400->100->100->400, sw=0",
                     {{Rate{400}, 10'000}, {Rate{100}, 20'000}, {Rate{100}, 30'000}, {Rate{400}, 40'000}},
                     0, 1000, 185'120});
}

TEST(SinglePacketLatency, SlowerThenFasterOutputVirtualCutThrough) {
  // 100 -> 400 Gb/s without switch latency: the output may not end before
  // the tail arrived: start2 = L1 + 85,120 - 21,280 = 73,840,
  // end = 73,840 + L2 + 21,280 = L1 + L2 + ser(100G) = 115,120.
  run_single_packet({"100->400, sw=0", {{Rate{100}, 10'000}, {Rate{100 * 4}, 20'000}}, 0, 1000, 115'120});
  // With a switch latency the tail, like the head, crosses the switch
  // pipeline before it can leave: end of the transmission on the output
  // >= tail arrival + switch latency, so
  // start2 = L1 + sw + 85,120 - 21,280, end = L1 + sw + L2 + 85,120 = 165,120.
  // (docs/model.md says "cannot end before the tail has arrived"; read
  // literally without the pipeline this would give max(sw, s_in - s_out)
  // instead of sw + s_in - s_out, i.e. 115,120 here.  See the report.)
  run_single_packet({"100->400, sw=50ns", {{Rate{100}, 10'000}, {Rate{400}, 20'000}}, 50'000, 1000, 165'120});
  // slow -> fast -> slow: 100 -> 400 -> 200, sw = 1,000 ps, wire 1064 B:
  // ser: 85,120 / 21,280 / 42,560.
  // start1 = 0; start2 = max(L1 + sw, L1 + 85,120 + sw - 21,280) = 10,000 + 1,000 + 63,840 = 74,840
  // start3 = max(start2 + L2 + sw, start2 + L2 + 21,280 + sw - 42,560) = 74,840 + 20,000 + 1,000 = 95,840
  // end = 95,840 + 30,000 + 42,560 = 168,400.
  run_single_packet({"100->400->200, sw=1ns", {{Rate{100}, 10'000}, {Rate{400}, 20'000}, {Rate{200}, 30'000}},
                     1'000, 1000, 168'400});
}

TEST(SinglePacketLatency, FatTreePathsOfTwoFourAndSixLinks) {
  // Host links 100 Gb/s / 7 ns, fabric links 100 Gb/s / 13 ns; switch 100 ns.
  const LinkParams host{100.0, SimTime::from_ps(7'000)};
  const LinkParams fabric{100.0, SimTime::from_ps(13'000)};
  const std::int64_t sw = 100'000;
  const std::int64_t s = ser_ps(4096, Rate{100});  // a full packet: 327,680 ps
  EXPECT_EQ(s, 327'680);
  struct Case {
    net::FatTreeParams p;
    EndpointId src, dst;
    std::int64_t expected;
  };
  // 2 levels: radix 8, 32 endpoints (4 per leaf).  3 levels: radix 8,
  // 40 endpoints (10 leaves > 8), pods of 4 leaves = 16 endpoints.
  const std::vector<Case> cases = {
      {fat_tree(32, 8, 0, host, fabric), 0, 3, s + 2 * 7'000 + 1 * sw},                  // same leaf
      {fat_tree(32, 8, 0, host, fabric), 0, 31, s + 2 * 7'000 + 2 * 13'000 + 3 * sw},    // via a spine
      {fat_tree(40, 8, 0, host, fabric), 1, 14, s + 2 * 7'000 + 2 * 13'000 + 3 * sw},    // same pod
      {fat_tree(40, 8, 0, host, fabric), 2, 39, s + 2 * 7'000 + 4 * 13'000 + 5 * sw},    // across pods
  };
  for (RoutingAlgorithm alg : {RoutingAlgorithm::Ecmp, RoutingAlgorithm::Adaptive, RoutingAlgorithm::Spray,
                               RoutingAlgorithm::DmodK}) {
    for (const auto& c : cases) {
      SCOPED_TRACE("src " + std::to_string(c.src) + " dst " + std::to_string(c.dst) + " alg " +
                   std::to_string(static_cast<int>(alg)));
      NetworkParams np;
      np.switch_latency = SimTime::from_ps(sw);
      np.routing = alg;
      Model r(net::build_fat_tree(c.p), np);
      const MessageId id = r.net->send(c.src, c.dst, 4032, SimTime::from_ns(3));
      r.run();
      EXPECT_EQ(r.net->messages()[id].end_time.ps(), 3'000 + c.expected);
      expect_conserved(r);
    }
  }
}

// A multi-packet message on an idle equal-rate path: the NIC sends back to
// back, so the last tail arrives after the sum of all serializations plus
// the path latency; per-link busy time and bytes are exact too.
TEST(MultiPacketTiming, BackToBackPacketsOnEqualRatePath) {
  const Rate g{400};
  const std::vector<Hop> hops = {{g, 20'000}, {g, 20'000}, {g, 20'000}};
  NetworkParams np;  // 4096 / 64, 100 ns switch
  const std::uint64_t bytes = 10 * 4032 + 1000;  // 10 full packets and one of 1064 B
  Model r(build_chain(hops), np);
  const MessageId id = r.net->send(0, 1, bytes, SimTime::zero());
  r.run();
  const std::int64_t serial = 10 * ser_ps(4096, g) + ser_ps(1064, g);
  EXPECT_EQ(serial, 10 * 81'920 + 21'280);
  EXPECT_EQ(r.net->messages()[id].end_time.ps(), serial + 60'000 + 2 * 100'000);
  const auto& st = r.net->link_stats();
  // The three forward links are the even link ids (a->b of each cable).
  for (LinkId l = 0; l < r.topo.link_count(); l += 2) {
    EXPECT_EQ(st.tx_packets[l], 11u);
    EXPECT_EQ(st.tx_bytes[l], bytes + 11 * 64);
    EXPECT_EQ(st.busy_ps[l], serial);
    EXPECT_EQ(st.flows[l], 1u);
    EXPECT_EQ(st.tx_packets[l + 1], 0u);
  }
  expect_conserved(r);
}

// A run that stops at an end time (engine.end_ns) counts a packet as
// delivered when its head reaches the destination before that time, and
// leaves the rest in flight; the last hop's accounting at its start
// (Network::set_end_time) must not count packets that arrive later.
TEST(MultiPacketTiming, EndTimeLeavesLaterArrivalsInFlight) {
  const Rate g{400};
  const std::vector<Hop> hops = {{g, 20'000}, {g, 20'000}, {g, 20'000}};
  NetworkParams np;  // 4096 / 64, 100 ns switch
  const std::int64_t s = ser_ps(4096, g);
  // Packet k leaves the NIC at k * s; its head reaches endpoint 1 at
  // k * s + 3 links + 2 switches.
  const std::int64_t first = 3 * 20'000 + 2 * 100'000;
  for (const std::int64_t end : {first + 4 * s, first + 4 * s + 1, first - 1}) {
    SCOPED_TRACE(end);
    Model r(build_chain(hops), np);
    const MessageId id = r.net->send(0, 1, 10 * 4032, SimTime::zero());
    r.net->set_end_time(SimTime::from_ps(end));
    r.sim->run_until(SimTime::from_ps(end));
    const std::uint64_t arrived = end <= first ? 0 : static_cast<std::uint64_t>((end - first - 1) / s + 1);
    const auto& tot = r.net->totals();
    EXPECT_EQ(tot.packets_delivered, arrived);
    EXPECT_EQ(r.net->messages()[id].received_packets, arrived);
    EXPECT_EQ(tot.bytes_delivered, arrived * 4032);
    EXPECT_EQ(r.net->messages()[id].end_time, SimTime::max());
    EXPECT_EQ(r.net->packets_in_flight(), tot.packets_injected - arrived);
    EXPECT_GT(tot.packets_injected, arrived);
  }
}

// Two messages of one NIC are served round-robin, one packet at a time.
TEST(MultiPacketTiming, NicRoundRobinBetweenMessages) {
  const Rate g{100};
  const std::vector<Hop> hops = {{g, 1'000}, {g, 1'000}};
  NetworkParams np;
  np.switch_latency = SimTime::from_ps(10'000);
  Model r(build_chain(hops), np);
  // a: 3 packets; b: 1 packet, posted while a's first packet is on the wire.
  const MessageId a = r.net->send(0, 1, 3 * 4032, SimTime::zero());
  const MessageId b = r.net->send(0, 1, 4032, SimTime::from_ps(1));
  r.run();
  const std::int64_t s = ser_ps(4096, g);
  const std::int64_t path = 2'000 + 10'000;
  // NIC order a b a a: b's packet is 2nd, a's last packet is 4th.
  EXPECT_EQ(r.net->messages()[b].end_time.ps(), 2 * s + path);
  EXPECT_EQ(r.net->messages()[a].end_time.ps(), 4 * s + path);
  expect_conserved(r);
}

// ================================================== 2. single long flow goodput

TEST(Goodput, SingleLongFlowReachesPayloadShareOfLinkRate) {
  struct Case {
    std::uint32_t packet, header;
    double gbps;
  };
  const std::vector<Case> cases = {{4096, 64, 400.0}, {2048, 48, 100.0}, {1500, 58, 200.0}};
  const std::uint64_t bytes = 64ull << 20;  // 64 MiB
  for (const auto& c : cases) {
    SCOPED_TRACE("packet " + std::to_string(c.packet));
    NetworkParams np;
    np.packet_bytes = c.packet;
    np.header_bytes = c.header;
    const LinkParams lp{c.gbps, SimTime::from_ns(100)};
    Model r(net::build_fat_tree(fat_tree(32, 8, 0, lp, lp)), np);  // ep0 -> ep31: 4 links, 3 switches
    const MessageId id = r.net->send(0, 31, bytes, SimTime::from_ns(500));
    r.run();
    const auto& m = r.net->messages()[id];
    const double expected = c.gbps * (c.packet - c.header) / c.packet;
    const double got = goodput_gbps(m);
    std::printf("[goodput] P=%u H=%u link=%.0f Gb/s: goodput %.4f Gb/s, bound %.4f Gb/s (%.4f%%)\n", c.packet,
                c.header, c.gbps, got, expected, 100.0 * got / expected);
    EXPECT_LE(got, expected * 1.000001);
    EXPECT_NEAR(got, expected, expected * 0.005);
    // Exact: nothing competes, so the NIC sends every packet back to back.
    const std::uint64_t ppp = c.packet - c.header;
    const std::uint64_t full = bytes / ppp;
    const std::uint64_t rest = bytes % ppp;
    const Rate rate{static_cast<std::int64_t>(c.gbps)};
    const std::int64_t serial =
        static_cast<std::int64_t>(full) * ser_ps(c.packet, rate) + (rest ? ser_ps(rest + c.header, rate) : 0);
    EXPECT_EQ((m.end_time - m.post_time).ps(), serial + 4 * 100'000 + 3 * 100'000);
    expect_conserved(r);
  }
}

// ============================================================ 3. N-to-1 incast

TEST(Incast, EachSenderGetsItsShareOfTheBottleneck) {
  const double gbps = 100.0;
  NetworkParams np;  // 4096 / 64
  const double goodput = gbps * 4032.0 / 4096.0;
  for (std::uint32_t n : {2u, 4u, 7u, 16u}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    Model r(build_star(n + 1, LinkParams{gbps, SimTime::from_ns(50)}), np);
    // Every sender: 4 messages of 256 KiB (1 MiB in all), posted together.
    for (EndpointId s = 1; s <= n; ++s)
      for (int k = 0; k < 4; ++k) r.net->send(s, 0, 256 * 1024, SimTime::zero());
    r.run();
    expect_conserved(r);
    // Per sender: its bytes over the time from its first post to its last end.
    std::map<EndpointId, std::pair<std::uint64_t, SimTime>> per;
    for (const auto& m : r.net->messages()) {
      per[m.src].first += m.bytes;
      per[m.src].second = std::max(per[m.src].second, m.end_time);
    }
    double min_share = 1e30, max_share = 0;
    for (const auto& [src, v] : per) {
      const double thr = static_cast<double>(v.first) * 8000.0 / static_cast<double>(v.second.ps());
      min_share = std::min(min_share, thr);
      max_share = std::max(max_share, thr);
      EXPECT_NEAR(thr, goodput / n, goodput / n * 0.02) << "sender " << src;
    }
    const double agg = makespan_gbps(*r.net);
    std::printf("[incast] N=%2u: per-sender %.4f..%.4f Gb/s (fair share %.4f), aggregate %.4f Gb/s (goodput %.4f)\n",
                n, min_share, max_share, goodput / n, agg, goodput);
    EXPECT_NEAR(agg, goodput, goodput * 0.02);
    EXPECT_LE(agg, goodput * 1.000001);
    // The bottleneck is the switch -> endpoint 0 link: packets queue there.
    const auto& st = r.net->link_stats();
    const LinkId bottleneck = r.topo.node(r.topo.endpoint_node(0)).in[0];
    EXPECT_EQ(st.tx_packets[bottleneck], r.net->totals().packets_delivered);
    EXPECT_GT(st.max_queue_bytes[bottleneck], 0u);
  }
}

// Per-message flows of one incast, as the traffic workload posts them.
TEST(Incast, WorkloadIncastSharesFairly) {
  NetworkParams np;
  np.routing = RoutingAlgorithm::Adaptive;
  Model r(build_star(8, LinkParams{200.0, SimTime::from_ns(20)}), np);
  workload::TrafficParams tp;
  tp.pattern = workload::Pattern::Incast;
  tp.message_bytes = 512 * 1024;
  tp.messages = 2;
  tp.incast_target = 3;
  tp.incast_sources = 4;  // endpoints 0, 1, 2, 4
  r.traffic(tp);
  r.run();
  expect_conserved(r);
  std::set<EndpointId> senders;
  for (const auto& m : r.net->messages()) {
    EXPECT_EQ(m.dst, 3u);
    senders.insert(m.src);
  }
  EXPECT_EQ(senders, (std::set<EndpointId>{0, 1, 2, 4}));
  const double goodput = 200.0 * 4032.0 / 4096.0;
  EXPECT_NEAR(makespan_gbps(*r.net), goodput, goodput * 0.02);
}

// A flow that adaptive routing spreads over the spines reaches its last
// switch over several inputs, each holding a packet or two that it sends at
// its grant and refills; a local flow into the same endpoint holds one
// backlogged input.  The output's round-robin must still come round to the
// local input.  Until a queue that becomes non-empty joined the order just
// before the pointer (switch.cpp, route_in), it was appended after the
// spreading flow's other inputs, ahead of the backlogged one below the
// pointer, which then waited until the remote flow had ended (its 1 MiB
// delivered after the 8 MiB: the tensor-parallel messages of GPT-3 behind
// the data-parallel ones on fat_tree_1k).  Per-input round-robin gives the
// local input 1 / (inputs + 1) of the link, not half as max-min per flow.
TEST(Incast, SpreadFlowDoesNotStarveALocalInput) {
  NetworkParams np;  // inputs/fat_tree_1k.toml's network
  np.routing = RoutingAlgorithm::Adaptive;
  np.packet_bytes = 8192;
  np.switch_latency = SimTime::from_ns(80);
  np.buffer_bytes = 32u << 20;
  const LinkParams lp{1600.0, SimTime::from_ns(20)};
  Model r(net::build_fat_tree(fat_tree(32, 8, 0, lp, lp)), np);  // leaves of 4 endpoints, 4 spines
  const MessageId remote = r.net->send(0, 5, 64u << 20, SimTime::zero());  // leaf 0 -> leaf 1, over the spines
  const MessageId local = r.net->send(4, 5, 4u << 20, SimTime::zero());    // leaf 1 -> leaf 1
  r.run();
  expect_conserved(r);
  // The inputs of endpoint 5's leaf that carried the remote flow.
  const auto& st = r.net->link_stats();
  const net::NodeId leaf = r.topo.link(r.topo.node(r.topo.endpoint_node(5)).in[0]).src;
  std::uint32_t inputs = 0;
  for (LinkId l : r.topo.node(leaf).in)
    if (r.topo.node(r.topo.link(l).src).kind == NodeKind::Switch && st.tx_bytes[l] > 0) ++inputs;
  ASSERT_GE(inputs, 2u);  // spread, or there is nothing to test
  const auto& ms = r.net->messages();
  const std::uint64_t local_wire = (4u << 20) + packets_of(4u << 20, np) * np.header_bytes;
  const std::int64_t solo = ser_ps(local_wire, Rate{1600});  // the local message alone at line rate
  const std::int64_t took = (ms[local].end_time - ms[local].post_time).ps();
  std::printf("[spread] remote flow over %u inputs; local 4 MiB took %.2f us (alone %.2f us), remote 64 MiB %.2f us\n",
              inputs, static_cast<double>(took) / 1e6, static_cast<double>(solo) / 1e6,
              static_cast<double>((ms[remote].end_time - ms[remote].post_time).ps()) / 1e6);
  EXPECT_LT(ms[local].end_time, ms[remote].end_time);
  EXPECT_LE(took, static_cast<std::int64_t>(1.1 * static_cast<double>((inputs + 1) * solo)));
}

// A NIC serves its messages round-robin, a packet per turn, and a message
// posted later joins the round last.  Under a stream of one-packet
// messages posted one per packet time (the link's whole rate), each posted
// while the one before is on the wire, a 4-packet message posted first must
// still get its turns: the stream's waiting messages grow by one per round,
// so its k-th turn comes after about 1 + 2 + ... + k packets, 10 for the
// 4th.  Until a message joined the order just before the NIC's pointer
// (nic.cpp, join_nic_round), it was appended at the end of the list, where
// the pointer stood after the previous one-packet message left: each
// newcomer went first, and the long message waited for the whole stream.
TEST(Nic, OldMessageKeepsItsTurnsAgainstAStreamOfNewOnes) {
  NetworkParams np;
  const LinkParams lp{100.0, SimTime::from_ns(20)};
  Model r(build_star(3, lp), np);
  const std::uint32_t payload = np.packet_bytes - np.header_bytes;
  const std::int64_t slot = ser_ps(np.packet_bytes, Rate{100});  // one full packet on the NIC's link
  constexpr std::uint32_t kLong = 4, kShort = 64;
  const MessageId long_msg = r.net->send(0, 1, std::uint64_t{kLong} * payload, SimTime::zero());
  for (std::uint32_t k = 0; k < kShort; ++k) r.net->send(0, 2, payload, SimTime::from_ps(k * slot));
  r.run();
  expect_conserved(r);
  const auto& m = r.net->messages()[long_msg];
  std::printf("[nic] %u-packet message done at %.2f us (%.1f packet times); the stream's last post at %.2f us\n",
              kLong, static_cast<double>(m.end_time.ps()) / 1e6,
              static_cast<double>(m.end_time.ps()) / static_cast<double>(slot),
              static_cast<double>((kShort - 1) * slot) / 1e6);
  // Its last packet leaves within 1 + 2 + 3 + 4 = 10 packet times, give or
  // take a round, then crosses the switch (twice the link latency, the
  // switch latency, a packet time).
  EXPECT_LT(m.end_time.ps(), 16 * slot + 2 * lp.latency.ps() + np.switch_latency.ps() + slot);
}

// ================================================ 4. conservation over a matrix

enum class Topo { FatTree2, FatTree3, Tapered, LeafSpine, LeafSpineRail };
const char* topo_name(Topo t) {
  switch (t) {
    case Topo::FatTree2: return "FatTree2";
    case Topo::FatTree3: return "FatTree3";
    case Topo::Tapered: return "Tapered";
    case Topo::LeafSpine: return "LeafSpine";
    case Topo::LeafSpineRail: return "LeafSpineRail";
  }
  return "?";
}

void PrintTo(Topo t, std::ostream* os) { *os << topo_name(t); }

Topology make_topo(Topo t) {
  const LinkParams host{100.0, SimTime::from_ns(30)};
  const LinkParams fabric{100.0, SimTime::from_ns(70)};
  switch (t) {
    // 8 leaves, 4 spines.
    case Topo::FatTree2: return net::build_fat_tree(fat_tree(32, 8, 0, host, fabric));
    // 11 leaves (the last with 2 endpoints), 3 pods (the last partial): 3 levels.
    case Topo::FatTree3: return net::build_fat_tree(fat_tree(42, 8, 0, host, fabric));
    // 8 leaves of 6 down / 2 up, 2 spines.
    case Topo::Tapered: return net::build_fat_tree(fat_tree(48, 8, 6, host, fabric));
    case Topo::LeafSpine:
    case Topo::LeafSpineRail: {
      net::LeafSpineParams p;
      p.leaves = 4;
      p.spines = 2;
      p.servers_per_leaf = 2;
      p.gpus_per_server = 2;
      p.radix = 8;
      p.rail_optimized = t == Topo::LeafSpineRail;
      p.links_per_pair = t == Topo::LeafSpineRail ? 2 : 1;
      p.host = host;
      p.fabric = fabric;
      return net::build_leaf_spine(p);
    }
  }
  return {};
}

const char* alg_name(RoutingAlgorithm a) {
  switch (a) {
    case RoutingAlgorithm::Ecmp: return "ecmp";
    case RoutingAlgorithm::Spray: return "spray";
    case RoutingAlgorithm::Adaptive: return "adaptive";
    case RoutingAlgorithm::DmodK: return "dmodk";
    default: return "?";  // the direct-topology algorithms are tested in test_direct_routing
  }
}

const char* pattern_name(workload::Pattern p) {
  switch (p) {
    case workload::Pattern::Permutation: return "permutation";
    case workload::Pattern::Uniform: return "uniform";
    case workload::Pattern::Alltoall: return "alltoall";
    case workload::Pattern::Incast: return "incast";
    case workload::Pattern::Bisection: return "bisection";
    case workload::Pattern::Ring: return "ring";
  }
  return "?";
}

workload::TrafficParams small_traffic(workload::Pattern p) {
  workload::TrafficParams tp;
  tp.pattern = p;
  tp.message_bytes = 3 * 4032 + 100;  // 4 packets, the last one short
  tp.messages = p == workload::Pattern::Alltoall ? 3 : 2;
  tp.incast_target = 5;
  tp.start = SimTime::from_ns(10);
  tp.seed = 7;
  return tp;
}

using MatrixParam = std::tuple<Topo, RoutingAlgorithm, workload::Pattern>;

class ConservationMatrix : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(ConservationMatrix, LosslessAndCreditSafe) {
  const auto [t, alg, pattern] = GetParam();
  NetworkParams np;
  np.routing = alg;
  np.buffer_bytes = 4 * 4096;  // small enough that back-pressure happens
  np.seed = 3;
  np.ecmp_seed = 11;
  Model r(make_topo(t), np);
  r.traffic(small_traffic(pattern));
  ASSERT_GT(r.work->messages_total(), 0u);
  r.run();
  expect_conserved(r);
}

INSTANTIATE_TEST_SUITE_P(
    All, ConservationMatrix,
    ::testing::Combine(::testing::Values(Topo::FatTree2, Topo::FatTree3, Topo::Tapered, Topo::LeafSpine,
                                         Topo::LeafSpineRail),
                       ::testing::Values(RoutingAlgorithm::Ecmp, RoutingAlgorithm::Spray, RoutingAlgorithm::Adaptive,
                                         RoutingAlgorithm::DmodK),
                       ::testing::Values(workload::Pattern::Permutation, workload::Pattern::Uniform,
                                         workload::Pattern::Alltoall, workload::Pattern::Incast,
                                         workload::Pattern::Bisection)),
    [](const ::testing::TestParamInfo<MatrixParam>& pi) {
      return std::string(topo_name(std::get<0>(pi.param))) + "_" + alg_name(std::get<1>(pi.param)) + "_" +
             pattern_name(std::get<2>(pi.param));
    });

// Virtual channels and one-packet buffers: messages are posted by hand with
// tags so that they spread over the VCs (vc = tag % vcs).
struct VcCase {
  std::uint32_t vcs;
  std::uint32_t tiny;  // 1: buffer of exactly one packet
};
void PrintTo(const VcCase& v, std::ostream* os) { *os << "vcs " << v.vcs << (v.tiny ? " tiny" : ""); }
using VcParam = std::tuple<Topo, RoutingAlgorithm, VcCase>;

class ConservationVcs : public ::testing::TestWithParam<VcParam> {};

TEST_P(ConservationVcs, LosslessWithVcsAndTinyBuffers) {
  const auto [t, alg, vc] = GetParam();
  NetworkParams np;
  np.routing = alg;
  np.vcs = vc.vcs;
  np.packet_bytes = 1500;
  np.header_bytes = 58;
  np.buffer_bytes = vc.tiny ? 1500 : 6000;
  np.seed = 5;
  Model r(make_topo(t), np);
  const auto n = static_cast<std::uint32_t>(r.topo.endpoint_count());
  // uniform traffic and an incast on top, so that some buffers fill up.
  workload::TrafficParams tp;
  tp.pattern = workload::Pattern::Uniform;
  tp.message_bytes = 5 * 1442 + 7;
  tp.messages = 3;
  tp.seed = 9;
  auto plan = workload::plan_traffic(tp, n, SimTime::from_ns(100));
  tp.pattern = workload::Pattern::Incast;
  tp.incast_target = n - 1;
  tp.messages = 1;
  const auto inc = workload::plan_traffic(tp, n, SimTime::from_ns(100));
  plan.insert(plan.end(), inc.begin(), inc.end());
  std::uint32_t tag = 0;
  for (const auto& m : plan) {
    const MessageId id = r.net->send(m.src, m.dst, m.bytes, m.post, tag);
    EXPECT_EQ(r.net->messages()[id].vc, tag % vc.vcs);
    ++tag;
  }
  r.run();
  expect_conserved(r);
  if (vc.tiny != 0) {
    EXPECT_LE(r.net->max_buffer_occupancy(), 1500u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, ConservationVcs,
    ::testing::Combine(::testing::Values(Topo::FatTree2, Topo::FatTree3, Topo::Tapered, Topo::LeafSpine,
                                         Topo::LeafSpineRail),
                       ::testing::Values(RoutingAlgorithm::Ecmp, RoutingAlgorithm::Spray, RoutingAlgorithm::Adaptive,
                                         RoutingAlgorithm::DmodK),
                       ::testing::Values(VcCase{1, 1}, VcCase{2, 0}, VcCase{2, 1}, VcCase{3, 1})),
    [](const ::testing::TestParamInfo<VcParam>& pi) {
      const VcCase v = std::get<2>(pi.param);
      return std::string(topo_name(std::get<0>(pi.param))) + "_" + alg_name(std::get<1>(pi.param)) + "_vcs" +
             std::to_string(v.vcs) + (v.tiny ? "_tiny" : "");
    });

// With one-packet buffers and VC-tagged traffic on a chain, timing is still
// exact: a lone message never waits for credits longer than the credit loop.
TEST(Credits, OnePacketBufferThrottlesToTheCreditLoop) {
  // Chain of 2 links (one switch) at 100 Gb/s, 1 us latency each, buffer = 1 packet.
  // A packet leaves the NIC at t, reaches the switch at t + L + sw, leaves
  // it at once (the output is idle) and its tail has left at t + L + sw + s;
  // the credit comes back at t + 2L + sw + s.  So the NIC sends one packet
  // every 2L + sw + s, and the last (n-th) of n full packets arrives at
  // (n-1)(2L + sw + s) + 2L + sw + s.
  const Rate g{100};
  const std::int64_t L = 1'000'000, sw = 100'000;
  NetworkParams np;
  np.buffer_bytes = 4096;
  np.switch_latency = SimTime::from_ps(sw);
  Model r(build_chain({{g, L}, {g, L}}), np);
  const MessageId id = r.net->send(0, 1, 5 * 4032, SimTime::zero());
  r.run();
  const std::int64_t s = ser_ps(4096, g);
  EXPECT_EQ(r.net->messages()[id].end_time.ps(), 4 * (2 * L + sw + s) + 2 * L + sw + s);
  expect_conserved(r);
  // The NIC's link stalls waiting for credits between packets.
  EXPECT_GT(r.net->link_stats().stall_ps[0], 0);
}

// ==================================================================== 5. determinism

struct Snapshot {
  std::vector<std::uint64_t> tx_bytes, tx_packets, max_queue;
  std::vector<std::int64_t> busy, stall;
  std::vector<std::uint32_t> flows;
  std::vector<std::int64_t> ends;
  std::vector<std::pair<EndpointId, EndpointId>> pairs;
  std::vector<std::vector<std::uint64_t>> series;
  std::int64_t final_time = 0;
  std::uint64_t events = 0;
};

Snapshot run_snapshot(Topo t, RoutingAlgorithm alg, workload::Pattern pat, std::uint64_t seed) {
  NetworkParams np;
  np.routing = alg;
  np.seed = seed;
  np.buffer_bytes = 3 * 4096;
  np.interval = SimTime::from_ns(500);
  Model r(make_topo(t), np);
  auto tp = small_traffic(pat);
  tp.seed = seed;
  tp.messages = 3;
  r.traffic(tp);
  r.run();
  expect_conserved(r);
  Snapshot s;
  const auto& st = r.net->link_stats();
  s.tx_bytes = st.tx_bytes;
  s.tx_packets = st.tx_packets;
  s.max_queue = st.max_queue_bytes;
  s.busy = st.busy_ps;
  s.stall = st.stall_ps;
  s.flows = st.flows;
  s.series = st.series_tx_bytes;
  for (const auto& m : r.net->messages()) {
    s.ends.push_back(m.end_time.ps());
    s.pairs.emplace_back(m.src, m.dst);
  }
  s.final_time = r.sim->now().ps();
  s.events = r.sim->events_processed();
  // The time series rows sum to the link totals.
  for (LinkId l = 0; l < r.topo.link_count(); ++l) {
    const auto& row = st.series_tx_bytes[l];
    EXPECT_EQ(std::accumulate(row.begin(), row.end(), std::uint64_t{0}), st.tx_bytes[l]);
    // Rows cover the run, with no trailing interval past its end.
    EXPECT_EQ(row.size(), st.series_tx_bytes[0].size());
    EXPECT_GE(static_cast<std::int64_t>(row.size()) * 500'000, s.final_time);
    EXPECT_LT(static_cast<std::int64_t>(row.size() - 1) * 500'000, s.final_time);
  }
  return s;
}

TEST(Determinism, SameConfigurationSameResults) {
  for (RoutingAlgorithm alg : {RoutingAlgorithm::Spray, RoutingAlgorithm::Adaptive, RoutingAlgorithm::Ecmp}) {
    SCOPED_TRACE(alg_name(alg));
    const Snapshot a = run_snapshot(Topo::FatTree3, alg, workload::Pattern::Uniform, 42);
    const Snapshot b = run_snapshot(Topo::FatTree3, alg, workload::Pattern::Uniform, 42);
    EXPECT_EQ(a.tx_bytes, b.tx_bytes);
    EXPECT_EQ(a.tx_packets, b.tx_packets);
    EXPECT_EQ(a.busy, b.busy);
    EXPECT_EQ(a.flows, b.flows);
    EXPECT_EQ(a.stall, b.stall);
    EXPECT_EQ(a.max_queue, b.max_queue);
    EXPECT_EQ(a.ends, b.ends);
    EXPECT_EQ(a.series, b.series);
    EXPECT_EQ(a.final_time, b.final_time);
    EXPECT_EQ(a.events, b.events);
  }
}

// Nothing leaks from one run into the next one in the same process: a run
// gives the same results before and after an unrelated run.
TEST(Determinism, IndependentOfEarlierRunsInTheProcess) {
  const Snapshot a = run_snapshot(Topo::LeafSpineRail, RoutingAlgorithm::Adaptive, workload::Pattern::Alltoall, 5);
  const Snapshot other = run_snapshot(Topo::FatTree3, RoutingAlgorithm::Spray, workload::Pattern::Incast, 6);
  const Snapshot b = run_snapshot(Topo::LeafSpineRail, RoutingAlgorithm::Adaptive, workload::Pattern::Alltoall, 5);
  EXPECT_EQ(a.tx_bytes, b.tx_bytes);
  EXPECT_EQ(a.busy, b.busy);
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.stall, b.stall);
  EXPECT_EQ(a.ends, b.ends);
  EXPECT_EQ(a.events, b.events);
  EXPECT_NE(a.ends.size(), 0u);
  EXPECT_NE(other.ends.size(), 0u);
}

TEST(Determinism, DifferentSeedChangesTraffic) {
  const Snapshot a = run_snapshot(Topo::FatTree2, RoutingAlgorithm::Adaptive, workload::Pattern::Permutation, 1);
  const Snapshot b = run_snapshot(Topo::FatTree2, RoutingAlgorithm::Adaptive, workload::Pattern::Permutation, 2);
  EXPECT_NE(a.pairs, b.pairs);
  // The permutation of seed 1 and 2 differ, each is a derangement.
  const auto p1 = workload::random_derangement(32, 1);
  const auto p2 = workload::random_derangement(32, 2);
  EXPECT_NE(p1, p2);
  for (const auto& p : {p1, p2}) {
    std::vector<std::uint32_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (std::uint32_t i = 0; i < 32; ++i) {
      EXPECT_EQ(sorted[i], i);
      EXPECT_NE(p[i], i);
    }
  }
  // Spray with a different network seed takes other paths for the same traffic.
  NetworkParams np;
  np.routing = RoutingAlgorithm::Spray;
  std::vector<std::vector<std::uint64_t>> tx;
  for (std::uint64_t seed : {1u, 2u}) {
    np.seed = seed;
    Model r(make_topo(Topo::FatTree2), np);
    auto tp = small_traffic(workload::Pattern::Permutation);
    tp.seed = 1;
    r.traffic(tp);
    r.run();
    expect_conserved(r);
    tx.push_back(r.net->link_stats().tx_packets);
  }
  EXPECT_NE(tx[0], tx[1]);
}

// ===================================================================== 6. ECMP

/// The path ECMP gives a message, from docs/model.md's hash, walked over the
/// minimal-route candidates.
std::vector<LinkId> ecmp_path(const Topology& topo, const net::RoutingTable& rt, std::uint32_t ecmp_seed,
                              EndpointId src, EndpointId dst, std::uint16_t flow_port) {
  std::vector<LinkId> path;
  NodeId at = topo.endpoint_node(src);
  const NodeId target = topo.endpoint_node(dst);
  while (at != target) {
    const auto cands = rt.candidates(at, dst);
    if (cands.empty()) {
      ADD_FAILURE() << "no route";
      break;
    }
    std::uint64_t h = util::hash2(util::hash2(ecmp_seed, at), (static_cast<std::uint64_t>(src) << 32) | dst);
    h = util::hash2(h, (static_cast<std::uint64_t>(flow_port) << 24) | (std::uint64_t{4791} << 8) | 17u);
    const std::size_t pick = cands.size() > 1 ? h % cands.size() : 0;
    const LinkId l = topo.node(at).out[cands[pick]];
    path.push_back(l);
    at = topo.link(l).dst;
    if (path.size() > 64) {
      ADD_FAILURE() << "path loops";
      break;
    }
  }
  return path;
}

TEST(Ecmp, PerLinkFlowCountsMatchTheHash) {
  // 64 endpoints, radix 16: 8 leaves with 8 up-links each, 4 spines, so two
  // parallel cables between every leaf and spine (hashing at both levels).
  for (std::uint32_t ecmp_seed : {0u, 12345u}) {
    SCOPED_TRACE("ecmp_seed " + std::to_string(ecmp_seed));
    NetworkParams np;
    np.routing = RoutingAlgorithm::Ecmp;
    np.ecmp_seed = ecmp_seed;
    Model r(net::build_fat_tree(fat_tree(64, 16)), np);
    workload::TrafficParams tp;
    tp.pattern = workload::Pattern::Permutation;
    tp.message_bytes = 20000;
    tp.messages = 2;
    r.traffic(tp);
    const net::RoutingTable rt(r.topo);
    r.run();
    expect_conserved(r);
    std::vector<std::uint32_t> expected(r.topo.link_count(), 0);
    std::vector<std::uint64_t> expected_packets(r.topo.link_count(), 0);
    std::set<std::uint16_t> ports;
    for (const auto& m : r.net->messages()) {
      EXPECT_GE(m.flow_port, 49152u);
      ports.insert(m.flow_port);
      for (LinkId l : ecmp_path(r.topo, rt, ecmp_seed, m.src, m.dst, m.flow_port)) {
        ++expected[l];
        expected_packets[l] += packets_of(m.bytes, np);
      }
    }
    EXPECT_GT(ports.size(), r.net->messages().size() / 2) << "source ports should vary per message";
    EXPECT_EQ(r.net->link_stats().flows, expected);
    // ECMP is per flow: every packet of a message follows its first.
    EXPECT_EQ(r.net->link_stats().tx_packets, expected_packets);
  }
}

TEST(Ecmp, SetFlowPortSteersThePath) {
  const Topology topo = net::build_fat_tree(fat_tree(64, 16));
  const net::RoutingTable rt(topo);
  const EndpointId src = 3, dst = 60;
  // Find, with the documented hash, two ports that give different paths.
  const auto base = ecmp_path(topo, rt, 0, src, dst, 50000);
  std::uint16_t other = 50001;
  while (ecmp_path(topo, rt, 0, src, dst, other) == base) ++other;
  for (std::uint16_t port : {std::uint16_t{50000}, other}) {
    NetworkParams np;
    np.routing = RoutingAlgorithm::Ecmp;
    Model r(net::build_fat_tree(fat_tree(64, 16)), np);
    const MessageId id = r.net->send(src, dst, 3 * 4032, SimTime::zero());
    r.net->set_flow_port(id, port);
    r.run();
    expect_conserved(r);
    EXPECT_EQ(r.net->messages()[id].flow_port, port);
    const auto path = ecmp_path(topo, rt, 0, src, dst, port);
    ASSERT_EQ(path.size(), 4u);
    std::vector<std::uint32_t> expected(topo.link_count(), 0);
    for (LinkId l : path) expected[l] = 1;
    EXPECT_EQ(r.net->link_stats().flows, expected) << "port " << port;
    for (LinkId l : path) EXPECT_EQ(r.net->link_stats().tx_packets[l], 3u);
  }
}

// D-mod-k on a 2-level tree with parallel cables: at a leaf (D = 1) the up
// port is dst mod k; at a spine, going down, the cable is dst mod k.
TEST(DmodK, PathsFollowDestinationModK) {
  // 16 endpoints, radix 8: 4 leaves of 4 down / 4 up, 2 spines, two
  // parallel cables per leaf-spine pair.
  NetworkParams np;
  np.routing = RoutingAlgorithm::DmodK;
  Model r(net::build_fat_tree(fat_tree(16, 8)), np);
  const net::RoutingTable rt(r.topo);
  const std::uint32_t leaf_up = 4;
  std::vector<std::uint32_t> expected(r.topo.link_count(), 0);
  for (EndpointId s = 0; s < 16; ++s) {
    const EndpointId d = (s * 5 + 3) % 16 == s ? (s + 1) % 16 : (s * 5 + 3) % 16;
    r.net->send(s, d, 1000, SimTime::from_ns(s));
    NodeId at = r.topo.endpoint_node(s);
    while (at != r.topo.endpoint_node(d)) {
      const auto c = rt.candidates(at, d);
      const std::uint32_t level = r.topo.node(at).level;
      const bool down = r.topo.node(r.topo.link(r.topo.node(at).out[c[0]]).dst).level < level;
      const std::uint32_t D = level <= 1 ? 1 : leaf_up;
      const LinkId l = r.topo.node(at).out[c[(down ? d : d / D) % c.size()]];
      ++expected[l];
      at = r.topo.link(l).dst;
    }
  }
  r.run();
  expect_conserved(r);
  EXPECT_EQ(r.net->link_stats().flows, expected);
}

/// Makespan throughput of a run as a fraction of the injection bandwidth of
/// all endpoints.
double normalized_throughput(const Model& r, double link_gbps) {
  return makespan_gbps(*r.net) / (static_cast<double>(r.topo.endpoint_count()) * link_gbps);
}

double pattern_throughput(const Topology& topo, RoutingAlgorithm alg, std::uint64_t bytes, double link_gbps,
                          workload::Pattern pat = workload::Pattern::Permutation, std::uint64_t seed = 1) {
  NetworkParams np;
  np.routing = alg;
  Model r(topo, np);
  workload::TrafficParams tp;
  tp.pattern = pat;
  tp.message_bytes = bytes;
  tp.messages = 1;
  tp.seed = seed;
  r.traffic(tp);
  r.run();
  expect_conserved(r);
  return normalized_throughput(r, link_gbps);
}

/// Endpoint e sends to (e + shift) mod p: a permutation whose flows all
/// leave their leaf when shift is a multiple of the leaf size.
double shift_throughput(const Topology& topo, RoutingAlgorithm alg, std::uint64_t bytes, double link_gbps,
                        std::uint32_t shift) {
  NetworkParams np;
  np.routing = alg;
  Model r(topo, np);
  const auto p = static_cast<std::uint32_t>(r.topo.endpoint_count());
  for (EndpointId e = 0; e < p; ++e) r.net->send(e, (e + shift) % p, bytes, SimTime::zero());
  r.run();
  expect_conserved(r);
  return normalized_throughput(r, link_gbps);
}

TEST(Ecmp, CollisionsCostThroughputAgainstAdaptiveAndSpray) {
  const Topology topo = net::build_fat_tree(fat_tree(64, 16));
  // Precondition from the hash: some fabric link carries more than one flow.
  std::uint32_t max_load = 0;
  {
    const net::RoutingTable rt(topo);
    NetworkParams np;
    core::Simulator sim(topo.node_count());
    Network n(topo, np, sim);
    workload::TrafficParams tp;
    tp.message_bytes = 1 << 20;
    workload::TrafficWorkload w(n, tp);
    std::vector<std::uint32_t> load(topo.link_count(), 0);
    for (const auto& m : n.messages())
      for (LinkId l : ecmp_path(topo, rt, 0, m.src, m.dst, m.flow_port)) ++load[l];
    max_load = *std::max_element(load.begin(), load.end());
    std::printf("[ecmp] predicted largest number of flows on one link: %u\n", max_load);
    ASSERT_GT(max_load, 1u) << "no ECMP collision with this seed";
  }
  const double ecmp = pattern_throughput(topo, RoutingAlgorithm::Ecmp, 1 << 20, 100.0);
  const double adaptive = pattern_throughput(topo, RoutingAlgorithm::Adaptive, 1 << 20, 100.0);
  const double spray = pattern_throughput(topo, RoutingAlgorithm::Spray, 1 << 20, 100.0);
  std::printf("[ecmp vs others] 64 ep radix 16 permutation 1 MiB: ecmp %.4f adaptive %.4f spray %.4f\n", ecmp,
              adaptive, spray);
  EXPECT_LT(ecmp, adaptive);
  EXPECT_LT(ecmp, spray);
  // A link that carries F whole 1 MiB flows needs F times their wire time:
  // the makespan throughput cannot beat 1/F of the payload share.
  EXPECT_LE(ecmp, 1.0 / max_load * 4032.0 / 4096.0 * 1.0001);
}

// ========================================================= 7. tapered fat trees

TEST(Tapered, ThroughputBoundedByTaperRatio) {
  // radix 16, 12 down / 4 up: taper 4/12.  96 endpoints: 8 leaves of 12,
  // 2 spines (2 cables per leaf-spine pair).  The nonblocking reference keeps
  // the same leaves (radix 24, 12 down / 12 up: 4 spines, 3 cables per pair).
  // Bisection pairs the lower 48 endpoints (leaves 0-3) with the upper 48
  // (leaves 4-7), and the shift e -> e + 48 sends every flow to another
  // leaf: either way every byte crosses its leaf's 4 up-links, so at most
  // 4/12 of the injection bandwidth is delivered (less the header share).
  const Topology tapered = net::build_fat_tree(fat_tree(96, 16, 12));
  const Topology full = net::build_fat_tree(fat_tree(96, 24, 12));
  ASSERT_EQ(tapered.switch_count(2), 2u);
  ASSERT_EQ(full.switch_count(2), 4u);
  const double ratio = 4.0 / 12.0;
  const std::uint64_t bytes = 512 * 1024;
  for (RoutingAlgorithm alg : {RoutingAlgorithm::Adaptive, RoutingAlgorithm::Spray, RoutingAlgorithm::Ecmp,
                               RoutingAlgorithm::DmodK}) {
    SCOPED_TRACE(alg_name(alg));
    const double tb = pattern_throughput(tapered, alg, bytes, 100.0, workload::Pattern::Bisection);
    const double fb = pattern_throughput(full, alg, bytes, 100.0, workload::Pattern::Bisection);
    const double ts = shift_throughput(tapered, alg, bytes, 100.0, 48);
    const double fs = shift_throughput(full, alg, bytes, 100.0, 48);
    std::printf("[tapered] %-8s bisection: tapered %.4f (bound %.4f) nonblocking %.4f | shift-48: tapered %.4f "
                "nonblocking %.4f\n",
                alg_name(alg), tb, ratio, fb, ts, fs);
    EXPECT_LE(tb, ratio * 1.02);
    EXPECT_LE(ts, ratio * 1.02);
    EXPECT_GT(fb, tb);
    EXPECT_GT(fs, ts);
  }
  // A random permutation keeps some flows inside a leaf, so it may exceed
  // the taper ratio; printed for information only.
  const double tp = pattern_throughput(tapered, RoutingAlgorithm::Adaptive, bytes, 100.0);
  const double fp = pattern_throughput(full, RoutingAlgorithm::Adaptive, bytes, 100.0);
  std::printf("[tapered] adaptive random permutation: tapered %.4f nonblocking %.4f\n", tp, fp);
  EXPECT_GT(fp, tp);
}

// ============================================ 8. adaptive / spray permutation

/// Throughputs of one random permutation, as shares of the injection
/// bandwidth (payload, endpoints x link rate):
///  - steady: the aggregate rate at which payload reaches the endpoints
///    while every flow is still sending, from `warmup` until the first flow
///    completes (accepted throughput, as synthetic-traffic studies measure
///    it), from the per-link time series of the links into endpoints;
///  - per_flow: the mean over flows of bytes / completion time (the
///    HammingMesh paper's "permutation bandwidth", spec §9);
///  - makespan: all bytes / (last completion - first post).
struct PermutationThroughput {
  double steady = 0, per_flow = 0, makespan = 0;
};
PermutationThroughput permutation_throughput(const Topology& topo, RoutingAlgorithm alg, std::uint64_t bytes,
                                             double link_gbps, std::uint64_t seed, SimTime warmup) {
  NetworkParams np;
  np.routing = alg;
  np.interval = SimTime::from_ns(250);
  Model r(topo, np);
  workload::TrafficParams tp;
  tp.pattern = workload::Pattern::Permutation;
  tp.message_bytes = bytes;
  tp.messages = 1;
  tp.seed = seed;
  r.traffic(tp);
  r.run();
  expect_conserved(r);
  PermutationThroughput out;
  out.makespan = normalized_throughput(r, link_gbps);
  SimTime first_end = SimTime::max();
  double per_flow = 0;
  for (const auto& m : r.net->messages()) {
    first_end = std::min(first_end, m.end_time);
    per_flow += static_cast<double>(m.bytes) * 8.0 / static_cast<double>((m.end_time - m.post_time).ps()) * 1000.0;
  }
  const double endpoints = static_cast<double>(topo.endpoint_count());
  out.per_flow = per_flow / endpoints / link_gbps;
  const std::int64_t iv = r.net->series_interval().ps();
  const auto k0 = static_cast<std::size_t>((warmup.ps() + iv - 1) / iv);
  const auto k1 = static_cast<std::size_t>(first_end.ps() / iv);
  EXPECT_GT(k1, k0 + 10) << "the steady window is too short to measure";
  const auto& st = r.net->link_stats();
  double wire = 0;
  for (LinkId l = 0; l < topo.link_count(); ++l) {
    if (topo.node(topo.link(l).dst).kind != NodeKind::Endpoint) continue;
    for (std::size_t k = k0; k < k1 && k < st.series_tx_bytes[l].size(); ++k)
      wire += static_cast<double>(st.series_tx_bytes[l][k]);
  }
  // In the middle of a message every packet is full.
  const double payload = wire * (np.packet_bytes - np.header_bytes) / np.packet_bytes;
  const double window_s = static_cast<double>((k1 - k0) * static_cast<std::size_t>(iv)) * 1e-12;
  out.steady = payload * 8.0 / (endpoints * link_gbps * 1e9 * window_s);
  return out;
}

TEST(NonblockingPermutation, AdaptiveAndSprayDeliverNinetyPercentEcmpLess) {
  // 128 endpoints, radix 16: 16 leaves of 8 down / 8 up, 8 spines (one cable
  // per leaf-spine pair); 64 endpoints, radix 16 (the default topology):
  // 8 leaves, 4 spines, two cables per pair.  Random permutation, 1 MiB at
  // 100 Gb/s (84 us per flow), two seeds.  Issue 3 asks adaptive and spray
  // to deliver at least 90% of the injection bandwidth in aggregate, ECMP
  // less: checked on the steady aggregate rate (see PermutationThroughput).
  // The completion-based figures include the drain of the queues that
  // random spraying and local adaptive choices build at 100% load; they are
  // printed, not asserted (docs/model.md discusses them).
  for (std::uint32_t endpoints : {128u, 64u}) {
    const Topology topo = net::build_fat_tree(fat_tree(endpoints, 16));
    for (std::uint64_t seed : {1u, 2u}) {
      double worst_good = 1.0;
      double ecmp = 0;
      for (RoutingAlgorithm alg : {RoutingAlgorithm::Adaptive, RoutingAlgorithm::Spray, RoutingAlgorithm::Ecmp}) {
        SCOPED_TRACE(std::string(alg_name(alg)) + " " + std::to_string(endpoints) + " endpoints, seed " +
                     std::to_string(seed));
        const PermutationThroughput t =
            permutation_throughput(topo, alg, 1 << 20, 100.0, seed, SimTime::from_ns(5000));
        std::printf("[permutation] %3u ep seed %llu %-8s steady %.4f  per-flow %.4f  makespan %.4f\n", endpoints,
                    static_cast<unsigned long long>(seed), alg_name(alg), t.steady, t.per_flow, t.makespan);
        EXPECT_LE(t.steady, 1.0);
        if (alg == RoutingAlgorithm::Ecmp) {
          ecmp = t.steady;
        } else {
          EXPECT_GE(t.steady, 0.90);
          worst_good = std::min(worst_good, t.steady);
        }
      }
      EXPECT_LT(ecmp, worst_good) << "ECMP's hash collisions must cost throughput";
    }
  }
}

// ================================================= adaptive routing details

// endpoint A - S1 =3 parallel cables= S2 - endpoint B.  Adaptive picks the
// candidate with the least (queued + sent-but-not-credited) bytes, a busy
// port counting one more, ties to the lowest port.
Topology build_parallel(std::int64_t cable_latency_ps) {
  Topology t;
  const NodeId a = t.add_node(NodeKind::Endpoint, 0, 1, "ep0", false);
  const NodeId b = t.add_node(NodeKind::Endpoint, 0, 1, "ep1", false);
  const NodeId s1 = t.add_node(NodeKind::Switch, 1, 4, "sw0", true);
  const NodeId s2 = t.add_node(NodeKind::Switch, 1, 4, "sw1", true);
  const LinkParams host{100.0, SimTime::from_ps(10'000)};
  t.connect(a, s1, net::LinkClass::Host, host);  // links 0/1
  for (int c = 0; c < 3; ++c)                    // links 2/3, 4/5, 6/7
    t.connect(s1, s2, net::LinkClass::Fabric, LinkParams{100.0, SimTime::from_ps(cable_latency_ps)});
  t.connect(s2, b, net::LinkClass::Host, host);  // links 8/9
  return t;
}

TEST(Adaptive, LeastOutstandingBytesThenLowestPort) {
  const std::int64_t s = ser_ps(4096, Rate{100});  // 327,680 ps
  const std::int64_t sw = 50'000;
  {
    // Short cables (10 ns): packet k reaches S1's output choice at
    // T0 + k*s; the credit of a packet sent at T comes back at
    // T + 2L + sw + s, before packet k+2 (2L + sw <= s) but after packet
    // k+1.  So: p0 -> c1 (all equal, lowest port), p1 -> c2 (c1 owes 4096),
    // p2 -> c1 (c1 credited again, ties with c3, lowest wins), ... c3 never.
    NetworkParams np;
    np.routing = RoutingAlgorithm::Adaptive;
    np.switch_latency = SimTime::from_ps(sw);
    Model r(build_parallel(10'000), np);
    const MessageId id = r.net->send(0, 1, 7 * 4032, SimTime::zero());
    r.run();
    expect_conserved(r);
    const auto& st = r.net->link_stats();
    EXPECT_EQ(st.tx_packets[2], 4u);
    EXPECT_EQ(st.tx_packets[4], 3u);
    EXPECT_EQ(st.tx_packets[6], 0u);
    EXPECT_EQ(st.flows[2], 1u);
    EXPECT_EQ(st.flows[4], 0u);
    // Nothing ever waits: end = 7 ser + 3 latencies + 2 switches.
    EXPECT_EQ(r.net->messages()[id].end_time.ps(), 7 * s + 30'000 + 2 * sw);
  }
  {
    // Long cables (400 ns): 2L + sw = 850 ns > 2s, so no credit is back
    // for the first three packets: p0 -> c1, p1 -> c2, p2 -> c3.
    NetworkParams np;
    np.routing = RoutingAlgorithm::Adaptive;
    np.switch_latency = SimTime::from_ps(sw);
    Model r(build_parallel(400'000), np);
    r.net->send(0, 1, 3 * 4032, SimTime::zero());
    r.run();
    expect_conserved(r);
    const auto& st = r.net->link_stats();
    EXPECT_EQ(st.tx_packets[2], 1u);
    EXPECT_EQ(st.tx_packets[4], 1u);
    EXPECT_EQ(st.tx_packets[6], 1u);
  }
}

// The memory estimate counts messages without planning them: the count must
// be what plan_traffic returns, for every pattern, odd and even sizes and
// every meaning of `messages` (alltoall: 0 = p-1 rounds, more than p-1
// clipped; ring: at least one; incast: all others or a given number).
TEST(TrafficCount, MatchesThePlan) {
  using workload::Pattern;
  for (auto pattern : {Pattern::Permutation, Pattern::Uniform, Pattern::Alltoall, Pattern::Incast, Pattern::Bisection,
                       Pattern::Ring})
    for (std::uint32_t n : {2u, 3u, 7u, 16u})
      for (std::uint32_t messages : {0u, 1u, 3u, 20u})
        for (std::uint32_t sources : {0u, 1u, 5u}) {
          workload::TrafficParams tp;
          tp.pattern = pattern;
          tp.messages = messages;
          tp.incast_sources = std::min(sources, n - 1);
          tp.incast_target = n - 1;
          tp.message_bytes = 1000;
          EXPECT_EQ(workload::count_traffic(tp, n), workload::plan_traffic(tp, n, SimTime::from_ns(10)).size())
              << "pattern " << static_cast<int>(pattern) << " n " << n << " messages " << messages << " sources "
              << sources;
        }
}

}  // namespace
}  // namespace fabricsim
