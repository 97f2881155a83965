#!/usr/bin/env bash
# CI's jobs besides the README's test command (.ci/run runs them):
#   sanitized  one Clang build of every target with warnings as errors
#              (FABRICSIM_WERROR) and AddressSanitizer + UBSan
#              (FABRICSIM_SANITIZE), preset clang-asan, build-clang-asan/:
#              the unit tests, the MPI-labelled tests and the bad-input
#              corpus and fuzz tests.  (Until 2026-12-02 two builds, a
#              Clang -Werror Release build and a GCC sanitized one, each of
#              every target: one build now does both; docs/install.md,
#              "CI's time".)
#              Left out under the sanitizers: app_memory_estimate (it
#              compares measured peaks with the estimate, and ASan's shadow
#              memory inflates the peak), the PGO build (a Release-only test)
#              and the np3 bit-identity runs (the same code as np2, 1-2
#              minutes each when oversubscribed under ASan).
#   suite      the README's test command, scripts/test.sh (the Release build
#              and the whole suite).  As root (CI) it runs as the
#              unprivileged user `nobody`, on a copy of the tree that user
#              owns (with .git, no build outputs), as a user's clone is
#              held: issue 27, a bare output name failed for every user but
#              root, and CI, running as root, never saw it.  Then root runs, in that
#              build, the two tests that need root and skip themselves
#              otherwise (the Slurm job, the full disk).  As another user it
#              is scripts/test.sh.
#   test_extra.sh [suite] [sanitized]     (default: both)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
jobs=$(nproc 2>/dev/null || echo 2)
what=("$@")
[ "${#what[@]}" -gt 0 ] || what=(suite sanitized)
cd "$src"
for job in "${what[@]}"; do
  case "$job" in
    suite)
      if [ "$(id -u)" -ne 0 ]; then
        bash scripts/test.sh
        continue
      fi
      echo "== suite: the Release build and the whole suite as an unprivileged user"
      # Installed by root first: as the user, test.sh could not.
      fabricsim_ensure_packages "${FABRICSIM_TEST_PACKAGES[@]}"
      user=nobody
      work=$(mktemp -d /tmp/fabricsim-user.XXXXXX)
      trap 'rm -rf "$work"' EXIT
      mkdir "$work/src"
      tar -C "$src" --exclude='./build*' -cf - . | tar -C "$work/src" -xf -
      chown -R "$user" "$work"
      chmod 755 "$work"
      as_user=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups
               env HOME="$work" USER="$user" LOGNAME="$user")
      rc=0
      "${as_user[@]}" bash "$work/src/scripts/test.sh" || rc=$?
      echo "== suite: the tests that need root (they skipped themselves above)"
      (cd "$work/src/build" && ctest --output-on-failure --no-label-summary \
        -R "^(slurm_batch_job|app_full_disk)$") || rc=1
      rm -rf "$work"
      trap - EXIT
      [ "$rc" -eq 0 ] || exit "$rc"
      ;;
    sanitized)
      echo "== sanitized: Clang, warnings as errors, AddressSanitizer + UBSan"
      fabricsim_ensure_packages clang
      cmake --preset clang-asan > /dev/null
      cmake --build build-clang-asan --parallel "$jobs"
      export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
      export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
      (cd build-clang-asan && ctest --parallel "$jobs" --output-on-failure --no-label-summary \
        -L "unit|mpi" -E "np3|pgo|memory_estimate|slurm")
      (cd build-clang-asan && ctest --parallel "$jobs" --output-on-failure --no-label-summary -R "app_bad|app_fuzz")
      ;;
    *) echo "test_extra.sh: unknown job '$job' (suite, sanitized)" >&2; exit 2 ;;
  esac
done
