// File paths split into directory and name, the one way every part of
// fabricsim does it.  A bare name ("out.h5") lives in the current
// directory ("."), not in "/": that reading once made every output with a
// bare name fail for users who cannot write to "/" (issue 27).
#pragma once

#include <string>
#include <utility>

namespace fabricsim::util {

/// {directory, name}: "out.h5" -> {".", "out.h5"}, "/out.h5" -> {"/", "out.h5"},
/// "a/b/out.h5" -> {"a/b", "out.h5"}, "dir/" -> {"dir", ""}.
inline std::pair<std::string, std::string> split_file_path(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

/// The path of `name` in the directory of `path`: a bare `path` gives a
/// bare `name` (the current directory), so messages quote what the user wrote.
inline std::string beside(const std::string& path, const std::string& name) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? name : path.substr(0, slash + 1) + name;
}

}  // namespace fabricsim::util
