// Link state: which directed links are up, changed at run time by a
// schedule (`[[failures]]`; later optical circuits switched on and off),
// and what routing may still use once some are down.
//
// One mask, a bit per directed link of the topology, owned by the network
// model and consulted at decision time by every model: the packet model's
// candidates, adaptive options, rule moves and pinned routes, the flow and
// analytic models' paths.  A node (a switch, an endpoint) going down is all
// its links going down: the mask knows links only, so a circuit switch
// rewiring a port and a cable pulled are the same change.
//
// A change depends only on simulated time, so every rank applies the
// schedule to its own links with no protocol (docs/architecture.md,
// "Link state and failures").  Routing avoids a dead element where the
// route source offers an alternative, including dead ends further on
// (LiveRoutes: a candidate whose every continuation meets a dead link is
// not taken), and strands what cannot go on (docs/model.md, "Failures").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabricsim/core/time.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

class StateRoutes;
class UpDownRoutes;

/// One change of the mask: link `link` goes down (up = false) or comes back at `at`.
struct LinkChange {
  core::SimTime at;
  LinkId link = kNoLink;
  bool up = false;
};

/// The changes of a run, in time order, ties by link, then in the order
/// given (a link up at t by one row and down at t by the next stays down).
struct LinkSchedule {
  std::vector<LinkChange> changes;
  bool empty() const { return changes.empty(); }
  /// Puts the changes in canonical order (time, link).
  void sort();
  /// The distinct change times, ascending.
  std::vector<core::SimTime> times() const;
};

class LinkState {
 public:
  LinkState() = default;
  /// All `links` up.
  explicit LinkState(std::size_t links) : bits_((links + 63) / 64, 0) {}
  bool up(LinkId l) const { return down_ == 0 || !(bits_[l >> 6] >> (l & 63) & 1u); }
  bool any_down() const { return down_ != 0; }
  std::size_t down_count() const { return down_; }
  /// Bumped on every change that altered the mask (caches key on it).
  std::uint64_t version() const { return version_; }
  /// Sets link l up or down; returns whether it changed.
  bool set(LinkId l, bool up);
  /// Applies every change of `s` at time <= t not yet applied (from `next`
  /// on, which it advances); returns the links that went down.
  std::vector<LinkId> apply_until(const LinkSchedule& s, std::size_t& next, core::SimTime t);

 private:
  std::vector<std::uint64_t> bits_;
  std::size_t down_ = 0;
  std::uint64_t version_ = 0;
};

class LiveRoutes;

/// What a network model holds of the link state over a run: the mask, the
/// schedule and how far it has been applied, and the live-route filter
/// over the mask.  start() applies the changes at time 0; the model then
/// schedules one event per later_times() entry and calls advance() in it.
class LinkStateRun {
 public:
  LinkStateRun();
  ~LinkStateRun();
  /// Whether a non-empty schedule was started.
  bool active() const { return active_; }
  void start(const Topology& topo, const LinkSchedule& schedule);
  /// Applies the changes due by `now`; returns the links that went down.
  std::vector<LinkId> advance(core::SimTime now);
  /// The change times after 0, ascending (one event each).
  std::vector<core::SimTime> later_times() const;
  /// The next change not yet applied (max() if none).
  core::SimTime next_change() const;
  const LinkState& state() const { return state_; }
  LiveRoutes& live() { return *live_; }
  /// Changes decided during the run (Network::switch_links): `off` down,
  /// then `on` up; returns the links that went down.
  std::vector<LinkId> switch_links(std::span<const LinkId> off, std::span<const LinkId> on);

 private:
  bool active_ = false;
  LinkSchedule schedule_;
  std::size_t next_ = 0;
  LinkState state_;
  std::unique_ptr<LiveRoutes> live_;
};

/// Whether a route source can still bring a packet that takes link `l` to
/// its target over live links: the link is up and, unless its far end is
/// the target, some move from there is live and leads on (recursively; the
/// sources give minimal or otherwise acyclic moves, so the search ends).
/// Answers are cached per (node, state, target) until the mask changes.
/// The same object serves the packet model's per-hop choice and the flow
/// models' path walks, so all models avoid the same elements.
class LiveRoutes {
 public:
  LiveRoutes(const Topology& topo, const LinkState& state) : topo_(topo), state_(state) {}
  /// The trees' table (and the paths walked over it), towards endpoint `dst`.
  bool table_ok(const RoutingTable& table, LinkId l, EndpointId dst);
  /// Up*/down*: `down` is whether the packet has taken a down link before `l`.
  bool updown_ok(const UpDownRoutes& routes, LinkId l, bool down, EndpointId dst);
  /// Route rules: the move over `l` into state `next_state` towards `target`
  /// (an endpoint, or with `groups` a Valiant target group).
  bool rules_ok(const StateRoutes& routes, LinkId l, std::uint8_t next_state, std::uint32_t target, bool groups);
  bool any_down() const { return state_.any_down(); }
  bool up(LinkId l) const { return state_.up(l); }
  std::uint64_t version() const { return state_.version(); }
  /// A whole route (pinned): every link up.
  bool path_ok(const LinkId* links, std::size_t n) const;

 private:
  bool table_from(const RoutingTable& table, NodeId n, EndpointId dst);
  bool updown_from(const UpDownRoutes& routes, NodeId n, bool down, EndpointId dst);
  bool rules_from(const StateRoutes& routes, NodeId n, std::uint8_t s, std::uint32_t target, bool groups);
  void check_version();
  static std::uint64_t key(std::uint32_t kind, NodeId n, std::uint32_t state, std::uint32_t target) {
    return (static_cast<std::uint64_t>(kind) << 62) | (static_cast<std::uint64_t>(n) << 34) |
           (static_cast<std::uint64_t>(state) << 26) | target;
  }
  const Topology& topo_;
  const LinkState& state_;
  std::uint64_t version_ = 0;
  std::unordered_map<std::uint64_t, bool> memo_;
};

}  // namespace fabricsim::net
