#!/usr/bin/env python3
"""Global bandwidth of the HammingMesh paper (spec §7.1, §9; Table II's
"global BW" and "global saving"): an alltoall of p - 1 shift rounds (round i:
accelerator j sends to j + i) on every topology of the small cluster; the
per-accelerator achieved injection rate (bytes sent / its completion time) as
a share of its injection bandwidth (1.6 Tb/s), next to the makespan and
steady-state shares, the fluid bound `fabricsim info` computes, the cost and
the global saving against the nonblocking fat tree.

  jobs/papers/hammingmesh/alltoall.py [--quick | --large] [--bytes 1048576,...] [--rounds N] [--out DIR]

Writes OUT/alltoall.csv and OUT/alltoall.png (README.md: what it reproduces,
how long it takes).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hmpaper as hp  # noqa: E402


def main():
    p = hp.parse_args(__doc__.split("\n\n")[0], list(hp.TOPOLOGIES))
    p.add_argument("--bytes", type=hp.integer_list(1, hp.MAX_BYTES, "message sizes in bytes"), default=None,
                   help="comma-separated message sizes (default: 1 MiB as the paper; --quick: 64 KiB)")
    p.add_argument("--rounds", type=hp.integer(0, 1 << 30), default=0,
                   help="shift rounds (default 0: all p - 1, as the paper)")
    args = hp.parse(p, ["alltoall.csv", "alltoall.png"])
    if args.large:
        extra = (["--bytes", ",".join(map(str, args.bytes))] if args.bytes else []) + \
            (["--rounds", str(args.rounds)] if args.rounds else [])
        hp.submit_large(args, __file__, extra)
        return
    sizes = args.bytes or [65536 if args.quick else 1048576]
    with hp.Runner(args) as run:
        experiment(args, sizes, run)


def experiment(args, sizes, run):
    rows = []
    for name in hp.topologies(args):
        config, over = hp.config_of(name, args)
        for size in sizes:
            o = dict(over)
            o.update({"workload.kind": "traffic", "workload.pattern": "alltoall", "workload.message_bytes": size,
                      "workload.messages": args.rounds, "output.interval_ns": 0})
            info = run.info(config, o)
            h5, wall, cmd = run.run("alltoall_%s_%d" % (name, size), config, o)
            s, t, e = hp.summary(h5)
            run.done(h5)
            rows.append({
                "mode": hp.mode(args), "topology": name, "label": hp.TOPOLOGIES[name][0],
                "input": os.path.relpath(config, hp.SRC), "endpoints": s["endpoints"],
                "message_bytes": size, "rounds": args.rounds or s["endpoints"] - 1,
                "global_bw_share": s.get("per_source_share"), "makespan_share": s.get("throughput_share"),
                "steady_share": s.get("steady_share"), "fluid_bound": info["fluid"]["throughput_bound"],
                "injection_gbps": s["injection_gbps"], "cost_usd": t.get("cost_usd"),
                "cost_planes": t.get("cost_planes"), "relative_bisection": t.get("bisection_relative"),
                "diameter": t.get("diameter"), "sim_time_ns": s["sim_time_ns"], "messages": s["messages"],
                "packet_hops": s["packet_hops"], "run_seconds": e.get("run_seconds"), "wall_seconds": round(wall, 3),
                "fabricsim": run.version, "command": cmd,
            })
            print("%-6s %8d B  global bw %5.1f%%  makespan %5.1f%%  fluid bound %5.1f%%  %6.1f s" % (
                name, size, 100 * rows[-1]["global_bw_share"], 100 * rows[-1]["makespan_share"],
                100 * rows[-1]["fluid_bound"], wall), flush=True)
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
        ax.scatter(xs, [100 * r["fluid_bound"] for r in sel], color="black", marker="_", s=400, zorder=3,
                   label="fluid bound")
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
