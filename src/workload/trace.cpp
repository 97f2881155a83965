#include "fabricsim/workload/trace.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/capacity.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"

namespace fabricsim::workload {

using core::SimTime;
using util::ConfigError;
using TaskId = TaskGraph::TaskId;

void Trace::add_node(std::uint64_t id, std::uint32_t rank, TraceNode n, std::string_view node_name,
                     const std::uint64_t* deps_first, const std::uint64_t* deps_last) {
  n.deps_count = static_cast<std::uint32_t>(deps_last - deps_first);
  reading_rank_ = rank;
  make_room(deps, n.deps_count);
  make_room(heads, 1);
  make_room(nodes, 1);
  deps.insert(deps.end(), deps_first, deps_last);
  heads.push_back({id, intern(node_name), rank, n.kind});
  nodes.push_back(n);
}

std::uint64_t Trace::memory_bytes() const {
  using util::capacity_bytes;
  std::uint64_t b = capacity_bytes(nodes) + capacity_bytes(heads) + capacity_bytes(deps) + names.capacity() +
                    capacity_bytes(name_ends) + capacity_bytes(name_slots_);
  for (const auto& g : groups) b += capacity_bytes(g);
  return b;
}

std::uint64_t Trace::resident_bytes() const {
  std::uint64_t b = nodes.size() * sizeof(TraceNode) + heads.size() * sizeof(PlannedTraceNode) +
                    deps.size() * sizeof(std::uint64_t) + names.size() + name_ends.size() * sizeof(std::uint64_t) +
                    name_slots_.size() * sizeof(std::uint32_t);
  for (const auto& g : groups) b += g.size() * sizeof(std::uint32_t);
  return b;
}

template <class V>
void Trace::make_room(V& v, std::size_t need) {
  if (v.size() + need <= v.capacity()) return;
  using T = typename V::value_type;
  std::size_t want = std::max(2 * v.capacity(), v.size() + need);
  if (read_budget != UINT64_MAX) {
    // Twice its capacity, or as much as the budget leaves: while the array
    // is copied the old one is held too, and after it, what every array
    // can fill to before it grows again stays within the budget.
    const std::uint64_t held = memory_bytes() + read_beside;
    const std::uint64_t room = held >= read_budget ? 0 : (read_budget - held) / sizeof(T);
    if (room < v.size() + need) refuse_read(memory_bytes() + (v.size() + need) * sizeof(T));
    want = static_cast<std::size_t>(std::min<std::uint64_t>(want, room));
  }
  v.reserve(want);
}

// `want`: what its arrays were about to hold (read_beside apart).
void Trace::refuse_read(std::uint64_t want) const {
  const std::uint64_t held = memory_bytes();
  const std::string what =
      rank_files.empty()
          ? fmt::format("reading the trace {}", file)
          : fmt::format("reading the trace {} ({} rank files, {})", file, ranks,
                        util::human_bytes(static_cast<double>(file_bytes)));
  const std::string upto = rank_files.empty() ? std::string() : fmt::format(" up to rank {}'s file", reading_rank_);
  throw ConfigError(fmt::format(
      "engine.memory_limit_gib: {} would outgrow the {} the memory limit leaves the jobs: its {} nodes{} hold {}{} "
      "and were about to need {} (every rank reads and plans the whole trace, so more ranks do not help); run a "
      "smaller trace, or raise engine.memory_limit_gib",
      what, util::human_bytes(static_cast<double>(read_budget)), nodes.size(), upto,
      util::human_bytes(static_cast<double>(held)),
      read_beside == 0 ? std::string()
                       : fmt::format(" beside the {} of its file's text and JSON tree",
                                     util::human_bytes(static_cast<double>(read_beside))),
      util::human_bytes(static_cast<double>(want + read_beside))));
}

std::uint32_t Trace::intern(std::string_view s) {
  if (2 * (name_ends.size() + 1) > name_slots_.size()) {
    // Grow (and rehash) at half full.
    const std::size_t slots = std::max<std::size_t>(64, 2 * name_slots_.size());
    if (read_budget != UINT64_MAX && memory_bytes() + read_beside + slots * sizeof(std::uint32_t) > read_budget)
      refuse_read(memory_bytes() + slots * sizeof(std::uint32_t));
    std::vector<std::uint32_t> grown(slots, 0);
    for (std::uint32_t k = 0; k < name_ends.size(); ++k) {
      std::size_t at = std::hash<std::string_view>{}(node_name(k)) & (grown.size() - 1);
      while (grown[at] != 0) at = (at + 1) & (grown.size() - 1);
      grown[at] = k + 1;
    }
    name_slots_.swap(grown);
  }
  std::size_t at = std::hash<std::string_view>{}(s) & (name_slots_.size() - 1);
  for (; name_slots_[at] != 0; at = (at + 1) & (name_slots_.size() - 1))
    if (node_name(name_slots_[at] - 1) == s) return name_slots_[at] - 1;
  if (name_ends.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
    throw ConfigError(file + ": more than 2^32 - 2 distinct node names");
  make_room(names, s.size());
  make_room(name_ends, 1);
  names.append(s);
  name_ends.push_back(names.size());
  name_slots_[at] = static_cast<std::uint32_t>(name_ends.size());
  return name_slots_[at] - 1;
}

std::uint32_t Trace::add_group(const std::vector<std::uint32_t>& members) {
  bool all = members.size() == ranks;
  for (std::size_t i = 0; all && i < members.size(); ++i) all = members[i] == i;
  if (all) return 0;
  const auto [it, fresh] = group_index.try_emplace(members, static_cast<std::uint32_t>(groups.size()));
  if (fresh) groups.push_back(members);
  return it->second;
}

namespace {

// What the checks of a trace find out about its nodes (indices into
// trace.nodes), on the way to its tasks.  Flat arrays of 32-bit indices: a
// trace of a million nodes has as many entries of each, and a vector per
// node (or a hash map of them) took several times the nodes themselves.
struct TraceIndex {
  const Trace& t;
  std::vector<std::size_t> rank_begin;   // per rank r: its nodes, by id, are rank_nodes[rank_begin[r], rank_begin[r + 1])
  std::vector<std::uint32_t> rank_nodes;
  std::vector<std::uint32_t> dep_node;   // per entry of t.deps: the node it names
  std::vector<std::uint32_t> match;      // per recv node: its send (N: none)
  std::string where(std::size_t i) const {
    if (!t.rank_files.empty()) return t.rank_files[t.heads[i].rank] + ": node " + std::to_string(t.heads[i].id);
    return t.file + ":" + std::to_string(t.nodes[i].line) + ": node " + std::to_string(t.heads[i].id);
  }
  const std::uint32_t* rank_first(std::uint32_t r) const { return rank_nodes.data() + rank_begin[r]; }
  const std::uint32_t* rank_last(std::uint32_t r) const { return rank_nodes.data() + rank_begin[r + 1]; }
};

// One collective: per member (in group order), its node.
struct TraceCollective {
  const std::vector<std::uint32_t>* members;
  std::vector<std::size_t> nodes;
};

// Node ids unique (in the trace; a trace of one file per rank: in its rank);
// per rank its nodes in id order; dependencies on known nodes of the same
// rank.
void index_nodes(TraceIndex& x) {
  const Trace& t = x.t;
  const std::size_t N = t.nodes.size();
  if (N >= std::numeric_limits<std::uint32_t>::max())
    throw ConfigError(t.file + ": " + std::to_string(N) + " nodes, more than a trace can hold (2^32 - 2)");
  const bool per_rank = !t.rank_files.empty();
  // The nodes by (rank, id), or by id where ids are unique in the whole
  // trace; equal ids by index, so the first repeat is found as a map of
  // the ids filled in node order would find it.
  const auto key = [&](std::uint32_t i) { return std::make_pair(per_rank ? t.heads[i].rank : 0u, t.heads[i].id); };
  std::vector<std::uint32_t> by_id(N);
  std::iota(by_id.begin(), by_id.end(), 0u);
  std::sort(by_id.begin(), by_id.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto ka = key(a), kb = key(b);
    return ka < kb || (ka == kb && a < b);
  });
  std::size_t repeat = N;  // the first node (in node order) whose id an earlier node has
  for (std::size_t k = 1; k < N; ++k)
    if (key(by_id[k]) == key(by_id[k - 1]) && (k < 2 || key(by_id[k - 2]) != key(by_id[k])))
      repeat = std::min<std::size_t>(repeat, by_id[k]);
  if (repeat < N) throw ConfigError(x.where(repeat) + ": id: used by an earlier node too");
  // Per rank, in id order: a stable counting sort of by_id by rank.
  x.rank_begin.assign(t.ranks + 1, 0);
  for (const PlannedTraceNode& n : t.heads) ++x.rank_begin[n.rank + 1];
  for (std::uint32_t r = 0; r < t.ranks; ++r) x.rank_begin[r + 1] += x.rank_begin[r];
  x.rank_nodes.assign(N, 0);
  {
    std::vector<std::size_t> at(x.rank_begin.begin(), x.rank_begin.end() - 1);
    for (std::uint32_t i : by_id) x.rank_nodes[at[t.heads[i].rank]++] = i;
  }
  x.dep_node.assign(t.deps.size(), 0);
  for (std::size_t i = 0, at = 0; i < N; at += t.nodes[i++].deps_count) {
    const TraceNode& n = t.nodes[i];
    const std::uint32_t rank = t.heads[i].rank;
    for (std::uint32_t j = 0; j < n.deps_count; ++j) {
      const std::uint64_t d = t.deps[at + j];
      const auto want = std::make_pair(per_rank ? rank : 0u, d);
      const auto it = std::lower_bound(by_id.begin(), by_id.end(), want,
                                       [&](std::uint32_t a, const auto& v) { return key(a) < v; });
      if (it == by_id.end() || key(*it) != want)
        throw ConfigError(x.where(i) + ": data_deps/ctrl_deps: no node has id " + std::to_string(d));
      if (t.heads[*it].rank != rank)
        throw ConfigError(x.where(i) + ": data_deps/ctrl_deps: node " + std::to_string(d) + " is on rank " +
                          std::to_string(t.heads[*it].rank) + ", not " + std::to_string(rank) +
                          " (ranks depend on each other only through send/recv and collective nodes)");
      x.dep_node[at + j] = *it;
    }
  }
}

// Point to point: the k-th send a -> b with a tag matches the k-th receive
// at b from a with that tag; every send and receive has its match.
void match_point_to_point(TraceIndex& x) {
  const Trace& t = x.t;
  const std::size_t N = t.nodes.size();
  // (sender, receiver, tag) and the node, in the order of the key, then of
  // the node's id on its rank.
  struct End {
    std::uint32_t from, to;
    std::int64_t tag;
    std::uint32_t node;
  };
  std::vector<End> sends, recvs;
  for (std::uint32_t r = 0; r < t.ranks; ++r)
    for (const std::uint32_t* p = x.rank_first(r); p != x.rank_last(r); ++p) {
      const TraceNode& n = t.nodes[*p];
      if (n.kind == TraceNode::Kind::Send) sends.push_back({r, n.peer, n.tag, *p});
      if (n.kind == TraceNode::Kind::Recv) recvs.push_back({n.peer, r, n.tag, *p});
    }
  const auto key = [](const End& e) { return std::make_tuple(e.from, e.to, e.tag); };
  const auto by_key = [&](const End& a, const End& b) { return key(a) < key(b); };
  std::stable_sort(sends.begin(), sends.end(), by_key);
  std::stable_sort(recvs.begin(), recvs.end(), by_key);
  // [first, last) of the ends of `v` with e's key.
  const auto run = [&](const std::vector<End>& v, const End& e) {
    const auto [a, b] = std::equal_range(v.begin(), v.end(), e, by_key);
    return std::make_pair(static_cast<std::size_t>(a - v.begin()), static_cast<std::size_t>(b - v.begin()));
  };
  x.match.assign(N, static_cast<std::uint32_t>(N));
  for (std::size_t i = 0; i < sends.size();) {
    const auto [s0, s1] = run(sends, sends[i]);
    const auto [r0, r1] = run(recvs, sends[i]);
    const std::size_t have = r1 - r0;
    if (have < s1 - s0)
      throw ConfigError(x.where(sends[s0 + have].node) + ": send to rank " + std::to_string(sends[i].to) + " (tag " +
                        std::to_string(sends[i].tag) + ") has no matching recv node there");
    for (std::size_t k = 0; k < s1 - s0; ++k) {
      const std::uint32_t rv = recvs[r0 + k].node, sd = sends[s0 + k].node;
      if (t.nodes[rv].bytes != t.nodes[sd].bytes)
        throw ConfigError(x.where(rv) + ": comm_size: " + std::to_string(t.nodes[rv].bytes) +
                          " bytes, but the matching send (node " + std::to_string(t.heads[sd].id) + ") sends " +
                          std::to_string(t.nodes[sd].bytes));
      x.match[rv] = sd;
    }
    i = s1;
  }
  for (std::size_t i = 0; i < recvs.size();) {
    const auto [r0, r1] = run(recvs, recvs[i]);
    const auto [s0, s1] = run(sends, recvs[i]);
    const std::size_t have = s1 - s0;
    if (have < r1 - r0)
      throw ConfigError(x.where(recvs[r0 + have].node) + ": recv from rank " + std::to_string(recvs[i].from) +
                        " (tag " + std::to_string(recvs[i].tag) + ") has no matching send node there");
    i = r1;
  }
}

// Collectives: the k-th node of a rank with a given group matches the k-th
// of every other member, and they agree on what it is.  Groups in the order
// of their member lists (`all`: every rank, for group 0).
std::vector<TraceCollective> match_collectives(const TraceIndex& x, const std::vector<std::uint32_t>& all) {
  const Trace& t = x.t;
  const auto members_of = [&](std::uint32_t g) -> const std::vector<std::uint32_t>& {
    return g == 0 ? all : t.groups[g];
  };
  std::vector<std::vector<std::vector<std::uint32_t>>> per(t.groups.size());  // group -> per member, its nodes
  for (std::uint32_t r = 0; r < t.ranks; ++r)
    for (const std::uint32_t* p = x.rank_first(r); p != x.rank_last(r); ++p) {
      const TraceNode& n = t.nodes[*p];
      if (n.kind != TraceNode::Kind::Collective) continue;
      const std::vector<std::uint32_t>& members = members_of(n.group);
      const auto pos = std::find(members.begin(), members.end(), r);
      if (pos == members.end())
        throw ConfigError(x.where(*p) + ": comm_group: rank " + std::to_string(r) + " is not in its own group");
      per[n.group].resize(members.size());
      per[n.group][static_cast<std::size_t>(pos - members.begin())].push_back(*p);
    }
  std::vector<std::uint32_t> order(t.groups.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return members_of(a) < members_of(b); });
  std::vector<TraceCollective> instances;
  for (std::uint32_t g : order) {
    const auto& members = members_of(g);
    const auto& of = per[g];
    std::size_t count = 0;
    for (const auto& v : of) count = std::max(count, v.size());
    for (std::size_t k = 0; k < count; ++k) {
      TraceCollective inst{&members, {}};
      for (std::size_t m = 0; m < members.size(); ++m) {
        if (k >= of[m].size()) {
          std::size_t any = 0;  // a node that has a k-th collective in this group
          for (const auto& v : of)
            if (v.size() > k) any = v[k];
          throw ConfigError(x.where(any) + ": comm_group: rank " + std::to_string(members[m]) + " has only " +
                            std::to_string(of[m].size()) + " collective nodes in this group, others more");
        }
        const std::size_t i = of[m][k], first = of[0][k];
        const TraceNode &a = t.nodes[i], &b = t.nodes[first];
        if (a.op != b.op || a.bytes != b.bytes || a.root != b.root)
          throw ConfigError(x.where(i) + ": comm_type/comm_size/comm_root: differs from node " +
                            std::to_string(t.heads[first].id) + " of rank " + std::to_string(t.heads[first].rank) +
                            ", its match in the group");
        inst.nodes.push_back(i);
      }
      instances.push_back(std::move(inst));
    }
  }
  return instances;
}

// A cycle would leave the replay waiting forever: refuse it.  Vertices:
// nodes, with the members of one collective merged (Kahn's algorithm).
void check_acyclic(const TraceIndex& x, const std::vector<TraceCollective>& instances) {
  const std::size_t N = x.t.nodes.size();
  std::vector<std::uint32_t> rep(N);
  std::iota(rep.begin(), rep.end(), 0u);
  for (const TraceCollective& inst : instances)
    for (std::size_t i : inst.nodes) rep[i] = static_cast<std::uint32_t>(inst.nodes[0]);
  // The edges, counted and then placed (one array, not a vector per node).
  std::vector<std::size_t> begin(N + 1, 0);
  std::vector<std::uint32_t> indeg(N, 0);
  const auto each_edge = [&](auto&& edge) {
    for (std::size_t i = 0, at = 0; i < N; ++i) {
      for (const std::size_t last = at + x.t.nodes[i].deps_count; at < last; ++at) edge(rep[x.dep_node[at]], rep[i]);
      if (x.match[i] < N) edge(rep[x.match[i]], rep[i]);
    }
  };
  each_edge([&](std::uint32_t a, std::uint32_t b) {
    ++begin[a + 1];
    ++indeg[b];
  });
  for (std::size_t v = 0; v < N; ++v) begin[v + 1] += begin[v];
  std::vector<std::uint32_t> out(begin[N]);
  {
    std::vector<std::size_t> at(begin.begin(), begin.end() - 1);
    each_edge([&](std::uint32_t a, std::uint32_t b) { out[at[a]++] = b; });
  }
  std::vector<std::uint32_t> ready;
  for (std::size_t i = 0; i < N; ++i)
    if (rep[i] == i && indeg[i] == 0) ready.push_back(static_cast<std::uint32_t>(i));
  std::size_t seen = 0, vertices = 0;
  for (std::size_t i = 0; i < N; ++i) vertices += rep[i] == i;
  while (!ready.empty()) {
    const std::uint32_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (std::size_t e = begin[v]; e < begin[v + 1]; ++e)
      if (--indeg[out[e]] == 0) ready.push_back(out[e]);
  }
  if (seen != vertices) {
    std::size_t stuck = 0;
    while (indeg[rep[stuck]] == 0) ++stuck;
    throw ConfigError(x.where(stuck) +
                      ": data_deps/ctrl_deps: a dependency cycle runs through this node (with "
                      "matched communication), the trace could never finish");
  }
}

}  // namespace

