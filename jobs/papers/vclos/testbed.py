#!/usr/bin/env python3
"""Testbed (the paper's sections 6.1 and 8.1; spec 2.4, 6.1): the testbed's
job set on its 32-GPU cluster (8 servers x 4 GPUs, 100 Gb/s NICs, a
leaf-spine of 4 leaves x 8 spines by default: testbed32.toml), FIFO, for
each scheme: 100 jobs, GPU count uniform from {2, 4, 8, 16}, collective
uniform from {ring, hierarchical ring, halving-doubling}, model uniform from
the testbed's models that fabricsim has (VGG16, ResNet-50, BERT data
parallel; DLRM, whose embeddings are an alltoall), batch uniform from the
model's two in Table 3; iterations and arrivals are unpublished (here:
uniform 10..30 iterations, Poisson arrivals 400 ms apart on average, about
75% busy GPUs).  The split into leaves and spines is unpublished too: the
default runs all three with one link per pair (2 x 16, 4 x 8, 8 x 4).  The
job set is written as a trace CSV and made into one mix by
scripts/job_mix.py --trace, so every scheme and split runs the same jobs.
The schemes are those of schemes.py and rECMP (the testbed's "Redundance":
ECMP with 1.5x the uplinks, i.e. 1.5x the spines of the split; its rows
give the split's leaves and spines).

  jobs/papers/vclos/testbed.py [--quick] [--jobs 100] [--interarrival-ms 400] [--iterations 10,30]
                               [--leaves 2,4,8] [--schemes vclos,ecmp,sr,best,ocs,becmp,recmp] [--seed 1] [--out DIR]

--quick: 30 jobs, 4 x 8 only.  Writes OUT/testbed.csv, OUT/testbed.png, the job set
(OUT/testbed_jobs.csv) and its mix (OUT/testbed_mix.toml).
"""
import csv
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vclospaper as vp  # noqa: E402

SIZES = (2, 4, 8, 16)
COLLECTIVES = ("ring", "hierarchical", "halving_doubling")
# The testbed's models fabricsim has (inputs/models/), with Table 3's batch sizes; ResNet-101 and
# MoE are not among them.
MODELS = {"vgg16": (16, 32), "resnet50": (32, 64), "bert": (4, 8), "dlrm": (256, 512)}


def write_jobs(path, jobs, interarrival_ms, iterations, seed):
    """The testbed's job set as a job_mix.py trace (arrival_ms, gpus, iterations, model, batch, algorithm)."""
    rng = random.Random(seed)
    t = 0.0
    rows = []
    for _ in range(jobs):
        t += rng.expovariate(1.0 / interarrival_ms)
        gpus = rng.choice(SIZES)
        algorithm = rng.choice(COLLECTIVES)
        model = rng.choice(sorted(MODELS))
        batch = rng.choice(MODELS[model])
        iters = rng.randint(*iterations)
        rows.append([round(t, 6), gpus, iters, model, batch, "pairwise" if model == "dlrm" else algorithm])
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arrival_ms", "gpus", "iterations", "model", "batch", "algorithm"])
        w.writerows(rows)
    return rows


