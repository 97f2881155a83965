#!/usr/bin/env python3
"""Accepted and makespan throughput of a fat-tree run, as shares of the injection bandwidth.

accepted: payload delivered into the endpoints per unit time (from the per-link time series)
  from --warmup-ns until the first source that sends between leaves has completed all its
  messages, i.e. while every such source still has data in flight, over endpoints x link rate;
  the payload is the wire bytes less one header per full packet.
makespan: all payload over (last completion - first post), what `fabricsim run` prints.

  accepted_throughput.py RUN.h5 [--warmup-ns NS] [--bound B]
prints one line; with --bound (the fluid bound, `fabricsim info --json`: fluid.throughput_bound)
it exits 1 unless 0.95 B <= accepted <= 1.01 B and makespan <= B (the window counts a packet whose
transmission starts in it, up to a packet per link beyond the bound at its edges).
"""
import argparse
import sys
import tomllib

import h5py
import numpy as np


def measure(path, warmup_ns):
    f = h5py.File(path, "r")
    ts = f["links/timeseries/tx_bytes"]
    iv = float(ts.attrs["interval_ns"])
    src, dst = f["links/src"][:], f["links/dst"][:]
    kind = f["nodes/kind"][:]
    s = f["summary"].attrs
    n, gbps = int(s["endpoints"]), float(s["injection_gbps"])
    net = tomllib.loads(f["meta"].attrs["config"].decode())["network"]  # the resolved configuration
    packet, header = net["packet_bytes"], net["header_bytes"]
    leaf = np.zeros(n, dtype=np.int64)
    up = kind[src] == 0
    leaf[src[up]] = dst[up]  # the switch each endpoint's cable goes to
    fl = f["flows"]
    fs, fd, end, start = fl["src"][:], fl["dst"][:], fl["end_ns"][:], fl["start_ns"][:]
    cross = leaf[fs] != leaf[fd]
    last = np.full(n, -1.0)
    np.maximum.at(last, fs, end)  # each source's last completion
    k0 = int(np.ceil(warmup_ns / iv))
    k1 = int(last[np.unique(fs[cross])].min() // iv)
    if k1 <= k0 + 10:
        sys.exit(f"{path}: the window [{k0 * iv:.0f}, {k1 * iv:.0f}) ns is too short to measure")
    wire = float(ts[:, k0:k1][kind[dst] == 0].sum())
    accepted = wire * (packet - header) / packet * 8 / (n * gbps * (k1 - k0) * iv)
    makespan = float(s["bytes_delivered"]) * 8 / (n * gbps * (end.max() - start.min()))
    return accepted, makespan, (k0 * iv, k1 * iv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--warmup-ns", type=float, default=5000.0)
    ap.add_argument("--bound", type=float)
    a = ap.parse_args()
    accepted, makespan, (t0, t1) = measure(a.run, a.warmup_ns)
    line = f"accepted {accepted:.4f} over [{t0:.0f}, {t1:.0f}) ns, makespan {makespan:.4f}"
    if a.bound is None:
        print(line)
        return 0
    print(f"{line}; fluid bound {a.bound:.4f}: accepted {accepted / a.bound:.1%}, makespan {makespan / a.bound:.1%}")
    if not (0.95 * a.bound <= accepted <= 1.01 * a.bound and makespan <= a.bound * (1 + 1e-6)):
        print("FAIL: accepted must lie in [0.95, 1.01] x the fluid bound, makespan at most the bound")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
