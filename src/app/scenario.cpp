#include "scenario.hpp"

#include "model_file.hpp"
#include "trace_file.hpp"
#include "fabricsim/util/random.hpp"

#include "graph_file.hpp"
#include "fabricsim/net/cdg.hpp"
#include "fabricsim/net/state_routes.hpp"

#include <optional>
#include <numeric>
#include <string>

#include "fabricsim/util/error.hpp"

namespace fabricsim::app {

using core::SimTime;

namespace {
std::uint32_t u32(const config::Config& cfg, const char* name) {
  return static_cast<std::uint32_t>(cfg.get_int(name));
}

net::LinkParams link_class(const config::Config& cfg, const char* gbps_key, const char* lat_key) {
  net::LinkParams p;
  double gbps = cfg.get_float(gbps_key);
  double lat = cfg.get_float(lat_key);
  p.bandwidth_gbps = gbps > 0 ? gbps : cfg.get_float("network.link_gbps");
  p.latency = SimTime::from_ns_f(lat >= 0 ? lat : cfg.get_float("network.link_latency_ns"));
  return p;
}
}  // namespace

net::Topology build_topology(const config::Config& cfg) {
  const std::string& kind = cfg.get_string("topology.kind");
  const net::LinkParams host = link_class(cfg, "network.host_link_gbps", "network.host_link_latency_ns");
  const net::LinkParams fabric = link_class(cfg, "network.switch_link_gbps", "network.switch_link_latency_ns");
  if (kind == "fat_tree") {
    net::FatTreeParams p;
    p.endpoints = u32(cfg, "topology.endpoints");
    p.radix = u32(cfg, "topology.radix");
    p.down_ports = u32(cfg, "topology.down_ports");
    p.levels = u32(cfg, "topology.levels");
    if (p.levels == 1) throw util::ConfigError("topology.levels: a fat tree has 2 or 3 levels (0 = automatic)");
    p.host = host;
    p.fabric = fabric;
    return net::build_fat_tree(p);
  }
  if (kind == "leaf_spine") {
    net::LeafSpineParams p;
    p.leaves = u32(cfg, "topology.leaves");
    p.spines = u32(cfg, "topology.spines");
    p.links_per_pair = u32(cfg, "topology.links_per_pair");
    p.servers_per_leaf = u32(cfg, "topology.servers_per_leaf");
    p.gpus_per_server = u32(cfg, "topology.gpus_per_server");
    p.radix = u32(cfg, "topology.radix");
    p.rail_optimized = cfg.get_bool("topology.rail_optimized");
    p.host = host;
    p.fabric = fabric;
    p.intra_server.bandwidth_gbps = cfg.get_float("network.intra_server_gbps");
    p.intra_server.latency = SimTime::from_ns_f(cfg.get_float("network.intra_server_latency_ns"));
    return net::build_leaf_spine(p);
  }
  net::LinkParams board = fabric;
  if (cfg.get_float("network.board_link_gbps") > 0) board.bandwidth_gbps = cfg.get_float("network.board_link_gbps");
  board.latency = SimTime::from_ns_f(cfg.get_float("network.board_link_latency_ns"));
  if (kind == "hyperx" && cfg.get_string("topology.hyperx_model") == "routers") {
    // The switch-based reading of the spec's HyperX (§6, §10.3).
    net::HyperXParams p;
    p.x = u32(cfg, "topology.x");
    p.y = u32(cfg, "topology.y");
    p.concentration = u32(cfg, "topology.concentration");
    p.radix = u32(cfg, "topology.radix");
    p.host = host;
    p.fabric = fabric;
    return net::build_hyperx(p);
  }
  if (kind == "hyperx" && cfg.get_int("topology.concentration") != 1)
    throw util::ConfigError("topology.concentration: the hx1mesh model of a HyperX has one accelerator per grid point "
                            "(set topology.hyperx_model = \"routers\" for routers with several endpoints)");
  if (kind == "hammingmesh" || kind == "hyperx") {
    // The Hx1Mesh reading: a 2D HyperX is the HammingMesh of 1x1 boards (spec §3).
    net::HammingMeshParams p;
    p.board_a = kind == "hyperx" ? 1 : u32(cfg, "topology.board_a");
    p.board_b = kind == "hyperx" ? 1 : u32(cfg, "topology.board_b");
    p.x = u32(cfg, "topology.x");
    p.y = u32(cfg, "topology.y");
    p.radix = u32(cfg, "topology.radix");
    p.board = board;
    p.host = host;
    p.fabric = fabric;
    net::Topology t = net::build_hammingmesh(p);
    if (kind == "hyperx")
      t.set_description("2D HyperX " + std::to_string(p.x) + "x" + std::to_string(p.y) +
                        " (hx1mesh model: forwarding accelerators, one plane): " + t.describe());
    return t;
  }
  if (kind == "torus") {
    net::TorusParams p;
    p.dims.clear();
    for (std::int64_t d : cfg.get_int_list("topology.dims")) p.dims.push_back(static_cast<std::uint32_t>(d));
    p.boards = cfg.get_bool("topology.boards");
    p.board = board;
    p.link = fabric;
    return net::build_torus(p);
  }
  if (kind == "dragonfly") {
    net::DragonflyParams p;
    p.a = u32(cfg, "topology.a");
    p.p = u32(cfg, "topology.p");
    p.h = u32(cfg, "topology.h");
    p.groups = u32(cfg, "topology.groups");
    p.arrangement = cfg.get_string("topology.arrangement");
    p.routers_per_switch = u32(cfg, "topology.routers_per_switch");
    p.host = host;
    p.local = fabric;
    p.global = fabric;
    return net::build_dragonfly(p);
  }
  if (kind == "topoopt") {
    net::TopoOptParams p;
    p.servers = u32(cfg, "topology.servers");
    p.degree = u32(cfg, "topology.degree");
    for (std::int64_t o : cfg.get_int_list("topology.ring_offsets"))
      p.ring_offsets.push_back(static_cast<std::uint32_t>(o));
    p.bidirectional_rings = cfg.get_bool("topology.bidirectional_rings");
    p.geo_code_variant = cfg.get_string("topology.ring_selection") == "code";
    p.link = fabric;
    return net::build_topoopt(p);
  }
  if (kind == "file") {
    const std::string& file = cfg.get_string("topology.file");
    const std::string path = file.front() == '/' || cfg.base_dir() == "." ? file : cfg.base_dir() + "/" + file;
    return build_graph_file(path, host, fabric);
  }
  throw util::ConfigError("topology.kind: unsupported kind '" + kind + "'");
}

namespace {

std::string graph_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np) {
  const std::string& how = cfg.get_string("routing.graph");
  if (how == "up_down") {
    np.up_down = true;
    return "up*/down* (routing.graph)";
  }
  const net::DependencyReport r = net::check_minimal_routing(topo, net::RoutingTable(topo));
  if (r.acyclic) return "minimal (its channel dependency graph is acyclic)";
  if (how == "auto") {
    np.up_down = true;
    return "up*/down* (minimal routes would have a channel-dependency cycle)";
  }
  std::string cycle;
  for (std::size_t i = 0; i < r.cycle.size() && i < 8; ++i)
    cycle += topo.node(topo.link(r.cycle[i].link).src).name + " -> ";
  cycle += r.cycle.size() > 8 ? "..." : topo.node(topo.link(r.cycle.back().link).dst).name;
  throw util::ConfigError("routing.graph: minimal routing on this graph has a channel-dependency cycle (" + cycle +
                          "), so lossless traffic could deadlock; use \"up_down\" or \"auto\"");
}

[[noreturn]] void wrong_algorithm(const std::string& algorithm, const std::string& kind, const char* allowed) {
  throw util::ConfigError("routing.algorithm: '" + algorithm + "' does not route a " + kind + " topology (use " +
                          allowed + ")");
}

}  // namespace

