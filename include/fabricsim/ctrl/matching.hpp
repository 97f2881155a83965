// Maximum-weight matching of a general (not necessarily bipartite)
// undirected graph: Edmonds' blossom algorithm with dual variables, the
// O(n^3) primal-dual form.  The controllers call it once per fabric build
// step to pair servers (n = 128..432, dense); it is exact and integral.
//
// Why our own: Boost 1.74's maximum_weighted_matching (Debian 12) returns
// non-optimal matchings on some graphs, and LEMON is not packaged among the
// dependencies available here.  tests/ctrl/test_matching.cpp checks this one
// against brute force, against CBC solving the matching ILP, against a
// Hungarian assignment on bipartite graphs, and on every call the code checks
// its own LP dual certificate of optimality (see max_weight_matching).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace fabricsim::ctrl {

struct WeightedEdge {
  std::uint32_t u = 0, v = 0;
  std::int64_t weight = 0;
};

inline constexpr std::uint32_t kUnmatched = std::numeric_limits<std::uint32_t>::max();

/// Weights must satisfy |weight| < kMaxMatchingWeight (2^52).
inline constexpr std::int64_t kMaxMatchingWeight = std::int64_t{1} << 52;

/// What one run of max_weight_matching did: the tests read it to see that
/// the blossom steps (shrinking, nesting, expanding an inner blossom and
/// relabelling its pieces) were exercised, not only the plain augmentations.
struct MatchingStats {
  std::uint64_t stages = 0;                  // stages run (the last finds no augmenting path, or none is needed)
  std::uint64_t augmentations = 0;           // augmenting paths applied (= matched pairs at the end)
  std::uint64_t dual_updates = 0;            // dual adjustments (delta steps)
  std::uint64_t blossoms_formed = 0;         // odd cycles shrunk into blossoms
  std::uint64_t nested_blossoms_formed = 0;  // ... of which at least one piece was itself a blossom
  std::uint64_t inner_expansions = 0;        // T-blossoms expanded mid-stage (their dual reached 0), pieces relabelled
  std::uint64_t pieces_relabelled_s = 0;     // ... pieces of those relabelled S (the tree entered off the base)
  std::uint64_t stage_end_expansions = 0;    // blossoms with dual 0 dissolved after an augmentation
  std::uint32_t max_nesting = 0;             // deepest blossom nesting seen (1 = a blossom of vertices only)
};

/// Maximum-weight matching of an undirected graph on vertices 0..n-1 (Edmonds'
/// blossom algorithm with duals, O(n^3)).  Not necessarily of maximum cardinality: an edge
/// of weight <= 0 never helps and is never chosen.  Parallel edges are allowed (the heaviest
/// counts), self-loops are ignored.  |weight| must be below 2^52 (kMaxMatchingWeight).
/// Throws std::invalid_argument for a weight out of range or an endpoint >= n (the input is
/// the caller's); a failed internal check (the LP dual certificate of optimality, verified
/// before returning) is a FABRICSIM_ASSERT.  Deterministic: the same input (same edge
/// order) gives the same matching.  Returns mate[v] (kUnmatched if v is unmatched);
/// mate[mate[v]] == v.
///
/// Memory is dense: n x n weights (8 bytes each) besides O(n + |edges|).
std::vector<std::uint32_t> max_weight_matching(std::uint32_t n, const std::vector<WeightedEdge>& edges);

/// As above, and fills `*stats` (when not null) with what the run did.
std::vector<std::uint32_t> max_weight_matching(std::uint32_t n, const std::vector<WeightedEdge>& edges,
                                               MatchingStats* stats);

/// Sum of weights of the matched pairs (the heaviest edge between each matched pair).
/// A matched pair with no edge between them adds nothing.  Throws std::invalid_argument
/// when an edge's endpoint is outside `mate` or a mate entry is neither kUnmatched nor a vertex.
std::int64_t matching_weight(const std::vector<std::uint32_t>& mate, const std::vector<WeightedEdge>& edges);

}  // namespace fabricsim::ctrl
