// Construction, rank-local state, messages, statistics, partitioning and records, and the public Network.
#include "net/network/impl.hpp"

#include "fabricsim/net/record_drop.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace fabricsim::net {

NetworkImpl::NetworkImpl(const Topology& topo, const NetworkParams& params, core::Simulator& sim)
    : topo_(topo),
      params_(params),
      policy_(&route_policy(params.routing)),
      ecmp_(topo, params.ecmp_hash, params.ecmp_seed),
      sim_(sim) {
  if (params_.header_bytes >= params_.packet_bytes)
    throw util::ConfigError("network.header_bytes: must be smaller than network.packet_bytes");
  if (params_.buffer_bytes < params_.packet_bytes)
    throw util::ConfigError("network.buffer_bytes: must hold at least one packet (network.packet_bytes)");
  payload_per_packet_ = params_.packet_bytes - params_.header_bytes;

  link_handler_ = core::Simulator::handler<NetworkImpl, &NetworkImpl::on_link_event>();
  wake_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_wake>(), this);
  post_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_post>(), this);
  delivered_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_delivered>(), this);
  sent_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_sent>(), this);
  sim_.set_prefetch(wake_binding_, &NetworkImpl::prefetch_wake);
  link_binding_ = sim_.bind(link_handler_, this);
  sim_.set_prefetch(link_binding_, &NetworkImpl::prefetch_link_event);

  if (params_.up_down) updown_ = std::make_unique<UpDownRoutes>(topo_);
  rules_ = params_.state_routes;
  if (!rules_ && !updown_) routes_.emplace(topo_);
  if (rules_ && rules_->rules().vcs() > params_.vcs)
    throw util::ConfigError("network.vcs: " + rules_->rules().describe() + " needs " +
                            std::to_string(rules_->rules().vcs()) + " virtual channels, " +
                            std::to_string(params_.vcs) + " given");
  const bool valiant = policy_->leg != ValiantLeg::None;
  if (valiant && (!rules_ || !params_.valiant_routes || params_.group_of.size() != topo_.node_count()))
    throw util::ConfigError("routing.algorithm: valiant and ugal_* route Dragonfly topologies only");
  if (rules_)
    for (std::uint8_t s = 0; s < rules_->rules().state_count(); ++s) duato_ = duato_ || !rules_->rules().escape(s);
  relay_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_relay>(), this);
  owned_.assign(topo_.node_count(), 1);
  wake_times_.resize(topo_.node_count());
  post_chains_.resize(topo_.endpoint_count());
  if (params_.send_engines > 0) engines_.resize(topo_.endpoint_count());
  interval_ = params_.interval;
  // The same on every rank (it sets when the series coarsen): the whole
  // fabric's link count.
  max_intervals_ = series_max_intervals(topo_.link_count());
  node_rng_.reserve(topo_.node_count());
  for (NodeId n = 0; n < topo_.node_count(); ++n) node_rng_.emplace_back(params_.seed, 0x5350'0000'0000ull + n);

  dmodk_divisor_ = dmodk_divisors(topo_);
}

