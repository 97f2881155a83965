#!/usr/bin/env python3
"""The shared cluster (spec 5.5, the paper's section 5.6): n servers of 4
GPUs, d interfaces of B, jobs of 16 servers each (40 % DLRM, 30 % BERT,
20 % CANDLE, 10 % VGG16) at 5, 10, 15, 20 and 27 jobs (20 ... 100 % load of
432 servers), on TopoOpt (a shard per job: TOPOLOGYFINDER on each job's own
servers, topology.job_shards), the Ideal Switch, the cost-equivalent
Fat-tree and the 2:1 oversubscribed Fat-tree (every link d x B, a third of
each leaf's ports up).  Per job: mean and 99th-percentile iteration time
(/jobs); per run the cost (Table 2).

  jobs/papers/topoopt/shared.py [--quick] [--servers 432] [--degree 8] [--gbps 100] [--job-servers 16]
                                [--loads 5,10,15,20,27] [--iterations 3] [--fabrics ...] [--out DIR]

--quick: 16 servers, d = 2, jobs of 4 servers at loads 1 and 3 (seconds).
Writes OUT/shared.csv (one row per job and run, with its command),
OUT/shared.png (mean and p99 iteration time against load, per model) and
the configurations the commands name (OUT/shared_<load>.toml).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topooptpaper as tp  # noqa: E402

LOADS = [5, 10, 15, 20, 27]
# Spec 5.5: the job mix, 4 DLRM : 3 BERT : 2 CANDLE : 1 VGG16 in every 10 jobs (interleaved).
MIX = ["dlrm", "bert", "dlrm", "candle", "bert", "dlrm", "vgg", "bert", "dlrm", "candle"]
FABRICS = {"topoopt": "TopoOpt (shards)", "ideal": "Ideal Switch", "fattree": "Fat-tree (same cost)",
           "oversub": "Fat-tree 2:1 oversubscribed"}


def config(path, jobs, job_servers, iterations):
    """dedicated.toml's settings with one [[jobs]] block per job, in job order (job i on servers i x job_servers ...)."""
    with open(tp.DEDICATED) as f:
        base = f.read()
    base = base.split("[workload]")[0]
    gpus = job_servers * tp.GPUS_PER_SERVER
    text = base + '[workload]\nkind = "dnn"\n\n'
    for model in jobs:
        path_, batch, expert = tp.MODELS[model]
        text += ('[[jobs]]\nmodel = "%s"\ndata_parallel = %d\nexpert_parallel = %d\nminibatch = %d\n'
                 'dp_algorithm = "topoopt_rings"\nbucket_bytes = 0\niterations = %d\n\n') % (
            os.path.normpath(os.path.join(tp.MODELS_DIR, path_)), gpus, gpus if expert else 1, gpus * batch,
            iterations)
    text += '[output]\nflows = false\ninterval_ns = 0\n'
    with open(path, "w") as f:
        f.write(text)


