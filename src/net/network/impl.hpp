// The packet-level network model's private parts: NetworkImpl and what its
// units share.  The units (one translation unit together, see
// src/CMakeLists.txt: the per-packet path crosses them on every hop):
//   model.cpp     construction, rank-local state, messages, statistics,
//                 partitioning and records, the public Network
//   routing.cpp   where a packet goes next: the candidates of the route
//                 source (the trees' table, up*/down*, route rules), the
//                 policy's pick among them (route_policy.hpp: its pure
//                 function, or a random draw or the least occupied output),
//                 Valiant / UGAL's intermediate group
//   switch.cpp    packet arrivals, virtual output queues, output
//                 arbitration, transmission, wake-ups
//   nic.cpp       injection (a message's first move, send engines) and
//                 delivery at the endpoints
//   credits.cpp   credit-based flow control: pending credits, absorption,
//                 credit stalls, credit records
#pragma once

#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "fabricsim/core/link.hpp"
#include "fabricsim/net/link_state.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/updown.hpp"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"


namespace fabricsim::net {

using core::SimTime;


inline constexpr std::uint32_t kNoPacket = 0xFFFFFFFFu;
inline constexpr std::uint32_t kCreditFlag = 0x80000000u;
// Packet::aux: 0 = route to the destination; g + 1 = first go to group g
// (Valiant); kUndecided = UGAL decides at the first router.
inline constexpr std::uint16_t kUndecided = 0xFFFF;
// choose_move(): no live move left (link state).
inline constexpr std::size_t kNoMove = SIZE_MAX;

// Event priorities among events at the same time: credits first (so that a
// packet arriving at the same instant sees them), then output wake-ups, packet
// arrivals, message posts and completions.
inline constexpr std::uint32_t kPrioCredit = 0;     // (records only: credits are no events)
inline constexpr std::uint32_t kPrioLinkChange = 0;  // link state changes: before all else at their instant
inline constexpr std::uint32_t kPrioWake = 1;
inline constexpr std::uint32_t kPrioPacket = 2;
inline constexpr std::uint32_t kPrioPost = 3;
inline constexpr std::uint32_t kPrioDelivered = 4;
// Message completions are keyed by message (schedule_keyed_bound) rather than
// by the endpoint's event counter: a completion is then ordered the same
// whether its last packet's arrival was an event here, an event after a
// record from another rank, or accounted when the last hop started
// (NetworkImpl::deliver).  The tag's top bit keeps it apart from the
// counter-keyed `sent` events of the same endpoint and priority (counters
// stay far below 2^31), which go first at the same instant.
inline constexpr std::uint32_t kDeliveredTag = 0x8000'0000u;

struct Packet {
  SimTime tail;           // tail arrival at the current switch, plus its traversal latency
  MessageId msg;
  EndpointId dst;
  std::uint32_t bytes;    // on the wire (payload = bytes - header)
  std::uint32_t next;     // FIFO link
  std::uint8_t vc;
  bool first;             // first packet of its message
  bool down;              // up*/down* routing: it has taken a down link
  std::uint8_t state;     // route rules: the state it arrived in (see StateRoutes)
  std::uint16_t aux;      // route rules: Valiant / UGAL leg (kUndecided, 0, group + 1)
  std::uint8_t route;     // pinned (RouteStore): its version + 1, `state` the next hop; 0: by the policy
  bool away;              // has crossed a link out of its source's server (its bytes are forwarded from now on)
};
static_assert(sizeof(Packet) == 32, "two packets per cache line");

// A credit on its way back to the sender: usable from `time` on.
struct PendingCredit {
  SimTime time;
  std::uint32_t bytes;
  std::uint32_t next;
};


class NetworkImpl final : public NetworkModel {
 public:
  NetworkImpl(const Topology& topo, const NetworkParams& params, core::Simulator& sim);

