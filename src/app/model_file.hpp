// DNN model descriptions (inputs/models/*.toml; format in docs/models.md).
#pragma once

#include <string>

#include "fabricsim/workload/dnn.hpp"

namespace fabricsim::app {

/// Loads a model file; ConfigError naming file, line and key on bad input.
workload::DnnModel load_model(const std::string& path);

}  // namespace fabricsim::app
