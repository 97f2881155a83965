// A trace replayed as it is read (issue 33, docs/architecture.md "Streaming
// traces"): the feeder of a streaming TaskGraph (task_graph.hpp), which
// reads each rank's nodes a window at a time and adds their tasks as the
// planned replay (TraceJob, trace.hpp) would have planned them, so that the
// run is the planned one, event for event, while the graph holds only what
// is in flight (workload.trace_stream; app::ChakraStream reads the files,
// StreamTraceJob in jobs_trace.cpp makes the job).  One process: what a
// partitioned run needs is in docs/architecture.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/workload/task_graph.hpp"
#include "fabricsim/workload/trace.hpp"

namespace fabricsim::workload {

/// Where a streaming trace's nodes come from: each rank's, in its file's
/// order (app::ChakraRankReader per rank).
class TraceSource {
 public:
  virtual ~TraceSource() = default;
  struct Node {
    std::uint64_t id = 0;
    TraceNode n;             ///< n.group: an index of groups()
    std::uint32_t name = 0;  ///< the source's index of its name
    std::vector<std::uint64_t> deps;
  };
  virtual std::uint32_t ranks() const = 0;
  /// Rank r's next node; false at its end.  ConfigError naming the file
  /// and the node for what cannot be read.
  virtual bool next(std::uint32_t r, Node& out) = 0;
  /// The communicator groups (Trace::groups: 0 is every rank), as read.
  virtual const std::vector<std::vector<std::uint32_t>>& groups() const = 0;
  /// The file of rank r (for errors).
  virtual const std::string& file(std::uint32_t r) const = 0;
  /// Rank r is read by another process: what is open for it may go.
  virtual void skip(std::uint32_t /*r*/) {}
};

struct TraceStreamParams {
  std::string algorithm = "ring";
  core::SimTime start;
  std::vector<net::EndpointId> endpoints;  ///< trace rank r runs on endpoints[r]
  /// Nodes of a rank read and not yet done, at most (beyond it, a node
  /// whose dependencies have all completed begins late: TaskGraph::late).
  std::uint32_t window = 32;
  /// The planning-order ids (trace_message_ids, from the pre-pass), set
  /// aside in the network (Network::reserve_ids) from ids.first_send[0].
  TraceMessageIds ids;
  /// Per rank: its first row of the report (the ranks' node counts before it).
  std::vector<std::uint64_t> first_row;
  /// Every rank's send nodes (the pre-pass's, on several processes), in
  /// which a process finds the message of a receive whose sender another
  /// process reads (read at the start, and again for an error line).
  std::unique_ptr<TraceSends> sends;
};

class TraceStream final : public TaskGraph::Feeder {
 public:
  /// A node's row of /trace_nodes: as the planned replay's (TraceJob::node,
  /// node_times), in trace order (rank after rank, file order).
  struct Row {
    std::uint64_t id = 0;
    std::uint32_t name = 0;
    std::uint32_t rank = 0;
    PlannedTraceNode::Kind kind = PlannedTraceNode::Kind::Compute;
    std::int64_t start_ps = -1, end_ps = -1;
  };
  /// Where a row goes once its node is done (and, from finish(), the rows
  /// of the nodes that never were): the stream keeps only the rows of the
  /// nodes in flight (StreamTraceJob puts them in a util::SpillFile).
  class RowSink {
   public:
    virtual ~RowSink() = default;
    /// Row `row` (p.first_row[rank] + its index in the rank's file), final.
    virtual void put(std::uint64_t row, const Row& r) = 0;
  };

  /// Makes itself `g`'s feeder (before g.start()).
  TraceStream(TaskGraph& g, TraceSource& source, TraceStreamParams p, std::uint32_t job, RowSink& sink);
  /// Reads the first window of each rank this process simulates (the
  /// ranks whose endpoint it owns; TaskGraph::start calls it).
  void on_start(core::SimTime at) override;
  void on_task_done(TaskGraph::TaskId t, bool sent, core::SimTime at) override;
  void on_delivered_untasked(net::MessageId id, core::SimTime at) override;

  /// After the run: puts the rows of the nodes not done (their times as far
  /// as they got) and reads each rank on to its end for the rows of the
  /// nodes never read (no times), so that every row is put, as a planned
  /// replay cut at the same time lists them.  Once.
  void finish();
  /// Whether every node of this process's ranks was done, and the latest
  /// end among them (ps).
  bool all_done() const { return done_rows_ == own_rows_; }
  std::int64_t last_end_ps() const { return last_end_ps_; }
  /// Per message id (from ids.first_send[0]): the row of the node that sends it.
  const std::vector<std::uint32_t>& message_rows() const { return message_row_; }
  /// The same, taken (for the report, after the run: empty from then on).
  std::vector<std::uint32_t> take_message_rows() { return std::move(message_row_); }
  /// The most compute of one rank (ns), of this process's ranks.
  double compute_ns() const;
  /// The rows of the receives this process read whose message another
  /// process posts, with the message: their start is its post time, known
  /// there (the run's end sets it in every process's record).
  const std::vector<std::pair<std::uint64_t, net::MessageId>>& posted_elsewhere() const { return posted_elsewhere_; }
  /// Whether trace rank r is read here (after the start).
  bool reads(std::uint32_t r) const { return here_[r] != 0; }

