"""Cluster queue runs (vClos): job waiting, running and completion times, stability, fragmentation.

usage: fabricsim_cluster.py RUN.h5 [RUN.h5 ...] [--label NAME ...] [--csv OUT.csv] [--plot OUT.png]
                            [--utilization OUT.png]

The runs are cluster queue runs (workload.queue = fifo, edf or
fewest_gpus_first), typically one per scheme on one job mix (vclos,
whole_server with ECMP, source routing, an ideal switch).  Each run is one
row, named by --label or the file's stem, with the vClos paper's metrics
(/work/shared/spec/vclos.md section 8) from /jobs:

* JWT = start_ns - arrival_ns (waiting in the queue), JRT = end_ns - start_ns
  (running), JCT = JWT + JRT = end_ns - arrival_ns; their means, and the
  median and 99th percentile of JCT (numpy's default linear percentile), in
  ms, over the finished jobs.  Jobs never admitted (start_ns < 0) and jobs
  admitted but not finished (end_ns < 0: engine.end_ns stopped the run) are
  left out of every mean and percentile, and a line says how many.
* stability: the mean over job classes of the population standard deviation
  (numpy's np.std, ddof = 0) of the JCT of the class's finished jobs; a class
  is the jobs of one kind, op, algorithm, endpoints and model.  A class with
  one finished job has a standard deviation of 0 and counts.
* refusals: the sums of /jobs refused_gpus and refused_network over every
  job (the fragmentation counts by cause: not enough idle GPUs, or enough
  but no virtual Clos).
* GPU utilization: busy GPUs over time, a step function: + reserved (the
  job's endpoints when reserved is 0, as the free scheduler writes) at
  start_ns, - the same at end_ns; as a fraction of the cluster's endpoints
  (/topology endpoints, else /summary endpoints, else the endpoint rows of
  /nodes).  The table's mean is its time average from the first arrival to
  the end of the series (the last end_ns; /summary sim_time_ns when a job
  was still running at the end).
* the scheduler: workload.scheduler/routing.algorithm/topology.kind of the
  /meta config, e.g. vclos/ecmp/leaf_spine.

--csv writes the table, one row per run, with full precision; --plot draws
the JCT CDF per run (log x); --utilization the busy GPU fraction over time
per run.  A run that is not a cluster queue run (no /jobs end_ns or
arrival_ns columns; workload.queue = "none"; or, without a config, every
end_ns -1) and two runs of one name are an error with one line.
"""

import math
import os
import sys

import numpy as np

from . import cli
from . import plot as fplot
from .fmt import NA, fmt_int, fmt_num, fmt_pct, table, write_csv
from .io import FabricsimFileError, check_column, open_file, param, read_attrs, read_params, read_table

QUEUES = ("fifo", "edf", "fewest_gpus_first")
CLASS_KEYS = ("kind", "op", "algorithm", "endpoints", "model")
_NUM_COLUMNS = ("arrival_ns", "start_ns", "end_ns", "deadline_ns")
_INT_COLUMNS = ("endpoints", "reserved", "refused_gpus", "refused_network", "virtual_leaves", "virtual_spines")
_STR_COLUMNS = ("kind", "op", "algorithm", "model", "stage")


def _not_queue(path, why):
    return FabricsimFileError("%s: not a cluster queue run (%s); run with workload.queue = %s" % (
        path, why, ", ".join('"%s"' % q for q in QUEUES)))


def _cluster_endpoints(f):
    """(endpoints of the cluster, where from) from /topology, /summary or /nodes; (None, None) without."""
    for group in ("topology", "summary"):
        v = read_attrs(f, group).get("endpoints")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return int(v), "/%s endpoints" % group
    nodes = read_table(f, "nodes", columns=("kind",), required=False)
    if nodes and "kind" in nodes and len(nodes["kind"]):
        n = int(np.sum(nodes["kind"] == 0))
        if n > 0:
            return n, "/nodes kind"
    return None, None


