#!/usr/bin/env python3
"""Global bandwidth of the HammingMesh paper (spec §7.1, §9; Table II's
"global BW" and "global saving"): an alltoall of p - 1 shift rounds (round i:
accelerator j sends to j + i) on every topology of the small cluster; the
per-accelerator achieved injection rate (bytes sent / its completion time) as
a share of its injection bandwidth (1.6 Tb/s), next to the makespan and
steady-state shares, the fluid bounds `fabricsim info` computes for the routing
(minimal routes, or any routes for UGAL and Valiant) on the makespan share
(`fluid_bound`) and on the per-accelerator share (`per_source_bound`, higher:
sources that finish early count for more), the cost and the global saving
against the nonblocking fat tree.

  jobs/papers/hammingmesh/alltoall.py [--quick | --large] [--bytes 1048576,...] [--rounds N]
      [--sample spread|spread_local|first] [--out DIR]

Writes OUT/alltoall.csv and OUT/alltoall.png (README.md: what it reproduces,
how long it takes).  --rounds N < p - 1 runs a sample of N shift rounds,
spread evenly over the p - 1 shifts (workload.alltoall_sample, docs/model.md);
each sampled figure is printed with its error against the full run of the
small cluster (results/alltoall.csv), or, for the large cluster, with the
error the same sample had on the small cluster (results/alltoall_sample.csv).
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hmpaper as hp  # noqa: E402


def main():
    p = hp.parse_args(__doc__.split("\n\n")[0], list(hp.TOPOLOGIES))
    p.add_argument("--bytes", type=hp.integer_list(1, hp.MAX_BYTES, "message sizes in bytes"), default=None,
                   help="comma-separated message sizes (default: 1 MiB as the paper; --quick: 64 KiB)")
    p.add_argument("--rounds", type=hp.integer(0, 1 << 30), default=0,
                   help="shift rounds (default 0: all p - 1, as the paper); fewer are a sample")
    p.add_argument("--sample", choices=SAMPLES, default="spread",
                   help="which shifts a sample of --rounds runs (default spread: evenly over the p - 1 shifts, "
                        "the almost-local shift 1 left out; spread_local: from shift 1; first: shifts 1 ... N)")
    args = hp.parse(p, ["alltoall.csv", "alltoall.png"])
    if args.large:
        extra = (["--bytes", ",".join(map(str, args.bytes))] if args.bytes else []) + \
            (["--rounds", str(args.rounds), "--sample", args.sample] if args.rounds else [])
        hp.submit_large(args, __file__, extra)
        return
    sizes = args.bytes or [65536 if args.quick else 1048576]
    with hp.Runner(args) as run:
        experiment(args, sizes, run)


SAMPLES = ("spread", "spread_local", "first")
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def stored(name):
    """Rows of a CSV of results/ (none if it is not there)."""
    try:
        with open(os.path.join(RESULTS, name), newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def reference(topology, size, rounds, sample):
    """What results/ says of this sample: the small cluster's full-run share
    of the topology, and the error (percentage points) the same sample had
    there; None where it has no such row."""
    full = [r for r in stored("alltoall.csv") if r["topology"] == topology and r["mode"] == "small" and
            int(r["message_bytes"]) == size and int(r["rounds"]) == int(r["endpoints"]) - 1]
    samp = [r for r in stored("alltoall_sample.csv") if r["topology"] == topology and r["mode"] == "small" and
            int(r["message_bytes"]) == size and int(r["rounds"]) == rounds and r["sample"] == sample]
    return (float(full[0]["global_bw_share"]) if full else None,
            float(samp[0]["sample_error_pp"]) if samp and samp[0]["sample_error_pp"] else None)


def experiment(args, sizes, run):
    rows = []
    for name in hp.topologies(args):
        config, over = hp.config_of(name, args)
        for size in sizes:
            o = dict(over)
            o.update({"workload.kind": "traffic", "workload.pattern": "alltoall", "workload.message_bytes": size,
                      "workload.messages": args.rounds, "workload.alltoall_sample": args.sample,
                      "output.interval_ns": 0})
            info = run.info(config, o, full=True)  # (the bound of every row, the 16k HyperX's 4 M links too)
            h5, wall, cmd = run.run("alltoall_%s_%d" % (name, size), config, o)
            s, t, e = hp.summary(h5)
            run.done(h5)
            rows.append({
                "mode": hp.mode(args), "topology": name, "label": hp.TOPOLOGIES[name][0],
                "input": os.path.relpath(config, hp.SRC), "endpoints": s["endpoints"],
                "message_bytes": size, "rounds": min(args.rounds or s["endpoints"] - 1, s["endpoints"] - 1),
                "sample": args.sample,
                "global_bw_share": s.get("per_source_share"), "makespan_share": s.get("throughput_share"),
                "steady_share": s.get("steady_share"), "fluid_bound": info["fluid"]["bound"],
                "per_source_bound": info["fluid"]["per_source_bound"],
                "minimal_route_bound": info["fluid"]["throughput_bound"],
                "any_route_bound": (info["fluid"]["any_route"] or {}).get("throughput_bound"),
                "injection_gbps": s["injection_gbps"], "cost_usd": t.get("cost_usd"),
                "cost_planes": t.get("cost_planes"), "relative_bisection": t.get("bisection_relative"),
                "diameter": t.get("diameter"), "sim_time_ns": s["sim_time_ns"], "messages": s["messages"],
                "packet_hops": s["packet_hops"], "run_seconds": e.get("run_seconds"), "wall_seconds": round(wall, 3),
                "fabricsim": run.version, "command": cmd,
            })
            r = rows[-1]
            # A sample: its error against the full run (the small cluster's
            # own; for the large cluster, what the same sample gave there).
            r["full_run_share"] = r["sample_error_pp"] = r["small_cluster_error_pp"] = None
            note = ""
            if r["rounds"] < s["endpoints"] - 1:
                full, small_err = reference(name, size, r["rounds"], args.sample)
                if hp.mode(args) == "small" and full is not None:
                    r["full_run_share"] = full
                    r["sample_error_pp"] = 100 * (r["global_bw_share"] - full)
                    note = "  %d-round %s sample: full run %5.1f%%, error %+.1f pp" % (
                        r["rounds"], args.sample, 100 * full, r["sample_error_pp"])
                elif hp.mode(args) == "large":
                    r["small_cluster_error_pp"] = small_err
                    note = "  %d-round %s sample: %s" % (
                        r["rounds"], args.sample, "on the small cluster %+.1f pp from the full run" % small_err
                        if small_err is not None else "its error on the small cluster is not in results/")
                else:
                    note = "  %d-round %s sample (no full run to compare in results/)" % (r["rounds"], args.sample)
            def pct(b):
                return "%5.1f%%" % (100 * b) if b is not None else " none "
            print("%-6s %8d B  global bw %5.1f%% (bound %s)  makespan %5.1f%% (bound %s)  %6.1f s%s" % (
                name, size, 100 * r["global_bw_share"], pct(r["per_source_bound"]), 100 * r["makespan_share"],
                pct(r["fluid_bound"]), wall, note), flush=True)
    # Global saving (spec §9): (cost_FT / cost) x (globBW / globBW_FT), per size.
    for r in rows:
        ft = [x for x in rows if x["topology"] == "ft" and x["message_bytes"] == r["message_bytes"]]
        if ft and r["cost_usd"] and ft[0]["global_bw_share"]:
            r["global_saving"] = ft[0]["cost_usd"] / r["cost_usd"] * r["global_bw_share"] / ft[0]["global_bw_share"]
    csv_path = os.path.join(args.out, "alltoall.csv")
    hp.write_csv(csv_path, rows)

    def draw(ax):
        big = max(sizes)
        sel = [r for r in rows if r["message_bytes"] == big]
        xs = range(len(sel))
        ax.bar(xs, [100 * r["global_bw_share"] for r in sel], label="global bandwidth (per accelerator)")
        ax.scatter([x for x, r in zip(xs, sel) if r["per_source_bound"] is not None],
                   [100 * r["per_source_bound"] for r in sel if r["per_source_bound"] is not None], color="black",
                   marker="_", s=400, zorder=3, label="its fluid bound")
        ax.scatter(list(xs), [100 * r["makespan_share"] for r in sel], color="tab:orange", marker="o", zorder=3,
                   label="makespan share")
        ax.scatter([x for x, r in zip(xs, sel) if r["fluid_bound"] is not None],
                   [100 * r["fluid_bound"] for r in sel if r["fluid_bound"] is not None], color="tab:orange",
                   marker="_", s=400, zorder=3, label="its fluid bound")
        ax.set_xticks(list(xs), [r["topology"] for r in sel])
        ax.set_ylabel("% of injection bandwidth")
        ax.set_title("alltoall, %d B messages (%s)" % (big, hp.mode(args)))
        ax.set_ylim(0, 105)
        ax.legend()
    png = os.path.join(args.out, "alltoall.png")
    hp.figure(png, draw)
    print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    hp.main(main)
