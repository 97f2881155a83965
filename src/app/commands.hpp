// The fabricsim subcommands.
#pragma once

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
};

/// Each returns the process exit code.  run_command expects MPI to be initialized.
int run_command(const RunOptions& opts);
int info_command(const InfoOptions& opts);
int params_command();

}  // namespace fabricsim::app