def main():
    p = vp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=vp.integer(1, 100000), default=None,  # noqa: F405
                   help="jobs in the set (default 100, the paper's; --quick 30)")
    p.add_argument("--interarrival-ms", type=vp.positive_float_list("inter-arrival time (ms)", 1e6), default=[400.0],
                   help="mean inter-arrival time of the Poisson arrivals, ms (default 400)")
    p.add_argument("--iterations", type=vp.integer_list(1, 1 << 20, "iteration counts"), default=[10, 30],
                   help="LO,HI: each job's iterations, uniform from LO to HI (default 10,30)")
    p.add_argument("--leaves", type=vp.integer_list(1, 32, "leaf counts"), default=None,  # noqa: F405
                   help="comma-separated leaf counts of the testbed, from 2, 4, 8 (spines = 32 / leaves; "
                        "default 2,4,8; --quick 4)")
    p.add_argument("--schemes", type=vp.name_list("scheme", vp.SCHEME_NAMES), default=vp.SCHEME_NAMES,
                   help="comma-separated: %s (default all)" % ", ".join(vp.SCHEME_NAMES))
    args = vp.parse(p, ["testbed.csv", "testbed.png", "testbed_jobs.csv", "testbed_mix.toml"])
    if len(args.interarrival_ms) != 1:
        vp.fail("--interarrival-ms", "give one mean inter-arrival time (ms)")
    if len(args.iterations) != 2 or args.iterations[0] > args.iterations[1]:
        vp.fail("--iterations", "give LO,HI with LO <= HI")
    splits = args.leaves or ([4] if args.quick else [2, 4, 8])
    for n in splits:
        if n not in (2, 4, 8):
            vp.fail("--leaves", "%d: the testbed's 8 servers of 4 GPUs split into 2, 4 or 8 leaves "
                    "(S = 32 / leaves spines, one link per pair)" % n)
    ia = args.interarrival_ms[0]
    jobs = args.jobs or (30 if args.quick else 100)
    rows = []
    with vp.Runner(args) as run:
        trace = os.path.join(os.path.abspath(args.out), "testbed_jobs.csv")
        run.written.append(trace)
        write_jobs(trace, jobs, ia, tuple(args.iterations), args.seed)
        mix, mix_cmd = vp.write_mix(run, "testbed_mix.toml", vp.TESTBED, ["--trace", trace, "--queue", "fifo"])
        for leaves in splits:
            spines = vp.TESTBED_GPUS // leaves
            shape = {"topology.leaves": leaves, "topology.spines": spines, "topology.servers_per_leaf": 8 // leaves}
            for s in args.schemes:
                o = dict(shape) if s != "best" else {}
                if s == "recmp":  # 1.5x the uplinks: half as many spines again
                    o.update({"topology.spines": spines * 3 // 2, "topology.radix": 64})
                o.update(vp.scheme_overrides(s, vp.TESTBED_GPUS, spines))
                r = vp.cluster_run(run, "testbed%dx%d_%s" % (leaves, spines, s), mix, o)
                rows.append(dict({"cluster": "testbed32", "leaves": leaves, "spines": spines,
                                  "endpoints": vp.TESTBED_GPUS, "scheme": s, "label": vp.label(s),
                                  "interarrival_ms": ia, "iterations": "%d-%d" % tuple(args.iterations),
                                  "seed": args.seed, "model": "flow"}, **r, mix_command=mix_cmd))
                print("testbed %dx%-2d %-5s JWT %9.3f  JRT %9.3f  JCT %9.3f ms (p50 %9.3f, p99 %9.3f) | stability "
                      "%8.3f ms | refused gpus %4d, network %3d | GPUs busy %.1f%% | placed: %s  (%.1f s)" % (
                          leaves, spines, vp.label(s), r["mean_jwt_ms"], r["mean_jrt_ms"], r["mean_jct_ms"],
                          r["median_jct_ms"], r["p99_jct_ms"], r["stability_ms"], r["refused_gpus"],
                          r["refused_network"], 100 * r["gpu_utilization"],
                          ", ".join("%s %d" % (st, r["placed_" + st]) for st in vp.STAGES if r["placed_" + st]),
                          r["wall_s"]), flush=True)
            sel = {r["scheme"]: r for r in rows if r["leaves"] == leaves}
            if "vclos" in sel:
                print("%d x %d: mean JCT over vClos's: %s" % (leaves, spines, ", ".join(
                    "%s %.3f" % (vp.label(s), sel[s]["mean_jct_ms"] / sel["vclos"]["mean_jct_ms"])
                    for s in args.schemes if s != "vclos")), flush=True)
        csv_path = os.path.join(args.out, "testbed.csv")
        vp.write_csv(csv_path, [vp.public(r) for r in rows])
        png = os.path.join(args.out, "testbed.png")
        draw(png, rows, jobs, splits)
        print("wrote %s and %s" % (csv_path, png))


def draw(png, rows, jobs, splits):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    a1, a2 = axes
    schemes = []
    for r in rows:
        if r["scheme"] not in schemes:
            schemes.append(r["scheme"])
    width = 0.8 / len(schemes)
    for i, s in enumerate(schemes):
        xs, jrt, jwt = [], [], []
        for j, n in enumerate(splits):
            r = [x for x in rows if x["scheme"] == s and x["leaves"] == n][0]
            xs.append(j + i * width)
            jrt.append(r["mean_jrt_ms"])
            jwt.append(r["mean_jwt_ms"])
        a1.bar(xs, jrt, width, color="C%d" % i, label="%s: JRT" % vp.label(s))
        a1.bar(xs, jwt, width, bottom=jrt, color="C%d" % i, alpha=0.45, hatch="..", edgecolor="white",
               label="%s: JWT" % vp.label(s))
    a1.set_xticks([j + 0.4 - width / 2 for j in range(len(splits))],
                  ["%d leaves x %d spines" % (n, vp.TESTBED_GPUS // n) for n in splits])
    a1.set_ylabel("ms (bar: mean JCT = JRT + JWT)")
    a1.set_title("testbed, 32 GPUs, %d jobs" % jobs, fontsize="medium")
    a1.legend(fontsize="x-small", ncol=2)
    n = 4 if 4 in splits else splits[0]
    vp.jct_cdf(a2, [r for r in rows if r["leaves"] == n], "JCT distribution, %d leaves x %d spines" % (
        n, vp.TESTBED_GPUS // n))
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    vp.main(main)
