#include "fabricsim/workload/dnn.hpp"

#include <algorithm>
#include <limits>
#include <cmath>

#include <fmt/format.h>

#include "fabricsim/util/error.hpp"

namespace fabricsim::workload {

using core::SimTime;
using util::ConfigError;
using TaskId = TaskGraph::TaskId;

const char* to_string(DnnPhase p) {
  switch (p) {
    case DnnPhase::Forward: return "forward";
    case DnnPhase::Backward: return "backward";
    case DnnPhase::Optimizer: return "optimizer";
    case DnnPhase::DataParallel: return "data_parallel";
    case DnnPhase::Pipeline: return "pipeline";
    case DnnPhase::TensorParallel: return "tensor_parallel";
    case DnnPhase::Alltoall: return "alltoall";
    case DnnPhase::Control: return "control";
  }
  return "?";
}

namespace {

std::uint64_t minibatch_of(const DnnParams& p) { return p.minibatch ? p.minibatch : p.model.minibatch; }

}  // namespace

std::uint32_t dnn_endpoints(const DnnParams& p, const std::string& prefix) {
  const std::uint64_t n = std::uint64_t{p.data_parallel} * p.pipeline_parallel * p.tensor_parallel;
  if (p.model.layers.empty()) throw ConfigError(prefix + ".model: the model '" + p.model.name + "' has no layers");
  if (p.pipeline_parallel > p.model.layers.size())
    throw ConfigError(prefix + ".pipeline_parallel: " + std::to_string(p.pipeline_parallel) + " stages for " +
                      std::to_string(p.model.layers.size()) + " layers of " + p.model.name);
  if (p.data_parallel % p.expert_parallel != 0)
    throw ConfigError(prefix + ".expert_parallel: " + std::to_string(p.expert_parallel) +
                      " does not divide data_parallel = " + std::to_string(p.data_parallel) +
                      " (experts are spread over groups of data-parallel replicas)");
  const std::uint64_t mb = minibatch_of(p);
  if (mb % (std::uint64_t{p.data_parallel} * p.micro_batches) != 0)
    throw ConfigError(prefix + ".micro_batches: a minibatch of " + std::to_string(mb) + " samples does not split into " +
                      std::to_string(p.data_parallel) + " replicas x " + std::to_string(p.micro_batches) +
                      " micro-batches of whole samples (set " + prefix + ".minibatch)");
  if (p.schedule != "gpipe" && p.schedule != "1f1b")
    throw ConfigError(prefix + ".schedule: '" + p.schedule + "' is not gpipe or 1f1b");
  if (n > UINT32_MAX) throw ConfigError(prefix + ".data_parallel: the layout is too large");
  // The model's per-sample sizes and times times the samples of a
  // micro-batch: every message at most 2^40 bytes (as workload.sizes), and
  // what one micro-batch computes through every layer, per iteration, inside
  // the int64-picosecond range of simulated time.
  const double b = static_cast<double>(mb) / p.data_parallel / p.micro_batches;
  double iteration_ns = p.model.optimizer_ns;
  for (const DnnLayer& l : p.model.layers) {
    const double most = std::max({static_cast<double>(l.activation_bytes) / p.tensor_parallel,
                                  static_cast<double>(l.tp_allreduce_bytes), static_cast<double>(l.alltoall_bytes)});
    if (most * b > 0x1p40)
      throw ConfigError(fmt::format("{}.model: layer '{}' of {}: {:.4g} bytes per sample x {:.4g} samples per "
                                    "micro-batch is a message of more than 2^40 bytes",
                                    prefix, l.name, p.model.name, most, b));
    iteration_ns += (l.forward_ns + l.backward_ns) * b / p.tensor_parallel;
  }
  // Every layer runs forward and backward for each micro-batch on each of
  // the D x O replicas and shards of its stage, every iteration: a lower
  // bound of the plan's compute tasks (each task some 100 bytes or more).
  const double tasks = 2.0 * (static_cast<double>(p.warmup) + p.iterations) * p.micro_batches *
                       static_cast<double>(p.model.layers.size()) * p.data_parallel * p.tensor_parallel;
  if (tasks > static_cast<double>(p.max_tasks))
    throw ConfigError(fmt::format("{}.micro_batches: {} iterations x {} micro-batches x {} layers x {} replicas x {} "
                                  "shards x 2 passes plan at least {:.3g} compute tasks; a run can hold {} (what "
                                  "engine.memory_limit_gib, or this machine's memory, leaves for them)",
                                  prefix, p.warmup + p.iterations, p.micro_batches, p.model.layers.size(),
                                  p.data_parallel, p.tensor_parallel, tasks, p.max_tasks));
  const double end_ps = (static_cast<double>(p.start.ps()) / 1000.0 +
                         iteration_ns * (static_cast<double>(p.warmup) + p.iterations)) * 1000.0;
  if (end_ps > 0x1p63)
    throw ConfigError(fmt::format("{}.model: the compute of {} alone would end after {:.3g} s of simulated time "
                                  "({} iterations of at least {:.3g} s): beyond the int64-picosecond range of about "
                                  "106 days",
                                  prefix, p.model.name, end_ps * 1e-12, p.warmup + p.iterations, iteration_ns * 1e-9));
  return static_cast<std::uint32_t>(n);
}

// Plans a DnnJob into a task graph, iteration by iteration: the state its
// steps share (every endpoint's latest task, `cur`) and the steps.
class DnnJob::Planner {
 public:
  Planner(DnnJob& job, TaskGraph& g)
      : j_(job),
        g_(g),
        p_(job.params_),
        model_(job.params_.model),
        D(p_.data_parallel),
        P(p_.pipeline_parallel),
        O(p_.tensor_parallel),
        E(p_.expert_parallel),
        M(p_.micro_batches),
        L(static_cast<std::uint32_t>(model_.layers.size())),
        b(static_cast<double>(minibatch_of(p_)) / D / M),
        K(p_.endpoints.size()) {
    tp_spec_.op = CollectiveOp::Allreduce;
    tp_spec_.algorithm = p_.tp_algorithm;
    a2a_spec_.op = CollectiveOp::Alltoall;
    a2a_spec_.algorithm = p_.alltoall_algorithm;
    dp_spec_.op = CollectiveOp::Allreduce;
    dp_spec_.algorithm = p_.dp_algorithm;
  }

