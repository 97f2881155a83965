#include "fabricsim/net/state_routes.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

namespace {

// Duato-style rules: some move is adaptive (not an escape move).
bool has_adaptive_moves(const RouteRules& rules) {
  for (std::uint8_t s = 0; s < rules.state_count(); ++s)
    if (!rules.escape(s)) return true;
  return false;
}

}  // namespace

// ------------------------------------------------------------------ tables

StateRoutes::StateRoutes(const Topology& topo, std::unique_ptr<RouteRules> rules, std::size_t max_bytes)
    : topo_(topo), rules_(std::move(rules)) {
  targets_.resize(topo.endpoint_count());
  for (EndpointId e = 0; e < topo.endpoint_count(); ++e) targets_[e] = {topo.endpoint_node(e)};
  endpoint_targets_ = true;
  build(max_bytes);
}

StateRoutes::StateRoutes(const Topology& topo, std::unique_ptr<RouteRules> rules,
                         std::vector<std::vector<NodeId>> targets, std::size_t max_bytes)
    : topo_(topo), rules_(std::move(rules)), targets_(std::move(targets)) {
  endpoint_targets_ = false;
  build(max_bytes);
}

StateRoutes::StateRoutes(const Topology& topo, std::unique_ptr<RouteRules> rules,
                         std::unique_ptr<RouteDistance> distance, std::vector<std::vector<NodeId>> targets)
    : topo_(topo), rules_(std::move(rules)), targets_(std::move(targets)), distance_(std::move(distance)) {
  endpoint_targets_ = targets_.empty();
  if (endpoint_targets_) {
    targets_.resize(topo.endpoint_count());
    for (EndpointId e = 0; e < topo.endpoint_count(); ++e) targets_[e] = {topo.endpoint_node(e)};
  }
  nodes_ = topo_.node_count();
  states_ = rules_->state_count();
  duato_ = has_adaptive_moves(*rules_);
  build_adjacency();
}

void StateRoutes::build_adjacency() {
  out_base_.assign(topo_.node_count() + 1, 0);
  out_.clear();
  for (NodeId n = 0; n < topo_.node_count(); ++n) {
    const Node& node = topo_.node(n);
    for (PortIndex p = 0; p < node.out.size(); ++p) {
      const Link& l = topo_.link(node.out[p]);
      out_.push_back(Out{node.out[p], l.dst, l.carries_data, topo_.node(l.dst).forwards});
    }
    out_base_[n + 1] = out_.size();
  }
}

std::uint16_t StateRoutes::dist(NodeId at, std::uint8_t s, std::uint32_t target, bool escape) const {
  if (distance_) return escape ? distance_->escape_hops(at, s, target) : distance_->hops(at, s, target);
  return (escape && !esc_dist_.empty() ? esc_dist_ : dist_)[index(target, at, s)];
}

bool StateRoutes::is_target_node(NodeId n, std::uint32_t target) const {
  if (endpoint_targets_) return topo_.endpoint_node(target) == n;
  return is_target(n, target);
}

bool StateRoutes::is_target(NodeId n, std::uint32_t target) const {
  const auto& t = targets_[target];
  return std::find(t.begin(), t.end(), n) != t.end();
}

namespace {

// Reverse move graph: for each (v, t), the (u, s) that reach it in one move,
// with whether that move is an escape move.
struct ReverseMoves {
  std::vector<std::uint32_t> offset;  // [(v * S + t)] -> first entry
  std::vector<std::uint32_t> from;    // u * S + s
  std::vector<std::uint8_t> escape;

