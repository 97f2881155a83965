// The registry of path controllers (two_tier.hpp): controller.algorithm's
// names and the function each one runs.
#include <string>
#include <vector>

#include "fabricsim/ctrl/two_tier.hpp"

namespace fabricsim::ctrl {

const std::vector<Controller>& controllers() {
  static const std::vector<Controller> table = {
      {"ecmp", [](const Problem& p, const Options&) { return ecmp(p); }},
      {"greedy", [](const Problem& p, const Options& o) { return greedy(p, o.greedy_order); }},
      {"edge_coloring", [](const Problem& p, const Options&) { return edge_coloring(p); }},
      {"annealing", [](const Problem& p, const Options& o) { return annealing(p, o.seed); }},
      {"ilp", [](const Problem& p, const Options& o) { return ilp(p, o.ilp_time_limit_s, o.ilp_start); }},
  };
  return table;
}

const Controller* find_controller(const std::string& name) {
  for (const Controller& c : controllers())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace fabricsim::ctrl