  void plan() {
    j_.tasks_.assign(K, {});
    const std::uint32_t iters = p_.warmup + p_.iterations;
    j_.iter_begin_.assign(iters, std::vector<TaskId>(K, TaskGraph::kNone));
    j_.iter_end_.assign(iters, std::vector<TaskId>(K, TaskGraph::kNone));
    prev_end_.assign(K, TaskGraph::kNone);
    cur_.assign(K, TaskGraph::kNone);
    for (std::uint32_t it = 0; it < iters; ++it) {
      begin_iteration(it);
      pipeline_messages(it);
      for (std::uint32_t p = 0; p < P; ++p) {
        const std::uint32_t lo = stage_lo(p), hi = stage_lo(p + 1);
        std::vector<std::vector<TaskId>> grad_ready(hi - lo, std::vector<TaskId>(K, TaskGraph::kNone));
        const auto units = stage_units(p);
        for (std::size_t u = 0; u < units.size(); ++u) stage_pass(it, p, units[u], u + 1 == units.size(), grad_ready);
        if (D > 1) gradient_buckets(it, p, grad_ready);
      }
      end_iteration(it);
    }
  }

 private:
  std::size_t index(std::uint32_t d, std::uint32_t p, std::uint32_t o) const {
    return (std::size_t{d} * P + p) * O + o;
  }
  net::EndpointId ep(std::size_t k) const { return p_.endpoints[k]; }
  std::uint32_t label(DnnPhase ph) const { return j_.job_ << 8 | static_cast<std::uint32_t>(ph); }
  std::uint32_t stage_lo(std::uint32_t p) const { return static_cast<std::uint32_t>(std::uint64_t{p} * L / P); }
  bool at_stage(std::size_t k, std::uint32_t p) const { return (k / O) % P == p; }
  std::uint64_t bytes(double per_sample, std::uint64_t at_least) const {
    return std::max<std::uint64_t>(at_least, static_cast<std::uint64_t>(std::ceil(per_sample * b)));
  }

  // One collective over `members` (job endpoint indices), each waiting for
  // its cur; cur = its end.
  void collective(CollectiveSpec spec, const std::vector<std::size_t>& members, DnnPhase ph, std::uint32_t it) {
    std::vector<net::EndpointId> ranks;
    std::vector<TaskId> begin;
    for (std::size_t k : members) {
      ranks.push_back(ep(k));
      begin.push_back(cur_[k]);
    }
    spec.bytes = std::max(spec.bytes, min_collective_bytes(spec, static_cast<std::uint32_t>(members.size())));
    check_collective(spec, static_cast<std::uint32_t>(members.size()));
    const auto end = append_collective(g_, spec, ranks, begin, label(ph));
    for (std::size_t i = 0; i < members.size(); ++i) {
      j_.ops_.push_back(Op{static_cast<std::uint32_t>(members[i]), it, ph, cur_[members[i]], end[i]});
      cur_[members[i]] = end[i];
    }
  }

