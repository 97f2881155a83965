// OCS-vClos (../shared/spec/vclos.md sections 2.5 and 5.4): an optical
// circuit layer between a leaf-spine's leaves and spines, whose idle ports
// are rewired when a job is admitted, and the scheduler that places a job
// on circuits it has to itself.  Pure functions over an OcsState beside the
// ClusterState of ctrl/vclos.hpp; the app's cluster queue applies what they
// return (switches the circuits through the network's link state, pins the
// job's routes on them) and releases it when the job ends.
//
// The optical layer (topology.ocs_switches = K > 0 on a leaf_spine; spec
// 2.5 with its [fabricsim] default generalised): S spines split into K
// groups of g = S/K; OCS k holds every port of spines [k*g, (k+1)*g) (each
// spine's L*lpp ports) and P = g*lpp uplink ports of every leaf (lpp:
// topology.links_per_pair).  Leaf port c of leaf n on OCS k ("slot" c,
// 0 <= c < P) can be circuit-connected to any spine of OCS k, so a leaf may
// have up to P parallel links to one spine.  At power-on slot c is
// connected to spine k*g + c / lpp: the canonical leaf-spine.  K = S is the
// spec's default (one OCS per spine: rewiring gains nothing), K = 1 one
// OCS holding everything.  Leaf-to-leaf circuits are not modelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/ctrl/vclos.hpp"

namespace fabricsim::ctrl {

struct OcsShape {
  std::uint32_t leaves = 0;       ///< L
  std::uint32_t spines = 0;       ///< S
  std::uint32_t switches = 0;     ///< K (divides S)
  std::uint32_t leaf_ports = 0;   ///< P: a leaf's ports on each OCS (a multiple of S/K)
  std::uint32_t spine_ports = 0;  ///< ports of each spine (L * links_per_pair)

  std::uint32_t spines_per_switch() const { return spines / switches; }     ///< g
  std::uint32_t switch_of(std::uint32_t spine) const { return spine / spines_per_switch(); }
  /// The spine slot c of a leaf on OCS k is connected to at power-on.
  std::uint32_t power_on_spine(std::uint32_t k, std::uint32_t c) const {
    return k * spines_per_switch() + c / (leaf_ports / spines_per_switch());
  }
  /// "" when consistent, else why not.
  std::string check() const;
};

// A Circuit (vclos.hpp) names leaf `leaf`'s port `slot` on the OCS of
// spine `spine`; the topology has one link (each way) per (leaf, spine,
// slot), the OCS being switch_of(spine).

/// The circuits that are connected now, and which of them a running job
/// holds.  Spine ports are interchangeable (only their count matters).
class OcsState {
 public:
  /// Power-on wiring: every slot connected as OcsShape::power_on_spine,
  /// nothing held.
  explicit OcsState(OcsShape shape);
  const OcsShape& shape() const { return shape_; }
  static constexpr std::uint32_t kNone = UINT32_MAX;
  /// The spine slot c of leaf n on OCS k is connected to (kNone: none).
  std::uint32_t connected(std::uint32_t leaf, std::uint32_t k, std::uint32_t slot) const;
  /// Whether that slot's circuit is held by a running job.
  bool held(std::uint32_t leaf, std::uint32_t k, std::uint32_t slot) const;
  /// Ports of leaf n on OCS k not held (C^k_n): each can be rewired.
  std::uint32_t free_leaf_ports(std::uint32_t leaf, std::uint32_t k) const;
  /// Ports of spine m not held (C^k_m).
  std::uint32_t free_spine_ports(std::uint32_t spine) const;
  /// Circuits connected at spine m (held or not); at most spine_ports.
  std::uint32_t connected_at(std::uint32_t spine) const;

  /// Applies a's rewiring (switched_off, then switched_on) and holds its
  /// circuits.  Asserts (always, not only in debug builds) that no circuit
  /// switched off is held, that every circuit switched on lands on an
  /// unconnected slot of a spine with a port to spare, and that every
  /// circuit it holds is connected and was not held.
  void take(const Allocation& a);
  /// Frees a's circuits; they stay connected (until rewired).
  void release(const Allocation& a);