// The algorithm of a collective node: its operation's own, or the job's for
// allreduce, reduce_scatter and allgather (and for gather and scatter when
// the job's is tacos, the other one that implements them).
CollectiveSpec trace_collective_spec(const TraceNode& first, std::uint32_t n, const std::string& algorithm) {
  CollectiveSpec spec;
  spec.op = first.op;
  const bool rooted_parts = first.op == CollectiveOp::Gather || first.op == CollectiveOp::Scatter;
  spec.algorithm = first.op == CollectiveOp::Alltoall                                        ? "pairwise"
                   : first.op == CollectiveOp::Barrier                                       ? "dissemination"
                   : first.op == CollectiveOp::Broadcast || first.op == CollectiveOp::Reduce ? "tree"
                   : rooted_parts && algorithm != "tacos"                                    ? "direct"
                                                                                             : algorithm;
  spec.root = first.root;
  spec.bytes = first.op == CollectiveOp::Barrier ? 0 : std::max(first.bytes, min_collective_bytes(spec, n));
  return spec;
}

namespace {

// The tasks of a trace's nodes.  Entry: what a node's dependencies hold
// back; done: what completes it; msg: a send's message.
struct NodeTasks {
  std::vector<TaskId> entry, done, msg;
};

std::uint32_t trace_label(std::uint32_t job, DnnPhase p) { return (job << 8) | static_cast<std::uint32_t>(p); }

// A task per node (but a receive without dependencies, which is its message:
// TraceJob); a collective node's done task comes with its collective.
// A send node is its message: done when the message has left the NIC
// (TaskGraph::Task::sent), which its dependents wait for (depend_sent), not
// a join of its own (491,520 tasks of 56 bytes and their edges in the
// 1,024-rank benchmark).
NodeTasks add_node_tasks(TaskGraph& g, const TraceParams& p, std::uint32_t job, std::vector<double>& compute_ns) {
  const Trace& t = p.trace;
  const std::size_t N = t.nodes.size();
  const auto ep = [&](std::uint32_t r) { return p.endpoints[r]; };
  NodeTasks k{std::vector<TaskId>(N, TaskGraph::kNone), std::vector<TaskId>(N, TaskGraph::kNone),
              std::vector<TaskId>(N, TaskGraph::kNone)};
  compute_ns.assign(t.ranks, 0.0);
  // One task per node but a receive without dependencies (the collectives'
  // own tasks come later, by collective).
  std::size_t tasks = 0, messages = 0;
  for (const TraceNode& n : t.nodes) {
    tasks += n.kind != TraceNode::Kind::Recv || n.deps_count > 0;
    messages += n.kind == TraceNode::Kind::Send;
  }
  g.reserve(tasks, messages);
  for (std::size_t i = 0; i < N; ++i) {
    const TraceNode& n = t.nodes[i];
    const std::uint32_t rank = t.heads[i].rank;
    switch (n.kind) {
      case TraceNode::Kind::Compute:
        // A node of no time is a join, as ASTRA-sim skips it: done once its
        // dependencies are, without waiting for the rank's compute stream.
        k.entry[i] = k.done[i] =
            n.duration_ns > 0
                ? g.add_compute(ep(rank), SimTime::from_ns_f(n.duration_ns), trace_label(job, DnnPhase::Forward))
                : g.add_join(ep(rank), trace_label(job, DnnPhase::Control));
        compute_ns[rank] += n.duration_ns;
        break;
      case TraceNode::Kind::Send:
        k.entry[i] = k.done[i] = k.msg[i] = g.add_message(ep(rank), ep(n.peer), std::max<std::uint64_t>(n.bytes, 1),
                                                          trace_label(job, DnnPhase::Pipeline));
        break;
      case TraceNode::Kind::Recv:
        // A receive with dependencies of its own is a join of them and its
        // message; one without is its message (set once matched), done when
        // it has arrived: every receive of an exported trace (491,520 tasks
        // and edges fewer in the 1,024-rank benchmark).
        if (n.deps_count > 0) k.entry[i] = k.done[i] = g.add_join(ep(rank), trace_label(job, DnnPhase::Control));
        break;
      case TraceNode::Kind::Collective: k.entry[i] = g.add_join(ep(rank), trace_label(job, DnnPhase::Control)); break;
    }
  }
  return k;
}

// Every collective over its members' entry tasks; its ends complete the nodes.
void plan_collectives(TaskGraph& g, const TraceParams& p, std::uint32_t job, const TraceIndex& x,
                      const std::vector<TraceCollective>& collectives, NodeTasks& k,
                      std::vector<std::pair<TaskId, std::uint32_t>>& message_nodes) {
  for (const TraceCollective& inst : collectives) {
    const TraceNode& first = p.trace.nodes[inst.nodes[0]];
    const auto n = static_cast<std::uint32_t>(inst.members->size());
    const CollectiveSpec spec = trace_collective_spec(first, n, p.algorithm);
    try {
      check_collective(spec, n);
    } catch (const ConfigError& e) {
      throw ConfigError(x.where(inst.nodes[0]) + ": " + e.what());
    }
    std::vector<net::EndpointId> ranks;
    std::vector<TaskId> begin;
    for (std::size_t m = 0; m < inst.nodes.size(); ++m) {
      ranks.push_back(p.endpoints[(*inst.members)[m]]);
      begin.push_back(k.entry[inst.nodes[m]]);
    }
    const auto first_task = static_cast<TaskId>(g.size());
    const auto end = append_collective(g, spec, ranks, begin,
                                       trace_label(job, first.op == CollectiveOp::Alltoall ? DnnPhase::Alltoall
                                                                                           : DnnPhase::DataParallel));
    for (std::size_t m = 0; m < inst.nodes.size(); ++m) k.done[inst.nodes[m]] = end[m];
    // Its messages, each with the node of the member that sends it.
    for (auto t = first_task; t < g.size(); ++t) {
      if (g.task(t).kind != TaskGraph::Kind::Message) continue;
      const auto m = std::find(ranks.begin(), ranks.end(), g.task(t).at) - ranks.begin();
      FABRICSIM_ASSERT(static_cast<std::size_t>(m) < ranks.size(), "a collective's message from outside its group");
      message_nodes.emplace_back(t, static_cast<std::uint32_t>(inst.nodes[static_cast<std::size_t>(m)]));
    }
  }
}

}  // namespace

