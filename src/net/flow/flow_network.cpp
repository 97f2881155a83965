// The flow-level and analytic network models (flow_network.hpp).
#include "fabricsim/net/flow_network.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"
#include "net/flow/indexed_heap.hpp"
#include "net/flow/link_series.hpp"

namespace fabricsim::net {

using core::SimTime;

namespace {

// Event priorities at one instant: flows end, then posts start flows, then
// deliveries (whose listener may post more at the same instant), then the
// one recomputation that sees every change of the instant.
constexpr std::uint32_t kPrioFinish = 0;
constexpr std::uint32_t kPrioPost = 1;
constexpr std::uint32_t kPrioDeliver = 2;
constexpr std::uint32_t kPrioRecompute = 3;

constexpr FlowId kNoFlowSlot = std::numeric_limits<FlowId>::max();

/// Wire bytes of a message and of its last packet, as the packet model cuts it.
struct WireSize {
  std::uint64_t total = 0;
  std::uint64_t last = 0;
  std::uint32_t packets = 0;
};
WireSize wire_size(std::uint64_t payload, std::uint32_t packet_bytes, std::uint32_t header_bytes, bool headers) {
  if (header_bytes >= packet_bytes)
    throw util::ConfigError("network.header_bytes: must be smaller than network.packet_bytes");
  const std::uint64_t per = packet_bytes - header_bytes;
  WireSize w;
  w.packets = static_cast<std::uint32_t>((payload + per - 1) / per);
  const std::uint64_t h = headers ? header_bytes : 0;
  w.total = payload + w.packets * h;
  w.last = payload - (w.packets - 1) * per + h;
  return w;
}

/// Creates message number messages.size() for the flow and analytic models
/// (the packet model's checks, ids and source ports) and appends it.
/// `Params`: FlowParams or AnalyticParams (each has its own `headers`).
template <class Params>
void make_message(std::vector<Message>& messages, MessageId id, const Topology& topo, const Params& params,
                  EndpointId src, EndpointId dst, std::uint64_t bytes) {
  FABRICSIM_ASSERT(src != dst, "message to itself");
  FABRICSIM_ASSERT(bytes > 0, "empty message");
  FABRICSIM_ASSERT(src < topo.endpoint_count() && dst < topo.endpoint_count(), "no such endpoint");
  wire_size(bytes, params.packet_bytes, params.header_bytes, params.headers);  // (checks the sizes)
  place_message(messages, id,
                new_message(id, src, dst, bytes, params.seed, params.packet_bytes - params.header_bytes));
}

/// Picoseconds to send `bytes` at `gbps`, rounded up; refuses times beyond
/// the int64 range (a rate so small the run cannot end in simulated time).
std::int64_t transfer_ps(double bytes, double gbps) {
  if (bytes <= 0.0 || gbps == std::numeric_limits<double>::infinity()) return 0;
  const double ps = std::ceil(bytes * 8000.0 / gbps);
  if (!(ps < 9.0e18))
    throw util::UserError("flow model: a flow of " + std::to_string(bytes) + " bytes at " + std::to_string(gbps) +
                          " Gb/s ends beyond the simulated time's range");
  return static_cast<std::int64_t>(ps);
}

/// A pinned route (RouteStore) as a FlowRoute: one path, weight 1.
void pinned_route(const Topology& topo, std::span<const LinkId> links, FlowRoute& out) {
  out.clear();
  out.bottleneck_gbps = std::numeric_limits<double>::infinity();
  for (const LinkId l : links) {
    out.links.push_back(FlowLink{l, 1.0});
    out.propagation += topo.link(l).latency;
    out.bottleneck_gbps = std::min(out.bottleneck_gbps, topo.link(l).bandwidth_gbps);
  }
  out.hops = static_cast<std::uint32_t>(links.size());
}

}  // namespace

// ===================================================================== flow

class FlowNetworkImpl final : public NetworkModel {
 public:
  /// A flow in flight (slots are reused: per-message state would cost
  /// memory on runs of tens of millions of messages).
  struct Slot {
    MessageId msg = 0;
    double remaining = 0.0;  ///< flow bytes left at `last`
    SimTime last;
    double rate = 0.0;  ///< Gb/s
    std::uint64_t last_wire = 0;  ///< the last packet's wire bytes
    SimTime tail;     ///< the last packet's serialization at the bottleneck
    SimTime latency;  ///< propagation and switch latencies of the route
    bool live = false;  ///< a flow now (not a free slot)
    /// Waiting (pause_flows, or no live route under hold_unroutable): off
    /// the links and out of the rate solver, `remaining` kept.
    bool held = false;
    std::uint32_t held_hops = 0;  ///< hops of the route it left (0: none yet)
    std::uint32_t hops = 0;       ///< hops of its route (FlowRoute::hops; a hop may spread over parallel links)
  };

  FlowNetworkImpl(const Topology& topo, const FlowParams& params, PathProvider& paths, core::Simulator& sim)
      : topo_(topo), params_(params), paths_(paths), sim_(sim), rates_(FlowRates::capacities(topo)) {
    FABRICSIM_ASSERT(sim.entity_count() >= topo.node_count() && topo.node_count() > 0,
                     "the simulator needs an entity per node");
    if (params_.header_bytes >= params_.packet_bytes)
      throw util::ConfigError("network.header_bytes: must be smaller than network.packet_bytes");
    const std::size_t nl = topo.link_count();
    link_bytes_.assign(nl, 0.0);
    link_busy_.assign(nl, 0.0);
    link_load_.assign(nl, 0.0);
    for (int k = 0; k < 2; ++k) {
      part_load_[k].assign(nl, 0.0);
      part_bytes_[k].assign(nl, 0.0);
    }
    server_of_ = server_of_nodes(topo);
    link_last_.assign(nl, 0);
    link_packets_.assign(nl, 0.0);
    link_flows_.assign(nl, 0);
    max_flows_.assign(nl, 0);
    post_binding_ = sim.bind(core::Simulator::handler<FlowNetworkImpl, &FlowNetworkImpl::on_post>(), this);
    finish_binding_ = sim.bind(core::Simulator::handler<FlowNetworkImpl, &FlowNetworkImpl::on_finish>(), this);
    deliver_binding_ = sim.bind(core::Simulator::handler<FlowNetworkImpl, &FlowNetworkImpl::on_deliver>(), this);
    sent_binding_ = sim.bind(core::Simulator::handler<FlowNetworkImpl, &FlowNetworkImpl::on_sent>(), this);
    recompute_binding_ = sim.bind(core::Simulator::handler<FlowNetworkImpl, &FlowNetworkImpl::on_recompute>(), this);
    series_.start(nl, params_.interval);
    // Balanced ECMP's reading (PickMechanism::LeastFlows): the flows on a link now.
    paths_.set_load([this](LinkId l) { return rates_.flows_on(l); });
    flows_series_.start(nl, params_.interval);
    if (params_.send_engines > 0) {
      busy_engines_.assign(topo.endpoint_count(), 0);
      waiting_.resize(topo.endpoint_count());
    }
  }

