// Maximum-weight matching on general graphs (matching.hpp): Edmonds' blossom
// algorithm with dual variables (Edmonds 1965), in the O(n^3) primal-dual
// form of Gabow (1974) and Lawler ("Combinatorial Optimization", 1976), as
// surveyed by Galil (1986); written here from the textbook description.  Boost 1.74's weighted matching gives
// wrong answers on some graphs and LEMON is not in our dependency set, hence
// our own, which checks its own optimality certificate before it returns.
//
// The LP.  Vertex duals u_v >= 0 and, for every odd vertex set B (a
// blossom), z_B >= 0, with for every edge ij
//   slack_ij = u_i + u_j + sum_{B contains i and j} z_B - 2 w_ij >= 0.
// A matching M and duals are both optimal when every matched edge has slack 0,
// every unmatched vertex has u = 0, and every blossom with z_B > 0 holds
// (|B| - 1) / 2 matched edges (then 2 w(M) equals the dual objective, which
// bounds every matching).  Weights are doubled (2 w) so that all duals stay
// integers: vertex duals start at max w, every S-vertex (outer) dual of one
// stage has the parity of the free vertices' (they are joined to them by
// tight edges), so the slack of an edge between two S-blossoms is even and
// half of it, the dual step delta3, is an integer; blossom duals move by
// 2 delta and stay even, so delta4 = z / 2 is one too.  No tolerances.
//
// The algorithm.  Stages, each ending with one augmenting path or with the
// proof of optimality.  A stage grows alternating trees from the free
// vertices over tight edges (slack 0): tree blossoms are S (outer: the roots
// and the mates of T) or T (inner).  A tight edge between two S-blossoms
// either closes an odd cycle in one tree, shrunk into a new S-blossom, or joins
// two trees: the augmenting path, after which the stage ends.  When no tight
// edge is left the duals move by the largest delta that keeps them feasible:
// S-vertices' u -= delta, T-vertices' u += delta, top-level S-blossoms' z +=
// 2 delta, T-blossoms' z -= 2 delta; delta is the least of
//   delta1 = the least S-vertex dual (reaching 0 at the free vertices: optimal),
//   delta2 = the least slack of an edge from an S-vertex to an unlabelled blossom,
//   delta3 = half the least slack of an edge between two distinct S-blossoms,
//   delta4 = half the least dual of a T-blossom (at 0 it is expanded and its
//            pieces on the even path through it relabelled T and S).
// Each delta is found in O(n) from these per-stage records: for every non-S
// vertex the S-vertex of least slack to it (the relative order of those
// slacks does not change while both sides keep their labels, since all
// S-vertex duals move together), and for every S-blossom a list of edges to
// other S-blossoms holding, for every pair of S-blossoms, an edge of least
// slack between them, in one of the two lists (see merge_lists).  A stage
// costs O(n^2) and there are at most n/2 + 1 of them.
#include "fabricsim/ctrl/matching.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/util/assert.hpp"

namespace fabricsim::ctrl {

namespace {

using std::int64_t;
using std::size_t;
using std::uint32_t;

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// An edge with a direction: `from` and `to` are vertices.  Label arcs
/// point from the tree parent into the labelled blossom; the links of a
/// blossom from one piece into the next along its cycle.
struct Arc {
  uint32_t from = kNone;
  uint32_t to = kNone;
  Arc reversed() const { return Arc{to, from}; }
  bool empty() const { return from == kNone; }
};

enum class Label : std::uint8_t { kUnlabelled, kS, kT };

/// One run.  Node ids: vertices 0..n-1, blossoms n..2n-1 (at most n/2 exist
/// at once; ids are reused).  Labels, label arcs and the delta records are
/// meaningful for top-level nodes only.
class Matcher {
 public:
  Matcher(uint32_t n, const std::vector<WeightedEdge>& edges, MatchingStats* stats)
      : n_(n), stats_(stats), weight_(size_t{n} * n, 0) {
    for (const WeightedEdge& e : edges) {
      if (e.u == e.v || e.weight <= 0) continue;  // a self-loop, or an edge that can only lower the weight
      int64_t& w = weight_[size_t{e.u} * n + e.v];
      w = std::max(w, 2 * e.weight);
      weight_[size_t{e.v} * n + e.u] = w;
    }
    // Neighbour lists from the matrix (ascending, one entry per pair): a
    // scan costs the degree, not n, on sparse graphs.
    first_.assign(size_t{n} + 1, 0);
    for (uint32_t v = 0; v < n; ++v) {
      for (uint32_t w = 0; w < n; ++w)
        if (weight_[size_t{v} * n + w] > 0) neighbours_.push_back(w);
      first_[v + 1] = neighbours_.size();
    }
  }

