#!/usr/bin/env bash
# The vClos paper's experiment scripts (jobs/papers/vclos/) in --quick mode:
# each writes its CSV (one row per run, with the run's command, its mix's
# job_mix.py command and the fabricsim version), its figure and its mixes,
# and the rows hold what must hold, computed here: JCT = JWT + JRT; the
# row's means, percentiles and refusals are those of /jobs (the runs kept
# with --keep, read here with h5py, not with the scripts' metrics module);
# whole_server schemes are never refused for the network and never place a
# job as a virtual Clos, vClos never places one over leaves unisolated, an
# ideal switch is one leaf; every scheme of a group runs the same mix; a
# job inside one server or one leaf has exactly Best's run time in every
# scheme (nothing shares its links), and Best's mean JRT is no larger than
# any other scheme's; a vClos job reserves l x s distinct leaf-spine pairs
# (l leaves, s spines, l s its GPUs) and holds s GPUs under each of its
# leaves, and no two jobs hold a GPU or (vClos) a leaf-spine pair at once;
# an OCS-vClos job holds one optical circuit per rank, on its GPU's leaf,
# and no two jobs hold a leaf's port (circuit slot) at once, counting the
# reconfiguration delay; balanced ECMP runs in the flow model only;
# the testbed's trace has the paper's sizes, collectives and models; the
# packet model (--packet, 1/100 scale, next to the flow model) keeps these
# relations; a row's
# command, run again, gives the same /jobs and numbers.
#   papers_vclos.sh EXE PYTHON SRC
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # NAME SCRIPT ARGS...: run SCRIPT --quick into $dir/NAME
  local name=$1 s=$2
  shift 2
  start=$(date +%s)
  "$python" "$src/jobs/papers/vclos/$s.py" --quick --fabricsim "$exe" --out "$dir/$name" "$@" > "$dir/$name.txt" ||
    { cat "$dir/$name.txt"; exit 1; }
  echo "$s.py --quick $*: $(( $(date +%s) - start )) s; $(tail -2 "$dir/$name.txt" | head -1)"
  [ -s "$dir/$name/$s.csv" ] || { echo "FAIL: no $name/$s.csv"; exit 1; }
  [ -s "$dir/$name/$s.png" ] || { echo "FAIL: no $name/$s.png"; exit 1; }
}
run fragmentation fragmentation --keep
run schemes schemes --keep
run packet schemes --keep --packet
run testbed testbed --keep
"$python" - "$dir" "$exe" <<'PY'
import csv, glob, os, re, shlex, subprocess, sys
import h5py
import numpy as np
d, exe = sys.argv[1], sys.argv[2]
fails = []
REL = 1e-9


def check(ok, what):
    if not ok:
        fails.append(what)


def close(a, b, rel=REL, abs_=1e-9):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def rows(name, script):
    out = list(csv.DictReader(open(os.path.join(d, name, script + ".csv"))))
    for r in out:
        r["_name"] = name
    return out


def f(r, k):
    return float(r[k])


def who(r):
    return "%s: %s %s ia %s ms (%s)" % (r["_name"], r["cluster"] + ("/%sx%s" % (r["leaves"], r["spines"])
                                                                       if r.get("leaves") else ""),
                                        r["scheme"], r["interarrival_ms"], r["command"])


def h5_of(r):
    return r["command"].split(" -o ")[1].strip().strip("'")


def mix_of(r):
    return shlex.split(r["command"])[2]


def sets(r):
    """The command's --set overrides, {key: value as written}."""
    w = shlex.split(r["command"])
    return dict(w[i + 1].split("=", 1) for i in range(len(w) - 1) if w[i] == "--set")


def jobs_of(path):
    with h5py.File(path, "r") as h:
        j = h["jobs"]
        out = {k: j[k][()] for k in ("arrival_ns", "start_ns", "end_ns", "endpoints", "reserved", "refused_gpus",
                                     "refused_network", "virtual_leaves", "virtual_spines", "circuits_switched")}
        out["stage"] = np.array([x.decode() if isinstance(x, bytes) else x for x in j["stage"][()]])
        p = h["placement"]
        out["placement"] = {k: p[k][()] for k in p.keys()}
        names = [x.decode() if isinstance(x, bytes) else x for x in h["nodes"]["name"][()]]
        src, dst = h["links"]["src"][()], h["links"]["dst"][()]
        leaf = {}
        for s_, t_ in zip(src, dst):
            a, b = names[s_], names[t_]
            if a.startswith("ep") and b.startswith("leaf"):
                leaf[int(a[2:])] = int(b[4:])
        out["leaf_of"] = leaf
        out["spines"] = sum(1 for n in names if n.startswith("spine"))
    return out


