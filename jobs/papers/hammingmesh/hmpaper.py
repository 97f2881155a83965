"""Shared parts of the HammingMesh paper's experiment scripts (see README.md).

Each script (alltoall.py, allreduce.py, dnn.py) runs fabricsim on the
paper's topologies (inputs/*.toml, which carry the paper's Table III
parameters), reads the HDF5 outputs and writes one CSV (every row with the
parameters of its run) and one figure.  Three sizes:

  --quick   reduced instances of the same builders (seconds; what ctest runs)
  (default) the paper's small cluster (~1,024 accelerators)
  --large   the paper's large cluster (~16,384), as a Slurm array job
"""

import argparse
import csv
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
INPUTS = os.path.join(SRC, "inputs")

# The topologies of the paper's small cluster (spec §4.2), the inputs that
# build them, and reduced instances of the same builders for --quick.
# name: (label, input, quick overrides, large input or None)
TOPOLOGIES = {
    "ft": ("nonblocking fat tree", "fat_tree_1k.toml",
           {"topology.endpoints": 64, "topology.radix": 16}, "fat_tree_16k.toml"),
    "ft50": ("50% tapered fat tree", "fat_tree_1k_tapered_50.toml",
             {"topology.endpoints": 66, "topology.radix": 16, "topology.down_ports": 11},
             "fat_tree_16k_tapered_50.toml"),
    "ft75": ("75% tapered fat tree", "fat_tree_1k_tapered_75.toml",
             {"topology.endpoints": 65, "topology.radix": 16, "topology.down_ports": 13},
             "fat_tree_16k_tapered_75.toml"),
    "df": ("Dragonfly", "dragonfly_small.toml",
           {"topology.a": 4, "topology.p": 2, "topology.h": 2, "topology.groups": 8}, "dragonfly_large.toml"),
    "hx1": ("2D HyperX (Hx1Mesh)", "hammingmesh_hx1_small.toml", {"topology.x": 8, "topology.y": 8},
            "hammingmesh_hx1_large.toml"),
    "hxr": ("2D HyperX, switch-based", "hyperx_routers_small.toml", {"topology.x": 8, "topology.y": 8},
            "hyperx_routers_large.toml"),
    "hx2": ("Hx2Mesh", "hammingmesh_hx2_small.toml", {"topology.x": 4, "topology.y": 4},
            "hammingmesh_hx2_large.toml"),
    "hx4": ("Hx4Mesh", "hammingmesh_hx4_small.toml", {"topology.x": 2, "topology.y": 2},
            "hammingmesh_hx4_large.toml"),
    "torus": ("2D torus", "torus_small.toml", {"topology.dims": [8, 8]}, "torus_large.toml"),
}
HAMMINGMESH = ("hx1", "hx2", "hx4")


def parse_args(description, default_topologies):
    p = argparse.ArgumentParser(description=description)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="reduced instances of the same topologies (seconds; what ctest runs)")
    size.add_argument("--large", action="store_true",
                      help="the paper's large cluster (~16k accelerators): writes and submits a Slurm array job")
    p.add_argument("--topologies", default=",".join(default_topologies),
                   help="comma-separated subset of: " + ", ".join(TOPOLOGIES))
    p.add_argument("--out", default="papers-hammingmesh", help="output directory (CSV, figure, HDF5 files)")
    p.add_argument("--fabricsim", default=os.environ.get("FABRICSIM", os.path.join(SRC, "build", "src", "fabricsim")),
                   help="the fabricsim binary (default: build/src/fabricsim, or $FABRICSIM)")
    p.add_argument("--launch", default=os.environ.get("LAUNCH", ""),
                   help='prefix for each run, e.g. "mpiexec -n 4" (default: one rank, or $LAUNCH)')
    p.add_argument("--keep", action="store_true", help="keep every run's HDF5 file in OUT/runs")
    p.add_argument("--ntasks", type=int, default=16, help="--large: MPI ranks per array task (default 16)")
    p.add_argument("--time", default="24:00:00", help="--large: time limit per array task (default 24:00:00)")
    p.add_argument("--no-submit", action="store_true", help="--large: write OUT/large.sbatch, do not submit it")
    p.add_argument("--large-task", action="store_true", help=argparse.SUPPRESS)  # one task of the --large array
    return p


def topologies(args):
    names = [t for t in args.topologies.split(",") if t]
    for t in names:
        if t not in TOPOLOGIES:
            sys.exit("error: --topologies: unknown topology '%s' (known: %s)" % (t, ", ".join(TOPOLOGIES)))
    return names


def toml_value(v):
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return str(v)


def set_args(overrides):
    out = []
    for k, v in overrides.items():
        out += ["--set", "%s=%s" % (k, toml_value(v))]
    return out


def config_of(name, args):
    """The input file and the overrides of a topology in this mode."""
    label, small, quick, large = TOPOLOGIES[name]
    if args.large or args.large_task:
        return os.path.join(INPUTS, large), {}
    return os.path.join(INPUTS, small), (dict(quick) if args.quick else {})


