#!/usr/bin/python3
"""The routing paper's system (issue 29): workload.kind = "llm_dp" with the
path controllers, checked against computations written here.

1. One BLOOM job (DP 4, one iteration) on the paper's 2048-GPU leaf-spine,
   flow model: edge colouring and the ILP reach max link load
   ceil(Delta / 32) (Delta, the largest ToR degree, computed here from the
   placement) and the ideal allreduce time (every flow at the link rate,
   its wire bytes, path latency and the barrier's control latency per step,
   computed here from the output's links and configuration); greedy's load
   is at most twice theirs and, where it is 1, its time is ideal too.  ECMP
   with the paper's hash (re-implemented here from the spec) is slower by
   exactly what a max-min fluid simulation written here of its collisions
   gives.
2. Failures, flow model: 4 spines down at t = 0: edge colouring reaches
   ceil(Delta / 28), no byte crosses a dead spine under any controller.  A
   spine failing during the allreduce: the controller re-plans at the
   failure (a "failure" decision re-pins flows in flight), nothing is
   stranded, every flow arrives, and no byte crosses the spine after.
3. Packet model, a small leaf-spine, two jobs (the second starts during the
   first's allreduce, so flows in flight are re-pinned) and a spine that
   fails between iterations: conservation (payload injected = delivered,
   every ring flow arrived), and 1, 2 and 3 ranks give identical /llm
   tables (but the controller's wall time), /links and /flows.

  ml_routing.py EXE [MPIEXEC]
"""
import math
import os
import subprocess
import sys
import tempfile
import tomllib

import h5py
import numpy as np

EXE = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else "mpirun"
failures, passes = [], []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))
    (passes if ok else failures).append(what)


PAPER = """
[topology]
kind = "leaf_spine"
leaves = 64
spines = 32
servers_per_leaf = 4
gpus_per_server = 8
radix = 64
[network]
model = "flow"
link_gbps = 100
link_latency_ns = 500
[routing]
algorithm = "ecmp"
ecmp_hash = "wang_jenkins"
[workload]
kind = "llm_dp"
[llm]
mix = "list"
models = ["bloom"]
rings = [4]
starts_s = [0.001]
iterations = 1
size_scale = 0.001
seed = {seed}
[controller]
algorithm = "{alg}"
[output]
interval_ns = {interval}
"""


def run(tmp, name, text, ranks=1):
    cfg = os.path.join(tmp, name + ".toml")
    with open(cfg, "w") as f:
        f.write(text)
    out = os.path.join(tmp, "%s_%d.h5" % (name, ranks))
    cmd = [EXE, "run", cfg, "-o", out]
    if ranks > 1:
        cmd = [MPIEXEC, "-n", str(ranks)] + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit("%s failed: %s" % (" ".join(cmd), r.stderr))
    return h5py.File(out, "r"), r.stdout


def summary(f):
    return {k: int(v) for k, v in f["summary"].attrs.items() if isinstance(v, (int, np.integer))}


def config(f):
    return tomllib.loads(f["meta"].attrs["config"].decode() if isinstance(f["meta"].attrs["config"], bytes)
                         else f["meta"].attrs["config"])


# ---------------------------------------------------------------- the fabric, computed here

M32 = 0xFFFFFFFF


def s32(x):
    x &= M32
    return x - (1 << 32) if x >= 1 << 31 else x


def wang_jenkins(a):
    """The spec's hash (4.1), Java int semantics: wrap-around, arithmetic shifts."""
    a &= M32
    sar = lambda x, r: (s32(x) >> r) & M32
    a = (a + 0x7ED55D16 + (a << 12)) & M32
    a = ((a ^ 0xC761C23C) ^ sar(a, 19)) & M32
    a = (a + 0x165667B1 + (a << 5)) & M32
    a = ((a + 0xD3A2646C) ^ (a << 9)) & M32
    a = (a + 0xFD7046C5 + (a << 3)) & M32
    a = ((a ^ 0xB55A4F09) ^ sar(a, 16)) & M32
    v = s32(a)
    return (1 << 31) - 1 if v == -(1 << 31) else abs(v)