namespace {

// Each collective of the trace in the order TraceJob numbers them (group
// after group in the order of their member lists, each group's k-th after
// its (k-1)-th, as match_collectives meets them), counted by its first
// member's node: fn(group, k, spec, member endpoints, that node).
template <class Fn>
void for_each_trace_collective(const std::vector<TraceRankMessages>& ranks,
                               const std::vector<std::vector<std::uint32_t>>& groups,
                               const std::vector<net::EndpointId>& endpoints, const std::string& algorithm, Fn fn) {
  const auto R = static_cast<std::uint32_t>(ranks.size());
  std::vector<std::uint32_t> all(R);
  std::iota(all.begin(), all.end(), 0u);
  const auto members_of = [&](std::uint32_t g) -> const std::vector<std::uint32_t>& {
    return g == 0 ? all : groups[g];
  };
  std::vector<std::uint32_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return members_of(a) < members_of(b); });
  for (std::uint32_t g : order) {
    const std::vector<std::uint32_t>& members = members_of(g);
    if (members.empty()) continue;
    std::vector<net::EndpointId> eps;
    for (std::uint32_t r : members) eps.push_back(endpoints[r]);
    const auto n = static_cast<std::uint32_t>(members.size());
    std::uint32_t k = 0;
    for (const TraceRankMessages::Collective& c : ranks[members[0]].collectives) {
      if (c.group != g) continue;
      TraceNode node;
      node.kind = TraceNode::Kind::Collective;
      node.op = c.op;
      node.bytes = c.bytes;
      node.root = c.root;
      fn(g, k++, trace_collective_spec(node, n, algorithm), eps, members[0], c);
    }
  }
}

}  // namespace

