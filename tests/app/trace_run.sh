#!/usr/bin/env bash
# Trace replay (workload.kind = "trace") end to end:
# - tests/app/trace_toy.json: rank 0 computes 10 us, then sends 64 KiB to
#   rank 1, which computes 5 us once it has arrived; rank 2 computes 2.5 + 4
#   us.  The message leaves at exactly 10 us (/flows), the run ends exactly
#   5 us after it arrived, and compute is rank 0's 10 us;
# - one ALL_REDUCE node per rank takes exactly the time of the same
#   allreduce run as a collective benchmark;
# - the same trace run on 2 ranks is bit-identical;
# - bad traces are refused with file, line and key, and no output file:
#   an unmatched send, an unknown key, a dependency cycle, broken JSON.
#   trace_run.sh EXE PYTHON SRC MPIEXEC
set -eu
exe=$1 python=$2 src=$3 mpiexec=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
base=(--set topology.endpoints=32 --set topology.radix=8 --set output.progress=\"never\")
"$exe" run "${base[@]}" --set workload.kind=\"trace\" --set workload.trace=\""$src/tests/app/trace_toy.json"\" \
  -o "$dir/toy.h5" > "$dir/out.txt"
cat "$dir/out.txt"
grep -q "^# job 0: trace toy on 8 endpoints" "$dir/out.txt"
# An allreduce trace, and the same allreduce as a benchmark.
"$python" - "$dir/ar.json" <<'PY'
import json, sys
nodes = [{"id": r + 1, "rank": r, "type": "COMM_COLL_NODE", "comm_type": "ALL_REDUCE", "comm_size": 1048576}
         for r in range(8)]
json.dump({"schema": "fabricsim-trace-1", "name": "ar", "ranks": 8, "nodes": nodes}, open(sys.argv[1], "w"), indent=1)
PY
"$exe" run "${base[@]}" --set workload.kind=\"trace\" --set workload.trace=\""$dir/ar.json"\" -o "$dir/ar.h5" > /dev/null
"$exe" run "${base[@]}" --set workload.kind=\"collective\" --set workload.ranks=8 --set 'workload.sizes=[1048576]' \
  -o "$dir/coll.h5" > /dev/null
"$python" - "$dir" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
f = h5py.File(f"{d}/toy.h5", "r")
fl, it = f["flows"], f["iterations"]
assert len(fl["src"]) == 1 and fl["src"][0] == 0 and fl["dst"][0] == 1 and fl["bytes"][0] == 65536
assert fl["start_ns"][0] == 10000.0, fl["start_ns"][0]
assert it["time_ns"][0] == fl["end_ns"][0] + 5000.0, (it["time_ns"][0], fl["end_ns"][0])
assert it["compute_ns"][0] == 10000.0 and np.isclose(it["exposed_comm_ns"][0], it["time_ns"][0] - 10000.0)
assert f["jobs"]["kind"][0] in (b"trace", "trace") and f["jobs"]["endpoints"][0] == 8
a = h5py.File(f"{d}/ar.h5", "r")["iterations"]["time_ns"][0]
c = h5py.File(f"{d}/coll.h5", "r")["collectives"]
assert a == c["end_ns"][0] - c["start_ns"][0], (a, c["end_ns"][0] - c["start_ns"][0])
print(f"PASS: toy trace {it['time_ns'][0]:.2f} ns; allreduce trace {a:.2f} ns = its benchmark")
PY
"$mpiexec" -n 2 "$exe" run "${base[@]}" --set workload.kind=\"trace\" --set workload.trace=\""$dir/ar.json"\" \
  --set engine.partitioner=block -o "$dir/par.h5" > "$dir/par.txt"
grep -q "2 ranks \[partitioned\]" "$dir/par.txt" || { cat "$dir/par.txt"; echo "FAIL: not partitioned"; exit 1; }
for g in /links /flows /iterations; do
  h5diff -q "$dir/ar.h5" "$dir/par.h5" "$g" "$g" > /dev/null || { echo "FAIL: $g differs at 2 ranks"; exit 1; }
done
# Bad traces.
bad() {  # NAME SED-EXPRESSION EXPECTED-MESSAGE
  sed "$2" "$src/tests/app/trace_toy.json" > "$dir/$1.json"
  if "$exe" run "${base[@]}" --set workload.kind=\"trace\" --set workload.trace=\""$dir/$1.json"\" \
      -o "$dir/$1.h5" 2> "$dir/err.txt"; then
    echo "FAIL: $1 accepted"; exit 1
  fi
  cat "$dir/err.txt"
  grep -qF "$3" "$dir/err.txt" || { echo "FAIL: $1: expected '$3'"; exit 1; }
  [ ! -e "$dir/$1.h5" ] || { echo "FAIL: $1: output file left"; exit 1; }
}
bad unmatched 's/"comm_src": 0, "comm_size": 65536, "comm_tag": 7/"comm_src": 0, "comm_size": 65536, "comm_tag": 8/' "unmatched.json:7: node 2: send to rank 1 (tag 7) has no matching recv node there"
bad unknown 's/"duration_micros": 10}/"duration_micros": 10, "duraton": 1}/' "unknown.json:6:96: nodes[0].duraton: unknown key"
bad cycle 's/"name": "fwd",/"name": "fwd", "ctrl_deps": [2],/' "a dependency cycle runs through this node"
bad syntax 's/"ranks": 8,/"ranks": 8/' "syntax.json:5:3: expected ',' or '}' in the object"
echo PASS
