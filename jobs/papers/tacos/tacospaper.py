"""Shared parts of the TACOS paper's experiment scripts (README.md).

Won et al., "TACOS: Topology-Aware Collective Algorithm Synthesizer for
Distributed Training" (arXiv:2304.05301, 2023); the specification is
../shared/spec/tacos.md (sections named as spec N).  Every script runs
fabricsim in the paper's link model (network.model = "analytic": alpha +
beta n per link, one transfer at a time, spec 2.2 and 8) on the inputs next
to this file, reads /collectives from the HDF5 outputs and writes one CSV
(one row per run and collective, with its command) and one figure.  What is
here is the paper's: its algorithms, graphs, sizes and how its tables
normalize; the argument checks, runs, CSV and figures are every paper's
(jobs/papers/paperlib.py).
"""

import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from paperlib import *  # noqa: E402,F401,F403
from paperlib import _py  # noqa: E402,F401

NPU_GRAPH = os.path.join(HERE, "npu_graph.toml")      # topology.kind = "npu_graph"
MESH_XY = os.path.join(HERE, "mesh_xy.toml")          # topology.kind = "mesh", xy routing
MESH_FAILED = os.path.join(HERE, "mesh_failed.toml")  # 4 x 4 with NPUs 7 and 9 down, 14 live
TENANTS = os.path.join(HERE, "tenants.toml")          # 6 x 6: broadcast + reduce + allgather at once

ALPHA_NS = 500.0   # the spec's 0.5 us (section 6)
GBPS = 800.0       # the spec's 100 GB/s
MIB = 1 << 20

# The algorithms the paper compares (spec 7), as fabricsim keys.
ALGORITHMS = {
    "ring": ("Ring", {"workload.algorithm": "ring"}),
    "direct": ("Direct", {"workload.algorithm": "direct"}),
    "tree": ("Tree", {"workload.algorithm": "tree"}),
    "taccl": ("TACCL-like", {"workload.algorithm": "tacos", "workload.tacos_synthesizer": "taccl"}),
    "ilp": ("TACOS-ILP", {"workload.algorithm": "tacos", "workload.tacos_synthesizer": "ilp"}),
    "ilp_tc": ("TACOS-ILP, time clustering", {"workload.algorithm": "tacos", "workload.tacos_synthesizer": "ilp",
                                             "workload.tacos_ilp_clustering": True}),
    "greedy": ("TACOS-Greedy", {"workload.algorithm": "tacos", "workload.tacos_synthesizer": "greedy"}),
}
ILP_LIKE = ("ilp", "taccl", "ilp_tc")
SYNTHESIZED = ("greedy",) + ILP_LIKE


def label(algorithm):
    return ALGORITHMS[algorithm][0]


def parse_args(description, chunk_kib=1024):
    """The options every TACOS script has: --quick, --chunk-kib and the run options."""
    p = Parser(description=description)  # noqa: F405
    p.add_argument("--quick", action="store_true", help="reduced instances (seconds; what ctest runs)")
    p.add_argument("--chunk-kib", type=integer(1, 1 << 20), default=chunk_kib,  # noqa: F405
                   help="each NPU's piece of the buffer, KiB (default %d: the artifact's 1 MiB chunk, one "
                        "chunk per NPU; the buffer per rank is NPUs x this)" % chunk_kib)
    p.add_argument("--instances", type=integer(1, 1024), default=8,  # noqa: F405
                   help="TACOS-Greedy's independent seeded runs, the fastest kept (spec 5.3; default 8)")
    add_run_options(p, "papers-tacos")  # noqa: F405
    return p


def add_ilp_options(p, limit_s, quick_limit_s):
    p.add_argument("--ilp-time-limit", type=float, default=None,
                   help="seconds per ILP call of TACOS-ILP and TACCL-like (an All-Reduce makes two; %s; 0: "
                        "none). CBC overruns it when its first LP alone takes longer (README.md)" % (
                            "default %g, --quick %g" % (limit_s, quick_limit_s) if limit_s is not None else
                            "default: see --limits"))
    p.add_argument("--ilp-max-variables", type=integer(1, 1 << 32), default=5_000_000,  # noqa: F405
                   help="the largest ILP built (binary variables; default 5,000,000)")
    p.set_defaults(ilp_limits=(limit_s, quick_limit_s))


def parse(p, outputs):
    args = p.parse_args()
    if getattr(args, "ilp_limits", None) is not None:
        if args.ilp_time_limit is None:  # (a script that picks its own default passes None)
            args.ilp_time_limit = args.ilp_limits[1] if args.quick else args.ilp_limits[0]
        if args.ilp_time_limit is not None and not (0 <= args.ilp_time_limit <= 1e6):
            fail("--ilp-time-limit", "%r is not a number of seconds from 0 to 1e6" % args.ilp_time_limit)  # noqa: F405
    check_fabricsim(args)  # noqa: F405
    check_launch(args)  # noqa: F405
    check_out(args, outputs, ["runs"] if args.keep else [])  # noqa: F405
    return args