Routing setup_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np) {
  using A = net::RoutingAlgorithm;
  Routing r;
  np.up_down = false;
  np.state_routes = nullptr;
  np.valiant_routes = nullptr;
  np.coin_paths = nullptr;
  np.group_of.clear();
  const std::uint32_t k_paths = u32(cfg, "routing.k_paths");
  if (k_paths > 1 && topo.kind != "topoopt")
    throw util::ConfigError("routing.k_paths: k-shortest-path routing is for topoopt fabrics (" + topo.kind +
                            " routes by its own rules)");
  const std::string& algorithm = cfg.get_string("routing.algorithm");
  const A a = np.routing;
  const std::string& kind = topo.kind;
  if (kind == "fat_tree" || kind == "leaf_spine" || kind == "file") {
    if (a != A::Ecmp && a != A::Spray && a != A::Adaptive && a != A::DmodK)
      wrong_algorithm(algorithm, kind, "ecmp, spray, adaptive or dmodk");
    if (kind == "file") r.note = graph_routing(cfg, topo, np);
    return r;
  }
  if (kind == "torus") {
    if (a != A::Dor && a != A::Adaptive) wrong_algorithm(algorithm, kind, "dor or adaptive");
    std::vector<std::uint32_t> dims;
    for (std::int64_t d : cfg.get_int_list("topology.dims")) dims.push_back(static_cast<std::uint32_t>(d));
    r.routes = std::make_unique<net::StateRoutes>(topo, net::torus_rules(topo, dims, a == A::Adaptive),
                                                  net::torus_distance(topo, dims, a == A::Adaptive));
  } else if (kind == "hammingmesh") {
    if (a != A::Dor && a != A::Adaptive && a != A::Minimal) wrong_algorithm(algorithm, kind, "adaptive, minimal or dor");
    const bool hyperx = cfg.get_string("topology.kind") == "hyperx";
    const std::uint32_t ba = hyperx ? 1 : u32(cfg, "topology.board_a");
    const std::uint32_t bb = hyperx ? 1 : u32(cfg, "topology.board_b");
    const std::uint32_t x = u32(cfg, "topology.x"), y = u32(cfg, "topology.y");
    r.routes = std::make_unique<net::StateRoutes>(topo, net::hammingmesh_rules(topo, ba, bb, x, y, a == A::Dor),
                                                  net::hammingmesh_distance(topo, ba, bb, x, y, a == A::Dor));
  } else if (kind == "hyperx") {  // the switch-based HyperX (the hx1mesh model builds a "hammingmesh")
    if (a != A::Dor && a != A::Adaptive && a != A::Minimal) wrong_algorithm(algorithm, kind, "adaptive, minimal or dor");
    const std::uint32_t x = u32(cfg, "topology.x"), y = u32(cfg, "topology.y");
    const std::uint32_t c = u32(cfg, "topology.concentration");
    r.routes = std::make_unique<net::StateRoutes>(topo, net::hyperx_rules(topo, x, y, c, a == A::Dor),
                                                  net::hyperx_distance(topo, x, y, c, a == A::Dor));
  } else if (kind == "dragonfly") {
    const bool valiant = a == A::Valiant || a == A::UgalLocal || a == A::UgalGlobal;
    if (!valiant && a != A::Minimal && a != A::Adaptive)
      wrong_algorithm(algorithm, kind, "minimal, adaptive, valiant, ugal_local or ugal_global");
    const std::uint32_t per_group = u32(cfg, "topology.a");
    r.routes = std::make_unique<net::StateRoutes>(topo, net::dragonfly_rules(topo, valiant ? 2 : 1),
                                                  net::dragonfly_distance(topo, per_group, valiant ? 2 : 1, false));
    if (valiant) {
      // Group of every node: routers are numbered group-major after the
      // endpoints (build_dragonfly); an endpoint is in its router's group.
      np.group_of.assign(topo.node_count(), 0);
      std::vector<std::vector<net::NodeId>> groups;
      for (net::NodeId n = 0; n < topo.node_count(); ++n) {
        if (topo.node(n).kind != net::NodeKind::Switch) continue;
        const std::uint32_t g = static_cast<std::uint32_t>((n - topo.endpoint_count()) / per_group);
        np.group_of[n] = g;
        if (groups.size() <= g) groups.resize(g + 1);
        groups[g].push_back(n);
      }
      for (net::NodeId n = 0; n < topo.node_count(); ++n)
        if (topo.node(n).kind == net::NodeKind::Endpoint) np.group_of[n] = np.group_of[topo.link(topo.node(n).out[0]).dst];
      // The first leg takes one global link (two could be as short, and
      // would leave none for the second leg): the state counts global
      // links in both tables, so the packet goes on in the same numbering.
      r.valiant = std::make_unique<net::StateRoutes>(topo, net::dragonfly_rules(topo, 1),
                                                     net::dragonfly_distance(topo, per_group, 1, true), std::move(groups));
      np.valiant_routes = r.valiant.get();
    }
  } else if (kind == "topoopt") {
    if (a != A::Minimal && a != A::Adaptive && a != A::Spray && a != A::Ecmp)
      wrong_algorithm(algorithm, kind, "minimal, adaptive, spray or ecmp");
    if (k_paths > 1) {
      r.coin = std::make_unique<net::CoinPaths>(topo, k_paths);
      if (r.coin->max_hops() > np.vcs)
        throw util::ConfigError("network.vcs: the " + std::to_string(k_paths) + " shortest routes of some pair take " +
                                std::to_string(r.coin->max_hops()) + " hops, one virtual channel each; set network.vcs = " +
                                std::to_string(r.coin->max_hops()));
      np.coin_paths = r.coin.get();
    }
    r.routes = std::make_unique<net::StateRoutes>(topo, net::hop_count_rules(topo, np.vcs));
    if (r.coin) {
      np.state_routes = r.routes.get();
      r.note = std::to_string(k_paths) + " shortest loop-free routes per pair (Yen), one per message, VC = hop";
      return r;
    }
  } else {
    throw util::ConfigError("topology.kind: no routing for '" + kind + "'");
  }
  np.state_routes = r.routes.get();
  if (r.routes->rules().vcs() > np.vcs)
    throw util::ConfigError("network.vcs: " + r.routes->rules().describe() + " needs " +
                            std::to_string(r.routes->rules().vcs()) + " virtual channels; set network.vcs = " +
                            std::to_string(r.routes->rules().vcs()));
  r.note = r.routes->rules().describe();
  if (a == A::UgalLocal || a == A::UgalGlobal || a == A::Adaptive)
    r.note += std::string(", ") + (a == A::Adaptive ? "least-loaded choice" : a == A::UgalLocal ? "UGAL-L" : "UGAL-G");
  return r;
}

