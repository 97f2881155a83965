#include "fabricsim/par/partition.hpp"

#include <metis.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "fabricsim/util/disjoint_sets.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::par {

Partitioner parse_partitioner(const std::string& name) {
  if (name == "metis") return Partitioner::Metis;
  if (name == "block") return Partitioner::Block;
  if (name == "round_robin") return Partitioner::RoundRobin;
  throw util::ConfigError("engine.partitioner: unknown partitioner '" + name + "'");
}

const char* to_string(Partitioner p) {
  switch (p) {
    case Partitioner::Metis: return "metis";
    case Partitioner::Block: return "block";
    case Partitioner::RoundRobin: return "round_robin";
  }
  return "?";
}

namespace {

std::vector<std::int32_t> block(const Graph& g, int parts) {
  // Contiguous blocks of vertex ids with (nearly) equal total weight.
  const std::size_t n = g.vertex_count();
  std::vector<std::int32_t> part(n, 0);
  std::int64_t total = 0;
  for (std::size_t v = 0; v < n; ++v) total += g.vwgt.empty() ? 1 : g.vwgt[v];
  std::int64_t acc = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const std::int64_t w = g.vwgt.empty() ? 1 : g.vwgt[v];
    auto p = static_cast<std::int32_t>((acc * parts) / std::max<std::int64_t>(total, 1));
    part[v] = std::min(p, parts - 1);
    acc += w;
  }
  return part;
}

std::vector<std::int32_t> metis(const Graph& g, int parts, std::uint64_t seed) {
  const std::size_t n = g.vertex_count();
  std::vector<idx_t> xadj(g.xadj.begin(), g.xadj.end());
  std::vector<idx_t> adjncy(g.adjncy.begin(), g.adjncy.end());
  std::vector<idx_t> vwgt(n, 1);
  for (std::size_t v = 0; v < n && !g.vwgt.empty(); ++v) vwgt[v] = static_cast<idx_t>(std::max<std::int64_t>(1, g.vwgt[v]));
  // Edge weight: cutting a link costs in proportion to how much it would
  // shrink the lookahead: the shortest latency gets the largest weight.
  std::int64_t min_lat = INT64_MAX;
  for (const auto& l : g.latency) min_lat = std::min(min_lat, std::max<std::int64_t>(l.ps(), 1));
  std::vector<idx_t> adjwgt(adjncy.size());
  for (std::size_t i = 0; i < adjncy.size(); ++i) {
    const double ratio = static_cast<double>(std::max<std::int64_t>(g.latency[i].ps(), 1)) / static_cast<double>(min_lat);
    adjwgt[i] = static_cast<idx_t>(std::clamp(std::lround(100.0 / ratio), 1l, 100l));
  }
  idx_t nv = static_cast<idx_t>(n), ncon = 1, np = parts, objval = 0;
  std::vector<idx_t> part(n, 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 1000003);
  options[METIS_OPTION_UFACTOR] = 50;  // allow 5% imbalance
  options[METIS_OPTION_NCUTS] = 4;     // best of 4 tries: regular graphs (tori) trip single runs
  int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(), &np,
                               nullptr, nullptr, options, &objval, part.data());
  if (rc != METIS_OK) throw util::UserError("METIS_PartGraphKway failed (code " + std::to_string(rc) + ")");
  return {part.begin(), part.end()};
}

}  // namespace

std::vector<std::int32_t> partition(const Graph& g, int parts, Partitioner how, std::uint64_t seed) {
  const std::size_t n = g.vertex_count();
  if (parts <= 1 || n == 0) return std::vector<std::int32_t>(n, 0);
  switch (how) {
    case Partitioner::Block: return block(g, parts);
    case Partitioner::RoundRobin: {
      std::vector<std::int32_t> part(n);
      for (std::size_t v = 0; v < n; ++v) part[v] = static_cast<std::int32_t>(v % static_cast<std::size_t>(parts));
      return part;
    }
    case Partitioner::Metis: return metis(g, parts, seed);
  }
  return std::vector<std::int32_t>(n, 0);
}

