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
#   test_extra.sh [clang] [asan]     (default: both)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
fabricsim_ensure_packages clang
jobs=$(nproc 2>/dev/null || echo 2)
what=("$@")
[ "${#what[@]}" -gt 0 ] || what=(clang asan)
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
    *) echo "test_extra.sh: unknown job '$job' (clang, asan)" >&2; exit 2 ;;
  esac
done
