#!/usr/bin/env python3
"""Allreduce bandwidth of the HammingMesh paper (spec §7.3, §9; Table II's
"allreduce BW" and "allreduce saving"): one allreduce over every accelerator
of the small cluster, against the message size, with the paper's
algorithms: the standard ring on the fat trees and the Dragonfly; on the
HammingMeshes and the torus also "rings" (multi_ring: two bidirectional
rings on edge-disjoint Hamiltonian cycles of the accelerator grid) and
"torus" (torus_2d), both on the physical grid (placement grid).  Bandwidth
is size / time as a share of the optimum, half the injection (0.8 Tb/s).

  jobs/papers/hammingmesh/allreduce.py [--quick | --large] [--sizes 1048576,...] [--out DIR]

Writes OUT/allreduce.csv and OUT/allreduce.png (see README.md).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hmpaper as hp  # noqa: E402

GRID = ("hx1", "hx2", "hx4", "torus")


def main():
    p = hp.parse_args(__doc__.split("\n\n")[0], list(hp.TOPOLOGIES))
    p.add_argument("--sizes", type=hp.integer_list(1, hp.MAX_BYTES, "sizes in bytes"), default=None,
                   help="comma-separated sizes per accelerator in bytes (default 1 MiB to 64 MiB by 4; "
                        "--quick: 64 KiB and 1 MiB)")
    p.add_argument("--chunk", type=hp.integer(0, hp.MAX_BYTES), default=1 << 20,
                   help="pipelining chunk in bytes (workload.chunk_bytes)")
    args = hp.parse(p, ["allreduce.csv", "allreduce.png"])
    if args.large:
        hp.submit_large(args, __file__, (["--sizes", ",".join(map(str, args.sizes))] if args.sizes else []) +
                        (["--chunk", str(args.chunk)] if args.chunk != 1 << 20 else []))
        return
    sizes = args.sizes or ([65536, 1048576] if args.quick else [1048576, 4194304, 16777216, 67108864])
    with hp.Runner(args) as run:
        experiment(args, sizes, run)


def experiment(args, sizes, run):
    rows = []
    for name in hp.topologies(args):
        config, over = hp.config_of(name, args)
        algos = ["ring"] + (["multi_ring", "torus_2d"] if name in GRID else [])
        for algo in algos:
            o = dict(over)
            o.update({"workload.kind": "collective", "workload.op": "allreduce", "workload.algorithm": algo,
                      "workload.sizes": sizes, "workload.ranks": 0, "workload.chunk_bytes": args.chunk,
                      "output.interval_ns": 0, "output.flows": False})
            if name in GRID:
                o["workload.placement"] = "grid"
                o["workload.grid_rows"] = hp.grid_rows(name, args)
            h5, wall, cmd = run.run("allreduce_%s_%s" % (name, algo), config, o)
            s, t, e = hp.summary(h5)
            import h5py
            with h5py.File(h5, "r") as f:
                c = f["collectives"]
                got = list(zip(c["bytes"][:].tolist(), c["algbw_gbps"][:].tolist(), c["start_ns"][:].tolist(),
                               c["end_ns"][:].tolist(), c["iteration"][:].tolist()))
            run.done(h5)
            for size, algbw, start, end, it in got:
                if it < 0:
                    continue
                rows.append({
                    "mode": hp.mode(args), "topology": name, "label": hp.TOPOLOGIES[name][0], "algorithm": algo,
                    "input": os.path.relpath(config, hp.SRC), "endpoints": s["endpoints"], "bytes": size,
                    "time_ns": end - start, "algbw_gbps": algbw,
                    "allreduce_bw_share": algbw / (s["injection_gbps"] / 2),
                    "injection_gbps": s["injection_gbps"], "cost_usd": t.get("cost_usd"),
                    "chunk_bytes": args.chunk, "run_seconds": e.get("run_seconds"),
                    "wall_seconds": round(wall, 3), "fabricsim": run.version, "command": cmd,
                })
                print("%-6s %-10s %10d B  %6.1f%% of 0.5 x injection  %6.1f s" % (
                    name, algo, size, 100 * rows[-1]["allreduce_bw_share"], wall), flush=True)
    # Allreduce saving (spec §9): (cost_FT / cost) x (aredBW / aredBW_FT), the best algorithm per topology.
    best = {}
    for r in rows:
        k = (r["topology"], r["bytes"])
        if k not in best or r["allreduce_bw_share"] > best[k]["allreduce_bw_share"]:
            best[k] = r
    for r in rows:
        ft = best.get(("ft", r["bytes"]))
        if ft and r["cost_usd"]:
            r["allreduce_saving"] = ft["cost_usd"] / r["cost_usd"] * r["allreduce_bw_share"] / ft["allreduce_bw_share"]
    csv_path = os.path.join(args.out, "allreduce.csv")
    hp.write_csv(csv_path, rows)

    def draw(ax):
        for (name, algo) in sorted({(r["topology"], r["algorithm"]) for r in rows}):
            sel = sorted((r for r in rows if r["topology"] == name and r["algorithm"] == algo), key=lambda r: r["bytes"])
            ax.plot([r["bytes"] for r in sel], [100 * r["allreduce_bw_share"] for r in sel], marker="o",
                    label="%s %s" % (name, algo))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per accelerator")
        ax.set_ylabel("% of 0.5 x injection")
        ax.set_title("allreduce over every accelerator (%s)" % hp.mode(args))
        ax.legend(fontsize="small", ncol=2)
    png = os.path.join(args.out, "allreduce.png")
    hp.figure(png, draw)
    print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    hp.main(main)