net::CostModel cost_model(const config::Config& cfg) {
  net::CostModel c;
  c.planes = u32(cfg, "cost.planes");
  c.switch_usd = cfg.get_float("cost.switch_usd");
  c.dac_usd = cfg.get_float("cost.dac_usd");
  c.aoc_usd = cfg.get_float("cost.aoc_usd");
  return c;
}

net::NetworkParams network_params(const config::Config& cfg) {
  net::NetworkParams p;
  p.packet_bytes = u32(cfg, "network.packet_bytes");
  p.header_bytes = u32(cfg, "network.header_bytes");
  p.buffer_bytes = static_cast<std::uint64_t>(cfg.get_int("network.buffer_bytes"));
  p.vcs = u32(cfg, "network.vcs");
  p.switch_latency = SimTime::from_ns_f(cfg.get_float("network.switch_latency_ns"));
  p.crossbar_speedup = cfg.get_float("network.crossbar_speedup");
  p.send_engines = u32(cfg, "network.send_engines");
  p.routing = net::parse_routing_algorithm(cfg.get_string("routing.algorithm"));
  p.ecmp_hash = net::parse_ecmp_hash(cfg.get_string("routing.ecmp_hash"));
  p.ecmp_seed = u32(cfg, "routing.ecmp_seed");
  p.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  p.interval = SimTime::from_ns_f(cfg.get_float("output.interval_ns"));
  if (p.header_bytes >= p.packet_bytes)
    throw util::ConfigError("network.header_bytes: " + std::to_string(p.header_bytes) +
                            " leaves no payload in network.packet_bytes " + std::to_string(p.packet_bytes));
  if (p.buffer_bytes < p.packet_bytes)
    throw util::ConfigError("network.buffer_bytes: " + std::to_string(p.buffer_bytes) +
                            " cannot hold one packet of network.packet_bytes " + std::to_string(p.packet_bytes));
  return p;
}

