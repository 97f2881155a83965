#!/usr/bin/python3
"""/links/timeseries in the analytic model (network.model = "analytic").

The analytic model writes the flow model's datasets (names, types, shapes,
interval_ns, the same coarsening): a transfer of n payload bytes holds its
link for alpha + beta n, its bytes sent evenly over beta n from the moment
the link starts serving it (alpha after them), cut at the interval
boundaries in whole bytes (the bytes sent by each boundary rounded down),
so every row sums exactly to /links/tx_bytes; queue_bytes is zero.

1. A star a, c -> s -> b (a graph file), one message from a and one from c
   to b, posted at 0: every link's series computed here from the
   alpha-beta timing (FIFO on s->b, which is held for alpha after a's
   bytes before it serves c's), at 700 ns; at 1 ps, coarsened to 128 ps
   (the 65,536-interval cap); and cut by engine.end_ns (bytes booked past
   the end are in the last interval: the sums still match).
2. The same datasets in the flow model (names, dtypes, attribute, the
   interval count from the run's end).
3. A ring allreduce on a 16-endpoint fat tree: per link, sum over the
   intervals = /links/tx_bytes exactly, no interval above its link's
   capacity (+1 byte of rounding), and the analysis package's heatmap
   reads it.

  analytic_timeseries.py EXE SOURCE_DIR
"""
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

EXE, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "analysis"))
import fabricsim_analysis as fa  # noqa: E402

failures = []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, "" if ok else ": " + str(detail)))
    if not ok:
        failures.append(what)


def run(tmp, name, toml, *sets):
    cfg = os.path.join(tmp, name + ".toml")
    with open(cfg, "w") as fh:
        fh.write(toml)
    out = os.path.join(tmp, name + ".h5")
    args = [EXE, "run", cfg, "-o", out]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
    return h5py.File(out, "r")


def ts(f):
    g = f["links/timeseries"]
    return g["tx_bytes"], g["queue_bytes"]


def link_index(f):
    """{("a", "s"): link row} by the nodes' names."""
    name = [n.decode() if isinstance(n, bytes) else n for n in f["nodes/name"][:]]
    src, dst = f["links/src"][:], f["links/dst"][:]
    return {(name[s], name[d]): i for i, (s, d) in enumerate(zip(src, dst))}


# ------------------------------------------------------------ 1. the star

N = 10000  # payload bytes of each message (the analytic model counts no headers)
# name: (Gb/s, latency ns).  Serialization of N bytes: N * 8000 / gbps ps,
# rounded up to the picosecond (30 Gb/s does not divide it).
LINKS = {("a", "s"): (100, 50), ("c", "s"): (30, 20), ("s", "b"): (40, 30)}
SWITCH_PS = 100000


