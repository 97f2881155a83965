"""Two fabricsim runs side by side, with the relative difference of each figure.

usage: fabricsim_compare.py A.h5 B.h5 [--label NAME --label NAME] [--csv OUT.csv] [--plot OUT.png]

Typically two runs of the same configuration with one setting changed
(routing, algorithm, packet against flow model).  For each table both files
have, the script prints A's figure, B's figure and ``B vs A`` = (B - A) / A:

run           /summary: simulated time, makespan of the messages (last
              completion - first post over /flows), events, wall time,
              messages, bytes and packets delivered, packet hops, shares
flows         /flows: completed messages and completion-time percentiles
collectives   /collectives: per job, op, algorithm, ranks and size the mean
              time and busbw of the finished timed iterations
iterations    /iterations: per DNN or trace job the mean iteration time,
              compute and exposed communication of the finished timed ones
links         /links: per link class the total tx_bytes, tx_packets and the
              mean and max busy time; when both files have the same links
              (same src and dst per id) a line counts the links whose
              tx_bytes and busy_ns differ and names the largest difference

Rows are matched on what the tables share (the key columns above, never the
row number), so a figure one file lacks shows n/a.  Rows engine.end_ns
stopped (finished = 0) are left out, and a line says how many.  A file
compared with itself gives 0.00% everywhere.  --csv writes every row
(section, key, figure, unit, a, b, rel_diff as a fraction); --plot draws the
figures of each section as two series of bars side by side.  Exits 1 with
one ``error: ...`` line on stderr for a file that is not fabricsim output.
"""

import math
import re
import sys

import numpy as np

from . import busbw as _busbw
from . import cli
from . import dnn as _dnn
from . import plot as fplot
from .fmt import NA, fmt_int, fmt_rel, table, write_csv
from .io import load_run, open_file
from .stats import class_name, flow_completion_times, num, percentile_stats, rel_diff, unfinished_flows

SECTIONS = ("run", "flows", "collectives", "iterations", "links")
TITLES = {
    "run": "run (/summary)",
    "flows": "flows (/flows, completed messages)",
    "collectives": "collectives (/collectives, mean of the finished timed iterations)",
    "iterations": "iterations (/iterations, mean of the finished timed iterations)",
    "links": "links (/links, per class)",
}
# Integer-valued figures are printed without decimals.
COUNT_UNITS = ("", "B", "packets", "links")
# Units named after the figure ("time (us)"); counts need none.
SHOWN_UNITS = ("us", "ms", "s", "B", "GB/s", "%")
# Sections whose keys sort naturally (job, then size); the others keep the files' order.
SORTED = ("collectives", "iterations")


class Side(object):
    """The figures of one file: sections[section] = {key: {(figure, unit): value}}, plus notes."""

    def __init__(self, path):
        self.path = path
        self.sections = {s: {} for s in SECTIONS}
        self.left_out = {}       # section -> unfinished rows left out
        self.links_id = None     # (src, dst) per link id, to match links one to one
        self.links_raw = None    # {'tx_bytes', 'busy_ns'} per link id

    def put(self, section, key, figure, unit, value):
        """Record one figure; ``key`` is a tuple (see key_text) or "" for a section without keys."""
        if isinstance(value, (int, np.integer)):
            value = int(value)
        elif value is not None:
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = None
        self.sections[section].setdefault(key, {})[(figure, unit)] = value


def _run_section(side, run):
    s = run.summary
    side.put("run", "", "simulated time", "us", None if num(s, "sim_time_ns") is None
             else num(s, "sim_time_ns") / 1e3)
    if run.flows and "end_ns" in run.flows and len(run.flows["end_ns"]):
        end = run.flows["end_ns"].astype(np.float64)
        start = run.flows["start_ns"].astype(np.float64)
        done = end >= 0
        if done.any():
            side.put("run", "", "makespan", "us", (end[done].max() - start.min()) / 1e3)
    for key, label, unit, scale in (
            ("events", "events", "", 1), ("wall_seconds", "wall time", "s", 1),
            ("events_per_second", "events/s", "", 1), ("messages_delivered", "messages delivered", "", 1),
            ("bytes_delivered", "bytes delivered", "B", 1), ("packets_delivered", "packets delivered", "packets", 1),
            ("packet_hops", "packet hops", "packets", 1), ("throughput_share", "throughput share", "%", 100),
            ("per_source_share", "per-source share", "%", 100), ("steady_share", "steady share", "%", 100)):
        v = num(s, key)
        if v is not None:
            v *= scale
            side.put("run", "", label, unit, int(v) if unit in COUNT_UNITS and v.is_integer() else v)


