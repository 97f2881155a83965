#!/usr/bin/env python3
"""All-Reduce time by routing scheme (the routing paper's Figs. 4-8; spec
5.5, 5.6, 7): every job mix of the paper (ring sizes 2, 4, 8; 1-5 jobs)
under ECMP with the paper's hash, Greedy, Edge-Coloring, Simulated
Annealing and the ILP, with 0, 1, 4 and 8 failed spines (the highest ids,
on ring sizes 4 and 8); per job the All-Reduce time (max over its rings,
mean over iterations), its ratio to the contention-free time, FCT and
throughput, and per run the controller's decisions.

  jobs/papers/ml_routing/allreduce.py [--quick | --packet | --slurm] [--scenarios 4:2,...] [--out DIR]

Default: the whole grid in the flow model (the paper's fluid max-min
simulator).  --packet: a representative subset at packet level, flows scaled
down (--scale).  --slurm: the whole grid at packet level as a Slurm array.
Writes OUT/allreduce.csv (OUT/allreduce_packet.csv) and a figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlpaper as mp  # noqa: E402


def main():
    p = mp.parse_args(__doc__.split("\n\n")[0])
    level = p.add_mutually_exclusive_group()
    level.add_argument("--packet", action="store_true", help="the packet model, flows scaled by --scale")
    level.add_argument("--slurm", action="store_true",
                       help="write OUT/packet.sbatch: the whole grid at packet level, one task per mix and failure")
    p.add_argument("--scale", type=float, default=1e-3,
                   help="--packet, --slurm: flow sizes and compute gaps times this (default 1e-3: GB flows become "
                        "0.3-7 MB, 67-1,800 packets of 4 KiB)")
    p.add_argument("--ntasks", type=mp.integer(1, 1 << 20), default=1, help="--slurm: MPI ranks per task")
    p.add_argument("--time", type=mp.slurm_time, default="4:00:00", help="--slurm: time limit per task")
    p.add_argument("--no-submit", action="store_true", help="--slurm: write the file, do not submit it")
    packet = "--packet" in sys.argv
    args = mp.parse(p, ["allreduce_packet.csv" if packet else "allreduce.csv",
                        "allreduce_packet.png" if packet else "allreduce.png"], large="--slurm" in sys.argv)
    if not (0 < args.scale <= 1):
        mp.fail("--scale", "%r is not in (0, 1]" % args.scale)
    if args.quick:
        scenarios, schemes, failures, iters = [(2, 1), (4, 2)], ["ecmp", "greedy", "edge_coloring"], [0, 4], 2
    elif args.packet:
        scenarios, schemes, failures, iters = [(4, 1), (4, 2), (8, 1)], mp.SCHEMES, [0, 4], 2
    else:
        scenarios, schemes, failures, iters = mp.SCENARIOS, mp.SCHEMES, mp.FAILURES, 10
    scenarios = args.scenarios or scenarios
    schemes = args.schemes or schemes
    failures = args.failures or failures
    iters = args.iterations or iters
    if args.slurm:
        tasks = []
        for ring, jobs in scenarios:
            for k in failures:
                if k and ring == 2 and not args.failures:
                    continue
                tasks.append("--packet --scenarios %d:%d --failures %d --schemes %s --iterations %d --scale %r "
                             "--ilp-time-limit %r --out %s" % (ring, jobs, k, ",".join(schemes), iters, args.scale,
                                                               args.ilp_time_limit,
                                                               os.path.join(os.path.abspath(args.out),
                                                                            "r%d_j%d_f%d" % (ring, jobs, k))))
        mp.write_array_job(args, __file__, tasks, "ml-routing-packet",
                           "the routing paper's grid at packet level, one mix and failure count per task")
        return
    with mp.Runner(args) as run:
        experiment(args, run, scenarios, schemes, failures, iters)


def experiment(args, run, scenarios, schemes, failures, iters):
    rows = []
    level = "packet" if args.packet else "flow"
    for ring, jobs in scenarios:
        for k in failures:
            if k and ring == 2 and not args.failures:
                continue  # (the paper evaluated failures at ring sizes 4 and 8)
            config = mp.config_with_failures(run, k)
            for scheme in schemes:
                o = {"llm.mix": "paper", "llm.ring": ring, "llm.jobs": jobs, "llm.iterations": iters,
                     "controller.algorithm": scheme, "controller.ilp_time_limit_s": args.ilp_time_limit}
                if args.packet:
                    o.update({"network.model": "packet", "llm.size_scale": args.scale, "llm.time_scale": args.scale})
                h5, wall, cmd = run.run("r%d_j%d_f%d_%s" % (ring, jobs, k, scheme), config, o)
                t = mp.llm_tables(h5)
                run.done(h5)
                dec = t["decisions"]
                s = t["summary"]
                ratios = []
                for j, job in enumerate(t["jobs"]):
                    ratio = job["allreduce_mean_ns"] / job["allreduce_ideal_ns"]
                    ratios.append(ratio)
                    rows.append({
                        "level": level, "ring": ring, "jobs": jobs, "failed_spines": k, "scheme": scheme, "job": j,
                        "model": job["model"], "data_parallel": job["data_parallel"], "gpus": job["gpus"],
                        "tors": job["tors"], "flow_bytes": job["flow_bytes"], "iterations": job["iterations_done"],
                        "allreduce_ms": job["allreduce_mean_ns"] / 1e6, "ideal_ms": job["allreduce_ideal_ns"] / 1e6,
                        "ratio_to_ideal": ratio, "fct_ms": job["fct_mean_ns"] / 1e6,
                        "throughput_gbps": job["throughput_mean_gbps"],
                        "decisions": len(dec), "max_commodities": max((d["commodities"] for d in dec), default=0),
                        "max_link_load": max((d["max_link_load"] for d in dec), default=0),
                        "decision_wall_us_mean": (sum(d["wall_us"] for d in dec) / len(dec)) if dec else 0,
                        "decision_wall_us_max": max((d["wall_us"] for d in dec), default=0),
                        "ilp_unproven": sum(1 for d in dec if scheme == "ilp" and not d["optimal"]),
                        "repinned": sum(d["repinned"] for d in dec),
                        "bytes_stranded": s.get("bytes_stranded"), "messages_failed": s.get("messages_failed"),
                        "scale": args.scale if args.packet else 1, "wall_seconds": round(wall, 3),
                        "fabricsim": run.version, "command": cmd,
                    })
                print("ring %d, %d job%s, %d spine%s down, %-13s  allreduce / ideal: mean %.3f, max %.3f  "
                      "(max link load %d; %.1f s)" % (ring, jobs, "" if jobs == 1 else "s", k, "" if k == 1 else "s",
                                                     scheme, sum(ratios) / len(ratios), max(ratios),
                                                     rows[-1]["max_link_load"], wall), flush=True)
    name = "allreduce_packet" if args.packet else "allreduce"
    csv_path = os.path.join(args.out, name + ".csv")
    mp.write_csv(csv_path, rows)
    png = os.path.join(args.out, name + ".png")
    draw(png, rows, schemes, failures, level)
    print("wrote %s and %s" % (csv_path, png))


def draw(png, rows, schemes, failures, level):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [k for k in failures if any(r["failed_spines"] == k for r in rows)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.2 * len(panels)), squeeze=False)
    for ax, k in zip(axes[:, 0], panels):
        mixes = sorted({(r["ring"], r["jobs"]) for r in rows if r["failed_spines"] == k})
        width = 0.8 / len(schemes)
        for i, scheme in enumerate(schemes):
            ys = []
            for mix in mixes:
                sel = [r["ratio_to_ideal"] for r in rows
                       if (r["ring"], r["jobs"]) == mix and r["failed_spines"] == k and r["scheme"] == scheme]
                ys.append(sum(sel) / len(sel) if sel else float("nan"))
            ax.bar([x + i * width for x in range(len(mixes))], ys, width, label=scheme)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(mixes))], ["ring %d\n%d job%s" % (r, j, "" if j == 1 else "s")
                                                                          for r, j in mixes])
        ax.set_ylabel("All-Reduce / ideal")
        ax.set_title("%d failed spine%s (%s model; mean over jobs)" % (k, "" if k == 1 else "s", level))
        ax.axhline(1.0, color="black", linewidth=0.5)
    axes[0, 0].legend(ncol=len(schemes), fontsize="small")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    mp.main(main)
