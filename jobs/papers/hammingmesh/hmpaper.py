"""Shared parts of the HammingMesh paper's experiment scripts (see README.md).

Each script (alltoall.py, allreduce.py, dnn.py) runs fabricsim on the
paper's topologies (inputs/*.toml, which carry the paper's Table III
parameters), reads the HDF5 outputs and writes one CSV (every row with the
parameters of its run) and one figure.  Three sizes:

  --quick   reduced instances of the same builders (seconds; what ctest runs)
  (default) the paper's small cluster (~1,024 accelerators)
  --large   the paper's large cluster (~16,384), as a Slurm array job

The argument checks, runs, CSV and figures are every paper's
(jobs/papers/paperlib.py); what is here is this paper's.
"""

import argparse
import os
import shlex
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paperlib import *  # noqa: E402,F401,F403
from paperlib import _call, _error_of, _status  # noqa: E402,F401

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


# Limits of the values the scripts pass on (docs/params.md: what fabricsim accepts).
MAX_BYTES = 1 << 40  # workload.message_bytes, workload.sizes, workload.chunk_bytes


topology_list = name_list("topology", list(TOPOLOGIES))


def parse_args(description, default_topologies):
    p = Parser(description=description)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="reduced instances of the same topologies (seconds; what ctest runs)")
    size.add_argument("--large", action="store_true",
                      help="the paper's large cluster (~16k accelerators): writes and submits a Slurm array job")
    size.add_argument("--large-here", dest="large_task", action="store_true",
                      help="the large cluster's topologies, run here one after the other (what each task of --large "
                           "runs; with alltoall.py --rounds, a sample of the large column on one machine)")
    p.add_argument("--topologies", type=topology_list, default=",".join(default_topologies),
                   help="comma-separated subset of: " + ", ".join(TOPOLOGIES))
    add_run_options(p, "papers-hammingmesh")
    p.add_argument("--ntasks", type=integer(1, 1 << 20), default=16,
                   help="--large: MPI ranks per array task (default 16)")
    p.add_argument("--time", type=slurm_time, default="24:00:00",
                   help="--large: time limit per array task (default 24:00:00)")
    p.add_argument("--no-submit", action="store_true", help="--large: write OUT/large.sbatch, do not submit it")
    p.add_argument("--large-task", dest="large_task", action="store_true", help=argparse.SUPPRESS)  # (--large-here)
    return p


def parse(p, outputs=()):
    """Parse and check the command line: every value (argparse types), then the binary, the
    launcher and --out, all before anything runs or is written.  OUTPUTS: the files the script
    writes in --out."""
    args = p.parse_args()
    check_fabricsim(args)
    if args.large:
        args.launch, args.launch_words, args.launch_where = "", [], "--launch"  # (the tasks launch with srun)
        check_out(args, ["large.sbatch"])
    else:
        check_launch(args)
        check_out(args, outputs, ["runs"] if args.keep else [])
    return args


def topologies(args):
    return list(args.topologies)


def config_of(name, args):
    """The input file and the overrides of a topology in this mode."""
    label, small, quick, large = TOPOLOGIES[name]
    if args.large or args.large_task:
        return os.path.join(INPUTS, large), {}
    return os.path.join(INPUTS, small), (dict(quick) if args.quick else {})


def mode(args):
    return "quick" if args.quick else "large" if (args.large or args.large_task) else "small"


def submit_large(args, script, extra=()):
    """--large: a Slurm array job, one task per topology, each running this
    script for one topology of the large cluster into OUT/<topology>/."""
    names = topologies(args)
    if not names:  # (parse() refuses an empty list: an array of no task would read --array=0--1)
        fail("--topologies", "no topology given")
    out = os.path.abspath(args.out)
    job = os.path.join(args.out, "large.sbatch")
    me = os.path.abspath(script)
    text = "".join([
        "#!/usr/bin/env bash\n",
        "#SBATCH --job-name=hmpaper-%s\n" % os.path.splitext(os.path.basename(script))[0],
        "#SBATCH --array=0-%d\n" % (len(names) - 1),
        "#SBATCH --ntasks=%d\n#SBATCH --time=%s\n" % (args.ntasks, args.time),
        "# Written by %s --large: the HammingMesh paper's large cluster, one topology per task.\n"
        % os.path.relpath(me, SRC),
        "set -euo pipefail\nnames=(%s)\n" % " ".join(names),
        "t=${names[$SLURM_ARRAY_TASK_ID]}\n",
        '/usr/bin/python3 %s --large-task --topologies "$t" --out %s/"$t" --fabricsim %s --launch "srun" %s\n'
        % (shlex.quote(me), shlex.quote(out), shlex.quote(os.path.abspath(args.fabricsim)),
           " ".join(shlex.quote(x) for x in extra)),
    ])
    # (No value can break a line of it: --time is a Slurm time, the names are TOPOLOGIES' keys, the
    # rest quoted.)  Written whole or not at all.
    made = make_dirs(out)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".large.sbatch.", dir=out)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, job)
    except OSError as e:
        if tmp and os.path.exists(tmp):
            os.remove(tmp)
        remove_empty(made)
        fail("--out", "cannot write %s (%s)" % (job, e.strerror or e), 1)
    if args.no_submit or shutil.which("sbatch") is None:
        print("wrote %s (%s: submit it on the cluster with `sbatch %s`)" % (
            job, "not submitted" if args.no_submit else "no sbatch here", job))
        return
    r = _call(["sbatch", job], "sbatch")
    if r.returncode != 0:
        fail("sbatch %s" % job, "%s (%s)" % (_error_of(r), _status(r.returncode)), 1)
    print(r.stdout.strip() or r.stderr.strip())


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
