#!/usr/bin/env python3
"""Failures (the paper's section VIII-E; spec 6): All-Reduce on a 4 x 4 Mesh
(100 GB/s, alpha 0.5 us) with NPUs 7 and 9 down from the start, on the 14
live NPUs, by TACOS-Greedy (synthesized without the failed NPUs) against
Ring and Direct (in rank order over the 14, routed around the failures),
next to the same algorithms on the whole 4 x 4 mesh; times normalized to the
best on each.

  jobs/papers/tacos/failures.py [--quick] [--algorithms ring,direct,greedy] [--out DIR]

--quick is the same (seconds).  Writes OUT/failures.csv and OUT/failures.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

ALGS = ["ring", "direct", "taccl", "ilp", "greedy"]
LIVE = [0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 13, 14, 15]  # mesh_failed.toml's endpoints


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    tp.add_ilp_options(p, 60.0, 2.0)
    p.add_argument("--algorithms", type=tp.name_list("algorithm", ALGS), default=["ring", "direct", "greedy"],
                   help="comma-separated subset of: %s (default ring,direct,greedy)" % ", ".join(ALGS))
    args = tp.parse(p, ["failures.csv", "failures.png"])
    chunk = args.chunk_kib * 1024
    cases = [("Mesh 4x4", tp.NPU_GRAPH, dict(tp.graph_overrides("mesh", [4, 4]), **tp.size_overrides(16, chunk)),
              16, ""),
             ("Mesh 4x4, NPUs 7 and 9 failed", tp.MESH_FAILED, tp.size_overrides(len(LIVE), chunk), len(LIVE),
              "7,9")]
    rows = []
    with tp.Runner(args) as run:
        for name, config, base, n, failed in cases:
            for a in args.algorithms:
                o = dict(base, **tp.algorithm_overrides(args, a))
                o["workload.op"] = "allreduce"
                r = tp.one(run, "%s_%s" % ("failed" if failed else "whole", a), config, o)
                rows.append(dict({"case": name, "failed_npus": failed, "live_npus": n, "algorithm": a,
                                  "label": tp.label(a), "chunk_bytes": chunk,
                                  "ilp_time_limit_s": args.ilp_time_limit if a in tp.ILP_LIKE else ""}, **r))
        tp.normalize(rows, ["case"])
        for name, _, _, n, _ in cases:
            print("%-30s (%2d NPUs): %s" % (name, n, "  ".join("%s %.1f us (%.2fx)" % (
                r["label"], r["time_us"], r["normalized"]) for r in rows if r["case"] == name)), flush=True)
        if "greedy" in args.algorithms:
            for a in args.algorithms:
                if a in ("ring", "direct"):
                    sel = {r["case"]: r["time_us"] for r in rows if r["algorithm"] == a}
                    g = {r["case"]: r["time_us"] for r in rows if r["algorithm"] == "greedy"}
                    print("TACOS-Greedy over %s: %.2fx faster on the whole mesh, %.2fx with NPUs 7 and 9 failed" % (
                        tp.label(a), sel[cases[0][0]] / g[cases[0][0]], sel[cases[1][0]] / g[cases[1][0]]))
        csv_path = os.path.join(args.out, "failures.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "failures.png")
        tp.figure(png, lambda ax: (
            tp.bars(ax, [c[0] for c in cases], args.algorithms, lambda r: r["time_us"], rows, key="case",
                    ylabel="All-Reduce time (us)"),
            ax.set_title("All-Reduce, %d KiB per NPU, alpha 0.5 us, 100 GB/s" % args.chunk_kib)))
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
