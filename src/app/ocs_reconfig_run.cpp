// TopoOpt's OCS-reconfig and SiP-ML at run time (ocs_reconfig_run.hpp).
#include "ocs_reconfig_run.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "fabricsim/util/assert.hpp"
#include "fabricsim/util/error.hpp"
#include "fabricsim/util/random.hpp"

namespace fabricsim::app {

using core::SimTime;
using util::ConfigError;

namespace {
/// topology.reconfig_latency_ns, 0 read as the construction's own (ns).
double reconfig_latency_ns(const config::Config& cfg) {
  const double latency = cfg.get_float("topology.reconfig_latency_ns");
  if (latency > 0) return latency;
  return cfg.get_string("topology.construction") == "sip_ml" ? 25e3 : 10e6;
}
}  // namespace

OcsReconfigRun::OcsReconfigRun(const config::Config& cfg, const net::Topology& topo, net::Network& network,
                               const std::vector<workload::PlannedMessage>& planned, std::uint64_t messages_total)
    : net_(network), topo_(topo), d_(topo.ocs_degree), messages_total_(messages_total) {
  FABRICSIM_ASSERT(d_ > 0, "not an optical fabric");
  name_ = cfg.get_string("topology.construction");
  forwarding_ = name_ == "ocs_reconfig";
  drain_ = cfg.get_string("network.model") == "packet";
  options_.connect = forwarding_;
  options_.discount = name_ != "sip_ml";
  epoch_ = SimTime::from_ns_f(cfg.get_float("topology.reconfig_epoch_ns"));
  latency_ = SimTime::from_ns_f(reconfig_latency_ns(cfg));
  delay_ = std::min(epoch_, SimTime::from_ns_f(cfg.get_float("engine.control_latency_ns")));
  if (delay_ == SimTime::zero()) delay_ = epoch_;
  // Servers: the nodes that send on circuits (build_server_fabric numbers them 0..n-1).
  for (const net::Link& l : topo.links())
    if (l.cls == net::LinkClass::Global && l.carries_data) n_ = std::max<std::uint32_t>(n_, l.src + 1);
  circuits_.assign(std::size_t{n_} * n_ * d_, net::kNoLink);
  std::vector<std::uint32_t> slots(std::size_t{n_} * n_, 0);
  for (net::LinkId id = 0; id < topo.link_count(); ++id) {
    const net::Link& l = topo.link(id);
    if (l.cls != net::LinkClass::Global || !l.carries_data) continue;
    std::uint32_t& k = slots[pair(l.src, l.dst)];
    FABRICSIM_ASSERT(k < d_, "more circuits between two servers than ports");
    circuits_[pair(l.src, l.dst) * d_ + k++] = id;
  }
  const std::size_t endpoints = topo.endpoint_count();
  server_.resize(endpoints);
  up_.assign(endpoints, net::kNoLink);
  down_.assign(endpoints, net::kNoLink);
  for (net::EndpointId e = 0; e < endpoints; ++e) {
    const net::NodeId node = topo.endpoint_node(e);
    if (node < n_) {
      server_[e] = node;
      continue;
    }
    for (const net::LinkId l : topo.node(node).out)
      if (topo.link(l).cls == net::LinkClass::IntraServer && topo.link(l).dst < n_) up_[e] = l;
    FABRICSIM_ASSERT(up_[e] != net::kNoLink, "a GPU without its server");
    server_[e] = topo.link(up_[e]).dst;
    down_[e] = topo.link(up_[e]).reverse;
  }
  // Power-on: Algorithm 5 on the whole run's traffic between servers.
  std::vector<double> demand(std::size_t{n_} * n_, 0.0);
  double sum = 0;
  for (const workload::PlannedMessage& m : planned) {
    const std::uint32_t u = server_[m.src], v = server_[m.dst];
    if (u == v) continue;
    demand[pair(u, v)] += static_cast<double>(m.bytes);
    sum += static_cast<double>(m.bytes);
  }
  lit_.assign(std::size_t{n_} * n_, 0);
  const ctrl::OcsReconfigResult r = ctrl::ocs_reconfig(n_, d_, demand, options_);
  lit_ = wanted(r);
  record(SimTime::zero(), sum, static_cast<std::uint32_t>(planned.size()), r, true);
  report_.pause_end_ns.back() = -1;
}

std::vector<std::uint32_t> OcsReconfigRun::wanted(const ctrl::OcsReconfigResult& r) const {
  std::vector<std::uint32_t> want(std::size_t{n_} * n_, 0);
  for (const auto& [u, v] : r.links) ++want[pair(u, v)];
  for (const std::uint32_t w : want) FABRICSIM_ASSERT(w <= d_, "more circuits than ports");
  return want;
}

std::vector<net::LinkId> OcsReconfigRun::power_on_down() const {
  std::vector<net::LinkId> dark;
  for (std::size_t p = 0; p < lit_.size(); ++p)
    for (std::uint32_t k = lit_[p]; k < d_; ++k)
      if (circuits_[p * d_ + k] != net::kNoLink) dark.push_back(circuits_[p * d_ + k]);
  std::sort(dark.begin(), dark.end());
  return dark;
}

void OcsReconfigRun::record(SimTime t, double demand, std::uint32_t waiting, const ctrl::OcsReconfigResult& r,
                            bool changed) {
  const auto row = static_cast<std::uint32_t>(report_.time_ns.size());
  report_.time_ns.push_back(static_cast<double>(t.ns()));
  report_.pause_end_ns.push_back(changed ? static_cast<double>((t + latency_).ns()) : -1.0);
  report_.demand_bytes.push_back(static_cast<std::uint64_t>(demand));
  report_.waiting_messages.push_back(waiting);
  report_.demand_links.push_back(r.greedy_links);
  report_.repair_links.push_back(r.repair_links);
  report_.circuits_off.push_back(static_cast<std::uint32_t>(off_.size()));
  report_.circuits_on.push_back(static_cast<std::uint32_t>(on_.size()));
  if (!changed) return;
  const std::vector<std::uint32_t> want = wanted(r);
  for (std::uint32_t u = 0; u < n_; ++u)
    for (std::uint32_t v = 0; v < n_; ++v)
      if (want[pair(u, v)] > 0) {
        report_.link_row.push_back(row);
        report_.link_src.push_back(u);
        report_.link_dst.push_back(v);
        report_.link_count.push_back(want[pair(u, v)]);
      }
}

void OcsReconfigRun::start(par::RecordExchange& requests) {
  requests_ = &requests;
  net_.hold_unroutable(!forwarding_);
  net_.spread_pinned_hops(true);  // a server's lit circuits to one neighbour carry a flow together
  lit_distances();
  pin_routes();
  next_epoch_ = epoch_;
  requests.request_step(next_epoch_);
}

std::vector<std::int64_t> OcsReconfigRun::contribute(SimTime t) {
  // [0] messages of its sources with bytes not yet sent, [1] packets in
  // flight as this rank counts them (injected here less delivered here: the
  // sum over the ranks is exact, modulo 2^64), then the messages it saw
  // start and finish since its last contribution (a count, then the ids,
  // each list), then (pair, bytes) per pair of servers.
  const std::vector<net::Message>& msgs = net_.messages();
  std::vector<std::int64_t> out{0, drain_ ? static_cast<std::int64_t>(net_.packets_in_flight()) : 0};
  std::vector<std::int64_t> started, finished;
  std::vector<std::int64_t> demand(std::size_t{n_} * n_, 0);
  reported_.resize(msgs.size(), 0);
  for (net::MessageId id = 0; id < msgs.size(); ++id) {
    const net::Message& m = msgs[id];
    std::uint8_t& seen = reported_[id];
    if (seen & 2u) continue;
    if (m.failed || (m.end_time <= t && net_.owns(topo_.endpoint_node(m.dst)))) {
      seen |= 2u;
      finished.push_back(id);
      continue;
    }
    if (m.post_time > t || !net_.owns(topo_.endpoint_node(m.src))) continue;
    if (!(seen & 1u) && m.sent_packets > 0) {
      seen |= 1u;
      started.push_back(id);
    }
    const std::uint64_t bytes = net_.unsent_bytes(id, t);
    if (bytes == 0) continue;
    ++out[0];
    const std::uint32_t u = server_[m.src], v = server_[m.dst];
    if (u != v) demand[pair(u, v)] += static_cast<std::int64_t>(bytes);
  }
  for (const auto* ids : {&started, &finished}) {
    out.push_back(static_cast<std::int64_t>(ids->size()));
    out.insert(out.end(), ids->begin(), ids->end());
  }
  for (std::size_t p = 0; p < demand.size(); ++p)
    if (demand[p] > 0) {
      out.push_back(static_cast<std::int64_t>(p));
      out.push_back(demand[p]);
    }
  return out;
}

void OcsReconfigRun::apply(SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) {
  // Sums over the ranks (integers: the order does not matter).
  std::int64_t waiting = 0, in_flight = 0;
  const std::size_t messages = net_.message_count();
  started_.resize(messages, 0);
  finished_.resize(messages, 0);
  std::vector<std::int64_t> bytes(std::size_t{n_} * n_, 0);
  std::size_t at = 0;
  for (const std::int64_t c : counts) {
    const std::size_t end = at + static_cast<std::size_t>(c);
    waiting += all[at];
    in_flight += all[at + 1];
    std::size_t k = at + 2;
    for (const int list : {0, 1}) {
      const auto n = static_cast<std::size_t>(all[k++]);
      for (std::size_t i = 0; i < n; ++i, ++k) {
        const auto id = static_cast<std::size_t>(all[k]);
        if (list == 0) {
          started_[id] = 1;
        } else if (!finished_[id]) {
          finished_[id] = 1;
          ++finished_count_;
        }
      }
    }
    for (; k + 1 < end; k += 2) bytes[static_cast<std::size_t>(all[k])] += all[k + 1];
    at = end;
  }
  bool acted = false;
  if (t == install_at_) {
    acted = true;
    if (drain_ && in_flight != 0) {
      // Packets are still on their way over circuits about to go dark: the
      // switch waits for them (the NICs stay stopped).
      const SimTime step = std::min(delay_, SimTime::from_ns(1000));
      install_at_ = t + step;
      requests_->request_step(install_at_);
      paused_ = paused_ + step;
      report_.pause_end_ns[pending_row_] = static_cast<double>(install_at_.ns());
    } else {
      install();
    }
  }
  // A decision that changes nothing does not stretch the run (its time series, sim_time_ns).
  const auto idle = [&] {
    if (!acted) net_.simulator().passive();
  };
  if (t != next_epoch_ || done_) return idle();
  if (finished_count_ >= messages_total_) {
    done_ = true;  // the work is over: no more epochs
    return idle();
  }
  next_epoch_ = t + epoch_;
  requests_->request_step(next_epoch_);
  if (install_at_ != SimTime::max()) return idle();  // still switching (the fabric drains): no decision now
  std::vector<double> demand(bytes.size(), 0.0);
  double sum = 0;
  for (std::size_t p = 0; p < bytes.size(); ++p) {
    demand[p] = static_cast<double>(bytes[p]);
    sum += demand[p];
  }
  if (!(sum > 0)) {  // nothing between servers waits: the circuits stay
    record(t, 0, static_cast<std::uint32_t>(waiting), {}, false);
    return idle();
  }
  const ctrl::OcsReconfigResult r = ctrl::ocs_reconfig(n_, d_, demand, options_);
  plan_switch(wanted(r));
  const bool changed = !off_.empty() || !on_.empty();
  record(t, sum, static_cast<std::uint32_t>(waiting), r, changed);
  if (!changed) return idle();
  // Every flow stops for the reconfiguration; the new circuits come up
  // latency_ later (a step requested from inside one: t' >= t suffices).
  net_.pause_flows();
  install_at_ = t + latency_;
  pending_row_ = report_.time_ns.size() - 1;
  requests_->request_step(install_at_);
  paused_ = paused_ + latency_;
  ++changes_;
}

void OcsReconfigRun::plan_switch(const std::vector<std::uint32_t>& want) {
  off_.clear();
  on_.clear();
  for (std::size_t p = 0; p < want.size(); ++p) {
    for (std::uint32_t k = want[p]; k < lit_[p]; ++k) off_.push_back(circuits_[p * d_ + k]);
    for (std::uint32_t k = lit_[p]; k < want[p]; ++k) on_.push_back(circuits_[p * d_ + k]);
  }
  want_ = want;
}

void OcsReconfigRun::install() {
  net_.switch_links(off_, on_);
  lit_ = want_;
  off_.clear();
  on_.clear();
  install_at_ = SimTime::max();
  lit_distances();
  pin_routes();
  net_.resume_flows();
}

void OcsReconfigRun::lit_distances() {
  // BFS to each destination over the lit circuits, backwards.
  std::vector<std::vector<std::uint32_t>> into(n_);
  for (std::uint32_t u = 0; u < n_; ++u)
    for (std::uint32_t v = 0; v < n_; ++v)
      if (lit_[pair(u, v)] > 0) into[v].push_back(u);
  dist_.assign(std::size_t{n_} * n_, -1);
  std::vector<std::uint32_t> queue;
  for (std::uint32_t dst = 0; dst < n_; ++dst) {
    std::int32_t* dist = dist_.data() + std::size_t{dst} * n_;
    dist[dst] = 0;
    queue.assign(1, dst);
    for (std::size_t i = 0; i < queue.size(); ++i)
      for (const std::uint32_t u : into[queue[i]])
        if (dist[u] < 0) {
          dist[u] = dist[queue[i]] + 1;
          queue.push_back(u);
        }
  }
}

/// Pins every message between servers that is not done and whose pinned
/// route is not all lit: FW over a shortest path of lit circuits, noFW over
/// a lit direct circuit if there is one (else it stays as it is: unpinned
/// or on a dark route, it waits, Network::hold_unroutable).
void OcsReconfigRun::pin_routes() {
  const std::vector<net::Message>& msgs = net_.messages();
  route_at_.resize(msgs.size(), UINT32_MAX);
  // Lit circuits out of each server, by destination server.
  std::vector<std::vector<std::uint32_t>> out(n_);
  for (std::uint32_t u = 0; u < n_; ++u)
    for (std::uint32_t v = 0; v < n_; ++v)
      if (lit_[pair(u, v)] > 0) out[u].push_back(v);
  std::vector<net::LinkId> links;
  for (net::MessageId id = 0; id < msgs.size(); ++id) {
    const net::Message& m = msgs[id];
    if (id < finished_.size() && finished_[id]) continue;  // (what every rank knows, not this rank's view)
    const std::uint32_t su = server_[m.src], sv = server_[m.dst];
    if (su == sv) {
      // Inside a server: its intra-server links, never switched.  Without
      // forwarding every message is pinned (an unpinned one waits), so these too, once.
      if (!forwarding_ && route_at_[id] == UINT32_MAX) {
        route_at_[id] = kInsideServer;
        const std::array<net::LinkId, 2> inside{up_[m.src], down_[m.dst]};
        net_.pin(id, inside, net::PinnedVc::Message, id >= started_.size() || started_[id] == 0);
      }
      continue;
    }
    if (route_at_[id] != UINT32_MAX && route_at_[id] != kInsideServer) {
      // Still all lit: keep it (a circuit of slot k of pair p is lit iff k < lit_[p]).
      bool lit = true;
      for (std::uint32_t i = route_at_[id] + 1; i <= route_at_[id] + route_links_[route_at_[id]]; ++i) {
        const net::Link& l = topo_.link(route_links_[i]);
        const std::size_t p = pair(l.src, l.dst);
        const auto slot = static_cast<std::uint32_t>(
            std::find(circuits_.begin() + static_cast<std::ptrdiff_t>(p * d_),
                      circuits_.begin() + static_cast<std::ptrdiff_t>((p + 1) * d_), route_links_[i]) -
            (circuits_.begin() + static_cast<std::ptrdiff_t>(p * d_)));
        if (slot >= lit_[p]) {
          lit = false;
          break;
        }
      }
      if (lit) continue;
    }
    // A shortest path of lit circuits, picked hop by hop by a hash of (id,
    // hop); without forwarding only a direct one (or none: it waits).
    const std::int32_t* dist = dist_.data() + std::size_t{sv} * n_;
    if (!forwarding_ && lit_[pair(su, sv)] == 0) continue;
    FABRICSIM_ASSERT(dist[su] > 0, "the lit circuits do not connect two servers (FW keeps them connected)");
    links.clear();
    if (up_[m.src] != net::kNoLink) links.push_back(up_[m.src]);
    const std::size_t first = links.size();
    std::uint32_t x = su;
    for (std::uint32_t hop = 0; x != sv; ++hop) {
      std::uint32_t choices = 0;
      for (const std::uint32_t y : out[x])
        if (dist[y] == dist[x] - 1 && (forwarding_ || y == sv)) choices += lit_[pair(x, y)];
      std::uint64_t pick = util::hash2(id, hop) % choices;
      for (const std::uint32_t y : out[x]) {
        if (dist[y] != dist[x] - 1 || (!forwarding_ && y != sv)) continue;
        if (pick < lit_[pair(x, y)]) {
          links.push_back(circuit(x, y, static_cast<std::uint32_t>(pick)));
          x = y;
          break;
        }
        pick -= lit_[pair(x, y)];
      }
    }
    route_at_[id] = static_cast<std::uint32_t>(route_links_.size());
    route_links_.push_back(static_cast<net::LinkId>(links.size() - first));  // (length, then the circuits)
    route_links_.insert(route_links_.end(), links.begin() + static_cast<std::ptrdiff_t>(first), links.end());
    if (down_[m.dst] != net::kNoLink) links.push_back(down_[m.dst]);
    // FW: hop i on channel i (any lit path is deadlock-free so); a
    // message no packet of which has left replaces its route.
    net_.pin(id, links, forwarding_ ? net::PinnedVc::PerHop : net::PinnedVc::Message,
             id >= started_.size() || started_[id] == 0);
  }
}

void OcsReconfigRun::write(stats::H5Writer& writer, const par::Comm& comm) const {
  stats::write_reconfig(writer, report_, comm.is_root());
}

void OcsReconfigRun::print() const {
  fmt::print("# {} ({}): {} decisions every {:.3f} ms, {} changed the circuits and paused every flow {:.3f} ms "
             "({:.3f} ms in all) (/reconfig)\n",
             name_, forwarding_ ? "hosts forward" : "no forwarding", report_.time_ns.size() - 1,
             static_cast<double>(epoch_.ns()) / 1e6, changes_, static_cast<double>(latency_.ns()) / 1e6,
             static_cast<double>(paused_.ns()) / 1e6);
}

std::unique_ptr<OcsReconfigRun> make_ocs_reconfig(const config::Config& cfg, const net::Topology& topo,
                                                  net::Network& network, Workload& work) {
  if (topo.kind != "topoopt" || topo.ocs_degree == 0) return nullptr;
  const std::string& how = cfg.get_string("topology.construction");
  if (cfg.get_string("network.model") == "analytic")
    throw ConfigError(fmt::format("network.model: topology.construction = \"{}\" pauses every flow while its "
                                  "circuits change, which the analytic model cannot; set network.model = "
                                  "\"packet\" or \"flow\"",
                                  how));
  if (work.global_steps() != nullptr)
    throw ConfigError(fmt::format("workload.queue: topology.construction = \"{}\" rewires the fabric for the jobs "
                                  "it was built for; a cluster queue is not supported on it (the paper runs "
                                  "OCS-reconfig and SiP-ML on one job)",
                                  how));
  if (!cfg.rows("failures").empty())
    throw ConfigError(fmt::format("{}: failures.element: topology.construction = \"{}\" switches its circuits itself; "
                                  "[[failures]] are not supported on it",
                                  cfg.rows("failures").front().origin, how));
  const double latency = reconfig_latency_ns(cfg);
  const double epoch = cfg.get_float("topology.reconfig_epoch_ns");
  if (!(latency < epoch))
    throw ConfigError(fmt::format("topology.reconfig_latency_ns: {} ns is not less than reconfig_epoch_ns = {} ns "
                                  "(a reconfiguration would not end before the next decision)",
                                  latency, epoch));
  return std::make_unique<OcsReconfigRun>(cfg, topo, network, work.planned(), work.messages_total());
}

}  // namespace fabricsim::app
