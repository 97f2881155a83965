// Where a packet goes next (see impl.hpp).
#include "net/network/impl.hpp"

namespace fabricsim::net {

std::uint16_t NetworkImpl::draw_group(NodeId at, std::uint32_t gs, std::uint32_t gd) {
  // A random group other than the source's and the destination's (none
  // within one group or with no third group), from the node's stream.
  const auto groups = static_cast<std::uint32_t>(params_.valiant_routes->target_count());
  if (gs == gd || groups <= 2) return 0;
  std::uint32_t g = static_cast<std::uint32_t>(node_rng_[at].below(groups - 2));
  for (std::uint32_t skip : {std::min(gs, gd), std::max(gs, gd)})
    if (g >= skip) ++g;
  return static_cast<std::uint16_t>(g + 1);
}

LinkId NetworkImpl::choose_output(NodeId at, const Packet& pkt, const Message& msg) {
  std::span<const PortIndex> cands;
  if (updown_) {
    updown_cands_.clear();
    updown_->candidates(at, pkt.down, pkt.dst, updown_cands_);
    cands = updown_cands_;
  } else {
    cands = routes_->candidates(at, pkt.dst);
  }
  FABRICSIM_ASSERT(!cands.empty(), "no route");
  if (failures_ && link_state_->any_down()) [[unlikely]] {
    cands = live_candidates(at, pkt, cands);
    if (cands.empty()) return kNoLink;
  }
  const LinkId* outs = out_local_.data() + out_base_[at];  // local ids, by port
  std::size_t k = cands.size();
  std::size_t pick = 0;
  if (k > 1) {
    // The policy (route_policy.hpp): a pure function shared with the flow
    // models, or a mechanism of this model's own (a random draw, the least
    // occupied output).
    switch (policy_->mechanism) {
      case PickMechanism::None:
      case PickMechanism::LeastFlows: {  // (the flow model's; refused here by run.cpp)
        const PickContext c{topo_, ecmp_, dmodk_divisor_, at, msg.src, msg.dst, msg.flow_port};
        pick = policy_->table_pick(c, cands);
        break;
      }
      case PickMechanism::Random: pick = node_rng_[at].below(k); break;
      case PickMechanism::LeastOccupied: {
        // Least loaded: bytes queued for the output plus bytes sent but not
        // yet credited back by the next hop; ties go to the lowest port.
        // The loop runs over up to a switch's radix of ports for most
        // packets: invariants in locals, raw pointers (no reloads through
        // `this` after each store the compiler cannot see through).
        std::int64_t best = INT64_MAX;
        const OutPort* ports = port_.data();
        CreditState* credit = cs_.data();
        const SimTime now = sim_.now();
        const auto buffer = static_cast<std::int64_t>(params_.buffer_bytes);
        const std::size_t vcs = params_.vcs;
        const std::size_t vc = pkt.vc;
        if (vcs == 1) {
          // The same loop for one vc (the credit record is the link's), on
          // OutPort::queued_less_credits (the buffer size, common to every
          // candidate, left out): one load and one add per candidate in the
          // hottest loop of a fat tree.
          for (std::size_t i = 0; i < k; ++i) {
            const LinkId o = outs[cands[i]];
            if (credit[o].due <= now) absorb_credits(o);
            FABRICSIM_DEBUG_ASSERT(ports[o].queued_less_credits ==
                                       static_cast<std::int64_t>(ports[o].queued) - credit[o].credits,
                                   "queued_less_credits out of step");
            const std::int64_t load = ports[o].queued_less_credits + (now < ports[o].busy_until ? 1 : 0);
            if (load < best) {
              best = load;
              pick = i;
            }
          }
          break;
        }
        for (std::size_t i = 0; i < k; ++i) {
          const LinkId o = outs[cands[i]];
          const std::size_t ck = static_cast<std::size_t>(o) * vcs + vc;
          std::int64_t load = static_cast<std::int64_t>(ports[o].queued) + buffer + (now < ports[o].busy_until ? 1 : 0);
          load -= credit[ck].due > now ? credit[ck].credits : absorb_credits(ck);
          if (load < best) {
            best = load;
            pick = i;
          }
        }
        break;
      }
    }
  }
  return outs[cands[pick]];
}


std::size_t NetworkImpl::pick_option(NodeId at, const Message& msg, std::uint32_t bytes) {
  if (duato_ && bytes > 0) {
    // Adaptive moves only with room promised downstream (see reserved_).
    const auto room = [&](const StateRoutes::Option& o) {
      return rules_->rules().escape(o.state) || adaptive_room(o.link, o.vc, o.state) >= bytes;
    };
    // (With failures the live moves may all be adaptive: then one without
    // the promise rather than none.)
    if (!failures_ || std::any_of(opts_.begin(), opts_.end(), room)) {
      std::size_t kept = 0;
      for (const auto& o : opts_)
        if (room(o)) opts_[kept++] = o;
      opts_.resize(kept);
    }
  }
  const std::size_t k = opts_.size();
  FABRICSIM_ASSERT(k > 0, "route rules offer no move");
  if (k == 1) return 0;
  switch (policy_->mechanism) {
    case PickMechanism::None:
    case PickMechanism::LeastFlows: {  // (the flow model's; refused here by run.cpp)
      if (policy_->rules_pick == nullptr) return 0;  // the first move the rules offer (dor, minimal)
      const PickContext c{topo_, ecmp_, dmodk_divisor_, at, msg.src, msg.dst, msg.flow_port};
      return policy_->rules_pick(c, k);
    }
    case PickMechanism::Random: return node_rng_[at].below(k);
    case PickMechanism::LeastOccupied: {
      // Least occupied (queued plus uncredited bytes), then idle before
      // busy; ties to the first option (the lowest port).
      std::size_t pick = 0;
      std::int64_t best = INT64_MAX;
      const SimTime now = sim_.now();
      for (std::size_t i = 0; i < k; ++i) {
        const LinkId o = opts_[i].link;
        const std::int64_t load = 2 * occupancy(o, opts_[i].vc) + (now < port_[o].busy_until ? 1 : 0);
        if (load < best) {
          best = load;
          pick = i;
        }
      }
      return pick;
    }
  }
  return 0;
}

std::int64_t NetworkImpl::path_occupancy(const StateRoutes& r, NodeId at, std::uint8_t state, std::uint32_t target,
                                         std::uint8_t* end_state, NodeId* end_node) {
  std::int64_t sum = 0;
  std::vector<StateRoutes::Option> o;
  while (!r.is_target(at, target)) {
    o.clear();
    r.options(at, state, target, o);
    if (o.empty()) break;
    std::size_t pick = 0;
    std::int64_t best = INT64_MAX;
    for (std::size_t i = 0; i < o.size(); ++i) {
      const std::int64_t q = occupancy(local_[o[i].link], o[i].vc);
      if (q < best) {
        best = q;
        pick = i;
      }
    }
    sum += best;
    at = topo_.link(o[pick].link).dst;
    state = o[pick].state;
  }
  if (end_state) *end_state = state;
  if (end_node) *end_node = at;
  return sum;
}

std::size_t NetworkImpl::choose_move(NodeId at, Packet& pkt, const Message& msg) {
  const StateRoutes* r = rules_;
  std::uint32_t target = pkt.dst;
  if (pkt.aux == kUndecided && topo_.nodes()[at].kind == NodeKind::Switch) {
    // UGAL at the source router: minimal, or Valiant through a random
    // other group, whichever promises less queueing (local: the first
    // output's occupancy times the hops; global: the occupancy summed over
    // the whole path).
    const std::uint32_t gs = params_.group_of[at];
    const std::uint32_t gd = params_.group_of[topo_.endpoint_node(pkt.dst)];
    pkt.aux = 0;
    if (const std::uint16_t drawn = draw_group(at, gs, gd); drawn != 0) {
      const std::uint32_t g = drawn - 1u;
      std::int64_t q_min, q_val;
      if (policy_->leg == ValiantLeg::UgalGlobal) {
        q_min = path_occupancy(*rules_, at, pkt.state, pkt.dst, nullptr, nullptr);
        std::uint8_t s1;
        NodeId n1;
        q_val = path_occupancy(*params_.valiant_routes, at, pkt.state, g, &s1, &n1);
        q_val += path_occupancy(*rules_, n1, s1, pkt.dst, nullptr, nullptr);
      } else {
        const auto best_first = [&](const StateRoutes& routes, std::uint32_t t) {
          opts_.clear();
          routes.options(at, pkt.state, t, opts_);
          localize(opts_);
          std::int64_t q = INT64_MAX;
          for (const auto& o : opts_) q = std::min(q, occupancy(o.link, o.vc));
          return q;
        };
        // Hops of the Valiant route: to the group, then the best of its
        // routers on to the destination.
        std::uint32_t via = UINT32_MAX;
        for (NodeId n : params_.valiant_routes->target_nodes(g))
          via = std::min<std::uint32_t>(via, rules_->hops(n, static_cast<std::uint8_t>(pkt.state + 1), pkt.dst));
        const std::int64_t h_min = rules_->hops(at, pkt.state, pkt.dst);
        const std::int64_t h_val = params_.valiant_routes->hops(at, pkt.state, g) + static_cast<std::int64_t>(via);
        q_min = best_first(*rules_, pkt.dst) * h_min;
        q_val = best_first(*params_.valiant_routes, g) * h_val;
      }
      if (q_val < q_min) pkt.aux = static_cast<std::uint16_t>(g + 1);
    }
  }
  if (pkt.aux != 0 && pkt.aux != kUndecided) {
    const std::uint32_t g = pkt.aux - 1u;
    if (params_.group_of[at] == g) {
      pkt.aux = 0;  // reached the intermediate group: on to the destination
    } else {
      r = params_.valiant_routes;
      target = g;
    }
  }
  opts_.clear();
  r->options(at, pkt.state, target, opts_);
  if (failures_ && link_state_->any_down()) [[unlikely]] {
    live_options(*r, target);
    if (opts_.empty() && r != rules_) {
      // The Valiant leg is cut off: on to the destination directly.
      pkt.aux = 0;
      r = rules_;
      target = pkt.dst;
      r->options(at, pkt.state, target, opts_);
      live_options(*r, target);
    }
    if (opts_.empty()) return kNoMove;
  }
  localize(opts_);
  return pick_option(at, msg, pkt.bytes);
}

}  // namespace fabricsim::net
