// Messages created at ids set aside, in any order (Network::reserve_ids,
// create_at: what a streaming trace does, docs/architecture.md "Streaming
// traces"): the same run as when they are created in order, in every
// model.  A message's ECMP source port, and so its path on a leaf-spine of
// four spines, is a function of its id: created out of order, each must
// still be the message of its id.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/flow_network.hpp"
#include "fabricsim/net/flow_paths.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {
namespace {

using core::SimTime;

enum class Model { Packet, Flow, Analytic };

struct Fabric {
  Topology topo;
  std::unique_ptr<core::Simulator> sim;
  std::unique_ptr<ShortestPaths> paths;
  std::unique_ptr<Network> net;
  explicit Fabric(Model m) {
    LeafSpineParams p;
    p.leaves = 2;
    p.spines = 4;
    p.servers_per_leaf = 4;
    p.gpus_per_server = 1;
    p.radix = 8;
    topo = build_leaf_spine(p);
    sim = std::make_unique<core::Simulator>(topo.node_count());
    switch (m) {
      case Model::Packet: net = std::make_unique<Network>(topo, NetworkParams{}, *sim); break;
      case Model::Flow:
        paths = std::make_unique<ShortestPaths>(topo, PathSplit::Single);
        net = std::make_unique<FlowNetwork>(topo, FlowParams{}, *paths, *sim);
        break;
      case Model::Analytic:
        paths = std::make_unique<ShortestPaths>(topo, PathSplit::Single);
        net = std::make_unique<AnalyticNetwork>(topo, AnalyticParams{}, *paths, *sim);
        break;
    }
  }
};

struct Want {
  EndpointId src, dst;
  std::uint64_t bytes;
  SimTime at;
};

TEST(MessageIds, CreatedOutOfOrderRunAsInOrder) {
  std::mt19937_64 rng(5);
  std::vector<Want> msgs;
  for (int k = 0; k < 60; ++k) {
    const auto src = static_cast<EndpointId>(rng() % 4);
    const auto dst = static_cast<EndpointId>(4 + rng() % 4);  // across the spines
    msgs.push_back({src, dst, 1 + rng() % 200'000, SimTime::from_ns(static_cast<std::int64_t>(rng() % 20'000))});
  }
  std::vector<std::size_t> order(msgs.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::shuffle(order.begin(), order.end(), rng);
  for (Model m : {Model::Packet, Model::Flow, Model::Analytic}) {
    SCOPED_TRACE(static_cast<int>(m));
    Fabric a(m), b(m);
    // One message before the trace's, in both: the set-aside ids start at 1.
    (void)a.net->create(7, 0, 1000);
    (void)b.net->create(7, 0, 1000);
    for (const Want& w : msgs) (void)a.net->create(w.src, w.dst, w.bytes);
    const MessageId first = b.net->reserve_ids(msgs.size());
    ASSERT_EQ(first, 1u);
    ASSERT_EQ(b.net->messages().size(), msgs.size() + 1);
    EXPECT_EQ(b.net->messages()[5].bytes, 0u);  // blank until created
    EXPECT_EQ(b.net->messages()[5].post_time, SimTime::max());
    for (std::size_t k : order) b.net->create_at(first + static_cast<MessageId>(k), msgs[k].src, msgs[k].dst, msgs[k].bytes);
    for (Fabric* r : {&a, &b}) {
      r->net->post(0, SimTime::zero());
      for (std::size_t k = 0; k < msgs.size(); ++k) r->net->post(static_cast<MessageId>(k + 1), msgs[k].at);
      r->sim->run_until(SimTime::max());
      r->net->finish(r->sim->now());
    }
    const auto& ma = a.net->messages();
    const auto& mb = b.net->messages();
    std::size_t moved = 0;  // messages whose source port differs from the first's (paths differ by id)
    for (std::size_t k = 0; k < ma.size(); ++k) {
      SCOPED_TRACE(k);
      EXPECT_EQ(mb[k].src, ma[k].src);
      EXPECT_EQ(mb[k].dst, ma[k].dst);
      EXPECT_EQ(mb[k].bytes, ma[k].bytes);
      EXPECT_EQ(mb[k].flow_port, ma[k].flow_port);
      ASSERT_NE(ma[k].end_time, SimTime::max());
      EXPECT_EQ(mb[k].end_time, ma[k].end_time);
      moved += ma[k].flow_port != ma[1].flow_port;
    }
    EXPECT_GT(moved, 0u);
    EXPECT_EQ(b.net->link_stats().tx_bytes, a.net->link_stats().tx_bytes);
  }
}

}  // namespace
}  // namespace fabricsim::net
