// fabricsim export-chakra: a configured job written out as a Chakra trace
// (one .et file per rank), message by message, so that it replays as
// `workload.kind = "trace"` (docs/model.md, "Chakra traces").
#include <algorithm>
#include <queue>
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
// matches the k-th receive whatever the order), a join a COMP_NODE of no
// time and no operations (which ASTRA-sim skips and fabricsim runs as a
// join: done with its dependencies, off the compute stream).  Ranks: the
// endpoints the job uses, in ascending order.  Memory: the graph, and the
// files' bytes until they are written.
Exported export_graph(const TaskGraph& g, const net::Network& net, const std::string& prefix) {
  const std::size_t T = g.size();
  std::vector<net::EndpointId> used;
  const auto dst_of = [&](TaskId t) { return net.message(g.task(t).message).dst; };
  for (TaskId t = 0; t < T; ++t) {
    used.push_back(g.task(t).at);
    if (g.task(t).kind == TaskGraph::Kind::Message) used.push_back(dst_of(t));
    if (g.task(t).kind == TaskGraph::Kind::Join && g.task(t).reduce_gbps() > 0) throw ConfigError(kNoReduction);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  const auto rank_of = [&](net::EndpointId e) {
    return static_cast<std::uint32_t>(std::lower_bound(used.begin(), used.end(), e) - used.begin());
  };
  // Incoming dependencies per task (CSR).
  const std::vector<TaskGraph::Dependency> deps_all = g.dependencies();
  // The tasks in an order where each comes after what it depends on (the
  // smallest task id first among those ready): a rank's file then names
  // only earlier nodes, so a streaming replay reads it in one pass
  // (workload.trace_stream).
  std::vector<TaskId> order;
  {
    std::vector<std::uint32_t> indeg(T, 0), out_first(T + 1, 0);
    for (const TaskGraph::Dependency& d : deps_all) {
      ++indeg[d.to];
      ++out_first[d.from + 1];
    }
    for (std::size_t t = 0; t < T; ++t) out_first[t + 1] += out_first[t];
    std::vector<TaskId> out(deps_all.size());
    {
      std::vector<std::uint32_t> fill(out_first.begin(), out_first.end() - 1);
      for (const TaskGraph::Dependency& d : deps_all) out[fill[d.from]++] = d.to;
    }
    std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>> ready;
    for (TaskId t = 0; t < T; ++t)
      if (indeg[t] == 0) ready.push(t);
    order.reserve(T);
    while (!ready.empty()) {
      const TaskId t = ready.top();
      ready.pop();
      order.push_back(t);
      for (std::uint32_t k = out_first[t]; k < out_first[t + 1]; ++k)
        if (--indeg[out[k]] == 0) ready.push(out[k]);
    }
    FABRICSIM_ASSERT(order.size() == T, "a planned graph without cycles");
  }
  // Node ids per rank, in that order: a task's node (a message: its send),
  // and a message's receive.
  std::vector<std::uint64_t> next(used.size(), 0), node(T), recv(T, UINT64_MAX);
  for (const TaskId t : order) {
    node[t] = next[rank_of(g.task(t).at)]++;
    if (g.task(t).kind == TaskGraph::Kind::Message) recv[t] = next[rank_of(dst_of(t))]++;
  }
  std::vector<std::uint32_t> first(T + 1, 0);
  for (const TaskGraph::Dependency& d : deps_all) {
    if (d.delay > core::SimTime::zero()) throw ConfigError(kNoReduction);
    ++first[d.to + 1];
  }
  for (std::size_t t = 0; t < T; ++t) first[t + 1] += first[t];
  std::vector<std::uint64_t> in(deps_all.size());
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (const TaskGraph::Dependency& d : deps_all)
      in[fill[d.to]++] = g.task(d.from).kind == TaskGraph::Kind::Message && !d.sent ? recv[d.from] : node[d.from];
  }
  std::vector<std::string> files(used.size());
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  for (std::string& f : files) append_record(f, meta);
  pb::Node n;
  std::uint64_t nodes = 0;
  for (const TaskId t : order) {
    const auto& task = g.task(t);
    const std::uint32_t r = rank_of(task.at);
    const char* phase = workload::to_string(static_cast<workload::DnnPhase>(task.label & 0xFF));
    n.Clear();
    n.set_id(node[t]);
    std::sort(in.begin() + first[t], in.begin() + first[t + 1]);
    for (std::uint32_t k = first[t]; k < first[t + 1]; ++k)
      if (k == first[t] || in[k] != in[k - 1]) n.add_data_deps(in[k]);
    ++nodes;
    if (task.kind != TaskGraph::Kind::Message) {
      n.set_type(pb::COMP_NODE);
      if (task.kind == TaskGraph::Kind::Join) {
        n.set_name(fmt::format("{} join {}", phase, t));
      } else {
        n.set_name(fmt::format("{} compute {}", phase, t));
        const std::int64_t ps = task.duration().ps();
        n.set_duration_micros(static_cast<std::uint64_t>((ps + 500'000) / 1'000'000));
        add_int(n, "num_ops", ps);
      }
      append_record(files[r], n);
      continue;
    }
    const net::Message& m = net.message(task.message);
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
    ++nodes;
  }
  // All the files or none: a failure removes those written before it.
  for (std::uint32_t r = 0; r < files.size(); ++r) {
    const std::string path = fmt::format("{}.{}.et", prefix, r);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(files[r].data(), static_cast<std::streamsize>(files[r].size()));
    out.close();
    if (!out) {
      for (std::uint32_t k = 0; k <= r; ++k) std::remove(fmt::format("{}.{}.et", prefix, k).c_str());
      throw util::UserError(fmt::format("{}: cannot write it (export-chakra -o); no file of the trace is left",
                                        path));
    }
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
  return report_errors([&] { return export_impl(opts); });
}

}  // namespace fabricsim::app
