#!/usr/bin/env bash
# Workstation recipe: run one configuration at several rank counts, check the
# results are identical, and print the run-phase time of each.
#   [SET="--set k=v ..."] jobs/local/scaling.sh [CONFIG.toml] [RANKS...]   (default: inputs/fat_tree_1k.toml 1 2)
# FABRICSIM (the binary), MPIEXEC and PYTHON (one with h5py, for the
# comparison where h5diff is missing) override the defaults.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${FABRICSIM:-$src/build/src/fabricsim}
py=${PYTHON:-/usr/bin/python3}
config=${1:-$src/inputs/fat_tree_1k.toml}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
first=""
for n in "${ranks[@]}"; do
  # shellcheck disable=SC2086
  $mpiexec -n "$n" "$exe" run "$config" --set output.interval_ns=0 ${SET:-} -o "$dir/np$n.h5" > /dev/null
  "$py" - "$dir/np$n.h5" "$n" ${first:+"$dir/np$first.h5" "$first"} <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
e, s = f["engine"].attrs, f["summary"].attrs
run = float(e["run_seconds"])
line = (f"ranks {sys.argv[2]}: run phase {run:.3f} s, {float(s['events']) / run / 1e6:.2f} M events/s, "
        f"{float(s['packet_hops']) / run / 1e6:.2f} M packet-hops/s, "
        f"peak {max(e['peak_memory_bytes_per_rank']) / 2**20:.0f} MiB per rank"
        + (f", {int(e['windows'])} windows" if "windows" in e else ""))
if len(sys.argv) > 3:
    g = h5py.File(sys.argv[3], "r")
    def same(a, b):
        if isinstance(a, h5py.Group):
            return isinstance(b, h5py.Group) and sorted(a) == sorted(b) and all(same(a[k], b[k]) for k in a)
        return isinstance(b, h5py.Dataset) and a.shape == b.shape and np.array_equal(a[()], b[()])
    ok = all((k in f) == (k in g) and (k not in f or same(f[k], g[k]))
             for k in ("links", "flows", "iterations", "collectives"))
    line += f" ({'identical to' if ok else 'DIFFERS from'} {sys.argv[4]} ranks)"
print(line, flush=True)
PY
  [ -n "$first" ] || first=$n
done
