// The packet-level network model: NICs, links and switches built over a
// Topology, driven by a core::Simulator.
//
// * NIC: a message is cut into packets of at most `packet_bytes` on the wire
//   (`header_bytes` of them header); packets are injected at link rate,
//   several messages in flight per NIC are served round-robin, one packet at a
//   time; the receiving NIC counts payload bytes and reports a message done
//   when the tail of its last packet has arrived.
// * Link: bandwidth and propagation latency; serialization time is
//   bytes * 8 / bandwidth, rounded up to the picosecond.
// * Switch: input-buffered, one buffer of `buffer_bytes` per (input port,
//   virtual channel), in which packets wait in virtual output queues, one per
//   (input port, output port, virtual channel), so a packet for a busy output
//   never blocks one behind it for an idle output (only non-empty VOQs exist:
//   each output keeps the ones that feed it; src/net/network/impl.hpp);
//   credit-based lossless flow control per (input port, virtual channel) (a
//   packet is sent only when the downstream buffer has room for all of it; the
//   room is returned as a credit over the reverse link, with its latency, when
//   the packet's tail has left); virtual cut-through: a packet may leave
//   `switch_latency` after its head arrived, before its tail has; round-robin
//   output arbitration among the VOQs that feed the output; a crossbar that
//   moves `crossbar_speedup` times the port rate per input.  Nothing is ever
//   dropped.
//
// Everything here is deterministic: events carry the (time, priority, source
// entity, sequence) key of core, random choices draw from per-node streams.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricsim/core/link.hpp"
#include "fabricsim/core/simulator.hpp"
#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/link_state.hpp"
#include "fabricsim/net/route_plan.hpp"
#include "fabricsim/net/route_policy.hpp"
#include "fabricsim/net/route_store.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {
class RecordDrop;
class StateRoutes;
class ListedPaths;
class RoutingTable;
}

namespace fabricsim::net {

/// The packet model's parameters, with the run's routes (RoutePlan).
struct NetworkParams : RoutePlan {
  std::uint32_t packet_bytes = 4096;
  std::uint32_t header_bytes = 64;
  std::uint64_t buffer_bytes = 262144;
  std::uint32_t vcs = 1;
  core::SimTime switch_latency = core::SimTime::from_ns(100);
  double crossbar_speedup = 2.0;
  /// Messages a NIC sends at once (its send engines, the HammingMesh
  /// paper's "NIC send machines"); further posts wait, in post order, for an
  /// engine.  A message's packets go out over its first hop (or, adaptive,
  /// over whichever of its first hops is free), each injection link
  /// interleaving the messages that use it.  0: as many as are posted.
  std::uint32_t send_engines = 0;
  std::uint64_t seed = 1;
  /// Sampling interval of the per-link time series; zero disables them.
  core::SimTime interval = core::SimTime::zero();
};

using MessageId = std::uint32_t;

/// Receives message completions (the workload).
class MessageListener {
 public:
  virtual ~MessageListener() = default;
  /// Called at the simulated time the tail of the message's last packet
  /// arrived at its destination NIC.
  virtual void on_message_delivered(MessageId id) = 0;
  /// Called, on the process that simulates the source, when the last
  /// packet of the message has left the source NIC (its serialization
  /// ended).  Only listeners that ask for it (wants_sent()) get it.
  virtual void on_message_sent(MessageId /*id*/) {}
  virtual bool wants_sent() const { return false; }
};

/// A message's record, 48 bytes (asserted below: every process keeps one
/// per message, so its size is the run's memory per message).  Every packet
/// of a message but the last carries the model's whole payload per packet,
/// so the packets sent and received say how much of it went and came.
struct Message {
  std::uint64_t bytes = 0;       ///< payload
  core::SimTime post_time;       ///< when the workload posted it
  core::SimTime end_time = core::SimTime::max();  ///< tail of the last packet arrived
  EndpointId src = 0;
  EndpointId dst = 0;
  std::uint32_t packets = 0;
  /// Packets that left the source NIC; all of them (packets) once nothing
  /// more will be sent, also when the rest was lost to a failure.
  std::uint32_t sent_packets = 0;
  std::uint32_t received_packets = 0;  ///< packets arrived at the destination NIC
  std::uint16_t flow_port = 0;   ///< source port of the 5-tuple (ECMP entropy)
  std::uint8_t first_state = 0;  ///< route-rules state after the first hop
  std::uint8_t vc : 7 = 0;       ///< virtual channel of the first hop (network.vcs is at most 16)
  /// Lost some of its bytes to a failure (link state): a packet stranded,
  /// or bytes never injected because no live route was left.  Set where
  /// that happened (so, on several ranks, possibly on another rank than the
  /// sender's); it changes nothing in the simulation, only the report.
  bool failed : 1 = false;

