#!/usr/bin/env python3
"""Other collectives (the paper's section VIII-F; spec 6): Broadcast, Reduce,
Gather and Scatter from / to NPU 2 on a 6 x 6 Mesh (100 GB/s, alpha 0.5 us,
xy routing for the baselines): TACOS-Greedy against the baselines fabricsim
has, Ring (a chain round the ring) and Tree (binary) for Broadcast and
Reduce, Direct for Gather and Scatter; every algorithm moves the buffer in
the same chunks (one per NPU); times normalized to the best per collective.

  jobs/papers/tacos/collectives.py [--quick] [--root 2] [--mesh 6] [--out DIR]

--quick is the same (seconds).  Writes OUT/collectives.csv and OUT/collectives.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

OPS = {"broadcast": ["ring", "tree", "greedy"], "reduce": ["ring", "tree", "greedy"],
       "gather": ["direct", "greedy"], "scatter": ["direct", "greedy"]}


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--mesh", type=tp.integer(2, 64), default=6, help="the mesh's side (default 6)")
    p.add_argument("--root", type=tp.integer(0, 4095), default=2, help="the root NPU (default 2, as the paper)")
    args = tp.parse(p, ["collectives.csv", "collectives.png"])
    side = args.mesh
    n = side * side
    if args.root >= n:
        tp.fail("--root", "%d is not an NPU of the %dx%d mesh" % (args.root, side, side))
    chunk = args.chunk_kib * 1024
    rows = []
    with tp.Runner(args) as run:
        for op, algs in OPS.items():
            for a in algs:
                o = dict(tp.mesh_overrides(side, side), **tp.size_overrides(n, chunk),
                         **tp.algorithm_overrides(args, a))
                o.update({"workload.op": op, "workload.root": args.root})
                r = tp.one(run, "%s_%s" % (op, a), tp.MESH_XY, o)
                rows.append(dict({"mesh": "%dx%d" % (side, side), "npus": n, "root": args.root, "algorithm": a,
                                  "label": tp.label(a), "chunk_bytes": chunk}, **r))
        tp.normalize(rows, ["op"])
        for op in OPS:
            print("%-9s %s" % (op, "  ".join("%s %.1f us (%.2fx)" % (r["label"], r["time_us"], r["normalized"])
                                             for r in rows if r["op"] == op)), flush=True)
        sp = [min(b["time_us"] for b in rows if b["op"] == op and b["algorithm"] != "greedy") /
              next(g["time_us"] for g in rows if g["op"] == op and g["algorithm"] == "greedy") for op in OPS]
        print("TACOS-Greedy over the best baseline: %.2fx faster (geometric mean over the 4 collectives)" %
              tp.geomean(sp))
        csv_path = os.path.join(args.out, "collectives.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "collectives.png")
        tp.figure(png, lambda ax: (
            tp.bars(ax, list(OPS), ["ring", "tree", "direct", "greedy"], lambda r: r["normalized"], rows, key="op",
                    ylabel="time / best"),
            ax.set_title("Mesh %dx%d, root NPU %d, %d x %d KiB" % (side, side, args.root, n, args.chunk_kib))))
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