def own_metrics(j):
    """The row's numbers, computed here from /jobs (ms)."""
    jwt = (j["start_ns"] - j["arrival_ns"]) / 1e6
    jrt = (j["end_ns"] - j["start_ns"]) / 1e6
    jct = (j["end_ns"] - j["arrival_ns"]) / 1e6
    return {"mean_jwt_ms": jwt.mean(), "mean_jrt_ms": jrt.mean(), "mean_jct_ms": jct.mean(),
            "median_jct_ms": np.percentile(jct, 50), "p99_jct_ms": np.percentile(jct, 99),
            "refused_gpus": int(j["refused_gpus"].sum()), "refused_network": int(j["refused_network"].sum())}


fr = rows("fragmentation", "fragmentation")
sc = rows("schemes", "schemes")
pk = rows("packet", "schemes")
tb = rows("testbed", "testbed")
everything = fr + sc + pk + tb
check(len(fr) == 6 and len(sc) == 7 and len(pk) == 13 and len(tb) == 8,
      "rows: fragmentation %d (want 3 loads x 2), schemes %d, packet %d (7 flow, 6 packet), testbed %d" % (
          len(fr), len(sc), len(pk), len(tb)))
jobs = {}
for r in everything:
    check(r["command"].count(" run ") == 1 and r["fabricsim"].startswith("fabricsim"), "command/version: %s" % who(r))
    check(r["mix_command"].count("job_mix.py") == 1 and r["mix_command"].endswith(mix_of(r)),
          "the mix command does not write the run's mix: %s" % who(r))
    check(r["finished"] == r["jobs"] and int(r["jobs"]) > 0, "unfinished jobs: %s" % who(r))
    # JCT = JWT + JRT, per job and so in the means
    check(close(f(r, "mean_jct_ms"), f(r, "mean_jwt_ms") + f(r, "mean_jrt_ms")), "JCT != JWT + JRT: %s" % who(r))
    check(f(r, "mean_jwt_ms") >= 0 and f(r, "median_jct_ms") <= f(r, "p99_jct_ms"), "order: %s" % who(r))
    check(0 < f(r, "gpu_utilization") <= 1, "utilization %s: %s" % (r["gpu_utilization"], who(r)))
    # the scheme's placements and refusals
    placed = {s: int(r["placed_" + s]) for s in ("server", "leaf", "vclos", "servers", "ocs_spine", "ocs_clos")}
    check(sum(placed.values()) == int(r["jobs"]), "placed %s: %s" % (placed, who(r)))
    ocs_placed = placed["ocs_spine"] + placed["ocs_clos"]
    if r["scheme"] == "vclos":
        check(placed["servers"] == 0 and ocs_placed == 0, "vClos placed a job over leaves unisolated: %s" % who(r))
        check(sets(r).get("workload.scheduler") == '"vclos"', "vClos row without the vclos scheduler: %s" % who(r))
    elif r["scheme"] in ("ocs", "releax"):
        check(placed["servers"] == 0 and placed["vclos"] == 0, "OCS-vClos placed a job off circuits: %s" % who(r))
        check(sets(r).get("workload.scheduler") == '"ocs_vclos"' and "topology.ocs_switches" in sets(r),
              "OCS-vClos row without the ocs_vclos scheduler or the optical layer: %s" % who(r))
        releax = sets(r).get("workload.ocs_whole_servers") == "false"
        check(releax == (r["scheme"] == "releax"), "OCS-Releax is OCS-vClos without whole servers: %s" % who(r))
        # Whole servers reserve whole servers (or, within one, the job's GPUs); Releax its GPUs exactly.
        j0 = jobs_of(h5_of(r))
        check(bool(np.all(j0["reserved"] == j0["endpoints"])) if releax else bool(np.all(j0["reserved"] >= j0["endpoints"])),
              "reserved GPUs against the job's: %s" % who(r))
    else:
        check(int(r["refused_network"]) == 0 and placed["vclos"] == 0 and ocs_placed == 0,
              "whole_server refused for the network or placed a virtual Clos: %s" % who(r))
        check(sets(r).get("workload.scheduler") == '"whole_server"', "whole_server row: %s" % who(r))
    if r["scheme"] in ("ocs", "releax"):
        check(close(float(sets(r).get("workload.ocs_reconfig_ns", "nan")), 50e6 * float(r.get("scale") or 1)),
              "OCS-vClos reconfiguration not 50 ms at the mix's scale: %s" % who(r))
    if r["scheme"] == "recmp":
        check(sets(r).get("topology.spines") == str(int(r["spines"]) * 3 // 2) and r["cluster"] == "testbed32"
              and sets(r).get("routing.algorithm") == '"ecmp"', "rECMP row without 1.5x the uplinks: %s" % who(r))
    if r["scheme"] == "becmp":
        check(r["model"] == "flow" and sets(r).get("routing.algorithm") == '"balanced_ecmp"',
              "balanced ECMP row: %s" % who(r))
    if r["scheme"] == "best":
        check(placed["servers"] == 0 and sets(r).get("topology.kind") == '"ideal_switch"',
              "Best is not one switch: %s" % who(r))
    if "lambda_equivalent_s" in r:
        check(close(f(r, "lambda_equivalent_s"), 40 * f(r, "interarrival_ms")), "lambda mapping: %s" % who(r))

    # the row against /jobs of its kept run
    j = jobs[id(r)] = jobs_of(h5_of(r))
    own = own_metrics(j)
    for k, v in own.items():
        check(close(float(r[k]), float(v), 1e-6), "%s %s, /jobs gives %s: %s" % (k, r[k], v, who(r)))
    check(len(j["end_ns"]) == int(r["jobs"]), "jobs in /jobs: %s" % who(r))
    # no two jobs hold a GPU at once; a vClos job's leaf-spine pairs and GPUs
    p = j["placement"]
    ej, ep = p["endpoint_job"], p["endpoint"]
    for e in np.unique(ep):
        js = np.sort(ej[ep == e])
        iv = sorted((j["start_ns"][x], j["end_ns"][x]) for x in js)
        check(all(iv[i][1] <= iv[i + 1][0] for i in range(len(iv) - 1)), "GPU %d held twice at once: %s" % (e, who(r)))
    lj, lf, ls = p["link_job"], p["leaf"], p["spine"]
    for x in np.nonzero(j["stage"] == "vclos")[0]:
        l, s = int(j["virtual_leaves"][x]), int(j["virtual_spines"][x])
        pairs = set(zip(lf[lj == x].tolist(), ls[lj == x].tolist()))
        leaves = {a for a, _ in pairs}
        check(l * s == int(j["reserved"][x]) and len(pairs) == l * s == int(np.sum(lj == x)) and len(leaves) == l
              and len({b for _, b in pairs}) == s, "vClos job %d: %d x %d, pairs %d: %s" % (x, l, s, len(pairs), who(r)))
        held = [j["leaf_of"][int(e)] for e in ep[ej == x]]
        check(set(held) == leaves and all(held.count(a) == s for a in leaves),
              "vClos job %d's GPUs are not s = %d under each of its leaves %s: %s" % (x, s, sorted(leaves), who(r)))
    ocs_jobs = np.nonzero(np.char.startswith(j["stage"].astype(str), "ocs_"))[0]
    for x in ocs_jobs:
        held = [j["leaf_of"][int(e)] for e in ep[ej == x]]
        check(lf[lj == x].tolist() == held, "OCS-vClos job %d: circuits %s, not one per rank on its GPU's leaf %s: %s"
              % (x, lf[lj == x].tolist(), held, who(r)))
    if len(lj):
        # vClos: a leaf-spine pair per job; OCS-vClos: a leaf's port (slot), held from the placement
        # (the start less the reconfiguration, ocs_reconfig_ns, when it switched any).
        reconfig = float(sets(r).get("workload.ocs_reconfig_ns", 50e6))
        placed_ns = j["start_ns"] - np.where(j["circuits_switched"] > 0, reconfig, 0.0)
        per_switch = j["spines"] // int(sets(r).get("topology.ocs_switches", 1))  # a slot is a port of (leaf, switch)
        key = {}
        for x, a, b, c in zip(lj.tolist(), lf.tolist(), ls.tolist(), p["slot"].tolist()):
            key.setdefault((a, b // per_switch, c) if x in ocs_jobs else (a, b), []).append(x)
        for pair, js in key.items():
            iv = sorted((placed_ns[x], j["end_ns"][x]) for x in js)
            check(all(iv[i][1] <= iv[i + 1][0] for i in range(len(iv) - 1)),
                  "leaf-spine pair or leaf port %s reserved by two jobs at once: %s" % (pair, who(r)))


def groups(rs, keys):
    out = {}
    for r in rs:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


# Every scheme of a group runs the same mix; Best against the others.
for name, rs, keys in (("fragmentation", fr, ("interarrival_ms",)), ("schemes", sc, ("cluster", "interarrival_ms")),
                       ("packet", pk, ("cluster", "interarrival_ms", "model")), ("testbed", tb, ())):
    for k, g in groups(rs, keys).items():
        check(len({r["mix_command"] for r in g}) == 1, "%s %s: the schemes ran different mixes" % (name, k))
        best = [r for r in g if r["scheme"] == "best"]
        if not best:
            continue
        b = best[0]
        jb = jobs[id(b)]
        jrt_b = jb["end_ns"] - jb["start_ns"]
        for r in g:
            if r["scheme"] == "releax":
                continue  # (its jobs need not keep to servers: Best's are not the same jobs' lower bound)
            check(f(b, "mean_jrt_ms") <= f(r, "mean_jrt_ms") * (1 + REL), "Best's mean JRT %s above %s" % (
                b["mean_jrt_ms"], who(r)))
            j = jobs[id(r)]
            jrt = j["end_ns"] - j["start_ns"]
            inside = np.isin(j["stage"], ("server", "leaf"))
            bad = np.nonzero(inside & ~np.isclose(jrt, jrt_b, rtol=REL, atol=1e-3))[0]
            check(len(bad) == 0, "%d jobs inside one server or leaf run longer or shorter than on the ideal "
                  "switch (job %s: %s against %s ns): %s" % (len(bad), bad[:1], jrt[bad[:1]], jrt_b[bad[:1]], who(r)))
            check(inside.sum() > 0.5 * len(jrt), "few jobs inside a leaf: %s" % who(r))
check(any(int(r["refused_network"]) > 0 for r in fr if r["scheme"] == "vclos"),
      "fragmentation: vClos never refused for the network at the quick loads")
check(sum(int(r["placed_vclos"]) for r in fr + sc) > 10, "few virtual Clos placements in the quick runs")

# --packet: the same mix at 1/100 scale, in the packet model and the flow model.
check(sorted(r["model"] for r in pk) == ["flow"] * 7 + ["packet"] * 6, "--packet's models")
for r in pk:
    check((r["model"] == "packet") == (sets(r).get("network.model") == '"packet"') and "--scale 0.01" in
          r["mix_command"] and close(f(r, "interarrival_ms"), 0.01 * f(r, "unscaled_interarrival_ms")),
          "packet row: %s" % who(r))

# The testbed's trace: the paper's sizes, collectives and models, the same jobs in every run.
trace = list(csv.DictReader(open(os.path.join(d, "testbed", "testbed_jobs.csv"))))
check(len(trace) == 30 and all(t["gpus"] in ("2", "4", "8", "16") for t in trace)
      and all(t["model"] in ("vgg16", "resnet50", "bert", "dlrm") for t in trace)
      and all((t["algorithm"] == "pairwise") == (t["model"] == "dlrm") for t in trace)
      and all(t["algorithm"] in ("ring", "hierarchical", "halving_doubling", "pairwise") for t in trace),
      "testbed trace")
for r in tb:
    j = jobs[id(r)]
    check(j["endpoints"].tolist() == [int(t["gpus"]) for t in trace] and
          np.allclose(j["arrival_ns"], [float(t["arrival_ms"]) * 1e6 for t in trace], rtol=0, atol=1.0),
          "testbed run's jobs are not the trace's: %s" % who(r))
    check(r["leaves"] == "4" and r["spines"] == "8" and (sets(r).get("topology.leaves") == "4") == (r["scheme"] != "best"),
          "testbed split: %s" % who(r))


# A row's command, run again, gives the same /jobs and numbers.
def again(r, name):
    cmd = shlex.split(r["command"])
    cmd[0] = exe
    out = os.path.join(d, name + ".h5")
    cmd[cmd.index("-o") + 1] = out
    subprocess.run(cmd, check=True, capture_output=True)
    return out


for r, name in ((fr[0], "again_fragmentation"), (next(x for x in sc if x["scheme"] == "ecmp"), "again_schemes"),
                (next(x for x in tb if x["scheme"] == "vclos"), "again_testbed")):
    j2 = jobs_of(again(r, name))
    j1 = jobs[id(r)]
    for k in ("start_ns", "end_ns", "refused_gpus", "refused_network"):
        check(np.array_equal(j1[k], j2[k]), "%s: %s differs when run again: %s" % (name, k, who(r)))
    for k, v in own_metrics(j2).items():
        check(close(float(r[k]), float(v), 1e-6), "%s: %s %s, again %s" % (name, k, r[k], v))

if fails:
    print("FAIL:\n  " + "\n  ".join(fails[:40]) + ("\n  ... %d more" % (len(fails) - 40) if len(fails) > 40 else ""))
    sys.exit(1)
print("ok: %d rows in 4 CSVs hold the relations (%d kept runs read, 3 rerun)" % (len(everything), len(jobs)))
PY