  /// Payload bytes that left the source NIC, for packets of
  /// `payload_per_packet` bytes of payload (the model's).
  std::uint64_t sent_bytes(std::uint64_t payload_per_packet) const {
    return all_sent() ? bytes : std::uint64_t{sent_packets} * payload_per_packet;
  }
  bool all_sent() const { return sent_packets == packets; }
  /// Every packet arrived (a message that lost one to a failure never is).
  bool all_received() const { return received_packets == packets; }
};
static_assert(sizeof(Message) == 48, "a message record is 48 bytes: keep it so, or say why in docs/performance.md");

/// Per directed link counters (structure of arrays, indexed by link id).
struct LinkStats {
  std::vector<std::uint64_t> tx_bytes;
  /// tx_bytes split where they were sent: by a node of the message's source
  /// server (originated: the source endpoint, or a node joined to it by
  /// IntraServer links only), or by any other node (forwarded: switches,
  /// and hosts that relay, TopoOpt's bandwidth tax).  Counted apart, per
  /// hop; originated + forwarded = tx_bytes (the flow model rounds each of
  /// the three integrals to whole bytes, so there within a byte).
  std::vector<std::uint64_t> originated_bytes;
  std::vector<std::uint64_t> forwarded_bytes;
  std::vector<std::uint64_t> tx_packets;
  std::vector<std::int64_t> busy_ps;
  std::vector<std::uint64_t> max_queue_bytes;
  std::vector<std::int64_t> stall_ps;
  /// Messages whose first packet crossed the link (for ecmp: the flows
  /// hashed onto it).
  std::vector<std::uint32_t> flows;
  /// Packets (and their payload bytes) stranded on the link by a failure:
  /// arriving over it while it was down, queued for it when it went down,
  /// or left with no live move after arriving over it.
  std::vector<std::uint64_t> stranded_packets;
  std::vector<std::uint64_t> stranded_bytes;
  /// Time series, per link: bytes whose transmission started in interval k,
  /// and the largest queue seen in interval k.
  std::vector<std::vector<std::uint64_t>> series_tx_bytes;
  std::vector<std::vector<std::uint64_t>> series_queue_bytes;
  /// The flow model only (empty in the others): the most flows at once on
  /// each link, and per interval the time-average number of flows on it
  /// (vClos' per-link contention, flows sharing a link's rate).
  std::vector<std::uint32_t> max_flows;
  std::vector<std::vector<double>> series_flows;
};

struct NetworkTotals {
  std::uint64_t packets_injected = 0;
  std::uint64_t packets_delivered = 0;
  std::uint64_t bytes_injected = 0;    ///< payload
  std::uint64_t bytes_delivered = 0;   ///< payload
  std::uint64_t packet_hops = 0;       ///< packets sent over any link
  std::uint64_t messages_delivered = 0;
  std::uint64_t packets_dropped = 0;   ///< always 0: flow control never drops (failures strand, below)
  /// Lost to failures (link state): packets stranded and their payload, and
  /// the payload of messages never injected because no live route was left.
  /// Conservation: injected = delivered + stranded (+ in flight at an end time).
  std::uint64_t packets_stranded = 0;
  std::uint64_t bytes_stranded = 0;
  std::uint64_t bytes_unsent = 0;
  std::uint64_t max_buffer_overshoot = 0;  ///< must stay 0 (checked invariant)
};

/// Message number `id` as every network model creates it (packet, flow,
/// analytic): not yet posted, its ECMP source port a function of (seed, id),
/// its packet count at `payload_per_packet` bytes each.  ConfigError naming
/// network.packet_bytes if it would need more than 2^32 - 1 packets.
Message new_message(MessageId id, EndpointId src, EndpointId dst, std::uint64_t bytes, std::uint64_t seed,
                    std::uint64_t payload_per_packet);
/// Message `id`'s ECMP source port, as new_message sets it.
std::uint16_t flow_port_of(std::uint64_t seed, MessageId id);
/// A record set aside (Network::reserve_ids) and not created yet: no
/// bytes (every message has some), never posted.
Message blank_message();
/// Puts record `m` at `id` in `messages`: appended (id == size()), or in
/// a blank set aside (id < size()); what every model's create() does.
void place_message(std::vector<Message>& messages, MessageId id, const Message& m);

/// The most intervals a link's time series holds, on a fabric of `links`
/// directed links, before every series coarsens (its interval doubles and
/// pairs of bins merge): 2^24 cells in all, at least 64 and at most 65,536
/// per link.  Every network model keeps its series to it, and the memory
/// estimate sizes them by it (one function, so the two cannot drift apart);
/// the whole fabric's count, so that series coarsen alike on every rank.
constexpr std::size_t series_max_intervals(std::size_t links) {
  return std::clamp<std::size_t>((std::size_t{1} << 24) / std::max<std::size_t>(links, 1), 64, std::size_t{1} << 16);
}

/// One network model behind a Network: the packet model (the reference,
/// src/net/network/), the flow-level model or the analytic model
/// (flow_network.hpp).  A Network forwards every call to its model; the
/// defaults here are those of a model that runs on one process only and
/// keeps no queues or time series.  A new model implements this (and a
/// Network subclass or factory that makes one); docs/architecture.md.
class NetworkModel {
 public:
  NetworkModel();
  virtual ~NetworkModel();
  /// Creates message `id`: the next (id == messages().size()), or one set
  /// aside and not created yet (place_message).
  virtual void create(MessageId id, EndpointId src, EndpointId dst, std::uint64_t payload_bytes,
                      std::uint32_t tag) = 0;
  /// Appends `count` blank records (blank_message()), with whatever the
  /// model keeps per message, for create() to fill in any order.
  virtual void set_aside(std::size_t count) = 0;
  /// set_aside(count), then drop_delivered_records(), in a way that never
  /// holds every blank at once where the model drops records.  Default:
  /// those two calls.
  virtual void set_aside_dropped(std::size_t count);
  virtual void post(MessageId id, core::SimTime at) = 0;
  /// The messages, writable for the post time (set_post_time) and the
  /// source port (set_flow_port) of messages not yet posted.
  virtual std::vector<Message>& messages() = 0;
  virtual void set_listener(MessageListener* listener) = 0;
  virtual const LinkStats& link_stats() const = 0;
  /// Default: every link, as link_stats().
  virtual const LinkStats& local_link_stats(std::vector<LinkId>& ids) const;
  virtual const NetworkTotals& totals() const = 0;
  virtual void finish(core::SimTime end) = 0;
  virtual void set_end_time(core::SimTime /*end*/) {}
  /// Default: refuses more than one part (UserError).
  virtual void set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink);
  virtual bool owns(NodeId /*n*/) const { return true; }
  virtual void receive(const core::RemoteRecord& record);
  virtual const RoutingTable* routing_table() const { return nullptr; }
  /// Packets injected and not yet delivered (all the model's, on one process).
  virtual std::uint64_t packets_in_flight() const {
    return totals().packets_injected - totals().packets_delivered;
  }
  virtual std::uint64_t max_buffer_occupancy() const { return 0; }
  virtual std::int64_t min_credits_seen() const { return 0; }
  /// Network::pin.  Default: refused (UserError).
  virtual void pin(MessageId id, std::span<const LinkId> links, PinnedVc vc, bool unused);
  virtual core::SimTime series_interval() const { return core::SimTime::zero(); }
  virtual std::size_t series_bins() const { return 0; }
  /// Network::set_link_schedule.  Default: refuses a non-empty schedule (UserError).
  virtual void set_link_schedule(const LinkSchedule& schedule);
  /// Network::switch_links.  Default: refused (UserError).
  virtual void switch_links(std::span<const LinkId> off, std::span<const LinkId> on);
  /// Network::pause_flows / resume_flows / hold_unroutable / unsent_bytes.
  /// Default: refused (UserError).
  virtual void pause_flows();
  virtual void resume_flows();
  virtual void hold_unroutable(bool on);
  virtual void spread_pinned_hops(bool on);
  virtual std::uint64_t unsent_bytes(MessageId id, core::SimTime at);
  /// Ids of the messages this process marked failed (Message::failed), ascending.
  virtual std::vector<MessageId> failed_messages() const;
  /// Network::drop_delivered_records.  Default: false (keeps every record).
  virtual bool drop_delivered_records() { return false; }
  bool drops_records() const { return drop_ != nullptr; }
  /// Network::describe_at.  Default: makes the record (create), as a
  /// model that runs on one process does.
  virtual void describe(MessageId id, EndpointId src, EndpointId dst, std::uint64_t payload_bytes);
  /// Whether messages are described (describe): records are then made
  /// only where they are needed, and one not made reads as described.
  bool describes() const { return !described_.empty(); }
  /// Whether record `id` was made here (created, also since handed back),
  /// not a blank or only described.
  bool made(MessageId id);
  /// Network::set_post_time.
  void set_post_time(MessageId id, core::SimTime at);
  /// Pages of records handed back now, their contents in the file (0
  /// where records are kept).
  std::size_t record_pages_spilled() const;
  /// Record `id`, also one whose memory was handed back (RecordDrop).
  Message record(MessageId id);
  /// Network::done_with_unposted.
  void done_with_unposted(MessageId id);
  /// The records are about to grow by `count`: if they would move, every
  /// page dropped is made again and dropping ends.
  void before_growth(std::size_t count);