 private:
  std::size_t at(std::uint32_t leaf, std::uint32_t k, std::uint32_t slot) const {
    return (std::size_t{leaf} * shape_.switches + k) * shape_.leaf_ports + slot;
  }
  OcsShape shape_;
  std::vector<std::uint32_t> spine_of_;  // per (leaf, k, slot): connected spine or kNone
  std::vector<std::uint8_t> held_;       // per (leaf, k, slot)
  std::vector<std::uint32_t> held_at_leaf_;   // per (leaf, k)
  std::vector<std::uint32_t> held_at_spine_;  // per spine
  std::vector<std::uint32_t> connected_at_;   // per spine
};

struct OcsOptions {
  /// Leaf subsets the OCS-FINDCLOS search visits per (l, s) before giving
  /// up on it (deterministic, so every rank decides alike).
  std::uint64_t max_nodes = 100000;
  /// The locality rule of spec 5.2: a job of N > T GPUs takes ceil(N/T)
  /// whole idle servers.  false: OCS-Releax (spec 5.5), any idle GPUs.
  bool whole_servers = true;
};

/// OCS-vClos (spec 5.4, Algorithm 2).  Stages 0 and 1 as place_vclos; then
///  * Stage::OcsSpine: one spine with at least N free ports (the fewest such
///    first, then the lowest index) and ceil(N/T) whole idle servers on
///    leaves with enough free ports on that spine's OCS (leaves with the
///    fewest idle servers first, taking as many servers of each as its ports
///    allow); every rank gets its own circuit to that spine;
///  * Stage::OcsClos: OCS-FINDCLOS, l doubling from max(1, 2^floor(log2 N)
///    / S) while l <= L, s = N / l, skipping l == 1, l not dividing N and
///    T not dividing s: l leaves with at least s/T idle servers each (one
///    virtual leaf per leaf), and s virtual-spine units spread over spines,
///    s_m on spine m (parallel circuits), with l * s_m <= C_m and, per leaf
///    and OCS k, sum over k's spines of s_m <= C^k_n.  Leaves are searched
///    in best-fit order (fewest idle servers, then index): the first
///    feasible subset in that lexicographic order wins; the units then go
///    to spines by fewest free ports first (optimal for the spec's
///    objective given the leaves).
/// Circuits reuse idle connected ones first, then unconnected slots, then
/// rewire idle slots (lowest first); a spine with no port to spare frees
/// one by switching off its lowest idle circuit (leaf, then slot).  Held
/// circuits are never switched.  Refusal::Gpus as place_vclos;
/// Refusal::Network otherwise.  Deterministic.
///
/// OCS-Releax (options.whole_servers = false): a job takes any idle GPUs
/// and reserves no server whole (Allocation::servers stays empty, gpus are
/// exactly its N GPUs).  Inside a leaf it takes the GPUs of the servers
/// with the fewest idle GPUs first (then the lowest index), lowest slots
/// first; ranks follow that order, leaf-contiguous with leaves ascending.
///  * Stage::Server as above when N <= T; when no server has N idle GPUs
///    the job goes on to the stages below;
///  * Refusal::Gpus when the cluster has fewer than N idle GPUs;
///  * Stage::Leaf: the leaf with the fewest idle GPUs that has N (then the
///    lowest index); no spine;
///  * Stage::OcsSpine as above, each leaf (fewest idle GPUs first) giving
///    min(its idle GPUs, its free ports on the spine's OCS, the GPUs still
///    wanted) ranks;
///  * Stage::OcsClos as above, virtual leaves needing s idle GPUs (not s/T
///    idle servers), so (l, s) is not skipped when T does not divide s;
///    leaves in best-fit order by idle GPUs;
///  * Refusal::Network otherwise.
Decision place_ocs_vclos(const ClusterState& cluster, const OcsState& ocs, std::uint32_t n,
                         const OcsOptions& options = {});

}  // namespace fabricsim::ctrl
