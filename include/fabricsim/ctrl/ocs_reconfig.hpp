// OCS-reconfig heuristic (../shared/spec/topoopt.md §4.6, Algorithm 5, App.
// E.4; Wang et al., NSDI '23): the directed links an OCS fabric installs for
// one epoch, from the demand still unsatisfied.  A pure function: n servers,
// each with d transmit and d receive ports, and an n x n demand matrix in;
// directed links out.  Used by OCS-reconfig (FW and noFW) and by SiP-ML
// (spec §2.3), whose ILP the paper replaces by this loop with Discount = 1.
//
// Greedy loop (Alg. 5).  tx[v] = rx[v] = d.  While some pair (u, v), u != v,
// has tx[u] > 0, rx[v] > 0 and remaining demand T(u, v) > 0, take the one of
// highest T (ties: smallest u, then smallest v), add the link u -> v,
// decrement tx[u] and rx[v], and scale T(u, v) by the decay below.  Pairs
// whose transmitter or receiver has no port left are dropped (Alg. 5's "drop
// all (u,.) / (.,v) from T").  The loop ends after at most n * d links.
//
// Discount and the decay (the reading taken here).  The paper's utility is
// sum T(i,j) * Discount(L(i,j)) with Discount(l) = sum_{x=1..l} 2^-x, so
// the l-th parallel link of a pair adds T * 2^-l: the marginal utility
// halves with each link.  Picking the pair of highest T and then halving T
// (the pseudocode's "T(v1,v2) = 1/2", read as *= 1/2, spec §4.6) is exactly
// the greedy choice of the highest marginal utility: the l-th link of a pair
// competes with T * 2^-(l-1), the same ordering as T * 2^-l up to the common
// factor 1/2.  options.discount = true does this (the paper).
// options.discount = false is SiP-ML's "Discount = 1", read as "no discount":
// each parallel link adds the full T (Discount(l) = l), so T is NOT halved
// (decay factor 1) and a pair keeps its priority until its transmitter's or
// its receiver's ports run out, i.e. it gets min(tx[u], rx[v]) parallel
// links in a row.  (The other reading, cumulative Discount(l) = 1 with zero
// utility for a second parallel link, is not taken.)
//
// Connectivity repair (options.connect, OCS-reconfig "FW"; Alg. 5's
// 2-EdgeReplacement).  Three steps, each preserving "out- and in-degree of
// every server <= d" and never creating a self-loop:
//   1. Fill.  Ports the greedy loop left free have no demand between them
//      (the loop only stops when no positive-demand pair is left), so they
//      are closed by links of zero demand: servers u in ascending order, each
//      free transmit port to the server v != u with the most free receive
//      ports (ties: smallest v).  After this pass, free ports can remain only
//      at one server s with as many free transmit as receive ports (any
//      other leftover would have found a partner).
//   2. Splice.  Each such pair of ports of s goes into an existing link
//      a -> b with a, b != s of lowest original demand T(a, b) (ties: smallest
//      a, b, then the earliest link): a -> b becomes a -> s and s -> b is
//      appended.  One exists: the n - 1 >= 1 other servers send (n - 1) * d
//      links, at most d - 1 of which reach s while s has a free receive port.
//      Now every server has out-degree = in-degree = d.
//   3. Merge.  In a digraph whose every vertex has in-degree = out-degree,
//      every link lies on a cycle, so every weakly connected component is
//      strongly connected and stays weakly connected when one link is
//      removed.  Let C_0 .. C_{k-1} be the weak components (ordered by their
//      smallest server) and a_i -> b_i the lowest-demand link of C_i (same
//      ties).  If k >= 2, link a_i -> b_i becomes a_i -> b_{(i+1) mod k}.
//      This is k - 1 OWAN 2-edge replacements done in sequence (swap C_0's
//      link with C_1's, then the new link a_1 -> b_0 with C_2's, ...; for
//      k = 2 it is one swap a->b, c->d => a->d, c->b).  Degrees are kept, each
//      C_i minus its link is weakly connected and the new links chain all
//      components together, so the graph is weakly connected and balanced,
//      hence strongly connected.  No self-loop: a_i and b_{i+1} lie in
//      different components.  Termination is immediate (one pass).
// So with connect the result is d-regular (out = in = d everywhere) and
// strongly connected; without it, it is the greedy loop's links only, and
// servers may keep free ports (noFW, SiP-ML).
//
// Output order: the greedy links in the order placed, then the fill links,
// then the spliced s -> b links; splices and merges rewrite entries in place.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace fabricsim::ctrl {

struct OcsReconfigOptions {
  /// Discount(l) = sum_{x=1..l} 2^-x (the paper: T halved per link); false: Discount = 1 (SiP-ML: T kept).
  bool discount = true;
  /// Restore strong connectivity afterwards (host forwarding on, "FW"); false: SiP-ML / noFW.
  bool connect = true;
};

struct OcsReconfigResult {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> links;  ///< directed links u -> v, parallel links repeat
  std::uint32_t greedy_links = 0;  ///< links placed by the demand loop
  /// Entries of `links` the connectivity repair added (fill, splice) or
  /// rewrote (splice, merge); each entry counted once.  0 without connect.
  std::uint32_t repair_links = 0;
};

/// Algorithm 5 (spec §4.6), as documented above.  `demand` is n x n,
/// row-major, bytes u -> v (the diagonal is ignored).  Deterministic.
/// Throws std::invalid_argument for n < 2, d = 0, a demand of the wrong
/// size, negative or non-finite entries.
OcsReconfigResult ocs_reconfig(std::uint32_t n, std::uint32_t d, const std::vector<double>& demand,
                               const OcsReconfigOptions& opt = {});

}  // namespace fabricsim::ctrl
