// Turns a resolved configuration into the objects of one run.
#pragma once

#include <memory>

#include "fabricsim/config/config.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/net/topology.hpp"
#include "fabricsim/workload/traffic.hpp"

namespace fabricsim::app {

net::Topology build_topology(const config::Config& cfg);
net::NetworkParams network_params(const config::Config& cfg);
workload::TrafficParams traffic_params(const config::Config& cfg);

}  // namespace fabricsim::app
