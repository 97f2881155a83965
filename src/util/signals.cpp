#include "fabricsim/util/signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <algorithm>
#include <cstring>

namespace fabricsim::util {

namespace {

// Read by the handler: only a fixed buffer and an atomic flag.
char g_path[4096];
volatile std::sig_atomic_t g_has_path = 0;
volatile std::sig_atomic_t g_report = 1;
// FABRICSIM_TEST_SLOW_REPORT (ms, read at install): the reporting process's
// handler waits that long first, as a descheduled rank 0 would
// (tests/app/interrupt.sh).
long g_slow_report_ms = 0;

void nap_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1'000'000};
  while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

// The handler's message is assembled here and written with one write(): a
// line shorter than PIPE_BUF reaches a pipe whole (a launcher torn down
// while forwarding it, as MPICH's is when it is signalled itself, cut a
// line written piece by piece after its first piece).
char g_line[sizeof(g_path) + 128];
std::size_t g_len = 0;

void put(const char* s) {
  const std::size_t n = std::min(std::strlen(s), sizeof(g_line) - 1 - g_len);
  std::memcpy(g_line + g_len, s, n);
  g_len += n;
}

void flush_line() {
  if (g_len > 0 && ::write(STDERR_FILENO, g_line, g_len) < 0) {
    // Nothing to do: stderr is gone.
  }
  g_len = 0;
}

const char* name_of(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGXCPU: return "SIGXCPU";
    default: return "a signal";
  }
}

extern "C" void on_interrupt(int sig) {
  // Async-signal-safe calls only: unlink, access, nanosleep, write, signal,
  // raise.  (Every rank of a job may get the signal: whichever removes the
  // file, rank 0 reports it gone.)
  if (g_report && g_slow_report_ms > 0) nap_ms(g_slow_report_ms);
  if (!g_report) {
    // A launcher that sees one task die kills the others: rank 0 too, if
    // its handler has not run yet (a rank descheduled for a moment), and
    // then the job's one line never comes, though the file is gone (the
    // SIGTERM that Slurm sends every task at a time limit; once in CI).
    // So the silent ranks wait first, up to 2 s, for rank 0 to remove the
    // file (it writes its line right after), or 0.2 s where there is none.
    if (g_has_path) {
      for (int i = 0; i < 200 && ::access(g_path, F_OK) == 0; ++i) nap_ms(10);
    } else {
      nap_ms(200);
    }
  }
  const bool removed = g_has_path && (::unlink(g_path) == 0 || ::access(g_path, F_OK) != 0);
  if (g_report) {
    put("error: interrupted by ");
    put(name_of(sig));
    if (removed) {
      put("; removed the unfinished output ");
      put(g_path);
    }
    put("\n");
    flush_line();
  }
  // Die of the signal itself (the shell's status is 128 + signal; a shell
  // loop running fabricsim stops on Ctrl-C, and a launcher sees a task
  // killed by it rather than one that exited).  The signal is blocked while
  // its handler runs (sa_mask), so it must be unblocked for raise() to
  // deliver it here; before, it stayed pending and _exit(128 + signal) ran
  // instead (issue 27).  _exit stays as the fallback.
  ::signal(sig, SIG_DFL);
  sigset_t self;
  sigemptyset(&self);
  sigaddset(&self, sig);
  ::sigprocmask(SIG_UNBLOCK, &self, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers() {
  if (const char* slow = std::getenv("FABRICSIM_TEST_SLOW_REPORT")) g_slow_report_ms = std::max(0L, std::atol(slow));
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU}) sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGXCPU}) sigaction(sig, &sa, nullptr);
}

void set_interrupt_cleanup(const std::string& path) {
  g_has_path = 0;
  const std::size_t n = std::min(path.size(), sizeof(g_path) - 1);
  std::memcpy(g_path, path.data(), n);
  g_path[n] = '\0';
  g_has_path = n == path.size() ? 1 : 0;  // a path too long to hold is not half-removed
}

void clear_interrupt_cleanup() { g_has_path = 0; }

void set_interrupt_reporting(bool report) { g_report = report ? 1 : 0; }

}  // namespace fabricsim::util
