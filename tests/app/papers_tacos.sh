#!/usr/bin/env bash
# The TACOS paper's experiment scripts (jobs/papers/tacos/) in --quick mode:
# each writes its CSV (one row per run and collective, with the run's command
# and fabricsim version) and figure, and the rows hold what the paper's link
# model (alpha + beta n per link, one transfer at a time) implies, computed
# here: on the fully connected graph Direct and TACOS take 2(alpha + beta n/p)
# and Ring 2(p-1)(alpha + beta n/p), on the bidirectional ring Ring takes
# 2(p-1)(alpha + beta n/p); no algorithm beats what an NPU's links can bring
# in or send out (an NPU with d links must receive, or send, (p-1) pieces);
# TACOS-ILP, optimal, no slower than TACOS-Greedy and TACCL-like on the
# homogeneous mesh; TACOS replayed in the analytic model ends when its
# schedule says on the mesh; TACOS's Reduce takes its Broadcast's time
# (reversed on the transposed graph); the failed-NPU rows have 14 ranks and
# 14 pieces, and nothing crosses the failed NPUs' links; three tenants at
# once end no later than one after another; a row's command, run again,
# gives its time.
#   papers_tacos.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for s in motivation synthesis scalability large_messages early_termination failures collectives multitenant; do
  start=$(date +%s)
  "$python" "$src/jobs/papers/tacos/$s.py" --quick --fabricsim "$exe" --out "$dir/$s" > "$dir/$s.txt" ||
    { cat "$dir/$s.txt"; exit 1; }
  echo "$s.py --quick: $(( $(date +%s) - start )) s; $(tail -2 "$dir/$s.txt" | head -1)"
  [ -s "$dir/$s/$s.csv" ] || { echo "FAIL: no $s.csv"; exit 1; }
  [ -s "$dir/$s/$s.png" ] || { echo "FAIL: no $s.png"; exit 1; }
done
"$python" - "$dir" "$exe" <<'PY'
import csv, math, os, shlex, subprocess, sys
import h5py
d, exe = sys.argv[1], sys.argv[2]
ALPHA, GBPS = 500.0, 800.0      # ns; Gb/s: the spec's 0.5 us and 100 GB/s
BETA = 8.0 / GBPS               # ns per byte
PS = 1e-3                       # one picosecond, in ns
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


def rows(name):
    out = list(csv.DictReader(open(os.path.join(d, name, name + ".csv"))))
    for r in out:
        r["_file"] = name
    return out


def ns(r, k="time_us"):
    return float(r[k]) * 1e3


def tau(nbytes, gbps=GBPS):
    return ALPHA + nbytes * 8.0 / gbps


def link_bound(pieces, piece, links):
    """At least `pieces` pieces of `piece` bytes through `links` links, messages of at most one piece,
    each transfer alpha + beta n: some link carries ceil(pieces / links) pieces' worth."""
    return math.ceil(pieces / links) * ALPHA + BETA * piece * pieces / links


def who(r):
    """A row, briefly: its script, case and algorithm, time and command."""
    case = " ".join(r[k] for k in ("topology", "torus", "mesh", "case", "nodes", "chunks_per_npu", "mode", "op")
                    if r.get(k))
    return "%s.py: %s %s: %s us (%s)" % (r.get("_file", "?"), case, r["algorithm"], r["time_us"], r["command"])


everything = []
for name in ("motivation", "synthesis", "scalability", "large_messages", "early_termination", "failures",
             "collectives", "multitenant"):
    everything += rows(name)
for r in everything:
    check(r["command"].count(" run ") == 1 and r["fabricsim"].startswith("fabricsim"), "command/version: %s" % who(r))
    check(r["finished"] == "1" and r["bytes_delivered"] == r["bytes_injected"], "unfinished: %s" % who(r))
    check(float(r["time_us"]) > 0, "no time: %s" % who(r))

# 1. Motivation: the alpha-beta formulas (spec 7) and the degree bound.
m = rows("motivation")
for r in m:
    p, n = int(r["ranks"]), int(r["bytes"])
    t = ns(r)
    if r["topology"] == "FullyConnected":
        want = 2 * (p - 1) * tau(n / p) if r["algorithm"] == "ring" else 2 * tau(n / p)
        check(abs(t - want) < PS, "fully connected %s: %.4f ns, want %.4f" % (r["algorithm"], t, want))
    if r["topology"] == "Ring" and r["algorithm"] == "ring":
        want = 2 * (p - 1) * tau(n / p)
        check(abs(t - want) < PS, "bidirectional ring, ring: %.4f ns, want %.4f" % (t, want))
    deg = {"FullyConnected": p - 1, "Ring": 2}.get(r["topology"], 2)  # a mesh's corner has 2 links
    check(t >= link_bound(p - 1, n / p, deg) - PS, "motivation %s below the degree bound" % who(r))
