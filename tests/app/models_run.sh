#!/usr/bin/env bash
# Every model file in inputs/models/ loads and runs one iteration of one
# sample on one endpoint, whose time must equal the model's compute per
# sample (sum of forward_ns + backward_ns over the layers, times count) plus
# its optimizer step, recomputed here from the file.
#   models_run.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in "$src"/inputs/models/*.toml; do
  "$exe" run --set topology.endpoints=16 --set topology.radix=8 --set workload.kind=dnn --set workload.model="$f" \
    --set workload.minibatch=1 --set output.interval_ns=0 -o "$dir/m.h5" > /dev/null
  "$python" - "$f" "$dir/m.h5" <<'PY'
import sys, re, h5py
text = open(sys.argv[1]).read()
total, opt = 0.0, 0.0
for block in re.split(r"^\[\[layer\]\]", text, flags=re.M)[1:]:
    get = lambda k, d=0.0: float(m.group(1)) if (m := re.search(rf"^{k}\s*=\s*([0-9.eE+_-]+)", block, re.M)) else d
    total += get("count", 1.0) * (get("forward_ns") + get("backward_ns"))
m = re.search(r"^optimizer_ns\s*=\s*([0-9.eE+_-]+)", text, re.M)
if m: opt = float(m.group(1))
t = h5py.File(sys.argv[2], "r")["iterations"]["time_ns"][0]
# Within 1 ns: each compute task's time is rounded to the picosecond.
assert abs(t - total - opt) <= 1.0, (sys.argv[1], t, total + opt)
print(f"{sys.argv[1].split('/')[-1]}: {t / 1e6:.3f} ms per sample OK")
PY
done
echo PASS
