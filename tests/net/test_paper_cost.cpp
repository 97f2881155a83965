// Tests of the TopoOpt paper's cost model (paper_cost.hpp).
//
// Expected values come from the spec (../shared/spec/topoopt.md §2.3, §3):
// Table 2 copied below, the Fat-tree structural facts of §3.2 (k = 8: 128
// hosts, 80 switches, 640 ports; the paper's k^3/4 server counts), totals
// worked out by hand in the comments, and a cost-equivalent search redone
// here from the copied table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/net/paper_cost.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {
namespace {

using util::ConfigError;

// Table 2 (spec §3.1): speed, transceiver, NIC, switch port.
struct Row {
  double gbps, xcvr, nic, port;
};
const std::vector<Row> kTable = {
    {10, 20, 185, 94}, {25, 39, 185, 144}, {40, 39, 354, 144}, {100, 99, 678, 187}, {200, 198, 815, 374},
};

void expect_row(double gbps, const Row& row) {
  SCOPED_TRACE("gbps " + std::to_string(gbps));
  const PaperPrices p = paper_prices(gbps);
  EXPECT_EQ(p.transceiver, row.xcvr);
  EXPECT_EQ(p.nic, row.nic);
  EXPECT_EQ(p.switch_port, row.port);
  // Optical parts do not grow with the link speed.
  EXPECT_EQ(p.patch_panel_port, 100);
  EXPECT_EQ(p.ocs_port, 520);
  EXPECT_EQ(p.switch_1x2, 25);
}

/// The test's own pricing of one link: the table row at or above gbps up to
/// 200 G, otherwise ceil(gbps/100) copies of the 100 G row; fibres per cable
/// 1 up to 100 G, ceil(gbps/100) above.
struct LinkPrice {
  double xcvr, nic, port, fibres;
};
LinkPrice local_price(double gbps) {
  const double lanes = gbps <= 100 ? 1.0 : std::ceil(gbps / 100);
  if (gbps <= 200) {
    for (const Row& r : kTable) {
      if (gbps <= r.gbps) return {r.xcvr, r.nic, r.port, lanes};
    }
  }
  return {lanes * 99, lanes * 678, lanes * 187, lanes};
}

/// The test's own k-ary Fat-tree cost: hosts NICs and transceivers, 5k^3/4
/// ports with transceivers, hosts + k^3/2 cables.
double local_fat_tree_total(double k, double hosts, double gbps, double fibre = 150) {
  const LinkPrice p = local_price(gbps);
  const double ports = 5 * k * k * k / 4;
  const double cables = hosts + k * k * k / 2;
  return hosts * (p.nic + p.xcvr) + ports * (p.port + p.xcvr) + cables * p.fibres * fibre;
}

double local_topoopt_total(double n, double d, double gbps, double fibre = 150) {
  const LinkPrice p = local_price(gbps);
  return n * d * (p.nic + p.xcvr) + 2 * n * d * 100 + n * d * 25 + n * d * p.fibres * fibre;
}

void expect_config_error(const std::function<void()>& f, const std::string& key) {
  try {
    f();
    ADD_FAILURE() << "no ConfigError, expected one naming " << key;
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(key + ":", 0), 0u) << e.what();
  }
}

TEST(PaperPrices, TableRowsAtTheirSpeeds) {
  for (const Row& r : kTable) expect_row(r.gbps, r);
}

TEST(PaperPrices, SpeedBetweenRowsTakesTheNextRowAbove) {
  expect_row(80, kTable[3]);  // 80 -> 100 G row
  expect_row(1, kTable[0]);   // below the table -> 10 G row
  expect_row(10.5, kTable[1]);
  expect_row(30, kTable[2]);
  expect_row(100.5, kTable[4]);
  expect_row(160, kTable[4]);  // 160 -> 200 G row
}

