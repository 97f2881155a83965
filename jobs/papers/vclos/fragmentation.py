#!/usr/bin/env python3
"""Fragmentation (the paper's section 9, the fragmentation study; spec 8, 9):
how many times a job at the head of the FIFO queue could not be placed, by
cause, on CLUSTER512 at several loads: GPU (not enough idle servers) or
network (enough, but no virtual Clos fits: vClos only), for vClos, with
whole_server + ECMP (refused for GPUs only) for contrast.  One mix of
collective jobs (spec 6.2's GPU counts, Poisson arrivals) per load, every
scheme on the same mix.

  jobs/papers/vclos/fragmentation.py [--quick] [--interarrival-ms 2.25,2.5,...] [--jobs 5000]
                                     [--schemes vclos,ecmp] [--seed 1] [--out DIR]

The paper sweeps lambda = 100..130 s with trace-length jobs; these jobs are
short, so the sweep is over --interarrival-ms, from overload (2.25 ms, GPU
utilization ~84%) to light load (4.5 ms, ~47%); the paper's 100, 110, 120,
130 s are 2.5, 2.75, 3.0, 3.25 ms here by the same relative spacing
(README.md).  --quick: 400 jobs at 2, 2.5 and 3 ms.  Writes
OUT/fragmentation.csv, OUT/fragmentation.png and the mixes (OUT/mix*.toml).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vclospaper as vp  # noqa: E402

LOADS = [2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 4.0, 4.5]
QUICK_LOADS = [2.0, 2.5, 3.0]
CLUSTER = "512"


def main():
    p = vp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--interarrival-ms", type=vp.positive_float_list("inter-arrival times (ms)", 1e6), default=None,
                   help="comma-separated mean inter-arrival times, ms (default %s; --quick %s)" % (
                       ",".join(vp.ms_text(x) for x in LOADS), ",".join(vp.ms_text(x) for x in QUICK_LOADS)))
    p.add_argument("--jobs", type=vp.integer(1, 100000), default=None,  # noqa: F405
                   help="jobs per mix (default 5000, the paper's; --quick 400)")
    p.add_argument("--schemes", type=vp.name_list("scheme", vp.SCHEME_NAMES), default=["vclos", "ecmp"],
                   help="comma-separated: %s (default vclos,ecmp)" % ", ".join(vp.SCHEME_NAMES))
    args = vp.parse(p, ["fragmentation.csv", "fragmentation.png"])
    loads = sorted(args.interarrival_ms or (QUICK_LOADS if args.quick else LOADS))
    jobs = args.jobs or (400 if args.quick else 5000)
    base, endpoints, cname = vp.CLUSTERS[CLUSTER]
    rows = []
    with vp.Runner(args) as run:
        for ia in loads:
            mix, mix_cmd = vp.poisson_mix(run, CLUSTER, jobs, ia)
            for s in args.schemes:
                r = vp.cluster_run(run, "ia%s_%s" % (vp.ms_text(ia), s), mix, vp.scheme_overrides(s, endpoints))
                rows.append(dict({"cluster": CLUSTER, "endpoints": endpoints, "scheme": s, "label": vp.label(s),
                                  "interarrival_ms": ia, "lambda_equivalent_s": ia * vp.LAMBDA_S_PER_MS,
                                  "seed": args.seed, "model": "flow"}, **r, mix_command=mix_cmd))
                print("%s ms (lambda ~%g s)  %-5s  refused: gpus %5d, network %4d | GPU utilization %.1f%%, "
                      "offered %.1f%% | mean JWT %8.2f ms, JCT %8.2f ms | placed: %s  (%.1f s)" % (
                          vp.ms_text(ia), ia * vp.LAMBDA_S_PER_MS, vp.label(s),
                          r["refused_gpus"], r["refused_network"], 100 * r["gpu_utilization"],
                          100 * r["offered_load"], r["mean_jwt_ms"], r["mean_jct_ms"],
                          ", ".join("%s %d" % (st, r["placed_" + st]) for st in vp.STAGES if r["placed_" + st]),
                          r["wall_s"]), flush=True)
        v = [r for r in rows if r["scheme"] == "vclos"]
        if v:
            tot = sum(r["refused_gpus"] + r["refused_network"] for r in v)
            print("vClos: %d refusals over %d loads, %.1f%% of them for the network (no virtual Clos)" % (
                tot, len(v), 100.0 * sum(r["refused_network"] for r in v) / tot if tot else 0.0))
        csv_path = os.path.join(args.out, "fragmentation.csv")
        vp.write_csv(csv_path, [vp.public(r) for r in rows])
        png = os.path.join(args.out, "fragmentation.png")
        draw(png, rows, loads, args.schemes, jobs, cname)
        print("wrote %s and %s" % (csv_path, png))


def draw(png, rows, loads, schemes, jobs, cname):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(schemes)
    for i, s in enumerate(schemes):
        sel = {r["interarrival_ms"]: r for r in rows if r["scheme"] == s}
        xs = [j + i * width for j in range(len(loads))]
        g = [sel[ia]["refused_gpus"] for ia in loads]
        n = [sel[ia]["refused_network"] for ia in loads]
        a1.bar(xs, g, width, color="C%d" % i, label="%s: GPU" % vp.label(s))
        if any(n) or s == "vclos":
            a1.bar(xs, n, width, bottom=g, color="C%d" % i, hatch="///", edgecolor="white",
                   label="%s: network" % vp.label(s))
        a2.plot(loads, [sel[ia]["mean_jwt_ms"] for ia in loads], marker="o", color="C%d" % i,
                label="%s (GPUs busy %.0f%%..%.0f%%)" % (
                    vp.label(s), 100 * min(sel[ia]["gpu_utilization"] for ia in loads),
                    100 * max(sel[ia]["gpu_utilization"] for ia in loads)))
    ticks = []
    for ia in loads:
        ticks.append("%s ms\n(~%g s)" % (vp.ms_text(ia), ia * vp.LAMBDA_S_PER_MS))
    a1.set_xticks([j + 0.4 - width / 2 for j in range(len(loads))], ticks, fontsize="small")
    a1.set_xlabel("mean inter-arrival (the paper's lambda by the same spacing)")
    a1.set_ylabel("times a job could not be placed")
    a1.set_title("%s, %d jobs: refusals by cause" % (cname.split(" ")[0], jobs), fontsize="medium")
    a1.legend(fontsize="small")
    a2.set_yscale("symlog", linthresh=1.0)
    a2.set_xlabel("mean inter-arrival (ms)")
    a2.set_ylabel("mean JWT (ms)")
    a2.set_title("waiting in the queue", fontsize="medium")
    a2.grid(True, alpha=0.3)
    a2.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    vp.main(main)
