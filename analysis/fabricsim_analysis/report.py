"""fabricsim_report.py: summary table, JSON and PNG plots of one run.

The numbers (``compute_report``) need numpy and h5py only; the plots import
matplotlib when asked for.  Definitions are in analysis/README.md and in
:mod:`fabricsim_analysis.stats`.
"""

import json
import math
import os
import sys

import h5py
import numpy as np

from . import cli
from . import plot as fplot
from .fmt import NA, fmt_bytes, fmt_int, fmt_pct, fmt_time_ns, table
from .io import FabricsimFileError, load_run
from .stats import (aggregate_throughput, class_name, flow_completion_times, link_sort_order,
                    link_utilization, node_counts, percentile_stats, unfinished_flows,
                    utilization_by_class)

META_KEYS = ("version", "git_sha", "build", "ranks", "threads", "seed")
SUMMARY_KEYS = (
    "sim_time_ns", "events", "wall_seconds", "events_per_second",
    "packets_delivered", "bytes_delivered", "packets_dropped", "packet_hops",
    "endpoints", "injection_gbps", "messages_delivered",
    "throughput_share", "per_source_share", "steady_share",
)

HEATMAP_FILE = "utilization_heatmap.png"
UTIL_FILE = "link_utilization.png"
FCT_FILE = "fct_cdf.png"


# --------------------------------------------------------------------------
# numbers
# --------------------------------------------------------------------------

def compute_report(run):
    """All report numbers as a JSON-serialisable dict."""
    meta = {k: run.meta.get(k) for k in ("version", "git_sha", "build", "ranks",
                                           "threads", "seed")}
    summary = {k: run.summary.get(k) for k in SUMMARY_KEYS}
    fct = flow_completion_times(run)
    report = {
        "file": run.path,
        "meta": meta,
        "summary": summary,
        "nodes": node_counts(run),
        "topology": run.topology or None,
        "links": run.n_links if run.links else None,
        "throughput": aggregate_throughput(run),
        "link_utilization": {name: st for name, st in utilization_by_class(run)},
        "fct_ns": percentile_stats(fct) if fct is not None else None,
        "flows_unfinished": unfinished_flows(run),
        "timeseries": {k: {"shape": list(v[0]), "interval_ns": v[1]}
                       for k, v in run.timeseries.items()},
    }
    return _jsonable(report)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# --------------------------------------------------------------------------
# utilization heatmap from /links/timeseries/tx_bytes
# --------------------------------------------------------------------------

