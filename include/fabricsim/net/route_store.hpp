// Explicit routes, per message: the route store (issue 28, item 2).
//
// A message with an entry here follows it in every network model; any
// other message is routed by the configured policy (as ns-3's list
// routing asks its explicit routes first).  TopoOpt's coin routes are
// entries (filled as messages are created); a path controller, vClos'
// per-job routes and a synthesized schedule fill it the same way, through
// NetworkModel::pin().  Re-pinning a message adds a version: packets
// already on their way keep the version they were injected with (a packet
// carries its version and hop index), later ones take the new one.  Every
// process holds the same store (pins are made in the same order on every
// rank: at creation, or as a global step's decision), so a packet that
// crosses ranks finds its route by (message, version).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

using MessageId = std::uint32_t;  // (network.hpp)

/// Which virtual channel a pinned packet uses at each hop.
enum class PinnedVc : std::uint8_t {
  Message,  ///< the message's own (tag % vcs): for routes deadlock-free on one channel (up/down)
  PerHop,   ///< hop i on channel i (any route, if network.vcs >= its links: TopoOpt's coin routes)
};

class RouteStore {
 public:
  static constexpr std::uint32_t kMaxVersions = 255;  ///< versions of one message (a packet carries 8 bits)

  /// Routes `id` over `links` (from the source's NIC link to the link into
  /// the destination) from now on: its first pin, or a new version.
  /// Returns the version (0 for the first).  util::UserError after
  /// kMaxVersions pins of one message.
  std::uint32_t pin(MessageId id, std::span<const LinkId> links, PinnedVc vc = PinnedVc::Message);
  /// The route of a pinned message that nothing has used yet (not
  /// started): its current version's links are replaced, no version is
  /// added (a controller that re-pins messages still to come, at every
  /// change, would otherwise run out of versions).  In place when it fits.
  void replace(MessageId id, std::span<const LinkId> links, PinnedVc vc = PinnedVc::Message);
  bool pinned(MessageId id) const { return id < current_.size() && current_[id] != 0; }
  /// The current version (pinned messages only).
  std::uint32_t version(MessageId id) const { return versions_[id] - 1u; }
  /// Link `hop` of version `v` of message `id`'s route.
  LinkId link(MessageId id, std::uint32_t v, std::uint32_t hop) const { return links_[offset(id, v) + hop]; }
  /// Version `v` of message `id`'s route.
  std::span<const LinkId> route(MessageId id, std::uint32_t v) const {
    const std::uint32_t at = offset(id, v);
    return {links_.data() + at, links_.data() + at + length_[at]};
  }
  std::span<const LinkId> route(MessageId id) const { return route(id, version(id)); }
  PinnedVc vc(MessageId id, std::uint32_t v) const { return vc_[offset(id, v)]; }
  bool empty() const { return links_.empty(); }

  /// Why `links` is not a route from endpoint `src` to `dst` in `topo`
  /// (each link starting where the previous ended, the first at the
  /// source's node, the last into the destination's, intermediate nodes
  /// forwarding), or "" if it is.
  static std::string check(const Topology& topo, EndpointId src, EndpointId dst, std::span<const LinkId> links);

 private:
  std::uint32_t offset(MessageId id, std::uint32_t v) const {
    return v + 1u == versions_[id] ? current_[id] - 1u : older_.at(key(id, v));
  }
  static std::uint64_t key(MessageId id, std::uint32_t v) { return (static_cast<std::uint64_t>(id) << 8) | v; }
  std::vector<std::uint32_t> current_;   // per message: offset + 1 of its current version (0: none)
  std::vector<std::uint8_t> versions_;   // per message: versions so far
  std::unordered_map<std::uint64_t, std::uint32_t> older_;  // (message, version) -> offset, earlier versions
  std::vector<LinkId> links_;            // every version's links, back to back
  std::vector<std::uint32_t> length_;    // at each version's offset: its length
  std::vector<PinnedVc> vc_;             // at each version's offset: its channel rule
};

}  // namespace fabricsim::net