def algorithm_overrides(args, algorithm):
    o = dict(ALGORITHMS[algorithm][1])
    if o.get("workload.algorithm") == "tacos":
        o["workload.tacos_instances"] = args.instances
        if algorithm in ILP_LIKE:
            o["workload.tacos_ilp_time_limit_s"] = args.ilp_time_limit
            o["workload.tacos_ilp_max_variables"] = args.ilp_max_variables
    return o


def graph_overrides(graph, dims):
    """An npu_graph (npu_graph.toml): the fixed graphs take dims = [1]."""
    return {"topology.npu_graph": graph, "topology.dims": list(dims)}


def mesh_overrides(rows, cols):
    """The xy-routed mesh (mesh_xy.toml)."""
    return {"topology.dims": [rows, cols]}


def size_overrides(npus, chunk_bytes, chunks_per_npu=1):
    """Each NPU's piece of chunks_per_npu chunks of chunk_bytes: the buffer per rank is npus times it."""
    return {"workload.sizes": [npus * chunks_per_npu * chunk_bytes], "workload.chunk_bytes": chunk_bytes}


def ilp_status(stdout):
    """The ILP's status lines (`#   ILP: ...`), joined; fabricsim prints them but writes no HDF5 column."""
    return " | ".join(m.group(1).strip() for m in re.finditer(r"^#   ILP: (.*)$", stdout or "", re.M))


def collectives(run, tag, config, overrides):
    """One run; a dict per /collectives row (time, the schedule's estimate, synthesis), with the run's
    wall time, command and fabricsim version."""
    import h5py
    h5, wall, cmd = run.run(tag, config, overrides)
    status = ilp_status(run.stdout)
    out = []
    with h5py.File(h5, "r") as f:
        c = f["collectives"]
        cols = {k: [_text(_py(v)) for v in c[k][()]] for k in c.keys()}  # noqa: F405
        s = {k: _py(v) for k, v in f["summary"].attrs.items()}  # noqa: F405
    run.done(h5)
    for i in range(len(cols["op"])):
        t = cols["end_ns"][i] - cols["start_ns"][i]
        out.append({"op": cols["op"][i], "job": cols["job"][i], "ranks": cols["ranks"][i],
                    "bytes": cols["bytes"][i], "finished": cols["finished"][i],
                    "start_us": cols["start_ns"][i] / 1e3, "end_us": cols["end_ns"][i] / 1e3,
                    "time_us": t / 1e3, "schedule_us": _or_none(cols["schedule_ns"][i] / 1e3),
                    "synthesis_s": _or_none(cols["synthesis_seconds"][i]), "ilp_status": status,
                    "bytes_injected": s.get("bytes_injected"), "bytes_delivered": s.get("bytes_delivered"),
                    "wall_s": round(wall, 3), "fabricsim": run.version, "command": cmd})
    for r in out:
        if not r["finished"]:
            fail("fabricsim run", "the %s did not finish (the command: %s)" % (r["op"], cmd), 1)  # noqa: F405
    return out


def one(run, tag, config, overrides):
    """One run of one collective (one size, one iteration): its dict."""
    rows = collectives(run, tag, config, overrides)
    if len(rows) != 1:
        fail("fabricsim run", "%d collectives where one was run (the command: %s)" % (  # noqa: F405
            len(rows), rows[0]["command"] if rows else "?"), 1)
    return rows[0]


def _or_none(x):
    """NaN (not a synthesized schedule) as an empty CSV cell."""
    return x if finite(x) else None  # noqa: F405


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def normalize(rows, group):
    """Each row's time over the best (smallest) in its group (spec 9, 10.1: normalised to the best present)."""
    best = {}
    for r in rows:
        k = tuple(r[g] for g in group)
        best[k] = min(best.get(k, math.inf), r["time_us"])
    for r in rows:
        r["normalized"] = r["time_us"] / best[tuple(r[g] for g in group)]


def geomean(xs):
    xs = [x for x in xs if finite(x) and x > 0]  # noqa: F405
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def seconds(s):
    return "%.3g s" % s if s < 100 else "%.0f s" % s


def bars(ax, groups, algorithms, value, rows, key="config", ylabel="time / best", brackets=None):
    """Grouped bars: one group per configuration, one bar per algorithm (value(row)); brackets(row) is
    written over the bar (the paper's synthesis time in brackets)."""
    width = 0.8 / max(1, len(algorithms))
    for i, a in enumerate(algorithms):
        xs, ys, notes = [], [], []
        for j, g in enumerate(groups):
            sel = [r for r in rows if r[key] == g and r["algorithm"] == a]
            if sel:
                xs.append(j + i * width)
                ys.append(value(sel[0]))
                notes.append(brackets(sel[0]) if brackets else None)
        ax.bar(xs, ys, width, label=label(a))
        for x, y, n in zip(xs, ys, notes):
            if n:
                ax.text(x, y / 2, n, ha="center", va="center", fontsize=6, rotation=90)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))], groups)
    ax.set_ylabel(ylabel)
    ax.axhline(1.0, color="black", linewidth=0.5)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
