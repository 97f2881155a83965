// Errors a user can cause (bad configuration, unwritable output path, ...).
// They carry a one-line message and the process exit code; the app prints
// "error: <message>" once and exits with that code.  Bugs in fabricsim use
// FABRICSIM_ASSERT instead.
#pragma once

#include <stdexcept>
#include <string>

namespace fabricsim::util {

/// Exit code for invalid configuration or command line.
inline constexpr int kExitConfigError = 2;
/// Exit code for run-time failures (I/O, resources).
inline constexpr int kExitRuntimeError = 1;

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message, int exit_code = kExitRuntimeError)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

/// An error that every rank of a run raised at the same point and agreed
/// on (the output writer's failures: a full disk, a quota): each rank
/// unwinds and exits normally, instead of the run aborting the MPI job.
class SharedError : public UserError {
 public:
  using UserError::UserError;
};

/// A configuration error: exit code 2.
class ConfigError : public UserError {
 public:
  explicit ConfigError(const std::string& message) : UserError(message, kExitConfigError) {}
};

/// `message` as the one line it is printed as: control characters (a
/// newline in a quoted TOML key, an escape in a trace's node name, which
/// messages quote) written as \n, \t, \r or \xHH, so that an error is
/// one line and a user's input cannot drive their terminal.
inline std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

}  // namespace fabricsim::util
