// Collectives on a single nonblocking switch, where no two messages of a
// step share a link: every algorithm's time must equal its alpha-beta
// formula, derived here from the link model (a message of P packets over
// NIC -> switch -> NIC arrives 2L + W + (its serialization) after it
// starts; the next step leaves when it has arrived).  Data volumes counted
// from the links must equal the algorithms' theoretical volumes.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "fabricsim/config/config.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/collective.hpp"
#include "star.hpp"

namespace fabricsim::workload {
namespace {

using core::SimTime;
using net::Topology;

constexpr double kGbps = 100.0;          // 80 ps per byte: no rounding
constexpr std::int64_t kLatency = 3'000;  // ps per link
constexpr std::int64_t kSwitch = 50'000;  // ps

Topology star(std::uint32_t n) { return testing::star(n, kGbps, SimTime::from_ps(kLatency)); }

struct Bench {
  Topology topo;
  net::NetworkParams np;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<net::Network> net;
  std::unique_ptr<CollectiveWorkload> work;
  explicit Bench(std::uint32_t n) : topo(star(n)) {
    np.switch_latency = SimTime::from_ps(kSwitch);
    np.packet_bytes = 4096;
    np.header_bytes = 64;
  }
  void run(const CollectiveParams& p) {
    sim = std::make_unique<core::Simulator>(topo.node_count());
    net = std::make_unique<net::Network>(topo, np, *sim);
    work = std::make_unique<CollectiveWorkload>(*net, p);
    sim->run_until(SimTime::max());
    ASSERT_EQ(work->messages_done(), work->messages_total());
  }
  // Duration of instance i: first post to last arrival.
  std::int64_t time_ps(std::size_t i) const {
    const auto& inst = work->instances()[i];
    SimTime a = SimTime::max(), b = SimTime::zero();
    for (net::MessageId m = inst.first; m < inst.last; ++m) {
      a = std::min(a, net->messages()[m].post_time);
      b = std::max(b, net->messages()[m].end_time);
    }
    return (b - a).ps();
  }
};

// One message of `bytes` payload: 2L + W + serialization of its packets.
std::int64_t message_ps(std::uint64_t bytes) {
  const std::uint64_t payload = 4096 - 64;
  const std::uint64_t packets = (bytes + payload - 1) / payload;
  return 2 * kLatency + kSwitch + static_cast<std::int64_t>((bytes + 64 * packets) * 80);
}

// Duration (ps) of the first operation of `p` on a 2-level fat tree of
// `endpoints` with 8 per leaf and `radix`-port switches (16: nonblocking,
// 12: 2:1 tapered), adaptive routing.
std::int64_t tree_time_ps(std::uint32_t endpoints, std::uint32_t radix, const CollectiveParams& p) {
  net::FatTreeParams ft;
  ft.endpoints = endpoints;
  ft.radix = radix;
  ft.down_ports = 8;
  Bench b(2);
  b.topo = net::build_fat_tree(ft);
  b.np.routing = net::RoutingAlgorithm::Adaptive;
  b.run(p);
  return b.time_ps(0);
}

TEST(Collective, RingAndPairwiseMatchAlphaBetaOnOneSwitch) {
  for (std::uint32_t n : {2u, 5u, 8u}) {
    for (std::uint64_t S : {65'536ull, 1'000'000ull, 16ull << 20, 256ull << 20}) {
      if (S > (16ull << 20) && n != 8) continue;  // 256 MiB once: the range the issue names
      const std::uint64_t m = S / n;  // every part (the remainder adds at most one byte)
      struct Case {
        CollectiveOp op;
        const char* algorithm;
        std::uint32_t steps;
      };
      for (const Case& c : {Case{CollectiveOp::Allreduce, "ring", 2 * (n - 1)},
                            Case{CollectiveOp::ReduceScatter, "ring", n - 1},
                            Case{CollectiveOp::Allgather, "ring", n - 1},
                            Case{CollectiveOp::Alltoall, "pairwise", n - 1}}) {
        SCOPED_TRACE(std::string(to_string(c.op)) + " n=" + std::to_string(n) + " S=" + std::to_string(S));
        Bench b(n);
        CollectiveParams p;
        p.op = c.op;
        p.algorithm = c.algorithm;
        p.sizes = {S};
        p.iterations = 2;
        b.run(p);
        // A step is as long as its largest message (one byte more in the
        // first S mod n parts): the formula with m and with m + 1 bounds it.
        const std::int64_t lo = c.steps * message_ps(m);
        const std::int64_t hi = c.steps * message_ps(m + (S % n ? 1 : 0));
        for (std::size_t i = 0; i < b.work->instances().size(); ++i) {
          const std::int64_t t = b.time_ps(i);
          EXPECT_GE(t, lo);
          EXPECT_LE(t, hi);
          EXPECT_NEAR(static_cast<double>(t), static_cast<double>(lo), 0.02 * static_cast<double>(lo));
        }
        // Volume: in every step each part of the buffer is sent once (a
        // permutation of the parts), so an instance moves steps * S payload;
        // the NIC links carry that plus one header per packet.
        std::uint64_t payload = 0;
        for (const auto& msg : b.net->messages()) payload += msg.bytes;
        EXPECT_EQ(payload, 2ull * c.steps * S);
        std::uint64_t nic_bytes = 0;
        const auto& st = b.net->link_stats();
        for (net::LinkId l = 0; l < b.topo.link_count(); ++l)
          if (b.topo.node(b.topo.link(l).src).kind == net::NodeKind::Endpoint) nic_bytes += st.tx_bytes[l];
        EXPECT_EQ(nic_bytes, payload + 64 * b.net->totals().packets_injected);
        // Per endpoint, from its NIC link's counters: steps x S/n payload
        // (within one byte per step), plus a header per packet.
        for (std::uint32_t e = 0; e < n; ++e) {
          const net::LinkId nic = b.topo.node(b.topo.endpoint_node(e)).out[0];
          const std::uint64_t payload_e = st.tx_bytes[nic] - 64 * st.tx_packets[nic];
          EXPECT_GE(payload_e, 2ull * c.steps * (S / n)) << "endpoint " << e;
          EXPECT_LE(payload_e, 2ull * c.steps * (S / n + 1)) << "endpoint " << e;
        }
      }
    }
  }
}

TEST(Collective, DirectAndBidirectionalMatchAlphaBetaOnOneSwitch) {
  // direct: all n-1 parts leave at once and share the NIC (and each
  // receiver's link), so a phase takes 2L + W + (n-1) part serializations;
  // allreduce is two such phases (the second after the reduce barrier),
  // alltoall one.  bidirectional_ring: each step sends S/2n each way round,
  // the two sharing the NIC: 2L + W + both serializations per step.
  // Within 2% (the packet interleaving of concurrent messages).
  for (std::uint32_t n : {4u, 8u}) {
    for (std::uint64_t S : {1ull << 20, 16ull << 20}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " S=" + std::to_string(S));
      const auto measure = [&](CollectiveOp op, const char* algorithm) {
        Bench b(n);
        CollectiveParams p;
        p.op = op;
        p.algorithm = algorithm;
        p.sizes = {S};
        b.run(p);
        return static_cast<double>(b.time_ps(0));
      };
      const std::uint64_t m = S / n;
      const double phase = static_cast<double>(message_ps(m) + (n - 2) * (message_ps(m) - 2 * kLatency - kSwitch));
      EXPECT_NEAR(measure(CollectiveOp::Allreduce, "direct"), 2 * phase, 0.02 * 2 * phase);
      EXPECT_NEAR(measure(CollectiveOp::Alltoall, "direct"), phase, 0.02 * phase);
      const double step = static_cast<double>(2 * message_ps(m / 2) - 2 * kLatency - kSwitch);
      EXPECT_NEAR(measure(CollectiveOp::Allreduce, "bidirectional_ring"), 2 * (n - 1) * step, 0.02 * 2 * (n - 1) * step);
    }
  }
}

TEST(Collective, HalvingDoublingMatchesAlphaBetaOnOneSwitch) {
  // Powers of two: 2 log2(n) exchanges, S/2, S/4, ..., S/n and back; on a
  // star every exchange of a step is a permutation, so each step takes one
  // message time.  Not a power of two: the extra ranks are folded in with
  // their whole buffer and served last, every byte arrives.
  for (std::uint32_t n : {2u, 8u, 16u}) {
    for (std::uint64_t S : {65'536ull, 4ull << 20}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " S=" + std::to_string(S));
      Bench b(n);
      CollectiveParams p;
      p.algorithm = "halving_doubling";
      p.sizes = {S};
      b.run(p);
      std::int64_t want = 0;
      for (std::uint64_t d = S / 2; d >= S / n; d /= 2) want += 2 * message_ps(d);
      EXPECT_EQ(b.time_ps(0), want);
    }
  }
  Bench b(6);
  CollectiveParams p;
  p.algorithm = "halving_doubling";
  p.sizes = {600'000};
  b.run(p);
  std::uint64_t payload = 0;
  for (const auto& m : b.net->messages()) payload += m.bytes;
  // fold 2 x S, unfold 2 x S, and 4 ranks x (S/2 + S/4) twice.
  EXPECT_EQ(payload, 4 * 600'000ull + 4 * 2 * (300'000 + 150'000));
}

TEST(Collective, HalvingDoublingBeatsTheRingSmallRingWinsLargeAcrossATaper) {
  // 64 ranks in order on a 2:1 tapered fat tree (8 leaves of 8): the ring's
  // neighbours share a leaf but for one flow per boundary; halving-doubling
  // exchanges with ranks 32, 16 and 8 away, across the taper.  Small
  // messages: 12 exchanges beat 126 ring steps; large ones: the ring wins.
  const auto run = [](const char* algorithm, std::uint64_t S) {
    CollectiveParams p;
    p.algorithm = algorithm;
    p.sizes = {S};
    return tree_time_ps(64, 12, p);
  };
  const std::uint64_t small = 16 << 10, large = 16 << 20;
  const std::int64_t ring_small = run("ring", small), hd_small = run("halving_doubling", small);
  const std::int64_t ring_large = run("ring", large), hd_large = run("halving_doubling", large);
  EXPECT_LT(hd_small, ring_small);
  EXPECT_LT(ring_large, hd_large);
  std::printf("64 ranks, 2:1 taper: 16 KiB ring %.1f us, halving-doubling %.1f us; 16 MiB ring %.1f us, "
              "halving-doubling %.1f us\n",
              static_cast<double>(ring_small) / 1e6, static_cast<double>(hd_small) / 1e6,
              static_cast<double>(ring_large) / 1e6, static_cast<double>(hd_large) / 1e6);
}

TEST(Collective, DoubleBinaryTreeMovesItsVolumeAndBeatsTheRingOnlyWhenSmall) {
  // Each tree carries half the buffer up once and down once through its
  // n-1 edges: 2 (n-1) S payload in all, chunked or not.
  for (std::uint64_t chunk : {0ull, 10'000ull}) {
    Bench b(7);
    CollectiveParams p;
    p.algorithm = "double_binary_tree";
    p.sizes = {100'001};
    p.chunk_bytes = chunk;
    b.run(p);
    std::uint64_t payload = 0;
    for (const auto& m : b.net->messages()) payload += m.bytes;
    EXPECT_EQ(payload, 2ull * 6 * 100'001);
  }
  // 64 ranks on a nonblocking fat tree: 12 tree levels of latency against
  // 126 ring steps for 4 KiB; for 16 MiB the ring's bandwidth wins.
  const auto run = [](const char* algorithm, std::uint64_t S) {
    CollectiveParams p;
    p.algorithm = algorithm;
    p.sizes = {S};
    p.chunk_bytes = 262'144;
    return tree_time_ps(64, 16, p);
  };
  const std::int64_t ring_small = run("ring", 4096), tree_small = run("double_binary_tree", 4096);
  const std::int64_t ring_large = run("ring", 16 << 20), tree_large = run("double_binary_tree", 16 << 20);
  EXPECT_LT(tree_small, ring_small);
  EXPECT_LT(ring_large, tree_large);
  std::printf("64 ranks, nonblocking: 4 KiB ring %.1f us, double binary tree %.1f us; 16 MiB ring %.1f us, tree %.1f us\n",
              static_cast<double>(ring_small) / 1e6, static_cast<double>(tree_small) / 1e6,
              static_cast<double>(ring_large) / 1e6, static_cast<double>(tree_large) / 1e6);
}

TEST(Collective, BroadcastAndReduceFromAnyRoot) {
  // Ring: a chain of n-1 store-and-forward hops, (n-1) message times on one
  // switch; in C chunks the chain pipelines: (n-1 + C-1) chunk times.  Tree:
  // (n-1) S bytes, every rank but the root receives (broadcast) or sends
  // (reduce) the buffer once.
  const std::uint32_t n = 6;
  const std::uint64_t S = 3'000'000;
  for (CollectiveOp op : {CollectiveOp::Broadcast, CollectiveOp::Reduce}) {
    for (std::uint32_t root : {0u, 4u}) {
      SCOPED_TRACE(std::string(to_string(op)) + " root " + std::to_string(root));
      Bench ring(n);
      CollectiveParams p;
      p.op = op;
      p.root = root;
      p.sizes = {S};
      ring.run(p);
      EXPECT_EQ(ring.time_ps(0), (n - 1) * message_ps(S));
      Bench piped(n);
      p.chunk_bytes = S / 10;
      piped.run(p);
      EXPECT_NEAR(static_cast<double>(piped.time_ps(0)), static_cast<double>((n - 1 + 9) * message_ps(S / 10)),
                  0.02 * static_cast<double>((n - 1 + 9) * message_ps(S / 10)));
      Bench tree(n);
      p.algorithm = "tree";
      p.chunk_bytes = 0;
      p.iterations = 3;
      tree.run(p);
      std::uint64_t payload = 0;
      for (const auto& m : tree.net->messages()) {
        payload += m.bytes;
        EXPECT_NE(op == CollectiveOp::Broadcast ? m.dst : m.src, root);
      }
      EXPECT_EQ(payload, 3ull * (n - 1) * S);
    }
  }
}

TEST(Collective, HierarchicalIsThreeRingPhasesOnOneSwitch) {
  // 8 ranks as 4 servers of 2 (consecutive ranks): a reduce-scatter inside
  // each server (G-1 steps of S/G), an allreduce of each S/G part across the
  // 4 servers (2(4-1) steps of S/8), an allgather inside (G-1 steps of
  // S/G); the phases of all servers and parts run side by side without
  // sharing a link on one switch.
  const std::uint64_t S = 8'000'000;
  Bench b(8);
  CollectiveParams p;
  p.algorithm = "hierarchical";
  p.gpus_per_server = 2;
  p.sizes = {S};
  b.run(p);
  EXPECT_EQ(b.time_ps(0), 2 * message_ps(S / 2) + 6 * message_ps(S / 8));
  std::uint64_t payload = 0;
  for (const auto& m : b.net->messages()) payload += m.bytes;
  // Intra phases: 4 servers x 2 ranks x S/2, twice (4S + 4S); across: 2
  // rings x 6 steps x 4 ranks x S/8 (6S).
  EXPECT_EQ(payload, 14 * S);
  CollectiveParams bad = p;
  bad.gpus_per_server = 3;  // 8 ranks are not whole servers of 3
  Bench b2(8);
  EXPECT_THROW(b2.run(bad), util::ConfigError);
}

TEST(Collective, ReductionTimeAddsOncePerReduceScatterStep) {
  // reduce_gbps = 50: each of the n-1 reduce-scatter receipts of a ring
  // allreduce is reduced (m bytes at 50 Gb/s) before the next step leaves.
  const std::uint32_t n = 4;
  const std::uint64_t S = 4'000'000, m = S / n;
  Bench b(n);
  CollectiveParams p;
  p.sizes = {S};
  p.reduce_gbps = 50.0;
  b.run(p);
  const std::int64_t reduce_ps = core::serialization_time(m, 50.0).ps();
  EXPECT_EQ(b.time_ps(0), 2 * (n - 1) * message_ps(m) + (n - 1) * reduce_ps);
}

TEST(Collective, ChunksKeepTheRingAtLinkRate) {
  // Chunks move through the steps independently.  On one switch a ring
  // step is one hop, so whole parts already keep every NIC busy but for
  // 2L + W per step: 64 KiB chunks must move the same payload in about
  // the same time (their extra headers: 17 packets per 16.25 packets'
  // payload), not slower by more than that.
  const std::uint64_t S = 16u << 20;
  Bench whole(8), chunked(8);
  CollectiveParams p;
  p.sizes = {S};
  whole.run(p);
  p.chunk_bytes = 65536;
  chunked.run(p);
  // Headers per chunk: ceil(65536 / 4032) = 17 packets instead of 16.25.
  const double header_share = (65536.0 + 17 * 64) / (65536.0 + 65536.0 / 4032 * 64);
  const auto whole_ps = static_cast<double>(whole.time_ps(0));
  EXPECT_NEAR(static_cast<double>(chunked.time_ps(0)), whole_ps * header_share, 0.01 * whole_ps);
  std::uint64_t a = 0, c = 0;
  for (const auto& m : whole.net->messages()) a += m.bytes;
  for (const auto& m : chunked.net->messages()) c += m.bytes;
  EXPECT_EQ(a, c);
  EXPECT_GT(chunked.net->messages().size(), whole.net->messages().size());
}

TEST(Collective, OperationsFollowEachOtherPerEndpoint) {
  // Three iterations back to back: each starts when the previous one ended
  // at that endpoint, so on a symmetric star they take equal times and do
  // not overlap.
  Bench b(6);
  CollectiveParams p;
  p.sizes = {600'000};
  p.iterations = 3;
  p.warmup = 1;
  b.run(p);
  ASSERT_EQ(b.work->instances().size(), 4u);
  EXPECT_EQ(b.work->instances()[0].iteration, -1);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(b.time_ps(i), b.time_ps(0));
    SimTime prev_end = SimTime::zero(), start = SimTime::max();
    for (net::MessageId m = b.work->instances()[i - 1].first; m < b.work->instances()[i - 1].last; ++m)
      prev_end = std::max(prev_end, b.net->messages()[m].end_time);
    for (net::MessageId m = b.work->instances()[i].first; m < b.work->instances()[i].last; ++m)
      start = std::min(start, b.net->messages()[m].post_time);
    EXPECT_EQ(start, prev_end);
  }
}

// Ring allreduce of 32 MiB over all 32 endpoints of a 2-level fat tree of
// 4 leaves with 8 endpoints each, at 100 Gb/s; busbw in GB/s.  Nonblocking:
// radix 16, 8 up-links per leaf; tapered 2:1: radix 12, 4 up-links.
double tree_busbw(bool tapered, const char* placement) {
  CollectiveParams p;
  p.sizes = {32u << 20};
  p.placement = placement;
  p.ranks = 32;
  p.seed = 7;
  const double t_ns = static_cast<double>(tree_time_ps(32, tapered ? 12 : 16, p)) / 1000.0;
  return static_cast<double>(p.sizes[0]) / t_ns * busbw_factor(CollectiveOp::Allreduce, 32);
}

TEST(Collective, RingAllreduceAtLinkRateOnNonblockingTreeLessAcrossATaper) {
  const double link_GBps = 100.0 / 8;  // the fat tree's default 100 Gb/s
  // Linear ring order: ranks of a leaf are ring neighbours, one flow crosses
  // each leaf boundary: link rate, with or without the taper.
  const double linear = tree_busbw(false, "linear");
  EXPECT_GE(linear, 0.95 * link_GBps);
  EXPECT_GE(tree_busbw(true, "linear"), 0.95 * link_GBps);
  // A random ring order sends most ring neighbours across leaves, as many
  // flows as up-links on the nonblocking tree and twice as many across the
  // 2:1 taper: measurably less there.
  const double random_nonblocking = tree_busbw(false, "random");
  const double random_tapered = tree_busbw(true, "random");
  EXPECT_LT(random_tapered, 0.8 * random_nonblocking);
  std::printf("ring allreduce busbw (GB/s, link %.2f): linear %.2f; random order: nonblocking %.2f, 2:1 taper %.2f\n",
              link_GBps, linear, random_nonblocking, random_tapered);
}

TEST(Collective, MultiRingAndTorus2dMatchAlphaBetaOnOneSwitch) {
  // 3 x 3 and 4 x 4 grids.  multi_ring: four rings (two Hamiltonian cycles,
  // both ways), a quarter of the buffer each: every step sends four
  // messages of S/4n that share the NIC, 2(n-1) steps.  torus_2d (square):
  // two instances on half the buffer each; every phase step sends one
  // message per instance: 2(C-1) row steps of S/2C and 2(R-1) column steps
  // of S/2n (the reduce-scatter and allgather in the rows, the allreduce
  // of the S/2C part in the columns, and the transposed instance alike).
  for (std::uint32_t m : {3u, 4u}) {
    const std::uint32_t n = m * m;
    for (std::uint64_t S : {1ull << 20, 16ull << 20}) {
      SCOPED_TRACE("grid " + std::to_string(m) + " S=" + std::to_string(S));
      const auto measure = [&](const char* algorithm) {
        Bench b(n);
        CollectiveParams p;
        p.algorithm = algorithm;
        p.sizes = {S};
        b.run(p);
        std::uint64_t payload = 0;
        for (const auto& msg : b.net->messages()) payload += msg.bytes;
        // Allreduce volume: 2(n-1)/n of S from every rank, whatever the rings.
        EXPECT_NEAR(static_cast<double>(payload), 2.0 * (n - 1) * static_cast<double>(S), 64.0 * n);
        return static_cast<double>(b.time_ps(0));
      };
      const double alpha = 2 * kLatency + kSwitch;
      const auto shared = [&](std::uint32_t k, std::uint64_t bytes) {  // k messages of `bytes` share the NIC
        return static_cast<double>(k * (message_ps(bytes) - 2 * kLatency - kSwitch)) + alpha;
      };
      const double multi = 2.0 * (n - 1) * shared(4, S / (4 * n));
      EXPECT_NEAR(measure("multi_ring"), multi, 0.02 * multi);
      const double torus = 2.0 * (m - 1) * shared(2, S / (2 * m)) + 2.0 * (m - 1) * shared(2, S / (2 * n));
      EXPECT_NEAR(measure("torus_2d"), torus, 0.02 * torus);
    }
  }
  // The two cycles of the construction visit every rank once and share no
  // edge (in either direction), so all four rings use distinct links of a
  // torus: square grids and the non-square shapes of the spec (8 x 4, 9 x 3).
  CollectiveParams p;
  p.algorithm = "multi_ring";
  p.sizes = {1 << 16};
  for (const auto& [rows, cols] : {std::pair{4u, 4u}, std::pair{8u, 4u}, std::pair{3u, 9u}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    const std::uint32_t n = rows * cols;
    Bench b(n);
    p.grid_rows = rows;
    b.run(p);
    std::set<std::pair<net::EndpointId, net::EndpointId>> pairs;
    std::map<std::pair<net::EndpointId, net::EndpointId>, int> directed;
    for (const auto& msg : b.net->messages()) {
      pairs.insert({std::min(msg.src, msg.dst), std::max(msg.src, msg.dst)});
      ++directed[{msg.src, msg.dst}];
    }
    EXPECT_EQ(pairs.size(), 2u * n);  // 2 cycles x n undirected edges, all distinct
    for (const auto& [a, c] : pairs) {  // torus neighbours: same row or column, adjacent
      const bool row = a / cols == c / cols && ((a + 1) % cols == c % cols || (c + 1) % cols == a % cols);
      const bool col = a % cols == c % cols && ((a / cols + 1) % rows == c / cols || (c / cols + 1) % rows == a / cols);
      EXPECT_TRUE(row || col) << a << "-" << c;
    }
    // Every directed edge carries the same number of messages (each ring
    // is a Hamiltonian cycle used once per direction): 2(n-1) steps.
    for (const auto& [e, k] : directed) EXPECT_EQ(k, static_cast<int>(2 * (n - 1))) << e.first << "->" << e.second;
  }
  p.grid_rows = 0;
  CollectiveParams bad = p;
  Bench b2(12);  // 12 ranks: no square grid
  EXPECT_THROW(b2.run(bad), util::ConfigError);
  bad.algorithm = "torus_2d";
  bad.grid_rows = 5;  // does not divide 12
  EXPECT_THROW(b2.run(bad), util::ConfigError);
  bad.grid_rows = 3;
  b2.run(bad);
  bad.algorithm = "multi_ring";  // 3 x 4: coprime sides, no diagonal-switch cycles
  EXPECT_THROW(b2.run(bad), util::ConfigError);
  bad.grid_rows = 2;  // 2 x 6: a side of 2 is not a torus ring
  EXPECT_THROW(b2.run(bad), util::ConfigError);
}

TEST(Collective, ChannelsSplitTheBufferIntoConcurrentInstances) {
  // C channels: C instances of the ring on S/C each, at once.  Every step
  // the C messages of S/(nC) share the sender's NIC, so on one switch a
  // step costs C serializations of S/(nC) plus one alpha; the volume is
  // the ring's whatever C.
  const std::uint32_t n = 8;
  const std::uint64_t S = 16ull << 20;
  const double alpha = 2 * kLatency + kSwitch;
  for (std::uint32_t C : {1u, 2u, 4u}) {
    SCOPED_TRACE("channels " + std::to_string(C));
    Bench b(n);
    CollectiveParams p;
    p.sizes = {S};
    p.channels = C;
    b.run(p);
    const double step = static_cast<double>(C * (message_ps(S / (n * C)) - 2 * kLatency - kSwitch)) + alpha;
    const double expect = 2.0 * (n - 1) * step;
    EXPECT_NEAR(static_cast<double>(b.time_ps(0)), expect, 0.02 * expect);
    std::uint64_t payload = 0;
    for (const auto& msg : b.net->messages()) payload += msg.bytes;
    EXPECT_EQ(b.net->messages().size(), static_cast<std::size_t>(2 * (n - 1) * n * C));
    EXPECT_NEAR(static_cast<double>(payload), 2.0 * (n - 1) * static_cast<double>(S), 2.0 * n * C);
  }
  // Too small to give every message of every channel a byte: an error.
  Bench b(n);
  CollectiveParams p;
  p.sizes = {n * 4};
  p.channels = 8;
  EXPECT_THROW(b.run(p), util::ConfigError);
}

TEST(Collective, EveryAlgorithmAtBothEndsOfTheSizeRange) {
  // The range, 64 KiB and 256 MiB, for the algorithms the other
  // tests time at middle sizes (the ring and pairwise cover it above).
  // Alpha-beta on one switch, derived per algorithm: a round in which
  // every busy NIC (or receiving link) carries k messages of b bytes takes
  // alpha + k serializations of b, `shared(k, b)`.  And every endpoint's
  // payload, from its NIC link's counters, against the algorithm's volume.
  const double alpha = 2 * kLatency + kSwitch;
  const auto ser = [](std::uint64_t bytes) { return static_cast<double>(message_ps(bytes) - 2 * kLatency - kSwitch); };
  const auto shared = [&](std::uint32_t k, std::uint64_t bytes) { return k * ser(bytes) + alpha; };
  // Children of heap position i among n.
  const auto children = [](std::uint32_t i, std::uint32_t n) {
    return static_cast<double>((2 * i + 1 < n) + (2 * i + 2 < n));
  };
  for (std::uint64_t S : {64ull << 10, 256ull << 20}) {
    const double s = static_cast<double>(S);
    struct Case {
      const char* what;
      std::uint32_t n;
      CollectiveOp op;
      const char* algorithm;
      double want;                               // ps
      std::function<double(std::uint32_t)> volume;  // payload bytes sent by rank r
    };
    std::int64_t hd = 0;  // halving-doubling: one message per step, S/2 ... S/8 and back
    for (std::uint64_t d = S / 2; d >= S / 8; d /= 2) hd += 2 * message_ps(d);
    const auto ring_volume = [s](std::uint32_t n) { return [s, n](std::uint32_t) { return 2.0 * (n - 1) * s / n; }; };
    const Case cases[] = {
        // Both directions at once: two messages of S/2n per NIC per step.
        {"bidirectional_ring", 8, CollectiveOp::Allreduce, "bidirectional_ring", 14 * shared(2, S / 16), ring_volume(8)},
        // All n-1 parts at once, twice for allreduce.
        {"direct allreduce", 8, CollectiveOp::Allreduce, "direct", 2 * shared(7, S / 8), ring_volume(8)},
        {"direct alltoall", 8, CollectiveOp::Alltoall, "direct", shared(7, S / 8), [s](std::uint32_t) { return 7 * s / 8; }},
        {"halving_doubling", 8, CollectiveOp::Allreduce, "halving_doubling", static_cast<double>(hd), ring_volume(8)},
        // Servers of 2: a step of S/2 inside, 2(4-1) steps of S/8 across,
        // a step of S/2 inside; S/2 + 6 S/8 + S/2 per rank.
        {"hierarchical", 8, CollectiveOp::Allreduce, "hierarchical",
         static_cast<double>(2 * message_ps(S / 2) + 6 * message_ps(S / 8)), [s](std::uint32_t) { return 1.75 * s; }},
        // 7 ranks, two complete trees of depth 2 (heap order, and reversed),
        // each over S/2: every round (leaves up, up to the root, root down,
        // down to the leaves) a busy NIC or receiving link carries two
        // halves.  A rank sends its half up (but the root) and down to each child, per tree.
        {"double_binary_tree", 7, CollectiveOp::Allreduce, "double_binary_tree", 4 * shared(2, S / 2),
         [&](std::uint32_t r) {
           return s / 2 * ((r != 0) + children(r, 7) + (r != 6) + children(6 - r, 7));
         }},
        // Broadcast down / reduce up a binary tree of 7 from rank 0: two
        // rounds of two whole buffers; a rank sends S per child (broadcast)
        // or S to its parent (reduce).
        {"tree broadcast", 7, CollectiveOp::Broadcast, "tree", 2 * shared(2, S), [&](std::uint32_t r) { return s * children(r, 7); }},
        {"tree reduce", 7, CollectiveOp::Reduce, "tree", 2 * shared(2, S), [s](std::uint32_t r) { return r == 0 ? 0.0 : s; }},
        // A chain 0 -> 1 -> ... -> 6, store and forward.
        {"ring broadcast", 7, CollectiveOp::Broadcast, "ring", 6.0 * static_cast<double>(message_ps(S)),
         [s](std::uint32_t r) { return r == 6 ? 0.0 : s; }},
        // 3 x 3: four rings of S/4, 2(9-1) steps of four S/36 messages;
        // torus_2d two halves, 2(3-1) row steps of two S/6 and 2(3-1)
        // column steps of two S/18.  The instances are not in lockstep: a
        // ring's next step leaves while the NIC still sends the others', so
        // the NIC never idles and only one alpha shows.  Both move a
        // ring's volume.
        {"multi_ring", 9, CollectiveOp::Allreduce, "multi_ring", 16 * 4 * ser(S / 36) + alpha, ring_volume(9)},
        {"torus_2d", 9, CollectiveOp::Allreduce, "torus_2d", 4 * 2 * ser(S / 6) + 4 * 2 * ser(S / 18) + alpha,
         ring_volume(9)},
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.what) + " S=" + std::to_string(S));
      Bench b(c.n);
      CollectiveParams p;
      p.op = c.op;
      p.algorithm = c.algorithm;
      p.sizes = {S};
      p.gpus_per_server = 2;
      b.run(p);
      EXPECT_NEAR(static_cast<double>(b.time_ps(0)), c.want, 0.02 * c.want);
      const auto& st = b.net->link_stats();
      for (std::uint32_t e = 0; e < c.n; ++e) {
        const net::LinkId nic = b.topo.node(b.topo.endpoint_node(e)).out[0];
        // Within a byte per message: parts round up.
        EXPECT_NEAR(static_cast<double>(st.tx_bytes[nic] - 64 * st.tx_packets[nic]), c.volume(e), 64.0) << "rank " << e;
      }
    }
  }
}

// append_collective counts an operation's sends before it builds them
// (collective_sends: its schedule run without storing it): the count must
// be what it then builds, sender by sender, for every algorithm,
// operation, chunking and channel count that plans here; and a plan over
// the budget is refused on the count, before a single record of it is
// allocated.  (It used
// to build until it had outgrown the budget: with the default memory limit
// a 16k-rank ring took 52 s and 14.7 GB of this machine before refusing.)
TEST(Collective, PlanIsCountedBeforeItIsBuilt) {
  std::size_t planned = 0;
  for (std::uint32_t n : {8u, 9u})
    for (const std::string& a : collective_algorithms())
      for (int o = 0; o <= static_cast<int>(kLastCollectiveOp); ++o)
        for (std::uint64_t chunk : {std::uint64_t{0}, std::uint64_t{5000}})
          for (std::uint32_t channels : {1u, 2u}) {
            CollectiveSpec spec;
            spec.op = static_cast<CollectiveOp>(o);
            spec.algorithm = a;
            spec.bytes = spec.op == CollectiveOp::Barrier ? 0 : 1u << 16;
            spec.chunk_bytes = chunk;
            spec.channels = channels;
            spec.gpus_per_server = 3;  // (hierarchical: three servers of 3 at n = 9)
            spec.root = 2;
            if (!implements(a, spec.op)) continue;
            try {
              check_collective(spec, n);
            } catch (const util::ConfigError&) {
              continue;  // (not on n ranks, or not with channels)
            }
            SCOPED_TRACE(a + " " + to_string(spec.op) + " n=" + std::to_string(n) + " chunk=" + std::to_string(chunk) +
                         " channels=" + std::to_string(channels));
            const Topology topo = star(n);
            core::Simulator sim(topo.node_count());
            net::Network net(topo, net::NetworkParams{}, sim);
            TaskGraph g(net, sim);
            std::vector<net::EndpointId> ranks(n);
            for (std::uint32_t r = 0; r < n; ++r) ranks[r] = r;
            try {
              append_collective(g, spec, ranks, {});
            } catch (const util::ConfigError& e) {
              // (topoopt_rings needs a TopoOpt fabric's rings)
              EXPECT_EQ(a, "topoopt_rings") << e.what();
              continue;
            }
            ASSERT_GE(net.messages().size(), n - 1);
            std::vector<std::uint64_t> built(n, 0);
            for (const net::Message& m : net.messages()) ++built[m.src];  // (rank r is endpoint r)
            EXPECT_EQ(collective_sends(spec, topo, ranks), built);
            ++planned;
          }
  EXPECT_GE(planned, 100u);
  // A ring allreduce over 4,096 ranks is 2 x 4,095 x 4,096 = 33.5 M sends,
  // at least 5.5 GB planned: refused with 1 GiB left, naming what it was,
  // before any record exists.
  const std::uint32_t n = 4096;
  const Topology topo = star(n);
  core::Simulator sim(topo.node_count());
  net::Network net(topo, net::NetworkParams{}, sim);
  net.set_plan_budget(std::uint64_t{1} << 30);
  TaskGraph g(net, sim);
  std::vector<net::EndpointId> ranks(n);
  for (std::uint32_t r = 0; r < n; ++r) ranks[r] = r;
  CollectiveSpec spec;
  spec.bytes = 1u << 20;
  try {
    append_collective(g, spec, ranks, {});
    ADD_FAILURE() << "planned 5.5 GB within 1 GiB";
  } catch (const PlanOverBudget& e) {
    EXPECT_NE(std::string(e.what()).find("one allreduce by ring over 4096 ranks is more than"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(net.messages().capacity(), 0u);
  EXPECT_EQ(g.size(), n);  // (its ranks' end joins, made before the count)
}

TEST(Collective, BarrierIsLogRoundsOfOneByte) {
  for (std::uint32_t n : {2u, 5u, 8u, 9u}) {
    Bench b(n);
    CollectiveParams p;
    p.op = CollectiveOp::Barrier;
    p.algorithm = "dissemination";
    p.iterations = 2;
    b.run(p);
    std::uint32_t rounds = 0;
    while ((1u << rounds) < n) ++rounds;
    for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(b.time_ps(i), rounds * message_ps(1)) << "n=" << n;
    EXPECT_EQ(b.net->messages().size(), 2u * rounds * n);
  }
}

TEST(Collective, SeveralCommunicatorsRunAtOnce) {
  // Two 4-rank ring allreduces on the two halves of an 8-port switch share
  // no link: each takes its time alone.  Two on the same 4 endpoints share
  // every NIC: each takes about twice as long.
  const std::uint64_t S = 4u << 20;
  const auto run_two = [&](std::vector<std::uint32_t> a, std::vector<std::uint32_t> c) {
    Bench b(8);
    b.sim = std::make_unique<core::Simulator>(b.topo.node_count());
    b.net = std::make_unique<net::Network>(b.topo, b.np, *b.sim);
    TaskGraph g(*b.net, *b.sim);
    CollectiveParams p;
    p.sizes = {S};
    p.placement = "list";
    p.endpoints = std::move(a);
    CollectiveBenchmark first(g, p, 0);
    p.endpoints = std::move(c);
    CollectiveBenchmark second(g, p, 1);
    g.start(SimTime::zero());
    b.sim->run_until(SimTime::max());
    EXPECT_EQ(g.completed(), g.size());
    std::vector<double> t;
    for (const CollectiveBenchmark* x : {&first, &second}) {
      SimTime lo = SimTime::max(), hi = SimTime::zero();
      for (net::MessageId m = x->instances()[0].first; m < x->instances()[0].last; ++m) {
        lo = std::min(lo, b.net->messages()[m].post_time);
        hi = std::max(hi, b.net->messages()[m].end_time);
      }
      t.push_back(static_cast<double>((hi - lo).ps()));
    }
    return t;
  };
  const double alone = static_cast<double>(6 * message_ps(S / 4));
  for (double t : run_two({0, 1, 2, 3}, {4, 5, 6, 7})) EXPECT_EQ(t, alone);
  for (double t : run_two({0, 1, 2, 3}, {3, 2, 1, 0})) {
    EXPECT_GT(t, 1.8 * alone);
    EXPECT_LT(t, 2.1 * alone);
  }
}

// An unknown algorithm name is refused with a ConfigError naming the key,
// by the check and by the planner itself: it once ran as a ring.
TEST(Collective, UnknownAlgorithmIsRefusedNotRunAsARing) {
  CollectiveSpec spec;
  spec.algorithm = "rnig";
  spec.bytes = 1 << 20;
  try {
    check_collective(spec, 4, "jobs");
    ADD_FAILURE() << "check_collective accepted 'rnig'";
  } catch (const util::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("jobs.algorithm: unknown collective algorithm 'rnig'", 0), 0u) << e.what();
  }
  const Topology topo = star(4);
  core::Simulator sim(topo.node_count());
  net::Network net(topo, net::NetworkParams{}, sim);
  TaskGraph g(net, sim);
  try {
    append_collective(g, spec, {0, 1, 2, 3}, {});
    ADD_FAILURE() << "append_collective planned 'rnig'";
  } catch (const util::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("workload.algorithm: unknown collective algorithm 'rnig'", 0), 0u)
        << e.what();
  }
  EXPECT_TRUE(net.messages().empty());
  // A known algorithm for another operation is refused as well.
  spec.algorithm = "tree";
  EXPECT_THROW(append_collective(g, spec, {0, 1, 2, 3}, {}), util::ConfigError);
  // Every registered name implements at least one operation.
  for (const std::string& a : collective_algorithms()) {
    bool any = false;
    for (int op = 0; op <= static_cast<int>(CollectiveOp::Barrier); ++op)
      any = any || implements(a, static_cast<CollectiveOp>(op));
    EXPECT_TRUE(any) << a;
  }
  EXPECT_FALSE(implements("rnig", CollectiveOp::Allreduce));
  // The names the configuration accepts are the registry's (plus "auto").
  const config::ParamDecl* d = config::find_parameter("workload.algorithm");
  ASSERT_NE(d, nullptr);
  std::set<std::string> declared(d->choices.begin(), d->choices.end());
  declared.erase("auto");
  const auto names = collective_algorithms();
  EXPECT_EQ(declared, std::set<std::string>(names.begin(), names.end()));
  for (const char* key : {"workload.dp_algorithm", "workload.tp_algorithm"})
    for (const std::string& a : config::find_parameter(key)->choices)
      EXPECT_TRUE(implements(a, CollectiveOp::Allreduce)) << key << " = " << a;
}

TEST(Collective, CommunicatorPlacementsAndErrors) {
  CollectiveParams p;
  p.ranks = 4;
  EXPECT_EQ(communicator(p, 10), (std::vector<net::EndpointId>{0, 1, 2, 3}));
  p.placement = "random";
  const auto r = communicator(p, 10);
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(communicator(p, 10), r);  // seeded
  p.placement = "list";
  p.endpoints = {7, 2, 9};
  EXPECT_EQ(communicator(p, 10), (std::vector<net::EndpointId>{7, 2, 9}));
  p.endpoints = {7, 7};
  EXPECT_THROW(communicator(p, 10), util::ConfigError);
  p.endpoints = {7, 12};
  EXPECT_THROW(communicator(p, 10), util::ConfigError);
  p.placement = "linear";
  p.ranks = 11;
  EXPECT_THROW(communicator(p, 10), util::ConfigError);
  // 3 servers of 4 GPUs: by_server is consecutive, by_rail GPU 0 of each server first.
  p.ranks = 0;
  p.gpus_per_server = 4;
  p.placement = "by_server";
  EXPECT_EQ(communicator(p, 12), (std::vector<net::EndpointId>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  p.placement = "by_rail";
  EXPECT_EQ(communicator(p, 12), (std::vector<net::EndpointId>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  p.ranks = 5;
  EXPECT_EQ(communicator(p, 12), (std::vector<net::EndpointId>{0, 4, 8, 1, 5}));
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::Allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::Allgather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::Broadcast, 8), 1.0);
}

}  // namespace
}  // namespace fabricsim::workload

namespace fabricsim::workload {
namespace {

// The pool's sparse shuffle draws what shuffling the whole free list would,
// and its cursors skip what earlier jobs took.
TEST(EndpointPool, ShuffleAndCursorsMatchTheDenseLists) {
  EndpointPool pool(50);
  for (net::EndpointId e : {3u, 4u, 17u, 30u, 49u}) pool.take(e);
  std::vector<net::EndpointId> free;
  for (net::EndpointId e = 0; e < 50; ++e)
    if (pool.is_free(e)) free.push_back(e);
  ASSERT_EQ(pool.free_count(), free.size());
  for (std::uint32_t k = 0; k < free.size(); ++k) EXPECT_EQ(pool.kth_free(k), free[k]);
  util::RandomStream a(7, 1), b(7, 1);
  for (std::size_t i = 0; i < 12; ++i) std::swap(free[i], free[i + a.below(free.size() - i)]);
  EXPECT_EQ(pool.shuffled(12, b), std::vector<net::EndpointId>(free.begin(), free.begin() + 12));
  EXPECT_EQ(pool.first_free(4, "id"), (std::vector<net::EndpointId>{0, 1, 2, 5}));
  const auto reversed = [] {
    std::vector<net::EndpointId> v(50);
    for (net::EndpointId e = 0; e < 50; ++e) v[e] = 49 - e;
    return v;
  };
  EXPECT_EQ(pool.first_free(3, "rev", reversed), (std::vector<net::EndpointId>{48, 47, 46}));
  for (net::EndpointId e : {0u, 1u, 48u}) pool.take(e);
  EXPECT_EQ(pool.first_free(3, "id"), (std::vector<net::EndpointId>{2, 5, 6}));
  EXPECT_EQ(pool.first_free(2, "rev"), (std::vector<net::EndpointId>{47, 46}));
}

}  // namespace
}  // namespace fabricsim::workload
