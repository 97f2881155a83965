#!/usr/bin/env bash
# The TopoOpt paper's experiment scripts (jobs/papers/topoopt/) in --quick mode:
# dedicated.py writes its CSV (one row per run, with the command) and figure,
# and the rows hold what the paper's rules imply, computed here: TopoOpt's
# cost is n d (NIC + transceiver) + 2 n d patch-panel ports + n d 1x2 switches
# + n d fibres at Table 2's prices, the optical baselines' n d (NIC +
# transceiver + OCS port + fibre); the fat tree's speed is the fastest listed
# one whose k-ary tree costs no more than that (the next listed costs more);
# the Ideal Switch is no slower than any fabric for the same model; switched
# fabrics have no bandwidth tax, TopoOpt and the Expander at least none; a
# row's command, run again, gives its iteration time; reconfig.py's pauses
# are its reconfigurations times the latency; shared.py's TopoOpt job keeps
# its time whatever runs beside it (its own shard), and a job inside one
# leaf of the 2:1 tree runs as fast as on the Ideal Switch.
#   papers_topoopt.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for script in d:dedicated a:alltoall r:reconfig s:shared; do
  out=${script%%:*} name=${script#*:}
  start=$(date +%s)
  "$python" "$src/jobs/papers/topoopt/$name.py" --quick --fabricsim "$exe" --out "$dir/$out" > "$dir/$out.txt" ||
    { cat "$dir/$out.txt"; exit 1; }
  echo "$name.py --quick: $(( $(date +%s) - start )) s"
  cat "$dir/$out.txt"
  [ -s "$dir/$out/$name.png" ] || { echo "FAIL: no $name.png"; exit 1; }
done
"$python" - "$dir/d/dedicated.csv" "$dir/a/alltoall.csv" "$dir/r/reconfig.csv" "$dir/s/shared.csv" <<'PY'
import csv, math, shlex, subprocess, sys, tempfile, os
import h5py
rows = list(csv.DictReader(open(sys.argv[1])))
a2a = list(csv.DictReader(open(sys.argv[2])))
rec = list(csv.DictReader(open(sys.argv[3])))
fails = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)
# Table 2 (spec §3.1): speed -> (transceiver, NIC, switch port); optics and fibre.
T2 = {10: (20, 185, 94), 25: (39, 185, 144), 40: (39, 354, 144), 100: (99, 678, 187), 200: (198, 815, 374)}
PP, SW12, FIBRE, OCS = 100, 25, 150, 520
SPEEDS = [10, 25, 40, 80, 100, 160, 200, 320, 400, 800, 1600]
def prices(g):
    if g > 200:
        lanes = math.ceil(g / 100)
        x, n, p = T2[100]
        return x * lanes, n * lanes, p * lanes, lanes
    row = min(s for s in T2 if s >= g)
    return T2[row] + ((2 if row == 200 else 1),)
def fat_tree_cost(hosts, g):
    k = 2
    while k ** 3 // 4 < hosts:
        k += 2
    x, n, p, lanes = prices(g)
    return hosts * (n + x) + 5 * k ** 3 // 4 * (p + x) + (hosts + k ** 3 // 2) * lanes * FIBRE
check(len(rows) == 14, "14 rows (2 models x 7 fabrics): %d" % len(rows))
for r in rows:
    n, d, b = int(r["servers"]), int(r["degree"]), int(r["gbps"])
    x, nic, _, lanes = prices(b)
    topoopt = n * d * (nic + x) + 2 * n * d * PP + n * d * SW12 + n * d * lanes * FIBRE
    cost = float(r["cost_usd"])
    if r["fabric"] in ("topoopt", "expander"):
        check(abs(cost - topoopt) < 0.01, "%s %s: cost %.0f = TopoOpt(%d, %d, %d) by Table 2 (%.0f)" % (
            r["model"], r["fabric"], cost, n, d, b, topoopt))
    if r["fabric"] in ("ocs_fw", "ocs_nofw", "sip_ml"):  # spec §3.2: d OCS ports per server, flat
        ocs = n * d * (nic + x) + n * d * OCS + n * d * lanes * FIBRE
        check(abs(cost - ocs) < 0.01, "%s %s: cost %.0f = OCS-reconfig(%d, %d, %d) by Table 2 (%.0f)" % (
            r["model"], r["fabric"], cost, n, d, b, ocs))
    if r["fabric"] == "fattree":
        g = float(r["link_gbps"])
        nxt = [s for s in SPEEDS if s > g]
        ok = fat_tree_cost(n, g) <= topoopt and (not nxt or fat_tree_cost(n, nxt[0]) > topoopt)
        check(ok and abs(cost - fat_tree_cost(n, g)) < 0.01,
              "%s fat tree at %g Gb/s costs %.0f <= TopoOpt %.0f, the next listed speed more" % (
                  r["model"], g, cost, topoopt))
    if r["fabric"] == "ideal":
        check(abs(cost - fat_tree_cost(n, d * b)) < 0.01, "%s ideal switch priced as the fat tree of d x B" % r["model"])
        best = min(float(o["iteration_ms"]) for o in rows if o["model"] == r["model"])
        check(float(r["iteration_ms"]) <= best * 1.001, "%s: the ideal switch (%.3f ms) is the fastest (%.3f ms)" % (
            r["model"], float(r["iteration_ms"]), best))
    tax = float(r["bandwidth_tax"])
    if r["fabric"] in ("ideal", "fattree"):
        check(abs(tax - 1) < 1e-12, "%s %s: bandwidth tax 1 (%.6f)" % (r["model"], r["fabric"], tax))
    else:
        check(tax >= 1, "%s %s: bandwidth tax %.3f >= 1" % (r["model"], r["fabric"], tax))
