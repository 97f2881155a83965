// Packet arrivals, virtual output queues, output arbitration, transmission and wake-ups.
#include "net/network/impl.hpp"

namespace fabricsim::net {

void NetworkImpl::on_link_event(const core::Event& ev) {
  // Only packets arrive as events; credits go into the pending lists
  // directly (add_pending_credit), also when they come from another rank.
  on_packet(ev.arg32, static_cast<std::uint32_t>(ev.arg0));
}

void NetworkImpl::on_packet(LinkId in, std::uint32_t p) {
  const InPort& link = in_[in];
  const NodeId at = link.dst;
  Packet& pkt = packets_[p];
  const SimTime now = sim_.now();
  // The input record has the serialization: the sender's port record is not touched.
  if (failures_ && !link_state_->up(li_[in].global)) [[unlikely]] {
    strand_at_input(in, p, false);  // it arrived over a link that went down
    return;
  }
  const SimTime tail =
      now + (pkt.bytes == params_.packet_bytes ? link.full_ser : core::serialization_time(pkt.bytes, li_[in].gbps));
  if (link.dst_endpoint == pkt.dst) {
    deliver(in, p, tail);
    return;
  }
  FABRICSIM_DEBUG_ASSERT(topo_.nodes()[at].forwards, "endpoint got a packet for someone else");
  pkt.tail = tail;
  if (link.relay) {
    // An endpoint that forwards (torus, HammingMesh accelerators): the
    // packet competes for an output after the relay latency, as it would
    // after a switch's traversal latency.
    pkt.tail = tail + params_.switch_latency;
    sim_.schedule_bound(now + params_.switch_latency, kPrioPacket, at, relay_binding_, in, p, 0);
    return;
  }
  route_in(in, p);
}


void NetworkImpl::on_relay(const core::Event& ev) { route_in(ev.arg32, static_cast<std::uint32_t>(ev.arg0)); }

// Inlined into on_packet: the per-hop path of every switch.
[[gnu::always_inline]] inline void NetworkImpl::route_in(LinkId in, std::uint32_t p) {
  const NodeId at = in_[in].dst;
  Packet& pkt = packets_[p];
  const std::size_t b = static_cast<std::size_t>(in) * params_.vcs + pkt.vc;
  cs_[b].buffer += pkt.bytes;
  if (cs_[b].buffer > max_occupancy_) max_occupancy_ = cs_[b].buffer;
  if (cs_[b].buffer > params_.buffer_bytes)
    totals_.max_buffer_overshoot = std::max(totals_.max_buffer_overshoot, cs_[b].buffer - params_.buffer_bytes);
  pkt.next = kNoPacket;
  LinkId out;
  std::uint8_t out_vc = pkt.vc;
  if (pkt.route != 0) {
    // Pinned: hop `state` of its route's version (route_store.hpp).
    const std::uint32_t v = pkt.route - 1u;
    LinkId next = store_.link(pkt.msg, v, pkt.state);
    if (store_.vc(pkt.msg, v) == PinnedVc::PerHop) out_vc = pkt.state;
    if (spread_) [[unlikely]]
      next = spread_hop(next, out_vc);  // the least occupied live circuit to the same neighbour
    if (failures_ && (next == kNoLink || !link_state_->up(next))) [[unlikely]] {
      strand_at_input(in, p, true);
      return;
    }
    out = local_[next];
    ++pkt.state;
  } else if (rules_) {
    const std::size_t move = choose_move(at, pkt, route_record(pkt.msg));
    if (move == kNoMove) [[unlikely]] {
      strand_at_input(in, p, true);
      return;
    }
    const StateRoutes::Option& o = opts_[move];
    out = o.link;
    out_vc = o.vc;
    pkt.state = o.state;  // read at the next hop; the buffer held here is still pkt.vc's
    if (duato_ && !rules_->rules().escape(o.state))
      reserved_[static_cast<std::size_t>(out) * params_.vcs + out_vc] += pkt.bytes;
  } else {
    out = choose_output(at, pkt, route_record(pkt.msg));
    if (out == kNoLink) [[unlikely]] {
      strand_at_input(in, p, true);
      return;
    }
    if (updown_ && updown_->is_down(li_[out].global)) pkt.down = true;
  }
  add_queued(out, pkt.bytes);
  note_queue(out);
  auto& req = port_[out].requesters;
  for (Voq& voq : req) {
    if (voq.in == in && voq.vc == pkt.vc && voq.out_vc == out_vc) {
      packets_[voq.tail].next = p;
      voq.tail = p;
      return;
    }
  }
  // A queue that becomes non-empty joins the round-robin order last, just
  // before the pointer.  (Appended at the end of the array it would go
  // before every queue at indices below the pointer: inputs that empty at
  // each grant and refill, one packet per slot, as the several inputs of a
  // flow spread by adaptive routing, then starved a backlogged input for as
  // long as they kept coming.)
  insert_last_in_round(req, port_[out].rr, Voq{p, p, in, pkt.vc, out_vc});
  arbitrate(out);
}


void NetworkImpl::on_wake(const core::Event& ev) {
  // All outputs of the node whose wake-up is due now, in link-id order.
  const NodeId n = ev.arg32;
  const SimTime now = sim_.now();
  auto& times = wake_times_[n];
  times.erase(std::find(times.begin(), times.end(), now));
  const std::size_t base = wake_base_[n];
  const std::size_t words = (wake_base_[n + 1] - base + 63) / 64;
  for (std::size_t w = 0; w < words; ++w) {
    std::uint64_t& mask = wake_mask_[wake_mask_base_[n] + w];
    for (std::uint64_t bits = mask; bits != 0; bits &= bits - 1) {
      const auto i = static_cast<std::size_t>(__builtin_ctzll(bits));
      const LinkId o = wake_links_[base + w * 64 + i];
      if (port_[o].wake_at != now) continue;  // due later (or superseded by an earlier wake-up)
      port_[o].wake_at = SimTime::max();
      mask &= ~(std::uint64_t{1} << i);
      arbitrate(o);
    }
  }
}

void NetworkImpl::schedule_wake(LinkId o, SimTime at) {
  if (port_[o].wake_at <= at) return;
  port_[o].wake_at = at;
  const NodeId n = port_[o].src;
  const std::uint32_t bit = wake_bit_[o];
  wake_mask_[wake_mask_base_[n] + bit / 64] |= std::uint64_t{1} << (bit % 64);
  // One event per (node, time), keyed by them: it does not depend on who
  // asked first, which keeps the order independent of partitioning.  The
  // outputs then go in link-id order, as per-output events keyed (node,
  // link) would, with one event instead of many in a synchronized fabric.
  auto& times = wake_times_[n];
  if (std::find(times.begin(), times.end(), at) != times.end()) return;
  times.push_back(at);
  sim_.schedule_keyed_bound(at, kPrioWake, n, 0, wake_binding_, n, static_cast<std::uint64_t>(at.ps()));
}

void NetworkImpl::arbitrate(LinkId o) {
  if (port_[o].busy_until > sim_.now()) {
    if (!port_[o].requesters.empty() || !nic_active_[o].list.empty()) schedule_wake(o, port_[o].busy_until);
    return;
  }
  if (port_[o].mixed) {
    arbitrate_mixed(o);
  } else if (port_[o].from_endpoint) {
    arbitrate_nic(o);
  } else {
    arbitrate_switch(o);
  }
}

void NetworkImpl::arbitrate_mixed(LinkId o) {
  // In-transit packets first, the endpoint's own packets when none can go:
  // injection then cannot crowd out traffic already in the fabric, which
  // keeps a loaded torus from saturating early (alternating turns gave the
  // 32x32 torus 20.1% instead of 22.7% of injection under 200 alltoall
  // rounds; docs/model.md).
  last_wait_vcs_ = 0;
  if (!arbitrate_switch(o)) {
    pass_wait_vcs_ = last_wait_vcs_;  // (0 unless they blocked on credits now)
    const bool sent = arbitrate_nic(o);
    pass_wait_vcs_ = 0;
    if (!sent) return;
  }
  if (!port_[o].requesters.empty() || !nic_active_[o].list.empty()) schedule_wake(o, port_[o].busy_until);
}

void NetworkImpl::start_transmission(LinkId o, std::uint32_t p, SimTime start) {
  Packet& pkt = packets_[p];
  const SimTime s = ser(pkt.bytes, o);
  credit_waiting_[o / 64] &= ~(std::uint64_t{1} << (o % 64));  // not blocked now
  port_[o].busy_until = start + s;
  std::int64_t& c = cs_[static_cast<std::size_t>(o) * params_.vcs + pkt.vc].credits;
  c -= pkt.bytes;
  if (c < min_credits_) min_credits_ = c;
  port_[o].queued_less_credits += pkt.bytes;  // meaningful with one vc only
  port_[o].tx_bytes += pkt.bytes;
  HopBytes& hb = hop_bytes_[o];
  hb.by[pkt.away ? 1 : 0] += pkt.bytes;
  pkt.away = pkt.away || hb.leaves_server;
  port_[o].tx_packets += 1;
  port_[o].busy_ps += s.ps();
  if (pkt.first) ++port_[o].flows;
  ++totals_.packet_hops;
  if (port_[o].stall_since != SimTime::max()) {
    port_[o].stall_ps += (sim_.now() - port_[o].stall_since).ps();
    port_[o].stall_since = SimTime::max();
  }
  if (interval_ > SimTime::zero()) {
    OpenBin& b = tx_bin_[o];
    if (start.ps() >= b.end_ps) roll_bin(b, local_stats_.series_tx_bytes[o], start, true);
    b.value += pkt.bytes;
  }
  const NodeId src = port_[o].src;
  // The arrival event fires once the head has crossed the link and the next
  // switch's traversal pipeline: the packet can then compete for an output.
  if (!port_[o].remote) {
    const SimTime arrive = start + port_[o].send_delay;
    if (port_[o].deliver && arrive < deliver_before_ && arrive < next_change_) {
      // The last hop, into an endpoint that only receives, over its only
      // link: nothing can happen to the packet on the way, so it is
      // accounted now instead of by an arrival event (a fifth of all
      // events on a two-level tree).  Its tail arrives at arrive + s, the
      // credit and the completion carry that time, and the completion is
      // an event keyed by its message (kDeliveredTag), so the order of
      // events is what the arrival event gave.
      FABRICSIM_DEBUG_ASSERT(in_[o].dst_endpoint == pkt.dst, "last hop into the wrong endpoint");
      deliver(o, p, arrive + s);
      return;
    }
    // What links_[o].send() does, without touching the Link object.
    sim_.schedule_bound(arrive, kPrioPacket, src, link_binding_, o, p, 0);
  } else {
    // The packet leaves this process: its fields travel in the record.
    links_[o].send(sim_, start + li_[o].arrive_delay, kPrioPacket, src,
                   pkt.vc | (pkt.first ? 0x100u : 0u) | (pkt.down ? 0x200u : 0u) | (pkt.away ? 0x400u : 0u) |
                       std::uint32_t{pkt.state} << 16 |
                       std::uint32_t{pkt.route} << 24,
                   (static_cast<std::uint64_t>(pkt.msg) << 32) | pkt.dst,
                   (static_cast<std::uint64_t>(pkt.bytes) << 32) | pkt.aux);
    free_packet(p);
    --in_flight_;
  }
}


bool NetworkImpl::arbitrate_switch(LinkId o) {
  auto& req = port_[o].requesters;
  if (req.empty()) return false;
  const SimTime now = sim_.now();
  const std::size_t n = req.size();
  const std::size_t start_idx = round_next(port_[o].rr, n);
  SimTime retry = SimTime::max();
  bool credit_blocked = false;
  std::uint32_t blocked_vcs = 0;
  for (std::size_t t = 0, idx = start_idx; t < n; ++t, idx = idx + 1 == n ? 0 : idx + 1) {
    Voq& voq = req[idx];
    if (available_credits(o, voq.out_vc) < static_cast<std::int64_t>(packets_[voq.head].bytes)) {
      credit_blocked = true;
      blocked_vcs |= 1u << voq.out_vc;
      continue;
    }
    const LinkId in = voq.in;
    if (in_[in].xbar_free > now) {  // the input is still moving a packet through the crossbar
      retry = std::min(retry, in_[in].xbar_free);
      continue;
    }
    // Granted: pop the VOQ; it keeps its place in the round-robin order
    // while it has packets.
    const std::uint32_t p = voq.head;
    const std::uint8_t out_vc = voq.out_vc;  // read before the erase below moves the array
    Packet& pkt = packets_[p];
    voq.head = pkt.next;
    if (pkt.next == kNoPacket) {
      req.erase(req.begin() + static_cast<std::ptrdiff_t>(idx));
      // The next requester now sits at idx; past the end, the order wraps to
      // the first.  (Leaving the pointer past the end let a queue appended
      // later, which lands exactly there, go before every queue waiting: an
      // input refilled at each grant, one packet per slot, then starved a
      // backlogged one for as long as it sent; docs/model.md, parking lot.)
      port_[o].rr = idx < req.size() ? static_cast<std::uint32_t>(idx) : 0;
    } else {
      port_[o].rr = static_cast<std::uint32_t>(idx + 1);
    }
    const SimTime s_out = ser(pkt.bytes, o);
    // Virtual cut-through: the packet may leave before its tail has arrived,
    // but cannot finish leaving before it has (matters for a faster output).
    const SimTime start = std::max(now, pkt.tail - s_out);
    in_[in].xbar_free = start + xbar_time(pkt.bytes, in);
    add_queued(o, -static_cast<std::int64_t>(pkt.bytes));
    const std::uint8_t vc = pkt.vc;
    const std::uint32_t bytes = pkt.bytes;
    cs_[static_cast<std::size_t>(in) * params_.vcs + vc].buffer -= bytes;
    pkt.vc = out_vc;
    if (duato_ && pkt.route == 0 && !rules_->rules().escape(pkt.state))
      reserved_[static_cast<std::size_t>(o) * params_.vcs + pkt.vc] -= bytes;
    start_transmission(o, p, start);
    // The buffer space is free once the tail has left: return the credit then.
    return_credit(in, vc, bytes, start + s_out);
    if (!req.empty()) schedule_wake(o, port_[o].busy_until);
    return true;
  }
  if (credit_blocked) retry = std::min(retry, wait_for_credits(o, blocked_vcs));
  if (retry != SimTime::max()) schedule_wake(o, retry);
  return false;
}

}  // namespace fabricsim::net
