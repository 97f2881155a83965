#!/usr/bin/env bash
# A collective benchmark run end to end: the NCCL-style table on stdout,
# /collectives in the output (one row per size and iteration, warm-up rows
# marked, busbw = algbw x 2(n-1)/n for allreduce), the conservation checks
# of check_output.py, and the busbw plot of analysis/fabricsim_busbw.py.
#   collective_run.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$exe" run --set topology.endpoints=24 --set topology.radix=8 --set workload.kind=collective \
  --set workload.ranks=12 --set workload.placement=random --set 'workload.sizes=[48000, 960000]' \
  --set workload.iterations=2 --set workload.warmup=1 --set output.interval_ns=1000 -o "$dir/c.h5" > "$dir/out.txt"
cat "$dir/out.txt"
grep -q "^# allreduce (ring), 12 ranks (random placement), 1 warm-up + 2 timed iterations per size" "$dir/out.txt"
[ "$(grep -cE '^ +(48000|960000) +[0-9]+ +float ' "$dir/out.txt")" = 2 ] || { echo "FAIL: table rows"; exit 1; }
"$python" "$src/tests/app/check_output.py" "$dir/c.h5" 1
"$python" - "$dir/c.h5" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
c = f["collectives"]
assert c.attrs["op"] in (b"allreduce", "allreduce"), c.attrs["op"]
assert int(c.attrs["ranks"]) == 12
b, it = c["bytes"][:], c["iteration"][:]
assert list(b) == [48000] * 3 + [960000] * 3, b
assert list(it) == [-1, 0, 1] * 2, it
t = c["end_ns"][:] - c["start_ns"][:]
assert np.all(t > 0)
assert np.allclose(c["algbw_gbps"][:], b * 8 / t)
assert np.allclose(c["busbw_gbps"][:], c["algbw_gbps"][:] * 2 * 11 / 12)
# Operations follow each other per endpoint: each starts after the previous
# one started (an endpoint done early may start the next one while others
# still receive).
assert np.all(c["start_ns"][1:] > c["start_ns"][:-1])
print("PASS: /collectives")
PY
"$python" "$src/analysis/fabricsim_busbw.py" "$dir/c.h5" --png "$dir/busbw.png"
[ -s "$dir/busbw.png" ] || { echo "FAIL: no plot"; exit 1; }
echo PASS
