"""Shared parts of the vClos paper's experiment scripts (README.md).

Han et al., "Isolated Scheduling for Distributed Training Tasks in GPU
Clusters" (arXiv:2308.05692, 2023); the specification fabricsim follows is
../shared/spec/vclos.md (sections named as spec N).  Every script writes its
job mix with scripts/job_mix.py into the output directory (the collective
jobs of spec 6.2: iterations of compute and one collective, so the mix names
no model file), runs it once per scheme in the flow model (the paper's
RapidNetSim is flow-level, spec 7), reads /jobs with the metrics of
analysis/fabricsim_analysis/cluster.py (JWT, JRT, JCT, stability, refusals
by cause, spec 8) and writes one CSV (one row per run, with its command, the
job_mix.py command of its mix and the fabricsim version) and one figure.
What is here is the paper's: its schemes as fabricsim settings, its
clusters, how its λ maps onto these jobs; the argument checks, runs, CSV and
figures are every paper's (jobs/papers/paperlib.py).
"""

import argparse
import math
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from paperlib import *  # noqa: E402,F401,F403
from paperlib import SRC, INPUTS, fail, _error_of, _status  # noqa: E402,F401
import paperlib  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "analysis"))
JOB_MIX = os.path.join(SRC, "scripts", "job_mix.py")

# The simulated clusters (spec 2.3, the project's reading: 64-port switches, T = 4, 100 Gb/s).
CLUSTERS = {
    "512": (os.path.join(INPUTS, "vclos_cluster512.toml"), 512, "CLUSTER512 (16 leaves x 32 spines, 4 GPUs/server)"),
    "2048": (os.path.join(INPUTS, "vclos_cluster2048.toml"), 2048, "CLUSTER2048 (64 leaves x 32 spines, 4 GPUs/server)"),
    # The spec's alternative reading of CLUSTER512 (2.3), on request only (--clusters 512b).
    "512b": (os.path.join(INPUTS, "vclos_cluster512_32x16.toml"), 512,
             "CLUSTER512, alternative (32 leaves x 16 spines, 4 GPUs/server)"),
}
DEFAULT_CLUSTERS = ["512", "2048"]
# The testbed (spec 2.4, 8.1): 8 servers x 4 GPUs, 100 Gb/s; the split into leaves and spines is
# unpublished (testbed32.toml: 4 leaves x 8 spines by default).
TESTBED = os.path.join(HERE, "testbed32.toml")
TESTBED_GPUS = 32

# The schemes (spec 5.5) as fabricsim settings; Best needs the cluster's GPU count.
SCHEMES = {
    "vclos": ("vClos", {"workload.scheduler": "vclos"}),  # routing.algorithm (ecmp) only for intra-leaf traffic
    "ecmp": ("ECMP", {"workload.scheduler": "whole_server", "routing.algorithm": "ecmp",
                      "routing.ecmp_hash": "murmur3"}),
    "sr": ("SR", {"workload.scheduler": "whole_server", "routing.algorithm": "smodk"}),
    "best": ("Best", {"workload.scheduler": "whole_server", "topology.kind": "ideal_switch",
                      "topology.gpu_servers": True}),
    # OCS-vClos: an optical layer of spines / OCS_SPINES_PER_SWITCH switches (scheme_overrides).
    "ocs": ("OCS-vClos", {"workload.scheduler": "ocs_vclos"}),
    # OCS-Releax: OCS-vClos without the whole-server rule (spec 5.2, 5.5).
    "releax": ("OCS-Releax", {"workload.scheduler": "ocs_vclos", "workload.ocs_whole_servers": False}),
    "becmp": ("Balanced ECMP", {"workload.scheduler": "whole_server", "routing.algorithm": "balanced_ecmp"}),
    # rECMP ("Redundance", spec 2.4, 5.5): ECMP with 1.5x the uplinks, on the testbed only
    # (testbed.py adds the spines).
    "recmp": ("rECMP", {"workload.scheduler": "whole_server", "routing.algorithm": "ecmp",
                        "routing.ecmp_hash": "murmur3"}),
}
SCHEME_NAMES = list(SCHEMES)
TESTBED_ONLY = ("recmp",)
CLUSTER_SCHEME_NAMES = [s for s in SCHEME_NAMES if s not in TESTBED_ONLY]
# Balanced ECMP counts flows per link: the flow model's (the packet model refuses it).
FLOW_ONLY = ("becmp",)
# The optical layer's size is unpublished (spec 2.5): each optical switch holds this many
# spines' ports and as many up-ports of every leaf, so a leaf may put up to 4 parallel circuits
# on one spine (README.md).
OCS_SPINES_PER_SWITCH = 4
OCS_RECONFIG_NS = 50e6  # spec 2.5

