#include "fabricsim/util/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace fabricsim::util {

void assertion_failed(const char* expr, const char* msg, const char* file, int line) {
  std::fprintf(stderr, "fabricsim: internal error: %s (%s) at %s:%d\n", msg, expr, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace fabricsim::util
