#!/usr/bin/env bash
# Installs what is missing, builds everything and runs the whole test suite
# (unit, MPI, regression, analysis) through ctest.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
fabricsim_ensure_packages "${FABRICSIM_TEST_PACKAGES[@]}"

build=${FABRICSIM_BUILD_DIR:-$src/build}
fabricsim_build "$src"
cd "$build"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
ctest --output-on-failure --parallel "$(nproc 2>/dev/null || echo 2)" --no-label-summary "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
# ctest lists skipped tests after its summary; repeat the summary so that it
# is the last line.
echo
grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1
exit "$rc"
