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
# Bad model file: one line naming file, line and key; no output file.
sed 's/^params = 250000/parms = 250000/' "$src/tests/app/dnn_toy_model.toml" > "$dir/bad.toml"
if "$exe" run "$dir/run.toml" --set workload.model="$dir/bad.toml" -o "$dir/bad.h5" 2> "$dir/err.txt"; then
  echo "FAIL: a bad model file was accepted"; exit 1
fi
cat "$dir/err.txt"
grep -q "bad.toml:15:1: layer.parms: unknown key" "$dir/err.txt" || { echo "FAIL: error message"; exit 1; }
[ ! -e "$dir/bad.h5" ] || { echo "FAIL: output file left"; exit 1; }
echo PASS
