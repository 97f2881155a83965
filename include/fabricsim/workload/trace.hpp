// Execution traces (issue 7, trace input): a per-rank graph of compute and
// communication nodes with dependencies, close to the Chakra execution-trace
// schema (format in docs/model.md), replayed on the fabric through the task
// graph:
//
// - a compute node occupies its rank's compute stream for its duration;
// - a send node posts a message once its dependencies are met, and is done
//   when the message has left the NIC; the matching receive node (the k-th
//   send from a to b with a tag matches the k-th receive at b from a with
//   that tag, in node-id order) is done when the message has arrived and its
//   own dependencies are met;
// - a collective node joins the collective of its group (the k-th
//   collective node of a rank with a given group matches the k-th of every
//   other member): every member begins it when its dependencies are met, and
//   its node is done when it has finished there.
// Dependencies (data and control alike) are between nodes of one rank;
// ranks talk only through communication nodes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/util/spill_file.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/task_graph.hpp"

namespace fabricsim::workload {

/// What the report reads of a node (Trace::heads, TraceJob::node): 24 bytes,
/// a million of them in a large trace, kept for the whole run.
struct PlannedTraceNode {
  enum class Kind : std::uint8_t { Compute, Send, Recv, Collective };
  std::uint64_t id = 0;
  std::uint32_t name = 0;  ///< its name: Trace::node_name(name), each distinct name stored once
  std::uint32_t rank = 0;
  Kind kind = Kind::Compute;
};
static_assert(sizeof(PlannedTraceNode) == 24, "a planned node's layout (TraceJob::memory_bytes)");

/// One node of a trace, as a reader gives it to Trace::add_node.  What the
/// report reads of it (id, rank, kind, name) goes to Trace::heads, the rest
/// (what planning reads) to Trace::nodes, 40 bytes with nothing of its own
/// on the heap and freed once planned: a trace of millions of nodes is read
/// into two vectors and a few blobs, and nothing is copied when it is
/// planned (issue 33).
struct TraceNode {
  using Kind = PlannedTraceNode::Kind;
  union {
    std::int64_t tag = 0;  ///< send, recv
    double duration_ns;    ///< compute
  };
  std::uint64_t bytes = 0;  ///< communication: message size, or a collective's size per rank
  /// Its dependencies, the next deps_count of Trace::deps (those of the
  /// nodes before it come first; add_node's).
  std::uint32_t deps_count = 0;
  std::uint32_t peer = 0;   ///< send: destination rank; recv: source rank
  std::uint32_t group = 0;  ///< collective: Trace::groups[group] (0: all ranks)
  std::uint32_t root = 0;   ///< broadcast / reduce: index in the group
  std::uint32_t line = 0;   ///< where in the file (for errors)
  Kind kind = Kind::Compute;
  CollectiveOp op = CollectiveOp::Allreduce;  ///< collective
};
static_assert(sizeof(TraceNode) == 40, "a trace node's layout (TraceJob::memory_bytes)");

struct Trace {
  std::string file;
  /// A trace of one file per rank (Chakra): rank r's file; errors name it
  /// and the node id (TraceNode::line unused).  Empty: `file`, by line.
  std::vector<std::string> rank_files;
  std::string name;
  std::uint32_t ranks = 0;
  /// Per node, in the trace's order: what planning reads (freed once
  /// planned) and what the report reads (TraceJob::node).
  std::vector<TraceNode> nodes;
  std::vector<PlannedTraceNode> heads;
  /// Every node's dependencies (ids of nodes of the same rank), node after
  /// node; freed once the trace is planned (TraceJob).
  std::vector<std::uint64_t> deps;
  /// The distinct names of the nodes, one after another (the k-th ends at
  /// name_ends[k]): a trace's names repeat across ranks and iterations
  /// (131,072 distinct of 1.09 M in the 1,024-rank benchmark, 3 MB of 31).
  std::string names;
  std::vector<std::uint64_t> name_ends;
  /// Communicator groups: their member ranks, in the order the trace gives
  /// them (a collective runs over its members in that order); groups[0] is
  /// empty: all ranks, 0 ... ranks - 1.  Each distinct list once (add_group).
  std::vector<std::vector<std::uint32_t>> groups{{}};
  std::map<std::vector<std::uint32_t>, std::uint32_t> group_index;  ///< (add_group's)

