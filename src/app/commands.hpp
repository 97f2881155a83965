// The fabricsim subcommands.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim::app {

struct RunOptions {
  std::optional<std::string> config;
  std::vector<std::string> overrides;
  std::optional<std::string> output;
};

struct InfoOptions {
  std::optional<std::string> config;
  std::vector<std::string> overrides;
  int ranks = 0;
  bool json = false;
  bool full = false;  ///< build and estimate whatever the size (no kInfoQuickLinks / kInfoBuildLinks limits)
};

struct ExportOptions {
  std::optional<std::string> config;
  std::vector<std::string> overrides;
  std::string output;  ///< PREFIX: writes PREFIX.RANK.et
};

/// `info` answers in seconds at any size: it leaves out the fluid estimate
/// (it routes every message: minutes at 64k endpoints) on fabrics with more
/// directed links than kInfoQuickLinks, and does not build fabrics with more
/// than kInfoBuildLinks (it reports their sizes and memory from what the
/// builder announces), unless asked (--full).
inline constexpr std::size_t kInfoQuickLinks = 200000;
inline constexpr std::size_t kInfoBuildLinks = 10000000;
/// Nor does it plan a pattern of more messages than kInfoQuickMessages for
/// the fluid estimate (the 1k torus's full alltoall, 1 M messages, takes
/// 9 s), unless asked; and never one whose plan and per-pair sums, about
/// kInfoFluidBytesPerMessage each, would not fit in engine.memory_limit_gib
/// (a 16k tree's full alltoall, 268 M messages, took 22 GB and minutes).
inline constexpr std::uint64_t kInfoQuickMessages = std::uint64_t{1} << 22;
inline constexpr std::uint64_t kInfoFluidBytesPerMessage = 128;
/// Edge relaxations the any-route bound (workload::bound_any_routes) may
/// spend: a few seconds at the quick budget; with --full, for non-minimal
/// routing (whose bound it is), about a minute (36 s on the 16k Dragonfly).
inline constexpr double kInfoAnyRouteWork = 2e8;
inline constexpr double kInfoAnyRouteWorkFull = 4e9;

/// Each returns the process exit code.  run_command expects MPI to be initialized.
int run_command(const RunOptions& opts);
int info_command(const InfoOptions& opts);
int params_command();
int export_chakra_command(const ExportOptions& opts);
/// Runs a subcommand's body: a user error becomes its one line on stderr
/// ("error: ...") and its exit code, anything else "error: unexpected
/// failure" and 1.
int report_errors(const std::function<int()>& body);

}  // namespace fabricsim::app