std::unique_ptr<net::PathProvider> flow_paths(const config::Config& cfg, const net::Topology& topo,
                                              const net::NetworkParams& np, bool analytic,
                                              std::unique_ptr<net::RoutingTable>& table) {
  using net::RoutingAlgorithm;
  const std::string& model = cfg.get_string("network.model");
  const RoutingAlgorithm alg = np.routing;
  if (alg == RoutingAlgorithm::Valiant || alg == RoutingAlgorithm::UgalLocal || alg == RoutingAlgorithm::UgalGlobal)
    throw util::ConfigError("routing.algorithm: " + cfg.get_string("routing.algorithm") + " chooses non-minimal paths by "
                            "the queues of the packet model; network.model = \"" + model +
                            "\" has none (use minimal or adaptive, or the packet model)");
  const net::PathSplit split = !analytic && (alg == RoutingAlgorithm::Spray || alg == RoutingAlgorithm::Adaptive)
                                   ? net::PathSplit::Even
                                   : net::PathSplit::Single;
  // The packet model's routes: TopoOpt's k shortest coin routes (the
  // message's own by the engine seed, as the packet model picks it), the
  // route rules of the direct topologies (the first move for the
  // deterministic algorithms, a hash for ecmp and the analytic model's
  // adaptive, an even split for spray and adaptive), else the minimal-route
  // table.  Graphs routed up*/down* stay on plain minimal paths: the
  // up/down restriction is a deadlock rule the flow models need not obey,
  // and may make some routes longer than these.
  if (np.coin_paths != nullptr) return std::make_unique<net::CoinRoutes>(topo, *np.coin_paths, split, np.seed);
  if (np.state_routes != nullptr) {
    const bool first = alg == RoutingAlgorithm::Dor || alg == RoutingAlgorithm::Minimal || alg == RoutingAlgorithm::DmodK;
    return std::make_unique<net::RulesPaths>(topo, *np.state_routes, split, np.ecmp_seed,
                                             first ? net::RulePick::First : net::RulePick::Hash, np.ecmp_hash);
  }
  if (np.up_down) return std::make_unique<net::ShortestPaths>(topo, split, np.ecmp_seed, np.ecmp_hash);
  table = std::make_unique<net::RoutingTable>(topo);
  return std::make_unique<net::TablePaths>(topo, *table, split, np.ecmp_seed, alg == RoutingAlgorithm::DmodK,
                                          np.ecmp_hash);
}