  // ------------------------------------------------------- NetworkModel

  std::vector<Message>& messages() override { return messages_; }
  void set_listener(MessageListener* listener) override { listener_ = listener; }
  const LinkStats& link_stats() const override {
    build_stats();
    return stats_out_;
  }
  const NetworkTotals& totals() const override { return totals_; }
  void finish(SimTime end) override {
    FABRICSIM_ASSERT(end >= sim_.last_active(), "finish before the last event that did something");
    for (std::size_t l = 0; l < topo_.link_count(); ++l) accrue(static_cast<LinkId>(l), end);
    finish_ps_ = end.ps();
    series_.close(end);
    flows_series_.close(end);
  }
  SimTime series_interval() const override { return series_.interval(); }
  std::size_t series_bins() const override { return series_.bins(); }

  void create(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint32_t /*tag*/) override {
    make_message(messages_, id, topo_, params_, src, dst, bytes);
    slot_of_.resize(messages_.size(), kNoFlowSlot);
    started_.resize(messages_.size(), 0);
  }
  void set_aside(std::size_t count) override {
    messages_.resize(messages_.size() + count, blank_message());
    slot_of_.resize(messages_.size(), kNoFlowSlot);
    started_.resize(messages_.size(), 0);
  }

  /// Before the message starts: its flow will take the route.  A flow in
  /// flight: its bytes not yet sent move to the new route now (the links
  /// keep what they carried; its packet count moves in proportion), as a
  /// new flow would, at a rate the next recomputation sets.
  void pin(MessageId id, std::span<const LinkId> links, PinnedVc vc, bool /*unused: known here*/) override {
    if (!started_[id] && store_.pinned(id)) {  // nothing took its route yet: no new version
      store_.replace(id, links, vc);
      return;
    }
    store_.pin(id, links);
    const FlowId slot = slot_of_[id];
    if (slot == kNoFlowSlot) return;  // not started, or past its flow (its last packet's latency)
    if (slots_[slot].held) return;    // routed again when it is let go
    pin_route(links);
    move_flow(slot);
    ++stats_.repinned;
  }

  /// The flow in `slot` moves its bytes not yet sent to route_ now.
  void move_flow(FlowId slot) {
    take_off(slot);
    put_on(slot);
  }

  /// Packets of the flow in `slot` yet to send, a whole number (so that a
  /// move keeps every link's packet count and packet_hops whole and equal).
  double packets_left(const Slot& s) const {
    const Message& m = messages_[s.msg];
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    return std::round(s.remaining / static_cast<double>(w.total - w.last) * m.packets);
  }

  /// The flow in `slot` leaves its links and the rate solver now (its
  /// bytes not yet sent stay in `remaining`): the first half of a move.
  void take_off(FlowId slot) {
    const SimTime now = sim_.now();
    Slot& s = slots_[slot];
    advance(s, now);
    const double moved = packets_left(s);
    for (const FlowLink& fl : rates_.links(slot)) {
      accrue(fl.link, now);
      link_load_[fl.link] -= fl.weight * s.rate;
      part_load_[side(fl.link, s.msg)][fl.link] -= fl.weight * s.rate;
      link_packets_[fl.link] -= fl.weight * moved;
    }
    s.held_hops = s.hops;
    rates_.remove(slot);
    for (const FlowLink& fl : rates_.links(slot))
      if (rates_.flows_on(fl.link) == 0) link_load_[fl.link] = part_load_[0][fl.link] = part_load_[1][fl.link] = 0.0;
    s.rate = 0.0;
    heap_.erase(slot);
    request_recompute();
  }

  /// The flow in `slot` (taken off, or held since it started) goes on
  /// route_ now, at a rate the next recomputation sets.
  void put_on(FlowId slot) {
    Slot& s = slots_[slot];
    const MessageId id = s.msg;
    const Message& m = messages_[id];
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    const double moved = packets_left(s);
    const auto old_hops = static_cast<double>(s.held_hops);
    for (const FlowLink& fl : route_.links) {
      ++link_flows_[fl.link];
      link_packets_[fl.link] += fl.weight * moved;
    }
    totals_.packet_hops = static_cast<std::uint64_t>(std::llround(
        static_cast<double>(totals_.packet_hops) + moved * (static_cast<double>(route_.hops) - old_hops)));
    s.rate = 0.0;
    s.held = false;
    s.hops = route_.hops;
    s.last = sim_.now();
    s.tail = core::serialization_time(w.last, route_.bottleneck_gbps);
    s.latency = route_.propagation + params_.switch_latency * static_cast<std::int64_t>(route_.hops - 1);
    heap_.erase(slot);
    double cap = params_.flow_cap_gbps;
    if (!caps_.empty())
      if (const auto it = caps_.find(id); it != caps_.end()) cap = it->second;
    if (!(cap > 0.0)) cap = kNoRateCap;
    rates_.add(slot, route_.links, cap);
    for (const FlowLink& fl : route_.links)
      max_flows_[fl.link] = std::max(max_flows_[fl.link], static_cast<std::uint32_t>(rates_.flows_on(fl.link)));
    request_recompute();
  }

  // ------------------------------------------------------- link state

  void set_link_schedule(const LinkSchedule& schedule) override {
    if (schedule.empty()) return;
    failures_ = true;
    links_state_.start(topo_, schedule);
    link_state_ = &links_state_.state();
    live_ = &links_state_.live();
    paths_.set_live(live_);
    stranded_packets_.assign(topo_.link_count(), 0);
    stranded_bytes_.assign(topo_.link_count(), 0);
    change_binding_ = sim_.bind(core::Simulator::handler<FlowNetworkImpl, &FlowNetworkImpl::on_link_change>(), this);
    const std::vector<SimTime> times = links_state_.later_times();
    for (std::size_t i = 0; i < times.size(); ++i)
      sim_.schedule_keyed_bound(times[i], kPrioFinish, 0, (std::uint64_t{1} << 63) | i, change_binding_);
  }