  // NetworkModel (model.cpp)
  void create(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint32_t tag) override;
  void set_aside(std::size_t count) override;
  bool drop_delivered_records() override;
  void set_aside_dropped(std::size_t count) override;
  bool partitioned() const;  // set_partition made it one part of several
  void describe(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes) override;
  Message from_description(MessageId id) const override;
  bool none_posted();  // no message posted yet (assertions)
  void pin(MessageId id, std::span<const LinkId> links, PinnedVc vc, bool unused) override;
  void post(MessageId id, SimTime at) override;
  std::vector<Message>& messages() override { return messages_; }
  void set_listener(MessageListener* listener) override { listener_ = listener; }
  const LinkStats& link_stats() const override;
  const LinkStats& local_link_stats(std::vector<LinkId>& ids) const override;
  const NetworkTotals& totals() const override { return totals_; }
  void finish(SimTime end) override;
  void set_end_time(SimTime end) override { deliver_before_ = end; }
  void set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink) override;
  bool owns(NodeId n) const override { return owned_[n] != 0; }
  void receive(const core::RemoteRecord& r) override;
  const RoutingTable* routing_table() const override { return routes_ ? &*routes_ : nullptr; }
  std::uint64_t packets_in_flight() const override { return in_flight_; }
  std::uint64_t max_buffer_occupancy() const override { return max_occupancy_; }
  std::int64_t min_credits_seen() const override { return min_credits_; }
  SimTime series_interval() const override { return interval_; }
  std::size_t series_bins() const override { return series_bins_; }
  void set_link_schedule(const LinkSchedule& schedule) override;
  void on_link_change(const core::Event& ev);
  void switch_links(std::span<const LinkId> off, std::span<const LinkId> on) override;
  /// Strands what waits for the owned outputs among `down`.
  void went_down(const std::vector<LinkId>& down);
  // An optical fabric reconfiguring (nic.cpp; Network::pause_flows).
  void pause_flows() override { paused_ = true; }
  void resume_flows() override;
  void hold_unroutable(bool on) override { hold_ = on; }
  void spread_pinned_hops(bool on) override;
  std::uint64_t unsent_bytes(MessageId id, SimTime at) override;

  void on_link_event(const core::Event& ev);
  /// Prefetch hints (see Simulator::set_prefetch): what the handlers of a
  /// packet arrival and of an output wake-up will read first.
  static void prefetch_link_event(void* self, std::uint32_t in, std::uint64_t p) {
    auto* n = static_cast<NetworkImpl*>(self);
    __builtin_prefetch(&n->packets_[p]);
    __builtin_prefetch(&n->in_[in]);
    __builtin_prefetch(&n->cs_[static_cast<std::size_t>(in) * n->params_.vcs]);
  }
  static void prefetch_wake(void* self, std::uint32_t n, std::uint64_t) {
    auto* net = static_cast<NetworkImpl*>(self);
    __builtin_prefetch(&net->wake_times_[n]);
    __builtin_prefetch(&net->wake_mask_[net->wake_mask_base_[n]]);
  }
  void on_wake(const core::Event& ev);
  void on_post(const core::Event& ev);
  void on_delivered(const core::Event& ev);
  void on_sent(const core::Event& ev);
  void on_relay(const core::Event& ev);

  const Topology& topo_;
  NetworkParams params_;
  const RoutePolicy* policy_;  // params_.routing's entry: how a candidate is picked (route_policy.hpp)
  Ecmp ecmp_;  // routing.ecmp_hash / ecmp_seed: the same function the flow models walk paths by
  core::Simulator& sim_;
  // The trees' minimal-route table; not built for route rules or up*/down*
  // (a per-endpoint table on a direct topology would be the largest thing here).
  std::optional<RoutingTable> routes_;
  std::unique_ptr<UpDownRoutes> updown_;  // set when params_.up_down
  std::vector<PortIndex> updown_cands_;
  std::vector<core::Link> links_;
  MessageListener* listener_ = nullptr;
  std::vector<Message> messages_;
  LinkStats stats_;
  NetworkTotals totals_;
  std::uint32_t payload_per_packet_;

  // Packets, by index, with a free list.
  std::vector<Packet> packets_;
  std::vector<std::uint32_t> free_packets_;