check(len(m) == 9 and {r["ranks"] for r in m} == {"16"}, "motivation: 3 topologies x 3 algorithms on 16 NPUs")

# 2. Synthesis quality: ILP <= Greedy and TACCL-like on the homogeneous mesh (optimal there), the
# analytic replay of every TACOS schedule on the mesh = its schedule, the degree bound.
s = rows("synthesis")
mesh = {r["algorithm"]: r for r in s if r["topology"].startswith("Mesh")}
check(set(mesh) == {"ring", "direct", "taccl", "ilp", "greedy"}, "synthesis mesh algorithms %s" % list(mesh))
check("optimal at" in mesh["ilp"]["ilp_status"], "ILP on the 3x3 mesh not optimal: %s" % mesh["ilp"]["ilp_status"])
check(ns(mesh["ilp"]) <= ns(mesh["greedy"]) + PS, "mesh: ILP %s above Greedy %s" % (mesh["ilp"]["time_us"],
                                                                                      mesh["greedy"]["time_us"]))
check(ns(mesh["ilp"]) <= ns(mesh["taccl"]) + PS, "mesh: ILP above TACCL-like")
for a in ("taccl", "ilp", "greedy"):
    check(abs(ns(mesh[a]) - ns(mesh[a], "schedule_us")) < 2 * PS, "mesh %s: replay %s vs schedule %s" % (
        a, mesh[a]["time_us"], mesh[a]["schedule_us"]))
for r in mesh.values():
    p, n = int(r["ranks"]), int(r["bytes"])
    check(ns(r) >= link_bound(p - 1, n / p, 2) - PS, "synthesis mesh below the degree bound: %s" % who(r))
check({r["topology"] for r in s} == {"Mesh 3x3", "DragonFly 4x5", "Switch_Switch 8x4"}, "synthesis topologies")
check(all(float(r["normalized"]) >= 1 - 1e-12 for r in s) and
      all(min(float(x["normalized"]) for x in s if x["topology"] == r["topology"]) == 1.0 for r in s),
      "synthesis: normalized to the best per topology")

# 3. Scalability on Ring_FC_Switch (spec 6: per NPU one 200 GB/s ring link, three 100 GB/s fully connected
# links, and from 2 nodes one 50 GB/s scale-out link in): (p-1) pieces through at most that bandwidth.
sc = rows("scalability")
for r in sc:
    k, p, n = int(r["nodes"]), int(r["ranks"]), int(r["bytes"])
    check(p == 8 * k and n == p * int(r["chunk_bytes"]), "scalability sizes %s" % who(r))
    gbps_in = 8 * (200 + 3 * 100 + (50 if k > 1 else 0))
    check(ns(r) >= (p - 1) * (n / p) * 8 / gbps_in - PS, "scalability %s below the bandwidth bound" % who(r))
check({r["nodes"] for r in sc} == {"1", "2", "4"} and {r["algorithm"] for r in sc if r["nodes"] == "1"} ==
      {"ring", "direct", "greedy", "ilp", "taccl"}, "scalability rows")

# 4. Large messages: k pieces of 128 KiB per NPU; the corner's bound for k (p-1) pieces over 2 links.
lm = rows("large_messages")
for r in lm:
    p, k, c = int(r["ranks"]), int(r["chunks_per_npu"]), int(r["chunk_bytes"])
    check(c == 128 * 1024 and int(r["bytes"]) == p * k * c, "large messages sizes %s" % who(r))
    check(ns(r) >= link_bound(k * (p - 1), c, 2) - PS, "large messages %s below the corner bound" % who(r))
check(sorted({int(r["chunks_per_npu"]) for r in lm}) == [1, 2, 4], "large messages: 1, 2, 4 chunks")

# 5. Early termination vs time clustering: All-Gather on a torus (4 links per NPU).
et = rows("early_termination")
for r in et:
    p, n = int(r["ranks"]), int(r["bytes"])
    check(r["op"] == "allgather" and ns(r) >= link_bound(p - 1, n / p, 4) - PS, "torus %s below the bound" % who(r))
    check(r["algorithm"] != "ilp" or "optimal at" not in r["ilp_status"] or
          ns(r) <= min(ns(x) for x in et if x["torus"] == r["torus"]) + PS,
          "an optimal ILP beaten on a torus: %s" % who(r))
