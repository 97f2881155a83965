// Injection at the endpoints (a message's first move, the send engines) and delivery.
#include "net/network/impl.hpp"

namespace fabricsim::net {

void NetworkImpl::deliver(LinkId in, std::uint32_t p, SimTime tail) {
  // The NIC consumes the packet as its tail arrives and returns the buffer
  // space at once.
  Packet& pkt = packets_[p];
  make_described(pkt.msg);
  Message& m = messages_[pkt.msg];
  const std::uint32_t payload = pkt.bytes - params_.header_bytes;
  ++m.received_packets;
  ++totals_.packets_delivered;
  totals_.bytes_delivered += payload;
  --in_flight_;
  return_credit(in, pkt.vc, pkt.bytes, tail);
  if (m.all_received()) {
    m.end_time = tail;
    ++totals_.messages_delivered;
    sim_.schedule_keyed_bound(tail, kPrioDelivered, in_[in].dst, kDeliveredTag | pkt.msg, delivered_binding_,
                              pkt.msg);
  }
  free_packet(p);
}


void NetworkImpl::join_nic_round(LinkId o, MessageId id) {
  // The round is a queue from the pointer on: a newcomer joins it last,
  // behind every message that was waiting, but before the message whose
  // packet is on the wire now (that one rejoins as its packet ends).
  // Appended at the end of the list instead, a message went before every
  // one at indices below the pointer: where one-packet messages keep
  // coming, each posted while the previous is on the wire, the pointer
  // stayed at the end and a message below it waited for the stream to end
  // (Nic.OldMessageKeepsItsTurnsAgainstAStreamOfNewOnes).
  NicRound& r = nic_active_[o];
  const std::size_t n = r.list.size();
  const std::size_t p = round_next(r.rr, n);  // the next to serve
  if (n > 0 && r.list[(p + n - 1) % n] == r.last && port_[o].busy_until > sim_.now()) {
    // Just before the pointer stands the message on the wire: go before it.
    // (With the pointer at 0 that is the end of the list, and the pointer stays.)
    const std::size_t at = (p + n - 1) % n;
    r.list.insert(r.list.begin() + static_cast<std::ptrdiff_t>(at), id);
    r.rr = static_cast<std::uint32_t>(p == 0 ? 0 : p + 1);
  } else {
    insert_last_in_round(r.list, r.rr, id);
  }
}

void NetworkImpl::leave_nic_round(LinkId o, MessageId id) {
  NicRound& r = nic_active_[o];
  const auto it = std::find(r.list.begin(), r.list.end(), id);
  if (it == r.list.end()) return;
  if (*it == r.last) r.last = UINT32_MAX;
  if (static_cast<std::size_t>(it - r.list.begin()) < r.rr) --r.rr;  // the pointer stays on its message
  r.list.erase(it);
}

bool NetworkImpl::arbitrate_nic(LinkId o) {
  auto& act = nic_active_[o].list;
  std::uint32_t& rr = nic_active_[o].rr;
  if (act.empty() || paused_) return false;  // (resume_flows arbitrates again)
  const std::size_t n = act.size();
  const std::size_t start_idx = round_next(rr, n);
  bool credit_blocked = false;
  std::uint32_t blocked_vcs = 0;
  for (std::size_t t = 0, idx = start_idx; t < n; ++t, idx = idx + 1 == n ? 0 : idx + 1) {
    const MessageId id = act[idx];
    Message& m = messages_[id];
    const std::uint64_t left = m.bytes - m.sent_bytes(payload_per_packet_);
    std::uint8_t vc = m.vc;
    std::uint8_t state = m.first_state;
    std::uint8_t route = 0;
    if (!store_.empty() && store_.pinned(id)) {
      // Its route's version now (a re-pin moves the packets not yet sent);
      // hop 0 is this link.
      const std::uint32_t v = store_.version(id);
      route = static_cast<std::uint8_t>(v + 1);
      state = 1;
      if (store_.vc(id, v) == PinnedVc::PerHop) vc = 0;
    } else if (port_[o].mixed && id < inj_at_.size() && inj_at_[id] != kNoPacket) {
      // Adaptive injection: the first move over this output (each first
      // hop has its own channel and state).
      for (std::uint32_t i = inj_at_[id]; inj_[i].link != kNoLink; ++i)
        if (inj_[i].link == o) {
          vc = inj_[i].vc;
          state = inj_[i].state;
        }
    }
    const auto payload = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, payload_per_packet_));
    const std::uint32_t bytes = payload + params_.header_bytes;
    // On an adaptive channel (Duato) the room promised to packets in transit
    // queued for it is theirs: an injection that took it would leave them
    // waiting for credits on a cyclic channel while holding their buffers
    // (the 16x16 torus deadlocked so under alltoall with 4-packet buffers).
    // The NIC holds no buffer of the fabric, so it may wait.
    const std::int64_t room = route == 0 ? adaptive_room(o, vc, state) : available_credits(o, vc);
    if ((blocked_vcs >> vc & 1u) || room < static_cast<std::int64_t>(bytes)) {
      credit_blocked = true;
      blocked_vcs |= 1u << vc;
      continue;
    }
    const std::uint32_t p = alloc_packet();
    Packet& pkt = packets_[p];
    pkt.msg = id;
    pkt.dst = m.dst;
    pkt.bytes = bytes;
    pkt.next = kNoPacket;
    pkt.vc = vc;
    pkt.first = m.sent_packets == 0;
    pkt.down = updown_ && updown_->is_down(li_[o].global);
    pkt.away = false;
    pkt.state = state;
    pkt.aux = 0;
    pkt.route = route;
    if (route != 0) {
      // (pinned: no intermediate group)
    } else if (policy_->leg == ValiantLeg::Valiant) {
      pkt.aux = draw_group(port_[o].src, params_.group_of[topo_.endpoint_node(m.src)],
                           params_.group_of[topo_.endpoint_node(m.dst)]);
    } else if (policy_->leg != ValiantLeg::None) {
      pkt.aux = kUndecided;  // UGAL: decided at the first router
    }
    ++m.sent_packets;
    ++totals_.packets_injected;
    totals_.bytes_injected += payload;
    ++in_flight_;
    if (m.all_sent()) {
      act.erase(act.begin() + static_cast<std::ptrdiff_t>(idx));
      rr = static_cast<std::uint32_t>(idx);
      nic_active_[o].last = UINT32_MAX;
      if (port_[o].mixed && id < inj_at_.size() && inj_at_[id] != kNoPacket)  // adaptive injection: leave the other first hops
        for (std::uint32_t i = inj_at_[id]; inj_[i].link != kNoLink; ++i)
          if (inj_[i].link != o) leave_nic_round(inj_[i].link, id);
    } else {
      rr = static_cast<std::uint32_t>(idx + 1);
      nic_active_[o].last = id;
    }
    start_transmission(o, p, sim_.now());
    if (m.all_sent() && listener_ && listener_->wants_sent())
      sim_.schedule_bound(port_[o].busy_until, kPrioDelivered, port_[o].src, sent_binding_, id);
    if (m.all_sent() && params_.send_engines > 0) release_engine(m.src);
    if (!act.empty()) schedule_wake(o, port_[o].busy_until);
    return true;
  }
  if (credit_blocked) {
    const SimTime t = wait_for_credits(o, blocked_vcs);
    if (t != SimTime::max()) schedule_wake(o, t);
  }
  return false;
}


