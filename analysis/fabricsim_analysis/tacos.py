"""TACOS against other collective algorithms, and link utilization over time.

usage: fabricsim_tacos.py compare RUN.h5 [RUN.h5 ...] [--label NAME ...] [--csv OUT.csv] [--plot OUT.png]
       fabricsim_tacos.py links RUN.h5 [--plot OUT.png] [--top N]

compare: the runs are collective runs of one operation over a size sweep,
typically one per algorithm (ring, direct, tacos, ...; the algorithm is read
from /collectives).  For each size it prints the mean time of the finished
timed iterations (iteration >= 0) per run, the speedup of each `tacos` run
over the best other algorithm at that size (best other time / tacos time),
and TACOS's own alpha-beta estimate (schedule_ns) and synthesis time
(synthesis_seconds); then the geometric mean of the speedups over the sizes
(the TACOS spec's averaging, /work/shared/spec/tacos.md section 9).  --csv
writes one row per run and size; --plot draws time against size (log-log),
one line per run, with TACOS's estimate dashed.  Runs of different
operations or communicator sizes, or two runs whose names (the algorithm,
or --label) are the same, are an error.

links: link utilization over time of one run from /links/timeseries/tx_bytes,
utilization = tx_bytes * 8 / (bandwidth_gbps * interval_ns): a text summary
(links used, mean and max utilization, the interval of the last byte, the
busiest links) and with --plot a heat map of the --top N busiest links (by
bytes sent) against time.  A run without a time series (output.interval_ns = 0)
is an error saying so.

Exits 1 with one ``error: ...`` line on stderr for a file that is not
fabricsim output or lacks the tables the command needs.
"""

import argparse
import math
import sys

import h5py
import numpy as np

from . import cli
from . import plot as fplot
from .busbw import collective_curves
from .fmt import NA, fmt_int, fmt_num, fmt_pct, fmt_time_ns, table, write_csv
from .io import (FabricsimFileError, _timeseries, check_column, open_file, parse_class_names, read_array,
                 read_attrs, read_table, text)
from .stats import class_name_of

TACOS = "tacos"


# --------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------

def _schedule_columns(path):
    """{job: {size: (schedule_ns, synthesis_seconds)}} from /collectives (NaN where a column is missing)."""
    with open_file(path) as f:
        c = read_table(f, "collectives", columns=("job", "bytes", "schedule_ns", "synthesis_seconds"),
                       need=("bytes",))
    for key in ("schedule_ns", "synthesis_seconds"):
        if key in c:
            check_column(path, "collectives", key, c[key], "num")
    n = len(c["bytes"])
    job = c["job"] if "job" in c else np.zeros(n, dtype=int)
    sched = c["schedule_ns"].astype(np.float64) if "schedule_ns" in c else np.full(n, np.nan)
    synth = c["synthesis_seconds"].astype(np.float64) if "synthesis_seconds" in c else np.full(n, np.nan)
    out = {}
    for i in range(n):  # the first row of a job and size (every row of a size repeats them)
        out.setdefault(int(job[i]), {}).setdefault(int(c["bytes"][i]), (float(sched[i]), float(synth[i])))
    return out