check({r["algorithm"] for r in et} == {"ilp", "ilp_tc", "greedy"} and
      all(r["ilp_status"] for r in et if r["algorithm"] != "greedy"), "early termination rows")

# 6. Failures: 14 live NPUs, 14 pieces; NPU 3 keeps one link (to NPU 2), so 13 pieces through it.
f = rows("failures")
failed = [r for r in f if r["failed_npus"] == "7,9"]
check(len(failed) == 3, "failed-NPU rows: %d" % len(failed))
for r in failed:
    c = int(r["chunk_bytes"])
    check(r["ranks"] == "14" and int(r["bytes"]) == 14 * c and "mesh_failed.toml" in r["command"],
          "failed-NPU row not on 14 NPUs: %s" % who(r))
    check(ns(r) >= link_bound(13, c, 1) - PS, "failed mesh below NPU 3's one-link bound: %s" % who(r))
for r in f:
    if r["failed_npus"] == "":
        check(r["ranks"] == "16" and ns(r) >= link_bound(15, int(r["chunk_bytes"]), 2) - PS, "whole mesh %s" % who(r))

# 7. Other collectives on the 6 x 6 mesh, root 2 (3 links): the root sends (broadcast, scatter) or receives
# (reduce, gather) every other piece; TACOS's Reduce is its reversed Broadcast.
oc = rows("collectives")
for r in oc:
    p, n, c = int(r["ranks"]), int(r["bytes"]), int(r["chunk_bytes"])
    pieces = n // c if r["op"] in ("broadcast", "reduce") else p - 1
    check(r["root"] == "2" and ns(r) >= link_bound(pieces, c, 3) - PS, "collectives %s below the root's bound" % who(r))
tb = {r["op"]: r for r in oc if r["algorithm"] == "greedy"}
check(set(tb) == {"broadcast", "reduce", "gather", "scatter"}, "collectives: TACOS on all four")
check(abs(ns(tb["broadcast"]) - ns(tb["reduce"])) < 2 * PS, "TACOS reduce %s != broadcast %s" % (
    tb["reduce"]["time_us"], tb["broadcast"]["time_us"]))

# 8. Multi-tenant: the concurrent makespan no later than one after another, no tenant faster than alone.
mt = rows("multitenant")
for a in ("greedy", "ring"):
    together = [r for r in mt if r["algorithm"] == a and r["mode"] == "concurrent"]
    alone = {r["op"]: r for r in mt if r["algorithm"] == a and r["mode"] == "alone"}
    check([r["op"] for r in together] == ["broadcast", "reduce", "allgather"] and len(alone) == 3, "tenants %s" % a)
    makespan = max(ns(r, "end_us") for r in together) - min(ns(r, "start_us") for r in together)
    check(makespan <= sum(ns(r) for r in alone.values()) + PS, "%s: concurrent %.1f ns above the sum" % (a, makespan))
    for r in together:
        check(ns(r) >= ns(alone[r["op"]]) - PS, "%s %s faster with the other tenants" % (a, r["op"]))


# A row's command, run again, gives its time (and, for the failed mesh, no byte on the failed NPUs' links).
def again(r, name):
    cmd = shlex.split(r["command"])
    cmd[0] = exe
    out = os.path.join(d, name + ".h5")
    cmd[cmd.index("-o") + 1] = out
    subprocess.run(cmd, check=True, capture_output=True)
    return h5py.File(out, "r")


for r, name in ((next(x for x in m if x["algorithm"] == "greedy" and x["topology"].startswith("Mesh")), "m"),
                (failed[0], "failed"), (next(x for x in mt if x["mode"] == "concurrent"), "tenants")):
    h = again(r, name)
    c = h["collectives"]
    j = int(r["job"])
    t = float(c["end_ns"][j] - c["start_ns"][j])
    check(abs(t - ns(r)) <= 1e-9 * t, "%s: again %.4f ns, the row %.4f" % (name, t, ns(r)))
    if name == "failed":
        names = [x.decode() if isinstance(x, bytes) else x for x in h["nodes"]["name"][()]]
        dead = {names.index("npu7"), names.index("npu9")}
        src, dst, tx = h["links"]["src"][()], h["links"]["dst"][()], h["links"]["tx_bytes"][()]
        touching = [i for i in range(len(src)) if int(src[i]) in dead or int(dst[i]) in dead]
        check(len(touching) == 14 and all(int(tx[i]) == 0 for i in touching),
              "failed NPUs' links carried bytes (%d links)" % len(touching))

if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok: %d rows in 8 CSVs hold the model's relations" % len(everything))
PY