void NetworkImpl::build_state() {
  FABRICSIM_ASSERT(!state_built_, "network state built twice");
  state_built_ = true;
  const std::size_t nl = topo_.link_count();
  const std::size_t vcs = params_.vcs;
  // Local ids, in the topology's order (so a node's outputs keep their
  // order, which the wake-ups follow).
  local_.assign(nl, kNoLink);
  std::size_t nloc = 0;
  for (LinkId l = 0; l < nl; ++l) {
    const Link& tl = topo_.links()[l];
    if (owned_[tl.src] || owned_[tl.dst]) local_[l] = static_cast<LinkId>(nloc++);
  }
  links_.reserve(nloc);
  port_.assign(nloc, OutPort{});
  in_.assign(nloc, InPort{});
  credit_waiting_.assign((nloc + 63) / 64, 0);
  wait_vcs_.assign(nloc, 0);
  credit_wake_.assign(nloc, SimTime::max());
  cs_.assign(nloc * vcs,
             CreditState{static_cast<std::int64_t>(params_.buffer_bytes), SimTime::max(), kNoPacket, kNoPacket, 0});
  min_credits_ = static_cast<std::int64_t>(params_.buffer_bytes);
  li_.resize(nloc);
  hop_bytes_.assign(nloc, HopBytes{{0, 0}, false});
  for (LinkId g = 0; g < nl; ++g) {
    const LinkId l = local_[g];
    if (l == kNoLink) continue;
    const Link& tl = topo_.links()[g];
    links_.emplace_back(g, core::Port{tl.src, tl.src_port}, core::Port{tl.dst, tl.dst_port}, tl.latency);
    links_.back().bind_receiver(sim_, link_handler_, this);
    LinkInfo& li = li_[l];
    li.src = tl.src;
    li.dst = tl.dst;
    li.global = g;
    li.reverse = tl.reverse;
    li.arrive_delay = topo_.nodes()[tl.dst].kind == NodeKind::Switch ? params_.switch_latency : SimTime::zero();
    li.gbps = tl.bandwidth_gbps;
    OutPort& op = port_[l];
    op.busy_until = SimTime::zero();
    op.queued_less_credits = -static_cast<std::int64_t>(params_.buffer_bytes);
    op.wake_at = SimTime::max();
    op.stall_since = SimTime::max();
    op.full_ser = core::serialization_time(params_.packet_bytes, tl.bandwidth_gbps);
    op.send_delay = tl.latency + li.arrive_delay;
    op.src = tl.src;
    hop_bytes_[l].leaves_server = tl.cls != LinkClass::IntraServer;
    op.from_endpoint = topo_.nodes()[tl.src].kind == NodeKind::Endpoint;
    op.mixed = op.from_endpoint && topo_.nodes()[tl.src].forwards;
    InPort& ip = in_[l];
    ip.xbar_free = SimTime::zero();
    ip.full_xbar = core::serialization_time(params_.packet_bytes, tl.bandwidth_gbps * params_.crossbar_speedup);
    ip.credit_delay = topo_.links()[tl.reverse].latency;
    ip.full_ser = op.full_ser;
    const Node& far = topo_.nodes()[tl.dst];
    ip.dst = tl.dst;
    ip.dst_endpoint = far.endpoint;  // kNoEndpoint for a switch
    ip.relay = far.kind == NodeKind::Endpoint && far.forwards;
    op.deliver = far.kind == NodeKind::Endpoint && !far.forwards &&
                 std::count_if(far.in.begin(), far.in.end(), [](LinkId x) { return x != kNoLink; }) == 1;
  }
  // Outputs of each node (of the nodes simulated here; the others have
  // none), in port order for routing and in link order for the wake-ups.
  out_base_.assign(topo_.node_count() + 1, 0);
  wake_base_.assign(topo_.node_count() + 1, 0);
  wake_mask_base_.assign(topo_.node_count() + 1, 0);
  wake_bit_.assign(nloc, 0);
  for (NodeId n = 0; n < topo_.node_count(); ++n) {
    if (owned_[n]) {
      for (LinkId g : topo_.nodes()[n].out) out_local_.push_back(g == kNoLink ? kNoLink : local_[g]);
      std::vector<LinkId> outs;
      for (LinkId g : topo_.nodes()[n].out)
        if (g != kNoLink) outs.push_back(local_[g]);
      std::sort(outs.begin(), outs.end());
      for (std::size_t i = 0; i < outs.size(); ++i) wake_bit_[outs[i]] = static_cast<std::uint32_t>(i);
      wake_links_.insert(wake_links_.end(), outs.begin(), outs.end());
    }
    out_base_[n + 1] = out_local_.size();
    wake_base_[n + 1] = wake_links_.size();
    wake_mask_base_[n + 1] = wake_mask_base_[n] + (wake_base_[n + 1] - wake_base_[n] + 63) / 64;
  }
  wake_mask_.assign(wake_mask_base_.back(), 0);
  nic_active_.resize(nloc);
  if (duato_) reserved_.assign(nloc * vcs, 0);
  local_stats_.max_queue_bytes.assign(nloc, 0);
  if (params_.interval > SimTime::zero()) {
    local_stats_.series_tx_bytes.resize(nloc);
    local_stats_.series_queue_bytes.resize(nloc);
    tx_bin_.assign(nloc, OpenBin{});
    queue_bin_.assign(nloc, OpenBin{});
  }
  // Links that leave this process send records; the credits of the
  // reverse link travel over them.
  for (LinkId l = 0; l < nloc; ++l) {
    if (owned_[li_[l].src] && !owned_[li_[l].dst]) {
      links_[l].make_remote(sink_);
      port_[l].remote = true;
      in_[local_[li_[l].reverse]].credit_remote = true;
    }
  }
}

std::uint32_t NetworkImpl::alloc_packet() {
  if (!free_packets_.empty()) {
    std::uint32_t p = free_packets_.back();
    free_packets_.pop_back();
    return p;
  }
  packets_.emplace_back();
  return static_cast<std::uint32_t>(packets_.size() - 1);
}

void NetworkImpl::post(MessageId id, SimTime at) {
  ensure_state();
  // (Described: only the sender's process posts, and makes the record.)
  if (const Described* d = description(id); d != nullptr && !owned_[topo_.endpoint_node(d->src)]) return;
  Message& m = messages_[id];
  FABRICSIM_ASSERT(m.post_time == SimTime::max(), "message posted twice");
  m.post_time = at;
  const NodeId node = topo_.endpoint_node(m.src);
  // Every process knows every message (ids stay global); the process that
  // simulates the source posts it.
  if (!owned_[node]) return;
  // A source's posts in time order form a chain: one event at a time, the
  // next scheduled when it fires, so a workload that posts everything up
  // front (an alltoall: a million messages) does not fill the event queue
  // (its far-future heap was a sixth of a 1k Hx2Mesh alltoall).  The order
  // of events does not change: posts are the only events of their
  // priority, and a source's posts keep the order they were made in.
  PostChain& c = post_chains_[m.src];
  if (!c.active) {
    c.active = true;
    c.tail = at;
    sim_.schedule_bound(at, kPrioPost, node, post_binding_, id, 1);
  } else if (at >= c.tail) {
    c.queue.emplace_back(at, id);
    c.tail = at;
  } else {
    // Out of time order: schedule what waits, then this one, in the order
    // they were posted (the chain's event goes on with an empty queue).
    for (std::size_t k = c.head; k < c.queue.size(); ++k)
      sim_.schedule_bound(c.queue[k].first, kPrioPost, node, post_binding_, c.queue[k].second, 0);
    c.queue.clear();
    c.head = 0;
    sim_.schedule_bound(at, kPrioPost, node, post_binding_, id, 0);
  }
}

std::uint16_t flow_port_of(std::uint64_t seed, MessageId id) {
  return static_cast<std::uint16_t>(49152u + util::hash2(seed, id) % 16384u);
}

Message new_message(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint64_t seed,
                    std::uint64_t payload_per_packet) {
  Message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  // Ephemeral source port: a deterministic function of the message, so the
  // ECMP path of a flow does not depend on anything but (seed, message).
  m.flow_port = flow_port_of(seed, id);
  m.post_time = SimTime::max();
  const std::uint64_t packets = (bytes + payload_per_packet - 1) / payload_per_packet;
  if (packets > UINT32_MAX)
    throw util::ConfigError("network.packet_bytes: a message of " + std::to_string(bytes) + " bytes is " +
                            std::to_string(packets) + " packets of " + std::to_string(payload_per_packet) +
                            " payload bytes, more than the 2^32 - 1 a message can have");
  m.packets = static_cast<std::uint32_t>(packets);
  return m;
}

