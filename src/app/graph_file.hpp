// Custom topologies (`topology.kind = "file"`): a graph listed in TOML.
#pragma once

#include <string>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::app {

/// Reads the graph at `path` (see docs/model.md, "Custom graphs").  Links
/// without their own bandwidth or latency take `host` (a link with an
/// endpoint at one end) or `fabric` (otherwise).  Errors are util::ConfigError
/// naming the file, line and key; a graph whose endpoints cannot all reach
/// each other is an error too.
net::Topology build_graph_file(const std::string& path, const net::LinkParams& host, const net::LinkParams& fabric);

}  // namespace fabricsim::app
