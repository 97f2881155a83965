// fabricsim export-chakra: a configured job written out as a Chakra trace
// (one .et file per rank), message by message, so that it replays as
// `workload.kind = "trace"` (docs/model.md, "Chakra traces").
#include <algorithm>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "app/chakra/et_def.pb.h"
#include "commands.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"
#include "jobs.hpp"
#include "scenario.hpp"

namespace fabricsim::app {

namespace {

namespace pb = fabricsim_chakra;
using util::ConfigError;
using workload::TaskGraph;
using TaskId = TaskGraph::TaskId;

constexpr const char* kNoReduction =
    "workload.reduce_gbps: the job reduces received chunks at a rate, a delay that occupies no compute stream, which "
    "a Chakra node cannot say; export with reduce_gbps = 0";

void add_int(pb::Node& n, const char* name, std::int64_t v) {
  pb::AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void append_record(std::string& out, const google::protobuf::MessageLite& m) {
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.WriteVarint32(static_cast<std::uint32_t>(m.ByteSizeLong()));
  m.SerializeWithCachedSizes(&coded);
}

struct Exported {
  std::uint32_t ranks = 0;
  std::uint64_t nodes = 0;
};

// The graph's tasks as Chakra nodes: a compute task a COMP_NODE (its time
// as duration_micros, rounded, and exactly as num_ops at 1 TFLOP/s: one
// operation a picosecond), a message a COMM_SEND_NODE at its source and a
// COMM_RECV_NODE at its destination (tag: its index, so the k-th send
// matches the k-th receive whatever the order), a join nothing: whatever
// waits for it waits for what it waited for (a Chakra node of no time
// would occupy the rank's compute stream).  Ranks: the endpoints the job
// uses, in ascending order.
Exported export_graph(const TaskGraph& g, const net::Network& net, const std::string& prefix) {
  const std::size_t T = g.size();
  std::vector<net::EndpointId> used;
  const auto endpoint_of = [&](TaskId t, bool dst) {
    const auto& task = g.task(t);
    return dst ? net.messages()[task.message].dst : task.at;
  };
  for (TaskId t = 0; t < T; ++t) {
    used.push_back(endpoint_of(t, false));
    if (g.task(t).kind == TaskGraph::Kind::Message) used.push_back(endpoint_of(t, true));
    if (g.task(t).kind == TaskGraph::Kind::Join && g.task(t).reduce_gbps > 0)
      throw ConfigError(kNoReduction);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  const auto rank_of = [&](net::EndpointId e) {
    return static_cast<std::uint32_t>(std::lower_bound(used.begin(), used.end(), e) - used.begin());
  };
  // Node ids per rank: a task's node (a message: its send), and a message's receive.
  const std::uint64_t kNone = UINT64_MAX;
  std::vector<std::uint64_t> next(used.size(), 0), node(T, kNone), recv(T, kNone);
  for (TaskId t = 0; t < T; ++t) {
    const auto& task = g.task(t);
    if (task.kind == TaskGraph::Kind::Join) continue;
    node[t] = next[rank_of(task.at)]++;
    if (task.kind == TaskGraph::Kind::Message) recv[t] = next[rank_of(endpoint_of(t, true))]++;
  }
  // Incoming dependencies per task; what a join stands for (memoized).
  std::vector<std::vector<std::pair<TaskId, bool>>> in(T);
  for (const TaskGraph::Dependency& d : g.dependencies()) {
    if (d.delay > core::SimTime::zero())
      throw ConfigError(kNoReduction);
    in[d.to].emplace_back(d.from, d.sent);
  }
  std::vector<std::vector<std::uint64_t>> stands(T);
  std::vector<std::uint8_t> resolved(T, 0);
  const auto resolve = [&](TaskId join) {  // iterative: joins may chain deeply
    std::vector<TaskId> stack{join};
    while (!stack.empty()) {
      const TaskId j = stack.back();
      bool ready = true;
      for (const auto& [from, sent] : in[j])
        if (g.task(from).kind == TaskGraph::Kind::Join && !resolved[from]) {
          stack.push_back(from);
          ready = false;
        }
      if (!ready) continue;
      stack.pop_back();
      if (resolved[j]) continue;
      std::vector<std::uint64_t>& s = stands[j];
      for (const auto& [from, sent] : in[j]) {
        const auto& f = g.task(from);
        if (f.kind == TaskGraph::Kind::Join) {
          s.insert(s.end(), stands[from].begin(), stands[from].end());
        } else {
          s.push_back(f.kind == TaskGraph::Kind::Message && !sent ? recv[from] : node[from]);
        }
      }
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      resolved[j] = 1;
    }
  };
  std::vector<std::string> files(used.size());
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  for (std::string& f : files) append_record(f, meta);
  pb::Node n;
  std::uint64_t nodes = 0;
  std::vector<std::uint64_t> deps;
  for (TaskId t = 0; t < T; ++t) {
    const auto& task = g.task(t);
    if (task.kind == TaskGraph::Kind::Join) continue;
    deps.clear();
    for (const auto& [from, sent] : in[t]) {
      const auto& f = g.task(from);
      if (f.kind == TaskGraph::Kind::Join) {
        resolve(from);
        deps.insert(deps.end(), stands[from].begin(), stands[from].end());
      } else {
        deps.push_back(f.kind == TaskGraph::Kind::Message && !sent ? recv[from] : node[from]);
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const std::uint32_t r = rank_of(task.at);
    const char* phase = workload::to_string(static_cast<workload::DnnPhase>(task.label & 0xFF));
    n.Clear();
    n.set_id(node[t]);
    for (std::uint64_t d : deps) n.add_data_deps(d);
    if (task.kind == TaskGraph::Kind::Compute) {
      n.set_name(fmt::format("{} compute {}", phase, t));
      n.set_type(pb::COMP_NODE);
      const std::int64_t ps = task.duration.ps();
      n.set_duration_micros(static_cast<std::uint64_t>((ps + 500'000) / 1'000'000));
      add_int(n, "num_ops", ps);
      append_record(files[r], n);
      ++nodes;
      continue;
    }
    const net::Message& m = net.messages()[task.message];
    n.set_name(fmt::format("{} send {} -> {}", phase, r, rank_of(m.dst)));
    n.set_type(pb::COMM_SEND_NODE);
    add_int(n, "comm_dst", rank_of(m.dst));
    add_int(n, "comm_size", static_cast<std::int64_t>(m.bytes));
    add_int(n, "comm_tag", t);
    append_record(files[r], n);
    n.Clear();
    n.set_id(recv[t]);
    n.set_name(fmt::format("{} recv {} <- {}", phase, rank_of(m.dst), r));
    n.set_type(pb::COMM_RECV_NODE);
    add_int(n, "comm_src", r);
    add_int(n, "comm_size", static_cast<std::int64_t>(m.bytes));
    add_int(n, "comm_tag", t);
    append_record(files[rank_of(m.dst)], n);
    nodes += 2;
  }
  for (std::uint32_t r = 0; r < files.size(); ++r) {
    const std::string path = fmt::format("{}.{}.et", prefix, r);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(files[r].data(), static_cast<std::streamsize>(files[r].size()));
    if (!out) throw util::UserError(fmt::format("{}: cannot write it (export-chakra -o)", path));
  }
  return {static_cast<std::uint32_t>(used.size()), nodes};
}

int export_impl(const ExportOptions& opts) {
  const config::Config cfg = config::load(opts.config, opts.overrides);
  try {
    if (cfg.job_count() > 0)
      throw ConfigError("jobs: export-chakra writes one job; give its [workload] without [[jobs]]");
    const std::string& kind = cfg.get_string("workload.kind");
    if (kind != "dnn" && kind != "collective" && kind != "trace")
      throw ConfigError("workload.kind: export-chakra writes a dnn, collective or trace job, not \"" + kind + "\"");
    const net::Topology topo = build_topology(cfg);
    Exported e;
    visit_planned_jobs(cfg, topo, [&](const TaskGraph& g, const net::Network& net, const std::vector<std::size_t>&) {
      e = export_graph(g, net, opts.output);
    });
    std::printf("wrote %s.0.et ... %s.%u.et: %u ranks, %llu nodes (replay with workload.kind = \"trace\", "
                "workload.trace = \"%s\", workload.trace_peak_tflops = 1 for the exact compute times)\n",
                opts.output.c_str(), opts.output.c_str(), e.ranks - 1, e.ranks, static_cast<unsigned long long>(e.nodes),
                opts.output.c_str());
    return 0;
  } catch (const ConfigError& e) {
    throw ConfigError(cfg.locate(e.what()));
  }
}

}  // namespace

int export_chakra_command(const ExportOptions& opts) {
  try {
    return export_impl(opts);
  } catch (const util::UserError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: unexpected failure: %s\n", e.what());
    return 1;
  }
}

}  // namespace fabricsim::app
