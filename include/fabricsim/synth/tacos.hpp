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
#include <functional>
#include <iosfwd>
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
  /// A reduction send: the receiver combines it into its partial of the
  /// chunk.  A send of chunk c from NPU u (reducing or not) needs every
  /// receipt of c at u that ends at or before its start (for a reducing
  /// send: all the partials u combines before passing c on).
  bool reduce = false;
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

// --- Every collective of the spec (2.1, 5.5), reductions included.
enum class Op : std::uint8_t { AllGather, ReduceScatter, AllReduce, Broadcast, Reduce, Scatter, Gather };
/// "all_gather", "reduce_scatter", "all_reduce", "broadcast", "reduce", "scatter", "gather".
const char* to_string(Op op);
/// The inverse of to_string; std::invalid_argument for another name.
Op parse_op(const std::string& name);

struct Request {
  Op op = Op::AllGather;
  std::uint32_t root = 0;            ///< broadcast, reduce, scatter, gather
  std::uint32_t chunks_per_npu = 1;  ///< chunks per live NPU (broadcast, reduce: chunks at the root)
  std::uint64_t chunk_bytes = 0;
};

/// Chunk numbering.  all_gather, reduce_scatter, all_reduce: chunk
/// c = i * chunks_per_npu + j is the j-th chunk of the i-th live NPU (live
/// NPUs in id order): its source (all_gather) or the NPU the reduction of
/// c ends at (reduce_scatter, and the reduce-scatter half of all_reduce).
/// broadcast, reduce: chunks 0 .. chunks_per_npu - 1, all from / to the
/// root.  scatter, gather: as all_gather, c belonging to the i-th live
/// non-root NPU.  The makers above number the same way.  Throws
/// std::invalid_argument when the op has a root and it is out of range or
/// failed.
std::uint32_t chunk_count(const NpuGraph& g, const Request& r);

/// TACOS-Greedy for any op.  Non-reducing ops: greedy() on the collective
/// of the request.  Reductions are the inverse of their non-combining
/// counterpart (spec 5.5): reduce_scatter is an all_gather synthesized on
/// the transposed graph and reversed in time and direction, reduce a
/// reversed broadcast; all_reduce is reduce_scatter then all_gather (the
/// all_gather's sends shifted by the reduce-scatter's finish).  Sends of
/// the reduction phases have reduce = true.  Throws std::invalid_argument
/// as greedy() does, and for a root out of range or failed.
Schedule synthesize(const NpuGraph& g, const Request& r, const GreedyOptions& opt = {});

/// A synthesizer of one non-combining collective (greedy, the ILP, ...).
/// Its schedules must receive every (chunk, NPU) pair at most once, so that
/// reversing them gives in-trees.
using Synthesizer = std::function<Schedule(const NpuGraph&, const Collective&)>;
/// The same with any synthesizer in place of TACOS-Greedy (the reductions
/// are reversed the same way).
Schedule synthesize_with(const NpuGraph& g, const Request& r, const Synthesizer& one);

/// Independent check of a schedule for any op: links exist and touch live
/// NPUs, times match link costs, one transfer per link at a time, causality
/// (a send of c from u only after c, or for a reducing send u's partial of
/// c, is at u), and the postcondition: for reductions every NPU that sends
/// a partial of c sends it once, never receives c after sending it, the
/// partials combined at an NPU never overlap (no contribution counted
/// twice), and each chunk's destination ends holding every live NPU's
/// contribution.  A reducing send carries its sender's set of combined
/// contributions at its start (its own plus the reducing receipts ended by
/// then).  all_reduce: a plain send of c needs its sender to hold c fully
/// reduced (a complete partial, or a plain receipt of c), and every live NPU
/// ends so.  Plain sends in reduce_scatter or reduce, and reducing sends in
/// the other ops, are violations.  finish_ns must be the moment the last
/// (chunk, NPU) pair of the postcondition completes.  "" when valid, else
/// the first violation in time order.
std::string check(const NpuGraph& g, const Request& r, const Schedule& s);

/// Schedule files: text, '#'-comment header lines "# key: value" (format
/// "fabricsim-tacos-schedule 1", op, npus, root, chunks_per_npu,
/// chunk_bytes, finish_ns), then a CSV header
/// "chunk,src,dst,start_ns,end_ns,reduce" and one row per send, times
/// printed so they read back exactly (%.17g), reduce 0 or 1.  A send names
/// its link by (src, dst); with parallel links, reading takes (in start
/// order) the lowest-numbered one free during the send whose cost is the
/// send's duration, else the lowest free one.  Equal parallel links are
/// interchangeable, so which of them carries a send may differ after a
/// round trip; everything else reads back identical.  Throws
/// std::invalid_argument for a link index out of range.
void write_schedule(std::ostream& out, const NpuGraph& g, const Request& r, const Schedule& s);
/// Reads what write_schedule wrote (the request from the header into `r`,
/// sends sorted by start, then link).  Blank lines are skipped; the format
/// line comes first.  Throws std::invalid_argument "<name>:<line>: <what>"
/// (1-based lines) for a malformed line: a wrong format, an unknown,
/// duplicate or (reported at the CSV header line) missing header key, an
/// unknown op, npus other than g.npus, a root out of range or failed (ops
/// with a root), a row without 6 fields, a non-number, a negative or
/// non-finite time, an end before its start, a chunk out of range, an NPU
/// out of range or failed, src == dst, or a (src, dst) with no link in g.
/// It does not check() the schedule.
Schedule read_schedule(std::istream& in, const std::string& name, const NpuGraph& g, Request& r);

}  // namespace fabricsim::synth
