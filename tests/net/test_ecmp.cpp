// The shared ECMP's hash functions against published test vectors and an
// independent reading of the routing paper's integer hash, and the choice
// itself: wang_jenkins ignores the source port and the switch, the
// 5-tuple hashes do not.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "fabricsim/net/ecmp.hpp"
#include "fabricsim/net/topology.hpp"

namespace fabricsim::net {
namespace {

std::uint32_t murmur(const std::string& s, std::uint32_t seed) {
  return murmur3_32(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), seed);
}

TEST(Ecmp, Crc32CheckValue) {
  const std::string s = "123456789";
  EXPECT_EQ(crc32_bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), 0), 0xCBF43926u);
}

TEST(Ecmp, Murmur3PublishedVectors) {
  EXPECT_EQ(murmur("", 0), 0u);
  EXPECT_EQ(murmur("", 1), 0x514E28B7u);
  EXPECT_EQ(murmur("", 0xffffffffu), 0x81F16F39u);
  EXPECT_EQ(murmur(std::string(4, '\0'), 0), 0x2362F9DEu);
  EXPECT_EQ(murmur("aaaa", 0x9747b28cu), 0x5A97808Au);
  EXPECT_EQ(murmur("Hello, world!", 0x9747b28cu), 0x24884CBAu);
  EXPECT_EQ(murmur("The quick brown fox jumps over the lazy dog", 0x9747b28cu), 0x2FA826CDu);
}

// The spec's pseudo-code on Java ints, in 64-bit arithmetic folded back
// to 32 bits after every operation (a different route from the library's
// uint32 arithmetic).
std::int64_t wrap(std::int64_t x) {
  x %= 4294967296LL;
  if (x < 0) x += 4294967296LL;
  return x >= 2147483648LL ? x - 4294967296LL : x;
}
std::int64_t shl(std::int64_t a, int n) { return wrap(a * (std::int64_t{1} << n)); }
std::int64_t sar(std::int64_t a, int n) {  // floor division: an arithmetic shift
  const std::int64_t d = std::int64_t{1} << n;
  return a >= 0 ? a / d : -((-a + d - 1) / d);
}
std::int64_t x32(std::int64_t a, std::int64_t b) {
  return wrap(static_cast<std::int64_t>(static_cast<std::uint32_t>(a) ^ static_cast<std::uint32_t>(b)));
}
std::int64_t reference(std::int64_t a) {
  a = wrap(wrap(a + 0x7ed55d16) + shl(a, 12));
  a = x32(x32(a, wrap(0xc761c23c)), sar(a, 19));
  a = wrap(wrap(a + 0x165667b1) + shl(a, 5));
  a = x32(wrap(a + wrap(0xd3a2646c)), shl(a, 9));
  a = wrap(wrap(a + wrap(0xfd7046c5)) + shl(a, 3));
  a = x32(x32(a, wrap(0xb55a4f09)), sar(a, 16));
  return a == -2147483648LL ? 2147483647LL : (a < 0 ? -a : a);
}

TEST(Ecmp, WangJenkinsMatchesTheSpecOnJavaInts) {
  for (std::int64_t a : {0LL, 1LL, 2LL, 7LL, 1000LL, 65535LL, 123456789LL, 2147483647LL, -1LL, -2LL, -2147483648LL})
    EXPECT_EQ(wang_jenkins_hash(static_cast<std::int32_t>(a)), reference(a)) << a;
  for (std::int64_t a = -5000; a < 5000; a += 7) EXPECT_EQ(wang_jenkins_hash(static_cast<std::int32_t>(a)), reference(a));
}

// Two leaves of 4 endpoints under 4 spines.
Topology leaf_spine() {
  LeafSpineParams p;
  p.leaves = 2;
  p.spines = 4;
  p.servers_per_leaf = 4;
  p.gpus_per_server = 1;
  p.radix = 16;
  return build_leaf_spine(p);
}

TEST(Ecmp, WangJenkinsIgnoresPortAndSwitchFiveTupleHashesDoNot) {
  const Topology t = leaf_spine();
  const Ecmp wj(t, EcmpHash::WangJenkins, 0);
  for (EcmpHash h : {EcmpHash::Mix64, EcmpHash::Crc32, EcmpHash::Murmur3}) {
    const Ecmp e(t, h, 0);
    bool port_matters = false, switch_matters = false;
    for (std::uint16_t port = 49152; port < 49152 + 64; ++port) {
      port_matters |= e.hash(10, 0, 5, port) != e.hash(10, 0, 5, 49152);
      switch_matters |= e.hash(11, 0, 5, port) != e.hash(10, 0, 5, port);
      EXPECT_EQ(wj.hash(10, 0, 5, port), wj.hash(11, 0, 5, 49152));
    }
    EXPECT_TRUE(port_matters);
    EXPECT_TRUE(switch_matters);
  }
  // The paper's formula, with the source's ToR from the topology, in the
  // released code's numbering on a leaf-spine (create_2_layer_topology):
  // ToRs 0..T-1, spines T..T+S-1, NICs from T+S on; fabricsim numbers the
  // endpoints first, then the leaves, then the spines.
  const NodeId tor = t.link(t.node(t.endpoint_node(1)).out[0]).dst;
  const auto endpoints = static_cast<std::int64_t>(t.endpoint_count());
  std::int64_t leaves = 0, spines = 0;
  for (NodeId v = 0; v < t.node_count(); ++v) {
    if (t.node(v).kind != NodeKind::Switch) continue;
    leaves += t.node(v).name.rfind("leaf", 0) == 0 ? 1 : 0;
    spines += t.node(v).name.rfind("spine", 0) == 0 ? 1 : 0;
  }
  const std::int64_t tor_index = static_cast<std::int64_t>(tor) - endpoints;  // leaf k is node endpoints + k
  const auto nic = [&](std::int64_t e) { return e + leaves + spines; };
  ASSERT_GT(leaves, 1);
  ASSERT_GT(spines, 1);
  EXPECT_EQ(wj.tor_id(1), tor_index);
  EXPECT_EQ(wj.nic_id(6), nic(6));
  EXPECT_EQ(wj.hash(tor, 1, 6, 1),
            static_cast<std::uint64_t>(reference(tor_index + reference(nic(1) + reference(nic(6))))));
  EXPECT_LT(wj.pick(tor, 1, 6, 1, 4), 4u);
  EXPECT_EQ(wj.pick(tor, 1, 6, 1, 1), 0u);
}

TEST(Ecmp, ParseNamesEveryHashAndRefusesOthers) {
  EXPECT_EQ(parse_ecmp_hash("mix64"), EcmpHash::Mix64);
  EXPECT_EQ(parse_ecmp_hash("crc32"), EcmpHash::Crc32);
  EXPECT_EQ(parse_ecmp_hash("murmur3"), EcmpHash::Murmur3);
  EXPECT_EQ(parse_ecmp_hash("wang_jenkins"), EcmpHash::WangJenkins);
  EXPECT_ANY_THROW(parse_ecmp_hash("md5"));
}

}  // namespace
}  // namespace fabricsim::net
