#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "fabricsim/config/config.hpp"
#include "fabricsim/util/error.hpp"

using namespace fabricsim;
using config::Config;

namespace {
/// The message of the ConfigError that loading `text` throws ("" if none).
std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    config::load_text(text, "bad.toml", overrides);
  } catch (const util::ConfigError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Parameters, EveryDeclarationIsCompleteAndUnique) {
  std::set<std::string> names;
  for (const auto& d : config::parameters()) {
    EXPECT_TRUE(names.insert(d.name()).second) << d.name() << " declared twice";
    EXPECT_FALSE(d.doc.empty()) << d.name();
    const auto& secs = config::sections();
    // A section of the file, or the keys of rows ([[failures]]) that exist only as tables of an array.
    const config::TableArray* rows = config::find_table_array(d.section);
    const bool row_keys = rows != nullptr && rows->keys_of == d.section;
    EXPECT_NE(std::find(secs.begin(), secs.end(), d.section) != secs.end(), row_keys) << d.name();
    if (d.type == config::ParamType::Enum) {
      EXPECT_FALSE(d.choices.empty()) << d.name();
      const auto& def = std::get<std::string>(d.default_value);
      EXPECT_NE(std::find(d.choices.begin(), d.choices.end(), def), d.choices.end()) << d.name();
    }
    // Defaults must pass their own validation: loading an empty file works,
    // and setting each default explicitly is accepted.
    if (row_keys) {
      // (A row is checked against the topology when a run starts; loading one is enough here.)
      // A required string (failures.element) has no default to check: a value is accepted.
      const bool required = d.type == config::ParamType::String && std::get<std::string>(d.default_value).empty();
      const std::string value = required ? "\"x\"" : config::to_toml_value(d.default_value);
      EXPECT_EQ(error_of("[[" + d.section + "]]\n" + d.key + " = " + value + "\n"), "") << d.name();
      continue;
    }
    EXPECT_EQ(error_of("[" + d.section + "]\n" + d.key + " = " + config::to_toml_value(d.default_value) + "\n"), "")
        << d.name();
  }
}

TEST(Config, DefaultsWhenNothingGiven) {
  Config c = config::load_text("", "empty.toml");
  for (const auto& d : config::parameters()) {
    EXPECT_EQ(c.get(d.name()), d.default_value) << d.name();
    EXPECT_FALSE(c.is_set(d.name()));
  }
}

TEST(Config, ReadsTypedValues) {
  Config c = config::load_text("[network]\nlink_gbps = 100\nvcs = 2\n[routing]\nalgorithm = \"spray\"\n", "x.toml");
  EXPECT_DOUBLE_EQ(c.get_float("network.link_gbps"), 100.0);  // integer accepted for a number
  EXPECT_EQ(c.get_int("network.vcs"), 2);
  EXPECT_EQ(c.get_string("routing.algorithm"), "spray");
  EXPECT_TRUE(c.is_set("network.vcs"));
}

TEST(Config, UnknownKeyNamesFileLineColumnAndKey) {
  const std::string e = error_of("[network]\nlink_gbps = 100\nlink_gbsp = 3\n");
  EXPECT_EQ(e, "bad.toml:3:1: network.link_gbsp: unknown key (did you mean 'link_gbps'?)");
}

TEST(Config, UnknownSection) {
  EXPECT_EQ(error_of("\n[netwrk]\nx = 1\n"), "bad.toml:2:2: netwrk: unknown section (did you mean 'network'?)");
}

TEST(Config, WrongTypeNamesTheValuePosition) {
  EXPECT_EQ(error_of("[network]\nvcs = \"two\"\n"), "bad.toml:2:7: network.vcs: expected an integer, got a string");
  EXPECT_EQ(error_of("[network]\nvcs = 1.5\n"), "bad.toml:2:7: network.vcs: expected an integer, got a number with a fraction");
}

TEST(Config, OutOfRange) {
  EXPECT_EQ(error_of("[network]\nvcs = 0\n"), "bad.toml:2:7: network.vcs: value 0 out of range (must be >= 1 and <= 16)");
  EXPECT_EQ(error_of("[workload]\nload = 0\n"), "bad.toml:2:8: workload.load: value 0 out of range (must be > 0 and <= 1)");
}

TEST(Config, BadEnumSuggests) {
  EXPECT_EQ(error_of("[routing]\nalgorithm = \"adaptiv\"\n"),
            "bad.toml:2:13: routing.algorithm: 'adaptiv' is not one of \"ecmp\", \"spray\", \"adaptive\", \"dmodk\", "
            "\"smodk\", \"balanced_ecmp\", \"dor\", \"minimal\", \"valiant\", \"ugal_local\", \"ugal_global\" (did you mean 'adaptive'?)");
}

TEST(Config, SyntaxErrorHasPosition) {
  const std::string e = error_of("[network]\nlink_gbps = = 3\n");
  EXPECT_TRUE(std::regex_search(e, std::regex("^bad\\.toml:2:[0-9]+: syntax error: "))) << e;
}

TEST(Config, KeysOutsideSections) {
  EXPECT_EQ(error_of("seed = 3\n"),
            "bad.toml:1:1: seed: keys must be inside a section [topology] [cost] [network] [routing] [workload] [llm] [controller] [engine] [output]");
}

TEST(Config, OverridesApplyAfterTheFile) {
  Config c = config::load_text("[network]\nvcs = 2\n", "x.toml",
                               {"network.vcs=3", "routing.algorithm=adaptive", "output.file = run.h5"});
  EXPECT_EQ(c.get_int("network.vcs"), 3);
  EXPECT_EQ(c.get_string("routing.algorithm"), "adaptive");
  EXPECT_EQ(c.get_string("output.file"), "run.h5");
}

TEST(Config, BadOverrides) {
  EXPECT_EQ(error_of("", {"network.vcz=3"}), "--set network.vcz=3: network.vcz: unknown key (did you mean 'network.vcs'?)");
  EXPECT_EQ(error_of("", {"network.vcs=abc"}), "--set network.vcs=abc: network.vcs: 'abc' is not an integer");
  EXPECT_EQ(error_of("", {"network.vcs=99"}),
            "--set network.vcs=99: network.vcs: value 99 out of range (must be >= 1 and <= 16)");
  EXPECT_EQ(error_of("", {"novalue"}), "--set novalue: expected SECTION.KEY=VALUE");
}

TEST(Config, ResolvedTomlRoundTrips) {
  Config a = config::load_text("[network]\nlink_gbps = 123.25\n[output]\nfile = \"a \\\"b\\\".h5\"\n", "x.toml",
                               {"engine.seed=77"});
  const std::string text = a.to_toml();
  Config b = config::load_text(text, "resolved.toml");
  for (const auto& d : config::parameters()) EXPECT_EQ(a.get(d.name()), b.get(d.name())) << d.name();
}

TEST(Config, MarkdownListsEveryParameter) {
  const std::string md = config::params_markdown();
  for (const auto& d : config::parameters()) EXPECT_NE(md.find("| `" + d.key + "` |"), std::string::npos) << d.name();
}
