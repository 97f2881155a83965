#include "scenario.hpp"
#include "topology_kinds.hpp"

#include "model_file.hpp"
#include "chakra_trace.hpp"
#include "trace_file.hpp"
#include "fabricsim/util/random.hpp"

#include "fabricsim/net/state_routes.hpp"

#include <optional>
#include <numeric>
#include <string>

#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/tacos.hpp"

namespace fabricsim::app {

using core::SimTime;

namespace {

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
  LinkClasses links;
  links.host = link_class(cfg, "network.host_link_gbps", "network.host_link_latency_ns");
  links.fabric = link_class(cfg, "network.switch_link_gbps", "network.switch_link_latency_ns");
  links.board = links.fabric;
  if (cfg.get_float("network.board_link_gbps") > 0) links.board.bandwidth_gbps = cfg.get_float("network.board_link_gbps");
  links.board.latency = SimTime::from_ns_f(cfg.get_float("network.board_link_latency_ns"));
  const std::string& kind = cfg.get_string("topology.kind");
  net::Topology topo = topology_kind(kind).build(cfg, links);
  const std::uint32_t gpus = cfg_u32(cfg, "topology.gpus_per_nic");
  if (gpus > 1) {
    if (kind != "fat_tree" && kind != "ideal_switch")
      throw util::ConfigError("topology.gpus_per_nic: servers behind one NIC are built on fat_tree and ideal_switch "
                              "(the TopoOpt paper's baselines); a topoopt fabric takes gpu_servers, a leaf_spine "
                              "gpus_per_server");
    if (kind == "ideal_switch" && cfg.get_bool("topology.gpu_servers"))
      throw util::ConfigError("topology.gpus_per_nic: the ideal switch's gpu_servers give every GPU its own NIC; "
                              "use one or the other");
    net::LinkParams intra;
    intra.bandwidth_gbps = cfg.get_float("network.intra_server_gbps");
    intra.latency = SimTime::from_ns_f(cfg.get_float("network.intra_server_latency_ns"));
    return net::with_shared_nics(topo, gpus, intra);
  }
  return topo;
}

Routing setup_routing(const config::Config& cfg, const net::Topology& topo, net::NetworkParams& np) {
  Routing r;
  np.up_down = false;
  np.state_routes = nullptr;
  np.valiant_routes = nullptr;
  np.listed_paths = nullptr;
  np.group_of.clear();
  const TopologyKind& kind = topology_kind(cfg.get_string("topology.kind"));
  if (cfg_u32(cfg, "routing.k_paths") > 1 && !kind.k_shortest_paths)
    throw util::ConfigError("routing.k_paths: k-shortest-path routing is for topoopt fabrics (" + topo.kind +
                            " routes by its own rules)");
  kind.routing(cfg, topo, np, r);
  return r;
}

net::CostModel cost_model(const config::Config& cfg) {
  net::CostModel c;
  c.planes = cfg_u32(cfg, "cost.planes");
  c.switch_usd = cfg.get_float("cost.switch_usd");
  c.switch_ports = cfg_u32(cfg, "cost.switch_ports");
  c.dac_usd = cfg.get_float("cost.dac_usd");
  c.aoc_usd = cfg.get_float("cost.aoc_usd");
  return c;
}

net::NetworkParams network_params(const config::Config& cfg, bool packet_keys) {
  net::NetworkParams p;
  p.packet_bytes = cfg_u32(cfg, "network.packet_bytes");
  p.header_bytes = cfg_u32(cfg, "network.header_bytes");
  if (packet_keys) {
    p.buffer_bytes = static_cast<std::uint64_t>(cfg.get_int("network.buffer_bytes"));
    p.crossbar_speedup = cfg.get_float("network.crossbar_speedup");
  }
  p.vcs = cfg_u32(cfg, "network.vcs");  // (the direct topologies' route rules need them in every model)
  p.switch_latency = SimTime::from_ns_f(cfg.get_float("network.switch_latency_ns"));
  p.send_engines = cfg_u32(cfg, "network.send_engines");
  p.routing = net::parse_routing_algorithm(cfg.get_string("routing.algorithm"));
  p.ecmp_hash = net::parse_ecmp_hash(cfg.get_string("routing.ecmp_hash"));
  p.ecmp_seed = cfg_u32(cfg, "routing.ecmp_seed");
  p.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  p.interval = SimTime::from_ns_f(cfg.get_float("output.interval_ns"));
  if (p.header_bytes >= p.packet_bytes)
    throw util::ConfigError("network.header_bytes: " + std::to_string(p.header_bytes) +
                            " leaves no payload in network.packet_bytes " + std::to_string(p.packet_bytes));
  if (packet_keys && p.buffer_bytes < p.packet_bytes)
    throw util::ConfigError("network.buffer_bytes: " + std::to_string(p.buffer_bytes) +
                            " cannot hold one packet of network.packet_bytes " + std::to_string(p.packet_bytes));
  return p;
}

workload::TrafficParams traffic_params(const config::Config& cfg) {
  workload::TrafficParams p;
  p.pattern = workload::parse_pattern(cfg.get_string("workload.pattern"));
  p.message_bytes = static_cast<std::uint64_t>(cfg.get_int("workload.message_bytes"));
  p.messages = cfg_u32(cfg, "workload.messages");
  const std::string sample = cfg.get_string("workload.alltoall_sample");
  p.alltoall_sample = sample == "first"          ? workload::AlltoallSample::First
                      : sample == "spread_local" ? workload::AlltoallSample::SpreadLocal
                                                 : workload::AlltoallSample::Spread;
  p.start = SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
  p.load = cfg.get_float("workload.load");
  p.incast_sources = cfg_u32(cfg, "workload.incast_sources");
  p.incast_target = cfg_u32(cfg, "workload.incast_target");
  p.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  return p;
}

namespace {

std::optional<BoardGrid> board_grid(const config::Config& cfg) {
  const TopologyKind& k = topology_kind(cfg.get_string("topology.kind"));
  return k.board_grid ? k.board_grid(cfg) : std::nullopt;
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
  if (const TopologyKind& k = topology_kind(kind); k.grid_order) return k.grid_order(cfg);
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
                  : p.op == workload::CollectiveOp::Scatter || p.op == workload::CollectiveOp::Gather ? "direct"
                                                             : "ring";
  p.grid_rows = cfg_u32(cfg, "workload.grid_rows");
  p.ranks = cfg_u32(cfg, "workload.ranks");
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
  p.iterations = cfg_u32(cfg, "workload.iterations");
  p.warmup = cfg_u32(cfg, "workload.warmup");
  p.chunk_bytes = static_cast<std::uint64_t>(cfg.get_int("workload.chunk_bytes"));
  p.channels = cfg_u32(cfg, "workload.channels");
  p.reduce_gbps = cfg.get_float("workload.reduce_gbps");
  p.root = cfg_u32(cfg, "workload.root");
  if (const TopologyKind& kind = topology_kind(cfg.get_string("topology.kind")); kind.endpoints_per_server)
    p.gpus_per_server = kind.endpoints_per_server(cfg);
  p.start = SimTime::from_ns_f(cfg.get_float("workload.start_ns"));
  p.compute = SimTime::from_ns_f(cfg.get_float("workload.compute_ns"));
  p.overlap = cfg.get_float("workload.overlap");
  p.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  if (p.algorithm == "tacos") {
    auto t = std::make_shared<workload::TacosOptions>();
    t->instances = cfg_u32(cfg, "workload.tacos_instances");
    t->seed = p.seed;
    t->unwind = cfg.get_string("workload.tacos_unwind");
    t->synthesizer = cfg.get_string("workload.tacos_synthesizer");
    t->ilp_time_limit_s = cfg.get_float("workload.tacos_ilp_time_limit_s");
    t->ilp_clustering = cfg.get_bool("workload.tacos_ilp_clustering");
    t->ilp_window_steps = cfg_u32(cfg, "workload.tacos_ilp_window_steps");
    t->step_ns = cfg.get_float("workload.tacos_step_ns");
    t->ilp_max_variables = static_cast<std::uint64_t>(cfg.get_int("workload.tacos_ilp_max_variables"));
    t->schedule_in = cfg.get_string("workload.tacos_schedule");
    if (!t->schedule_in.empty() && t->schedule_in[0] != '/' && cfg.base_dir() != ".")
      t->schedule_in = cfg.base_dir() + "/" + t->schedule_in;
    t->schedule_out = cfg.get_string("workload.tacos_write_schedule");
    p.tacos = std::move(t);
  }
  return p;
}

workload::DnnParams dnn_params(const config::Config& cfg, workload::EndpointPool& pool) {
  workload::DnnParams p;
  std::string path = cfg.get_string("workload.model");
  if (!path.empty() && path[0] != '/') path = cfg.base_dir() + "/" + path;
  p.model = load_model(path);
  p.data_parallel = cfg_u32(cfg, "workload.data_parallel");
  p.pipeline_parallel = cfg_u32(cfg, "workload.pipeline_parallel");
  p.tensor_parallel = cfg_u32(cfg, "workload.tensor_parallel");
  p.expert_parallel = cfg_u32(cfg, "workload.expert_parallel");
  p.micro_batches = cfg_u32(cfg, "workload.micro_batches");
  p.schedule = cfg.get_string("workload.schedule");
  p.minibatch = static_cast<std::uint64_t>(cfg.get_int("workload.minibatch"));
  p.bucket_bytes = static_cast<std::uint64_t>(cfg.get_int("workload.bucket_bytes"));
  p.dp_algorithm = cfg.get_string("workload.dp_algorithm");
  p.tp_algorithm = cfg.get_string("workload.tp_algorithm");
  p.iterations = cfg_u32(cfg, "workload.iterations");
  p.warmup = cfg_u32(cfg, "workload.warmup");
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
  if (pool.assignment().empty() && (placement == "by_board" || placement == "grid"))
    (void)pool.first_free(0, placement, [&] { return placement == "grid" ? grid_order(cfg) : board_order(cfg); });
  if (pool.free_count() < n)
    throw util::ConfigError(what + " needs " + std::to_string(n) + " endpoints, " + std::to_string(pool.free_count()) +
                            " are free");
  workload::PlacementRule rule;
  rule.placement = placement;
  rule.seed = static_cast<std::uint64_t>(cfg.get_int("engine.seed"));
  rule.stream = 0x444E'4E00ull + endpoints;
  out = workload::choose_endpoints(pool, n, rule);
  for (net::EndpointId e : out) pool.take(e);
  return out;
}

std::string trace_path(const config::Config& cfg) {
  std::string path = cfg.get_string("workload.trace");
  if (!path.empty() && path[0] != '/') path = cfg.base_dir() + "/" + path;
  return path;
}

ChakraOptions chakra_options(const config::Config& cfg) {
  ChakraOptions o;
  o.peak_tflops = cfg.get_float("workload.trace_peak_tflops");
  o.memory_gbytes_per_s = cfg.get_float("workload.trace_memory_gbytes_per_s");
  o.comm_groups_file = cfg.get_string("workload.trace_comm_groups");
  if (!o.comm_groups_file.empty() && o.comm_groups_file[0] != '/')
    o.comm_groups_file = cfg.base_dir() + "/" + o.comm_groups_file;
  return o;
}

workload::TraceParams trace_params(const config::Config& cfg, workload::EndpointPool& pool, std::uint64_t read_budget) {
  workload::TraceParams p;
  const std::string path = trace_path(cfg);
  if (is_chakra_trace(path)) {
    p.trace = load_chakra_trace(path, chakra_options(cfg), read_budget);
  } else {
    p.trace = load_trace(path, read_budget);
  }
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