def load_jobs(path):
    """The /jobs table of one cluster queue run, checked.

    Returns a dict: path; arrays arrival_ns, start_ns, end_ns (float64),
    endpoints, reserved, refused_gpus, refused_network, virtual_leaves,
    virtual_spines (int64; 0 where the column is missing), kind, op,
    algorithm, model, stage (str; '' where missing); n (jobs); queue,
    scheduler, routing, topology (from the /meta config, None where it has
    none); cluster_endpoints (and cluster_endpoints_from) from /topology or
    /summary ``endpoints`` or the endpoint rows of /nodes (None without any);
    sim_time_ns (/summary, None without).  Raises FabricsimFileError for a
    file that is not fabricsim output or not a cluster queue run: no /jobs,
    no arrival_ns or end_ns column, workload.queue = "none", or (a file
    without a config) every end_ns -1.
    """
    params = read_params(path)
    with open_file(path) as f:
        cols = read_table(f, "jobs", columns=_NUM_COLUMNS + _INT_COLUMNS + _STR_COLUMNS, required=False)
        if cols is None:
            raise _not_queue(path, "no /jobs table")
        for key in ("arrival_ns", "end_ns", "start_ns", "endpoints"):
            if key not in cols:
                raise _not_queue(path, "/jobs has no %s column" % key)
        for key in _NUM_COLUMNS:
            if key in cols:
                check_column(path, "jobs", key, cols[key], "num")
        for key in _INT_COLUMNS:
            if key in cols:
                check_column(path, "jobs", key, cols[key], "int")
        for key in _STR_COLUMNS:
            if key in cols:
                check_column(path, "jobs", key, cols[key], "str")
        endpoints, where = _cluster_endpoints(f)
        sim_time = read_attrs(f, "summary").get("sim_time_ns")
    n = len(cols["end_ns"])
    out = {"path": path, "n": n}
    for key in _NUM_COLUMNS:
        out[key] = np.asarray(cols[key], dtype=np.float64) if key in cols else np.zeros(n)
    for key in _INT_COLUMNS:
        out[key] = np.asarray(cols[key], dtype=np.int64) if key in cols else np.zeros(n, dtype=np.int64)
    for key in _STR_COLUMNS:
        out[key] = np.asarray(cols[key], dtype=str) if key in cols else np.full(n, "", dtype=object)
    queue = param(params, "workload.queue")
    if queue is not None and str(queue) == "none":
        raise _not_queue(path, 'workload.queue = "none": /jobs/end_ns is -1 for every job')
    if queue is None and not np.any(out["end_ns"] >= 0):
        raise _not_queue(path, "no workload.queue in /meta config and /jobs/end_ns is -1 for every job")
    out["queue"] = None if queue is None else str(queue)
    for key, dotted in (("scheduler", "workload.scheduler"), ("routing", "routing.algorithm"),
                        ("topology", "topology.kind")):
        v = param(params, dotted)
        out[key] = None if v is None else str(v)
    out["cluster_endpoints"] = endpoints
    out["cluster_endpoints_from"] = where
    out["sim_time_ns"] = float(sim_time) if isinstance(sim_time, (int, float)) else None
    return out


def scheme(jobs):
    """'vclos/ecmp/leaf_spine': scheduler/routing/topology of :func:`load_jobs`'s dict ('?' where unknown)."""
    parts = [jobs.get(k) for k in ("scheduler", "routing", "topology")]
    if all(p is None for p in parts):
        return NA
    return "/".join("?" if p is None else p for p in parts)


def gpus(jobs):
    """GPUs each job holds while it runs: reserved, or endpoints where reserved is 0."""
    return np.where(jobs["reserved"] > 0, jobs["reserved"], jobs["endpoints"])


def job_classes(jobs):
    """Per job its class key: (kind, op, algorithm, endpoints, model)."""
    return [tuple(str(jobs[k][i]) if k != "endpoints" else int(jobs[k][i]) for k in CLASS_KEYS)
            for i in range(jobs["n"])]