def load_series(paths, labels=None):
    """One dict per collective job of the runs, checked to be comparable.

    Keys: name (the algorithm, or --label), file, job, op, algorithm, ranks,
    tacos (the algorithm is tacos), time_ns ({size: mean time of the finished
    timed iterations}), iterations ({size: rows averaged}), unfinished (timed
    rows engine.end_ns stopped), unfinished_sizes, schedule_ns and
    synthesis_seconds ({size: value}, NaN for other algorithms).  Raises
    ValueError for runs of different operations or communicator sizes and
    for two series of one name.
    """
    series = []
    for i, path in enumerate(paths):
        curves = collective_curves(path)
        extra = _schedule_columns(path)
        for c in curves:
            if labels:
                name = labels[i] if len(curves) == 1 else "%s job %d" % (labels[i], c["job"])
            else:
                name = c["algorithm"]
            sizes = [int(s) for s in c["sizes"]]
            sched = extra.get(c["job"], {})
            series.append({
                "name": name, "file": path, "job": c["job"], "op": c["op"], "algorithm": c["algorithm"],
                "ranks": c["ranks"], "tacos": c["algorithm"].lower() == TACOS,
                "time_ns": {s: float(t) * 1000.0 for s, t in zip(sizes, c["time_us"])},
                "iterations": {s: int(k) for s, k in zip(sizes, c["iterations"])},
                "unfinished": c["unfinished"], "unfinished_sizes": c["unfinished_sizes"],
                "schedule_ns": {s: v[0] for s, v in sched.items()},
                "synthesis_seconds": {s: v[1] for s, v in sched.items()},
                "where": path if len(curves) == 1 else "%s job %d" % (path, c["job"]),
            })
    _check_comparable(series, bool(labels))
    return series


def _check_comparable(series, labelled):
    ops = {}
    for s in series:
        ops.setdefault(s["op"], s["where"])
    if len(ops) > 1:
        raise ValueError("runs of different operations: %s; compare runs of one operation" % ", ".join(
            "%s (%s)" % (op, where) for op, where in ops.items()))
    ranks = {}
    for s in series:
        ranks.setdefault(s["ranks"], s["where"])
    if len(ranks) > 1:
        raise ValueError("runs of different communicator sizes: %s; compare runs of one configuration" % ", ".join(
            "%d ranks (%s)" % (n, where) for n, where in ranks.items()))
    seen = {}
    for s in series:
        if s["name"] in seen:
            if labelled:
                raise ValueError("--label %s names two runs (%s, %s): give each run a distinct --label" % (
                    s["name"], seen[s["name"]], s["where"]))
            raise ValueError("algorithm %s in two runs (%s, %s): give each run a distinct --label" % (
                s["name"], seen[s["name"]], s["where"]))
        seen[s["name"]] = s["where"]


def geomean(values):
    """The geometric mean of positive numbers (NaN for none)."""
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=np.float64)
    return float(np.exp(np.mean(np.log(v)))) if v.size else float("nan")


def compare(series):
    """The per-size table of :func:`load_series`'s series.

    Returns {"sizes": [...], "rows": {size: {name: mean time ns or NaN}},
    "tacos": [one dict per tacos series: name, best ({size: (best other
    name, its time ns)}), speedup ({size: best other time / tacos time, NaN
    without both}), schedule_ns, synthesis_seconds, geomean (of the
    speedups that exist), sizes_in_geomean]}.
    """
    sizes = sorted(set(s for ser in series for s in ser["time_ns"]))
    rows = {size: {ser["name"]: ser["time_ns"].get(size, float("nan")) for ser in series} for size in sizes}
    others = [ser for ser in series if not ser["tacos"]]
    out = []
    for t in (ser for ser in series if ser["tacos"]):
        best, speedup = {}, {}
        for size in sizes:
            cand = [(o["time_ns"][size], o["name"]) for o in others if size in o["time_ns"]]
            mine = t["time_ns"].get(size)
            if cand:
                bt, bn = min(cand)
                best[size] = (bn, bt)
            speedup[size] = best[size][1] / mine if (cand and mine) else float("nan")
        ok = [v for v in speedup.values() if not math.isnan(v)]
        out.append({"name": t["name"], "best": best, "speedup": speedup,
                    "schedule_ns": t["schedule_ns"], "synthesis_seconds": t["synthesis_seconds"],
                    "geomean": geomean(ok), "sizes_in_geomean": len(ok)})
    return {"sizes": sizes, "rows": rows, "tacos": out}


def _us(ns):
    return fmt_num(None if ns is None else ns / 1000.0, "%.3f")


