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
// and tree broadcast / reduce; direct scatter / gather; tacos (a schedule
// synthesized for the communicator's own NPU graph, or read from a file:
// every operation but alltoall and barrier; workload/tacos.hpp).  Ring and
// tree messages are cut into chunks
// of at most `chunk_bytes` that move through the steps independently
// (pipelining).  An endpoint starts operation k+1 when it has received all
// its data of operation k and its own messages of it have left its NIC.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/workload/placement.hpp"
#include "fabricsim/workload/task_graph.hpp"

namespace fabricsim::workload {

struct TacosOptions;
struct TacosPlan;

enum class CollectiveOp : std::uint8_t {
  Allreduce,
  ReduceScatter,
  Allgather,
  Alltoall,
  Broadcast,
  Reduce,
  Barrier,
  Scatter,  ///< the root's buffer, part j to rank j
  Gather,   ///< rank j's part j to the root
};
inline constexpr CollectiveOp kLastCollectiveOp = CollectiveOp::Gather;
CollectiveOp parse_collective_op(const std::string& name);
const char* to_string(CollectiveOp op);
/// NCCL's bus-bandwidth factor: 2(n-1)/n for allreduce, (n-1)/n for
/// reduce_scatter, allgather and alltoall, 1 for broadcast and reduce, 0
/// for a barrier (it moves no data).
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
  /// by_board and grid: every endpoint, in the placement's order (empty:
  /// id order).  A job of a multi-job run chooses among those no earlier
  /// job took (EndpointPool).
  std::vector<std::uint32_t> available;
  /// GPUs per server (leaf_spine), for "by_server" (= linear: endpoints are
  /// numbered server by server) and "by_rail" (GPU 0 of every server, then
  /// GPU 1, ...); 1 elsewhere.
  std::uint32_t gpus_per_server = 1;
  std::vector<std::uint64_t> sizes{1u << 20};  ///< bytes per rank (NCCL's "size")
  std::uint32_t iterations = 1;
  std::uint32_t warmup = 0;
  std::uint64_t chunk_bytes = 0;   ///< 0: one message per step
  std::uint32_t channels = 1;      ///< independent instances on 1/channels of the buffer each
  double reduce_gbps = 0;          ///< reduction speed per endpoint, 0 = infinite
  std::uint32_t root = 0;          ///< broadcast: index in the communicator
  std::uint32_t grid_rows = 0;     ///< torus_2d, multi_ring: the communicator as rows x columns; 0 = square
  core::SimTime start;
  /// A training job's iteration (the vClos simulations' model, spec 6.2):
  /// every rank computes `compute` before each operation, of which the
  /// last `overlap` fraction runs alongside the operation (a backward pass
  /// the gradients' allreduce overlaps); the next operation waits for both.
  /// Zero: operations back to back, as a benchmark runs them.
  core::SimTime compute;
  double overlap = 0;
  std::uint64_t seed = 1;
  /// algorithm = "tacos": how to synthesize (or where to read) the
  /// schedule (null: the defaults of TacosOptions).
  std::shared_ptr<const TacosOptions> tacos;
  /// The most messages the benchmark may plan (sizes x runs x messages of
  /// one operation); more is refused as a ConfigError naming the memory
  /// limit.  At most 2^32 - 1 (32-bit message ids).
  std::uint64_t max_messages = 0xFFFF'FFFFu;
};

/// The communicator's endpoints, in rank order, chosen among all
/// `endpoints`.  ConfigError (naming workload.*) for bad ranks, placement
/// or list.
std::vector<net::EndpointId> communicator(const CollectiveParams& p, std::uint32_t endpoints);
/// The same among the endpoints still free in `pool` (which it does not
/// take), in time linear in the communicator's size.
std::vector<net::EndpointId> communicator(const CollectiveParams& p, EndpointPool& pool);

/// One operation of a collective on a communicator, as it is planned into
/// a task graph.
struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::Allreduce;
  std::string algorithm = "ring";
  std::uint64_t bytes = 0;          ///< NCCL's "size": the buffer per rank
  std::uint64_t chunk_bytes = 0;
  /// NCCL's channels: the buffer is split into `channels` parts (the first
  /// ones a byte larger when it does not divide), each reduced by its own
  /// instance of the algorithm, all at once, over their own connections.
  std::uint32_t channels = 1;
  double reduce_gbps = 0;
  std::uint32_t root = 0;
  std::uint32_t gpus_per_server = 1;  ///< hierarchical
  std::uint32_t grid_rows = 0;        ///< torus_2d, multi_ring: ranks as rows x (n / rows), row-major; 0: square
  /// algorithm = "tacos": the schedule, synthesized once for this size and
  /// communicator (null: append_collective synthesizes it with the default
  /// TacosOptions for the ranks it is given).
  std::shared_ptr<const TacosPlan> tacos;
};

/// The names of the collective algorithms, in the registry's order (one
/// entry per algorithm in collective.cpp: its operations, smallest size
/// and schedule).  A name not among them is refused, never run as another.
std::vector<std::string> collective_algorithms();
/// Whether `algorithm` is a known algorithm that implements `op`.
bool implements(const std::string& algorithm, CollectiveOp op);