TEST(PaperPrices, AboveTwoHundredIsParallelHundredGigParts) {
  // 400 G: 4 x (transceiver 99, NIC 678, port 187).
  expect_row(400, {400, 4 * 99, 4 * 678, 4 * 187});
  // 201 and 300 G: 3 lanes; 320 G: 4 lanes; 1600 G: 16 lanes.
  expect_row(201, {201, 3 * 99, 3 * 678, 3 * 187});
  expect_row(300, {300, 3 * 99, 3 * 678, 3 * 187});
  expect_row(320, {320, 4 * 99, 4 * 678, 4 * 187});
  expect_row(1600, {1600, 16 * 99, 16 * 678, 16 * 187});
  // The 200 G row's transceiver and port are exactly 2 x 100 G.
  EXPECT_EQ(paper_prices(200).transceiver, 2 * paper_prices(100).transceiver);
  EXPECT_EQ(paper_prices(200).switch_port, 2 * paper_prices(100).switch_port);
}

TEST(PaperPrices, Lanes) {
  EXPECT_EQ(paper_lanes(10), 1u);
  EXPECT_EQ(paper_lanes(100), 1u);
  EXPECT_EQ(paper_lanes(100.5), 2u);
  EXPECT_EQ(paper_lanes(160), 2u);
  EXPECT_EQ(paper_lanes(200), 2u);
  EXPECT_EQ(paper_lanes(201), 3u);
  EXPECT_EQ(paper_lanes(400), 4u);
  EXPECT_EQ(paper_lanes(1600), 16u);
}

TEST(PaperPrices, BadSpeedsThrow) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -0.0, -1.0, -inf, inf, std::numeric_limits<double>::quiet_NaN(), 1e300}) {
    SCOPED_TRACE(bad);
    expect_config_error([&] { paper_prices(bad); }, "topology.link.bandwidth_gbps");
    expect_config_error([&] { paper_lanes(bad); }, "topology.link.bandwidth_gbps");
    expect_config_error([&] { topoopt_cost(128, 4, bad); }, "topology.link.bandwidth_gbps");
    expect_config_error([&] { switched_cost(1, 1, 1, bad); }, "topology.link.bandwidth_gbps");
  }
  expect_config_error([&] { topoopt_cost(0, 4, 100); }, "topology.servers");
  expect_config_error([&] { topoopt_cost(128, 0, 100); }, "topology.degree");
  expect_config_error([&] { ocs_reconfig_cost(0, 4, 100); }, "topology.servers");
  expect_config_error([&] { topoopt_cost(128, 4, 100, -1); }, "cost.fibre_usd");
  expect_config_error([&] { topoopt_cost(128, 4, 100, std::nan("")); }, "cost.fibre_usd");
}

TEST(PaperCost, TopoOpt128x4At100G) {
  // n*d = 512 interfaces:
  //   NICs          512 * 678          = 347,136
  //   transceivers  512 * 99           =  50,688   (NIC + xcvr: 512 * 777 = 397,824)
  //   patch panels  2 * 512 * 100      = 102,400
  //   1x2 switches  512 * 25           =  12,800   (optical: 115,200)
  //   fibres        512 * 150          =  76,800
  //   total                              589,824
  const PaperCost c = topoopt_cost(128, 4, 100);
  EXPECT_EQ(c.nics, 347136);
  EXPECT_EQ(c.transceivers, 50688);
  EXPECT_EQ(c.switch_ports, 0);
  EXPECT_EQ(c.optical, 115200);
  EXPECT_EQ(c.fibres, 76800);
  EXPECT_EQ(c.total(), 589824);
  EXPECT_EQ(c.total(), 128 * 4 * (678 + 99) + 2 * 128 * 4 * 100 + 128 * 4 * 25 + 128 * 4 * 150);
}

TEST(PaperCost, TopoOpt128x8At200G) {
  // 1024 interfaces at 200 G (2 fibres per cable):
  //   NIC + xcvr    1024 * (815 + 198) = 1,037,312
  //   optical       1024 * (200 + 25)  =   230,400
  //   fibres        1024 * 2 * 150     =   307,200
  //   total                              1,574,912
  const PaperCost c = topoopt_cost(128, 8, 200);
  EXPECT_EQ(c.nics + c.transceivers, 1037312);
  EXPECT_EQ(c.optical, 230400);
  EXPECT_EQ(c.fibres, 307200);
  EXPECT_EQ(c.total(), 1574912);
}

