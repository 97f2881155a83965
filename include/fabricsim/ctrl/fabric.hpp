// A two-tier Clos as the path controllers see it (two_tier.hpp): which
// switch is each endpoint's ToR, the one link between every ToR and every
// spine (each way), and the route of a commodity over a spine.  Built from
// any topology whose endpoints hang off ToRs by their NIC (Host) cable and
// whose ToRs reach every spine by exactly one cable: `leaf_spine` with one
// link per pair, and a two-level `fat_tree`.  Other links (a server's
// NVLink-like switch) are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/ctrl/two_tier.hpp"
#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/link_state.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::ctrl {

class TwoTierFabric {
 public:
  /// Throws util::ConfigError naming `key` with what the topology lacks
  /// (not two tiers, parallel ToR-spine cables, an endpoint without a ToR).
  TwoTierFabric(const net::Topology& topo, const std::string& key);

  std::uint32_t tors() const { return static_cast<std::uint32_t>(tor_node_.size()); }
  std::uint32_t spines() const { return static_cast<std::uint32_t>(spine_node_.size()); }
  /// ToR index of endpoint e.
  std::uint32_t tor_of(net::EndpointId e) const { return tor_of_[e]; }
  net::NodeId tor_node(std::uint32_t t) const { return tor_node_[t]; }
  net::NodeId spine_node(std::uint32_t s) const { return spine_node_[s]; }
  net::LinkId up(std::uint32_t t, std::uint32_t s) const { return up_[t * spines() + s]; }
  net::LinkId down(std::uint32_t s, std::uint32_t t) const { return down_[s * tors() + t]; }
  /// The ids the wang_jenkins hash reads (on a leaf_spine the released
  /// code's numbering: ToRs 0..T-1, NICs from T + S on).
  const net::Ecmp& ids() const { return ids_; }
  /// Endpoints per ToR, in endpoint order.
  const std::vector<std::vector<net::EndpointId>>& endpoints_of_tors() const { return under_; }

  /// The commodity of a flow from src to dst (different ToRs), with the ids
  /// routing.ecmp_hash = "wang_jenkins" reads (net::Ecmp::tor_id, nic_id),
  /// so that the `ecmp` controller takes the paths that routing would.
  Commodity commodity(net::EndpointId src, net::EndpointId dst) const;
  /// A problem over these commodities with the link state's live masks
  /// (`state` null: all live).
  Problem problem(std::vector<Commodity> commodities, const net::LinkState* state) const;
  /// The route src -> ToR -> spine -> ToR -> dst (spine ignored within one
  /// ToR: src -> ToR -> dst).
  std::vector<net::LinkId> route(net::EndpointId src, net::EndpointId dst, std::int32_t spine) const;

 private:
  std::vector<std::uint32_t> tor_of_;
  std::vector<net::LinkId> host_up_, host_down_;  // per endpoint
  std::vector<net::NodeId> tor_node_, spine_node_;
  std::vector<net::LinkId> up_, down_;
  std::vector<std::vector<net::EndpointId>> under_;
  net::Ecmp ids_;  // wang_jenkins: the hash's ids of each endpoint
};

}  // namespace fabricsim::ctrl