PartitionQuality evaluate(const Graph& g, const std::vector<std::int32_t>& part, int parts) {
  PartitionQuality q;
  q.lookahead = core::SimTime::max();
  const std::size_t n = g.vertex_count();
  std::vector<std::int64_t> weight(static_cast<std::size_t>(std::max(parts, 1)), 0);
  std::int64_t total = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const std::int64_t w = g.vwgt.empty() ? 1 : g.vwgt[v];
    weight[static_cast<std::size_t>(part[v])] += w;
    total += w;
    for (auto i = g.xadj[v]; i < g.xadj[v + 1]; ++i) {
      const auto u = static_cast<std::size_t>(g.adjncy[static_cast<std::size_t>(i)]);
      if (part[u] != part[v]) {
        if (u > v) ++q.edge_cut;
        q.lookahead = std::min(q.lookahead, g.latency[static_cast<std::size_t>(i)]);
      }
    }
  }
  const double mean = static_cast<double>(total) / std::max(parts, 1);
  q.imbalance = mean > 0 ? static_cast<double>(*std::max_element(weight.begin(), weight.end())) / mean : 1.0;
  return q;
}

PartitionPlan plan_partition(const Graph& g, int ranks, Partitioner how, core::SimTime min_cut, std::uint64_t seed,
                             const std::vector<std::uint32_t>& units) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = g.vertex_count();
  // Merge the ends of links shorter than min_cut (union-find), partition
  // the merged graph, and give every node the part of its group.
  util::DisjointSets<std::size_t> sets(n);
  const auto find = [&](std::size_t v) { return sets.find(v); };
  for (std::size_t v = 0; v < n; ++v)
    for (auto i = g.xadj[v]; i < g.xadj[v + 1]; ++i)
      if (g.latency[static_cast<std::size_t>(i)] < min_cut) sets.join(v, static_cast<std::size_t>(g.adjncy[static_cast<std::size_t>(i)]));
  if (units.size() == n && ranks > 1) {
    std::uint32_t unit_count = 0;
    for (auto u : units) unit_count = std::max(unit_count, u + 1);
    const auto r = static_cast<std::uint32_t>(ranks);
    if (unit_count >= r && static_cast<double>((unit_count + r - 1) / r) * r <= 1.10 * unit_count) {
      std::vector<std::size_t> first(unit_count, n);
      for (std::size_t v = 0; v < n; ++v) {
        if (first[units[v]] == n) first[units[v]] = v;
        sets.join(v, first[units[v]]);
      }
    }
  }
  std::vector<std::int64_t> group(n, -1);
  std::int64_t groups = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t r = find(v);
    if (group[r] < 0) group[r] = groups++;
    group[v] = group[r];
  }
  Graph c;
  c.vwgt.assign(static_cast<std::size_t>(groups), 0);
  std::vector<std::vector<std::pair<std::int64_t, core::SimTime>>> adj(static_cast<std::size_t>(groups));
  for (std::size_t v = 0; v < n; ++v) {
    const auto gv = static_cast<std::size_t>(group[v]);
    c.vwgt[gv] += g.vwgt.empty() ? 1 : g.vwgt[v];
    for (auto i = g.xadj[v]; i < g.xadj[v + 1]; ++i) {
      const auto gu = group[static_cast<std::size_t>(g.adjncy[static_cast<std::size_t>(i)])];
      if (gu != static_cast<std::int64_t>(gv)) adj[gv].emplace_back(gu, g.latency[static_cast<std::size_t>(i)]);
    }
  }
  c.xadj.assign(1, 0);
  for (const auto& a : adj) {
    for (const auto& [u, lat] : a) {
      c.adjncy.push_back(u);
      c.latency.push_back(lat);
    }
    c.xadj.push_back(static_cast<std::int64_t>(c.adjncy.size()));
  }
  const auto cpart = partition(c, ranks, how, seed);
  PartitionPlan r;
  r.part.resize(n);
  for (std::size_t v = 0; v < n; ++v) r.part[v] = cpart[static_cast<std::size_t>(group[v])];
  r.quality = evaluate(g, r.part, ranks);
  r.quality.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace fabricsim::par
