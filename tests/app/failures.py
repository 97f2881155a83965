#!/usr/bin/python3
"""Link state and failures (issue 28, item 5).

1. A spine fails mid-run on a leaf-spine under ECMP (packet model): no byte
   starts on its links after the failure (they carried bytes before), the
   stranded packets are counted per link and in /summary, conservation
   holds (injected = delivered + stranded, packets and payload), the
   messages reported failed are exactly those /flows shows unfinished, and
   /links, /flows and /summary are identical at 1, 2 and 3 ranks.
2. The same failure with until_ns: the spine carries bytes again after it.
3. The flow model on the same failure: flows move off the dead spine, none
   is lost, every message arrives, and no byte crosses the spine after.
4. A failed link at t = 0 (a spine's downlink to one leaf and a leaf's
   uplink to another spine) is avoided by every tree algorithm (ecmp,
   spray, adaptive, dmodk; flow ecmp and spray, analytic ecmp): no byte on
   either link, every message delivered.  Without the failure the ECMP run
   uses both links (so the check can fail).
   A failure (and a recovery) after the last message changes nothing,
   not even the run's end time, in the packet and flow models.
5. No alternative: a torus link down at t = 0 under dimension order.  The
   messages whose one route crosses it (computed here from the torus's
   dimension-order rule, independently of the C++) are reported failed and
   never sent; the others arrive; adaptive routing loses only the messages
   whose every minimal route crosses it.

  failures.py EXE [MPIEXEC]
"""
import itertools
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

EXE = sys.argv[1]
MPIEXEC = sys.argv[2] if len(sys.argv) > 2 else "mpirun"
failures, passes = [], []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))
    (passes if ok else failures).append(what)