  /// A scheduled change of the link state.
  void on_link_change(const core::Event&) {
    // A change that moved no flow does not stretch the run (Simulator::passive).
    if (!went_down(links_state_.advance(sim_.now()))) sim_.passive();
  }

  void switch_links(std::span<const LinkId> off, std::span<const LinkId> on) override {
    FABRICSIM_ASSERT(failures_, "switch_links without a link state (set_link_schedule)");
    went_down(links_state_.switch_links(off, on));
    if (hold_unroutable_) let_go();
  }

  /// Links went down: each flow on one of them moves what it has not sent
  /// to a live route, or, with none left, is stranded whole (its message
  /// never completes; docs/model.md, "Failures").  Whether any flow was
  /// touched.
  bool went_down(const std::vector<LinkId>& down) {
    bool acted = false;
    for (FlowId slot = 0; slot < slots_.size() && !down.empty(); ++slot) {
      if (!slots_[slot].live || slots_[slot].held) continue;
      LinkId dead = kNoLink;
      for (const FlowLink& fl : rates_.links(slot))
        if (!link_state_->up(fl.link)) {
          dead = fl.link;
          break;
        }
      if (dead == kNoLink) continue;
      const MessageId id = slots_[slot].msg;
      acted = true;
      if (live_route(id)) {
        move_flow(slot);
        ++stats_.rerouted;
      } else if (hold_unroutable_) {
        take_off(slot);
        slots_[slot].held = true;
      } else {
        strand_flow(slot, dead);
      }
    }
    return acted;
  }

  // ---------------------------------------------- pauses (reconfiguration)

  void pause_flows() override {
    if (paused_) return;
    paused_ = true;
    for (FlowId slot = 0; slot < slots_.size(); ++slot) {
      Slot& s = slots_[slot];
      if (!s.live || s.held) continue;
      take_off(slot);
      s.held = true;
      ++stats_.paused;
    }
  }

  void resume_flows() override {
    paused_ = false;
    let_go();
  }

  void hold_unroutable(bool on) override { hold_unroutable_ = on; }

  void spread_pinned_hops(bool on) override {
    spread_ = on;
    if (on && parallel_.empty()) parallel_ = parallel_links(topo_);
  }

  /// route_ for a pinned route; with spread_pinned_hops, each hop over
  /// every live link parallel to the pinned one, evenly.
  void pin_route(std::span<const LinkId> links) {
    pinned_route(topo_, links, route_);
    if (!spread_) return;
    route_.links.clear();
    for (const LinkId l : links) {
      std::size_t live = 0;
      LinkId k = l;
      do {
        live += !failures_ || link_state_->up(k) ? 1 : 0;
        k = parallel_[k];
      } while (k != l);
      k = l;
      do {
        if (!failures_ || link_state_->up(k)) route_.links.push_back(FlowLink{k, 1.0 / static_cast<double>(live)});
        k = parallel_[k];
      } while (k != l);
    }
  }

  std::uint64_t unsent_bytes(MessageId id, SimTime at) override {
    const Message& m = messages_[id];
    if (m.post_time == SimTime::max() || m.post_time > at || m.failed) return 0;
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    if (!started_[id]) return w.total;
    const FlowId slot = slot_of_[id];
    if (slot == kNoFlowSlot) return 0;
    const Slot& s = slots_[slot];
    double left = s.remaining;
    if (!s.held && at > s.last) left -= s.rate * static_cast<double>((at - s.last).ps()) / 8000.0;
    return static_cast<std::uint64_t>(std::llround(std::max(left, 0.0))) + s.last_wire;
  }

  /// Routes every held flow again, in message order, and lets go those that
  /// have a live route now (the others keep waiting, under hold_unroutable;
  /// else they are stranded as a failure strands them).
  void let_go() {
    if (paused_) return;
    std::vector<std::pair<MessageId, FlowId>> held;
    for (FlowId slot = 0; slot < slots_.size(); ++slot)
      if (slots_[slot].live && slots_[slot].held) held.emplace_back(slots_[slot].msg, slot);
    std::sort(held.begin(), held.end());
    for (const auto& [id, slot] : held) {
      if (!route_now(id)) {
        if (!hold_unroutable_) strand_held(slot);
        continue;
      }
      if (slots_[slot].remaining <= 0.0 && slots_[slot].held_hops == 0 && one_packet(id)) {
        // A one-packet message held before it started: only its latency.
        release_one_packet(slot);
        continue;
      }
      put_on(slot);
    }
  }

  /// route_ for message id now: the live route, or (no link down) its pin or the policy's.
  bool route_now(MessageId id) {
    if (failures_ && link_state_->any_down()) return live_route(id);
    const Message& m = messages_[id];
    if (store_.pinned(id))
      pin_route(store_.route(id));
    else
      paths_.route_message(m.src, m.dst, m.flow_port, id, route_);
    return true;
  }

  bool one_packet(MessageId id) const {
    const Message& m = messages_[id];
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    return w.total == w.last;
  }

  void release_one_packet(FlowId slot) {
    Slot& s = slots_[slot];
    const MessageId id = s.msg;
    const Message& m = messages_[id];
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    totals_.packet_hops += static_cast<std::uint64_t>(m.packets) * route_.hops;
    for (const FlowLink& fl : route_.links) {
      ++link_flows_[fl.link];
      link_packets_[fl.link] += fl.weight * m.packets;
    }
    s.live = false;
    s.held = false;
    slot_of_[id] = kNoFlowSlot;
    free_slots_.push_back(slot);
    tail_bytes(route_.links, w.last, id);
    end_message(id, sim_.now(), core::serialization_time(w.last, route_.bottleneck_gbps),
                route_.propagation + params_.switch_latency * static_cast<std::int64_t>(route_.hops - 1));
  }

  /// A held flow that has no route left and may not wait: lost whole.
  void strand_held(FlowId slot) {
    Slot& s = slots_[slot];
    s.live = false;
    s.held = false;
    slot_of_[s.msg] = kNoFlowSlot;
    free_slots_.push_back(slot);
    fail_message(s.msg, kNoLink);
  }

  /// Message id starts held (paused, or no live route under hold_unroutable).
  void start_held(MessageId id) {
    Message& m = messages_[id];
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    totals_.packets_injected += m.packets;
    totals_.bytes_injected += m.bytes;
    const FlowId slot = new_slot();
    Slot& s = slots_[slot];
    s.msg = id;
    s.live = true;
    s.held = true;
    s.held_hops = 0;
    slot_of_[id] = slot;
    s.remaining = static_cast<double>(w.total - w.last);
    s.last = sim_.now();
    s.rate = 0.0;
    s.last_wire = w.last;
    ++stats_.held;
  }