def metrics(jobs):
    """The vClos paper's metrics of one run (:func:`load_jobs`'s dict); times in ns.

    Returns a dict: jobs, admitted (start_ns >= 0), finished (admitted and
    end_ns >= 0), never_admitted, unfinished (admitted, not finished);
    jwt, jrt, jct (arrays over the finished jobs, in /jobs order);
    mean_jwt, mean_jrt, mean_jct (NaN without a finished job; mean_jct =
    mean_jwt + mean_jrt); median_jct and p99_jct (np.percentile, linear);
    stability (the mean over the classes with a finished job of the
    population standard deviation, np.std with ddof = 0, of their JCTs;
    a class is one (kind, op, algorithm, endpoints, model)), classes (how
    many), single_classes (those with one finished job: std 0), class_std
    ({class: std}); refused_gpus and refused_network (sums over every
    job); stages ({stage: admitted jobs placed so}); utilization (the time
    average of :func:`utilization`'s fraction, NaN without the cluster's
    size or a span).
    """
    start, end, arrival = jobs["start_ns"], jobs["end_ns"], jobs["arrival_ns"]
    admitted = start >= 0
    done = admitted & (end >= 0)
    jwt = start[done] - arrival[done]
    jrt = end[done] - start[done]
    jct = jwt + jrt
    nan = float("nan")
    classes = job_classes(jobs)
    by_class = {}
    for i in np.nonzero(done)[0]:
        by_class.setdefault(classes[i], []).append(end[i] - arrival[i])
    class_std = {k: float(np.std(np.asarray(v, dtype=np.float64))) for k, v in by_class.items()}
    stages = {}
    for i in np.nonzero(admitted)[0]:
        s = str(jobs["stage"][i])
        stages[s] = stages.get(s, 0) + 1
    u = utilization(jobs)
    return {
        "jobs": int(jobs["n"]), "admitted": int(admitted.sum()), "finished": int(done.sum()),
        "never_admitted": int((~admitted).sum()), "unfinished": int((admitted & ~done).sum()),
        "jwt": jwt, "jrt": jrt, "jct": jct,
        "mean_jwt": float(jwt.mean()) if jwt.size else nan,
        "mean_jrt": float(jrt.mean()) if jrt.size else nan,
        "mean_jct": float(jct.mean()) if jct.size else nan,
        "median_jct": float(np.percentile(jct, 50)) if jct.size else nan,
        "p99_jct": float(np.percentile(jct, 99)) if jct.size else nan,
        "stability": float(np.mean(list(class_std.values()))) if class_std else nan,
        "classes": len(class_std), "single_classes": sum(1 for v in by_class.values() if len(v) == 1),
        "class_std": class_std,
        "refused_gpus": int(jobs["refused_gpus"].sum()), "refused_network": int(jobs["refused_network"].sum()),
        "stages": stages, "utilization": u["mean"],
    }


def utilization(jobs):
    """Busy GPUs over time of one run (:func:`load_jobs`'s dict): a step function.

    Each admitted job adds :func:`gpus` (reserved, or endpoints where
    reserved is 0) at its start_ns and, if it finished, takes them back at
    its end_ns.  Returns a dict: times (the distinct event times, ns,
    ascending), busy (GPUs busy from times[i] until times[i + 1]: every
    change at or before times[i] counted), endpoints (the cluster's, None
    if unknown), fraction (busy / endpoints; NaN without endpoints), start
    (the first arrival), end (the last event, or /summary sim_time_ns when
    a job was still running at the end and it is later), mean (the time
    average of fraction over [start, end]; NaN without endpoints or for an
    empty span).  See :func:`busy_at`.
    """
    g = gpus(jobs).astype(np.int64)
    admitted = jobs["start_ns"] >= 0
    done = admitted & (jobs["end_ns"] >= 0)
    t = np.concatenate([jobs["start_ns"][admitted], jobs["end_ns"][done]])
    d = np.concatenate([g[admitted], -g[done]])
    times, inverse = np.unique(t, return_inverse=True)
    delta = np.zeros(len(times), dtype=np.int64)
    np.add.at(delta, inverse, d)
    busy = np.cumsum(delta)
    ep = jobs.get("cluster_endpoints")
    fraction = busy / float(ep) if ep else np.full(len(busy), np.nan)
    start = float(jobs["arrival_ns"].min()) if jobs["n"] else float("nan")
    end = float(times[-1]) if len(times) else float("nan")
    if np.any(admitted & ~done) and jobs.get("sim_time_ns") is not None:
        end = max(end, float(jobs["sim_time_ns"]))
    mean = float("nan")
    if ep and len(times) and end > start:
        # busy is 0 before times[0]; the last step lasts until end
        lo = np.clip(times, start, end)
        hi = np.clip(np.append(times[1:], end), start, end)
        mean = float(np.sum(busy * (hi - lo)) / (ep * (end - start)))
    return {"times": times, "busy": busy, "endpoints": ep, "fraction": fraction,
            "start": start, "end": end, "mean": mean}