TraceMessageIds trace_message_ids(const std::vector<TraceRankMessages>& ranks,
                                  const std::vector<std::vector<std::uint32_t>>& groups,
                                  const std::vector<net::EndpointId>& endpoints, const std::string& algorithm,
                                  const net::Topology& topo, net::MessageId first,
                                  const std::vector<std::string>& files) {
  const auto R = static_cast<std::uint32_t>(ranks.size());
  FABRICSIM_ASSERT(endpoints.size() == R, "an endpoint per rank");
  TraceMessageIds ids;
  std::uint64_t at = first;
  // Sends first, rank after rank (add_node_tasks: node order).
  ids.first_send.resize(R);
  for (std::uint32_t r = 0; r < R; ++r) {
    ids.first_send[r] = static_cast<net::MessageId>(at);
    at += ranks[r].sends;
  }
  ids.sends = at - first;
  // Then the collectives, each as many messages as its schedule sends
  // (plan_collectives).
  for_each_trace_collective(
      ranks, groups, endpoints, algorithm,
      [&](std::uint32_t g, std::uint32_t k, const CollectiveSpec& spec, const std::vector<net::EndpointId>& eps,
          std::uint32_t first_member, const TraceRankMessages::Collective& c) {
        try {
          check_collective(spec, static_cast<std::uint32_t>(eps.size()));
        } catch (const ConfigError& e) {
          const std::uint32_t r = first_member;
          throw ConfigError((r < files.size() ? files[r] + ": " : std::string("rank ") + std::to_string(r) + ": ") +
                            "node " + std::to_string(c.node) + ": " + e.what());
        }
        ids.first_collective[{g, k}] = static_cast<net::MessageId>(at);
        for (std::uint64_t s : collective_sends(spec, topo, eps)) at += s;
      });
  ids.total = at - first;
  if (at > std::numeric_limits<net::MessageId>::max())
    throw ConfigError(std::to_string(ids.total) + " messages in the trace, more than a run can number (2^32 - 1)");
  return ids;
}