  FlowId new_slot() {
    if (!free_slots_.empty()) {
      const FlowId slot = free_slots_.back();
      free_slots_.pop_back();
      return slot;
    }
    const auto slot = static_cast<FlowId>(slots_.size());
    slots_.emplace_back();
    heap_.reserve_ids(slots_.size());
    return slot;
  }

  /// route_ for message id over live links; false if none is left.
  bool live_route(MessageId id) {
    const Message& m = messages_[id];
    if (store_.pinned(id)) {
      const auto r = store_.route(id);
      if (!live_->path_ok(r.data(), r.size())) return false;
      pin_route(r);
      return true;
    }
    try {
      paths_.route_message(m.src, m.dst, m.flow_port, id, route_);
    } catch (const util::ConfigError&) {
      return false;  // (the providers refuse a pair they cannot connect)
    }
    return true;
  }

  void strand_flow(FlowId slot, LinkId at) {
    Slot& s = slots_[slot];
    const SimTime now = sim_.now();
    advance(s, now);
    for (const FlowLink& fl : rates_.links(slot)) {
      accrue(fl.link, now);
      link_load_[fl.link] -= fl.weight * s.rate;
      part_load_[side(fl.link, s.msg)][fl.link] -= fl.weight * s.rate;
    }
    rates_.remove(slot);
    for (const FlowLink& fl : rates_.links(slot))
      if (rates_.flows_on(fl.link) == 0) link_load_[fl.link] = part_load_[0][fl.link] = part_load_[1][fl.link] = 0.0;
    heap_.erase(slot);
    s.live = false;
    slot_of_[s.msg] = kNoFlowSlot;
    free_slots_.push_back(slot);
    fail_message(s.msg, at);
    request_recompute();
  }

  /// Message id is lost whole: its packets counted stranded at link `at`.
  void fail_message(MessageId id, LinkId at) {
    Message& m = messages_[id];
    mark_failed(m, id);
    totals_.packets_stranded += m.packets;
    totals_.bytes_stranded += m.bytes;
    if (at != kNoLink) {
      stranded_packets_[at] += m.packets;
      stranded_bytes_[at] += m.bytes;
    }
    if (params_.send_engines > 0) release_engine(m.src);
  }

  void post(MessageId id, SimTime at) override {
    Message& m = messages_[id];
    FABRICSIM_ASSERT(m.post_time == SimTime::max(), "message posted twice");
    m.post_time = at;
    sim_.schedule_bound(at, kPrioPost, topo_.endpoint_node(m.src), post_binding_, id);
  }

  // ------------------------------------------------------------- events

  void on_post(const core::Event& ev) {
    const MessageId id = ev.arg32;
    if (params_.send_engines > 0) {
      // A NIC sends on at most send_engines messages at once; the others
      // wait, in post order, until one of them has left (on_sent).
      const EndpointId src = messages_[id].src;
      if (busy_engines_[src] >= params_.send_engines) {
        waiting_[src].push_back(id);
        return;
      }
      ++busy_engines_[src];
    }
    start(id);
  }

  /// The message leaves its NIC now: a flow (or, one packet, only its latency).
  void start(MessageId id) {
    Message& m = messages_[id];
    started_[id] = 1;
    if (paused_) {
      start_held(id);
      return;
    }
    if (failures_ && link_state_->any_down()) {
      if (!live_route(id)) {
        if (hold_unroutable_) {
          start_held(id);
          return;
        }
        // No live route: never sent.
        mark_failed(m, id);
        totals_.bytes_unsent += m.bytes;
        if (params_.send_engines > 0) release_engine(m.src);
        return;
      }
    } else if (store_.pinned(id)) {
      pin_route(store_.route(id));
    } else {
      paths_.route_message(m.src, m.dst, m.flow_port, id, route_);
    }
    const WireSize w = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers);
    const SimTime tail = core::serialization_time(w.last, route_.bottleneck_gbps);
    const SimTime latency = route_.propagation + params_.switch_latency * static_cast<std::int64_t>(route_.hops - 1);
    totals_.packets_injected += m.packets;
    totals_.bytes_injected += m.bytes;
    totals_.packet_hops += static_cast<std::uint64_t>(m.packets) * route_.hops;
    for (const FlowLink& fl : route_.links) {
      ++link_flows_[fl.link];
      link_packets_[fl.link] += fl.weight * m.packets;
    }
    const double flow_bytes = static_cast<double>(w.total - w.last);
    if (flow_bytes <= 0.0) {  // one packet: no flow, only its latency
      tail_bytes(route_.links, w.last, id);
      end_message(id, sim_.now(), tail, latency);
      return;
    }
    const FlowId slot = new_slot();
    Slot& s = slots_[slot];
    s.msg = id;
    s.live = true;
    s.held = false;
    s.hops = route_.hops;
    slot_of_[id] = slot;
    s.remaining = flow_bytes;
    s.last = sim_.now();
    s.rate = 0.0;
    s.last_wire = w.last;
    s.tail = tail;
    s.latency = latency;
    double cap = params_.flow_cap_gbps;
    if (!caps_.empty())
      if (const auto it = caps_.find(id); it != caps_.end()) cap = it->second;
    if (!(cap > 0.0)) cap = kNoRateCap;
    // (The links' integrals up to now, before the flow counts change.)
    for (const FlowLink& fl : route_.links) accrue(fl.link, sim_.now());
    rates_.add(slot, route_.links, cap);
    for (const FlowLink& fl : route_.links)
      max_flows_[fl.link] = std::max(max_flows_[fl.link], static_cast<std::uint32_t>(rates_.flows_on(fl.link)));
    ++stats_.flows_started;
    stats_.max_concurrent = std::max(stats_.max_concurrent, rates_.active_count());
    request_recompute();
  }