Message blank_message() {
  Message m;
  m.post_time = SimTime::max();
  return m;
}

void place_message(std::vector<Message>& messages, MessageId id, const Message& m) {
  if (id == messages.size()) {
    messages.push_back(m);
    return;
  }
  FABRICSIM_ASSERT(id < messages.size() && messages[id].bytes == 0, "a message created twice, or out of order");
  messages[id] = m;
}

void NetworkImpl::set_aside(std::size_t count) {
  before_growth(count);
  messages_.resize(messages_.size() + count, blank_message());
}

bool NetworkImpl::partitioned() const {
  return sink_ != nullptr || std::find(owned_.begin(), owned_.end(), 0) != owned_.end();
}

void NetworkImpl::set_aside_dropped(std::size_t count) {
  if (drop_ || (partitioned() && described_.empty())) {
    NetworkModel::set_aside_dropped(count);
    return;
  }
  // A piece at a time, each handed back once written (RecordDrop then
  // finds the pages blank): the vector is reserved first, so never moves.
  before_growth(count);
  messages_.reserve(messages_.size() + count);
  constexpr std::size_t kPiece = std::size_t{1} << 14;  // records (768 KiB)
  for (std::size_t left = count; left > 0;) {
    const std::size_t n = std::min(left, kPiece), from = messages_.size();
    messages_.resize(from + n, blank_message());
    RecordDrop::hand_back_blanks(std::span<Message>(messages_.data() + from, n));
    left -= n;
  }
  (void)drop_delivered_records();
}

bool NetworkImpl::drop_delivered_records() {
  // At one process, or before the partition where messages are described:
  // a process a packet passes routes it by the description, so a record
  // is read only where its sender or receiver runs.  (Not with records
  // made everywhere: every process a packet passes reads its record, and
  // none knows when the last one has passed.)
  const bool parts = partitioned();
  if (parts && described_.empty()) return false;
  drop_ = std::make_unique<RecordDrop>(messages_);
  if (parts) drop_others(owned_, topo_);
  return true;
}

void NetworkImpl::describe(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes) {
  FABRICSIM_ASSERT(src < topo_.endpoint_count() && dst < topo_.endpoint_count() && src != dst && bytes > 0,
                   "describe: a message between two endpoints, of some bytes");
  // (Through made(): a blank's page handed back is not read; on some
  // kernels a read maps a page of its own, counted as the process's.)
  FABRICSIM_ASSERT(id < messages_.size() && !made(id), "describe: an id set aside, not made");
  if (described_.size() < messages_.size()) described_.resize(messages_.size());
  (void)new_message(id, src, dst, bytes, params_.seed, payload_per_packet_);  // (its checks: ConfigError)
  described_[id] = {src, dst, bytes};
  if (params_.listed_paths) pin_listed(id, src, dst);  // (here, on every process, as create() would)
}

void NetworkImpl::pin_listed(MessageId id, EndpointId src, EndpointId dst) {
  // One route per message, uniformly among the k of its pair (every
  // process computes the same), hop i on channel i.
  scratch_path_.clear();
  params_.listed_paths->path(src, dst, params_.listed_paths->choice(src, dst, params_.seed, id), scratch_path_);
  if (scratch_path_.size() > params_.vcs)
    throw util::ConfigError(fmt::format("network.vcs: message {} (endpoint {} to {}) takes a listed route of {} "
                                        "links, hop i on channel i; set network.vcs >= {} (it is {})",
                                        id, src, dst, scratch_path_.size(), scratch_path_.size(), params_.vcs));
  store_.pin(id, scratch_path_, PinnedVc::PerHop);
}

Message NetworkImpl::from_description(MessageId id) const {
  const Described& d = described_[id];
  return new_message(id, d.src, d.dst, d.bytes, params_.seed, payload_per_packet_);  // (tag 0: vc 0)
}

std::uint16_t NetworkImpl::flow_port_of(MessageId id) const { return net::flow_port_of(params_.seed, id); }

void NetworkImpl::create(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint32_t tag) {
  FABRICSIM_ASSERT(src < topo_.endpoint_count() && dst < topo_.endpoint_count(), "endpoint out of range");
  FABRICSIM_ASSERT(src != dst, "message to itself");
  FABRICSIM_ASSERT(bytes > 0, "empty message");
  Message m = new_message(id, src, dst, bytes, params_.seed, payload_per_packet_);
  m.vc = static_cast<std::uint8_t>(tag % params_.vcs) & 0x7fu;  // (network.vcs <= 16)
  if (id == messages_.size())
    before_growth(1);
  else
    before_create(id);
  place_message(messages_, id, m);
  if (params_.listed_paths && description(id) == nullptr) pin_listed(id, src, dst);  // (described: pinned then)
}

void NetworkImpl::pin(MessageId id, std::span<const LinkId> links, PinnedVc vc, bool unused) {
  Message& m = messages_[id];
  if (vc == PinnedVc::PerHop && links.size() > params_.vcs)
    throw util::ConfigError(fmt::format("network.vcs: message {} is pinned to a route of {} links, each on a channel "
                                      "of its own (hop i on channel i: deadlock-free on any route); set "
                                      "network.vcs >= {} (it is {})",
                                      id, links.size(), links.size(), params_.vcs));
  if (unused && store_.pinned(id)) {
    store_.replace(id, links, vc);  // no packet took the current version (the caller knows, on every process)
  } else {
    store_.pin(id, links, vc);
  }
  // Every packet on its way (nothing left to move), or nothing simulated yet.
  if (m.all_sent() || m.post_time == SimTime::max() || local_.empty()) return;
  const NodeId node = topo_.endpoint_node(m.src);
  if (!owned_.empty() && !owned_[node]) return;
  // Waiting at its NIC for a turn on an output (started, not all sent):
  // the rest waits on the new route's first link.  (Not yet started, or
  // held: it will start there.)
  if (leave_nic_rounds(id)) join_pinned(id);
}

