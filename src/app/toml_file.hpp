// Small helpers for reading the project's own TOML input files (custom
// graphs, DNN models): every error names the file, line and column, and
// the key.
#pragma once

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "fabricsim/util/error.hpp"

namespace fabricsim::app::toml_file {

using util::ConfigError;


inline std::string at(const std::string& file, const toml::source_region& r) {
  return fmt::format("{}:{}:{}", file, r.begin.line, r.begin.column);
}

inline const toml::table& as_table(const toml::node& n, const std::string& file, const char* what) {
  const toml::table* t = n.as_table();
  if (t == nullptr) throw ConfigError(fmt::format("{}: {}: expected a table", at(file, n.source()), what));
  return *t;
}

inline std::string get_string(const toml::table& t, const char* key, const std::string& file, const char* ctx,
                       bool required, const std::string& def = "") {
  const toml::node* n = t.get(key);
  if (n == nullptr) {
    if (required) throw ConfigError(fmt::format("{}: {}: missing `{}`", at(file, t.source()), ctx, key));
    return def;
  }
  const auto v = n->value<std::string>();
  if (!v) throw ConfigError(fmt::format("{}: {}.{}: expected a string", at(file, n->source()), ctx, key));
  return *v;
}

inline double get_number(const toml::table& t, const char* key, const std::string& file, const char* ctx, double def,
                  double min_exclusive) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return def;
  const auto v = n->value<double>();
  if (!v) throw ConfigError(fmt::format("{}: {}.{}: expected a number", at(file, n->source()), ctx, key));
  if (!(*v > min_exclusive))
    throw ConfigError(fmt::format("{}: {}.{}: {} must be greater than {}", at(file, n->source()), ctx, key, *v,
                                  min_exclusive));
  return *v;
}

inline void check_keys(const toml::table& t, const std::set<std::string>& allowed, const std::string& file,
                const char* ctx) {
  for (const auto& [k, v] : t) {
    if (allowed.count(std::string(k.str())) == 0)
      throw ConfigError(fmt::format("{}: {}.{}: unknown key", at(file, k.source()), ctx, k.str()));
  }
}


/// Reads and parses a TOML file; `what` names it in errors ("topology.file").
inline toml::table parse_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open '{}'", what, path));
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return toml::parse(ss.str(), path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}: syntax error: {}", at(path, e.source()), e.description()));
  }
}

}  // namespace fabricsim::app::toml_file
