#!/usr/bin/env bash
# Dragonfly groups stay whole on one rank where whole groups balance (8
# groups on 4 ranks), and the results equal the 1-rank run's.
set -u
exe=$1 py=$2 mpiexec=$3 src=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
set_args=(--set workload.message_bytes=16384 --set output.interval_ns=0)
"$mpiexec" -n 1 "$exe" run "$src/inputs/dragonfly_small.toml" "${set_args[@]}" -o "$dir/r1.h5" > /dev/null || exit 1
"$mpiexec" -n 4 "$exe" run "$src/inputs/dragonfly_small.toml" "${set_args[@]}" -o "$dir/r4.h5" > /dev/null || exit 1
bash "$src/tests/app/same_results.sh" "$dir/r1.h5" "$dir/r4.h5" /links /flows || exit 1
"$py" - "$dir/r4.h5" <<'PY'
import sys, re, h5py
f = h5py.File(sys.argv[1], "r")
names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["nodes"]["name"][:]]
rank = f["nodes"]["rank"][:]
a, p = 16, 8  # inputs/dragonfly_small.toml: routers per group, endpoints per router
ranks_of = {}
for i, n in enumerate(names):
    m = re.fullmatch(r"(router|ep)(\d+)", n)
    group = int(m.group(2)) // (a if m.group(1) == "router" else a * p)
    ranks_of.setdefault(group, set()).add(int(rank[i]))
split = [g for g, r in ranks_of.items() if len(r) > 1]
print(f"{len(ranks_of)} groups on {len(set(rank))} ranks, split: {split}")
sys.exit(1 if split or len(ranks_of) != 8 or len(set(rank)) != 4 else 0)
PY
