// Route rules that belong to no one topology: shortest paths with VC = hops
// taken (TopoOpt, graph files).  The direct topologies keep their rules
// with their builders (torus.cpp, hammingmesh.cpp, hyperx.cpp,
// dragonfly.cpp; state_routes.hpp).
#include <algorithm>
#include <string>

#include "fabricsim/net/state_routes.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

namespace {
// ------------------------------------------------------------- hop count

class HopCountRules final : public RouteRules {
 public:
  explicit HopCountRules(std::uint32_t hops) : hops_(hops) {}
  std::uint8_t state_count() const override { return static_cast<std::uint8_t>(hops_ + 1); }
  std::uint8_t vcs() const override { return static_cast<std::uint8_t>(hops_); }
  std::uint8_t vc(std::uint8_t s) const override { return s == 0 ? 0 : static_cast<std::uint8_t>(s - 1); }
  std::string describe() const override { return "shortest paths, VC = hops taken"; }
  std::uint8_t step(NodeId, std::uint8_t s, LinkId, std::uint32_t, unsigned) const override {
    return s + 1u > hops_ ? kIllegal : static_cast<std::uint8_t>(s + 1);
  }

 private:
  std::uint32_t hops_;
};
}  // namespace

std::unique_ptr<RouteRules> hop_count_rules(const Topology& topo, std::uint32_t max_vcs, bool shards) {
  // (Shards: the longest route inside one; no message crosses between them.)
  const int d = topo.diameter(0, 1, shards);
  if (d < 0) throw util::ConfigError("topology: some endpoints cannot reach each other");
  if (static_cast<std::uint32_t>(d) > max_vcs)
    throw util::ConfigError("network.vcs: shortest-path routing on this graph needs " + std::to_string(d) +
                            " virtual channels (one per hop of its longest shortest path), " +
                            std::to_string(max_vcs) + " given");
  return std::make_unique<HopCountRules>(static_cast<std::uint32_t>(std::max(d, 1)));
}

}  // namespace fabricsim::net