  void on_recompute(const core::Event&) {
    recompute_pending_ = false;
    ++stats_.recompute_events;
    const SimTime now = sim_.now();
    // Timing every recomputation cost 8% of a GPT-3 run phase (two clock
    // reads of ~20 ns around a 0.2 us recomputation): time one in
    // kTimedEvery and scale (stats()).
    const bool timed = stats_.recompute_events % kTimedEvery == 1;
    const auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const std::span<const FlowId> changed = params_.full_recompute ? rates_.recompute_all() : rates_.recompute();
    if (timed) {
      timed_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++timed_count_;
    }
    for (FlowId slot : changed) {
      Slot& s = slots_[slot];
      const double old_rate = s.rate;
      const double new_rate = rates_.rate(slot);
      advance(s, now);
      for (const FlowLink& fl : rates_.links(slot)) {
        accrue(fl.link, now);
        link_load_[fl.link] += fl.weight * (new_rate - old_rate);
        part_load_[side(fl.link, s.msg)][fl.link] += fl.weight * (new_rate - old_rate);
      }
      s.rate = new_rate;
      heap_.set(slot, (now + SimTime::from_ps(transfer_ps(s.remaining, new_rate))).ps());
      ++stats_.reschedules;
    }
    arm();
  }

  void on_finish(const core::Event& ev) {
    if (ev.arg0 != arm_token_) {  // superseded by an earlier finish: not the run's end
      sim_.passive();
      return;
    }
    armed_ = false;
    const SimTime now = sim_.now();
    bool ended = false;
    while (!heap_.empty() && heap_.top_key() <= now.ps()) {
      const FlowId slot = heap_.top();
      heap_.pop();
      end_flow(slot, now);
      ended = true;
    }
    // (Armed for a flow whose end has moved later since, or one paused.)
    if (!ended) sim_.passive();
    arm();
  }

  void on_deliver(const core::Event& ev) {
    const MessageId id = ev.arg32;
    Message& m = messages_[id];
    m.end_time = sim_.now();
    m.received_packets = m.packets;
    totals_.packets_delivered += m.packets;
    totals_.bytes_delivered += m.bytes;
    ++totals_.messages_delivered;
    if (listener_) listener_->on_message_delivered(id);
  }

  void on_sent(const core::Event& ev) {
    const MessageId id = ev.arg32;
    if (params_.send_engines > 0) release_engine(messages_[id].src);
    if (listener_ && listener_->wants_sent()) listener_->on_message_sent(id);
  }

  /// A message of `src` has left (or failed): its engine takes the next waiting one.
  void release_engine(EndpointId src) {
    if (!waiting_[src].empty()) {
      const MessageId next = waiting_[src].front();
      waiting_[src].pop_front();
      start(next);
    } else {
      --busy_engines_[src];
    }
  }

  // ------------------------------------------------------------ helpers

  /// Brings a flow's remaining bytes to `now` at its current rate.
  static void advance(Slot& s, SimTime now) {
    if (now > s.last && s.rate > 0.0) {
      s.remaining -= s.rate * static_cast<double>((now - s.last).ps()) / 8000.0;
      if (s.remaining < 0.0) s.remaining = 0.0;
    }
    s.last = now;
  }

  /// Brings a link's integrals to `t` at its current load.
  void accrue(LinkId l, SimTime t) {
    const std::int64_t dt = t.ps() - link_last_[l];
    if (dt <= 0) return;
    const double load = link_load_[l];
    if (load > 0.0) {
      link_bytes_[l] += load * static_cast<double>(dt) / 8000.0;
      for (int k = 0; k < 2; ++k) part_bytes_[k][l] += part_load_[k][l] * static_cast<double>(dt) / 8000.0;
      link_busy_[l] += load / topo_.link(l).bandwidth_gbps * static_cast<double>(dt);
      if (series_.on()) add_series(l, link_last_[l], t.ps(), load / 8000.0);
    }
    // Flows on the link (also those whose rate is still 0), integrated.
    if (flows_series_.on())
      if (const auto n = static_cast<double>(rates_.flows_on(l)); n > 0)
        flows_series_.spread(l, link_last_[l], t.ps(),
                             [n](std::int64_t a, std::int64_t b) { return n * static_cast<double>(b - a); });
    link_last_[l] = t.ps();
  }

  /// Time series: `per_ps` bytes per picosecond over [from, to) into the
  /// bins they overlap (bytes transmitted in each interval).
  void add_series(LinkId l, std::int64_t from, std::int64_t to, double per_ps) {
    series_.spread(l, from, to,
                   [per_ps](std::int64_t a, std::int64_t b) { return per_ps * static_cast<double>(b - a); });
  }

  /// The last packet of a message crosses the links of its route.
  void tail_bytes(std::span<const FlowLink> links, std::uint64_t bytes, MessageId id) {
    for (const FlowLink& fl : links) {
      link_bytes_[fl.link] += fl.weight * static_cast<double>(bytes);
      part_bytes_[side(fl.link, id)][fl.link] += fl.weight * static_cast<double>(bytes);
      if (series_.on()) {
        const std::int64_t t = sim_.now().ps();
        add_series(fl.link, t, t + 1, fl.weight * static_cast<double>(bytes));
      }
      link_busy_[fl.link] +=
          fl.weight * static_cast<double>(core::serialization_time(bytes, topo_.link(fl.link).bandwidth_gbps).ps());
    }
  }

  void end_flow(FlowId slot, SimTime now) {
    Slot& s = slots_[slot];
    const MessageId id = s.msg;
    for (const FlowLink& fl : rates_.links(slot)) {
      accrue(fl.link, now);
      link_load_[fl.link] -= fl.weight * s.rate;
      part_load_[side(fl.link, s.msg)][fl.link] -= fl.weight * s.rate;
    }
    tail_bytes(rates_.links(slot), s.last_wire, id);
    // Links left without flows get a load of exactly 0 (no drift from the
    // subtractions); the solver still lists an ended flow's links.
    rates_.remove(slot);
    for (const FlowLink& fl : rates_.links(slot))
      if (rates_.flows_on(fl.link) == 0) link_load_[fl.link] = part_load_[0][fl.link] = part_load_[1][fl.link] = 0.0;
    s.live = false;
    slot_of_[s.msg] = kNoFlowSlot;
    free_slots_.push_back(slot);
    end_message(id, now, s.tail, s.latency);
    request_recompute();
  }

  /// The flow part of a message ended at `now`: its last packet, then the latency.
  void end_message(MessageId id, SimTime now, SimTime tail, SimTime latency) {
    const Message& m = messages_[id];
    const NodeId src = topo_.endpoint_node(m.src);
    if ((listener_ && listener_->wants_sent()) || params_.send_engines > 0)
      sim_.schedule_bound(now + tail, kPrioDeliver, src, sent_binding_, id);
    sim_.schedule_bound(now + tail + latency, kPrioDeliver, topo_.endpoint_node(m.dst), deliver_binding_, id);
  }

