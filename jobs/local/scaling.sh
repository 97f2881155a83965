#!/usr/bin/env bash
# Workstation recipe: run one configuration at several rank counts, check the
# results are identical, and print the run-phase time of each.
#   jobs/local/scaling.sh [CONFIG.toml] [RANKS...]      (default: inputs/fat_tree_1k.toml 1 2)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
config=${1:-$src/inputs/fat_tree_1k.toml}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
mpiexec=$(command -v mpiexec.mpich || command -v mpiexec)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
first=""
for n in "${ranks[@]}"; do
  "$mpiexec" -n "$n" "$src/build/src/fabricsim" run "$config" --set output.interval_ns=0 -o "$dir/np$n.h5" > /dev/null
  t=$(h5dump -a /engine/run_seconds "$dir/np$n.h5" | grep '(0)' | awk '{print $2}')
  same=""
  if [ -n "$first" ]; then
    h5diff -q "$dir/np$first.h5" "$dir/np$n.h5" /links /links && h5diff -q "$dir/np$first.h5" "$dir/np$n.h5" /flows /flows \
      && same="(identical to $first ranks)" || same="(DIFFERS from $first ranks)"
  else
    first=$n
  fi
  echo "ranks $n: run phase $t s $same"
done