  // Per directed link, everything the per-packet paths change, in a few
  // compact records instead of one array per field: a packet hop then
  // touches a handful of cache lines.  The working set of a large fabric
  // does not fit the cache, so lines per hop, more than instructions,
  // set the speed (perf: separate arrays cost a miss each).
  //
  // As an output port of its source node: what routing and arbitration
  // read, and what its input side (at the far end) needs for the crossbar.
  struct Voq;
  struct alignas(128) OutPort {
    // First line: what routing, arrivals and arbitration read.
    SimTime busy_until;
    std::uint64_t queued;  // bytes routed to this output, not yet sent
    SimTime wake_at;       // pending wake-up of the output, or max()
    // With one vc: queued minus the credits absorbed so far (cs_), what
    // adaptive routing compares across a switch's outputs, kept in this
    // line so that its loop does one addition per candidate.
    std::int64_t queued_less_credits;
    // Switch outputs: the non-empty VOQs that feed this output, in the
    // order they became non-empty (the round-robin order); see Voq.
    std::vector<Voq> requesters;
    std::uint32_t rr;      // round-robin position among requesters
    bool from_endpoint;
    bool remote;           // the far end is simulated by another process
    bool mixed;            // a forwarding endpoint's output: relayed packets and its own NIC share it
    bool deliver;          // into an endpoint that only receives, over its only link (see deliver())
    // Second line: what a transmission reads and adds up (a 128-byte
    // aligned pair of lines is one fetch for the adjacent-line prefetcher).
    std::uint64_t tx_bytes;
    std::uint64_t tx_packets;
    std::int64_t busy_ps;
    std::int64_t stall_ps;
    SimTime stall_since;   // max() when not stalled on credits
    SimTime full_ser;      // serialization of a full packet
    SimTime send_delay;    // link latency plus the far end's traversal latency
    NodeId src;
    std::uint32_t flows;
  };
  static_assert(sizeof(OutPort) == 128, "two cache lines per output");
  std::vector<OutPort> port_;
  // Outputs blocked on credits with none on the way, one bit each: the
  // sender's credit return checks it, and a bitset stays in cache.
  std::vector<std::uint64_t> credit_waiting_;
  // Of a blocked output (its credit_waiting_ bit set, cleared when it
  // sends): the channels it waits for, and its wake-up for them.
  std::vector<std::uint32_t> wait_vcs_;
  std::vector<SimTime> credit_wake_;
  // As the input of its far end: the crossbar, and the credit return.
  struct InPort {
    SimTime xbar_free;     // when its crossbar path is free again
    SimTime full_xbar;     // crossbar time of a full packet
    SimTime credit_delay;  // latency of the reverse link, which carries the credits
    SimTime full_ser;      // serialization of a full packet (an arrival's tail time)
    NodeId dst;
    EndpointId dst_endpoint;  // or kNoEndpoint for a switch
    bool credit_remote;       // the reverse link leaves this process
    bool relay;               // the far end is an endpoint that forwards others' packets
  };
  std::vector<InPort> in_;
  // Per (link, vc): the sender's credits usable now, when the first pending
  // credit becomes usable (max() if none), the pending credits (a list in
  // credit_pool_), and the receiver's buffer occupancy.
  //
  // Credits are returned lazily: the receiver of a packet knows when the
  // credit will reach the sender, and appends it to the sender's pending
  // list (sorted by time) instead of scheduling an event.  The sender
  // absorbs due credits when it looks at them; an output that waits for
  // credits gets one wake-up at the time the next credit arrives.  Over a
  // link between ranks the same insertion happens when the credit record
  // arrives, so both paths give the same event order.
  struct CreditState {
    std::int64_t credits;
    SimTime due;
    std::uint32_t head;     // pending credits, in time order
    std::uint32_t tail;
    std::uint64_t buffer;   // bytes held in the receiver's input buffer
  };
  std::vector<CreditState> cs_;
  std::vector<PendingCredit> credit_pool_;
  std::vector<std::uint32_t> free_credits_;
  void sync_stats();  // local_stats_ into stats_, by the topology's ids
  /// Bytes routed to (+) or sent from (-) output o: its queue and the
  /// queue-less-credits copy that adaptive routing reads.
  void add_queued(LinkId o, std::int64_t bytes) {
    port_[o].queued += static_cast<std::uint64_t>(bytes);
    port_[o].queued_less_credits += bytes;
  }

