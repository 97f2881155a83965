// Packet-level collectives (issue 6, first part): an NCCL-tests style
// benchmark of one collective over a communicator, for a list of sizes,
// each run `warmup + iterations` times back to back.
//
// Every collective is a dependency graph of point-to-point messages, planned
// up front (so message ids are the same on every process) and posted as
// their dependencies are met.  Dependencies are local to an endpoint: a
// message waits only for what its sender has received (the previous step,
// a tree node's children, a phase of a composed algorithm, all of the
// previous operation) or sent (the previous message to the same peer), so
// a partitioned run needs no extra synchronization.
//
// Algorithms (schedules in collective.cpp, semantics in docs/model.md):
// ring, bidirectional_ring, halving_doubling, double_binary_tree,
// hierarchical and direct allreduce; ring, bidirectional_ring and direct
// reduce_scatter / allgather; pairwise and direct alltoall; ring (a chain)
// and tree broadcast / reduce.  Ring and tree messages are cut into chunks
// of at most `chunk_bytes` that move through the steps independently
// (pipelining).  An endpoint starts operation k+1 when it has received all
// its data of operation k and its own messages of it have left its NIC.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"

namespace fabricsim::workload {

enum class CollectiveOp : std::uint8_t { Allreduce, ReduceScatter, Allgather, Alltoall, Broadcast, Reduce };
CollectiveOp parse_collective_op(const std::string& name);
const char* to_string(CollectiveOp op);
/// NCCL's bus-bandwidth factor: 2(n-1)/n for allreduce, (n-1)/n for
/// reduce_scatter, allgather and alltoall, 1 for broadcast and reduce.
double busbw_factor(CollectiveOp op, std::uint32_t ranks);

struct CollectiveParams {
  CollectiveOp op = CollectiveOp::Allreduce;
  std::string algorithm = "ring";
  /// Communicator: `ranks` endpoints (0 = all) chosen by `placement`:
  /// "linear" (0, 1, ...), "by_server", "by_rail", "random" (a seeded
  /// random subset in random order), "list" (`endpoints`, in that order).
  std::uint32_t ranks = 0;
  std::string placement = "linear";
  std::vector<std::uint32_t> endpoints;
  /// GPUs per server (leaf_spine), for "by_server" (= linear: endpoints are
  /// numbered server by server) and "by_rail" (GPU 0 of every server, then
  /// GPU 1, ...); 1 elsewhere.
  std::uint32_t gpus_per_server = 1;
  std::vector<std::uint64_t> sizes{1u << 20};  ///< bytes per rank (NCCL's "size")
  std::uint32_t iterations = 1;
  std::uint32_t warmup = 0;
  std::uint64_t chunk_bytes = 0;   ///< 0: one message per step
  double reduce_gbps = 0;          ///< reduction speed per endpoint, 0 = infinite
  std::uint32_t root = 0;          ///< broadcast: index in the communicator
  core::SimTime start;
  std::uint64_t seed = 1;
};

/// The communicator's endpoints, in rank order.  ConfigError (naming
/// workload.*) for bad ranks, placement or list.
std::vector<net::EndpointId> communicator(const CollectiveParams& p, std::uint32_t endpoints);

/// One operation instance: size index, iteration (warm-up ones first,
/// negative), and its messages [first, last).
struct CollectiveInstance {
  std::uint32_t size_index = 0;
  std::int32_t iteration = 0;  ///< < 0: warm-up
  std::uint64_t bytes = 0;
  net::MessageId first = 0;
  net::MessageId last = 0;
};

class CollectiveWorkload : public net::MessageListener {
 public:
  CollectiveWorkload(net::Network& network, const CollectiveParams& params);
  void on_message_delivered(net::MessageId id) override;
  /// Messages from one rank to one peer go in order, as over one NCCL
  /// connection: the next waits until the previous has left the NIC.
  void on_message_sent(net::MessageId id) override;
  bool wants_sent() const override { return true; }

  const std::vector<CollectiveInstance>& instances() const { return instances_; }
  const std::vector<net::EndpointId>& ranks() const { return ranks_; }
  const CollectiveParams& params() const { return params_; }
  std::uint64_t messages_total() const { return msgs_.size(); }
  std::uint64_t messages_done() const { return done_; }

 private:
  struct Msg {
    std::uint32_t next = UINT32_MAX;     // messages its delivery triggers (next step of a chunk; a tree
    std::uint32_t next2 = UINT32_MAX;    // node's sends to both children)
    std::uint32_t gate = UINT32_MAX;     // gate its delivery counts towards (its receiver's end of the op)
    std::uint32_t gate2 = UINT32_MAX;    // and its receiver's phase barrier, if any (direct allreduce)
    std::uint32_t fifo_next = UINT32_MAX;  // the next message from the same sender to the same receiver
    std::uint32_t sgate = UINT32_MAX;    // its sender's end-of-operation gate (counts it once it has left)
    bool reduce = false;                 // the receiver reduces it before the next step leaves
    std::uint8_t waits = 0;              // conditions left before it is posted (previous step, previous op)
    core::SimTime ready;                 // latest condition time so far
  };
  struct Gate {
    std::uint32_t remaining = 0;
    std::uint32_t post_begin = 0;  // messages it posts: post_list_[post_begin, post_end)
    std::uint32_t post_end = 0;
  };
  void plan();
  void post(std::uint32_t id, core::SimTime at);
  /// One condition of gate gi met at `now`: at zero, release what it holds
  /// (after reducing `bytes` when `reduce`).
  void close_gate(std::uint32_t gi, core::SimTime now, bool reduce, std::uint64_t bytes);

  net::Network& net_;
  CollectiveParams params_;
  std::vector<net::EndpointId> ranks_;
  std::vector<CollectiveInstance> instances_;
  std::vector<Msg> msgs_;
  std::vector<Gate> gates_;
  std::vector<std::uint32_t> post_list_;
  std::unordered_map<std::uint64_t, std::uint32_t> conn_last_;  // (sender, receiver) -> its latest message (planning)
  std::uint64_t done_ = 0;
  net::MessageId base_ = 0;  // id of the first message (ids of this workload are base_ + index)
};

}  // namespace fabricsim::workload