def _flows_section(side, run):
    fct = flow_completion_times(run)
    if fct is None:
        return
    side.left_out["flows"] = unfinished_flows(run)
    st = percentile_stats(fct)
    side.put("flows", "", "completed", "", st["count"])
    for k in ("mean", "p50", "p99", "max"):
        side.put("flows", "", "FCT " + k, "us", None if st[k] is None else st[k] / 1e3)


def _collectives_section(side):
    curves = _busbw.collective_curves(side.path)
    side.left_out["collectives"] = sum(c["unfinished"] for c in curves)
    for c in curves:
        for k, size in enumerate(c["sizes"]):
            key = (c["job"], c["op"], c["algorithm"], c["ranks"], int(size))
            side.put("collectives", key, "time", "us", c["time_us"][k])
            side.put("collectives", key, "busbw", "GB/s", c["busbw"][k])
        for size in c["unfinished_sizes"]:  # a size without any finished row: the key still shows
            key = (c["job"], c["op"], c["algorithm"], c["ranks"], size)
            side.put("collectives", key, "time", "us", None)
            side.put("collectives", key, "busbw", "GB/s", None)


def _iterations_section(side):
    _, jobs = _dnn.load(side.path)
    side.left_out["iterations"] = sum(r["unfinished"] for r in jobs)
    for r in jobs:
        key = (r["job"], r["model"])
        for fig, col in (("iteration time", "time"), ("compute", "compute"), ("exposed comm", "exposed_comm")):
            v = r.get(col)
            side.put("iterations", key, fig, "ms", None if v is None or math.isnan(v) else v / 1e6)


def _links_section(side, run):
    links = run.links
    if not links:
        return
    n = run.n_links
    codes = links["class"].astype(np.int64) if "class" in links else np.zeros(n, dtype=np.int64)
    groups = [(class_name(run, c), codes == c) for c in np.unique(codes)] + [("all", np.ones(n, dtype=bool))]
    for name, sel in groups:
        name = (name,)
        side.put("links", name, "links", "links", int(sel.sum()))
        if "tx_bytes" in links:
            side.put("links", name, "tx_bytes total", "B", int(links["tx_bytes"][sel].astype(np.uint64).sum()))
        if "tx_packets" in links:
            side.put("links", name, "tx_packets total", "packets",
                     int(links["tx_packets"][sel].astype(np.uint64).sum()))
        if "busy_ns" in links:
            busy = links["busy_ns"][sel].astype(np.float64)
            side.put("links", name, "busy mean", "us", busy.mean() / 1e3 if busy.size else None)
            side.put("links", name, "busy max", "us", busy.max() / 1e3 if busy.size else None)
    if "src" in links and "dst" in links:
        side.links_id = (links["src"], links["dst"])
        side.links_raw = {k: links[k].astype(np.float64) for k in ("tx_bytes", "busy_ns") if k in links}


def load_side(path):
    """All figures of one file (raises FabricsimFileError for a file that is not fabricsim output)."""
    side = Side(path)
    run = load_run(path)
    _run_section(side, run)
    _flows_section(side, run)
    with open_file(path) as f:
        has_coll = "collectives" in f
        has_it = "iterations" in f
    if has_coll:
        _collectives_section(side)
    if has_it:
        _iterations_section(side)
    _links_section(side, run)
    return side


