#!/usr/bin/env python3
"""Multi-tenant collectives (the paper's section VIII-G; spec 6): on one 6 x 6
Mesh (100 GB/s, alpha 0.5 us, xy routing for the baselines) a Broadcast from
NPU 2, a Reduce to NPU 17 and an All-Gather at once, every tenant on all 36
NPUs, against each alone and the three run one after another; by
TACOS-Greedy (each tenant synthesized alone; the tenants share the links)
and by Ring (chains for Broadcast and Reduce, the ring All-Gather).

  jobs/papers/tacos/multitenant.py [--quick] [--algorithms greedy,ring] [--out DIR]

--quick is the same (seconds).  Writes OUT/multitenant.csv and OUT/multitenant.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

TENANTS = [("broadcast", 2), ("reduce", 17), ("allgather", 0)]  # tenants.toml's [[jobs]]
N = 36


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--algorithms", type=tp.name_list("algorithm", ["greedy", "ring"]), default=["greedy", "ring"],
                   help="comma-separated: greedy, ring (default both)")
    args = tp.parse(p, ["multitenant.csv", "multitenant.png"])
    chunk = args.chunk_kib * 1024
    rows = []
    summary = {}
    with tp.Runner(args) as run:
        for a in args.algorithms:
            together = tp.collectives(run, "tenants_%s" % a, tp.TENANTS,
                                      dict(tp.size_overrides(N, chunk), **tp.algorithm_overrides(args, a)))
            if [r["op"] for r in together] != [t[0] for t in TENANTS]:
                tp.fail("fabricsim run", "the tenants are %s, not %s" % ([r["op"] for r in together],
                                                                        [t[0] for t in TENANTS]), 1)
            for r, (op, root) in zip(together, TENANTS):
                rows.append(dict({"mode": "concurrent", "algorithm": a, "label": tp.label(a), "root": root,
                                  "npus": N, "chunk_bytes": chunk}, **r))
            alone = []
            for op, root in TENANTS:
                o = dict(tp.mesh_overrides(6, 6), **tp.size_overrides(N, chunk), **tp.algorithm_overrides(args, a))
                o.update({"workload.op": op, "workload.root": root})
                r = tp.one(run, "alone_%s_%s" % (op, a), tp.MESH_XY, o)
                alone.append(r)
                rows.append(dict({"mode": "alone", "algorithm": a, "label": tp.label(a), "root": root, "npus": N,
                                  "chunk_bytes": chunk}, **r))
            makespan = max(r["end_us"] for r in together) - min(r["start_us"] for r in together)
            sequential = sum(r["time_us"] for r in alone)
            summary[a] = (makespan, sequential, together, alone)
            print("%-13s concurrent: %s; makespan %.1f us | alone: %s; one after another %.1f us (%.2fx the "
                  "concurrent makespan)" % (
                      tp.label(a), ", ".join("%s %.1f us" % (r["op"], r["time_us"]) for r in together), makespan,
                      ", ".join("%s %.1f us" % (r["op"], r["time_us"]) for r in alone), sequential,
                      sequential / makespan), flush=True)
        for r in rows:
            r["concurrent_makespan_us"], r["sequential_us"] = summary[r["algorithm"]][:2]
        if len(summary) == 2:
            print("TACOS-Greedy's concurrent makespan: %.2fx faster than Ring's" % (
                summary["ring"][0] / summary["greedy"][0]))
        csv_path = os.path.join(args.out, "multitenant.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "multitenant.png")

        def draw(ax):
            x = 0
            ticks = []
            for a in args.algorithms:
                makespan, sequential, together, alone = summary[a]
                for i, (r, s) in enumerate(zip(together, alone)):
                    ax.bar(x + i * 0.25, r["time_us"], 0.25, color="C%d" % i, label=r["op"] if x == 0 else None)
                    ax.bar(x + i * 0.25, s["time_us"], 0.25, fill=False, edgecolor="black")
                ax.bar(x + 0.85, sequential, 0.25, color="grey", label="one after another" if x == 0 else None)
                ax.axhline(makespan, xmin=0, xmax=1, color="C3" if a == "greedy" else "C4", linestyle="--",
                           linewidth=0.8, label="%s concurrent makespan" % tp.label(a))
                ticks.append((x + 0.45, tp.label(a)))
                x += 1.5
            ax.set_xticks([t[0] for t in ticks], [t[1] for t in ticks])
            ax.set_ylabel("time (us); outline: alone")
            ax.set_title("Mesh 6x6: Broadcast (2) + Reduce (17) + All-Gather at once")
            ax.legend(fontsize="small")
        tp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