  std::vector<uint32_t> run();

 private:
  int64_t weight(uint32_t a, uint32_t b) const { return weight_[size_t{a} * n_ + b]; }
  /// The slack of edge ab when a and b lie in different top-level blossoms
  /// (no blossom dual counts then).
  int64_t slack(uint32_t a, uint32_t b) const { return dual_[a] + dual_[b] - weight(a, b); }
  int64_t slack(Arc a) const { return slack(a.from, a.to); }
  bool is_blossom(uint32_t b) const { return b >= n_; }
  bool is_top(uint32_t b) const { return parent_[b] == kNone && (b < n_ || base_[b] != kNone); }

  template <class F>
  void for_each_leaf(uint32_t b, const F& f) const {
    if (!is_blossom(b)) {
      f(b);
      return;
    }
    for (uint32_t c : kids_[b]) for_each_leaf(c, f);
  }
  /// The piece of blossom b holding vertex v.
  uint32_t piece_of(uint32_t b, uint32_t v) const {
    while (parent_[v] != b) v = parent_[v];
    return v;
  }

  void begin_stage();
  void end_stage();
  bool scan_queue();
  bool tight_ss_edge(uint32_t v, uint32_t w);
  void label_s(uint32_t b, Arc arc);
  void label_t(uint32_t b, Arc arc);
  uint32_t find_common_blossom(uint32_t v, uint32_t w);
  void make_blossom(uint32_t bb, uint32_t v, uint32_t w);
  void merge_lists(uint32_t b);
  void expand(uint32_t b, bool end_of_stage);
  void augment(uint32_t v, uint32_t w);
  void rotate(uint32_t b, uint32_t v);
  void match_link(uint32_t b, size_t j);
  void check_certificate() const;
  uint32_t nesting(uint32_t b) const;

  uint32_t n_;
  MatchingStats* stats_;
  std::vector<int64_t> weight_;  // n x n, 2 w of the heaviest positive edge; 0 = none
  std::vector<size_t> first_;    // neighbours_[first_[v] .. first_[v + 1]) are v's
  std::vector<uint32_t> neighbours_;

  std::vector<uint32_t> mate_;  // per vertex
  std::vector<uint32_t> top_;   // per vertex: its top-level blossom (itself when in none)
  std::vector<int64_t> dual_;   // per node: u_v for vertices, z_B for blossoms
  // Per node.
  std::vector<uint32_t> parent_;             // the blossom immediately around it, kNone at top level
  std::vector<uint32_t> base_;               // the base vertex; kNone for an unused blossom id
  std::vector<std::vector<uint32_t>> kids_;  // blossoms: the pieces around the cycle, kids_[b][0] holding the base
  std::vector<std::vector<Arc>> links_;      // blossoms: links_[b][i] from kids i into kids i + 1 (cyclic)
  std::vector<Label> label_;
  std::vector<Arc> label_arc_;  // S: (mate of the base, base) or empty at a root; T: (S-vertex, vertex inside)
  std::vector<Arc> best_arc_;   // S: the least-slack arc from it into another S-blossom, if any
  std::vector<std::vector<Arc>> ss_arcs_;  // S: arcs from it into other S-blossoms (see merge_lists)
  std::vector<uint32_t> free_ids_;

