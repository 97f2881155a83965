// The TopoOpt paper's cost model (spec: ../shared/spec/topoopt.md §2.3 and
// §3): Table 2's component prices and the costing rules of §3.2 for
// TopoOpt, OCS-reconfig and full-bisection Fat-trees, plus the search for
// the cost-equivalent Fat-tree of §2.3.  Pure functions of their arguments;
// nothing here builds a Topology.
//
// Readings taken here (the spec's ⚠ notes and [fabricsim] decisions, §3):
//   - Speeds up to 200 Gb/s use Table 2's row for the next listed speed at or
//     above the link's (80 -> the 100 G row, 160 -> the 200 G row).
//   - Above 200 Gb/s a link is ceil(gbps/100) parallel 100 G lanes: that many
//     100 G transceivers, switch ports and NICs (the paper's "200 G as
//     2 x 100 G" rule generalised; NICs as the same multiple of the 100 G
//     NIC, spec §3 note 2).
//   - Fibres: one cable per server interface (TopoOpt, OCS) or per host link
//     and switch-to-switch link (Fat-trees), each cable carrying one fibre per
//     100 G lane: 1 up to 100 Gb/s, ceil(gbps/100) above (so 2 at 160 and
//     200 Gb/s).  The paper prices 200 G as 2 x 100 G with "more 100 Gbps
//     ports and fibers", and §3's generalisation names fibres with ports and
//     transceivers; this keeps the 200 G row and the > 200 G rule consistent.
//   - Optical parts (patch-panel and OCS ports, 1x2 switches) do not depend
//     on the link speed.
//   - Fibre price: the expected $0.30/m x U(0, 1000) m = $150 by default; a
//     caller with a seeded draw passes its own mean.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim::net {

/// Table 2 of the TopoOpt paper (US$), at one link bandwidth.
struct PaperPrices {
  double transceiver = 0, nic = 0, switch_port = 0, patch_panel_port = 100, ocs_port = 520, switch_1x2 = 25;
};

/// Prices of a link of `gbps`: the table's row for 10, 25, 40, 100, 200 Gb/s; a speed below 200 that is not in
/// the table takes the next listed speed above it (e.g. 80 -> the 100 G row); above 200 Gb/s, ceil(gbps/100)
/// parallel 100 G transceivers, switch ports and NICs.  Optical parts do not depend on speed.  gbps <= 0, not
/// finite, or more than 2^32 - 1 lanes: throws util::ConfigError naming topology.link.bandwidth_gbps.
PaperPrices paper_prices(double gbps);

/// Parallel 100 G lanes, and so fibres per cable, of a link of `gbps`: 1 up to 100 Gb/s, ceil(gbps/100) above
/// (2 for 200 G, 4 for 400 G).  Same errors as paper_prices.
std::uint32_t paper_lanes(double gbps);

struct PaperCost {
  double nics = 0, transceivers = 0, switch_ports = 0, optical = 0, fibres = 0;
  double total() const { return nics + transceivers + switch_ports + optical + fibres; }
};

/// Expected price of one fibre: $0.30/m x U(0, 1000) m.
inline constexpr double kFibreUsd = 150.0;

/// TopoOpt(n, d, B): n*d NICs and transceivers, 2*n*d patch-panel ports (look-ahead design, spec §2.2), n*d 1x2
/// switches, one cable per interface (paper_lanes(B) fibres each).  servers or degree 0: util::ConfigError
/// naming topology.servers / topology.degree; fibre_usd negative or not finite: naming cost.fibre_usd.
PaperCost topoopt_cost(std::uint64_t servers, std::uint32_t degree, double gbps, double fibre_usd = kFibreUsd);

/// OCS-reconfig: n*d NICs and transceivers, n*d OCS ports, one cable per interface.  Errors as topoopt_cost.
PaperCost ocs_reconfig_cost(std::uint64_t servers, std::uint32_t degree, double gbps, double fibre_usd = kFibreUsd);

/// A switched fabric: `hosts` host links (one NIC + transceiver each), `switch_ports` switch ports (port +
/// transceiver each), `cables` cables (host links plus switch-to-switch links, paper_lanes(gbps) fibres each),
/// every link `gbps`.  Zero counts are allowed (they cost nothing).
PaperCost switched_cost(std::uint64_t hosts, std::uint64_t switch_ports, std::uint64_t cables, double gbps,
                        double fibre_usd = kFibreUsd);

/// The k-ary full-bisection Fat-tree of k-port switches that the paper prices: k even, room for k^3/4 hosts,
/// 5k^2/4 switches, 5k^3/4 switch ports, k^3/2 switch-to-switch cables.
///   k             the smallest even k >= 2 with k^3/4 >= hosts;
///   hosts         the hosts asked for (a partly filled tree keeps its unused edge ports);
///   switches, switch_ports   the whole k-ary tree's (switches are bought whole);
///   cables        every cable: `hosts` host links plus the whole tree's k^3/2 switch-to-switch cables,
///                 ready for switched_cost(hosts, switch_ports, cables, ...).
struct FatTreeShape {
  std::uint32_t k = 0;
  std::uint64_t hosts = 0, switches = 0, switch_ports = 0, cables = 0;
};
/// hosts 0 or more than 2^58 (k > 2^20): util::ConfigError naming topology.servers.
FatTreeShape paper_fat_tree(std::uint64_t hosts);

/// switched_cost of paper_fat_tree(hosts) with every link `gbps` (an Ideal Switch is priced as this with
/// gbps = d*B, spec §2.3).
PaperCost paper_fat_tree_cost(std::uint64_t hosts, double gbps, double fibre_usd = kFibreUsd);

/// The link speeds the cost-equivalent Fat-tree chooses from, ascending: 10, 25, 40, 80, 100, 160, 200, 320,
/// 400, 800, 1600 Gb/s (the authors' code's sweep, spec §2.3).
const std::vector<double>& fat_tree_speeds();

/// Cost-equivalent Fat-tree (spec §2.3, §3 notes): gbps = the largest listed speed (a Fat-tree link, i.e. d*B'
/// per server) whose paper_fat_tree_cost(servers, speed) does not exceed topoopt_cost(servers, degree, gbps);
/// fat_tree = that tree's cost, topoopt = TopoOpt's.  If even the slowest listed speed costs more, gbps = 0 and
/// fat_tree holds the slowest speed's cost (the caller reports it).  The speed is not capped at d*B.
struct CostEquivalent {
  double gbps = 0;
  PaperCost fat_tree, topoopt;
};
CostEquivalent cost_equivalent_fat_tree(std::uint64_t servers, std::uint32_t degree, double gbps,
                                        double fibre_usd = kFibreUsd);

class Topology;
/// The paper's price (Table 2) of a built fabric, for `fabricsim info` and
/// /topology (structure_report):
///   - topoopt: every server interface (a data link of class Global out of a
///     server: one tx of a ring, or one end of a duplex matching cable) is a
///     NIC and a transceiver at the link's speed, two patch-panel ports, one
///     1x2 switch and a cable: TopoOpt(n, d, B) when every server has d;
///   - ideal_switch: the full-bisection Fat-tree of its endpoints at their
///     links' speed (spec §2.3: the Ideal Switch is costed so);
///   - any other fabric, per cable (a data link and its reverse, intra-server
///     cables free): an endpoint end is a NIC and a transceiver, a switch end
///     a switch port and a transceiver, plus paper_lanes fibres.
/// For a full k-ary fat tree the last rule is switched_cost of paper_fat_tree.
PaperCost paper_cost(const Topology& topo, double fibre_usd = kFibreUsd);

}  // namespace fabricsim::net
