#!/usr/bin/python3
"""Bus bandwidth against message size, NCCL-tests style, for collective runs.

usage: fabricsim_busbw.py RUN.h5 [RUN.h5 ...] [--label NAME ...] [--png OUT.png]

Each file is a `workload.kind = "collective"` run (or a run of [[jobs]] with
collective jobs: one line per job).  For each file, job and size
the script prints the mean time, algbw and busbw over the timed iterations
(warm-up ones, iteration < 0 in /collectives, are left out), and with --png
draws busbw (GB/s) against size (bytes, log scale), one line per file, the
way people compare NCCL results across fabrics or algorithms.  Labels default
to "<topology kind> <op> <algorithm>".  Exits 1 with one ``error: ...`` line
on stderr for a file without /collectives.
"""

import argparse
import sys

import h5py
import numpy as np


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load(path):
    """One (label, sizes, time_us, algbw_GBps, busbw_GBps) per collective job of a run file."""
    with h5py.File(path, "r") as f:
        if "collectives" not in f:
            raise ValueError(f"{path}: no /collectives (not a collective run)")
        c = f["collectives"]
        kind = _text(f["topology"].attrs["kind"]) if "topology" in f else "?"
        size = c["bytes"][:]
        it = c["iteration"][:]
        t_ns = c["end_ns"][:] - c["start_ns"][:]
        # Rows engine.end_ns stopped (finished = 0; older files: end_ns far in
        # the future or -1) carry no time: left out.
        done = c["finished"][:] != 0 if "finished" in c else (c["end_ns"][:] >= 0) & (c["end_ns"][:] < 9e15)
        ratio = c["busbw_gbps"][:] / np.where(c["algbw_gbps"][:] > 0, c["algbw_gbps"][:], 1)
        if "job" in c:  # one row per operation, with its job, op, algorithm and ranks
            job = c["job"][:]
            op = [_text(v) for v in c["op"][:]]
            alg = [_text(v) for v in c["algorithm"][:]]
            ranks = c["ranks"][:]
        else:  # files of fabricsim before [[jobs]]: one benchmark, in attributes
            job = np.zeros(len(size), dtype=int)
            op = [_text(c.attrs["op"])] * len(size)
            alg = [_text(c.attrs["algorithm"])] * len(size)
            ranks = np.full(len(size), int(c.attrs["ranks"]))
    curves = []
    jobs = np.unique(job)
    for j in jobs:
        first = int(np.argmax(job == j))
        label = f"{kind} {op[first]} {alg[first]} ({int(ranks[first])} ranks)"
        if len(jobs) > 1:
            label = f"job {int(j)}: {label}"
        timed = (it >= 0) & (job == j) & done
        sizes = np.unique(size[timed])
        time_us, algbw, busbw = [], [], []
        for s in sizes:
            sel = timed & (size == s)
            t = t_ns[sel].mean()
            time_us.append(t / 1000.0)
            algbw.append(s / t)  # bytes per ns = GB/s
            busbw.append(s / t * ratio[sel][0])
        curves.append((label, sizes, np.array(time_us), np.array(algbw), np.array(busbw)))
    return curves


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--png")
    a = ap.parse_args(argv)
    if a.label and len(a.label) != len(a.runs):
        print("error: give one --label per run file", file=sys.stderr)
        return 1
    curves = []
    for i, path in enumerate(a.runs):
        try:
            loaded = load(path)
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        for label, sizes, t, alg, bus in loaded:
            if a.label:
                label = a.label[i] if len(loaded) == 1 else f"{a.label[i]} {label.split(':')[0]}"
            curves.append((label, sizes, bus))
            print(f"# {label}: {path}")
            print(f"# {'size (B)':>12} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}")
            for s, ti, al, bu in zip(sizes, t, alg, bus):
                print(f"  {int(s):>12} {ti:>12.2f} {al:>13.2f} {bu:>13.2f}")
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for label, sizes, bus in curves:
            ax.plot(sizes, bus, marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size per rank (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.png, dpi=100)
        print(f"plot: {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
