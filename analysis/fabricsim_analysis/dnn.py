"""Where the time of DNN training iterations goes, for runs with DNN jobs.

usage: fabricsim_dnn.py RUN.h5 [RUN.h5 ...] [--label NAME ...] [--bars OUT.png] [--csv OUT.csv]
                        [--gantt OUT.png [--job J] [--endpoint E] [--iteration I]]

For each file and DNN job the script prints the mean over the timed
iterations (warm-up ones, iteration < 0 in /iterations, are left out) of the
iteration time, the compute and the exposed communication, and the per-phase
columns of /iterations, all in ms.  Iterations engine.end_ns stopped
(finished = 0) are left out of the means, and a line under the table says
how many.

--bars draws a stacked bar per file and job: forward, backward and optimizer
compute and the exposed communication, which add up to the iteration time;
give one file per topology (or algorithm, or layout) to compare them.  Labels
default to "<topology kind> <model>".

--gantt draws the timeline of one endpoint (default: the first endpoint of
the job) in one iteration (default: the first timed one) from the first file:
a lane of compute tasks and a lane per kind of communication, each bar from
when the operation could begin at that endpoint to when it completed there.
It needs /timeline, written by runs with `--set output.timeline=true`.

Exits 1 with one ``error: ...`` line on stderr for a file that is not
fabricsim output or has no DNN jobs.
"""

import sys

import numpy as np

from . import cli
from . import plot as fplot
from .fmt import write_csv
from .io import FabricsimFileError, finished_mask, open_file, read_attrs, read_table, text

COMPUTE = ("forward", "backward", "optimizer")
COMM = ("data_parallel", "pipeline", "tensor_parallel", "alltoall")
COLORS = {"forward": "#4c72b0", "backward": "#55a868", "optimizer": "#8172b2", "exposed": "#c44e52",
          "data_parallel": "#dd8452", "pipeline": "#937860", "tensor_parallel": "#da8bc3", "alltoall": "#8c8c8c"}


def load(path):
    """(topology kind, [job dicts]) of one run file: per DNN job its model and mean timed columns (ns).

    Each job dict has ``job``, ``model``, one entry per ``*_ns`` column of
    /iterations without the suffix (``time``, ``compute``, ``exposed_comm``,
    ``forward``, ...: the mean over the job's finished timed iterations, NaN
    if none finished), ``iterations`` (how many were averaged) and
    ``unfinished`` (timed iterations engine.end_ns stopped, left out).
    """
    with open_file(path) as f:
        if "iterations" not in f:
            raise FabricsimFileError("%s: no /iterations (not a run with DNN jobs)" % path)
        kind = text(read_attrs(f, "topology").get("kind", "?"))
        cols = read_table(f, "iterations", need=("job", "iteration", "time_ns", "compute_ns", "exposed_comm_ns"))
        jobs_table = read_table(f, "jobs", ["model"], required=False) or {}
        models = [text(m) for m in jobs_table.get("model", [])]
    done = finished_mask(cols)
    jobs = []
    for j in np.unique(cols["job"]):
        mine = cols["job"] == j
        timed = mine & (cols["iteration"] >= 0)
        if not timed.any():
            timed = mine
        sel = timed & done
        row = {"job": int(j), "model": models[j] if j < len(models) else "?",
               "iterations": int(sel.sum()), "unfinished": int((timed & ~done).sum())}
        for k, v in cols.items():
            if k.endswith("_ns"):
                row[k[:-3]] = float(v[sel].mean()) if sel.any() else float("nan")
        jobs.append(row)
    return kind, jobs


def phases_of(jobs):
    return [p for p in COMPUTE + COMM if jobs and p in jobs[0]]


def print_table(path, kind, jobs):
    phases = phases_of(jobs)
    print(f"# {path} ({kind})")
    print(f"# {'job':>3} {'model':>12} {'time':>10} {'compute':>10} {'exposed':>10} "
          + " ".join(f"{p[:10]:>10}" for p in phases) + "   (ms, mean of timed iterations)")
    for r in jobs:
        print(f"  {r['job']:>3} {r['model'][:12]:>12} {r['time'] / 1e6:>10.3f} {r['compute'] / 1e6:>10.3f} "
              f"{r['exposed_comm'] / 1e6:>10.3f} " + " ".join(f"{r[p] / 1e6:>10.3f}" for p in phases))
    for r in jobs:
        if r["unfinished"]:
            print(f"# job {r['job']}: left out {r['unfinished']} unfinished timed iteration"
                  f"{'s' if r['unfinished'] != 1 else ''} (stopped by engine.end_ns); "
                  f"mean of {r['iterations']}")


def draw_bars(out, bars):
    fig, ax = fplot.figure(figsize=(max(5, 1.2 * len(bars) + 2), 4.5))
    x = np.arange(len(bars))
    bottom = np.zeros(len(bars))
    for part in COMPUTE + ("exposed",):
        key = "exposed_comm" if part == "exposed" else part
        h = np.array([b[1].get(key, 0.0) for b in bars]) / 1e6
        ax.bar(x, h, bottom=bottom, color=COLORS[part], label=part if part != "exposed" else "exposed communication")
        bottom += h
    ax.set_xticks(x)
    ax.set_xticklabels([b[0] for b in bars], rotation=20, ha="right")
    ax.set_ylabel("iteration time (ms)")
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fplot.savefig(fig, out, dpi=100)
    print(f"bars: {out}")