def busy_at(u, t):
    """GPUs busy at time ``t`` (ns) of :func:`utilization`'s step function (changes at t counted)."""
    i = int(np.searchsorted(u["times"], t, side="right")) - 1
    return int(u["busy"][i]) if i >= 0 else 0


# --------------------------------------------------------------------------
# the script
# --------------------------------------------------------------------------

def load_runs(paths, labels=None):
    """[(name, :func:`load_jobs`'s dict)] of the runs; ValueError for two runs of one name."""
    runs = []
    seen = {}
    for i, path in enumerate(paths):
        name = labels[i] if labels else os.path.splitext(os.path.basename(path))[0]
        if name in seen:
            if labels:
                raise ValueError("--label %s names two runs (%s, %s): give each run a distinct --label" % (
                    name, seen[name], path))
            raise ValueError("run name %s for two files (%s, %s): give each run a distinct --label" % (
                name, seen[name], path))
        seen[name] = path
        runs.append((name, load_jobs(path)))
    return runs


def _ms(ns):
    return fmt_num(None if ns is None else ns / 1e6, "%.4f")


HEADER = ["run", "scheduler", "queue", "jobs", "finished", "JWT (ms)", "JRT (ms)", "JCT (ms)", "p50 JCT",
          "p99 JCT", "stability (ms)", "refused gpus", "refused network", "GPU util"]


def format_table(runs, results):
    """The lines the script prints: the table and the notes under it."""
    lines = ["# cluster queue runs: %s" % ", ".join("%s (%s)" % (n, j["path"]) for n, j in runs),
             "# means over the finished jobs: JWT = start - arrival, JRT = end - start, JCT = JWT + JRT (ms)"]
    rows = []
    for (name, j), m in zip(runs, results):
        rows.append([name, scheme(j), j["queue"] or NA, fmt_int(m["jobs"]), fmt_int(m["finished"]),
                     _ms(m["mean_jwt"]), _ms(m["mean_jrt"]), _ms(m["mean_jct"]), _ms(m["median_jct"]),
                     _ms(m["p99_jct"]), _ms(m["stability"]), fmt_int(m["refused_gpus"]),
                     fmt_int(m["refused_network"]), fmt_pct(None if math.isnan(m["utilization"])
                                                           else m["utilization"], 1)])
    lines += table(HEADER, rows)
    lines.append("# stability: mean over job classes (kind, op, algorithm, endpoints, model) of the population "
                 "std-dev of JCT; refused: times a job could not be placed (gpus: not enough idle GPUs, "
                 "network: no virtual Clos); GPU util: busy GPUs / endpoints, time average from the first "
                 "arrival to the last end")
    for (name, j), m in zip(runs, results):
        note = "# %s: %d job class%s" % (name, m["classes"], "es" if m["classes"] != 1 else "")
        if m["single_classes"]:
            note += " (%d with one finished job, std-dev 0)" % m["single_classes"]
        if m["stages"] and any(m["stages"]):
            note += "; placed by stage: " + ", ".join(
                "%s %d" % (s or "(none)", k) for s, k in sorted(m["stages"].items()))
        if j["cluster_endpoints"]:
            note += "; %d endpoints (%s)" % (j["cluster_endpoints"], j["cluster_endpoints_from"])
        lines.append(note)
        if m["never_admitted"] or m["unfinished"]:
            parts = []
            if m["never_admitted"]:
                parts.append("%d job%s never admitted" % (m["never_admitted"], "s" if m["never_admitted"] != 1
                                                          else ""))
            if m["unfinished"]:
                parts.append("%d unfinished job%s (admitted, stopped by engine.end_ns)" % (
                    m["unfinished"], "s" if m["unfinished"] != 1 else ""))
            lines.append("# %s: left out %s" % (name, " and ".join(parts)))
    return lines