workload::TrafficParams traffic_params(const config::Config& cfg) {
  workload::TrafficParams p;
  p.pattern = workload::parse_pattern(cfg.get_string("workload.pattern"));
  p.message_bytes = static_cast<std::uint64_t>(cfg.get_int("workload.message_bytes"));
  p.messages = u32(cfg, "workload.messages");
  p.start = SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
  p.load = cfg.get_float("workload.load");
  p.incast_sources = u32(cfg, "workload.incast_sources");
  p.incast_target = u32(cfg, "workload.incast_target");
  p.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  return p;
}

namespace {

/// The board grid of a HammingMesh layout: board_a x board_b accelerators
/// per board, x by y boards.  `hyperx` in its default reading (hx1mesh) is
/// the HammingMesh of 1x1 boards, so it takes the same placements.
struct BoardGrid {
  std::uint32_t a = 1, b = 1, x = 1, y = 1;
};

std::optional<BoardGrid> board_grid(const config::Config& cfg) {
  const std::string& kind = cfg.get_string("topology.kind");
  const bool hx1mesh = kind == "hyperx" && cfg.get_string("topology.hyperx_model") == "hx1mesh";
  if (kind != "hammingmesh" && !hx1mesh) return std::nullopt;
  BoardGrid g;
  g.a = hx1mesh ? 1 : u32(cfg, "topology.board_a");
  g.b = hx1mesh ? 1 : u32(cfg, "topology.board_b");
  g.x = u32(cfg, "topology.x");
  g.y = u32(cfg, "topology.y");
  return g;
}

}  // namespace