class Fabric:
    """The leaf-spine from the output's /nodes and /links."""

    def __init__(self, f):
        self.names = [n.decode() for n in f["nodes/name"][:]]
        self.src, self.dst = f["links/src"][:], f["links/dst"][:]
        self.gbps = f["links/bandwidth_gbps"][:]
        self.lat = f["links/latency_ns"][:]
        self.by_pair = {(int(a), int(b)): l for l, (a, b) in enumerate(zip(self.src, self.dst))}
        self.leaves = [i for i, n in enumerate(self.names) if n.startswith("leaf")]
        self.spines = [i for i, n in enumerate(self.names) if n.startswith("spine")]
        self.tor = {}
        for l in range(len(self.src)):
            a, b = int(self.src[l]), int(self.dst[l])
            if self.names[a].startswith("ep") and self.names[b].startswith("leaf"):
                self.tor[a] = b  # endpoint e is node e

    def path(self, s, d, spine):
        ts, td = self.tor[s], self.tor[d]
        if ts == td:
            return [self.by_pair[(s, ts)], self.by_pair[(td, d)]]
        return [self.by_pair[(s, ts)], self.by_pair[(ts, spine)], self.by_pair[(spine, td)], self.by_pair[(td, d)]]

    def ecmp_spine(self, s, d, live):
        # The released code's ids: ToRs 0..T-1, spines T..T+S-1, NICs from T+S on.
        nic = lambda e: e + len(self.leaves) + len(self.spines)
        non_seq = wang_jenkins(s32(nic(s) + wang_jenkins(nic(d))))
        return live[wang_jenkins(s32(self.leaves.index(self.tor[s]) + non_seq)) % len(live)]


def rings_of(f, job=0):
    p = f["llm/placement"]
    sel = p["job"][:] == job
    rep, pos, ep = p["replica"][:][sel], p["ring"][:][sel], p["endpoint"][:][sel]
    dp, rings = rep.max() + 1, pos.max() + 1
    nic = np.zeros((dp, rings), dtype=int)
    nic[rep, pos] = ep
    return [[int(nic[i, r]) for i in range(dp)] for r in range(rings)]


def max_tor_degree(fab, rings):
    out, inn = {}, {}
    for ring in rings:
        for i, s in enumerate(ring):
            d = ring[(i + 1) % len(ring)]
            if fab.tor[s] != fab.tor[d]:
                out[fab.tor[s]] = out.get(fab.tor[s], 0) + 1
                inn[fab.tor[d]] = inn.get(fab.tor[d], 0) + 1
    return max(list(out.values()) + list(inn.values()))