class Runner:
    """Runs fabricsim, keeping (or deleting) the HDF5 outputs."""

    def __init__(self, args):
        self.args = args
        os.makedirs(args.out, exist_ok=True)
        self.runs = os.path.join(args.out, "runs") if args.keep else tempfile.mkdtemp(prefix="hmpaper-")
        os.makedirs(self.runs, exist_ok=True)
        if not os.access(args.fabricsim, os.X_OK):
            sys.exit("error: --fabricsim: %s is not an executable (build first: see README.md)" % args.fabricsim)
        self.version = self.git_sha = ""
        out = subprocess.run([args.fabricsim, "--version"], capture_output=True, text=True)
        self.version = out.stdout.strip()
        self.count = 0

    def run(self, tag, config, overrides):
        """One run; returns (HDF5 path, wall seconds, the command line)."""
        self.count += 1
        h5 = os.path.join(self.runs, "%03d_%s.h5" % (self.count, tag))
        cmd = shlex.split(self.args.launch) + [self.args.fabricsim, "run", config] + set_args(overrides) + \
            ["--set", 'output.progress="never"', "-o", h5]
        t0 = time.time()
        r = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.time() - t0
        if r.returncode != 0:
            sys.stderr.write(r.stdout + r.stderr)
            sys.exit("error: fabricsim failed (exit %d): %s" % (r.returncode, " ".join(shlex.quote(c) for c in cmd)))
        return h5, wall, " ".join(shlex.quote(c) for c in cmd[len(shlex.split(self.args.launch)):])

    def info(self, config, overrides):
        """`fabricsim info --json` of a configuration (structure, cost, fluid bound)."""
        cmd = [self.args.fabricsim, "info", config, "--json"] + set_args(overrides)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout + r.stderr)
            sys.exit("error: fabricsim info failed: " + " ".join(shlex.quote(c) for c in cmd))
        return json.loads(r.stdout)

    def done(self, h5):
        if not self.args.keep:
            os.remove(h5)


def summary(h5):
    import h5py
    with h5py.File(h5, "r") as f:
        s = {k: _py(v) for k, v in f["summary"].attrs.items()}
        t = {k: _py(v) for k, v in f["topology"].attrs.items()} if "topology" in f else {}
        e = {k: _py(v) for k, v in f["engine"].attrs.items()} if "engine" in f else {}
    return s, t, e


def _py(v):
    try:
        import numpy as np
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, np.generic):
            return v.item()
    except ImportError:
        pass
    if isinstance(v, bytes):
        return v.decode()
    return v


def write_csv(path, rows):
    """Rows (dicts) into a CSV whose columns are the union of their keys, in first-seen order."""
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})


def figure(path, draw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    draw(ax)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def mode(args):
    return "quick" if args.quick else "large" if (args.large or args.large_task) else "small"


def submit_large(args, script, extra=()):
    """--large: a Slurm array job, one task per topology, each running this
    script for one topology of the large cluster into OUT/<topology>/."""
    names = topologies(args)
    os.makedirs(args.out, exist_ok=True)
    job = os.path.join(args.out, "large.sbatch")
    me = os.path.abspath(script)
    with open(job, "w") as f:
        f.write("#!/usr/bin/env bash\n")
        f.write("#SBATCH --job-name=hmpaper-%s\n" % os.path.splitext(os.path.basename(script))[0])
        f.write("#SBATCH --array=0-%d\n" % (len(names) - 1))
        f.write("#SBATCH --ntasks=%d\n#SBATCH --time=%s\n" % (args.ntasks, args.time))
        f.write("# Written by %s --large: the HammingMesh paper's large cluster, one topology per task.\n"
                % os.path.relpath(me, SRC))
        f.write("set -euo pipefail\nnames=(%s)\n" % " ".join(names))
        f.write("t=${names[$SLURM_ARRAY_TASK_ID]}\n")
        f.write('/usr/bin/python3 %s --large-task --topologies "$t" --out %s/"$t" --fabricsim %s --launch "srun" %s\n'
                % (shlex.quote(me), shlex.quote(os.path.abspath(args.out)), shlex.quote(args.fabricsim),
                   " ".join(shlex.quote(x) for x in extra)))
    os.chmod(job, 0o755)
    if args.no_submit or subprocess.run(["which", "sbatch"], capture_output=True).returncode != 0:
        print("wrote %s (%s: submit it on the cluster with `sbatch %s`)" % (
            job, "not submitted" if args.no_submit else "no sbatch here", job))
        return
    r = subprocess.run(["sbatch", job], capture_output=True, text=True)
    print(r.stdout.strip() or r.stderr.strip())
    if r.returncode != 0:
        sys.exit("error: sbatch failed")


def finite(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def grid_rows(name, args):
    """Rows of the accelerator grid of a HammingMesh or torus topology (the
    `grid_rows` of multi_ring / torus_2d under placement grid), or None."""
    import tomllib
    config, over = config_of(name, args)
    with open(config, "rb") as f:
        c = tomllib.load(f)
    topo = dict(c.get("topology", {}))
    for k, v in over.items():
        if k.startswith("topology."):
            topo[k.split(".", 1)[1]] = v
    if topo.get("kind") == "hammingmesh":
        return int(topo.get("board_b", 1)) * int(topo["y"])
    if topo.get("kind") == "torus":
        dims = topo["dims"]
        return int(dims[1]) if len(dims) == 2 else None
    return None