def ser_ps(gbps):
    return -(-N * 8000 // gbps)


GRAPH = "".join('[[node]]\nname = "%s"\nkind = "%s"\n' % (n, k)
                for n, k in (("a", "endpoint"), ("c", "endpoint"), ("b", "endpoint"), ("s", "switch")))
GRAPH += "".join('[[link]]\na = "%s"\nb = "%s"\ngbps = %d\nlatency_ns = %d\n' % (a, b, g, l)
                 for (a, b), (g, l) in LINKS.items())
STAR = """[topology]
kind = "file"
file = "star.graph.toml"
[network]
model = "analytic"
switch_latency_ns = %d
[workload]
kind = "traffic"
pattern = "incast"
incast_target = 2
message_bytes = %d
""" % (SWITCH_PS // 1000, N)

# The alpha-beta timing, by hand.  a -> s starts at 0 and c -> s at 0 (each
# its own link); each message asks for s -> b a switch latency after
# crossing its first link (serialization + alpha); s -> b serves them first
# come first served and is held alpha + beta N for each.
ser = {l: ser_ps(g) for l, (g, _) in LINKS.items()}
alpha = {l: lat * 1000 for l, (_, lat) in LINKS.items()}
at_s = {src: ser[(src, "s")] + alpha[(src, "s")] + SWITCH_PS for src in ("a", "c")}
sb = ("s", "b")
first, second = sorted(at_s, key=at_s.get)
start_sb = {first: at_s[first]}
start_sb[second] = max(at_s[second], start_sb[first] + ser[sb] + alpha[sb])
END_PS = start_sb[second] + ser[sb] + alpha[sb]  # the last delivery: the run's end
# (5,010,000 ps: a's bytes on s -> b over [950,000, 2,950,000), the link held
# until 2,980,000; c arrived at 2,786,667 and waits for it.)
assert (at_s["a"], at_s["c"], start_sb["c"], END_PS) == (950000, 2786667, 2980000, 5010000)
# Serializations on each link: (start, duration) in ps.
BOOKED = {("a", "s"): [(0, ser[("a", "s")])], ("c", "s"): [(0, ser[("c", "s")])],
          sb: [(start_sb["a"], ser[sb]), (start_sb["c"], ser[sb])]}


def expected_row(link, interval_ps, bins, end_ps=None, booked=BOOKED):
    """Bytes per interval: of a serialization [s, s + d), floor(N (t - s) / d)
    bytes are sent by time t; cut by an end time, the rest is in the last
    interval."""
    row = [0] * bins
    for s, d in booked.get(link, []):
        def sent(t):
            return N * (min(max(t, s), s + d) - s) // d
        stop = min(s + d, bins * interval_ps, s + d if end_ps is None else end_ps)
        for k in range(bins):
            a, b = k * interval_ps, (k + 1) * interval_ps
            if a < stop:
                row[k] += sent(min(b, stop)) - sent(a)
        row[bins - 1] += N - sent(stop)  # (nothing when the run was not cut)
    return row


def check_star(f, label, interval_ps, end_ps, cut_at=None, booked=BOOKED):
    tx, q = ts(f)
    links = link_index(f)
    bins = max(1, -(-end_ps // interval_ps))
    check("%s: sim_time_ns = %d ps" % (label, end_ps), round(float(f["summary"].attrs["sim_time_ns"]) * 1000) == end_ps,
          f["summary"].attrs["sim_time_ns"])
    check("%s: interval_ns = %g" % (label, interval_ps / 1000),
          abs(float(tx.attrs["interval_ns"]) - interval_ps / 1000) < 1e-9 and
          float(q.attrs["interval_ns"]) == float(tx.attrs["interval_ns"]), tx.attrs["interval_ns"])
    check("%s: shapes (links, %d), uint64" % (label, bins),
          tx.shape == q.shape == (len(f["links/tx_bytes"]), bins) and tx.dtype == q.dtype == np.uint64,
          (tx.shape, q.shape, tx.dtype, q.dtype))
    data = tx[:]
    want = np.zeros_like(data)
    for link, row in links.items():
        want[row] = expected_row(link, interval_ps, bins, cut_at, booked)
    bad = [(link, list(data[r][data[r] != want[r]][:4]), list(want[r][data[r] != want[r]][:4]))
           for link, r in links.items() if not np.array_equal(data[r], want[r])]
    check("%s: every link's bytes per interval as computed" % label, not bad, bad[:3])
    check("%s: rows sum to /links/tx_bytes" % label, np.array_equal(data.sum(axis=1), f["links/tx_bytes"][:]),
          (data.sum(axis=1), f["links/tx_bytes"][:]))
    check("%s: queue_bytes all zero" % label, int(q[:].max()) == 0)


with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "star.graph.toml"), "w") as fh:
        fh.write(GRAPH)

    f = run(tmp, "star", STAR, "output.interval_ns=700")
    check("star: deliveries at the alpha-beta times",
          sorted(round(float(x) * 1000) for x in f["flows/end_ns"][:]) ==
          sorted(start_sb[m] + ser[sb] + alpha[sb] for m in ("a", "c")), f["flows/end_ns"][:])
    check_star(f, "star at 700 ns", 700000, END_PS)
    # A 700 ns interval cuts each serialization somewhere inside it: spot
    # values by hand (a -> s: 80 ps a byte, 8750 bytes in 700 ns).
    links = link_index(f)
    row = f["links/timeseries/tx_bytes"][links[("a", "s")]]
    check("star: a -> s = 8750, 1250, 0, ...", list(row[:3]) == [8750, 1250, 0], list(row))
    # c -> s at 30 Gb/s: 10,000 bytes over 2,666,667 ps; the bytes sent by
    # 700, 1,400 and 2,100 ns are 2624.99, 5249.99 and 7874.99, rounded down.
    row = f["links/timeseries/tx_bytes"][links[("c", "s")]]
    check("star: c -> s = 2624, 2625, 2625, 2126, 0, ...", list(row[:5]) == [2624, 2625, 2625, 2126, 0], list(row))

    # 1 ps would be 5,010,000 intervals, above 65,536: the interval doubles
    # to 128 ps (39,141 intervals), each bin the sum of the finer ones.
    f = run(tmp, "star_fine", STAR, "output.interval_ns=0.001")
    check_star(f, "star at 1 ps (coarsened)", 128, END_PS)

    # Cut at 2,000 ns: the run's last event is a's arrival at s (950 ns;
    # c's is at 2,786.667 ns).  /links counts every transfer booked by then
    # whole (a -> s, c -> s, a's on s -> b), the series has ceil(950 / 700)
    # = 2 intervals, and what lies past them is in the last.
    f = run(tmp, "star_cut", STAR, "output.interval_ns=700", "engine.end_ns=2000")
    check_star(f, "star cut at 2000 ns", 700000, at_s["a"], cut_at=2000000, booked={**BOOKED, sb: BOOKED[sb][:1]})

    # 2. The flow model's datasets, for comparison: the same names, types,
    # attribute, and intervals counted from the run's end.
    g = run(tmp, "star_flow", STAR, "output.interval_ns=700", "network.model=flow")
    a_ts, f_ts = f["links/timeseries"], g["links/timeseries"]
    # (The flow model adds its flows per link, `flows`: docs/output.md.)
    check("flow and analytic: the same datasets", sorted(a_ts.keys()) == ["queue_bytes", "tx_bytes"]
          and sorted(f_ts.keys()) == ["flows", "queue_bytes", "tx_bytes"], (list(a_ts.keys()), list(f_ts.keys())))
    check("flow and analytic: the same types and attributes",
          all(a_ts[k].dtype == f_ts[k].dtype and sorted(a_ts[k].attrs.keys()) == sorted(f_ts[k].attrs.keys())
              for k in a_ts))
    end_flow = float(g["summary"].attrs["sim_time_ns"])
    check("flow: intervals = ceil(end / interval)", f_ts["tx_bytes"].shape[1] == math.ceil(end_flow / 700))

    # ------------------------------------------------ 3. a fat-tree collective
    FAT = """[topology]
kind = "fat_tree"
endpoints = 16
radix = 8
[network]
model = "analytic"
link_gbps = 400
link_latency_ns = 20
switch_latency_ns = 100
[workload]
kind = "collective"
op = "allreduce"
algorithm = "ring"
sizes = [1048576]
[output]
interval_ns = 500
"""
    f = run(tmp, "fat", FAT)
    tx, q = ts(f)
    data = tx[:]
    total = f["links/tx_bytes"][:]
    interval = float(tx.attrs["interval_ns"])
    bins = max(1, math.ceil(float(f["summary"].attrs["sim_time_ns"]) / interval))
    check("fat tree: shape (links, ceil(end / interval))", data.shape == (len(total), bins), (data.shape, bins))
    check("fat tree: bytes on the links", int(total.sum()) > 0 and int((data.sum(axis=1) > 0).sum()) >= 16)
    check("fat tree: every row sums to /links/tx_bytes exactly", np.array_equal(data.sum(axis=1), total),
          np.nonzero(data.sum(axis=1) != total)[0][:5])
    cap = f["links/bandwidth_gbps"][:] * interval / 8.0
    # (Whole bytes: each of the at most two transfers a 500 ns interval
    # meets, 64 KiB chunks of 1.3 us, may round one byte up.)
    check("fat tree: no interval above the link's capacity", bool(np.all(data <= np.floor(cap)[:, None] + 2)),
          float((data / cap[:, None]).max()))
    check("fat tree: queue_bytes all zero", q.shape == data.shape and int(q[:].max()) == 0)
    # The analysis package reads it as it reads the packet model's.
    heat = fa.utilization_heatmap(fa.load_run(f.filename))
    check("fat tree: analysis heatmap", heat is not None and heat["n_intervals"] == bins and
          0 < heat["matrix"].max() <= 1.0 + 2.0 / cap.min(), heat and heat["matrix"].max())

if failures:
    print("FAILED: %d check(s)" % len(failures))
    sys.exit(1)
print("PASS")
