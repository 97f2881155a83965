#!/usr/bin/env bash
# Operations that engine.end_ns stops early are marked, never measured
# (issue 19 item 3): in /collectives and /iterations an unfinished row has
# finished = 0, end_ns = -1 and NaN for every figure derived from its end
# (algbw, busbw; time, exposed communication), the finished rows keep
# theirs (algbw = bytes x 8 / (end - start)), and /jobs' mean iteration
# time averages only the finished iterations; the per-phase sums and
# /timeline never carry a never-reached end (SimTime::max()).
#   unfinished_rows.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A ring allreduce of 1 MiB on the default 64-endpoint tree takes about 64 us; 64 MiB far longer.
"$exe" run --set workload.kind=\"collective\" --set 'workload.sizes=[1048576,67108864]' --set engine.end_ns=200000 \
  -o "$dir/c.h5" > "$dir/c.txt"
grep -Eq '^ +67108864 +16777216 +float +unfinished +- +-$' "$dir/c.txt" || { cat "$dir/c.txt"; exit 1; }
# A toy DNN of three 0.9 ms iterations, stopped at 2 ms: two finish, the third does not.
dnn=(--set topology.endpoints=24 --set topology.radix=8 --set workload.kind=\"dnn\"
     --set workload.model=\""$src/tests/app/dnn_toy_model.toml"\" --set workload.data_parallel=2
     --set workload.pipeline_parallel=2 --set workload.tensor_parallel=2 --set workload.micro_batches=2
     --set workload.iterations=3)
"$exe" run "${dnn[@]}" -o "$dir/full.h5" > /dev/null
"$exe" run "${dnn[@]}" --set engine.end_ns=2000000 --set output.timeline=true -o "$dir/cut.h5" > /dev/null
"$python" - "$dir" <<'PY'
import math, sys, h5py
d = sys.argv[1]
c = h5py.File(f"{d}/c.h5", "r")["collectives"]
fin, end, start, alg, bus, by = (c[k][:] for k in ("finished", "end_ns", "start_ns", "algbw_gbps", "busbw_gbps", "bytes"))
assert list(fin) == [1, 0], list(fin)
assert end[1] == -1 and math.isnan(alg[1]) and math.isnan(bus[1]), (end, alg, bus)
assert abs(alg[0] - by[0] * 8 / (end[0] - start[0])) < 1e-9 * alg[0], (alg, by, end, start)
full = h5py.File(f"{d}/full.h5", "r")
cut = h5py.File(f"{d}/cut.h5", "r")
fi, ci = full["iterations"], cut["iterations"]
assert list(fi["finished"][:]) == [1, 1, 1] and list(ci["finished"][:]) == [1, 1, 0], list(ci["finished"][:])
assert list(ci["end_ns"][:2]) == list(fi["end_ns"][:2]) and ci["end_ns"][2] == -1
assert math.isnan(ci["time_ns"][2]) and math.isnan(ci["exposed_comm_ns"][2])
# No figure of the cut iteration may come from a never-reached end: each
# per-phase sum stays within the time simulated, and the timeline's rows
# are either complete intervals or -1.
for k in ("forward_ns", "backward_ns", "optimizer_ns", "data_parallel_ns", "pipeline_ns", "tensor_parallel_ns",
          "alltoall_ns"):
    assert 0 <= ci[k][2] <= 2000000, (k, ci[k][:])
tl = cut["timeline"]
ts, te = tl["start_ns"][:], tl["end_ns"][:]
assert ((te == -1) | ((te >= ts) & (ts >= 0) & (te <= 2000000))).all(), (ts.max(), te.max())
assert (te == -1).any(), "the cut run should leave unfinished timeline rows"
mean = cut["jobs"]["mean_iteration_ns"][0]
assert abs(mean - (fi["time_ns"][0] + fi["time_ns"][1]) / 2) < 1e-6, (mean, fi["time_ns"][:])
print(f"PASS: unfinished collective and iteration rows flagged; mean of the finished {mean / 1e3:.2f} us")
PY