  void compute(std::size_t k, double ns, DnnPhase ph) {
    const TaskId t = g_.add_compute(ep(k), SimTime::from_ns_f(ns), label(ph));
    if (cur_[k] != TaskGraph::kNone) g_.depend(cur_[k], t);
    cur_[k] = t;
    j_.tasks_[k].push_back(t);
  }

  // A join per endpoint after its previous iteration (or at the start).
  void begin_iteration(std::uint32_t it) {
    for (std::size_t k = 0; k < K; ++k) {
      const TaskId j = g_.add_join(ep(k), label(DnnPhase::Control));
      if (prev_end_[k] != TaskGraph::kNone)
        g_.depend(prev_end_[k], j);
      else
        g_.not_before(j, p_.start);
      j_.iter_begin_[it][k] = cur_[k] = j;
      j_.tasks_[k].push_back(j);
    }
  }

  // Pipeline messages: forward m from stage p to p+1, backward m from p+1 to p.
  void pipeline_messages(std::uint32_t it) {
    fwd_.assign(std::size_t{M} * K, TaskGraph::kNone);
    bwd_.assign(std::size_t{M} * K, TaskGraph::kNone);
    for (std::uint32_t m = 0; m < M; ++m)
      for (std::uint32_t d = 0; d < D; ++d)
        for (std::uint32_t p = 0; p + 1 < P; ++p)
          for (std::uint32_t o = 0; o < O; ++o) {
            const std::uint64_t act =
                bytes(static_cast<double>(model_.layers[stage_lo(p + 1) - 1].activation_bytes) / O, 1);
            const std::size_t a = index(d, p, o), c = index(d, p + 1, o);
            fwd_[m * K + a] = g_.add_message(ep(a), ep(c), act, label(DnnPhase::Pipeline));
            bwd_[m * K + c] = g_.add_message(ep(c), ep(a), act, label(DnnPhase::Pipeline));
            j_.ops_.push_back(
                Op{static_cast<std::uint32_t>(a), it, DnnPhase::Pipeline, fwd_[m * K + a], fwd_[m * K + a]});
            j_.ops_.push_back(
                Op{static_cast<std::uint32_t>(c), it, DnnPhase::Pipeline, bwd_[m * K + c], bwd_[m * K + c]});
          }
  }

  // The stage's order of (micro-batch, forward?) units.
  std::vector<std::pair<std::uint32_t, bool>> stage_units(std::uint32_t p) const {
    std::vector<std::pair<std::uint32_t, bool>> units;
    if (p_.schedule == "gpipe") {
      for (std::uint32_t m = 0; m < M; ++m) units.emplace_back(m, true);
      for (std::uint32_t m = M; m-- > 0;) units.emplace_back(m, false);
    } else {
      const std::uint32_t w = std::min(P - p - 1, M);
      for (std::uint32_t m = 0; m < w; ++m) units.emplace_back(m, true);
      for (std::uint32_t i = 0; i + w < M; ++i) {
        units.emplace_back(w + i, true);
        units.emplace_back(i, false);
      }
      for (std::uint32_t m = M - w; m < M; ++m) units.emplace_back(m, false);
    }
    return units;
  }