  /// Appends node `id` of `rank` with its name and dependencies (n's deps_*
  /// are set here).
  void add_node(std::uint64_t id, std::uint32_t rank, TraceNode n, std::string_view name,
                const std::uint64_t* deps_first, const std::uint64_t* deps_last);
  /// The index of a group of these members, added if new; 0 for all ranks
  /// in rank order (set `ranks` first).
  std::uint32_t add_group(const std::vector<std::uint32_t>& members);
  std::string_view node_name(std::uint32_t k) const {
    const std::uint64_t from = k == 0 ? 0 : name_ends[k - 1];
    return std::string_view(names).substr(from, name_ends[k] - from);
  }
  /// The index of a distinct node name, added if new (add_node's).
  std::uint32_t intern(std::string_view name);
  /// Forgets add_node's index of the names (once every node is added).
  void end_names() { std::vector<std::uint32_t>().swap(name_slots_); }

  /// What reading may hold, in bytes (the plan budget the memory limit
  /// leaves the jobs, engine.memory_limit_gib): add_node grows its arrays
  /// only as far as it leaves room for (the capacities of all of them, and
  /// the old array while one is copied), and refuses a node that does not
  /// fit (util::ConfigError naming the key, the trace and how far it was
  /// read), so that a trace larger than the machine is refused while it is
  /// read, not killed by the system.  Every process reads the whole trace
  /// (docs/architecture.md, "Streaming traces").
  std::uint64_t read_budget = UINT64_MAX;
  /// The trace's files in bytes, all of them (what the refusal quotes).
  std::uint64_t file_bytes = 0;
  /// Held beside the nodes while they are read (a JSON trace's text and
  /// tree), counted against read_budget too, and in TraceJob::memory_bytes
  /// (the estimate of the run's peak; freed before planning).
  std::uint64_t read_beside = 0;
  /// Bytes its arrays hold (their capacities: what they fill to before
  /// they grow again; what read_budget bounds).
  std::uint64_t memory_bytes() const;
  /// Bytes written in them (their sizes: a doubled array's room is not
  /// resident until written; what planning counts, TraceJob).
  std::uint64_t resident_bytes() const;

