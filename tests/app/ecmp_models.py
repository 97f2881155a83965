#!/usr/bin/python3
"""One ECMP for the three models (issue 28, item 3).

On a leaf-spine, a permutation under routing.algorithm = "ecmp", for every
routing.ecmp_hash: the packet, flow and analytic models put the same bytes
on every link (header_bytes = 0, so the packet model's wire bytes are the
payload the analytic model counts; the flow model integrates its rates, so
within a byte of rounding per message).  Before, the flow and analytic
models hashed (seed, port, node) their own way, so each model collided
other messages ("not comparable run by run").

For wang_jenkins the spine each message takes is also computed here, from
the routing paper's formula (../shared/spec/ml-routing.md 4.1) written
independently of the C++: index = hash(srcTor + nonSeq(srcNic, dstNic)) mod
spines, candidates in ascending spine id, and every message of a pair on
that one spine (three messages per pair, different source ports).

  ecmp_models.py EXE
"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

EXE = sys.argv[1]
BASE = ["--set", "topology.kind=leaf_spine", "--set", "topology.leaves=4", "--set", "topology.spines=4",
        "--set", "topology.servers_per_leaf=2", "--set", "topology.gpus_per_server=4", "--set", "topology.radix=16",
        "--set", "routing.algorithm=ecmp", "--set", "network.header_bytes=0", "--set", "network.packet_bytes=4096",
        "--set", "workload.pattern=permutation", "--set", "workload.messages=3", "--set", "workload.message_bytes=40960",
        "--set", "output.interval_ns=0"]
failures = []
passes = []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))
    (passes if ok else failures).append(what)


def run(tmp, hash_, model, seed=0):
    out = os.path.join(tmp, "%s_%s_%d.h5" % (hash_, model, seed))
    subprocess.run([EXE, "run", *BASE, "--set", "routing.ecmp_hash=%s" % hash_, "--set", "routing.ecmp_seed=%d" % seed,
                    "--set", "network.model=%s" % model, "-o", out], check=True, stdout=subprocess.DEVNULL)
    return h5py.File(out, "r")


def i32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def wang_jenkins(a):
    """The spec's hash on Java ints: + and << wrap at 32 bits, >> is arithmetic."""
    a = i32(a)
    a = i32(i32(a + 0x7ed55d16) + (a << 12))
    a = i32((a ^ i32(0xc761c23c)) ^ (a >> 19))
    a = i32(i32(a + 0x165667b1) + (a << 5))
    a = i32(i32(a + i32(0xd3a2646c)) ^ (a << 9))
    a = i32(i32(a + i32(0xfd7046c5)) + (a << 3))
    a = i32((a ^ i32(0xb55a4f09)) ^ (a >> 16))
    return 0x7FFFFFFF if a == -(1 << 31) else abs(a)


def spine_links(f):
    """(leaf->spine and spine->leaf link indices) by the nodes' levels."""
    level = f["nodes"]["level"][:]
    src, dst = f["links"]["src"][:], f["links"]["dst"][:]
    return np.nonzero((level[src] == 2) | (level[dst] == 2))[0]


with tempfile.TemporaryDirectory() as tmp:
    for hash_ in ("mix64", "crc32", "murmur3", "wang_jenkins"):
        f = {m: run(tmp, hash_, m) for m in ("packet", "flow", "analytic")}
        tx = {m: f[m]["links"]["tx_bytes"][:].astype(float) for m in f}
        spines = spine_links(f["packet"])
        messages = len(f["packet"]["flows"]["src"])
        for m in ("flow", "analytic"):
            diff = np.abs(tx[m] - tx["packet"])
            bad = np.nonzero(diff > messages)[0]
            check("%s: %s model puts the packet model's bytes on every link" % (hash_, m), len(bad) == 0,
                  "links %s: packet %s, %s %s" % (bad[:5], tx["packet"][bad[:5]], m, tx[m][bad[:5]]))
        used = int((tx["packet"][spines] > 0).sum())
        check("%s: the permutation crosses the spines (%d of %d spine links used)" % (hash_, used, len(spines)),
              used > 0)

    # wang_jenkins against the formula, and a pair on one spine for all its messages.
    f = h5py.File(os.path.join(tmp, "wang_jenkins_packet_0.h5"), "r")
    level, kind = f["nodes"]["level"][:], f["nodes"]["kind"][:]
    lsrc, ldst, cls = f["links"]["src"][:], f["links"]["dst"][:], f["links"]["class"][:]
    tx = f["links"]["tx_bytes"][:].astype(float)
    endpoints = np.nonzero(kind == 0)[0]
    tor = {}
    for e in endpoints:  # the switch at the end of the endpoint's NIC cable (class 0, host; not NVLink)
        for l in np.nonzero((lsrc == e) & (cls == 0))[0]:
            tor[int(e)] = int(ldst[l])
    want = np.zeros_like(tx)
    fl = f["flows"]
    pairs = {}
    for s, d, b in zip(fl["src"][:], fl["dst"][:], fl["bytes"][:]):
        s, d = int(s), int(d)
        pairs[(s, d)] = pairs.get((s, d), 0) + int(b)
    # The released code's ids (create_2_layer_topology): ToRs 0..T-1, spines
    # next, NICs from T + S on; fabricsim's nodes are endpoints, leaves, spines.
    leaves = sorted(set(tor.values()))
    n_spines = int(np.sum((kind != 0) & (level == 2)))
    nic = lambda e: e + len(leaves) + n_spines
    for (s, d), b in pairs.items():
        ts, td = tor[s], tor[d]
        if ts == td:
            continue
        ups = sorted((int(ldst[l]), l) for l in np.nonzero(lsrc == ts)[0] if level[ldst[l]] == 2)
        non_seq = wang_jenkins(nic(s) + wang_jenkins(nic(d)))
        spine, up = ups[wang_jenkins(leaves.index(ts) + non_seq) % len(ups)]
        down = [l for l in np.nonzero(lsrc == spine)[0] if ldst[l] == td][0]
        want[up] += b
        want[down] += b
    spines = spine_links(f)
    check("wang_jenkins: every spine link carries the bytes the paper's formula routes there, "
          "each pair on one spine for its %d messages" % 3,
          np.array_equal(tx[spines], want[spines]),
          "packet %s, formula %s" % (tx[spines], want[spines]))
    # The seed moves the choice (added to the ToR id).
    g = run(tmp, "wang_jenkins", "packet", seed=1)
    check("wang_jenkins: routing.ecmp_seed changes the paths", not np.array_equal(g["links"]["tx_bytes"][:], f["links"]["tx_bytes"][:]))

print("%d passed, %d failed" % (len(passes), len(failures)))
sys.exit(1 if failures else 0)
