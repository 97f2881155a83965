#!/usr/bin/env bash
# The memory estimate (`info`, engine.memory_limit_gib) against the peak a
# run measures: within a factor of 1.5 either way on fabrics where the
# simulation state, not the program, dominates (16k fat tree and 16k
# Hx2Mesh, 1 and 2 ranks, short workloads), and `info --json` reports it.
set -u
exe=$1
py=$2
mpiexec=$3
src=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
run() {  # name, ranks, config, overrides...
  local name=$1 ranks=$2 config=$3
  shift 3
  "$mpiexec" -n "$ranks" "$exe" run "$config" "$@" --set output.interval_ns=0 -o "$dir/$name.h5" > "$dir/log" 2>&1 || {
    echo "FAIL $name: run failed"; cat "$dir/log"; fail=1; return; }
  "$py" - "$dir/$name.h5" "$name" <<'PY' || fail=1
import sys, h5py
e = h5py.File(sys.argv[1], "r")["engine"].attrs
peak, est = max(e["peak_memory_bytes_per_rank"]), int(e["estimated_memory_bytes_per_rank"])
ratio = est / peak
print(f"{'ok  ' if 1 / 1.5 <= ratio <= 1.5 else 'FAIL'} {sys.argv[2]}: estimated {est / 2**20:.1f} MiB, "
      f"peak {peak / 2**20:.1f} MiB per rank (ratio {ratio:.2f})")
sys.exit(0 if 1 / 1.5 <= ratio <= 1.5 else 1)
PY
}
run fat_tree_16k_1 1 "$src/inputs/fat_tree_16k.toml" --set workload.message_bytes=8192
run fat_tree_16k_2 2 "$src/inputs/fat_tree_16k.toml" --set workload.message_bytes=8192
run hx2_large_1 1 "$src/inputs/hammingmesh_hx2_large.toml" --set workload.message_bytes=8192
json=$("$exe" info "$src/inputs/fat_tree_16k.toml" --ranks 4 --json) || { echo "FAIL info --json"; fail=1; }
printf '%s' "$json" | "$py" -c '
import json, sys
m = json.load(sys.stdin)["memory"]
# (the partitioning is freed before the network state is allocated: the larger counts)
parts = m["program"] + m["topology"] + m["routes"] + m["messages"] + max(m["network_state"], m["partitioning"])
ok = m["ranks"] == 4 and m["per_rank_bytes"] == parts and m["partitioning"] > 0 and m["limit_per_rank_bytes"] > 0
print(("ok  " if ok else "FAIL") + " info --json memory:", m)
sys.exit(0 if ok else 1)' || fail=1
exit $fail