 protected:
  /// What a model that drops records calls: `id` is done with (delivered,
  /// its listener told), or about to be created (before place_message).
  void release_record(MessageId id);
  void before_create(MessageId id);
  std::unique_ptr<RecordDrop> drop_;

  /// Messages described before the run (describe): what every process
  /// needs of a message whose record it does not make.  16 bytes each.
  struct Described {
    EndpointId src = 0, dst = 0;
    std::uint64_t bytes = 0;  ///< 0: not described
  };
  std::vector<Described> described_;
  /// Message `id`'s description; nullptr where it has none (made only).
  const Described* description(MessageId id) const {
    return id < described_.size() && described_[id].bytes != 0 ? &described_[id] : nullptr;
  }
  /// Message `id` as create() would make it from its description (a
  /// model that describes implements it).
  virtual Message from_description(MessageId id) const;
  /// Records neither of whose ends is in `owned` (per node, the process's)
  /// are none of this process's: their memory may go (RecordDrop::absent).
  void drop_others(const std::vector<std::uint8_t>& owned_nodes, const Topology& topo);

  /// Marks message `id` (record `m`) failed, once: its id is kept in a list
  /// of its own, so that failed_messages() reads no record (a step towards
  /// records that are dropped once delivered, docs/architecture.md,
  /// "Streaming traces", change 1).
  void mark_failed(Message& m, MessageId id) {
    if (m.failed) return;
    m.failed = true;
    failed_ids_.push_back(id);
  }
  /// The same for a message whose record is not made here (described):
  /// only its id (failed_messages() lists each once).
  void mark_failed_id(MessageId id) { failed_ids_.push_back(id); }

