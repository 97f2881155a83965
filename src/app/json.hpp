// A small JSON reader for the project's own JSON inputs (execution traces):
// the whole document as a tree of values, each knowing its line and column,
// so that every error can name the file, line and key.  No dependency on a
// JSON library (Debian has none among the project's build dependencies).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricsim::app::json {

struct Member;

struct Value {
  enum class Type : std::uint8_t { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  /// In file order.  Not std::pair<std::string, Value>: a pair of the
  /// incomplete Value inside Value is rejected by clang with libstdc++ 12.
  std::vector<Member> object;
  std::uint32_t line = 0, column = 0;

  /// The member `key` of an object, or nullptr.
  const Value* find(std::string_view key) const;
};

struct Member {
  std::string key;
  Value value;
};

const char* to_string(Value::Type t);

/// Parses `text`; ConfigError "file:line:column: message" on bad syntax
/// (duplicate object keys included).
Value parse(std::string_view text, const std::string& file);

/// Reads and parses a file; ConfigError naming `key` if it cannot be read,
/// and naming engine.memory_limit_gib once its text and tree would hold more
/// than `budget` bytes (a tree takes several times its text: a trace larger
/// than the machine is refused while it is read, not killed by the system).
/// `held`: where to put what the text and tree were charged.
Value parse_file(const std::string& path, const std::string& key, std::uint64_t budget = UINT64_MAX,
                 std::uint64_t* held = nullptr);

}  // namespace fabricsim::app::json