void NetworkImpl::note_queue(LinkId o) {
  const std::uint64_t q = port_[o].queued;
  // The largest queue goes straight into the (small, dense) output array.
  if (q > local_stats_.max_queue_bytes[o]) local_stats_.max_queue_bytes[o] = q;
  if (interval_ > SimTime::zero()) {
    OpenBin& b = queue_bin_[o];
    if (sim_.now().ps() >= b.end_ps) roll_bin(b, local_stats_.series_queue_bytes[o], sim_.now(), false);
    if (q > b.value) b.value = q;
  }
}

void NetworkImpl::roll_bin(OpenBin& b, std::vector<std::uint64_t>& series, SimTime t, bool sum) {
  // Close the open bin into the series (bins may merge after coarsening:
  // add bytes, keep the larger queue), then open the bin of time t.
  if (b.value != 0) {
    if (series.size() <= b.k) series.resize(b.k + 1, 0);
    series[b.k] = sum ? series[b.k] + b.value : std::max(series[b.k], b.value);
  }
  b.value = 0;
  b.k = series_index(t);
  b.end_ps = static_cast<std::int64_t>(b.k + 1) * interval_.ps();
}

std::size_t NetworkImpl::series_index(SimTime t) {
  auto k = static_cast<std::size_t>(t.ps() / interval_.ps());
  while (k >= max_intervals_) {
    coarsen_series();
    k = static_cast<std::size_t>(t.ps() / interval_.ps());
  }
  return k;
}

void NetworkImpl::coarsen_series() {
  // Bins 2i and 2i+1 become bin i: sums for bytes, maxima for queues.
  for (auto& s : local_stats_.series_tx_bytes) {
    for (std::size_t i = 0; 2 * i < s.size(); ++i) s[i] = s[2 * i] + (2 * i + 1 < s.size() ? s[2 * i + 1] : 0);
    s.resize((s.size() + 1) / 2);
  }
  for (auto& s : local_stats_.series_queue_bytes) {
    for (std::size_t i = 0; 2 * i < s.size(); ++i)
      s[i] = std::max(s[2 * i], 2 * i + 1 < s.size() ? s[2 * i + 1] : std::uint64_t{0});
    s.resize((s.size() + 1) / 2);
  }
  interval_ = interval_ * 2;
  for (auto* bins : {&tx_bin_, &queue_bin_})
    for (OpenBin& b : *bins) {
      b.k /= 2;
      b.end_ps = static_cast<std::int64_t>(b.k + 1) * interval_.ps();
    }
}

void NetworkImpl::sync_local_stats() {
  ensure_state();
  LinkStats& st = local_stats_;
  const std::size_t n = port_.size();
  for (auto* v : {&st.tx_bytes, &st.tx_packets}) v->resize(n, 0);
  for (auto* v : {&st.busy_ps, &st.stall_ps}) v->resize(n, 0);
  st.flows.resize(n, 0);
  st.originated_bytes.resize(n, 0);
  st.forwarded_bytes.resize(n, 0);
  for (std::size_t o = 0; o < n; ++o) {
    st.originated_bytes[o] = hop_bytes_[o].by[0];
    st.forwarded_bytes[o] = hop_bytes_[o].by[1];
    const OutPort& c = port_[o];
    st.tx_bytes[o] = c.tx_bytes;
    st.tx_packets[o] = c.tx_packets;
    st.busy_ps[o] = c.busy_ps;
    st.stall_ps[o] = c.stall_ps;
    st.flows[o] = c.flows;
  }
  st.stranded_packets = failures_ ? stranded_packets_ : std::vector<std::uint64_t>(n, 0);
  st.stranded_bytes = failures_ ? stranded_bytes_ : std::vector<std::uint64_t>(n, 0);
}

void NetworkImpl::sync_stats() {
  sync_local_stats();
  // By the topology's ids (zero, or an empty series, where this process
  // simulates neither end).
  const std::size_t nl = topo_.link_count();
  for (auto* v : {&stats_.tx_bytes, &stats_.tx_packets, &stats_.max_queue_bytes, &stats_.originated_bytes,
                  &stats_.forwarded_bytes})
    v->assign(nl, 0);
  for (auto* v : {&stats_.busy_ps, &stats_.stall_ps}) v->assign(nl, 0);
  stats_.flows.assign(nl, 0);
  stats_.stranded_packets.assign(nl, 0);
  stats_.stranded_bytes.assign(nl, 0);
  const LinkStats& st = local_stats_;
  for (std::size_t o = 0; o < port_.size(); ++o) {
    const LinkId g = li_[o].global;
    stats_.tx_bytes[g] = st.tx_bytes[o];
    stats_.originated_bytes[g] = st.originated_bytes[o];
    stats_.forwarded_bytes[g] = st.forwarded_bytes[o];
    stats_.tx_packets[g] = st.tx_packets[o];
    stats_.busy_ps[g] = st.busy_ps[o];
    stats_.stall_ps[g] = st.stall_ps[o];
    stats_.flows[g] = st.flows[o];
    stats_.max_queue_bytes[g] = st.max_queue_bytes[o];
    stats_.stranded_packets[g] += st.stranded_packets[o];  // (a cut link's ends may both strand)
    stats_.stranded_bytes[g] += st.stranded_bytes[o];
  }
  if (interval_ > SimTime::zero()) {
    stats_.series_tx_bytes.assign(nl, {});
    stats_.series_queue_bytes.assign(nl, {});
    for (std::size_t o = 0; o < st.series_tx_bytes.size(); ++o) {
      stats_.series_tx_bytes[li_[o].global] = st.series_tx_bytes[o];
      stats_.series_queue_bytes[li_[o].global] = st.series_queue_bytes[o];
      if (series_bins_ > 0) {  // (finished: every row series_bins_ long)
        stats_.series_tx_bytes[li_[o].global].resize(series_bins_, 0);
        stats_.series_queue_bytes[li_[o].global].resize(series_bins_, 0);
      }
    }
  }
}


