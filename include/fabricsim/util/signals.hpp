// Interrupted runs (SIGINT, SIGTERM, Slurm's pre-kill signal) leave no
// debris: the unfinished output file registered here is removed and the
// process dies of the signal (a shell's status 128 + its number: 130 for
// SIGINT, 143 for SIGTERM), never exit 2 (invalid configuration).  SIGKILL cannot be caught:
// what it leaves is found and reported by the next run writing the same
// file (stats::H5Writer, docs/usage.md).
#pragma once

#include <string>

namespace fabricsim::util {

/// Handlers for SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 and SIGXCPU (what
/// a batch system sends before it kills a job): remove the registered file,
/// print one line on stderr, die of the signal.
void install_interrupt_handlers();
/// The file to remove if the process is interrupted (one at a time).
void set_interrupt_cleanup(const std::string& path);
/// Nothing to remove any more (the file was renamed into place or removed).
void clear_interrupt_cleanup();
/// Whether this process prints the line (rank 0 of a run does; the others
/// clean up silently, so that one signal to a job prints one line).
void set_interrupt_reporting(bool report);

}  // namespace fabricsim::util
