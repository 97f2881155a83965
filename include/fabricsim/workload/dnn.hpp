// DNN training iterations (issue 7): a model's layers, a data x pipeline x
// tensor x expert parallel layout on endpoints, and per iteration a task
// graph of compute and communication (semantics in docs/model.md):
//
// - Every endpoint holds one pipeline stage (a contiguous share of the
//   layers) of one data-parallel replica, as one of `tensor_parallel`
//   shards.  Its local batch (minibatch / data_parallel) is cut into
//   `micro_batches`.
// - A layer's pass over b samples computes for b * forward_ns / O (or
//   backward_ns), cut into one piece per communication of the layer, each
//   piece followed by it: the tensor-parallel allreduces (among the O
//   shards, on the critical path), then the alltoalls (among
//   `expert_parallel` replicas: MoE dispatch and combine, DLRM embeddings).
// - Stage boundaries send the last layer's activations (forward) and their
//   gradients (backward), b * activation_bytes / O, to the same shard of
//   the neighbouring stage; the send does not block the sender.
// - Stages run their micro-batches in the order of the schedule: `gpipe`
//   (all forwards, then all backwards) or `1f1b` (P - p - 1 forwards of
//   warm-up, then one forward and one backward in turn).
// - Gradients are reduced across the data-parallel replicas in buckets of
//   at least `bucket_bytes` (in backward order, one allreduce each, on one
//   communicator per (stage, shard), one after the other) that start as
//   soon as the last micro-batch's backward of their layers is done and
//   overlap the rest of the backward pass; bucket_bytes = 0: one bucket
//   after the whole backward pass.
// - The optimizer step (optimizer_ns) follows the last bucket; the next
//   iteration starts at an endpoint when it has finished everything.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/workload/collective.hpp"
#include "fabricsim/workload/task_graph.hpp"

namespace fabricsim::workload {

struct DnnLayer {
  std::string name;
  double forward_ns = 0;   ///< per sample, unsharded
  double backward_ns = 0;  ///< per sample, unsharded
  std::uint64_t params = 0;
  std::uint64_t activation_bytes = 0;    ///< output activations per sample
  std::uint64_t tp_allreduce_bytes = 0;  ///< per sample, per tensor-parallel allreduce
  std::uint32_t tp_allreduces = 0;       ///< per pass
  std::uint64_t alltoall_bytes = 0;      ///< per sample, sent by each rank per alltoall
  std::uint32_t alltoalls = 0;           ///< per pass
};

struct DnnModel {
  std::string name;
  std::string source;
  std::uint32_t bytes_per_value = 4;
  std::uint64_t minibatch = 1;
  double optimizer_ns = 0;
  std::vector<DnnLayer> layers;  ///< with `count` expanded
};

/// What a task of a DNN job is, for the breakdown (low byte of its label).
enum class DnnPhase : std::uint8_t { Forward, Backward, Optimizer, DataParallel, Pipeline, TensorParallel, Alltoall, Control };
const char* to_string(DnnPhase p);
constexpr std::size_t kDnnPhases = 8;

struct DnnParams {
  DnnModel model;
  std::uint32_t data_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  std::uint32_t tensor_parallel = 1;
  std::uint32_t expert_parallel = 1;
  std::uint32_t micro_batches = 1;
  std::string schedule = "1f1b";  ///< or "gpipe"
  std::uint64_t minibatch = 0;    ///< 0: the model's
  std::uint64_t bucket_bytes = 25u << 20;
  std::string dp_algorithm = "ring";
  std::string tp_algorithm = "ring";
  std::string alltoall_algorithm = "pairwise";
  std::uint32_t iterations = 1;
  std::uint32_t warmup = 0;
  core::SimTime start;
  /// The endpoints of the job in layout order: index ((d * P) + p) * O + o
  /// is data replica d, stage p, shard o.
  std::vector<net::EndpointId> endpoints;
  /// The most compute tasks the plan may have (memory; dnn_endpoints
  /// refuses a layout whose plan has more, naming engine.memory_limit_gib).
  std::uint64_t max_tasks = UINT64_MAX;
};

/// Endpoints the layout needs (D * P * O), and checks of the layout against
/// the model; throws ConfigError naming `prefix`.* keys.
std::uint32_t dnn_endpoints(const DnnParams& p, const std::string& prefix = "workload");

/// Per iteration of a job, over its endpoints.
struct DnnIteration {
  std::int32_t iteration = 0;  ///< < 0: warm-up
  double start_ns = 0;  ///< first iteration: its first task; later ones: the previous one's end
  double end_ns = 0;    ///< its last task
  double time_ns = 0;
  double compute_ns = 0;       ///< largest compute time of one endpoint
  double exposed_comm_ns = 0;  ///< time - compute_ns
  /// false when the run stopped first (engine.end_ns): end_ns -1, time_ns
  /// and exposed_comm_ns NaN.
  bool finished = true;
  /// Per phase: compute time (Forward, Backward, Optimizer) or communication
  /// time (begin to end of its operations) of the endpoint with the most
  /// compute, in ns.
  double phase_ns[kDnnPhases] = {};
};

class DnnJob {
 public:
  /// Plans the job's iterations into `g`; tasks are labelled job << 8 | phase.
  DnnJob(TaskGraph& g, const DnnParams& params, std::uint32_t job);
  const DnnParams& params() const { return params_; }
  /// This process's view of the job's times, to be combined over
  /// processes by element-wise maximum (unknown entries are INT64_MIN):
  /// every iteration's begin and end at every endpoint, and the begin and
  /// end of every communication of every endpoint (ps).
  struct Partial {
    std::vector<std::int64_t> times;
  };
  Partial partial(const TaskGraph& g) const;
  /// Iteration results from the combined partials.
  std::vector<DnnIteration> results(const Partial& combined, const TaskGraph& g) const;