 private:
  // Room in `v` for `need` more, within read_budget (refuse_read if none).
  template <class V>
  void make_room(V& v, std::size_t need);
  [[noreturn]] void refuse_read(std::uint64_t want) const;  // ConfigError naming engine.memory_limit_gib
  std::uint32_t reading_rank_ = 0;                          // (the refusal names it)
  // Open addressing over the distinct names (index + 1; 0: empty), at most
  // half full: 8 bytes a distinct name, where a hash set of strings took
  // several times the names.
  std::vector<std::uint32_t> name_slots_;
};

struct TraceParams {
  Trace trace;
  /// Algorithm of allreduce, reduce_scatter and allgather nodes (alltoall
  /// is pairwise, barriers dissemination, broadcast and reduce a tree).
  std::string algorithm = "ring";
  core::SimTime start;
  /// Trace rank r runs on endpoints[r].
  std::vector<net::EndpointId> endpoints;
};

/// What one rank's file says of the trace's message numbering, read
/// without keeping its nodes (the pre-pass of a streaming trace,
/// docs/architecture.md "Streaming traces"): how many send nodes it has,
/// and its collective nodes in id order (the order collectives match in).
struct TraceRankMessages {
  std::uint64_t sends = 0;
  /// A send node, where the pre-pass keeps them (TraceSends).
  struct Send {
    std::uint64_t bytes = 0;
    std::int64_t tag = 0;
    std::uint64_t node = 0;  ///< its node id (for error lines)
    std::uint32_t peer = 0;
    std::uint32_t kept = 1;  ///< (a send never put reads as zeros; and no padding: every byte spilled is set)
  };
  struct Collective {
    std::uint32_t group = 0;  ///< Trace::groups index (0: all ranks)
    CollectiveOp op = CollectiveOp::Allreduce;
    std::uint64_t bytes = 0;
    std::uint32_t root = 0;
    std::uint64_t node = 0;  ///< its node id (for error lines)
  };
  std::vector<Collective> collectives;
};

/// Every rank's send nodes, numbered as their messages are: rank after
/// rank, each rank's in node order, so that the k-th send of rank r is
/// number sum(sends of the ranks before r) + k, and its message id
/// TraceMessageIds::first_send[0] plus that number.  Kept on disk
/// (util::SpillFile): a streamed trace on several processes describes
/// every message from them before the run, and finds there the message of
/// a receive whose sender another process reads, but memory held 32 bytes
/// a send of every rank for it until the run began (docs/architecture.md,
/// "Streaming traces").  Reading in increasing order reads ahead.
class TraceSends {
 public:
  TraceSends();
  void put(std::uint64_t k, const TraceRankMessages::Send& s) { file_.put(k, &s); }
  TraceRankMessages::Send get(std::uint64_t k) {
    TraceRankMessages::Send s;
    file_.get(k, &s);
    return s;
  }
  /// Lets the buffers go (until the next put or get).
  void release_buffers() { file_.release_buffers(); }

 private:
  util::SpillFile file_;
};
static_assert(sizeof(TraceRankMessages::Send) == 32, "a spilled send has no padding");

/// The ids TraceJob gives a trace's messages (the order it plans them in),
/// from each rank's summary alone, for a process that reads only its own
/// ranks' files: a send node's message is first_send[rank] plus the
/// number of the rank's send nodes before it (node order); the messages of
/// the k-th collective of group g are numbered from first_collective[(g,
/// k)], in its schedule's order.  Counts a collective by its first
/// member's node (a trace whose members disagree is refused when planned).
struct TraceMessageIds {
  std::vector<net::MessageId> first_send;
  std::map<std::pair<std::uint32_t, std::uint32_t>, net::MessageId> first_collective;
  std::uint64_t sends = 0;  ///< of them send nodes' (numbered first, from first_send[0])
  std::uint64_t total = 0;  ///< messages in all
};
/// `groups`: Trace::groups; `first`: the id of the trace's first message
/// (the network's messages before it).  ConfigError as TraceJob's for a
/// collective its algorithm does not implement, naming its first member's
/// file (files[rank], when given) and node.
TraceMessageIds trace_message_ids(const std::vector<TraceRankMessages>& ranks,
                                  const std::vector<std::vector<std::uint32_t>>& groups,
                                  const std::vector<net::EndpointId>& endpoints, const std::string& algorithm,
                                  const net::Topology& topo, net::MessageId first,
                                  const std::vector<std::string>& files = {});

/// Makes the record of every message of `ids` (set aside in `net`:
/// Network::reserve_ids from ids.first_send[0]) before the run, as the
/// planned replay would create them: each send's from `sends` (kept by
/// the pre-pass: ConfigError-free, checked when read), each
/// collective's by collective_records.  Every process then knows every
/// message (what a packet crossing it is routed by), and the stream adds
/// the tasks to the records as it reads their nodes.  With `describe`,
/// each message is described (Network::describe_at) instead: the record
/// is then made only where it is read (change 1 of docs/architecture.md,
/// "Streaming traces").
void trace_records(net::Network& net, const std::vector<TraceRankMessages>& ranks, TraceSends& sends,
                   const std::vector<std::vector<std::uint32_t>>& groups,
                   const std::vector<net::EndpointId>& endpoints, const std::string& algorithm,
                   const TraceMessageIds& ids,
                   bool describe = false);

/// The collective a trace's collective node runs on n ranks: its
/// operation's own algorithm, or the job's (`algorithm`) for allreduce,
/// reduce_scatter and allgather (and gather and scatter when it is tacos).
CollectiveSpec trace_collective_spec(const TraceNode& node, std::uint32_t n, const std::string& algorithm);

class TraceJob {
 public:
  /// Plans the trace into `g` (tasks labelled job << 8 | DnnPhase: compute
  /// nodes as Forward, communication by kind).  ConfigError "file:line:
  /// nodes[id]...: message" for a trace that cannot run: unmatched sends or
  /// receives, collectives whose members disagree, dependencies on unknown
  /// nodes or across ranks, cycles.
  TraceJob(TaskGraph& g, TraceParams params, std::uint32_t job);
  /// Its parameters; the trace's `nodes` are empty once planned (node()).
  const TraceParams& params() const { return params_; }
  /// The trace's nodes, in its order, as the report reads them.
  std::size_t node_count() const { return planned_.size(); }
  const PlannedTraceNode& node(std::size_t i) const { return planned_[i]; }
  std::string_view name_of(const PlannedTraceNode& n) const { return params_.trace.node_name(n.name); }
  /// Bytes the planned trace holds beyond its tasks (what the report reads
  /// of its nodes, their names, their tasks), and the nodes it held while
  /// it was planned and what reading held beside them (a JSON trace's
  /// tree): freed since, but the peak of a large trace's run is its reading
  /// and planning (the 1,024-rank benchmark's, docs/performance.md).
  std::uint64_t memory_bytes() const;

