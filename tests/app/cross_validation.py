#!/usr/bin/python3
"""Cross-validation of the packet, flow and analytic network models (issue 20).

Runs the same configuration under `network.model = "packet"`, `"flow"` and
(where stated) `"analytic"`, and checks each comparison against a stated
tolerance; every check can fail.  The cases, what is compared and why the
models differ where they do are in docs/model.md, "Flow-level and analytic
models"; each case below says it again next to its checks.

  cross_validation.py EXE [--table] [--keep DIR] [-k SUBSTRING]

--table prints the cross-validation table of docs/model.md (Markdown) after
the checks; -k runs only the cases whose name contains SUBSTRING; --keep
leaves the configurations and output files in DIR.  Exit 0 when every check
passes, 1 otherwise (one `FAIL` line per failed check).  About 30 s on
one core.
"""
import argparse
import heapq
import math
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

MODELS = ("packet", "flow", "analytic")


class Ctx(object):
    def __init__(self, exe, workdir):
        self.exe = exe
        self.dir = workdir
        self.checks = []  # (case, name, ok, detail)
        self.rows = []    # table rows
        self.case = ""

    def check(self, name, ok, detail):
        self.checks.append((self.case, name, bool(ok), detail))
        print("  %s %s: %s" % ("ok  " if ok else "FAIL", name, detail))

    def row(self, config, packet, flow, analytic, diff, why):
        self.rows.append((config, packet, flow, analytic, diff, why))

    def run(self, name, model, toml, sets=(), files=None):
        """Runs `toml` (text) under `model`; returns the open output file."""
        for fname, text in (files or {}).items():
            with open(os.path.join(self.dir, fname), "w") as f:
                f.write(text)
        cfg = os.path.join(self.dir, name + ".toml")
        with open(cfg, "w") as f:
            f.write(toml)
        out = os.path.join(self.dir, "%s_%s.h5" % (name, model))
        cmd = [self.exe, "run", cfg, "--set", 'network.model="%s"' % model, "-o", out]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
        return h5py.File(out, "r")


# ------------------------------------------------------------ output readers

def fct_ns(f):
    fl = f["flows"]
    return fl["end_ns"][:] - fl["start_ns"][:]


def makespan_ns(f):
    fl = f["flows"]
    return float(fl["end_ns"][:].max() - fl["start_ns"][:].min())


def collective_ns(f):
    """Per /collectives row: (job, bytes) -> time of the timed iterations (ns, list)."""
    c = f["collectives"]
    out = {}
    job = c["job"][:] if "job" in c else np.zeros(len(c["bytes"]), dtype=int)
    for j, b, it, s, e in zip(job, c["bytes"][:], c["iteration"][:], c["start_ns"][:], c["end_ns"][:]):
        if it >= 0:
            out.setdefault((int(j), int(b)), []).append(float(e - s))
    return out


def iteration_ns(f):
    it = f["iterations"]
    return [float(t) for t, k in zip(it["time_ns"][:], it["iteration"][:]) if k >= 0]


def rel(a, b):
    """(a - b) / b."""
    return (a - b) / b


def us(x):
    return "%.2f us" % (x / 1e3)


def pct(x):
    return "%+.2f%%" % (100.0 * x)


# ------------------------------------------------------- fabric comparisons

FAT64 = """[topology]
kind = "fat_tree"
endpoints = 64
radix = 16
[network]
link_gbps = 400
link_latency_ns = 20
switch_latency_ns = 100
[routing]
algorithm = "adaptive"
[output]
interval_ns = 0
"""


def case_permutation(ctx):
    # A random permutation of 1 MiB messages on a nonblocking 64-endpoint fat
    # tree, adaptive routing (the flow model splits every message evenly over
    # the up paths, what per-packet adaptive routing approaches).  The flow
    # model is the fluid ideal: every message at its NIC's line rate, so no
    # message may finish earlier in the packet model (0.1% for rounding);
    # the packet model loses some to per-packet path choices that collide on
    # the down links (transient queues) and a little to crossbar matching
    # (with crossbar_speedup 8 instead of 2: 22.85 instead of 23.12 us): up
    # to 6.6% per message, so 10% is the bound.
    toml = FAT64 + '[workload]\nkind = "traffic"\npattern = "permutation"\nmessage_bytes = 1048576\n'
    f = {m: ctx.run("permutation", m, toml) for m in MODELS}
    p, q, a = fct_ns(f["packet"]), fct_ns(f["flow"]), fct_ns(f["analytic"])
    r = (p - q) / q
    ctx.check("per-message packet >= flow", r.min() >= -0.001, "min (packet - flow) / flow = %s" % pct(r.min()))
    ctx.check("per-message packet within 10% of flow", r.max() <= 0.10, "max %s, median %s" % (pct(r.max()), pct(np.median(r))))
    mp, mq, ma = (makespan_ns(f[m]) for m in MODELS)
    ctx.check("makespan within 10%", 0 <= rel(mp, mq) <= 0.10, "packet %s, flow %s (%s)" % (us(mp), us(mq), pct(rel(mp, mq))))
    ctx.row("permutation, 64-endpoint fat tree, 1 MiB, adaptive: makespan", us(mp), us(mq), us(ma),
            "flow %s, analytic %s" % (pct(rel(mq, mp)), pct(rel(ma, mp))),
            "packet: per-packet adaptive choices collide on down links (transient queues), a little crossbar "
            "matching (per message +%.1f%% median, +%.1f%% max over flow); analytic: one hashed path per message, "
            "FIFO store-and-forward"
            % (100 * np.median(r), 100 * r.max()))
    # The same with ECMP: one hash for the three models (net::Ecmp), so each
    # message takes the same path in each: the same bytes on every link
    # (the flow model counts wire bytes as the packet model does, within a
    # byte per message; the analytic model counts payload, so only the links
    # it crosses are compared).  The flow model is again the fluid ideal on
    # those paths: max-min shares of the colliding messages, no queues.
    g = {m: ctx.run("permutation_ecmp", m, toml, ['routing.algorithm="ecmp"']) for m in MODELS}
    tx = {m: g[m]["links"]["tx_bytes"][:].astype(float) for m in MODELS}
    n = len(g["packet"]["flows"]["src"])
    worst = float(np.abs(tx["flow"] - tx["packet"]).max())
    ctx.check("ECMP: flow puts the packet model's bytes on every link", worst <= n, "max difference %g bytes" % worst)
    ctx.check("ECMP: analytic crosses the packet model's links", np.array_equal(tx["analytic"] > 0, tx["packet"] > 0),
              "%d links" % int((tx["packet"] > 0).sum()))
    ep, eq, ea = (makespan_ns(g[m]) for m in MODELS)
    ctx.check("ECMP: makespan packet >= flow", rel(ep, eq) >= -0.001, "packet %s, flow %s" % (us(ep), us(eq)))
    ctx.row("the same with ECMP: makespan", us(ep), us(eq), us(ea),
            "flow %s, analytic %s" % (pct(rel(eq, ep)), pct(rel(ea, ep))),
            "one ECMP hash in all three models: the same path per message, the same bytes on every link "
            "(checked); the packet model adds queueing and congestion spreading through credits where "
            "messages collide")


