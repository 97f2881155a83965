// Independent schedule checker for synth (written apart from greedy.cpp and
// sharing none of its code): replays the sends in time order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/synth/tacos.hpp"

namespace fabricsim::synth {
namespace {

bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

}  // namespace

std::string check(const NpuGraph& g, const Collective& c, const Schedule& s) {
  std::ostringstream why;
  const auto failed = [&](std::uint32_t v) { return g.failed.size() == g.npus && g.failed[v] != 0; };
  // Per send: link, endpoints and cost.
  for (std::size_t i = 0; i < s.sends.size(); ++i) {
    const Send& x = s.sends[i];
    if (x.link >= g.links.size()) {
      why << "send " << i << ": link " << x.link << " does not exist";
      return why.str();
    }
    if (x.chunk >= c.chunks) {
      why << "send " << i << ": chunk " << x.chunk << " does not exist";
      return why.str();
    }
    const Link& l = g.links[x.link];
    if (l.src >= g.npus || l.dst >= g.npus || failed(l.src) || failed(l.dst)) {
      why << "send " << i << ": link " << x.link << " touches a failed or missing NPU";
      return why.str();
    }
    const double cost = l.alpha_ns + 8.0 * static_cast<double>(c.chunk_bytes) / l.gbps;
    if (!(x.start_ns >= 0.0) || !close(x.end_ns - x.start_ns, cost)) {
      why << "send " << i << ": times [" << x.start_ns << ", " << x.end_ns << "] do not match the link cost " << cost
          << " ns";
      return why.str();
    }
  }
  // One transfer at a time per link.
  std::map<std::uint32_t, std::vector<std::pair<double, double>>> per_link;
  for (const Send& x : s.sends) {
    per_link[x.link].emplace_back(x.start_ns, x.end_ns);
  }
  for (auto& [link, spans] : per_link) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t k = 1; k < spans.size(); ++k) {
      if (spans[k].first < spans[k - 1].second) {
        why << "link " << link << ": transfers [" << spans[k - 1].first << ", " << spans[k - 1].second << "] and ["
            << spans[k].first << ", " << spans[k].second << "] overlap";
        return why.str();
      }
    }
  }
  // Causality: replay in start order, applying every arrival with end <= start first.
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> at;  // (chunk, npu) -> first time held
  for (const auto& pr : c.pre) {
    at[pr] = 0.0;
  }
  std::vector<std::size_t> order(s.sends.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return s.sends[a].start_ns < s.sends[b].start_ns || (s.sends[a].start_ns == s.sends[b].start_ns && a < b);
  });
  std::set<std::pair<double, std::size_t>> pending;  // (end, send)
  const auto land = [&](double upto) {
    while (!pending.empty() && pending.begin()->first <= upto) {
      const Send& y = s.sends[pending.begin()->second];
      const auto key = std::make_pair(y.chunk, g.links[y.link].dst);
      auto it = at.find(key);
      if (it == at.end() || y.end_ns < it->second) {
        at[key] = y.end_ns;
      }
      pending.erase(pending.begin());
    }
  };
  for (auto i : order) {
    const Send& x = s.sends[i];
    land(x.start_ns);
    const std::uint32_t u = g.links[x.link].src;
    if (at.find({x.chunk, u}) == at.end()) {
      why << "send " << i << ": chunk " << x.chunk << " is not at NPU " << u << " at " << x.start_ns << " ns";
      return why.str();
    }
    pending.emplace(x.end_ns, i);
  }
  land(std::numeric_limits<double>::infinity());
  // Postcondition and finish time.
  double last = 0.0;
  for (const auto& pr : c.post) {
    auto it = at.find(pr);
    if (it == at.end()) {
      why << "postcondition (chunk " << pr.first << ", NPU " << pr.second << ") never holds";
      return why.str();
    }
    last = std::max(last, it->second);
  }
  if (!close(last, s.finish_ns)) {
    why << "finish " << s.finish_ns << " ns differs from the last needed arrival " << last << " ns";
    return why.str();
  }
  return "";
}

}  // namespace fabricsim::synth
