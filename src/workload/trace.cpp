#include "fabricsim/workload/trace.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/dnn.hpp"

namespace fabricsim::workload {

using core::SimTime;
using util::ConfigError;
using TaskId = TaskGraph::TaskId;

namespace {

// What the checks of a trace find out about its nodes (indices into
// trace.nodes), on the way to its tasks.
struct TraceIndex {
  const Trace& t;
  std::vector<std::vector<std::size_t>> by_rank;  // per rank: its nodes by id
  std::vector<std::vector<std::size_t>> deps;     // per node: the nodes it depends on
  std::vector<std::size_t> match;                 // per recv node: its send (N: none)
  std::string where(std::size_t i) const {
    if (!t.rank_files.empty()) return t.rank_files[t.nodes[i].rank] + ": node " + std::to_string(t.nodes[i].id);
    return t.file + ":" + std::to_string(t.nodes[i].line) + ": node " + std::to_string(t.nodes[i].id);
  }
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
  const bool per_rank = !t.rank_files.empty();
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> ids(per_rank ? t.ranks : 1);
  const auto index_of = [&](std::uint32_t rank) -> auto& { return ids[per_rank ? rank : 0]; };
  for (std::size_t i = 0; i < N; ++i)
    if (!index_of(t.nodes[i].rank).emplace(t.nodes[i].id, i).second)
      throw ConfigError(x.where(i) + ": id: used by an earlier node too");
  x.by_rank.assign(t.ranks, {});
  for (std::size_t i = 0; i < N; ++i) x.by_rank[t.nodes[i].rank].push_back(i);
  for (auto& v : x.by_rank)
    std::sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) { return t.nodes[a].id < t.nodes[b].id; });
  x.deps.assign(N, {});
  for (std::size_t i = 0; i < N; ++i)
    for (std::uint64_t d : t.nodes[i].deps) {
      const auto& index = index_of(t.nodes[i].rank);
      const auto it = index.find(d);
      if (it == index.end())
        throw ConfigError(x.where(i) + ": data_deps/ctrl_deps: no node has id " + std::to_string(d));
      if (t.nodes[it->second].rank != t.nodes[i].rank)
        throw ConfigError(x.where(i) + ": data_deps/ctrl_deps: node " + std::to_string(d) + " is on rank " +
                          std::to_string(t.nodes[it->second].rank) + ", not " + std::to_string(t.nodes[i].rank) +
                          " (ranks depend on each other only through send/recv and collective nodes)");
      x.deps[i].push_back(it->second);
    }
}

// Point to point: the k-th send a -> b with a tag matches the k-th receive
// at b from a with that tag; every send and receive has its match.
void match_point_to_point(TraceIndex& x) {
  const Trace& t = x.t;
  const std::size_t N = t.nodes.size();
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;
  std::map<Key, std::vector<std::size_t>> sends, recvs;
  for (std::uint32_t r = 0; r < t.ranks; ++r)
    for (std::size_t i : x.by_rank[r]) {
      const TraceNode& n = t.nodes[i];
      if (n.kind == TraceNode::Kind::Send) sends[{r, n.peer, n.tag}].push_back(i);
      if (n.kind == TraceNode::Kind::Recv) recvs[{n.peer, r, n.tag}].push_back(i);
    }
  x.match.assign(N, N);
  for (const auto& [key, s] : sends) {
    const auto it = recvs.find(key);
    const std::size_t have = it == recvs.end() ? 0 : it->second.size();
    if (have < s.size())
      throw ConfigError(x.where(s[have]) + ": send to rank " + std::to_string(std::get<1>(key)) + " (tag " +
                        std::to_string(std::get<2>(key)) + ") has no matching recv node there");
    for (std::size_t k = 0; k < s.size(); ++k) {
      const std::size_t rv = it->second[k];
      if (t.nodes[rv].bytes != t.nodes[s[k]].bytes)
        throw ConfigError(x.where(rv) + ": comm_size: " + std::to_string(t.nodes[rv].bytes) +
                          " bytes, but the matching send (node " + std::to_string(t.nodes[s[k]].id) + ") sends " +
                          std::to_string(t.nodes[s[k]].bytes));
      x.match[rv] = s[k];
    }
  }
  for (const auto& [key, rv] : recvs) {
    const auto it = sends.find(key);
    const std::size_t have = it == sends.end() ? 0 : it->second.size();
    if (have < rv.size())
      throw ConfigError(x.where(rv[have]) + ": recv from rank " + std::to_string(std::get<0>(key)) + " (tag " +
                        std::to_string(std::get<2>(key)) + ") has no matching send node there");
  }
}