TraceSends::TraceSends() : file_(sizeof(TraceRankMessages::Send), "workload.trace_stream: the send nodes") {}

void trace_records(net::Network& net, const std::vector<TraceRankMessages>& ranks, TraceSends& sends,
                   const std::vector<std::vector<std::uint32_t>>& groups,
                   const std::vector<net::EndpointId>& endpoints, const std::string& algorithm,
                   const TraceMessageIds& ids, bool describe) {
  const auto R = static_cast<std::uint32_t>(ranks.size());
  FABRICSIM_ASSERT(endpoints.size() == R && ids.first_send.size() == R, "an endpoint per rank");
  std::uint64_t n = 0;  // (the sends' numbering: TraceSends)
  for (std::uint32_t r = 0; r < R; ++r) {
    net::MessageId id = ids.first_send[r];
    // (As the stream's send: at least a byte.)
    for (std::uint64_t i = 0; i < ranks[r].sends; ++i) {
      const TraceRankMessages::Send s = sends.get(n++);
      FABRICSIM_ASSERT(s.kept == 1 && s.peer < R, "every send kept, in its place");
      const std::uint64_t bytes = std::max<std::uint64_t>(s.bytes, 1);
      if (describe)
        net.describe_at(id++, endpoints[r], endpoints[s.peer], bytes);
      else
        net.create_at(id++, endpoints[r], endpoints[s.peer], bytes, 0);
    }
  }
  sends.release_buffers();
  for_each_trace_collective(ranks, groups, endpoints, algorithm,
                            [&](std::uint32_t g, std::uint32_t k, const CollectiveSpec& spec,
                                const std::vector<net::EndpointId>& eps, std::uint32_t,
                                const TraceRankMessages::Collective&) {
                              collective_records(net, spec, eps, ids.first_collective.at({g, k}), describe);
                            });
}