void NetworkImpl::on_post(const core::Event& ev) {
  const MessageId id = ev.arg32;
  Message& m = messages_[id];
  const NodeId node = topo_.endpoint_node(m.src);
  if (ev.arg0 == 2) {  // an engine freed for this waiting message (release_engine)
    start_message(id);
    return;
  }
  if (ev.arg0 == 1) {  // the source's chain of posts (see post()): schedule its next
    PostChain& c = post_chains_[m.src];
    if (c.head < c.queue.size()) {
      const auto [t, next] = c.queue[c.head++];
      sim_.schedule_bound(t, kPrioPost, node, post_binding_, next, 1);
      if (c.head == c.queue.size()) {
        c.queue.clear();
        c.head = 0;
      }
    } else {
      c.active = false;
    }
  }
  if (params_.send_engines > 0) {
    Engines& e = engines_[m.src];
    if (e.busy == params_.send_engines) {
      e.waiting.push_back(id);
      return;
    }
    ++e.busy;
  }
  start_message(id);
}

void NetworkImpl::release_engine(EndpointId src) {
  Engines& e = engines_[src];
  if (e.head < e.waiting.size()) {
    // The engine goes on with the longest-waiting message, as a post of
    // its own at this instant (not inside the arbitration that freed it).
    const MessageId next = e.waiting[e.head++];
    if (e.head == e.waiting.size()) {
      e.waiting.clear();
      e.head = 0;
    }
    sim_.schedule_bound(sim_.now(), kPrioPost, topo_.endpoint_node(src), post_binding_, next, 2);
  } else {
    --e.busy;
  }
}