def compare(a, b):
    """Rows (section, key, figure, unit, value_a, value_b, rel_diff) over the keys of both sides.

    Keys and figures keep A's order, then those only B has.
    """
    rows = []
    for sec in SECTIONS:
        keys = list(a.sections[sec]) + [k for k in b.sections[sec] if k not in a.sections[sec]]
        if sec in SORTED:
            keys.sort()
        for key in keys:
            fa, fb = a.sections[sec].get(key, {}), b.sections[sec].get(key, {})
            figs = list(fa) + [f for f in fb if f not in fa]
            for fig in figs:
                va, vb = fa.get(fig), fb.get(fig)
                rows.append((sec, key_text(sec, key), fig[0], fig[1], va, vb, rel_diff(va, vb)))
    return rows


def key_text(section, key):
    """The key of a row as printed: 'job 0 allreduce ring 8 ranks 1048576 B', 'job 2 toy', 'fabric'."""
    if section == "collectives":
        return "job %d %s %s %d ranks %d B" % key
    if section == "iterations":
        return "job %d %s" % key
    if isinstance(key, tuple):
        return " ".join(str(k) for k in key)
    return key


def per_link_lines(a, b):
    """Lines comparing the links one to one, when both files have the same links."""
    if a.links_id is None or b.links_id is None:
        return []
    (sa, da), (sb, db) = a.links_id, b.links_id
    if len(sa) != len(sb) or not (np.array_equal(sa, sb) and np.array_equal(da, db)):
        return ["  per link: not compared (the files' links differ: another topology)"]
    lines = []
    for col in ("tx_bytes", "busy_ns"):
        if col not in a.links_raw or col not in b.links_raw:
            continue
        x, y = a.links_raw[col], b.links_raw[col]
        diff = x != y
        if not diff.any():
            lines.append("  per link: %s equal on all %s links" % (col, fmt_int(len(x))))
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(x != 0, (y - x) / np.abs(np.where(x != 0, x, 1)), np.inf)
        worst = int(np.argmax(np.abs(rel)))
        lines.append("  per link: %s differs on %s of %s links; largest: link %d (%d -> %d) %s -> %s (%s)" % (
            col, fmt_int(diff.sum()), fmt_int(len(x)), worst, int(sa[worst]), int(da[worst]),
            _fmt_value(x[worst], ""), _fmt_value(y[worst], ""),
            "new" if math.isinf(rel[worst]) else fmt_rel_fine(rel[worst])))
    return lines


def fmt_rel_fine(d):
    """fmt_rel, but a difference too small for two decimals still shows as non-zero."""
    if d is not None and d != 0 and abs(100.0 * d) < 0.005:
        return "%+.2g%%" % (100.0 * d)
    return fmt_rel(d)


def _fmt_value(v, unit):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return NA
    if unit in COUNT_UNITS and float(v).is_integer():
        return fmt_int(v)
    if v != 0 and abs(v) < 1:
        return "%.4g" % v  # four significant digits, not three decimals, for small figures
    return "{:,.3f}".format(v)


def print_comparison(a, b, names, out=sys.stdout):
    rows = compare(a, b)
    print("# A: %s%s" % (a.path, "" if names[0] == a.path else " (%s)" % names[0]), file=out)
    print("# B: %s%s" % (b.path, "" if names[1] == b.path else " (%s)" % names[1]), file=out)
    print("# B vs A = (B - A) / A", file=out)
    for sec in SECTIONS:
        mine = [r for r in rows if r[0] == sec]
        if not mine:
            continue
        print("", file=out)
        print(TITLES[sec], file=out)
        keyed = any(r[1] for r in mine)
        body = []
        for _, key, fig, unit, va, vb, d in mine:
            label = fig + (" (%s)" % unit if unit in SHOWN_UNITS else "")
            cells = [label, _fmt_value(va, unit), _fmt_value(vb, unit), fmt_rel_fine(d)]
            body.append(([key] if keyed else []) + cells)
        head = (["key"] if keyed else []) + ["figure", "A", "B", "B vs A"]
        # the key only on its first row
        last = None
        for r in body:
            if keyed:
                if r[0] == last:
                    r[0] = ""
                else:
                    last = r[0]
        for line in table(head, body):
            print(line, file=out)
        la, lb = a.left_out.get(sec), b.left_out.get(sec)
        if la or lb:
            what = {"flows": "flows that never completed", "collectives": "unfinished timed operations",
                    "iterations": "unfinished timed iterations"}[sec]
            print("  left out (stopped by engine.end_ns): %s: A %s, B %s" % (
                what, fmt_int(la or 0), fmt_int(lb or 0)), file=out)
        if sec == "links":
            for line in per_link_lines(a, b):
                print(line, file=out)
    return rows