def case_alltoall(ctx):
    # Pairwise alltoall (collective): n-1 steps, in step i rank r sends S/n
    # to rank r+i+1 once it has received step i-1's message.
    # (a) 8 ranks on one leaf, 4 MiB: one switch, a permutation per step, no
    #     choice of path: the flow model's pipelined latency is the packet
    #     model's cut-through, so within 0.5%.
    # (b) 64 ranks on the fat tree, 16 MiB (256 KiB per message): within
    #     [flow, flow + 10%] (measured +3.6%).
    # (c) 64 ranks, 4 MiB (64 KiB per message): the packet model is much
    #     slower (measured +56%; 1 MiB: +30%) and this is not a tolerance
    #     question but a different dynamic: per-packet adaptive choices make
    #     a few messages of a step late, their receivers start the next step
    #     late, and the ranks drift apart (the spread of a step's post times
    #     grows from 0 to tens of us) until messages of several steps meet at
    #     one receiver.  The flow model's rates are exactly equal, so it stays
    #     in lockstep (spread 0.3 us, the leaf-local versus remote latency,
    #     up to 3.5 us in the last steps).  Checked: the first steps agree
    #     (10%), the packet model's spread at the last step exceeds 5 times
    #     the flow model's largest, and the packet model is the slower.
    toml8 = FAT64.replace("endpoints = 64", "endpoints = 8") + (
        '[workload]\nkind = "collective"\nop = "alltoall"\nalgorithm = "pairwise"\nsizes = [4194304]\n')
    f = {m: ctx.run("alltoall_leaf", m, toml8) for m in ("packet", "flow")}
    t = {m: collective_ns(f[m])[(0, 4194304)][0] for m in ("packet", "flow")}
    d = rel(t["flow"], t["packet"])
    ctx.check("alltoall, 8 ranks on one leaf: flow within 0.5% of packet", abs(d) <= 0.005,
              "packet %s, flow %s (%s)" % (us(t["packet"]), us(t["flow"]), pct(d)))
    ctx.row("alltoall (pairwise), 8 ranks on one leaf, 4 MiB", us(t["packet"]), us(t["flow"]), "",
            "flow %s" % pct(d), "one switch, one path: cut-through = pipelined latency")
    for size, name in ((16777216, "16 MiB"), (4194304, "4 MiB")):
        toml = FAT64 + ('[workload]\nkind = "collective"\nop = "alltoall"\nalgorithm = "pairwise"\n'
                        'sizes = [%d]\n' % size)
        f = {m: ctx.run("alltoall_%d" % size, m, toml) for m in MODELS}
        t = {m: collective_ns(f[m])[(0, size)][0] for m in MODELS}
        d = rel(t["packet"], t["flow"])
        spread = {}
        for m in ("packet", "flow"):
            st = f[m]["flows"]["start_ns"][:].reshape(63, 64)
            e = f[m]["flows"]["end_ns"][:].reshape(63, 64)
            spread[m] = (st.max(axis=1) - st.min(axis=1), (e - st).mean(axis=1))
        if size == 16777216:
            ctx.check("alltoall 64 ranks %s: packet within [flow, flow + 10%%]" % name, -0.001 <= d <= 0.10,
                      "packet %s, flow %s (%s)" % (us(t["packet"]), us(t["flow"]), pct(d)))
            why = "long messages: collisions of per-packet choices average out"
        else:
            first = rel(spread["packet"][1][:3].mean(), spread["flow"][1][:3].mean())
            ctx.check("alltoall 64 ranks %s: first 3 steps' mean message time within 10%%" % name,
                      abs(first) <= 0.10, "packet vs flow %s" % pct(first))
            ctx.check("alltoall 64 ranks %s: packet ranks drift apart (last step's post spread > 5 x the flow "
                      "model's largest)" % name,
                      spread["packet"][0][-1] > 5 * spread["flow"][0].max(),
                      "spread of the last step's posts: packet %s, flow %s (flow max %s)"
                      % (us(spread["packet"][0][-1]), us(spread["flow"][0][-1]), us(spread["flow"][0].max())))
            ctx.check("alltoall 64 ranks %s: packet slower than flow" % name, d > 0,
                      "packet %s, flow %s (%s)" % (us(t["packet"]), us(t["flow"]), pct(d)))
            why = ("packet: per-packet adaptive collisions delay a few messages, the ranks drift apart "
                   "(post spread of the last step %s; flow %s) and messages of several steps meet at one "
                   "receiver; the flow model stays in lockstep" % (us(spread["packet"][0][-1]),
                                                                   us(spread["flow"][0][-1])))
        ctx.row("alltoall (pairwise), 64 ranks, %s, fat tree, adaptive" % name, us(t["packet"]), us(t["flow"]),
                us(t["analytic"]), "flow %s, analytic %s" % (pct(rel(t["flow"], t["packet"])),
                                                           pct(rel(t["analytic"], t["packet"]))),
                why + "; analytic: store-and-forward, one hashed path, FIFO")