TraceJob::TraceJob(TaskGraph& g, TraceParams params, std::uint32_t job) : params_(std::move(params)), job_(job) {
  const Trace& t = params_.trace;
  const std::size_t N = t.nodes.size();
  if (params_.endpoints.size() != t.ranks)
    throw ConfigError("workload.placement: the trace has " + std::to_string(t.ranks) + " ranks, " +
                      std::to_string(params_.endpoints.size()) + " endpoints were placed");
  // The trace is held while it is planned: counted against the plan budget
  // with the graph until its nodes go (what is kept is memory_bytes(),
  // counted with the jobs once they are planned).
  struct Beside {
    TaskGraph& g;
    ~Beside() { g.set_held_beside(0); }
  } beside{g};
  g.set_held_beside(t.resident_bytes());
  // Check and match the nodes.
  TraceIndex x{t, {}, {}, {}, {}};
  index_nodes(x);
  // (The index names each dependency's node: the trace's ids of them go.)
  std::vector<std::uint64_t>().swap(params_.trace.deps);
  match_point_to_point(x);
  std::vector<std::uint32_t> all(t.ranks);
  std::iota(all.begin(), all.end(), 0u);
  const std::vector<TraceCollective> collectives = match_collectives(x, all);
  check_acyclic(x, collectives);
  // Plan them: tasks, receives after their sends, collectives, dependencies.
  NodeTasks k = add_node_tasks(g, params_, job_, compute_ns_);
  for (std::size_t i = 0; i < N; ++i) {
    if (x.match[i] >= N) continue;  // (not a receive)
    if (k.done[i] == TaskGraph::kNone)
      k.entry[i] = k.done[i] = k.msg[x.match[i]];
    else
      g.depend(k.msg[x.match[i]], k.done[i]);
  }
  for (std::size_t i = 0; i < N; ++i)
    if (k.msg[i] != TaskGraph::kNone) message_nodes_.emplace_back(k.msg[i], static_cast<std::uint32_t>(i));
  plan_collectives(g, params_, job_, x, collectives, k, message_nodes_);
  std::sort(message_nodes_.begin(), message_nodes_.end());
  // What is left to plan reads of a node only its kind and its
  // dependencies (dep_node, in node order: deps_count each): the nodes go
  // first, before the last and largest part of planning (the dependency
  // edges; 44 MB of nodes in the 1,024-rank benchmark).
  Trace& rest = params_.trace;
  std::vector<std::uint32_t> deps_count(N);
  for (std::size_t i = 0; i < N; ++i) deps_count[i] = t.nodes[i].deps_count;
  planning_bytes_ = rest.nodes.size() * sizeof(TraceNode);  // (its size: room never written is never resident)
  std::vector<TraceNode>().swap(rest.nodes);
  rest.groups.assign(1, {});
  rest.group_index.clear();
  g.set_held_beside(rest.resident_bytes());
  const std::vector<PlannedTraceNode>& heads = t.heads;
  for (std::size_t i = 0, d = 0; i < N; ++i) {
    for (const std::size_t last = d + deps_count[i]; d < last; ++d) {
      const std::uint32_t before = x.dep_node[d];
      if (heads[before].kind == TraceNode::Kind::Send)
        g.depend_sent(k.msg[before], k.entry[i]);
      else
        g.depend(k.done[before], k.entry[i]);
    }
    // (A receive's message starts where its send does.)
    if (deps_count[i] == 0 && heads[i].kind != TraceNode::Kind::Recv) g.not_before(k.entry[i], params_.start);
  }
  deps_count = {};
  node_start_.resize(N);
  for (std::size_t i = 0; i < N; ++i)
    node_start_[i] = heads[i].kind == TraceNode::Kind::Recv ? k.msg[x.match[i]] : k.entry[i];
  node_end_ = std::move(k.done);
  // The index and the other tasks per node go.
  k = NodeTasks{};
  x.rank_nodes = {};
  x.dep_node = {};
  x.match = {};
  // Planned: what the report reads of a node (its id, rank, kind and name)
  // was read into its own array; the rest of the trace is gone (but its
  // names).
  planned_ = std::move(rest.heads);
  rest.end_names();
}

