#include "fabricsim/config/config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "fabricsim/util/error.hpp"
#include "fabricsim/util/path.hpp"

namespace fabricsim::config {
namespace {

using util::ConfigError;

std::string position(std::string_view source, const toml::source_region& r) {
  return fmt::format("{}:{}:{}", source, r.begin.line, r.begin.column);
}

/// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 3;  // suggest only close matches
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", best);
}

std::vector<std::string> keys_of(std::string_view section) {
  std::vector<std::string> out;
  for (const auto& d : parameters())
    if (d.section == section) out.push_back(d.key);
  return out;
}

std::string format_bound(double v) {
  if (std::abs(v) < 9e15 && v == std::floor(v)) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

std::string range_text(const ParamDecl& d) {
  std::string range;
  if (d.min && d.max)
    range = fmt::format("{} {} and <= {}", d.min_exclusive ? "must be >" : "must be >=", format_bound(*d.min),
                        format_bound(*d.max));
  else if (d.min)
    range = fmt::format("{} {}", d.min_exclusive ? "must be >" : "must be >=", format_bound(*d.min));
  else
    range = fmt::format("must be <= {}", format_bound(*d.max));
  if (d.zero_allowed) range += ", or 0";
  return range;
}

void check_range(const ParamDecl& d, double v, const std::string& where) {
  if (d.zero_allowed && v == 0.0) return;
  bool low = d.min && (d.min_exclusive ? !(v > *d.min) : !(v >= *d.min));
  bool high = d.max && !(v <= *d.max);
  if (low || high || std::isnan(v))
    throw ConfigError(fmt::format("{}: {}: value {} out of range ({})", where, d.name(), format_bound(v), range_text(d)));
}

// Integers are compared and printed as integers: through a double, 2^53 + 1
// compared equal to 2^53 and 9007199254740999 printed as ...1000.
void check_range(const ParamDecl& d, std::int64_t v, const std::string& where) {
  if (d.zero_allowed && v == 0) return;
  // x >= b  <=>  x >= ceil(b);  x > b  <=>  x > floor(b);  x <= b  <=>  x <= floor(b).
  const auto at_least = [](std::int64_t x, double b) {
    return b < -9.2e18 || (b <= 9.2e18 && x >= static_cast<std::int64_t>(std::ceil(b)));
  };
  const auto more_than = [](std::int64_t x, double b) {
    return b < -9.2e18 || (b <= 9.2e18 && x > static_cast<std::int64_t>(std::floor(b)));
  };
  const auto at_most = [](std::int64_t x, double b) {
    return b > 9.2e18 || (b >= -9.2e18 && x <= static_cast<std::int64_t>(std::floor(b)));
  };
  const bool low = d.min && !(d.min_exclusive ? more_than(v, *d.min) : at_least(v, *d.min));
  const bool high = d.max && !at_most(v, *d.max);
  if (low || high)
    throw ConfigError(fmt::format("{}: {}: value {} out of range ({})", where, d.name(), v, range_text(d)));
}

const char* toml_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number with a fraction";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

[[noreturn]] void wrong_type(const ParamDecl& d, const toml::node& n, const std::string& where) {
  throw ConfigError(fmt::format("{}: {}: expected {}, got {}", where, d.name(), type_name(d), toml_type_name(n)));
}

double number_of(const ParamDecl& d, const toml::node& n, const std::string& where) {
  if (auto i = n.as_integer()) return static_cast<double>(i->get());
  if (auto f = n.as_floating_point()) return f->get();
  wrong_type(d, n, where);
}

/// Converts a TOML node to the declared type, validating it.
Value convert(const ParamDecl& d, const toml::node& n, const std::string& where) {
  switch (d.type) {
    case ParamType::Int: {
      auto i = n.as_integer();
      if (!i) wrong_type(d, n, where);
      check_range(d, static_cast<std::int64_t>(i->get()), where);
      return static_cast<std::int64_t>(i->get());
    }
    case ParamType::Float: {
      double v = number_of(d, n, where);
      check_range(d, v, where);
      return v;
    }
    case ParamType::Bool: {
      auto b = n.as_boolean();
      if (!b) wrong_type(d, n, where);
      return b->get();
    }
    case ParamType::String: {
      auto s = n.as_string();
      if (!s) wrong_type(d, n, where);
      // Empty is refused, except where it is the default (a path that may be "none").
      const auto* def = std::get_if<std::string>(&d.default_value);
      if (s->get().empty() && (def == nullptr || !def->empty()))
        throw ConfigError(fmt::format("{}: {}: must not be empty", where, d.name()));
      return std::string(s->get());
    }
    case ParamType::Enum: {
      auto s = n.as_string();
      if (!s) wrong_type(d, n, where);
      std::string v(s->get());
      if (std::find(d.choices.begin(), d.choices.end(), v) == d.choices.end())
        throw ConfigError(fmt::format("{}: {}: '{}' is not {}{}", where, d.name(), v, type_name(d),
                                      suggestion(v, d.choices)));
      return v;
    }
    case ParamType::IntList: {
      auto a = n.as_array();
      if (!a) wrong_type(d, n, where);
      std::vector<std::int64_t> out;
      for (const auto& e : *a) {
        auto i = e.as_integer();
        if (!i) wrong_type(d, e, where);
        check_range(d, static_cast<std::int64_t>(i->get()), where);
        out.push_back(i->get());
      }
      return out;
    }
    case ParamType::FloatList: {
      auto a = n.as_array();
      if (!a) wrong_type(d, n, where);
      std::vector<double> out;
      for (const auto& e : *a) {
        double v = number_of(d, e, where);
        check_range(d, v, where);
        out.push_back(v);
      }
      return out;
    }
    case ParamType::StringList: {
      auto a = n.as_array();
      if (!a) wrong_type(d, n, where);
      std::vector<std::string> out;
      for (const auto& e : *a) {
        auto s = e.as_string();
        if (!s) wrong_type(d, e, where);
        out.emplace_back(s->get());
      }
      return out;
    }
  }
  return {};
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string toml_double(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);  // shortest round-trip representation
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

void apply_table(Config& cfg, const toml::table& root, std::string_view source) {
  for (auto&& [skey, snode] : root) {
    std::string sname(skey.str());
    if (const TableArray* arr_decl = find_table_array(sname)) {
      // [[jobs]], [[failures]]: arrays of tables of declared keys.
      const toml::array* arr = snode.as_array();
      if (arr == nullptr || !arr->is_array_of_tables() || arr->empty())
        throw ConfigError(fmt::format("{}: {}: expected one or more [[{}]] tables", position(source, skey.source()),
                                      sname, sname));
      const bool jobs = arr_decl->keys_of == "workload";
      for (const auto& row_node : *arr) {
        Config::Row row;
        row.origin = position(source, row_node.source());
        for (auto&& [k, v] : *row_node.as_table()) {
          const std::string name = arr_decl->keys_of + "." + std::string(k.str());
          const ParamDecl* d = find_parameter(name);
          const std::string where = position(source, k.source());
          if (!d)
            throw ConfigError(fmt::format("{}: {}.{}: unknown key{}{}", where, sname, k.str(),
                                          jobs ? " (a job takes the keys of [workload])" : "",
                                          suggestion(k.str(), keys_of(arr_decl->keys_of))));
          if (d->run_wide)
            throw ConfigError(fmt::format("{}: {}.{}: applies to the whole run, not to one job: set {} in [{}]", where,
                                          sname, k.str(), name, arr_decl->keys_of));
          row.keys.push_back(Config::RowKey{name, convert(*d, v, position(source, v.source())), where});
        }
        cfg.add_row(sname, std::move(row));
      }
      continue;
    }
    const auto& secs = sections();
    if (std::find(secs.begin(), secs.end(), sname) == secs.end()) {
      if (!snode.is_table())
        throw ConfigError(fmt::format("{}: {}: keys must be inside a section [{}]", position(source, skey.source()),
                                      sname, fmt::join(secs, "] [")));
      throw ConfigError(fmt::format("{}: {}: unknown section{}", position(source, skey.source()), sname,
                                    suggestion(sname, secs)));
    }
    const toml::table* tbl = snode.as_table();
    if (!tbl)
      throw ConfigError(fmt::format("{}: {}: expected a table [{}]", position(source, skey.source()), sname, sname));
    for (auto&& [k, v] : *tbl) {
      std::string name = sname + "." + std::string(k.str());
      const ParamDecl* d = find_parameter(name);
      std::string where = position(source, k.source());
      if (!d)
        throw ConfigError(fmt::format("{}: {}: unknown key{}", where, name, suggestion(k.str(), keys_of(sname))));
      cfg.set(name, convert(*d, v, position(source, v.source())), where);
    }
  }
}

void apply_override(Config& cfg, const std::string& text) {
  const std::string where = fmt::format("--set {}", text);
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(fmt::format("{}: expected SECTION.KEY=VALUE", where));
  std::string name = text.substr(0, eq);
  std::string raw = text.substr(eq + 1);
  auto trim = [](std::string& s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
  };
  trim(name);
  trim(raw);
  const ParamDecl* d = find_parameter(name);
  if (!d) {
    std::vector<std::string> all;
    for (const auto& p : parameters()) all.push_back(p.name());
    throw ConfigError(fmt::format("{}: {}: unknown key{}", where, name, suggestion(name, all)));
  }
  if (const auto& secs = sections(); std::find(secs.begin(), secs.end(), d->section) == secs.end())
    throw ConfigError(fmt::format("{}: {}: a key of [[{}]] tables, which --set cannot add: write the table in the file",
                                  where, name, d->section));
  // Parse the value as TOML so that numbers, booleans and arrays follow the
  // file syntax; a bare word is taken as a string for string parameters.
  toml::table t;
  bool parsed = true;
  try {
    const std::string doc = "v = " + raw;
    t = toml::parse(std::string_view(doc), std::string_view("--set"));
  } catch (const toml::parse_error&) {
    parsed = false;
  }
  if (!parsed) {
    if (d->type == ParamType::String || d->type == ParamType::Enum) {
      t = toml::table{{"v", raw}};
    } else {
      throw ConfigError(fmt::format("{}: {}: '{}' is not {}", where, name, raw, type_name(*d)));
    }
  }
  cfg.set(name, convert(*d, *t.get("v"), where), "--set");
}

}  // namespace

std::string type_name(const ParamDecl& d) {
  switch (d.type) {
    case ParamType::Int: return "an integer";
    case ParamType::Float: return "a number";
    case ParamType::Bool: return "a boolean (true or false)";
    case ParamType::String: return "a string";
    case ParamType::Enum: {
      std::vector<std::string> q;
      for (const auto& c : d.choices) q.push_back("\"" + c + "\"");
      return fmt::format("one of {}", fmt::join(q, ", "));
    }
    case ParamType::IntList: return "an array of integers";
    case ParamType::FloatList: return "an array of numbers";
    case ParamType::StringList: return "an array of strings";
  }
  return "?";
}

std::string to_toml_value(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return fmt::format("{}", x);
        } else if constexpr (std::is_same_v<T, double>) {
          return toml_double(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return toml_string(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          return fmt::format("[{}]", fmt::join(x, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          std::vector<std::string> s;
          for (double e : x) s.push_back(toml_double(e));
          return fmt::format("[{}]", fmt::join(s, ", "));
        } else {
          std::vector<std::string> s;
          for (const auto& e : x) s.push_back(toml_string(e));
          return fmt::format("[{}]", fmt::join(s, ", "));
        }
      },
      v);
}

Config::Config() {
  for (const auto& d : parameters()) values_.emplace(d.name(), Entry{d.default_value, ""});
}

const Config::Entry& Config::entry(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error(fmt::format("parameter {} is not declared", name));
  return it->second;
}

const Value& Config::get(std::string_view name) const {
  const Entry& e = entry(name);
  e.read->store(true, std::memory_order_relaxed);
  return e.value;
}

std::vector<std::int64_t> Config::read_flags() const {
  std::vector<std::int64_t> out;
  for (const auto& d : parameters()) out.push_back(entry(d.name()).read->load(std::memory_order_relaxed) ? 1 : 0);
  return out;
}

std::vector<std::string> Config::unread_settings(const std::vector<std::int64_t>& read) const {
  std::vector<std::string> out;
  std::size_t i = 0;
  for (const auto& d : parameters()) {
    const Entry& e = entry(d.name());
    if (!e.origin.empty() && i < read.size() && read[i] == 0) out.push_back(e.origin + ": " + d.name());
    ++i;
  }
  return out;
}

template <class T>
static const T& typed(const Value& v, std::string_view name) {
  if (auto p = std::get_if<T>(&v)) return *p;
  throw std::logic_error(fmt::format("parameter {} read with the wrong type", name));
}

std::int64_t Config::get_int(std::string_view n) const { return typed<std::int64_t>(get(n), n); }
double Config::get_float(std::string_view n) const { return typed<double>(get(n), n); }
bool Config::get_bool(std::string_view n) const { return typed<bool>(get(n), n); }
const std::string& Config::get_string(std::string_view n) const { return typed<std::string>(get(n), n); }
const std::vector<std::int64_t>& Config::get_int_list(std::string_view n) const {
  return typed<std::vector<std::int64_t>>(get(n), n);
}
const std::vector<double>& Config::get_float_list(std::string_view n) const {
  return typed<std::vector<double>>(get(n), n);
}
const std::vector<std::string>& Config::get_string_list(std::string_view n) const {
  return typed<std::vector<std::string>>(get(n), n);
}
bool Config::is_set(std::string_view n) const { return !entry(n).origin.empty(); }

void Config::set(const std::string& name, Value v, std::string origin) {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error(fmt::format("parameter {} is not declared", name));
  it->second.value = std::move(v);
  it->second.origin = std::move(origin);
}

std::string Config::locate(const std::string& message) const {
  const auto colon = message.find(':');
  if (colon == std::string::npos) return message;
  const std::string name = message.substr(0, colon);
  if (values_.find(name) == values_.end()) return message;
  const std::string& origin = entry(name).origin;
  if (origin.empty()) return source_ + ": " + message;  // the default was used
  return origin + ": " + message;
}

const Config::RowKey* Config::Row::find(std::string_view name) const {
  for (const auto& k : keys)
    if (k.name == name) return &k;
  return nullptr;
}

const std::vector<Config::Row>& Config::rows(std::string_view name) const {
  static const std::vector<Row> none;
  const auto it = rows_.find(name);
  return it == rows_.end() ? none : it->second;
}

void Config::add_row(const std::string& name, Row row) { rows_[name].push_back(std::move(row)); }

Config Config::job(std::size_t j) const {
  Config c{NoDefaults{}};  // this one without the [[jobs]] (copying them per job was quadratic)
  c.values_ = values_;  // (the read flags shared: what a job reads counts here)
  c.source_ = source_;
  c.base_dir_ = base_dir_;
  for (const auto& k : rows("jobs").at(j).keys) {
    Entry& e = c.values_.at(k.name);
    e.value = k.value;
    e.origin = k.origin;
  }
  return c;
}

std::string Config::to_toml() const {
  std::string out = fmt::format("# fabricsim resolved configuration (source: {})\n", source_);
  for (const auto& sec : sections()) {
    out += fmt::format("\n[{}]\n", sec);
    for (const auto& d : parameters()) {
      if (d.section != sec) continue;
      std::string line = fmt::format("{} = {}", d.key, to_toml_value(entry(d.name()).value));  // (not a read)
      if (!d.unit.empty()) line = fmt::format("{:<40} # {}", line, d.unit);
      out += line + "\n";
    }
  }
  for (const auto& arr : table_arrays())
    for (const auto& row : rows(arr.name)) {
      out += fmt::format("\n[[{}]]\n", arr.name);
      for (const auto& k : row.keys)
        out += fmt::format("{} = {}\n", k.name.substr(k.name.find('.') + 1), to_toml_value(k.value));
    }
  return out;
}

Config load_text(std::string_view toml_text, std::string_view source_name,
                 const std::vector<std::string>& overrides) {
  Config cfg;
  cfg.set_source(std::string(source_name));
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    std::string what(e.description());
    throw ConfigError(fmt::format("{}: syntax error: {}", position(source_name, e.source()), what));
  }
  apply_table(cfg, root, source_name);
  for (const auto& o : overrides) apply_override(cfg, o);
  return cfg;
}

Config load(const std::optional<std::string>& path, const std::vector<std::string>& overrides) {
  if (!path) {
    Config cfg;
    for (const auto& o : overrides) apply_override(cfg, o);
    return cfg;
  }
  std::ifstream in(*path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open configuration file", *path));
  std::ostringstream ss;
  ss << in.rdbuf();
  Config cfg = load_text(ss.str(), *path, overrides);
  cfg.set_base_dir(util::split_file_path(*path).first);
  return cfg;
}

std::string params_markdown() {
  std::string out =
      "# Parameter reference\n\n"
      "<!-- Generated by `fabricsim params`; do not edit. A test fails when this file is stale. -->\n\n"
      "Every parameter of fabricsim, by configuration section. Set them in the TOML file\n"
      "(`[section]` then `key = value`) or on the command line with `--set section.key=value`.\n"
      "Unknown keys, wrong types and out-of-range values are rejected before anything runs.\n";
  const auto table = [&](const std::string& sec, const std::string& title, const std::string& intro) {
    out += fmt::format("\n## {}\n\n{}| Key | Type | Unit | Default | Range | Description |\n|---|---|---|---|---|---|\n",
                       title, intro);
    for (const auto& d : parameters()) {
      if (d.section != sec) continue;
      std::string range;
      if (d.type == ParamType::Enum) {
        std::vector<std::string> q;
        for (const auto& c : d.choices) q.push_back("`" + c + "`");
        range = fmt::format("{}", fmt::join(q, ", "));
      } else if (d.min || d.max) {
        std::string lo = d.min ? fmt::format("{}{}", d.min_exclusive ? "> " : ">= ", format_bound(*d.min)) : "";
        std::string hi = d.max ? fmt::format("<= {}", format_bound(*d.max)) : "";
        range = lo.empty() ? hi : (hi.empty() ? lo : lo + ", " + hi);
        if (d.zero_allowed) range += "; or 0";
      }
      const char* type = "";
      switch (d.type) {
        case ParamType::Int: type = "integer"; break;
        case ParamType::Float: type = "number"; break;
        case ParamType::Bool: type = "boolean"; break;
        case ParamType::String: type = "string"; break;
        case ParamType::Enum: type = "choice"; break;
        case ParamType::IntList: type = "integer array"; break;
        case ParamType::FloatList: type = "number array"; break;
        case ParamType::StringList: type = "string array"; break;
      }
      std::string doc = d.doc;
      std::replace(doc.begin(), doc.end(), '|', '/');
      out += fmt::format("| `{}` | {} | {} | `{}` | {} | {} |\n", d.key, type, d.unit, to_toml_value(d.default_value),
                         range, doc);
    }
  };
  for (const auto& sec : sections()) table(sec, "[" + sec + "]", "");
  for (const auto& arr : table_arrays())
    if (arr.keys_of == arr.name)  // (rows with keys of their own; [[jobs]] takes [workload]'s)
      table(arr.name, "[[" + arr.name + "]]", arr.doc + " Any number of `[[" + arr.name + "]]` tables.\n\n");
  return out;
}

}  // namespace fabricsim::config