def case_allreduce(ctx):
    # Ring allreduce (64 ranks in order: each step's messages are a shift by
    # one, at most one crosses each leaf boundary) and double binary tree
    # allreduce (256 KiB chunks) on the same fat tree.  Ring: no link is
    # shared, so the flow model's pipelined latency is the packet model's
    # virtual cut-through to the picosecond; 1% allowed.  Double binary
    # tree: a node receives from two children and sends to its parent (and
    # the other tree's traffic crosses it), so downlinks are shared three
    # ways; in the packet model the shared input buffers couple a NIC's
    # messages (one blocked by credits delays the others: 290 -> 272 us for
    # 4 MiB with 4 MiB buffers instead of 256 KiB) and per-packet adaptive
    # choices collide; the flow model gives every flow its max-min share.
    # Measured 0.7% (64 KiB) and 20.8% (4 MiB); bound 25% at 4 MiB, 5% at
    # 64 KiB, packet never faster than flow.  Where the 20.8% comes from
    # (4 MiB, flow 239.8 us): the same 64 ranks on one 128-port switch take
    # 249.5 us (248 us with 4 MiB buffers: +4% without any path choice);
    # on the fat tree 271.9 us with 4 MiB buffers (path choices, +10%) and
    # 289.6 us with 256 KiB (credits, +7%).
    for alg, extra, tol in (("ring", "", {65536: 0.01, 4194304: 0.01}),
                            ("double_binary_tree", "chunk_bytes = 262144\n", {65536: 0.05, 4194304: 0.25})):
        for size in (65536, 4194304):
            name = "allreduce_%s_%d" % (alg, size)
            toml = FAT64 + ('[workload]\nkind = "collective"\nop = "allreduce"\nalgorithm = "%s"\nsizes = [%d]\n%s'
                            % (alg, size, extra))
            f = {m: ctx.run(name, m, toml) for m in MODELS}
            t = {m: collective_ns(f[m])[(0, size)][0] for m in MODELS}
            d = rel(t["packet"], t["flow"])
            lo = -0.01 if alg == "ring" else -0.001
            ctx.check("%s allreduce %d B: packet within [%s, %s] of flow" % (alg, size, pct(lo), pct(tol[size])),
                      lo <= d <= tol[size], "packet %s, flow %s (%s)" % (us(t["packet"]), us(t["flow"]), pct(d)))
            why = ("no shared link: cut-through pipelining is the flow model's latency term" if alg == "ring" else
                   "shared input buffers couple a NIC's messages (credits), per-packet adaptive collisions; "
                   "flow gives max-min shares")
            ctx.row("%s allreduce, 64 ranks, %s, fat tree%s" % (alg, "64 KiB" if size == 65536 else "4 MiB",
                                                                ", 256 KiB chunks" if extra else ""),
                    us(t["packet"]), us(t["flow"]), us(t["analytic"]),
                    "flow %s, analytic %s" % (pct(rel(t["flow"], t["packet"])), pct(rel(t["analytic"], t["packet"]))),
                    why + "; analytic: store-and-forward per message")


DNN_MODEL_LAYERS = 4


def case_dnn(ctx, src):
    # BERT (inputs/models/bert.toml) shrunk to 4 encoder layers, D4 x P2 x O2
    # on a 16-GPU leaf-spine (2 leaves, 2 spines, 100 Gb/s NICs), 2
    # micro-batches.  Adaptive routing: the flow model splits evenly over
    # the spines, which the packet model's adaptive choice approaches when
    # every leaf's traffic is a few long allreduce messages.  Measured 0.01%;
    # bound 1%.
    with open(os.path.join(src, "inputs", "models", "bert.toml")) as f:
        model = f.read().replace("count = 12", "count = %d" % DNN_MODEL_LAYERS)
    toml = """[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
servers_per_leaf = 2
gpus_per_server = 4
radix = 16
[network]
link_gbps = 100
link_latency_ns = 500
[routing]
algorithm = "adaptive"
[output]
interval_ns = 0
[workload]
kind = "dnn"
model = "bert_small.model.toml"
data_parallel = 4
pipeline_parallel = 2
tensor_parallel = 2
micro_batches = 2
minibatch = 64
iterations = 1
"""
    files = {"bert_small.model.toml": model}
    f = {m: ctx.run("dnn", m, toml, files=files) for m in MODELS}
    t = {m: iteration_ns(f[m])[0] for m in MODELS}
    d = rel(t["flow"], t["packet"])
    ctx.check("dnn iteration: flow within 1% of packet", abs(d) <= 0.01,
              "packet %s, flow %s (%s)" % (us(t["packet"]), us(t["flow"]), pct(d)))
    ctx.row("DNN: BERT, 4 layers, D4 x P2 x O2, 2 micro-batches, 16-GPU leaf-spine, adaptive: iteration",
            "%.3f ms" % (t["packet"] / 1e6), "%.3f ms" % (t["flow"] / 1e6), "%.3f ms" % (t["analytic"] / 1e6),
            "flow %s, analytic %s" % (pct(d), pct(rel(t["analytic"], t["packet"]))),
            "long allreduce messages, evenly spread: the fluid view holds; analytic: store-and-forward of "
            "whole messages over 2-4 links")
    g = {m: ctx.run("dnn_dmodk", m, toml, ['routing.algorithm="dmodk"'], files=files) for m in ("packet", "flow")}
    tp, tq = iteration_ns(g["packet"])[0], iteration_ns(g["flow"])[0]
    # D-mod-k's paths are the packet model's in the flow model too (once a
    # hashed path per message: 27% slower, from collisions D-mod-k avoids).
    ctx.check("dnn iteration, dmodk: flow within 1% of packet", abs(rel(tq, tp)) <= 0.01,
              "packet %s, flow %s (%s)" % (us(tp), us(tq), pct(rel(tq, tp))))
    ctx.row("the same with dmodk", "%.3f ms" % (tp / 1e6), "%.3f ms" % (tq / 1e6), "",
            "flow %s" % pct(rel(tq, tp)),
            "both take D-mod-k's collision-free paths")


