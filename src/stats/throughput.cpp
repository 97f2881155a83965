#include "fabricsim/stats/throughput.hpp"

#include <algorithm>
#include <limits>

namespace fabricsim::stats {

void steady_window(const std::vector<SourceSpan>& sources, std::int64_t& from_ps, std::int64_t& to_ps) {
  std::int64_t first = INT64_MAX, done = INT64_MAX;
  for (const SourceSpan& s : sources) {
    if (s.first_post_ps == INT64_MAX) continue;
    first = std::min(first, s.first_post_ps);
    // A source none of whose messages completed has not finished: it does
    // not end the window.
    if (s.last_end_ps >= 0) done = std::min(done, s.last_end_ps);
  }
  if (first == INT64_MAX || done == INT64_MAX || done <= first) {
    from_ps = to_ps = 0;
    return;
  }
  from_ps = first + (done - first) / 10;  // the first tenth is the warm-up
  to_ps = done;
}

std::vector<SourceSpan> source_spans(const net::Topology& topo, const net::Network& network,
                                     const std::vector<std::uint8_t>& owned_endpoint) {
  std::vector<SourceSpan> s(topo.endpoint_count());
  for (net::EndpointId e = 0; e < s.size(); ++e) s[e].injection_gbps = topo.injection_gbps(e);
  for (std::size_t id = 0; id < network.message_count(); ++id) {
    const net::Message m = network.message(static_cast<net::MessageId>(id));
    if (m.post_time == core::SimTime::max()) continue;  // never posted
    SourceSpan& x = s[m.src];
    x.first_post_ps = std::min(x.first_post_ps, m.post_time.ps());
    x.payload_bytes += m.bytes;
    ++x.messages;
    if (owned_endpoint[m.dst] && m.end_time != core::SimTime::max())
      x.last_end_ps = std::max(x.last_end_ps, m.end_time.ps());
  }
  return s;
}

std::uint64_t completed_between(const net::Network& network,
                                const std::vector<std::uint8_t>& owned_endpoint, std::int64_t from_ps,
                                std::int64_t to_ps) {
  std::uint64_t sum = 0;
  if (to_ps <= from_ps) return 0;
  for (std::size_t id = 0; id < network.message_count(); ++id)
    if (const net::Message m = network.message(static_cast<net::MessageId>(id)); owned_endpoint[m.dst] && m.end_time != core::SimTime::max() && m.end_time.ps() >= from_ps &&
        m.end_time.ps() <= to_ps)
      sum += m.bytes;
  return sum;
}

ThroughputShares throughput_shares(const std::vector<SourceSpan>& sources, std::uint64_t delivered_bytes,
                                   std::uint64_t steady_bytes, double total_injection_gbps) {
  ThroughputShares r;
  std::int64_t first = INT64_MAX, last = -1;
  double sum = 0, sending_gbps = 0;
  std::size_t n = 0;
  std::uint32_t fewest = UINT32_MAX;
  for (const SourceSpan& s : sources) {
    if (s.first_post_ps == INT64_MAX) continue;
    first = std::min(first, s.first_post_ps);
    fewest = std::min(fewest, s.messages);
    sending_gbps += s.injection_gbps;
    if (s.last_end_ps < 0) continue;
    last = std::max(last, s.last_end_ps);
    if (s.last_end_ps > s.first_post_ps && s.injection_gbps > 0) {
      // bytes * 8 / ps * 1000 = Gb/s
      sum += static_cast<double>(s.payload_bytes) * 8000.0 / static_cast<double>(s.last_end_ps - s.first_post_ps) /
             s.injection_gbps;
      ++n;
    }
  }
  if (last > first && total_injection_gbps > 0)
    r.makespan = static_cast<double>(delivered_bytes) * 8000.0 / static_cast<double>(last - first) /
                 total_injection_gbps;
  if (n > 0) r.per_source = sum / static_cast<double>(n);
  steady_window(sources, r.steady_from_ps, r.steady_to_ps);
  r.steady = std::numeric_limits<double>::quiet_NaN();
  if (r.steady_to_ps > r.steady_from_ps && sending_gbps > 0 && fewest >= kSteadyMinMessages)
    r.steady = static_cast<double>(steady_bytes) * 8000.0 / static_cast<double>(r.steady_to_ps - r.steady_from_ps) /
               sending_gbps;
  return r;
}

}  // namespace fabricsim::stats