// A send node is done when its message has left the NIC (known where the
// source is simulated); every other node when its task ended (known where
// that completes: a receive without dependencies is its message, which
// completes at the destination).  SimTime::max(): not yet.
SimTime TraceJob::end_of(const TaskGraph& g, std::size_t i) const {
  const TaskGraph::Task& t = g.task(node_end_[i]);
  return planned_[i].kind == TraceNode::Kind::Send ? t.sent() : t.end;
}

bool TraceJob::end_known_here(const TaskGraph& g, std::size_t i) const {
  const TaskId t = node_end_[i];
  const net::Network& net = g.network();
  return net.owns(net.topology().endpoint_node(planned_[i].kind == TraceNode::Kind::Send ? g.task(t).at
                                                                                           : g.completes_at(t)));
}

TraceJob::NodeTimes TraceJob::node_times(const TaskGraph& g) const {
  const net::Network& net = g.network();
  const std::size_t N = planned_.size();
  NodeTimes out{std::vector<std::int64_t>(N, INT64_MIN), std::vector<std::int64_t>(N, INT64_MIN)};
  const auto local = [&](TaskId t) { return net.owns(net.topology().endpoint_node(g.task(t).at)); };
  const auto ps = [](SimTime t) { return t == SimTime::max() ? std::int64_t{-1} : t.ps(); };
  for (std::size_t i = 0; i < N; ++i) {
    if (local(node_start_[i])) out.start_ps[i] = ps(g.task(node_start_[i]).start);
    if (end_known_here(g, i)) out.end_ps[i] = ps(end_of(g, i));
  }
  return out;
}