TEST(PaperCost, TopoOptAt400GUsesFourLanes) {
  // 16 servers x 2 interfaces at 400 G: 32 * (4*678 + 4*99) + 32 * 225 + 32 * 4 * 150
  //   = 32 * 3108 + 7,200 + 19,200 = 99,456 + 26,400 = 125,856.
  EXPECT_EQ(topoopt_cost(16, 2, 400).total(), 125856);
}

TEST(PaperCost, OcsReconfig) {
  // 512 * 777 + 512 * 520 + 512 * 150 = 397,824 + 266,240 + 76,800 = 740,864.
  const PaperCost c = ocs_reconfig_cost(128, 4, 100);
  EXPECT_EQ(c.optical, 266240);
  EXPECT_EQ(c.total(), 740864);
}

TEST(PaperCost, FibrePriceIsAParameter) {
  // Free fibres remove exactly the fibre term.
  EXPECT_EQ(topoopt_cost(128, 4, 100, 0).total(), 589824 - 76800);
  EXPECT_EQ(topoopt_cost(128, 4, 100, 300).fibres, 512 * 300);
}

TEST(PaperCost, SwitchedFabric) {
  // 3 hosts, 7 ports, 5 cables at 40 G: 3 * (354 + 39) + 7 * (144 + 39) + 5 * 150 = 1,179 + 1,281 + 750.
  const PaperCost c = switched_cost(3, 7, 5, 40);
  EXPECT_EQ(c.nics, 3 * 354);
  EXPECT_EQ(c.transceivers, 10 * 39);
  EXPECT_EQ(c.switch_ports, 7 * 144);
  EXPECT_EQ(c.optical, 0);
  EXPECT_EQ(c.fibres, 750);
  EXPECT_EQ(c.total(), 3210);
  EXPECT_EQ(switched_cost(0, 0, 0, 100).total(), 0);
}

TEST(FatTree, KEightShape) {
  const FatTreeShape s = paper_fat_tree(128);
  EXPECT_EQ(s.k, 8u);
  EXPECT_EQ(s.hosts, 128u);
  EXPECT_EQ(s.switches, 80u);
  EXPECT_EQ(s.switch_ports, 640u);
  EXPECT_EQ(s.cables, 128u + 256u);  // host links + k^3/2 switch-to-switch
}

TEST(FatTree, PaperServerCounts) {
  const std::vector<std::pair<std::uint64_t, std::uint32_t>> cases = {
      {128, 8}, {432, 12}, {1024, 16}, {2000, 20}, {4394, 26}};
  for (const auto& [hosts, k] : cases) {
    SCOPED_TRACE(hosts);
    const FatTreeShape s = paper_fat_tree(hosts);
    const std::uint64_t kk = k;
    EXPECT_EQ(s.k, k);
    EXPECT_EQ(kk * kk * kk / 4, hosts);  // the paper's counts fill their trees exactly
    EXPECT_EQ(s.switches, 5 * kk * kk / 4);
    EXPECT_EQ(s.switch_ports, 5 * kk * kk * kk / 4);
    EXPECT_EQ(s.cables, hosts + kk * kk * kk / 2);
  }
}

TEST(FatTree, PartlyFilledTreeKeepsTheWholeTreesSwitches) {
  // 129 hosts need k = 10 (room for 250): 125 switches, 1250 ports, 129 + 500 cables.
  const FatTreeShape s = paper_fat_tree(129);
  EXPECT_EQ(s.k, 10u);
  EXPECT_EQ(s.hosts, 129u);
  EXPECT_EQ(s.switches, 125u);
  EXPECT_EQ(s.switch_ports, 1250u);
  EXPECT_EQ(s.cables, 629u);
  EXPECT_EQ(paper_fat_tree(1).k, 2u);
  EXPECT_EQ(paper_fat_tree(2).k, 2u);
  EXPECT_EQ(paper_fat_tree(3).k, 4u);
  // Smallest even k for every count up to 20,000.
  for (std::uint64_t h = 1; h <= 20000; ++h) {
    const std::uint64_t k = paper_fat_tree(h).k;
    ASSERT_EQ(k % 2, 0u) << h;
    ASSERT_GE(k * k * k / 4, h) << h;
    if (k > 2) {
      ASSERT_LT((k - 2) * (k - 2) * (k - 2) / 4, h) << h;
    }
  }
  // The largest supported tree, k = 2^20.
  const std::uint64_t big = (std::uint64_t{1} << 60) / 4;
  EXPECT_EQ(paper_fat_tree(big).k, 1u << 20);
  expect_config_error([] { paper_fat_tree(0); }, "topology.servers");
  expect_config_error([&] { paper_fat_tree(big + 1); }, "topology.servers");
}