void NetworkImpl::start_message(MessageId id) {
  Message& m = messages_[id];
  if (hold_ && !can_start(id)) [[unlikely]] {  // no live route yet: it waits at its NIC (resume_flows)
    held_.push_back(id);
    return;
  }
  const NodeId node = topo_.endpoint_node(m.src);
  Packet probe{};
  probe.dst = m.dst;
  probe.vc = m.vc;
  LinkId o;
  if (!store_.empty() && store_.pinned(id)) {
    const std::uint32_t v = store_.version(id);
    if (failures_ && !hop_live(store_.link(id, v, 0))) [[unlikely]] {
      fail_unsent(id);
      return;
    }
    if (store_.vc(id, v) == PinnedVc::PerHop) m.vc = 0;
    m.first_state = 1;
    join_pinned(id);
    return;
  } else if (rules_) {
    // The first move of the message's route (all its packets take it).
    opts_.clear();
    rules_->options(node, rules_->rules().initial_state(), m.dst, opts_);
    if (failures_ && link_state_->any_down()) [[unlikely]] {
      live_options(*rules_, m.dst);
      if (opts_.empty()) {
        fail_unsent(id);
        return;
      }
    }
    localize(opts_);
    if (policy_->mechanism == PickMechanism::LeastOccupied && policy_->leg == ValiantLeg::None &&
        topo_.nodes()[node].forwards && opts_.size() > 1) {
      // Adaptive injection: the message waits at every first hop the rules
      // offer, and whichever is free sends its next packet.
      // (A link offered twice, e.g. as an adaptive and as an escape move,
      // keeps its last move: at the source either is safe.)
      if (inj_at_.size() <= id) inj_at_.resize(id + 1, kNoPacket);
      inj_at_[id] = static_cast<std::uint32_t>(inj_.size());
      std::vector<LinkId> firsts;
      for (const auto& opt : opts_) {
        const auto it = std::find(firsts.begin(), firsts.end(), opt.link);
        if (it == firsts.end()) {
          firsts.push_back(opt.link);
          inj_.push_back(FirstMove{opt.link, opt.vc, opt.state});
        } else {
          inj_[inj_at_[id] + static_cast<std::size_t>(it - firsts.begin())] = FirstMove{opt.link, opt.vc, opt.state};
        }
      }
      inj_.push_back(FirstMove{kNoLink, 0, 0});
      for (LinkId l : firsts) join_nic_round(l, id);
      for (LinkId l : firsts) arbitrate(l);
      return;
    }
    const StateRoutes::Option& opt = opts_[pick_option(node, m, 0)];
    o = opt.link;
    m.vc = opt.vc & 0x7fu;  // (network.vcs <= 16)
    m.first_state = opt.state;
  } else {
    o = choose_output(node, probe, m);
    if (o == kNoLink) [[unlikely]] {
      fail_unsent(id);
      return;
    }
  }
  join_nic_round(o, id);
  arbitrate(o);
}

void NetworkImpl::join_pinned(MessageId id) {
  const LinkId g = store_.link(id, store_.version(id), 0);
  if (id < inj_at_.size()) inj_at_[id] = kNoPacket;
  const LinkId o = local_[g];
  if (spread_ && port_[o].mixed && parallel_[g] != g) {
    // A forwarding endpoint with several live circuits to its route's first
    // neighbour: the message waits at each, and whichever is free sends its
    // next packet (adaptive injection's lists; the packet's route is the
    // pinned one from hop 1 on).
    if (inj_at_.size() <= id) inj_at_.resize(static_cast<std::size_t>(id) + 1, kNoPacket);
    const auto begin = static_cast<std::uint32_t>(inj_.size());
    LinkId k = g;
    do {
      if (!failures_ || link_state_->up(k)) inj_.push_back(FirstMove{local_[k], 0, 1});
      k = parallel_[k];
    } while (k != g);
    const auto end = static_cast<std::uint32_t>(inj_.size());
    if (end - begin > 1) {
      inj_.push_back(FirstMove{kNoLink, 0, 0});
      inj_at_[id] = begin;
      for (std::uint32_t i = begin; i < end; ++i) join_nic_round(inj_[i].link, id);
      for (std::uint32_t i = begin; i < end; ++i) arbitrate(inj_[i].link);
      return;
    }
    inj_.resize(begin);
  }
  join_nic_round(o, id);
  arbitrate(o);
}