LEAF_SPINE = """
[topology]
kind = "leaf_spine"
leaves = 4
spines = 4
servers_per_leaf = 2
gpus_per_server = 4
radix = 16
[routing]
algorithm = "{alg}"
[network]
model = "{model}"
[workload]
pattern = "permutation"
messages = 8
message_bytes = 32768
[output]
interval_ns = 1000
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


def node_links(f, name):
    names = [n.decode() for n in f["nodes/name"][:]]
    n = names.index(name)
    src, dst = f["links/src"][:], f["links/dst"][:]
    return np.nonzero((src == n) | (dst == n))[0]


def link_between(f, a, b):
    names = [n.decode() for n in f["nodes/name"][:]]
    src, dst = f["links/src"][:], f["links/dst"][:]
    return np.nonzero((src == names.index(a)) & (dst == names.index(b)))[0]


def summary(f):
    return {k: int(v) for k, v in f["summary"].attrs.items() if isinstance(v, (int, np.integer))}


with tempfile.TemporaryDirectory() as tmp:
    # 1. A spine down at 3 us, packet model, 1/2/3 ranks.
    AT = 3000
    text = LEAF_SPINE.format(alg="ecmp", model="packet") + '[[failures]]\nelement = "spine1"\nat_ns = %d\n' % AT
    runs = {r: run(tmp, "spine_down", text, r) for r in (1, 2, 3)}
    f, stdout = runs[1]
    s = summary(f)
    spine = node_links(f, "spine1")
    series = f["links/timeseries/tx_bytes"][:]
    interval = f["links/timeseries/tx_bytes"].attrs["interval_ns"]
    first_after = int(np.ceil(AT / interval)) + 1  # bins that start after the failure (one bin of margin)
    check("the spine carried bytes before it failed", series[spine, :first_after - 1].sum() > 0)
    check("no byte starts on the failed spine's links after the failure",
          series[spine, first_after:].sum() == 0, str(series[spine, first_after:].sum()))
    check("packets were stranded", s["packets_stranded"] > 0)
    check("conservation: packets injected = delivered + stranded",
          s["packets_injected"] == s["packets_delivered"] + s["packets_stranded"], str(s))
    check("conservation: payload injected = delivered + stranded",
          s["bytes_injected"] == s["bytes_delivered"] + s["bytes_stranded"], str(s))
    check("per-link stranded counts add up to /summary",
          int(f["links/stranded_packets"][:].sum()) == s["packets_stranded"] and
          int(f["links/stranded_bytes"][:].sum()) == s["bytes_stranded"])
    stranded_links = np.nonzero(f["links/stranded_packets"][:])[0]
    check("packets are stranded only on links into or out of the failed spine",
          set(stranded_links) <= set(spine), str(stranded_links))
    unfinished = int((f["flows/end_ns"][:] < 0).sum())
    check("messages_failed is the number of messages /flows shows unfinished",
          s["messages_failed"] == unfinished and unfinished > 0, "%d vs %d" % (s["messages_failed"], unfinished))
    check("messages delivered + failed = messages", s["messages_delivered"] + s["messages_failed"] == s["messages"])
    check("the run reports the failures", "failures" in stdout and "stranded" in stdout)
    for r in (2, 3):
        g = runs[r][0]
        same = all(np.array_equal(f[k][:], g[k][:]) for k in
                   ("links/tx_bytes", "links/stranded_packets", "links/stranded_bytes",
                    "links/timeseries/tx_bytes", "flows/end_ns"))
        gs = summary(g)
        keys = ("packets_injected", "packets_delivered", "packets_stranded", "bytes_stranded", "bytes_unsent",
                "messages_failed", "messages_delivered", "packet_hops")
        check("%d ranks identical to 1 rank" % r, same and all(gs[k] == s[k] for k in keys),
              str({k: (s[k], gs[k]) for k in keys if gs[k] != s[k]}))

    # 2. Down from 3 us to 5 us: back in use afterwards.
    UNTIL = 5000
    text = (LEAF_SPINE.format(alg="ecmp", model="packet") +
            '[[failures]]\nelement = "spine1"\nat_ns = %d\nuntil_ns = %d\n' % (AT, UNTIL))
    f, _ = run(tmp, "spine_back", text)
    series = f["links/timeseries/tx_bytes"][:]
    spine = node_links(f, "spine1")
    back = int(UNTIL // interval)
    check("nothing on the spine while it is down",
          series[spine, first_after:back].sum() == 0, str(series[spine, first_after:back].sum()))
    check("the spine carries bytes again once it is back", series[spine, back:].sum() > 0)

    # 3. The flow model: flows move off the spine; nothing lost.
    text = LEAF_SPINE.format(alg="ecmp", model="flow") + '[[failures]]\nelement = "spine1"\nat_ns = %d\n' % AT
    f, _ = run(tmp, "flow_spine_down", text)
    s = summary(f)
    series = f["links/timeseries/tx_bytes"][:]
    spine = node_links(f, "spine1")
    check("flow model: the spine carried bytes before", series[spine, :first_after - 1].sum() > 0)
    check("flow model: no byte on the spine after the failure", series[spine, first_after:].sum() == 0,
          str(series[spine, first_after:].sum()))
    check("flow model: every flow moved to a live spine, every message delivered",
          s["messages_failed"] == 0 and s["messages_delivered"] == s["messages"] and s["packets_stranded"] == 0, str(s))

    # 4. A failed downlink and uplink at t = 0: avoided by every tree algorithm.
    dead = [("spine1", "leaf2"), ("leaf0", "spine2")]
    rows = "".join('[[failures]]\nelement = "%s->%s"\n' % d for d in dead)
    f, _ = run(tmp, "no_failure", LEAF_SPINE.format(alg="ecmp", model="packet"))
    tx = f["links/tx_bytes"][:]
    check("without the failure ECMP uses both links",
          all(tx[link_between(f, a, b)].sum() > 0 for a, b in dead))
    for model, alg in [("packet", "ecmp"), ("packet", "spray"), ("packet", "adaptive"), ("packet", "dmodk"),
                       ("flow", "ecmp"), ("flow", "spray"), ("analytic", "ecmp")]:
        f, _ = run(tmp, "t0_%s_%s" % (model, alg), LEAF_SPINE.format(alg=alg, model=model) + rows)
        s = summary(f)
        tx = f["links/tx_bytes"][:]
        on_dead = sum(int(tx[link_between(f, a, b)].sum()) for a, b in dead)
        check("%s %s: no byte on the failed links, every message delivered" % (model, alg),
              on_dead == 0 and s["messages_delivered"] == s["messages"] and s["messages_failed"] == 0,
              "%d bytes on them, %s" % (on_dead, s))

    # 4b. Failures after the work is done change nothing, and do not stretch
    # the run to their times (sim_time_ns, the time series).
    base = run(tmp, "no_failure", LEAF_SPINE.format(alg="ecmp", model="packet"))[0]
    for model in ("packet", "flow"):
        ref = base if model == "packet" else run(tmp, "no_failure_flow", LEAF_SPINE.format(alg="ecmp", model=model))[0]
        late = '[[failures]]\nelement = "spine1"\nat_ns = 1000000000\nuntil_ns = 2000000000\n'
        f, _ = run(tmp, "late_" + model, LEAF_SPINE.format(alg="ecmp", model=model) + late)
        same = (f["summary"].attrs["sim_time_ns"] == ref["summary"].attrs["sim_time_ns"] and
                np.array_equal(f["links/tx_bytes"][:], ref["links/tx_bytes"][:]) and
                f["links/timeseries/tx_bytes"].shape == ref["links/timeseries/tx_bytes"].shape)
        check("%s: a failure after the last message changes nothing, not even the run's end" % model, same,
              "sim_time %s vs %s" % (f["summary"].attrs["sim_time_ns"], ref["summary"].attrs["sim_time_ns"]))

    # 5. A torus link down: dimension order has no alternative.
    TORUS = """