  void build(const Topology& topo, const RouteRules& rules, std::uint32_t target) {
    const std::size_t S = rules.state_count();
    const std::size_t keys = topo.node_count() * S;
    offset.assign(keys + 1, 0);
    const unsigned alts = rules.alternatives();
    auto each = [&](auto&& f) {
      for (LinkId l = 0; l < topo.link_count(); ++l) {
        const Link& k = topo.link(l);
        if (!k.carries_data) continue;  // the credit-only half of a one-way link
        for (std::uint8_t s = 0; s < S; ++s)
          for (unsigned a = 0; a < alts; ++a) {
            const std::uint8_t t = rules.step(k.src, s, l, target, a);
            if (t != RouteRules::kIllegal) f(k.src, s, k.dst, t);
          }
      }
    };
    each([&](NodeId, std::uint8_t, NodeId v, std::uint8_t t) { ++offset[v * S + t + 1]; });
    for (std::size_t i = 0; i < keys; ++i) offset[i + 1] += offset[i];
    from.resize(offset[keys]);
    escape.resize(offset[keys]);
    std::vector<std::uint32_t> fill(offset.begin(), offset.end() - 1);
    each([&](NodeId u, std::uint8_t s, NodeId v, std::uint8_t t) {
      const std::uint32_t i = fill[v * S + t]++;
      from[i] = static_cast<std::uint32_t>(u * S + s);
      escape[i] = rules.escape(t) ? 1 : 0;
    });
  }
};

}  // namespace

void StateRoutes::build(std::size_t max_bytes) {
  build_adjacency();
  nodes_ = topo_.node_count();
  states_ = rules_->state_count();
  FABRICSIM_ASSERT(states_ > 0 && states_ < RouteRules::kIllegal, "state count");
  duato_ = has_adaptive_moves(*rules_);
  const bool duato = duato_;
  const std::size_t cells = targets_.size() * nodes_ * states_;
  const std::size_t bytes = cells * sizeof(std::uint16_t) * (duato ? 2 : 1);
  if (bytes > max_bytes)
    throw util::ConfigError("routing.algorithm: the route tables of " + rules_->describe() + " would take " +
                            std::to_string(bytes >> 20) + " MiB on this topology (limit " +
                            std::to_string(max_bytes >> 20) + " MiB)");
  if (endpoint_targets_) {
    target_of_node_.assign(nodes_, UINT32_MAX);
    for (std::uint32_t t = 0; t < targets_.size(); ++t) target_of_node_[targets_[t][0]] = t;
  }
  dist_.assign(cells, kUnreachable);
  if (duato) esc_dist_.assign(cells, kUnreachable);
  ReverseMoves rev;
  if (!rules_->depends_on_target()) rev.build(topo_, *rules_, 0);
  std::vector<std::uint32_t> cur, nxt;
  for (std::uint32_t target = 0; target < targets_.size(); ++target) {
    if (rules_->depends_on_target()) rev.build(topo_, *rules_, target);
    for (int pass = 0; pass < (duato ? 2 : 1); ++pass) {
      const bool escape_only = pass == 1;
      std::uint16_t* dist = (escape_only ? esc_dist_.data() : dist_.data()) + index(target, 0, 0);
      cur.clear();
      for (NodeId n : targets_[target])
        for (std::size_t s = 0; s < states_; ++s) {
          dist[n * states_ + s] = 0;
          cur.push_back(static_cast<std::uint32_t>(n * states_ + s));
        }
      for (std::uint16_t depth = 1; !cur.empty(); ++depth) {
        nxt.clear();
        for (std::uint32_t key : cur) {
          const NodeId v = static_cast<NodeId>(key / states_);
          // A packet at v must be at its target or able to go on.
          if (dist[key] != 0 && !topo_.node(v).forwards) continue;
          for (std::uint32_t i = rev.offset[key]; i < rev.offset[key + 1]; ++i) {
            if (escape_only && !rev.escape[i]) continue;
            const std::uint32_t pred = rev.from[i];
            const NodeId u = static_cast<NodeId>(pred / states_);
            if (!topo_.node(u).forwards && pred % states_ != rules_->initial_state()) continue;
            if (dist[pred] == kUnreachable) {
              dist[pred] = depth;
              nxt.push_back(pred);
            }
          }
        }
        cur.swap(nxt);
      }
    }
  }
  if (endpoint_targets_ && !topo_.shards) {  // (shards: no message crosses from one to another)
    const std::uint8_t init = rules_->initial_state();
    for (EndpointId d = 0; d < topo_.endpoint_count(); ++d)
      for (EndpointId s = 0; s < topo_.endpoint_count(); ++s) {
        if (s == d) continue;
        const std::size_t k = index(d, topo_.endpoint_node(s), init);
        if (dist_[k] == kUnreachable || (duato && esc_dist_[k] == kUnreachable))
          throw util::ConfigError("routing.algorithm: " + rules_->describe() + " finds no route from " +
                                  topo_.node(topo_.endpoint_node(s)).name + " to " +
                                  topo_.node(topo_.endpoint_node(d)).name);
      }
  }
}

