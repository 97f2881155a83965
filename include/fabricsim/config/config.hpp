// Run configuration: every parameter of fabricsim is declared exactly once
// (parameters.cpp) with its name, unit, default, documentation and
// validation.  A Config holds the resolved value of every declared parameter
// after the TOML file and the --set overrides were applied; nothing else can
// be in it, so unknown keys, wrong types and out-of-range values are caught
// before anything runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <utility>
#include <vector>

namespace fabricsim::config {

enum class ParamType { Int, Float, Bool, String, Enum, IntList, FloatList, StringList };

using Value = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                           std::vector<double>, std::vector<std::string>>;

struct ParamDecl {
  std::string section;
  std::string key;
  ParamType type = ParamType::Int;
  std::string unit;  ///< "ns", "bytes", "Gb/s", ... or "" for dimensionless
  Value default_value;
  std::string doc;
  std::optional<double> min;  ///< inclusive lower bound (numbers, list elements)
  std::optional<double> max;  ///< inclusive upper bound
  bool min_exclusive = false; ///< lower bound is exclusive
  bool zero_allowed = false;  ///< 0 (meaning "off") is valid besides [min, max]
  bool run_wide = false;      ///< a workload key for the whole run: refused inside a [[jobs]] table
  std::vector<std::string> choices;  ///< for Enum

  std::string name() const { return section + "." + key; }
};

/// An array of tables (`[[name]]`): each table a row of keys.  Its keys are
/// the parameters of section `keys_of`: for [[jobs]] the [workload] keys
/// (a job's values over [workload]'s), for [[failures]] a section of its
/// own that exists only as rows (not as a [failures] table).
struct TableArray {
  std::string name;
  std::string keys_of;
  std::string doc;
};
const std::vector<TableArray>& table_arrays();
const TableArray* find_table_array(std::string_view name);

/// The declaration table: the single place where parameters are declared.
const std::vector<ParamDecl>& parameters();
/// The configuration sections, in output order.
const std::vector<std::string>& sections();
/// Declaration of `section.key`, or nullptr.
const ParamDecl* find_parameter(std::string_view name);

/// Renders a value as TOML text.
std::string to_toml_value(const Value& v);
/// A readable type name ("integer", "number", "boolean", "string", "one of ...").
std::string type_name(const ParamDecl& d);

class Config {
 public:
  /// A configuration holding every default.
  Config();

  std::int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  bool get_bool(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;  ///< String and Enum
  const std::vector<std::int64_t>& get_int_list(std::string_view name) const;
  const std::vector<double>& get_float_list(std::string_view name) const;
  const std::vector<std::string>& get_string_list(std::string_view name) const;
  const Value& get(std::string_view name) const;

  /// Whether the user gave the value (file or --set) rather than the default.
  bool is_set(std::string_view name) const;
  void set(const std::string& name, Value v, std::string origin);
  /// For an error message that starts with a parameter name ("topology.x:
  /// ..."), the message prefixed with where that value was given
  /// ("FILE:LINE:COL: " or "--set: "), or "SOURCE: " for a default; other
  /// messages unchanged.  Used for errors found after loading (a builder
  /// rejecting a combination of values), so they too name file and line.
  std::string locate(const std::string& message) const;

  /// Which parameters the program has read (get, get_int, ...; not is_set
  /// or to_toml), in parameters() order, 1 for read: the reads of copies and
  /// of job() configurations count for the configuration they came from.
  /// For combining over processes (element-wise maximum) before
  /// unread_settings.
  std::vector<std::int64_t> read_flags() const;
  /// Parameters the user set (file, --set) whose flag in `read` (as
  /// read_flags gives, maybe combined) is 0: each as "ORIGIN: NAME", in
  /// parameters() order.  A run warns about them: they changed nothing.
  std::vector<std::string> unread_settings(const std::vector<std::int64_t>& read) const;

  /// The resolved configuration as TOML text (every parameter, with units as
  /// comments); loading it back gives the same configuration.
  std::string to_toml() const;
  /// Where the configuration came from: a file path or "(built-in default scenario)".
  const std::string& source() const { return source_; }
  void set_source(std::string s) { source_ = std::move(s); }
  /// Multi-job runs: the configuration of `[[jobs]]` table j (< job_count()):
  /// this configuration with the table's `workload` keys (any `workload.*`
  /// key, written without the section) set over it.  Made on demand: a run
  /// of many jobs keeps each table's few keys, not a whole configuration
  /// per job (19 KB each: 1.3 GiB for 70,000 queued jobs).
  Config job(std::size_t j) const;
  std::size_t job_count() const { return rows("jobs").size(); }
  /// One row of an array of tables: its keys (full names) as given.
  struct RowKey {
    std::string name;
    Value value;
    std::string origin;  ///< "FILE:LINE:COL"
  };
  struct Row {
    std::vector<RowKey> keys;
    std::string origin;  ///< where the row's table starts
    /// The row's value of `name`, or nullptr if the row does not set it.
    const RowKey* find(std::string_view name) const;
  };
  /// The rows of array `name` ([[jobs]], [[failures]]), in file order.
  const std::vector<Row>& rows(std::string_view name) const;
  /// Appends a row to array `name` (its keys validated by the caller).
  void add_row(const std::string& name, Row row);
  /// Directory that relative paths in the configuration are resolved against.
  const std::string& base_dir() const { return base_dir_; }
  void set_base_dir(std::string d) { base_dir_ = std::move(d); }

 private:
  struct Entry {
    Value value;
    std::string origin;  // "" for default, else "FILE:LINE:COL" or "--set"
    // Set by the first read; shared by the copies of this configuration.
    std::shared_ptr<std::atomic<bool>> read = std::make_shared<std::atomic<bool>>(false);
  };
  struct NoDefaults {};
  explicit Config(NoDefaults) {}
  const Entry& entry(std::string_view name) const;
  std::map<std::string, Entry, std::less<>> values_;
  // Arrays of tables, by name: each row's keys (full names), in file order.
  std::map<std::string, std::vector<Row>, std::less<>> rows_;
  std::string source_ = "(built-in default scenario)";
  std::string base_dir_ = ".";
};

/// Loads a configuration: defaults, then the TOML file (if any), then each
/// "section.key=value" override in order.  Throws util::ConfigError whose
/// message is "FILE:LINE:COL: section.key: what is wrong".
Config load(const std::optional<std::string>& path, const std::vector<std::string>& overrides);
/// Same, from TOML text; `source_name` is used in error messages.
Config load_text(std::string_view toml_text, std::string_view source_name,
                 const std::vector<std::string>& overrides = {});

/// Markdown reference of every parameter (docs/params.md is this text).
std::string params_markdown();

}  // namespace fabricsim::config
