// TACOS collective synthesis (tacos spec sections 2, 3.3, 5, 6): a pure
// layer.  A problem is a directed NPU graph with per-link alpha (ns) and
// bandwidth (Gbit/s) plus a collective given as pre/postconditions of
// (chunk, NPU) pairs; a schedule is a list of chunk sends over links.
// greedy() is TACOS-Greedy (spec 5.4 with the rules of 5.2 and the jitter of
// 5.3); check() is an independent validator of any schedule.
//
// Readings beyond the spec's pseudocode (see greedy()):
//  * relays: a chunk whose postcondition NPU is not next to a holder (Scatter,
//    Gather) is also requested by the NPUs on a shortest (alpha-beta) path
//    from its nearest source, so it can be forwarded hop by hop;
//  * a replacement chunk must have been at the link's source when the
//    transfer started (otherwise the send would be causally impossible);
//  * an outdated transfer with no replacement frees its link at once.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::synth {

/// A directed NPU-to-NPU link; cost of an n-byte chunk: alpha_ns + 8 n / gbps ns.
struct Link {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  double alpha_ns = 0.0;
  double gbps = 0.0;  // Gbit/s (1 Gbit/s = 1 bit/ns)
};

struct NpuGraph {
  std::uint32_t npus = 0;
  std::vector<Link> links;
  /// Per NPU, 1 = failed; empty = none failed.
  std::vector<std::uint8_t> failed;

  bool is_failed(std::uint32_t v) const { return !failed.empty() && failed[v] != 0; }
};

/// Throws std::invalid_argument for an index out of range, a self-loop, a
/// non-positive bandwidth, a negative alpha, a failed mask of the wrong size
/// or a link touching a failed NPU.
void validate(const NpuGraph& g);

/// Link transmission time of a chunk: alpha + chunk_bytes * 8 / gbps (ns).
double link_time_ns(const Link& l, std::uint64_t chunk_bytes);

// --- Generators (spec section 6 readings; every link listed per direction).
inline constexpr double kDefaultAlphaNs = 500.0;

/// rows x cols grid, 4-neighbour, no wrap-around; NPU id = row * cols + col.
NpuGraph mesh(std::uint32_t rows, std::uint32_t cols, double alpha_ns, double gbps);
/// 2D torus: every row and every column a bidirectional ring.
NpuGraph ring_ring(std::uint32_t rows, std::uint32_t cols, double alpha_ns, double gbps);
/// Ring in NPU-id order: i -> i+1 mod n, and the reverse when bidirectional.
NpuGraph ring(std::uint32_t n, bool bidirectional, double alpha_ns, double gbps);
NpuGraph fully_connected(std::uint32_t n, double alpha_ns, double gbps);
/// Degree-d unwinding of a switch joining `members` (spec 3.3): member k gets
/// links to members k+1 .. k+d (mod N), each at switch_gbps_per_npu / d.
/// degree = N-1 is degree-max (fully connected), degree = 1 a unidirectional
/// ring.  Throws std::invalid_argument for degree 0 or >= N.
void unwind_switch(NpuGraph& g, const std::vector<std::uint32_t>& members, std::uint32_t degree, double alpha_ns,
                   double switch_gbps_per_npu);
/// 4 nodes x 8 NPUs (id = node * 8 + local): 300 GB/s scale-up switch per
/// node, degree-max; one 25 GB/s scale-out rail per local index, degree-1.
NpuGraph switch_switch_8x4(double alpha_ns = kDefaultAlphaNs);
/// `nodes` nodes of 2 x 4 NPUs (id = node * 8 + i1 + 2 * i2): a 2-ring at
/// 200 GB/s (i1), a fully connected 4-group at 100 GB/s (i2), and one 50 GB/s
/// scale-out rail per local index, degree-1 unwound over the nodes.
NpuGraph ring_fc_switch(std::uint32_t nodes, double alpha_ns = kDefaultAlphaNs);
/// 5 groups of 4 (id = group * 4 + i): all-to-all at 400 GB/s inside a
/// group; groups g < h joined by one 200 GB/s link pair between NPU
/// (h-1) mod 4 of g and NPU g mod 4 of h.
NpuGraph dragonfly_4x5(double alpha_ns = kDefaultAlphaNs);

/// Marks the NPUs failed and drops every link touching them.
void remove_npus(NpuGraph& g, const std::vector<std::uint32_t>& npus);

// --- Collectives (spec 2.1); failed NPUs take no part.
struct Collective {
  std::uint32_t chunks = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pre;   // (chunk, npu)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> post;  // (chunk, npu)
  std::uint64_t chunk_bytes = 0;
};

/// Every live NPU sources chunks_per_npu chunks, each wanted by every other live NPU.
Collective all_gather(const NpuGraph& g, std::uint32_t chunks_per_npu, std::uint64_t chunk_bytes);
/// The root holds `chunks` chunks, each wanted by every other live NPU.
Collective broadcast(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks, std::uint64_t chunk_bytes);
/// The root holds chunks_per_npu chunks per other live NPU, each wanted by that NPU only.
Collective scatter(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks_per_npu, std::uint64_t chunk_bytes);
/// Every other live NPU holds chunks_per_npu chunks, all wanted by the root.
Collective gather(const NpuGraph& g, std::uint32_t root, std::uint32_t chunks_per_npu, std::uint64_t chunk_bytes);

// --- Schedules.
struct Send {
  std::uint32_t chunk = 0;
  std::uint32_t link = 0;  // index into NpuGraph::links
  double start_ns = 0.0;
  double end_ns = 0.0;  // start + link_time_ns
};

struct Schedule {
  std::vector<Send> sends;  // in order of start time, then link
  double finish_ns = 0.0;   // last arrival that completes a postcondition pair
};

struct GreedyOptions {
  std::uint64_t seed = 1;
  /// Jitter (spec 5.3): independent seeded runs, the best finish kept (ties:
  /// the lowest instance).  Instance i's run does not depend on the count.
  std::uint32_t instances = 8;
};

/// TACOS-Greedy.  Deterministic for a seed.  Throws std::invalid_argument
/// for an invalid graph or collective, or when some postcondition pair is
/// unreachable from every holder of its chunk.
Schedule greedy(const NpuGraph& g, const Collective& c, const GreedyOptions& opt = {});

/// Independent schedule check: "" when valid, else the first violation.
std::string check(const NpuGraph& g, const Collective& c, const Schedule& s);

}  // namespace fabricsim::synth
