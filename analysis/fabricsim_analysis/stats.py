"""Figures derived from a run's tables: percentiles, utilization, flow times,
throughput, and the relative difference used to compare two runs.

Conventions
-----------
* Percentiles use numpy's default (linear interpolation between order
  statistics), i.e. ``np.percentile(x, q)``; NaNs are ignored.
* Link utilization is the ``/links/utilization`` dataset when present,
  otherwise ``busy_ns / sim_time_ns``.  Values are fractions (1.0 = 100 %).
* Flow completion time (FCT) is ``end_ns - start_ns`` per row of ``/flows``
  whose message completed (``end_ns`` >= 0; -1 marks a message that
  engine.end_ns stopped, left out and counted by :func:`unfinished_flows`).
* Aggregate throughput share =
  ``bytes_delivered * 8 / traffic_ns / (endpoints * injection_gbps)``
  where ``traffic_ns = max(end_ns) - min(start_ns)`` over the flows when there
  are flows (and that span is positive), else ``sim_time_ns``.
  (bits per ns == Gbit/s, so no further unit conversion is needed.)
* Any quantity that cannot be computed because the file lacks the inputs is
  ``None`` (printed as ``n/a``); nothing raises for a missing network model.
"""

import math

import numpy as np

PERCENTILES = (50, 90, 99)


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


def num(d, key):
    """``d[key]`` as a float, or None when missing or not a number."""
    v = d.get(key)
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v


def rel_diff(a, b):
    """(b - a) / a: the relative difference of b against a.

    0.0 when both are 0; None when either is missing or NaN, or a is 0 and b is not.
    """
    if a is None or b is None:
        return None
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return None
    if a == b:
        return 0.0
    if a == 0:
        return None
    return (b - a) / abs(a)


# --------------------------------------------------------------------------
# links
# --------------------------------------------------------------------------

def link_utilization(run):
    """Per-link utilization fractions (global link order), or None."""
    if not run.links:
        return None
    if "utilization" in run.links:
        return run.links["utilization"].astype(np.float64)
    sim = num(run.summary, "sim_time_ns")
    if "busy_ns" in run.links and sim and sim > 0:
        return run.links["busy_ns"].astype(np.float64) / sim
    return None


def class_name(run, code):
    """The name of link class ``code`` (``class_names`` of /links), or ``class<N>``."""
    return class_name_of(run.class_names, code)


def class_name_of(names, code):
    code = int(code)
    if 0 <= code < len(names) and names[code]:
        return names[code]
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


def link_sort_order(run):
    """Link ids sorted by class code, then id."""
    n = run.n_links
    if run.links and "class" in run.links and len(run.links["class"]) == n:
        return np.argsort(run.links["class"].astype(np.int64), kind="stable")
    return np.arange(n)


# --------------------------------------------------------------------------
# flows
# --------------------------------------------------------------------------

def _flow_times(run):
    if not run.flows or "start_ns" not in run.flows or "end_ns" not in run.flows:
        return None, None
    start = run.flows["start_ns"].astype(np.float64)
    end = run.flows["end_ns"].astype(np.float64)
    n = min(len(start), len(end))
    return start[:n], end[:n]


def flow_completion_times(run):
    """end_ns - start_ns per completed flow (ns), or None when there is no /flows data.

    Flows that never completed (end_ns -1: engine.end_ns stopped the run
    first) are left out; :func:`unfinished_flows` counts them.
    """
    start, end = _flow_times(run)
    if start is None:
        return None
    done = end >= 0
    return end[done] - start[done]


def unfinished_flows(run):
    """Number of /flows rows whose message never completed (end_ns < 0), or None without flows."""
    start, end = _flow_times(run)
    if start is None:
        return None
    return int(np.sum(end < 0))


def traffic_time_ns(run):
    """(traffic_ns, source) with source 'flows' or 'sim_time'; (None, None)."""
    start, end = _flow_times(run)
    if start is not None and len(start):
        span = float(np.max(end)) - float(np.min(start))
        if span > 0 and math.isfinite(span):
            return span, "flows"
    sim = num(run.summary, "sim_time_ns")
    if sim is not None and sim > 0:
        return sim, "sim_time"
    return None, None


def aggregate_throughput(run):
    """Delivered throughput and its share of aggregate injection bandwidth."""
    traffic_ns, source = traffic_time_ns(run)
    nbytes = num(run.summary, "bytes_delivered")
    endpoints = num(run.summary, "endpoints")
    inj = num(run.summary, "injection_gbps")
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
        v = num(run.summary, key)
        out[key] = None if v is None or v != v else v  # NaN: not reported
    return out


def node_counts(run):
    """{'endpoints', 'switches'} from /nodes kind, or None."""
    if not run.nodes or "kind" not in run.nodes:
        return None
    kind = run.nodes["kind"]
    return {"endpoints": int(np.sum(kind == 0)), "switches": int(np.sum(kind == 1))}