void StateRoutes::options(NodeId at, std::uint8_t s, std::uint32_t target, std::vector<Option>& out,
                          bool escape_only) const {
  const bool escape = escape_only && duato_;
  const unsigned alts = rules_->alternatives();
  const Out* outs = out_.data() + out_base_[at];
  // The distances are exact wherever a packet can be (the tables
  // everywhere), so the moves one hop closer are the legal moves of least
  // distance (Bellman): the distance of `at` itself need not be computed
  // (with computed distances, one call of the hot path's most expensive
  // function fewer per hop).
  if (is_target_node(at, target)) return;
  // (A table also knows the states no legal route leaves, e.g. an endpoint
  // past its first move: nothing is offered there.)
  if (!distance_ && dist(at, s, target, escape) == kUnreachable) return;
  thread_local std::vector<PortIndex> ports;       // (scratch: options() may run on several threads)
  thread_local std::vector<std::uint16_t> theres;  // distance after each move appended
  ports.clear();
  theres.clear();
  const std::size_t first = out.size();
  std::uint16_t least = kUnreachable;
  const auto consider = [&](PortIndex p) {
    const Out& o = outs[p];
    // (A packet passes only through forwarding nodes: tested first, it
    // also spares the rules and the distance of every endpoint behind a
    // switch.)
    if (!o.data || (!o.to_forwards && !is_target_node(o.to, target))) return;
    for (unsigned a = 0; a < alts; ++a) {
      const std::uint8_t t = rules_->step(at, s, o.link, target, a);
      if (t == RouteRules::kIllegal || (escape_only && !rules_->escape(t))) continue;
      const std::uint16_t there = dist(o.to, t, target, escape);
      if (there == kUnreachable || there > least) continue;
      least = there;
      out.push_back(Option{p, o.link, t, rules_->vc(t)});
      theres.push_back(there);
    }
  };
  if (distance_ && distance_->candidate_ports(at, target, ports)) {
    for (PortIndex p : ports) consider(p);
  } else {
    const auto n = static_cast<PortIndex>(out_base_[at + 1] - out_base_[at]);
    for (PortIndex p = 0; p < n; ++p) consider(p);
  }
  // Keep the least, in port order.
  std::size_t kept = first;
  for (std::size_t i = 0; i < theres.size(); ++i)
    if (theres[i] == least) out[kept++] = out[first + i];
  out.resize(kept);
}

// ------------------------------------------------------------------ check