  void request_recompute() {
    if (recompute_pending_) return;
    recompute_pending_ = true;
    sim_.schedule_bound(sim_.now(), kPrioRecompute, 0, recompute_binding_);
  }

  /// Keeps one finish event, at the earliest finish time.
  void arm() {
    if (heap_.empty()) return;
    const std::int64_t t = heap_.top_key();
    if (armed_ && t >= armed_ps_) return;
    armed_ = true;
    armed_ps_ = t;
    sim_.schedule_bound(SimTime::from_ps(t), kPrioFinish, 0, finish_binding_, 0, ++arm_token_);
  }

  void build_stats() const {
    const std::size_t nl = topo_.link_count();
    LinkStats& st = stats_out_;
    for (auto* v : {&st.tx_bytes, &st.tx_packets, &st.max_queue_bytes, &st.originated_bytes, &st.forwarded_bytes})
      v->assign(nl, 0);
    for (auto* v : {&st.busy_ps, &st.stall_ps}) v->assign(nl, 0);
    st.flows.assign(nl, 0);
    const std::int64_t now = std::max(sim_.now().ps(), finish_ps_);
    for (std::size_t l = 0; l < nl; ++l) {
      const double dt = static_cast<double>(std::max<std::int64_t>(0, now - link_last_[l]));
      const double load = link_load_[l];
      st.tx_bytes[l] = static_cast<std::uint64_t>(std::llround(link_bytes_[l] + load * dt / 8000.0));
      st.originated_bytes[l] =
          static_cast<std::uint64_t>(std::llround(part_bytes_[0][l] + part_load_[0][l] * dt / 8000.0));
      st.forwarded_bytes[l] =
          static_cast<std::uint64_t>(std::llround(part_bytes_[1][l] + part_load_[1][l] * dt / 8000.0));
      st.busy_ps[l] = std::llround(link_busy_[l] + load / topo_.link(static_cast<LinkId>(l)).bandwidth_gbps * dt);
      st.tx_packets[l] = static_cast<std::uint64_t>(std::llround(link_packets_[l]));
      st.flows[l] = link_flows_[l];
    }
    st.stranded_packets = failures_ ? stranded_packets_ : std::vector<std::uint64_t>(nl, 0);
    st.stranded_bytes = failures_ ? stranded_bytes_ : std::vector<std::uint64_t>(nl, 0);
    series_.write(st);
    st.max_flows = max_flows_;
    flows_series_.write_averages(st.series_flows);
  }

  const Topology& topo_;
  FlowParams params_;
  PathProvider& paths_;
  core::Simulator& sim_;
  FlowRates rates_;
  MessageListener* listener_ = nullptr;
  std::vector<Message> messages_;
  std::unordered_map<MessageId, double> caps_;  // set_rate_cap (Gb/s)
  std::vector<Slot> slots_;
  std::vector<FlowId> free_slots_;
  std::vector<FlowId> slot_of_;  // per message: its flow's slot while it is one (kNoFlowSlot otherwise)
  std::vector<std::uint8_t> started_;  // per message: has left its NIC's queue (start())
  bool paused_ = false;                // pause_flows until resume_flows
  bool hold_unroutable_ = false;       // hold_unroutable
  bool spread_ = false;                // spread_pinned_hops
  std::vector<LinkId> parallel_;       // per link: the next parallel data link (itself if none)
  // Link state ([[failures]]): off unless a schedule was given.
  bool failures_ = false;
  LinkStateRun links_state_;
  const LinkState* link_state_ = nullptr;  // links_state_'s mask
  LiveRoutes* live_ = nullptr;
  core::Simulator::BindingId change_binding_ = 0;
  std::vector<std::uint64_t> stranded_packets_;  // per link
  std::vector<std::uint64_t> stranded_bytes_;
  RouteStore store_;  // pinned routes (Network::pin)
  flow_detail::IndexedHeap<std::int64_t> heap_;  // slot -> finish time (ps)
  FlowRoute route_;
  bool recompute_pending_ = false;
  bool armed_ = false;
  std::int64_t armed_ps_ = 0;
  std::uint64_t arm_token_ = 0;
  std::int64_t finish_ps_ = 0;
  // Per link (topology ids): integrals up to link_last_, current load.
  std::vector<double> link_bytes_;
  std::vector<double> link_busy_;  // ps
  std::vector<double> link_load_;  // Gb/s
  // The same integrals and loads split by where the bytes are sent
  // (LinkStats::originated_bytes): [0] originated, [1] forwarded.
  std::vector<double> part_bytes_[2];
  std::vector<double> part_load_[2];
  std::vector<NodeId> server_of_;  // server_of_nodes
  /// 0 if message id's bytes on link l are originated, 1 if forwarded.
  int side(LinkId l, MessageId id) const {
    return server_of_[topo_.link(l).src] == server_of_[topo_.endpoint_node(messages_[id].src)] ? 0 : 1;
  }
  std::vector<std::int64_t> link_last_;
  std::vector<double> link_packets_;
  std::vector<std::uint32_t> link_flows_;
  // Time series (params_.interval > 0): bytes per link and interval.
  flow_detail::LinkSeries<double> series_;
  flow_detail::LinkSeries<double> flows_series_;  ///< flows on each link, integrated over time (flow x ps)
  std::vector<std::uint32_t> max_flows_;          ///< the most flows at once on each link
  std::vector<std::uint32_t> busy_engines_;         // per endpoint (send_engines > 0)
  std::vector<std::deque<MessageId>> waiting_;      // per endpoint: posted, waiting for an engine
  NetworkTotals totals_;
  FlowModelStats stats_;
  static constexpr std::uint64_t kTimedEvery = 16;
  double timed_seconds_ = 0;  ///< the timed recomputations' wall time
  std::uint64_t timed_count_ = 0;
  mutable LinkStats stats_out_;
  mutable FlowModelStats stats_copy_;
  core::Simulator::BindingId post_binding_ = 0;
  core::Simulator::BindingId finish_binding_ = 0;
  core::Simulator::BindingId deliver_binding_ = 0;
  core::Simulator::BindingId sent_binding_ = 0;
  core::Simulator::BindingId recompute_binding_ = 0;
};

namespace {
template <class Impl, class Params>
std::unique_ptr<Impl> make_impl(const Topology& topo, const Params& params, PathProvider& paths,
                                core::Simulator& sim) {
  return std::make_unique<Impl>(topo, params, paths, sim);
}
}  // namespace