TEST(FatTree, CostAt100And400G) {
  // k = 8 at 100 G: 128 * (678 + 99) + 640 * (187 + 99) + 384 * 150
  //   = 99,456 + 183,040 + 57,600 = 340,096.
  EXPECT_EQ(paper_fat_tree_cost(128, 100).total(), 340096);
  // At 400 G (4 x 100 G parts, 4 fibres per cable): 128 * (2712 + 396) + 640 * (748 + 396) + 384 * 4 * 150
  //   = 397,824 + 732,160 + 230,400 = 1,360,384.
  EXPECT_EQ(paper_fat_tree_cost(128, 400).total(), 1360384);
  EXPECT_EQ(local_fat_tree_total(8, 128, 400), 1360384);
}

TEST(CostEquivalent, SpeedList) {
  const std::vector<double> want = {10, 25, 40, 80, 100, 160, 200, 320, 400, 800, 1600};
  EXPECT_EQ(fat_tree_speeds(), want);
}

/// The chosen speed's tree costs no more than TopoOpt, and every faster listed
/// speed's tree costs more, all priced here from the copied table.
void expect_cost_equivalent(std::uint64_t n, std::uint32_t d, double gbps) {
  SCOPED_TRACE("n " + std::to_string(n) + " d " + std::to_string(d) + " B " + std::to_string(gbps));
  const CostEquivalent eq = cost_equivalent_fat_tree(n, d, gbps);
  const double topo = local_topoopt_total(static_cast<double>(n), d, gbps);
  EXPECT_EQ(eq.topoopt.total(), topo);
  std::uint64_t k = 2;
  while (k * k * k / 4 < n) k += 2;
  const auto kd = static_cast<double>(k);
  const auto nd = static_cast<double>(n);
  const std::vector<double> speeds = {10, 25, 40, 80, 100, 160, 200, 320, 400, 800, 1600};
  bool chosen_seen = eq.gbps == 0;
  for (double s : speeds) {
    const double tree = local_fat_tree_total(kd, nd, s);
    if (s == eq.gbps) {
      chosen_seen = true;
      EXPECT_LE(tree, topo) << s;
      EXPECT_EQ(eq.fat_tree.total(), tree);
    } else if (s > eq.gbps) {
      EXPECT_GT(tree, topo) << s;
    }
  }
  EXPECT_TRUE(chosen_seen) << eq.gbps;
}

TEST(CostEquivalent, PaperCases) {
  // (128, 4, 100 G): TopoOpt 589,824; the 100 G tree costs 340,096 and the
  // next listed speed, 160 G (200 G row, 2 fibres per cable), costs
  // 128 * 1013 + 640 * 572 + 384 * 2 * 150 = 129,664 + 366,080 + 115,200 = 610,944 > 589,824.
  const CostEquivalent a = cost_equivalent_fat_tree(128, 4, 100);
  EXPECT_EQ(a.gbps, 100);
  EXPECT_EQ(a.topoopt.total(), 589824);
  EXPECT_EQ(a.fat_tree.total(), 340096);
  EXPECT_GT(local_fat_tree_total(8, 128, 160), 589824);
  // (128, 8, 200 G): TopoOpt 1,574,912; the 400 G tree 1,360,384; 800 G is
  // 128 * (5424 + 792) + 640 * (1496 + 792) + 384 * 8 * 150 = 795,648 + 1,464,320 + 460,800 = 2,720,768.
  const CostEquivalent b = cost_equivalent_fat_tree(128, 8, 200);
  EXPECT_EQ(b.gbps, 400);
  EXPECT_EQ(b.topoopt.total(), 1574912);
  EXPECT_EQ(b.fat_tree.total(), 1360384);
  EXPECT_EQ(local_fat_tree_total(8, 128, 800), 2720768);
  expect_cost_equivalent(128, 4, 100);
  expect_cost_equivalent(128, 8, 200);
}

