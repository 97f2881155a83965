#!/usr/bin/env python3
"""Early termination against time clustering (the paper's section VIII-D;
spec 4.3, 4.4, 6): TACOS-ILP on 2D tori (Ring_Ring) of 8 x 8, 10 x 10 and
12 x 12 NPUs (100 GB/s, alpha 0.5 us) stopped at a time limit and completed
by shortest paths (early termination; the paper's 10 / 15 / 20 min), against
the ILP in windows of the graph's diameter (time clustering) given the same
budget, with TACOS-Greedy for reference: collective time normalized to the
best, and synthesis time.

  jobs/papers/tacos/early_termination.py [--quick] [--sides 8,10,12] [--limits 600,900,1200]
                                         [--op allgather] [--out DIR]

--quick: 4 x 4 and 5 x 5 with 2 s.  Writes OUT/early_termination.csv and
OUT/early_termination.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

ALGS = ["ilp", "ilp_tc", "greedy"]
PAPER_LIMITS = {8: 600, 10: 900, 12: 1200}  # the paper's 10, 15 and 20 min


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    tp.add_ilp_options(p, None, None)
    p.add_argument("--sides", type=tp.integer_list(2, 64, "torus sides"), default=None,
                   help="comma-separated torus sides (default 8,10,12; --quick 4,5)")
    p.add_argument("--limits", type=tp.integer_list(1, 1000000, "time limits"), default=None,
                   help="seconds per ILP call, one per side (default 600,900,1200 for 8, 10, 12: the paper's "
                        "10, 15 and 20 min, 600 for other sides; --quick 2 each); --ilp-time-limit gives one for all")
    p.add_argument("--window-steps", type=tp.integer(0, 1 << 20), default=0,
                   help="time clustering's window in steps (default 0: the diameter of the time-expanded network)")
    p.add_argument("--op", choices=["allgather", "allreduce"], default="allgather",
                   help="the collective (default allgather: one ILP call, so the limit is the whole budget; "
                        "allreduce makes two calls of the limit each)")
    args = tp.parse(p, ["early_termination.csv", "early_termination.png"])
    sides = args.sides or ([4, 5] if args.quick else [8, 10, 12])
    if args.limits and args.ilp_time_limit is not None:
        tp.fail("--limits", "give --limits or --ilp-time-limit, not both")
    if args.limits:
        limits = args.limits
        if len(limits) != len(sides):
            tp.fail("--limits", "%d limits for %d sides (one per side)" % (len(limits), len(sides)))
    elif args.ilp_time_limit is not None:
        limits = [args.ilp_time_limit] * len(sides)
    elif args.quick:
        limits = [2] * len(sides)
    else:
        limits = [PAPER_LIMITS.get(s, 600) for s in sides]
    chunk = args.chunk_kib * 1024
    rows = []
    with tp.Runner(args) as run:
        for side, limit in zip(sides, limits):
            n = side * side
            args.ilp_time_limit = limit
            for a in ALGS:
                o = dict(tp.graph_overrides("ring_ring", [side, side]), **tp.size_overrides(n, chunk),
                         **tp.algorithm_overrides(args, a))
                o["workload.op"] = args.op
                if a == "ilp_tc":
                    o["workload.tacos_ilp_window_steps"] = args.window_steps
                r = tp.one(run, "t%d_%s" % (side, a), tp.NPU_GRAPH, o)
                rows.append(dict({"torus": "%dx%d" % (side, side), "npus": n, "algorithm": a, "label": tp.label(a),
                                  "chunk_bytes": chunk,
                                  "ilp_time_limit_s": limit if a in tp.ILP_LIKE else ""}, **r))
                print("Ring_Ring %2dx%-2d %-27s %9.2f us  synthesis %-8s %s" % (
                    side, side, tp.label(a), r["time_us"], tp.seconds(r["synthesis_s"]),
                    ("[limit %g s: %s]" % (limit, r["ilp_status"])) if r["ilp_status"] else ""), flush=True)
        tp.normalize(rows, ["torus"])
        for side in sides:
            sel = [r for r in rows if r["torus"] == "%dx%d" % (side, side)]
            print("%dx%d normalized: %s" % (side, side, "  ".join("%s %.2f (%s)" % (
                r["label"], r["normalized"], tp.seconds(r["synthesis_s"])) for r in sel)))
        csv_path = os.path.join(args.out, "early_termination.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "early_termination.png")
        groups = ["%dx%d" % (s, s) for s in sides]
        tp.figure(png, lambda ax: (
            tp.bars(ax, groups, ALGS, lambda r: r["normalized"], rows, key="torus", ylabel="%s time / best" % args.op,
                    brackets=lambda r: "(%s)" % tp.seconds(r["synthesis_s"])),
            ax.set_title("Ring_Ring: early termination vs time clustering\n"
                         "(ILP limits %s s; synthesis time in brackets)"
                         % ",".join("%g" % x for x in limits))))
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