 private:
  std::vector<MessageId> failed_ids_;  // in the order they failed
};

/// The network of a run: the same messages, listener and link counters
/// whichever model simulates them.  Network(topo, params, sim) is the
/// packet model; FlowNetwork and AnalyticNetwork (flow_network.hpp) are
/// Networks over the other two.
class Network {
 public:
  Network(const Topology& topo, const NetworkParams& params, core::Simulator& sim);
  virtual ~Network();
  /// The bytes one process's Network allocates up front for a fabric of
  /// these sizes, where it simulates an end of `local_links` of the links
  /// (their outputs, inputs, credits and counters; every node's wake-up and
  /// random state; every link's local id), without the
  /// packets in flight, the messages and the trees' route table: what the
  /// memory estimate of `fabricsim info` and engine.memory_limit_gib add up.
  static std::uint64_t state_bytes(std::uint64_t nodes, std::uint64_t links, std::uint64_t local_links,
                                   std::uint32_t vcs, bool duato, bool series);
  /// Bytes held per message (its record and per-message routing indices).
  static std::uint64_t message_bytes();
  /// What workloads may plan on this network (task graphs, collective
  /// schedules, the messages they create) before planning stops with
  /// engine.memory_limit_gib's error (workload::PlanOverBudget): what the
  /// memory limit leaves after the rest of the run.  Unlimited by default.
  void set_plan_budget(std::uint64_t bytes) { plan_budget_ = bytes; }
  std::uint64_t plan_budget() const { return plan_budget_; }
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// Distributes the model: this process simulates the nodes whose part is
  /// `rank`; links into other parts become remote and post their packets
  /// and credits to `sink` as fixed-size records.  Call before send().
  void set_partition(const std::vector<std::int32_t>& part, std::int32_t rank, core::RemoteSink* sink);
  /// Whether this process simulates node `n`.
  bool owns(NodeId n) const;
  /// Delivers a record that another process posted for one of our links.
  void receive(const core::RemoteRecord& record);