FlowNetwork::FlowNetwork(const Topology& topo, const FlowParams& params, PathProvider& paths, core::Simulator& sim)
    : FlowNetwork(topo, params, sim, make_impl<FlowNetworkImpl>(topo, params, paths, sim)) {}
FlowNetwork::FlowNetwork(const Topology& topo, const FlowParams& params, core::Simulator& sim,
                         std::unique_ptr<FlowNetworkImpl> impl)
    : Network(topo, params, sim, std::move(impl)), impl_(static_cast<FlowNetworkImpl&>(model())) {}
FlowNetwork::~FlowNetwork() = default;

void FlowNetwork::set_rate_cap(MessageId id, double gbps) {
  FABRICSIM_ASSERT(gbps > 0.0, "a rate cap must be positive");
  FABRICSIM_ASSERT(impl_.messages_[id].post_time == SimTime::max(), "cap a message before posting it");
  impl_.caps_[id] = gbps;
}
const FlowParams& FlowNetwork::flow_params() const { return impl_.params_; }
double FlowNetwork::rate_gbps(MessageId id) const {
  // (A test's query: a scan of the flows in flight.)
  for (FlowId slot = 0; slot < impl_.slots_.size(); ++slot)
    if (impl_.slots_[slot].msg == id && impl_.rates_.active(slot)) return impl_.slots_[slot].rate;
  return 0.0;
}
const FlowModelStats& FlowNetwork::stats() const {
  impl_.stats_copy_ = impl_.stats_;
  impl_.stats_copy_.rates = impl_.rates_.stats();
  if (impl_.timed_count_ > 0)
    impl_.stats_copy_.recompute_seconds = impl_.timed_seconds_ * static_cast<double>(impl_.stats_.recompute_events) /
                                          static_cast<double>(impl_.timed_count_);
  return impl_.stats_copy_;
}
const FlowRates& FlowNetwork::rates() const { return impl_.rates_; }

// ================================================================= analytic

class AnalyticNetworkImpl final : public NetworkModel {
 public:
  AnalyticNetworkImpl(const Topology& topo, const AnalyticParams& params, PathProvider& paths, core::Simulator& sim)
      : topo_(topo), params_(params), paths_(paths), sim_(sim) {
    FABRICSIM_ASSERT(sim.entity_count() >= topo.node_count(), "the simulator needs an entity per node");
    if (params_.header_bytes >= params_.packet_bytes)
      throw util::ConfigError("network.header_bytes: must be smaller than network.packet_bytes");
    const std::size_t nl = topo.link_count();
    free_at_.assign(nl, SimTime::zero());
    stats_.tx_bytes.assign(nl, 0);
    stats_.originated_bytes.assign(nl, 0);
    stats_.forwarded_bytes.assign(nl, 0);
    server_of_ = server_of_nodes(topo);
    stats_.tx_packets.assign(nl, 0);
    stats_.busy_ps.assign(nl, 0);
    stats_.max_queue_bytes.assign(nl, 0);
    stats_.stall_ps.assign(nl, 0);
    stats_.flows.assign(nl, 0);
    series_.start(nl, params_.interval);
    arrive_binding_ = sim.bind(core::Simulator::handler<AnalyticNetworkImpl, &AnalyticNetworkImpl::on_arrive>(), this);
    deliver_binding_ =
        sim.bind(core::Simulator::handler<AnalyticNetworkImpl, &AnalyticNetworkImpl::on_deliver>(), this);
    sent_binding_ = sim.bind(core::Simulator::handler<AnalyticNetworkImpl, &AnalyticNetworkImpl::on_sent>(), this);
  }

  std::vector<Message>& messages() override { return messages_; }
  void set_listener(MessageListener* listener) override { listener_ = listener; }
  const LinkStats& link_stats() const override { return stats_; }
  const NetworkTotals& totals() const override { return totals_; }
  void finish(SimTime end) override {
    series_.close(end);
    series_.write(stats_);
  }
  void set_end_time(SimTime end) override { end_ps_ = end.ps(); }
  SimTime series_interval() const override { return series_.interval(); }
  std::size_t series_bins() const override { return series_.bins(); }

  void create(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint32_t /*tag*/) override {
    make_message(messages_, id, topo_, params_, src, dst, bytes);
    path_at_.resize(messages_.size(), 0);
    started_.resize(messages_.size(), 0);
  }
  void set_aside(std::size_t count) override {
    messages_.resize(messages_.size() + count, blank_message());
    path_at_.resize(messages_.size(), 0);
    started_.resize(messages_.size(), 0);
  }

  /// Failures at time 0 only: a message's whole path is fixed when it
  /// starts, so a link going down later would have nothing to act on.
  void set_link_schedule(const LinkSchedule& schedule) override {
    if (schedule.empty()) return;
    for (const LinkChange& c : schedule.changes)
      if (c.at > SimTime::zero())
        throw util::ConfigError(fmt::format(
            "failures.at_ns: the analytic model takes failures from time 0 only (a message's whole path is fixed "
            "as it starts); {} ns needs network.model = \"flow\" or \"packet\"",
            c.at.ns()));
    links_state_.start(topo_, schedule);
    live_ = &links_state_.live();
    paths_.set_live(live_);
  }

  /// Before the message starts only: a message store-and-forwards whole
  /// along its path, so once it has started there is nothing to move.
  void pin(MessageId id, std::span<const LinkId> links, PinnedVc, bool) override {
    if (started_[id])
      throw util::UserError(fmt::format("the analytic model cannot re-pin message {}: it has started (a message "
                                        "moves whole along its path; pin it before it is posted)",
                                        id));
    store_.pin(id, links);
  }

  void post(MessageId id, SimTime at) override {
    Message& m = messages_[id];
    FABRICSIM_ASSERT(m.post_time == SimTime::max(), "message posted twice");
    m.post_time = at;
    sim_.schedule_bound(at, kPrioPost, topo_.endpoint_node(m.src), arrive_binding_, id, 0);
  }

