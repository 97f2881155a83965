#!/usr/bin/env bash
# The two further CI jobs of issue 19, after scripts/test.sh's Release suite:
#   clang  Clang build of every target with warnings as errors
#          (FABRICSIM_WERROR, preset clang-werror, build-clang/), unit tests run;
#   asan   AddressSanitizer + UBSan build (FABRICSIM_SANITIZE, preset asan,
#          build-asan/): the unit tests, the MPI-labelled tests and the
#          bad-input corpus and fuzz tests.
# Left out under the sanitizers: app_memory_estimate (it compares measured
# peaks with the estimate, and ASan's shadow memory inflates the peak), the
# PGO build (a Release-only test) and the np3 bit-identity runs (the same
# code as np2, 1-2 minutes each when oversubscribed under ASan).
#   user   as root (CI): a copy of the tree built and its app and analysis
#          tests run as the unprivileged user `nobody` (issue 27: a bare
#          output name failed for every user but root, and CI, running as
#          root, never saw it); as another user it does nothing more, since
#          scripts/test.sh already ran everything as that user.
#   test_extra.sh [clang] [asan] [user]     (default: all three)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
fabricsim_ensure_packages clang
jobs=$(nproc 2>/dev/null || echo 2)
what=("$@")
[ "${#what[@]}" -gt 0 ] || what=(clang asan user)
cd "$src"
for job in "${what[@]}"; do
  case "$job" in
    clang)
      echo "== clang: Clang, warnings as errors"
      cmake --preset clang-werror > /dev/null
      cmake --build build-clang --parallel "$jobs"
      (cd build-clang && ctest --parallel "$jobs" --output-on-failure --no-label-summary -L unit)
      ;;
    asan)
      echo "== asan: AddressSanitizer + UBSan"
      cmake --preset asan > /dev/null
      cmake --build build-asan --parallel "$jobs"
      export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
      export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
      (cd build-asan && ctest --parallel "$jobs" --output-on-failure --no-label-summary \
        -L "unit|mpi" -E "np3|pgo|memory_estimate|slurm")
      (cd build-asan && ctest --parallel "$jobs" --output-on-failure --no-label-summary -R "app_bad|app_fuzz")
      ;;
    user)
      echo "== user: app and analysis tests as an unprivileged user"
      if [ "$(id -u)" -ne 0 ]; then
        echo "(not root: scripts/test.sh ran every test as $(id -un) already)"
        continue
      fi
      user=nobody
      work=$(mktemp -d /tmp/fabricsim-user.XXXXXX)
      trap 'rm -rf "$work"' EXIT
      # The tree as a user's clone holds it (no build outputs), owned by the
      # user, in a directory the user can reach.
      mkdir "$work/src"
      tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$work/src" -xf -
      chown -R "$user" "$work"
      chmod 755 "$work"
      as_user=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups
               env HOME="$work" USER="$user" LOGNAME="$user")
      "${as_user[@]}" cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
        -DFABRICSIM_BUILD_BENCHMARKS=OFF > /dev/null
      # The app and analysis tests run the fabricsim executable and Python only.
      "${as_user[@]}" cmake --build "$work/build" --parallel "$jobs" --target fabricsim
      # (input_*: `info` and partitioning of the shipped inputs, no files written;
      # app_full_disk needs root to mount and skips itself.)
      (cd "$work/build" && "${as_user[@]}" ctest --parallel "$jobs" --output-on-failure --no-label-summary \
        -L "app|analysis" -E "^input_|app_full_disk")
      rm -rf "$work"
      trap - EXIT
      ;;
    *) echo "test_extra.sh: unknown job '$job' (clang, asan, user)" >&2; exit 2 ;;
  esac
done