  // One unit of stage p: its input from the neighbouring stage, its layers'
  // compute and collectives, its output to the next stage.  The last
  // backward unit marks when each layer's gradients are ready.
  void stage_pass(std::uint32_t it, std::uint32_t p, std::pair<std::uint32_t, bool> unit, bool last_unit,
                  std::vector<std::vector<TaskId>>& grad_ready) {
    const auto [m, forward] = unit;
    const bool last_backward = !forward && last_unit;
    const std::uint32_t lo = stage_lo(p), hi = stage_lo(p + 1);
    for (std::uint32_t d = 0; d < D; ++d)
      for (std::uint32_t o = 0; o < O; ++o) {
        const std::size_t k = index(d, p, o);
        // Inputs from the neighbouring stage.
        const TaskId in = forward ? (p > 0 ? fwd_[m * K + index(d, p - 1, o)] : TaskGraph::kNone)
                                  : (p + 1 < P ? bwd_[m * K + index(d, p + 1, o)] : TaskGraph::kNone);
        if (in != TaskGraph::kNone) {
          const TaskId j = g_.add_join(ep(k), label(DnnPhase::Control));
          g_.depend(cur_[k], j);
          g_.depend(in, j);
          cur_[k] = j;
        }
      }
    for (std::uint32_t i = 0; i < hi - lo; ++i) {
      const std::uint32_t l = forward ? lo + i : hi - 1 - i;
      layer_pass(it, p, model_.layers[l], forward);
      if (last_backward)
        for (std::size_t k = 0; k < K; ++k)
          if (at_stage(k, p)) grad_ready[l - lo][k] = cur_[k];
    }
    // Outputs to the neighbouring stage (they do not block the stage).
    for (std::uint32_t d = 0; d < D; ++d)
      for (std::uint32_t o = 0; o < O; ++o) {
        const std::size_t k = index(d, p, o);
        const TaskId out =
            forward ? (p + 1 < P ? fwd_[m * K + k] : TaskGraph::kNone) : (p > 0 ? bwd_[m * K + k] : TaskGraph::kNone);
        if (out != TaskGraph::kNone) g_.depend(cur_[k], out);
      }
  }

  // A layer's pass at stage p: its compute in one piece per communication,
  // each followed by it (tensor-parallel allreduces, then alltoalls).
  void layer_pass(std::uint32_t it, std::uint32_t p, const DnnLayer& layer, bool forward) {
    const std::uint32_t tp = O > 1 ? layer.tp_allreduces : 0, a2a = E > 1 ? layer.alltoalls : 0;
    const std::uint32_t pieces = std::max(1u, tp + a2a);
    const double ns = (forward ? layer.forward_ns : layer.backward_ns) * b / O / pieces;
    for (std::uint32_t piece = 0; piece < pieces; ++piece) {
      for (std::size_t k = 0; k < K; ++k)
        if (at_stage(k, p)) compute(k, ns, forward ? DnnPhase::Forward : DnnPhase::Backward);
      if (piece < tp) {
        tp_spec_.bytes = bytes(static_cast<double>(layer.tp_allreduce_bytes), 1);
        for (std::uint32_t d = 0; d < D; ++d) {
          std::vector<std::size_t> members;
          for (std::uint32_t o = 0; o < O; ++o) members.push_back(index(d, p, o));
          collective(tp_spec_, members, DnnPhase::TensorParallel, it);
        }
      } else if (piece < tp + a2a) {
        a2a_spec_.bytes = bytes(static_cast<double>(layer.alltoall_bytes), 1);
        for (std::uint32_t g0 = 0; g0 < D; g0 += E)
          for (std::uint32_t o = 0; o < O; ++o) {
            std::vector<std::size_t> members;
            for (std::uint32_t d = g0; d < g0 + E; ++d) members.push_back(index(d, p, o));
            collective(a2a_spec_, members, DnnPhase::Alltoall, it);
          }
      }
    }
  }

  // Gradient buckets of stage p, in backward order, one allreduce each per
  // (stage, shard); the iteration ends after the compute and the last bucket.
  void gradient_buckets(std::uint32_t it, std::uint32_t p, const std::vector<std::vector<TaskId>>& grad_ready) {
    const std::uint32_t lo = stage_lo(p), hi = stage_lo(p + 1);
    const auto W = model_.bytes_per_value;
    std::vector<TaskId> compute_end(K);
    for (std::size_t k = 0; k < K; ++k) compute_end[k] = cur_[k];
    std::vector<TaskId> bucket_end(K, TaskGraph::kNone);
    std::uint64_t acc = 0;
    for (std::uint32_t i = 0; i < hi - lo; ++i) {
      const std::uint32_t l = hi - 1 - i;
      acc += (model_.layers[l].params * W + O - 1) / O;
      const bool last = i + 1 == hi - lo;
      if (!(last || (p_.bucket_bytes > 0 && acc >= p_.bucket_bytes))) continue;
      if (acc == 0) continue;
      dp_spec_.bytes = acc;
      acc = 0;
      for (std::uint32_t o = 0; o < O; ++o) {
        std::vector<std::size_t> members;
        for (std::uint32_t d = 0; d < D; ++d) {
          const std::size_t k = index(d, p, o);
          members.push_back(k);
          // Starts when its gradients are ready (or, with one bucket,
          // after the whole backward pass) and the previous bucket is done.
          const TaskId j = g_.add_join(ep(k), label(DnnPhase::Control));
          g_.depend(p_.bucket_bytes > 0 ? grad_ready[l - lo][k] : compute_end[k], j);
          if (bucket_end[k] != TaskGraph::kNone) g_.depend(bucket_end[k], j);
          cur_[k] = j;
        }
        collective(dp_spec_, members, DnnPhase::DataParallel, it);
        for (std::size_t k : members) bucket_end[k] = cur_[k];
      }
    }
    for (std::size_t k = 0; k < K; ++k)
      if (at_stage(k, p) && bucket_end[k] != TaskGraph::kNone) {
        const TaskId j = g_.add_join(ep(k), label(DnnPhase::Control));
        g_.depend(compute_end[k], j);
        g_.depend(bucket_end[k], j);
        cur_[k] = j;
      }
  }