def wire(cfg, payload):
    net = cfg["network"]
    per = net["packet_bytes"] - net["header_bytes"]
    packets = -(-payload // per)
    total = payload + packets * net["header_bytes"]
    last = payload - (packets - 1) * per + net["header_bytes"]
    return total, last


def maxmin(active, cap):
    """Max-min fair rates by progressive filling: active {flow: links}."""
    rate, level, rem = {}, 0.0, dict(cap)
    unfrozen = set(active)
    while unfrozen:
        count = {}
        for fl in unfrozen:
            for l in active[fl]:
                count[l] = count.get(l, 0) + 1
        inc = min(rem[l] / c for l, c in count.items())
        level += inc
        full = set()
        for l, c in count.items():
            rem[l] -= inc * c
            if rem[l] <= 1e-9 * cap[l]:
                full.add(l)
        for fl in [fl for fl in unfrozen if any(l in full for l in active[fl])]:
            rate[fl] = level
            unfrozen.discard(fl)
    return rate


def fluid_allreduce(fab, cfg, rings, spine_of, bytes_, start_ns, delay_ns):
    """The flow model's semantics, simulated here: each ring step's flows
    start together, share links max-min fairly while their bytes but the
    last packet's are on the wire, arrive a last packet's serialization and
    the path latency later; the next step starts delay_ns after the step's
    last arrival.  Returns the allreduce time (max over rings)."""
    total, last = wire(cfg, bytes_)
    sw = cfg["network"]["switch_latency_ns"]
    cap = {}
    steps = 2 * (len(rings[0]) - 1)
    pending = [(start_ns, r) for r in range(len(rings))]  # (start, ring)
    step = [0] * len(rings)
    active, remaining, arrive, ring_end = {}, {}, {}, {}
    t = start_ns
    while pending or active:
        rates = maxmin(active, cap) if active else {}
        t_fin = min((t + remaining[fl] / rates[fl] for fl in active), default=math.inf)
        t_start = min((p[0] for p in pending), default=math.inf)
        t_next = min(t_fin, t_start)
        for fl in active:
            remaining[fl] -= rates[fl] * (t_next - t)
        t = t_next
        if t_start <= t_fin:
            for p in [p for p in pending if p[0] <= t]:
                pending.remove(p)
                r = p[1]
                for i, s in enumerate(rings[r]):
                    d = rings[r][(i + 1) % len(rings[r])]
                    links = fab.path(s, d, spine_of(s, d))
                    for l in links:
                        cap[l] = fab.gbps[l]
                    active[(r, step[r], i)] = links
                    remaining[(r, step[r], i)] = (total - last) * 8.0
            continue
        for fl in [fl for fl in active if remaining[fl] <= 1e-6 * total]:
            links = active.pop(fl)
            del remaining[fl]
            latency = sum(fab.lat[l] for l in links) + sw * (len(links) - 1)
            arrive[fl] = t + last * 8.0 / min(fab.gbps[l] for l in links) + latency
            r, k, _ = fl
            done = [arrive.get((r, k, i)) for i in range(len(rings[r]))]
            if all(x is not None for x in done):
                end = max(done)
                if k + 1 < steps:
                    step[r] = k + 1
                    pending.append((end + delay_ns, r))
                else:
                    ring_end[r] = end
    return max(ring_end.values()) - start_ns


def ideal(fab, cfg, rings, bytes_, delay_ns):
    """Every flow at its link rate: per step the slowest ring member's wire
    time and path latency, plus the barrier's delay between steps."""
    total, _ = wire(cfg, bytes_)
    sw = cfg["network"]["switch_latency_ns"]
    steps = 2 * (len(rings[0]) - 1)
    worst = 0.0
    for ring in rings:
        per = 0.0
        for i, s in enumerate(ring):
            links = fab.path(s, ring[(i + 1) % len(ring)], fab.spines[0])
            per = max(per, total * 8.0 / min(fab.gbps[l] for l in links) +
                      sum(fab.lat[l] for l in links) + sw * (len(links) - 1))
        worst = max(worst, steps * per + (steps - 1) * delay_ns)
    return worst


with tempfile.TemporaryDirectory() as tmp:
    # ------------------------------------------------------------ 1. one BLOOM job
    res = {}
    for alg in ("edge_coloring", "ilp", "greedy", "ecmp"):
        res[alg] = run(tmp, "bloom_" + alg, PAPER.format(seed=1234, alg=alg, interval=0))[0]
    f = res["edge_coloring"]
    cfg = config(f)
    fab = Fabric(f)
    rings = rings_of(f)
    bytes_ = int(f["llm/jobs/flow_bytes"][0])
    delay = cfg["engine"]["control_latency_ns"]
    delta = max_tor_degree(fab, rings)
    want_ideal = ideal(fab, cfg, rings, bytes_, delay)
    ar = {alg: float(g["llm/jobs/allreduce_mean_ns"][0]) for alg, g in res.items()}
    load = {alg: int(g["llm/decisions/max_link_load"][:].max()) for alg, g in res.items()}
    check("edge colouring reaches ceil(Delta / 32) = %d" % math.ceil(delta / 32),
          load["edge_coloring"] == math.ceil(delta / 32), str(load))
    check("the ILP equals edge colouring's max load", load["ilp"] == load["edge_coloring"], str(load))
    for alg in ("edge_coloring", "ilp"):
        check("%s reaches the ideal allreduce time" % alg, abs(ar[alg] - want_ideal) <= 1e-6 * want_ideal,
              "%.1f vs %.1f ns" % (ar[alg], want_ideal))
    check("greedy's max load is at most twice the optimum's", load["greedy"] <= 2 * load["ilp"], str(load))
    if load["greedy"] == 1:
        check("greedy at load 1 reaches the ideal time", abs(ar["greedy"] - want_ideal) <= 1e-6 * want_ideal,
              "%.1f vs %.1f" % (ar["greedy"], want_ideal))
    live = fab.spines
    want_ecmp = fluid_allreduce(fab, cfg, rings, lambda s, d: fab.ecmp_spine(s, d, live), bytes_,
                                float(f["llm/jobs/start_ns"][0]), delay)
    check("ECMP collides here (the test can fail)", want_ecmp > 1.05 * want_ideal,
          "%.1f vs %.1f" % (want_ecmp, want_ideal))
    check("ECMP's allreduce time is what its collisions imply (max-min fluid, computed here)",
          abs(ar["ecmp"] - want_ecmp) <= 1e-5 * want_ecmp, "%.1f vs %.1f ns" % (ar["ecmp"], want_ecmp))
    check("routing.algorithm = ecmp with the wang_jenkins hash gives the same (controller none)",
          abs(float(run(tmp, "bloom_none", PAPER.format(seed=1234, alg="none", interval=0))[0]
                    ["llm/jobs/allreduce_mean_ns"][0]) - ar["ecmp"]) <= 1e-9 * ar["ecmp"])

    # replan = "flows": the controller also decides as ring flows end and
    # start, over the flows in flight only (so never more than the phase's).
    g, _ = run(tmp, "flows", PAPER.format(seed=1234, alg="greedy", interval=0).replace("[output]", 'replan = "flows"\n[output]'))
    trig = [t.decode() for t in g["llm/decisions/trigger"][:]]
    s = summary(g)
    check("replan = flows: decisions at flow events, each on at most the phase's commodities",
          trig.count("flows") > 0 and len(trig) > len(res["greedy"]["llm/decisions/trigger"][:]) and
          int(g["llm/decisions/commodities"][:].max()) <= int(res["greedy"]["llm/decisions/commodities"][:].max()),
          str(trig[:5]))
    check("replan = flows: every flow arrives, no faster than the ideal",
          s["messages_delivered"] == s["messages"] and
          float(g["llm/jobs/allreduce_mean_ns"][0]) >= want_ideal * (1 - 1e-9))

    # controller.latency_ns: the first step's flows start on routing.algorithm
    # (the paper's ECMP) and are re-pinned when the decision arrives.
    lat = int(0.2 * want_ideal / 6)
    g, _ = run(tmp, "latency", PAPER.format(seed=1234, alg="edge_coloring", interval=0).replace(
        "[output]", "latency_ns = %d\n[output]" % lat))
    s = summary(g)
    t_dec = g["llm/decisions/time_ns"][:]
    check("latency_ns: the decision takes effect latency_ns after the allreduce starts and re-pins flows in flight",
          abs(t_dec[0] - (float(g["llm/jobs/start_ns"][0]) + lat)) < 1e-3 and g["llm/decisions/repinned"][0] > 0,
          "%s %s" % (t_dec, g["llm/decisions/repinned"][:]))
    check("latency_ns: between the optimum and ECMP, every flow arrives",
          ar["edge_coloring"] < float(g["llm/jobs/allreduce_mean_ns"][0]) < ar["ecmp"] and
          s["messages_delivered"] == s["messages"] and s["bytes_delivered"] == s["bytes_injected"])

    # The released code's traffic_pairs files replay a placement exactly:
    # the same rings (written here in its format and numbering: ToRs 0..63,
    # spines 64..95, NICs from 96), sizes and times give the same run.
    members = rings_of(f)
    n_leaves, n_spines = len(fab.leaves), len(fab.spines)
    compute_ns = 1238769231  # BLOOM's compute gap (spec 5.3)
    pairs = os.path.join(tmp, "job_0-BLOOM.txt")
    full_bytes = -(-(-(-(176 * 4 * 10**9) // 48)) // 4)  # the spec's S for BLOOM at DP 4
    with open(pairs, "w") as out:
        out.write("#src dst src_tor dst_tor start_time flow_size compute_time stage_index\n")
        for r, ring in enumerate(members):
            for i, s_ in enumerate(ring):
                d_ = ring[(i + 1) % len(ring)]
                out.write("%d %d %d %d %d %d %d %d\n" % (
                    s_ + n_leaves + n_spines, d_ + n_leaves + n_spines, fab.leaves.index(fab.tor[s_]),
                    fab.leaves.index(fab.tor[d_]), 1000000, full_bytes, compute_ns, r))
    replay_cfg = PAPER.format(seed=99, alg="edge_coloring", interval=0).replace(
        'mix = "list"', 'mix = "traffic_pairs"\ntraffic_pairs = ["%s"]' % pairs)
    g, _ = run(tmp, "replay", replay_cfg)
    check("traffic_pairs: the file's GPUs are the job's, ring by ring",
          rings_of(g) == members and int(g["llm/jobs/flow_bytes"][0]) == bytes_)
    check("traffic_pairs: the replay gives the run it was written from",
          float(g["llm/jobs/allreduce_mean_ns"][0]) == ar["edge_coloring"],
          "%s vs %s" % (g["llm/jobs/allreduce_mean_ns"][0], ar["edge_coloring"]))
    lines = open(pairs).read().splitlines()
    fields = lines[3].split()
    fields[2] = str((int(fields[2]) + 1) % n_leaves)
    lines[3] = " ".join(fields)
    with open(pairs, "w") as out:
        out.write("\n".join(lines) + "\n")
    cfg_path = os.path.join(tmp, "replay_bad.toml")
    with open(cfg_path, "w") as out:
        out.write(replay_cfg)
    r = subprocess.run([EXE, "run", cfg_path, "-o", os.path.join(tmp, "bad.h5")], capture_output=True, text=True)
    err = r.stderr.strip().splitlines()
    check("traffic_pairs: a NIC under the wrong ToR is one line naming the config's key, the file and its line",
          r.returncode == 2 and len(err) == 1 and "llm.traffic_pairs: %s:4: NIC" % pairs in err[0] and
          "replay_bad.toml:" in err[0] and not os.path.exists(os.path.join(tmp, "bad.h5")), r.stderr)

    # ------------------------------------------------------------ 2. failures, flow model
    dead = ["spine%d" % s for s in range(28, 32)]
    rows = "".join('[[failures]]\nelement = "%s"\n' % d for d in dead)
    dead_nodes = [fab.names.index(d) for d in dead]
    dead_links = np.nonzero(np.isin(fab.src, dead_nodes) | np.isin(fab.dst, dead_nodes))[0]
    for alg in ("edge_coloring", "greedy", "ecmp", "annealing", "ilp"):
        g, _ = run(tmp, "down4_" + alg, PAPER.format(seed=1234, alg=alg, interval=0) + rows)
        s = summary(g)
        check("%s: no byte on the 4 dead spines, every flow arrives" % alg,
              int(g["links/tx_bytes"][:][dead_links].sum()) == 0 and s["messages_failed"] == 0 and
              s["messages_delivered"] == s["messages"])
        if alg == "edge_coloring":
            check("edge colouring reaches ceil(Delta / 28) with 4 spines down",
                  int(g["llm/decisions/max_link_load"][:].max()) == math.ceil(delta / 28))
    # A spine fails during the allreduce.
    start = float(f["llm/jobs/start_ns"][0])
    at = int(start + 0.3 * ar["greedy"])
    g, _ = run(tmp, "midrun", PAPER.format(seed=1234, alg="greedy", interval=20000) +
               '[[failures]]\nelement = "spine0"\nat_ns = %d\n' % at)
    s = summary(g)
    trig = [t.decode() for t in g["llm/decisions/trigger"][:]]
    fail_rows = [i for i, t in enumerate(trig) if "failure" in t]
    check("the controller re-planned at the failure", len(fail_rows) == 1 and
          abs(g["llm/decisions/time_ns"][fail_rows[0]] - at) < 1e-3, str(trig))
    spine0 = fab.names.index("spine0")
    s0 = np.nonzero((fab.src == spine0) | (fab.dst == spine0))[0]
    series = g["links/timeseries/tx_bytes"][:]
    interval = g["links/timeseries/tx_bytes"].attrs["interval_ns"]
    carried = series[s0, : int(at // interval)].sum()
    check("spine0 carried flows before it failed, so re-pinning had work",
          carried > 0 and g["llm/decisions/repinned"][fail_rows[0]] > 0)
    check("no byte crosses spine0 after the failure", series[s0, int(at // interval) + 1:].sum() == 0)
    check("mid-run failure: nothing stranded, every flow arrives, the iteration completes",
          s["packets_stranded"] == 0 and s["messages_failed"] == 0 and s["messages_delivered"] == s["messages"]
          and int(g["llm/jobs/iterations_done"][0]) == 1, str(s))
    flow_bytes = int(np.sum(g["flows/bytes"][:]))
    check("re-pinned flows conserve bytes (delivered = sent = ring flows x size)",
          s["bytes_delivered"] == flow_bytes == s["bytes_injected"], "%s vs %d" % (s, flow_bytes))

    # ------------------------------------------------------------ 3. packet model, 1/2/3 ranks
    small = """
[topology]
kind = "leaf_spine"
leaves = 8
spines = 4
servers_per_leaf = 4
gpus_per_server = 8
radix = 64
[network]
link_gbps = 100
link_latency_ns = 500
[workload]
kind = "llm_dp"
[llm]
mix = "list"
models = ["bloom", "bloom"]
rings = [2, 2]
starts_s = [0.0, 0.01]
iterations = 2
size_scale = 4e-6
time_scale = 1e-3
[controller]
algorithm = "greedy"
[engine]
control_latency_ns = 2000
[[failures]]
element = "spine3"
at_ns = {at}
[output]
interval_ns = 10000
"""
    # Where the first iteration ends and the second job starts, from a run without the failure.
    probe, _ = run(tmp, "probe", small.format(at=10**12))
    # The failure: in a stretch where no ring of either job is in its
    # allreduce, after the first one (found from a run without it).
    spans = sorted(zip(probe["llm/rings/start_ns"][:], probe["llm/rings/end_ns"][:]))
    covered, gap_at = spans[0][1], None
    for a, b in spans[1:]:
        if a > covered + 4000:
            gap_at = int((covered + a) / 2)
            break
        covered = max(covered, b)
    check("the probe run has a pause between allreduces", gap_at is not None)
    runs = {r: run(tmp, "packet", small.format(at=gap_at), r) for r in (1, 2, 3)}
    f1 = runs[1][0]
    s = summary(f1)
    check("packet model: payload injected = delivered, nothing stranded or failed",
          s["bytes_injected"] == s["bytes_delivered"] and s["packets_stranded"] == 0 and s["messages_failed"] == 0,
          str(s))
    check("packet model: every ring flow arrived, both jobs did their iterations",
          s["messages_delivered"] == s["messages"] and list(f1["llm/jobs/iterations_done"][:]) == [2, 2])
    check("packet model: flows were re-pinned in flight (the second job's start re-plans the first's)",
          int(f1["llm/decisions/repinned"][:].sum()) > 0, str(f1["llm/decisions/repinned"][:]))
    names = [n.decode() for n in f1["nodes/name"][:]]
    sp3 = names.index("spine3")
    l3 = np.nonzero((f1["links/src"][:] == sp3) | (f1["links/dst"][:] == sp3))[0]
    ser = f1["links/timeseries/tx_bytes"][:]
    iv = f1["links/timeseries/tx_bytes"].attrs["interval_ns"]
    check("packet model: spine3 idle after it failed between iterations",
          ser[l3, int(gap_at // iv) + 1:].sum() == 0 and ser[l3, : int(gap_at // iv)].sum() > 0)
    keys = ["links/tx_bytes", "links/timeseries/tx_bytes", "flows/end_ns", "flows/start_ns"]
    keys += ["llm/" + g + "/" + k for g in ("rings", "jobs", "decisions", "iterations", "flows")
             for k in f1["llm/" + g].keys() if k != "wall_us"]
    for r in (2, 3):
        g = runs[r][0]
        diff = [k for k in keys if not np.array_equal(f1[k][:], g[k][:], equal_nan=f1[k].dtype.kind == "f")]
        check("packet model with a controller and a spine failure: %d ranks identical to 1" % r, not diff, str(diff))

print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
