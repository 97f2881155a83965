// One ECMP for every network model (ecmp.hpp).
#include "fabricsim/net/ecmp.hpp"

#include <algorithm>

#include <array>
#include <climits>
#include <cstring>

#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::net {

EcmpHash parse_ecmp_hash(const std::string& name) {
  if (name == "mix64") return EcmpHash::Mix64;
  if (name == "crc32") return EcmpHash::Crc32;
  if (name == "murmur3") return EcmpHash::Murmur3;
  if (name == "wang_jenkins") return EcmpHash::WangJenkins;
  throw util::ConfigError("routing.ecmp_hash: unknown hash '" + name + "'");
}

std::uint32_t crc32_bytes(const std::uint8_t* p, std::size_t n, std::uint32_t crc) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::uint32_t murmur3_32(const std::uint8_t* p, std::size_t n, std::uint32_t seed) {
  constexpr std::uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
  const auto rotl = [](std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  std::uint32_t h = seed;
  const std::size_t blocks = n / 4;
  for (std::size_t i = 0; i < blocks; ++i) {
    const std::uint32_t k0 = static_cast<std::uint32_t>(p[4 * i]) | (static_cast<std::uint32_t>(p[4 * i + 1]) << 8) |
                             (static_cast<std::uint32_t>(p[4 * i + 2]) << 16) |
                             (static_cast<std::uint32_t>(p[4 * i + 3]) << 24);
    std::uint32_t k = k0 * c1;
    k = rotl(k, 15) * c2;
    h ^= k;
    h = rotl(h, 13) * 5 + 0xe6546b64u;
  }
  const std::uint8_t* tail = p + 4 * blocks;
  std::uint32_t k = 0;
  switch (n & 3) {
    case 3: k ^= static_cast<std::uint32_t>(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= static_cast<std::uint32_t>(tail[1]) << 8; [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = rotl(k, 15) * c2;
      h ^= k;
      break;
    default: break;
  }
  h ^= static_cast<std::uint32_t>(n);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

std::int32_t wang_jenkins_hash(std::int32_t a32) {
  // Java int semantics: additions and left shifts wrap (done on uint32),
  // right shifts are arithmetic (>>, sign-extending).
  std::uint32_t a = static_cast<std::uint32_t>(a32);
  const auto sar = [](std::uint32_t x, int r) {
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(x) >> r);
  };
  a = (a + 0x7ed55d16u) + (a << 12);
  a = (a ^ 0xc761c23cu) ^ sar(a, 19);
  a = (a + 0x165667b1u) + (a << 5);
  a = (a + 0xd3a2646cu) ^ (a << 9);
  a = (a + 0xfd7046c5u) + (a << 3);
  a = (a ^ 0xb55a4f09u) ^ sar(a, 16);
  const auto s = static_cast<std::int32_t>(a);
  return s == INT_MIN ? INT_MAX : (s < 0 ? -s : s);
}

Ecmp::Ecmp(const Topology& topo, EcmpHash hash, std::uint32_t seed) : hash_(hash), seed_(seed) {
  if (hash_ != EcmpHash::WangJenkins) return;
  tor_.resize(topo.endpoint_count());
  // The ToR: the switch at the end of the endpoint's first NIC cable (Host
  // class; an NVLink-like IntraServer link is not the ToR), else of its first link.
  for (EndpointId e = 0; e < topo.endpoint_count(); ++e) {
    const NodeId self = topo.endpoint_node(e);
    const Node& n = topo.node(self);
    tor_[e] = n.out.empty() ? self : topo.link(n.out[0]).dst;
    for (LinkId l : n.out)
      if (topo.link(l).cls == LinkClass::Host) {
        tor_[e] = topo.link(l).dst;
        break;
      }
  }
  // On a leaf-spine, the released code's ids (create_2_layer_topology):
  // ToRs 0..T-1, spines T..T+S-1, NICs from T+S on, so that a placement
  // gets the paths the paper's simulator gave it.  (fabricsim numbers the
  // endpoints first, then the leaves and spines, which build_leaf_spine
  // lays out contiguously.)
  if (topo.kind == "leaf_spine" && topo.endpoint_count() > 0) {
    const NodeId first_leaf = *std::min_element(tor_.begin(), tor_.end());
    NodeId first_spine = kNoNode, spines = 0;
    for (NodeId v = 0; v < topo.node_count(); ++v)
      if (topo.node(v).kind == NodeKind::Switch && topo.node(v).level == 2) {
        first_spine = std::min(first_spine, v);
        ++spines;
      }
    if (first_spine != kNoNode && first_spine > first_leaf) {
      for (auto& t : tor_) t -= first_leaf;
      nic_offset_ = (first_spine - first_leaf) + spines;
    }
  }
}

std::uint64_t Ecmp::hash(NodeId at, EndpointId src, EndpointId dst, std::uint16_t sport) const {
  if (hash_ == EcmpHash::WangJenkins) {
    // index = hash(srcTor + nonSeq(srcNic, dstNic)), nonSeq(s, d) = |hash(s + hash(d))|
    // (ml-routing spec 4.1), with routing.ecmp_seed added to the ToR id (0: the paper's).
    (void)at;
    (void)sport;
    const auto i32 = [](std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); };
    const std::int32_t non_seq = wang_jenkins_hash(
        i32(std::uint64_t{src} + nic_offset_ + static_cast<std::uint32_t>(wang_jenkins_hash(i32(std::uint64_t{dst} + nic_offset_)))));
    return static_cast<std::uint64_t>(
        wang_jenkins_hash(i32(std::uint64_t{tor_[src]} + seed_ + static_cast<std::uint32_t>(non_seq))));
  }
  // Each switch mixes its own id into the seed, as real switches do, so that
  // consecutive hops do not make correlated choices (hash polarization).
  const std::uint64_t s = util::hash2(seed_, at);
  if (hash_ == EcmpHash::Mix64) {
    const std::uint64_t h = util::hash2(s, (static_cast<std::uint64_t>(src) << 32) | dst);
    return util::hash2(h, (static_cast<std::uint64_t>(sport) << 24) | (std::uint64_t{kRoceDstPort} << 8) | kUdp);
  }
  std::array<std::uint8_t, 13> t{};
  const auto put32 = [&](std::size_t o, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) t[o + i] = static_cast<std::uint8_t>(v >> (8 * i));
  };
  put32(0, src);
  put32(4, dst);
  t[8] = static_cast<std::uint8_t>(sport);
  t[9] = static_cast<std::uint8_t>(sport >> 8);
  t[10] = static_cast<std::uint8_t>(kRoceDstPort);
  t[11] = static_cast<std::uint8_t>(kRoceDstPort >> 8);
  t[12] = kUdp;
  if (hash_ == EcmpHash::Crc32) return crc32_bytes(t.data(), t.size(), static_cast<std::uint32_t>(s));
  return murmur3_32(t.data(), t.size(), static_cast<std::uint32_t>(s));
}

}  // namespace fabricsim::net
