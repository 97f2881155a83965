#include "fabricsim/workload/task_graph.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/capacity.hpp"

namespace fabricsim::workload {

using core::SimTime;

namespace {
// Above the network's priorities (credits 0 ... deliveries 4): a task that
// completes at the time a message arrives runs after the arrival.
constexpr std::uint32_t kPrioTask = 5;
enum EventKind : std::uint64_t { kComputeReady = 0, kComputeDone = 1, kJoinDue = 2 };
}  // namespace

TaskGraph::TaskGraph(net::Network& network, core::Simulator& sim)
    : TaskGraph(network, sim, sim.bind(core::Simulator::handler<TaskGraph, &TaskGraph::on_event>(), this), 0) {}

TaskGraph::TaskGraph(net::Network& network, core::Simulator& sim, core::Simulator::BindingId shared_binding,
                     std::uint64_t tag)
    : net_(network), sim_(sim), binding_(shared_binding), tag_(tag << 8) {
  FABRICSIM_ASSERT(tag < (std::uint64_t{1} << 56), "graph tag out of range");
  const std::size_t endpoints = net_.topology().endpoint_count();
  queue_head_.assign(endpoints, kNone);
  queue_tail_.assign(endpoints, kNone);
  running_.assign(endpoints, 0);
  base_ = static_cast<net::MessageId>(net_.message_count());
  net_.set_listener(this);
}

PlanOverBudget::PlanOverBudget(std::uint64_t planned, std::uint64_t budget, const std::string& what)
    : util::ConfigError(fmt::format(
          "engine.memory_limit_gib: planning the jobs would outgrow the {} the memory limit leaves them ({}); plan "
          "fewer ranks, iterations or chunks (workload.chunk_bytes), or raise engine.memory_limit_gib",
          util::human_bytes(static_cast<double>(budget)),
          what.empty() ? fmt::format("it was about to hold {} of tasks, messages and collective schedules",
                                     util::human_bytes(static_cast<double>(planned)))
                       : what)),
      planned_(planned),
      budget_(budget) {}

std::uint64_t TaskGraph::planned_bytes() const {
  return memory_bytes() + net_.message_capacity() * net::Network::message_bytes() + held_beside_;
}

std::uint64_t TaskGraph::plan_budget_left() const {
  const std::uint64_t used = planned_bytes();
  return used >= net_.plan_budget() ? 0 : net_.plan_budget() - used;
}

// `growing`: the bytes of the array about to be allocated (a vector grows
// by doubling, its old array held until the new one is filled).
void TaskGraph::check_plan_budget(std::uint64_t growing) const {
  const std::uint64_t used = planned_bytes() + growing;
  if (used > net_.plan_budget()) throw PlanOverBudget(used, net_.plan_budget());
}

void TaskGraph::add_pending(std::vector<PendingEdge>& list, const PendingEdge& e) {
  if (list.size() == list.capacity())
    check_plan_budget(2 * std::max<std::size_t>(list.size(), 1) * sizeof(PendingEdge));
  list.push_back(e);
}

void TaskGraph::reserve(std::size_t more, std::size_t messages) {
  FABRICSIM_ASSERT(messages <= more, "messages are tasks");
  const auto grows = [](std::size_t size, std::size_t capacity, std::size_t room) {
    return size + room > capacity ? size + room : 0;
  };
  const std::size_t tasks = grows(tasks_.size(), tasks_.capacity(), more);
  const std::size_t of = grows(of_message_.size(), of_message_.capacity(), messages);
  const std::size_t recs = grows(net_.message_count(), net_.message_capacity(), messages);
  check_plan_budget(tasks * sizeof(Task) + of * sizeof(TaskId) + recs * net::Network::message_bytes());
  if (tasks > 0) tasks_.reserve(tasks);
  if (of > 0) of_message_.reserve(of);
  if (recs > 0) net_.reserve_messages(messages);
}

TaskGraph::TaskId TaskGraph::add(Task t) {
  FABRICSIM_ASSERT(!started_ || (feeder_ && !done_), "task added after start to a graph that is not streaming");
  FABRICSIM_ASSERT(t.at < running_.size(), "task on a missing endpoint");
  ++added_;
  if (started_) {
    // Streaming: counted where it completes, in a retired task's slot if
    // there is one; begun when its dependencies release it, or by seal().
    t.flags = 0;
    if (local(t.kind == Kind::Message ? net_.message(t.message).dst : t.at)) ++local_total_;
    if (!free_.empty()) {
      const TaskId id = free_.back();
      free_.pop_back();
      tasks_[id] = t;
      return id;
    }
  }
  if (tasks_.size() == tasks_.capacity()) check_plan_budget(2 * std::max<std::size_t>(tasks_.size(), 1) * sizeof(Task));
  tasks_.push_back(t);
  return static_cast<TaskId>(tasks_.size() - 1);
}

TaskGraph::TaskId TaskGraph::add_compute(net::EndpointId at, SimTime duration, std::uint32_t label) {
  Task t;
  t.kind = Kind::Compute;
  t.at = at;
  t.param = duration.ps();
  t.label = label;
  return add(t);
}

TaskGraph::TaskId TaskGraph::add_message(net::EndpointId src, net::EndpointId dst, std::uint64_t bytes,
                                         std::uint32_t label) {
  const net::MessageId m = net_.create(src, dst, bytes, 0);
  FABRICSIM_ASSERT(m == base_ + of_message_.size(), "another workload created messages in between");
  return add_created(m, src, label);
}

TaskGraph::TaskId TaskGraph::add_message_at(net::MessageId id, net::EndpointId src, net::EndpointId dst,
                                            std::uint64_t bytes, std::uint32_t label) {
  FABRICSIM_ASSERT(id >= base_, "a message of another graph");
  // (Its record may be made already, before the run: trace_records.  A
  // record set aside and not made has no bytes; every message has one.)
  // (Described, a streamed trace on several processes: made here now,
  // where its task is.)
  const net::Message m = net_.message(id);
  if (!net_.made(id)) {
    FABRICSIM_ASSERT(m.bytes == 0 || (m.src == src && m.dst == dst && m.bytes == bytes),
                     "a message's task added to another message's description");
    net_.create_at(id, src, dst, bytes, 0);
  } else
    FABRICSIM_ASSERT(m.src == src && m.dst == dst && m.bytes == bytes && m.post_time == SimTime::max(),
                     "a message's task added to another message's record");
  return add_created(id, src, label);
}

TaskGraph::TaskId TaskGraph::add_created(net::MessageId m, net::EndpointId src, std::uint32_t label) {
  Task t;
  t.kind = Kind::Message;
  t.at = src;
  t.label = label;
  t.param = -1;  // (not sent)
  t.message = m;
  const TaskId id = add(t);
  // (Ids set aside are created in any order: the ones not yet, no task.)
  if (m - base_ >= of_message_.size()) {
    if (of_message_.capacity() < m - base_ + 1) check_plan_budget(2 * of_message_.capacity() * sizeof(TaskId));
    of_message_.resize(m - base_ + 1, kNone);
  }
  of_message_[m - base_] = id;
  return id;
}

TaskGraph::TaskId TaskGraph::add_join(net::EndpointId at, std::uint32_t label, double reduce_gbps) {
  Task t;
  t.kind = Kind::Join;
  t.at = at;
  t.label = label;
  t.param = std::bit_cast<std::int64_t>(reduce_gbps);
  return add(t);
}

net::EndpointId TaskGraph::completes_at(TaskId t) const {
  const Task& k = tasks_[t];
  return k.kind == Kind::Message ? net_.message(k.message).dst : k.at;
}

void TaskGraph::depend(TaskId before, TaskId after, SimTime delay) {
  FABRICSIM_ASSERT(before < tasks_.size() && after < tasks_.size() && before != after, "bad dependency");
  FABRICSIM_ASSERT(completes_at(before) == tasks_[after].at, "a dependency must be local to an endpoint");
  if (started_) {
    FABRICSIM_ASSERT(feeder_ && !(tasks_[after].flags & kSealed) && !(tasks_[before].flags & kRetired),
                     "a dependency added after start: of a task not sealed, on one not retired");
    const Task& b = tasks_[before];
    if (b.flags & kDoneReleased) {
      // Met already: at its completion, plus the delay (and a reducing
      // join's reduction of the message, as release() would).
      Task& a = tasks_[after];
      a.ready = std::max(a.ready, b.end + delay);
      if (a.kind == Kind::Join && a.reduce_gbps() > 0 && b.kind == Kind::Message)
        a.ready = std::max(a.ready, b.end + core::serialization_time(net_.message(b.message).bytes, a.reduce_gbps()));
    } else {
      add_edge(before, false, after, delay);
      ++tasks_[after].waits;
    }
    return;
  }
  std::uint32_t d = 0;
  if (delay > SimTime::zero()) {
    d = static_cast<std::uint32_t>(delays_.size());
    delays_.push_back(delay);
  }
  add_pending(pending_done_, PendingEdge{before, Edge{after, d}});
  ++tasks_[after].waits;
}

std::vector<TaskGraph::Dependency> TaskGraph::dependencies() const {
  std::vector<Dependency> out;
  out.reserve(pending_done_.size() + pending_sent_.size());
  for (const PendingEdge& p : pending_done_) out.push_back({p.from, p.e.to, delays_[p.e.delay], false});
  for (const PendingEdge& p : pending_sent_) out.push_back({p.from, p.e.to, delays_[p.e.delay], true});
  return out;
}

void TaskGraph::depend_sent(TaskId msg, TaskId after) {
  FABRICSIM_ASSERT(tasks_[msg].kind == Kind::Message, "depend_sent needs a message");
  FABRICSIM_ASSERT(tasks_[msg].at == tasks_[after].at, "a send dependency must be at the message's source");
  if (started_) {
    FABRICSIM_ASSERT(feeder_ && !(tasks_[after].flags & kSealed) && !(tasks_[msg].flags & kRetired),
                     "a dependency added after start: of a task not sealed, on one not retired");
    if (tasks_[msg].flags & kSentReleased) {
      tasks_[after].ready = std::max(tasks_[after].ready, tasks_[msg].sent());
    } else {
      add_edge(msg, true, after, SimTime::zero());
      ++tasks_[after].waits;
    }
    return;
  }
  add_pending(pending_sent_, PendingEdge{msg, Edge{after, 0}});
  ++tasks_[after].waits;
}

void TaskGraph::finalize() {
  // Each kind's pending edges into its adjacency, in the order they were
  // added, and freed before the next kind's.
  const std::size_t n = tasks_.size();
  const auto place = [n](std::vector<PendingEdge>& pending, std::vector<std::uint32_t>& first,
                         std::vector<Edge>& edges) {
    first.assign(n + 1, 0);
    for (const PendingEdge& p : pending) ++first[p.from + 1];
    for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
    edges.resize(first[n]);
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (const PendingEdge& p : pending) edges[fill[p.from]++] = p.e;
    std::vector<PendingEdge>().swap(pending);
  };
  place(pending_done_, first_done_, done_edges_);
  place(pending_sent_, first_sent_, sent_edges_);
}

bool TaskGraph::local(net::EndpointId e) const { return net_.owns(net_.topology().endpoint_node(e)); }

std::uint64_t TaskGraph::local_tasks() const {
  if (started_) return local_total_;
  std::uint64_t k = 0;
  for (TaskId t = 0; t < tasks_.size(); ++t)
    if (local(completes_at(t))) ++k;
  return k;
}

TaskGraph::TaskId TaskGraph::task_of_message(net::MessageId id) const {
  return id >= base_ && id - base_ < of_message_.size() ? of_message_[id - base_] : kNone;
}

void TaskGraph::start(SimTime at) {
  FABRICSIM_ASSERT(!started_, "started twice");
  finalize();
  local_total_ = local_tasks();
  started_ = true;
  for (TaskId t = 0; t < tasks_.size(); ++t) {
    tasks_[t].flags |= kPlanned;
    if (tasks_[t].waits != 0) continue;
    tasks_[t].ready = std::max(tasks_[t].ready, at);
    if (tasks_[t].kind == Kind::Message || local(tasks_[t].at)) work_.push_back(t);
  }
  ++depth_;
  now_ = at;
  if (feeder_) feeder_->on_start(at);
  drain(at);  // before any event: `now` is the start
  --depth_;
  check_done(at);
}

inline void TaskGraph::meet(TaskId from, TaskId to, SimTime ready_at, SimTime at) {
  Task& t = tasks_[to];
  t.ready = std::max(t.ready, ready_at);
  if (--t.waits != 0) return;
  if (t.kind == Kind::Join && t.reduce_gbps() > 0 && tasks_[from].kind == Kind::Message)
    t.ready = std::max(t.ready, at + core::serialization_time(net_.message(tasks_[from].message).bytes, t.reduce_gbps()));
  if (!(t.flags & kHeld)) work_.push_back(to);  // (held: seal() begins it)
}

void TaskGraph::release(TaskId from, bool sent, SimTime at) {
  if (tasks_[from].flags & kPlanned) {
    const auto& first = sent ? first_sent_ : first_done_;
    const auto& edges = sent ? sent_edges_ : done_edges_;
    for (std::uint32_t k = first[from]; k < first[from + 1]; ++k)
      meet(from, edges[k].to, at + delays_[edges[k].delay], at);
  }
  if (feeder_) release_pool(from, sent, at);
  tasks_[from].flags |= sent ? kSentReleased : kDoneReleased;
}

void TaskGraph::set_feeder(Feeder* feeder) {
  FABRICSIM_ASSERT(!started_, "a feeder is set before start");
  feeder_ = feeder;
  feeding_ = true;
}

void TaskGraph::add_edge(TaskId from, bool sent, TaskId to, SimTime delay) {
  auto& head = sent ? head_sent_ : head_done_;
  auto& tail = sent ? tail_sent_ : tail_done_;
  if (head.size() < tasks_.size()) {
    head.resize(tasks_.size(), kNone);
    tail.resize(tasks_.size(), kNone);
  }
  std::uint32_t k = pool_free_;
  if (k != kNone) {
    pool_free_ = pool_[k].next;
    pool_[k] = PoolEdge{to, kNone, delay};
  } else {
    k = static_cast<std::uint32_t>(pool_.size());
    pool_.push_back(PoolEdge{to, kNone, delay});
  }
  if (tail[from] == kNone)
    head[from] = k;
  else
    pool_[tail[from]].next = k;
  tail[from] = k;
}

void TaskGraph::release_pool(TaskId from, bool sent, SimTime at) {
  auto& head = sent ? head_sent_ : head_done_;
  auto& tail = sent ? tail_sent_ : tail_done_;
  if (from >= head.size()) return;
  for (std::uint32_t k = head[from]; k != kNone;) {
    const PoolEdge e = pool_[k];
    pool_[k].next = pool_free_;
    pool_free_ = k;
    meet(from, e.to, at + e.delay, at);
    k = e.next;
  }
  head[from] = tail[from] = kNone;
}

void TaskGraph::hold(TaskId id) {
  FABRICSIM_ASSERT(started_ && feeder_ && !(tasks_[id].flags & (kSealed | kPlanned)), "hold: a task added after start");
  tasks_[id].flags |= kHeld;
}

void TaskGraph::seal(TaskId id) {
  FABRICSIM_ASSERT(started_ && feeder_ && !(tasks_[id].flags & (kSealed | kPlanned)), "seal: a task added after start, once");
  Task& t = tasks_[id];
  t.flags = static_cast<std::uint8_t>((t.flags & ~kHeld) | kSealed);
  if (t.waits != 0) return;  // (released when its last dependency completes)
  const SimTime at = now();
  if (t.ready < at) ++late_;
  if (t.kind == Kind::Message || local(t.at)) work_.push_back(id);
  if (depth_ == 0) drain(at);
}

void TaskGraph::retire(TaskId id) {
  FABRICSIM_ASSERT(started_ && feeder_ && !(tasks_[id].flags & kRetired), "retire: a streaming graph's task, once");
  Task& t = tasks_[id];
  if (t.kind == Kind::Message && t.message >= base_ && t.message - base_ < of_message_.size())
    of_message_[t.message - base_] = kNone;
  // A task that would have completed here and did not: no longer waited for.
  if (t.end == SimTime::max() && local(completes_at(id))) --local_total_;
  for (auto* lists : {&head_done_, &head_sent_}) {
    auto& head = *lists;
    auto& tail = lists == &head_done_ ? tail_done_ : tail_sent_;
    if (id >= head.size()) continue;
    for (std::uint32_t k = head[id]; k != kNone;) {
      const std::uint32_t next = pool_[k].next;
      --tasks_[pool_[k].to].waits;  // (its successors no longer wait for it)
      pool_[k].next = pool_free_;
      pool_free_ = k;
      k = next;
    }
    head[id] = tail[id] = kNone;
  }
  t = Task{};
  t.flags = kRetired;
  free_.push_back(id);
}

void TaskGraph::retire_if_passed(TaskId id) {
  const Task& t = tasks_[id];
  if (t.flags & kRetired) return;
  bool passed = (t.flags & kDoneReleased) != 0;
  if (t.kind == Kind::Message) {
    // Its events here: leaving the NIC where the source is, arriving where
    // the destination is (either may be another process's).
    const net::Message& m = net_.message(t.message);
    passed = (!local(m.src) || (t.flags & kSentReleased)) && (!local(m.dst) || (t.flags & kDoneReleased));
  }
  if (passed) retire(id);
}

void TaskGraph::complete_delivered(TaskId t, SimTime at) {
  FABRICSIM_ASSERT(started_ && feeder_ && tasks_[t].kind == Kind::Message && tasks_[t].end == SimTime::max() &&
                       !(tasks_[t].flags & (kPlanned | kSealed | kRetired)),
                   "complete_delivered: a message task added after start, not begun here");
  FABRICSIM_ASSERT(local(net_.message(tasks_[t].message).dst), "complete_delivered: a message that arrives here");
  ++depth_;
  complete(t, at);
  --depth_;
  if (depth_ == 0) drain(now());
}

void TaskGraph::end_feeding(SimTime at) {
  FABRICSIM_ASSERT(feeder_ && feeding_, "end_feeding: once, of a streaming graph");
  feeding_ = false;
  check_done(at);
}

void TaskGraph::check_done(SimTime at) {
  if (done_ || feeding_ || completed_ != local_total_) return;
  done_ = true;
  // Every task of this process done: the per-endpoint stream state (9 bytes
  // per endpoint of the fabric) is not needed again, and a cluster queue
  // keeps each finished job's graph for its report (70,000 jobs on 2,048
  // endpoints: 1.3 GB).
  std::vector<TaskId>().swap(queue_head_);
  std::vector<TaskId>().swap(queue_tail_);
  std::vector<std::uint8_t>().swap(running_);
  if (on_done_) on_done_(at);
}

void TaskGraph::drain(SimTime now) {
  // Beginning a task may complete joins and release more: by index, as the list grows.
  for (std::size_t i = 0; i < work_.size(); ++i) begin(work_[i], now);
  work_.clear();
}

void TaskGraph::begin(TaskId id, SimTime now) {
  Task& t = tasks_[id];
  const SimTime ready = std::max(t.ready, now);
  const net::NodeId node = net_.topology().endpoint_node(t.at);
  switch (t.kind) {
    case Kind::Message:
      t.start = ready;
      net_.post(t.message, ready);
      break;
    case Kind::Compute:
      if (ready > now) {
        sim_.schedule_bound(ready, kPrioTask, node, binding_, id, tag_ | kComputeReady);
      } else {
        if (queue_tail_[t.at] == kNone)
          queue_head_[t.at] = id;
        else
          tasks_[queue_tail_[t.at]].queue_next = id;
        queue_tail_[t.at] = id;
        run_stream(t.at, now);
      }
      break;
    case Kind::Join:
      if (ready > now)
        sim_.schedule_bound(ready, kPrioTask, node, binding_, id, tag_ | kJoinDue);
      else
        complete(id, now);
      break;
  }
}

void TaskGraph::complete(TaskId id, SimTime at) {
  Task& t = tasks_[id];
  if (t.kind == Kind::Join) t.start = at;
  t.end = at;
  ++completed_;
  if (feeder_) feeder_->on_task_done(id, false, at);  // (may add tasks: t may move)
  release(id, false, at);
  if (feeder_) retire_if_passed(id);
  check_done(at);
}

void TaskGraph::run_stream(net::EndpointId e, SimTime now) {
  if (running_.empty()) return;  // (all done)
  if (running_[e] || queue_head_[e] == kNone) return;
  const TaskId id = queue_head_[e];
  Task& t = tasks_[id];
  queue_head_[e] = t.queue_next;
  if (queue_head_[e] == kNone) queue_tail_[e] = kNone;
  running_[e] = 1;
  t.start = now;
  sim_.schedule_bound(now + t.duration(), kPrioTask, net_.topology().endpoint_node(e), binding_, id, tag_ | kComputeDone);
}

void TaskGraph::on_event(const core::Event& ev) {
  const TaskId id = ev.arg32;
  const SimTime now = sim_.now();
  ++depth_;
  now_ = now;
  const net::EndpointId at = tasks_[id].at;  // (a completed task's slot may be reused)
  switch (ev.arg0 & 0xFF) {
    case kComputeReady: {
      Task& t = tasks_[id];
      t.ready = SimTime::zero();  // already waited for
      begin(id, now);
      break;
    }
    case kComputeDone:
      running_[at] = 0;
      complete(id, now);
      break;
    case kJoinDue: complete(id, now); break;
    default: break;
  }
  drain(now);
  --depth_;
  if ((ev.arg0 & 0xFF) == kComputeDone) run_stream(at, now);
}

void TaskGraph::on_message_delivered(net::MessageId id) {
  const TaskId t = task_of_message(id);
  if (t == kNone) {
    if (feeder_ && id >= base_) feeder_->on_delivered_untasked(id, net_.message(id).end_time);
    return;
  }
  const SimTime now = net_.message(id).end_time;
  ++depth_;
  now_ = now;
  complete(t, now);
  drain(now);
  --depth_;
}

void TaskGraph::on_message_sent(net::MessageId id) {
  const TaskId t = task_of_message(id);
  if (t == kNone) return;
  const SimTime now = net_.now();
  ++depth_;
  now_ = now;
  tasks_[t].param = now.ps();
  if (feeder_) feeder_->on_task_done(t, true, now);
  release(t, true, now);
  drain(now);
  if (feeder_) retire_if_passed(t);
  --depth_;
}

SimTime TaskGraph::end_lower_bound() const {
  const net::Topology& topo = net_.topology();
  const std::size_t endpoints = topo.endpoint_count();
  // Per endpoint: compute time, bytes sent, bytes received.  In doubles (ps):
  // sums of durations near SimTime's range may not fit it.
  std::vector<double> compute_ps(endpoints, 0.0), out_bytes(endpoints, 0.0), in_bytes(endpoints, 0.0);
  double bound_ps = 0;
  for (const Task& t : tasks_) {
    bound_ps = std::max(bound_ps, static_cast<double>(t.ready.ps()) + static_cast<double>(t.duration().ps()));
    if (t.kind == Kind::Compute) {
      compute_ps[t.at] += static_cast<double>(t.duration().ps());
    } else if (t.kind == Kind::Message && t.message < net_.message_count()) {
      const net::Message& m = net_.message(t.message);
      out_bytes[m.src] += static_cast<double>(m.bytes);
      in_bytes[m.dst] += static_cast<double>(m.bytes);
    }
  }
  // Every data link of the endpoint counts (an NVLink beside a NIC too):
  // a bound, not an estimate.
  const auto rate = [&](const std::vector<net::LinkId>& links) {
    double gbps = 0.0;
    for (const net::LinkId l : links)
      if (topo.links()[l].carries_data) gbps += topo.links()[l].bandwidth_gbps;
    return gbps;
  };
  for (std::size_t e = 0; e < endpoints; ++e) {
    bound_ps = std::max(bound_ps, compute_ps[e]);
    const net::Node& n = topo.node(topo.endpoint_node(static_cast<net::EndpointId>(e)));
    // bytes x 8 / Gb/s = ns; x 1000 = ps.
    for (const auto& [bytes, gbps] : {std::pair{out_bytes[e], rate(n.out)}, std::pair{in_bytes[e], rate(n.in)}})
      if (bytes > 0 && gbps > 0) bound_ps = std::max(bound_ps, bytes * 8.0 / gbps * 1000.0);
  }
  return SimTime::from_ps(static_cast<std::int64_t>(std::min(bound_ps, 9e18)));
}

std::uint64_t TaskGraph::memory_bytes() const {
  using util::capacity_bytes;
  return capacity_bytes(tasks_) + capacity_bytes(of_message_) + capacity_bytes(pending_done_) +
         capacity_bytes(pending_sent_) +
         capacity_bytes(first_done_) + capacity_bytes(first_sent_) + capacity_bytes(done_edges_) +
         capacity_bytes(sent_edges_) + capacity_bytes(delays_) + capacity_bytes(queue_head_) +
         capacity_bytes(queue_tail_) + capacity_bytes(running_) + capacity_bytes(work_) + capacity_bytes(pool_) +
         capacity_bytes(head_done_) + capacity_bytes(tail_done_) + capacity_bytes(head_sent_) +
         capacity_bytes(tail_sent_) + capacity_bytes(free_);
}

}  // namespace fabricsim::workload
