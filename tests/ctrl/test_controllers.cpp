// The controller registry and controller.algorithm's declared choices name
// the same algorithms ("none" besides), so a controller added to one and
// not the other fails here, not in a user's run.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fabricsim/config/config.hpp"
#include "fabricsim/ctrl/two_tier.hpp"

namespace fabricsim::ctrl {
namespace {

TEST(Controllers, RegistryMatchesTheDeclaredChoices) {
  const config::ParamDecl* d = config::find_parameter("controller.algorithm");
  ASSERT_NE(d, nullptr);
  std::set<std::string> declared(d->choices.begin(), d->choices.end());
  ASSERT_EQ(declared.erase("none"), 1u);
  std::set<std::string> registered;
  for (const Controller& c : controllers()) {
    EXPECT_TRUE(registered.insert(c.name).second) << c.name << " registered twice";
    EXPECT_EQ(find_controller(c.name), &c);
  }
  EXPECT_EQ(registered, declared);
  EXPECT_EQ(find_controller("none"), nullptr);
}

TEST(Controllers, EveryEntryPlansAValidAssignment) {
  // Two ToRs, two spines, one flow each way: every controller gives each a
  // spine and a max load of 1 (its two links are distinct).
  Problem p;
  p.tors = 2;
  p.spines = 2;
  Commodity a;
  a.src_tor = 0;
  a.dst_tor = 1;
  Commodity b;
  b.src_tor = 1;
  b.dst_tor = 0;
  b.src_nic = 1;
  b.dst_nic = 2;
  p.commodities = {a, b};
  for (const Controller& c : controllers()) {
    const Assignment x = c.plan(p, Options{});
    ASSERT_EQ(x.spine.size(), 2u) << c.name;
    for (const auto s : x.spine) EXPECT_TRUE(s == 0 || s == 1) << c.name;
    EXPECT_EQ(x.max_load, max_load(p, x.spine)) << c.name;
    EXPECT_EQ(x.max_load, 1u) << c.name;
  }
}

}  // namespace
}  // namespace fabricsim::ctrl