  // Switch input buffers: the space of each (input link, vc) is accounted as
  // one buffer (that is what the upstream credits), but packets wait in
  // virtual output queues, one per (input port, output port, vc), so a packet
  // for a busy output never blocks one behind it for an idle output.
  // Only non-empty VOQs exist: each output keeps its requesters (the VOQs
  // that feed it and hold packets) in a small array, in round-robin order
  // from the pointer rr: a queue that becomes non-empty is inserted just
  // before the pointer, last in the order (route_in).  A dense
  // [input x output] table would be mostly empty and, at megabytes for a
  // 64-port fabric, a cache miss on every packet.
  struct Voq {
    std::uint32_t head;        // FIFO of packets through Packet::next
    std::uint32_t tail;
    LinkId in;                 // input link of the queue
    std::uint8_t vc;           // virtual channel of the input buffer
    std::uint8_t out_vc;       // virtual channel requested on the output (route rules may change it per hop)
  };
  // Endpoint outputs: the messages with data left, in round-robin order,
  // and the NIC's own pointer (a forwarding endpoint's output also
  // round-robins relayed packets with OutPort::rr: one pointer for both
  // lists made each land on an arbitrary index of the other).
  struct NicRound {
    std::vector<MessageId> list;
    std::uint32_t rr = 0;
    MessageId last = UINT32_MAX;  // the message last served if it has data left (UINT32_MAX: none)
  };
  std::vector<NicRound> nic_active_;

  std::vector<util::RandomStream> node_rng_;
  std::vector<std::uint32_t> dmodk_divisor_;  // per level
  std::uint64_t max_occupancy_ = 0;
  std::int64_t min_credits_ = 0;
  std::uint64_t in_flight_ = 0;
  // Last hops into receive-only endpoints (OutPort::deliver) are accounted at
  // their start when the packet arrives before this time (the run's end).
  SimTime deliver_before_ = SimTime::max();

  // Hot per-link facts, copied out of the topology so the per-packet paths
  // touch one small record instead of the topology's larger structures.
  // Cold per-link facts (the hot ones are copied into OutPort and InPort):
  // what partitioning, remote sends and odd-sized packets need.
  struct LinkInfo {
    NodeId src;
    NodeId dst;
    LinkId global;   // the topology's id of the link (what records and the output use)
    LinkId reverse;  // the topology's id of the reverse link
    SimTime arrive_delay;  // switch traversal latency at the far end (0 at NICs)
    double gbps;
  };
  std::vector<LinkInfo> li_;
  // Per local output: bytes sent of packets still in their source's server
  // ([0], originated) and of packets that have left it ([1], forwarded),
  // and whether the link leaves a server (any class but IntraServer).  Apart
  // from OutPort, whose two lines are full; one line per hop more.
  struct HopBytes {
    std::uint64_t by[2];
    bool leaves_server;
  };
  std::vector<HopBytes> hop_bytes_;

  // Partitioned runs: which nodes this process simulates, and where
  // records for other processes go.
  std::vector<std::uint8_t> owned_;
  // Rank-local state: every per-link array above is indexed by a local
  // link id, over the links this process simulates an end of (its nodes'
  // outputs and inputs: a cut link has an entry on both sides), numbered
  // in the topology's order.  Built by build_state() once the partition is
  // known (set_partition, or the first post of a sequential run); the
  // topology's ids enter through local_ (route rules, paths, records) and
  // leave through LinkInfo::global (records, output).
  std::vector<LinkId> local_;     // per topology link: its local id, or kNoLink
  std::vector<std::size_t> out_base_;  // per node: its outputs' local ids in out_local_[out_base_[n] ..]
  std::vector<LinkId> out_local_;
  bool state_built_ = false;
  void build_state();
  void ensure_state() {
    if (!state_built_) build_state();
  }
  /// The route rules' moves use the topology's link ids: to local ones.
  void localize(std::vector<StateRoutes::Option>& opts) const {
    for (auto& o : opts) o.link = local_[o.link];
  }
  core::RemoteSink* sink_ = nullptr;