bool NetworkImpl::none_posted() {
  // (Through record(): the memory of blanks may have been handed back.)
  for (std::size_t id = 0; id < messages_.size(); ++id)
    if (record(static_cast<MessageId>(id)).post_time != SimTime::max()) return false;
  return true;
}

void NetworkImpl::set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink) {
  FABRICSIM_ASSERT(part.size() == topo_.node_count(), "partition size");
  // Messages may exist (a task graph is built first, so the partition can
  // weigh its traffic), but none may have been posted.
  FABRICSIM_ASSERT(none_posted(), "set_partition after messages were posted");
  FABRICSIM_ASSERT(!drop_ || !described_.empty(),
                   "set_partition while records are dropped (a process a packet passes reads its record)");
  FABRICSIM_ASSERT(!state_built_, "set_partition after the network state was built");
  sink_ = sink;
  for (NodeId n = 0; n < topo_.node_count(); ++n) owned_[n] = part[n] == rank ? 1 : 0;
  // (Described: the records of messages neither of whose ends is here are
  // never made here.)
  drop_others(owned_, topo_);
  build_state();
}

void NetworkImpl::receive(const core::RemoteRecord& r) {
  if (r.arg32 & kCreditFlag) {
    add_pending_credit(local_[r.arg32 & ~kCreditFlag], static_cast<std::uint8_t>(r.arg1),
                       static_cast<std::uint32_t>(r.arg0), r.key.time);
    return;
  }
  const std::uint32_t p = alloc_packet();
  Packet& pkt = packets_[p];
  pkt.msg = static_cast<MessageId>(r.arg0 >> 32);
  pkt.dst = static_cast<EndpointId>(r.arg0 & 0xFFFFFFFFu);
  pkt.bytes = static_cast<std::uint32_t>(r.arg1 >> 32);
  pkt.vc = static_cast<std::uint8_t>(r.arg32 & 0xFF);
  pkt.first = (r.arg32 & 0x100u) != 0;
  pkt.down = (r.arg32 & 0x200u) != 0;
  pkt.away = (r.arg32 & 0x400u) != 0;
  pkt.state = static_cast<std::uint8_t>(r.arg32 >> 16);
  pkt.aux = static_cast<std::uint16_t>(r.arg1 & 0xFFFF);
  pkt.route = static_cast<std::uint8_t>(r.arg32 >> 24);
  pkt.next = kNoPacket;
  ++in_flight_;
  const LinkId l = local_[r.link];
  core::Event ev = links_[l].to_event(r);
  ev.arg32 = l;
  ev.arg0 = p;
  ev.arg1 = 0;
  sim_.insert(ev);
}


// ------------------------------------------------------------- link state

void NetworkImpl::set_link_schedule(const LinkSchedule& schedule) {
  if (schedule.empty()) return;
  FABRICSIM_ASSERT(!failures_, "link schedule set twice");
  FABRICSIM_ASSERT(none_posted(), "set_link_schedule after messages were posted");
  ensure_state();
  failures_ = true;
  links_state_.start(topo_, schedule);
  link_state_ = &links_state_.state();
  live_ = &links_state_.live();
  stranded_packets_.assign(port_.size(), 0);
  stranded_bytes_.assign(port_.size(), 0);
  change_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_link_change>(), this);
  // Each change time after 0 is one event on every rank (keyed by its
  // index: the same order everywhere), before anything else at that
  // instant (priority 0, which no event uses).
  const std::vector<SimTime> times = links_state_.later_times();
  for (std::size_t i = 0; i < times.size(); ++i)
    sim_.schedule_keyed_bound(times[i], kPrioLinkChange, 0, kDeliveredTag | i, change_binding_);
  next_change_ = links_state_.next_change();
}

void NetworkImpl::switch_links(std::span<const LinkId> off, std::span<const LinkId> on) {
  FABRICSIM_ASSERT(failures_, "switch_links without a link state (set_link_schedule)");
  went_down(links_state_.switch_links(off, on));
}

void NetworkImpl::went_down(const std::vector<LinkId>& down) {
  for (const LinkId g : down) {
    const LinkId o = local_[g];
    if (o == kNoLink || !owned_[li_[o].src]) continue;
    strand_output(o);
  }
}

void NetworkImpl::on_link_change(const core::Event&) {
  const std::vector<LinkId> down = links_state_.advance(sim_.now());
  next_change_ = links_state_.next_change();
  const std::uint64_t before = totals_.packets_stranded + totals_.bytes_unsent;
  went_down(down);
  // A change that stranded nothing here does not stretch the run (a link
  // coming back after the last packet; Simulator::passive).
  if (totals_.packets_stranded + totals_.bytes_unsent == before) sim_.passive();
}

