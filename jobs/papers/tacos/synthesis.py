#!/usr/bin/env python3
"""Synthesis quality (the paper's section VIII-A, Table I; spec 6, 7): Ring,
Direct, TACCL-like, TACOS-ILP and TACOS-Greedy on a 5 x 5 Mesh (100 GB/s,
xy routing for the baselines), DragonFly 4x5 (400_200 GB/s) and
Switch_Switch 8x4 (300_25 GB/s, unwound), alpha 0.5 us; collective times
normalized to the best algorithm on each topology, synthesis times in
brackets.  The ILPs (CBC) stop at --ilp-time-limit per call and complete the
schedule by shortest paths (early termination, spec 4.3).

  jobs/papers/tacos/synthesis.py [--quick] [--ops allreduce,allgather] [--ilp-time-limit 600] [--out DIR]

--quick: a 3 x 3 mesh instead of 5 x 5 and a 2 s limit.  Writes
OUT/synthesis.csv and OUT/synthesis.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

ALGS = ["ring", "direct", "taccl", "ilp", "greedy"]
OPS = ["allreduce", "allgather", "reduce_scatter"]
TOPOLOGIES = ["mesh", "dragonfly", "switch_switch"]


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    tp.add_ilp_options(p, 600.0, 2.0)
    p.add_argument("--ops", type=tp.name_list("operation", OPS), default=["allreduce"],
                   help="comma-separated collectives (default allreduce; the paper's table)")
    p.add_argument("--topologies", type=tp.name_list("topology", TOPOLOGIES), default=TOPOLOGIES,
                   help="comma-separated subset of: " + ", ".join(TOPOLOGIES))
    p.add_argument("--algorithms", type=tp.name_list("algorithm", ALGS), default=ALGS,
                   help="comma-separated subset of: " + ", ".join(ALGS))
    p.add_argument("--mesh", type=tp.integer(2, 64), default=None, help="the mesh's side (default 5; --quick 3)")
    args = tp.parse(p, ["synthesis.csv", "synthesis.png"])
    side = args.mesh or (3 if args.quick else 5)
    chunk = args.chunk_kib * 1024
    all_topologies = {
        "mesh": ("Mesh %dx%d" % (side, side), tp.MESH_XY, tp.mesh_overrides(side, side), side * side),
        "dragonfly": ("DragonFly 4x5", tp.NPU_GRAPH, tp.graph_overrides("dragonfly_4x5", [1]), 20),
        "switch_switch": ("Switch_Switch 8x4", tp.NPU_GRAPH, tp.graph_overrides("switch_switch_8x4", [1]), 32),
    }
    topologies = [all_topologies[t] for t in args.topologies]
    rows = []
    with tp.Runner(args) as run:
        for op in args.ops:
            for name, config, topo, n in topologies:
                for a in args.algorithms:
                    o = dict(topo, **tp.size_overrides(n, chunk), **tp.algorithm_overrides(args, a))
                    o["workload.op"] = op
                    r = tp.one(run, "%s_%s_%s" % (op, name.split()[0].lower(), a), config, o)
                    rows.append(dict({"op": op, "topology": name, "npus": n, "algorithm": a, "label": tp.label(a),
                                      "chunk_bytes": chunk,
                                      "ilp_time_limit_s": args.ilp_time_limit if a in tp.ILP_LIKE else ""}, **r))
                    print("%-9s %-18s %-13s %10.2f us  synthesis %s%s" % (
                        op, name, tp.label(a), r["time_us"], tp.seconds(r["synthesis_s"]) if a in
                        tp.SYNTHESIZED else "-", ("  [%s]" % r["ilp_status"]) if r["ilp_status"] else ""),
                        flush=True)
        tp.normalize(rows, ["op", "topology"])
        print("\nnormalized to the best per topology (synthesis time):")
        for op in args.ops:
            for name, _, _, _ in topologies:
                sel = [r for r in rows if r["op"] == op and r["topology"] == name]
                print("%-9s %-18s %s" % (op, name, "  ".join(
                    "%s %.2f%s" % (r["label"], r["normalized"],
                                   " (%s)" % tp.seconds(r["synthesis_s"]) if r["algorithm"] in tp.SYNTHESIZED
                                   else "") for r in sel)))
        for a in args.algorithms:
            if a != "greedy" and "greedy" in args.algorithms:
                sp = [r["time_us"] / g["time_us"] for r in rows if r["algorithm"] == a for g in rows
                      if g["algorithm"] == "greedy" and (g["op"], g["topology"]) == (r["op"], r["topology"])]
                print("%s / TACOS-Greedy: %.3f (geometric mean)" % (tp.label(a), tp.geomean(sp)))
        csv_path = os.path.join(args.out, "synthesis.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "synthesis.png")
        groups = ["%s\n%s" % (t[0], op) for op in args.ops for t in topologies]
        for r in rows:
            r["config"] = "%s\n%s" % (r["topology"], r["op"])

        def draw(ax):
            tp.bars(ax, groups, args.algorithms, lambda r: r["normalized"], rows, ylabel="collective time / best",
                    brackets=lambda r: "(%s)" % tp.seconds(r["synthesis_s"]) if r["algorithm"] in
                    tp.SYNTHESIZED else None)
            ax.set_title("Synthesis quality\n(ILP limit %g s per call; synthesis time in brackets)" %
                         args.ilp_time_limit)
        tp.figure(png, draw)
        for r in rows:
            del r["config"]
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
