// Up*/down* routing for arbitrary graphs (Autonet): deadlock-free on one
// virtual channel, at the price of some non-minimal paths.
//
// Nodes get the BFS level from a root (the forwarding node with the most
// ports, lowest id on ties); a link u -> v goes "up" when level(v) <
// level(u), or the levels are equal and v < u; otherwise "down".  A legal
// route takes any number of up links, then only down links; the channel
// dependency graph of such routes is acyclic.  Among legal routes the
// shortest are used, and a packet remembers whether it has taken a down
// link (its phase).  Links that carry no data (Link::carries_data) are not
// used; on a graph of one-way links up*/down* routes need not reach every
// pair (Autonet assumes two-way links), and hops() then reports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

class UpDownRoutes {
 public:
  /// Throws util::ConfigError if the tables would exceed `max_bytes`.
  explicit UpDownRoutes(const Topology& topo, std::size_t max_bytes = std::size_t{512} << 20);
  /// Bytes its tables take on `topo`.
  static std::size_t table_bytes(const Topology& topo) {
    return topo.endpoint_count() * topo.node_count() * 2 * sizeof(std::uint16_t);
  }

  NodeId root() const { return root_; }
  bool is_down(LinkId l) const { return down_[l] != 0; }
  /// Appends the ports of `at` on a shortest legal route to `dst` for a
  /// packet in phase `down` (it has taken a down link); none at dst's node.
  void candidates(NodeId at, bool down, EndpointId dst, std::vector<PortIndex>& out) const;
  /// Length in links of the shortest legal route (kUnreachable if none).
  std::uint32_t hops(NodeId at, bool down, EndpointId dst) const;
  static constexpr std::uint32_t kUnreachable = 0xFFFF;

 private:
  std::size_t index(EndpointId dst, NodeId n, bool down) const {
    return (static_cast<std::size_t>(dst) * nodes_ + n) * 2 + (down ? 1 : 0);
  }
  const Topology& topo_;
  NodeId root_ = kNoNode;
  std::size_t nodes_ = 0;
  std::vector<std::uint8_t> down_;   // per link
  std::vector<std::uint16_t> dist_;  // [dst][node][phase]
};

}  // namespace fabricsim::net
