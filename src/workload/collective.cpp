#include "fabricsim/workload/collective.hpp"

#include <algorithm>
#include <numeric>

#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::workload {

using core::SimTime;
using util::ConfigError;

CollectiveOp parse_collective_op(const std::string& name) {
  if (name == "allreduce") return CollectiveOp::Allreduce;
  if (name == "reduce_scatter") return CollectiveOp::ReduceScatter;
  if (name == "allgather") return CollectiveOp::Allgather;
  if (name == "alltoall") return CollectiveOp::Alltoall;
  if (name == "broadcast") return CollectiveOp::Broadcast;
  throw ConfigError("workload.op: unknown collective '" + name + "'");
}

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::Allreduce: return "allreduce";
    case CollectiveOp::ReduceScatter: return "reduce_scatter";
    case CollectiveOp::Allgather: return "allgather";
    case CollectiveOp::Alltoall: return "alltoall";
    case CollectiveOp::Broadcast: return "broadcast";
  }
  return "?";
}

double busbw_factor(CollectiveOp op, std::uint32_t ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::Allreduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::Broadcast: return 1.0;
    default: return (n - 1) / n;
  }
}

std::vector<net::EndpointId> communicator(const CollectiveParams& p, std::uint32_t endpoints) {
  std::vector<net::EndpointId> out;
  if (p.placement == "list") {
    if (p.endpoints.size() < 2) throw ConfigError("workload.endpoints: a communicator needs at least 2 endpoints");
    std::vector<std::uint8_t> seen(endpoints, 0);
    for (std::uint32_t e : p.endpoints) {
      if (e >= endpoints)
        throw ConfigError("workload.endpoints: " + std::to_string(e) + " is not an endpoint (there are " +
                          std::to_string(endpoints) + ")");
      if (seen[e]) throw ConfigError("workload.endpoints: endpoint " + std::to_string(e) + " appears twice");
      seen[e] = 1;
      out.push_back(e);
    }
    return out;
  }
  const std::uint32_t n = p.ranks == 0 ? endpoints : p.ranks;
  if (n < 2 || n > endpoints)
    throw ConfigError("workload.ranks: " + std::to_string(n) + " ranks on " + std::to_string(endpoints) +
                      " endpoints (need 2 to " + std::to_string(endpoints) + ")");
  if (p.placement == "linear") {
    for (std::uint32_t i = 0; i < n; ++i) out.push_back(i);
  } else if (p.placement == "random") {
    std::vector<net::EndpointId> all(endpoints);
    std::iota(all.begin(), all.end(), 0u);
    util::RandomStream rng(p.seed, 0x434F'4D4D'0000ull);  // "COMM"
    for (std::uint32_t i = 0; i < n; ++i) std::swap(all[i], all[i + rng.below(endpoints - i)]);
    out.assign(all.begin(), all.begin() + n);
  } else {
    throw ConfigError("workload.placement: unknown placement '" + p.placement + "' (linear, random or list)");
  }
  return out;
}

CollectiveWorkload::CollectiveWorkload(net::Network& network, const CollectiveParams& params)
    : net_(network), params_(params) {
  ranks_ = communicator(params_, static_cast<std::uint32_t>(net_.topology().endpoint_count()));
  const bool ring_op = params_.op == CollectiveOp::Allreduce || params_.op == CollectiveOp::ReduceScatter ||
                       params_.op == CollectiveOp::Allgather;
  if (params_.op == CollectiveOp::Broadcast)
    throw ConfigError("workload.op: broadcast is not implemented yet (allreduce, reduce_scatter, allgather, alltoall)");
  if ((ring_op && params_.algorithm != "ring") || (params_.op == CollectiveOp::Alltoall && params_.algorithm != "pairwise"))
    throw ConfigError("workload.algorithm: '" + params_.algorithm + "' is not implemented for " + to_string(params_.op) +
                      " (ring for allreduce, reduce_scatter and allgather; pairwise for alltoall)");
  if (params_.sizes.empty()) throw ConfigError("workload.sizes: give at least one size");
  for (std::uint64_t s : params_.sizes)
    if (s < ranks_.size())
      throw ConfigError("workload.sizes: " + std::to_string(s) + " bytes cannot be split over " +
                        std::to_string(ranks_.size()) + " ranks (at least one byte each)");
  if (params_.iterations == 0) throw ConfigError("workload.iterations: must be at least 1");
  net_.set_listener(this);
  plan();
}

