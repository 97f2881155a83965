// Execution-trace files (workload.kind = "trace"): JSON close to the Chakra
// execution-trace schema; the format is documented in docs/model.md.
#pragma once

#include <cstdint>
#include <string>

#include "fabricsim/workload/trace.hpp"

namespace fabricsim::app {

/// Reads a trace; ConfigError "file:line:column: nodes[i].key: message" for
/// anything malformed, unknown keys included; naming engine.memory_limit_gib
/// once the file, its JSON tree and the trace's nodes would hold more than
/// `read_budget` bytes (Trace::read_budget).
workload::Trace load_trace(const std::string& path, std::uint64_t read_budget = UINT64_MAX);

}  // namespace fabricsim::app
