// A dependency graph of compute tasks, point-to-point messages and joins,
// executed on the packet network: the common engine of the collective and
// DNN workloads (and of several jobs sharing a fabric).
//
// Tasks live on endpoints.  A compute task occupies its endpoint's compute
// stream for a fixed duration (tasks of one endpoint run one at a time, in
// the order they became ready; ties by task id); a message is a network
// message, posted when its dependencies are met and complete when its last
// byte has arrived; a join completes as soon as its dependencies are met
// (a reducing join first reduces the bytes of the message that completed
// it).  Every dependency is local to an endpoint: a task waits only for
// what completes where it starts (a compute or join at its endpoint, a
// message arriving there) or for a message it sends leaving its NIC.  A
// partitioned run therefore needs no synchronization beyond the network's,
// and the graph (planned in full, in the same order, by every process)
// gives the same message ids and results at any rank count.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fabricsim/core/event.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::workload {

/// Planning outgrew what engine.memory_limit_gib leaves it
/// (net::Network::plan_budget): `planned` bytes of task graphs, messages
/// and collective schedules against `budget`.  A ConfigError naming the key.
class PlanOverBudget : public util::ConfigError {
 public:
  /// `what`: what was being planned, for the message ("one allreduce by
  /// ring over 16384 ranks is more than ... messages"); empty: tasks,
  /// messages and collective schedules.
  PlanOverBudget(std::uint64_t planned, std::uint64_t budget, const std::string& what = {});
  std::uint64_t planned() const { return planned_; }
  std::uint64_t budget() const { return budget_; }

 private:
  std::uint64_t planned_, budget_;
};

class TaskGraph final : public net::MessageListener {
 public:
  using TaskId = std::uint32_t;
  static constexpr TaskId kNone = UINT32_MAX;
  enum class Kind : std::uint8_t { Compute, Message, Join };

  struct Task {
    Kind kind = Kind::Join;
    std::uint8_t flags = 0;             ///< the graph's own (streaming: planned before start, edges released)
    std::uint32_t label = 0;            ///< caller's tag (job, phase, ...)
    net::EndpointId at = 0;             ///< compute/join: its endpoint; message: the source
    std::uint32_t waits = 0;            ///< dependencies not yet met
    net::MessageId message = 0;         ///< message: the network's id
    TaskId queue_next = kNone;          ///< compute stream FIFO
    core::SimTime ready;                ///< latest dependency time so far
    core::SimTime start = core::SimTime::max();  ///< compute: began; message: posted; join: completed
    core::SimTime end = core::SimTime::max();    ///< completed (message: last byte arrived)
    /// Compute: how long it runs (zero for the other kinds).
    core::SimTime duration() const { return kind == Kind::Compute ? core::SimTime::from_ps(param) : core::SimTime::zero(); }
    /// Reducing join: its reduction rate in Gb/s (0 = instant, and for the other kinds).
    double reduce_gbps() const { return kind == Kind::Join ? std::bit_cast<double>(param) : 0.0; }
    /// A compute's duration (ps), a join's rate (a double's bits), or when a
    /// message's last byte left its source NIC (ps; -1 before, and on the
    /// processes that do not simulate its source): one field for the
    /// three, so that a task is 56 bytes, not 72 or 80 (a trace of a
    /// million nodes plans about two million tasks).
    std::int64_t param = 0;
    /// Message: when its last byte left the source NIC (SimTime::max()
    /// before, or where this process does not simulate the source).
    core::SimTime sent() const {
      return kind == Kind::Message && param >= 0 ? core::SimTime::from_ps(param) : core::SimTime::max();
    }
  };
  static_assert(sizeof(Task) == 56, "a task's layout (memory_bytes, the planned-jobs estimate)");

