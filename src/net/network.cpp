#include "fabricsim/net/network.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "fabricsim/core/link.hpp"
#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/updown.hpp"
#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {

using core::SimTime;

RoutingAlgorithm parse_routing_algorithm(const std::string& name) {
  if (name == "ecmp") return RoutingAlgorithm::Ecmp;
  if (name == "spray") return RoutingAlgorithm::Spray;
  if (name == "adaptive") return RoutingAlgorithm::Adaptive;
  if (name == "dmodk") return RoutingAlgorithm::DmodK;
  if (name == "dor") return RoutingAlgorithm::Dor;
  if (name == "minimal") return RoutingAlgorithm::Minimal;
  if (name == "valiant") return RoutingAlgorithm::Valiant;
  if (name == "ugal_local") return RoutingAlgorithm::UgalLocal;
  if (name == "ugal_global") return RoutingAlgorithm::UgalGlobal;
  throw util::ConfigError("routing.algorithm: unknown algorithm '" + name + "'");
}

EcmpHash parse_ecmp_hash(const std::string& name) {
  if (name == "mix64") return EcmpHash::Mix64;
  if (name == "crc32") return EcmpHash::Crc32;
  throw util::ConfigError("routing.ecmp_hash: unknown hash '" + name + "'");
}

namespace {

constexpr std::uint32_t kNoPacket = 0xFFFFFFFFu;
constexpr std::uint32_t kCreditFlag = 0x80000000u;
// Packet::aux: 0 = route to the destination; g + 1 = first go to group g
// (Valiant); kUndecided = UGAL decides at the first router.
constexpr std::uint16_t kUndecided = 0xFFFF;
constexpr std::uint16_t kRoceDstPort = 4791;
constexpr std::uint8_t kUdp = 17;

// Event priorities among events at the same time: credits first (so that a
// packet arriving at the same instant sees them), then output wake-ups, packet
// arrivals, message posts and completions.
constexpr std::uint32_t kPrioCredit = 0;
constexpr std::uint32_t kPrioWake = 1;
constexpr std::uint32_t kPrioPacket = 2;
constexpr std::uint32_t kPrioPost = 3;
constexpr std::uint32_t kPrioDelivered = 4;
// Message completions are keyed by message (schedule_keyed_bound) rather than
// by the endpoint's event counter: a completion is then ordered the same
// whether its last packet's arrival was an event here, an event after a
// record from another rank, or accounted when the last hop started
// (NetworkImpl::deliver).  The tag's top bit keeps it apart from the
// counter-keyed `sent` events of the same endpoint and priority (counters
// stay far below 2^31), which go first at the same instant.
constexpr std::uint32_t kDeliveredTag = 0x8000'0000u;

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
};
static_assert(sizeof(Packet) == 32, "two packets per cache line");

// A credit on its way back to the sender: usable from `time` on.
struct PendingCredit {
  SimTime time;
  std::uint32_t bytes;
  std::uint32_t next;
};

std::uint32_t crc32_bytes(const std::uint8_t* p, std::size_t n, std::uint32_t crc) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

}  // namespace

class NetworkImpl {
 public:
  NetworkImpl(const Topology& topo, const NetworkParams& params, core::Simulator& sim);

