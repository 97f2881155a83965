#!/usr/bin/env bash
# The HammingMesh paper's experiment scripts (jobs/papers/hammingmesh/) in
# --quick mode (reduced instances of every topology): each writes its CSV
# (one row per run, with the run's command and fabricsim version) and figure,
# and the rows hold what the models imply: shares of injection in (0, 1],
# the makespan share of an alltoall at most its fluid bound, the nonblocking
# fat tree's saving 1 against itself; a one-port ring on a four-port
# accelerator at most a quarter of the injection (half of the allreduce
# optimum; the HyperX's ring has two ports), the "rings" above it; DNN iterations no shorter
# than their compute.
#   papers_hammingmesh.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for s in alltoall allreduce dnn; do
  "$python" "$src/jobs/papers/hammingmesh/$s.py" --quick --fabricsim "$exe" --out "$dir" > "$dir/$s.txt" ||
    { cat "$dir/$s.txt"; exit 1; }
  tail -1 "$dir/$s.txt"
  [ -s "$dir/$s.png" ] || { echo "FAIL: no $s.png"; exit 1; }
done
# --large writes a Slurm array job, one task per topology (--no-submit: not submitted).
"$python" "$src/jobs/papers/hammingmesh/allreduce.py" --large --no-submit --fabricsim "$exe" \
  --out "$dir/large" --ntasks 4 --time 1:00:00 > "$dir/large.txt"
grep -q "not submitted" "$dir/large.txt" || { cat "$dir/large.txt"; exit 1; }
bash -n "$dir/large/large.sbatch"
grep -q '^#SBATCH --array=0-8$' "$dir/large/large.sbatch" && grep -q '^#SBATCH --ntasks=4$' "$dir/large/large.sbatch" ||
  { cat "$dir/large/large.sbatch"; exit 1; }
"$python" - "$dir" <<'PY'
import csv, math, sys
d = sys.argv[1]
rows = lambda n: list(csv.DictReader(open(f"{d}/{n}.csv")))
f = lambda r, k: float(r[k])
a = rows("alltoall")
assert {r["topology"] for r in a} == {"ft", "ft50", "ft75", "df", "hx1", "hxr", "hx2", "hx4", "torus"}, a
for r in a:
    assert r["command"].count("run ") == 1 and r["fabricsim"], r
    for k in ("global_bw_share", "makespan_share", "fluid_bound"):
        assert 0 < f(r, k) <= 1.0, (r["topology"], k, r[k])
    assert f(r, "makespan_share") <= f(r, "fluid_bound") * 1.001, (r["topology"], r["makespan_share"], r["fluid_bound"])
    # The per-accelerator share has a bound of its own (early finishers count for more).
    assert f(r, "global_bw_share") <= f(r, "per_source_bound") * 1.001, (r["topology"], r["global_bw_share"],
                                                                          r["per_source_bound"])
    assert f(r, "per_source_bound") >= f(r, "fluid_bound") * 0.999, (r["topology"], r["per_source_bound"])
ft = next(r for r in a if r["topology"] == "ft")
assert abs(f(ft, "global_saving") - 1.0) < 1e-12 and f(ft, "global_bw_share") > 0.85, ft
g = {r["topology"]: f(r, "global_bw_share") for r in a}
assert g["hx1"] > g["hx2"] > g["hx4"], g  # relative bisection 1/2, 1/4, 1/8
ar = rows("allreduce")
for r in ar:
    assert 0 < f(r, "allreduce_bw_share") <= 1.0, r
big = max(int(r["bytes"]) for r in ar)
at = {(r["topology"], r["algorithm"]): f(r, "allreduce_bw_share") for r in ar if int(r["bytes"]) == big}
for t in ("hx2", "hx4", "torus"):
    # A ring's message to its grid neighbour has one minimal first hop: one of
    # four ports, 1/4 of the injection = 1/2 of the optimum (1/2 injection).
    assert at[(t, "ring")] <= 0.25, (t, at[(t, "ring")])
    assert at[(t, "multi_ring")] > 1.5 * at[(t, "ring")], (t, at)
# On the HyperX (Hx1Mesh) both row ports lead to the row switch: two first hops.
assert at[("hx1", "ring")] <= 0.5 and at[("hx1", "multi_ring")] > at[("hx1", "ring")], at
dn = rows("dnn")
assert len(dn) == 3 * 9, len(dn)
for r in dn:
    assert f(r, "iteration_ns") >= f(r, "compute_ns") > 0 and f(r, "overhead_ns") >= 0, r
    if r["topology"] == "ft":
        assert abs(f(r, "dnn_cost_saving") - 1.0) < 1e-12, r
print(f"PASS: {len(a)} alltoall, {len(ar)} allreduce, {len(dn)} dnn rows")
PY