  // The bin of each link's series that is being filled, in a dense array:
  // most packets only add to it; the series vector is touched when the bin
  // changes.
  struct OpenBin {
    std::int64_t end_ps = 0;  // the bin covers times before this
    std::size_t k = 0;
    std::uint64_t value = 0;
  };
  std::vector<OpenBin> tx_bin_;
  std::vector<OpenBin> queue_bin_;
  // Counters and time series by local link id (the largest queue and the
  // series are kept here during the run, the other counters in OutPort);
  // stats_ holds the same by the topology's ids, built on request.
  LinkStats local_stats_;
  void sync_local_stats();  // copies the per-port counters into local_stats_
  std::size_t series_bins_ = 0;  // bins of every series after finish()
  void roll_bin(OpenBin& b, std::vector<std::uint64_t>& series, SimTime t, bool sum);
  void coarsen_series();
  // At most 65,536 intervals, and at most 2^24 cells (128 MiB) per series.
  std::size_t max_intervals_ = 1u << 16;
  SimTime interval_;  // current time-series interval (params_.interval, doubled as needed)

  core::HandlerFn link_handler_;
  core::Simulator::BindingId link_binding_ = 0;
  core::Simulator::BindingId wake_binding_ = 0;
  // Output wake-ups, batched per node: the node's outputs in link-id order
  // (wake_links_[wake_base_[n] ..]), each output's index there, a bit mask
  // per node of outputs with a pending wake-up, and the times at which the
  // node has a wake-up event scheduled.
  std::vector<std::size_t> wake_base_;
  std::vector<LinkId> wake_links_;
  std::vector<std::uint32_t> wake_bit_;
  std::vector<std::size_t> wake_mask_base_;
  std::vector<std::uint64_t> wake_mask_;
  std::vector<std::vector<SimTime>> wake_times_;
  core::Simulator::BindingId post_binding_ = 0;
  // Per endpoint: its posts waiting behind the one scheduled (post()).
  struct PostChain {
    std::vector<std::pair<SimTime, MessageId>> queue;
    std::size_t head = 0;
    SimTime tail;         // time of the last post in the chain
    bool active = false;  // a chained post event is scheduled
  };
  std::vector<PostChain> post_chains_;
  // Send engines (params_.send_engines > 0), per endpoint: engines in use,
  // and the posted messages waiting for one (FIFO from head).
  struct Engines {
    std::uint32_t busy = 0;
    std::uint32_t head = 0;
    std::vector<MessageId> waiting;
  };
  std::vector<Engines> engines_;
  /// A message's first move: it joins the NIC's injection lists.
  void start_message(MessageId id);
  /// Message `id` has sent its last packet: its engine takes the next waiting message.
  void release_engine(EndpointId src);
  core::Simulator::BindingId relay_binding_ = 0;
  // Route rules (direct topologies): the moves offered at a hop.
  const StateRoutes* rules_ = nullptr;
  std::vector<StateRoutes::Option> opts_;
  // Duato-style rules (adaptive moves besides escape moves): a packet
  // takes an adaptive channel only if the buffer behind it has room for the
  // packet beyond what is already promised to packets queued for it, and
  // that room stays promised until it leaves (reserved_, per (link, vc)).
  // A packet waiting for an adaptive channel therefore never waits for
  // credits, and the escape channels, acyclic, carry the rest: the routing
  // decision is made once, on arrival, so without the promise a packet
  // could wait forever on a cyclic adaptive channel.
  bool duato_ = false;
  std::vector<std::int64_t> reserved_;
  // Adaptive injection at forwarding endpoints: the first moves of each
  // such message (inj_[inj_at_[id] ..]), one per first-hop link, computed
  // once when it is posted.
  struct FirstMove {
    LinkId link;
    std::uint8_t vc;
    std::uint8_t state;
  };
  std::vector<FirstMove> inj_;
  // Pinned routes (TopoOpt's coin routes, Network::pin).
  RouteStore store_;
  std::vector<LinkId> scratch_path_;
  std::vector<std::uint32_t> inj_at_;  // per message; kNoPacket if none
  core::Simulator::BindingId delivered_binding_ = 0;
  core::Simulator::BindingId sent_binding_ = 0;