CSV_HEADER = ["label", "file", "scheduler", "routing", "topology", "queue", "jobs", "admitted", "finished",
              "never_admitted", "unfinished", "mean_jwt_ms", "mean_jrt_ms", "mean_jct_ms", "median_jct_ms",
              "p99_jct_ms", "stability_ms", "classes", "refused_gpus", "refused_network", "endpoints",
              "gpu_utilization"]


def csv_rows(runs, results):
    """One row per run, times in ms at full precision (empty where n/a)."""
    rows = []
    for (name, j), m in zip(runs, results):
        rows.append([name, j["path"], j["scheduler"], j["routing"], j["topology"], j["queue"], m["jobs"],
                     m["admitted"], m["finished"], m["never_admitted"], m["unfinished"]]
                    + [m[k] / 1e6 for k in ("mean_jwt", "mean_jrt", "mean_jct", "median_jct", "p99_jct",
                                            "stability")]
                    + [m["classes"], m["refused_gpus"], m["refused_network"], j["cluster_endpoints"],
                       m["utilization"]])
    return rows


def draw_cdf(path, runs, results):
    """The JCT CDF of each run's finished jobs, one line per run, log x (ms)."""
    fig, ax = fplot.figure(figsize=(7, 4.5))
    drawn = 0
    for (name, _), m in zip(runs, results):
        x = np.sort(m["jct"]) / 1e6
        if not x.size:
            continue
        y = np.arange(1, x.size + 1) / float(x.size)
        ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post",
                label="%s (%d jobs)" % (name, x.size))
        drawn += 1
    if not drawn:
        fplot.no_data(ax, "no finished job")
        return fplot.savefig(fig, path, dpi=100)
    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    if hi < 20 * lo:  # less than about a decade: plain numbers on the minor ticks too
        from matplotlib.ticker import ScalarFormatter
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(ScalarFormatter())
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("job completion time JCT = JWT + JRT (ms)")
    ax.set_ylabel("fraction of finished jobs")
    ax.set_title("JCT distribution")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fplot.savefig(fig, path, dpi=100)


def draw_utilization(path, runs):
    """Busy GPUs / endpoints over time, one step line per run."""
    for _, j in runs:
        if not j["cluster_endpoints"]:
            raise FabricsimFileError("%s: the cluster's size is unknown (no /topology or /summary endpoints, "
                                     "no /nodes): --utilization needs it" % j["path"])
    fig, ax = fplot.figure(figsize=(8, 4.5))
    for name, j in runs:
        u = utilization(j)
        if not len(u["times"]):
            continue
        t = np.concatenate([[min(0.0, u["times"][0])], u["times"], [u["end"]]]) / 1e6
        f = np.concatenate([[0.0], u["fraction"], [u["fraction"][-1]]]) * 100.0
        ax.step(t, f, where="post", label="%s (mean %s)" % (name, fmt_pct(u["mean"], 1)))
    ax.set_ylim(0.0, 105.0)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("busy GPUs (% of the endpoints)")
    ax.set_title("GPU utilization")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return fplot.savefig(fig, path, dpi=100)


def _body(a):
    cli.check_outputs(a, ("plot", "--plot"), ("utilization", "--utilization"), ("csv", "--csv"))
    bad = cli.check_labels(a.label, a.runs)
    if bad:
        raise ValueError(bad)
    runs = load_runs(a.runs, a.label)
    results = [metrics(j) for _, j in runs]
    for line in format_table(runs, results):
        print(line)
    if a.plot:
        print("plot: %s" % draw_cdf(a.plot, runs, results))
    if a.utilization:
        print("utilization: %s" % draw_utilization(a.utilization, runs))
    if a.csv:
        print("csv: %s" % write_csv(a.csv, CSV_HEADER, csv_rows(runs, results)))
    return 0


def main(argv=None):
    p = cli.parser("fabricsim_cluster.py", __doc__)
    cli.add_inputs(p, help="cluster queue runs (workload.queue), typically one per scheme")
    cli.add_labels(p)
    cli.add_csv(p, help="write one row per run as CSV to PATH")
    cli.add_plot(p, help="plot the JCT CDF per run, log x (PNG)")
    cli.add_plot(p, "--utilization", help="plot the busy GPU fraction over time per run (PNG)")
    args = p.parse_args(argv)
    return cli.run_main(_body, args)


if __name__ == "__main__":
    sys.exit(main())
