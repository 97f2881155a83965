// Link state and the routes still live under it (link_state.hpp).
#include "fabricsim/net/link_state.hpp"

#include <algorithm>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/net/updown.hpp"

namespace fabricsim::net {

void LinkSchedule::sort() {
  std::stable_sort(changes.begin(), changes.end(), [](const LinkChange& a, const LinkChange& b) {
    return a.at != b.at ? a.at < b.at : a.link < b.link;
  });
}

std::vector<core::SimTime> LinkSchedule::times() const {
  std::vector<core::SimTime> t;
  for (const LinkChange& c : changes)
    if (t.empty() || t.back() != c.at) t.push_back(c.at);
  return t;
}

bool LinkState::set(LinkId l, bool up) {
  std::uint64_t& w = bits_[l >> 6];
  const std::uint64_t bit = std::uint64_t{1} << (l & 63);
  const bool was_up = !(w & bit);
  if (was_up == up) return false;
  if (up) {
    w &= ~bit;
    --down_;
  } else {
    w |= bit;
    ++down_;
  }
  ++version_;
  return true;
}

std::vector<LinkId> LinkState::apply_until(const LinkSchedule& s, std::size_t& next, core::SimTime t) {
  std::vector<LinkId> went_down;
  for (; next < s.changes.size() && s.changes[next].at <= t; ++next) {
    const LinkChange& c = s.changes[next];
    if (set(c.link, c.up) && !c.up) went_down.push_back(c.link);
  }
  return went_down;
}

LinkStateRun::LinkStateRun() = default;
LinkStateRun::~LinkStateRun() = default;

void LinkStateRun::start(const Topology& topo, const LinkSchedule& schedule) {
  active_ = !schedule.empty();
  schedule_ = schedule;
  schedule_.sort();
  next_ = 0;
  state_ = LinkState(topo.link_count());
  live_ = std::make_unique<LiveRoutes>(topo, state_);
  state_.apply_until(schedule_, next_, core::SimTime::zero());
}

std::vector<LinkId> LinkStateRun::advance(core::SimTime now) { return state_.apply_until(schedule_, next_, now); }

std::vector<LinkId> LinkStateRun::switch_links(std::span<const LinkId> off, std::span<const LinkId> on) {
  std::vector<LinkId> down;
  for (const LinkId l : off)
    if (state_.set(l, false)) down.push_back(l);
  for (const LinkId l : on) state_.set(l, true);
  return down;
}

std::vector<core::SimTime> LinkStateRun::later_times() const {
  std::vector<core::SimTime> t = schedule_.times();
  t.erase(std::remove(t.begin(), t.end(), core::SimTime::zero()), t.end());
  return t;
}

core::SimTime LinkStateRun::next_change() const {
  return next_ < schedule_.changes.size() ? schedule_.changes[next_].at : core::SimTime::max();
}

void LiveRoutes::check_version() {
  if (version_ != state_.version()) {
    memo_.clear();
    version_ = state_.version();
  }
}

bool LiveRoutes::path_ok(const LinkId* links, std::size_t n) const {
  for (std::size_t i = 0; i < n; ++i)
    if (!state_.up(links[i])) return false;
  return true;
}

bool LiveRoutes::table_ok(const RoutingTable& table, LinkId l, EndpointId dst) {
  if (!state_.up(l)) return false;
  const NodeId n = topo_.link(l).dst;
  if (n == topo_.endpoint_node(dst)) return true;
  check_version();
  return table_from(table, n, dst);
}

bool LiveRoutes::table_from(const RoutingTable& table, NodeId n, EndpointId dst) {
  const std::uint64_t k = key(0, n, 0, dst);
  if (const auto it = memo_.find(k); it != memo_.end()) return it->second;
  memo_[k] = false;
  bool ok = false;
  const Node& node = topo_.node(n);
  for (PortIndex p : table.candidates(n, dst)) {
    const LinkId l = node.out[p];
    if (!state_.up(l)) continue;
    const NodeId m = topo_.link(l).dst;
    if (m == topo_.endpoint_node(dst) || table_from(table, m, dst)) {
      ok = true;
      break;
    }
  }
  memo_[k] = ok;  // (the recursion may have rehashed: no iterator kept)
  return ok;
}

bool LiveRoutes::updown_ok(const UpDownRoutes& routes, LinkId l, bool down, EndpointId dst) {
  if (!state_.up(l)) return false;
  const NodeId n = topo_.link(l).dst;
  if (n == topo_.endpoint_node(dst)) return true;
  check_version();
  return updown_from(routes, n, down || routes.is_down(l), dst);
}

bool LiveRoutes::updown_from(const UpDownRoutes& routes, NodeId n, bool down, EndpointId dst) {
  const std::uint64_t k = key(1, n, down ? 1 : 0, dst);
  if (const auto it = memo_.find(k); it != memo_.end()) return it->second;
  memo_[k] = false;
  std::vector<PortIndex> ports;
  routes.candidates(n, down, dst, ports);
  bool ok = false;
  const Node& node = topo_.node(n);
  for (PortIndex p : ports) {
    const LinkId l = node.out[p];
    if (!state_.up(l)) continue;
    const NodeId m = topo_.link(l).dst;
    if (m == topo_.endpoint_node(dst) || updown_from(routes, m, down || routes.is_down(l), dst)) {
      ok = true;
      break;
    }
  }
  memo_[k] = ok;
  return ok;
}

bool LiveRoutes::rules_ok(const StateRoutes& routes, LinkId l, std::uint8_t next_state, std::uint32_t target,
                          bool groups) {
  if (!state_.up(l)) return false;
  const NodeId n = topo_.link(l).dst;
  if (routes.is_target(n, target)) return true;
  check_version();
  return rules_from(routes, n, next_state, target, groups);
}

bool LiveRoutes::rules_from(const StateRoutes& routes, NodeId n, std::uint8_t s, std::uint32_t target, bool groups) {
  const std::uint64_t k = key(groups ? 3 : 2, n, s, target);
  if (const auto it = memo_.find(k); it != memo_.end()) return it->second;
  memo_[k] = false;
  std::vector<StateRoutes::Option> opts;
  routes.options(n, s, target, opts);
  bool ok = false;
  for (const auto& o : opts) {
    if (!state_.up(o.link)) continue;
    const NodeId m = topo_.link(o.link).dst;
    if (routes.is_target(m, target) || rules_from(routes, m, o.state, target, groups)) {
      ok = true;
      break;
    }
  }
  memo_[k] = ok;
  return ok;
}

}  // namespace fabricsim::net