 private:
  using TaskId = TaskGraph::TaskId;
  using Kind = TraceNode::Kind;
  // A node read and not yet done.
  struct Live {
    std::uint32_t row;
    Kind kind;
    TaskId entry, done, msg;  // msg: a send's message, or the one a receive waits for
  };
  // What a task stands for in the report (up to two roles: a message is a
  // send node's and, unless it waits in a join, its receive's).
  enum Role : std::uint8_t { kNone, kCompute, kSend, kRecvMsg, kRecvStart, kRecvEnd, kCollStart, kCollEnd };
  struct Roles {
    std::uint32_t row[2] = {0, 0};
    Role role[2] = {kNone, kNone};
  };
  // One collective, from its first member's node read to its last's.
  struct Instance {
    std::vector<TaskId> entry, end;
    std::vector<std::vector<net::MessageId>> messages;  // per member: those it sends (until its node is read)
    std::uint32_t read = 0;
  };
  // An unmatched send (its message: `task`, or, once delivered before its
  // receive was read, its post and end times) or receive (the join that
  // waits for the message: `task`, its node's `row`).
  struct Waiting {
    TaskId task;
    std::uint32_t row;
    net::MessageId message;  // a send's
  };
  using P2pKey = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;  // (from, to, tag)

  void read_more(std::uint32_t r, std::size_t leaving = 0);
  void add(std::uint32_t r, const TraceSource::Node& node);
  // At the end: the records of node `n` of rank r, never run, made if not yet.
  void unread_records(std::uint32_t r, const TraceNode& n);
  // Communicator group g's ranks (group 0: every rank, made in `all`).
  const std::vector<std::uint32_t>& members_of(std::uint32_t g, std::vector<std::uint32_t>& all) const;
  void add_role(TaskId t, std::uint32_t row, Role role);
  void drop_role(TaskId t, std::uint32_t row, Role role);  // its event has passed
  void done(std::uint32_t r, std::uint64_t id);  // node id of rank r is done
  void match(const Waiting& send, const Waiting& recv);
  void fed_out(std::uint32_t r);  // rank r read to its end
  // A receive of rank r from rank `from`, read by another process: its message.
  net::MessageId remote_message(std::uint32_t r, const TraceSource::Node& node);
  std::uint64_t send_node(net::MessageId id);  // the node that sends id (p_.sends: a partitioned run)
  bool completed(std::uint32_t r, std::uint64_t id) const;
  [[noreturn]] void fail(std::uint32_t r, std::uint64_t id, const std::string& what) const;

  TaskGraph& g_;
  TraceSource& src_;
  TraceStreamParams p_;
  std::uint32_t job_;
  RowSink& sink_;
  std::unordered_map<std::uint32_t, Row> open_;  // rows of the nodes read and not done
  std::uint64_t done_rows_ = 0;
  std::int64_t last_end_ps_ = -1;
  bool finished_ = false;
  std::vector<std::uint32_t> message_row_;
  std::vector<double> compute_ns_;
  std::vector<Roles> roles_;  // per task slot
  // Per rank.
  std::vector<std::unordered_map<std::uint64_t, Live>> live_;
  std::vector<std::map<std::uint64_t, std::uint64_t>> done_;  // completed ids: [first, last] intervals
  std::vector<std::uint64_t> next_row_, sends_;
  std::vector<std::uint8_t> exhausted_;
  std::vector<std::map<std::uint32_t, std::uint32_t>> collectives_seen_;  // group -> its collectives read
  std::map<std::pair<std::uint32_t, std::uint32_t>, Instance> instances_;  // (group, k)
  std::multimap<P2pKey, Waiting> sends_waiting_, recvs_waiting_;  // (only the unmatched: erased when matched)
  // Messages delivered before their receive was read: (post, end) ps.
  std::unordered_map<net::MessageId, std::pair<std::int64_t, std::int64_t>> early_;
  std::unordered_map<net::MessageId, std::uint8_t> unmatched_;  // sends not matched yet
  TraceSource::Node scratch_;
  std::uint32_t fed_out_ = 0;  // ranks read to their end (or read by another process)
  net::MessageId first_id_ = 0;
  // A partitioned run: the ranks read here, their rows, and for each
  // (sender read elsewhere, receiver here, tag) its messages in the
  // sender's node order (the send's node is p_.sends', for errors) and how
  // many receives took one.
  std::vector<std::uint8_t> here_;
  bool partitioned_ = false;
  std::uint64_t own_rows_ = 0;
  struct RemoteSends {
    std::vector<net::MessageId> sends;
    std::size_t taken = 0;
  };
  std::map<P2pKey, RemoteSends> remote_sends_;
  std::vector<std::pair<std::uint64_t, net::MessageId>> posted_elsewhere_;
};

}  // namespace fabricsim::workload
