#!/usr/bin/env python3
"""Motivation (the paper's section III-B; spec 6): All-Reduce by Ring, Direct
and TACOS-Greedy on a FullyConnected graph, a bidirectional Ring and a 10 x 10
Mesh with xy routing, 100 NPUs each, alpha 0.5 us, 100 GB/s, in the paper's
link model; times normalized to the best algorithm on each topology.

  jobs/papers/tacos/motivation.py [--quick] [--npus 100] [--chunk-kib 1024] [--out DIR]

--quick: 16 NPUs (a 4 x 4 mesh).  Writes OUT/motivation.csv and OUT/motivation.png.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

ALGS = ["ring", "direct", "greedy"]


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--npus", type=tp.integer(4, 4096), default=None,
                   help="NPUs per topology, a square (default 100; --quick 16)")
    args = tp.parse(p, ["motivation.csv", "motivation.png"])
    n = args.npus or (16 if args.quick else 100)
    side = math.isqrt(n)
    if side * side != n:
        tp.fail("--npus", "%d is not a square (the mesh is side x side)" % n)
    chunk = args.chunk_kib * 1024
    topologies = [
        ("FullyConnected", tp.NPU_GRAPH, tp.graph_overrides("fully_connected", [n])),
        ("Ring", tp.NPU_GRAPH, tp.graph_overrides("bidirectional_ring", [n])),
        ("Mesh %dx%d (xy)" % (side, side), tp.MESH_XY, tp.mesh_overrides(side, side)),
    ]
    rows = []
    with tp.Runner(args) as run:
        for name, config, topo in topologies:
            for a in ALGS:
                o = dict(topo, **tp.size_overrides(n, chunk), **tp.algorithm_overrides(args, a))
                o["workload.op"] = "allreduce"
                r = tp.one(run, "%s_%s" % (name.split()[0].lower(), a), config, o)
                rows.append(dict({"topology": name, "npus": n, "algorithm": a, "label": tp.label(a),
                                  "chunk_bytes": chunk, "alpha_ns": tp.ALPHA_NS, "gbps": tp.GBPS}, **r))
        tp.normalize(rows, ["topology"])
        for name, _, _ in topologies:
            sel = [r for r in rows if r["topology"] == name]
            print("%-18s %s" % (name, "  ".join("%s %.1f us (%.2fx)" % (r["label"], r["time_us"], r["normalized"])
                                                 for r in sel)), flush=True)
        for a in ("ring", "direct"):
            sp = [r["time_us"] / t["time_us"] for r in rows if r["algorithm"] == a
                  for t in rows if t["algorithm"] == "greedy" and t["topology"] == r["topology"]]
            print("TACOS-Greedy over %s: %.2fx faster (geometric mean over the %d topologies)" % (
                tp.label(a), tp.geomean(sp), len(sp)))
        csv_path = os.path.join(args.out, "motivation.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "motivation.png")
        names = [t[0] for t in topologies]
        tp.figure(png, lambda ax: (tp.bars(ax, names, ALGS, lambda r: r["normalized"], rows, key="topology",
                                           ylabel="All-Reduce time / best"),
                                   ax.set_title("All-Reduce, %d NPUs, %d KiB per NPU, alpha 0.5 us, 100 GB/s" % (
                                       n, args.chunk_kib))))
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
