"""Load fabricsim run files (HDF5) and compute the report tables.

Only numpy and h5py are used here; plotting lives in fabricsim_report.py.

Conventions
-----------
* Percentiles use numpy's default (linear interpolation between order
  statistics), i.e. ``np.percentile(x, q)``.
* Link utilization is the ``/links/utilization`` dataset when present,
  otherwise ``busy_ns / sim_time_ns``.  Values are fractions (1.0 = 100 %).
* Flow completion time (FCT) is ``end_ns - start_ns`` per row of ``/flows``.
* Aggregate throughput share =
  ``bytes_delivered * 8 / traffic_ns / (endpoints * injection_gbps)``
  where ``traffic_ns = max(end_ns) - min(start_ns)`` over the flows when there
  are flows (and that span is positive), else ``sim_time_ns``.
  (bits per ns == Gbit/s, so no further unit conversion is needed.)
* Any quantity that cannot be computed because the file lacks the inputs is
  ``None`` (printed as ``n/a``); nothing raises for a missing network model.
"""

import math
import os

import h5py
import numpy as np

PERCENTILES = (50, 90, 99)
DEFAULT_CLASS_NAMES = ["host", "fabric", "intra_server", "board", "global"]

META_KEYS = ("version", "git_sha", "build", "config", "ranks", "threads", "seed")
SUMMARY_KEYS = (
    "sim_time_ns", "events", "wall_seconds", "events_per_second",
    "packets_delivered", "bytes_delivered", "packets_dropped", "packet_hops",
    "endpoints", "injection_gbps", "messages_delivered",
    "throughput_share", "per_source_share", "steady_share",
)
LINK_KEYS = (
    "src", "dst", "src_port", "dst_port", "class", "bandwidth_gbps",
    "latency_ns", "tx_bytes", "tx_packets", "busy_ns", "utilization",
    "max_queue_bytes", "stall_ns",
)
FLOW_KEYS = ("src", "dst", "bytes", "start_ns", "end_ns")
NODE_KEYS = ("kind", "name", "rank")


class FabricsimFileError(Exception):
    """The path is missing, unreadable, or not a fabricsim run file."""


# --------------------------------------------------------------------------
# loading
# --------------------------------------------------------------------------

