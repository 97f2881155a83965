// vClos's resource schedulers (../shared/spec/vclos.md section 5): where a
// job's GPUs go on a leaf-spine cluster and which leaf-spine links it
// reserves, or why it cannot be placed now (not enough GPUs, or enough
// GPUs but no isolated virtual Clos: the spec's fragmentation causes).
// Pure functions over a ClusterState; the app's cluster queue calls them
// at admission and applies what they return (take / release).
//
// Numbering: leaves 0..L-1, spines 0..S-1, servers leaf-major (server =
// leaf * servers_per_leaf + i), GPUs server-major (gpu = server * T +
// slot).  The app maps GPUs to endpoints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabricsim::ctrl {

/// The cluster's shape: L leaves of servers_per_leaf servers of T GPUs, S
/// spines, C_{n,m} links between leaf n and spine m.
struct ClusterShape {
  std::uint32_t leaves = 0;
  std::uint32_t spines = 0;
  std::uint32_t servers_per_leaf = 0;
  std::uint32_t gpus_per_server = 1;  ///< T
  /// C_{n,m} at index n * spines + m (empty: one link per pair).
  std::vector<std::uint32_t> links;

  std::uint32_t servers() const { return leaves * servers_per_leaf; }
  std::uint32_t gpus() const { return servers() * gpus_per_server; }
  std::uint32_t links_between(std::uint32_t leaf, std::uint32_t spine) const {
    return links.empty() ? 1u : links[std::size_t{leaf} * spines + spine];
  }
  /// Why this shape is unusable ("" if it is fine): a zero count, a links
  /// table of the wrong size.
  std::string check() const;
};

/// Where a job was put, and by which stage of the scheduler.
enum class Stage : std::uint8_t {
  Server,       ///< stage 0: N <= T on one server (best fit)
  Leaf,         ///< stage 1: whole servers under one leaf (best fit); uses no spine link
  VirtualClos,  ///< stage 2: l virtual leaves x s virtual spines on reserved links (vClos)
  Servers,      ///< whole servers over several leaves, no links reserved (whole_server baseline)
  OcsSpine,     ///< OCS-vClos: whole servers on several leaves, each rank a circuit to one spine (ocs.hpp)
  OcsClos,      ///< OCS-vClos: l virtual leaves x s virtual-spine units on circuits (ocs.hpp)
};
const char* to_string(Stage s);

/// Why a job could not be placed now.
enum class Refusal : std::uint8_t {
  None,
  Gpus,     ///< not enough idle GPUs / whole idle servers
  Network,  ///< enough idle servers, but no feasible virtual Clos
};
const char* to_string(Refusal r);

/// An optical circuit (ocs.hpp): leaf `leaf`'s port `slot` on the OCS of
/// spine `spine`, connected to `spine`.
struct Circuit {
  std::uint32_t leaf = 0;
  std::uint32_t spine = 0;
  std::uint32_t slot = 0;
  friend bool operator==(const Circuit&, const Circuit&) = default;
};

struct Allocation {
  Stage stage = Stage::Server;
  /// The job's GPUs in rank order (leaf-contiguous: virtual leaf by virtual
  /// leaf, server by server, slot by slot; OCS-Releax takes a leaf's
  /// servers fullest first).  Exactly the N requested.
  std::vector<std::uint32_t> gpus;
  /// Servers reserved whole (N > T): all their GPUs are busy while the job
  /// runs, also those beyond N.  Empty for stage Server, and for every
  /// stage of OCS-Releax (OcsOptions::whole_servers false: GPUs only).
  std::vector<std::uint32_t> servers;
  /// Stage VirtualClos: the leaf of each virtual leaf (ranks [a*s, (a+1)*s)
  /// are on leaves[a]) and the spine of each virtual spine; the job
  /// reserves one link of every (leaves[a], spines[i]) pair.  Rank r's
  /// traffic to another leaf goes up to spines[(r % s)] (source routing:
  /// the identity bijection on the port index within the virtual leaf).
  std::vector<std::uint32_t> leaves;
  std::vector<std::uint32_t> spines;
  /// The spine a cross-leaf message from rank r takes (stage VirtualClos
  /// only).
  std::uint32_t spine_of_rank(std::uint32_t r) const { return spines[r % spines.size()]; }
  /// Stages OcsSpine and OcsClos (ocs.hpp; leaves as for VirtualClos in
  /// OcsClos, spines empty): rank r's circuit (its way up, and the way down
  /// to it), one per rank, in rank order.  In OcsClos virtual leaf a's
  /// ranks [a*s, (a+1)*s) hold unit u = r % s, the same spine for every a.
  std::vector<Circuit> circuits;
  /// The rewiring the job needs before it starts: circuits switched off
  /// (never one held by a running job), then switched on.
  std::vector<Circuit> switched_off, switched_on;
  /// The rank whose circuit a cross-leaf message from rank src to rank dst
  /// goes down (OcsSpine: dst's own; OcsClos: the unit of src on dst's
  /// virtual leaf, source routing).
  std::uint32_t down_rank(std::uint32_t src, std::uint32_t dst) const {
    if (stage != Stage::OcsClos) return dst;
    const auto s = static_cast<std::uint32_t>(gpus.size() / leaves.size());
    return dst / s * s + src % s;
  }
};

