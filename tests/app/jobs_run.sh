#!/usr/bin/env bash
# Several jobs on one fabric: two collective benchmarks and a DNN job as
# [[jobs]] tables on a nonblocking fat tree.  Jobs get disjoint endpoints
# (linear placement: consecutive leaves), so each collective, whose traffic
# stays on its own leaves, must take exactly its time alone; /collectives
# has a job column, /jobs a row per job of either kind, /iterations the DNN
# job's rows only.  The same run on 2 ranks is bit-identical.  A [[jobs]]
# table of another kind is refused naming its file, line and job.
#   jobs_run.sh EXE PYTHON SRC MPIEXEC
set -eu
exe=$1 python=$2 src=$3 mpiexec=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
head='[topology]
kind = "fat_tree"
endpoints = 32
radix = 8
[routing]
algorithm = "adaptive"
[output]
interval_ns = 2000
[workload]
kind = "collective"
ranks = 8
sizes = [262144, 1048576]
iterations = 2'
cat > "$dir/jobs.toml" <<TOML
$head
[[jobs]]
algorithm = "ring"
[[jobs]]
algorithm = "bidirectional_ring"
start_ns = 3000
[[jobs]]
kind = "dnn"
model = "$src/tests/app/dnn_toy_model.toml"
data_parallel = 2
pipeline_parallel = 2
tensor_parallel = 2
micro_batches = 2
TOML
echo "$head" > "$dir/solo.toml"
"$exe" run "$dir/jobs.toml" -o "$dir/jobs.h5" > "$dir/out.txt"
cat "$dir/out.txt"
grep -q "^# job 0: allreduce (ring), 8 ranks (linear placement)" "$dir/out.txt"
grep -q "^# job 1: allreduce (bidirectional_ring), 8 ranks (linear placement)" "$dir/out.txt"
grep -q "^# job 2: toy on 8 endpoints (D 2 x P 2 x O 2, E 1)" "$dir/out.txt"
"$exe" run "$dir/solo.toml" -o "$dir/solo.h5" > /dev/null
"$python" "$src/tests/app/check_output.py" "$dir/jobs.h5" 1
"$python" - "$dir/jobs.h5" "$dir/solo.h5" <<'PY'
import sys, h5py, numpy as np
f, solo = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
c = f["collectives"]
job = c["job"][:]
assert list(job) == [0] * 4 + [1] * 4, job
assert "op" not in c.attrs  # several jobs: per-row columns only
alg = [a.decode() for a in c["algorithm"][:]]
assert alg == ["ring"] * 4 + ["bidirectional_ring"] * 4, alg
assert list(c["ranks"][:]) == [8] * 8
s = solo["collectives"]
for k in ("start_ns", "end_ns", "busbw_gbps"):
    assert np.array_equal(c[k][:][job == 0], s[k][:]), (k, c[k][:], s[k][:])
assert c["start_ns"][4] >= 3000  # job 1 starts at its start_ns
# Job 1 moves the same bytes over the same leaves both ways round: faster
# than the ring alone on large sizes, never slower than half its busbw.
bw = c["busbw_gbps"][:]
assert bw[6] > 0.5 * bw[2], bw
j = f["jobs"]
kinds = [k.decode() for k in j["kind"][:]]
assert kinds == ["collective", "collective", "dnn"], kinds
assert [m.decode() for m in j["model"][:]] == ["", "", "toy"]
assert [o.decode() for o in j["op"][:]] == ["allreduce", "allreduce", ""]
assert list(j["endpoints"][:]) == [8, 8, 8]
assert set(f["iterations"]["job"][:].tolist()) == {2}
# Disjoint endpoints: the flows of each job stay among its own 8.
fl = f["flows"]
src, dst = fl["src"][:], fl["dst"][:]
assert np.all((src // 8) == (dst // 8)), "a flow crosses jobs"
assert sorted(set((src // 8).tolist())) == [0, 1, 2]
print("PASS: /collectives, /jobs, /iterations of three jobs")
PY
# The busbw script draws one line per collective job.
MPLBACKEND=Agg "$python" "$src/analysis/fabricsim_busbw.py" "$dir/jobs.h5" --png "$dir/busbw.png" > "$dir/bw.txt"
cat "$dir/bw.txt"
[ "$(grep -c '^# job [01]: fat_tree allreduce' "$dir/bw.txt")" = 2 ] || { echo "FAIL: busbw curves"; exit 1; }
[ -s "$dir/busbw.png" ] || { echo "FAIL: no plot"; exit 1; }
"$mpiexec" -n 2 "$exe" run "$dir/jobs.toml" --set engine.partitioner=block -o "$dir/par.h5" > "$dir/par.txt"
grep -q "2 ranks \[partitioned\]" "$dir/par.txt" || { cat "$dir/par.txt"; echo "FAIL: not a partitioned run"; exit 1; }
for g in /links /flows /collectives /jobs /iterations; do
  h5diff -q "$dir/jobs.h5" "$dir/par.h5" "$g" "$g" > /dev/null || { echo "FAIL: $g differs at 2 ranks"; exit 1; }
done
# A [[jobs]] table of another kind: refused with file, line and job.
printf '%s\n[[jobs]]\nranks = 4\n[[jobs]]\nkind = "traffic"\n' "$head" > "$dir/bad.toml"
if "$exe" run "$dir/bad.toml" -o "$dir/bad.h5" 2> "$dir/err.txt"; then echo "FAIL: traffic job accepted"; exit 1; fi
cat "$dir/err.txt"
grep -q "bad.toml:17:1: workload.kind: a \[\[jobs\]\] table runs a dnn, collective or trace job.*(job 1)" "$dir/err.txt" ||
  { echo "FAIL: error message"; exit 1; }
[ ! -e "$dir/bad.h5" ] || { echo "FAIL: output file left"; exit 1; }
echo PASS