def format_compare(series, result):
    """The lines `compare` prints."""
    names = [s["name"] for s in series]
    lines = ["# %s, %d ranks: %s" % (series[0]["op"], series[0]["ranks"],
                                     ", ".join("%s (%s)" % (s["name"], s["where"]) for s in series))]
    tac = result["tacos"]
    several = len(tac) > 1
    header = ["size (B)"] + ["%s (us)" % n for n in names]
    if tac:
        header.append("best other")
        for t in tac:
            pre = t["name"] + " " if several else ""
            header += [pre + "speedup", pre + "schedule (us)", pre + "synthesis (s)"]
    rows = []
    width = max([len(str(x)) for x in result["sizes"]] + [len(header[0])])
    for size in result["sizes"]:
        row = [str(size).rjust(width)] + [_us(result["rows"][size][n]) for n in names]
        if tac:
            # the best other algorithm is the same for every tacos series
            row.append(tac[0]["best"][size][0] if size in tac[0]["best"] else NA)
            for t in tac:
                sp = t["speedup"][size]
                row += [NA if math.isnan(sp) else "%.3fx" % sp, _us(t["schedule_ns"].get(size)),
                        fmt_num(t["synthesis_seconds"].get(size), "%.3g")]
        rows.append(row)
    lines.append("# mean time of the finished timed iterations (us)" + (
        "; speedup = best other time / tacos time; schedule = TACOS's alpha-beta estimate" if tac else ""))
    lines += table(header, rows)
    for s in series:
        if s["unfinished"]:
            line = "# %s: left out %d unfinished timed operation%s (stopped by engine.end_ns)" % (
                s["name"], s["unfinished"], "s" if s["unfinished"] != 1 else "")
            if s["unfinished_sizes"]:
                line += "; no finished one of size " + ", ".join(str(x) for x in s["unfinished_sizes"])
            lines.append(line)
    if not tac:
        lines.append("# no tacos run: no speedup")
    for t in tac:
        if t["sizes_in_geomean"]:
            lines.append("# geometric mean speedup of %s over the best other algorithm: %.3fx over %d size%s" % (
                t["name"], t["geomean"], t["sizes_in_geomean"], "s" if t["sizes_in_geomean"] != 1 else ""))
        else:
            lines.append("# geometric mean speedup of %s: n/a (no size with %s and another algorithm)" % (
                t["name"], t["name"]))
    return lines


COMPARE_CSV_HEADER = ["size_bytes", "label", "file", "job", "op", "algorithm", "ranks", "time_us", "iterations",
                      "unfinished", "best_other", "best_other_time_us", "speedup", "schedule_us",
                      "synthesis_seconds"]


def compare_csv_rows(series, result):
    """One row per size and series; the speedup columns only on tacos rows."""
    tac = {t["name"]: t for t in result["tacos"]}
    rows = []
    for size in result["sizes"]:
        for s in series:
            if size not in s["time_ns"]:
                continue
            row = [size, s["name"], s["file"], s["job"], s["op"], s["algorithm"], s["ranks"],
                   s["time_ns"][size] / 1000.0, s["iterations"][size], s["unfinished"]]
            t = tac.get(s["name"])
            if t is not None and size in t["best"]:
                row += [t["best"][size][0], t["best"][size][1] / 1000.0, t["speedup"][size]]
            else:
                row += [None, None, None]
            if s["tacos"]:
                row += [s["schedule_ns"].get(size, float("nan")) / 1000.0,
                        s["synthesis_seconds"].get(size, float("nan"))]
            else:
                row += [None, None]
            rows.append(row)
    return rows


