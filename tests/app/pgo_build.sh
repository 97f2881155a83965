#!/usr/bin/env bash
# scripts/build_pgo.sh from this source tree must build a working program
# whose results are bit-identical to the plain build's: /links, /flows,
# /nodes and the /summary counters (h5diff), on a fat tree with adaptive
# routing, a leaf-spine with ECMP and a torus with VCs, at 1 and 2 ranks.
#   pgo_build.sh EXE SRC MPIEXEC
set -eu
exe=$1 src=$2 mpiexec=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pgo=$(bash "$src/scripts/build_pgo.sh" "$dir/build" 2>"$dir/build.txt") || { cat "$dir/build.txt"; echo "FAIL: build_pgo.sh"; exit 1; }
[ -x "$pgo" ] || { echo "FAIL: build_pgo.sh printed '$pgo', not a program"; exit 1; }
fail=0
compare() {
  local name=$1 ranks=$2
  shift 2
  "$exe" run "$@" -o "$dir/$name.plain.h5" > /dev/null
  "$mpiexec" -n "$ranks" "$pgo" run "$@" -o "$dir/$name.pgo.h5" > /dev/null
  bash "$src/tests/app/same_results.sh" "$dir/$name.plain.h5" "$dir/$name.pgo.h5" /links /flows /nodes/kind /nodes/name ||
    { echo "FAIL: $name"; fail=1; }
  h5dump -a /meta/build "$dir/$name.pgo.h5" | grep -q '"Release, PGO"' || { echo "FAIL: /meta/build of the PGO program"; fail=1; }
  echo "$name ($ranks rank(s)): compared"
}
compare fat_tree 1 "$src/inputs/fat_tree_1k.toml" --set workload.message_bytes=65536 --set output.interval_ns=1000
compare leaf_spine 2 "$src/inputs/leaf_spine_2048.toml" --set workload.message_bytes=16384 --set routing.algorithm=ecmp
compare torus 1 "$src/inputs/torus_small.toml" --set output.interval_ns=1000
[ "$fail" = 0 ] && echo "PASS: the PGO build gives the plain build's results"