  // Link state ([[failures]], link_state.hpp): off (failures_ false) unless
  // a schedule was given, so a run without one pays a branch per decision.
  // The mask holds every link of the fabric on every rank (a change depends
  // on time only); what a change strands is counted where it was.
  bool failures_ = false;
  LinkStateRun links_state_;
  const LinkState* link_state_ = nullptr;  // links_state_'s mask
  LiveRoutes* live_ = nullptr;
  SimTime next_change_ = SimTime::max();  // the last-hop shortcut (deliver()) stops before it
  core::Simulator::BindingId change_binding_ = 0;
  std::vector<std::uint64_t> stranded_packets_;  // per local link
  std::vector<std::uint64_t> stranded_bytes_;
  std::vector<PortIndex> live_cands_;
  /// The output went down: strand what waits for it (VOQs), fail the NIC's
  /// messages that have no other first hop.
  void strand_output(LinkId o);
  /// Counts packet p stranded at local link `at` and frees it.
  void count_stranded(LinkId at, std::uint32_t p);
  /// Packet p, arrived over `in` (in its buffer if `buffered`), cannot go on.
  void strand_at_input(LinkId in, std::uint32_t p, bool buffered);
  /// Message id's bytes not yet sent will never be: counted, its engine freed.
  void fail_unsent(MessageId id);
  // Reconfiguration (pause_flows .. resume_flows, hold_unroutable,
  // spread_pinned_hops): the NICs inject nothing while paused_; held_ has
  // the messages of this process's sources that wait for resume_flows at
  // their NIC (a first hop gone dark while paused; under hold_, no live
  // pinned route).
  bool paused_ = false;
  bool hold_ = false;
  bool spread_ = false;
  std::vector<LinkId> parallel_;  // parallel_links(), with spread_
  std::vector<MessageId> held_;
  /// Whether pinned hop g (topology id) can be taken: it is up, or (spread_) a parallel link is.
  bool hop_live(LinkId g) const;
  /// Whether message id may start now: pinned with every hop live, or unpinned and not hold_.
  bool can_start(MessageId id) const;
  /// Takes message id out of every NIC round of its source (it waits in
  /// held_ or on a new first hop); whether it was in one.
  bool leave_nic_rounds(MessageId id);
  /// A pinned message joins the round of its route's first hop (spread_ at
  /// a forwarding endpoint: of every live link parallel to it) and arbitrates.
  void join_pinned(MessageId id);
  /// spread_: the least occupied (on channel vc) live link parallel to g
  /// (topology ids; g itself among them), kNoLink if none is live.
  LinkId spread_hop(LinkId g, std::uint8_t vc);
  /// The candidates (ports of `at`) that still lead to pkt.dst over live links.
  std::span<const PortIndex> live_candidates(NodeId at, const Packet& pkt, std::span<const PortIndex> cands);
  /// Keeps the moves in opts_ (global link ids) that still reach `target` over live links.
  void live_options(const StateRoutes& r, std::uint32_t target);