  /// The graph is the network's message listener.
  TaskGraph(net::Network& network, core::Simulator& sim);
  /// A graph whose events go to an owner's handler instead of a binding of
  /// its own (a simulator holds at most 2^16 bindings; a cluster queue
  /// makes a graph per job, so it binds one handler for all of them).  The
  /// events carry `tag` in the bits of arg0 above the low 8; the handler
  /// finds the graph by tag() and calls handle_event().
  TaskGraph(net::Network& network, core::Simulator& sim, core::Simulator::BindingId shared_binding,
            std::uint64_t tag);
  /// The graph tag an event of a shared-binding graph carries.
  static std::uint64_t tag(const core::Event& ev) { return ev.arg0 >> 8; }
  /// Handles one of this graph's events.
  void handle_event(const core::Event& ev) { on_event(ev); }

  TaskId add_compute(net::EndpointId at, core::SimTime duration, std::uint32_t label = 0);
  TaskId add_message(net::EndpointId src, net::EndpointId dst, std::uint64_t bytes, std::uint32_t label = 0);
  /// A message numbered `id`, set aside by net::Network::reserve_ids()
  /// (after the graph was made): its record is made here, or, made already
  /// (workload::trace_records, collective_records), given its task.
  TaskId add_message_at(net::MessageId id, net::EndpointId src, net::EndpointId dst, std::uint64_t bytes,
                        std::uint32_t label = 0);
  TaskId add_join(net::EndpointId at, std::uint32_t label = 0, double reduce_gbps = 0);
  /// Room for `more` tasks, `messages` of them messages, beyond those
  /// added (and the network's records of those messages): a planner that
  /// knows how many it adds makes one allocation each, not a doubling that
  /// holds the old and the new array at once.  Checks the plan budget.
  void reserve(std::size_t more, std::size_t messages);
  /// `after` begins once `before` has completed, plus `delay`.  `before`
  /// must complete where `after` begins (compute/join: the same endpoint;
  /// a message: `after` is at its destination).
  void depend(TaskId before, TaskId after, core::SimTime delay = {});
  /// `after`, at the message's source, begins once message `msg` has left
  /// the source NIC.
  void depend_sent(TaskId msg, TaskId after);
  /// A dependency as added (depend, depend_sent): `to` waits for `from`'s
  /// completion (or, `sent`, for message `from` leaving its NIC), plus `delay`.
  struct Dependency {
    TaskId from, to;
    core::SimTime delay;
    bool sent;
  };
  /// Every dependency, before start() (what an exporter reads; empty after).
  std::vector<Dependency> dependencies() const;
  /// Task t starts no earlier than `at` (a job's start time).
  void not_before(TaskId t, core::SimTime at) { tasks_[t].ready = std::max(tasks_[t].ready, at); }
  /// Starts every task without dependencies at `at` (or its not_before).  Call once, after the
  /// whole graph is added.
  void start(core::SimTime at);
  /// Called once, at the completion time, when every task this process
  /// simulates has completed (on one rank: the whole graph; at start() if
  /// it simulates none; a streaming graph: once fed, end_feeding()).  A cluster queue learns a job's end from every
  /// rank's call at a global step.  Set before start().
  void set_on_done(std::function<void(core::SimTime)> f) { on_done_ = std::move(f); }

  // Streaming: a workload that adds its tasks while the graph runs (a
  // trace read a window at a time, docs/architecture.md "Streaming
  // traces").  Tasks added before start() are planned as above; once the
  // graph has a feeder, tasks and dependencies may be added after start()
  // too, each begun when seal()ed.  The graph runs exactly as if every task
  // had been planned before the start, as long as each is added before the
  // first of its dependencies completes (what the feeder is told, before
  // the dependents are released); one added later, when all of its
  // dependencies had completed, begins late, when sealed (late() counts
  // them).  A completed task's slot is reused by a later one once its last
  // event here has passed (completed, or for a message of another
  // process's destination, sent), so the graph holds what is in flight,
  // not every task the workload ever had.

