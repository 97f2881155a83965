#include "trace_file.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"
#include "json.hpp"

namespace fabricsim::app {

using json::Value;
using util::ConfigError;

namespace {

struct Reader {
  const std::string& file;

  [[noreturn]] void fail(const Value& v, const std::string& key, const std::string& what) const {
    throw ConfigError(fmt::format("{}:{}:{}: {}: {}", file, v.line, v.column, key, what));
  }
  void keys(const Value& obj, const std::string& ctx, const std::set<std::string>& allowed) const {
    for (const auto& [k, v] : obj.object)
      if (allowed.count(k) == 0) fail(v, ctx + "." + k, "unknown key");
  }
  const Value& need(const Value& obj, const std::string& ctx, const char* key) const {
    const Value* v = obj.find(key);
    if (v == nullptr) fail(obj, ctx, fmt::format("missing \"{}\"", key));
    return *v;
  }
  std::uint64_t integer(const Value& v, const std::string& key, std::uint64_t max = UINT64_C(1) << 53) const {
    if (v.type != Value::Type::Number) fail(v, key, fmt::format("expected an integer, not {}", json::to_string(v.type)));
    if (v.number < 0 || v.number != std::floor(v.number) || v.number > static_cast<double>(max))
      fail(v, key, fmt::format("expected an integer from 0 to {}", max));
    return static_cast<std::uint64_t>(v.number);
  }
  std::string text(const Value& v, const std::string& key) const {
    if (v.type != Value::Type::String) fail(v, key, fmt::format("expected a string, not {}", json::to_string(v.type)));
    return v.string;
  }
  std::vector<std::uint64_t> ids(const Value& v, const std::string& key) const {
    if (v.type != Value::Type::Array) fail(v, key, "expected an array of node ids");
    std::vector<std::uint64_t> out;
    for (const Value& e : v.array) out.push_back(integer(e, key));
    return out;
  }
};

workload::CollectiveOp comm_type(const Reader& rd, const Value& v, const std::string& key) {
  const std::string t = rd.text(v, key);
  using workload::CollectiveOp;
  if (t == "ALL_REDUCE") return CollectiveOp::Allreduce;
  if (t == "REDUCE_SCATTER") return CollectiveOp::ReduceScatter;
  if (t == "ALL_GATHER") return CollectiveOp::Allgather;
  if (t == "ALL_TO_ALL") return CollectiveOp::Alltoall;
  if (t == "BROADCAST") return CollectiveOp::Broadcast;
  if (t == "REDUCE") return CollectiveOp::Reduce;
  if (t == "BARRIER") return CollectiveOp::Barrier;
  rd.fail(v, key,
          fmt::format("unknown comm_type \"{}\" (ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL, BROADCAST, "
                      "REDUCE, BARRIER)",
                      t));
}

}  // namespace

workload::Trace load_trace(const std::string& path, std::uint64_t read_budget) {
  std::uint64_t tree = 0;  // the text and tree, held while the nodes are read from them
  const Value root = json::parse_file(path, "workload.trace", read_budget, &tree);
  const Reader rd{path};
  if (root.type != Value::Type::Object) rd.fail(root, "trace", "expected a JSON object");
  rd.keys(root, "trace", {"schema", "name", "ranks", "nodes"});
  workload::Trace tr;
  tr.file = path;
  tr.read_budget = read_budget;
  tr.read_beside = tree;
  const Value& schema = rd.need(root, "trace", "schema");
  if (rd.text(schema, "schema") != "fabricsim-trace-1")
    rd.fail(schema, "schema", "expected \"fabricsim-trace-1\" (the format of docs/model.md)");
  if (const Value* n = root.find("name")) tr.name = rd.text(*n, "name");
  tr.ranks = static_cast<std::uint32_t>(rd.integer(rd.need(root, "trace", "ranks"), "ranks", 1u << 24));
  if (tr.ranks == 0) rd.fail(*root.find("ranks"), "ranks", "a trace needs at least one rank");
  const Value& nodes = rd.need(root, "trace", "nodes");
  if (nodes.type != Value::Type::Array || nodes.array.empty()) rd.fail(nodes, "nodes", "expected a non-empty array");
  std::vector<double> compute_us(tr.ranks, 0.0);  // per rank
  std::vector<std::uint64_t> deps;
  std::vector<std::uint32_t> group;
  std::string name;
  for (std::size_t i = 0; i < nodes.array.size(); ++i) {
    const Value& v = nodes.array[i];
    const std::string ctx = fmt::format("nodes[{}]", i);
    if (v.type != Value::Type::Object) rd.fail(v, ctx, "expected an object");
    workload::TraceNode n;
    n.line = v.line;
    const std::uint64_t id = rd.integer(rd.need(v, ctx, "id"), ctx + ".id");
    const auto rank = static_cast<std::uint32_t>(rd.integer(rd.need(v, ctx, "rank"), ctx + ".rank", tr.ranks - 1));
    name.clear();
    if (const Value* x = v.find("name")) name = rd.text(*x, ctx + ".name");
    deps.clear();
    for (const char* k : {"data_deps", "ctrl_deps"})
      if (const Value* x = v.find(k)) {
        const auto d = rd.ids(*x, ctx + "." + k);
        deps.insert(deps.end(), d.begin(), d.end());
      }
    const Value& type = rd.need(v, ctx, "type");
    const std::string t = rd.text(type, ctx + ".type");
    // At most 2^40 bytes, as workload.sizes.
    const auto bytes = [&] { return rd.integer(rd.need(v, ctx, "comm_size"), ctx + ".comm_size", UINT64_C(1) << 40); };
    const auto peer = [&](const char* key) {
      const Value& p = rd.need(v, ctx, key);
      const auto r = static_cast<std::uint32_t>(rd.integer(p, ctx + "." + key, tr.ranks - 1));
      if (r == rank) rd.fail(p, ctx + "." + key, "a rank does not send to itself");
      return r;
    };
    const auto tag = [&] {
      const Value* x = v.find("comm_tag");
      return x == nullptr ? 0 : static_cast<std::int64_t>(rd.integer(*x, ctx + ".comm_tag"));
    };
    const std::set<std::string> common{"id", "rank", "name", "type", "data_deps", "ctrl_deps"};
    const auto allow = [&](std::initializer_list<const char*> extra) {
      std::set<std::string> a = common;
      for (const char* e : extra) a.insert(e);
      rd.keys(v, ctx, a);
    };
    if (t == "COMP_NODE") {
      allow({"duration_micros"});
      const Value& d = rd.need(v, ctx, "duration_micros");
      if (d.type != Value::Type::Number || !(d.number >= 0) || !(d.number <= 1e12))
        rd.fail(d, ctx + ".duration_micros", "expected a time in microseconds from 0 to 1e12");
      n.kind = workload::TraceNode::Kind::Compute;
      n.duration_ns = d.number * 1000.0;
      // A rank computes one task at a time: its compute alone must end inside
      // the int64-picosecond range of simulated time.
      if ((compute_us[rank] += d.number) > 0x1p63 / 1e6)
        rd.fail(d, ctx + ".duration_micros",
                fmt::format("the compute of rank {} adds up to {:.3g} s, beyond the int64-picosecond range of "
                            "simulated time (about 106 days)",
                            rank, compute_us[rank] * 1e-6));
    } else if (t == "COMM_SEND_NODE") {
      allow({"comm_dst", "comm_size", "comm_tag"});
      n.kind = workload::TraceNode::Kind::Send;
      n.peer = peer("comm_dst");
      n.bytes = bytes();
      n.tag = tag();
    } else if (t == "COMM_RECV_NODE") {
      allow({"comm_src", "comm_size", "comm_tag"});
      n.kind = workload::TraceNode::Kind::Recv;
      n.peer = peer("comm_src");
      n.bytes = bytes();
      n.tag = tag();
    } else if (t == "COMM_COLL_NODE") {
      allow({"comm_type", "comm_size", "comm_group", "comm_root"});
      n.kind = workload::TraceNode::Kind::Collective;
      n.op = comm_type(rd, rd.need(v, ctx, "comm_type"), ctx + ".comm_type");
      n.bytes = n.op == workload::CollectiveOp::Barrier ? 0 : bytes();
      group.clear();
      if (const Value* gr = v.find("comm_group")) {
        if (gr->type != Value::Type::Array) rd.fail(*gr, ctx + ".comm_group", "expected an array of ranks");
        for (const Value& e : gr->array)
          group.push_back(static_cast<std::uint32_t>(rd.integer(e, ctx + ".comm_group", tr.ranks - 1)));
        std::vector<std::uint32_t> sorted = group;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
          rd.fail(*gr, ctx + ".comm_group", "a rank appears twice");
        if (sorted.size() < 2) rd.fail(*gr, ctx + ".comm_group", "a collective needs at least 2 ranks");
      } else if (tr.ranks < 2) {
        rd.fail(v, ctx, "a collective needs at least 2 ranks");
      }
      if (const Value* x = v.find("comm_root")) {
        const std::size_t members = group.empty() ? tr.ranks : group.size();
        n.root = static_cast<std::uint32_t>(rd.integer(*x, ctx + ".comm_root", members - 1));
      }
      if (!group.empty()) n.group = tr.add_group(group);
    } else {
      rd.fail(type, ctx + ".type",
              fmt::format("unknown node type \"{}\" (COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)", t));
    }
    tr.add_node(id, rank, n, name, deps.data(), deps.data() + deps.size());
  }
  return tr;
}

}  // namespace fabricsim::app