  MessageId send(EndpointId src, EndpointId dst, std::uint64_t bytes, SimTime at, std::uint32_t tag);
  MessageId create(EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint32_t tag);
  void post(MessageId id, SimTime at);

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
  void sync_stats();  // copies the per-port counters into stats_ (max_queue_bytes is kept there)
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
  // that feed it and hold packets) in a small array, in the order they
  // became non-empty, which is also the round-robin order.  A dense
  // [input x output] table would be mostly empty and, at megabytes for a
  // 64-port fabric, a cache miss on every packet.
  struct Voq {
    std::uint32_t head;        // FIFO of packets through Packet::next
    std::uint32_t tail;
    LinkId in;                 // input link of the queue
    std::uint8_t vc;           // virtual channel of the input buffer
    std::uint8_t out_vc;       // virtual channel requested on the output (route rules may change it per hop)
  };
  std::vector<std::vector<MessageId>> nic_active_;       // endpoint outputs: messages with data left

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
  void set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink);
  void receive(const core::RemoteRecord& r);

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
  // Per local link: the largest queue, and the time series (moved into
  // stats_, by the topology's ids, when the run finishes).
  std::vector<std::uint64_t> max_queue_;
  std::vector<std::vector<std::uint64_t>> series_tx_;
  std::vector<std::vector<std::uint64_t>> series_queue_;
  bool series_moved_ = false;
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
  // k-shortest-path routing: each message's links (paths_[path_at_[id] ..]).
  std::vector<LinkId> paths_;
  std::vector<std::uint32_t> path_at_;
  std::vector<std::uint32_t> inj_at_;  // per message; kNoPacket if none
  core::Simulator::BindingId delivered_binding_ = 0;
  core::Simulator::BindingId sent_binding_ = 0;

 public:
  // What the constructor and build_state() allocate (keep in step with
  // them): per local link, per link of the fabric, per node.
  static std::uint64_t state_bytes(std::uint64_t nodes, std::uint64_t links, std::uint64_t local_links,
                                   std::uint32_t vcs, bool duato, bool series) {
    std::uint64_t per_local = sizeof(core::Link) + sizeof(OutPort) + sizeof(InPort) + sizeof(LinkInfo) +
                              vcs * sizeof(CreditState) + sizeof(std::vector<MessageId>) +  // NIC
                              3 * sizeof(LinkId) + sizeof(std::uint64_t) +  // wake, outputs, largest queue
                              1;  // credit_waiting_ bit, rounded up
    if (duato) per_local += vcs * sizeof(std::int64_t);
    if (series) per_local += 2 * (sizeof(std::vector<std::uint64_t>) + sizeof(OpenBin));
    // local_, and the output's counters (and series vectors) by the topology's ids.
    std::uint64_t per_link = sizeof(LinkId) + 6 * sizeof(std::uint64_t);
    if (series) per_link += 2 * sizeof(std::vector<std::uint64_t>);
    const std::uint64_t per_node = sizeof(std::uint8_t) + 3 * sizeof(std::size_t) + sizeof(std::uint64_t) +
                                   sizeof(std::vector<SimTime>) + sizeof(util::RandomStream) +
                                   sizeof(std::uint64_t);  // the simulator's per-entity sequence
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
  std::uint64_t ecmp_hash(NodeId at, const Message& msg) const;
  void note_queue(LinkId o);
  /// Time-series interval index of time t; doubles the interval (merging
  /// pairs of bins) when t would need more than max_intervals_ bins.
  std::size_t series_index(SimTime t);
  void arbitrate(LinkId o);
  bool arbitrate_switch(LinkId o);  // true if a packet was sent
  bool arbitrate_nic(LinkId o);
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
  /// Earliest pending credit among the VCs in `vc_mask` (after their due
  /// credits were absorbed, so it lies in the future), or max().
  SimTime next_credit_time(LinkId out, std::uint32_t vc_mask) const;
  /// Marks the output as blocked on credits; returns when the next pending
  /// credit arrives (max() if none is on its way yet).
  SimTime wait_for_credits(LinkId o, std::uint32_t vc_mask);
  void on_packet(LinkId in, std::uint32_t p);
  /// The packet's tail reaches its destination endpoint over `in` at `tail`.
  void deliver(LinkId in, std::uint32_t p, SimTime tail);
};

