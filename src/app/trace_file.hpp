// Execution-trace files (workload.kind = "trace"): JSON close to the Chakra
// execution-trace schema; the format is documented in docs/model.md.
#pragma once

#include <string>

#include "fabricsim/workload/trace.hpp"

namespace fabricsim::app {

/// Reads a trace; ConfigError "file:line:column: nodes[i].key: message" for
/// anything malformed, unknown keys included.
workload::Trace load_trace(const std::string& path);

}  // namespace fabricsim::app
