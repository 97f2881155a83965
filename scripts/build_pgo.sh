#!/usr/bin/env bash
# Builds a profile-guided (GCC PGO) fabricsim: an instrumented build, a few
# short training runs that cover the packet model's paths (fat trees with
# adaptive, ECMP and spray routing, leaf-spine, torus, Dragonfly,
# HammingMesh, a collective), then the optimized build from their profiles.
# Results are bit-identical to the plain Release build; the packet model
# runs faster (docs/performance.md).
#   scripts/build_pgo.sh [BUILD_DIR]      (default: build-pgo; prints the program's path)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deps.sh
source "$src/scripts/deps.sh"
fabricsim_ensure_packages >&2  # stdout carries only the program's path
build=${1:-$src/build-pgo}
mkdir -p "$build"
build=$(cd "$build" && pwd)
profile=$build/pgo-profile
jobs=$(nproc 2>/dev/null || echo 2)
configure() {
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFABRICSIM_BUILD_TESTS=OFF \
    -DFABRICSIM_BUILD_BENCHMARKS=OFF -DFABRICSIM_PGO="$1" -DFABRICSIM_PGO_DIR="$profile" >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log" >&2
    echo "build_pgo.sh: cmake configuration failed (log above)" >&2
    exit 1
  }
}
build_stage() {
  configure "$1"
  cmake --build "$build" --parallel "$jobs" --target fabricsim >"$build/build.log" 2>&1 || {
    tail -n 40 "$build/build.log" >&2
    exit 1
  }
}
echo "build_pgo.sh: 1/3 instrumented build in $build" >&2
rm -rf "$profile"
build_stage GENERATE
echo "build_pgo.sh: 2/3 training runs" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
exe=$build/src/fabricsim
train() {
  "$exe" run "$@" -o "$out/t.h5" >"$out/log" 2>&1 || {
    cat "$out/log" >&2
    echo "build_pgo.sh: training run failed: fabricsim run $*" >&2
    exit 1
  }
}
in=$src/inputs
train "$in/fat_tree_1k.toml" --set workload.message_bytes=2097152 --set network.packet_bytes=4096 --set output.interval_ns=0
train "$in/fat_tree_1k.toml" --set workload.message_bytes=262144
train "$in/fat_tree_1k.toml" --set workload.message_bytes=131072 --set routing.algorithm=ecmp
train "$in/fat_tree_1k_tapered_50.toml" --set workload.message_bytes=131072 --set workload.pattern=bisection \
  --set routing.algorithm=spray
train "$in/leaf_spine_2048.toml" --set workload.message_bytes=65536
train "$in/torus_small.toml"
train "$in/dragonfly_small.toml"
train "$in/hammingmesh_hx2_small.toml"
train "$in/collective_allreduce_1k.toml"
echo "build_pgo.sh: 3/3 optimized build" >&2
build_stage USE
echo "$exe"