  // The optimizer step, then a join per endpoint that ends the iteration.
  void end_iteration(std::uint32_t it) {
    for (std::size_t k = 0; k < K; ++k) {
      if (model_.optimizer_ns > 0) compute(k, model_.optimizer_ns, DnnPhase::Optimizer);
      const TaskId j = g_.add_join(ep(k), label(DnnPhase::Control));
      g_.depend(cur_[k], j);
      j_.iter_end_[it][k] = prev_end_[k] = cur_[k] = j;
      j_.tasks_[k].push_back(j);
    }
  }

  DnnJob& j_;
  TaskGraph& g_;
  const DnnParams& p_;
  const DnnModel& model_;
  const std::uint32_t D, P, O, E, M, L;
  const double b;  // samples per micro-batch
  const std::size_t K;
  CollectiveSpec tp_spec_, a2a_spec_, dp_spec_;
  std::vector<TaskId> cur_, prev_end_;
  std::vector<TaskId> fwd_, bwd_;  // this iteration's pipeline messages, by micro-batch x endpoint
};

DnnJob::DnnJob(TaskGraph& g, const DnnParams& params, std::uint32_t job) : params_(params), job_(job) {
  if (params_.endpoints.size() != dnn_endpoints(params_))
    throw ConfigError("workload.data_parallel: the layout needs " + std::to_string(dnn_endpoints(params_)) +
                      " endpoints, the job has " + std::to_string(params_.endpoints.size()));
  Planner(*this, g).plan();
}

DnnJob::Partial DnnJob::partial(const TaskGraph& g) const {
  const net::Network& net = g.network();
  const auto local = [&](net::EndpointId e) { return net.owns(net.topology().endpoint_node(e)); };
  Partial out;
  const std::size_t K = params_.endpoints.size();
  const std::uint32_t iters = iterations_total();
  out.times.assign(2 * (iters * K + ops_.size()), INT64_MIN);
  for (std::uint32_t it = 0; it < iters; ++it)
    for (std::size_t k = 0; k < K; ++k)
      if (local(params_.endpoints[k])) {
        out.times[2 * (it * K + k)] = g.task(iter_begin_[it][k]).end.ps();
        out.times[2 * (it * K + k) + 1] = g.task(iter_end_[it][k]).end.ps();
      }
  const std::size_t base = 2 * iters * K;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    const auto& b = g.task(op.begin);
    const auto& e = g.task(op.end);
    if (b.kind == TaskGraph::Kind::Message) {  // a pipeline send: posted at the source, arrived at the destination
      if (local(b.at)) out.times[base + 2 * i] = b.start.ps();
      if (local(g.completes_at(op.end))) out.times[base + 2 * i + 1] = e.end.ps();
    } else if (local(params_.endpoints[op.endpoint_index])) {
      out.times[base + 2 * i] = b.end.ps();
      out.times[base + 2 * i + 1] = e.end.ps();
    }
  }
  return out;
}