  /// Posts a message from endpoint `src` to endpoint `dst` at time `at`
  /// (>= now).  Returns its id; ids are dense and assigned in call order.
  MessageId send(EndpointId src, EndpointId dst, std::uint64_t payload_bytes, core::SimTime at,
                 std::uint32_t tag = 0);
  /// Creates a message without posting it (a workload whose messages wait
  /// for others): its id is assigned now, in call order, the same on every
  /// process; post() it later.  post_time is max() until then.
  MessageId create(EndpointId src, EndpointId dst, std::uint64_t payload_bytes, std::uint32_t tag = 0);
  /// Sets aside the next `count` ids, to be created in any order by
  /// create_at() (a workload that numbers its messages by a rule of its
  /// own rather than in the order it plans them: a trace numbers each
  /// rank's in a block, in that rank's node order, so that a process can
  /// number its own ranks' without planning the others').  Returns the
  /// first.  Until created, each is a blank record (blank_message()).
  MessageId reserve_ids(std::size_t count);
  /// reserve_ids(count), then drop_delivered_records(), without ever
  /// holding the blanks set aside all at once: they are written and handed
  /// back a piece at a time (a streamed trace's, 48 bytes a message, were
  /// on top of the start of its run).
  MessageId reserve_ids_dropped(std::size_t count);
  /// Creates message `id`, set aside by reserve_ids() and not created yet.
  void create_at(MessageId id, EndpointId src, EndpointId dst, std::uint64_t payload_bytes, std::uint32_t tag = 0);
  /// Describes message `id`, set aside by reserve_ids(), without making its
  /// record (a streamed trace on several processes, docs/architecture.md,
  /// "Streaming traces", change 1): the record is made only on a process
  /// that needs it (create_at where its sender's or receiver's node is
  /// read, or as its first packet arrives), and until then message(id)
  /// reads it as create_at(id, src, dst, payload_bytes, 0) would make it.
  /// A process its packets only pass routes them by the description (16
  /// bytes a message, against a record's 48).  The packet model; the
  /// others make the record.
  void describe_at(MessageId id, EndpointId src, EndpointId dst, std::uint64_t payload_bytes);
  /// Whether record `id` was made on this process (create_at, or from its
  /// description), not only set aside or described.
  bool made(MessageId id) const;
  /// Room for `more` message records beyond those created (a planner that
  /// knows how many it creates: one allocation, not doublings).
  void reserve_messages(std::size_t more);
  /// Posts a created message at `at` (>= now).  Call it on the process that
  /// simulates the source (the others may, it only records the time there).
  void post(MessageId id, core::SimTime at);
  /// Records a message's post time where it was posted by another process
  /// (for the output of partitioned runs).  Where records are dropped, into
  /// the record wherever it is (its page or its file), made first from its
  /// description if it was not made here.
  void set_post_time(MessageId id, core::SimTime at);
  /// Overrides the ECMP source port of a message before it starts (steers its path).
  void set_flow_port(MessageId id, std::uint16_t port);
  /// Routes message `id` over `links` (the route store, route_store.hpp:
  /// its source's NIC link to the link into its destination) instead of
  /// by the routing policy, in every model: before it starts, all of it;
  /// once started, re-pins it: the packet model sends the packets not yet
  /// injected on the new route (those on their way keep theirs), the flow
  /// model moves the bytes not yet sent (docs/model.md, "Pinned routes").
  /// Call it identically on every process (at creation, or in a global
  /// step's decision).  util::UserError naming the message if `links` is
  /// not a route between its endpoints, or the model cannot re-pin.
  /// `unused`: the caller knows, alike on every process, that no packet of
  /// the message has left its NIC (a global step's view): the packet model
  /// then replaces its route instead of adding a version (a message has at
  /// most RouteStore::kMaxVersions); the flow model knows this itself.
  void pin(MessageId id, std::span<const LinkId> links, PinnedVc vc = PinnedVc::Message, bool unused = false);
  void set_listener(MessageListener* listener);
  /// Link state changes of the run (`[[failures]]`, link_state.hpp): the
  /// changes at time 0 apply at once, the others at their times, on every
  /// process alike.  Call once, before the first message is posted (after
  /// set_partition).  util::UserError if the model cannot change link state.
  void set_link_schedule(const LinkSchedule& schedule);
  /// Switches links off and on now, decided during the run (an optical
  /// circuit switch rewiring at a job's admission; ctrl/ocs.hpp): call at
  /// a global step, on every process alike.  What an `off` link still
  /// carries is stranded (or rerouted) as for a scheduled failure; the
  /// caller's contract is that it carries nothing.  Needs a link state
  /// started by a non-empty set_link_schedule (the optical layer's dark
  /// circuits); util::UserError if the model cannot change link state.
  void switch_links(std::span<const LinkId> off, std::span<const LinkId> on);
  /// An optical fabric reconfiguring (TopoOpt's OCS-reconfig, SiP-ML):
  /// from now on no message sends (every flow at rate 0, bytes kept where
  /// they are; messages starting meanwhile wait) until resume_flows(),
  /// which routes each waiting message again (its pinned route, or the
  /// policy's over the live links) and lets it go on.  Call both at global
  /// steps.  The packet model: the NICs stop injecting (packets on their
  /// way go on), and at resume_flows a message waiting at its NIC whose
  /// first hop went dark meanwhile starts again on its route then.  The
  /// analytic model: util::UserError.
  void pause_flows();
  void resume_flows();
  /// With `on`, a message that finds no live route when it starts (or at
  /// resume_flows) waits for one instead of failing: it is retried at every
  /// switch_links and resume_flows (a fabric without host forwarding waits
  /// for a direct circuit).  The packet model retries at resume_flows only
  /// (it holds a message that is unpinned, or whose pinned route has a dark
  /// hop, at its NIC).  Not the analytic model.
  void hold_unroutable(bool on);
  /// With `on`, a pinned hop carries the flow evenly over every live link
  /// parallel to the pinned one (same two nodes): a server with several
  /// circuits lit to one neighbour uses them all, as an unpinned flow
  /// sprayed over them would.  The packet model picks, per packet and hop,
  /// the least occupied of them (at a forwarding endpoint's NIC, whichever
  /// is free, as adaptive injection does).  Not the analytic model.
  void spread_pinned_hops(bool on);
  /// Wire bytes message `id` has still to send at time `at` (now, or a
  /// global step's time: no event lies between): all of them if posted and
  /// not started (or waiting), the flow's remainder (and its last packet)
  /// while it is one, 0 once it has left or before it is posted.  Read it
  /// on the process that simulates the source.  Not the analytic model.
  std::uint64_t unsent_bytes(MessageId id, core::SimTime at);
  /// Messages this process saw fail (Message::failed), ascending.
  std::vector<MessageId> failed_messages() const;