def case_incast(ctx):
    # Incast of 1 MiB from N sources into endpoint 0.  The flow model gives
    # each source 1/N of the target's link, so all end together at about
    # N x W / g.  (a) 7 sources on the target's leaf: the leaf's output
    # serves its 7 inputs round-robin, packet by packet, which is the same
    # 1/N: every message within 0.5% of the flow model's time.  (b) 32
    # sources, 7 local and 25 behind the 8 spine inputs: the packet model's
    # round-robin is per input port, not per flow, so a local source gets
    # 1/15 of the link and finishes early while remote ones share a spine
    # input; the link is busy throughout, so the makespan agrees (0.5%) but
    # per-source times do not: the local ones end at 15 W / g.
    for n in (7, 32):
        toml = FAT64 + ('[workload]\nkind = "traffic"\npattern = "incast"\nincast_sources = %d\nincast_target = 0\n'
                        'message_bytes = 1048576\n' % n)
        f = {m: ctx.run("incast_%d" % n, m, toml) for m in MODELS}
        p, q = fct_ns(f["packet"]), fct_ns(f["flow"])
        mp, mq, ma = (makespan_ns(f[m]) for m in MODELS)
        ctx.check("incast %d: makespan within 0.5%%" % n, abs(rel(mq, mp)) <= 0.005,
                  "packet %s, flow %s (%s)" % (us(mp), us(mq), pct(rel(mq, mp))))
        ctx.check("incast %d: flow gives every source 1/N (all end together)" % n,
                  (q.max() - q.min()) / q.max() <= 0.001, "flow FCT %s to %s" % (us(q.min()), us(q.max())))
        if n == 7:
            r = (p - q) / q
            ctx.check("incast 7: every packet FCT within 0.5% of flow", np.abs(r).max() <= 0.005,
                      "max |packet - flow| / flow = %s" % pct(np.abs(r).max()))
            why = "same leaf: round-robin over inputs = over flows, so 1/N each, as max-min"
        else:
            # The target's leaf output has 15 inputs (7 local endpoints, 8
            # spines) served round-robin: a local source gets 1/15 of the link
            # and ends at 15 W / g; the 25 remote ones share the spine inputs
            # and end near the makespan.
            local = p[:7]
            fair15 = 15 * (1048576 + math.ceil(1048576 / 4032) * 64) * 8 / 400.0
            ctx.check("incast 32: local sources (1/15 of the link each) end at 15 W/g (1%), the median remote "
                      "one after 90% of the makespan",
                      np.abs(local / fair15 - 1).max() <= 0.01 and np.median(p[7:]) >= 0.9 * mp,
                      "local %s to %s (15 W/g = %s), remote %s to %s"
                      % (us(local.min()), us(local.max()), us(fair15), us(p[7:].min()), us(p[7:].max())))
            why = ("makespan agrees (the target link is never idle), but the packet model is fair per input "
                   "port, not per flow: local sources end at %s, the last remote one at %s; flow: all at %s"
                   % (us(p.min()), us(p.max()), us(q.max())))
        ctx.row("incast, %d x 1 MiB into one endpoint%s: makespan" % (n, " (same leaf)" if n == 7 else ""),
                us(mp), us(mq), us(ma), "flow %s, analytic %s" % (pct(rel(mq, mp)), pct(rel(ma, mp))),
                why + "; analytic: FIFO, whole messages one after another (+ one store-and-forward)")


PARKING_GRAPH = "".join('[[node]]\nname = "ep%d"\nkind = "endpoint"\n' % i for i in range(6)) + \
    "".join('[[node]]\nname = "s%d"\nkind = "switch"\n' % i for i in range(3)) + \
    "".join('[[link]]\na = "%s"\nb = "%s"\n' % ab for ab in
            (("ep0", "s0"), ("ep2", "s0"), ("ep3", "s1"), ("ep4", "s1"), ("ep5", "s2"), ("ep1", "s2"),
             ("s0", "s1"), ("s1", "s2")))


def case_parking_lot(ctx):
    # ep0 - s0 - s1 - s2 - ep1: the long flow ep0 -> ep1 crosses s0->s1 and
    # s1->s2; ep2 (at s0) -> ep3 (at s1) shares s0->s1 with it, ep4 (at s1)
    # -> ep5 (at s2) shares s1->s2.  Each 2 MB as a one-message broadcast
    # (three [[jobs]] of two ranks each), 100 Gb/s links.  Max-min: every
    # flow half of a link, so all three end at about 2 x 2 MB / 12.5 GB/s =
    # 320 us (+ latency).  check_parking_packet says what the packet model gives.
    toml = """[topology]
kind = "file"
file = "parking.graph.toml"
[network]
link_gbps = 100
link_latency_ns = 100
switch_latency_ns = 100
[output]
interval_ns = 0
[workload]
kind = "collective"
op = "broadcast"
algorithm = "ring"
sizes = [2000000]
placement = "list"
[[jobs]]
endpoints = [0, 1]
[[jobs]]
endpoints = [2, 3]
[[jobs]]
endpoints = [4, 5]
"""
    files = {"parking.graph.toml": PARKING_GRAPH}
    f = {m: ctx.run("parking_lot", m, toml, files=files) for m in MODELS}
    t = {m: [collective_ns(f[m])[(j, 2000000)][0] for j in range(3)] for m in MODELS}
    wire = 2000000 + math.ceil(2000000 / 4032) * 64  # payload + headers
    half = 2 * wire * 8 / 100.0  # ns at half of 100 Gb/s
    ctx.check("parking lot, flow: max-min, every flow half a link",
              all(abs(x - half) / half <= 0.01 for x in t["flow"]),
              "long %s, short on link 1 %s, short on link 2 %s (2W/g = %s)" % (tuple(us(x) for x in t["flow"]) + (us(half),)))
    check_parking_packet(ctx, t["packet"], half)
    ctx.row("parking lot (3 switches), long flow + one short flow per link, 2 MB each: long / short 1 / short 2",
            " / ".join(us(x) for x in t["packet"]), " / ".join(us(x) for x in t["flow"]),
            " / ".join(us(x) for x in t["analytic"]),
            "flow %s / %s / %s" % tuple(pct(rel(t["flow"][j], t["packet"][j])) for j in range(3)), PARKING_WHY)