DependencyReport check_state_routes(const StateRoutes& routes, bool escape_only, std::size_t* unreachable_pairs) {
  const Topology& topo = routes.topology();
  const RouteRules& rules = routes.rules();
  const std::size_t vcs = rules.vcs();
  const std::size_t S = rules.state_count();
  auto channel = [&](LinkId l, std::uint8_t vc) { return static_cast<std::uint64_t>(l) * vcs + vc; };
  std::unordered_set<std::uint64_t> deps;  // held << 32 | requested
  std::vector<std::uint8_t> used(topo.link_count() * vcs, 0);
  std::vector<std::uint8_t> seen(topo.link_count() * S);
  std::vector<std::uint32_t> work;  // link * S + state
  std::vector<StateRoutes::Option> opts;
  std::size_t unreachable = 0;
  for (EndpointId dst = 0; dst < topo.endpoint_count(); ++dst) {
    std::fill(seen.begin(), seen.end(), 0);
    work.clear();
    for (EndpointId src = 0; src < topo.endpoint_count(); ++src) {
      if (src == dst) continue;
      opts.clear();
      routes.options(topo.endpoint_node(src), rules.initial_state(), dst, opts, escape_only);
      if (opts.empty()) ++unreachable;
      for (const auto& o : opts) {
        const std::uint32_t key = o.link * static_cast<std::uint32_t>(S) + o.state;
        if (!seen[key]) {
          seen[key] = 1;
          work.push_back(key);
        }
      }
    }
    while (!work.empty()) {
      const std::uint32_t key = work.back();
      work.pop_back();
      const LinkId l = key / static_cast<std::uint32_t>(S);
      const auto s = static_cast<std::uint8_t>(key % S);
      const std::uint64_t held = channel(l, rules.vc(s));
      used[held] = 1;
      const NodeId v = topo.link(l).dst;
      if (v == topo.endpoint_node(dst)) continue;
      opts.clear();
      routes.options(v, s, dst, opts, escape_only);
      for (const auto& o : opts) {
        deps.insert(held << 32 | channel(o.link, o.vc));
        const std::uint32_t k2 = o.link * static_cast<std::uint32_t>(S) + o.state;
        if (!seen[k2]) {
          seen[k2] = 1;
          work.push_back(k2);
        }
      }
    }
  }
  if (unreachable_pairs) *unreachable_pairs = unreachable;

  DependencyReport r;
  r.dependencies = deps.size();
  r.channels_used = static_cast<std::size_t>(std::count(used.begin(), used.end(), 1));
  // Kahn's algorithm: the graph is acyclic iff every channel gets removed.
  const std::size_t n = used.size();
  std::vector<std::uint32_t> indeg(n, 0), off(n + 1, 0), adj(deps.size());
  for (std::uint64_t d : deps) ++off[(d >> 32) + 1];
  for (std::size_t i = 0; i < n; ++i) off[i + 1] += off[i];
  std::vector<std::uint32_t> fill(off.begin(), off.end() - 1);
  for (std::uint64_t d : deps) {
    adj[fill[d >> 32]++] = static_cast<std::uint32_t>(d & 0xFFFFFFFFu);
    ++indeg[d & 0xFFFFFFFFu];
  }
  std::vector<std::uint32_t> queue;
  for (std::uint32_t c = 0; c < n; ++c)
    if (indeg[c] == 0) queue.push_back(c);
  std::size_t removed = 0;
  while (!queue.empty()) {
    const std::uint32_t c = queue.back();
    queue.pop_back();
    ++removed;
    for (std::uint32_t i = off[c]; i < off[c + 1]; ++i)
      if (--indeg[adj[i]] == 0) queue.push_back(adj[i]);
  }
  if (removed == n) return r;
  r.acyclic = false;
  // Evidence: every channel left over has a left-over predecessor; walk
  // backwards until a channel repeats, which closes a cycle.
  std::vector<std::uint32_t> pred(n, UINT32_MAX);
  for (std::uint64_t d : deps) {
    const auto a = static_cast<std::uint32_t>(d >> 32), b = static_cast<std::uint32_t>(d & 0xFFFFFFFFu);
    if (indeg[a] != 0 && indeg[b] != 0) pred[b] = a;
  }
  std::uint32_t c = 0;
  while (indeg[c] == 0) ++c;
  std::vector<std::uint32_t> pos(n, UINT32_MAX), path;
  while (pos[c] == UINT32_MAX) {
    pos[c] = static_cast<std::uint32_t>(path.size());
    path.push_back(c);
    c = pred[c];
  }
  for (std::size_t i = path.size(); i-- > pos[c];)  // reversed: in dependency order
    r.cycle.push_back(Channel{static_cast<LinkId>(path[i] / vcs), static_cast<std::uint8_t>(path[i] % vcs)});
  return r;
}

}  // namespace fabricsim::net