  /// Message arg32 arrives at hop arg0 of its path: it takes the link when
  /// the link has served everyone who arrived before it.
  void on_arrive(const core::Event& ev) {
    const MessageId id = ev.arg32;
    const auto hop = static_cast<std::uint32_t>(ev.arg0);
    Message& m = messages_[id];
    if (hop == 0) {
      if (store_.pinned(id) && live_ && !live_->path_ok(store_.route(id).data(), store_.route(id).size())) {
        mark_failed(m, id);  // pinned over a failed link: never sent
        totals_.bytes_unsent += m.bytes;
        return;
      }
      if (store_.pinned(id)) {
        pinned_route(topo_, store_.route(id), route_);
      } else if (live_ && live_->any_down()) {
        try {
          paths_.route_message(m.src, m.dst, m.flow_port, id, route_);
        } catch (const util::ConfigError&) {
          mark_failed(m, id);  // no live route: never sent
          totals_.bytes_unsent += m.bytes;
          return;
        }
      } else {
        paths_.route_message(m.src, m.dst, m.flow_port, id, route_);
      }
      if (!route_.single)
        throw util::ConfigError("network.model = \"analytic\" needs one path per message (no spraying or adaptive)");
      started_[id] = 1;
      path_at_[id] = static_cast<std::uint32_t>(path_pool_.size());
      for (const FlowLink& fl : route_.links) path_pool_.push_back(fl.link);
      path_pool_.push_back(kNoLink);
      totals_.packets_injected += m.packets;
      totals_.bytes_injected += m.bytes;
    }
    const LinkId l = path_pool_[path_at_[id] + hop];
    const Link& link = topo_.link(l);
    const std::uint64_t n = wire_size(m.bytes, params_.packet_bytes, params_.header_bytes, params_.headers).total;
    const SimTime start = std::max(sim_.now(), free_at_[l]);
    const SimTime ser = core::serialization_time(n, link.bandwidth_gbps);
    const SimTime occupancy = link.latency + ser;
    free_at_[l] = start + occupancy;
    stats_.tx_bytes[l] += n;
    (server_of_[link.src] == server_of_[topo_.endpoint_node(m.src)] ? stats_.originated_bytes
                                                                     : stats_.forwarded_bytes)[l] += n;
    if (series_.on()) book_series(l, start, ser, n);
    stats_.tx_packets[l] += m.packets;
    stats_.busy_ps[l] += occupancy.ps();
    stats_.stall_ps[l] += (start - sim_.now()).ps();
    ++stats_.flows[l];
    totals_.packet_hops += m.packets;
    if (hop == 0 && listener_ && listener_->wants_sent())
      sim_.schedule_bound(free_at_[l], kPrioDeliver, link.src, sent_binding_, id);
    if (path_pool_[path_at_[id] + hop + 1] == kNoLink) {
      sim_.schedule_bound(free_at_[l], kPrioDeliver, link.dst, deliver_binding_, id);
    } else {
      sim_.schedule_bound(free_at_[l] + params_.switch_latency, kPrioPost, link.dst, arrive_binding_, id, hop + 1);
    }
  }

  /// Time series: a transfer of n bytes that the link starts serving at
  /// `start` sends them evenly over its serialization [start, start + ser),
  /// and alpha (the link's latency) follows: the propagation of the last
  /// byte, as in the packet model, where a link's latency comes after its
  /// serialization.  The engine itself only needs the sum (the link is
  /// held for both, and the next hop is asked for at the end), so this
  /// order is the series' reading of it.  Bytes are cut at the interval
  /// boundaries in whole bytes, by rounding the bytes sent so far (floor of
  /// n x elapsed / ser) at each boundary, so a row sums to /links/tx_bytes
  /// exactly.  The part past engine.end_ns (booked ahead of a cut run's
  /// end; /links counts it) goes to the last picosecond before the end.
  void book_series(LinkId l, SimTime start, SimTime ser, std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    const std::int64_t s = start.ps();
    const std::int64_t d = std::max<std::int64_t>(ser.ps(), 1);  // (an infinite rate: all at the start)
    auto sent_by = [&](std::int64_t t) {
      return static_cast<std::uint64_t>(static_cast<u128>(n) * static_cast<u128>(t - s) / static_cast<u128>(d));
    };
    const std::int64_t stop = std::min(s + d, end_ps_);
    std::uint64_t booked = 0;
    if (s < stop) {
      series_.spread(l, s, stop, [&](std::int64_t a, std::int64_t b) { return sent_by(b) - sent_by(a); });
      booked = sent_by(stop);
    }
    if (booked < n) series_.spread(l, end_ps_ - 1, end_ps_, [&](std::int64_t, std::int64_t) { return n - booked; });
  }

  void on_deliver(const core::Event& ev) {
    const MessageId id = ev.arg32;
    Message& m = messages_[id];
    m.end_time = sim_.now();
    m.sent_packets = m.packets;
    m.received_packets = m.packets;
    totals_.packets_delivered += m.packets;
    totals_.bytes_delivered += m.bytes;
    ++totals_.messages_delivered;
    if (listener_) listener_->on_message_delivered(id);
  }

  void on_sent(const core::Event& ev) {
    if (listener_) listener_->on_message_sent(ev.arg32);
  }

  const Topology& topo_;
  std::vector<NodeId> server_of_;  // server_of_nodes: where a byte is originated
  AnalyticParams params_;
  PathProvider& paths_;
  core::Simulator& sim_;
  MessageListener* listener_ = nullptr;
  std::vector<Message> messages_;
  std::vector<std::uint32_t> path_at_;  // per message: its path in path_pool_ (ended by kNoLink)
  std::vector<LinkId> path_pool_;
  std::vector<SimTime> free_at_;  // per link: when it has served everyone queued so far
  std::vector<std::uint8_t> started_;  // per message
  LinkStateRun links_state_;  // [[failures]] at time 0
  LiveRoutes* live_ = nullptr;
  RouteStore store_;  // pinned routes (Network::pin)
  FlowRoute route_;
  LinkStats stats_;
  // Time series (params_.interval > 0): bytes per link and interval, whole
  // bytes (each transfer's are cut into intervals as it is booked).
  flow_detail::LinkSeries<std::uint64_t> series_;
  std::int64_t end_ps_ = std::numeric_limits<std::int64_t>::max();  // engine.end_ns (set_end_time)
  NetworkTotals totals_;
  core::Simulator::BindingId arrive_binding_ = 0;
  core::Simulator::BindingId deliver_binding_ = 0;
  core::Simulator::BindingId sent_binding_ = 0;
};

AnalyticNetwork::AnalyticNetwork(const Topology& topo, const AnalyticParams& params, PathProvider& paths,
                                 core::Simulator& sim)
    : Network(topo, params, sim, make_impl<AnalyticNetworkImpl>(topo, params, paths, sim)) {}
AnalyticNetwork::~AnalyticNetwork() = default;

}  // namespace fabricsim::net
