#include "json.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "fabricsim/util/capacity.hpp"
#include "fabricsim/util/error.hpp"

namespace fabricsim::app::json {

using util::ConfigError;

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, v] : object)
    if (k == key) return &v;
  return nullptr;
}

const char* to_string(Value::Type t) {
  switch (t) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "a boolean";
    case Value::Type::Number: return "a number";
    case Value::Type::String: return "a string";
    case Value::Type::Array: return "an array";
    case Value::Type::Object: return "an object";
  }
  return "?";
}

namespace {

// The memory limit's refusal of a file too large to read.
ConfigError too_large(const std::string& path, std::uint64_t budget, const std::string& why) {
  return ConfigError(fmt::format("engine.memory_limit_gib: reading {} would outgrow the {} the memory limit leaves the "
                                 "jobs: {}; use a smaller file, or raise engine.memory_limit_gib",
                                 path, util::human_bytes(static_cast<double>(budget)), why));
}

class Parser {
 public:
  /// `budget`: what its text (`held` bytes of it, counted) and tree may hold.
  Parser(std::string_view text, const std::string& file, std::uint64_t budget = UINT64_MAX, std::uint64_t held = 0)
      : s_(text), file_(file), budget_(budget), held_(held) {}
  std::uint64_t held() const { return held_; }  // the text and the tree so far

  Value document() {
    Value v = value(0);
    space();
    if (i_ < s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(fmt::format("{}:{}:{}: {}", file_, line_, i_ - line_start_ + 1, what));
  }

  void space() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++line_;
        line_start_ = ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else {
        break;
      }
    }
  }

  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > 64) fail("nested more than 64 levels deep");
    space();
    if (i_ >= s_.size()) fail("unexpected end of file, expected a value");
    // A value lives in its parent's array (an object's with its key): a
    // Member's bytes (136; its room beyond the size is not resident until
    // written), a long string's text, or a key's, charged apart.  A 28 MB
    // trace of 400,000 compute nodes peaked at 128 bytes a value.
    charge(sizeof(Member));
    Value v;
    v.line = static_cast<std::uint32_t>(line_);
    v.column = static_cast<std::uint32_t>(i_ - line_start_ + 1);
    const char c = s_[i_];
    if (c == '{') {
      v.type = Value::Type::Object;
      ++i_;
      space();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        space();
        if (i_ >= s_.size() || s_[i_] != '"') fail("expected a key in double quotes");
        std::string key = string();
        if (key.size() > 15) charge(key.size() + 1);
        for (const Member& m : v.object)
          if (m.key == key) fail(fmt::format("duplicate key \"{}\"", key));
        space();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':' after the key");
        ++i_;
        v.object.push_back(Member{std::move(key), value(depth + 1)});
        space();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          return v;
        }
        fail("expected ',' or '}' in the object");
      }
    }
    if (c == '[') {
      v.type = Value::Type::Array;
      ++i_;
      space();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        v.array.push_back(value(depth + 1));
        space();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          return v;
        }
        fail("expected ',' or ']' in the array");
      }
    }
    if (c == '"') {
      v.type = Value::Type::String;
      v.string = string();
      if (v.string.size() > 15) charge(v.string.size() + 1);  // (beyond the short-string buffer)
      return v;
    }
    if (literal("true")) {
      v.type = Value::Type::Bool;
      v.boolean = true;
      return v;
    }
    if (literal("false")) {
      v.type = Value::Type::Bool;
      return v;
    }
    if (literal("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      // The JSON number grammar, checked, then converted.
      const std::size_t start = i_;
      if (s_[i_] == '-') ++i_;
      const auto digits = [&] {
        const std::size_t d = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        if (i_ == d) fail("malformed number");
      };
      // int = "0" / digit1-9 *DIGIT: no leading zero ("04" is not JSON).
      if (i_ + 1 < s_.size() && s_[i_] == '0' && s_[i_ + 1] >= '0' && s_[i_ + 1] <= '9')
        fail("malformed number (a leading zero)");
      digits();
      if (i_ < s_.size() && s_[i_] == '.') {
        ++i_;
        digits();
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        ++i_;
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
        digits();
      }
      const std::string text(s_.substr(start, i_ - start));
      v.type = Value::Type::Number;
      v.number = std::strtod(text.c_str(), nullptr);
      if (!std::isfinite(v.number)) fail("number out of range");
      return v;
    }
    fail(fmt::format("unexpected character '{}'", c));
  }

  // At an opening quote: the decoded string (\uXXXX escapes as UTF-8).
  std::string string() {
    ++i_;
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated string");
      const char e = s_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) fail("bad \\u escape");
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = s_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
            else fail("bad \\u escape");
          }
          // (Surrogate pairs are kept as two 3-byte sequences: names only.)
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: fail(fmt::format("bad escape '\\{}'", e));
      }
    }
  }

  void charge(std::uint64_t bytes) {
    held_ += bytes;
    if (held_ > budget_) [[unlikely]]
      throw too_large(file_, budget_,
                      fmt::format("its text and JSON tree, read to line {}, already hold {} (a tree takes several "
                                  "times its text)",
                                  line_, util::human_bytes(static_cast<double>(held_))));
  }

  std::string_view s_;
  const std::string& file_;
  std::uint64_t budget_;
  std::uint64_t held_;
  std::size_t i_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

Value parse(std::string_view text, const std::string& file) { return Parser(text, file).document(); }

Value parse_file(const std::string& path, const std::string& key, std::uint64_t budget, std::uint64_t* held) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open '{}'", key, path));
  std::string text;
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && std::filesystem::is_regular_file(path, ec)) {
    // A regular file: read into one string of its size (a stream's copy
    // held the text twice), refused first if the text alone is too large.
    if (size > budget)
      throw too_large(path, budget, "the file alone is " + util::human_bytes(static_cast<double>(size)));
    text.resize(size);
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  } else {
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  Parser p(text, path, budget, text.size());
  Value root = p.document();
  if (held != nullptr) *held = p.held();
  return root;
}

}  // namespace fabricsim::app::json
