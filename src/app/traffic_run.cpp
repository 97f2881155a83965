// workload.kind = "traffic": synthetic traffic patterns, posted up front.
#include <memory>

#include "fabricsim/workload/traffic.hpp"
#include "scenario.hpp"
#include "workload.hpp"

namespace fabricsim::app {
namespace {

class TrafficRun final : public Workload {
 public:
  TrafficRun(const config::Config& cfg, net::Network& network) : net_(network), params_(traffic_params(cfg)) {}
  std::vector<workload::PlannedMessage> planned() const override {
    return workload::plan_traffic(params_, net_.topology(), net_.params());
  }
  void start() override { traffic_ = std::make_unique<workload::TrafficWorkload>(net_, params_); }
  std::uint64_t messages_total() const override { return traffic_->messages_total(); }
  void report(const par::Comm&, bool) override {}  // (its results are the network's: /flows, /links)
  void write(stats::H5Writer&, const par::Comm&) const override {}
  void print() const override {}

 private:
  net::Network& net_;
  workload::TrafficParams params_;
  std::unique_ptr<workload::TrafficWorkload> traffic_;
};

}  // namespace

std::unique_ptr<Workload> make_traffic(const config::Config& cfg, net::Network& network) {
  return std::make_unique<TrafficRun>(cfg, network);
}

}  // namespace fabricsim::app
