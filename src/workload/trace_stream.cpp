// The streaming trace executor (include/fabricsim/workload/trace_stream.hpp;
// docs/architecture.md, "Streaming traces").
#include "fabricsim/workload/trace_stream.hpp"

#include <algorithm>
#include <numeric>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/dnn.hpp"

namespace fabricsim::workload {

using core::SimTime;
using util::ConfigError;

namespace {
std::uint32_t label(std::uint32_t job, DnnPhase p) { return (job << 8) | static_cast<std::uint32_t>(p); }
}  // namespace

TraceStream::TraceStream(TaskGraph& g, TraceSource& source, TraceStreamParams p, std::uint32_t job, RowSink& sink)
    : g_(g), src_(source), p_(std::move(p)), job_(job), sink_(sink) {
  const std::uint32_t R = src_.ranks();
  FABRICSIM_ASSERT(p_.endpoints.size() == R && p_.first_row.size() == R + 1 && p_.ids.first_send.size() == R,
                   "a stream's ranks");
  first_id_ = R == 0 ? 0 : p_.ids.first_send[0];
  message_row_.assign(p_.ids.total, UINT32_MAX);
  compute_ns_.assign(R, 0.0);
  live_.resize(R);
  done_.resize(R);
  next_row_.assign(R, 0);
  sends_.assign(R, 0);
  exhausted_.assign(R, 0);
  collectives_seen_.resize(R);
  g_.set_feeder(this);
}

void TraceStream::on_start(SimTime) {
  const std::uint32_t R = src_.ranks();
  // The ranks this process reads: those whose endpoint it simulates (all
  // of them on one process).  Each process reads its own ranks' files and
  // adds their tasks; every message is described everywhere already
  // (trace_records), so a packet of another process's rank is routed here.
  const net::Network& net = g_.network();
  here_.assign(R, 0);
  for (std::uint32_t r = 0; r < R; ++r) {
    here_[r] = net.owns(net.topology().endpoint_node(p_.endpoints[r])) ? 1 : 0;
    if (here_[r]) own_rows_ += p_.first_row[r + 1] - p_.first_row[r];
    else partitioned_ = true;
  }
  // A receive here from a rank read elsewhere takes the next message that
  // rank sends here with its tag, in its node order: as a send is matched
  // with the oldest receive waiting for it on one process.
  if (partitioned_ && p_.sends != nullptr) {
    for (std::uint32_t s = 0; s < R; ++s) {
      if (here_[s]) continue;
      const std::uint64_t end = s + 1 < R ? p_.ids.first_send[s + 1] - first_id_ : p_.ids.sends;
      for (std::uint64_t k = p_.ids.first_send[s] - first_id_; k < end; ++k) {
        const TraceRankMessages::Send x = p_.sends->get(k);
        const auto id = static_cast<net::MessageId>(first_id_ + k);
        if (x.peer < R && here_[x.peer]) remote_sends_[{s, x.peer, x.tag}].sends.push_back(id);
      }
    }
    p_.sends->release_buffers();
  }
  for (std::uint32_t r = 0; r < R; ++r)
    if (!here_[r]) {
      src_.skip(r);
      exhausted_[r] = 1;
      fed_out(r);
    }
  for (std::uint32_t r = 0; r < R; ++r) read_more(r);
}

void TraceStream::fed_out(std::uint32_t) {
  if (++fed_out_ != src_.ranks()) return;
  // Every rank read: unmatched communication can never complete.
  for (const auto& [key, w] : sends_waiting_)
    fail(std::get<0>(key), open_.at(w.row).id,
         "send to rank " + std::to_string(std::get<1>(key)) + " (tag " + std::to_string(std::get<2>(key)) +
             ") has no matching recv node there");
  for (const auto& [key, w] : recvs_waiting_)
    fail(std::get<1>(key), open_.at(w.row).id,
         "recv from rank " + std::to_string(std::get<0>(key)) + " (tag " + std::to_string(std::get<2>(key)) +
             ") has no matching send node there");
  for (const auto& [key, rs] : remote_sends_)
    if (rs.taken < rs.sends.size())
      fail(std::get<0>(key), send_node(rs.sends[rs.taken]),
           "send to rank " + std::to_string(std::get<1>(key)) + " (tag " + std::to_string(std::get<2>(key)) +
               ") has no matching recv node there");
  g_.end_feeding(g_.network().now());
}

void TraceStream::read_more(std::uint32_t r, std::size_t leaving) {
  while (!exhausted_[r] && live_[r].size() - leaving < p_.window) {
    if (!src_.next(r, scratch_)) {
      exhausted_[r] = 1;
      if (next_row_[r] != p_.first_row[r + 1] - p_.first_row[r])
        fail(r, 0, "the file has other nodes than its pre-pass counted (changed while read?)");
      fed_out(r);
      break;
    }
    add(r, scratch_);
  }
}

std::uint64_t TraceStream::send_node(net::MessageId id) { return p_.sends->get(id - first_id_).node; }

net::MessageId TraceStream::remote_message(std::uint32_t r, const TraceSource::Node& node) {
  const auto it = remote_sends_.find({node.n.peer, r, node.n.tag});
  if (it == remote_sends_.end() || it->second.taken == it->second.sends.size())
    fail(r, node.id,
         "recv from rank " + std::to_string(node.n.peer) + " (tag " + std::to_string(node.n.tag) +
             ") has no matching send node there");
  const net::MessageId id = it->second.sends[it->second.taken++];
  if (it->second.taken == it->second.sends.size()) remote_sends_.erase(it);
  return id;
}

void TraceStream::on_delivered_untasked(net::MessageId id, SimTime at) {
  // (Its post time is its sender's process's: set in every record at the end.)
  early_[id] = {-1, at.ps()};
}

bool TraceStream::completed(std::uint32_t r, std::uint64_t id) const {
  const auto& d = done_[r];
  auto it = d.upper_bound(id);
  if (it == d.begin()) return false;
  --it;
  return id <= it->second;
}

void TraceStream::done(std::uint32_t r, std::uint64_t id) {
  // Its dependents are read while it is still live, so that they wait for
  // its task (released after this hook, with its other dependents).
  read_more(r, 1);
  live_[r].erase(id);
  auto& d = done_[r];
  auto next = d.upper_bound(id);
  std::uint64_t first = id, last = id;
  if (next != d.begin()) {
    auto prev = std::prev(next);
    if (prev->second + 1 == id) {
      first = prev->first;
      d.erase(prev);
    }
  }
  if (next != d.end() && next->first == id + 1) {
    last = next->second;
    d.erase(next);
  }
  d.emplace(first, last);
}

void TraceStream::add_role(TaskId t, std::uint32_t row, Role role) {
  if (roles_.size() <= t) roles_.resize(static_cast<std::size_t>(t) + 1);
  Roles& ro = roles_[t];
  const int i = ro.role[0] == kNone ? 0 : 1;  // (drop_role keeps a free place second)
  FABRICSIM_ASSERT(ro.role[i] == kNone, "a task of more than two nodes' roles");
  ro.row[i] = row;
  ro.role[i] = role;
}

void TraceStream::drop_role(TaskId t, std::uint32_t row, Role role) {
  Roles& ro = roles_[t];
  for (int i = 0; i < 2; ++i)
    if (ro.role[i] == role && ro.row[i] == row) {
      ro.role[i] = kNone;
      if (i == 0) {  // (a free place is the second)
        std::swap(ro.role[0], ro.role[1]);
        std::swap(ro.row[0], ro.row[1]);
      }
      return;
    }
}

void TraceStream::match(const Waiting& send, const Waiting& recv) {
  unmatched_.erase(send.message);
  if (const auto e = early_.find(send.message); e != early_.end()) {
    // Delivered before the receive was read: it begins late (counted).
    open_.at(recv.row).start_ps = e->second.first;
    g_.not_before(recv.task, SimTime::from_ps(e->second.second));
    early_.erase(e);
  } else {
    g_.depend(send.task, recv.task);
    add_role(send.task, recv.row, kRecvStart);
    // (Its message, for a start at the cut: finish.)
    const Row& w = open_.at(recv.row);
    live_[w.rank].at(w.id).msg = send.task;
  }
  g_.seal(recv.task);
}

void TraceStream::add(std::uint32_t r, const TraceSource::Node& node) {
  const TraceNode& n = node.n;
  const auto row = static_cast<std::uint32_t>(p_.first_row[r] + next_row_[r]++);
  if (live_[r].count(node.id) != 0 || completed(r, node.id)) fail(r, node.id, "id: used by an earlier node too");
  open_.emplace(row, Row{node.id, node.name, r, n.kind, -1, -1});
  const net::EndpointId ep = p_.endpoints[r];
  Live L{row, n.kind, TaskGraph::kNone, TaskGraph::kNone, TaskGraph::kNone};
  bool seal = true;
  bool matched = false;  // a receive's join, its send read: match() once its dependencies are added
  Waiting send_now{};
  switch (n.kind) {
    case Kind::Compute:
      L.entry = L.done = n.duration_ns > 0
                             ? g_.add_compute(ep, SimTime::from_ns_f(n.duration_ns), label(job_, DnnPhase::Forward))
                             : g_.add_join(ep, label(job_, DnnPhase::Control));
      add_role(L.entry, row, kCompute);
      compute_ns_[r] += n.duration_ns;
      break;
    case Kind::Send: {
      const net::MessageId id = p_.ids.first_send[r] + static_cast<net::MessageId>(sends_[r]++);
      L.entry = L.done = L.msg = g_.add_message_at(id, ep, p_.endpoints[n.peer], std::max<std::uint64_t>(n.bytes, 1),
                                                   label(job_, DnnPhase::Pipeline));
      message_row_[id - first_id_] = row;
      add_role(L.msg, row, kSend);
      if (!here_[n.peer]) break;  // (its receive is matched where it is read)
      const Waiting send{L.msg, row, id};
      // (The oldest waiting receive of the key: a multimap keeps equal keys
      // in the order they came.)
      const P2pKey key{r, n.peer, n.tag};
      if (const auto it = recvs_waiting_.lower_bound(key); it != recvs_waiting_.end() && it->first == key) {
        const Waiting recv = it->second;
        recvs_waiting_.erase(it);
        match(send, recv);
      } else {
        sends_waiting_.emplace(key, send);
        unmatched_.emplace(id, 1);
      }
      break;
    }
    case Kind::Recv: {
      if (!here_[n.peer]) {
        // Its sender is read by another process: its message is known from
        // the pre-pass, its task added here (never begun here: it completes
        // when the message arrives), or, arrived already, the time kept.
        const net::MessageId id = remote_message(r, node);
        const net::Message& m = g_.network().message(id);
        posted_elsewhere_.emplace_back(row, id);
        const auto e = early_.find(id);
        if (e == early_.end()) {
          L.msg = g_.add_message_at(id, m.src, m.dst, m.bytes, label(job_, DnnPhase::Pipeline));
          seal = false;
          if (node.deps.empty()) {  // (its message stands for it, as on one process)
            L.entry = L.done = L.msg;
            add_role(L.msg, row, kRecvMsg);
            break;
          }
        }
        L.entry = L.done = g_.add_join(ep, label(job_, DnnPhase::Control));
        add_role(L.done, row, kRecvEnd);
        if (e != early_.end()) {
          g_.not_before(L.done, SimTime::from_ps(e->second.second));
          early_.erase(e);
          seal = true;  // (late, as on one process, once its dependencies are added)
        } else {
          g_.depend(L.msg, L.done);
          add_role(L.msg, row, kRecvStart);
          seal = true;
        }
        break;
      }
      const P2pKey key{n.peer, r, n.tag};
      const auto it = sends_waiting_.lower_bound(key);
      const bool sent = it != sends_waiting_.end() && it->first == key;
      if (sent) {
        send_now = it->second;
        sends_waiting_.erase(it);
      }
      if (sent && node.deps.empty() && early_.count(send_now.message) == 0) {
        // Its message stands for it (the planned replay's receive without
        // dependencies).
        unmatched_.erase(send_now.message);
        L.entry = L.done = send_now.task;
        add_role(send_now.task, row, kRecvMsg);
        seal = false;  // (the sender's, sealed)
        break;
      }
      // A join of its dependencies and its message, held until both are
      // added (match(): now, after the dependencies, or when its send is read).
      L.entry = L.done = g_.add_join(ep, label(job_, DnnPhase::Control));
      add_role(L.done, row, kRecvEnd);
      g_.hold(L.done);
      seal = false;
      if (sent) {
        matched = true;
      } else {
        recvs_waiting_.emplace(key, Waiting{L.done, row, 0});
      }
      break;
    }
    case Kind::Collective: {
      const std::uint32_t g = n.group;
      const std::uint32_t k = collectives_seen_[r][g]++;
      std::vector<std::uint32_t> all;
      const std::vector<std::uint32_t>* members = &members_of(g, all);
      const auto pos = std::find(members->begin(), members->end(), r);
      if (pos == members->end()) fail(r, node.id, "comm_group: rank " + std::to_string(r) + " is not in its own group");
      const auto m = static_cast<std::size_t>(pos - members->begin());
      auto [it, fresh] = instances_.try_emplace({g, k});
      Instance& inst = it->second;
      const auto n_members = static_cast<std::uint32_t>(members->size());
      std::vector<net::EndpointId> eps;
      for (std::uint32_t x : *members) eps.push_back(p_.endpoints[x]);
      const CollectiveSpec spec = trace_collective_spec(n, n_members, p_.algorithm);
      // (Its members this process reads: on one process, all.)
      std::vector<std::uint8_t> here(n_members);
      std::uint32_t n_here = 0;
      for (std::uint32_t i = 0; i < n_members; ++i) n_here += here[i] = here_[(*members)[i]];
      if (fresh) {
        const auto first = p_.ids.first_collective.find({g, k});
        if (first == p_.ids.first_collective.end())
          fail(r, node.id, "comm_group: more collective nodes in this group than its first member has");
        try {
          check_collective(spec, n_members);
        } catch (const ConfigError& e) {
          fail(r, node.id, e.what());
        }
        for (std::uint32_t i = 0; i < n_members; ++i)
          inst.entry.push_back(here[i] ? g_.add_join(eps[i], label(job_, DnnPhase::Control)) : TaskGraph::kNone);
        const std::size_t before = g_.network().message_count();
        inst.end = append_collective(
            g_, spec, eps, inst.entry,
            label(job_, n.op == CollectiveOp::Alltoall ? DnnPhase::Alltoall : DnnPhase::DataParallel), first->second,
            partitioned_ ? &here : nullptr);
        FABRICSIM_ASSERT(g_.network().message_count() == before, "a collective's ids were set aside");
        // Its messages by sending member (those read here), for their rows
        // in the report; and those that arrived here before it was read
        // (sent by members read elsewhere), completed as of their arrival.
        const std::vector<std::uint64_t> counts = collective_sends(spec, g_.network().topology(), eps);
        const std::uint64_t count = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
        std::vector<std::pair<net::EndpointId, std::uint32_t>> member_of;  // (endpoint, member), sorted
        for (std::uint32_t i = 0; i < n_members; ++i) member_of.emplace_back(eps[i], i);
        std::sort(member_of.begin(), member_of.end());
        const auto member = [&](net::EndpointId e) {
          return std::lower_bound(member_of.begin(), member_of.end(), std::make_pair(e, std::uint32_t{0}))->second;
        };
        inst.messages.resize(n_members);
        for (net::MessageId id = first->second; id < first->second + count; ++id) {
          if (const std::uint32_t from = member(g_.network().message(id).src); here[from]) inst.messages[from].push_back(id);
          if (early_.empty()) continue;
          if (const auto e = early_.find(id); e != early_.end()) {
            g_.complete_delivered(g_.task_of_message(id), SimTime::from_ps(e->second.second));
            early_.erase(e);
          }
        }
      }
      for (net::MessageId id : inst.messages[m]) message_row_[id - first_id_] = row;
      std::vector<net::MessageId>().swap(inst.messages[m]);
      L.entry = inst.entry[m];
      L.done = inst.end[m];
      add_role(L.entry, row, kCollStart);
      add_role(L.done, row, kCollEnd);
      if (++inst.read == n_here) instances_.erase(it);
      break;
    }
  }
  for (std::uint64_t d : node.deps) {
    const auto it = live_[r].find(d);
    if (it != live_[r].end()) {
      if (it->second.kind == Kind::Send) g_.depend_sent(it->second.msg, L.entry);
      else g_.depend(it->second.done, L.entry);
    } else if (!completed(r, d)) {
      fail(r, node.id, "data_deps/ctrl_deps: node " + std::to_string(d) +
                           " is not before it in its file (a streaming replay reads each rank's nodes in order)");
    }
  }
  if (node.deps.empty() && n.kind != Kind::Recv) g_.not_before(L.entry, p_.start);
  if (seal) g_.seal(L.entry);
  live_[r].emplace(node.id, L);
  if (matched) match(send_now, Waiting{L.done, row, 0});
}

void TraceStream::on_task_done(TaskGraph::TaskId t, bool sent, SimTime at) {
  if (t >= roles_.size()) return;
  const Roles ro = roles_[t];
  // (A copy: reading on adds tasks, which may move the graph's.)
  const TaskGraph::Task k = g_.task(t);
  if (k.kind == TaskGraph::Kind::Message && !sent && unmatched_.count(k.message) != 0)
    early_[k.message] = {k.start.ps(), at.ps()};  // (its receive not read yet)
  for (int i = 0; i < 2; ++i) {
    if (ro.role[i] == kNone) continue;
    const auto open = open_.find(ro.row[i]);
    FABRICSIM_ASSERT(open != open_.end(), "a role of a node in flight");
    Row& w = open->second;
    bool node_done = false;
    switch (ro.role[i]) {
      case kCompute:
      case kRecvMsg:
        if (sent) break;
        // (A message posted by another process: its start is set at the end.)
        if (k.start != SimTime::max()) w.start_ps = k.start.ps();
        w.end_ps = at.ps();
        node_done = true;
        break;
      case kSend:
        if (!sent) break;
        w.start_ps = k.start.ps();
        w.end_ps = at.ps();
        node_done = true;
        break;
      case kRecvStart:
        if (k.start != SimTime::max()) w.start_ps = k.start.ps();
        break;
      case kRecvEnd:
        if (sent) break;
        w.end_ps = at.ps();
        node_done = true;
        break;
      case kCollStart:
        if (!sent) w.start_ps = at.ps();
        break;
      case kCollEnd:
        if (sent) break;
        w.end_ps = at.ps();
        node_done = true;
        break;
      case kNone: break;
    }
    // A role is over once its event has passed (a message's two hooks come
    // in either order: the analytic model may deliver before it says sent).
    const bool over = node_done || ro.role[i] == kRecvStart || (ro.role[i] == kCollStart && !sent);
    if (over) drop_role(t, ro.row[i], ro.role[i]);
    if (node_done) {
      const Row row = w;
      open_.erase(open);
      sink_.put(ro.row[i], row);
      ++done_rows_;
      last_end_ps_ = std::max(last_end_ps_, row.end_ps);
      done(row.rank, row.id);
    }
  }
}

void TraceStream::finish() {
  if (finished_) return;
  finished_ = true;
  // A node in flight whose first task began (a compute running at the cut)
  // has begun, as the planned replay's row says.
  for (const auto& rank : live_)
    for (const auto& [id, L] : rank) {
      Row& w = open_.at(L.row);
      // (A receive waiting in a join begins with its message.)
      const TaskId first = L.kind == Kind::Recv && L.msg != TaskGraph::kNone ? L.msg : L.entry;
      if (w.start_ps < 0 && first != TaskGraph::kNone) {
        const SimTime begun = g_.task(first).start;
        if (begun != SimTime::max()) w.start_ps = begun.ps();
      }
    }
  for (const auto& [row, w] : open_) sink_.put(row, w);
  open_.clear();
  for (std::uint32_t r = 0; r < src_.ranks(); ++r) {
    if (exhausted_[r]) continue;
    while (src_.next(r, scratch_)) {
      const std::uint64_t row = p_.first_row[r] + next_row_[r]++;
      if (row >= p_.first_row[r + 1]) fail(r, scratch_.id, "the file has other nodes than its pre-pass counted (changed while read?)");
      sink_.put(row, Row{scratch_.id, scratch_.name, r, scratch_.n.kind, -1, -1});
      unread_records(r, scratch_.n);
    }
    exhausted_[r] = 1;
  }
}

const std::vector<std::uint32_t>& TraceStream::members_of(std::uint32_t g, std::vector<std::uint32_t>& all) const {
  if (g != 0) return src_.groups()[g];
  all.resize(src_.ranks());
  std::iota(all.begin(), all.end(), 0u);
  return all;
}

void TraceStream::unread_records(std::uint32_t r, const TraceNode& n) {
  // A node never run: its messages' records, as the planned replay makes
  // them (on one process; on several, every message was described before
  // the run, and reads as described where its record was never made).
  net::Network& net = g_.network();
  if (n.kind == Kind::Send) {
    const net::MessageId id = p_.ids.first_send[r] + static_cast<net::MessageId>(sends_[r]++);
    if (net.message(id).bytes == 0) {
      net.create_at(id, p_.endpoints[r], p_.endpoints[n.peer], std::max<std::uint64_t>(n.bytes, 1), 0);
      net.done_with_unposted(id);  // (never to run: its memory may go)
    }
    return;
  }
  if (n.kind != Kind::Collective) return;
  const std::uint32_t g = n.group;
  const std::uint32_t k = collectives_seen_[r][g]++;
  const auto first = p_.ids.first_collective.find({g, k});
  if (first == p_.ids.first_collective.end()) return;
  std::vector<std::uint32_t> all;
  const std::vector<std::uint32_t>* members = &members_of(g, all);
  std::vector<net::EndpointId> eps;
  for (std::uint32_t x : *members) eps.push_back(p_.endpoints[x]);
  const CollectiveSpec spec = trace_collective_spec(n, static_cast<std::uint32_t>(members->size()), p_.algorithm);
  const std::vector<std::uint64_t> counts = collective_sends(spec, net.topology(), eps);
  // (Made once, by the first of its members read here: its first record
  // is blank until then.)
  const std::uint64_t count = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  if (count == 0 || net.message(first->second).bytes != 0) return;
  collective_records(net, spec, eps, first->second);
  for (std::uint64_t i = 0; i < count; ++i) net.done_with_unposted(first->second + static_cast<net::MessageId>(i));
}

double TraceStream::compute_ns() const {
  double most = 0;
  for (double c : compute_ns_) most = std::max(most, c);
  return most;
}

void TraceStream::fail(std::uint32_t r, std::uint64_t id, const std::string& what) const {
  throw ConfigError(src_.file(r) + ": node " + std::to_string(id) + ": " + what);
}

}  // namespace fabricsim::workload