def fabric(name, servers, d, b, ft):
    if name == "topoopt":
        return dict(tp.fabric_overrides("topoopt", servers, d, b), **{"topology.job_shards": True})
    if name != "oversub":
        return tp.fabric_overrides(name, servers, d, b, ft)
    # Spec 2.3: every link d x B, half of a full-bisection leaf's uplinks removed: 2 ports down for each one up.
    # (k a multiple of 6: an even radix, 2k/3 down and k/3 up; the smallest three-level tree that holds them.)
    k = 6
    while (2 * k // 3) * (k // 2) * (k // 2) < servers:
        k += 6
    return {"topology.gpu_servers": False, "topology.gpus_per_nic": tp.GPUS_PER_SERVER,
            "topology.endpoints": servers, "routing.algorithm": "ecmp", "topology.kind": "fat_tree",
            "topology.radix": k, "topology.down_ports": 2 * k // 3, "network.link_gbps": d * b}


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=tp.integer(2, 4394), default=None, help="servers of 4 GPUs (default 432)")
    p.add_argument("--degree", type=tp.integer(1, 64), default=None, help="interfaces per server (default 8)")
    p.add_argument("--gbps", type=tp.integer(1, 10 ** 5), default=100, help="Gb/s per interface (default 100)")
    p.add_argument("--job-servers", type=tp.integer(2, 4394), default=None, help="servers per job (default 16)")
    p.add_argument("--loads", type=tp.integer_list(1, 4394, "loads"), default=None,
                   help="comma-separated numbers of jobs (default 5,10,15,20,27)")
    p.add_argument("--iterations", type=tp.integer(1, 1000), default=3, help="iterations per job (default 3)")
    p.add_argument("--fabrics", type=tp.name_list("fabric", list(FABRICS)), default=list(FABRICS),
                   help="comma-separated: %s (default all)" % ", ".join(FABRICS))
    args = tp.parse(p, ["shared.csv", "shared.png"])
    servers = args.servers or (16 if args.quick else 432)
    d = args.degree or (2 if args.quick else 8)
    job_servers = args.job_servers or (4 if args.quick else 16)
    loads = args.loads or ([1, 3] if args.quick else LOADS)
    if max(loads) * job_servers > servers:
        tp.fail("shared.py", "--loads: %d jobs of %d servers do not fit %d servers" % (
            max(loads), job_servers, servers), 2)
    rows = []
    with tp.Runner(args) as run:
        for load in loads:
            jobs = [MIX[i % len(MIX)] for i in range(load)]
            cfg = os.path.join(args.out, "shared_%d.toml" % load)
            config(cfg, jobs, job_servers, args.iterations)
            info = run.info(cfg, fabric("topoopt", servers, d, args.gbps, None))
            ft = info.get("cost_equivalent_fat_tree_gbps") or 0
            for name in args.fabrics:
                if name == "fattree" and not ft:
                    tp.fail("fabricsim info", "no listed fat-tree speed costs as little as TopoOpt at n = %d, "
                            "d = %d, B = %d Gb/s" % (servers, d, args.gbps), 1)
                o = fabric(name, servers, d, args.gbps, ft)
                h5, wall, cmd = run.run("shared_%d_%s" % (load, name), cfg, o)
                _, t, _ = tp.summary(h5)
                import h5py
                with h5py.File(h5, "r") as f:
                    if not f["iterations/finished"][()].all():
                        tp.fail("fabricsim run", "an iteration did not finish (the command: %s)" % cmd, 1)
                    J = f["jobs"]
                    it = f["iterations"]
                    for j in range(len(jobs)):
                        sel = (it["job"][()] == j) & (it["iteration"][()] >= 0)
                        rows.append({"load_jobs": load, "load_pct": round(100.0 * load * job_servers / servers, 1),
                                     "fabric": name, "label": FABRICS[name], "job": j, "model": jobs[j],
                                     "servers": servers, "degree": d, "gbps": args.gbps,
                                     "cost_usd": round(t["paper_cost_usd"], 2),
                                     "mean_iteration_ms": float(it["time_ns"][()][sel].mean()) / 1e6,
                                     "p99_iteration_ms": float(J["p99_iteration_ns"][j]) / 1e6,
                                     "wall_s": round(wall, 2), "fabricsim": run.version, "command": cmd})
                mine = [r for r in rows if r["load_jobs"] == load and r["fabric"] == name]
                print("%3d jobs  %-28s mean %9.3f ms  worst p99 %9.3f ms  $%12.0f" % (
                    load, FABRICS[name], sum(r["mean_iteration_ms"] for r in mine) / len(mine),
                    max(r["p99_iteration_ms"] for r in mine), mine[0]["cost_usd"]), flush=True)
                run.done(h5)
        csv_path = os.path.join(args.out, "shared.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "shared.png")

        def draw(ax):
            for i, name in enumerate(args.fabrics):
                for key, style in (("mean_iteration_ms", "-o"), ("p99_iteration_ms", "--s")):
                    pts = []
                    for load in loads:
                        mine = [r[key] for r in rows if r["load_jobs"] == load and r["fabric"] == name]
                        pts.append((load, sum(mine) / len(mine) if key.startswith("mean") else max(mine)))
                    ax.plot(*zip(*pts), style, color="C%d" % i,
                            label="%s, %s" % (FABRICS[name], "mean" if key.startswith("mean") else "worst p99"))
            ax.set_yscale("log")
            ax.set_xlabel("jobs of %d servers (of %d)" % (job_servers, servers))
            ax.set_ylabel("iteration time (ms)")
            ax.legend(fontsize=6)
            ax.set_title("Shared cluster, %d servers x 4 GPUs, d = %d x %d Gb/s" % (servers, d, args.gbps))
        tp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