# The all-to-all study: the ratio TOPOLOGYFINDER read from each job's plan
# grows exactly with the batch (all-to-all bytes scale with it, AllReduce
# bytes do not), the alltoall never gets fewer matchings as it grows, and the
# ideal switch is the fastest at every batch.
topo = sorted((int(r["batch_per_gpu"]), float(r["alltoall_to_allreduce"]), int(r["d_mp"])) for r in a2a
              if r["fabric"] == "topoopt")
check(len(topo) == 3 and len(a2a) == 9, "alltoall: 3 batches x 3 fabrics (%d rows)" % len(a2a))
b0, r0, _ = topo[0]
check(all(abs(r / r0 - b / b0) < 1e-9 * b / b0 for b, r, _ in topo),
      "alltoall: ratio / batch constant: %s" % [(b, round(r, 6)) for b, r, _ in topo])
check(all(x[2] <= y[2] for x, y in zip(topo, topo[1:])) and topo[-1][2] > 0,
      "alltoall: d_MP grows with the batch, to %d at %d per GPU" % (topo[-1][2], topo[-1][0]))
for b, _, _ in topo:
    same = [float(r["iteration_ms"]) for r in a2a if int(r["batch_per_gpu"]) == b]
    ideal = next(float(r["iteration_ms"]) for r in a2a if int(r["batch_per_gpu"]) == b and r["fabric"] == "ideal")
    check(ideal <= min(same) * 1.001, "alltoall batch %d: the ideal switch is the fastest" % b)
# The latency sweep: each reconfiguration pauses every flow for exactly the
# latency, and the Ideal Switch stays the fastest.
check(len(rec) == 6, "reconfig: TopoOpt, Ideal and 2 latencies x FW/noFW (%d rows)" % len(rec))
ideal = next(float(r["iteration_ms"]) for r in rec if r["fabric"] == "ideal")
for r in rec:
    if r["latency_us"]:
        want = int(r["reconfigurations"]) * int(r["latency_us"]) / 1000
        check(abs(float(r["paused_ms"]) - want) < 1e-9, "reconfig %s %s us: paused %s ms = %s x the latency" % (
            r["fabric"], r["latency_us"], r["paused_ms"], r["reconfigurations"]))
    check(float(r["iteration_ms"]) >= ideal * 0.999, "reconfig %s: no faster than the Ideal Switch" % r["fabric"])
check(any(int(r["reconfigurations"]) > 0 for r in rec), "reconfig: some run rewired its circuits")
# The shared cluster (--quick: 16 servers, jobs of 4 at loads 1 and 3).
sh = list(csv.DictReader(open(sys.argv[4])))
check(len(sh) == 16, "shared: 4 fabrics x (1 + 3) jobs (%d rows)" % len(sh))
def job_row(load, fabric, job):
    return next(r for r in sh if int(r["load_jobs"]) == load and r["fabric"] == fabric and int(r["job"]) == job)
for r in sh:
    check(float(r["p99_iteration_ms"]) >= float(r["mean_iteration_ms"]) * 0.999999,
          "shared %s job %s: p99 not below the mean" % (r["fabric"], r["job"]))
    ideal = job_row(int(r["load_jobs"]), "ideal", int(r["job"]))
    check(float(r["mean_iteration_ms"]) >= float(ideal["mean_iteration_ms"]) * 0.999,
          "shared load %s %s job %s: no faster than the Ideal Switch" % (r["load_jobs"], r["fabric"], r["job"]))
# A job's shard is its own: job 0 (DLRM on servers 0-3) takes the same time alone and beside 2 other jobs.
check(job_row(1, "topoopt", 0)["mean_iteration_ms"] == job_row(3, "topoopt", 0)["mean_iteration_ms"],
      "shared: TopoOpt job 0 the same alone and among 3 jobs (its own shard)")
# The 2:1 tree at --quick has leaves of 4 servers: a job of 4 never leaves its leaf, over links of d x B,
# so it runs as on the Ideal Switch.
for load, job in ((1, 0), (3, 0), (3, 1), (3, 2)):
    check(abs(float(job_row(load, "oversub", job)["mean_iteration_ms"]) -
              float(job_row(load, "ideal", job)["mean_iteration_ms"])) < 1e-9,
          "shared load %d job %d: the 2:1 tree's leaf holds the job, as fast as the Ideal Switch" % (load, job))
# A row's command gives its time again.
r = next(r for r in rows if r["fabric"] == "topoopt")
cmd = shlex.split(r["command"])
out = os.path.join(tempfile.mkdtemp(), "again.h5")
cmd[cmd.index("-o") + 1] = out
p = subprocess.run(cmd, capture_output=True, text=True)
with h5py.File(out, "r") as f:
    again = float(f["iterations/time_ns"][()].mean()) / 1e6
check(p.returncode == 0 and abs(again - float(r["iteration_ms"])) < 1e-9,
      "the TopoOpt row's command gives %.6f ms again (%s ms)" % (again, r["iteration_ms"]))
sys.exit(1 if fails else 0)
PY