def draw(path, rows, names):
    """One panel per section with figures: A and B as bars side by side, one group per row."""
    panels = []
    for sec in SECTIONS:
        mine = [r for r in rows if r[0] == sec]
        if not mine:
            continue
        if sec == "run":
            mine = [r for r in mine if r[3] == "us"]  # the times; counts have other scales
        elif sec == "collectives":
            mine = [r for r in mine if r[2] == "busbw"]
        elif sec == "iterations":
            mine = [r for r in mine if r[2] == "iteration time"]
        elif sec == "links":
            mine = [r for r in mine if r[2] == "busy mean"]
        elif sec == "flows":
            mine = [r for r in mine if r[3] == "us"]
        if mine:
            panels.append((sec, mine))
    n = max(1, len(panels))
    cols = 1 if n == 1 else 2
    nrows = (n + cols - 1) // cols
    fig, axes = fplot.figure(nrows, cols, figsize=(6.5 * cols, 3.8 * nrows), squeeze=False)
    axes = axes.reshape(-1)
    for ax in axes[len(panels):]:
        ax.axis("off")
    if not panels:
        fplot.no_data(axes[0], "no figures in common")
    for ax, (sec, mine) in zip(axes, panels):
        labels = [(r[1] + " " if r[1] else "") + r[2] for r in mine] if sec in ("run", "flows") \
            else [r[1] for r in mine]
        labels = [_short(l) for l in labels]
        fplot.grouped_bars(ax, labels, [[r[4] for r in mine], [r[5] for r in mine]], names)
        unit = mine[0][3]
        what = {"run": "time", "flows": "flow completion time", "collectives": "busbw",
                "iterations": "iteration time", "links": "mean busy time per link"}[sec]
        ax.set_ylabel("%s (%s)" % (what, unit))
        ax.set_title(sec)
        ax.legend(fontsize="small")
    return fplot.savefig(fig, path, dpi=100)


def _short(label, width=32):
    """A plot label: 'job 1 allreduce bidirectional_ring 8 ranks 262144 B' -> 'job 1 ar bidir_ring 8r 256Ki'."""
    m = re.search(r"(\d+) B$", label)
    if m:
        n = int(m.group(1))
        for unit, scale in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if n >= scale and n % scale == 0:
                label = label[:m.start()] + "%d%s" % (n // scale, unit)
                break
    label = label.replace(" ranks ", "r ").replace("allreduce", "ar").replace("bidirectional_", "bidir_")
    return label if len(label) <= width else label[:width - 1] + "~"


CSV_HEADER = ["section", "key", "figure", "unit", "a", "b", "rel_diff"]


def _body(args):
    cli.check_outputs(args, ("plot", "--plot"), ("csv", "--csv"))
    bad = cli.check_labels(args.label, args.runs)
    if bad:
        raise ValueError("give one --label per run file (two)")
    names = args.label or list(args.runs)
    a = load_side(args.runs[0])
    b = load_side(args.runs[1])
    rows = print_comparison(a, b, names)
    if args.plot:
        print("plot: %s" % draw(args.plot, rows, names))
    if args.csv:
        print("csv: %s" % write_csv(args.csv, CSV_HEADER, [list(r) for r in rows]))
    return 0


def main(argv=None):
    p = cli.parser("fabricsim_compare.py", __doc__)
    cli.add_inputs(p, nargs=2, metavar="RUN.h5", help="the two fabricsim output files, A then B")
    cli.add_labels(p, help="names of A and B in the output and the plot (give two)")
    cli.add_csv(p, help="also write every compared figure as CSV to PATH")
    cli.add_plot(p, help="bars of A and B side by side, one panel per table (PNG)")
    return cli.run_main(_body, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
