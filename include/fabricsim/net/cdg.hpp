// Channel dependency graphs: the deadlock check of a routing scheme.
//
// In a lossless network a packet holds a buffer of the channel it arrived on
// (a directed link and a virtual channel) while it waits for a buffer of the
// next one.  If the "may wait for" relation between channels has a cycle,
// packets can block each other forever; if it is acyclic, the routing is
// deadlock-free (Dally & Seitz).  check_channel_dependencies() builds that
// relation for a routing function over every destination, from every
// source, and reports whether it is acyclic, with one cycle as evidence if
// not.  It is meant for small instances in tests and for `fabricsim info`
// on small topologies; the work grows with channels x destinations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

struct Channel {
  LinkId link = kNoLink;
  std::uint8_t vc = 0;
  friend bool operator==(const Channel&, const Channel&) = default;
};

/// The routing function under test: for a packet to `dst` that arrived at
/// node `at` over channel `in` (for a packet being injected, `in` is the
/// channel of the source's first link and `at` its source endpoint's node,
/// i.e. the call asks where it may go first), append every channel it may
/// request next.  Appending nothing means the packet is delivered at `at`.
using NextChannels = std::function<void(NodeId at, Channel in, EndpointId dst, std::vector<Channel>& next)>;

/// The first channels a packet from endpoint `src` to `dst` may take.
using FirstChannels = std::function<void(EndpointId src, EndpointId dst, std::vector<Channel>& first)>;

struct DependencyReport {
  bool acyclic = true;
  std::size_t channels_used = 0;  ///< channels some packet may occupy
  std::size_t dependencies = 0;   ///< distinct (held, requested) pairs
  std::vector<Channel> cycle;     ///< a cycle (first channel not repeated) when not acyclic
};

DependencyReport check_channel_dependencies(const Topology& topo, std::uint8_t vcs, const FirstChannels& first,
                                            const NextChannels& next);

/// The routing fabricsim runs today: any minimal next hop of RoutingTable,
/// on the packet's (fixed) virtual channel `vc`.
DependencyReport check_minimal_routing(const Topology& topo, const RoutingTable& routes, std::uint8_t vc = 0);

}  // namespace fabricsim::net