  /// Per rank: first start and last completion (ps; INT64_MIN unknown), to
  /// be combined over processes by element-wise maximum (starts negated).
  struct Partial {
    std::vector<std::int64_t> times;
  };
  Partial partial(const TaskGraph& g) const;
  struct Result {
    double start_ns = 0, end_ns = 0, time_ns = 0;
    double compute_ns = 0;  ///< the most compute of one rank
    bool finished = true;   ///< false: the run stopped first (end_ns -1, time_ns NaN)
  };
  Result result(const Partial& combined, const TaskGraph& g) const;
  /// Every node's times, as far as this process simulates them (to be
  /// combined over processes by element-wise maximum): a compute node from
  /// when it ran, a send from its post to its leaving the NIC, a receive
  /// from its message's post (known where the sender is) to its
  /// completion, a collective from when its dependencies were met to its
  /// end there.  Picoseconds; INT64_MIN: not simulated here; -1: never
  /// (the run stopped first).  Node index order.
  struct NodeTimes {
    std::vector<std::int64_t> start_ps, end_ps;
  };
  NodeTimes node_times(const TaskGraph& g) const;
  /// Every message task of the job with its node's index: a send node's
  /// message, and each message of a collective with the node of the member
  /// that sends it.  Task order.
  const std::vector<std::pair<TaskGraph::TaskId, std::uint32_t>>& message_nodes() const { return message_nodes_; }

 private:
  TraceParams params_;
  std::uint32_t job_;
  std::vector<PlannedTraceNode> planned_;             // per node: what the report reads
  std::uint64_t planning_bytes_ = 0;                  // the trace's nodes, freed once planned
  std::vector<TaskGraph::TaskId> node_start_, node_end_;  // per node: the tasks its times come from
  core::SimTime end_of(const TaskGraph& g, std::size_t node) const;    // when node ended (max: not yet)
  bool end_known_here(const TaskGraph& g, std::size_t node) const;     // this process simulates where it ends
  std::vector<double> compute_ns_;                    // per rank
  std::vector<std::pair<TaskGraph::TaskId, std::uint32_t>> message_nodes_;
};

}  // namespace fabricsim::workload
