#!/usr/bin/env bash
# Installs what is missing, builds everything and runs the whole test suite
# (unit, MPI, regression, analysis) through ctest.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
fabricsim_ensure_packages

build=${FABRICSIM_BUILD_DIR:-$src/build}
fabricsim_build "$src"
cd "$build"
ctest --output-on-failure --parallel "$(nproc 2>/dev/null || echo 2)" --no-label-summary "$@"