[topology]
kind = "torus"
dims = [4, 4]
[routing]
algorithm = "{alg}"
[network]
vcs = 3
[workload]
pattern = "alltoall"
messages = 15
message_bytes = 8192
[[failures]]
element = "{a}->{b}"
"""
    f, _ = run(tmp, "torus_names", TORUS.format(alg="dor", a="ep0", b="ep1").replace('[[failures]]\nelement = "ep0->ep1"\n', ""))
    names = [n.decode() for n in f["nodes/name"][:]]
    src, dst, kind = f["links/src"][:], f["links/dst"][:], f["nodes/kind"][:]
    # Endpoint e sits at (e % 4, e // 4), x fastest (the torus's numbering).
    ep = {names[n]: n for n in range(len(names))}

    def coord(e):
        return (e % 4, e // 4)

    a_xy, b_xy = (1, 1), (2, 1)
    a_name, b_name = "ep%d" % (a_xy[0] + 4 * a_xy[1]), "ep%d" % (b_xy[0] + 4 * b_xy[1])
    check("the torus has the link %s->%s" % (a_name, b_name),
          len(np.nonzero((src == ep[a_name]) & (dst == ep[b_name]))[0]) == 1)

    def ring_steps(a, b):
        """Minimal steps on a ring of 4 from a to b: the directions that are shortest."""
        d = (b - a) % 4
        if d == 0:
            return []
        if d == 2:
            return [+1, -1]  # a tie: either way
        return [+1] if d == 1 else [-1]

    def dor_paths(s, t):
        """Every dimension-order route (x first, then y) as a list of (from, to) hops."""
        routes = []
        for dx in ring_steps(s[0], t[0]) or [0]:
            for dy in ring_steps(s[1], t[1]) or [0]:
                hops, (x, y) = [], s
                while x != t[0]:
                    nx = (x + dx) % 4
                    hops.append(((x, y), (nx, y)))
                    x = nx
                while y != t[1]:
                    ny = (y + dy) % 4
                    hops.append(((x, y), (x, ny)))
                    y = ny
                routes.append(hops)
        return routes

    def minimal_paths(s, t):
        """Every minimal route (any order of x and y steps)."""
        out = []
        for dx in ring_steps(s[0], t[0]) or [0]:
            for dy in ring_steps(s[1], t[1]) or [0]:
                nx = 0 if dx == 0 else (2 if (t[0] - s[0]) % 4 == 2 else 1)
                ny = 0 if dy == 0 else (2 if (t[1] - s[1]) % 4 == 2 else 1)
                for order in set(itertools.permutations("x" * nx + "y" * ny)):
                    hops, (x, y) = [], s
                    for step in order:
                        n = ((x + dx) % 4, y) if step == "x" else (x, (y + dy) % 4)
                        hops.append(((x, y), n))
                        x, y = n
                    out.append(hops)
        return out

    pairs = [(e, (e + i) % 16) for i in range(1, 16) for e in range(16)]
    dead_hop = (a_xy, b_xy)
    # dor: the route of a pair with a tie in x or y is one of the tied ones
    # (which one is the C++'s rule): a pair fails for sure if every route
    # crosses the link, may fail if some does, and arrives if none does.
    must_fail = sum(1 for s_, t_ in pairs if all(dead_hop in r for r in dor_paths(coord(s_), coord(t_))))
    may_fail = sum(1 for s_, t_ in pairs if any(dead_hop in r for r in dor_paths(coord(s_), coord(t_))))
    f, stdout = run(tmp, "torus_dor", TORUS.format(alg="dor", a=a_name, b=b_name))
    s = summary(f)
    tx = f["links/tx_bytes"][:]
    dead_link = np.nonzero((src == ep[a_name]) & (dst == ep[b_name]))[0]
    check("torus dor: no byte on the failed link", int(tx[dead_link].sum()) == 0)
    check("torus dor: the messages whose dimension-order route crosses it fail, the others arrive",
          must_fail <= s["messages_failed"] <= may_fail and s["messages_delivered"] + s["messages_failed"] == len(pairs)
          and s["packets_stranded"] == 0 and s["bytes_unsent"] > 0,
          "failed %d, expected %d..%d; %s" % (s["messages_failed"], must_fail, may_fail, s))
    check("torus dor: the report names a failed message", "failures" in stdout and "message " in stdout)
    no_minimal = sum(1 for s_, t_ in pairs if all(dead_hop in r for r in minimal_paths(coord(s_), coord(t_))))
    f, _ = run(tmp, "torus_adaptive", TORUS.format(alg="adaptive", a=a_name, b=b_name))
    s = summary(f)
    tx = f["links/tx_bytes"][:]
    check("torus adaptive: no byte on the failed link", int(tx[dead_link].sum()) == 0)
    check("torus adaptive: only the messages with no minimal route around it fail",
          s["messages_failed"] == no_minimal and s["messages_delivered"] == len(pairs) - no_minimal,
          "failed %d, expected %d" % (s["messages_failed"], no_minimal))

print("%d checks passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
