#!/usr/bin/env python3
"""Schemes (the paper's sections 9.2 and 9.5; spec 5.5, 8): 5,000 jobs
(spec 6.2's GPU counts, Poisson arrivals, collective jobs) on CLUSTER512 and
CLUSTER2048, each scheme on the same mix: vClos, OCS-vClos, ECMP, balanced
ECMP, source routing without isolation (SR) and Best (one ideal switch); per run the means of
JWT, JRT and JCT, the median and 99th percentile of JCT, stability (the mean
over job classes of the standard deviation of JCT) and the refusals by
cause.  The flow model, as the paper's simulator; --packet runs the same
mixes at 1/100 of their bytes, compute and inter-arrival times in the packet
model, and in the flow model for comparison (the figure: the packet runs;
balanced ECMP, which counts the flow model's flows per link, is left out).

  jobs/papers/vclos/schemes.py [--quick] [--clusters 512,2048,512b] [--schemes vclos,ecmp,sr,best,ocs,becmp]
                               [--jobs 5000] [--ia-512 2.5] [--ia-2048 0.5,0.625] [--packet [--scale 0.01]]
                               [--seed 1] [--out DIR]

The paper's lambda (120 s on CLUSTER512, 15 s on CLUSTER2048) is for
trace-length jobs; these jobs' mean inter-arrival times are chosen by load
(README.md): CLUSTER512 2.5 ms (the jobs ask for 0.88 of the GPU time the
cluster has while they arrive), CLUSTER2048 0.5 ms (1.10: job_mix.py's
default; the paper too loads its larger cluster more per GPU) and 0.625 ms
(0.88, as CLUSTER512).  --quick: 300 jobs on CLUSTER512 only.  Writes OUT/schemes.csv,
OUT/schemes.png and the mixes (OUT/mix*.toml).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vclospaper as vp  # noqa: E402

IA = {"512": [2.5], "2048": [0.5, 0.625], "512b": [2.5]}  # ms (README.md: the loads)


def main():
    p = vp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--clusters", type=vp.name_list("cluster", list(vp.CLUSTERS)), default=None,
                   help="comma-separated: 512, 2048, 512b (the spec's alternative CLUSTER512, 32 leaves x 16 "
                        "spines; default 512,2048; --quick 512)")
    p.add_argument("--schemes", type=vp.name_list("scheme", vp.CLUSTER_SCHEME_NAMES), default=vp.CLUSTER_SCHEME_NAMES,
                   help="comma-separated: %s (default all)" % ", ".join(vp.CLUSTER_SCHEME_NAMES))
    p.add_argument("--jobs", type=vp.integer(1, 100000), default=None,  # noqa: F405
                   help="jobs per mix (default 5000, the paper's; --quick 300)")
    for c in vp.CLUSTERS:
        p.add_argument("--ia-%s" % c, type=vp.positive_float_list("inter-arrival times (ms)", 1e6), default=None,
                       help="CLUSTER%s's mean inter-arrival time(s), ms, comma-separated (default %s)" % (
                            c, ",".join(vp.ms_text(x) for x in IA[c])))
    p.add_argument("--packet", action="store_true",
                   help="the packet model (and the flow model for comparison), every job's bytes, compute and "
                        "inter-arrival times times --scale (slow: 20-50 s per scheme for 5,000 jobs)")
    p.add_argument("--scale", type=vp.scale_type, default=None,
                   help="with --packet: the mix's scale (default 0.01; > 0, <= 1)")
    args = vp.parse(p, ["schemes.csv", "schemes.png"])
    if args.scale is not None and not args.packet:
        vp.fail("--scale", "scales the --packet runs only (give --packet too)")
    scale = (args.scale or 0.01) if args.packet else 1.0
    clusters = args.clusters or (["512"] if args.quick else vp.DEFAULT_CLUSTERS)
    jobs = args.jobs or (300 if args.quick else 5000)
    models = ["flow", "packet"] if args.packet else ["flow"]
    rows = []
    with vp.Runner(args) as run:
        for c in clusters:
            base, endpoints, cname = vp.CLUSTERS[c]
            spines = vp.spines_of(base)
            for ia in getattr(args, "ia_%s" % c) or IA[c]:
                mix, mix_cmd = vp.poisson_mix(run, c, jobs, ia * scale, scale)
                for model in models:
                    for s in args.schemes:
                        if model == "packet" and s in vp.FLOW_ONLY:
                            continue
                        o = vp.scheme_overrides(s, endpoints, spines, scale=scale)
                        if model == "packet":
                            o["network.model"] = "packet"
                        r = vp.cluster_run(run, "c%s_ia%s_%s_%s" % (c, vp.ms_text(ia), s, model), mix, o)
                        rows.append(dict({"cluster": c, "endpoints": endpoints, "scheme": s, "label": vp.label(s),
                                          "interarrival_ms": ia * scale, "unscaled_interarrival_ms": ia,
                                          "scale": scale, "seed": args.seed, "model": model}, **r,
                                         mix_command=mix_cmd))
                        print("CLUSTER%-4s %s ms %-6s %-5s JWT %8.3f  JRT %8.3f  JCT %8.3f ms (p50 %8.3f, p99 %9.3f) "
                              "| stability %8.3f ms | refused gpus %5d, network %4d | GPUs busy %.1f%%  (%.1f s)" % (
                                  c, vp.ms_text(ia * scale), model, vp.label(s), r["mean_jwt_ms"], r["mean_jrt_ms"],
                                  r["mean_jct_ms"], r["median_jct_ms"], r["p99_jct_ms"], r["stability_ms"],
                                  r["refused_gpus"], r["refused_network"], 100 * r["gpu_utilization"], r["wall_s"]),
                              flush=True)
                    sel = {r["scheme"]: r for r in rows if r["cluster"] == c and r["unscaled_interarrival_ms"] == ia
                           and r["model"] == model}
                    if "vclos" in sel:
                        print("CLUSTER%s, %s model: mean JCT over vClos's: %s" % (c, model, ", ".join(
                            "%s %.3f" % (vp.label(s), sel[s]["mean_jct_ms"] / sel["vclos"]["mean_jct_ms"])
                            for s in args.schemes if s != "vclos" and s in sel)), flush=True)
        csv_path = os.path.join(args.out, "schemes.csv")
        vp.write_csv(csv_path, [vp.public(r) for r in rows])
        png = os.path.join(args.out, "schemes.png")
        draw(png, rows, clusters, models[-1], jobs)
        print("wrote %s and %s" % (csv_path, png))


def draw(png, rows, clusters, model, jobs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = []
    for c in clusters:
        for ia in sorted({r["unscaled_interarrival_ms"] for r in rows if r["cluster"] == c}):
            groups.append((c, ia))
    fig, axes = plt.subplots(1, len(groups), figsize=(6.5 * len(groups), 4.5), squeeze=False)
    for ax, (c, ia) in zip(axes[0], groups):
        sel = [r for r in rows if r["cluster"] == c and r["unscaled_interarrival_ms"] == ia and r["model"] == model]
        vp.jct_cdf(ax, sel, "CLUSTER%s, %d jobs, %s ms apart, %s model" % (
            c, jobs, vp.ms_text(sel[0]["interarrival_ms"]), model))
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    vp.main(main)