def _py(value):
    """Convert an HDF5 attribute value to a plain Python value."""
    if isinstance(value, h5py.Empty):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        if value.shape == () or value.size == 1:
            return _py(value.reshape(-1)[0]) if value.size else None
        return [_py(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _read_array(ds):
    """Read a dataset to a numpy array; null/empty dataspaces give []."""
    data = ds[()]
    if isinstance(data, h5py.Empty):
        return np.zeros(0, dtype=ds.dtype if ds.dtype.kind != "O" else object)
    return np.asarray(data)


def _read_group(f, name, keys):
    """Return {key: array} for the listed datasets that exist, or None."""
    if name not in f or not isinstance(f[name], h5py.Group):
        return None
    grp = f[name]
    out = {}
    for key in keys:
        if key in grp and isinstance(grp[key], h5py.Dataset):
            out[key] = _read_array(grp[key])
    return out


def parse_class_names(value):
    """'host,fabric,...' (str, bytes or array of str) -> list of names."""
    value = _py(value)
    if value is None:
        return list(DEFAULT_CLASS_NAMES)
    if isinstance(value, list):
        return [str(v).strip() for v in value]
    return [s.strip() for s in str(value).split(",")]


class Run(object):
    """One fabricsim run file, fully read except for the time series."""

    def __init__(self, path):
        self.path = path
        self.meta = {}
        self.summary = {}
        self.topology = {}       # /topology attributes (structure report), if present
        self.links = None        # {name: array} or None
        self.class_names = list(DEFAULT_CLASS_NAMES)
        self.nodes = None
        self.flows = None
        self.timeseries = {}     # {name: (shape, interval_ns)}; data read lazily

    @property
    def n_links(self):
        if not self.links:
            return 0
        return max((len(v) for v in self.links.values()), default=0)

    def __repr__(self):
        return "Run(%r, links=%d, flows=%d)" % (
            self.path, self.n_links,
            0 if not self.flows else len(self.flows.get("start_ns", [])))


def load_run(path):
    """Read a fabricsim HDF5 file into a :class:`Run`.

    Raises FabricsimFileError if the file is missing, not HDF5 or has no
    /meta group.
    """
    if not os.path.exists(path):
        raise FabricsimFileError("%s: no such file" % path)
    if os.path.isdir(path):
        raise FabricsimFileError("%s: is a directory, not a fabricsim file" % path)
    try:
        is_h5 = h5py.is_hdf5(path)
    except OSError as exc:
        raise FabricsimFileError("%s: cannot read file (%s)" % (path, exc))
    if not is_h5:
        raise FabricsimFileError("%s: not an HDF5 file (not a fabricsim run)" % path)
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise FabricsimFileError("%s: cannot open HDF5 file (%s)" % (path, exc))
    with f:
        if "meta" not in f or not isinstance(f["meta"], h5py.Group):
            raise FabricsimFileError(
                "%s: not a fabricsim file (no /meta group)" % path)
        run = Run(path)
        run.meta = {k: _py(v) for k, v in f["meta"].attrs.items()}
        if "summary" in f:
            run.summary = {k: _py(v) for k, v in f["summary"].attrs.items()}
        if "topology" in f:
            run.topology = {k: _py(v) for k, v in f["topology"].attrs.items()}
        run.links = _read_group(f, "links", LINK_KEYS)
        if run.links is not None:
            if "class_names" in f["links"].attrs:
                run.class_names = parse_class_names(f["links"].attrs["class_names"])
            if not run.links:
                run.links = None
        if "links/timeseries" in f:
            ts = f["links/timeseries"]
            for key in ("tx_bytes", "queue_bytes"):
                if key in ts and isinstance(ts[key], h5py.Dataset) \
                        and len(ts[key].shape) == 2:
                    interval = _py(ts[key].attrs.get("interval_ns"))
                    run.timeseries[key] = (tuple(ts[key].shape), interval)
        run.nodes = _read_group(f, "nodes", NODE_KEYS) or None
        run.flows = _read_group(f, "flows", FLOW_KEYS) or None
        if run.nodes and "name" in run.nodes:
            run.nodes["name"] = np.array(
                [_py(n) for n in run.nodes["name"]], dtype=object)
    return run


# --------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------

def percentile_stats(values):
    """{'count', 'p50', 'p90', 'p99', 'max', 'mean'} of a 1-D array.

    Empty input gives count 0 and None for the rest.  NaNs are ignored.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    x = x[~np.isnan(x)]
    out = {"count": int(x.size)}
    if x.size == 0:
        for q in PERCENTILES:
            out["p%d" % q] = None
        out["max"] = None
        out["mean"] = None
        return out
    for q, v in zip(PERCENTILES, np.percentile(x, PERCENTILES)):
        out["p%d" % q] = float(v)
    out["max"] = float(x.max())
    out["mean"] = float(x.mean())
    return out


def _num(d, key):
    v = d.get(key)
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v


def link_utilization(run):
    """Per-link utilization fractions (global link order), or None."""
    if not run.links:
        return None
    if "utilization" in run.links:
        return run.links["utilization"].astype(np.float64)
    sim = _num(run.summary, "sim_time_ns")
    if "busy_ns" in run.links and sim and sim > 0:
        return run.links["busy_ns"].astype(np.float64) / sim
    return None


def class_name(run, code):
    code = int(code)
    if 0 <= code < len(run.class_names) and run.class_names[code]:
        return run.class_names[code]
    return "class%d" % code


def utilization_by_class(run):
    """Ordered list of (class_name, stats) by class code, plus ('all', stats).

    Empty list when the run has no per-link utilization.
    """
    util = link_utilization(run)
    if util is None:
        return []
    rows = []
    if "class" in run.links and len(run.links["class"]) == len(util):
        codes = run.links["class"].astype(np.int64)
        for code in np.unique(codes):
            rows.append((class_name(run, code),
                         percentile_stats(util[codes == code])))
    rows.append(("all", percentile_stats(util)))
    return rows


def flow_completion_times(run):
    """end_ns - start_ns per flow (ns), or None when there is no /flows data."""
    if not run.flows or "start_ns" not in run.flows or "end_ns" not in run.flows:
        return None
    start = run.flows["start_ns"].astype(np.float64)
    end = run.flows["end_ns"].astype(np.float64)
    n = min(len(start), len(end))
    return end[:n] - start[:n]


def traffic_time_ns(run):
    """(traffic_ns, source) with source 'flows' or 'sim_time'; (None, None)."""
    if run.flows and "start_ns" in run.flows and "end_ns" in run.flows \
            and len(run.flows["start_ns"]) and len(run.flows["end_ns"]):
        span = float(np.max(run.flows["end_ns"])) - float(np.min(run.flows["start_ns"]))
        if span > 0 and math.isfinite(span):
            return span, "flows"
    sim = _num(run.summary, "sim_time_ns")
    if sim is not None and sim > 0:
        return sim, "sim_time"
    return None, None


def aggregate_throughput(run):
    """Delivered throughput and its share of aggregate injection bandwidth."""
    traffic_ns, source = traffic_time_ns(run)
    nbytes = _num(run.summary, "bytes_delivered")
    endpoints = _num(run.summary, "endpoints")
    inj = _num(run.summary, "injection_gbps")
    out = {
        "traffic_time_ns": traffic_ns,
        "traffic_time_source": source,
        "throughput_gbps": None,
        "injection_capacity_gbps": None,
        "injection_share": None,
    }
    if nbytes is not None and traffic_ns:
        out["throughput_gbps"] = nbytes * 8.0 / traffic_ns
    if endpoints is not None and inj is not None:
        out["injection_capacity_gbps"] = endpoints * inj
    if out["throughput_gbps"] is not None and out["injection_capacity_gbps"]:
        out["injection_share"] = out["throughput_gbps"] / out["injection_capacity_gbps"]
    # Written by fabricsim since issue 18 (absent in older files): the
    # per-source mean and the steady-state share (docs/output.md).
    for key in ("per_source_share", "steady_share"):
        v = _num(run.summary, key)
        out[key] = None if v is None or v != v else v  # NaN: not reported
    return out


def node_counts(run):
    if not run.nodes or "kind" not in run.nodes:
        return None
    kind = run.nodes["kind"]
    return {"endpoints": int(np.sum(kind == 0)), "switches": int(np.sum(kind == 1))}


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

def link_sort_order(run):
    """Link ids sorted by class code, then id."""
    n = run.n_links
    if run.links and "class" in run.links and len(run.links["class"]) == n:
        return np.argsort(run.links["class"].astype(np.int64), kind="stable")
    return np.arange(n)


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
# text formatting
# --------------------------------------------------------------------------

NA = "n/a"


def fmt_time_ns(ns):
    if ns is None:
        return NA
    a = abs(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if a >= scale:
            return "%.3f %s" % (ns / scale, unit)
    return "%.1f ns" % ns


def fmt_int(v):
    if v is None:
        return NA
    try:
        return "{:,}".format(int(v))
    except (TypeError, ValueError):
        return str(v)


def fmt_float(v, spec="%.3g"):
    if v is None:
        return NA
    return spec % v


def fmt_pct(frac, digits=2):
    if frac is None:
        return NA
    return "%.*f%%" % (digits, 100.0 * frac)


def fmt_bytes(v):
    if v is None:
        return NA
    v = float(v)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= scale:
            return "%s B (%.3f %s)" % (fmt_int(v), v / scale, unit)
    return "%s B" % fmt_int(v)


def _table(header, rows):
    """Plain text table: first column left-aligned, the rest right-aligned."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for r in [header] + rows:
        cells = [str(r[0]).ljust(widths[0])] + [
            str(c).rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  " + "  ".join(cells).rstrip())
    lines.insert(1, "  " + "  ".join("-" * w for w in widths))
    return lines


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
        lines += _table(["class", "links", "p50", "p90", "p99", "max", "mean"], rows)
    else:
        lines.append("  n/a (no /links data in this file)")

    lines += ["", "flow completion time (end_ns - start_ns)"]
    fct = report["fct_ns"]
    if fct and fct["count"]:
        rows = [["fct", fmt_int(fct["count"])] + [
            fmt_time_ns(fct[k]) for k in ("p50", "p90", "p99", "max", "mean")]]
        lines += _table(["", "flows", "p50", "p90", "p99", "max", "mean"], rows)
    else:
        lines.append("  n/a (no flows in this file)")
    return "\n".join(lines)