std::vector<net::EndpointId> board_order(const config::Config& cfg) {
  const std::optional<BoardGrid> grid = board_grid(cfg);
  if (!grid)
    throw util::ConfigError("workload.placement: by_board places ranks board by board on a hammingmesh topology "
                            "(or a hyperx, hyperx_model = \"hx1mesh\"); this one is a " +
                            cfg.get_string("topology.kind"));
  const auto [a, b, x, y] = *grid;
  // On a board (rows i of `a` accelerators j): a cycle through its mesh when
  // one exists (an even number of rows, or of columns: along row 0, snake
  // back and forth over columns 1.. of the other rows, return up column 0),
  // else a snake path.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> cell;  // (i, j)
  const auto cycle = [&cell](std::uint32_t rows, std::uint32_t cols, bool swap) {
    const auto put = [&](std::uint32_t r, std::uint32_t c) { cell.emplace_back(swap ? c : r, swap ? r : c); };
    for (std::uint32_t c = 0; c < cols; ++c) put(0, c);
    for (std::uint32_t r = 1; r < rows; ++r)
      for (std::uint32_t k = 1; k < cols; ++k) put(r, r % 2 == 1 ? cols - k : k);
    for (std::uint32_t r = rows; r-- > 1;) put(r, 0);
  };
  if (b % 2 == 0 && a >= 2) {
    cycle(b, a, false);
  } else if (a % 2 == 0 && b >= 2) {
    cycle(a, b, true);
  } else {
    for (std::uint32_t i = 0; i < b; ++i)
      for (std::uint32_t k = 0; k < a; ++k) cell.emplace_back(i, i % 2 == 0 ? k : a - 1 - k);
  }
  // Boards in a snake over the board grid.
  std::vector<net::EndpointId> out;
  for (std::uint32_t Y = 0; Y < y; ++Y)
    for (std::uint32_t k = 0; k < x; ++k) {
      const std::uint32_t X = Y % 2 == 0 ? k : x - 1 - k;
      for (const auto& [i, j] : cell) out.push_back(((Y * x + X) * b + i) * a + j);
    }
  return out;
}

std::vector<net::EndpointId> grid_order(const config::Config& cfg) {
  const std::string kind = cfg.get_string("topology.kind");
  if (kind == "torus") {
    // Accelerator ids are row-major over the torus already (dimension 0 fastest).
    std::uint64_t n = 1;
    for (std::int64_t d : cfg.get_int_list("topology.dims")) n *= static_cast<std::uint64_t>(d);
    std::vector<net::EndpointId> out(n);
    for (std::uint64_t e = 0; e < n; ++e) out[e] = static_cast<net::EndpointId>(e);
    return out;
  }
  const std::optional<BoardGrid> grid = board_grid(cfg);
  if (!grid)
    throw util::ConfigError("workload.placement: grid orders ranks row-major over the accelerator grid of a "
                            "hammingmesh, hyperx (hyperx_model = \"hx1mesh\") or torus topology; this one is a " +
                            kind);
  // Global coordinates (X a + j, Y b + i) (spec §3.3), row-major: a logical
  // grid of b y rows of a x ranks is the physical one, so that torus_2d and
  // multi_ring with grid_rows = b y run their rings along board rows and
  // columns.
  const auto [a, b, x, y] = *grid;
  std::vector<net::EndpointId> out;
  out.reserve(static_cast<std::size_t>(a) * b * x * y);
  for (std::uint32_t gy = 0; gy < b * y; ++gy)
    for (std::uint32_t gx = 0; gx < a * x; ++gx) {
      const std::uint32_t Y = gy / b, i = gy % b, X = gx / a, j = gx % a;
      out.push_back(((Y * x + X) * b + i) * a + j);
    }
  return out;
}