def draw_compare(path, series):
    fig, ax = fplot.figure(figsize=(7, 4.5))
    for s in series:
        sizes = sorted(s["time_ns"])
        line, = ax.plot(sizes, [s["time_ns"][x] / 1000.0 for x in sizes], marker="o", label=s["name"])
        if s["tacos"]:
            est = [(x, s["schedule_ns"].get(x, float("nan"))) for x in sizes]
            est = [(x, v / 1000.0) for x, v in est if not math.isnan(v)]
            if est:
                ax.plot([x for x, _ in est], [v for _, v in est], linestyle="--", color=line.get_color(),
                        label="%s schedule (alpha-beta)" % s["name"])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    from matplotlib.ticker import ScalarFormatter
    ax.yaxis.set_major_formatter(ScalarFormatter())
    lo, hi = ax.get_ylim()
    if hi < 20 * lo:  # less than about a decade: label the minor ticks too
        ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.set_xlabel("size per rank (bytes)")
    ax.set_ylabel("time (us)")
    ax.set_title("%s, %d ranks" % (series[0]["op"], series[0]["ranks"]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fplot.savefig(fig, path, dpi=100)


def _compare_body(a):
    cli.check_outputs(a, ("plot", "--plot"), ("csv", "--csv"))
    bad = cli.check_labels(a.label, a.runs)
    if bad:
        raise ValueError(bad)
    series = load_series(a.runs, a.label)
    result = compare(series)
    for line in format_compare(series, result):
        print(line)
    if a.plot:
        print("plot: %s" % draw_compare(a.plot, series))
    if a.csv:
        print("csv: %s" % write_csv(a.csv, COMPARE_CSV_HEADER, compare_csv_rows(series, result)))
    return 0


# --------------------------------------------------------------------------
# links
# --------------------------------------------------------------------------

def _no_series(path, model):
    why = "run with output.interval_ns > 0, e.g. --set output.interval_ns=1000 (0 turns them off)"
    return FabricsimFileError("%s: no /links/timeseries/tx_bytes (no link time series); %s" % (path, why))


def link_usage(path, top=32, block_bytes=64 << 20):
    """Link utilization over time of one run, from /links/timeseries/tx_bytes.

    utilization[l, k] = tx_bytes[l, k] * 8 / (bandwidth_gbps[l] * interval_ns).
    Returns a dict: n_links, n_intervals, interval_ns, bandwidth_gbps,
    bytes (per link, summed over the series), used (links with bytes),
    last_interval (the last interval in which a byte was sent, -1 for none),
    span_ns (its end), mean_used and mean_all (the mean utilization over
    [0, span_ns) of the used links and of all links), max (the largest
    utilization of one link in one interval), max_link, max_interval, top
    (ids of the ``top`` busiest links, by bytes, then id), matrix
    (utilization of the ``top`` links, one row each, every interval),
    names (per link 'src->dst', node names where /nodes has them), classes.
    Raises FabricsimFileError for a run without a time series.
    """
    with open_file(path) as f:
        links = read_table(f, "links", columns=("src", "dst", "class", "bandwidth_gbps"), need=("bandwidth_gbps",))
        n_links = len(links["bandwidth_gbps"])
        model = text(read_attrs(f, "engine").get("network_model", ""))
        if "links/timeseries" not in f or not isinstance(f["links/timeseries"], h5py.Group) \
                or "tx_bytes" not in f["links/timeseries"]:
            raise _no_series(path, model)
        ds = f["links/timeseries/tx_bytes"]
        (_, nint), interval = _timeseries(path, ds, "tx_bytes", n_links)
        if interval is None or not interval > 0:
            raise FabricsimFileError("%s: /links/timeseries/tx_bytes: attribute interval_ns: expected a "
                                     "positive number, found %r" % (path, interval))
        interval = float(interval)
        class_names = parse_class_names(f["links"].attrs.get("class_names"))
        node_names = None
        if "nodes" in f and isinstance(f["nodes"], h5py.Group) and "name" in f["nodes"]:
            node_names = read_array(f["nodes/name"])
        bw = links["bandwidth_gbps"].astype(np.float64)
        cap_bits = bw * interval
        inv_cap = np.where(cap_bits > 0, 8.0 / np.where(cap_bits > 0, cap_bits, 1.0), 0.0)
        total = np.zeros(n_links, dtype=np.float64)
        last = np.full(n_links, -1, dtype=np.int64)
        peak = np.zeros(n_links, dtype=np.float64)
        peak_at = np.zeros(n_links, dtype=np.int64)
        block = max(1, int(block_bytes // (8 * max(nint, 1))))
        for start in range(0, n_links, block):
            stop = min(n_links, start + block)
            tx = ds[start:stop].astype(np.float64)
            if nint == 0:
                continue
            total[start:stop] = tx.sum(axis=1)
            nz = tx > 0
            last[start:stop] = np.where(nz.any(axis=1), nint - 1 - np.argmax(nz[:, ::-1], axis=1), -1)
            util = tx * inv_cap[start:stop, None]
            peak_at[start:stop] = np.argmax(util, axis=1)
            peak[start:stop] = util[np.arange(stop - start), peak_at[start:stop]]
        order = np.lexsort((np.arange(n_links), -total))  # bytes descending, then id
        chosen = order[:max(0, min(top, n_links))]
        chosen = chosen[total[chosen] > 0]  # links that sent nothing are not shown
        if len(chosen):
            rows = np.sort(chosen)
            data = ds[rows, :].astype(np.float64) if nint else np.zeros((len(rows), 0))
            pos = {int(l): i for i, l in enumerate(rows)}
            matrix = data[[pos[int(l)] for l in chosen]] * inv_cap[chosen, None]
        else:
            matrix = np.zeros((0, nint))
    used = total > 0
    last_interval = int(last.max()) if n_links else -1
    span_ns = (last_interval + 1) * interval
    mean_link = total * 8.0 / np.where(bw > 0, bw, np.inf) / span_ns if span_ns > 0 else np.zeros(n_links)
    src = links.get("src")
    dst = links.get("dst")

    def node(i):
        if node_names is not None and 0 <= int(i) < len(node_names):
            return str(node_names[int(i)])
        return str(int(i))
    names = ["%s->%s" % (node(s), node(d)) for s, d in zip(src, dst)] if src is not None and dst is not None \
        else ["link %d" % l for l in range(n_links)]
    classes = [class_name_of(class_names, c) for c in links["class"]] if "class" in links else [""] * n_links
    mx = int(np.argmax(peak)) if n_links else 0
    return {
        "path": path, "n_links": n_links, "n_intervals": int(nint), "interval_ns": interval,
        "bandwidth_gbps": bw, "bytes": total, "used": int(used.sum()), "last_interval": last_interval,
        "span_ns": span_ns, "mean_link": mean_link,
        "mean_used": float(mean_link[used].mean()) if used.any() else float("nan"),
        "mean_all": float(mean_link.mean()) if n_links and span_ns > 0 else float("nan"),
        "max": float(peak[mx]) if used.any() else 0.0, "max_link": mx if used.any() else None,
        "max_interval": int(peak_at[mx]) if used.any() else None,
        "top": chosen, "matrix": matrix, "names": names, "classes": classes, "peak": peak,
    }


def format_links(u):
    iv = u["interval_ns"]
    lines = ["# %s: %d links, %d intervals of %s" % (u["path"], u["n_links"], u["n_intervals"], fmt_time_ns(iv)),
             "links used: %d of %d" % (u["used"], u["n_links"])]
    if not u["used"]:
        lines.append("no bytes sent on any link")
        return lines
    k = u["last_interval"]
    lines += [
        "last byte: sent in interval %d, [%s, %s)" % (k, fmt_time_ns(k * iv), fmt_time_ns((k + 1) * iv)),
        "mean utilization over [0, %s): %s of the used links, %s of all links" % (
            fmt_time_ns(u["span_ns"]), fmt_pct(u["mean_used"]), fmt_pct(u["mean_all"])),
        "max utilization: %s (link %d %s, interval %d at %s)" % (
            fmt_pct(u["max"]), u["max_link"], u["names"][u["max_link"]], u["max_interval"],
            fmt_time_ns(u["max_interval"] * iv)),
        "# the %d busiest links (the heat map's rows):" % len(u["top"]),
    ]
    rows = [[str(int(l)), u["names"][l], u["classes"][l], fmt_int(u["bytes"][l]), fmt_pct(u["mean_link"][l]),
             fmt_pct(u["peak"][l])] for l in u["top"]]
    lines += table(["link", "src->dst", "class", "bytes", "mean", "max"], rows)
    return lines


def draw_links(path, u, max_cols=1500):
    m = u["matrix"]
    nrows, nint = m.shape
    iv = u["interval_ns"]
    fig, ax = fplot.figure(figsize=(9, max(3.0, min(12.0, 1.5 + 0.22 * nrows))))
    if nrows == 0 or nint == 0:
        fplot.no_data(ax, "no bytes sent on any link")
        return fplot.savefig(fig, path, dpi=100)
    ncols = min(nint, max_cols)
    if ncols < nint:  # average consecutive intervals
        starts = np.searchsorted(np.arange(nint) * ncols // nint, np.arange(ncols))
        m = np.add.reduceat(m, starts, axis=1) / np.diff(np.append(starts, nint))[None, :]
    im = ax.imshow(100.0 * m, aspect="auto", interpolation="nearest", origin="upper", cmap="viridis",
                   vmin=0.0, vmax=100.0, extent=(0.0, nint * iv / 1e3, nrows, 0))
    ax.set_xlabel("time [us]")
    ax.set_ylabel("link (by bytes sent)")
    ax.set_title("Link utilization, the %d busiest of %d links (interval %s%s)" % (
        nrows, u["n_links"], fmt_time_ns(iv), ", %d averaged per column" % -(-nint // ncols) if ncols < nint else ""))
    step = max(1, -(-nrows // 40))
    ticks = list(range(0, nrows, step))
    ax.set_yticks([t + 0.5 for t in ticks])
    ax.set_yticklabels(["%d %s" % (u["top"][t], u["names"][u["top"][t]]) for t in ticks], fontsize=7)
    cb = fig.colorbar(im, ax=ax, extend="max")
    cb.set_label("utilization [%]")
    return fplot.savefig(fig, path, dpi=100)


def _links_body(a):
    cli.check_outputs(a, ("plot", "--plot"))
    u = link_usage(a.run, top=a.top)
    for line in format_links(u):
        print(line)
    if a.plot:
        print("plot: %s" % draw_links(a.plot, u))
    return 0


def _positive(value):
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a positive integer, found %r" % value)
    if n < 1:
        raise argparse.ArgumentTypeError("expected a positive integer, found %r" % value)
    return n


def main(argv=None):
    p = cli.parser("fabricsim_tacos.py", __doc__)
    sub = p.add_subparsers(dest="command", metavar="{compare,links}")
    sub.required = True
    c = sub.add_parser("compare", help="time per size per algorithm, TACOS's speedup over the best other",
                       description="Mean time per size and algorithm of collective runs of one operation, "
                                   "TACOS's speedup over the best other algorithm and its geometric mean.")
    cli.add_inputs(c, help="collective runs of one operation (one per algorithm)")
    cli.add_labels(c)
    cli.add_csv(c, help="write one row per run and size as CSV to PATH")
    cli.add_plot(c, help="plot time against size (log-log), one line per run (PNG)")
    c.set_defaults(body=_compare_body)
    l = sub.add_parser("links", help="link utilization over time of one run (heat map)",
                       description="Link utilization over time from /links/timeseries: a summary and a heat map.")
    cli.add_inputs(l, nargs=None, dest="run", help="a fabricsim output file with link time series")
    cli.add_plot(l, help="heat map of the busiest links' utilization over time (PNG)")
    l.add_argument("--top", type=_positive, default=32, metavar="N",
                   help="the N links that sent the most bytes (default 32)")
    l.set_defaults(body=_links_body)
    args = p.parse_args(argv)
    return cli.run_main(args.body, args)


if __name__ == "__main__":
    sys.exit(main())
