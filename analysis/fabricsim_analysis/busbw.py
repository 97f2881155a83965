"""Bus bandwidth against message size, NCCL-tests style, for collective runs.

usage: fabricsim_busbw.py RUN.h5 [RUN.h5 ...] [--label NAME ...] [--png OUT.png] [--csv OUT.csv]

Each file is a `workload.kind = "collective"` run (or a run of [[jobs]] with
collective jobs: one line per job).  For each file, job and size
the script prints the mean time, algbw and busbw over the timed iterations
(warm-up ones, iteration < 0 in /collectives, are left out), and with --png
draws busbw (GB/s) against size (bytes, log scale), one line per file, the
way people compare NCCL results across fabrics or algorithms.  Labels default
to "<topology kind> <op> <algorithm>".  Operations engine.end_ns stopped
(finished = 0) are left out of the means, and a line under the table says
how many.  Exits 1 with one ``error: ...`` line on stderr for a file that is
not fabricsim output or has no /collectives.
"""

import sys

import numpy as np

from . import cli
from . import plot as fplot
from .fmt import write_csv
from .io import FabricsimFileError, finished_mask, need_columns, open_file, read_attrs, read_table, text


def collective_curves(path):
    """One dict per collective job of a run file, with the means over its finished timed iterations.

    Keys: job, op, algorithm, ranks, kind (topology), label, sizes (bytes per
    rank), time_us, algbw, busbw (GB/s, NCCL's units), iterations (finished
    timed rows per size), unfinished (timed rows engine.end_ns stopped, left
    out), unfinished_sizes (sizes without any finished timed row).
    """
    with open_file(path) as f:
        if "collectives" not in f:
            raise FabricsimFileError("%s: no /collectives (not a collective run)" % path)
        c = read_table(f, "collectives", need=("bytes", "iteration", "start_ns", "end_ns", "algbw_gbps",
                                               "busbw_gbps"))
        if "job" in c:
            need_columns(path, "collectives", c, ("op", "algorithm", "ranks"))
        attrs = read_attrs(f, "collectives")
        kind = text(read_attrs(f, "topology").get("kind", "?"))
    if "job" not in c:  # files of fabricsim before [[jobs]]: one benchmark, in attributes of /collectives
        for key in ("op", "algorithm", "ranks"):
            if key not in attrs:
                raise FabricsimFileError("%s: /collectives: no column job and no attribute %s (an older file "
                                         "names its one benchmark there)" % (path, key))
        if not isinstance(attrs["ranks"], int) or isinstance(attrs["ranks"], bool):
            raise FabricsimFileError("%s: /collectives: attribute ranks: expected an integer, found %r"
                                     % (path, attrs["ranks"]))
    size = c["bytes"]
    n = len(size)
    it = c["iteration"]
    t_ns = c["end_ns"] - c["start_ns"]
    # Rows engine.end_ns stopped (finished = 0; older files: end_ns far in
    # the future or -1) carry no time: left out.
    done = finished_mask(c)
    alg_gbps = c["algbw_gbps"]
    ratio = c["busbw_gbps"] / np.where(alg_gbps > 0, alg_gbps, 1)
    if "job" in c:  # one row per operation, with its job, op, algorithm and ranks
        job = c["job"]
        op = [text(v) for v in c["op"]]
        alg = [text(v) for v in c["algorithm"]]
        ranks = c["ranks"]
    else:  # files of fabricsim before [[jobs]]: one benchmark, in attributes
        job = np.zeros(n, dtype=int)
        op = [text(attrs["op"])] * n
        alg = [text(attrs["algorithm"])] * n
        ranks = np.full(n, int(attrs["ranks"]))
    curves = []
    jobs = np.unique(job)
    for j in jobs:
        first = int(np.argmax(job == j))
        label = f"{kind} {op[first]} {alg[first]} ({int(ranks[first])} ranks)"
        if len(jobs) > 1:
            label = f"job {int(j)}: {label}"
        mine = (it >= 0) & (job == j)
        timed = mine & done
        sizes = np.unique(size[timed])
        time_us, algbw, busbw, count = [], [], [], []
        for s in sizes:
            sel = timed & (size == s)
            t = t_ns[sel].mean()
            time_us.append(t / 1000.0)
            algbw.append(s / t)  # bytes per ns = GB/s
            busbw.append(s / t * ratio[sel][0])
            count.append(int(sel.sum()))
        curves.append({
            "job": int(j), "op": op[first], "algorithm": alg[first], "ranks": int(ranks[first]),
            "kind": kind, "label": label, "sizes": sizes, "time_us": np.array(time_us),
            "algbw": np.array(algbw), "busbw": np.array(busbw), "iterations": np.array(count, dtype=int),
            "unfinished": int(np.sum(mine & ~done)),
            "unfinished_sizes": [int(s) for s in np.unique(size[mine & ~done]) if s not in sizes],
        })
    return curves


