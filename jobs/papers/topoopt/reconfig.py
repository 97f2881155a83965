#!/usr/bin/env python3
"""Reconfiguration latency (spec 2.3: OCS-reconfig's latency swept over
1, 10, 100, 1,000 and 10,000 us; the paper's section 5.3): one job over
every GPU of n servers of 4 GPUs, the OCS-reconfig baseline with and
without host forwarding (topology.construction = "ocs_reconfig",
"ocs_reconfig_nofw"; Algorithm 5 every 50 ms, every flow paused for the
latency at each change) at each latency, against TopoOpt built from the job
and the Ideal Switch (lines).  Iteration time from /iterations, the number
of reconfigurations and the time paused from /reconfig.

  jobs/papers/topoopt/reconfig.py [--quick] [--servers 128] [--models dlrm,candle] [--latencies-us 1,10,...]
                                  [--epoch-ms 50] [--out DIR]

--quick: 16 servers, DLRM, latencies 10 and 10,000 us (seconds).
Writes OUT/reconfig.csv and OUT/reconfig.png (iteration time against latency).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topooptpaper as tp  # noqa: E402

LATENCIES_US = [1, 10, 100, 1000, 10000]


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=tp.integer(2, 4394), default=None,
                   help="servers of 4 GPUs (default 128, the paper's; --quick 16)")
    p.add_argument("--models", type=tp.name_list("model", list(tp.MODELS)), default=None,
                   help="comma-separated: %s (default dlrm,candle; --quick dlrm)" % ", ".join(tp.MODELS))
    p.add_argument("--latencies-us", type=tp.integer_list(1, 10 ** 6, "latencies"), default=None,
                   help="comma-separated reconfiguration latencies in us (default 1,10,100,1000,10000)")
    p.add_argument("--epoch-ms", type=tp.integer(1, 10 ** 6), default=50,
                   help="time between two decisions in ms (default 50, the paper's)")
    args = tp.parse(p, ["reconfig.csv", "reconfig.png"])
    servers = args.servers or (16 if args.quick else 128)
    models = args.models or (["dlrm"] if args.quick else ["dlrm", "candle"])
    latencies = args.latencies_us or ([10, 10000] if args.quick else LATENCIES_US)
    epoch_ns = args.epoch_ms * 10 ** 6
    if max(latencies) * 1000 >= epoch_ns:
        tp.fail("reconfig.py", "--latencies-us: every latency must be below the epoch (%d ms)" % args.epoch_ms, 2)
    rows = []
    with tp.Runner(args) as run:
        for model in models:
            mo = tp.model_overrides(model, servers)
            runs = [("topoopt", None), ("ideal", None)]
            runs += [(f, lat) for f in ("ocs_fw", "ocs_nofw") for lat in latencies]
            for fabric, lat in runs:
                o = dict(mo, **tp.fabric_overrides(fabric, servers, 4, 100))
                if lat is not None:
                    o["topology.reconfig_epoch_ns"] = epoch_ns
                    o["topology.reconfig_latency_ns"] = lat * 1000
                name = "%s_%s%s" % (model, fabric, "" if lat is None else "_%dus" % lat)
                h5, wall, cmd = run.run(name, tp.DEDICATED, o)
                import h5py
                import numpy as np
                with h5py.File(h5, "r") as f:
                    it = f["iterations/time_ns"][()]
                    if not f["iterations/finished"][()].all():
                        tp.fail("fabricsim run", "an iteration did not finish (the command: %s)" % cmd, 1)
                    changes, paused = 0, 0.0
                    if "reconfig" in f:
                        pe, t0 = f["reconfig/pause_end_ns"][()], f["reconfig/time_ns"][()]
                        changes = int(np.sum(pe > 0))
                        paused = float(np.sum((pe - t0)[pe > 0])) / 1e6
                row = {"model": model, "fabric": fabric, "label": tp.FABRICS[fabric], "servers": servers,
                       "latency_us": "" if lat is None else lat, "epoch_ms": "" if lat is None else args.epoch_ms,
                       "iteration_ms": float(it.mean()) / 1e6, "reconfigurations": changes, "paused_ms": paused,
                       "wall_s": round(wall, 2), "fabricsim": run.version, "command": cmd}
                rows.append(row)
                print("%-8s %-22s %8s  %10.3f ms  %3d reconfigurations, %.3f ms paused" % (
                    model, tp.FABRICS[fabric], "" if lat is None else "%d us" % lat, row["iteration_ms"], changes,
                    paused), flush=True)
                run.done(h5)
        csv_path = os.path.join(args.out, "reconfig.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "reconfig.png")

        def draw(ax):
            for i, model in enumerate(models):
                colour = "C%d" % (i % 10)
                for fabric, style in (("ocs_fw", "-o"), ("ocs_nofw", "--s")):
                    pts = [(r["latency_us"], r["iteration_ms"]) for r in rows
                           if r["model"] == model and r["fabric"] == fabric]
                    ax.plot(*zip(*pts), style, color=colour, label="%s %s" % (model, tp.FABRICS[fabric]))
                for fabric, ls in (("topoopt", ":"), ("ideal", "-.")):
                    t = next(r["iteration_ms"] for r in rows if r["model"] == model and r["fabric"] == fabric)
                    ax.axhline(t, ls=ls, color=colour, lw=1, label="%s %s" % (model, tp.FABRICS[fabric]))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("reconfiguration latency (us)")
            ax.set_ylabel("iteration time (ms)")
            ax.legend(fontsize=6)
            ax.set_title("OCS-reconfig, %d servers x 4 GPUs, d = 4 x 100 Gb/s, epoch %d ms" % (
                servers, args.epoch_ms))
        tp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
