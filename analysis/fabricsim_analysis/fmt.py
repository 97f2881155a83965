"""Text formatting: numbers with units, aligned plain-text tables, CSV files."""

import csv
import math
import os

NA = "n/a"


def fmt_time_ns(ns):
    """A time in ns with a readable unit: '12.5 ns', '3.200 us', '1.000 ms', '2.000 s'."""
    if ns is None:
        return NA
    a = abs(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if a >= scale:
            return "%.3f %s" % (ns / scale, unit)
    return "%.1f ns" % ns


def fmt_int(v):
    """An integer with thousands separators: '123,456'."""
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


def fmt_num(v, spec="%.6g"):
    """A number, or n/a for None and NaN."""
    if v is None:
        return NA
    try:
        if math.isnan(float(v)):
            return NA
    except (TypeError, ValueError):
        return str(v)
    return spec % v


def fmt_pct(frac, digits=2):
    """A fraction as a percentage: 0.1234 -> '12.34%'."""
    if frac is None:
        return NA
    return "%.*f%%" % (digits, 100.0 * frac)


def fmt_rel(frac, digits=2):
    """A relative difference as a signed percentage: 0.05 -> '+5.00%', 0 -> '0.00%'."""
    if frac is None:
        return NA
    if frac == 0:
        return "%.*f%%" % (digits, 0.0)
    return "%+.*f%%" % (digits, 100.0 * frac)


def fmt_bytes(v):
    """'1,048,576 B (1.049 MB)'."""
    if v is None:
        return NA
    v = float(v)
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= scale:
            return "%s B (%.3f %s)" % (fmt_int(v), v / scale, unit)
    return "%s B" % fmt_int(v)


def table(header, rows, indent="  ", rule=True):
    """Lines of a plain-text table: first column left-aligned, the rest right-aligned.

    ``rule``: a line of dashes under the header.
    """
    rows = [[str(c) for c in r] for r in rows]
    header = [str(c) for c in header]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for r in [header] + rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append(indent + "  ".join(cells).rstrip())
    if rule:
        lines.insert(1, indent + "  ".join("-" * w for w in widths))
    return lines


def csv_value(v):
    """A cell for CSV: None and NaN empty, floats with full precision."""
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return v


def write_csv(path, header, rows):
    """Write ``rows`` (lists of values) under ``header`` to ``path``; return the path."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow([csv_value(v) for v in r])
    return path
