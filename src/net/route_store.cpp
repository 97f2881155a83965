#include "fabricsim/net/route_store.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::net {

std::uint32_t RouteStore::pin(MessageId id, std::span<const LinkId> links, PinnedVc vc) {
  if (current_.size() <= id) {
    current_.resize(static_cast<std::size_t>(id) + 1, 0);
    versions_.resize(static_cast<std::size_t>(id) + 1, 0);
  }
  if (versions_[id] >= kMaxVersions)
    throw util::UserError(fmt::format("message {} re-pinned more than {} times", id, kMaxVersions));
  if (versions_[id] > 0) older_.emplace(key(id, versions_[id] - 1u), current_[id] - 1u);
  const auto at = static_cast<std::uint32_t>(links_.size());
  links_.insert(links_.end(), links.begin(), links.end());
  length_.resize(links_.size(), 0);
  vc_.resize(links_.size(), PinnedVc::Message);
  if (!links.empty()) {
    length_[at] = static_cast<std::uint32_t>(links.size());
    vc_[at] = vc;
  }
  current_[id] = at + 1;
  return versions_[id]++;
}

void RouteStore::replace(MessageId id, std::span<const LinkId> links, PinnedVc vc) {
  FABRICSIM_ASSERT(pinned(id) && !links.empty(), "replace needs a pinned message and a route");
  const std::uint32_t at = current_[id] - 1u;
  if (links.size() <= length_[at]) {
    std::copy(links.begin(), links.end(), links_.begin() + at);
    length_[at] = static_cast<std::uint32_t>(links.size());
    vc_[at] = vc;
    return;
  }
  const auto end = static_cast<std::uint32_t>(links_.size());
  links_.insert(links_.end(), links.begin(), links.end());
  length_.resize(links_.size(), 0);
  vc_.resize(links_.size(), PinnedVc::Message);
  length_[end] = static_cast<std::uint32_t>(links.size());
  vc_[end] = vc;
  current_[id] = end + 1;
}

std::string RouteStore::check(const Topology& topo, EndpointId src, EndpointId dst, std::span<const LinkId> links) {
  if (links.empty()) return "an empty route";
  NodeId at = topo.endpoint_node(src);
  for (std::size_t h = 0; h < links.size(); ++h) {
    if (links[h] >= topo.link_count()) return fmt::format("link {} (hop {}) does not exist", links[h], h);
    const Link& l = topo.link(links[h]);
    if (l.src != at) return fmt::format("link {} (hop {}) does not start at node {}, where hop {} ended", links[h], h, at, h);
    at = l.dst;
    if (h + 1 < links.size() && !topo.nodes()[at].forwards)
      return fmt::format("node {} (after hop {}) does not forward", at, h);
  }
  if (at != topo.endpoint_node(dst)) return fmt::format("the route ends at node {}, not at endpoint {}'s", at, dst);
  return {};
}

}  // namespace fabricsim::net