def load(path):
    """One (label, sizes, time_us, algbw_GBps, busbw_GBps) per collective job of a run file."""
    return [(c["label"], c["sizes"], c["time_us"], c["algbw"], c["busbw"]) for c in collective_curves(path)]


def left_out_line(curve):
    """The line saying which operations were left out, or None when all finished."""
    if not curve["unfinished"]:
        return None
    line = (f"# left out: {curve['unfinished']} unfinished timed operation"
            f"{'s' if curve['unfinished'] != 1 else ''} (stopped by engine.end_ns)")
    if curve["unfinished_sizes"]:
        line += "; no finished one of size " + ", ".join(str(s) for s in curve["unfinished_sizes"])
    return line


CSV_HEADER = ["label", "file", "job", "op", "algorithm", "ranks", "size_bytes", "time_us",
              "algbw_GBps", "busbw_GBps", "iterations", "unfinished"]


def draw(path, curves):
    fig, ax = fplot.figure(figsize=(7, 4.5))
    for label, sizes, bus in curves:
        ax.plot(sizes, bus, marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size per rank (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return fplot.savefig(fig, path, dpi=100)


def _body(a):
    cli.check_outputs(a, ("png", "--png"), ("csv", "--csv"))
    bad = cli.check_labels(a.label, a.runs)
    if bad:
        raise ValueError(bad)
    curves, rows = [], []
    for i, path in enumerate(a.runs):
        loaded = collective_curves(path)
        for c in loaded:
            label = c["label"]
            if a.label:
                label = a.label[i] if len(loaded) == 1 else f"{a.label[i]} {label.split(':')[0]}"
            curves.append((label, c["sizes"], c["busbw"]))
            print(f"# {label}: {path}")
            print(f"# {'size (B)':>12} {'time (us)':>12} {'algbw (GB/s)':>13} {'busbw (GB/s)':>13}")
            for s, ti, al, bu in zip(c["sizes"], c["time_us"], c["algbw"], c["busbw"]):
                print(f"  {int(s):>12} {ti:>12.2f} {al:>13.2f} {bu:>13.2f}")
            note = left_out_line(c)
            if note:
                print(note)
            for k, s in enumerate(c["sizes"]):
                rows.append([label, path, c["job"], c["op"], c["algorithm"], c["ranks"], int(s),
                             float(c["time_us"][k]), float(c["algbw"][k]), float(c["busbw"][k]),
                             int(c["iterations"][k]), c["unfinished"]])
    if a.png:
        print(f"plot: {draw(a.png, curves)}")
    if a.csv:
        print(f"csv: {write_csv(a.csv, CSV_HEADER, rows)}")
    return 0


def main(argv=None):
    p = cli.parser("fabricsim_busbw.py", __doc__)
    cli.add_inputs(p)
    cli.add_labels(p)
    cli.add_plot(p, "--png", "--plot", help="plot busbw against size to PATH (PNG)")
    cli.add_csv(p)
    return cli.run_main(_body, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
