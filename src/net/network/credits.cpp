// Credit-based flow control: pending credits, absorption, stalls, credit records.
#include "net/network/impl.hpp"

namespace fabricsim::net {

void NetworkImpl::add_pending_credit(LinkId out, std::uint8_t vc, std::uint32_t bytes, SimTime at) {
  std::uint32_t c;
  if (!free_credits_.empty()) {
    c = free_credits_.back();
    free_credits_.pop_back();
  } else {
    c = static_cast<std::uint32_t>(credit_pool_.size());
    credit_pool_.emplace_back();
  }
  credit_pool_[c] = PendingCredit{at, bytes, kNoPacket};
  const std::size_t k = static_cast<std::size_t>(out) * params_.vcs + vc;
  if (cs_[k].head == kNoPacket) {
    cs_[k].head = cs_[k].tail = c;
    cs_[k].due = at;
  } else if (credit_pool_[cs_[k].tail].time <= at) {
    credit_pool_[cs_[k].tail].next = c;
    cs_[k].tail = c;
  } else {
    // Rare: a credit due earlier than the last one (different output
    // rates downstream).  Insert in time order, after equal times.
    std::uint32_t* link = &cs_[k].head;
    while (*link != kNoPacket && credit_pool_[*link].time <= at) link = &credit_pool_[*link].next;
    credit_pool_[c].next = *link;
    *link = c;
    cs_[k].due = credit_pool_[cs_[k].head].time;
  }
  // An output blocked on this channel wakes for the credit if it is due
  // before the wake-up it has.  (That wake-up was set from the credits
  // known when it blocked; one returned later may be due earlier, and over
  // a link between ranks a credit is known later than in one process: the
  // wake-ups, and so the run, would differ with the rank count.)
  if ((credit_waiting_[out / 64] >> (out % 64) & 1u) && (wait_vcs_[out] >> vc & 1u) && at < credit_wake_[out]) {
    credit_wake_[out] = at;
    schedule_wake(out, at);
  }
}

std::int64_t NetworkImpl::absorb_credits(std::size_t k) {
  std::int64_t& credits = cs_[k].credits;
  const std::int64_t before = credits;
  const SimTime now = sim_.now();
  std::uint32_t c = cs_[k].head;
  while (c != kNoPacket && credit_pool_[c].time <= now) {
    credits += credit_pool_[c].bytes;
    free_credits_.push_back(c);
    c = credit_pool_[c].next;
  }
  cs_[k].head = c;
  if (c == kNoPacket) cs_[k].tail = kNoPacket;
  cs_[k].due = c == kNoPacket ? SimTime::max() : credit_pool_[c].time;
  if (params_.vcs == 1) port_[k].queued_less_credits -= credits - before;
  FABRICSIM_DEBUG_ASSERT(credits <= static_cast<std::int64_t>(params_.buffer_bytes), "credits above buffer size");
  return credits;
}

SimTime NetworkImpl::next_credit_time(LinkId out, std::uint32_t vc_mask) const {
  SimTime t = SimTime::max();
  for (std::size_t v = 0; v < params_.vcs; ++v)
    if (vc_mask & (1u << v)) t = std::min(t, cs_[static_cast<std::size_t>(out) * params_.vcs + v].due);
  return t;
}


void NetworkImpl::return_credit(LinkId in, std::uint8_t vc, std::uint32_t bytes, SimTime depart) {
  // The credit for link `in` travels back over its reverse link.
  const InPort& ip = in_[in];
  if (ip.credit_remote) {
    // Credits are not events (see add_pending_credit): the record only
    // carries the time the credit becomes usable.
    const LinkInfo& l = li_[in];
    sink_->post(core::RemoteRecord{core::EventKey{depart + ip.credit_delay, kPrioCredit, l.dst, 0}, l.reverse,
                                   l.global | kCreditFlag, bytes, vc});
  } else {
    add_pending_credit(in, vc, bytes, depart + ip.credit_delay);
  }
}


SimTime NetworkImpl::wait_for_credits(LinkId o, std::uint32_t vc_mask) {
  if (port_[o].stall_since == SimTime::max()) port_[o].stall_since = sim_.now();
  // One output, two waits in one pass (arbitrate_mixed): the in-transit
  // packets' channels stay watched.  (Replacing them lost the wake-up for
  // their credit when none was on the way as they blocked: the 16x16 torus
  // then stopped with packets in flight under alltoall.)
  vc_mask |= pass_wait_vcs_;
  last_wait_vcs_ = vc_mask;
  const SimTime t = next_credit_time(o, vc_mask);
  FABRICSIM_DEBUG_ASSERT(t > sim_.now(), "a due credit was not absorbed");
  credit_waiting_[o / 64] |= std::uint64_t{1} << (o % 64);  // a credit returned due before t wakes it earlier
  wait_vcs_[o] = vc_mask;
  credit_wake_[o] = t;
  return t;
}

}  // namespace fabricsim::net
