// TopoOpt's OCS-reconfig and SiP-ML baselines at run time (spec
// ../shared/spec/topoopt.md §2.3, §4.6): a fabric holding every possible
// circuit (topology.construction = "ocs_reconfig", "ocs_reconfig_nofw",
// "sip_ml"; net::ServerFabricParams::ocs_degree) whose lit circuits
// Algorithm 5 (ctrl/ocs_reconfig.hpp) chooses, at power-on from the whole
// job's traffic, then every topology.reconfig_epoch_ns from the bytes not
// yet sent.  A change pauses every flow for topology.reconfig_latency_ns
// (Network::pause_flows), switches the circuits (Network::switch_links),
// routes again and lets the flows go on.  Each epoch is a global step
// (par::GlobalSteps): the decision is a function of every rank's
// contribution, the same on any rank count.
//
// Routing.  FW (ocs_reconfig): host forwarding over the lit circuits; each
// message between servers is pinned (route store) to a shortest path of
// lit circuits, picked among the shortest by a hash of its id and hop, and
// pinned again when a change darkens its route.  noFW (ocs_reconfig_nofw,
// sip_ml): pinned to a lit direct circuit; a message without one waits
// (Network::hold_unroutable) for a decision that lights one.  Either way a
// pinned hop spreads over every circuit lit between its two servers
// (Network::spread_pinned_hops): L circuits carry a flow at L x B.
//
// Models.  The flow model pauses every flow.  The packet model stops the
// NICs; packets already on their way go on, and the circuits switch once
// none is left in the fabric (re-checked every microsecond past the
// latency; the pause recorded in /reconfig is the real one).  FW routes are
// pinned hop i on channel i (deadlock-free over any lit path, needs
// network.vcs >= the longest route's links).  What the decision needs
// from every rank (bytes not yet sent, packets in flight, messages started
// and finished since the last step) comes in its contribution, so that
// routes are pinned, and replaced rather than versioned while a message
// has not started, alike on any rank count.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "fabricsim/config/config.hpp"
#include "fabricsim/ctrl/ocs_reconfig.hpp"
#include "fabricsim/net/network.hpp"
#include "fabricsim/par/comm.hpp"
#include "fabricsim/par/conservative.hpp"
#include "fabricsim/stats/h5_writer.hpp"
#include "fabricsim/stats/run_output.hpp"
#include "workload.hpp"

namespace fabricsim::app {

class OcsReconfigRun final : public par::GlobalSteps {
 public:
  /// `planned`: every message of the run (the power-on circuits are
  /// Algorithm 5 on their bytes between servers); `messages_total`: the
  /// messages a complete run delivers (the epochs stop when all have).
  OcsReconfigRun(const config::Config& cfg, const net::Topology& topo, net::Network& network,
                 const std::vector<workload::PlannedMessage>& planned, std::uint64_t messages_total);

  /// The circuit links dark at power-on, ascending (the link schedule's
  /// time-0 rows).
  std::vector<net::LinkId> power_on_down() const;

  /// engine.control_latency_ns, at most an epoch (the run's windows on one
  /// rank; the epochs are known up front, so no request waits on it).
  core::SimTime delay() const override { return delay_; }
  void start(par::RecordExchange& requests) override;
  std::vector<std::int64_t> contribute(core::SimTime t) override;
  void apply(core::SimTime t, const std::vector<std::int64_t>& all, const std::vector<std::int64_t>& counts) override;

  /// /reconfig and /reconfig_links (collective).
  void write(stats::H5Writer& writer, const par::Comm& comm) const;
  /// Its summary line (rank 0).
  void print() const;
  const stats::ReconfigReport& report() const { return report_; }

 private:
  std::size_t pair(std::uint32_t u, std::uint32_t v) const { return std::size_t{u} * n_ + v; }
  net::LinkId circuit(std::uint32_t u, std::uint32_t v, std::uint32_t k) const { return circuits_[pair(u, v) * d_ + k]; }
  /// Lights exactly `want[p]` circuits of each pair p (slots 0..want-1):
  /// the links to switch off and on.
  void plan_switch(const std::vector<std::uint32_t>& want);
  /// Rows of /reconfig for a decision (and /reconfig_links if it changed).
  void record(core::SimTime t, double demand, std::uint32_t waiting, const ctrl::OcsReconfigResult& r, bool changed);
  std::vector<std::uint32_t> wanted(const ctrl::OcsReconfigResult& r) const;
  void install();
  /// Pins every message between servers whose route is not all lit (FW: a
  /// shortest lit path; noFW: a lit direct circuit, if any).
  void pin_routes();
  void lit_distances();

  net::Network& net_;
  const net::Topology& topo_;
  std::uint32_t n_ = 0, d_ = 0;
  bool forwarding_ = true;
  ctrl::OcsReconfigOptions options_;
  core::SimTime epoch_, latency_, delay_;
  std::string name_;
  std::vector<net::LinkId> circuits_;    // (u * n + v) * d + k: circuit k from server u to v
  std::vector<std::uint32_t> lit_;       // per pair: circuits lit (slots 0..lit-1)
  std::vector<std::uint32_t> server_;    // per endpoint: its server
  std::vector<net::LinkId> up_, down_;   // per endpoint: its link to / from its server (kNoLink: it is the server)
  std::vector<std::int32_t> dist_;       // (dst * n + v): lit hops from v to dst
  // FW: per message, its pinned circuits (offsets into route_links_).
  std::vector<std::uint32_t> route_at_;  // UINT32_MAX: none; kInsideServer: its intra-server route
  static constexpr std::uint32_t kInsideServer = UINT32_MAX - 1;
  std::vector<net::LinkId> route_links_;
  std::vector<std::int64_t> power_on_demand_;
  std::uint64_t messages_total_ = 0;
  par::RecordExchange* requests_ = nullptr;
  core::SimTime next_epoch_ = core::SimTime::max();
  core::SimTime install_at_ = core::SimTime::max();
  std::vector<std::uint32_t> want_;  // the pending change
  std::size_t pending_row_ = 0;      // its /reconfig row
  bool drain_ = false;               // packet model: switch once no packet is in flight
  // Per message: started (a packet or byte left its NIC) and finished
  // (delivered, or failed), as every rank learnt them at the steps so
  // far; what this rank reported already (bit 0 started, bit 1 finished).
  std::vector<std::uint8_t> started_, finished_, reported_;
  std::uint64_t finished_count_ = 0;
  std::vector<net::LinkId> off_, on_;
  bool done_ = false;
  stats::ReconfigReport report_;
  core::SimTime paused_;  // summed pauses
  std::uint32_t changes_ = 0;
};

/// The run's reconfiguration controller, or null when the topology is no
/// optical TopoOpt fabric.  util::ConfigError for the analytic model, a workload that takes global steps of its own (a cluster
/// queue), [[failures]] rows, or a latency not below the epoch.
std::unique_ptr<OcsReconfigRun> make_ocs_reconfig(const config::Config& cfg, const net::Topology& topo,
                                                  net::Network& network, Workload& work);

}  // namespace fabricsim::app