TraceJob::Partial TraceJob::partial(const TaskGraph& g) const {
  const net::Network& net = g.network();
  Partial p;
  const std::size_t ranks = params_.endpoints.size();
  p.times.assign(ranks, INT64_MIN);
  std::vector<std::uint8_t> here(ranks);
  for (std::size_t r = 0; r < ranks; ++r) here[r] = net.owns(net.topology().endpoint_node(params_.endpoints[r]));
  for (std::size_t i = 0; i < planned_.size(); ++i) {
    const std::uint32_t r = planned_[i].rank;
    if (!here[r]) continue;
    // (A node not done, the run cut first: INT64_MAX, the job unfinished.)
    const SimTime end = end_of(g, i);
    p.times[r] = std::max(p.times[r], end == SimTime::max() ? INT64_MAX : end.ps());
  }
  return p;
}

TraceJob::Result TraceJob::result(const Partial& combined, const TaskGraph&) const {
  Result r;
  std::int64_t end = params_.start.ps();
  for (std::int64_t v : combined.times) end = std::max(end, v);
  r.start_ns = params_.start.ns();
  // A node that never completed ends at SimTime::max(): the run stopped first.
  r.finished = end != INT64_MAX;
  r.end_ns = r.finished ? static_cast<double>(end) / 1000.0 : -1.0;
  r.time_ns = r.finished ? r.end_ns - r.start_ns : std::numeric_limits<double>::quiet_NaN();
  for (double c : compute_ns_) r.compute_ns = std::max(r.compute_ns, c);
  return r;
}

std::uint64_t TraceJob::memory_bytes() const {
  using util::capacity_bytes;
  // (What is left of the trace once planned: its names.)
  return params_.trace.memory_bytes() + capacity_bytes(planned_) + capacity_bytes(node_start_) +
         capacity_bytes(node_end_) + capacity_bytes(message_nodes_) + capacity_bytes(compute_ns_) + planning_bytes_ +
         params_.trace.read_beside;
}

}  // namespace fabricsim::workload