void NetworkImpl::strand_output(LinkId o) {
  // What waits in switch queues for the output: stranded where it waits,
  // its input buffer freed and credited back.
  const SimTime now = sim_.now();
  for (const Voq& voq : port_[o].requesters) {
    for (std::uint32_t p = voq.head; p != kNoPacket;) {
      Packet& pkt = packets_[p];
      const std::uint32_t next = pkt.next;
      cs_[static_cast<std::size_t>(voq.in) * params_.vcs + pkt.vc].buffer -= pkt.bytes;
      add_queued(o, -static_cast<std::int64_t>(pkt.bytes));
      if (duato_ && pkt.route == 0 && !rules_->rules().escape(pkt.state))
        reserved_[static_cast<std::size_t>(o) * params_.vcs + voq.out_vc] -= pkt.bytes;
      return_credit(voq.in, pkt.vc, pkt.bytes, now);
      count_stranded(o, p);
      p = next;
    }
  }
  port_[o].requesters.clear();
  port_[o].rr = 0;
  // Messages waiting at a NIC for the output: with no other first hop,
  // their bytes not yet sent are never sent.
  NicRound& r = nic_active_[o];
  const std::vector<MessageId> waiting = r.list;
  r.list.clear();
  r.rr = 0;
  r.last = UINT32_MAX;
  for (const MessageId id : waiting) {
    bool elsewhere = false;
    if (port_[o].mixed && id < inj_at_.size() && inj_at_[id] != kNoPacket)
      for (std::uint32_t i = inj_at_[id]; inj_[i].link != kNoLink; ++i)
        elsewhere = elsewhere || (inj_[i].link != o && link_state_->up(li_[inj_[i].link].global));
    if (elsewhere) continue;
    if (paused_) {
      // An optical fabric reconfiguring: it starts again at resume_flows,
      // on the route its controller pins meanwhile.
      leave_nic_rounds(id);
      held_.push_back(id);
    } else {
      fail_unsent(id);
    }
  }
}

void NetworkImpl::count_stranded(LinkId at, std::uint32_t p) {
  Packet& pkt = packets_[p];
  const std::uint32_t payload = pkt.bytes - params_.header_bytes;
  ++stranded_packets_[at];
  stranded_bytes_[at] += payload;
  ++totals_.packets_stranded;
  totals_.bytes_stranded += payload;
  if (description(pkt.msg) != nullptr && (messages_[pkt.msg].bytes == 0 || (drop_ && drop_->released(pkt.msg))))
    mark_failed_id(pkt.msg);  // (a record not made here, or handed back: its id only)
  else
    mark_failed(messages_[pkt.msg], pkt.msg);
  --in_flight_;
  free_packet(p);
}

void NetworkImpl::strand_at_input(LinkId in, std::uint32_t p, bool buffered) {
  Packet& pkt = packets_[p];
  if (buffered) cs_[static_cast<std::size_t>(in) * params_.vcs + pkt.vc].buffer -= pkt.bytes;
  return_credit(in, pkt.vc, pkt.bytes, sim_.now());
  count_stranded(in, p);
}

void NetworkImpl::fail_unsent(MessageId id) {
  Message& m = messages_[id];
  if (m.all_sent()) return;  // (already failed through another first hop)
  mark_failed(m, id);
  totals_.bytes_unsent += m.bytes - m.sent_bytes(payload_per_packet_);
  m.sent_packets = m.packets;  // nothing more to send
  if (params_.send_engines > 0) release_engine(m.src);
}

std::span<const PortIndex> NetworkImpl::live_candidates(NodeId at, const Packet& pkt, std::span<const PortIndex> cands) {
  live_cands_.clear();
  const Node& node = topo_.node(at);
  for (const PortIndex p : cands) {
    const LinkId l = node.out[p];
    if (updown_ ? live_->updown_ok(*updown_, l, pkt.down, pkt.dst) : live_->table_ok(*routes_, l, pkt.dst))
      live_cands_.push_back(p);
  }
  return live_cands_;
}

void NetworkImpl::live_options(const StateRoutes& r, std::uint32_t target) {
  const bool groups = &r == params_.valiant_routes;
  std::size_t kept = 0;
  for (const auto& o : opts_)
    if (live_->rules_ok(r, o.link, o.state, target, groups)) opts_[kept++] = o;
  opts_.resize(kept);
}

// ------------------------------------------------------------ NetworkModel

const LinkStats& NetworkImpl::link_stats() const {
  // (The counters live in the ports; stats_ is a view built on request.)
  const_cast<NetworkImpl*>(this)->sync_stats();
  return stats_;
}

const LinkStats& NetworkImpl::local_link_stats(std::vector<LinkId>& ids) const {
  const_cast<NetworkImpl*>(this)->sync_local_stats();
  ids.resize(li_.size());
  for (std::size_t o = 0; o < ids.size(); ++o) ids[o] = li_[o].global;
  return local_stats_;
}

void NetworkImpl::finish(SimTime end) {
  ensure_state();
  auto& st = local_stats_;
  for (LinkId o = 0; o < port_.size(); ++o) {
    auto& port = port_[o];
    if (port.stall_since != SimTime::max()) {
      port.stall_ps += (end - port.stall_since).ps();
      port.stall_since = end;
    }
  }
  if (params_.interval > SimTime::zero() && series_bins_ == 0) {
    for (LinkId o = 0; o < tx_bin_.size(); ++o) {  // close the open bins
      roll_bin(tx_bin_[o], st.series_tx_bytes[o], end, true);
      roll_bin(queue_bin_[o], st.series_queue_bytes[o], end, false);
    }
    // `end` is the same on every rank, so every rank ends at the same
    // interval and bin count (a rank may have coarsened less during the run).
    auto bins = [&] { return static_cast<std::size_t>((end.ps() + interval_.ps() - 1) / interval_.ps()); };
    while (bins() > max_intervals_) coarsen_series();
    // A series ends at its last nonzero bin: a link idle since (or idle
    // throughout, a job on part of a fabric) holds no zeros here.  The
    // readers pad to series_bins_ (sync_stats, the output's gather), so
    // the run's end does not allocate every local link's full row.  Nor
    // does it keep the doubling's spare room while the output gathers them.
    const std::size_t k = std::max<std::size_t>(bins(), 1);
    for (auto* series : {&st.series_tx_bytes, &st.series_queue_bytes})
      for (auto& s : *series) {
        if (s.size() > k) s.resize(k);
        s.shrink_to_fit();
      }
    series_bins_ = k;
  }
}