PARKING_WHY = ("max-min in both: at s1 the output to s2 serves its two inputs (from s0, from ep4) round-robin, "
               "so the long flow gets half of s1->s2 and, limited to half of s0->s1 anyway, everyone half.  "
               "Before the round-robin fix in switch.cpp the packet model gave 446.80 / 446.62 / 163.37 us: "
               "ep4's queue, emptied at each grant and refilled at the instant the output freed, was appended "
               "where the pointer pointed and always won, starving the long flow's backlog (which then filled "
               "s1's input buffer and, through credits, stalled the short flow on s0->s1 too)")


def check_parking_packet(ctx, t, half):
    # What the packet model should give: switch s1's output to s2 has two
    # inputs with packets, s0's (the long flow) and ep4's (short flow 2);
    # round-robin arbitration (docs/model.md, "Switches") grants them in
    # turn, so each gets half of s1->s2; the long flow also gets half of
    # s0->s1 from s0's round-robin against short flow 1.  So all three end
    # at about 2 W / g, as max-min says.  (The packet model used to starve
    # the long flow here, see PARKING_WHY: the round-robin pointer, after
    # the last queue of the list emptied, pointed past the end, where ep4's
    # next packet, arriving at the very instant the output freed, re-entered
    # the list and won every turn.)
    ctx.check("parking lot, packet: round-robin gives max-min, every flow half a link",
              all(abs(x - half) / half <= 0.01 for x in t),
              "long %s, short on link 1 %s, short on link 2 %s (2W/g = %s)" % (tuple(us(x) for x in t) + (us(half),)))


# ------------------------------------------------- alpha-beta on one switch

