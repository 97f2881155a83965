// [[failures]]: the rows of the configuration resolved against the topology
// into the link schedule the network models apply (net/link_state.hpp).
#pragma once

#include "fabricsim/config/config.hpp"
#include "fabricsim/net/link_state.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::app {

/// The run's link schedule: for each [[failures]] row, its element's links
/// down at at_ns and, with until_ns, up again then.  util::ConfigError
/// "FILE:LINE:COL: failures.KEY: ..." for an element the topology does not
/// have, a row without one, until_ns not after at_ns, two rows that
/// overlap on one link, or a change after time 0 for the analytic model.
net::LinkSchedule failure_schedule(const config::Config& cfg, const net::Topology& topo);

}  // namespace fabricsim::app