 public:
  // What the constructor and build_state() allocate (keep in step with
  // them): per local link, per link of the fabric, per node.
  static std::uint64_t state_bytes(std::uint64_t nodes, std::uint64_t links, std::uint64_t local_links,
                                   std::uint32_t vcs, bool duato, bool series) {
    std::uint64_t per_local = sizeof(core::Link) + sizeof(OutPort) + sizeof(InPort) + sizeof(LinkInfo) +
                              vcs * sizeof(CreditState) + sizeof(NicRound) +  // NIC
                              3 * sizeof(LinkId) +  // wake, outputs
                              8 * sizeof(std::uint64_t) +  // the output's counters (local_stats_)
                              sizeof(HopBytes) +
                              1 +    // credit_waiting_ bit, rounded up
                              sizeof(std::uint32_t) + sizeof(SimTime) +  // wait_vcs_, credit_wake_
                              128;   // in use: VOQ and NIC lists, packets and events in flight (measured,
                                     // 16k Hx2Mesh alltoall: about 25 MiB over 163,840 links)
    if (duato) per_local += vcs * sizeof(std::int64_t);
    if (series) per_local += 2 * (sizeof(std::vector<std::uint64_t>) + sizeof(OpenBin));
    const std::uint64_t per_link = sizeof(LinkId);  // local_
    const std::uint64_t per_node = sizeof(std::uint8_t) + 3 * sizeof(std::size_t) + sizeof(std::uint64_t) +
                                   sizeof(std::vector<SimTime>) + sizeof(util::RandomStream) +
                                   sizeof(std::uint64_t) +  // the simulator's per-entity sequence
                                   sizeof(PostChain) + sizeof(Engines);  // per endpoint, counted per node
    return local_links * per_local + links * per_link + nodes * per_node;
  }

