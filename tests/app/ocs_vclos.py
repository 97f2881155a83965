#!/usr/bin/python3
"""OCS-vClos end to end (issue 31, ../shared/spec/vclos.md 2.5 and 5.4):
topology.ocs_switches, workload.scheduler = "ocs_vclos", /ocs, /placement.

Each check compares with something derived here, not with what the run
printed:

  * The gain of rewiring (a hand-derived case: 4 leaves x 2 spines, two
    links per pair, 2 servers of 2 GPUs per leaf).  Jobs 0 and 1 (2 GPUs)
    fill leaf 0; job 2 (8 GPUs) needs 4 servers.  With one optical switch
    per spine (ocs_switches = 2, the fixed leaf-spine) a leaf has 2 ports to
    a spine, one server's worth: no spine takes the job, no 4 leaves have an
    idle server; refused for the network until job 0 ends.  With one
    optical switch for everything (ocs_switches = 1) spine 0 takes all 8
    GPUs: leaves 1 and 2 (best fit, then index) each switch their two
    spine-1 ports over to spine 0, and spine 0 frees 4 ports by switching
    off the lowest idle circuits (leaf 0's and leaf 3's): derived below,
    compared as sets.  The job starts ocs_reconfig_ns after its placement,
    and its cross-leaf bytes use spine 0 only.
  * Rewiring never touches a busy link: in a churning packet-level run,
    no circuit is switched off (/ocs) while a job whose placement holds it
    (/placement: one circuit per rank) runs; the run strands nothing and
    delivers every message, and some switching does happen while other
    jobs hold circuits (so the check is not vacuous).
  * 1, 2 and 3 ranks give identical files (packet level, with rewiring).
  * OCS-Releax (workload.ocs_whole_servers = false): five 3-GPU jobs at
    once on 16 GPUs in servers of 2.  With whole servers each reserves two
    servers (4 GPUs), so the fifth waits for one to end; without the rule
    each takes 3 GPUs: the first four one leaf each, the fifth the idle GPU
    of three leaves over one spine, all five at their arrival.

  ocs_vclos.py EXE MPIEXEC SRC
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

EXE, MPIEXEC, SRC = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SRC, "tests", "app", "golden"))
from fingerprint import fingerprint  # noqa: E402

failures, passes = [], []
RECONFIG = 5000  # ns: workload.ocs_reconfig_ns in these runs
LATENCY = 1000   # ns: engine.control_latency_ns


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))
    (passes if ok else failures).append(what)


def run(tmp, name, text, ranks=1):
    path = os.path.join(tmp, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + ".h5")
    cmd = ([MPIEXEC, "-n", str(ranks)] if ranks > 1 else []) + [EXE, "run", path, "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("FAIL %s: exit %d\n%s%s" % (name, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return out


def cluster(ocs, model="flow", spines=2, lpp=2, spl=2, gps=2):
    # Default: 4 leaves x 2 spines, 2 links per pair, 2 servers of 2 GPUs per leaf.
    return (f'[topology]\nkind = "leaf_spine"\nleaves = 4\nspines = {spines}\nlinks_per_pair = {lpp}\n'
            f'servers_per_leaf = {spl}\ngpus_per_server = {gps}\nradix = {spl * gps + spines * lpp}\n'
            f'ocs_switches = {ocs}\n'
            f'[network]\nmodel = "{model}"\nlink_gbps = 100\nlink_latency_ns = 500\n'
            '[routing]\nalgorithm = "ecmp"\n'
            '[workload]\nkind = "collective"\nop = "allreduce"\nalgorithm = "ring"\nqueue = "fifo"\n'
            f'scheduler = "ocs_vclos"\niterations = 1\nocs_reconfig_ns = {RECONFIG}\n'
            f'[engine]\ncontrol_latency_ns = {LATENCY}\n')


def jobs_table(jobs):
    return "".join("\n[[jobs]]\n" + "".join(f"{k} = {v}\n" for k, v in j.items()) for j in jobs)


def read(out):
    with h5py.File(out) as f:
        jobs = {k: f["jobs/" + k][()] for k in f["jobs"]}
        jobs["stage"] = [s.decode() for s in jobs["stage"]]
        pl = {k: f["placement/" + k][()] for k in f["placement"]}
        ocs = {k: f["ocs/" + k][()] for k in f["ocs"]}
        summ = dict(f["summary"].attrs)
        links = {k: f["links/" + k][()] for k in ("src", "dst", "tx_bytes")}
        names = [n.decode() for n in f["nodes/name"][()]]
    return jobs, pl, ocs, summ, links, names


def delivered(name, summ):
    check(f"{name}: every message delivered, nothing stranded",
          summ["messages_delivered"] == summ["messages"] and summ["packets_stranded"] == 0
          and summ["bytes_delivered"] == summ["bytes_injected"],
          "delivered %s of %s, stranded %s" % (summ["messages_delivered"], summ["messages"],
                                               summ["packets_stranded"]))


def gain(tmp):
    jobs = [dict(ranks=2, sizes="[1048576]"), dict(ranks=2, sizes="[4194304]", start_ns=100),
            dict(ranks=8, sizes="[1048576]", start_ns=200)]
    # The fixed leaf-spine (one optical switch per spine): refused for the network.
    j, _, ocs, summ, _, _ = read(run(tmp, "fixed", cluster(2) + jobs_table(jobs)))
    delivered("fixed wiring", summ)
    check("fixed wiring (ocs_switches = spines): job 2 refused once for the network, never for GPUs",
          j["refused_network"][2] == 1 and j["refused_gpus"][2] == 0,
          "network %d gpus %d" % (j["refused_network"][2], j["refused_gpus"][2]))
    check("fixed wiring: nothing can be rewired (/ocs empty), job 2 starts a control latency after job 0 ends",
          len(ocs["job"]) == 0 and abs(j["start_ns"][2] - (j["end_ns"][0] + LATENCY)) < 1e-6,
          "ocs rows %d, start %.1f, job 0 end %.1f" % (len(ocs["job"]), j["start_ns"][2], j["end_ns"][0]))

    j, pl, ocs, summ, links, names = read(run(tmp, "one_ocs", cluster(1) + jobs_table(jobs)))
    delivered("one optical switch", summ)
    check("one optical switch: job 2 placed at its arrival on one spine (stage ocs_spine), never refused",
          j["stage"][2] == "ocs_spine" and j["refused_network"][2] == 0 and j["refused_gpus"][2] == 0,
          "stage %s network %d" % (j["stage"][2], j["refused_network"][2]))
    check("one optical switch: job 2 starts the reconfiguration delay after its placement",
          abs(j["start_ns"][2] - (j["arrival_ns"][2] + LATENCY + RECONFIG)) < 1e-6,
          "start %.1f arrival %.1f" % (j["start_ns"][2], j["arrival_ns"][2]))
    rows = [(int(a), int(b), int(c), int(d)) for a, b, c, d in zip(ocs["leaf"], ocs["spine"], ocs["slot"], ocs["on"])]
    on = {r[:3] for r in rows if r[3] == 1}
    off = {r[:3] for r in rows if r[3] == 0}
    # Slot c of a leaf is connected to spine c // 2 at power-on (2 links per
    # pair).  Leaves 1 and 2 keep slots 0, 1 on spine 0 and move slots 2, 3
    # from spine 1; spine 0 (8 ports, all connected) frees 4: the lowest idle
    # circuits not the job's own, leaf 0's and leaf 3's slots 0 and 1.
    want_on = {(1, 0, 2), (1, 0, 3), (2, 0, 2), (2, 0, 3)}
    want_off = {(1, 1, 2), (1, 1, 3), (2, 1, 2), (2, 1, 3), (0, 0, 0), (0, 0, 1), (3, 0, 0), (3, 0, 1)}
    check("one optical switch: the circuits switched on and off are the hand-derived ones",
          on == want_on and off == want_off and j["circuits_switched"][2] == 4,
          "on %s off %s" % (sorted(on), sorted(off)))
    mine = sorted((int(l), int(s), int(c)) for jj, l, s, c in zip(pl["link_job"], pl["leaf"], pl["spine"], pl["slot"])
                  if jj == 2)
    check("one optical switch: job 2 holds one circuit per rank, 4 from each of leaves 1 and 2 to spine 0",
          mine == sorted([(1, 0, c) for c in range(4)] + [(2, 0, c) for c in range(4)]), str(mine))
    spine1 = sum(int(t) for a, b, t in zip(links["src"], links["dst"], links["tx_bytes"])
                 if "spine1" in (names[a], names[b]))
    spine0 = sum(int(t) for a, b, t in zip(links["src"], links["dst"], links["tx_bytes"])
                 if "spine0" in (names[a], names[b]))
    check("one optical switch: the job's cross-leaf bytes cross spine 0 only", spine1 == 0 and spine0 > 0,
          "spine0 %d spine1 %d" % (spine0, spine1))


# Two churning mixes (jobs of 2, 4 and 8 GPUs arriving every 2 us while
# others run): on the default cluster an 8-GPU job fits one spine (8 ports:
# stage ocs_spine); on 4 leaves x 4 spines (one link per pair, 4 GPUs per
# leaf, T = 1) no spine has 8 ports, so 8-GPU jobs are virtual Clos of 2
# leaves x 4 units (ocs_clos), some units parallel circuits to one spine.
SHAPES = {"spine": dict(spines=2, lpp=2, spl=2, gps=2, sizes=[4, 4, 8, 2, 8, 4, 8, 4, 2, 8, 4, 8]),
          "clos": dict(spines=4, lpp=1, spl=4, gps=1, sizes=[8, 4, 2, 8, 4, 8, 2, 4, 8, 4, 8, 2])}


def releax(tmp):
    jobs = [dict(ranks=3, sizes="[4194304]", start_ns=100 * i) for i in range(5)]
    base = cluster(1).replace("[engine]", "vclos_round_pow2 = false\n[engine]") + jobs_table(jobs)
    for whole in (True, False):
        name = "whole" if whole else "releax"
        j, pl, _, summ, _, _ = read(run(tmp, name, base.replace(
            "[engine]", f"ocs_whole_servers = {'true' if whole else 'false'}\n[engine]")))
        delivered(name, summ)
        placed = j["start_ns"] - np.where(j["circuits_switched"] > 0, RECONFIG, 0) - j["arrival_ns"] - LATENCY
        held = {}
        for jj, e in zip(pl["endpoint_job"], pl["endpoint"]):
            held.setdefault(int(e), []).append(int(jj))
        clash = [e for e, js in held.items() for a in js for b in js if a < b
                 and j["start_ns"][a] < j["end_ns"][b] and j["start_ns"][b] < j["end_ns"][a]]
        check(f"{name}: no GPU held by two jobs at once", not clash, str(clash[:3]))
        if whole:
            check("whole servers: each 3-GPU job reserves 2 servers (4 GPUs); the fifth is refused for GPUs and "
                  "starts after the first ends",
                  list(j["reserved"]) == [4] * 5 and j["refused_gpus"][4] >= 1
                  and j["start_ns"][4] >= min(j["end_ns"][:4]) + LATENCY - 1e-6, str(list(j["reserved"])))
        else:
            check("OCS-Releax: every job reserves exactly its 3 GPUs and all five are placed at their arrival",
                  list(j["reserved"]) == [3] * 5 and bool(np.all(np.abs(placed) < 1e-6))
                  and int(np.sum(j["refused_gpus"] + j["refused_network"])) == 0,
                  "reserved %s, placed after arrival %s" % (list(j["reserved"]), list(placed)))
            check("OCS-Releax: jobs 0-3 one leaf each (stage leaf), job 4 over one spine (ocs_spine)",
                  j["stage"] == ["leaf"] * 4 + ["ocs_spine"], str(j["stage"]))


def churn(tmp, shape, ranks=1, model="packet"):
    sh = dict(SHAPES[shape])
    jobs = [dict(ranks=n, sizes="[65536]", start_ns=2000 * i) for i, n in enumerate(sh.pop("sizes"))]
    return run(tmp, f"churn_{shape}_{model}_{ranks}", cluster(1, model, **sh) + jobs_table(jobs), ranks=ranks)


def busy(tmp, shape):
    out = churn(tmp, shape)
    j, pl, ocs, summ, _, _ = read(out)
    delivered(f"churn ({shape})", summ)
    check(f"churn ({shape}): every job admitted and finished", bool(np.all(j["start_ns"] >= 0) and np.all(j["end_ns"] > 0)))
    placed = j["start_ns"] - np.where(j["circuits_switched"] > 0, RECONFIG, 0)
    held = {}
    for jj, l, s, c in zip(pl["link_job"], pl["leaf"], pl["spine"], pl["slot"]):
        held.setdefault((int(l), int(c)), []).append(int(jj))  # a leaf port (slot) per circuit
    touched, while_busy = [], 0
    for t, jj, l, s, c, o in zip(ocs["time_ns"], ocs["job"], ocs["leaf"], ocs["spine"], ocs["slot"], ocs["on"]):
        running = [k for k in held.get((int(l), int(c)), []) if k != jj and placed[k] <= t <= j["end_ns"][k]]
        if not o and running:
            touched.append((float(t), int(l), int(s), int(c), running))
        others = [k for k in range(len(placed)) if k != jj and placed[k] <= t <= j["end_ns"][k]
                  and j["stage"][k].startswith("ocs")]
        while_busy += bool(others)
    check(f"churn ({shape}): no circuit switched off while a running job holds its leaf port", not touched, str(touched[:3]))
    check(f"churn ({shape}): circuits are switched while other jobs hold circuits (the check above is not vacuous)",
          while_busy > 0 and int(np.sum(j["circuits_switched"])) > 0,
          "switched while busy %d" % while_busy)
    check(f"churn ({shape}): its 8-GPU jobs are placed as ocs_{shape}",
          {st for st, n in zip(j["stage"], SHAPES[shape]["sizes"]) if n == 8} == {"ocs_" + shape}, str(j["stage"]))
    # Two jobs never hold the same leaf port at once.
    clash = [(k, a, b) for k, js in held.items() for i, a in enumerate(js) for b in js[i + 1:]
             if placed[a] < j["end_ns"][b] and placed[b] < j["end_ns"][a]]
    check(f"churn ({shape}): no leaf port held by two jobs at once", not clash, str(clash[:3]))
    return out


def ranks(tmp, first):
    outs = [first] + [churn(tmp, "spine", r) for r in (2, 3)]
    prints = [fingerprint(o) for o in outs]
    tables = []
    for o in outs:
        with h5py.File(o) as f:
            tables.append([f[g + "/" + k][()].tolist() for g in ("placement", "ocs") for k in sorted(f[g])])
    check("ocs_vclos at packet level with rewiring: 1, 2 and 3 ranks give identical results, placements, switching",
          len(set(prints)) == 1 and tables[0] == tables[1] == tables[2], str(prints))


with tempfile.TemporaryDirectory() as tmp:
    gain(tmp)
    releax(tmp)
    first = busy(tmp, "spine")
    busy(tmp, "clos")
    ranks(tmp, first)

print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
