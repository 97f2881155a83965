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
  base_ = static_cast<net::MessageId>(net_.messages().size());
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
  return memory_bytes() + net_.messages().capacity() * net::Network::message_bytes() + held_beside_;
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
  const std::vector<net::Message>& records = net_.messages();
  const auto grows = [](std::size_t size, std::size_t capacity, std::size_t room) {
    return size + room > capacity ? size + room : 0;
  };
  const std::size_t tasks = grows(tasks_.size(), tasks_.capacity(), more);
  const std::size_t of = grows(of_message_.size(), of_message_.capacity(), messages);
  const std::size_t recs = grows(records.size(), records.capacity(), messages);
  check_plan_budget(tasks * sizeof(Task) + of * sizeof(TaskId) + recs * net::Network::message_bytes());
  if (tasks > 0) tasks_.reserve(tasks);
  if (of > 0) of_message_.reserve(of);
  if (recs > 0) net_.reserve_messages(messages);
}

TaskGraph::TaskId TaskGraph::add(Task t) {
  FABRICSIM_ASSERT(!started_, "task added after start");
  FABRICSIM_ASSERT(t.at < running_.size(), "task on a missing endpoint");
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
  Task t;
  t.kind = Kind::Message;
  t.at = src;
  t.label = label;
  t.param = -1;  // (not sent)
  t.message = net_.create(src, dst, bytes, 0);
  FABRICSIM_ASSERT(t.message == base_ + of_message_.size(), "another workload created messages in between");
  of_message_.push_back(static_cast<TaskId>(tasks_.size()));
  return add(t);
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
  return k.kind == Kind::Message ? net_.messages()[k.message].dst : k.at;
}

void TaskGraph::depend(TaskId before, TaskId after, SimTime delay) {
  FABRICSIM_ASSERT(before < tasks_.size() && after < tasks_.size() && before != after, "bad dependency");
  FABRICSIM_ASSERT(completes_at(before) == tasks_[after].at, "a dependency must be local to an endpoint");
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
    if (tasks_[t].waits != 0) continue;
    tasks_[t].ready = std::max(tasks_[t].ready, at);
    if (tasks_[t].kind == Kind::Message || local(tasks_[t].at)) work_.push_back(t);
  }
  drain(at);  // before any event: `now` is the start
  if (local_total_ == 0 && on_done_) on_done_(at);
}

void TaskGraph::release(TaskId from, bool sent, SimTime at, SimTime extra) {
  const auto& first = sent ? first_sent_ : first_done_;
  const auto& edges = sent ? sent_edges_ : done_edges_;
  for (std::uint32_t k = first[from]; k < first[from + 1]; ++k) {
    Task& t = tasks_[edges[k].to];
    t.ready = std::max(t.ready, at + delays_[edges[k].delay] + extra);
    if (--t.waits != 0) continue;
    if (t.kind == Kind::Join && t.reduce_gbps() > 0 && tasks_[from].kind == Kind::Message)
      t.ready = std::max(t.ready, at + core::serialization_time(net_.messages()[tasks_[from].message].bytes, t.reduce_gbps()));
    work_.push_back(edges[k].to);
  }
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
  release(id, false, at);
  if (completed_ != local_total_) return;
  // Every task of this process done: the per-endpoint stream state (9 bytes
  // per endpoint of the fabric) is not needed again, and a cluster queue
  // keeps each finished job's graph for its report (70,000 jobs on 2,048
  // endpoints: 1.3 GB).
  std::vector<TaskId>().swap(queue_head_);
  std::vector<TaskId>().swap(queue_tail_);
  std::vector<std::uint8_t>().swap(running_);
  if (on_done_) on_done_(at);
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
  switch (ev.arg0 & 0xFF) {
    case kComputeReady: {
      Task& t = tasks_[id];
      t.ready = SimTime::zero();  // already waited for
      begin(id, now);
      break;
    }
    case kComputeDone:
      running_[tasks_[id].at] = 0;
      complete(id, now);
      break;
    case kJoinDue: complete(id, now); break;
    default: break;
  }
  drain(now);
  if ((ev.arg0 & 0xFF) == kComputeDone) run_stream(tasks_[id].at, now);
}

void TaskGraph::on_message_delivered(net::MessageId id) {
  const TaskId t = task_of_message(id);
  if (t == kNone) return;
  const SimTime now = net_.messages()[id].end_time;
  complete(t, now);
  drain(now);
}

void TaskGraph::on_message_sent(net::MessageId id) {
  const TaskId t = task_of_message(id);
  if (t == kNone) return;
  const SimTime now = net_.now();
  tasks_[t].param = now.ps();
  release(t, true, now);
  drain(now);
}

SimTime TaskGraph::end_lower_bound() const {
  const net::Topology& topo = net_.topology();
  const std::size_t endpoints = topo.endpoint_count();
  // Per endpoint: compute time, bytes sent, bytes received.  In doubles (ps):
  // sums of durations near SimTime's range may not fit it.
  std::vector<double> compute_ps(endpoints, 0.0), out_bytes(endpoints, 0.0), in_bytes(endpoints, 0.0);
  double bound_ps = 0;
  const auto& msgs = net_.messages();
  for (const Task& t : tasks_) {
    bound_ps = std::max(bound_ps, static_cast<double>(t.ready.ps()) + static_cast<double>(t.duration().ps()));
    if (t.kind == Kind::Compute) {
      compute_ps[t.at] += static_cast<double>(t.duration().ps());
    } else if (t.kind == Kind::Message && t.message < msgs.size()) {
      const net::Message& m = msgs[t.message];
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
         capacity_bytes(queue_tail_) + capacity_bytes(running_) + capacity_bytes(work_);
}

}  // namespace fabricsim::workload