  std::vector<uint32_t> best_s_;  // per non-S vertex: the S-vertex of least slack to it, or kNone
  std::vector<uint32_t> queue_;   // S-vertices not scanned yet
  std::vector<uint32_t> mark_;    // find_common_blossom's visits, per node
  uint32_t stamp_ = 0;
  std::vector<Arc> per_target_;  // merge_lists' scratch, per node
};

std::vector<uint32_t> Matcher::run() {
  const size_t nodes = 2 * size_t{n_};
  mate_.assign(n_, kNone);
  top_.resize(n_);
  int64_t max_w = 0;
  for (int64_t w : weight_) max_w = std::max(max_w, w);
  dual_.assign(nodes, 0);
  for (uint32_t v = 0; v < n_; ++v) {
    top_[v] = v;
    dual_[v] = max_w / 2;  // every edge's slack starts >= 0; max_w is even (doubled weights)
  }
  parent_.assign(nodes, kNone);
  base_.assign(nodes, kNone);
  for (uint32_t v = 0; v < n_; ++v) base_[v] = v;
  kids_.assign(nodes, {});
  links_.assign(nodes, {});
  label_.assign(nodes, Label::kUnlabelled);
  label_arc_.assign(nodes, Arc{});
  best_arc_.assign(nodes, Arc{});
  ss_arcs_.assign(nodes, {});
  free_ids_.clear();
  for (size_t b = nodes; b-- > n_;) free_ids_.push_back(static_cast<uint32_t>(b));  // lowest id first
  best_s_.assign(n_, kNone);
  mark_.assign(nodes, 0);
  per_target_.assign(nodes, Arc{});

  // Each stage but the last augments, and a matching has at most n/2 edges.
  for (uint32_t stage = 0;; ++stage) {
    FABRICSIM_ASSERT(stage <= n_ / 2 + 1, "max_weight_matching: more stages than augmentations can need");
    if (stats_ != nullptr) ++stats_->stages;
    begin_stage();
    bool augmented = false;
    // Every delta step labels a node T (at most once per stage per node;
    // ids freed mid-stage come back as S-blossoms only), shrinks a blossom,
    // expands one or ends the algorithm: 4n + 2 bounds them.
    for (uint64_t step = 0;; ++step) {
      FABRICSIM_ASSERT(step <= 4 * uint64_t{n_} + 2, "max_weight_matching: a stage did not end");
      if (scan_queue()) {
        augmented = true;
        break;
      }
      // The dual step.
      enum class Kind { kNoStep, kFreeDual, kToUnlabelled, kSS, kExpand } kind = Kind::kNoStep;
      int64_t delta = 0;
      Arc arc;
      uint32_t expand_b = kNone;
      auto offer = [&](Kind k, int64_t d) {
        if (kind != Kind::kNoStep && d >= delta) return false;  // ties go to the earlier kind
        kind = k;
        delta = d;
        return true;
      };
      for (uint32_t v = 0; v < n_; ++v)
        if (label_[top_[v]] == Label::kS) offer(Kind::kFreeDual, dual_[v]);
      if (kind == Kind::kNoStep) break;  // no free vertex: the matching is perfect
      for (uint32_t v = 0; v < n_; ++v) {
        if (label_[top_[v]] != Label::kUnlabelled || best_s_[v] == kNone) continue;
        if (offer(Kind::kToUnlabelled, slack(best_s_[v], v))) arc = Arc{best_s_[v], v};
      }
      for (uint32_t b = 0; b < nodes; ++b) {
        if (!is_top(b)) continue;
        if (label_[b] == Label::kS && !best_arc_[b].empty()) {
          const int64_t s = slack(best_arc_[b]);
          FABRICSIM_ASSERT(s % 2 == 0, "max_weight_matching: odd slack between S-blossoms");
          if (offer(Kind::kSS, s / 2)) arc = best_arc_[b];
        } else if (label_[b] == Label::kT && is_blossom(b)) {
          if (offer(Kind::kExpand, dual_[b] / 2)) expand_b = b;
        }
      }
      FABRICSIM_ASSERT(delta >= 0, "max_weight_matching: negative dual step");
      if (stats_ != nullptr) ++stats_->dual_updates;
      for (uint32_t v = 0; v < n_; ++v) {
        const Label l = label_[top_[v]];
        if (l == Label::kS) dual_[v] -= delta;
        if (l == Label::kT) dual_[v] += delta;
      }
      for (uint32_t b = n_; b < nodes; ++b) {
        if (!is_top(b)) continue;
        if (label_[b] == Label::kS) dual_[b] += 2 * delta;
        if (label_[b] == Label::kT) dual_[b] -= 2 * delta;
      }
      if (kind == Kind::kFreeDual) break;  // the free vertices' duals reached 0: optimal
      if (kind == Kind::kToUnlabelled) {
        label_t(top_[arc.to], arc);
      } else if (kind == Kind::kSS) {
        if (tight_ss_edge(arc.from, arc.to)) {
          augmented = true;
          break;
        }
      } else {
        expand(expand_b, false);
      }
    }
    if (!augmented) break;
    end_stage();
  }
  check_certificate();
  return mate_;
}

void Matcher::begin_stage() {
  for (uint32_t b = 0; b < 2 * n_; ++b) {
    if (!is_top(b)) continue;
    label_[b] = Label::kUnlabelled;
    label_arc_[b] = Arc{};
    best_arc_[b] = Arc{};
    ss_arcs_[b].clear();
  }
  std::fill(best_s_.begin(), best_s_.end(), kNone);
  queue_.clear();
  for (uint32_t v = 0; v < n_; ++v)
    if (mate_[v] == kNone && label_[top_[v]] == Label::kUnlabelled) label_s(top_[v], Arc{});  // v is its blossom's base
}

/// Dissolves the top-level blossoms whose dual is 0 (and the ones with dual
/// 0 inside them): they no longer constrain anything, and the next stages
/// would have to walk them.
void Matcher::end_stage() {
  std::vector<uint32_t> zero;
  for (uint32_t b = n_; b < 2 * n_; ++b)
    if (is_top(b) && dual_[b] == 0) zero.push_back(b);
  for (uint32_t b : zero) expand(b, true);
}

/// Scans the queued S-vertices' edges; returns true once it has augmented.
bool Matcher::scan_queue() {
  while (!queue_.empty()) {
    const uint32_t v = queue_.back();
    queue_.pop_back();
    for (size_t i = first_[v]; i < first_[v + 1]; ++i) {
      const uint32_t w = neighbours_[i];
      const uint32_t bv = top_[v];  // (changes when an edge closes a blossom around v)
      const uint32_t bw = top_[w];
      if (bv == bw) continue;
      const int64_t s = slack(v, w);
      if (label_[bw] == Label::kS) {
        if (s == 0) {
          if (tight_ss_edge(v, w)) return true;
        } else {
          ss_arcs_[bv].push_back(Arc{v, w});
          if (best_arc_[bv].empty() || s < slack(best_arc_[bv])) best_arc_[bv] = Arc{v, w};
        }
        continue;
      }
      if (label_[bw] == Label::kUnlabelled && s == 0) label_t(bw, Arc{v, w});
      // T-vertices too: an expanded T-blossom leaves unlabelled pieces.
      if (best_s_[w] == kNone || s < slack(best_s_[w], w)) best_s_[w] = v;
    }
  }
  return false;
}

/// A tight edge between S-vertices v and w of different blossoms: shrinks
/// the cycle it closes, or augments (returns true) when it joins two trees.
bool Matcher::tight_ss_edge(uint32_t v, uint32_t w) {
  const uint32_t common = find_common_blossom(v, w);
  if (common == kNone) {
    augment(v, w);
    return true;
  }
  make_blossom(common, v, w);
  return false;
}

/// Labels top-level b S (its vertices become S-vertices, to be scanned).
void Matcher::label_s(uint32_t b, Arc arc) {
  label_[b] = Label::kS;
  label_arc_[b] = arc;
  best_arc_[b] = Arc{};
  ss_arcs_[b].clear();
  for_each_leaf(b, [this](uint32_t v) { queue_.push_back(v); });
}

/// Labels unlabelled top-level b T, reached by `arc`, and its base's mate's
/// blossom S.  (An unlabelled blossom's base is matched: the free ones are all
/// roots, and the mate's blossom is unlabelled too, being matched to b.)
void Matcher::label_t(uint32_t b, Arc arc) {
  label_[b] = Label::kT;
  label_arc_[b] = arc;
  const uint32_t base = base_[b];
  const uint32_t m = mate_[base];
  FABRICSIM_ASSERT(m != kNone, "max_weight_matching: an unlabelled blossom with a free base");
  label_s(top_[m], Arc{base, m});
}

/// Walks up the trees of S-vertices v and w in turn; returns the first
/// S-blossom both reach (the base of the cycle edge vw closes), or kNone when
/// they lie in different trees.
uint32_t Matcher::find_common_blossom(uint32_t v, uint32_t w) {
  if (++stamp_ == 0) {
    std::fill(mark_.begin(), mark_.end(), 0);
    stamp_ = 1;
  }
  uint32_t x = v, y = w;
  while (x != kNone || y != kNone) {
    if (x != kNone) {
      const uint32_t b = top_[x];
      if (mark_[b] == stamp_) return b;
      mark_[b] = stamp_;
      const Arc up = label_arc_[b];  // from the T-blossom above, or none at the root
      x = up.empty() ? kNone : label_arc_[top_[up.from]].from;
    }
    std::swap(x, y);
  }
  return kNone;
}

/// Shrinks the cycle closed by tight edge vw, whose paths up the tree meet
/// at S-blossom bb, into a new S-blossom based at bb's base.
void Matcher::make_blossom(uint32_t bb, uint32_t v, uint32_t w) {
  FABRICSIM_ASSERT(!free_ids_.empty(), "max_weight_matching: out of blossom ids");
  const uint32_t b = free_ids_.back();
  free_ids_.pop_back();
  auto path_up = [this, bb](uint32_t x) {  // the blossoms from top(x) up to bb, bb excluded: S, T, S, ..., T
    std::vector<uint32_t> path;
    for (uint32_t s = top_[x]; s != bb;) {
      const uint32_t t = top_[label_arc_[s].from];
      path.push_back(s);
      path.push_back(t);
      s = top_[label_arc_[t].from];
    }
    return path;
  };
  const std::vector<uint32_t> from_v = path_up(v);
  const std::vector<uint32_t> from_w = path_up(w);
  std::vector<uint32_t>& kids = kids_[b];
  std::vector<Arc>& links = links_[b];
  kids.assign(1, bb);
  links.clear();
  // Down from bb to top(v): every label arc points down the tree, from the
  // previous piece into the next.
  for (size_t i = from_v.size(); i-- > 0;) {
    links.push_back(label_arc_[from_v[i]]);
    kids.push_back(from_v[i]);
  }
  links.push_back(Arc{v, w});
  // Up from top(w) to bb: against the label arcs.
  for (uint32_t c : from_w) {
    kids.push_back(c);
    links.push_back(label_arc_[c].reversed());
  }
  FABRICSIM_ASSERT(kids.size() % 2 == 1 && kids.size() >= 3, "max_weight_matching: a blossom of even length");

  parent_[b] = kNone;
  base_[b] = base_[bb];
  dual_[b] = 0;
  bool nested = false;
  for (uint32_t c : kids) {
    parent_[c] = b;
    nested = nested || is_blossom(c);
  }
  for_each_leaf(b, [this, b](uint32_t x) { top_[x] = b; });
  // The T-pieces' vertices become S-vertices: scan them.
  for (uint32_t c : kids)
    if (label_[c] == Label::kT) for_each_leaf(c, [this](uint32_t x) { queue_.push_back(x); });
  merge_lists(b);
  label_[b] = Label::kS;
  label_arc_[b] = label_arc_[bb];
  if (stats_ != nullptr) {
    ++stats_->blossoms_formed;
    if (nested) ++stats_->nested_blossoms_formed;
    stats_->max_nesting = std::max(stats_->max_nesting, nesting(b));
  }
}

/// New S-blossom b's arcs to other S-blossoms, from its S-pieces' lists.
/// The invariant, when the queue is empty: for any two top-level S-blossoms B
/// and C joined by an edge, B's list or C's holds an arc between them of
/// slack no more than that edge's.  Scanning sets it up: whichever end of an
/// edge is scanned second finds the other one S already and lists the arc
/// (the vertices of the T-pieces shrunk into b are queued, so theirs come
/// when they are scanned).  Merging keeps it, since an arc of a piece's list
/// that leaves b joins b to the same C; keeping the least arc per C keeps the
/// list short (slacks between S-blossoms all fall together, so their order
/// holds).  Other blossoms' best arcs into the pieces now lead into b, still
/// between distinct S-blossoms.
void Matcher::merge_lists(uint32_t b) {
  std::vector<uint32_t> targets;
  for (uint32_t c : kids_[b]) {
    if (label_[c] != Label::kS) continue;
    for (Arc a : ss_arcs_[c]) {
      const uint32_t target = top_[a.to];
      if (target == b) continue;
      Arc& best = per_target_[target];
      if (best.empty()) targets.push_back(target);
      if (best.empty() || slack(a) < slack(best)) best = a;
    }
    ss_arcs_[c].clear();
    ss_arcs_[c].shrink_to_fit();
  }
  std::vector<Arc>& list = ss_arcs_[b];
  list.clear();
  best_arc_[b] = Arc{};
  for (uint32_t t : targets) {
    const Arc a = per_target_[t];
    per_target_[t] = Arc{};
    list.push_back(a);
    if (best_arc_[b].empty() || slack(a) < slack(best_arc_[b])) best_arc_[b] = a;
  }
}

/// Dissolves blossom b into its pieces.  At the end of a stage the pieces
/// with dual 0 go too (labels do not matter then); in a stage b is a T-blossom
/// whose dual reached 0, and its pieces take over its place in the tree: those
/// on the even path from the piece the tree enters by to the base piece
/// alternate T, S, ..., T, the others are unlabelled (an edge from an
/// S-vertex that is tight to them is delta2 = 0 at the next step).
void Matcher::expand(uint32_t b, bool end_of_stage) {
  const std::vector<uint32_t> kids = std::move(kids_[b]);
  const std::vector<Arc> links = std::move(links_[b]);
  kids_[b].clear();
  links_[b].clear();
  for (uint32_t c : kids) {
    parent_[c] = kNone;
    if (!is_blossom(c)) {
      top_[c] = c;
    } else if (end_of_stage && dual_[c] == 0) {
      expand(c, true);
    } else {
      for_each_leaf(c, [this, c](uint32_t x) { top_[x] = c; });
    }
  }
  if (stats_ != nullptr) ++(end_of_stage ? stats_->stage_end_expansions : stats_->inner_expansions);

  if (!end_of_stage) {
    FABRICSIM_ASSERT(label_[b] == Label::kT && dual_[b] == 0, "max_weight_matching: expanding a live blossom");
    for (uint32_t c : kids) {
      label_[c] = Label::kUnlabelled;
      label_arc_[c] = Arc{};
    }
    const Arc in = label_arc_[b];  // (S-vertex outside, vertex inside)
    const size_t k = kids.size();
    uint32_t entry = in.to;
    while (parent_[entry] != kNone) entry = parent_[entry];
    const size_t j = static_cast<size_t>(std::find(kids.begin(), kids.end(), entry) - kids.begin());
    FABRICSIM_ASSERT(j < k, "max_weight_matching: the tree enters a T-blossom outside it");
    // Links with odd index are matched.  From an even j the even path runs
    // back to 0 (its first link, j - 1, is matched), from an odd j forward.
    const bool forward = j % 2 == 1;
    auto step = [k, forward](size_t i) { return forward ? (i + 1) % k : (i + k - 1) % k; };
    // The arc from piece i into the next piece along the path.
    auto along = [&links, forward, step](size_t i) { return forward ? links[i] : links[step(i)].reversed(); };
    label_[kids[j]] = Label::kT;
    label_arc_[kids[j]] = in;
    for (size_t pos = j; pos != 0;) {
      const size_t s = step(pos);
      const size_t t = step(s);
      label_s(kids[s], along(pos));  // the matched link: (T-piece's base, S-piece's base)
      if (stats_ != nullptr) ++stats_->pieces_relabelled_s;
      label_[kids[t]] = Label::kT;  // its base's mate is in the next S-piece, or is the tree's below b
      label_arc_[kids[t]] = along(s);
      pos = t;
    }
  }
  label_[b] = Label::kUnlabelled;
  label_arc_[b] = Arc{};
  best_arc_[b] = Arc{};
  ss_arcs_[b].clear();
  base_[b] = kNone;
  dual_[b] = 0;
  free_ids_.push_back(b);
}

/// Augments along the path: v's tree root ... v - w ... w's tree root.
void Matcher::augment(uint32_t v, uint32_t w) {
  if (stats_ != nullptr) ++stats_->augmentations;
  for (Arc side : {Arc{v, w}, Arc{w, v}}) {
    uint32_t s = side.from, other = side.to;  // s gets matched to other
    for (;;) {
      const uint32_t bs = top_[s];
      if (is_blossom(bs)) rotate(bs, s);
      mate_[s] = other;
      const Arc up = label_arc_[bs];  // (its base's old mate, old base)
      if (up.empty()) break;          // the root: its base was free
      const uint32_t bt = top_[up.from];
      const Arc in = label_arc_[bt];  // (S-vertex above, vertex of bt)
      if (is_blossom(bt)) rotate(bt, in.to);
      mate_[in.to] = in.from;
      s = in.from;
      other = in.to;
    }
  }
}

/// Makes vertex v the base of blossom b: flips the even alternating path
/// around the cycle from v's piece to the base piece (recursively inside the
/// pieces), then turns the cycle so that v's piece comes first.  v's own
/// mate is the caller's to set.
void Matcher::rotate(uint32_t b, uint32_t v) {
  const uint32_t piece = piece_of(b, v);
  if (is_blossom(piece)) rotate(piece, v);
  std::vector<uint32_t>& kids = kids_[b];
  const size_t k = kids.size();
  const size_t i = static_cast<size_t>(std::find(kids.begin(), kids.end(), piece) - kids.begin());
  if (i != 0) {
    // The links with odd index are matched.  From an odd i forward: links
    // i + 1, i + 3, ..., k - 1 become matched; from an even i back: i - 2, ..., 0.
    if (i % 2 == 1) {
      for (size_t l = i + 1; l < k; l += 2) match_link(b, l);
    } else {
      for (size_t l = i - 2;; l -= 2) {
        match_link(b, l);
        if (l == 0) break;
      }
    }
    std::rotate(kids.begin(), kids.begin() + static_cast<std::ptrdiff_t>(i), kids.end());
    std::rotate(links_[b].begin(), links_[b].begin() + static_cast<std::ptrdiff_t>(i), links_[b].end());
  }
  base_[b] = v;
}

/// Matches link l of blossom b, making its ends the bases of their pieces.
void Matcher::match_link(uint32_t b, size_t l) {
  const Arc a = links_[b][l];
  const uint32_t from_piece = kids_[b][l];
  const uint32_t to_piece = kids_[b][(l + 1) % kids_[b].size()];
  if (is_blossom(from_piece)) rotate(from_piece, a.from);
  if (is_blossom(to_piece)) rotate(to_piece, a.to);
  mate_[a.from] = a.to;
  mate_[a.to] = a.from;
}

uint32_t Matcher::nesting(uint32_t b) const {
  if (!is_blossom(b)) return 0;
  uint32_t d = 0;
  for (uint32_t c : kids_[b]) d = std::max(d, nesting(c));
  return d + 1;
}

/// The optimality certificate, checked from the final state alone (see the
/// file comment): a valid matching over positive edges, duals >= 0, every
/// edge's slack >= 0 and every matched one's 0, free vertices' duals 0, and
/// every blossom with a positive dual full.  Together they prove that no
/// matching weighs more.  O(n^2 x nesting depth).
void Matcher::check_certificate() const {
  // Per vertex, its blossoms from the top level down, and the sums of their
  // duals from the top: the blossoms holding both i and j are the common
  // prefix of the two chains (blossoms are nested or disjoint).
  std::vector<std::vector<uint32_t>> chain(n_);
  std::vector<std::vector<int64_t>> z_sum(n_);
  for (uint32_t v = 0; v < n_; ++v) {
    for (uint32_t b = parent_[v]; b != kNone; b = parent_[b]) chain[v].push_back(b);
    std::reverse(chain[v].begin(), chain[v].end());
    int64_t z = 0;
    for (uint32_t b : chain[v]) {
      FABRICSIM_ASSERT(dual_[b] >= 0, "max_weight_matching: a negative blossom dual");
      z += dual_[b];
      z_sum[v].push_back(z);
    }
  }
  auto shared_z = [&](uint32_t i, uint32_t j) {
    size_t c = 0;
    while (c < chain[i].size() && c < chain[j].size() && chain[i][c] == chain[j][c]) ++c;
    return c == 0 ? int64_t{0} : z_sum[i][c - 1];
  };
  std::vector<uint32_t> leaves(2 * size_t{n_}, 0), matched_inside(2 * size_t{n_}, 0);
  for (uint32_t v = 0; v < n_; ++v) {
    FABRICSIM_ASSERT(dual_[v] >= 0, "max_weight_matching: a negative vertex dual");
    for (uint32_t b : chain[v]) ++leaves[b];
    const uint32_t m = mate_[v];
    if (m == kNone) {
      FABRICSIM_ASSERT(dual_[v] == 0, "max_weight_matching: a free vertex with a positive dual");
      continue;
    }
    FABRICSIM_ASSERT(m < n_ && m != v && mate_[m] == v, "max_weight_matching: mates do not pair up");
    FABRICSIM_ASSERT(weight(v, m) > 0, "max_weight_matching: matched along no positive edge");
    FABRICSIM_ASSERT(slack(v, m) + shared_z(v, m) == 0, "max_weight_matching: a matched edge is not tight");
    for (size_t c = 0; c < chain[v].size() && c < chain[m].size() && chain[v][c] == chain[m][c]; ++c)
      ++matched_inside[chain[v][c]];
  }
  for (uint32_t b = n_; b < 2 * n_; ++b)
    if (base_[b] != kNone && dual_[b] > 0)
      FABRICSIM_ASSERT(matched_inside[b] + 1 == leaves[b], "max_weight_matching: a blossom with a dual is not full");
  for (uint32_t v = 0; v < n_; ++v)
    for (size_t i = first_[v]; i < first_[v + 1]; ++i) {
      const uint32_t w = neighbours_[i];
      if (w > v) FABRICSIM_ASSERT(slack(v, w) + shared_z(v, w) >= 0, "max_weight_matching: an edge's dual is violated");
    }
}

}  // namespace

std::vector<std::uint32_t> max_weight_matching(std::uint32_t n, const std::vector<WeightedEdge>& edges,
                                               MatchingStats* stats) {
  if (n > (kUnmatched - 1) / 2) throw std::invalid_argument("max_weight_matching: too many vertices");
  for (const WeightedEdge& e : edges) {
    if (e.u >= n || e.v >= n)
      throw std::invalid_argument("max_weight_matching: edge " + std::to_string(e.u) + "-" + std::to_string(e.v) +
                                  " has an endpoint >= n = " + std::to_string(n));
    if (e.weight >= kMaxMatchingWeight || e.weight <= -kMaxMatchingWeight)
      throw std::invalid_argument("max_weight_matching: |weight| must be below 2^52, got " + std::to_string(e.weight));
  }
  if (stats != nullptr) *stats = MatchingStats{};
  Matcher m(n, edges, stats);
  return m.run();
}

std::vector<std::uint32_t> max_weight_matching(std::uint32_t n, const std::vector<WeightedEdge>& edges) {
  return max_weight_matching(n, edges, nullptr);
}

std::int64_t matching_weight(const std::vector<std::uint32_t>& mate, const std::vector<WeightedEdge>& edges) {
  const size_t n = mate.size();
  for (std::uint32_t m : mate)
    if (m != kUnmatched && m >= n) throw std::invalid_argument("matching_weight: a mate is not a vertex");
  // Per matched pair, keyed by its lower end: the heaviest edge between them.
  std::vector<std::int64_t> best(n, 0);
  std::vector<bool> seen(n, false);
  for (const WeightedEdge& e : edges) {
    if (e.u >= n || e.v >= n) throw std::invalid_argument("matching_weight: an edge's endpoint is not in mate");
    if (e.u == e.v || mate[e.u] != e.v) continue;
    const size_t low = std::min(e.u, e.v);
    if (!seen[low] || e.weight > best[low]) best[low] = e.weight;
    seen[low] = true;
  }
  std::int64_t total = 0;
  for (size_t v = 0; v < n; ++v)
    if (seen[v]) total += best[v];
  return total;
}

}  // namespace fabricsim::ctrl
