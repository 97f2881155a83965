// TACOS collectives in the simulator (tacos spec sections 3.3, 5, 11): the
// bridge between the pure synth layer and the network.
//
//  * npu_graph(): the logical NPU graph a communicator sees on a fabric.
//    Cables between two of its endpoints (meshes, tori, HammingMesh
//    boards, TopoOpt) are NPU links with the cable's latency (alpha) and
//    bandwidth.  Every connected group of switches (a fat tree, a
//    leaf-spine, a HammingMesh row or column tree, a Dragonfly) is a switch
//    joining the communicator's endpoints attached to it, unwound (spec
//    3.3): an intra-server switch (IntraServer links) degree-max, any other
//    by TacosOptions::unwind.  An unwound link's alpha is the sender's
//    uplink latency plus the receiver's downlink latency; its bandwidth the
//    sender's links into the switch divided by the degree, at most one
//    cable's (a message crosses one).
//  * plan_tacos(): synthesizes (TACOS-Greedy) or reads the schedule of one
//    operation on a communicator, checks it with synth::check and writes it
//    out when asked.
//  * The schedule runs as a collective algorithm ("tacos" in the registry
//    of collective.cpp): every send of the schedule is a message from its
//    source rank to its destination rank, routed by the network (on a
//    switch fabric, a logical link is a routed path).  A send of chunk c
//    from u waits for every receipt of c at u that ends before it starts in
//    the schedule (a reducing one reduces them first, at reduce_gbps), and
//    sends over one logical link go in the schedule's order.  Nothing else
//    of the schedule's timing is imposed: the network decides when
//    transfers end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"
#include "fabricsim/synth/tacos.hpp"
#include "fabricsim/workload/collective.hpp"

namespace fabricsim::workload {

struct TacosOptions {
  std::uint32_t instances = 8;  ///< TACOS-Greedy's independent runs (spec 5.3), the best kept
  std::uint64_t seed = 1;
  /// Unwinding of a (non intra-server) switch: "ring" (degree 1, a
  /// unidirectional ring in rank order), "bidirectional_ring" (both ways,
  /// half the bandwidth each), "max" (degree N - 1, fully connected) or a
  /// degree "1" .. "N-1".
  std::string unwind = "ring";
  /// "greedy" (TACOS-Greedy), "ilp" (TACOS-ILP) or "taccl" (the ILP without
  /// the congestion constraint), the ILP's through CBC with these options.
  std::string synthesizer = "greedy";
  double ilp_time_limit_s = 60;  ///< per ILP call (an allreduce makes two); 0: none
  bool ilp_clustering = false;   ///< time clustering (spec 4.4)
  std::uint32_t ilp_window_steps = 0;
  double step_ns = 0;  ///< the TEN's discretisation f; 0: the smallest link cost
  std::uint64_t ilp_max_variables = 2000000;
  /// Read the schedule from this file instead of synthesizing it.
  std::string schedule_in;
  /// Write the schedule (synthesized or read) to this file.
  std::string schedule_out;
  /// Links down from time 0 ([[failures]]): the NPU graph leaves them out,
  /// and a rank whose endpoint has no live link is a failed NPU (it takes
  /// no part, spec 6: the failed-NPU mesh).  Later changes are not seen:
  /// the schedule is fixed before the run.
  std::vector<net::LinkId> down_links;
  /// The parameter prefix errors name ("workload" or "jobs[k]").
  std::string prefix = "workload";
};

/// One operation's schedule on one communicator.
struct TacosPlan {
  synth::NpuGraph graph;  ///< NPU i = rank i of the communicator
  synth::Request request;
  synth::Schedule schedule;
  std::vector<std::uint64_t> chunk_bytes;  ///< actual bytes of each chunk (they add up to the operation's)
  double synthesis_seconds = 0;            ///< wall time of synthesis (0 when read from a file)
  bool from_file = false;
  /// How the ILP's schedules were obtained (synth::IlpResult::status, one
  /// per ILP call); empty for greedy and files.
  std::vector<std::string> ilp_status;
};

/// The logical NPU graph of `ranks` on `topo` (see above), without the
/// links in `down_links`.  ConfigError naming `prefix`.tacos_unwind for a
/// bad unwind.
synth::NpuGraph npu_graph(const net::Topology& topo, const std::vector<net::EndpointId>& ranks,
                          const std::string& unwind, const std::string& prefix = "workload",
                          const std::vector<net::LinkId>& down_links = {});

/// The synth request of an operation: op, root, chunks per NPU (from
/// spec.chunk_bytes: each NPU's piece in chunks of at most that many bytes;
/// 0 = one chunk) and the nominal chunk size.  ConfigError for alltoall and
/// barrier, or too many chunks.
synth::Request tacos_request(const CollectiveSpec& spec, const synth::NpuGraph& g, const std::string& prefix);

/// Synthesizes (or reads) and checks the schedule of `spec` on `ranks`.
/// ConfigError, one line naming the parameter or the file and line, for a
/// disconnected NPU graph, a schedule file that does not parse, does not
/// match the operation or breaks the postcondition.
std::shared_ptr<const TacosPlan> plan_tacos(const net::Topology& topo, const std::vector<net::EndpointId>& ranks,
                                            const CollectiveSpec& spec, const TacosOptions& opt);

}  // namespace fabricsim::workload
