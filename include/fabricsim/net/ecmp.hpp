// One ECMP for every network model (issue 28, item 3): the function that
// picks among equal-cost candidates.  The packet model asks it at every hop
// of a message's packets, the flow and analytic models while they walk a
// message's single path, with the same arguments (node, source, destination,
// the message's UDP source port), so with the same seed the same message
// takes the same path in all three models.
//
// Hashes (routing.ecmp_hash; docs/model.md, "Routing"):
//   mix64         SplitMix64-based 5-tuple hash, the switch's id mixed into
//                 the seed (the default);
//   crc32         IEEE CRC-32 of the 13-byte 5-tuple, per-switch seed;
//   murmur3       MurmurHash3 (x86, 32-bit) of the same 13 bytes, per-switch seed;
//   wang_jenkins  the routing paper's ECMP (ml-routing spec 4.1): the Thomas
//                 Wang / Robert Jenkins 32-bit integer hash of (source ToR
//                 + nonSeq(source NIC, destination NIC)); no port, no switch
//                 seed, so a pair keeps one path for every message.  On a
//                 leaf_spine it reads the released code's ids (tor_id,
//                 nic_id), so a placement takes the paper's paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {

enum class EcmpHash : std::uint8_t { Mix64, Crc32, Murmur3, WangJenkins };

/// Throws util::ConfigError naming routing.ecmp_hash for an unknown name.
EcmpHash parse_ecmp_hash(const std::string& name);

/// The RoCE v2 destination port and UDP's protocol number: the fixed part
/// of every message's 5-tuple.
inline constexpr std::uint16_t kRoceDstPort = 4791;
inline constexpr std::uint8_t kUdp = 17;

/// IEEE CRC-32 (reflected, polynomial 0xEDB88320) continuing from `crc`
/// (0 for a fresh one): crc32_bytes("123456789", 9, 0) = 0xCBF43926.
std::uint32_t crc32_bytes(const std::uint8_t* p, std::size_t n, std::uint32_t crc);
/// MurmurHash3_x86_32 of n bytes with `seed`.
std::uint32_t murmur3_32(const std::uint8_t* p, std::size_t n, std::uint32_t seed);
/// The Thomas Wang / Robert Jenkins integer hash on a signed 32-bit value
/// (wrap-around, arithmetic shifts), as the routing paper's code computes
/// it: the absolute value of the result, INT_MIN giving INT_MAX.
std::int32_t wang_jenkins_hash(std::int32_t a);

class Ecmp {
 public:
  /// `seed`: routing.ecmp_seed.  The topology gives each endpoint's ToR
  /// (the switch its first NIC cable reaches), for wang_jenkins.
  Ecmp(const Topology& topo, EcmpHash hash, std::uint32_t seed);

  /// The hash whose value mod k picks one of k candidates at node `at`.
  std::uint64_t hash(NodeId at, EndpointId src, EndpointId dst, std::uint16_t sport) const;
  std::size_t pick(NodeId at, EndpointId src, EndpointId dst, std::uint16_t sport, std::size_t k) const {
    return k <= 1 ? 0 : static_cast<std::size_t>(hash(at, src, dst, sport) % k);
  }
  EcmpHash kind() const { return hash_; }
  /// wang_jenkins: the ids the hash reads for endpoint e, its ToR's and its
  /// NIC's.  On a leaf_spine the released code's numbering (ToRs 0..T-1,
  /// spines next, NICs from T + S on); elsewhere fabricsim's node and
  /// endpoint ids.
  std::int32_t tor_id(EndpointId e) const { return static_cast<std::int32_t>(tor_[e]); }
  std::int32_t nic_id(EndpointId e) const { return static_cast<std::int32_t>(e + nic_offset_); }

 private:
  EcmpHash hash_;
  std::uint32_t seed_;
  std::vector<NodeId> tor_;  // per endpoint, for wang_jenkins (empty otherwise)
  std::uint32_t nic_offset_ = 0;
};

}  // namespace fabricsim::net