  /// Rows of the timeline (output.timeline): per endpoint its compute tasks
  /// and its communications (begin to end), with iteration and phase.  Row
  /// numbers are the same on every process: the job's compute tasks in
  /// endpoint-layout order, then its communications, from `first_row` on.
  struct Timeline {
    std::vector<std::uint64_t> row;
    std::vector<std::uint32_t> job, endpoint;
    std::vector<std::int32_t> iteration;
    std::vector<std::uint8_t> phase;
    std::vector<double> start_ns, end_ns;
  };
  std::uint64_t timeline_rows(const TaskGraph& g) const;
  /// Appends the rows this process knows: compute tasks at its endpoints,
  /// and (if `communications`) every communication, from the combined partials.
  void timeline(const TaskGraph& g, const Partial& combined, std::uint64_t first_row, bool communications,
                Timeline& out) const;
  std::uint32_t iterations_total() const { return params_.warmup + params_.iterations; }

 private:
  class Planner;  // the constructor's steps (dnn.cpp)
  struct Op {  // a communication of one endpoint: from its begin dependency to its end
    std::uint32_t endpoint_index;
    std::uint32_t iteration;
    DnnPhase phase;
    TaskGraph::TaskId begin, end;
  };
  /// f(endpoint index, iteration index, task) for every compute task, per
  /// endpoint in plan order.
  template <typename F>
  void each_compute(const TaskGraph& g, F f) const {
    for (std::size_t k = 0; k < tasks_.size(); ++k) {
      std::uint32_t it = 0;
      for (TaskGraph::TaskId t : tasks_[k]) {
        if (t == iter_end_[it][k]) {
          ++it;
          continue;
        }
        if (g.task(t).kind == TaskGraph::Kind::Compute) f(k, it, g.task(t));
      }
    }
  }
  DnnParams params_;
  std::uint32_t job_;
  std::vector<std::vector<TaskGraph::TaskId>> tasks_;  // per endpoint index: its compute and join tasks
  std::vector<Op> ops_;
  std::vector<std::vector<TaskGraph::TaskId>> iter_begin_, iter_end_;  // per iteration, per endpoint index
};

}  // namespace fabricsim::workload