const LinkStats& NetworkModel::local_link_stats(std::vector<LinkId>& ids) const {
  const LinkStats& st = link_stats();
  ids.resize(st.tx_bytes.size());
  for (std::size_t l = 0; l < ids.size(); ++l) ids[l] = static_cast<LinkId>(l);
  return st;
}

void NetworkModel::set_partition(const std::vector<std::int32_t>& part, std::int32_t, core::RemoteSink*) {
  for (std::int32_t p : part)
    if (p != 0) throw util::UserError("this network model runs on one process only");
}

void NetworkModel::pin(MessageId, std::span<const LinkId>, PinnedVc, bool) {
  throw util::UserError("this network model does not take pinned routes");
}

void NetworkModel::set_link_schedule(const LinkSchedule& schedule) {
  if (!schedule.empty()) throw util::UserError("failures: this network model does not change link state");
}

void NetworkModel::switch_links(std::span<const LinkId>, std::span<const LinkId>) {
  throw util::UserError("this network model does not switch links during a run (use network.model = \"flow\" or "
                        "\"packet\")");
}

namespace {
[[noreturn]] void no_reconfiguration() {
  throw util::UserError("this network model does not pause flows for a reconfiguration (use network.model = "
                        "\"flow\")");
}
}  // namespace

void NetworkModel::pause_flows() { no_reconfiguration(); }
void NetworkModel::resume_flows() { no_reconfiguration(); }
void NetworkModel::hold_unroutable(bool) { no_reconfiguration(); }
void NetworkModel::spread_pinned_hops(bool) { no_reconfiguration(); }
std::uint64_t NetworkModel::unsent_bytes(MessageId, core::SimTime) { no_reconfiguration(); }

NetworkModel::NetworkModel() = default;
NetworkModel::~NetworkModel() = default;

Message NetworkModel::record(MessageId id) {
  const Message m = drop_ ? drop_->read(id) : messages()[id];
  // (Not made here: as its description makes it, where it has one.)
  if (m.bytes == 0 && description(id) != nullptr) return from_description(id);
  return m;
}

bool NetworkModel::made(MessageId id) { return (drop_ ? drop_->read(id) : messages()[id]).bytes != 0; }

void NetworkModel::set_aside_dropped(std::size_t count) {
  set_aside(count);
  if (!drop_) (void)drop_delivered_records();  // (already dropping: the records set aside are kept)
}

void NetworkModel::describe(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes) {
  create(id, src, dst, bytes, 0);  // (a model that does not describe makes the record)
}

Message NetworkModel::from_description(MessageId) const {
  FABRICSIM_ASSERT(false, "from_description: the packet model only");
  return blank_message();
}

void NetworkModel::drop_others(const std::vector<std::uint8_t>& owned_nodes, const Topology& topo) {
  if (!drop_ || described_.empty()) return;
  for (std::size_t id = 0; id < described_.size(); ++id) {
    const Described& d = described_[id];
    if (d.bytes != 0 && !owned_nodes[topo.endpoint_node(d.src)] && !owned_nodes[topo.endpoint_node(d.dst)])
      drop_->absent(static_cast<MessageId>(id));
  }
}

void NetworkModel::set_post_time(MessageId id, SimTime at) {
  if (!drop_) {
    messages()[id].post_time = at;
    return;
  }
  // Records dropped (a streamed trace on several processes, the post time
  // of a message known where its sender runs): a record not made here is
  // made first, from its description, and kept (its message is in flight
  // or never ran: the run was cut).
  if (!made(id)) {
    const Described* d = description(id);
    FABRICSIM_ASSERT(d != nullptr, "set_post_time: a blank record");
    create(id, d->src, d->dst, d->bytes, 0);
  }
  Message m = drop_->read(id);
  m.post_time = at;
  drop_->write(id, m);
}

void NetworkModel::done_with_unposted(MessageId id) {
  if (!drop_) return;
  FABRICSIM_ASSERT(messages()[id].bytes > 0 && messages()[id].post_time == SimTime::max(),
                   "done_with_unposted: a message created and not posted");
  drop_->release(id);
}

void NetworkModel::release_record(MessageId id) {
  if (drop_) drop_->release(id);
}

void NetworkModel::before_create(MessageId id) {
  if (drop_) drop_->before_write(id);
}

void NetworkModel::before_growth(std::size_t count) {
  if (!drop_) return;
  const std::vector<Message>& v = messages();
  if (v.size() + count <= v.capacity()) return;
  drop_->restore();  // (the vector would move: every page back, dropping ends)
  drop_.reset();
}