NetworkImpl::NetworkImpl(const Topology& topo, const NetworkParams& params, core::Simulator& sim)
    : topo_(topo), params_(params), sim_(sim) {
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
  const bool valiant = params_.routing == RoutingAlgorithm::Valiant || params_.routing == RoutingAlgorithm::UgalLocal ||
                       params_.routing == RoutingAlgorithm::UgalGlobal;
  if (valiant && (!rules_ || !params_.valiant_routes || params_.group_of.size() != topo_.node_count()))
    throw util::ConfigError("routing.algorithm: valiant and ugal_* route Dragonfly topologies only");
  if (rules_)
    for (std::uint8_t s = 0; s < rules_->rules().state_count(); ++s) duato_ = duato_ || !rules_->rules().escape(s);
  relay_binding_ = sim_.bind(core::Simulator::handler<NetworkImpl, &NetworkImpl::on_relay>(), this);
  owned_.assign(topo_.node_count(), 1);
  wake_times_.resize(topo_.node_count());
  interval_ = params_.interval;
  // The same on every rank (it sets when the series coarsen): the whole
  // fabric's link count.
  const std::size_t nl = topo_.link_count();
  max_intervals_ = std::clamp<std::size_t>((std::size_t{1} << 24) / std::max<std::size_t>(nl, 1), 64, 1u << 16);
  node_rng_.reserve(topo_.node_count());
  for (NodeId n = 0; n < topo_.node_count(); ++n) node_rng_.emplace_back(params_.seed, 0x5350'0000'0000ull + n);

  // D-mod-k: at a switch of level l the up-port index is (dst / prod of the
  // up-port counts of the levels below) mod k.
  std::uint8_t max_level = 0;
  for (const auto& n : topo_.nodes()) max_level = std::max(max_level, n.level);
  std::vector<std::uint32_t> up_ports(max_level + 2u, 1);
  for (const auto& n : topo_.nodes()) {
    if (n.kind != NodeKind::Switch) continue;
    std::uint32_t up = 0;
    for (LinkId l : n.out)
      if (topo_.nodes()[topo_.links()[l].dst].level > n.level) ++up;
    up_ports[n.level] = std::max(up_ports[n.level], std::max(up, 1u));
  }
  dmodk_divisor_.assign(max_level + 2u, 1);
  for (std::size_t lv = 2; lv < dmodk_divisor_.size(); ++lv)
    dmodk_divisor_[lv] = dmodk_divisor_[lv - 1] * up_ports[lv - 1];
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
  cs_.assign(nloc * vcs,
             CreditState{static_cast<std::int64_t>(params_.buffer_bytes), SimTime::max(), kNoPacket, kNoPacket, 0});
  min_credits_ = static_cast<std::int64_t>(params_.buffer_bytes);
  li_.resize(nloc);
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
  max_queue_.assign(nloc, 0);
  if (params_.interval > SimTime::zero()) {
    series_tx_.resize(nloc);
    series_queue_.resize(nloc);
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

MessageId NetworkImpl::send(EndpointId src, EndpointId dst, std::uint64_t bytes, SimTime at, std::uint32_t tag) {
  const MessageId id = create(src, dst, bytes, tag);
  post(id, at);
  return id;
}

void NetworkImpl::post(MessageId id, SimTime at) {
  ensure_state();
  Message& m = messages_[id];
  FABRICSIM_ASSERT(m.post_time == SimTime::max(), "message posted twice");
  m.post_time = at;
  const NodeId node = topo_.endpoint_node(m.src);
  // Every process knows every message (ids stay global); the process that
  // simulates the source posts it.
  if (owned_[node]) sim_.schedule_bound(at, kPrioPost, node, post_binding_, id);
}

MessageId NetworkImpl::create(EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint32_t tag) {
  FABRICSIM_ASSERT(src < topo_.endpoint_count() && dst < topo_.endpoint_count(), "endpoint out of range");
  FABRICSIM_ASSERT(src != dst, "message to itself");
  FABRICSIM_ASSERT(bytes > 0, "empty message");
  const auto id = static_cast<MessageId>(messages_.size());
  Message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.tag = tag;
  m.vc = static_cast<std::uint8_t>(tag % params_.vcs);
  // Ephemeral source port: a deterministic function of the message, so the
  // ECMP path of a flow does not depend on anything but (seed, message).
  m.flow_port = static_cast<std::uint16_t>(49152u + util::hash2(params_.seed, id) % 16384u);
  m.post_time = SimTime::max();
  m.packets = static_cast<std::uint32_t>((bytes + payload_per_packet_ - 1) / payload_per_packet_);
  messages_.push_back(m);
  if (params_.coin_paths) {
    // One route per message, uniformly among the k of its pair (every
    // process computes the same).
    path_at_.push_back(static_cast<std::uint32_t>(paths_.size()));
    const std::size_t count = params_.coin_paths->count(src, dst);
    params_.coin_paths->path(src, dst, util::hash2(params_.seed ^ 0x4B50'4154'4853ull, id) % count, paths_);
  }
  return id;
}

std::uint64_t NetworkImpl::ecmp_hash(NodeId at, const Message& msg) const {
  // Each switch mixes its own id into the seed, as real switches do, so that
  // consecutive hops do not make correlated choices (hash polarization).
  const std::uint64_t seed = util::hash2(params_.ecmp_seed, at);
  if (params_.ecmp_hash == EcmpHash::Crc32) {
    std::array<std::uint8_t, 13> t{};
    auto put32 = [&](std::size_t o, std::uint32_t v) {
      for (int i = 0; i < 4; ++i) t[o + i] = static_cast<std::uint8_t>(v >> (8 * i));
    };
    put32(0, msg.src);
    put32(4, msg.dst);
    t[8] = static_cast<std::uint8_t>(msg.flow_port);
    t[9] = static_cast<std::uint8_t>(msg.flow_port >> 8);
    t[10] = static_cast<std::uint8_t>(kRoceDstPort);
    t[11] = static_cast<std::uint8_t>(kRoceDstPort >> 8);
    t[12] = kUdp;
    return crc32_bytes(t.data(), t.size(), static_cast<std::uint32_t>(seed));
  }
  std::uint64_t h = util::hash2(seed, (static_cast<std::uint64_t>(msg.src) << 32) | msg.dst);
  h = util::hash2(h, (static_cast<std::uint64_t>(msg.flow_port) << 24) | (std::uint64_t{kRoceDstPort} << 8) | kUdp);
  return h;
}

LinkId NetworkImpl::choose_output(NodeId at, const Packet& pkt, const Message& msg) {
  std::span<const PortIndex> cands;
  if (updown_) {
    updown_cands_.clear();
    updown_->candidates(at, pkt.down, pkt.dst, updown_cands_);
    cands = updown_cands_;
  } else {
    cands = routes_->candidates(at, pkt.dst);
  }
  FABRICSIM_ASSERT(!cands.empty(), "no route");
  const Node& node = topo_.nodes()[at];
  const LinkId* outs = out_local_.data() + out_base_[at];  // local ids, by port
  std::size_t k = cands.size();
  std::size_t pick = 0;
  if (k > 1) {
    switch (params_.routing) {
      case RoutingAlgorithm::Ecmp: pick = ecmp_hash(at, msg) % k; break;
      case RoutingAlgorithm::Spray: pick = node_rng_[at].below(k); break;
      case RoutingAlgorithm::DmodK: {
        // Up: digit of the destination for this level.  Down, among
        // parallel cables: the lowest digit, so that flows to different
        // endpoints of one leaf take different cables.
        const bool down = topo_.nodes()[li_[outs[cands[0]]].dst].level < node.level;
        pick = down ? pkt.dst % k : (pkt.dst / dmodk_divisor_[node.level]) % k;
        break;
      }
      case RoutingAlgorithm::Adaptive: {
        // Least loaded: bytes queued for the output plus bytes sent but not
        // yet credited back by the next hop; ties go to the lowest port.
        // The loop runs over up to a switch's radix of ports for most
        // packets: invariants in locals, raw pointers (no reloads through
        // `this` after each store the compiler cannot see through).
        std::int64_t best = INT64_MAX;
        const OutPort* ports = port_.data();
        CreditState* credit = cs_.data();
        const SimTime now = sim_.now();
        const auto buffer = static_cast<std::int64_t>(params_.buffer_bytes);
        const std::size_t vcs = params_.vcs;
        const std::size_t vc = pkt.vc;
        if (vcs == 1) {
          // The same loop for one vc (the credit record is the link's), on
          // OutPort::queued_less_credits (the buffer size, common to every
          // candidate, left out): one load and one add per candidate in the
          // hottest loop of a fat tree.
          for (std::size_t i = 0; i < k; ++i) {
            const LinkId o = outs[cands[i]];
            if (credit[o].due <= now) absorb_credits(o);
            FABRICSIM_DEBUG_ASSERT(ports[o].queued_less_credits ==
                                       static_cast<std::int64_t>(ports[o].queued) - credit[o].credits,
                                   "queued_less_credits out of step");
            const std::int64_t load = ports[o].queued_less_credits + (now < ports[o].busy_until ? 1 : 0);
            if (load < best) {
              best = load;
              pick = i;
            }
          }
          break;
        }
        for (std::size_t i = 0; i < k; ++i) {
          const LinkId o = outs[cands[i]];
          const std::size_t ck = static_cast<std::size_t>(o) * vcs + vc;
          std::int64_t load = static_cast<std::int64_t>(ports[o].queued) + buffer + (now < ports[o].busy_until ? 1 : 0);
          load -= credit[ck].due > now ? credit[ck].credits : absorb_credits(ck);
          if (load < best) {
            best = load;
            pick = i;
          }
        }
        break;
      }
      default: break;  // the direct-topology algorithms (the scenario keeps them off the trees)
    }
  }
  return outs[cands[pick]];
}

void NetworkImpl::note_queue(LinkId o) {
  const std::uint64_t q = port_[o].queued;
  // The largest queue goes straight into the (small, dense) output array.
  if (q > max_queue_[o]) max_queue_[o] = q;
  if (interval_ > SimTime::zero()) {
    OpenBin& b = queue_bin_[o];
    if (sim_.now().ps() >= b.end_ps) roll_bin(b, series_queue_[o], sim_.now(), false);
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
  for (auto& s : series_tx_) {
    for (std::size_t i = 0; 2 * i < s.size(); ++i) s[i] = s[2 * i] + (2 * i + 1 < s.size() ? s[2 * i + 1] : 0);
    s.resize((s.size() + 1) / 2);
  }
  for (auto& s : series_queue_) {
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

void NetworkImpl::sync_stats() {
  ensure_state();
  // By the topology's ids (zero where this process simulates neither end).
  const std::size_t nl = topo_.link_count();
  for (auto* v : {&stats_.tx_bytes, &stats_.tx_packets, &stats_.max_queue_bytes}) v->resize(nl, 0);
  for (auto* v : {&stats_.busy_ps, &stats_.stall_ps}) v->resize(nl, 0);
  stats_.flows.resize(nl, 0);
  for (std::size_t o = 0; o < port_.size(); ++o) {
    const OutPort& c = port_[o];
    const LinkId g = li_[o].global;
    stats_.tx_bytes[g] = c.tx_bytes;
    stats_.tx_packets[g] = c.tx_packets;
    stats_.busy_ps[g] = c.busy_ps;
    stats_.stall_ps[g] = c.stall_ps;
    stats_.flows[g] = c.flows;
    stats_.max_queue_bytes[g] = max_queue_[o];
  }
  if (interval_ > SimTime::zero() && !series_moved_) {  // (after the run's end they were moved there)
    stats_.series_tx_bytes.resize(nl);
    stats_.series_queue_bytes.resize(nl);
    for (std::size_t o = 0; o < series_tx_.size(); ++o) {
      stats_.series_tx_bytes[li_[o].global] = series_tx_[o];
      stats_.series_queue_bytes[li_[o].global] = series_queue_[o];
    }
  }
}

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

void NetworkImpl::deliver(LinkId in, std::uint32_t p, SimTime tail) {
  // The NIC consumes the packet as its tail arrives and returns the buffer
  // space at once.
  Packet& pkt = packets_[p];
  Message& m = messages_[pkt.msg];
  const std::uint32_t payload = pkt.bytes - params_.header_bytes;
  m.received_payload += payload;
  ++totals_.packets_delivered;
  totals_.bytes_delivered += payload;
  --in_flight_;
  return_credit(in, pkt.vc, pkt.bytes, tail);
  if (m.received_payload == m.bytes) {
    m.end_time = tail;
    ++totals_.messages_delivered;
    sim_.schedule_keyed_bound(tail, kPrioDelivered, in_[in].dst, kDeliveredTag | pkt.msg, delivered_binding_,
                              pkt.msg);
  }
  free_packet(p);
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
  if (rules_) {
    const StateRoutes::Option& o = opts_[choose_move(at, pkt, messages_[pkt.msg])];
    out = o.link;
    out_vc = o.vc;
    pkt.state = o.state;  // read at the next hop; the buffer held here is still pkt.vc's
    if (duato_ && !rules_->rules().escape(o.state))
      reserved_[static_cast<std::size_t>(out) * params_.vcs + out_vc] += pkt.bytes;
  } else {
    out = choose_output(at, pkt, messages_[pkt.msg]);
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
  req.push_back(Voq{p, p, in, pkt.vc, out_vc});
  arbitrate(out);
}

std::size_t NetworkImpl::pick_option(NodeId at, const Message& msg, std::uint32_t bytes) {
  if (duato_ && bytes > 0) {
    // Adaptive moves only with room promised downstream (see reserved_).
    std::size_t kept = 0;
    for (const auto& o : opts_) {
      const std::size_t k = static_cast<std::size_t>(o.link) * params_.vcs + o.vc;
      if (rules_->rules().escape(o.state) || available_credits(o.link, o.vc) - reserved_[k] >= bytes)
        opts_[kept++] = o;
    }
    opts_.resize(kept);
  }
  const std::size_t k = opts_.size();
  FABRICSIM_ASSERT(k > 0, "route rules offer no move");
  if (k == 1) return 0;
  switch (params_.routing) {
    case RoutingAlgorithm::Ecmp: return ecmp_hash(at, msg) % k;
    case RoutingAlgorithm::Spray: return node_rng_[at].below(k);
    case RoutingAlgorithm::Adaptive:
    case RoutingAlgorithm::Valiant:
    case RoutingAlgorithm::UgalLocal:
    case RoutingAlgorithm::UgalGlobal: {
      // Least occupied (queued plus uncredited bytes), then idle before
      // busy; ties to the first option (the lowest port).
      std::size_t pick = 0;
      std::int64_t best = INT64_MAX;
      const SimTime now = sim_.now();
      for (std::size_t i = 0; i < k; ++i) {
        const LinkId o = opts_[i].link;
        const std::int64_t load = 2 * occupancy(o, opts_[i].vc) + (now < port_[o].busy_until ? 1 : 0);
        if (load < best) {
          best = load;
          pick = i;
        }
      }
      return pick;
    }
    default: return 0;  // dor, minimal, dmodk: the first move the rules offer
  }
}

std::int64_t NetworkImpl::path_occupancy(const StateRoutes& r, NodeId at, std::uint8_t state, std::uint32_t target,
                                         std::uint8_t* end_state, NodeId* end_node) {
  std::int64_t sum = 0;
  std::vector<StateRoutes::Option> o;
  while (!r.is_target(at, target)) {
    o.clear();
    r.options(at, state, target, o);
    if (o.empty()) break;
    std::size_t pick = 0;
    std::int64_t best = INT64_MAX;
    for (std::size_t i = 0; i < o.size(); ++i) {
      const std::int64_t q = occupancy(local_[o[i].link], o[i].vc);
      if (q < best) {
        best = q;
        pick = i;
      }
    }
    sum += best;
    at = topo_.link(o[pick].link).dst;
    state = o[pick].state;
  }
  if (end_state) *end_state = state;
  if (end_node) *end_node = at;
  return sum;
}

std::size_t NetworkImpl::choose_move(NodeId at, Packet& pkt, const Message& msg) {
  if (params_.coin_paths) {
    // k-shortest paths: hop pkt.state of the message's route, on VC state.
    const LinkId l = local_[paths_[path_at_[pkt.msg] + pkt.state]];
    opts_.assign(1, StateRoutes::Option{0, l, static_cast<std::uint8_t>(pkt.state + 1), pkt.state});
    return 0;
  }
  const StateRoutes* r = rules_;
  std::uint32_t target = pkt.dst;
  if (pkt.aux == kUndecided && topo_.nodes()[at].kind == NodeKind::Switch) {
    // UGAL at the source router: minimal, or Valiant through a random
    // other group, whichever promises less queueing (local: the first
    // output's occupancy times the hops; global: the occupancy summed over
    // the whole path).
    const std::uint32_t groups = static_cast<std::uint32_t>(params_.valiant_routes->target_count());
    const std::uint32_t gs = params_.group_of[at];
    const std::uint32_t gd = params_.group_of[topo_.endpoint_node(pkt.dst)];
    pkt.aux = 0;
    if (gs != gd && groups > 2) {
      std::uint32_t g = static_cast<std::uint32_t>(node_rng_[at].below(groups - 2));
      for (std::uint32_t skip : {std::min(gs, gd), std::max(gs, gd)})
        if (g >= skip) ++g;
      std::int64_t q_min, q_val;
      if (params_.routing == RoutingAlgorithm::UgalGlobal) {
        q_min = path_occupancy(*rules_, at, pkt.state, pkt.dst, nullptr, nullptr);
        std::uint8_t s1;
        NodeId n1;
        q_val = path_occupancy(*params_.valiant_routes, at, pkt.state, g, &s1, &n1);
        q_val += path_occupancy(*rules_, n1, s1, pkt.dst, nullptr, nullptr);
      } else {
        const auto best_first = [&](const StateRoutes& routes, std::uint32_t t) {
          opts_.clear();
          routes.options(at, pkt.state, t, opts_);
          localize(opts_);
          std::int64_t q = INT64_MAX;
          for (const auto& o : opts_) q = std::min(q, occupancy(o.link, o.vc));
          return q;
        };
        // Hops of the Valiant route: to the group, then the best of its
        // routers on to the destination.
        std::uint32_t via = UINT32_MAX;
        for (NodeId n : params_.valiant_routes->target_nodes(g))
          via = std::min<std::uint32_t>(via, rules_->hops(n, static_cast<std::uint8_t>(pkt.state + 1), pkt.dst));
        const std::int64_t h_min = rules_->hops(at, pkt.state, pkt.dst);
        const std::int64_t h_val = params_.valiant_routes->hops(at, pkt.state, g) + static_cast<std::int64_t>(via);
        q_min = best_first(*rules_, pkt.dst) * h_min;
        q_val = best_first(*params_.valiant_routes, g) * h_val;
      }
      if (q_val < q_min) pkt.aux = static_cast<std::uint16_t>(g + 1);
    }
  }
  if (pkt.aux != 0 && pkt.aux != kUndecided) {
    const std::uint32_t g = pkt.aux - 1u;
    if (params_.group_of[at] == g) {
      pkt.aux = 0;  // reached the intermediate group: on to the destination
    } else {
      r = params_.valiant_routes;
      target = g;
    }
  }
  opts_.clear();
  r->options(at, pkt.state, target, opts_);
  localize(opts_);
  return pick_option(at, msg, pkt.bytes);
}

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
  std::uint64_t& waiting = credit_waiting_[out / 64];
  if (waiting & (std::uint64_t{1} << (out % 64))) {
    waiting &= ~(std::uint64_t{1} << (out % 64));
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
    if (!port_[o].requesters.empty() || !nic_active_[o].empty()) schedule_wake(o, port_[o].busy_until);
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
  if (!arbitrate_switch(o) && !arbitrate_nic(o)) return;
  if (!port_[o].requesters.empty() || !nic_active_[o].empty()) schedule_wake(o, port_[o].busy_until);
}

void NetworkImpl::start_transmission(LinkId o, std::uint32_t p, SimTime start) {
  Packet& pkt = packets_[p];
  const SimTime s = ser(pkt.bytes, o);
  port_[o].busy_until = start + s;
  std::int64_t& c = cs_[static_cast<std::size_t>(o) * params_.vcs + pkt.vc].credits;
  c -= pkt.bytes;
  if (c < min_credits_) min_credits_ = c;
  port_[o].queued_less_credits += pkt.bytes;  // meaningful with one vc only
  port_[o].tx_bytes += pkt.bytes;
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
    if (start.ps() >= b.end_ps) roll_bin(b, series_tx_[o], start, true);
    b.value += pkt.bytes;
  }
  const NodeId src = port_[o].src;
  // The arrival event fires once the head has crossed the link and the next
  // switch's traversal pipeline: the packet can then compete for an output.
  if (!port_[o].remote) {
    const SimTime arrive = start + port_[o].send_delay;
    if (port_[o].deliver && arrive < deliver_before_) {
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
                   pkt.vc | (pkt.first ? 0x100u : 0u) | (pkt.down ? 0x200u : 0u) | std::uint32_t{pkt.state} << 16,
                   (static_cast<std::uint64_t>(pkt.msg) << 32) | pkt.dst,
                   (static_cast<std::uint64_t>(pkt.bytes) << 32) | pkt.aux);
    free_packet(p);
    --in_flight_;
  }
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

bool NetworkImpl::arbitrate_switch(LinkId o) {
  auto& req = port_[o].requesters;
  if (req.empty()) return false;
  const SimTime now = sim_.now();
  const std::size_t n = req.size();
  const std::size_t start_idx = port_[o].rr < n ? port_[o].rr : port_[o].rr % n;
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
      port_[o].rr = static_cast<std::uint32_t>(idx);  // the next requester now sits at idx
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
    if (duato_ && !rules_->rules().escape(pkt.state))
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

SimTime NetworkImpl::wait_for_credits(LinkId o, std::uint32_t vc_mask) {
  if (port_[o].stall_since == SimTime::max()) port_[o].stall_since = sim_.now();
  const SimTime t = next_credit_time(o, vc_mask);
  FABRICSIM_DEBUG_ASSERT(t > sim_.now(), "a due credit was not absorbed");
  if (t == SimTime::max()) credit_waiting_[o / 64] |= std::uint64_t{1} << (o % 64);  // the next credit returned wakes it
  return t;
}

bool NetworkImpl::arbitrate_nic(LinkId o) {
  auto& act = nic_active_[o];
  if (act.empty()) return false;
  const std::size_t n = act.size();
  const std::size_t start_idx = port_[o].rr < n ? port_[o].rr : port_[o].rr % n;
  bool credit_blocked = false;
  std::uint32_t blocked_vcs = 0;
  for (std::size_t t = 0, idx = start_idx; t < n; ++t, idx = idx + 1 == n ? 0 : idx + 1) {
    const MessageId id = act[idx];
    Message& m = messages_[id];
    const std::uint64_t left = m.bytes - m.sent_payload;
    std::uint8_t vc = m.vc;
    std::uint8_t state = m.first_state;
    if (port_[o].mixed && id < inj_at_.size() && inj_at_[id] != kNoPacket) {
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
    if ((blocked_vcs >> vc & 1u) || available_credits(o, vc) < static_cast<std::int64_t>(bytes)) {
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
    pkt.first = m.sent_payload == 0;
    pkt.down = updown_ && updown_->is_down(li_[o].global);
    pkt.state = state;
    pkt.aux = 0;
    if (params_.routing == RoutingAlgorithm::Valiant) {
      // A random intermediate group other than the source's and the destination's.
      const auto groups = static_cast<std::uint32_t>(params_.valiant_routes->target_count());
      const std::uint32_t gs = params_.group_of[topo_.endpoint_node(m.src)];
      const std::uint32_t gd = params_.group_of[topo_.endpoint_node(m.dst)];
      if (gs != gd && groups > 2) {
        std::uint32_t g = static_cast<std::uint32_t>(node_rng_[port_[o].src].below(groups - 2));
        for (std::uint32_t skip : {std::min(gs, gd), std::max(gs, gd)})
          if (g >= skip) ++g;
        pkt.aux = static_cast<std::uint16_t>(g + 1);
      }
    } else if (params_.routing == RoutingAlgorithm::UgalLocal || params_.routing == RoutingAlgorithm::UgalGlobal) {
      pkt.aux = kUndecided;
    }
    m.sent_payload += payload;
    ++totals_.packets_injected;
    totals_.bytes_injected += payload;
    ++in_flight_;
    if (m.sent_payload == m.bytes) {
      act.erase(act.begin() + static_cast<std::ptrdiff_t>(idx));
      port_[o].rr = static_cast<std::uint32_t>(idx);
      if (port_[o].mixed && id < inj_at_.size() && inj_at_[id] != kNoPacket)  // adaptive injection: leave the other first hops
        for (std::uint32_t i = inj_at_[id]; inj_[i].link != kNoLink; ++i)
          if (inj_[i].link != o) std::erase(nic_active_[inj_[i].link], id);
    } else {
      port_[o].rr = static_cast<std::uint32_t>(idx + 1);
    }
    start_transmission(o, p, sim_.now());
    if (m.sent_payload == m.bytes && listener_ && listener_->wants_sent())
      sim_.schedule_bound(port_[o].busy_until, kPrioDelivered, port_[o].src, sent_binding_, id);
    if (!act.empty()) schedule_wake(o, port_[o].busy_until);
    return true;
  }
  if (credit_blocked) {
    const SimTime t = wait_for_credits(o, blocked_vcs);
    if (t != SimTime::max()) schedule_wake(o, t);
  }
  return false;
}

void NetworkImpl::set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink) {
  FABRICSIM_ASSERT(part.size() == topo_.node_count(), "partition size");
  // Messages may exist (a task graph is built first, so the partition can
  // weigh its traffic), but none may have been posted.
  FABRICSIM_ASSERT(std::all_of(messages_.begin(), messages_.end(), [](const Message& m) { return m.post_time == SimTime::max(); }),
                   "set_partition after messages were posted");
  FABRICSIM_ASSERT(!state_built_, "set_partition after the network state was built");
  sink_ = sink;
  for (NodeId n = 0; n < topo_.node_count(); ++n) owned_[n] = part[n] == rank ? 1 : 0;
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
  pkt.state = static_cast<std::uint8_t>(r.arg32 >> 16);
  pkt.aux = static_cast<std::uint16_t>(r.arg1 & 0xFFFF);
  pkt.next = kNoPacket;
  ++in_flight_;
  const LinkId l = local_[r.link];
  core::Event ev = links_[l].to_event(r);
  ev.arg32 = l;
  ev.arg0 = p;
  ev.arg1 = 0;
  sim_.insert(ev);
}

void NetworkImpl::on_post(const core::Event& ev) {
  const MessageId id = ev.arg32;
  Message& m = messages_[id];
  const NodeId node = topo_.endpoint_node(m.src);
  Packet probe{};
  probe.dst = m.dst;
  probe.vc = m.vc;
  LinkId o;
  if (params_.coin_paths) {
    o = local_[paths_[path_at_[id]]];
    m.vc = 0;
    m.first_state = 1;
  } else if (rules_) {
    // The first move of the message's route (all its packets take it).
    opts_.clear();
    rules_->options(node, rules_->rules().initial_state(), m.dst, opts_);
    localize(opts_);
    if (params_.routing == RoutingAlgorithm::Adaptive && topo_.nodes()[node].forwards && opts_.size() > 1) {
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
      for (LinkId l : firsts) nic_active_[l].push_back(id);
      for (LinkId l : firsts) arbitrate(l);
      return;
    }
    const StateRoutes::Option& opt = opts_[pick_option(node, m, 0)];
    o = opt.link;
    m.vc = opt.vc;
    m.first_state = opt.state;
  } else {
    o = choose_output(node, probe, m);
  }
  nic_active_[o].push_back(id);
  arbitrate(o);
}

void NetworkImpl::on_sent(const core::Event& ev) {
  if (listener_) listener_->on_message_sent(ev.arg32);
}

void NetworkImpl::on_delivered(const core::Event& ev) {
  if (listener_) listener_->on_message_delivered(ev.arg32);
}

// ------------------------------------------------------------------ Network

Network::Network(const Topology& topo, const NetworkParams& params, core::Simulator& sim)
    : impl_(std::make_unique<NetworkImpl>(topo, params, sim)) {}
Network::~Network() = default;

std::uint64_t Network::state_bytes(std::uint64_t nodes, std::uint64_t links, std::uint64_t local_links,
                                   std::uint32_t vcs, bool duato, bool series) {
  return NetworkImpl::state_bytes(nodes, links, local_links, vcs, duato, series);
}

std::uint64_t Network::message_bytes() { return sizeof(Message) + 2 * sizeof(std::uint32_t); }

MessageId Network::send(EndpointId src, EndpointId dst, std::uint64_t payload_bytes, SimTime at, std::uint32_t tag) {
  return impl_->send(src, dst, payload_bytes, at, tag);
}
MessageId Network::create(EndpointId src, EndpointId dst, std::uint64_t payload_bytes, std::uint32_t tag) {
  return impl_->create(src, dst, payload_bytes, tag);
}
void Network::post(MessageId id, SimTime at) { impl_->post(id, at); }
void Network::set_post_time(MessageId id, SimTime at) { impl_->messages_[id].post_time = at; }
void Network::set_flow_port(MessageId id, std::uint16_t port) { impl_->messages_[id].flow_port = port; }
void Network::set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink) {
  impl_->set_partition(part, rank, sink);
}
bool Network::owns(NodeId n) const { return impl_->owned_[n] != 0; }
void Network::receive(const core::RemoteRecord& record) { impl_->receive(record); }
void Network::set_listener(MessageListener* listener) { impl_->listener_ = listener; }
const Topology& Network::topology() const { return impl_->topo_; }
core::SimTime Network::now() const { return impl_->sim_.now(); }
core::Simulator& Network::simulator() const { return impl_->sim_; }
const NetworkParams& Network::params() const { return impl_->params_; }
const RoutingTable* Network::routing_table() const { return impl_->routes_ ? &*impl_->routes_ : nullptr; }
const std::vector<Message>& Network::messages() const { return impl_->messages_; }
const LinkStats& Network::link_stats() const {
  impl_->sync_stats();
  return impl_->stats_;
}
const NetworkTotals& Network::totals() const { return impl_->totals_; }
std::uint64_t Network::packets_in_flight() const { return impl_->in_flight_; }
std::uint64_t Network::max_buffer_occupancy() const { return impl_->max_occupancy_; }
std::int64_t Network::min_credits_seen() const { return impl_->min_credits_; }
std::uint32_t Network::payload_per_packet() const { return impl_->payload_per_packet_; }

void Network::set_end_time(SimTime end) { impl_->deliver_before_ = end; }

void Network::finish(SimTime end) {
  impl_->ensure_state();
  auto& st = impl_->stats_;
  const auto& p = impl_->params_;
  for (LinkId o = 0; o < impl_->port_.size(); ++o) {
    auto& port = impl_->port_[o];
    if (port.stall_since != SimTime::max()) {
      impl_->port_[o].stall_ps += (end - port.stall_since).ps();
      port.stall_since = end;
    }
  }
  if (p.interval > SimTime::zero() && !impl_->series_moved_) {
    for (LinkId o = 0; o < impl_->tx_bin_.size(); ++o) {  // close the open bins
      impl_->roll_bin(impl_->tx_bin_[o], impl_->series_tx_[o], end, true);
      impl_->roll_bin(impl_->queue_bin_[o], impl_->series_queue_[o], end, false);
    }
    // `end` is the same on every rank, so every rank ends at the same
    // interval and bin count (a rank may have coarsened less during the run).
    auto bins = [&] { return static_cast<std::size_t>((end.ps() + impl_->interval_.ps() - 1) / impl_->interval_.ps()); };
    while (bins() > impl_->max_intervals_) impl_->coarsen_series();
    const std::size_t k = std::max<std::size_t>(bins(), 1);
    // Into the output by the topology's ids, the series of every link
    // simulated here k bins long (the others' stay empty); moved, not
    // copied: the series can be the largest thing a run holds.
    const std::size_t nl = impl_->topo_.link_count();
    st.series_tx_bytes.assign(nl, {});
    st.series_queue_bytes.assign(nl, {});
    for (LinkId o = 0; o < impl_->series_tx_.size(); ++o) {
      const LinkId g = impl_->li_[o].global;
      st.series_tx_bytes[g] = std::move(impl_->series_tx_[o]);
      st.series_queue_bytes[g] = std::move(impl_->series_queue_[o]);
      st.series_tx_bytes[g].resize(k, 0);
      st.series_queue_bytes[g].resize(k, 0);
    }
    impl_->series_bins_ = k;
    impl_->series_moved_ = true;
  }
  impl_->sync_stats();
}

core::SimTime Network::series_interval() const { return impl_->interval_; }
std::size_t Network::series_bins() const { return impl_->series_bins_; }

}  // namespace fabricsim::net