def utilization_heatmap(run, max_rows=1500, max_cols=1500, block_bytes=64 << 20):
    """Per-interval link utilization, links sorted by class then id.

    utilization[link, t] = tx_bytes[link, t] * 8 / (bandwidth_gbps * interval_ns)

    To keep memory bounded on big runs, the dataset is read in row blocks and
    averaged down to at most ``max_rows`` x ``max_cols`` cells (consecutive
    sorted links / consecutive intervals are averaged).  Returns a dict with
    ``matrix`` (rows x cols float64), ``interval_ns`` (of one output column),
    ``row_links`` (links per output row, float), ``class_starts`` (list of
    (class_name, first output row)) -- or None when there is no time series.
    """
    if "tx_bytes" not in run.timeseries or not run.links \
            or "bandwidth_gbps" not in run.links:
        return None
    (nlinks, nint), interval = run.timeseries["tx_bytes"]
    if not interval or interval <= 0 or nlinks == 0 or nint == 0:
        return None
    bw = run.links["bandwidth_gbps"].astype(np.float64)
    if len(bw) != nlinks:
        return None
    cap_bits = bw * float(interval)
    with np.errstate(divide="ignore"):
        inv_cap = np.where(cap_bits > 0, 8.0 / np.where(cap_bits > 0, cap_bits, 1), 0.0)

    order = link_sort_order(run)
    pos = np.empty(nlinks, dtype=np.int64)
    pos[order] = np.arange(nlinks)
    nrows = min(nlinks, max_rows)
    ncols = min(nint, max_cols)
    rowbin = pos * nrows // nlinks
    colbin = np.arange(nint, dtype=np.int64) * ncols // nint
    col_starts = np.searchsorted(colbin, np.arange(ncols))
    rows_per_bin = np.bincount(rowbin, minlength=nrows).astype(np.float64)
    cols_per_bin = np.bincount(colbin, minlength=ncols).astype(np.float64)

    acc = np.zeros((nrows, ncols))
    block = max(1, int(block_bytes // (8 * nint)))
    with h5py.File(run.path, "r") as f:
        ds = f["links/timeseries/tx_bytes"]
        for start in range(0, nlinks, block):
            stop = min(nlinks, start + block)
            util = ds[start:stop].astype(np.float64) * inv_cap[start:stop, None]
            if ncols < nint:
                util = np.add.reduceat(util, col_starts, axis=1)
            if nrows < nlinks:
                np.add.at(acc, rowbin[start:stop], util)
            else:
                acc[rowbin[start:stop]] = util
    acc /= rows_per_bin[:, None] * cols_per_bin[None, :]

    class_starts = []
    if "class" in run.links:
        sorted_codes = run.links["class"].astype(np.int64)[order]
        for code in np.unique(sorted_codes):
            first = int(np.searchsorted(sorted_codes, code))
            class_starts.append((class_name(run, code), first * nrows // nlinks))
    return {
        "matrix": acc,
        "interval_ns": float(interval) * nint / ncols,
        "row_links": nlinks / float(nrows),
        "class_starts": class_starts,
        "n_links": nlinks,
        "n_intervals": nint,
    }


# --------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------

def summary_items(report):
    """(label, formatted value) pairs for the key/value part of the summary."""
    m, s, t = report["meta"], report["summary"], report["throughput"]
    eps = s.get("events_per_second")
    items = [
        ("file", report["file"]),
        ("version", m.get("version") if m.get("version") is not None else NA),
        ("git sha", m.get("git_sha") if m.get("git_sha") is not None else NA),
        ("build", m.get("build") if m.get("build") is not None else NA),
        ("ranks x threads", "%s x %s" % (fmt_int(m.get("ranks")), fmt_int(m.get("threads")))),
        ("seed", fmt_int(m.get("seed"))),
        ("simulated time", fmt_time_ns(s.get("sim_time_ns"))),
        ("events", fmt_int(s.get("events"))),
        ("wall time", NA if s.get("wall_seconds") is None else "%.3f s" % s["wall_seconds"]),
        ("events/s", NA if eps is None else "%.4g" % eps),
    ]
    topo = report.get("topology")
    if topo:
        items.append(("topology", topo.get("description", topo.get("kind", NA))))
        items.append(("cost", "%.2f M$ for %s plane(s): %s switches, %s DAC, %s AoC per plane" % (
            topo.get("cost_usd", 0.0) / 1e6, fmt_int(topo.get("cost_planes")),
            fmt_int(topo.get("physical_switches")), fmt_int(topo.get("cable_type_dac")),
            fmt_int(topo.get("cable_type_aoc")))))
        items.append(("diameter", "%s cables" % fmt_int(topo.get("diameter"))))
    nodes = report.get("nodes")
    if nodes is not None:
        items.append(("nodes", "%s endpoints, %s switches" % (
            fmt_int(nodes["endpoints"]), fmt_int(nodes["switches"]))))
    items += [
        ("links", fmt_int(report.get("links"))),
        ("endpoints", fmt_int(s.get("endpoints"))),
        ("injection bw", NA if s.get("injection_gbps") is None
         else "%g Gb/s per endpoint" % s["injection_gbps"]),
        ("messages delivered", fmt_int(s.get("messages_delivered"))),
        ("packets delivered", fmt_int(s.get("packets_delivered"))),
        ("packets dropped", fmt_int(s.get("packets_dropped"))),
        ("packet hops", fmt_int(s.get("packet_hops"))),
        ("bytes delivered", fmt_bytes(s.get("bytes_delivered"))),
        ("traffic time", NA if t["traffic_time_ns"] is None else "%s (from %s)" % (
            fmt_time_ns(t["traffic_time_ns"]),
            "flows max(end)-min(start)" if t["traffic_time_source"] == "flows"
            else "sim_time_ns")),
        ("throughput", NA if t["throughput_gbps"] is None
         else "%.4g Gb/s" % t["throughput_gbps"]),
        ("share of injection", NA if t["injection_share"] is None else "%s of %.4g Gb/s" % (
            fmt_pct(t["injection_share"]), t["injection_capacity_gbps"])),
        ("per-source share", NA if t.get("per_source_share") is None
         else fmt_pct(t["per_source_share"])),
        ("steady share", NA if t.get("steady_share") is None else fmt_pct(t["steady_share"])),
    ]
    return items


def format_report(report):
    """The plain-text summary printed by fabricsim_report.py."""
    lines = ["fabricsim run summary", "=" * 21]
    items = summary_items(report)
    w = max(len(k) for k, _ in items)
    lines += ["  %s  %s" % (k.ljust(w), v) for k, v in items]

    lines += ["", "link utilization by class (percent of time busy)"]
    util = report["link_utilization"]
    if util:
        rows = [[name, fmt_int(st["count"]), fmt_pct(st["p50"]), fmt_pct(st["p90"]),
                 fmt_pct(st["p99"]), fmt_pct(st["max"]), fmt_pct(st["mean"])]
                for name, st in util.items()]
        lines += table(["class", "links", "p50", "p90", "p99", "max", "mean"], rows)
    else:
        lines.append("  n/a (no /links data in this file)")

    lines += ["", "flow completion time (end_ns - start_ns)"]
    fct = report["fct_ns"]
    if fct and fct["count"]:
        rows = [["fct", fmt_int(fct["count"])] + [
            fmt_time_ns(fct[k]) for k in ("p50", "p90", "p99", "max", "mean")]]
        lines += table(["", "flows", "p50", "p90", "p99", "max", "mean"], rows)
    elif report.get("flows_unfinished"):
        lines.append("  n/a (no flow completed)")
    else:
        lines.append("  n/a (no flows in this file)")
    if report.get("flows_unfinished"):
        lines.append("  left out: %s unfinished flows (end_ns -1: engine.end_ns stopped the run first)"
                     % fmt_int(report["flows_unfinished"]))
    return "\n".join(lines)



# --------------------------------------------------------------------------
# plots (matplotlib is imported lazily: text/JSON output does not need it)
# --------------------------------------------------------------------------

def plot_utilization_by_class(ax, run):
    util = link_utilization(run)
    ax.set_title("Link utilization by class")
    if util is None or util.size == 0:
        fplot.no_data(ax, "no link data")
        return
    if "class" in run.links and len(run.links["class"]) == len(util):
        codes = run.links["class"].astype(np.int64)
        groups = [(class_name(run, c), util[codes == c]) for c in np.unique(codes)]
    else:
        groups = [("all", util)]
    data = [100.0 * g for _, g in groups]
    labels = ["%s\n(n=%d)" % (name, len(g)) for name, g in groups]
    # whiskers span min..max, so nothing is hidden as a flier
    ax.boxplot(data, whis=(0, 100), showfliers=False, showmeans=True)
    ax.set_xticks(range(1, len(labels) + 1))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("utilization [%]")
    ax.set_ylim(bottom=0)
    ax.grid(axis="y", alpha=0.3)


def plot_heatmap(ax, run, fig=None):
    """Utilization over time per link, or a per-link bar chart without series."""
    hm = utilization_heatmap(run)
    if hm is None:
        util = link_utilization(run)
        ax.set_title("Per-link utilization (no time series)")
        if util is None or util.size == 0:
            fplot.no_data(ax, "no link data")
            return
        order = link_sort_order(run)
        x, y = np.arange(len(order)), 100.0 * util[order]
        if len(order) <= 2000:
            ax.bar(x, y, width=1.0, color="tab:blue", linewidth=0)
        else:  # too many links to draw one by one: max/mean per bin of links
            starts = np.unique(np.arange(2000) * len(y) // 2000)
            ymax = np.maximum.reduceat(y, starts)
            ymean = np.add.reduceat(y, starts) / np.diff(np.append(starts, len(y)))
            ax.fill_between(starts, ymax, step="post", color="tab:blue",
                            alpha=0.35, linewidth=0, label="max per bin")
            ax.step(starts, ymean, where="post", color="tab:blue",
                    linewidth=0.6, label="mean per bin")
            ax.legend(loc="upper right", fontsize=7)
        ax.set_xlim(-0.5, len(order) - 0.5)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("link (sorted by class, then id)")
        ax.set_ylabel("utilization [%]")
        _mark_classes(ax, run, order, axis="x")
        return
    m = hm["matrix"]
    nrows, ncols = m.shape
    t_end_us = ncols * hm["interval_ns"] / 1e3
    im = ax.imshow(100.0 * m, aspect="auto", interpolation="nearest",
                   origin="upper", cmap="viridis", vmin=0.0, vmax=100.0,
                   extent=(0.0, t_end_us, nrows, 0))
    ax.set_title("Link utilization over time (interval %s)"
                 % fmt_time_ns(hm["interval_ns"]))
    ax.set_xlabel("time [us]")
    ylabel = "link (sorted by class, then id)"
    if hm["row_links"] > 1:
        ylabel += "\n%.1f links/row averaged" % hm["row_links"]
    ax.set_ylabel(ylabel)
    for name, row in hm["class_starts"]:
        if row > 0:
            ax.axhline(row, color="white", linewidth=0.8)
    if hm["class_starts"]:
        ax.set_yticks([r for _, r in hm["class_starts"]])
        ax.set_yticklabels([n for n, _ in hm["class_starts"]], fontsize=7,
                           va="top")
    if fig is not None:
        cb = fig.colorbar(im, ax=ax, extend="max")
        cb.set_label("utilization [%]")


def _mark_classes(ax, run, order, axis="x"):
    if not run.links or "class" not in run.links:
        return
    codes = run.links["class"].astype(np.int64)[order]
    starts = [(class_name(run, c), int(np.searchsorted(codes, c)))
              for c in np.unique(codes)]
    for _, s in starts[1:]:
        ax.axvline(s - 0.5, color="0.3", linewidth=0.8, linestyle="--")
    ax.set_xticks([s for _, s in starts])
    ax.set_xticklabels([n for n, _ in starts], fontsize=7, ha="left")


def plot_fct_cdf(ax, run):
    fct = flow_completion_times(run)
    ax.set_title("Flow completion time CDF")
    if fct is None or fct.size == 0:
        fplot.no_data(ax, "no flows")
        return
    x = np.sort(fct.astype(np.float64)) / 1e3
    y = np.arange(1, x.size + 1) / float(x.size)
    if x.size > 20000:  # thin out, keeping the tails exact
        idx = np.unique(np.concatenate([
            np.linspace(0, x.size - 1, 20000).astype(np.int64),
            np.arange(max(0, x.size - 100), x.size)]))
        x, y = x[idx], y[idx]
    ax.step(x, y, where="post")
    if x[0] > 0 and x[-1] / x[0] > 20:
        ax.set_xscale("log")
    ax.set_xlabel("flow completion time [us]")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)


def plot_text(ax, report):
    ax.axis("off")
    ax.set_title("Summary")
    lines = ["%-19s %s" % (k, v) for k, v in summary_items(report)
             if k != "file"]
    lines[0:0] = [os.path.basename(report["file"]), ""]
    util = report["link_utilization"]
    if util:
        lines += ["", "%-13s %7s %7s %7s" % ("util", "p50", "p99", "max")]
        for name, st in util.items():
            lines.append("%-13s %7s %7s %7s" % (
                name[:13], fmt_pct(st["p50"], 1), fmt_pct(st["p99"], 1),
                fmt_pct(st["max"], 1)))
    fct = report["fct_ns"]
    if fct and fct["count"]:
        lines += ["", "FCT (%s flows)" % fmt_int(fct["count"]),
                  "  p50 %s  p99 %s" % (fmt_time_ns(fct["p50"]), fmt_time_ns(fct["p99"])),
                  "  max %s" % fmt_time_ns(fct["max"])]
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace",
            fontsize=7, transform=ax.transAxes)


def write_overview(run, report, path):
    plt = fplot.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(14, 10))
    plot_utilization_by_class(axes[0, 0], run)
    plot_heatmap(axes[0, 1], run, fig)
    plot_fct_cdf(axes[1, 0], run)
    plot_text(axes[1, 1], report)
    fig.suptitle("fabricsim: %s" % os.path.basename(run.path))
    return fplot.savefig(fig, path, dpi=110)


def write_separate(run, directory):
    plt = fplot.pyplot()
    os.makedirs(directory, exist_ok=True)
    written = []
    for fname, size, draw in (
            (UTIL_FILE, (8, 5), lambda ax, fig: plot_utilization_by_class(ax, run)),
            (HEATMAP_FILE, (10, 6), lambda ax, fig: plot_heatmap(ax, run, fig)),
            (FCT_FILE, (8, 5), lambda ax, fig: plot_fct_cdf(ax, run))):
        fig, ax = plt.subplots(figsize=size)
        draw(ax, fig)
        written.append(fplot.savefig(fig, os.path.join(directory, fname), dpi=110))
    return written


# --------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------

def parse_args(argv):
    p = cli.parser("fabricsim_report.py", "Summarise a fabricsim run file (HDF5).")
    cli.add_inputs(p, nargs=None, dest="run", help="fabricsim output file")
    p.add_argument("--png", metavar="OUT.png",
                   help="write a 2x2 overview figure to OUT.png")
    p.add_argument("--plots-dir", metavar="DIR",
                   help="write %s, %s and %s to DIR" % (UTIL_FILE, HEATMAP_FILE, FCT_FILE))
    p.add_argument("--json", action="store_true",
                   help="print the numbers as one JSON object instead of text")
    return p.parse_args(argv)


def main(argv=None, stdout=None, stderr=None):
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    args = parse_args(argv)
    try:
        cli.check_outputs(args, ("png", "--png"), ("plots_dir", "--plots-dir", True))
    except cli.UsageError as exc:
        print("error: %s" % exc, file=stderr)
        return 2
    try:
        run = load_run(args.run)
        report = compute_report(run)
        plots = []
        if args.png:
            plots.append(write_overview(run, report, args.png))
        if args.plots_dir:
            plots += write_separate(run, args.plots_dir)
    except FabricsimFileError as exc:
        print("error: %s" % exc, file=stderr)
        return 1
    except (OSError, KeyError, ValueError) as exc:
        print("error: %s: %s" % (args.run, cli.one_line(exc)), file=stderr)
        return 1

    if args.json:
        report["plots"] = plots
        print(json.dumps(report, indent=2, sort_keys=False), file=stdout)
        plot_stream = stderr
    else:
        print(format_report(report), file=stdout)
        plot_stream = stdout
    for path in plots:
        print("plot: %s" % path, file=plot_stream)
    return 0


