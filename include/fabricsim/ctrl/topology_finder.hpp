// TOPOLOGYFINDER (../shared/spec/topoopt.md §4.2, Algorithm 1; Wang et al.,
// NSDI '23): the TopoOpt fabric of one job, from the job's own traffic.  A
// pure function: a job's AllReduce families and its model-parallel (MP)
// demand matrix between servers in, the directed links of a d-regular
// direct-connect fabric out.  The app derives the traffic from the job's
// task graph (src/app/topoopt_job.cpp) and builds the fabric from `links`.
//
// Interfaces.  Each of a server's d interfaces is one directed link out and
// one in (spec §2.1, "Link direction"): a ring "member i -> member i + p"
// takes one interface at every member, a matching pair (u, v) one at u and
// one at v (the two directed links u -> v and v -> u of one duplex cable).
//
// Readings taken here (the paper's where it is precise, [fabricsim] where
// the spec leaves the choice to us):
//   - Degree split (paper): d_A = max(1, ceil(d * sum T_AR / (sum T_AR +
//     sum T_MP))); DegreeSplit::Code rounds instead (minimum 1).  A user may
//     fix d_A (`allreduce_degree`).
//   - Connectivity (the authors' code): when no family is one group of all
//     n servers, one of the d_A interfaces is a ring over all servers (step
//     1 in server order), so the fabric is strongly connected whatever the
//     job's groups are; when one is, it keeps at least one ring whatever the
//     other families' shares.
//   - Families (Alg. 1's "AllReduce group k"): disjoint groups of servers of
//     one size g that reduce together; a ring of step p links member i of
//     every group to member (i + p) mod g, members in ascending server
//     order.  This is TotientPerms' residue-class reading (spec §4.3) after
//     relabelling the servers so that each group is a residue class, which
//     the paper allows (App. A: a relabelling performs the same).  Families
//     are taken in descending bytes (ties by index); family k gets d_k =
//     ceil(d_A * T_k / sum T_AR) rings of the remaining d_A, at most phi(g)
//     (the distinct Hamiltonian rings of g members); steps by
//     SelectPermutations over the member space (x = g^(1/d_k)), or its code
//     variant.  AllReduce degree that no family can use goes to MP.
//   - MP (Alg. 1's loop): rounds of maximum-weight matching (ctrl/matching.hpp,
//     checked against brute force) on the symmetric demand T(u,v) + T(v,u)
//     rounded to whole bytes, among servers with an interface left; after a
//     round each matched pair's demand decays (halved, MpDecay::Halve, the
//     paper; or times c/(c+1) after its c-th parallel link, MpDecay::Code).
//     Rounds stop when no positive demand is left between two servers with
//     interfaces left.
//   - Spare interfaces (no demand to match, a server outside every family):
//     closed by directed rings over the servers that still have one, in
//     ascending order, so the fabric is d-regular.  A single server left
//     with spare interfaces is put into existing links (a -> b becomes
//     a -> s -> b; MP and fill links first, family rings last).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::ctrl {

/// Alg. 1's "AllReduce group k": disjoint groups of servers of one size
/// g >= 2 (each ascending) whose AllReduces are of one kind, with their
/// bytes per iteration (sum T_k).
struct AllReduceFamily {
  std::vector<std::vector<std::uint32_t>> groups;
  double bytes = 0;
  std::uint32_t group_size() const { return groups.empty() ? 0 : static_cast<std::uint32_t>(groups[0].size()); }
};

struct FinderInput {
  std::uint32_t servers = 0;  ///< n
  std::uint32_t degree = 0;   ///< d
  std::vector<AllReduceFamily> allreduce;
  /// MP demand, row-major n x n: bytes server u sends server v per
  /// iteration (the diagonal is ignored).  Empty: none.
  std::vector<double> mp;
};

enum class DegreeSplit : std::uint8_t { Paper, Code };
enum class MpDecay : std::uint8_t { Halve, Code };

struct FinderOptions {
  DegreeSplit split = DegreeSplit::Paper;
  MpDecay decay = MpDecay::Halve;
  bool geo_code_variant = false;  ///< ring steps by select_permutations_geo
  /// d_A fixed by the user (0 = the split's); at most d.
  std::uint32_t allreduce_degree = 0;
};

/// A ring of step `step` over every group of family `family`, or over all
/// servers in ascending order (family == kAllServers, the connectivity ring).
struct FinderRing {
  static constexpr std::uint32_t kAllServers = UINT32_MAX;
  std::uint32_t family = kAllServers;
  std::uint32_t step = 1;
};

struct FinderResult {
  double allreduce_bytes = 0;  ///< sum T_AllReduce (the families' bytes)
  double mp_bytes = 0;         ///< sum T_MP (off the diagonal)
  std::uint32_t allreduce_degree = 0;  ///< d_A as split (connectivity ring included)
  std::uint32_t mp_degree = 0;         ///< d - d_A, plus AllReduce degree no family could use
  std::vector<std::uint32_t> family_rings;  ///< d_k, per input family (0 for those not reached)
  std::vector<FinderRing> rings;
  /// The MP matchings, one per round, pairs (u, v) with u < v.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> matchings;
  /// Directed links closing spare interfaces.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fill;
  /// Links a -> b split into a -> s -> b to take a lone server's spare
  /// interfaces (its last element of `fill` is s -> b, the split link's
  /// entry in `links` now ends at s).
  std::uint32_t detours = 0;
  std::uint32_t spare = 0;  ///< interfaces left unconnected (none unless n = 2)
  /// Every directed link u -> v of the fabric (rings, then each matched pair
  /// both ways, then fill); parallel links repeat.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
  /// The first ring_links of `links` are the AllReduce rings' (G_A, which
  /// CoinChangeMod routes AllReduce traffic over).
  std::size_t ring_links = 0;
  /// One line: the traffic, degrees, steps, rounds, e.g. "AllReduce 1200000000 B, MP 340000000 B; d_A 2 (all
  /// +1, family 0 +1), d_MP 1 (1 matching rounds)".
  std::string describe() const;
};

/// Throws std::invalid_argument for inputs the caller should have refused
/// with a config error (n < 2, d = 0, a family with groups of unequal size,
/// overlapping groups, members out of range, an mp matrix of the wrong size,
/// negative or non-finite bytes, allreduce_degree > d).
FinderResult topology_finder(const FinderInput& in, const FinderOptions& opt = {});

/// The ring order of step `step` over `members` (ascending): member i is
/// followed by member (i + step) mod g.  Returns the members in ring order
/// starting at members[0] (g / gcd(g, step) of them).
std::vector<std::uint32_t> ring_order(const std::vector<std::uint32_t>& members, std::uint32_t step);

}  // namespace fabricsim::ctrl