/// Checks that `spec.algorithm` implements `spec.op` on `n` ranks; throws
/// ConfigError naming `prefix`.algorithm (or .root, .grid_rows).
void check_collective(const CollectiveSpec& spec, std::uint32_t n, const std::string& prefix = "workload");

/// The smallest size `spec.algorithm` can split over n ranks (every message
/// carries at least one byte).
std::uint64_t min_collective_bytes(const CollectiveSpec& spec, std::uint32_t n);

/// How many messages each rank (index in `ranks`) sends in one operation,
/// counted by running its schedule without storing it: what
/// append_collective plans, known before it is built (append_collective
/// refuses an operation over the plan budget on this count; a streaming
/// trace would give each member its message ids by it).  ConfigError as
/// append_collective's for an unknown algorithm.
std::vector<std::uint64_t> collective_sends(const CollectiveSpec& spec, const net::Topology& topo,
                                            const std::vector<net::EndpointId>& ranks);

/// Plans one operation over `ranks` (endpoints in rank order) into `g`
/// (ConfigError naming workload.algorithm for an unknown algorithm, or one
/// that does not implement the operation).
/// Rank r's messages wait for `begin[r]` (a task completing at ranks[r];
/// `begin` may be empty).  Returns per rank a join that completes when the
/// rank has received all its data and its own messages have left its NIC.
/// Messages from one rank to one peer of one channel go in order, as over
/// one NCCL connection.  Tasks get `label`.  `first_id`: the first of the
/// ids set aside for its messages (net::Network::reserve_ids; as many as
/// collective_sends() counts), numbered in the order they are planned (a
/// streaming trace's, whose messages are created out of order); kNoId:
/// the network numbers them as they are created.  `here` (with first_id):
/// per member, whether this process simulates it (a partitioned streaming
/// trace): only the tasks with an event here are added (a member's own,
/// and the messages it sends or receives) with the dependencies released
/// here; the other members' entries of the result are kNone.
inline constexpr net::MessageId kNoId = UINT32_MAX;
std::vector<TaskGraph::TaskId> append_collective(TaskGraph& g, const CollectiveSpec& spec,
                                                 const std::vector<net::EndpointId>& ranks,
                                                 const std::vector<TaskGraph::TaskId>& begin, std::uint32_t label = 0,
                                                 net::MessageId first_id = kNoId,
                                                 const std::vector<std::uint8_t>* here = nullptr);

/// The records of the messages append_collective(..., first_id) plans,
/// without its tasks (the same ids, ends and sizes, in the same order):
/// what a process needs of a collective whose packets cross it before,
/// or without, any of its tasks there (a streaming trace's records are
/// made before its run; append_collective then adds the tasks to them).
/// With `describe`, each is described (Network::describe_at), not made.
void collective_records(net::Network& net, const CollectiveSpec& spec, const std::vector<net::EndpointId>& ranks,
                        net::MessageId first_id,
                        bool describe = false);

/// One operation instance: size index, iteration (warm-up ones first,
/// negative), and its messages [first, last).
struct CollectiveInstance {
  std::uint32_t size_index = 0;
  std::int32_t iteration = 0;  ///< < 0: warm-up
  std::uint64_t bytes = 0;
  net::MessageId first = 0;
  net::MessageId last = 0;
};

/// An NCCL-tests style benchmark on one communicator: every size, `warmup +
/// iterations` times, back to back (a rank starts an operation when it
/// has finished the previous one), planned into a task graph.  Several
/// benchmarks in one graph run at once (several communicators).
class CollectiveBenchmark {
 public:
  CollectiveBenchmark(TaskGraph& g, const CollectiveParams& params, std::uint32_t label = 0);
  /// On endpoints still free in `pool` (a job of a multi-job run), which it takes.
  CollectiveBenchmark(TaskGraph& g, const CollectiveParams& params, EndpointPool& pool, std::uint32_t label);
  const std::vector<CollectiveInstance>& instances() const { return instances_; }
  const std::vector<net::EndpointId>& ranks() const { return ranks_; }
  const CollectiveParams& params() const { return params_; }
  /// algorithm = "tacos": the schedule of each size (else empty).
  const std::vector<std::shared_ptr<const TacosPlan>>& tacos_plans() const { return tacos_; }

 private:
  void plan(TaskGraph& g, EndpointPool& pool, std::uint32_t label);
  CollectiveParams params_;
  std::vector<net::EndpointId> ranks_;
  std::vector<CollectiveInstance> instances_;
  std::vector<std::shared_ptr<const TacosPlan>> tacos_;
};

/// One benchmark alone on the network (its own task graph, started at
/// `params.start`).
class CollectiveWorkload {
 public:
  CollectiveWorkload(net::Network& network, const CollectiveParams& params);
  const std::vector<CollectiveInstance>& instances() const { return bench_.instances(); }
  const std::vector<net::EndpointId>& ranks() const { return bench_.ranks(); }
  const CollectiveParams& params() const { return bench_.params(); }
  std::uint64_t messages_total() const { return net_.message_count() - first_message_; }
  std::uint64_t messages_done() const;

 private:
  net::Network& net_;
  net::MessageId first_message_;
  TaskGraph graph_;
  CollectiveBenchmark bench_;
};

}  // namespace fabricsim::workload
