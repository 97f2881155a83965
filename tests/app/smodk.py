#!/usr/bin/python3
"""routing.algorithm = "smodk": vClos's source routing (issue 28 item 4,
../shared/spec/vclos.md 4.1).

On a leaf-spine of 4 leaves x 4 GPUs and 4 spines (one uplink to each),
leaf-wise permutations of leaf-contiguous ranks (every GPU of leaf L sends
to a GPU of leaf pi(L), pi a permutation of the leaves without fixed
points; half its GPUs sending, to random GPUs there), written as a trace:

  * every message leaves its leaf on the uplink to spine (source mod 4)
    and comes down spine (source mod 4) -> destination leaf: the links it
    crosses are computed here from the rule, and /links/flows must be 1 on
    exactly those fabric links and 0 on the others;
  * hence no fabric link carries two messages (Lemma 5.1), where ECMP, on
    the same permutations, puts two on some link;
  * the packet, flow and analytic models put the same bytes on every link
    (one deterministic pick shared by the models).

  smodk.py EXE
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import h5py
import numpy as np

EXE = sys.argv[1]
LEAVES, PER_LEAF, SPINES = 4, 4, 4
N = LEAVES * PER_LEAF
failures, passes = [], []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))
    (passes if ok else failures).append(what)


def leafwise_permutation(rng):
    while True:
        pi = list(range(LEAVES))
        rng.shuffle(pi)
        if all(pi[i] != i for i in range(LEAVES)):
            break
    # Half the GPUs of each leaf send, to random GPUs of leaf pi(L): the
    # uplinks used then tell source-mod-k from destination-mod-k (with
    # every GPU sending, both use every uplink).
    dst = {}
    for leaf in range(LEAVES):
        senders = rng.sample(range(PER_LEAF), PER_LEAF // 2)
        targets = rng.sample(range(PER_LEAF), PER_LEAF // 2)
        for p, q in zip(senders, targets):
            dst[leaf * PER_LEAF + p] = pi[leaf] * PER_LEAF + q
    return dst


def trace(dst, path):
    nodes, i = [], 1
    for s, d in sorted(dst.items()):
        nodes.append({"id": i, "rank": s, "type": "COMM_SEND_NODE", "comm_dst": d, "comm_size": 65536, "comm_tag": 1})
        nodes.append({"id": i + 1, "rank": d, "type": "COMM_RECV_NODE", "comm_src": s, "comm_size": 65536,
                      "comm_tag": 1})
        i += 2
    with open(path, "w") as f:
        json.dump({"schema": "fabricsim-trace-1", "name": "leafwise", "ranks": N, "nodes": nodes}, f)


def run(tmp, name, alg, model="packet"):
    out = os.path.join(tmp, "%s_%s_%s.h5" % (name, alg, model))
    subprocess.run([EXE, "run", "--set", "topology.kind=leaf_spine", "--set", "topology.leaves=%d" % LEAVES,
                    "--set", "topology.spines=%d" % SPINES, "--set", "topology.servers_per_leaf=%d" % PER_LEAF,
                    "--set", "topology.gpus_per_server=1", "--set", "topology.radix=8",
                    "--set", "routing.algorithm=%s" % alg, "--set", "network.model=%s" % model,
                    "--set", "network.header_bytes=0", "--set", "workload.kind=trace",
                    "--set", "workload.trace=%s" % os.path.join(tmp, name + ".json"),
                    "--set", "output.interval_ns=0", "-o", out], check=True, stdout=subprocess.DEVNULL)
    return h5py.File(out, "r")


with tempfile.TemporaryDirectory() as tmp:
    rng = random.Random(28)
    ecmp_collided = False
    for case in range(4):
        name = "perm%d" % case
        dst = leafwise_permutation(rng)
        trace(dst, os.path.join(tmp, name + ".json"))
        f = run(tmp, name, "smodk")
        names = [n.decode() for n in f["nodes/name"][:]]
        src, dstn, flows = f["links/src"][:], f["links/dst"][:], f["links/flows"][:]
        fabric = {}
        for l in range(len(src)):
            a, b = names[src[l]], names[dstn[l]]
            if "spine" in a or "spine" in b:
                fabric[(a, b)] = l
        # The rule: up to spine (source mod uplinks), down from it.
        expect = {}
        for s, d in dst.items():
            spine = "spine%d" % (s % SPINES)
            for hop in (("leaf%d" % (s // PER_LEAF), spine), (spine, "leaf%d" % (d // PER_LEAF))):
                expect[hop] = expect.get(hop, 0) + 1
        got = {hop: int(flows[l]) for hop, l in fabric.items() if flows[l] > 0}
        check("%s: every message on the links source-mod-k gives" % name, got == expect,
              "got %s, expected %s" % (sorted(got.items()), sorted(expect.items())))
        check("%s: no fabric link carries two messages (Lemma 5.1)" % name,
              max(int(flows[l]) for l in fabric.values()) == 1)
        e = run(tmp, name, "ecmp")
        ecmp_collided = ecmp_collided or max(int(e["links/flows"][l]) for l in fabric.values()) > 1
        tx = f["links/tx_bytes"][:].astype(float)
        for model in ("flow", "analytic"):
            g = run(tmp, name, "smodk", model)
            diff = np.abs(g["links/tx_bytes"][:].astype(float) - tx).max()
            check("%s: the %s model puts the packet model's bytes on every link" % (name, model), diff <= 1.0,
                  "largest difference %g bytes" % diff)
    check("ECMP puts two messages on one link in some of these permutations", ecmp_collided)

print("%d checks passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
