#!/usr/bin/python3
"""Summarise one fabricsim run file (HDF5) and optionally plot it.

usage: fabricsim_report.py RUN.h5 [--png OUT.png] [--plots-dir DIR] [--json]

Prints a plain-text summary (or, with --json, the same numbers as one JSON
object).  --png writes a 2x2 overview figure; --plots-dir writes
link_utilization.png, utilization_heatmap.png and fct_cdf.png.  The paths of
written PNGs are printed last, one per line, as ``plot: PATH`` (on stderr
when --json is given, so that stdout stays valid JSON; they are also in the
JSON object under "plots").  Exits 1 with one ``error: ...`` line on stderr
when the file is missing or not a fabricsim file.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

import numpy as np  # noqa: E402

import fabricsim_analysis as fa  # noqa: E402

HEATMAP_FILE = "utilization_heatmap.png"
UTIL_FILE = "link_utilization.png"
FCT_FILE = "fct_cdf.png"


# --------------------------------------------------------------------------
# plotting (matplotlib is imported lazily: text/JSON output does not need it)
# --------------------------------------------------------------------------

def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _no_data(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes,
            color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def plot_utilization_by_class(ax, run):
    util = fa.link_utilization(run)
    ax.set_title("Link utilization by class")
    if util is None or util.size == 0:
        _no_data(ax, "no link data")
        return
    if "class" in run.links and len(run.links["class"]) == len(util):
        codes = run.links["class"].astype(np.int64)
        groups = [(fa.class_name(run, c), util[codes == c]) for c in np.unique(codes)]
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
    hm = fa.utilization_heatmap(run)
    if hm is None:
        util = fa.link_utilization(run)
        ax.set_title("Per-link utilization (no time series)")
        if util is None or util.size == 0:
            _no_data(ax, "no link data")
            return
        order = fa.link_sort_order(run)
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
                 % fa.fmt_time_ns(hm["interval_ns"]))
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
    starts = [(fa.class_name(run, c), int(np.searchsorted(codes, c)))
              for c in np.unique(codes)]
    for _, s in starts[1:]:
        ax.axvline(s - 0.5, color="0.3", linewidth=0.8, linestyle="--")
    ax.set_xticks([s for _, s in starts])
    ax.set_xticklabels([n for n, _ in starts], fontsize=7, ha="left")


def plot_fct_cdf(ax, run):
    fct = fa.flow_completion_times(run)
    ax.set_title("Flow completion time CDF")
    if fct is None or fct.size == 0:
        _no_data(ax, "no flows")
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
    lines = ["%-19s %s" % (k, v) for k, v in fa.summary_items(report)
             if k != "file"]
    lines[0:0] = [os.path.basename(report["file"]), ""]
    util = report["link_utilization"]
    if util:
        lines += ["", "%-13s %7s %7s %7s" % ("util", "p50", "p99", "max")]
        for name, st in util.items():
            lines.append("%-13s %7s %7s %7s" % (
                name[:13], fa.fmt_pct(st["p50"], 1), fa.fmt_pct(st["p99"], 1),
                fa.fmt_pct(st["max"], 1)))
    fct = report["fct_ns"]
    if fct and fct["count"]:
        lines += ["", "FCT (%s flows)" % fa.fmt_int(fct["count"]),
                  "  p50 %s  p99 %s" % (fa.fmt_time_ns(fct["p50"]), fa.fmt_time_ns(fct["p99"])),
                  "  max %s" % fa.fmt_time_ns(fct["max"])]
    ax.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace",
            fontsize=7, transform=ax.transAxes)


def write_overview(run, report, path):
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(14, 10))
    plot_utilization_by_class(axes[0, 0], run)
    plot_heatmap(axes[0, 1], run, fig)
    plot_fct_cdf(axes[1, 0], run)
    plot_text(axes[1, 1], report)
    fig.suptitle("fabricsim: %s" % os.path.basename(run.path))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_separate(run, directory):
    plt = _plt()
    os.makedirs(directory, exist_ok=True)
    written = []
    for fname, size, draw in (
            (UTIL_FILE, (8, 5), lambda ax, fig: plot_utilization_by_class(ax, run)),
            (HEATMAP_FILE, (10, 6), lambda ax, fig: plot_heatmap(ax, run, fig)),
            (FCT_FILE, (8, 5), lambda ax, fig: plot_fct_cdf(ax, run))):
        fig, ax = plt.subplots(figsize=size)
        draw(ax, fig)
        fig.tight_layout()
        path = os.path.join(directory, fname)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="fabricsim_report.py",
        description="Summarise a fabricsim run file (HDF5).")
    p.add_argument("run", metavar="RUN.h5", help="fabricsim output file")
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
        run = fa.load_run(args.run)
        report = fa.compute_report(run)
        plots = []
        if args.png:
            d = os.path.dirname(os.path.abspath(args.png))
            os.makedirs(d, exist_ok=True)
            plots.append(write_overview(run, report, args.png))
        if args.plots_dir:
            plots += write_separate(run, args.plots_dir)
    except fa.FabricsimFileError as exc:
        print("error: %s" % exc, file=stderr)
        return 1
    except (OSError, KeyError, ValueError) as exc:
        print("error: %s: %s" % (args.run, " ".join(str(exc).split()) or type(exc).__name__),
              file=stderr)
        return 1

    if args.json:
        report["plots"] = plots
        print(json.dumps(report, indent=2, sort_keys=False), file=stdout)
        plot_stream = stderr
    else:
        print(fa.format_report(report), file=stdout)
        plot_stream = stdout
    for path in plots:
        print("plot: %s" % path, file=plot_stream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