void CollectiveWorkload::plan() {
  const std::uint32_t n = static_cast<std::uint32_t>(ranks_.size());
  const bool allreduce = params_.op == CollectiveOp::Allreduce;
  const bool reduces = allreduce || params_.op == CollectiveOp::ReduceScatter;
  const bool alltoall = params_.op == CollectiveOp::Alltoall;
  const std::uint32_t steps = allreduce ? 2 * (n - 1) : n - 1;
  base_ = static_cast<net::MessageId>(net_.messages().size());
  std::uint32_t prev_gate0 = UINT32_MAX;  // gate of rank 0 in the previous op (gates are [op][rank])
  for (std::uint32_t si = 0; si < params_.sizes.size(); ++si) {
    const std::uint64_t S = params_.sizes[si];
    // Rank r's part j of the buffer: S/n, the first S mod n parts one byte
    // more.  Every part is cut into the same number of chunks C (from the
    // smallest part), so chunk c of step s+1 follows chunk c of step s.
    const auto part = [&](std::uint32_t j) { return S / n + (j < S % n ? 1 : 0); };
    const std::uint64_t smallest = S / n;
    const std::uint64_t C =
        params_.chunk_bytes == 0 ? 1 : std::max<std::uint64_t>(1, std::min(smallest, (smallest + params_.chunk_bytes - 1) / params_.chunk_bytes));
    const auto piece = [&](std::uint64_t bytes, std::uint64_t c) { return bytes / C + (c < bytes % C ? 1 : 0); };
    for (std::int32_t it = -static_cast<std::int32_t>(params_.warmup); it < static_cast<std::int32_t>(params_.iterations);
         ++it) {
      CollectiveInstance inst;
      inst.size_index = si;
      inst.iteration = it;
      inst.bytes = S;
      const auto first = static_cast<std::uint32_t>(msgs_.size());
      inst.first = base_ + first;
      const auto index = [&](std::uint32_t s, std::uint32_t r, std::uint64_t c) {
        return first + static_cast<std::uint32_t>((static_cast<std::uint64_t>(s) * n + r) * C + c);
      };
      const auto gate0 = static_cast<std::uint32_t>(gates_.size());
      for (std::uint32_t r = 0; r < n; ++r) gates_.push_back(Gate{static_cast<std::uint32_t>(steps * C), 0, 0});
      for (std::uint32_t s = 0; s < steps; ++s)
        for (std::uint32_t r = 0; r < n; ++r) {
          // Step s: ring: r -> r+1, part (r - s) mod n; pairwise: r -> r+s+1.
          const std::uint32_t to = alltoall ? (r + s + 1) % n : (r + 1) % n;
          const std::uint64_t bytes = alltoall ? part(to) : part((r + n - s % n) % n);
          for (std::uint64_t c = 0; c < C; ++c) {
            const net::MessageId id = net_.create(ranks_[r], ranks_[to], piece(bytes, c), 0);
            FABRICSIM_ASSERT(id == base_ + msgs_.size(), "collective message ids out of order");
            Msg m;
            m.gate = gate0 + to;
            m.reduce = reduces && s + 1 < n;  // reduce-scatter steps: the receiver reduces
            if (s + 1 < steps) m.next = index(s + 1, to, c);
            m.waits = static_cast<std::uint8_t>((s > 0 ? 1 : 0) + (prev_gate0 != UINT32_MAX ? 1 : 0));
            msgs_.push_back(m);
          }
        }
      // The previous operation's gate of rank r releases every message rank r sends in this one.
      if (prev_gate0 != UINT32_MAX)
        for (std::uint32_t r = 0; r < n; ++r) {
          Gate& g = gates_[prev_gate0 + r];
          g.post_begin = static_cast<std::uint32_t>(post_list_.size());
          for (std::uint32_t s = 0; s < steps; ++s)
            for (std::uint64_t c = 0; c < C; ++c) post_list_.push_back(index(s, r, c));
          g.post_end = static_cast<std::uint32_t>(post_list_.size());
        }
      prev_gate0 = gate0;
      inst.last = base_ + static_cast<net::MessageId>(msgs_.size());
      instances_.push_back(inst);
    }
  }
  // Operation 0's first step starts at once.
  const CollectiveInstance& first = instances_.front();
  for (std::uint32_t i = first.first - base_; i < first.last - base_; ++i)
    if (msgs_[i].waits == 0) post(i, params_.start);
}

void CollectiveWorkload::post(std::uint32_t i, SimTime at) { net_.post(base_ + i, at); }

void CollectiveWorkload::on_message_delivered(net::MessageId id) {
  ++done_;
  if (id < base_ || id - base_ >= msgs_.size()) return;
  const std::uint32_t i = id - base_;
  const SimTime now = net_.messages()[id].end_time;
  const Msg& m = msgs_[i];
  const auto release = [&](std::uint32_t j, SimTime ready) {
    Msg& t = msgs_[j];
    t.ready = std::max(t.ready, ready);
    if (--t.waits == 0) post(j, t.ready);
  };
  if (m.next != UINT32_MAX) {
    // The next step of this chunk leaves once it is here (and reduced).
    SimTime ready = now;
    if (m.reduce && params_.reduce_gbps > 0)
      ready = now + core::serialization_time(net_.messages()[id].bytes, params_.reduce_gbps);
    release(m.next, ready);
  }
  Gate& g = gates_[m.gate];
  if (--g.remaining == 0)
    for (std::uint32_t k = g.post_begin; k < g.post_end; ++k) release(post_list_[k], now);
}

}  // namespace fabricsim::workload