def load_gantt(path, job, endpoint, iteration):
    """What --gantt draws, read and checked (before anything is printed): a dict for draw_gantt."""
    with open_file(path) as f:
        if "timeline" not in f:
            raise ValueError(f"{path}: no /timeline: rerun with --set output.timeline=true")
        names = read_attrs(f, "timeline").get("phase_names")
        if not isinstance(names, str):
            raise FabricsimFileError("%s: /timeline: attribute phase_names: expected a string (the phases, "
                                     "comma-separated), found %r" % (path, names))
        names = names.split(",")
        timeline = ("job", "endpoint", "iteration", "phase", "start_ns", "end_ns")
        cols = read_table(f, "timeline", timeline, need=timeline)
        its = read_table(f, "iterations", ("job", "iteration", "start_ns", "end_ns"),
                         need=("job", "iteration", "start_ns", "end_ns"))
    ij, ii = its["job"], its["iteration"]
    if not (ij == job).any():
        raise ValueError(f"{path}: job {job} has no rows in /iterations")
    if iteration is None:
        timed = ii[(ij == job) & (ii >= 0)]
        iteration = int(timed.min()) if len(timed) else int(ii[ij == job].min())
    pick = (ij == job) & (ii == iteration)
    if not pick.any():
        raise ValueError(f"{path}: job {job} has no iteration {iteration}")
    lo, hi = float(its["start_ns"][pick][0]), float(its["end_ns"][pick][0])
    mine = cols["job"] == job
    if endpoint is None:
        if not mine.any():
            raise ValueError(f"{path}: no timeline rows of job {job}")
        endpoint = int(cols["endpoint"][mine].min())
    sel = mine & (cols["endpoint"] == endpoint) & (cols["iteration"] == iteration)
    if not sel.any():
        raise ValueError(f"{path}: endpoint {endpoint} is not in job {job}")
    if hi < 0:  # an iteration engine.end_ns stopped: up to the last thing that ended
        hi = max(float(cols["end_ns"][sel].max()), lo + 1.0)
    return {"path": path, "job": job, "endpoint": endpoint, "iteration": iteration, "lo": lo, "hi": hi,
            "names": names, "cols": cols, "sel": sel}


def draw_gantt(out, path, job=0, endpoint=None, iteration=None, loaded=None):
    g = loaded or load_gantt(path, job, endpoint, iteration)
    job, endpoint, iteration, lo, hi = g["job"], g["endpoint"], g["iteration"], g["lo"], g["hi"]
    names, cols, sel = g["names"], g["cols"], g["sel"]
    lanes = ["compute"] + list(COMM)
    fig, ax = fplot.figure(figsize=(11, 3.5))
    seen = set()
    for ph, a, z in zip(cols["phase"][sel], cols["start_ns"][sel], cols["end_ns"][sel]):
        name = names[ph] if ph < len(names) else "?"
        lane = "compute" if name in COMPUTE else name
        if lane not in lanes or a < 0 or z < 0:
            continue
        y = len(lanes) - 1 - lanes.index(lane)
        ax.broken_barh([((a - lo) / 1e3, max((z - a) / 1e3, 1e-6))], (y - 0.4, 0.8), color=COLORS.get(name, "k"),
                       label=name if name not in seen else None)
        seen.add(name)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(list(reversed(lanes)))
    ax.set_xlabel(f"time in iteration {iteration} (us)")
    ax.set_xlim(0, (hi - lo) / 1e3)
    ax.set_title(f"job {job}, endpoint {endpoint}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    fplot.savefig(fig, out, dpi=100)
    print(f"gantt: {out} (job {job}, endpoint {endpoint}, iteration {iteration})")


CSV_COLUMNS = ("time", "compute", "exposed_comm") + COMPUTE + COMM


def _body(a):
    cli.check_outputs(a, ("bars", "--bars"), ("gantt", "--gantt"), ("csv", "--csv"))
    bad = cli.check_labels(a.label, a.runs)
    if bad:
        raise ValueError(bad)
    gantt = load_gantt(a.runs[0], a.job, a.endpoint, a.iteration) if a.gantt else None
    bars, rows = [], []
    for i, path in enumerate(a.runs):
        kind, jobs = load(path)
        print_table(path, kind, jobs)
        for r in jobs:
            label = a.label[i] if a.label else f"{kind} {r['model']}"
            if len(jobs) > 1:
                label += f" (job {r['job']})"
            bars.append((label, r))
            rows.append([label, path, r["job"], r["model"], r["iterations"], r["unfinished"]]
                        + [r.get(k, float("nan")) / 1e6 for k in CSV_COLUMNS])
    if a.bars:
        draw_bars(a.bars, bars)
    if a.gantt:
        draw_gantt(a.gantt, a.runs[0], loaded=gantt)
    if a.csv:
        header = ["label", "file", "job", "model", "iterations", "unfinished"] + [k + "_ms" for k in CSV_COLUMNS]
        print(f"csv: {write_csv(a.csv, header, rows)}")
    return 0


def main(argv=None):
    p = cli.parser("fabricsim_dnn.py", __doc__)
    cli.add_inputs(p)
    cli.add_labels(p)
    cli.add_plot(p, "--bars", help="stacked bars of the iteration time per file and job (PNG)")
    p.add_argument("--gantt", metavar="PATH", help="timeline of one endpoint in one iteration (PNG)")
    p.add_argument("--job", type=int, default=0, help="job of --gantt (default 0)")
    p.add_argument("--endpoint", type=int, help="endpoint of --gantt (default: the job's first)")
    p.add_argument("--iteration", type=int, help="iteration of --gantt (default: the first timed one)")
    cli.add_csv(p)
    return cli.run_main(_body, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
