#!/usr/bin/env python3
"""Dedicated cluster (the paper's section 5.3, Figs. 11-12; spec 2.3, 3, 5.1):
one training job over every GPU of n servers of 4 GPUs, for each model and
each (d, B): TopoOpt built from the job's own traffic (TOPOLOGYFINDER,
topology.construction = "job") against the Ideal Switch (one link of d x B
per server), the full-bisection Fat-tree of the same cost (its link speed
the fastest listed one whose paper cost does not exceed TopoOpt's, from
`fabricsim info`) and the Expander (a random d-regular multigraph); cost by
the paper's Table 2 (/topology paper_cost_usd), iteration time from
/iterations, bandwidth tax from /links.  The optical baselines rewire
during the run (OCS-reconfig with and without host forwarding, 10 ms per
reconfiguration every 50 ms; SiP-ML, 25 us): topology.construction =
"ocs_reconfig", "ocs_reconfig_nofw", "sip_ml".

  jobs/papers/topoopt/dedicated.py [--quick] [--servers 128] [--models dlrm,candle,...] [--degrees 4]
                                   [--gbps 100] [--fabrics topoopt,ideal,fattree,expander,ocs_fw,ocs_nofw,sip_ml]
                                   [--seeds 1] [--out DIR]

--quick: 16 servers, DLRM and CANDLE, d = 4, B = 100 Gb/s (seconds).
--seeds S: the Expander, the one random fabric, drawn S times (topology.expander_seed 1..S); its
row gives the mean iteration time, the min and max, and the mean of the link metrics.  Every
other fabric is deterministic (a run repeated gives the same figures bit for bit): one run.
Writes OUT/dedicated.csv and OUT/dedicated.png (iteration time against cost).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topooptpaper as tp  # noqa: E402


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=tp.integer(2, 4394), default=None,
                   help="servers of 4 GPUs (default 128, the paper's; --quick 16)")
    p.add_argument("--models", type=tp.name_list("model", list(tp.MODELS)), default=None,
                   help="comma-separated: %s (default all; --quick dlrm,candle)" % ", ".join(tp.MODELS))
    p.add_argument("--degrees", type=tp.integer_list(1, 64, "degrees"), default=[4],
                   help="comma-separated interfaces per server d (default 4; the paper also runs 8)")
    p.add_argument("--gbps", type=tp.integer_list(1, 1600, "link speeds"), default=[100],
                   help="comma-separated interface speeds B in Gb/s (default 100; the paper: 10,25,40,100,200)")
    p.add_argument("--fabrics", type=tp.name_list("fabric", list(tp.FABRICS)), default=list(tp.FABRICS),
                   help="comma-separated: %s (default all)" % ", ".join(tp.FABRICS))
    p.add_argument("--seeds", type=tp.integer(1, 1000), default=1,
                   help="random Expanders per point (expander_seed 1..S; default 1)")
    args = tp.parse(p, ["dedicated.csv", "dedicated.png"])
    servers = args.servers or (16 if args.quick else 128)
    models = args.models or (["dlrm", "candle"] if args.quick else list(tp.MODELS))
    rows = []
    with tp.Runner(args) as run:
        for model in models:
            for d in args.degrees:
                for b in args.gbps:
                    mo = tp.model_overrides(model, servers)
                    topo = dict(mo, **tp.fabric_overrides("topoopt", servers, d, b))
                    info = run.info(tp.DEDICATED, topo)
                    ft = info.get("cost_equivalent_fat_tree_gbps") or 0
                    for fabric in args.fabrics:
                        if fabric == "fattree" and not ft:
                            tp.fail("fabricsim info", "no listed fat-tree speed costs as little as TopoOpt at "
                                    "n = %d, d = %d, B = %d Gb/s" % (servers, d, b), 1)
                        seeds = range(1, args.seeds + 1) if fabric == "expander" else [1]
                        times, metrics, walls = [], [], 0.0
                        for seed in seeds:
                            o = dict(mo, **tp.fabric_overrides(fabric, servers, d, b, ft, seed))
                            name = "%s_%s_d%d_%dg%s" % (model, fabric, d, b, "_s%d" % seed if seed > 1 else "")
                            h5, wall, c = run.run(name, tp.DEDICATED, o)
                            s, t_, _ = tp.summary(h5)
                            import h5py
                            with h5py.File(h5, "r") as f:
                                it = f["iterations/time_ns"][()]
                                fin = f["iterations/finished"][()]
                            if not fin.all():
                                tp.fail("fabricsim run", "an iteration did not finish (the command: %s)" % c, 1)
                            times.append(float(it.mean()) / 1e6)
                            metrics.append(tp.link_metrics(h5))
                            walls += wall
                            if seed == 1:
                                t, cmd = t_, c
                            if seed < seeds[-1]:
                                run.done(h5)
                        row = {"model": model, "fabric": fabric, "label": tp.FABRICS[fabric], "servers": servers,
                               "gpus": servers * tp.GPUS_PER_SERVER, "degree": d, "gbps": b,
                               "link_gbps": o["network.link_gbps"],
                               "cost_usd": round(t["paper_cost_usd"], 2),
                               "iteration_ms": sum(times) / len(times), "runs": len(times),
                               "iteration_ms_min": min(times), "iteration_ms_max": max(times)}
                        row.update({k: sum(m[k] for m in metrics) / len(metrics) for k in metrics[0]})
                        desc = t.get("description", "")
                        if len(times) > 1:
                            cmd += "  # and topology.expander_seed = 2..%d" % len(times)
                        row.update({"description": desc.decode() if isinstance(desc, bytes) else desc,
                                    "wall_s": round(walls, 2),
                                    "fabricsim": run.version, "command": cmd})
                        rows.append(row)
                        print("%-8s d=%d B=%4d  %-22s %9.3f ms  $%12.0f  tax %.2f" % (
                            model, d, b, tp.FABRICS[fabric], row["iteration_ms"], row["cost_usd"],
                            row["bandwidth_tax"]), flush=True)
                        run.done(h5)
        csv_path = os.path.join(args.out, "dedicated.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "dedicated.png")

        def draw(ax):
            # Colour: the model; marker: the fabric (two legends).
            marks = {"topoopt": "o", "ideal": "*", "fattree": "s", "expander": "^", "ocs_fw": "D", "ocs_nofw": "d",
                     "sip_ml": "v"}
            colours = ["C%d" % i for i in range(10)]
            for i, model in enumerate(models):
                for fabric in args.fabrics:
                    pts = [(r["cost_usd"] / 1e6, r["iteration_ms"]) for r in rows
                           if r["model"] == model and r["fabric"] == fabric]
                    if pts:
                        ax.scatter(*zip(*pts), marker=marks[fabric], color=colours[i % 10], s=50)
            from matplotlib.lines import Line2D
            first = ax.legend(handles=[Line2D([], [], color=colours[i % 10], marker="o", ls="", label=m)
                                       for i, m in enumerate(models)], fontsize=7, loc="upper left", title="model")
            ax.add_artist(first)
            ax.legend(handles=[Line2D([], [], color="gray", marker=marks[f], ls="", label=tp.FABRICS[f])
                               for f in args.fabrics], fontsize=7, loc="upper right", title="fabric")
            ax.set_xlabel("cost (M$, TopoOpt paper Table 2)")
            ax.set_ylabel("iteration time (ms)")
            ax.set_yscale("log")
            ax.set_title("Dedicated cluster: %d servers x 4 GPUs, d = %s, B = %s Gb/s" % (
                servers, ",".join(map(str, args.degrees)), ",".join(map(str, args.gbps))))
        tp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
