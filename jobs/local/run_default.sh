#!/usr/bin/env bash
# Workstation recipe: run a configuration with MPICH's launcher.
#   jobs/local/run_default.sh [CONFIG.toml] [RANKS] [OUTPUT.h5]
# fabricsim is built with MPICH; mpiexec.mpich avoids picking up Open MPI's
# mpiexec on machines that have both.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
config=${1:-$src/inputs/default.toml}
ranks=${2:-2}
out=${3:-$src/results/$(basename "${config%.toml}").h5}
mkdir -p "$(dirname "$out")"
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)
exec "$mpiexec" -n "$ranks" "$src/build/src/fabricsim" run "$config" --output "$out"
