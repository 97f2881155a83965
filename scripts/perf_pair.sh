#!/usr/bin/env bash
# A/B timing of two fabricsim binaries on a noisy shared machine.
#   scripts/perf_pair.sh BIN_A BIN_B [PAIRS] [-- extra `fabricsim run` arguments]
#
# Runs A and B at the same time, one per core (taskset), swapping the cores
# after every pair, on the packet benchmark of docs/performance.md (1k fat
# tree, permutation, 16 MiB messages, 4 KiB packets).  Both runs of a pair see
# the same neighbours on the shared cache and memory bus, so the ratio of
# their run phases is far steadier than run-to-run wall time (which varies by
# up to 50% here).  Prints every pair's run phases and B/A, then the median
# ratio and how many pairs had B faster.  An A/A pairing of one binary spreads
# about +-5% around 1.0, so judge changes by the median over 8 or more pairs.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ $# -lt 2 ]]; then
  sed -n '2,3p' "${BASH_SOURCE[0]}" | sed 's/^# //' >&2
  exit 2
fi
a=$1
b=$2
shift 2
pairs=8
if [[ $# -gt 0 && $1 != -- ]]; then
  pairs=$1
  shift
fi
[[ $# -gt 0 && $1 == -- ]] && shift
for bin in "$a" "$b"; do
  [[ -x $bin ]] || { echo "perf_pair.sh: $bin: not an executable" >&2; exit 2; }
done
(( $(nproc) >= 2 )) || { echo "perf_pair.sh: needs two cores" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

one() {  # core binary tag [args]: prints the run phase in seconds
  taskset -c "$1" "$2" run "$src/inputs/bench_fat_tree_1k.toml" --set workload.message_bytes=16777216 \
    --set network.packet_bytes=4096 --set output.interval_ns=0 "${@:4}" -o "$tmp/$3.h5" 2>&1 |
    sed -nE 's/.* in ([0-9.]+) s run phase.*/\1/p'
}

for ((i = 0; i < pairs; ++i)); do
  ca=$((i % 2))
  cb=$((1 - ca))
  one "$ca" "$a" a "$@" >"$tmp/a" &
  one "$cb" "$b" b "$@" >"$tmp/b"
  wait
  ta=$(cat "$tmp/a")
  tb=$(cat "$tmp/b")
  [[ -n $ta && -n $tb ]] || { echo "perf_pair.sh: a run failed" >&2; exit 1; }
  echo "$ta $tb"
done | awk '{ r = $2 / $1; printf "A %.3f s  B %.3f s  B/A %.3f\n", $1, $2, r; ratio[NR] = r; if (r < 1) faster++ }
  END { sort_ratios(ratio, NR); printf "median B/A %.3f over %d pairs; B faster in %d\n", ratio[int((NR + 1) / 2)], NR, faster + 0 }
  function sort_ratios(v, n,   i, j, t) { for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t } }'