// Collectives: the k-th node of a rank with a given group matches the k-th
// of every other member, and they agree on what it is.  `groups` holds the
// member lists the result points into.
std::vector<TraceCollective> match_collectives(
    const TraceIndex& x, std::map<std::vector<std::uint32_t>, std::vector<std::vector<std::size_t>>>& groups) {
  const Trace& t = x.t;
  std::vector<std::uint32_t> all(t.ranks);
  std::iota(all.begin(), all.end(), 0u);
  for (std::uint32_t r = 0; r < t.ranks; ++r)  // group -> per member, its nodes
    for (std::size_t i : x.by_rank[r]) {
      const TraceNode& n = t.nodes[i];
      if (n.kind != TraceNode::Kind::Collective) continue;
      const std::vector<std::uint32_t>& members = n.group.empty() ? all : n.group;
      const auto pos = std::find(members.begin(), members.end(), r);
      if (pos == members.end())
        throw ConfigError(x.where(i) + ": comm_group: rank " + std::to_string(r) + " is not in its own group");
      auto& per = groups[members];
      per.resize(members.size());
      per[static_cast<std::size_t>(pos - members.begin())].push_back(i);
    }
  std::vector<TraceCollective> instances;
  for (const auto& [members, per] : groups) {
    std::size_t count = 0;
    for (const auto& v : per) count = std::max(count, v.size());
    for (std::size_t k = 0; k < count; ++k) {
      TraceCollective inst{&members, {}};
      for (std::size_t m = 0; m < members.size(); ++m) {
        if (k >= per[m].size()) {
          std::size_t any = 0;  // a node that has a k-th collective in this group
          for (const auto& v : per)
            if (v.size() > k) any = v[k];
          throw ConfigError(x.where(any) + ": comm_group: rank " + std::to_string(members[m]) + " has only " +
                            std::to_string(per[m].size()) + " collective nodes in this group, others more");
        }
        const std::size_t i = per[m][k], first = per[0][k];
        const TraceNode &a = t.nodes[i], &b = t.nodes[first];
        if (a.op != b.op || a.bytes != b.bytes || a.root != b.root)
          throw ConfigError(x.where(i) + ": comm_type/comm_size/comm_root: differs from node " + std::to_string(b.id) +
                            " of rank " + std::to_string(b.rank) + ", its match in the group");
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
  std::vector<std::size_t> rep(N);
  std::iota(rep.begin(), rep.end(), std::size_t{0});
  for (const TraceCollective& inst : instances)
    for (std::size_t i : inst.nodes) rep[i] = inst.nodes[0];
  std::vector<std::vector<std::size_t>> out(N);
  std::vector<std::uint32_t> indeg(N, 0);
  const auto edge = [&](std::size_t a, std::size_t b) {
    out[rep[a]].push_back(rep[b]);
    ++indeg[rep[b]];
  };
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t d : x.deps[i]) edge(d, i);
    if (x.match[i] < N) edge(x.match[i], i);
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < N; ++i)
    if (rep[i] == i && indeg[i] == 0) ready.push_back(i);
  std::size_t seen = 0, vertices = 0;
  for (std::size_t i = 0; i < N; ++i) vertices += rep[i] == i;
  while (!ready.empty()) {
    const std::size_t v = ready.back();
    ready.pop_back();
    ++seen;
    for (std::size_t w : out[v])
      if (--indeg[w] == 0) ready.push_back(w);
  }
  if (seen != vertices) {
    std::size_t stuck = 0;
    while (indeg[rep[stuck]] == 0) ++stuck;
    throw ConfigError(x.where(stuck) +
                      ": data_deps/ctrl_deps: a dependency cycle runs through this node (with "
                      "matched communication), the trace could never finish");
  }
}

// The algorithm of a collective node: its operation's own, or the job's for
// allreduce, reduce_scatter and allgather (and for gather and scatter when
// the job's is tacos, the other one that implements them).
CollectiveSpec collective_spec(const TraceNode& first, std::uint32_t n, const std::string& algorithm) {
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

// The tasks of a trace's nodes.  Entry: what a node's dependencies hold
// back; done: what completes it; msg: a send's message.
struct NodeTasks {
  std::vector<TaskId> entry, done, msg;
};

std::uint32_t trace_label(std::uint32_t job, DnnPhase p) { return (job << 8) | static_cast<std::uint32_t>(p); }

// A task per node (two for a send: its message, and a join for its leaving
// the NIC); a collective node's done task comes with its collective.
NodeTasks add_node_tasks(TaskGraph& g, const TraceParams& p, std::uint32_t job, std::vector<double>& compute_ns) {
  const Trace& t = p.trace;
  const std::size_t N = t.nodes.size();
  const auto ep = [&](std::uint32_t r) { return p.endpoints[r]; };
  NodeTasks k{std::vector<TaskId>(N, TaskGraph::kNone), std::vector<TaskId>(N, TaskGraph::kNone),
              std::vector<TaskId>(N, TaskGraph::kNone)};
  compute_ns.assign(t.ranks, 0.0);
  for (std::size_t i = 0; i < N; ++i) {
    const TraceNode& n = t.nodes[i];
    switch (n.kind) {
      case TraceNode::Kind::Compute:
        // A node of no time is a join, as ASTRA-sim skips it: done once its
        // dependencies are, without waiting for the rank's compute stream.
        k.entry[i] = k.done[i] =
            n.duration_ns > 0
                ? g.add_compute(ep(n.rank), SimTime::from_ns_f(n.duration_ns), trace_label(job, DnnPhase::Forward))
                : g.add_join(ep(n.rank), trace_label(job, DnnPhase::Control));
        compute_ns[n.rank] += n.duration_ns;
        break;
      case TraceNode::Kind::Send:
        k.entry[i] = k.msg[i] = g.add_message(ep(n.rank), ep(n.peer), std::max<std::uint64_t>(n.bytes, 1),
                                              trace_label(job, DnnPhase::Pipeline));
        k.done[i] = g.add_join(ep(n.rank), trace_label(job, DnnPhase::Control));
        g.depend_sent(k.msg[i], k.done[i]);
        break;
      case TraceNode::Kind::Recv:
        k.entry[i] = k.done[i] = g.add_join(ep(n.rank), trace_label(job, DnnPhase::Control));
        break;
      case TraceNode::Kind::Collective: k.entry[i] = g.add_join(ep(n.rank), trace_label(job, DnnPhase::Control)); break;
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
    const CollectiveSpec spec = collective_spec(first, n, p.algorithm);
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

TraceJob::TraceJob(TaskGraph& g, TraceParams params, std::uint32_t job) : params_(std::move(params)), job_(job) {
  const Trace& t = params_.trace;
  const std::size_t N = t.nodes.size();
  if (params_.endpoints.size() != t.ranks)
    throw ConfigError("workload.placement: the trace has " + std::to_string(t.ranks) + " ranks, " +
                      std::to_string(params_.endpoints.size()) + " endpoints were placed");
  // Check and match the nodes.
  TraceIndex x{t, {}, {}, {}};
  index_nodes(x);
  match_point_to_point(x);
  std::map<std::vector<std::uint32_t>, std::vector<std::vector<std::size_t>>> groups;
  const std::vector<TraceCollective> collectives = match_collectives(x, groups);
  check_acyclic(x, collectives);
  // Plan them: tasks, receives after their sends, collectives, dependencies.
  NodeTasks k = add_node_tasks(g, params_, job_, compute_ns_);
  for (std::size_t i = 0; i < N; ++i)
    if (x.match[i] < N) g.depend(k.msg[x.match[i]], k.done[i]);
  for (std::size_t i = 0; i < N; ++i)
    if (k.msg[i] != TaskGraph::kNone) message_nodes_.emplace_back(k.msg[i], static_cast<std::uint32_t>(i));
  plan_collectives(g, params_, job_, x, collectives, k, message_nodes_);
  std::sort(message_nodes_.begin(), message_nodes_.end());
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t d : x.deps[i]) g.depend(k.done[d], k.entry[i]);
    if (x.deps[i].empty()) g.not_before(k.entry[i], params_.start);
  }
  done_.assign(t.ranks, {});
  for (std::size_t i = 0; i < N; ++i) done_[t.nodes[i].rank].push_back(k.done[i]);
  node_start_.resize(N);
  node_end_ = k.done;
  for (std::size_t i = 0; i < N; ++i)
    node_start_[i] = t.nodes[i].kind == TraceNode::Kind::Recv ? k.msg[x.match[i]] : k.entry[i];
  // Planned: what the report reads of a node is its id, rank, kind and name.
  for (TraceNode& n : params_.trace.nodes) {
    std::vector<std::uint64_t>().swap(n.deps);
    std::vector<std::uint32_t>().swap(n.group);
  }
}

TraceJob::NodeTimes TraceJob::node_times(const TaskGraph& g) const {
  const net::Network& net = g.network();
  const std::size_t N = params_.trace.nodes.size();
  NodeTimes out{std::vector<std::int64_t>(N, INT64_MIN), std::vector<std::int64_t>(N, INT64_MIN)};
  const auto local = [&](TaskId t) { return net.owns(net.topology().endpoint_node(g.task(t).at)); };
  const auto ps = [](SimTime t) { return t == SimTime::max() ? std::int64_t{-1} : t.ps(); };
  for (std::size_t i = 0; i < N; ++i) {
    if (local(node_start_[i])) out.start_ps[i] = ps(g.task(node_start_[i]).start);
    if (local(node_end_[i])) out.end_ps[i] = ps(g.task(node_end_[i]).end);
  }
  return out;
}

TraceJob::Partial TraceJob::partial(const TaskGraph& g) const {
  const net::Network& net = g.network();
  Partial p;
  p.times.assign(done_.size(), INT64_MIN);
  for (std::size_t r = 0; r < done_.size(); ++r) {
    if (!net.owns(net.topology().endpoint_node(params_.endpoints[r]))) continue;
    for (TaskId d : done_[r])
      if (g.task(d).end != SimTime::max()) p.times[r] = std::max(p.times[r], g.task(d).end.ps());
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

}  // namespace fabricsim::workload
