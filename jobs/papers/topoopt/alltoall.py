#!/usr/bin/env python3
"""All-to-all stress test (the paper's section 5.4, Fig. 13; spec 5.4): DLRM
with 128 embedding tables (dlrm_alltoall.toml) on 128 servers of 4 GPUs,
B = 100 Gb/s, d = 4 and 8, batch per GPU 64 ... 2048: the all-to-all bytes
grow with the batch, the AllReduce bytes do not.  TopoOpt is built from each
job (TOPOLOGYFINDER gives the alltoall more matchings as its share grows),
against the Ideal Switch and the fat tree of the same cost.  The all-to-all
: AllReduce ratio of each point is the one TOPOLOGYFINDER read from the
job's plan (bytes between servers), not imposed.

  jobs/papers/topoopt/alltoall.py [--quick] [--servers 128] [--degrees 4,8] [--batches 64,...,2048]
                                  [--fabrics topoopt,ideal,fattree] [--out DIR]

--quick: 16 servers, d = 4, batches 64, 512, 2048 (seconds).
Writes OUT/alltoall.csv and OUT/alltoall.png (iteration time against the ratio).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topooptpaper as tp  # noqa: E402

MODEL = os.path.join(tp.HERE, "dlrm_alltoall.toml")
BATCHES = [64, 128, 256, 512, 1024, 2048]
FABRICS = ["topoopt", "ideal", "fattree"]
TRAFFIC = re.compile(r"AllReduce ([0-9.e+]+) B, MP ([0-9.e+]+) B; d_A (\d+) .*d_MP (\d+) \((\d+) matching rounds\)")


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0])
    p.add_argument("--servers", type=tp.integer(2, 4394), default=None,
                   help="servers of 4 GPUs (default 128, the paper's; --quick 16)")
    p.add_argument("--degrees", type=tp.integer_list(1, 64, "degrees"), default=None,
                   help="comma-separated interfaces per server d (default 4,8; --quick 4)")
    p.add_argument("--batches", type=tp.integer_list(1, 1 << 16, "batches per GPU"), default=None,
                   help="comma-separated batch per GPU (default 64,128,256,512,1024,2048; --quick 64,512,2048)")
    p.add_argument("--gbps", type=tp.integer(1, 1600), default=100, help="interface speed B in Gb/s (default 100)")
    p.add_argument("--fabrics", type=tp.name_list("fabric", FABRICS), default=FABRICS,
                   help="comma-separated: %s (default all)" % ", ".join(FABRICS))
    args = tp.parse(p, ["alltoall.csv", "alltoall.png"])
    servers = args.servers or (16 if args.quick else 128)
    degrees = args.degrees or ([4] if args.quick else [4, 8])
    batches = args.batches or ([64, 512, 2048] if args.quick else BATCHES)
    gpus = servers * tp.GPUS_PER_SERVER
    b = args.gbps
    rows = []
    with tp.Runner(args) as run:
        for d in degrees:
            for batch in batches:
                mo = {"workload.model": MODEL, "workload.data_parallel": gpus, "workload.expert_parallel": gpus,
                      "workload.minibatch": gpus * batch}
                info = run.info(tp.DEDICATED, dict(mo, **tp.fabric_overrides("topoopt", servers, d, b)))
                ft = info.get("cost_equivalent_fat_tree_gbps") or 0
                ratio = d_a = d_mp = rounds = None
                for fabric in args.fabrics:
                    if fabric == "fattree" and not ft:
                        tp.fail("fabricsim info", "no listed fat-tree speed costs as little as TopoOpt", 1)
                    o = dict(mo, **tp.fabric_overrides(fabric, servers, d, b, ft))
                    h5, wall, cmd = run.run("b%d_%s_d%d" % (batch, fabric, d), tp.DEDICATED, o)
                    _, t, _ = tp.summary(h5)
                    import h5py
                    with h5py.File(h5, "r") as f:
                        it = float(f["iterations/time_ns"][()].mean()) / 1e6
                    desc = t.get("description", "")
                    desc = desc.decode() if isinstance(desc, bytes) else desc
                    if fabric == "topoopt":
                        m = TRAFFIC.search(desc)
                        if m is None:
                            tp.fail("fabricsim run", "no TOPOLOGYFINDER traffic in the description %r" % desc, 1)
                        ar, mp = float(m.group(1)), float(m.group(2))
                        ratio, d_a, d_mp, rounds = mp / ar, int(m.group(3)), int(m.group(4)), int(m.group(5))
                    row = {"batch_per_gpu": batch, "fabric": fabric, "label": tp.FABRICS[fabric], "servers": servers,
                           "degree": d, "gbps": b, "link_gbps": o["network.link_gbps"],
                           "alltoall_to_allreduce": ratio, "d_allreduce": d_a, "d_mp": d_mp,
                           "matching_rounds": rounds, "cost_usd": round(t["paper_cost_usd"], 2),
                           "iteration_ms": it}
                    row.update(tp.link_metrics(h5))
                    row.update({"wall_s": round(wall, 2), "fabricsim": run.version, "command": cmd})
                    rows.append(row)
                    print("d=%d batch %4d  %-22s %9.3f ms  all-to-all:AllReduce %.3f  d_A %s d_MP %s  tax %.2f" % (
                        d, batch, tp.FABRICS[fabric], it, ratio, d_a, d_mp, row["bandwidth_tax"]), flush=True)
                    run.done(h5)
        csv_path = os.path.join(args.out, "alltoall.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "alltoall.png")

        def draw(ax):
            styles = {"topoopt": "o-", "ideal": "*--", "fattree": "s:"}
            for d in degrees:
                for fabric in args.fabrics:
                    pts = sorted((r["alltoall_to_allreduce"], r["iteration_ms"]) for r in rows
                                 if r["degree"] == d and r["fabric"] == fabric)
                    if pts:
                        ax.plot(*zip(*pts), styles[fabric], label="%s, d = %d" % (tp.FABRICS[fabric], d))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("all-to-all : AllReduce bytes between servers (from the job's plan)")
            ax.set_ylabel("iteration time (ms)")
            ax.set_title("DLRM, 128 tables: %d servers x 4 GPUs, B = %d Gb/s" % (servers, b))
            ax.legend(fontsize=8)
        tp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
