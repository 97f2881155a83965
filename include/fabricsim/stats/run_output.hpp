// What a run writes into its HDF5 file (see docs/output.md for the schema).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/net/network.hpp"
#include "fabricsim/stats/h5_writer.hpp"

namespace fabricsim::stats {

struct RunMeta {
  std::string version;
  std::string git_sha;
  std::string config_toml;
  std::int64_t ranks = 1;
  std::int64_t threads = 1;
  std::uint64_t seed = 0;
};

struct RunSummary {
  double sim_time_ns = 0;
  std::uint64_t events = 0;
  double wall_seconds = 0;
  double events_per_second = 0;
};

/// Engine telemetry, per rank where it is a vector.
struct EngineTelemetry {
  double build_seconds = 0;
  double run_seconds = 0;
  double write_seconds = 0;
  std::vector<std::uint64_t> events_per_rank;
  std::vector<double> run_seconds_per_rank;
  std::vector<std::uint64_t> peak_memory_bytes_per_rank;
  std::string mode;  ///< "sequential", "replicated"
};

void write_meta(H5Writer& out, const RunMeta& meta);
void write_summary(H5Writer& out, const RunSummary& summary);
void write_engine(H5Writer& out, const EngineTelemetry& engine);
/// /links, /links/timeseries, /nodes, /flows and the network counters of
/// /summary.  `owner_writes` is true on the rank that writes the rows (all
/// ranks must call).
void write_network(H5Writer& out, const net::Network& network, bool owner_writes, bool write_flows,
                   double sim_time_ns, double interval_ns);

/// Peak resident memory of this process, in bytes.
std::uint64_t peak_memory_bytes();

}  // namespace fabricsim::stats