class Star(object):
    """One switch, n endpoints; every link `gbps` and `latency_ps`."""

    def __init__(self, n, gbps=100.0, latency_ns=500, switch_ns=100, packet=4096):
        self.n = n
        self.g = gbps
        self.L = latency_ns * 1000
        self.D = switch_ns * 1000
        self.P = packet

    def ser(self, b):
        return math.ceil(b * 8000 / self.g)

    def A(self, m):
        """Analytic: a link's occupancy by an m-byte transfer, alpha + beta m."""
        return self.L + self.ser(m)

    def hop(self, m):
        """Analytic: one message alone, store-and-forward over 2 links and the switch."""
        return 2 * self.A(m) + self.D

    def last(self, m):
        return m - (math.ceil(m / self.P) - 1) * self.P

    def flow(self, m, k=1):
        """Flow: one m-byte message whose flow part shares both its links with k - 1
        others that started with it (rate g / k): k beta (m - last) + beta last + 2L + D
        (headers off: wire bytes = payload)."""
        return k * (m - self.last(m)) * 8000 / self.g + self.ser(self.last(m)) + 2 * self.L + self.D

    def graph(self):
        s = "".join('[[node]]\nname = "e%d"\nkind = "endpoint"\n' % i for i in range(self.n))
        s += '[[node]]\nname = "sw"\nkind = "switch"\n'
        s += "".join('[[link]]\na = "e%d"\nb = "sw"\n' % i for i in range(self.n))
        return s

    def toml(self):
        return """[topology]
kind = "file"
file = "star%d.graph.toml"
[network]
link_gbps = %g
link_latency_ns = %d
switch_latency_ns = %d
packet_bytes = %d
header_bytes = 0
[routing]
algorithm = "ecmp"
[output]
interval_ns = 0
""" % (self.n, self.g, self.L // 1000, self.D // 1000, self.P)


def dependents(msgs):
    """Per message of a DAG (src, dst, bytes, deps, sent_deps): how many
    events it waits for, and who waits for its arrival ("recv") or for it
    to have left its NIC ("sent")."""
    left = [len(m[3]) + len(m[4]) for m in msgs]
    users = [[] for _ in msgs]
    for i, m in enumerate(msgs):
        for d in m[3]:
            users[d].append(("recv", i))
        for d in m[4]:
            users[d].append(("sent", i))
    return left, users


def fifo_times(st, msgs):
    """The analytic model's semantics evaluated directly over a message DAG on a
    star: msgs[i] = (src, dst, bytes, deps, sent_deps); a message is posted when
    every dep has arrived and every sent_dep has crossed its first link; each
    directed link serves its requests first come first served (ties: post
    order) for alpha + beta n; the second link is requested a switch latency
    after the first is crossed.  Returns (first post, last arrival)."""
    n = len(msgs)
    left, users = dependents(msgs)
    free = {}
    ev = []
    seq = [0]

    def push(t, what, i):
        heapq.heappush(ev, (t, seq[0], what, i))
        seq[0] += 1
    for i in range(n):
        if left[i] == 0:
            push(0, "up", i)
    last = 0
    while ev:
        t, _, what, i = heapq.heappop(ev)
        src, dst, b = msgs[i][:3]
        if what in ("up", "down"):
            link = (what, src if what == "up" else dst)
            start = max(t, free.get(link, 0))
            free[link] = start + st.A(b)
            if what == "up":
                push(free[link], "sent", i)
                push(free[link] + st.D, "down", i)
            else:
                push(free[link], "recv", i)
        else:
            if what == "recv":
                last = max(last, t)
            for kind, j in users[i]:
                if kind == what:
                    left[j] -= 1
                    if left[j] == 0:
                        push(t, "up", j)
    return last


def fluid_times(st, msgs):
    """The flow model's semantics over the same DAG: a posted message's flow part
    (all but its last packet) shares its uplink and downlink max-min with the
    flows in progress; when it ends, the last packet's serialization (the
    message is then sent) and 2L + D (it has then arrived).  Returns the last
    arrival."""
    n = len(msgs)
    left, users = dependents(msgs)
    cap = st.g / 8000.0  # bytes per ps
    ev = []  # (time, seq, kind, i) for sent/recv/post
    seq = [0]

    def push(t, what, i):
        heapq.heappush(ev, (t, seq[0], what, i))
        seq[0] += 1
    for i in range(n):
        if left[i] == 0:
            push(0.0, "post", i)
    active = {}  # i -> remaining flow bytes
    now = 0.0
    last = 0.0
    while ev or active:
        # rates: progressive filling over up/down links
        rate = {}
        if active:
            links = {}
            for i in active:
                for l in (("u", msgs[i][0]), ("d", msgs[i][1])):
                    links.setdefault(l, []).append(i)
            rem = {l: cap for l in links}
            todo = set(active)
            while todo:
                best = min((rem[l] / sum(1 for i in fl if i in todo), l) for l, fl in links.items()
                           if any(i in todo for i in fl))
                share, l0 = best
                for i in [i for i in links[l0] if i in todo]:
                    rate[i] = share
                    todo.discard(i)
                    for l in (("u", msgs[i][0]), ("d", msgs[i][1])):
                        rem[l] -= share
        t_flow = min((now + active[i] / rate[i] for i in active), default=math.inf)
        t_ev = ev[0][0] if ev else math.inf
        t = min(t_flow, t_ev)
        for i in active:
            active[i] -= rate[i] * (t - now)
        now = t
        if t_flow <= t_ev:
            done = [i for i in active if active[i] <= 1e-6 * cap or abs(now + active[i] / rate[i] - t) < 1e-3]
            for i in done:
                del active[i]
                tail = st.ser(st.last(msgs[i][2]))
                push(now + tail, "sent", i)
                push(now + tail + 2 * st.L + st.D, "recv", i)
            continue
        _, _, what, i = heapq.heappop(ev)
        if what == "post":
            b = msgs[i][2]
            if b - st.last(b) > 0:
                active[i] = float(b - st.last(b))
            else:
                tail = st.ser(b)
                push(now + tail, "sent", i)
                push(now + tail + 2 * st.L + st.D, "recv", i)
            continue
        if what == "recv":
            last = max(last, now)
        for kind, j in users[i]:
            if kind == what:
                left[j] -= 1
                if left[j] == 0:
                    push(now, "post", j)
    return last


def tree_dag(n, S, op, root=0):
    """tree broadcast / reduce (binary heap from the root, no chunks)."""
    rank = lambda i: (root + i) % n
    msgs = []
    for i in range(1, n):
        p = (i - 1) // 2
        if op == "broadcast":
            msgs.append((rank(p), rank(i), S, [p - 1] if p > 0 else [], []))
        else:
            kids = [c - 1 for c in (2 * i + 1, 2 * i + 2) if c < n]
            msgs.append((rank(i), rank(p), S, kids, []))
    return msgs


def dbt_dag(n, S):
    """double binary tree allreduce, no chunks: tree 1 over S - S/2 in heap
    order, tree 2 over S/2 with rank n-1-i at position i; each tree: up (a node
    sends once both children's data arrived), then down (the root once both
    children arrived, an inner node once it got it from its parent)."""
    msgs = []
    for tree, b in ((0, S - S // 2), (1, S // 2)):
        rank = (lambda i: i) if tree == 0 else (lambda i: n - 1 - i)
        base = len(msgs)
        up = lambda i: base + i - 1
        down = lambda i: base + (n - 1) + i - 1
        for i in range(1, n):
            kids = [up(c) for c in (2 * i + 1, 2 * i + 2) if c < n]
            msgs.append((rank(i), rank((i - 1) // 2), b, kids, []))
        for i in range(1, n):
            p = (i - 1) // 2
            deps = [up(c) for c in (1, 2) if c < n] if p == 0 else [down(p)]
            msgs.append((rank(p), rank(i), b, deps, []))
    return msgs


def torus2d_dag(rows, cols, S):
    """torus_2d allreduce on a rows x cols grid: S - S/2 by rows (reduce-scatter
    ring in each row, allreduce ring of each 1/cols part down the columns,
    allgather ring in each row; direction +1), S/2 by columns the other way
    round (direction -1); a rank's phase starts when it has received all its
    data of the previous phase."""
    n = rows * cols
    msgs = []

    def ring(members, steps, size, d, start_deps):
        """Ring steps among `members` (position order); returns per position the
        message indices it receives."""
        k = len(members)
        got = [[] for _ in range(k)]
        prev = [None] * k  # index of the message position r received in the last step
        for s in range(steps):
            cur = [None] * k
            for r in range(k):
                to = (r + d) % k
                deps = start_deps[r] if s == 0 else [prev[r]]
                msgs.append((members[r], members[to], size, list(deps), []))
                cur[to] = len(msgs) - 1
                got[to].append(len(msgs) - 1)
            prev = cur
        return got

    for half, groups_of, d in ((S - S // 2, "rows", 1), (S // 2, "cols", -1)):
        if groups_of == "rows":
            groups = [[r * cols + c for c in range(cols)] for r in range(rows)]
        else:
            groups = [[r * cols + c for r in range(rows)] for c in range(cols)]
        G, k = len(groups[0]), len(groups)
        recv1 = {}
        for g in groups:
            got = ring(g, G - 1, half // G, d, [[] for _ in g])
            for pos, r in enumerate(g):
                recv1[r] = got[pos]
        recv2 = {}
        for j in range(G):
            members = [groups[q][j] for q in range(k)]
            got = ring(members, 2 * (k - 1), half // G // k, d, [recv1[r] for r in members])
            for pos, r in enumerate(members):
                recv2[r] = got[pos]
        for g in groups:
            ring(g, G - 1, half // G, d, [recv2[r] for r in g])
    return msgs


def case_alpha_beta(ctx):
    # Every collective algorithm on one switch (a star of `file` endpoints;
    # hierarchical, which needs GPU servers, on a one-leaf leaf-spine whose
    # intra-server links equal the NIC links).  Link 100 Gb/s (beta = 80 ps
    # per byte), alpha = link latency L = 500 ns, switch latency D = 100 ns,
    # headers off.  A(m) = L + beta m is a link's occupancy in the analytic
    # model (TACOS), so a message alone takes hop(m) = 2 A(m) + D (store and
    # forward over two links).  The analytic time must equal the formula to
    # the picosecond (0.5 ps: the output is in ns as float64); the flow model,
    # whose message alone takes beta m + 2L + D (pipelined) and whose k flows
    # sharing both links take k beta (m - last) + beta last + 2L + D, within
    # 1% of its formula.  The formulas, per algorithm (n ranks, S bytes per
    # rank, every size divisible so that parts are equal):
    n = 8
    st = Star(n)
    S = 1179648  # 2^17 x 9: divisible by 8, 9, 16, 18, 36, 72
    cases = []  # (label, sets, n or star, analytic formula, flow formula)
    m = S // n
    steps = 2 * (n - 1)
    # ring allreduce: 2(n-1) steps of S/n, each rank sends one message to r+1
    # when it has received the previous step's: no link is shared.
    cases.append(("ring allreduce", st, ["allreduce", "ring"], steps * st.hop(m), steps * st.flow(m), "2(n-1) hop(S/n) | 2(n-1) flow(S/n)"))
    cases.append(("ring reduce_scatter", st, ["reduce_scatter", "ring"], (n - 1) * st.hop(m), (n - 1) * st.flow(m), "(n-1) hop(S/n) | (n-1) flow(S/n)"))
    cases.append(("ring allgather", st, ["allgather", "ring"], (n - 1) * st.hop(m), (n - 1) * st.flow(m), "(n-1) hop(S/n) | (n-1) flow(S/n)"))
    # pairwise alltoall: n-1 steps, each a permutation, S/n each.
    cases.append(("pairwise alltoall", st, ["alltoall", "pairwise"], (n - 1) * st.hop(m), (n - 1) * st.flow(m), "(n-1) hop(S/n) | (n-1) flow(S/n)"))
    # direct alltoall: every rank posts n-1 messages of S/n at once; its uplink
    # sends them one after another (k-th done at k A), the k-th goes to rank
    # r+k, whose downlink gets one message per k, A apart: it never queues, so
    # the last arrives at (n-1) A + D + A = n A + D.  Flow: n-1 flows share
    # every link: flow(m, n-1).
    cases.append(("direct alltoall", st, ["alltoall", "direct"], n * st.A(m) + st.D, st.flow(m, n - 1), "n A(S/n) + D | flow(S/n, n-1)"))
    cases.append(("direct reduce_scatter", st, ["reduce_scatter", "direct"], n * st.A(m) + st.D, st.flow(m, n - 1), "n A(S/n) + D | flow(S/n, n-1)"))
    cases.append(("direct allgather", st, ["allgather", "direct"], n * st.A(m) + st.D, st.flow(m, n - 1), "n A(S/n) + D | flow(S/n, n-1)"))
    # direct allreduce: the reduce-scatter, then (once a rank has all n-1
    # parts, all at n A + D) the same again.
    cases.append(("direct allreduce", st, ["allreduce", "direct"], 2 * (n * st.A(m) + st.D), 2 * st.flow(m, n - 1), "2 (n A(S/n) + D) | 2 flow(S/n, n-1)"))
    # halving-doubling (n = 8 = 2^3): 3 halving steps of S/2, S/4, S/8 and 3
    # doubling steps of S/8, S/4, S/2, each a pairwise exchange.
    hd = [S // 2, S // 4, S // 8, S // 8, S // 4, S // 2]
    cases.append(("halving_doubling allreduce", st, ["allreduce", "halving_doubling"],
                  sum(st.hop(x) for x in hd), sum(st.flow(x) for x in hd), "sum of hop(S/2^k) over k = 1, 2, 3, 3, 2, 1 | the same with flow()"))
    # bidirectional ring: two rings of S/2 (to r+1 and to r-1) sharing every
    # link.  Step 0: uplink carries ring + [0, a], ring - [a, 2a]; each
    # downlink gets ring + at a + D (done 2a + D) and ring - at 2a + D (done
    # 3a + D).  Every later step starts ring + on arrival (2a + D after the
    # previous) and ring - behind it: each step 2a + D, ring - one a late:
    # 2(n-1)(2a + D) + a with a = A(S/2n).  Flow: two flows per link.
    h = S // 2 // n
    cases.append(("bidirectional_ring allreduce", st, ["allreduce", "bidirectional_ring"],
                  steps * st.hop(h) + st.A(h), steps * st.flow(h, 2), "2(n-1) hop(S/2n) + A(S/2n) | 2(n-1) flow(S/2n, 2)"))
    # multi_ring (3 x 3 grid, 9 ranks): four rings of S/4, each rank sending to
    # four different neighbours.  Step 0: uplink [k a, (k+1) a] for ring k, its
    # downlink copy done at (k+2) a + D; ring k of step s+1 is ready at (k+2)
    # a + D after step s began, before the uplink is free (D <= 2a), so the
    # uplink is never idle: step s, ring k sends at 4 s a + k a; the last
    # arrives at 4 a (steps - 1) + 5 a + D = 4 a steps + a + D, a = A(S/4n).
    st9 = Star(9)
    q = S // 4 // 9
    cases.append(("multi_ring allreduce (3 x 3)", st9, ["allreduce", "multi_ring"],
                  4 * st9.A(q) * 16 + st9.A(q) + st9.D, 16 * st9.flow(q, 4), "64 A(S/4n) + A(S/4n) + D | 16 flow(S/4n, 4)"))
    # torus_2d (3 x 3): two instances (rows then columns, columns then rows the
    # other way) of reduce-scatter, allreduce, allgather rings; the two share
    # every link with sizes changing between phases: evaluated step by step
    # under the FIFO rule (fifo_times), which is the formula.
    dag = torus2d_dag(3, 3, S)
    cases.append(("torus_2d allreduce (3 x 3)", st9, ["allreduce", "torus_2d"], fifo_times(st9, dag),
                  fluid_times(st9, dag), "FIFO recurrence over the 2 x 8 steps | fluid evaluation"))
    # Broadcast and reduce by a chain round the ring, C chunks of c = S/C:
    # chunk j reaches position i at i (2 A(c) + D) + j A(c) (the chain's links
    # are each used by one hop, chunks follow A apart): (n-1)(2A + D) + (C-1) A.
    # Flow: chunks of one hop never overlap (chunk j+1 leaves when chunk j is
    # sent), so each hop is a message alone: (n-1) flow(c) + (C-1)(beta c).
    C = 8
    c = S // C
    chain = (n - 1) * st.hop(c) + (C - 1) * st.A(c)
    chain_flow = (n - 1) * st.flow(c) + (C - 1) * st.ser(c)
    cases.append(("ring broadcast, 8 chunks", st, ["broadcast", "ring", "chunk_bytes=%d" % c], chain, chain_flow, "(n-1) hop(c) + (C-1) A(c) | (n-1) flow(c) + (C-1) beta c"))
    cases.append(("ring reduce, 8 chunks", st, ["reduce", "ring", "chunk_bytes=%d" % c], chain, chain_flow, "(n-1) hop(c) + (C-1) A(c) | (n-1) flow(c) + (C-1) beta c"))
    # Binary trees (no chunks): a node's two sends share its uplink and two
    # children's messages its downlink; evaluated over the tree under the
    # FIFO rule.  For n = 8, broadcast: 6 A(S) + 3 D (the leaf at position 7
    # hears from position 3, which heard second-hand); reduce: 6 A + 3 D too.
    for op in ("broadcast", "reduce"):
        dag = tree_dag(n, S, op)
        cases.append(("tree %s" % op, st, [op, "tree"], fifo_times(st, dag), fluid_times(st, dag),
                      "6 A(S) + 3 D (critical path of the heap tree) | fluid evaluation"))
    dag = dbt_dag(n, S)
    cases.append(("double_binary_tree allreduce", st, ["allreduce", "double_binary_tree"], fifo_times(st, dag),
                  fluid_times(st, dag), "FIFO evaluation of the two trees | fluid evaluation"))
    # dissemination barrier: ceil(log2 n) rounds of 1-byte messages, each a
    # permutation.
    cases.append(("dissemination barrier", st, ["barrier", "dissemination"], 3 * st.hop(1), 3 * st.flow(1), "3 hop(1) | 3 flow(1)"))
    # hierarchical on a leaf-spine of 2 servers of 4 GPUs under one leaf: ring
    # reduce-scatter in each server (3 steps of S/4), ring allreduce of each
    # quarter across the 2 servers (2 steps of S/8), ring allgather in each
    # server (3 steps of S/4); intra-server and NIC links alike (100 Gb/s,
    # 500 ns), every path one switch.
    G = 4
    hier = 2 * (G - 1) * st.hop(S // G) + 2 * st.hop(S // G // 2)
    hier_flow = 2 * (G - 1) * st.flow(S // G) + 2 * st.flow(S // G // 2)
    cases.append(("hierarchical allreduce (2 servers x 4)", "leaf_spine", ["allreduce", "hierarchical"], hier, hier_flow, "6 hop(S/4) + 2 hop(S/8) | 6 flow(S/4) + 2 flow(S/8)"))

    for label, star, spec, formula, flow_formula, text in cases:
        op, alg = spec[0], spec[1]
        extra = spec[2:]
        if star == "leaf_spine":
            toml = """[topology]
kind = "leaf_spine"
leaves = 1
spines = 1
servers_per_leaf = 2
gpus_per_server = 4
radix = 16
[network]
link_gbps = 100
link_latency_ns = 500
intra_server_gbps = 100
intra_server_latency_ns = 500
switch_latency_ns = 100
header_bytes = 0
[routing]
algorithm = "ecmp"
[output]
interval_ns = 0
"""
            files = {}
            ranks = 8
        else:
            toml = star.toml()
            files = {"star%d.graph.toml" % star.n: star.graph()}
            ranks = star.n
        toml += '[workload]\nkind = "collective"\nop = "%s"\nalgorithm = "%s"\nsizes = [%d]\nranks = %d\n' % (
            op, alg, S, ranks)
        for e in extra:
            toml += e.replace("=", " = ", 1) + "\n"
        name = "ab_" + label.split(" (")[0].replace(" ", "_").replace(",", "")
        t = {}
        for mdl in ("analytic", "flow"):
            f = ctx.run(name, mdl, toml, files=files)
            t[mdl] = list(collective_ns(f).values())[0][0] * 1000.0  # ps
        ok = abs(t["analytic"] - formula) <= 0.5
        ctx.check("alpha-beta %s: analytic = formula" % label, ok,
                  "analytic %.3f ns, formula %.3f ns (%+.3f ns)" % (t["analytic"] / 1e3, formula / 1e3,
                                                                   (t["analytic"] - formula) / 1e3))
        d = rel(t["flow"], flow_formula)
        ctx.check("alpha-beta %s: flow within 1%% of its formula" % label, abs(d) <= 0.01,
                  "flow %.3f ns, formula %.3f ns (%s)" % (t["flow"] / 1e3, flow_formula / 1e3, pct(d)))
        ctx.row("one switch: %s, %d ranks, %d B" % (label, ranks, S), "",
                us(t["flow"] / 1000.0), us(t["analytic"] / 1000.0),
                "analytic - formula %+.3f ns; flow - its formula %s" % ((t["analytic"] - formula) / 1e3, pct(d)),
                "analytic: %s; flow: %s" % tuple(text.split(" | ")))


CASES = [("permutation", case_permutation), ("alltoall", case_alltoall), ("allreduce", case_allreduce),
         ("dnn", None), ("incast", case_incast), ("parking_lot", case_parking_lot), ("alpha_beta", case_alpha_beta)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("exe")
    ap.add_argument("--table", action="store_true", help="print the table of docs/model.md")
    ap.add_argument("--keep", metavar="DIR", help="keep configurations and outputs in DIR")
    ap.add_argument("-k", metavar="SUBSTRING", default="", help="only the cases whose name contains it")
    args = ap.parse_args()
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    workdir = args.keep or tempfile.mkdtemp(prefix="xval.")
    os.makedirs(workdir, exist_ok=True)
    ctx = Ctx(os.path.realpath(args.exe), workdir)
    try:
        for name, fn in CASES:
            if args.k not in name:
                continue
            ctx.case = name
            print("== %s" % name)
            if name == "dnn":
                case_dnn(ctx, src)
            else:
                fn(ctx)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    failed = [c for c in ctx.checks if not c[2]]
    if args.table:
        print()
        print("| configuration | packet | flow | analytic | difference | why |")
        print("|---|---|---|---|---|---|")
        for r in ctx.rows:
            print("| " + " | ".join(r) + " |")
    print("\n%d checks, %d failed" % (len(ctx.checks), len(failed)))
    for c in failed:
        print("FAIL [%s] %s: %s" % (c[0], c[1], c[3]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
