// Internal consistency checks.  FABRICSIM_ASSERT is active in every build
// type: a violated invariant is a bug in fabricsim, and we would rather stop
// with a message than write wrong results.  FABRICSIM_DEBUG_ASSERT is for hot
// paths and compiles away unless NDEBUG is off.
#pragma once

namespace fabricsim::util {
[[noreturn]] void assertion_failed(const char* expr, const char* msg, const char* file, int line);
}

#define FABRICSIM_ASSERT(cond, msg)                                               \
  do {                                                                            \
    if (!(cond)) [[unlikely]]                                                     \
      ::fabricsim::util::assertion_failed(#cond, msg, __FILE__, __LINE__);        \
  } while (0)

#ifdef NDEBUG
#define FABRICSIM_DEBUG_ASSERT(cond, msg) \
  do {                                    \
  } while (0)
#else
#define FABRICSIM_DEBUG_ASSERT(cond, msg) FABRICSIM_ASSERT(cond, msg)
#endif
