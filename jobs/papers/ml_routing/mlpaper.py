"""Shared parts of the routing paper's experiment scripts (README.md).

Cohen et al., "Routing for Large ML Models" (arXiv:2503.05324); the
specification is ../shared/spec/ml-routing.md.  Each script runs fabricsim on
inputs/ml_routing_2048.toml (the paper's 2048-GPU leaf-spine with its
llm_dp workload) over the paper's job mixes (spec 5.5), routing schemes and
failed spines, reads /llm from the HDF5 outputs and writes one CSV (every
row with its command) and one figure.  The argument checks, runs, CSV and
figures are every paper's (jobs/papers/paperlib.py).
"""

import os
import shlex
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from paperlib import *  # noqa: E402,F401,F403
from paperlib import _call, _error_of, _py, _status  # noqa: E402,F401

INPUT = os.path.join(INPUTS, "ml_routing_2048.toml")  # noqa: F405

# The paper's scenarios (spec 5.5): ring size -> job counts it ran.
SCENARIOS = [(2, j) for j in range(1, 6)] + [(4, j) for j in range(1, 6)] + [(8, j) for j in range(1, 4)]
SCHEMES = ["ecmp", "greedy", "edge_coloring", "annealing", "ilp"]
# Failed spines: the paper's 1, 4 and 8 on ring sizes 4 and 8 (spec 5.6).
FAILURES = [0, 1, 4, 8]
SPINES = 32


def scenario_list(text):
    """An argparse type: comma-separated RING:JOBS pairs of the paper's scenarios."""
    import argparse
    out = []
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        try:
            ring, jobs = (int(x) for x in item.split(":"))
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not RING:JOBS (e.g. 4:2)" % item)
        if (ring, jobs) not in SCENARIOS:
            raise argparse.ArgumentTypeError("%s is not one of the paper's scenarios (%s)" % (
                item, ", ".join("%d:%d" % s for s in SCENARIOS)))
        if (ring, jobs) in out:
            raise argparse.ArgumentTypeError("%s given twice" % item)
        out.append((ring, jobs))
    if not out:
        raise argparse.ArgumentTypeError("no scenario given")
    return out


scheme_list = name_list("scheme", SCHEMES)  # noqa: F405


failure_list = integer_list(0, SPINES - 1, "failed-spine counts")  # noqa: F405


def parse_args(description):
    p = Parser(description=description)  # noqa: F405
    p.add_argument("--quick", action="store_true", help="a reduced grid (seconds; what ctest runs)")
    p.add_argument("--scenarios", type=scenario_list, default=None,
                   help="comma-separated RING:JOBS of the paper's mixes (default: all 13)")
    p.add_argument("--schemes", type=scheme_list, default=None, help="comma-separated: " + ", ".join(SCHEMES))
    p.add_argument("--failures", type=failure_list, default=None,
                   help="failed-spine counts (default 0,1,4,8; >0 on ring sizes 4 and 8, as the paper)")
    p.add_argument("--iterations", type=integer(1, 1000), default=None,  # noqa: F405
                   help="training iterations per job (default 10, as the paper)")
    p.add_argument("--ilp-time-limit", type=float, default=10.0, help="CBC's limit per decision, seconds")
    add_run_options(p, "papers-ml-routing")  # noqa: F405
    return p


def parse(p, outputs, large=False):
    args = p.parse_args()
    if not (args.ilp_time_limit > 0):
        fail("--ilp-time-limit", "%r is not a positive number of seconds" % args.ilp_time_limit)  # noqa: F405
    check_fabricsim(args)  # noqa: F405
    if large:
        args.launch, args.launch_words, args.launch_where = "", [], "--launch"
        check_out(args, ["packet.sbatch"])  # noqa: F405
    else:
        check_launch(args)  # noqa: F405
        check_out(args, outputs, ["runs"] if args.keep else [])  # noqa: F405
    return args


def failure_rows(k):
    """[[failures]] tables for the k highest-id spines, down from t = 0 (spec 5.6)."""
    return "".join('\n[[failures]]\nelement = "spine%d"\n' % s for s in range(SPINES - k, SPINES))


def config_with_failures(run, k):
    """The input with k failed spines (written next to the runs: [[failures]] cannot be --set)."""
    if k == 0:
        return INPUT
    path = os.path.join(run.runs, "ml_routing_2048_down%d.toml" % k)
    if not os.path.exists(path):
        with open(INPUT) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text + failure_rows(k))
    return path


def llm_tables(h5):
    """/llm's jobs and decisions as lists of dicts, and the /summary attributes."""
    import h5py
    out = {}
    with h5py.File(h5, "r") as f:
        for table in ("jobs", "decisions"):
            g = f["llm/" + table]
            cols = {k: [_text(_py(v)) for v in g[k][:]] for k in g.keys()}  # noqa: F405
            n = len(next(iter(cols.values()))) if cols else 0
            out[table] = [{k: cols[k][i] for k in cols} for i in range(n)]
        out["summary"] = {k: _py(v) for k, v in f["summary"].attrs.items()}  # noqa: F405
    return out


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def quote(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def write_array_job(args, script, tasks, job_name, comment):
    """A Slurm array job, one task per line of TASKS (each the arguments of
    one run of SCRIPT): OUT/packet.sbatch, submitted when sbatch exists."""
    import shutil
    out = os.path.abspath(args.out)
    job = os.path.join(args.out, "packet.sbatch")
    me = os.path.abspath(script)
    lines = ["#!/usr/bin/env bash\n", "#SBATCH --job-name=%s\n" % job_name,
             "#SBATCH --array=0-%d\n" % (len(tasks) - 1),
             "#SBATCH --ntasks=%d\n#SBATCH --time=%s\n" % (args.ntasks, args.time),
             "# Written by %s: %s\n" % (os.path.relpath(me, SRC), comment),  # noqa: F405
             "set -euo pipefail\ntasks=(\n"]
    lines += ["  %s\n" % shlex.quote(t) for t in tasks]
    lines += [")\n", 'eval "args=(${tasks[$SLURM_ARRAY_TASK_ID]})"\n',
              '/usr/bin/python3 %s "${args[@]}" --fabricsim %s --launch "srun"\n' % (
                  shlex.quote(me), shlex.quote(os.path.abspath(args.fabricsim)))]
    made = make_dirs(out)  # noqa: F405
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".packet.sbatch.", dir=out)
        with os.fdopen(fd, "w") as f:
            f.write("".join(lines))
        os.chmod(tmp, 0o755)
        os.replace(tmp, job)
    except OSError as e:
        if tmp and os.path.exists(tmp):
            os.remove(tmp)
        remove_empty(made)  # noqa: F405
        fail("--out", "cannot write %s (%s)" % (job, e.strerror or e), 1)  # noqa: F405
    if args.no_submit or shutil.which("sbatch") is None:
        print("wrote %s, %d tasks (%s: submit it on the cluster with `sbatch %s`)" % (
            job, len(tasks), "not submitted" if args.no_submit else "no sbatch here", job))
        return
    r = _call(["sbatch", job], "sbatch")
    if r.returncode != 0:
        fail("sbatch %s" % job, "%s (%s)" % (_error_of(r), _status(r.returncode)), 1)  # noqa: F405
    print(r.stdout.strip() or r.stderr.strip())