  /// What a streaming workload hears of its graph.
  class Feeder {
   public:
    virtual ~Feeder() = default;
    /// Task t completed at `at` (or, `sent`, message t left its NIC), its
    /// times set: called before its dependents are released, so that the
    /// tasks added now that depend on it (depend(t, ...) or
    /// depend_sent(t, ...)) are released with those added before, in the
    /// order they were added.  Its slot is reused once this and its other
    /// local event have passed: read what is kept of it here.
    virtual void on_task_done(TaskId t, bool sent, core::SimTime at) = 0;
    /// The graph starts at `at` (start()): the first tasks, added now, are
    /// begun with the planned ones, once the feeder returns.
    virtual void on_start(core::SimTime /*at*/) {}
    /// Message `id` arrived here at `at` before any task of it was added
    /// here (a partitioned run: its sender's process ran ahead of the
    /// reading here); complete_delivered() completes the task added later.
    virtual void on_delivered_untasked(net::MessageId /*id*/, core::SimTime /*at*/) {}
  };
  /// Makes the graph streaming (before start()): `feeder` hears every
  /// completion, and on_done waits for end_feeding().
  void set_feeder(Feeder* feeder);
  /// Task t (added after start()) has all its dependencies: begun now if
  /// they have all been met (late if that was before now), else when the
  /// last is.  A task added after start() without dependencies begins only
  /// when sealed; one with dependencies, when they release it, unless it is
  /// held.  A dependency on a task whose edges were already released
  /// (completed before this hook) is met at once, at its completion plus
  /// the delay.
  void seal(TaskId t);
  /// Task t (added after start()) waits for seal() even once its
  /// dependencies are met: one whose last dependency is added later (a
  /// receive whose send is not read yet).
  void hold(TaskId t);
  /// Message task t (added after start()), whose message arrived here at
  /// `at` before t was added (Feeder::on_delivered_untasked): completes it
  /// now, as of `at`, once its dependents are added.  Its dependents are
  /// released as its arrival would have released them, at `at`.
  void complete_delivered(TaskId t, core::SimTime at);
  /// The feeder has no more tasks: on_done once every task has completed.
  void end_feeding(core::SimTime at);
  /// Frees task t's slot (streaming): for a task that has no event on this
  /// process (the other members' part of a collective), or whose times are
  /// no longer read.  Its pending edges go with it.
  void retire(TaskId t);
  /// Tasks sealed with every dependency already met before now: begun late,
  /// where a planned graph would have begun them when the last was met.
  std::uint64_t late() const { return late_; }
  /// Tasks added, all of them (size() counts slots, which streaming reuses).
  std::uint64_t added() const { return added_; }

  const Task& task(TaskId t) const { return tasks_[t]; }
  net::Network& network() const { return net_; }
  std::size_t size() const { return tasks_.size(); }
  /// Bytes its tasks, edges and queues hold (capacities: what a run's
  /// memory estimate counts for a planned graph).
  std::uint64_t memory_bytes() const;
  /// A lower bound on when the whole graph completes, from its tasks as
  /// planned (call before start()): the latest not_before plus its task's own
  /// duration, and each endpoint's compute tasks run one after another
  /// and its messages' bytes in and out at its links' full rates, from
  /// time zero.  What the memory estimate sizes a job's link time series
  /// by (the run's length is not known before it).
  core::SimTime end_lower_bound() const;
  /// What planning may still add before it throws PlanOverBudget: the
  /// network's plan budget less this graph and the network's messages.
  std::uint64_t plan_budget_left() const;
  /// Bytes a planner holds beside the graph while it plans (a trace's
  /// nodes), counted against the plan budget with it until set back to 0.
  void set_held_beside(std::uint64_t bytes) { held_beside_ = bytes; }
  /// Where task t completes: its endpoint, or a message's destination.
  net::EndpointId completes_at(TaskId t) const;
  /// Tasks completed on this process (of those it simulates).
  std::uint64_t completed() const { return completed_; }
  /// Tasks this process simulates (compute and joins at its endpoints,
  /// messages it sends).
  std::uint64_t local_tasks() const;
  /// Task of a network message, or kNone.
  TaskId task_of_message(net::MessageId id) const;

  void on_message_delivered(net::MessageId id) override;
  void on_message_sent(net::MessageId id) override;
  bool wants_sent() const override { return true; }