 private:
  SimTime ser(std::uint32_t bytes, LinkId l) const {
    return bytes == params_.packet_bytes ? port_[l].full_ser : core::serialization_time(bytes, li_[l].gbps);
  }
  SimTime xbar_time(std::uint32_t bytes, LinkId in) const {
    return bytes == params_.packet_bytes ? in_[in].full_xbar
                                         : core::serialization_time(bytes, li_[in].gbps * params_.crossbar_speedup);
  }
  std::uint32_t alloc_packet();
  void free_packet(std::uint32_t p) { free_packets_.push_back(p); }
  /// What routing reads of message `id` (src, dst, flow_port): its record,
  /// or where messages are described, its description (a process a packet
  /// only passes makes no record), in scratch_route_.
  const Message& route_record(MessageId id) {
    const Described* d = description(id);
    if (d == nullptr) [[likely]]
      return messages_[id];
    scratch_route_.src = d->src;
    scratch_route_.dst = d->dst;
    scratch_route_.flow_port = flow_port_of(id);
    return scratch_route_;
  }
  std::uint16_t flow_port_of(MessageId id) const;
  /// Pins message `id`'s listed-paths route (network.listed_paths).
  void pin_listed(MessageId id, EndpointId src, EndpointId dst);
  /// Where messages are described: makes record `id` from its description
  /// if it is not made here (its first packet arriving at its receiver's
  /// process before the receiver's node was read).
  void make_described(MessageId id) {
    if (!described_.empty() && id < described_.size() && messages_[id].bytes == 0) [[unlikely]] {
      const Described& d = described_[id];
      FABRICSIM_ASSERT(d.bytes != 0, "a packet of a message neither made nor described");
      create(id, d.src, d.dst, d.bytes, 0);
    }
  }
  Message scratch_route_;
  LinkId choose_output(NodeId at, const Packet& pkt, const Message& msg);
  /// Route rules: the move a packet in state pkt.state at `at` makes (its
  /// Valiant / UGAL leg decided and updated in pkt.aux); an index into opts_.
  std::size_t choose_move(NodeId at, Packet& pkt, const Message& msg);
  /// Index of the option choose_move() takes among opts_ (by the algorithm).
  std::size_t pick_option(NodeId at, const Message& msg, std::uint32_t bytes);
  /// Bytes queued for output o plus bytes sent on (o, vc) not yet credited.
  std::int64_t occupancy(LinkId o, std::size_t vc) {
    const std::size_t k = static_cast<std::size_t>(o) * params_.vcs + vc;
    const std::int64_t credits = cs_[k].due > sim_.now() ? cs_[k].credits : absorb_credits(k);
    return static_cast<std::int64_t>(port_[o].queued + params_.buffer_bytes) - credits;
  }
  /// UGAL-G: occupancy summed along the least-occupied walk from `at` to the target.
  std::int64_t path_occupancy(const StateRoutes& r, NodeId at, std::uint8_t state, std::uint32_t target,
                              std::uint8_t* end_state, NodeId* end_node);
  void route_in(LinkId in, std::uint32_t p);
  void arbitrate_mixed(LinkId o);
  /// Valiant / UGAL: a random intermediate group other than gs and gd,
  /// drawn from node at's stream, as group + 1; 0 when there is none.
  std::uint16_t draw_group(NodeId at, std::uint32_t gs, std::uint32_t gd);
  void note_queue(LinkId o);
  /// Time-series interval index of time t; doubles the interval (merging
  /// pairs of bins) when t would need more than max_intervals_ bins.
  std::size_t series_index(SimTime t);
  /// A round-robin order over a list of n entries (a switch output's VOQs,
  /// a NIC's messages) from pointer rr: where it goes next (0 when empty).
  static std::size_t round_next(std::uint32_t rr, std::size_t n) { return n == 0 ? 0 : (rr < n ? rr : rr % n); }
  /// Inserts `v` last in that order: just before the pointer, which moves past it.
  template <class T>
  static void insert_last_in_round(std::vector<T>& list, std::uint32_t& rr, const T& v) {
    const std::size_t at = round_next(rr, list.size());
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(at), v);
    rr = static_cast<std::uint32_t>(at + 1);
  }
  void arbitrate(LinkId o);
  bool arbitrate_switch(LinkId o);  // true if a packet was sent
  bool arbitrate_nic(LinkId o);
  /// Message `id` joins output o's round-robin order last, just before the pointer.
  void join_nic_round(LinkId o, MessageId id);
  /// Message `id` leaves output o's order (an adaptive injection sent it elsewhere).
  void leave_nic_round(LinkId o, MessageId id);
  void schedule_wake(LinkId o, SimTime at);
  void start_transmission(LinkId o, std::uint32_t p, SimTime start);
  void return_credit(LinkId in, std::uint8_t vc, std::uint32_t bytes, SimTime depart);
  void add_pending_credit(LinkId out, std::uint8_t vc, std::uint32_t bytes, SimTime at);
  /// Credits of (out, vc) usable now, after absorbing the pending ones due.
  std::int64_t available_credits(LinkId out, std::uint8_t vc) {
    const std::size_t k = static_cast<std::size_t>(out) * params_.vcs + vc;
    return cs_[k].due > sim_.now() ? cs_[k].credits : absorb_credits(k);
  }
  std::int64_t absorb_credits(std::size_t k);
  /// Room on (out, vc) that a packet moving in route state `state` may
  /// take: the credits usable now, less, on an adaptive channel of Duato's
  /// scheme, the room promised to packets in transit queued for it
  /// (reserved_).  Escape channels keep all of it.  The one rule for both
  /// a switch's adaptive pick (pick_option) and a NIC's injection.
  std::int64_t adaptive_room(LinkId out, std::uint8_t vc, std::uint8_t state) {
    std::int64_t room = available_credits(out, vc);
    if (duato_ && !rules_->rules().escape(state)) room -= reserved_[static_cast<std::size_t>(out) * params_.vcs + vc];
    return room;
  }
  /// Earliest pending credit among the VCs in `vc_mask` (after their due
  /// credits were absorbed, so it lies in the future), or max().
  SimTime next_credit_time(LinkId out, std::uint32_t vc_mask) const;
  /// Marks the output as blocked on credits of the channels in vc_mask;
  /// returns when the next pending one arrives (max() if none is on its way
  /// yet).  A credit returned later and due earlier wakes it then.
  SimTime wait_for_credits(LinkId o, std::uint32_t vc_mask);
  // The channels the last wait_for_credits watched; and, while a
  // forwarding endpoint's output arbitrates its NIC after its in-transit
  // packets blocked on credits in the same pass, theirs, which the NIC's
  // wait then adds to its own instead of replacing them (arbitrate_mixed).
  std::uint32_t last_wait_vcs_ = 0;
  std::uint32_t pass_wait_vcs_ = 0;
  void on_packet(LinkId in, std::uint32_t p);
  /// The packet's tail reaches its destination endpoint over `in` at `tail`.
  void deliver(LinkId in, std::uint32_t p, SimTime tail);
};

}  // namespace fabricsim::net