workload::CollectiveParams collective_params(const config::Config& cfg, const workload::EndpointPool* pool) {
  workload::CollectiveParams p;
  p.op = workload::parse_collective_op(cfg.get_string("workload.op"));
  p.algorithm = cfg.get_string("workload.algorithm");
  if (p.algorithm == "auto")
    p.algorithm = p.op == workload::CollectiveOp::Alltoall  ? "pairwise"
                  : p.op == workload::CollectiveOp::Barrier ? "dissemination"
                                                             : "ring";
  p.grid_rows = u32(cfg, "workload.grid_rows");
  p.ranks = u32(cfg, "workload.ranks");
  p.placement = cfg.get_string("workload.placement");
  // (Once per run: a pool keeps the order of every placement it has seen.)
  if (p.placement == "by_board" && (pool == nullptr || !pool->has_order(p.placement))) p.available = board_order(cfg);
  if (p.placement == "grid" && (pool == nullptr || !pool->has_order(p.placement))) p.available = grid_order(cfg);
  for (std::int64_t e : cfg.get_int_list("workload.endpoints")) p.endpoints.push_back(static_cast<std::uint32_t>(e));
  p.sizes.clear();
  for (std::int64_t s : cfg.get_int_list("workload.sizes")) {
    if (s < 1) throw util::ConfigError("workload.sizes: " + std::to_string(s) + " is not a size in bytes");
    p.sizes.push_back(static_cast<std::uint64_t>(s));
  }
  if (p.sizes.empty()) {
    const auto lo = static_cast<std::uint64_t>(cfg.get_int("workload.min_bytes"));
    const auto hi0 = static_cast<std::uint64_t>(cfg.get_int("workload.max_bytes"));
    const std::uint64_t hi = hi0 == 0 ? lo : hi0;
    if (hi < lo) throw util::ConfigError("workload.max_bytes: smaller than workload.min_bytes");
    const auto f = static_cast<std::uint64_t>(cfg.get_int("workload.step_factor"));
    for (std::uint64_t s = lo; s <= hi; s *= f) p.sizes.push_back(s);
  }
  p.iterations = u32(cfg, "workload.iterations");
  p.warmup = u32(cfg, "workload.warmup");
  p.chunk_bytes = static_cast<std::uint64_t>(cfg.get_int("workload.chunk_bytes"));
  p.channels = u32(cfg, "workload.channels");
  p.reduce_gbps = cfg.get_float("workload.reduce_gbps");
  p.root = u32(cfg, "workload.root");
  if (cfg.get_string("topology.kind") == "leaf_spine") p.gpus_per_server = u32(cfg, "topology.gpus_per_server");
  p.start = SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
  p.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  return p;
}

workload::DnnParams dnn_params(const config::Config& cfg, workload::EndpointPool& pool) {
  workload::DnnParams p;
  std::string path = cfg.get_string("workload.model");
  if (!path.empty() && path[0] != '/') path = cfg.base_dir() + "/" + path;
  p.model = load_model(path);
  p.data_parallel = u32(cfg, "workload.data_parallel");
  p.pipeline_parallel = u32(cfg, "workload.pipeline_parallel");
  p.tensor_parallel = u32(cfg, "workload.tensor_parallel");
  p.expert_parallel = u32(cfg, "workload.expert_parallel");
  p.micro_batches = u32(cfg, "workload.micro_batches");
  p.schedule = cfg.get_string("workload.schedule");
  p.minibatch = static_cast<std::uint64_t>(cfg.get_int("workload.minibatch"));
  p.bucket_bytes = static_cast<std::uint64_t>(cfg.get_int("workload.bucket_bytes"));
  p.dp_algorithm = cfg.get_string("workload.dp_algorithm");
  p.tp_algorithm = cfg.get_string("workload.tp_algorithm");
  p.iterations = u32(cfg, "workload.iterations");
  p.warmup = u32(cfg, "workload.warmup");
  p.start = SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
  p.endpoints = place_job(cfg, workload::dnn_endpoints(p), pool, "workload.data_parallel: the layout");
  return p;
}

