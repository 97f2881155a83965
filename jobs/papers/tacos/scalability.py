#!/usr/bin/env python3
"""Scalability (the paper's section VIII-B; spec 6): All-Reduce on
Ring_FullyConnected_Switch systems of 1 to 64 nodes of 2 x 4 NPUs (8 to 512
NPUs; 200_100_50 GB/s, the scale-out switch unwound to a ring over nodes),
alpha 0.5 us: TACOS-Greedy's synthesis time and collective time against Ring
and Direct, TACOS-ILP and TACCL-like on the small systems only (the paper
stopped them at 1 h).

  jobs/papers/tacos/scalability.py [--quick] [--nodes 1,2,4,...,64] [--ilp-nodes 1,2] [--out DIR]

--quick: 1, 2 and 4 nodes, the ILPs on 1 node with a 2 s limit.  Writes
OUT/scalability.csv and OUT/scalability.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

BASE = ["ring", "direct", "greedy"]


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    tp.add_ilp_options(p, 600.0, 2.0)
    p.add_argument("--nodes", type=tp.integer_list(1, 4096, "node counts"), default=None,
                   help="comma-separated node counts of 8 NPUs (default 1,2,4,8,16,32,64; --quick 1,2,4)")
    p.add_argument("--ilp-nodes", type=tp.integer_list(0, 4096, "node counts"), default=None,
                   help="the node counts also run with TACOS-ILP and TACCL-like (default 1,2; --quick 1; 0: none)")
    args = tp.parse(p, ["scalability.csv", "scalability.png"])
    nodes = args.nodes or ([1, 2, 4] if args.quick else [1, 2, 4, 8, 16, 32, 64])
    ilp_nodes = [k for k in (args.ilp_nodes or ([1] if args.quick else [1, 2])) if k in nodes]
    chunk = args.chunk_kib * 1024
    rows = []
    with tp.Runner(args) as run:
        for k in nodes:
            n = 8 * k
            algs = BASE + (["ilp", "taccl"] if k in ilp_nodes else [])
            for a in algs:
                o = dict(tp.graph_overrides("ring_fc_switch", [k]), **tp.size_overrides(n, chunk),
                         **tp.algorithm_overrides(args, a))
                o["workload.op"] = "allreduce"
                r = tp.one(run, "n%d_%s" % (k, a), tp.NPU_GRAPH, o)
                rows.append(dict({"nodes": k, "npus": n, "algorithm": a, "label": tp.label(a), "chunk_bytes": chunk,
                                  "ilp_time_limit_s": args.ilp_time_limit if a in tp.ILP_LIKE else ""}, **r))
            tp.normalize(rows, ["nodes"])
            sel = [r for r in rows if r["nodes"] == k]
            print("%2d node%s (%3d NPUs): %s" % (k, " " if k == 1 else "s", n, "  ".join(
                "%s %.1f us (%.2fx%s)" % (r["label"], r["time_us"], r["normalized"],
                                          ", synthesis %s" % tp.seconds(r["synthesis_s"])
                                          if r["algorithm"] in tp.SYNTHESIZED else "") for r in sel)),
                flush=True)
        for a in ("ring", "direct"):
            sp = [r["time_us"] / g["time_us"] for r in rows if r["algorithm"] == a for g in rows
                  if g["algorithm"] == "greedy" and g["nodes"] == r["nodes"]]
            print("TACOS-Greedy over %s: %.2fx faster (geometric mean over %d sizes)" % (tp.label(a), tp.geomean(sp),
                                                                                        len(sp)))
        g = [r for r in rows if r["algorithm"] == "greedy"]
        print("TACOS-Greedy synthesis: %s at %d NPUs to %s at %d NPUs (%d instances)" % (
            tp.seconds(g[0]["synthesis_s"]), g[0]["npus"], tp.seconds(g[-1]["synthesis_s"]), g[-1]["npus"],
            args.instances))
        csv_path = os.path.join(args.out, "scalability.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "scalability.png")
        draw(png, rows)
        print("wrote %s and %s" % (csv_path, png))


def draw(png, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, a in enumerate(("ring", "direct", "taccl", "ilp", "greedy")):
        sel = [r for r in rows if r["algorithm"] == a]
        if sel:
            a1.plot([r["npus"] for r in sel], [r["time_us"] for r in sel], marker="o", color="C%d" % i,
                    label=tp.label(a))
        if sel and a in tp.SYNTHESIZED:
            a2.plot([r["npus"] for r in sel], [max(r["synthesis_s"], 1e-5) for r in sel], marker="o",
                    color="C%d" % i, label=tp.label(a))
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("NPUs (Ring_FC_Switch, 8 per node)")
        ax.legend(fontsize="small")
    a1.set_ylabel("All-Reduce time (us)")
    a2.set_ylabel("synthesis time (s, wall)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    tp.main(main)
