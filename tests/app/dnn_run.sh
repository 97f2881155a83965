#!/usr/bin/env bash
# DNN jobs end to end: two [[jobs]] on one fat tree, the per-iteration
# table on stdout, /iterations and /jobs in the output (times that add up:
# exposed = time - compute, iterations back to back), the conservation
# checks of check_output.py; a model file with an unknown key is refused
# with its file, line and key, and no output file is left.
#   dnn_run.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/run.toml" <<TOML
[topology]
kind = "fat_tree"
endpoints = 32
radix = 8
[workload]
kind = "dnn"
model = "$src/tests/app/dnn_toy_model.toml"
data_parallel = 2
pipeline_parallel = 2
tensor_parallel = 2
micro_batches = 4
iterations = 2
warmup = 1
[[jobs]]
start_ns = 0
[[jobs]]
start_ns = 5000
placement = "random"
schedule = "gpipe"
bucket_bytes = 0
TOML
"$exe" run "$dir/run.toml" -o "$dir/d.h5" > "$dir/out.txt"
cat "$dir/out.txt"
grep -q "^# job 0: toy on 8 endpoints (D 2 x P 2 x O 2, E 1), 4 micro-batches, 1f1b" "$dir/out.txt"
grep -q "^# job 1: toy on 8 endpoints (D 2 x P 2 x O 2, E 1), 4 micro-batches, gpipe" "$dir/out.txt"
"$python" "$src/tests/app/check_output.py" "$dir/d.h5" 1
"$python" - "$dir/d.h5" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
it = f["iterations"]
job, k = it["job"][:], it["iteration"][:]
assert list(job) == [0, 0, 0, 1, 1, 1], job
assert list(k) == [-1, 0, 1] * 2, k
t, c, e = it["time_ns"][:], it["compute_ns"][:], it["exposed_comm_ns"][:]
assert np.all(t > c) and np.allclose(e, t - c)
# Compute of the busiest endpoint: 4 micro-batches x 8 samples x 4 layers of
# (2000 + 4000) ns / 2 shards, plus the optimizer.
assert np.allclose(c, 4 * 8 * 4 * 6000 / 2 + 1000), c
assert np.allclose(it["forward_ns"][:] + it["backward_ns"][:] + it["optimizer_ns"][:], c)
for j in (0, 1):
    s, z = it["start_ns"][:][job == j], it["end_ns"][:][job == j]
    assert np.allclose(s[1:], z[:-1]) and np.allclose(t[job == j], z - s)
assert it["start_ns"][3] >= 5000 and it["start_ns"][0] == 0
assert np.all(it["tensor_parallel_ns"][:] > 0) and np.all(it["data_parallel_ns"][:] > 0)
jobs = f["jobs"]
assert list(jobs["endpoints"][:]) == [8, 8] and list(jobs["pipeline_parallel"][:]) == [2, 2]
print("PASS: /iterations, /jobs")
PY
# The timeline: per endpoint, compute tasks one at a time (one stream),
# their durations adding up to /iterations' compute of the busiest endpoint;
# communications within their iteration.  Then the analysis script's table,
# stacked bars and Gantt chart of one endpoint.
"$exe" run "$dir/run.toml" --set output.timeline=true -o "$dir/t.h5" > /dev/null
"$python" - "$dir/t.h5" <<'PY'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
t = f["timeline"]
names = t.attrs["phase_names"]
names = (names.decode() if isinstance(names, bytes) else names).split(",")
job, ep, it, ph = t["job"][:], t["endpoint"][:], t["iteration"][:], t["phase"][:]
a, z = t["start_ns"][:], t["end_ns"][:]
assert np.all(a >= 0) and np.all(z >= a)
compute = np.isin(ph, [names.index(n) for n in ("forward", "backward", "optimizer")])
assert np.all(np.isin(ph[~compute], [names.index(n) for n in ("data_parallel", "pipeline", "tensor_parallel")]))
its = f["iterations"]
for j in (0, 1):
    assert len(np.unique(ep[job == j])) == 8
    for k in np.unique(it[job == j]):
        row = (its["job"][:] == j) & (its["iteration"][:] == k)
        best = 0
        for e in np.unique(ep[job == j]):
            sel = (job == j) & (ep == e) & (it == k) & compute
            order = np.argsort(a[sel])
            assert np.all(a[sel][order][1:] >= z[sel][order][:-1] - 1e-6), "two compute tasks at once"
            best = max(best, (z[sel] - a[sel]).sum())
        assert np.isclose(best, its["compute_ns"][:][row][0]), (best, its["compute_ns"][:][row])
        sel = (job == j) & (it == k)
        assert z[sel].max() <= its["end_ns"][:][row][0] + 1e-6  # all of it done by the iteration's end
print("PASS: /timeline")
PY
MPLBACKEND=Agg "$python" "$src/analysis/fabricsim_dnn.py" "$dir/t.h5" "$dir/d.h5" --label a --label b \
  --bars "$dir/bars.png" --gantt "$dir/gantt.png" --job 1 > "$dir/dnn.txt"
cat "$dir/dnn.txt"
[ "$(grep -cE '^ +[01] +toy ' "$dir/dnn.txt")" = 4 ] || { echo "FAIL: table rows"; exit 1; }
[ -s "$dir/bars.png" ] && [ -s "$dir/gantt.png" ] || { echo "FAIL: no plots"; exit 1; }
if "$python" "$src/analysis/fabricsim_dnn.py" "$dir/d.h5" --gantt "$dir/g2.png" 2> "$dir/err.txt"; then
  echo "FAIL: a Gantt chart without /timeline"; exit 1
fi
grep -q "no /timeline: rerun with --set output.timeline=true" "$dir/err.txt" || { cat "$dir/err.txt"; exit 1; }
# Bad model file: one line naming file, line and key; no output file.
sed 's/^params = 250000/parms = 250000/' "$src/tests/app/dnn_toy_model.toml" > "$dir/bad.toml"
if "$exe" run "$dir/run.toml" --set workload.model="$dir/bad.toml" -o "$dir/bad.h5" 2> "$dir/err.txt"; then
  echo "FAIL: a bad model file was accepted"; exit 1
fi
cat "$dir/err.txt"
grep -q "bad.toml:15:1: layer.parms: unknown key" "$dir/err.txt" || { echo "FAIL: error message"; exit 1; }
[ ! -e "$dir/bad.h5" ] || { echo "FAIL: output file left"; exit 1; }
echo PASS
