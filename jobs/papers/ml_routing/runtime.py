#!/usr/bin/env python3
"""Controller runtime against the number of commodities (the routing
paper's Fig. 9; spec 7): every decision of every scheme over the paper's job
mixes (96 to 1,728 commodities), its wall time on one core as fabricsim
records it (/llm/decisions/wall_us: the algorithm alone, without the
released code's 100 ms of file exchange), 10 iterations per job (--quick: 1), as the paper.

  jobs/papers/ml_routing/runtime.py [--quick] [--scenarios 4:5,...] [--schemes greedy,ilp] [--out DIR]

Writes OUT/runtime.csv (one row per decision) and OUT/runtime.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlpaper as mp  # noqa: E402


def main():
    p = mp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--ilp-cold", action="store_true",
                   help="run the ILP as CBC alone (controller.ilp_start = \"cold\", the paper's ILP baseline) "
                        "instead of from greedy and the colouring")
    args = mp.parse(p, ["runtime.csv", "runtime.png"])
    scenarios = args.scenarios or ([(2, 1), (4, 2)] if args.quick else mp.SCENARIOS)
    schemes = args.schemes or mp.SCHEMES
    with mp.Runner(args) as run:
        rows = []
        for ring, jobs in scenarios:
            for scheme in schemes:
                o = {"llm.mix": "paper", "llm.ring": ring, "llm.jobs": jobs,
                     "llm.iterations": args.iterations or (1 if args.quick else 10), "controller.algorithm": scheme,
                     "controller.ilp_time_limit_s": args.ilp_time_limit,
                     "controller.ilp_start": "cold" if args.ilp_cold else "heuristics"}
                h5, wall, cmd = run.run("r%d_j%d_%s" % (ring, jobs, scheme), mp.INPUT, o)
                t = mp.llm_tables(h5)
                run.done(h5)
                for d in t["decisions"]:
                    rows.append({"ring": ring, "jobs": jobs, "scheme": scheme, "time_ns": d["time_ns"],
                                 "trigger": d["trigger"], "commodities": d["commodities"],
                                 "max_link_load": d["max_link_load"], "wall_us": d["wall_us"],
                                 "optimal": d["optimal"], "solved": d["solved"], "fabricsim": run.version,
                                 "command": cmd})
                sel = [r for r in rows if (r["ring"], r["jobs"], r["scheme"]) == (ring, jobs, scheme)]
                print("ring %d, %d job%s, %-13s %3d decisions, up to %4d commodities, wall time max %10.1f us" % (
                    ring, jobs, "" if jobs == 1 else "s", scheme, len(sel),
                    max((r["commodities"] for r in sel), default=0), max((r["wall_us"] for r in sel), default=0)),
                    flush=True)
        csv_path = os.path.join(args.out, "runtime.csv")
        mp.write_csv(csv_path, rows)

        def draw(ax):
            for scheme in schemes:
                sel = [r for r in rows if r["scheme"] == scheme and r["commodities"] > 0]
                ax.scatter([r["commodities"] for r in sel], [r["wall_us"] / 1e3 for r in sel], s=10, label=scheme)
            ax.set_xlabel("commodities (inter-ToR ring flows planned)")
            ax.set_ylabel("decision wall time (ms, one core)")
            ax.set_yscale("log")
            ax.axhline(10, color="black", linewidth=0.5, linestyle="--")
            ax.legend()
        png = os.path.join(args.out, "runtime.png")
        mp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    mp.main(main)
