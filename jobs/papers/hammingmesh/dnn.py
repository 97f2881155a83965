#!/usr/bin/env python3
"""DNN workloads of the HammingMesh paper (spec §7.4-7.5, §9; Fig. 15):
ResNet-152, CosmoFlow, DLRM, GPT-3 and GPT-3 MoE at their papers' layouts
(the "# layout:" line of each inputs/models/ file) on every topology of the
small cluster: iteration time, compute and communication overhead
(iteration time - compute, what is not hidden), and the DNN cost saving
(C_FT / C) x (overhead_FT / overhead) against the nonblocking fat tree.
Jobs are placed board by board on the HammingMeshes (tensor-parallel groups
of a board's size stay on a board), in id order elsewhere.

  jobs/papers/hammingmesh/dnn.py [--quick | --large] [--models resnet152,...] [--micro-batches M] [--out DIR]

Writes OUT/dnn.csv and OUT/dnn.png (see README.md).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hmpaper as hp  # noqa: E402

MODELS = ["resnet152", "cosmoflow", "dlrm", "gpt3", "gpt3_moe"]
LLMS = ("gpt3", "gpt3_moe")
# --quick: the same models on at most 64 accelerators (D, P, O, E), two micro-batches for the LLMs.
QUICK_LAYOUT = {"resnet152": (64, 1, 1, 1), "cosmoflow": (16, 1, 4, 1), "dlrm": (32, 1, 1, 32),
                "gpt3": (1, 8, 4, 1), "gpt3_moe": (4, 8, 1, 4)}


def known_models():
    """The models of inputs/models/ with a "# layout:" line, sorted."""
    out = []
    for f in sorted(os.listdir(os.path.join(hp.INPUTS, "models"))):
        if f.endswith(".toml"):
            try:
                layout(f[:-len(".toml")])
            except (OSError, ValueError, KeyError, StopIteration):
                continue
            out.append(f[:-len(".toml")])
    return out


def model_list(text):
    """An argparse type: comma-separated models of inputs/models/, each at most once, at least one."""
    return hp.name_list("model", known_models())(text)


def layout(model):
    with open(os.path.join(hp.INPUTS, "models", model + ".toml")) as f:
        line = next(l for l in f if l.startswith("# layout:"))
    v = dict(re.findall(r"(\w+) = (\d+)", line))
    return (int(v["data_parallel"]), int(v["pipeline_parallel"]), int(v["tensor_parallel"]),
            int(v["expert_parallel"]), int(v["micro_batches"]))


def main():
    p = hp.parse_args(__doc__.split("\n\n")[0], [t for t in hp.TOPOLOGIES])
    p.add_argument("--models", type=model_list, default=None,
                   help="comma-separated models of inputs/models/ (default: the paper's five; --quick: "
                        "resnet152, cosmoflow, dlrm, as the LLMs' 100 MB activations take minutes even on 32 "
                        "accelerators)")
    p.add_argument("--micro-batches", type=hp.integer(1, 1 << 20), default=2,
                   help="micro-batches of the LLMs (their papers: 192; one packet-level GPT-3 iteration "
                        "takes minutes per micro-batch, so the default is 2; the others run their layout's)")
    args = hp.parse(p, ["dnn.csv", "dnn.png"])
    if args.large:
        hp.submit_large(args, __file__, (["--models", ",".join(args.models)] if args.models else []) +
                        ["--micro-batches", str(args.micro_batches)])
        return
    models = args.models or [m for m in MODELS if not (args.quick and m in LLMS)]
    with hp.Runner(args) as run:
        experiment(args, models, run)


def experiment(args, models, run):
    rows = []
    for model in models:
        D, P, O, E, M = layout(model)
        if args.quick:
            D, P, O, E = QUICK_LAYOUT.get(model, (D, P, O, E))
        if model in LLMS:
            M = args.micro_batches
        for name in hp.topologies(args):
            config, over = hp.config_of(name, args)
            o = dict(over)
            o.update({"workload.kind": "dnn", "workload.model": os.path.join(hp.INPUTS, "models", model + ".toml"),
                      "workload.data_parallel": D, "workload.pipeline_parallel": P, "workload.tensor_parallel": O,
                      "workload.expert_parallel": E, "workload.micro_batches": M,
                      "output.interval_ns": 0, "output.flows": False})
            if model in LLMS:
                o["workload.minibatch"] = D * M  # one sample per micro-batch, as their papers
            if name in hp.HAMMINGMESH:
                o["workload.placement"] = "by_board"
            have = run.info(config, over)["endpoints"]
            if D * P * O > have:
                # (GPT-3 MoE's layout, 16 x 96 x 1, needs 1,536 accelerators: more than the small cluster.)
                print("%-10s %-6s skipped: its layout needs %d accelerators, the topology has %d" % (
                    model, name, D * P * O, have), flush=True)
                rows.append({"mode": hp.mode(args), "model": model, "topology": name,
                             "label": hp.TOPOLOGIES[name][0], "input": os.path.relpath(config, hp.SRC),
                             "data_parallel": D, "pipeline_parallel": P, "tensor_parallel": O,
                             "expert_parallel": E, "micro_batches": M, "accelerators": D * P * O,
                             "skipped": "needs %d accelerators, the topology has %d" % (D * P * O, have)})
                continue
            h5, wall, cmd = run.run("dnn_%s_%s" % (model, name), config, o)
            s, t, e = hp.summary(h5)
            import h5py
            with h5py.File(h5, "r") as f:
                it = f["iterations"]
                timed = [i for i, k in enumerate(it["iteration"][:].tolist()) if k >= 0]
                i = timed[0] if timed else 0
                time_ns = float(it["time_ns"][i])
                compute_ns = float(it["compute_ns"][i])
                exposed_ns = float(it["exposed_comm_ns"][i])
            run.done(h5)
            rows.append({
                "mode": hp.mode(args), "model": model, "topology": name, "label": hp.TOPOLOGIES[name][0],
                "input": os.path.relpath(config, hp.SRC), "data_parallel": D, "pipeline_parallel": P,
                "tensor_parallel": O, "expert_parallel": E, "micro_batches": M, "accelerators": D * P * O,
                "iteration_ns": time_ns, "compute_ns": compute_ns, "overhead_ns": exposed_ns,
                "cost_usd": t.get("cost_usd"), "run_seconds": e.get("run_seconds"), "wall_seconds": round(wall, 3),
                "fabricsim": run.version, "command": cmd,
            })
            print("%-10s %-6s %3d x %2d x %d (E %d, M %d)  iteration %10.3f ms  overhead %9.3f ms  %6.1f s" % (
                model, name, D, P, O, E, M, time_ns / 1e6, exposed_ns / 1e6, wall), flush=True)
    for r in rows:
        ft = [x for x in rows if x["topology"] == "ft" and x["model"] == r["model"] and not x.get("skipped")]
        if ft and not r.get("skipped") and r["cost_usd"] and r["overhead_ns"] > 0:
            r["dnn_cost_saving"] = ft[0]["cost_usd"] / r["cost_usd"] * ft[0]["overhead_ns"] / r["overhead_ns"]
    csv_path = os.path.join(args.out, "dnn.csv")
    hp.write_csv(csv_path, rows)

    def draw(ax):
        models = list(dict.fromkeys(r["model"] for r in rows))
        topos = list(dict.fromkeys(r["topology"] for r in rows))
        w = 0.8 / max(1, len(topos))
        for k, name in enumerate(topos):
            ys = []
            for m in models:
                sel = [r for r in rows if r["model"] == m and r["topology"] == name and not r.get("skipped")]
                ys.append(100 * sel[0]["overhead_ns"] / sel[0]["iteration_ns"] if sel and sel[0]["iteration_ns"] else 0)
            ax.bar([i + k * w for i in range(len(models))], ys, width=w, label=name)
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(models))], models)
        ax.set_ylabel("communication overhead, % of the iteration")
        ax.set_title("DNN iterations (%s)" % hp.mode(args))
        ax.legend(fontsize="small", ncol=4)
    png = os.path.join(args.out, "dnn.png")
    hp.figure(png, draw)
    print("wrote %s and %s" % (csv_path, png))


if __name__ == "__main__":
    hp.main(main)
