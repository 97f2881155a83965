#!/usr/bin/env python3
"""Large messages (the paper's section VIII-C; spec 5.5, 6, 10.4): All-Reduce
on a 10 x 10 Mesh (100 GB/s, alpha 0.5 us, xy routing for Ring) with each
NPU's piece 1 to 64 chunks of 128 KiB, TACOS-Greedy synthesizing every chunk
at once (chunk-level pipelining) against Ring (its steps cut into the same
128 KiB chunks).  Both totals are reported: the piece per NPU and the buffer
per rank (NPUs x piece).

  jobs/papers/tacos/large_messages.py [--quick] [--chunks 1,2,4,...,64] [--chunk-kib 128] [--out DIR]

--quick: a 4 x 4 mesh, 1, 2 and 4 chunks.  Writes OUT/large_messages.csv and
OUT/large_messages.png.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tacospaper as tp  # noqa: E402

ALGS = ["ring", "greedy"]


def main():
    p = tp.parse_args(__doc__.split("\n\n")[0], chunk_kib=128)
    p.add_argument("--chunks", type=tp.integer_list(1, 4096, "chunk counts"), default=None,
                   help="chunks per NPU (default 1,2,4,8,16,32,64; --quick 1,2,4)")
    p.add_argument("--mesh", type=tp.integer(2, 64), default=None, help="the mesh's side (default 10; --quick 4)")
    args = tp.parse(p, ["large_messages.csv", "large_messages.png"])
    side = args.mesh or (4 if args.quick else 10)
    counts = args.chunks or ([1, 2, 4] if args.quick else [1, 2, 4, 8, 16, 32, 64])
    n = side * side
    chunk = args.chunk_kib * 1024
    rows = []
    with tp.Runner(args) as run:
        for k in counts:
            for a in ALGS:
                o = dict(tp.mesh_overrides(side, side), **tp.size_overrides(n, chunk, k),
                         **tp.algorithm_overrides(args, a))
                o["workload.op"] = "allreduce"
                r = tp.one(run, "k%d_%s" % (k, a), tp.MESH_XY, o)
                rows.append(dict({"mesh": "%dx%d" % (side, side), "npus": n, "chunks_per_npu": k, "algorithm": a,
                                  "label": tp.label(a), "chunk_bytes": chunk, "piece_bytes": k * chunk,
                                  "buffer_mb": n * k * chunk / 1e6}, **r))
            tp.normalize(rows, ["chunks_per_npu"])
            ring, tacos = [next(r for r in rows if r["chunks_per_npu"] == k and r["algorithm"] == a) for a in ALGS]
            print("%2d chunk%s of %d KiB per NPU (%.1f MB per rank): Ring %.1f us, TACOS-Greedy %.1f us "
                  "(%.2fx faster; synthesis %s)" % (k, " " if k == 1 else "s", args.chunk_kib,
                                                    n * k * chunk / 1e6, ring["time_us"], tacos["time_us"],
                                                    ring["time_us"] / tacos["time_us"],
                                                    tp.seconds(tacos["synthesis_s"])), flush=True)
        one = {r["algorithm"]: r["time_us"] for r in rows if r["chunks_per_npu"] == min(counts)}
        for r in rows:
            # The other way to a large message (spec 5.5): the smallest count's algorithm run again and again.
            r["serial_us"] = one[r["algorithm"]] * r["chunks_per_npu"] / min(counts)
        sp = [r["time_us"] / t["time_us"] for r in rows if r["algorithm"] == "ring" for t in rows
              if t["algorithm"] == "greedy" and t["chunks_per_npu"] == r["chunks_per_npu"]]
        print("TACOS-Greedy over Ring: %.2fx faster (geometric mean over %d sizes)" % (tp.geomean(sp), len(sp)))
        csv_path = os.path.join(args.out, "large_messages.csv")
        tp.write_csv(csv_path, rows)
        png = os.path.join(args.out, "large_messages.png")

        def draw(ax):
            for a in ALGS:
                sel = [r for r in rows if r["algorithm"] == a]
                ax.plot([r["chunks_per_npu"] for r in sel], [r["time_us"] / 1e3 for r in sel], marker="o",
                        label=tp.label(a))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("chunks of %d KiB per NPU (buffer per rank = %d x that)" % (args.chunk_kib, n))
            ax.set_ylabel("All-Reduce time (ms)")
            ax.set_title("Mesh %dx%d, alpha 0.5 us, 100 GB/s" % (side, side))
            ax.legend()
        tp.figure(png, draw)
        print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    tp.main(main)
