// The declaration of every fabricsim parameter.  This table is the single
// source of truth: loading, validation, `fabricsim params`, docs/params.md
// and the resolved configuration written to /meta/config all come from it.
#include <algorithm>

#include "fabricsim/config/config.hpp"

namespace fabricsim::config {
namespace {

using I = std::int64_t;

ParamDecl int_param(std::string section, std::string key, std::string unit, I def, std::string doc,
                    std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
  ParamDecl d;
  d.section = std::move(section);
  d.key = std::move(key);
  d.type = ParamType::Int;
  d.unit = std::move(unit);
  d.default_value = def;
  d.doc = std::move(doc);
  d.min = min;
  d.max = max;
  return d;
}

ParamDecl float_param(std::string section, std::string key, std::string unit, double def, std::string doc,
                      std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt,
                      bool min_exclusive = false) {
  ParamDecl d;
  d.section = std::move(section);
  d.key = std::move(key);
  d.type = ParamType::Float;
  d.unit = std::move(unit);
  d.default_value = def;
  d.doc = std::move(doc);
  d.min = min;
  d.max = max;
  d.min_exclusive = min_exclusive;
  return d;
}

ParamDecl bool_param(std::string section, std::string key, bool def, std::string doc) {
  ParamDecl d;
  d.section = std::move(section);
  d.key = std::move(key);
  d.type = ParamType::Bool;
  d.default_value = def;
  d.doc = std::move(doc);
  return d;
}

ParamDecl string_param(std::string section, std::string key, std::string def, std::string doc) {
  ParamDecl d;
  d.section = std::move(section);
  d.key = std::move(key);
  d.type = ParamType::String;
  d.default_value = std::move(def);
  d.doc = std::move(doc);
  return d;
}

ParamDecl int_list_param(std::string section, std::string key, std::string unit, std::vector<I> def, std::string doc,
                         std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
  ParamDecl d = int_param(std::move(section), std::move(key), std::move(unit), 0, std::move(doc), min, max);
  d.type = ParamType::IntList;
  d.default_value = std::move(def);
  return d;
}

ParamDecl string_list_param(std::string section, std::string key, std::string doc) {
  ParamDecl d = string_param(std::move(section), std::move(key), "", std::move(doc));
  d.type = ParamType::StringList;
  d.default_value = std::vector<std::string>{};
  return d;
}

ParamDecl float_list_param(std::string section, std::string key, std::string unit, std::string doc,
                           std::optional<double> min = std::nullopt, std::optional<double> max = std::nullopt) {
  ParamDecl d = float_param(std::move(section), std::move(key), std::move(unit), 0, std::move(doc), min, max);
  d.type = ParamType::FloatList;
  d.default_value = std::vector<double>{};
  return d;
}

ParamDecl enum_param(std::string section, std::string key, std::string def, std::vector<std::string> choices,
                     std::string doc) {
  ParamDecl d;
  d.section = std::move(section);
  d.key = std::move(key);
  d.type = ParamType::Enum;
  d.default_value = std::move(def);
  d.choices = std::move(choices);
  d.doc = std::move(doc);
  return d;
}

std::vector<ParamDecl> declare() {
  constexpr double kMaxPorts = 65535;
  std::vector<ParamDecl> p;
  // ---------------------------------------------------------------- topology
  p.push_back(enum_param("topology", "kind", "fat_tree",
                         {"fat_tree", "leaf_spine", "hammingmesh", "hyperx", "torus", "dragonfly", "topoopt", "file",
                          "ideal_switch", "mesh", "npu_graph"},
                         "Topology family. `fat_tree`: 2- or 3-level folded Clos of `radix`-port switches. "
                         "`leaf_spine`: 2-tier Clos of GPU servers with one NIC per GPU. `hammingmesh`: "
                         "HammingMesh (one plane; `board_a` = `board_b` = 1 is a 2D HyperX). `hyperx`: 2D HyperX of `x` "
                         "by `y`, in one of the two readings of the HammingMesh spec (`hyperx_model`): `hx1mesh` "
                         "(default) accelerators that forward, a switch (or 2-level tree) per row and per column: "
                         "`hammingmesh` with 1x1 boards (`board_a`, `board_b` ignored); `routers`: a router per grid "
                         "point with `concentration` endpoints, every two routers of a row and of a column cabled. "
                         "`torus`: torus of "
                         "forwarding accelerators. `dragonfly`: groups of all-to-all routers joined by global "
                         "links. `topoopt`: TopoOpt direct-connect servers joined by circulant rings through "
                         "optical patch panels, servers forward. `file`: a graph listed in `topology.file` "
                         "(docs/model.md). `ideal_switch`: `endpoints` endpoints on one non-blocking crossbar (the \"Best\" "
                         "baseline: only the endpoints' links limit). `mesh`: a 1D, 2D or 3D mesh (`dims`) of forwarding "
                         "accelerators without wrap-around, dimension-order (xy) routing on one VC (`dor`). hammingmesh, hyperx, torus, dragonfly and topoopt are routed by their papers' "
                         "rules with virtual channels (`routing.algorithm`, `network.vcs`); a `file` graph by minimal "
                         "or up*/down* routes (`routing.graph`). `npu_graph`: one of the TACOS paper's NPU graphs "
                         "(`npu_graph`), accelerators that forward joined by their links directly (one-way where "
                         "the graph has a link one way only), routed like a `file` graph."));
  p.push_back(int_param("topology", "endpoints", "", 64,
                        "fat_tree: number of endpoints (NICs). Any count up to the capacity of the tree; "
                        "the last leaf may be partly filled. ideal_switch: its endpoints (at most 65,535).",
                        2, 16777216));
  p.push_back(int_param("topology", "radix", "ports", 16, "Ports per switch.", 2, kMaxPorts));
  p.push_back(int_param("topology", "down_ports", "ports", 0,
                        "fat_tree: endpoint ports per leaf (level-1) switch; the other `radix - down_ports` go up. "
                        "0 means radix/2 (nonblocking). Fewer up than down ports tapers the tree; any value but "
                        "radix/2 wires it uniformly over logical spines, priced as the paper's switch count "
                        "(docs/model.md).",
                        0, kMaxPorts));
  p.push_back(int_param("topology", "levels", "", 0,
                        "fat_tree: switch levels (2 or 3); 0 picks the smallest that fits `endpoints`.", 0, 3));
  p.push_back(int_param("topology", "leaves", "", 4, "leaf_spine: number of leaf (ToR) switches.", 1, 1 << 20));
  p.push_back(int_param("topology", "spines", "", 2, "leaf_spine: number of spine switches.", 1, 1 << 20));
  p.push_back(int_param("topology", "links_per_pair", "", 1,
                        "leaf_spine: parallel links between every leaf and every spine.", 1, kMaxPorts));
  p.push_back(int_param("topology", "ocs_switches", "", 0,
                        "leaf_spine: optical circuit switches between leaves and spines (vClos' OCS layer); 0: none "
                        "(fixed cables). Must divide `spines`; each holds spines/ocs_switches spines and as many "
                        "up-ports of every leaf, any of which it can connect to any of its spines, so a leaf can have "
                        "that many parallel links to one spine. Power-on wiring is the fixed leaf-spine's; "
                        "workload.scheduler = \"ocs_vclos\" rewires idle circuits (docs/model.md).",
                        0, 1 << 20));
  p.push_back(int_param("topology", "servers_per_leaf", "", 2,
                        "leaf_spine: servers whose NICs one leaf's worth of down ports serves.", 1, 1 << 20));
  p.push_back(int_param("topology", "gpus_per_server", "", 4,
                        "leaf_spine (and ideal_switch with `gpu_servers`): GPUs (and NICs) per server; GPUs of a server share an "
                        "intra-server switch.", 1,
                        1024));
  p.push_back(bool_param("topology", "gpu_servers", false,
                         "ideal_switch: group the endpoints into servers of `gpus_per_server`, each joined by an "
                         "intra-server switch (network.intra_server_*) as on a leaf_spine: vClos' Best with the "
                         "cluster's servers (the schedulers place by server). topoopt: each server has "
                         "`gpus_per_server` GPU endpoints on intra-server links (network.intra_server_*) and "
                         "forwards through its node (the paper's 4-GPU servers)."));
  p.push_back(int_param("topology", "gpus_per_nic", "", 1,
                        "fat_tree, ideal_switch: GPUs behind each endpoint port. More than 1 makes every endpoint "
                        "of the fabric a server node that forwards for its `gpus_per_nic` GPUs over intra-server "
                        "links (network.intra_server_*): the TopoOpt paper's servers, one NIC each, on its fat-tree "
                        "and ideal-switch baselines. `endpoints` then counts servers; GPU e is GPU e % gpus_per_nic "
                        "of server e / gpus_per_nic.",
                        1, 1024));
  p.push_back(bool_param("topology", "rail_optimized", false,
                         "leaf_spine: wire GPU i of every server to rail leaf i instead of all GPUs of a server to "
                         "one leaf."));
  p.push_back(string_param("topology", "file", "graph.toml",
                           "file: path of the graph (TOML with [[node]] and [[link]] tables, see docs/model.md), "
                           "relative to the configuration file."));
  p.push_back(int_param("topology", "board_a", "", 2,
                        "hammingmesh: accelerators per board along East-West.", 1, 1024));
  p.push_back(int_param("topology", "board_b", "", 2,
                        "hammingmesh: accelerators per board along North-South.", 1, 1024));
  p.push_back(int_param("topology", "x", "", 16, "hammingmesh: boards per board-row (hyperx: accelerators, or routers, per row).", 1, 1 << 16));
  p.push_back(int_param("topology", "y", "", 16, "hammingmesh: boards per board-column (hyperx: accelerators, or routers, per column).", 1, 1 << 16));
  p.push_back(enum_param("topology", "hyperx_model", "hx1mesh", {"hx1mesh", "routers"},
                         "hyperx: which reading of the HammingMesh spec's 2D HyperX (§6, §10.3) to build. `hx1mesh`: "
                         "the Hx1Mesh, one plane of 400 Gb/s accelerator ports, accelerators forward between a row "
                         "and a column switch (as `hammingmesh` with 1x1 boards). `routers`: the switch-based HyperX, "
                         "`x` by `y` routers each with `concentration` endpoints, every two routers of a row and of a "
                         "column joined by a cable; a router needs concentration + x-1 + y-1 ports, at most `radix`. "
                         "The four aggregated planes are this network with 1600 Gb/s links "
                         "(inputs/hyperx_routers_small.toml)."));
  p.push_back(int_param("topology", "concentration", "", 1,
                        "hyperx with `hyperx_model = \"routers\"`: endpoints per router (the Hx1Mesh model has one "
                        "accelerator per grid point; another value is an error there).",
                        1, kMaxPorts));
  p.push_back(int_list_param("topology", "dims", "", {32, 32},
                             "torus: size of each dimension (any number of dimensions). mesh: 1 to 3 dimensions.", 1,
                             1 << 20));
  p.push_back(enum_param("topology", "npu_graph", "mesh",
                         {"mesh", "ring_ring", "ring", "bidirectional_ring", "fully_connected", "switch_switch_8x4",
                          "ring_fc_switch", "dragonfly_4x5"},
                         "npu_graph: the TACOS spec's generators (section 6): `mesh` (`dims` = [rows, cols], no "
                         "wrap-around), `ring_ring` (a 2D torus of [rows, cols]), `ring` (one way) and "
                         "`bidirectional_ring` of `dims` = [n], `fully_connected` of [n] (these five at "
                         "`npu_gbps`), `switch_switch_8x4` (4 nodes of 8: 300 GB/s scale-up degree-max, 25 GB/s "
                         "rails degree-1), `ring_fc_switch` (`dims` = [nodes] of 2 x 4 NPUs: 200 / 100 / 50 GB/s), "
                         "`dragonfly_4x5` (5 groups of 4, 400 GB/s inside, 200 GB/s global). Every link has latency "
                         "`npu_alpha_ns`."));
  p.push_back(float_param("topology", "npu_gbps", "Gb/s", 800,
                          "npu_graph: link bandwidth of the homogeneous graphs (800 Gb/s = the spec's 100 GB/s).", 1e-3,
                          1e7));
  p.push_back(float_param("topology", "npu_alpha_ns", "ns", 500,
                          "npu_graph: latency (alpha) of every link (the spec's 0.5 us).", 0, 1e9));
  p.push_back(bool_param("topology", "boards", true,
                         "torus: 2x2 boards in the first two dimensions (links inside a board are PCB traces, "
                         "free in the cost model)."));
  p.push_back(int_param("topology", "a", "", 16, "dragonfly: routers per group.", 1, 1 << 16));
  p.push_back(int_param("topology", "p", "", 8, "dragonfly: endpoints per router.", 1, 1 << 16));
  p.push_back(int_param("topology", "h", "", 8, "dragonfly: global links per router.", 1, 1 << 16));
  p.push_back(int_param("topology", "groups", "", 8, "dragonfly: number of groups.", 2, 1 << 20));
  p.push_back(enum_param("topology", "arrangement", "consecutive", {"consecutive", "palmtree"},
                         "dragonfly: how global links are spread over groups (see docs/model.md)."));
  p.push_back(int_param("topology", "routers_per_switch", "", 1,
                        "dragonfly: routers packed into one physical switch (1 or 2; the HammingMesh paper's small "
                        "Dragonfly uses 2 virtual routers per 64-port switch). Affects the cost model only.",
                        1, 2));
  p.push_back(int_param("topology", "servers", "", 128, "topoopt: number of servers (n).", 2, 1 << 24));
  p.push_back(int_param("topology", "degree", "", 4,
                        "topoopt: interfaces per server (d). Directed rings: d rings, each server has d links out "
                        "and d in (2d ports). Bidirectional rings: must be even, d/2 jump pairs (d ports).",
                        1, 32767));
  p.push_back(int_list_param("topology", "ring_offsets", "", {},
                             "topoopt: the ring jumps p (server i links to i+p mod n); empty chooses them with the "
                             "paper's TotientPerms + SelectPermutations. Give `degree` jumps (directed) or "
                             "`degree/2` (bidirectional, n-p is added); repeats are parallel rings; together they "
                             "must connect every server.",
                             1, 1 << 24));
  p.push_back(bool_param("topology", "bidirectional_rings", false,
                         "topoopt: every jump p also adds n-p on the same fibre pair (both directions of a cable "
                         "carry data) instead of the paper's one-way rings."));
  p.push_back(enum_param("topology", "ring_selection", "paper", {"paper", "code"},
                         "topoopt: how jumps are chosen when `ring_offsets` is empty. `paper`: SelectPermutations "
                         "(nearest candidate to x times the last jump, x = max(2, n^(1/rings))). `code`: the "
                         "released code's choose_n_geo (next candidate at or above a geometric target spanning the "
                         "candidates)."));
  p.push_back(enum_param("topology", "construction", "rings",
                         {"rings", "job", "expander", "ocs_reconfig", "ocs_reconfig_nofw", "sip_ml"},
                         "topoopt: how the servers are wired. `rings`: circulant rings of `ring_offsets` or "
                         "TotientPerms + SelectPermutations over all servers (one AllReduce over every server). "
                         "`job`: TOPOLOGYFINDER (the paper's Algorithm 1) from the configured job's own traffic: the "
                         "job is planned on a provisional fabric of the same servers, its AllReduce groups get "
                         "rings and its model-parallel demand rounds of maximum-weight matchings "
                         "(`degree_split`, `allreduce_degree`, `mp_decay`; docs/model.md). `expander`: a random "
                         "`degree`-regular multigraph of duplex cables (the paper's Expander baseline, "
                         "`expander_seed`). `ocs_reconfig`: the OCS-reconfig baseline, every possible circuit "
                         "(`degree` per server lit at once) rewired every `reconfig_epoch_ns` by the paper's "
                         "Algorithm 5 from the demand not yet sent, all flows paused for `reconfig_latency_ns`, "
                         "hosts forwarding over the lit circuits (FW); `ocs_reconfig_nofw`: the same without "
                         "forwarding (a message waits for a direct circuit); `sip_ml`: SiP-ML, Algorithm 5 without "
                         "the discount, no forwarding. The three run in the flow and packet models (docs/model.md)."));
  p.push_back(float_param("topology", "reconfig_epoch_ns", "ns", 50e6,
                          "topoopt, construction = \"ocs_reconfig\", \"ocs_reconfig_nofw\" or \"sip_ml\": time "
                          "between two reconfiguration decisions (the paper samples the demand every 50 ms).",
                          1.0, 1e15));
  p.push_back(float_param("topology", "reconfig_latency_ns", "ns", 0,
                          "topoopt, optical constructions: how long every flow is paused when the circuits change; "
                          "0: the construction's own (10 ms for the OCS-reconfig variants, the paper's 3D MEMS "
                          "switch; 25 us for SiP-ML). Less than `reconfig_epoch_ns`.",
                          0.0, 1e15));
  p.push_back(enum_param("topology", "degree_split", "paper", {"paper", "code"},
                         "topoopt, construction = \"job\": interfaces for AllReduce rings, d_A = max(1, "
                         "ceil(d x AllReduce bytes / all bytes)) (`paper`) or rounded (`code`, the authors' code); "
                         "the rest go to model-parallel matchings."));
  p.push_back(int_param("topology", "allreduce_degree", "", 0,
                        "topoopt, construction = \"job\": fixes d_A (interfaces for AllReduce rings, the ring over "
                        "all servers included) instead of `degree_split`; 0: split by the traffic. At most `degree`.",
                        0, 32767));
  p.push_back(bool_param("topology", "job_shards", false,
                         "topoopt, construction = \"job\": the shared cluster (the paper's §5.6): every job of "
                         "`[[jobs]]` gets a shard of its own, TOPOLOGYFINDER on the servers its messages join, from "
                         "its own traffic (jobs may not share a server); the servers of no job are wired in rings "
                         "among themselves. Shards are not connected: no message crosses one. false: one fabric "
                         "from every job's traffic together."));
  p.push_back(enum_param("topology", "mp_decay", "halve", {"halve", "code"},
                         "topoopt, construction = \"job\": after each matching round the demand of a matched pair "
                         "is halved (`halve`, the paper) or multiplied by c/(c+1) after its c-th link (`code`, the "
                         "authors' code)."));
  p.push_back(int_param("topology", "expander_seed", "", 1,
                        "topoopt, construction = \"expander\": seed of the random regular multigraph (the same "
                        "seed gives the same fabric on every machine).",
                        0, 2147483647));
  // -------------------------------------------------------------------- cost
  p.push_back(int_param("cost", "planes", "", 1,
                        "Identical network planes to price (the HammingMesh paper prices 16 planes of fat trees and "
                        "Dragonfly, 4 of HammingMesh and torus). The simulation always runs one.",
                        1, 1 << 16));
  p.push_back(float_param("cost", "switch_usd", "USD", 14280, "Price of one switch (64-port, spec price).", 0, 1e9));
  p.push_back(int_param("cost", "switch_ports", "ports", 64,
                        "Ports of the priced switch box. A switch of more ports (a switch-based HyperX router of "
                        "255) is priced as the nonblocking 2-level fat tree of such boxes that makes it: "
                        "ceil(ports / (switch_ports/2)) leaves, spines for their up-links, and those up-links as AoC "
                        "cables (the HammingMesh paper's 256-port row networks: 8 + 4 boxes). Where a builder counts "
                        "boxes itself (Dragonfly virtual routers, tapered trees' logical switches) its count stands.",
                        2, 65535));
  p.push_back(float_param("cost", "dac_usd", "USD", 272,
                          "Price of a direct-attach copper cable (endpoint-to-switch links and the topology's other "
                          "short cables).",
                          0, 1e9));
  p.push_back(float_param("cost", "aoc_usd", "USD", 603,
                          "Price of an active optical cable (switch-to-switch and long links).", 0, 1e9));
  // ----------------------------------------------------------------- network
  p.push_back(enum_param("network", "model", "packet", {"packet", "flow", "analytic"},
                         "Network model (docs/model.md, \"Flow-level and analytic models\"). `packet`: the reference, "
                         "packets, switch buffers and credit flow control, any number of ranks. `flow`: each message is "
                         "a flow on its routed path(s) at a max-min fair rate, recomputed as flows start and end; one "
                         "rank. `analytic`: each directed link serves one message at a time, in order, for alpha + "
                         "size x beta (the TACOS link model), store-and-forward along one path; one rank. Same "
                         "topology, routing, workloads and output tables in all three."));
  {
    // At 0.01 Gb/s the largest message (2^40 bytes) takes 10 days, well
    // inside the simulated time's range (106 days); a smaller cap failed
    // only during the run, without naming the key.
    ParamDecl cap = float_param("network", "flow_rate_cap_gbps", "Gb/s", 0,
                                "flow model: the largest rate of any one flow (a NIC or transport limit below the "
                                "link rate); 0: none.",
                                0.01, 1e6);
    cap.zero_allowed = true;
    p.push_back(std::move(cap));
  }
  p.push_back(float_param("network", "link_gbps", "Gb/s", 400, "Bandwidth of every link unless overridden per class.",
                          0, 1e6, true));
  p.push_back(float_param("network", "link_latency_ns", "ns", 20,
                          "Propagation latency of every link unless overridden per class.", 0, 1e9));
  p.push_back(float_param("network", "host_link_gbps", "Gb/s", 0,
                          "Bandwidth of endpoint-to-switch links; 0 means `link_gbps`.", 0, 1e6));
  p.push_back(float_param("network", "host_link_latency_ns", "ns", -1,
                          "Latency of endpoint-to-switch links; negative means `link_latency_ns`.", -1, 1e9));
  p.push_back(float_param("network", "switch_link_gbps", "Gb/s", 0,
                          "Bandwidth of switch-to-switch links; 0 means `link_gbps`.", 0, 1e6));
  p.push_back(float_param("network", "switch_link_latency_ns", "ns", -1,
                          "Latency of switch-to-switch links; negative means `link_latency_ns`.", -1, 1e9));
  p.push_back(float_param("network", "board_link_gbps", "Gb/s", 0,
                          "hammingmesh, torus: bandwidth of on-board (PCB) links; 0 means `link_gbps`.", 0, 1e6));
  p.push_back(float_param("network", "board_link_latency_ns", "ns", 1,
                          "hammingmesh, torus: latency of on-board (PCB) links.", 0, 1e9));
  p.push_back(float_param("network", "intra_server_gbps", "Gb/s", 3600,
                          "leaf_spine, ideal_switch with `gpu_servers`: bandwidth of GPU-to-intra-server-switch links (NVLink-like).", 0, 1e7, true));
  p.push_back(float_param("network", "intra_server_latency_ns", "ns", 10,
                          "leaf_spine, ideal_switch with `gpu_servers`: latency of GPU-to-intra-server-switch links.", 0, 1e9));
  p.push_back(int_param("network", "packet_bytes", "bytes", 4096,
                        "Maximum packet size on the wire, header included (MTU).", 64, 1 << 24));
  p.push_back(int_param("network", "header_bytes", "bytes", 64,
                        "Header bytes of every packet; payload per packet is packet_bytes - header_bytes.", 0,
                        1 << 20));
  p.push_back(int_param("network", "buffer_bytes", "bytes", 262144,
                        "Input buffer per switch port and virtual channel (credits of the upstream sender). "
                        "Must hold at least one packet.",
                        64, 1ll << 40));
  p.push_back(int_param("network", "vcs", "", 1,
                        "Virtual channels per port. The direct topologies' routing needs 2 or 3 (torus `dor`, switch-based "
                        "hyperx 2; torus `adaptive`, hammingmesh, dragonfly `valiant`/`ugal_*` 3), topoopt one per hop of its diameter.",
                        1, 16));
  p.push_back(float_param("network", "switch_latency_ns", "ns", 100,
                          "Traversal latency of a switch, from the head of a packet arriving to it being able to "
                          "leave (routing and crossbar pipeline).",
                          0, 1e9));
  p.push_back(float_param("network", "crossbar_speedup", "", 2.0,
                          "Crossbar bandwidth per input relative to the input link's bandwidth (1 = the crossbar "
                          "moves a packet from an input in the time the link needed to deliver it). The default 2 "
                          "is the HammingMesh paper's router (800 Gb/s crossbar for 400 Gb/s ports); 1 exposes "
                          "the matching losses of an unbuffered crossbar.",
                          1.0, 64.0));
  p.push_back(int_param("network", "send_engines", "", 0,
                        "Messages an endpoint's NIC sends at once (its send engines); later posts wait for an engine "
                        "in post order. Each injection link interleaves the packets of the messages using it, so an "
                        "endpoint with several ports (HammingMesh, HyperX, torus) keeps them busy when its messages "
                        "start on different ports. 0: every posted message sends at once. The HammingMesh paper's "
                        "NIC has 4.",
                        0, 1 << 20));
  // ----------------------------------------------------------------- routing
  p.push_back(enum_param("routing", "algorithm", "adaptive",
                         {"ecmp", "spray", "adaptive", "dmodk", "smodk", "balanced_ecmp", "dor", "minimal", "valiant", "ugal_local",
                          "ugal_global"},
                         "Trees (`fat_tree`, `leaf_spine`, `file`): `ecmp`: per-flow hash of the 5-tuple over the "
                         "minimal ports. `spray`: per-packet random minimal port. `adaptive`: least-loaded minimal "
                         "output (queued bytes, then credits; ties to the lowest port). `dmodk`: destination-mod-k "
                         "deterministic. `smodk`: source-mod-k, vClos's source routing: a leaf sends what comes "
                         "from its port i up uplink i mod (uplinks) (higher levels: the source's next digit), "
                         "contention-free for a leaf-wise permutation of leaf-contiguous ranks. `balanced_ecmp` (vClos' "
                         "balanced ECMP; flow model only): when a flow starts, each hop takes one of the candidates "
                         "with the fewest flows on them at that moment, ties broken by the `ecmp` hash; the flow then "
                         "keeps that path. Direct topologies route by their paper's rules with virtual channels "
                         "(docs/model.md): `hyperx` (routers model): `adaptive` (minimal, either dimension first, "
                         "least loaded), `minimal` (the same routes, first choice: X first) or `dor` (X then Y); "
                         "VC = router hops taken before the link, 2 VCs. `torus`: `dor` (dimension order, dateline VCs; 2 VCs) or `adaptive` (Duato: "
                         "minimal adaptive over a dimension-order escape; 3 VCs). `hammingmesh` (and HyperX, its 1x1 "
                         "boards): `adaptive` (minimal, least loaded), `minimal` (the same routes, first choice) or "
                         "`dor` (row network before column network); 3 VCs. `dragonfly`: `minimal` or `adaptive` "
                         "(local-global-local; 2 VCs), `valiant` (through a random other group), `ugal_local`, "
                         "`ugal_global` (minimal or Valiant, whichever promises less queueing; 3 VCs). `topoopt`: "
                         "`minimal`, `adaptive`, `spray` or `ecmp` over shortest paths (VC = hops taken)."));
  p.push_back(int_param("routing", "k_paths", "", 1,
                        "topoopt: routes per server pair. 1: every shortest path (least loaded, or the first with "
                        "`minimal`). k > 1: each message takes one of the k shortest loop-free routes of its pair "
                        "(Yen, over the servers' links: circulant rings by their coins, any other TopoOpt fabric per "
                        "server pair; parallel links are routes of their own), uniformly by a hash of the message, "
                        "as TopoOpt's packet simulator does; a packet on hop h uses VC h, so `network.vcs` must "
                        "cover the longest route (checked; a GPU's intra-server links count). Not with the optical "
                        "constructions, which pin messages to lit circuits.",
                        1, 16));
  p.push_back(enum_param("routing", "allreduce_routes", "rings", {"rings", "shortest"},
                         "topoopt built from a job (`construction = \"job\"`): how its AllReduce messages (a DNN "
                         "job's data- and tensor-parallel reductions, a collective allreduce) are routed. `rings`: "
                         "CoinChangeMod, the paper's, over the AllReduce rings' links alone (fewest hops, one of the "
                         "ties by a hash of the message): ring neighbours over their ring links, a group without a "
                         "ring of its own over the other rings (multi-hop, even where a model-parallel link would be "
                         "shorter). `shortest`: as model-parallel traffic, over every link (`routing.k_paths`)."));
  p.push_back(enum_param("routing", "graph", "auto", {"auto", "minimal", "up_down"},
                         "Custom graphs (`topology.kind = \"file\"`): `minimal` routes over every shortest path "
                         "(refused if its channel dependency graph has a cycle, as it could deadlock), `up_down` over "
                         "the shortest up*/down* paths from a root switch (deadlock-free on any graph, some paths "
                         "longer), `auto` minimal when that is cycle-free, else up_down."));
  p.push_back(enum_param("routing", "ecmp_hash", "mix64", {"mix64", "crc32", "murmur3", "wang_jenkins"},
                         "Hash function of `ecmp`, the same in the packet, flow and analytic models (one path per "
                         "message, the same in each). `mix64`, `crc32`, `murmur3`: of the 5-tuple (src, dst, the "
                         "message's source port, destination port 4791, UDP), seeded per switch. `wang_jenkins`: the "
                         "routing paper's (Wang/Jenkins integer hash of source ToR + nonSeq(src, dst)): no port and "
                         "no switch seed, so a pair keeps one path for every message (docs/model.md)."));
  p.push_back(int_param("routing", "ecmp_seed", "", 0,
                        "Seed mixed into the `ecmp` hash (per switch; `wang_jenkins`: added to the source ToR's id, "
                        "0 being the paper's hash).",
                        0, 4294967295.0));
  // ---------------------------------------------------------------- workload
  p.push_back(enum_param("workload", "kind", "traffic", {"traffic", "collective", "dnn", "trace", "llm_dp"},
                         "`traffic`: synthetic traffic patterns (see `pattern`). `collective`: an NCCL-tests style "
                         "benchmark of one collective (`op`, `algorithm`) over a communicator (`ranks`, "
                         "`placement`), for each of `sizes`, `warmup` + `iterations` times back to back. `dnn`: "
                         "training iterations of `model` on a data x pipeline x tensor x expert parallel layout "
                         "(docs/model.md). `trace`: replay of an execution trace (`trace`, JSON close to Chakra's "
                         "schema, docs/model.md). Several jobs: `[[jobs]]` tables of workload keys plus `start_ns`. `llm_dp`: the "
                         "routing paper's workload: concurrent 3D-parallel LLM jobs of which the data-parallel ring "
                         "allreduces are simulated, alternating with compute gaps (the `[llm]` section, paths by "
                         "`[controller]`; docs/model.md, \"LLM data-parallel jobs\")."));
  const std::vector<std::string> allreduces{"ring", "bidirectional_ring", "halving_doubling", "double_binary_tree",
                                            "direct", "multi_ring", "torus_2d", "hierarchical", "topoopt_rings"};
  p.push_back(string_param("workload", "model", "model.toml",
                           "dnn: the model description (TOML, relative to the configuration file; "
                           "inputs/models/ has the reference papers' models, format in docs/models.md)."));
  p.push_back(string_param("workload", "trace", "trace.json",
                           "trace: the execution trace, relative to the configuration file: fabricsim's JSON "
                           "(format in docs/model.md), or a Chakra trace as ASTRA-sim takes it, one `.et` file per "
                           "rank: `PREFIX` (or any `PREFIX.RANK.et`) for `PREFIX.0.et`, `PREFIX.1.et`, ... Its "
                           "collectives use `algorithm` for allreduce, reduce_scatter and allgather."));
  p.push_back(bool_param("workload", "trace_stream", false,
                         "trace (Chakra): replay the trace as it is read, a window of each rank's nodes at a time, "
                         "instead of planning it whole first: memory for the nodes in flight and the message "
                         "records, not for the whole trace; a done node's /trace_nodes row waits in a file in "
                         "$TMPDIR (else /tmp; 40 bytes a node) until the output is written, a delivered "
                         "message's record too (48 bytes a message), and under mpiexec every send node of the "
                         "trace (32 bytes a send) (docs/model.md, "
                         "\"Streaming traces\"). The run's only job; under mpiexec each process reads the files "
                         "of the ranks whose endpoints it simulates (and every P-th file once before, for the "
                         "message counts the processes exchange). Each rank's node ids increasing and its "
                         "dependencies on earlier nodes. Same results as without it, at any rank count."));
  p.push_back(int_param("workload", "trace_stream_window", "nodes", 32,
                        "trace_stream: the nodes of a rank read and not yet done, at most. A node beyond it whose "
                        "dependencies all complete before it is read begins late (the run says how many); more "
                        "holds more of the trace.",
                        1, 1 << 24));
  p.push_back(string_param("workload", "trace_comm_groups", "",
                           "trace (Chakra): ASTRA-sim's communicator-group file (JSON, `{\"NAME\": [ranks], ...}`, "
                           "relative to the configuration file): a collective node whose attribute `pg_name` is "
                           "NAME runs among those ranks. Empty: every collective spans all ranks, as ASTRA-sim "
                           "without the file."));
  p.push_back(float_param("workload", "trace_peak_tflops", "TFLOP/s", 0,
                          "trace (Chakra): the peak of the roofline that times a compute node given by FLOPs "
                          "(`num_ops`) rather than `duration_micros`, as ASTRA-sim's `peak-perf`; 0: such a node is "
                          "an error.",
                          0.0, 1e9));
  p.push_back(float_param("workload", "trace_memory_gbytes_per_s", "GB/s", 0,
                          "trace (Chakra): local memory bandwidth (10^9 bytes/s) that times memory nodes and the "
                          "roofline's memory side by `tensor_size`, as ASTRA-sim's `local-mem-bw`; 0: a memory node "
                          "needs its `duration_micros`.",
                          0.0, 1e9));
  p.push_back(int_param("workload", "data_parallel", "", 1, "dnn: data-parallel replicas D.", 1, 1 << 20));
  p.push_back(int_param("workload", "pipeline_parallel", "", 1,
                        "dnn: pipeline stages P (layers split evenly, in order).", 1, 1 << 20));
  p.push_back(int_param("workload", "tensor_parallel", "", 1,
                        "dnn: tensor (operator) parallel shards O per stage; compute divides by O, each layer "
                        "runs its tensor-parallel allreduces among them.", 1, 1 << 20));
  p.push_back(int_param("workload", "expert_parallel", "", 1,
                        "dnn: replicas per alltoall group E (MoE experts, DLRM embeddings); divides "
                        "data_parallel; 1 = no alltoalls.", 1, 1 << 20));
  p.push_back(int_param("workload", "micro_batches", "", 1, "dnn: micro-batches per replica and iteration.", 1,
                        1 << 20));
  p.push_back(enum_param("workload", "schedule", "1f1b", {"1f1b", "gpipe"},
                         "dnn: pipeline schedule: `gpipe` (all forwards, then all backwards) or `1f1b` (P - p - 1 "
                         "warm-up forwards at stage p, then one forward and one backward in turn)."));
  p.push_back(int_param("workload", "minibatch", "samples", 0,
                        "dnn: samples per iteration over all replicas; 0 = the model's.", 0, 1ll << 40));
  p.push_back(int_param("workload", "bucket_bytes", "bytes", 25 << 20,
                        "dnn: gradient bucket size (PyTorch DDP's 25 MiB): layers' gradients, in backward order, "
                        "are reduced in buckets of at least this size as soon as they are ready; 0 = one bucket "
                        "after the backward pass.", 0, 1ll << 40));
  p.push_back(enum_param("workload", "dp_algorithm", "ring", allreduces,
                         "dnn: allreduce algorithm of the gradient buckets (see `algorithm`)."));
  p.push_back(enum_param("workload", "tp_algorithm", "ring", allreduces,
                         "dnn: allreduce algorithm of the tensor-parallel allreduces."));
  p.push_back(enum_param("workload", "op", "allreduce",
                         {"allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast", "reduce", "barrier",
                          "scatter", "gather"},
                         "collective: the operation (NCCL semantics; the size is the buffer per rank; a barrier "
                         "moves one byte per message and ignores the size; scatter sends part j of the root's "
                         "buffer to rank j, gather part j of rank j's to the root; `direct` and `tacos` implement "
                         "them)."));
  p.push_back(enum_param("workload", "algorithm", "auto",
                         {"auto", "ring", "bidirectional_ring", "halving_doubling", "double_binary_tree", "direct",
                          "pairwise", "tree", "hierarchical", "multi_ring", "torus_2d", "topoopt_rings", "dissemination",
                          "tacos"},
                         "collective: `ring` (allreduce as reduce-scatter then allgather, 2(n-1) steps of S/n; "
                         "reduce_scatter and allgather n-1 steps), `halving_doubling` (allreduce: recursive halving "
                         "then doubling over the largest power of two of ranks, the others folded in first and "
                         "served last; 2 log2(p) steps, + 2 with folding), `double_binary_tree` (allreduce: two "
                         "binary trees, one over the ranks in reverse order, each reducing half the buffer up and "
                         "sending the result down, in `chunk_bytes` chunks), `bidirectional_ring` (half the buffer "
                         "each way round), `direct` (every part straight to its owner, then, for allreduce, the "
                         "reduced part straight to everyone), `pairwise` (alltoall: step i to rank r+i), `tree` "
                         "(broadcast and reduce: a binary tree from the root; their `ring` is a chain round the "
                         "ring), `hierarchical` (allreduce on `leaf_spine` GPU servers, consecutive ranks per "
                         "server: ring reduce-scatter inside each server, ring allreduce of each 1/G part across "
                         "servers, ring allgather inside), `torus_2d` (allreduce over the ranks as a `grid_rows` x "
                         "columns grid: half the buffer by the hierarchical scheme with rows as groups, the other "
                         "half with columns as groups and the rings the other way round), `multi_ring` (allreduce, "
                         "reduce_scatter, allgather on a `grid_rows` x columns grid, sides >= 3: rings along two "
                         "edge-disjoint Hamiltonian cycles of the torus (the HammingMesh paper's for square grids; "
                         "see docs/model.md for other shapes), each in both directions, a quarter of the buffer "
                         "per ring), `topoopt_rings` (allreduce, reduce_scatter, allgather: TopoOpt's, the buffer "
                         "split evenly over every ring of direct links the fabric has through the communicator's "
                         "servers, each visiting the servers in its step's order and a server's ranks "
                         "consecutively; one ring in rank order where the fabric has none), `dissemination` "
                         "(barrier: ceil(log2 n) rounds, round k "
                         "to rank r + 2^k), `tacos` (every operation but alltoall and barrier: a schedule "
                         "synthesized by TACOS-Greedy for the communicator's NPU graph on this fabric, or read from "
                         "`tacos_schedule`; reductions as reversed allgather / broadcast, allreduce as reduce_scatter "
                         "then allgather; each NPU's part in chunks of at most `chunk_bytes`; see docs/model.md); "
                         "`auto` picks ring, pairwise for alltoall, dissemination for barrier, direct for scatter "
                         "and gather."));
  p.push_back(int_param("workload", "tacos_instances", "", 8,
                        "collective, algorithm `tacos`: independent seeded TACOS-Greedy runs (seeds from "
                        "engine.seed); the fastest schedule is kept (tacos spec 5.3).",
                        1, 1024));
  p.push_back(enum_param("workload", "tacos_synthesizer", "greedy", {"greedy", "ilp", "taccl"},
                         "collective, algorithm `tacos`: `greedy` (TACOS-Greedy), `ilp` (TACOS-ILP on the "
                         "time-expanded network, through CBC: for small instances) or `taccl` (the same ILP without "
                         "the congestion constraint, the spec's TACCL-like baseline, whose congestion then shows as "
                         "serialization). Reductions reverse its schedules as they do greedy's."));
  p.push_back(float_param("workload", "tacos_ilp_time_limit_s", "s", 60,
                          "collective, tacos_synthesizer `ilp` or `taccl`: wall-clock budget of one ILP call (an "
                          "allreduce makes two); when it runs out the best schedule found is completed by shortest "
                          "paths (early termination, spec 4.3). 0: none.",
                          0, 1e6));
  p.push_back(bool_param("workload", "tacos_ilp_clustering", false,
                         "collective, ILP: time clustering (spec 4.4): solve windows of `tacos_ilp_window_steps` "
                         "steps one after another instead of the whole collective at once."));
  p.push_back(int_param("workload", "tacos_ilp_window_steps", "", 0,
                        "collective, ILP with time clustering: window length in steps; 0 = the diameter of the "
                        "time-expanded network.",
                        0, 1 << 20));
  p.push_back(float_param("workload", "tacos_step_ns", "ns", 0,
                          "collective, ILP: the time-expanded network's discretisation factor f (a link of cost l "
                          "takes ceil(l / f) steps); 0 = the smallest link cost.",
                          0, 1e9));
  p.push_back(int_param("workload", "tacos_ilp_max_variables", "", 2000000,
                        "collective, ILP: the largest model built (binary variables); a larger one is refused "
                        "before CBC runs.",
                        1, 1ll << 32));
  p.push_back(string_param("workload", "tacos_unwind", "ring",
                           "collective, algorithm `tacos`: how a switch fabric (a connected group of switches: fat "
                           "tree, leaf-spine, Dragonfly, a HammingMesh row or column tree) becomes NPU links for the "
                           "synthesizer (tacos spec 3.3): `ring` (degree 1: rank k to the next member in rank "
                           "order, at its uplink bandwidth), `bidirectional_ring` (both ways, half each), `max` "
                           "(fully connected, 1/(N-1) each) or a degree d (links to the next d members, 1/d each). "
                           "An intra-server switch is always unwound fully connected."));
  p.push_back(string_param("workload", "tacos_schedule", "",
                           "collective, algorithm `tacos`: read the schedule from this file (written by "
                           "`tacos_write_schedule`; relative to the configuration file) instead of synthesizing "
                           "it; it must be of the run's operation and chunk count on the same communicator, and "
                           "pass the schedule check. Empty: synthesize."));
  p.push_back(string_param("workload", "tacos_write_schedule", "",
                           "collective, algorithm `tacos`: write the schedule (synthesized or read) of the first "
                           "size to this file (relative to the working directory), to rerun it with "
                           "`tacos_schedule`. Empty: none."));
  p.push_back(int_param("workload", "grid_rows", "", 0,
                        "collective: `torus_2d` and `multi_ring` arrange the communicator row-major as `grid_rows` "
                        "rows of n / grid_rows ranks (on a torus with linear placement: its rows); 0 = square.",
                        0, 1 << 24));
  p.push_back(int_param("workload", "root", "", 0,
                        "collective: root of broadcast and reduce, as a rank of the communicator.", 0, 1 << 24));
  p.push_back(int_list_param("workload", "sizes", "bytes", {},
                             "collective: the sizes to run, in bytes per rank (each 1 byte to 1 TiB, as `min_bytes` "
                             "and `max_bytes`); empty: `min_bytes` to `max_bytes` multiplying by `step_factor` "
                             "(NCCL's -b, -e, -f). Sizes x iterations x the messages of one operation must stay "
                             "below 2^32 messages (checked).",
                             1, 1ll << 40));
  p.push_back(int_param("workload", "min_bytes", "bytes", 1 << 20, "collective: smallest size when `sizes` is empty.",
                        1, 1ll << 40));
  p.push_back(int_param("workload", "max_bytes", "bytes", 0,
                        "collective: largest size when `sizes` is empty; 0 = `min_bytes`.", 0, 1ll << 40));
  p.push_back(int_param("workload", "step_factor", "", 2, "collective: size multiplier between sizes.", 2, 1024));
  p.push_back(int_param("workload", "iterations", "", 1, "collective: timed runs per size; dnn: timed iterations.", 1, 1 << 20));
  p.push_back(int_param("workload", "warmup", "", 0, "collective: untimed runs per size, before the timed ones; dnn: untimed iterations first.", 0,
                        1 << 20));
  p.push_back(int_param("workload", "chunk_bytes", "bytes", 0,
                        "collective: each step's message is cut into chunks of at most this many bytes that move "
                        "through the steps independently (pipelining); 0: one message per step. A size may be at most 65,536 "
                        "chunks (checked).",
                        0, 1ll << 40));
  p.push_back(int_param("workload", "channels", "", 1,
                        "collective: NCCL's channels: the buffer is split into this many parts, each run by its "
                        "own instance of the algorithm over its own connections, all at once (more messages in "
                        "flight per step, spread over more paths).",
                        1, 64));
  p.push_back(int_param("workload", "ranks", "", 0, "collective: communicator size; 0 = every endpoint.", 0,
                        1 << 24));
  p.push_back(enum_param("workload", "placement", "linear",
                         {"linear", "by_server", "by_rail", "by_board", "grid", "random", "list"},
                         "collective: which endpoints form the communicator, in rank order: `linear` (0, 1, ...), "
                         "`by_server` (the same on `leaf_spine`, where endpoints are numbered server by server: "
                         "a server's GPUs are consecutive ranks), `by_rail` (GPU 0 of every server, then GPU 1, "
                         "...), `by_board` (hammingmesh, and hyperx of 1x1 boards: board after board in a snake over the board grid, each "
                         "board's accelerators along a cycle of its mesh, so consecutive ranks are neighbours and "
                         "a ring of one board's size stays on it), `grid` (hammingmesh, hyperx, torus: row-major over the "
                         "accelerators' global coordinates, so a `grid_rows` = (board rows x y) logical grid of "
                         "`torus_2d` or `multi_ring` is the physical one), `random` (seeded by engine.seed), `list` "
                         "(`endpoints`). dnn: the job's endpoints in layout order (((d P) + p) O + o); `linear` "
                         "and `by_server` take the lowest endpoints no earlier job uses, `by_board` and `grid` the first "
                         "unused ones in its order, `random` random unused ones, `list` exactly `endpoints`."));
  {
    ParamDecl queue = enum_param(
        "workload", "queue", "none", {"none", "fifo", "edf", "fewest_gpus_first"},
        "[[jobs]]: `none`: every job takes its endpoints before the run (disjoint, in table order) and starts at its "
        "`start_ns`. Otherwise a cluster queue: a job arrives at its `start_ns` and waits until `scheduler` can place "
        "it; it then starts, and frees its endpoints when its last task completes; each decision is taken "
        "`engine.control_latency_ns` after its cause. The queue's order: `fifo` (arrival), `edf` (earliest "
        "`deadline_ns` first; jobs without one last, by arrival), `fewest_gpus_first` (fewest endpoints first, "
        "then arrival). The first job in that order that cannot be placed holds the ones behind it (head of line, as "
        "vClos' simulator does). /jobs gives arrival_ns, start_ns (admitted), end_ns and the refusals by cause. "
        "Run-wide: set in [workload], not in a [[jobs]] table.");
    queue.run_wide = true;
    p.push_back(std::move(queue));
    ParamDecl sched = enum_param(
        "workload", "scheduler", "free", {"free", "whole_server", "vclos", "ocs_vclos"},
        "A cluster queue's resource scheduler (../shared/spec/vclos.md section 5). `free`: any free endpoints, "
        "chosen by the job's `placement` (not `list`). `whole_server` (the baselines' locality rule): a job of at "
        "most `gpus_per_server` GPUs on one server (best fit), a larger one on whole idle servers, under one leaf "
        "if one has room (best fit), else over the leaves with the most idle servers; no links reserved. `vclos`: "
        "the same first two stages, then an isolated virtual Clos (l virtual leaves x s virtual spines on "
        "reserved leaf-spine links, found by `vclos_solver`), whose cross-leaf messages are pinned to their "
        "virtual spine (source routing inside the job); refused as `network` when enough servers are idle but no "
        "virtual Clos fits. `whole_server` and `vclos` need a `leaf_spine` (one link per pair, not rail-optimized) "
        "or a two-level `fat_tree`; `whole_server` also takes an `ideal_switch` (Best). `ocs_vclos` (OCS-vClos, "
        "spec 5.4): the same first two stages, then one spine with a circuit per GPU, then a virtual Clos whose "
        "virtual spines may be parallel circuits to one spine, built by rewiring idle circuits of the optical layer "
        "(`topology.ocs_switches`; never a circuit a running job holds), after which the job starts "
        "`ocs_reconfig_ns` later; flow or packet model. Run-wide.");
    sched.run_wide = true;
    p.push_back(std::move(sched));
    ParamDecl solver = enum_param(
        "workload", "vclos_solver", "search", {"search", "ilp"},
        "`scheduler = \"vclos\"`: how vClos-ILP(l, s) is solved: `search` (exact branch and bound) or `ilp` (COIN-OR "
        "CBC, stopped at `vclos_ilp_max_nodes`). Both are deterministic, so every rank decides alike. Run-wide.");
    solver.run_wide = true;
    p.push_back(std::move(solver));
    ParamDecl nodes = int_param("workload", "vclos_ilp_max_nodes", "", 100000,
                                "`vclos_solver = \"ilp\"`: CBC's branch-and-bound node limit per (l, s). Run-wide.", 1,
                                1ll << 40);
    nodes.run_wide = true;
    p.push_back(std::move(nodes));
    ParamDecl reconfig = float_param(
        "workload", "ocs_reconfig_ns", "ns", 50e6,
        "`scheduler = \"ocs_vclos\"`: the optical circuit switches' reconfiguration delay; a job whose placement "
        "switched a circuit starts this long after it was placed (counted in its wait). Run-wide.",
        0.0, 1e15);
    reconfig.run_wide = true;
    p.push_back(std::move(reconfig));
    ParamDecl releax = bool_param(
        "workload", "ocs_whole_servers", true,
        "`scheduler = \"ocs_vclos\"`: keep the locality rule (a job of more than `gpus_per_server` GPUs on whole "
        "idle servers, spec 5.2). false: OCS-Releax, the spec's variant without it: a job takes any idle GPUs, a "
        "leaf or a virtual leaf needs idle GPUs rather than idle servers. Run-wide.");
    releax.run_wide = true;
    p.push_back(std::move(releax));
    ParamDecl ocs_nodes = int_param("workload", "ocs_max_nodes", "", 100000,
                                    "`scheduler = \"ocs_vclos\"`: leaf subsets OCS-FINDCLOS visits per (l, s) before "
                                    "it gives up on that shape (deterministic). Run-wide.",
                                    1, 1ll << 40);
    ocs_nodes.run_wide = true;
    p.push_back(std::move(ocs_nodes));
    ParamDecl pow2 = bool_param(
        "workload", "vclos_round_pow2", true,
        "`scheduler = \"vclos\"` or `\"ocs_vclos\"`: a job of more than `gpus_per_server` GPUs reserves the next power of two (the "
        "spec's job size prerequisite, 5.2); it runs on its first ranks. Run-wide.");
    pow2.run_wide = true;
    p.push_back(std::move(pow2));
    ParamDecl share = bool_param(
        "workload", "share_endpoints", false,
        "[[jobs]] with queue `none`: every job is placed on the whole fabric, as if alone, so jobs may share "
        "endpoints (tenants on the same accelerators, e.g. several collectives at once on one mesh: TACOS' "
        "multi-tenant case); their messages then share NICs and links. Run-wide: set in [workload].");
    share.run_wide = true;
    p.push_back(std::move(share));
  }
  p.push_back(int_list_param("workload", "endpoints", "", {},
                             "collective: the communicator for `placement = \"list\"`; dnn: the job's endpoints.",
                             0, (1 << 24) - 1));
  p.push_back(float_param("workload", "reduce_gbps", "Gb/s", 0,
                          "collective: reduction speed per endpoint (a received chunk is reduced before it is sent "
                          "on); 0 = infinitely fast.",
                          0, 1e9));
  p.push_back(enum_param("workload", "pattern", "permutation",
                         {"permutation", "uniform", "alltoall", "incast", "bisection", "ring"},
                         "`permutation`: a seeded random permutation, no endpoint sends to itself. `uniform`: each "
                         "message to a random other endpoint. `alltoall`: shift schedule, in round i endpoint j "
                         "sends to (j+i) mod p. `incast`: `incast_sources` endpoints send to endpoint "
                         "`incast_target`. `bisection`: each endpoint in the lower half pairs with one in the "
                         "upper half (random matching) and both send. `ring`: endpoint j sends `messages` messages to "
                         "(j+1) mod p."));
  p.push_back(int_param("workload", "message_bytes", "bytes", 1048576,
                        "Payload bytes per message (at most 2^32 - 1 packets of network.packet_bytes - header_bytes "
                        "payload each, checked).",
                        1, 1ll << 40));
  p.push_back(int_param("workload", "messages", "", 1,
                        "Messages per source (for `alltoall`: rounds of the shift schedule, 0 = p-1; fewer are a "
                        "sample, `alltoall_sample`). Messages x endpoints must stay below 2^32 (checked).",
                        0, 1 << 30));
  p.push_back(enum_param("workload", "alltoall_sample", "spread", {"spread", "spread_local", "first"},
                         "alltoall of R < p-1 rounds (`messages`): which shifts. `spread`: R shifts evenly over "
                         "1 ... p-1 at an odd stride, centred, leaving out the almost-local shift 1 (an unbiased "
                         "sample of the full alltoall); `spread_local`: the same from shift 1; `first`: shifts "
                         "1 ... R, the most local ones (overstates what a tapered or grouped fabric delivers)."));
  p.push_back(float_param("workload", "start_ns", "ns", 0, "Time the first message is posted (dnn, [[jobs]]: when the job starts).", 0, 1e15));
  p.push_back(float_param("workload", "compute_ns", "ns", 0,
                          "collective: a training job's compute per iteration and rank, before each operation (the "
                          "vClos simulations' jobs: iterations of compute and a gradient allreduce or an alltoall); "
                          "0: operations back to back, as a benchmark.",
                          0, 1e12));
  p.push_back(float_param("workload", "overlap", "", 0,
                          "collective with `compute_ns`: the fraction of the compute that runs alongside the "
                          "operation (the backward pass the gradients' allreduce overlaps); the next iteration waits "
                          "for both. Exposed communication = max(0, operation - overlap x compute_ns).",
                          0, 1));
  p.push_back(float_param("workload", "deadline_ns", "ns", 0,
                          "[[jobs]] with `queue = \"edf\"`: the job's deadline (absolute simulated time, after its "
                          "`start_ns`); 0 = none (such jobs come last).",
                          0, 1e15));
  p.push_back(float_param("workload", "load", "", 1.0,
                          "Offered load as a fraction of the injection rate: messages of one source are posted "
                          "with gaps so that the source offers this share of its link.",
                          0, 1, true));
  p.push_back(int_param("workload", "incast_sources", "", 0, "`incast`: number of senders (0 = every other endpoint).",
                        0, 1 << 30));
  p.push_back(int_param("workload", "incast_target", "", 0, "`incast`: the receiving endpoint.", 0, 1 << 30));
  // ------------------------------------------------------------------ engine
  p.push_back(int_param("engine", "seed", "", 1,
                        "Seed of every random stream (traffic, routing). Streams are keyed by (seed, entity), so "
                        "results do not depend on the rank count.",
                        0, 9007199254740992.0));
  p.push_back(enum_param("engine", "partitioner", "metis", {"metis", "block", "round_robin"},
                         "How the simulated nodes are split over MPI ranks. `metis`: METIS k-way on the node graph, "
                         "vertices weighted by the fluid estimate of their traffic, short links expensive to cut. "
                         "`block`: contiguous node ids. `round_robin`: node id mod ranks. Results do not depend on "
                         "it; speed does."));
  p.push_back(float_param("engine", "min_cut_latency_ns", "ns", 15,
                          "Links shorter than this (board traces, intra-server links) are never cut between ranks: "
                          "their ends are merged before partitioning. The lookahead is the smallest latency of a "
                          "cut link.",
                          0, 1e9));
  p.push_back(float_param("engine", "memory_limit_gib", "GiB", 0,
                          "Memory the ranks of one machine may use together; 0 = the machine's physical memory. A "
                          "run whose estimated peak per rank (`fabricsim info` prints it), times the ranks on the "
                          "busiest machine, exceeds it is refused before anything large is allocated.",
                          0, 1e9));
  p.push_back(float_param("engine", "control_latency_ns", "ns", 10000,
                          "Reaction time of a decision for the whole fabric (a cluster queue admitting or releasing "
                          "a job): it is taken this long after its cause, at one instant on every rank (a global "
                          "step), so results do not depend on the rank count. On several ranks it must be at least "
                          "the largest hop distance between ranks times the lookahead (checked, with the bound).",
                          0, 1e12, true));
  p.push_back(float_param("engine", "end_ns", "ns", 0,
                          "Stop the simulation at this time; 0 runs until the workload is done.", 0, 1e15));
  // ------------------------------------------------------------------ output
  p.push_back(string_param("output", "file", "fabricsim.h5",
                           "Path of the HDF5 result file (`--output` overrides). Written under a temporary name and "
                           "renamed when the run succeeds."));
  p.push_back(float_param("output", "interval_ns", "ns", 1000,
                          "Sampling interval of the per-link time series; 0 disables them. A run that would need "
                          "more than 65,536 intervals, or more than 2^24 link-intervals, doubles the interval as "
                          "often as needed (the datasets' attribute `interval_ns` gives the one used).",
                          0, 1e15));
  p.push_back(bool_param("output", "flows", true,
                         "Write one `/flows` row per message (trace runs: with its node, `/flows/trace_node`, "
                         "and `/trace_nodes`)."));
  p.push_back(bool_param("output", "timeline", false,
                         "dnn: write `/timeline`, one row per compute task and per communication of every "
                         "endpoint (begin and end), for `analysis/fabricsim_dnn.py --gantt`. trace: write "
                         "`/trace_nodes`, one row per trace node with its id, name and times (also written by `output.flows`)."));
  p.push_back(enum_param("output", "progress", "auto", {"auto", "always", "never"},
                         "Live progress line on rank 0: `auto` shows it on a terminal once a run takes longer than "
                         "about two seconds."));
  // ---------------------------------------------------------------- llm (workload.kind = "llm_dp")
  p.push_back(enum_param("llm", "mix", "paper", {"paper", "random", "list", "traffic_pairs"},
                         "The jobs. `paper`: the routing paper's exact scenario of `jobs` jobs at ring size `ring` "
                         "(ml-routing spec 5.5: 1-4 jobs at ring 2 and 4 (5 at ring 2 and 4 too), 1-3 at ring 8), "
                         "with its models and start times. `random`: `jobs` jobs, each a random model, ring size "
                         "`ring` (0: random in {2, 4, 8}), start uniform in [1, 10] s plus its compute gap, seeded by "
                         "`seed`. `list`: the jobs of `models`, `rings` and `starts_s`. `traffic_pairs`: the released code's "
                         "files (`traffic_pairs`), replayed with their exact GPUs, sizes and times."));
  p.push_back(string_list_param("llm", "traffic_pairs",
                                 "traffic_pairs: the released code's files, one per job (relative to the configuration "
                                 "file): a line per ring flow, `src dst src_tor dst_tor start_time flow_size "
                                 "compute_time stage_index`, NIC and ToR ids in its numbering (ToRs 0..T-1, spines, "
                                 "then NICs), times in ns, each ring's members in line order (docs/model.md)."));
  p.push_back(int_param("llm", "jobs", "", 1, "paper, random: the number of concurrent jobs.", 1, 4096));
  p.push_back(int_param("llm", "ring", "", 8,
                        "paper: the scenario's ring size (data-parallel degree: 2, 4 or 8). random: every job's "
                        "ring size, 0 = random in {2, 4, 8}.",
                        0, 1024));
  p.push_back(string_list_param("llm", "models",
                                 "list: each job's model: `bloom`, `gpt3` or `llama2_70b` (the spec's Table 2 with its "
                                 "TP and PP)."));
  p.push_back(int_list_param("llm", "rings", "", {}, "list: each job's ring size (data-parallel degree).", 2, 1024));
  p.push_back(float_list_param("llm", "starts_s", "s", "list: each job's start (its first allreduce), seconds.", 0,
                               1e6));
  p.push_back(int_param("llm", "iterations", "", 10, "Training iterations per job (allreduce, then compute).", 1,
                        1000000));
  p.push_back(float_param("llm", "size_scale", "", 1.0,
                          "Multiplies every ring flow (the spec's chunk S: 4 bytes per parameter over TP x PP x "
                          "DP). Packet-level runs scale GB-sized flows down (1e-3: MB).",
                          0, 1, true));
  p.push_back(float_param("llm", "time_scale", "", 1.0,
                          "Multiplies the compute gaps (BLOOM 1.2388 s, GPT-3 1.0096 s, LLaMA2-70B 2.6923 s) and "
                          "the start times; set it with size_scale to keep their ratio to the allreduce.",
                          0, 1, true));
  p.push_back(int_param("llm", "gpus_per_host", "", 8,
                        "Placement: GPUs (NICs) per host; a replica takes whole hosts, packed into ToRs.", 1, 1024));
  p.push_back(int_param("llm", "seed", "", 1234, "Seed of the placement and of a random mix.", 0, 9e15));
  // ---------------------------------------------------------------- controller
  p.push_back(enum_param("controller", "algorithm", "none",
                         {"none", "ecmp", "greedy", "edge_coloring", "annealing", "ilp"},
                         "Central path assignment on a two-tier Clos (the routing paper; workload.kind = "
                         "\"llm_dp\"): a spine per inter-ToR commodity, pinned through the route store and re-pinned "
                         "in flight. `none`: routing.algorithm routes everything. `ecmp`: the paper's hash "
                         "(wang_jenkins of source ToR + nonSeq(src, dst)) over the live spines. `greedy`: Algorithm 1 "
                         "(least-congested spine, in `greedy_order`). `edge_coloring`: optimal min-max load in two "
                         "tiers (ceil(max ToR degree / live spines)). `annealing`: Hedera's search (`seed`). `ilp`: "
                         "min-max link load by COIN-OR CBC (`ilp_time_limit_s`)."));
  p.push_back(enum_param("controller", "greedy_order", "tor_degree_sorted", {"tor_degree_sorted", "input"},
                         "greedy: `tor_degree_sorted`, the released code's order (ToR groups by size, descending); "
                         "`input`: the paper's arbitrary order (ring by ring)."));
  p.push_back(enum_param("controller", "replan", "phases", {"phases", "flows"},
                         "When the controller decides, besides failures: `phases`, when a job starts its allreduce "
                         "and when one ends it while others run (the released code); `flows`, also whenever ring "
                         "flows start or end (the commodities are then the flows in flight)."));
  p.push_back(float_param("controller", "latency_ns", "ns", 0,
                          "Simulated time from a decision's trigger (an allreduce starting or ending, flows, a "
                          "failure) to its paths being in place. 0: the released code's controller, which decides "
                          "before the new flows start (and plans a failure at its time). More: flows start on the "
                          "last decision's paths (a new job's on routing.algorithm) and are re-pinned then; flows "
                          "on a failed link meanwhile are lost (the packet model does not retransmit; the flow model "
                          "strands a pinned flow whose route died).",
                          0, 1e12));
  p.push_back(int_param("controller", "seed", "", 1, "annealing: its random seed.", 0, 9e15));
  p.push_back(float_param("controller", "ilp_time_limit_s", "s", 10,
                          "ilp: CBC's wall-time limit per decision. Reached without a proven optimum: see "
                          "`ilp_on_limit`.",
                          0, 1e6, true));
  p.push_back(enum_param("controller", "ilp_start", "heuristics", {"heuristics", "cold"},
                         "ilp: `heuristics` starts CBC from the better of greedy and edge colouring and skips it "
                         "when that meets the lower bound (max over ToRs of ceil(degree / usable spines)): proven "
                         "optimal at once wherever no single link failed. `cold`: CBC alone, from nothing (the "
                         "paper's ILP baseline; on 64 x 32 it takes seconds to minutes per decision)."));
  p.push_back(enum_param("controller", "ilp_on_limit", "fallback", {"fallback", "stop"},
                         "ilp, at the time limit: `fallback` keeps CBC's best assignment so far (or greedy's, if it "
                         "has none) and counts the decision as not proven (/llm/decisions, the summary); `stop` "
                         "ends the run with an error."));
  // [[failures]] rows (table_arrays()): one element down from at_ns, until until_ns.
  p.push_back(string_param("failures", "element", "",
                           "The element that fails, by its names in the output (/nodes/name): a node (`\"spine3\"`: "
                           "all its links), a cable (`\"leaf0-spine3\"`: both directions of every cable between the "
                           "two) or one direction (`\"leaf0->spine3\"`). Required."));
  p.push_back(int_param("failures", "at_ns", "ns", 0,
                        "When the element goes down (0: from the start). What is on it or queued for it then is "
                        "stranded (/summary, /links/stranded_*); routing avoids it from then on.",
                        0, 9e15));
  {
    ParamDecl until = int_param("failures", "until_ns", "ns", 0,
                                "When it comes back up; 0: it stays down. Must be after at_ns, and the rows of one "
                                "element must not overlap.",
                                1, 9e15);
    until.zero_allowed = true;
    p.push_back(std::move(until));
  }
  return p;
}

}  // namespace

const std::vector<ParamDecl>& parameters() {
  static const std::vector<ParamDecl> table = declare();
  return table;
}

const std::vector<std::string>& sections() {
  static const std::vector<std::string> s = {"topology", "cost", "network", "routing", "workload", "llm", "controller", "engine", "output"};
  return s;
}

const std::vector<TableArray>& table_arrays() {
  static const std::vector<TableArray> a = {
      {"jobs", "workload", "One job each: the keys of [workload] (not the run-wide ones) over [workload]'s values."},
      {"failures", "failures", "One failure each: an element of the fabric down for a while (docs/model.md, \"Failures\")."},
  };
  return a;
}

const TableArray* find_table_array(std::string_view name) {
  for (const auto& t : table_arrays())
    if (t.name == name) return &t;
  return nullptr;
}

const ParamDecl* find_parameter(std::string_view name) {
  const auto& ps = parameters();
  auto it = std::find_if(ps.begin(), ps.end(), [&](const ParamDecl& d) { return d.name() == name; });
  return it == ps.end() ? nullptr : &*it;
}

}  // namespace fabricsim::config