# The paper's lambda (mean inter-arrival, s, spec 6.2) for trace-length jobs; these jobs run for
# tens to hundreds of ms, so the scripts sweep --interarrival-ms instead.  LAMBDA_S_PER_MS maps
# one onto the other with the same relative spacing: the paper's 100, 110, 120, 130, 140 s are
# 2.5, 2.75, 3.0, 3.25, 3.5 ms here (README.md: what that means for the load).
LAMBDA_S_PER_MS = 40.0

STAGES = ("server", "leaf", "vclos", "servers", "ocs_spine", "ocs_clos")


class Runner(paperlib.Runner):
    """paperlib's Runner that also removes, after a failure, the files written into --out for the
    runs (the mixes, the testbed's trace): nothing is left behind then."""

    def __init__(self, args):
        super().__init__(args)
        self.written = []

    def close(self, ok=True):
        if not ok:
            for path in self.written:
                try:
                    os.remove(path)
                except OSError:
                    pass
            self.written = []
        super().close(ok)


def label(scheme):
    return SCHEMES[scheme][0]


def spines_of(path):
    """topology.spines of a cluster's input file."""
    import tomllib
    with open(path, "rb") as f:
        return int(tomllib.load(f)["topology"]["spines"])


def scheme_overrides(scheme, endpoints, spines=32, scale=1.0):
    """The --set overrides of a scheme on a cluster of `endpoints` GPUs and `spines` spines, for a
    mix whose times are `scale` times the paper's (the optical switches' 50 ms reconfiguration too)."""
    o = dict(SCHEMES[scheme][1])
    if scheme == "best":
        o["topology.endpoints"] = endpoints
    if scheme in ("ocs", "releax"):
        o["topology.ocs_switches"] = max(1, spines // OCS_SPINES_PER_SWITCH)
        o["workload.ocs_reconfig_ns"] = OCS_RECONFIG_NS * scale
    return o


def positive_float_list(what, hi=1e9):
    """An argparse type: comma-separated numbers > 0 and <= hi, each at most once, at least one."""
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("no %s given" % what)
        values = []
        for t in items:
            try:
                v = float(t)
            except ValueError:
                raise argparse.ArgumentTypeError("'%s' is not a number (give comma-separated %s)" % (t, what))
            if not (math.isfinite(v) and 0 < v <= hi):
                raise argparse.ArgumentTypeError("%s is out of range (%s must be > 0 and <= %g)" % (t, what, hi))
            if v in values:
                raise argparse.ArgumentTypeError("%s given twice" % t)
            values.append(v)
        return values
    return parse


def scale_type(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % text)
    if not (math.isfinite(v) and 0 < v <= 1):
        raise argparse.ArgumentTypeError("%s is out of range (must be > 0 and <= 1)" % text)
    return v


def parse_args(description):
    """The options every vClos script has: --quick, --seed and the run options."""
    p = Parser(description=description)  # noqa: F405
    p.add_argument("--quick", action="store_true", help="a reduced mix (seconds; what ctest runs)")
    p.add_argument("--seed", type=integer(0, 1 << 31), default=1,  # noqa: F405
                   help="the job mix's seed (scripts/job_mix.py --seed; default 1)")
    add_run_options(p, "papers-vclos")  # noqa: F405
    return p


def parse(p, outputs):
    return parse_checked(p, outputs)  # noqa: F405


def ms_text(x):
    """An inter-arrival time as it goes into a file name and the job_mix.py command."""
    return ("%.6f" % x).rstrip("0").rstrip(".")


def write_mix(run, name, base, extra):
    """scripts/job_mix.py --base BASE --traffic collective EXTRA > OUT/NAME; returns (path, the command
    as a string).  A mix already written by this script in this run is reused."""
    args = run.args
    path = os.path.join(os.path.abspath(args.out), name)
    cmd = [sys.executable, JOB_MIX, "--base", base, "--traffic", "collective"] + [str(x) for x in extra]
    shown = " ".join(shlex.quote(c) for c in cmd) + " > " + shlex.quote(path)
    done = getattr(args, "_mixes", None)
    if done is None:
        done = args._mixes = {}
    if done.get(path) == shown:
        return path, shown
    run.written.append(path)
    try:
        with open(path, "w") as f:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        fail("scripts/job_mix.py", "cannot run %s (%s)" % (cmd[0], e.strerror or e), 1)
    if r.returncode != 0:
        try:
            os.remove(path)
        except OSError:
            pass
        fail("scripts/job_mix.py", "%s (%s; the command: %s)" % (_error_of(r), _status(r.returncode), shown), 1)
    done[path] = shown
    return path, shown


def poisson_mix(run, cluster, jobs, interarrival_ms, scale=1.0):
    """The spec-6.2 mix (Helios GPU counts, Poisson arrivals) of `jobs` jobs on a cluster; (path, command)."""
    args = run.args
    base, endpoints, _ = CLUSTERS[cluster]
    name = "mix%s_%djobs_ia%sms_seed%d%s.toml" % (cluster, jobs, ms_text(interarrival_ms), args.seed,
                                                   "" if scale == 1 else "_scale%g" % scale)
    extra = ["--jobs", jobs, "--seed", args.seed, "--interarrival-ms", ms_text(interarrival_ms),
             "--max-gpus", endpoints, "--queue", "fifo"]
    if scale != 1:
        extra += ["--scale", "%g" % scale]
    return write_mix(run, name, base, extra)


def cluster_metrics(h5):
    """The vClos paper's metrics of one cluster queue run (analysis/fabricsim_analysis/cluster.py),
    times in ms; with the per-job arrays (ns) under '_jobs' and '_m' for the figures and checks."""
    from fabricsim_analysis import cluster as fc
    import numpy as np
    j = fc.load_jobs(h5)
    m = fc.metrics(j)
    g = fc.gpus(j).astype(np.float64)
    done = (j["start_ns"] >= 0) & (j["end_ns"] >= 0)
    span = float(j["arrival_ns"].max() - j["arrival_ns"].min()) if j["n"] > 1 else float("nan")
    busy = float(np.sum(g[done] * (j["end_ns"][done] - j["start_ns"][done])))
    ep = j["cluster_endpoints"]
    out = {"jobs": m["jobs"], "finished": m["finished"]}
    for k in ("mean_jwt", "mean_jrt", "mean_jct", "median_jct", "p99_jct", "stability"):
        out[k + "_ms"] = m[k] / 1e6
    out.update({"classes": m["classes"], "refused_gpus": m["refused_gpus"], "refused_network": m["refused_network"],
                "gpu_utilization": m["utilization"],
                # GPU-time the jobs held over what the cluster offers while they arrive
                "offered_load": busy / (ep * span) if ep and span > 0 else float("nan"),
                "gpu_seconds": busy / 1e9})
    for s in STAGES:
        out["placed_" + s] = m["stages"].get(s, 0)
    out["vclos_links"] = int(np.sum(j["virtual_leaves"] * j["virtual_spines"]))
    out["_jobs"], out["_m"] = j, m
    return out


def cluster_run(run, tag, mix, overrides):
    """One run of a mix; its metrics (cluster_metrics) with the wall time, the version and the command.
    --launch prefixes packet-model runs only."""
    words = run.args.launch_words
    if overrides.get("network.model") != "packet":
        run.args.launch_words = []  # --launch is for the packet model; the flow model runs on one rank
    try:
        h5, wall, cmd = run.run(tag, mix, overrides)
    finally:
        run.args.launch_words = words
    r = cluster_metrics(h5)
    run.done(h5)
    if r["finished"] != r["jobs"]:
        fail("fabricsim run", "%d of %d jobs finished (the command: %s)" % (r["finished"], r["jobs"], cmd), 1)
    r.update({"wall_s": round(wall, 3), "fabricsim": run.version, "command": cmd})
    return r


def public(row):
    """A row without the per-job arrays."""
    return {k: v for k, v in row.items() if not k.startswith("_")}


def jct_cdf(ax, rows, title):
    """The JCT CDF of each row's finished jobs (log x, ms)."""
    import numpy as np
    for i, r in enumerate(rows):
        x = np.sort(r["_m"]["jct"]) / 1e6
        if not x.size:
            continue
        y = np.arange(1, x.size + 1) / float(x.size)
        ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post", color="C%d" % i,
                label="%s (mean %.1f ms)" % (r["label"], r["mean_jct_ms"]))
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("JCT = JWT + JRT (ms)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
