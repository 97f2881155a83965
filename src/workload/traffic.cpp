#include "fabricsim/workload/traffic.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::workload {

using core::SimTime;

namespace {
// Stream ids of the traffic generator (entity-independent streams).
constexpr std::uint64_t kStreamPermutation = 0x7065'726d'0000'0000ull;
constexpr std::uint64_t kStreamUniform = 0x756e'6966'0000'0000ull;
constexpr std::uint64_t kStreamBisection = 0x6269'7365'0000'0000ull;
}  // namespace

Pattern parse_pattern(const std::string& name) {
  if (name == "permutation") return Pattern::Permutation;
  if (name == "uniform") return Pattern::Uniform;
  if (name == "alltoall") return Pattern::Alltoall;
  if (name == "incast") return Pattern::Incast;
  if (name == "bisection") return Pattern::Bisection;
  if (name == "ring") return Pattern::Ring;
  throw util::ConfigError("workload.pattern: unknown pattern '" + name + "'");
}

std::vector<std::uint32_t> random_derangement(std::uint32_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  if (n < 2) return perm;
  util::RandomStream rng(seed, kStreamPermutation);
  for (std::uint32_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  // Remove fixed points by swapping each with its successor (cyclically);
  // a swap never creates a new fixed point.
  for (std::uint32_t i = 0; i < n; ++i)
    if (perm[i] == i) std::swap(perm[i], perm[(i + 1) % n]);
  return perm;
}

std::vector<PlannedMessage> plan_traffic(const TrafficParams& p, std::uint32_t n, SimTime message_time) {
  return plan_traffic(p, n, std::vector<SimTime>(n, message_time));
}

std::vector<PlannedMessage> plan_traffic(const TrafficParams& p, std::uint32_t n,
                                         const std::vector<SimTime>& message_time) {
  FABRICSIM_ASSERT(message_time.size() >= n, "a message time per source");
  if (n < 2 && count_traffic(p, n) > 0)
    throw util::ConfigError("workload.pattern: synthetic traffic needs at least 2 endpoints; the topology has " +
                            std::to_string(n));
  // Messages x endpoints: message ids are 32-bit.
  if (count_traffic(p, n) > std::numeric_limits<net::MessageId>::max())
    throw util::ConfigError(fmt::format("workload.messages: {} messages per source on {} endpoints are {} messages, "
                                        "more than the 2^32 - 1 a run can hold",
                                        p.messages, n, count_traffic(p, n)));
  std::vector<PlannedMessage> out;
  std::uint32_t s = 0;  // the source whose messages are being planned
  const auto post = [&](std::uint32_t k) {
    const double gap_ps = static_cast<double>(message_time[s].ps()) / p.load;
    if (static_cast<double>(p.start.ps()) + gap_ps * (static_cast<double>(k) + 1.0) > 0x1p61)
      throw util::ConfigError(fmt::format(
          "workload.load: message {} of a source would be posted after {:.3g} s of simulated time (a message takes "
          "{:.3g} s at the source's injection rate, load {:g}): beyond the int64-picosecond range of about 106 days; "
          "raise workload.load or the link rates (network.link_gbps)",
          k, (static_cast<double>(p.start.ps()) + gap_ps * (static_cast<double>(k) + 1.0)) * 1e-12,
          static_cast<double>(message_time[s].ps()) * 1e-12, p.load));
    const auto gap = SimTime::from_ps(static_cast<std::int64_t>(gap_ps));
    return p.start + gap * static_cast<std::int64_t>(k);
  };
  switch (p.pattern) {
    case Pattern::Permutation: {
      const auto perm = random_derangement(n, p.seed);
      for (s = 0; s < n; ++s)
        for (std::uint32_t k = 0; k < p.messages; ++k) out.push_back({s, perm[s], p.message_bytes, post(k)});
      break;
    }
    case Pattern::Uniform: {
      for (s = 0; s < n; ++s) {
        util::RandomStream rng(p.seed, kStreamUniform + s);
        for (std::uint32_t k = 0; k < p.messages; ++k) {
          auto d = static_cast<std::uint32_t>(rng.below(n - 1));
          if (d >= s) ++d;
          out.push_back({s, d, p.message_bytes, post(k)});
        }
      }
      break;
    }
    case Pattern::Alltoall: {
      const std::vector<std::uint32_t> shifts = alltoall_shifts(n, p.messages, p.alltoall_sample);
      for (s = 0; s < n; ++s)
        for (std::uint32_t k = 0; k < shifts.size(); ++k) out.push_back({s, (s + shifts[k]) % n, p.message_bytes, post(k)});
      break;
    }
    case Pattern::Ring: {
      // Each endpoint to the next (the traffic of a ring collective's step).
      for (s = 0; s < n; ++s)
        for (std::uint32_t i = 0; i < std::max(p.messages, 1u); ++i)
          out.push_back({s, (s + 1) % n, p.message_bytes, post(i)});
      break;
    }
    case Pattern::Incast: {
      if (p.incast_target >= n)
        throw util::ConfigError("workload.incast_target: " + std::to_string(p.incast_target) +
                                " is not an endpoint (there are " + std::to_string(n) + ")");
      const std::uint32_t senders = p.incast_sources == 0 ? n - 1 : p.incast_sources;
      if (senders > n - 1)
        throw util::ConfigError("workload.incast_sources: " + std::to_string(senders) + " exceeds the " +
                                std::to_string(n - 1) + " other endpoints");
      std::uint32_t added = 0;
      for (s = 0; s < n && added < senders; ++s) {
        if (s == p.incast_target) continue;
        ++added;
        for (std::uint32_t k = 0; k < p.messages; ++k) out.push_back({s, p.incast_target, p.message_bytes, post(k)});
      }
      break;
    }
    case Pattern::Bisection: {
      const std::uint32_t half = n / 2;
      std::vector<std::uint32_t> upper(half);
      std::iota(upper.begin(), upper.end(), n - half);
      util::RandomStream rng(p.seed, kStreamBisection);
      for (std::uint32_t i = half; i-- > 1;) std::swap(upper[i], upper[rng.below(i + 1)]);
      std::vector<std::uint32_t> partner(n, n);
      for (std::uint32_t i = 0; i < half; ++i) {
        partner[i] = upper[i];
        partner[upper[i]] = i;
      }
      for (s = 0; s < n; ++s) {
        if (partner[s] == n) continue;  // odd n: the middle endpoint stays idle
        for (std::uint32_t k = 0; k < p.messages; ++k) out.push_back({s, partner[s], p.message_bytes, post(k)});
      }
      break;
    }
  }
  return out;
}

std::vector<std::uint32_t> alltoall_shifts(std::uint32_t n, std::uint32_t rounds, AlltoallSample sample) {
  std::vector<std::uint32_t> shifts;
  if (n < 2) return shifts;
  const std::uint32_t all = n - 1;
  if (rounds == 0 || rounds >= all || sample == AlltoallSample::First) {
    const std::uint32_t r = rounds == 0 ? all : std::min(rounds, all);
    for (std::uint32_t i = 1; i <= r; ++i) shifts.push_back(i);
    return shifts;
  }
  std::uint32_t stride = all / rounds;  // >= 1
  if (stride % 2 == 0) --stride;
  const std::uint32_t span = (rounds - 1) * stride + 1;  // shifts first ... first + span - 1, within 1 ... all
  const std::uint32_t offset = sample == AlltoallSample::SpreadLocal ? 0 : (all - span) / 2;
  for (std::uint32_t k = 0; k < rounds; ++k) shifts.push_back(1 + offset + k * stride);
  return shifts;
}

std::uint64_t count_traffic(const TrafficParams& p, std::uint32_t n) {
  const std::uint64_t per_source = p.messages;
  switch (p.pattern) {
    case Pattern::Permutation:
    case Pattern::Uniform:
      return n * per_source;
    case Pattern::Alltoall:
      return n < 2 ? 0 : std::uint64_t{n} * (p.messages == 0 ? n - 1 : std::min(p.messages, n - 1));
    case Pattern::Ring:
      return std::uint64_t{n} * std::max(p.messages, 1u);
    case Pattern::Incast:
      return n < 1 ? 0 : std::uint64_t{p.incast_sources == 0 ? n - 1 : std::min(p.incast_sources, n - 1)} * per_source;
    case Pattern::Bisection:
      return std::uint64_t{n / 2} * 2 * per_source;
  }
  return 0;
}

std::uint64_t wire_bytes(std::uint64_t payload, const net::NetworkParams& np) {
  const std::uint64_t ppp = np.packet_bytes - np.header_bytes;
  const std::uint64_t packets = (payload + ppp - 1) / ppp;
  return payload + packets * np.header_bytes;
}

std::vector<SimTime> injection_times(const TrafficParams& params, const net::Topology& topo,
                                     const net::NetworkParams& np) {
  std::vector<SimTime> t(topo.endpoint_count());
  const std::uint64_t bytes = wire_bytes(params.message_bytes, np);
  for (net::EndpointId e = 0; e < t.size(); ++e)
    t[e] = core::serialization_time(bytes, std::max(topo.injection_gbps(e), 1e-9));
  return t;
}

std::vector<PlannedMessage> plan_traffic(const TrafficParams& params, const net::Topology& topo,
                                         const net::NetworkParams& np) {
  return plan_traffic(params, static_cast<std::uint32_t>(topo.endpoint_count()), injection_times(params, topo, np));
}

TrafficWorkload::TrafficWorkload(net::Network& network, const TrafficParams& params) {
  const auto times = injection_times(params, network.topology(), network.params());
  if (!times.empty()) message_time_ = times[0];
  const auto plan = plan_traffic(params, static_cast<std::uint32_t>(network.topology().endpoint_count()), times);
  for (const auto& m : plan) network.send(m.src, m.dst, m.bytes, m.post);
  total_ = plan.size();
  network.set_listener(this);
}

void TrafficWorkload::on_message_delivered(net::MessageId) { ++done_; }

}  // namespace fabricsim::workload