std::vector<DnnIteration> DnnJob::results(const Partial& combined, const TaskGraph& g) const {
  const std::size_t K = params_.endpoints.size();
  const std::uint32_t iters = iterations_total();
  // Compute per (iteration, endpoint, phase), from the plan.
  std::vector<double> phase(std::size_t{iters} * K * kDnnPhases, 0.0);
  each_compute(g, [&](std::size_t k, std::uint32_t it, const TaskGraph::Task& task) {
    phase[(it * K + k) * kDnnPhases + (task.label & 0xFF)] += task.duration().ns();
  });
  const std::size_t base = 2 * iters * K;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const std::int64_t a = combined.times[base + 2 * i], z = combined.times[base + 2 * i + 1];
    // Not begun, or begun and never completed (its end is SimTime::max()):
    // no duration to add.
    if (a == INT64_MIN || z == INT64_MIN || a == INT64_MAX || z == INT64_MAX) continue;
    const Op& op = ops_[i];
    phase[(op.iteration * K + op.endpoint_index) * kDnnPhases + static_cast<std::size_t>(op.phase)] +=
        static_cast<double>(z - a) / 1000.0;
  }
  std::vector<DnnIteration> out;
  for (std::uint32_t it = 0; it < iters; ++it) {
    DnnIteration r;
    r.iteration = static_cast<std::int32_t>(it) - static_cast<std::int32_t>(params_.warmup);
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    std::size_t busiest = 0;
    double most = -1;
    for (std::size_t k = 0; k < K; ++k) {
      // (A task that never completed ends at SimTime::max().)
      if (combined.times[2 * (it * K + k) + 1] == INT64_MAX) r.finished = false;
      lo = std::min(lo, combined.times[2 * (it * K + k)]);
      hi = std::max(hi, combined.times[2 * (it * K + k) + 1]);
      const double* ph = &phase[(it * K + k) * kDnnPhases];
      const double c = ph[0] + ph[1] + ph[2];
      if (c > most) {
        most = c;
        busiest = k;
      }
    }
    // Iterations overlap at the edges (a last stage starts the next one
    // while the first still finishes this one): an iteration's time runs
    // from the end of the previous one, so that the times add up.
    r.start_ns = out.empty() || !out.back().finished ? (lo == INT64_MAX ? -1.0 : static_cast<double>(lo) / 1000.0)
                                                     : out.back().end_ns;
    r.end_ns = r.finished ? static_cast<double>(hi) / 1000.0 : -1.0;
    r.time_ns = r.finished ? r.end_ns - r.start_ns : std::numeric_limits<double>::quiet_NaN();
    r.compute_ns = most;
    r.exposed_comm_ns = r.time_ns - most;
    for (std::size_t q = 0; q < kDnnPhases; ++q) r.phase_ns[q] = phase[(it * K + busiest) * kDnnPhases + q];
    out.push_back(r);
  }
  return out;
}

std::uint64_t DnnJob::timeline_rows(const TaskGraph& g) const {
  std::uint64_t n = ops_.size();
  each_compute(g, [&](std::size_t, std::uint32_t, const TaskGraph::Task&) { ++n; });
  return n;
}

void DnnJob::timeline(const TaskGraph& g, const Partial& combined, std::uint64_t first_row, bool communications,
                      Timeline& out) const {
  const net::Network& net = g.network();
  const std::size_t K = params_.endpoints.size();
  const auto add = [&](std::uint64_t row, std::size_t k, std::uint32_t it, std::uint8_t phase, double a, double z) {
    out.row.push_back(row);
    out.job.push_back(job_);
    out.endpoint.push_back(params_.endpoints[k]);
    out.iteration.push_back(static_cast<std::int32_t>(it) - static_cast<std::int32_t>(params_.warmup));
    out.phase.push_back(phase);
    out.start_ns.push_back(a);
    out.end_ns.push_back(z);
  };
  std::uint64_t row = first_row;
  each_compute(g, [&](std::size_t k, std::uint32_t it, const TaskGraph::Task& task) {
    if (net.owns(net.topology().endpoint_node(params_.endpoints[k])))  // (-1: never ran, the run was cut short)
      add(row, k, it, static_cast<std::uint8_t>(task.label & 0xFF),
          task.start == SimTime::max() ? -1.0 : task.start.ns(), task.end == SimTime::max() ? -1.0 : task.end.ns());
    ++row;
  });
  if (!communications) return;
  const std::size_t base = 2 * std::size_t{iterations_total()} * K;
  for (std::size_t i = 0; i < ops_.size(); ++i, ++row) {
    const Op& op = ops_[i];
    // INT64_MIN: no rank recorded it; INT64_MAX (SimTime::max()): it never
    // happened before the run was cut short.
    const auto ns = [](std::int64_t ps) {
      return ps == INT64_MIN || ps == INT64_MAX ? -1.0 : static_cast<double>(ps) / 1000.0;
    };
    add(row, op.endpoint_index, op.iteration, static_cast<std::uint8_t>(op.phase), ns(combined.times[base + 2 * i]),
        ns(combined.times[base + 2 * i + 1]));
  }
}

}  // namespace fabricsim::workload