TEST(CostEquivalent, PaperGrid) {
  for (std::uint64_t n : {128u, 432u, 1024u, 2000u, 4394u}) {
    for (std::uint32_t d : {4u, 6u, 8u, 10u}) {
      for (double b : {10.0, 25.0, 40.0, 100.0, 200.0}) expect_cost_equivalent(n, d, b);
    }
  }
}

TEST(CostEquivalent, NoListedSpeedFits) {
  // One 10 G interface per server: TopoOpt 128 * (185 + 20 + 200 + 25 + 150) = 74,240; the 10 G tree
  // 128 * 205 + 640 * 114 + 384 * 150 = 26,240 + 72,960 + 57,600 = 156,800.
  const CostEquivalent eq = cost_equivalent_fat_tree(128, 1, 10);
  EXPECT_EQ(eq.gbps, 0);
  EXPECT_EQ(eq.topoopt.total(), 74240);
  EXPECT_EQ(eq.fat_tree.total(), 156800);
  expect_cost_equivalent(128, 1, 10);
}

// paper_cost of built fabrics, priced cable by cable, against the formulas:
// the k = 8 fat tree the builder makes for 128 endpoints is the paper's
// k-ary tree (paper_fat_tree_cost), at 100 G and at 400 G (4 lanes); the
// TopoOpt rings of 128 servers x 4 interfaces are TopoOpt(128, 4, B).
TEST(PaperCostOfTopology, BuiltFatTreeIsTheKAryFormula) {
  for (double gbps : {100.0, 400.0}) {
    FatTreeParams p;
    p.endpoints = 128;
    p.radix = 8;
    p.host.bandwidth_gbps = p.fabric.bandwidth_gbps = gbps;
    const Topology t = build_fat_tree(p);
    ASSERT_EQ(t.switch_count(), 80u);
    EXPECT_DOUBLE_EQ(paper_cost(t).total(), paper_fat_tree_cost(128, gbps).total()) << gbps;
  }
}

TEST(PaperCostOfTopology, BuiltTopoOptIsTheFormula) {
  for (bool bidir : {false, true}) {
    TopoOptParams p;
    p.servers = 128;
    p.degree = 4;
    p.bidirectional_rings = bidir;
    p.link.bandwidth_gbps = 100;
    const Topology t = build_topoopt(p);
    EXPECT_DOUBLE_EQ(paper_cost(t).total(), topoopt_cost(128, 4, 100).total()) << bidir;
  }
}

// Servers of 4 GPUs behind each NIC (with_shared_nics) are priced as the
// fabric without them: the server node's cable end is still a NIC, its GPU
// links are intra-server.  16 servers on a radix-8 two-level tree: 16 host
// cables (NIC + port + 2 transceivers) and 16 leaf-spine cables (2 ports +
// 2 transceivers), a fibre each, at 100 G: 16 x (678 + 187 + 2 x 99) +
// 16 x (2 x 187 + 2 x 99) + 32 x 150 = 17,008 + 9,152 + 4,800 = 30,960.
TEST(PaperCostOfTopology, ServersBehindOneNicPriceAsTheirNic) {
  FatTreeParams p;
  p.endpoints = 16;
  p.radix = 8;
  p.host.bandwidth_gbps = p.fabric.bandwidth_gbps = 100;
  const Topology base = build_fat_tree(p);
  LinkParams intra;
  intra.bandwidth_gbps = 2400;
  const Topology t = with_shared_nics(base, 4, intra);
  EXPECT_EQ(t.endpoint_count(), 64u);
  EXPECT_EQ(t.physical_switches(), base.physical_switches());
  EXPECT_DOUBLE_EQ(paper_cost(base).total(), 30960.0);
  EXPECT_DOUBLE_EQ(paper_cost(t).total(), 30960.0);
}

}  // namespace
}  // namespace fabricsim::net