bool NetworkImpl::leave_nic_rounds(MessageId id) {
  bool was = false;
  for (const LinkId g : topo_.node(topo_.endpoint_node(messages_[id].src)).out) {
    const LinkId o = local_[g];
    if (o == kNoLink || nic_active_.size() <= o) continue;
    const auto& list = nic_active_[o].list;
    if (std::find(list.begin(), list.end(), id) == list.end()) continue;
    was = true;
    leave_nic_round(o, id);
  }
  if (id < inj_at_.size()) inj_at_[id] = kNoPacket;
  return was;
}

bool NetworkImpl::hop_live(LinkId g) const {
  if (!failures_ || link_state_->up(g)) return true;
  if (!spread_) return false;
  for (LinkId k = parallel_[g]; k != g; k = parallel_[k])
    if (link_state_->up(k)) return true;
  return false;
}

bool NetworkImpl::can_start(MessageId id) const {
  if (store_.empty() || !store_.pinned(id)) return !hold_;
  for (const LinkId g : store_.route(id))
    if (!hop_live(g)) return false;
  return true;
}

LinkId NetworkImpl::spread_hop(LinkId g, std::uint8_t vc) {
  LinkId best = kNoLink;
  std::int64_t least = INT64_MAX;
  LinkId k = g;
  do {
    if (!failures_ || link_state_->up(k))
      if (const std::int64_t occ = occupancy(local_[k], vc); occ < least) {
        least = occ;
        best = k;
      }
    k = parallel_[k];
  } while (k != g);
  return best;
}

void NetworkImpl::spread_pinned_hops(bool on) {
  spread_ = on;
  if (on && parallel_.empty()) parallel_ = parallel_links(topo_);
}

std::uint64_t NetworkImpl::unsent_bytes(MessageId id, SimTime at) {
  const Message& m = messages_[id];
  if (m.post_time == SimTime::max() || m.post_time > at || m.failed) return 0;
  const std::uint64_t left = m.bytes - m.sent_bytes(payload_per_packet_);
  return left + (left + payload_per_packet_ - 1) / payload_per_packet_ * params_.header_bytes;
}

void NetworkImpl::resume_flows() {
  paused_ = false;
  if (!state_built_) return;
  const auto mine = [&](LinkId o) { return owned_.empty() || owned_[li_[o].src] != 0; };
  // Under hold_, a message at its NIC whose pinned route now has a dark hop
  // (no forwarding, no direct circuit left) waits.
  if (hold_)
    for (LinkId o = 0; o < nic_active_.size(); ++o) {
      if (nic_active_[o].list.empty() || !mine(o)) continue;
      const std::vector<MessageId> list = nic_active_[o].list;
      for (const MessageId id : list)
        if (!can_start(id) && leave_nic_rounds(id)) held_.push_back(id);
    }
  // The waiting messages, in id order: those with a route now start (each
  // holds its send engine already); the others wait on (hold_) or, with no
  // live route left, lose what they have not sent, as a failure does.
  std::vector<MessageId> held;
  held.swap(held_);
  std::sort(held.begin(), held.end());
  held.erase(std::unique(held.begin(), held.end()), held.end());
  for (const MessageId id : held) {
    const Message& m = messages_[id];
    if (m.all_sent()) continue;
    if (can_start(id)) {
      start_message(id);
    } else if (hold_) {
      held_.push_back(id);
    } else {
      fail_unsent(id);
    }
  }
  // Every NIC with messages waiting goes on (what the pause held back).
  for (LinkId o = 0; o < nic_active_.size(); ++o)
    if (!nic_active_[o].list.empty() && mine(o)) arbitrate(o);
}

void NetworkImpl::on_sent(const core::Event& ev) {
  if (listener_) listener_->on_message_sent(ev.arg32);
  // Described (several processes): the sender's process reads the record
  // no more once every packet left, where the receiver is another's.
  if (const Described* d = description(ev.arg32); drop_ && d != nullptr && !owned_[topo_.endpoint_node(d->dst)])
    release_record(ev.arg32);
}

void NetworkImpl::on_delivered(const core::Event& ev) {
  if (listener_) listener_->on_message_delivered(ev.arg32);
  // (The model reads it no more: its packets are all in, and it left its
  // sender's NIC before, on this process or another.)
  release_record(ev.arg32);
}

}  // namespace fabricsim::net