std::vector<net::EndpointId> place_job(const config::Config& cfg, std::uint32_t n, workload::EndpointPool& pool,
                                       const std::string& what) {
  const std::string& placement = cfg.get_string("workload.placement");
  const std::uint32_t endpoints = pool.endpoints();
  std::vector<net::EndpointId> out;
  if (placement == "list") {
    for (std::int64_t e : cfg.get_int_list("workload.endpoints")) {
      if (e < 0 || e >= endpoints || !pool.is_free(static_cast<net::EndpointId>(e)))
        throw util::ConfigError("workload.endpoints: endpoint " + std::to_string(e) +
                                " does not exist or belongs to another job");
      out.push_back(static_cast<net::EndpointId>(e));
      pool.take(static_cast<net::EndpointId>(e));
    }
    if (out.size() != n)
      throw util::ConfigError("workload.endpoints: the job needs " + std::to_string(n) + " endpoints, " +
                              std::to_string(out.size()) + " are listed");
    return out;
  }
  if (placement == "by_rail")
    throw util::ConfigError("workload.placement: by_rail is for collectives; a dnn or trace job takes linear, "
                            "by_server, by_board, grid, random or list");
  // (by_board and grid order every endpoint: as many are free along them.)
  if (placement == "by_board" || placement == "grid")
    (void)pool.first_free(0, placement, [&] { return placement == "grid" ? grid_order(cfg) : board_order(cfg); });
  if (pool.free_count() < n)
    throw util::ConfigError(what + " needs " + std::to_string(n) + " endpoints, " + std::to_string(pool.free_count()) +
                            " are free");
  if (placement == "random") {
    util::RandomStream rng(static_cast<std::uint64_t>(cfg.get_int("engine.seed")), 0x444E'4E00ull + endpoints);
    out = pool.shuffled(n, rng);
  } else {
    out = pool.first_free(n, placement == "by_board" || placement == "grid" ? placement : std::string("id"));
  }
  for (net::EndpointId e : out) pool.take(e);
  return out;
}

workload::TraceParams trace_params(const config::Config& cfg, workload::EndpointPool& pool) {
  workload::TraceParams p;
  std::string path = cfg.get_string("workload.trace");
  if (!path.empty() && path[0] != '/') path = cfg.base_dir() + "/" + path;
  p.trace = load_trace(path);
  p.algorithm = cfg.get_string("workload.algorithm");
  if (p.algorithm == "auto") p.algorithm = "ring";
  p.start = SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
  p.endpoints = place_job(cfg, p.trace.ranks, pool, "workload.trace: the trace");
  return p;
}

par::Graph node_graph(const net::Topology& topo, const std::vector<double>& link_bytes, std::uint32_t packet_bytes) {
  par::Graph g;
  const std::size_t n = topo.node_count();
  g.xadj.assign(n + 1, 0);
  for (const auto& l : topo.links()) ++g.xadj[l.src + 1];
  for (std::size_t i = 0; i < n; ++i) g.xadj[i + 1] += g.xadj[i];
  g.adjncy.resize(topo.link_count());
  g.latency.resize(topo.link_count());
  g.vwgt.assign(n, 1);
  std::vector<std::int64_t> fill(g.xadj.begin(), g.xadj.end() - 1);
  for (net::LinkId id = 0; id < topo.link_count(); ++id) {
    const auto& l = topo.link(id);
    auto pos = static_cast<std::size_t>(fill[l.src]++);
    g.adjncy[pos] = l.dst;
    g.latency[pos] = l.latency;
    if (!link_bytes.empty()) g.vwgt[l.src] += static_cast<std::int64_t>(link_bytes[id] / packet_bytes);
  }
  return g;
}

}  // namespace fabricsim::app