 private:
  struct Edge {
    TaskId to;
    std::uint32_t delay;  // index into delays_ (0: none)
  };
  TaskId add(Task t);
  TaskId add_created(net::MessageId id, net::EndpointId src, std::uint32_t label);  // the task of message id
  std::uint64_t planned_bytes() const;                  // this graph, the network's messages, held_beside_
  std::uint64_t held_beside_ = 0;
  void check_plan_budget(std::uint64_t growing) const;  // throws PlanOverBudget
  void finalize();
  void drain(core::SimTime now);  // begins every task in work_
  void release(TaskId from, bool sent, core::SimTime at);
  // Edge from -> to met at `at` (`ready_at`: with its delay): to's ready
  // time, and to the work list once it waits for nothing.
  void meet(TaskId from, TaskId to, core::SimTime ready_at, core::SimTime at);
  void begin(TaskId t, core::SimTime at);
  void complete(TaskId t, core::SimTime at);
  void run_stream(net::EndpointId e, core::SimTime now);
  void on_event(const core::Event& ev);
  bool local(net::EndpointId e) const;

  net::Network& net_;
  core::Simulator& sim_;
  core::Simulator::BindingId binding_ = 0;
  std::uint64_t tag_ = 0;  // shifted into arg0 above the event kind
  std::vector<Task> tasks_;
  std::vector<TaskId> of_message_;  // network message id - base -> task
  net::MessageId base_ = 0;
  // Edges while the graph is being built, then as adjacency (CSR) by task:
  // completion successors and "left the NIC" successors.  Pending, each
  // kind in its own list: 12 bytes an edge, not 16 with a flag (a trace of
  // a million nodes plans millions).
  struct PendingEdge {
    TaskId from;
    Edge e;
  };
  std::vector<PendingEdge> pending_done_, pending_sent_;
  // (checks the plan budget where the list grows)
  void add_pending(std::vector<PendingEdge>& list, const PendingEdge& e);
  std::vector<std::uint32_t> first_done_, first_sent_;
  std::vector<Edge> done_edges_, sent_edges_;
  std::vector<core::SimTime> delays_{core::SimTime::zero()};
  // Per endpoint: FIFO of ready compute tasks, whether one is running.
  std::vector<TaskId> queue_head_, queue_tail_;
  std::vector<std::uint8_t> running_;
  std::vector<TaskId> work_;  // tasks whose dependencies were met, to begin (iterative, no deep recursion)
  std::uint64_t completed_ = 0;
  std::uint64_t local_total_ = 0;  // local_tasks(), from start()
  bool started_ = false;
  std::function<void(core::SimTime)> on_done_;

  // Streaming (set_feeder).  Edges added after start(): per slot, a list
  // in a pool (completion and "left the NIC" successors, in the order
  // added), each pool entry's `next` its list's next (kNone: last).
  struct PoolEdge {
    TaskId to;
    std::uint32_t next;
    core::SimTime delay;
  };
  // Task::flags: planned before start() (its edges in the adjacency); its
  // completion / "left the NIC" edges released; added after start() and not
  // sealed yet; retired.
  enum : std::uint8_t { kPlanned = 1, kDoneReleased = 2, kSentReleased = 4, kHeld = 8, kRetired = 16, kSealed = 32 };
  void add_edge(TaskId from, bool sent, TaskId to, core::SimTime delay);
  void release_pool(TaskId from, bool sent, core::SimTime at);
  void retire_if_passed(TaskId t);  // retire() once its last local event has passed
  void check_done(core::SimTime at);  // on_done once every local task has completed (and feeding ended)
  core::SimTime now() const { return depth_ > 0 ? now_ : sim_.now(); }
  Feeder* feeder_ = nullptr;
  bool feeding_ = false;
  bool done_ = false;      // on_done called
  std::uint32_t depth_ = 0;  // inside the graph's handling of an event (seal() leaves the draining to it)
  core::SimTime now_;        // that event's time
  std::vector<PoolEdge> pool_;
  std::uint32_t pool_free_ = kNone;
  std::vector<std::uint32_t> head_done_, tail_done_, head_sent_, tail_sent_;  // per slot: its pool lists
  std::vector<TaskId> free_;                                                   // retired slots
  std::uint64_t late_ = 0, added_ = 0;
};

}  // namespace fabricsim::workload
