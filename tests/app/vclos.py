#!/usr/bin/python3
"""The cluster queue's schedulers (issue 31, ../shared/spec/vclos.md 5):
workload.scheduler = whole_server / vclos and the queue orders, end to end.

Each check compares with something derived here, not with what the run
printed:

  * ECMP's contention: the uplink of every cross-leaf message of a random
    permutation is computed here from the 5-tuple (MurmurHash3_x86_32,
    written here from the published algorithm, over the ports and seeds
    docs/model.md describes); the flows counted per leaf-spine link must be
    exactly /links/flows.
  * Network fragmentation (a hand-derived case on 4 leaves x 2 spines, 2
    servers of 2 GPUs per leaf): two 2-GPU jobs fill leaf 0, so an 8-GPU
    job (a virtual Clos of 4 leaves x 2 spines, one idle server per leaf)
    finds 6 idle servers but no virtual Clos: refused once for `network`,
    admitted when the first small job ends; the next 8-GPU job is refused
    for GPUs, then for the network, then admitted when the first one ends;
    whole_server places the first at once.
  * Isolation: two 8-GPU vClos jobs on 4 leaves x 8 spines (4 GPUs per
    leaf, T = 1) each get 2 leaves x 4 spines on disjoint links; each one's
    alltoall takes exactly its time alone, and only reserved leaf-spine
    links carry bytes (ECMP with whole_server puts bytes on others).
  * Conservation across job boundaries (every run): every job admitted and
    finished, every message delivered, no endpoint and no reserved link held
    by two jobs at once (/placement against /jobs' times); in the queue
    order runs a last job needing the whole cluster is admitted (every GPU
    was freed).
  * Queue orders: with the cluster busy, waiting jobs start by deadline
    (edf) or by size (fewest_gpus_first), as sorted here.
  * A training job (compute_ns, overlap): each iteration takes
    (1 - f) C + max(f C, T), T the operation alone.
  * Best (an ideal switch with the cluster's servers): whole-server
    placement, intra-server traffic on the servers' own links.
  * The flow model's flows per link at once: an incast of k keeps k on
    the target's link (max and time average per interval).
  * 1, 2 and 3 ranks give the same files (packet level, vclos, with the
    fragmentation case in it).

  vclos.py EXE MPIEXEC SRC
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


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))
    (passes if ok else failures).append(what)


def run(tmp, name, text, *args, ranks=1):
    path = os.path.join(tmp, name + ".toml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name + ".h5")
    cmd = ([MPIEXEC, "-n", str(ranks)] if ranks > 1 else []) + [EXE, "run", path, "-o", out, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("FAIL %s: exit %d\n%s%s" % (name, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return out


def leaf_spine(leaves, spines, spl, gps, model="flow", routing="ecmp"):
    return (f'[topology]\nkind = "leaf_spine"\nleaves = {leaves}\nspines = {spines}\nservers_per_leaf = {spl}\n'
            f'gpus_per_server = {gps}\nradix = {spl * gps + spines}\n'
            f'[network]\nmodel = "{model}"\nlink_gbps = 100\nlink_latency_ns = 500\n'
            f'[routing]\nalgorithm = "{routing}"\necmp_hash = "murmur3"\n')


# ---------------------------------------------------------------- the hash
M64 = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def hash2(a, b):
    return mix64(mix64((a + 0x9E3779B97F4A7C15) & M64) ^ ((b + 0x632BE59BD9B4E019) & M64))


def murmur3_x86_32(data, seed):
    """MurmurHash3_x86_32 (Austin Appleby's published algorithm)."""
    c1, c2, M = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & M  # noqa: E731
    h = seed & M
    n = len(data)
    for i in range(0, n - n % 4, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = rotl((k * c1) & M, 15) * c2 & M
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & M
    tail = data[n - n % 4:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= rotl((k * c1) & M, 15) * c2 & M
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M
    return h ^ (h >> 16)


def ecmp_hash(seed, ecmp_seed, mid, s, d, at):
    """The ECMP hash of message mid (s -> d) at node `at`: MurmurHash3 of the 5-tuple (UDP source
    port from engine.seed and the message id, RoCE's port 4791, UDP) seeded per node."""
    sport = 49152 + hash2(seed, mid) % 16384
    t = (s.to_bytes(4, "little") + d.to_bytes(4, "little") + sport.to_bytes(2, "little")
         + (4791).to_bytes(2, "little") + bytes([17]))
    return murmur3_x86_32(t, hash2(ecmp_seed, at) & 0xFFFFFFFF)


def fabric_flows(lsrc, ldst, flows, names):
    """/links/flows of the leaf-spine links that carried any, {(from, to): flows}."""
    got = {}
    for a, b, n in zip(lsrc, ldst, flows):
        na, nb = names[a], names[b]
        if na.startswith(("leaf", "spine")) and nb.startswith(("leaf", "spine")) and n:
            got[(na, nb)] = int(n)
    return got


def ecmp_contention(tmp):
    L, S, PER = 4, 4, 4  # T = 1: endpoint e on leaf e // 4; leaf node ids follow the endpoints
    seed, ecmp_seed = 7, 3
    cfg = (leaf_spine(L, S, PER, 1) + f"ecmp_seed = {ecmp_seed}\n"
           '[workload]\nkind = "traffic"\npattern = "permutation"\nmessage_bytes = 65536\nmessages = 4\n'
           f'[engine]\nseed = {seed}\n[output]\nflows = true\n')
    out = run(tmp, "ecmp", cfg)
    with h5py.File(out) as f:
        src, dst = f["flows/src"][()], f["flows/dst"][()]
        lsrc, ldst, flows = f["links/src"][()], f["links/dst"][()], f["links/flows"][()]
        names = [n.decode() for n in f["nodes/name"][()]]
    node = {n: i for i, n in enumerate(names)}
    expect = {}
    for mid, (s, d) in enumerate(zip(src, dst)):
        ls, ld = s // PER, d // PER
        if ls == ld:
            continue
        spine = ecmp_hash(seed, ecmp_seed, mid, int(s), int(d), node["leaf%d" % ls]) % S
        for link in (("leaf%d" % ls, "spine%d" % spine), ("spine%d" % spine, "leaf%d" % ld)):
            expect[link] = expect.get(link, 0) + 1
    got = fabric_flows(lsrc, ldst, flows, names)
    check("ECMP: flows per leaf-spine link = an independent count of MurmurHash3 picks", got == expect,
          "got %s, expected %s" % (sorted(got.items())[:6], sorted(expect.items())[:6]))
    check("ECMP: the permutation has hash collisions to count (some link carries 2+ flows)",
          max(expect.values(), default=0) >= 2)


def balanced_ecmp(tmp):
    # Balanced ECMP (flow model): every message of a permutation starts at
    # 0, in source order (the flow model's event order at one instant); at
    # its source leaf each takes, among the uplinks with the fewest flows
    # placed so far, the one the ECMP hash picks among those (index = hash
    # mod their count).  Computed here flow by flow; /links/flows must match.
    L, S, PER = 4, 4, 4
    seed, ecmp_seed = 7, 3
    cfg = (leaf_spine(L, S, PER, 1, routing="balanced_ecmp") + f"ecmp_seed = {ecmp_seed}\n"
           '[workload]\nkind = "traffic"\npattern = "permutation"\nmessage_bytes = 1048576\nmessages = 1\n'
           f'[engine]\nseed = {seed}\n[output]\nflows = true\n')
    out = run(tmp, "becmp", cfg)
    with h5py.File(out) as f:
        src, dst, start = f["flows/src"][()], f["flows/dst"][()], f["flows/start_ns"][()]
        lsrc, ldst, flows = f["links/src"][()], f["links/dst"][()], f["links/flows"][()]
        names = [n.decode() for n in f["nodes/name"][()]]
    node = {n: i for i, n in enumerate(names)}
    check("balanced ECMP: every flow starts at 0 (the case below)", bool(np.all(start == 0)))
    load, expect, changed = {}, {}, 0
    for mid in sorted(range(len(src)), key=lambda m: int(src[m])):
        s, d = int(src[mid]), int(dst[mid])
        ls, ld = s // PER, d // PER
        if ls == ld:
            continue
        least = min(load.get((ls, j), 0) for j in range(S))
        tied = [j for j in range(S) if load.get((ls, j), 0) == least]
        h = ecmp_hash(seed, ecmp_seed, mid, s, d, node["leaf%d" % ls])
        spine = tied[h % len(tied)]
        changed += spine != h % S  # plain ECMP's pick
        load[(ls, spine)] = load.get((ls, spine), 0) + 1
        for link in (("leaf%d" % ls, "spine%d" % spine), ("spine%d" % spine, "leaf%d" % ld)):
            expect[link] = expect.get(link, 0) + 1
    got = fabric_flows(lsrc, ldst, flows, names)
    check("balanced ECMP: flows per leaf-spine link = the least-loaded picks computed here", got == expect,
          "got %s, expected %s" % (sorted(got.items())[:6], sorted(expect.items())[:6]))
    check("balanced ECMP: the case is one where it picks otherwise than plain ECMP", changed > 0)
    # The run's own counts (/links/flows), not the picks computed above.
    run_up = {(l, j): got.get(("leaf%d" % l, "spine%d" % j), 0) for l in range(L) for j in range(S)}
    check("balanced ECMP: in the run no uplink carries 2 flows more than another of its leaf (the spread is even)",
          all(max(run_up[(l, j)] for j in range(S)) - min(run_up[(l, j)] for j in range(S)) <= 1 for l in range(L))
          and sum(run_up.values()) > 0)
    bad = subprocess.run([EXE, "run", os.path.join(tmp, "becmp.toml"), "-o", os.path.join(tmp, "becmp_p.h5"),
                          "--set", 'network.model="packet"'], capture_output=True, text=True)
    check("balanced ECMP at packet level: refused with one line naming routing.algorithm",
          bad.returncode != 0 and "routing.algorithm: balanced_ecmp" in bad.stderr
          and not os.path.exists(os.path.join(tmp, "becmp_p.h5")), bad.stderr[-300:])


# ------------------------------------------------------------ the queue runs
def jobs_table(jobs):
    out = ""
    for j in jobs:
        out += "\n[[jobs]]\n" + "".join(f"{k} = {v}\n" for k, v in j.items())
    return out


def read(out):
    with h5py.File(out) as f:
        jobs = {k: f["jobs/" + k][()] for k in f["jobs"]}
        jobs["stage"] = [s.decode() for s in jobs["stage"]]
        pl = {k: f["placement/" + k][()] for k in f["placement"]}
        summ = dict(f["summary"].attrs)
        coll = {k: f["collectives/" + k][()] for k in f["collectives"]} if "collectives" in f else {}
        links = {k: f["links/" + k][()] for k in ("src", "dst", "tx_bytes")}
        names = [n.decode() for n in f["nodes/name"][()]]
    return jobs, pl, summ, coll, links, names


def conservation(name, out):
    jobs, pl, summ, _, _, _ = read(out)
    n = len(jobs["end_ns"])
    check(f"{name}: every job admitted and finished", bool(np.all(jobs["start_ns"] >= 0) and np.all(jobs["end_ns"] > 0)))
    check(f"{name}: every message delivered, bytes in = bytes out",
          summ["messages_delivered"] == summ["messages_total"] and summ["bytes_delivered"] == summ["bytes_injected"]
          if "messages_total" in summ else summ["packets_delivered"] == summ["packets_injected"])
    start, end = jobs["start_ns"], jobs["end_ns"]
    overlap = lambda a, b: start[a] < end[b] and start[b] < end[a]  # noqa: E731
    held = {}
    for j, e in zip(pl["endpoint_job"], pl["endpoint"]):
        held.setdefault(int(e), []).append(int(j))
    clash = [(e, a, b) for e, js in held.items() for i, a in enumerate(js) for b in js[i + 1:] if overlap(a, b)]
    check(f"{name}: no endpoint held by two jobs at once", not clash, str(clash[:3]))
    links = {}
    for j, l, s in zip(pl["link_job"], pl["leaf"], pl["spine"]):
        links.setdefault((int(l), int(s)), []).append(int(j))
    clash = [(k, a, b) for k, js in links.items() for i, a in enumerate(js) for b in js[i + 1:] if overlap(a, b)]
    check(f"{name}: no reserved leaf-spine link held by two jobs at once", not clash, str(clash[:3]))
    per_job = np.bincount(pl["link_job"], minlength=n) if len(pl["link_job"]) else np.zeros(n, int)
    want = jobs["virtual_leaves"].astype(int) * jobs["virtual_spines"].astype(int)
    check(f"{name}: a vclos job reserves its l x s links, others none", bool(np.array_equal(per_job, want)))
    return jobs


def fragmentation(tmp, scheduler, model="flow", ranks=1, name=None):
    # 4 leaves x 2 spines, 2 servers of 2 GPUs per leaf (16 GPUs; a virtual
    # leaf of s GPUs needs s uplinks, so one server per leaf).  Jobs 0 and 1
    # (2 GPUs each, on one server) fill leaf 0: best fit sends the second to
    # the fuller leaf.  Job 2 (8 GPUs) needs a virtual Clos of l = 8 / S = 4
    # leaves x s = 2 spines, one idle server on each leaf: leaf 0 has none
    # until job 0 ends.  Job 3 (8 GPUs again) needs every leaf-spine link,
    # which job 2 holds.
    base = leaf_spine(4, 2, 2, 2, model) + (
        '[workload]\nkind = "collective"\nop = "allreduce"\nalgorithm = "ring"\nqueue = "fifo"\n'
        f'scheduler = "{scheduler}"\niterations = 1\n[engine]\ncontrol_latency_ns = 1000\n')
    jobs = [dict(ranks=2, sizes="[1048576]"), dict(ranks=2, sizes="[4194304]", start_ns=100),
            dict(ranks=8, sizes="[1048576]", start_ns=200), dict(ranks=8, sizes="[65536]", start_ns=300)]
    return run(tmp, name or f"frag_{scheduler}_{model}_{ranks}", base + jobs_table(jobs), ranks=ranks)


def fragmentation_checks(tmp):
    out = fragmentation(tmp, "vclos")
    jobs = conservation("fragmentation (vclos)", out)
    start, end = jobs["start_ns"], jobs["end_ns"]
    check("vclos: jobs 0 and 1 on one server each, jobs 2 and 3 virtual Clos of 4 leaves x 2 spines",
          jobs["stage"] == ["server", "server", "vclos", "vclos"] and list(jobs["virtual_leaves"][2:]) == [4, 4]
          and list(jobs["virtual_spines"][2:]) == [2, 2], str(jobs["stage"]))
    with h5py.File(out) as f:
        ep, ej = f["placement/endpoint"][()], f["placement/endpoint_job"][()]
    check("vclos: jobs 0 and 1 together fill leaf 0 (endpoints 0-3)",
          sorted(ep[(ej == 0) | (ej == 1)].tolist()) == [0, 1, 2, 3])
    # The expectations below hold for this order of events (checked first).
    check("vclos: the case's timing (job 0 ends before job 2's first try ... job 1 ends before job 2)",
          end[0] > 1200 and end[1] < end[2] and end[0] < end[1])
    check("vclos: job 2 refused once for the network (6 idle servers, no 4 leaves with one), never for GPUs",
          jobs["refused_network"][2] == 1 and jobs["refused_gpus"][2] == 0,
          "network %d gpus %d" % (jobs["refused_network"][2], jobs["refused_gpus"][2]))
    check("vclos: job 2 admitted a control latency after job 0 ended", abs(start[2] - (end[0] + 1000)) < 1e-6,
          "start %.3f, job 0 end %.3f" % (start[2], end[0]))
    check("vclos: job 3 refused for GPUs (3 idle servers) then, after job 1, for the network (job 2's links)",
          jobs["refused_gpus"][3] == 1 and jobs["refused_network"][3] == 1,
          "gpus %d network %d" % (jobs["refused_gpus"][3], jobs["refused_network"][3]))
    check("vclos: job 3 admitted a control latency after job 2 ended", abs(start[3] - (end[2] + 1000)) < 1e-6)
    out = fragmentation(tmp, "whole_server")
    jobs = conservation("fragmentation (whole_server)", out)
    check("whole_server: job 2 placed at its arrival on whole servers of two leaves, never refused",
          jobs["stage"][2] == "servers" and jobs["refused_network"][2] == 0 and jobs["refused_gpus"][2] == 0
          and abs(jobs["start_ns"][2] - (jobs["arrival_ns"][2] + 1000)) < 1e-6, str(jobs["stage"]))


def isolation(tmp):
    # 4 leaves x 8 spines, 4 GPUs per leaf (T = 1): an 8-GPU job is a
    # virtual Clos of 2 leaves x 4 spines (l = 8 / 8 = 1 is skipped).
    def cfg(scheduler, jobs):
        return (leaf_spine(4, 8, 4, 1) + '[workload]\nkind = "collective"\nop = "alltoall"\nqueue = "fifo"\n'
                f'scheduler = "{scheduler}"\nsizes = [4194304]\niterations = 1\n' + jobs_table(jobs))
    two = [dict(ranks=8), dict(ranks=8)]
    out = run(tmp, "iso_two", cfg("vclos", two))
    jobs, pl, _, coll, links, names = read(out)
    conservation("isolation (vclos)", out)
    alone = run(tmp, "iso_alone", cfg("vclos", two[:1]))
    _, _, _, coll1, _, _ = read(alone)
    t_two = coll["end_ns"][coll["job"] == 0] - coll["start_ns"][coll["job"] == 0]
    t_one = coll1["end_ns"] - coll1["start_ns"]
    check("vclos: both 8-GPU jobs run at once, on 2 leaves x 4 spines each",
          jobs["start_ns"][0] == jobs["start_ns"][1] and list(jobs["virtual_leaves"]) == [2, 2]
          and list(jobs["virtual_spines"]) == [4, 4])
    check("vclos: job 0's alltoall takes exactly its time alone (isolated)", np.array_equal(t_two, t_one),
          "%s vs %s" % (t_two, t_one))
    reserved = {(f"leaf{l}", f"spine{s}") for l, s in zip(pl["leaf"], pl["spine"])}
    reserved |= {(b, a) for a, b in reserved}
    used = {(names[a], names[b]) for a, b, n in zip(links["src"], links["dst"], links["tx_bytes"])
            if n and names[a].startswith(("leaf", "spine")) and names[b].startswith(("leaf", "spine"))}
    check("vclos: bytes only on reserved leaf-spine links", used and used <= reserved,
          str(sorted(used - reserved)[:4]))
    out = run(tmp, "iso_ecmp", cfg("whole_server", two))
    _, _, _, _, links, names = read(out)
    used = {(names[a], names[b]) for a, b, n in zip(links["src"], links["dst"], links["tx_bytes"])
            if n and names[a].startswith(("leaf", "spine")) and names[b].startswith(("leaf", "spine"))}
    check("whole_server + ECMP: bytes also on links vclos would not use (the check can fail)",
          bool(used - reserved))


def orders(tmp):
    # One 16-GPU job holds the cluster; five jobs arrive while it runs.
    base = leaf_spine(4, 2, 2, 2) + ('[workload]\nkind = "collective"\nop = "allreduce"\nalgorithm = "ring"\n'
                                      'scheduler = "whole_server"\nsizes = [65536]\niterations = 1\n')
    waiting = [dict(ranks=4, deadline_ns=9e6), dict(ranks=2, deadline_ns=5e6), dict(ranks=16, deadline_ns=3e6),
               dict(ranks=8, deadline_ns=0), dict(ranks=2, deadline_ns=4e6)]
    # Last, a job that needs every GPU: its admission shows all were freed.
    jobs = ([dict(ranks=16, sizes="[8388608]")] + [dict(j, start_ns=1000 * (i + 1)) for i, j in enumerate(waiting)]
            + [dict(ranks=16, start_ns=1e8)])
    for queue, key in (("edf", lambda i, j: (j["deadline_ns"] or float("inf"), i)),
                       ("fewest_gpus_first", lambda i, j: (j["ranks"], i))):
        out = run(tmp, "order_" + queue, base + f'queue = "{queue}"\n' + jobs_table(jobs))
        got = conservation("order " + queue, out)
        # Sorted here; along that order start times never decrease (the head
        # of the queue holds the ones behind it), and the first one starts
        # alone when the busy job ends, where arrival order would start another.
        expect = [i + 1 for i, _ in sorted(enumerate(waiting), key=lambda p: key(*p))]
        starts = [got["start_ns"][j] for j in expect]
        check(f"{queue}: the waiting jobs start in the order sorted here ({expect})",
              all(a <= b for a, b in zip(starts, starts[1:])) and starts[0] < max(starts),
              "starts along that order: %s" % starts)


def training(tmp):
    # A training job's iteration: compute C, of which a fraction f runs
    # alongside the operation: iteration = (1 - f) C + max(f C, T), T the
    # operation's time alone (a run without compute gives it).
    cfg = ('[topology]\nkind = "ideal_switch"\nendpoints = 4\n[network]\nmodel = "flow"\n'
           '[workload]\nkind = "collective"\nop = "allreduce"\nalgorithm = "ring"\nranks = 4\n'
           'sizes = [4194304]\niterations = 3\n')
    with h5py.File(run(tmp, "train0", cfg)) as f:
        T = float(f["collectives/end_ns"][0] - f["collectives/start_ns"][0])
    ok, detail = True, []
    for C, frac in ((500000, 0.0), (500000, 0.5), (500000, 0.9), (100000, 1.0)):
        with h5py.File(run(tmp, "train", cfg, "--set", f"workload.compute_ns={C}", "--set",
                           f"workload.overlap={frac}")) as f:
            ends = f["collectives/end_ns"][()]
        it = (1 - frac) * C + max(frac * C, T)
        want = [(1 - frac) * C + T + k * it for k in range(3)]
        ok &= bool(np.allclose(ends, want, rtol=0, atol=1e-3))
        detail.append("C=%d f=%g: %s vs %s" % (C, frac, ends, want))
    check("training iterations: (1 - f) C + max(f C, T) per iteration", ok, "; ".join(detail))
    # The scaling factor (spec Eq. 1: T_n / (n T)) of a queued training job:
    # C per iteration of (1 - f) C + max(f C, T), so C / that.
    C, frac = 500000, 0.5
    queued = cfg.replace("ranks = 4\n", "queue = \"fifo\"\n") + "\n[[jobs]]\nranks = 4\n"
    with h5py.File(run(tmp, "train_sf", queued, "--set", f"workload.compute_ns={C}", "--set",
                       f"workload.overlap={frac}")) as f:
        sf = float(f["jobs/scaling_factor"][0])
    want = C / ((1 - frac) * C + max(frac * C, T))
    check("training job's scaling factor = C / ((1 - f) C + max(f C, T))", abs(sf - want) < 1e-9 * want,
          "%r vs %r" % (sf, want))


def best(tmp):
    # Best: an ideal switch with the cluster's servers (topology.gpu_servers).
    # Whole-server placement puts a 4-GPU job on one server: all its bytes
    # on the intra-server links; an 8-GPU job spans two: bytes on the
    # crossbar too, and the job of 12 waits for the first (3 servers of 4).
    cfg = ('[topology]\nkind = "ideal_switch"\nendpoints = 12\ngpu_servers = true\ngpus_per_server = 4\n'
           '[network]\nmodel = "flow"\n[workload]\nkind = "collective"\nop = "allreduce"\nalgorithm = "ring"\n'
           'queue = "fifo"\nscheduler = "whole_server"\nsizes = [1048576]\n'
           + jobs_table([dict(ranks=4), dict(ranks=8, start_ns=10), dict(ranks=12, start_ns=20)]))
    out = run(tmp, "best", cfg)
    jobs, pl, _, _, links, names = read(out)
    conservation("best", out)
    check("best: the 4-GPU job on one server, the 8-GPU one on two, the 12-GPU one waits for both",
          jobs["stage"] == ["server", "leaf", "leaf"] and jobs["start_ns"][2] >= max(jobs["end_ns"][:2]))
    eps = {j: sorted(int(e) for e, jj in zip(pl["endpoint"], pl["endpoint_job"]) if jj == j) for j in range(3)}
    check("best: whole servers (endpoints 4s .. 4s+3)",
          all(len({e // 4 for e in eps[j]}) * 4 == len(eps[j]) for j in range(2)), str(eps))
    with h5py.File(run(tmp, "best_one", cfg.split("\n[[jobs]]")[0] + jobs_table([dict(ranks=4)]))) as f:
        n = [x.decode() for x in f["nodes/name"][()]]
        used = {(n[a], n[b]) for a, b, t in zip(f["links/src"][()], f["links/dst"][()], f["links/tx_bytes"][()]) if t}
    check("best: a one-server job's bytes only on its intra-server links",
          used and all("nvsw" in a or "nvsw" in b for a, b in used), str(sorted(used)))


def flow_counts(tmp):
    # The flow model's concurrent flows per link (/links/max_flows and
    # /links/timeseries/flows): an incast of k equal messages keeps k flows
    # on the target's link for the whole transfer, k x size / rate, and one
    # on each source's link; the time average is k in every interval the
    # transfer covers whole.
    k, size, gbps, iv = 5, 1048576, 100.0, 2000.0
    cfg = (f'[topology]\nkind = "ideal_switch"\nendpoints = {k + 1}\n[network]\nmodel = "flow"\n'
           f'link_gbps = {gbps}\n[workload]\nkind = "traffic"\npattern = "incast"\nincast_target = 0\n'
           f'message_bytes = {size}\nmessages = 1\n[output]\ninterval_ns = {iv}\n')
    with h5py.File(run(tmp, "incast", cfg)) as f:
        n = [x.decode() for x in f["nodes/name"][()]]
        src, dst, mf = f["links/src"][()], f["links/dst"][()], f["links/max_flows"][()]
        series = f["links/timeseries/flows"][()]
        interval = f["links/timeseries/flows"].attrs["interval_ns"]
    target = [i for i in range(len(src)) if n[src[i]] == "xbar0" and n[dst[i]] == "ep0"][0]
    sources = [i for i in range(len(src)) if n[dst[i]] == "xbar0" and n[src[i]] != "ep0"]
    full = int((k * size * 8 / gbps) // interval)  # intervals the transfer surely covers whole
    check("flow model: an incast of %d keeps %d flows on the target's link, 1 on each source's" % (k, k),
          mf[target] == k and all(mf[i] == 1 for i in sources), "max_flows %s" % mf.tolist())
    check("flow model: time-average flows = %d in each of the first %d intervals" % (k, full),
          full > 2 and np.allclose(series[target][:full], k) and all(np.allclose(series[i][:full], 1) for i in sources),
          str(series[target][:full + 2]))


def ranks(tmp):
    outs = [fragmentation(tmp, "vclos", "packet", r, name=f"ranks{r}") for r in (1, 2, 3)]
    prints = [fingerprint(o) for o in outs]
    placements = []
    for o in outs:
        with h5py.File(o) as f:
            placements.append([f["placement/" + k][()].tolist() for k in sorted(f["placement"])])
    check("vclos at packet level: 1, 2 and 3 ranks give identical results and placements",
          len(set(prints)) == 1 and placements[0] == placements[1] == placements[2], str(prints))


with tempfile.TemporaryDirectory() as tmp:
    ecmp_contention(tmp)
    balanced_ecmp(tmp)
    fragmentation_checks(tmp)
    isolation(tmp)
    orders(tmp)
    training(tmp)
    best(tmp)
    flow_counts(tmp)
    ranks(tmp)

print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
