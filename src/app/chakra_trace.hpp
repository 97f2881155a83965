// Chakra execution traces (.et, one file per rank, as ASTRA-sim reads them)
// into the trace workload (workload/trace.hpp); the schema is
// src/app/chakra/et_def.proto, the semantics docs/model.md ("Chakra traces").
#pragma once

#include <cstdint>
#include <string>

#include "fabricsim/workload/trace.hpp"

namespace fabricsim::app {

struct ChakraOptions {
  /// Compute nodes with FLOPs (attribute num_ops) take the roofline of
  /// ASTRA-sim, max(num_ops / peak, tensor_size / memory bandwidth), in
  /// place of duration_micros.  0: no roofline; a node with num_ops and no
  /// duration is an error naming the key.
  double peak_tflops = 0;
  /// Memory nodes (and the roofline's memory side): bytes per second / 1e9.
  double memory_gbytes_per_s = 0;
  /// ASTRA-sim's communicator-group file (JSON: {"NAME": [ranks], ...}):
  /// a collective node whose attribute pg_name is NAME runs among those
  /// ranks.  Empty: every collective spans all ranks (ASTRA-sim's "empty").
  std::string comm_groups_file;
};

/// Whether `path` names a Chakra trace: "PREFIX.RANK.et", or a PREFIX with
/// a PREFIX.0.et next to it.
bool is_chakra_trace(const std::string& path);

/// Reads PREFIX.0.et, PREFIX.1.et, ... (the ranks are the files there are,
/// numbered from 0 without a gap).  ConfigError "FILE: node ID: message"
/// (or "FILE: record N: ...") for a truncated or corrupt file, a missing
/// rank file, an unknown node type or attribute, an attribute of the wrong
/// type, a compute node the options cannot time; and, once its nodes would
/// hold more than `read_budget` bytes, the memory limit's (Trace::read_budget).
workload::Trace load_chakra_trace(const std::string& path, const ChakraOptions& opt,
                                  std::uint64_t read_budget = UINT64_MAX);

}  // namespace fabricsim::app