  const Topology& topology() const;
  /// The simulated time now.
  core::SimTime now() const;
  /// The simulator it schedules its events on.
  core::Simulator& simulator() const;
  const NetworkParams& params() const;
  /// The trees' minimal-route table it routes by; nullptr when it routes by
  /// rules or up*/down*.
  const RoutingTable* routing_table() const;
  /// Message `id`'s record (created, or set aside by reserve_ids), a copy:
  /// what every reader outside the models calls, since the memory under
  /// a record may have been handed back (drop_delivered_records).
  Message message(MessageId id) const;
  /// Messages created or set aside: the next create() gets this id.
  std::size_t message_count() const;
  /// Records the store has room for (the memory it holds: capacity x
  /// message_bytes()).
  std::size_t message_capacity() const;
  /// Every record, in id order, as the model holds them: for scans over
  /// every message before the run, or in runs that keep every record (an
  /// assertion: not once drop_delivered_records() began; message(id) reads
  /// those).  docs/architecture.md lists its callers.
  const std::vector<Message>& messages() const;
  /// From now on, the memory of records the model is done with (the
  /// message delivered) goes back to the system a page at a time, their
  /// contents to a file in $TMPDIR that message(id) reads (RecordDrop).
  /// Only where the records are read through message(id) from then on
  /// and records are not added past the room set aside (a streamed
  /// trace).  On several processes only where the messages are described
  /// (describe_at; called before the partition, the records none of this
  /// process's go at set_partition), since a process a packet passes must
  /// route it without its record; a record goes where its sender runs
  /// once every packet left, where its receiver runs once delivered.
  /// False (nothing changes) where the model cannot: the flow and analytic
  /// models, the packet model on several processes with records made.
  /// UserError naming $TMPDIR if its file cannot be made.
  bool drop_delivered_records();
  bool drops_delivered_records() const;
  /// Pages (4 KiB) of delivered messages' records handed back to the
  /// system now (0 where records are kept).
  std::size_t record_pages_spilled() const;
  /// Where records are dropped: message `id`, created and never to be
  /// posted (a node of a cut run read only for its row), is done with:
  /// its memory may go as a delivered one's does.  Nothing otherwise.
  void done_with_unposted(MessageId id);
  /// Counters (and series) of every link, by the topology's ids: zero (or
  /// empty) where this process simulates neither end.  Built on each call,
  /// 48 bytes per link of the fabric.
  const LinkStats& link_stats() const;
  /// The same for the links this process simulates an end of, by local
  /// index; `ids` receives each one's topology id (ascending).  What the
  /// output writes from, without arrays over the whole fabric.
  const LinkStats& local_link_stats(std::vector<LinkId>& ids) const;
  const NetworkTotals& totals() const;
  /// Packets currently inside the network (injected, not yet delivered),
  /// as seen by this process (sum over processes for the whole network).
  std::uint64_t packets_in_flight() const;
  /// Largest occupancy ever seen in any switch input buffer, in bytes.
  std::uint64_t max_buffer_occupancy() const;
  /// Smallest credit count ever seen on any output (must never be < 0).
  std::int64_t min_credits_seen() const;
  /// Payload bytes per packet.
  std::uint32_t payload_per_packet() const;
  /// The time at which the run will stop (engine.end_ns; max() if it runs
  /// until every message is delivered).  A packet whose last hop leads into
  /// its destination endpoint is accounted as delivered when that hop starts,
  /// without an arrival event (see docs/model.md); packets that would arrive
  /// at or after this time are left in flight instead, as they were before.
  void set_end_time(core::SimTime end);
  /// Closes the time series at `end` (the final simulated time, the same on
  /// every rank).
  void finish(core::SimTime end);
  /// The time-series interval: NetworkParams::interval, doubled as often as
  /// needed to keep a run within 65,536 intervals and 2^24 link-intervals.
  core::SimTime series_interval() const;
  /// Bins of every time series after finish() (the same on every rank).
  std::size_t series_bins() const;

 protected:
  /// A Network over another model; `params` are what params() reports
  /// (packet and header sizes, switch latency, seed, send engines).
  Network(const Topology& topo, const NetworkParams& params, core::Simulator& sim,
          std::unique_ptr<NetworkModel> model);
  NetworkModel& model() const { return *model_; }

 private:
  const Topology& topo_;
  NetworkParams params_;
  core::Simulator& sim_;
  std::unique_ptr<NetworkModel> model_;
  std::uint64_t plan_budget_ = UINT64_MAX;
};

}  // namespace fabricsim::net