/// A scheduler's answer: an allocation, or the cause it has none.
struct Decision {
  std::optional<Allocation> allocation;
  Refusal why = Refusal::None;  ///< None exactly when allocation is set
};

class ClusterState {
 public:
  explicit ClusterState(ClusterShape shape);
  const ClusterShape& shape() const { return shape_; }
  bool gpu_busy(std::uint32_t gpu) const { return busy_[gpu] != 0; }
  std::uint32_t idle_gpus(std::uint32_t server) const { return idle_gpus_[server]; }
  /// Servers of `leaf` with all T GPUs idle (RSN, R_n).
  std::uint32_t idle_servers(std::uint32_t leaf) const { return idle_servers_[leaf]; }
  std::uint32_t idle_servers() const;  ///< over the cluster
  /// C_{n,m} minus the links reserved by running jobs.
  std::uint32_t free_links(std::uint32_t leaf, std::uint32_t spine) const {
    return free_links_[std::size_t{leaf} * shape_.spines + spine];
  }
  /// Free links of a spine over all leaves (RPN).
  std::uint32_t free_ports(std::uint32_t spine) const { return free_ports_[spine]; }

  /// Marks an allocation's GPUs (and whole servers) busy and its links
  /// reserved.  Asserts they were free.
  void take(const Allocation& a);
  /// Frees what take() marked.  Asserts it was taken.
  void release(const Allocation& a);

 private:
  void book(const Allocation& a, bool take);  ///< take() or release()
  ClusterShape shape_;
  std::vector<std::uint8_t> busy_;  // per GPU
  std::vector<std::uint32_t> idle_gpus_, idle_servers_, free_links_, free_ports_;
};

/// How vClos solves vClos-ILP(l, s).
enum class VClosSolver : std::uint8_t {
  Search,  ///< exact branch and bound (deterministic; default)
  Ilp,     ///< CBC on the spec's ILP, with a node limit (deterministic, no time limit)
};

struct VClosOptions {
  VClosSolver solver = VClosSolver::Search;
  std::uint64_t ilp_max_nodes = 100000;  ///< CBC's node limit (Ilp)
};

/// The whole_server baseline (spec 5.2's locality rule, no isolation):
/// stage 0 (best-fit server), stage 1 (best-fit leaf), otherwise
/// ceil(N/T) whole idle servers over several leaves, leaves with the most
/// idle servers first (ties: lower index), so the job spans few leaves.
/// Refusal::Gpus when there is no room; never Network.
Decision place_whole_server(const ClusterState& state, std::uint32_t n);

/// vClos (spec 5.3, Algorithm 1): stage 0, stage 1, then FINDVCLOS: l from
/// max(1, 2^floor(log2 N) / S) doubling while l <= L, s = N / l, skipping
/// (l, s) with l == 1, s > S or s not a multiple of T; the first (l, s) with
/// a feasible vClos-ILP wins.  N must be a power of two when N > T (the
/// app rounds).  Refusal::Gpus when fewer than ceil(N/T) idle servers exist
/// (or, N <= T, no server has N idle GPUs); Refusal::Network otherwise.
Decision place_vclos(const ClusterState& state, std::uint32_t n, const VClosOptions& options = {});

/// Stages 0 and 1 alone (n <= T: best-fit server; else best-fit leaf with
/// ceil(n/T) idle servers), as place_vclos and place_whole_server take
/// them; nullopt when the stage that applies finds no room.
std::optional<Allocation> place_local(const ClusterState& state, std::uint32_t n);

/// vClos-ILP(l, s) alone: l leaves each with at least s/T idle servers and
/// s spines, every chosen (leaf, spine) pair with a free link, minimising
/// sum_m RPN(S_m) s_m + sum_n RSN(L_n) T l_n.  Search breaks ties by the
/// lexicographically smallest (leaves, spines) in index order; Ilp reaches
/// the same objective but may pick another optimum.  Both are
/// deterministic (same state, same answer), so every MPI rank decides
/// alike.  nullopt if infeasible (Ilp: also when CBC stops at its node
/// limit without a solution).  The allocation's gpus take the lowest-numbered
/// idle servers of each chosen leaf.
std::optional<Allocation> vclos_ilp(const ClusterState& state, std::uint32_t l, std::uint32_t s,
                                    const VClosOptions& options = {});

}  // namespace fabricsim::ctrl