std::vector<MessageId> NetworkModel::failed_messages() const {
  std::vector<MessageId> ids = failed_ids_;  // (once each by mark_failed; mark_failed_id may repeat one)
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void NetworkModel::receive(const core::RemoteRecord&) {
  FABRICSIM_ASSERT(false, "a one-process network model received a record");
}

// ------------------------------------------------------------------ Network

Network::Network(const Topology& topo, const NetworkParams& params, core::Simulator& sim)
    : Network(topo, params, sim, std::make_unique<NetworkImpl>(topo, params, sim)) {}
Network::Network(const Topology& topo, const NetworkParams& params, core::Simulator& sim,
                 std::unique_ptr<NetworkModel> model)
    : topo_(topo), params_(params), sim_(sim), model_(std::move(model)) {}
Network::~Network() = default;

std::uint64_t Network::state_bytes(std::uint64_t nodes, std::uint64_t links, std::uint64_t local_links,
                                   std::uint32_t vcs, bool duato, bool series) {
  return NetworkImpl::state_bytes(nodes, links, local_links, vcs, duato, series);
}

std::uint64_t Network::message_bytes() { return sizeof(Message) + 2 * sizeof(std::uint32_t); }

MessageId Network::send(EndpointId src, EndpointId dst, std::uint64_t payload_bytes, SimTime at, std::uint32_t tag) {
  const MessageId id = create(src, dst, payload_bytes, tag);
  model_->post(id, at);
  return id;
}
MessageId Network::create(EndpointId src, EndpointId dst, std::uint64_t payload_bytes, std::uint32_t tag) {
  const auto id = static_cast<MessageId>(model_->messages().size());
  model_->create(id, src, dst, payload_bytes, tag);
  return id;
}
MessageId Network::reserve_ids(std::size_t count) {
  const auto first = static_cast<MessageId>(model_->messages().size());
  FABRICSIM_ASSERT(first + count >= first && first + count <= std::numeric_limits<MessageId>::max(), "too many messages");
  model_->set_aside(count);
  return first;
}
MessageId Network::reserve_ids_dropped(std::size_t count) {
  const auto first = static_cast<MessageId>(model_->messages().size());
  FABRICSIM_ASSERT(first + count >= first && first + count <= std::numeric_limits<MessageId>::max(), "too many messages");
  model_->set_aside_dropped(count);
  return first;
}
void Network::create_at(MessageId id, EndpointId src, EndpointId dst, std::uint64_t payload_bytes, std::uint32_t tag) {
  FABRICSIM_ASSERT(id < model_->messages().size(), "create_at: an id set aside by reserve_ids");
  model_->create(id, src, dst, payload_bytes, tag);
}
void Network::describe_at(MessageId id, EndpointId src, EndpointId dst, std::uint64_t payload_bytes) {
  FABRICSIM_ASSERT(id < model_->messages().size(), "describe_at: an id set aside by reserve_ids");
  model_->describe(id, src, dst, payload_bytes);
}
bool Network::made(MessageId id) const { return model_->made(id); }
void Network::reserve_messages(std::size_t more) {
  std::vector<Message>& m = model_->messages();
  if (m.size() + more > m.capacity()) {
    model_->before_growth(more);
    m.reserve(m.size() + more);
  }
}
void Network::post(MessageId id, SimTime at) { model_->post(id, at); }
void Network::set_post_time(MessageId id, SimTime at) { model_->set_post_time(id, at); }
void Network::set_flow_port(MessageId id, std::uint16_t port) {
  FABRICSIM_ASSERT(!model_->drops_records() && !model_->describes(),
                   "set_flow_port while records are dropped or described (routing hashes the id)");
  model_->messages()[id].flow_port = port;
}
void Network::pin(MessageId id, std::span<const LinkId> links, PinnedVc vc, bool unused) {
  (void)model_->messages().at(id);  // (out_of_range, as before)
  const Message m = model_->record(id);
  if (const std::string why = RouteStore::check(topo_, m.src, m.dst, links); !why.empty())
    throw util::UserError(fmt::format("message {} (endpoint {} to {}): not a route: {}", id, m.src, m.dst, why));
  model_->pin(id, links, vc, unused);
}
void Network::set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink) {
  model_->set_partition(part, rank, sink);
}
bool Network::owns(NodeId n) const { return model_->owns(n); }
void Network::set_link_schedule(const LinkSchedule& schedule) { model_->set_link_schedule(schedule); }
void Network::switch_links(std::span<const LinkId> off, std::span<const LinkId> on) { model_->switch_links(off, on); }
void Network::pause_flows() { model_->pause_flows(); }
void Network::resume_flows() { model_->resume_flows(); }
void Network::hold_unroutable(bool on) { model_->hold_unroutable(on); }
void Network::spread_pinned_hops(bool on) { model_->spread_pinned_hops(on); }
std::uint64_t Network::unsent_bytes(MessageId id, core::SimTime at) { return model_->unsent_bytes(id, at); }
std::vector<MessageId> Network::failed_messages() const { return model_->failed_messages(); }
void Network::receive(const core::RemoteRecord& record) { model_->receive(record); }
void Network::set_listener(MessageListener* listener) { model_->set_listener(listener); }
const Topology& Network::topology() const { return topo_; }
core::SimTime Network::now() const { return sim_.now(); }
core::Simulator& Network::simulator() const { return sim_; }
const NetworkParams& Network::params() const { return params_; }
const RoutingTable* Network::routing_table() const { return model_->routing_table(); }
const std::vector<Message>& Network::messages() const {
  FABRICSIM_ASSERT(!model_->drops_records(), "Network::messages() while records are dropped: read message(id)");
  return model_->messages();
}
Message Network::message(MessageId id) const { return model_->record(id); }
std::size_t Network::message_count() const { return model_->messages().size(); }
std::size_t Network::message_capacity() const { return model_->messages().capacity(); }
bool Network::drop_delivered_records() { return model_->drops_records() || model_->drop_delivered_records(); }
bool Network::drops_delivered_records() const { return model_->drops_records(); }
std::size_t Network::record_pages_spilled() const { return model_->record_pages_spilled(); }
std::size_t NetworkModel::record_pages_spilled() const { return drop_ ? drop_->pages_spilled() : 0; }
void Network::done_with_unposted(MessageId id) { model_->done_with_unposted(id); }
const LinkStats& Network::link_stats() const { return model_->link_stats(); }
const NetworkTotals& Network::totals() const { return model_->totals(); }
std::uint64_t Network::packets_in_flight() const { return model_->packets_in_flight(); }
std::uint64_t Network::max_buffer_occupancy() const { return model_->max_buffer_occupancy(); }
std::int64_t Network::min_credits_seen() const { return model_->min_credits_seen(); }
std::uint32_t Network::payload_per_packet() const { return params_.packet_bytes - params_.header_bytes; }
void Network::set_end_time(SimTime end) { model_->set_end_time(end); }
void Network::finish(SimTime end) { model_->finish(end); }
const LinkStats& Network::local_link_stats(std::vector<LinkId>& ids) const { return model_->local_link_stats(ids); }
core::SimTime Network::series_interval() const { return model_->series_interval(); }
std::size_t Network::series_bins() const { return model_->series_bins(); }

}  // namespace fabricsim::net
