#!/usr/bin/env bash
# From a fresh clone to a finished simulation: installs what is missing,
# builds fabricsim (Release), runs the built-in default scenario on 2 MPI
# ranks and plots the result.  Safe to run again; fast when already built.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
fabricsim_ensure_packages

build=${FABRICSIM_BUILD_DIR:-$src/build}
fabricsim_build "$src" --target fabricsim >/dev/null

results=${FABRICSIM_RESULTS_DIR:-$src/results}
mkdir -p "$results"
h5="$results/quickstart.h5"
png="$results/quickstart.png"
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)

echo "== fabricsim: default scenario on 2 MPI ranks"
"$mpiexec" -n 2 "$build/src/fabricsim" run --output "$h5"
echo
echo "== analysis"
/usr/bin/python3 "$src/analysis/fabricsim_report.py" "$h5" --png "$png" | grep -v '^plot: '
echo
echo "HDF5 result: $h5"
echo "PNG plot:    $png"
