#!/usr/bin/env python3
"""Writes a cluster job mix: a fabricsim configuration of N data-parallel
training jobs arriving over time into a FIFO cluster queue
(workload.queue = "fifo"), for the cluster-scheduling studies (vClos,
../shared/spec/vclos.md section 6.2; the routing paper's job mixes).

  scripts/job_mix.py [--jobs 1000] [--seed 1] [--interarrival-ms 4]
                     [--base inputs/leaf_spine_2048.toml] > inputs/leaf_spine_2048_job_mix.toml

Each job, drawn with a seeded generator (Python's random, so the same seed
gives the same file on any machine):
  * GPU count from the vClos code's Helios histogram (1: 11136, 2: 829,
    4: 1109, 8: 4257, 16: 400, 32: 925, 64: 76, 128: 80, 256: 13);
  * a model among VGG16, ResNet-50 and BERT (the vClos testbed's data-
    parallel models), per-GPU batch from vClos Table 3 (VGG16 16 or 32,
    ResNet-50 32 or 64, BERT 4 or 8), data parallel over all its GPUs;
  * 1 to 5 iterations (durations are unpublished; vclos.md 6.2: iteration
    count x iteration time);
  * arrival: Poisson, mean inter-arrival --interarrival-ms (vClos uses 15 s
    with trace-length jobs; these jobs run for tenths of a second to
    seconds, so the default loads the 2048-GPU cluster enough that jobs queue).
--traffic collective (the vClos simulations' jobs, much lighter for thousands
of jobs): each job is iterations of compute and one collective, from the
model files (inputs/models/: forward + backward per sample x batch, the
backward share overlapping the operation, the gradient bytes): VGG16,
ResNet-50 and BERT allreduce their gradients by ring, hierarchical or
halving-doubling (drawn), DLRM's embeddings make an alltoall; a 1-GPU job
is its compute alone.  --scale F multiplies bytes and compute (a packet-level
run of the same mix).  --trace FILE.csv reads the jobs instead (arrival_ms,
gpus, iterations, model or bytes and compute_ms; optional deadline_ms,
algorithm, op, overlap, batch), each row a collective job; a bad row is one
line naming the file, line and column.  --queue and --scheduler set
workload.queue and workload.scheduler (docs/usage.md, "Cluster scheduling").
The base configuration's sections (topology, network, routing) are copied;
[network] model = "flow" is set (a packet run of it takes hours). The
default --base is found beside this script (inputs/ of its source tree),
from any directory.

It writes nothing that fabricsim would refuse: at least one job, a finite
inter-arrival time > 0, every arrival within workload.start_ns's 1e15 ns, no
job larger than the base's cluster (where its [topology] states the
endpoints: fat_tree, leaf_spine), a configuration within the 64 MiB that
fabricsim keeps in /meta, and a base that is a TOML file. Anything else is
one line `error: OPTION: WHAT` on stderr, exit status 2, nothing on stdout.
"""
import argparse
import math
import os
import random
import re
import sys
import tomllib

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BASE = os.path.join(SRC, "inputs", "leaf_spine_2048.toml")

HISTOGRAM = {1: 11136, 2: 829, 4: 1109, 8: 4257, 16: 400, 32: 925, 64: 76, 128: 80, 256: 13}
MODELS = {"vgg16": (16, 32), "resnet50": (32, 64), "bert": (4, 8)}
# --traffic collective: the vClos testbed's models (Table 3 batches); DLRM's embeddings are an alltoall.
COLLECTIVE_MODELS = {"vgg16": (16, 32), "resnet50": (32, 64), "bert": (4, 8), "dlrm": (256, 512)}
ALLREDUCE_ALGORITHMS = ("ring", "hierarchical", "halving_doubling")  # the testbed's (spec 6.1)


def collective_job(gpus, op, algorithm, nbytes, compute_ns, overlap, iterations, arrival_ns, deadline_ns, gps):
    """The [[jobs]] table of one training job (--traffic collective, --trace): `iterations` of
    `compute_ns` and one `op` of `nbytes` per rank, `overlap` of the compute alongside it; one
    GPU: the compute alone.  hierarchical needs whole servers (at least two): else ring."""
    head = "\n[[jobs]]\nkind = \"collective\"\n"
    tail = f"iterations = {iterations}\nstart_ns = {arrival_ns:.0f}\n" + (
        f"deadline_ns = {deadline_ns:.0f}\n" if deadline_ns else "")
    if gpus == 1:
        return head + f"ranks = 1\ncompute_ns = {compute_ns:.0f}\n" + tail
    if op == "alltoall":
        algorithm = "pairwise"
    elif algorithm == "hierarchical" and not (gps > 1 and gpus % gps == 0 and gpus >= 2 * gps):
        algorithm = "ring"
    return (head + f'op = "{op}"\nalgorithm = "{algorithm}"\nranks = {gpus}\nsizes = [{max(1, round(nbytes))}]\n'
            f"compute_ns = {compute_ns:.0f}\noverlap = {overlap:.6f}\n" + tail)


def read_trace(path, endpoints, shown_base):
    """Rows of a job trace CSV: (arrival_ns, gpus, op, nbytes, compute_ns, overlap, iterations,
    deadline_ns, algorithm).  Columns: arrival_ms, gpus, iterations, and either `model` (one of
    COLLECTIVE_MODELS, with `batch`) or `bytes` and `compute_ms` (then optional `op`: allreduce
    or alltoall, `overlap`); optional `deadline_ms`, `algorithm`.  A bad row: one line
    `error: FILE:LINE: COLUMN: what`."""
    import csv
    try:
        f = open(path, newline="")
    except OSError as e:
        fail("--trace", "%s: %s" % (path, e.strerror or e))
    with f:
        try:
            rows = list(csv.reader(f))
        except (csv.Error, UnicodeDecodeError) as e:
            fail("--trace", "%s: not a CSV file (%s)" % (path, e))
    if not rows:
        fail("--trace", "%s: empty (a header line and one row per job)" % path)
    header = [h.strip() for h in rows[0]]
    known = {"arrival_ms", "gpus", "iterations", "model", "batch", "bytes", "compute_ms", "op", "overlap",
             "deadline_ms", "algorithm"}
    for h in header:
        if h not in known:
            fail("--trace", "%s:1: unknown column '%s' (columns: %s)" % (path, h, ", ".join(sorted(known))))
    for need in ("arrival_ms", "gpus", "iterations"):
        if need not in header:
            fail("--trace", "%s:1: no '%s' column" % (path, need))
    if "model" not in header and not {"bytes", "compute_ms"} <= set(header):
        fail("--trace", "%s:1: give a 'model' column, or 'bytes' and 'compute_ms'" % path)
    out = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(x.strip() for x in row):
            continue
        if len(row) != len(header):
            fail("--trace", "%s:%d: %d fields, the header has %d" % (path, line, len(row), len(header)))
        r = dict(zip(header, (x.strip() for x in row)))

        def num(col, lo, hi, integer=False, default=None):
            text = r.get(col, "")
            if text == "" and default is not None:
                return default
            try:
                v = int(text, 10) if integer else float(text)
            except ValueError:
                fail("--trace", "%s:%d: %s: '%s' is not %s" % (path, line, col, text,
                                                              "an integer" if integer else "a number"))
            if not (math.isfinite(v) and lo <= v <= hi):
                fail("--trace", "%s:%d: %s: %s is out of range (%g to %g)" % (path, line, col, text, lo, hi))
            return v
        arrival = num("arrival_ms", 0, MAX_START_NS / 1e6) * 1e6
        gpus = num("gpus", 1, 1 << 20, integer=True)
        if endpoints is not None and gpus > endpoints:
            fail("--trace", "%s:%d: gpus: %d GPUs, more than the %d endpoints of %s" % (
                path, line, gpus, endpoints, shown_base))
        iterations = num("iterations", 1, 1 << 20, integer=True)
        deadline = num("deadline_ms", 0, MAX_START_NS / 1e6, default=0.0) * 1e6
        if deadline and deadline <= arrival:
            fail("--trace", "%s:%d: deadline_ms: %g ms is not after the job's arrival (%g ms)" % (
                path, line, deadline / 1e6, arrival / 1e6))
        algorithm = r.get("algorithm") or "ring"
        if algorithm not in ALLREDUCE_ALGORITHMS + ("pairwise",):
            fail("--trace", "%s:%d: algorithm: '%s' is not one of %s" % (
                path, line, algorithm, ", ".join(ALLREDUCE_ALGORITHMS + ("pairwise",))))
        if r.get("model"):
            model = r["model"]
            if model not in COLLECTIVE_MODELS:
                fail("--trace", "%s:%d: model: unknown model '%s' (%s)" % (
                    path, line, model, ", ".join(sorted(COLLECTIVE_MODELS))))
            batch = num("batch", 1, 1 << 20, integer=True, default=COLLECTIVE_MODELS[model][0])
            compute, backward, grad, a2a = model_traffic(model)
            op, nbytes = ("alltoall", a2a * batch) if model == "dlrm" else ("allreduce", grad)
            out.append((arrival, gpus, op, nbytes, compute * batch, 0.0 if op == "alltoall" else backward,
                        iterations, deadline, algorithm))
        else:
            op = r.get("op") or "allreduce"
            if op not in ("allreduce", "alltoall"):
                fail("--trace", "%s:%d: op: '%s' is not allreduce or alltoall" % (path, line, op))
            out.append((arrival, gpus, op, num("bytes", 1, 1 << 40), num("compute_ms", 0, 1e6) * 1e6,
                        num("overlap", 0, 1, default=0.0), iterations, deadline, algorithm))
    if not out:
        fail("--trace", "%s: no jobs (a header line and one row per job)" % path)
    return out


def model_traffic(name):
    """Per sample: compute (forward + backward, ns), the backward share, gradient bytes and alltoall
    bytes, from inputs/models/NAME.toml (docs/models.md: per-sample compute and bytes per layer)."""
    path = os.path.join(SRC, "inputs", "models", name + ".toml")
    with open(path, "rb") as f:
        d = tomllib.load(f)
    layers = d["layer"]
    fwd = sum(l["forward_ns"] for l in layers)
    bwd = sum(l["backward_ns"] for l in layers)
    grad = sum(l["params"] for l in layers) * d["model"].get("bytes_per_value", 4)
    a2a = sum(l.get("alltoall_bytes", 0) for l in layers)
    return fwd + bwd, bwd / (fwd + bwd), grad, a2a

# What fabricsim accepts (docs/params.md): workload.start_ns at most 1e15 ns; the resolved
# configuration, kept whole in /meta, at most 64 MiB (src/app/run.cpp, kMetaConfigBytes), of
# which the base's tables with every default take a few KiB (64 KiB are left for them).
MAX_START_NS = 1e15
MAX_CONFIG_BYTES = (64 << 20) - (64 << 10)
# Sections of the base that the mix replaces (the workload is the queue of jobs).
REPLACED = ("workload", "output", "jobs")
HEADER = re.compile(r"\s*\[\[?\s*([A-Za-z0-9_.\-\" ]+?)\s*\]\]?\s*(#.*)?")


def fail(where, what):
    """One line `error: WHERE: WHAT` on stderr, exit status 2; nothing is written to stdout."""
    sys.stderr.write("error: %s: %s\n" % (where, " ".join(str(what).split())))
    sys.exit(2)


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one `error: OPTION: WHAT` line, exit status 2."""

    def error(self, message):
        m = re.match(r"argument ([^:]+): (.*)", message, re.S)
        where, what = (m.group(1).split("/")[0], m.group(2)) if m else ("command line", message)
        fail(where, "%s (%s --help for usage)" % (what, self.prog))


def integer(lo=None, hi=None):
    """An argparse type: an integer in [lo, hi] (None: no bound)."""
    def parse(text):
        try:
            v = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not an integer" % text)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError("%d is out of range (must be %s)" % (v, " and ".join(
                ([">= %d" % lo] if lo is not None else []) + (["<= %d" % hi] if hi is not None else []))))
        return v
    return parse


def positive_ms(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % text)
    if not (math.isfinite(v) and 0 < v <= MAX_START_NS / 1e6):
        raise argparse.ArgumentTypeError("%s: must be a number > 0 and <= %g (milliseconds; fabricsim's "
                                         "workload.start_ns ends at %g ns)" % (text, MAX_START_NS / 1e6, MAX_START_NS))
    return v


def endpoints_of(topology):
    """The endpoints of the base's topology where its keys state them (fat_tree, leaf_spine), else None."""
    kind = topology.get("kind")
    try:
        if kind == "fat_tree" and "endpoints" in topology:
            return int(topology["endpoints"])
        if kind == "leaf_spine" and all(k in topology for k in ("leaves", "servers_per_leaf", "gpus_per_server")):
            return int(topology["leaves"]) * int(topology["servers_per_leaf"]) * int(topology["gpus_per_server"])
    except (TypeError, ValueError):
        return None
    return None


def read_base(path, shown):
    """The lines of the base configuration, checked to be a TOML file; and its topology table."""
    if os.path.isdir(path):
        fail("--base", "%s is a directory, not a configuration file" % shown)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail("--base", "%s: %s" % (shown, e.strerror or e))
    try:
        text = data.decode("utf-8").replace("\r\n", "\n")
        parsed = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        fail("--base", "%s: not a TOML file (%s)" % (shown, e))
    topology = parsed.get("topology", {})
    workload = parsed.get("workload", {})
    return (text.splitlines(keepends=True), topology if isinstance(topology, dict) else {},
            workload if isinstance(workload, dict) else {})


def main():
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=integer(1), default=1000,
                    help="jobs in the mix (at least 1, as fabricsim needs one [[jobs]] table)")
    ap.add_argument("--seed", type=integer(), default=1)
    ap.add_argument("--interarrival-ms", type=positive_ms, default=0.5,
                    help="mean time between arrivals, ms (> 0)")
    ap.add_argument("--base", default=None,
                    help="configuration whose topology, network and routing the mix runs on "
                         "(default: inputs/leaf_spine_2048.toml beside this script)")
    ap.add_argument("--max-gpus", type=integer(1, 1 << 20), default=2048,
                    help="drop larger sizes from the histogram")
    ap.add_argument("--traffic", choices=("dnn", "collective"), default="dnn",
                    help="dnn: each job a DNN job of its model (every layer); collective: the vClos "
                         "simulations' jobs, iterations of compute and one collective (the gradients' "
                         "allreduce by ring, hierarchical or halving-doubling, or DLRM's alltoall), "
                         "much lighter for mixes of thousands of jobs")
    ap.add_argument("--trace", default=None,
                    help="a job trace CSV instead of the Poisson generator (arrival_ms, gpus, iterations, model or "
                         "bytes and compute_ms; optional deadline_ms, algorithm, op, overlap, batch): each row a "
                         "job of --traffic collective")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="--traffic collective: multiply every job's bytes and compute by this (> 0, <= 1): "
                         "a packet-level run of the same mix at a fraction of its cost")
    ap.add_argument("--queue", choices=("fifo", "edf", "fewest_gpus_first"), default="fifo",
                    help="the cluster queue's order (workload.queue)")
    ap.add_argument("--scheduler", choices=("free", "whole_server", "vclos"), default=None,
                    help="the resource scheduler (workload.scheduler; default: the base's, else free)")
    a = ap.parse_args()
    base = a.base if a.base is not None else DEFAULT_BASE
    if not base:
        fail("--base", "an empty path")
    # The header names the base as run from the source tree (inputs/...) when it is in it.
    full = os.path.abspath(base)
    shown = os.path.relpath(full, SRC) if full.startswith(SRC + os.sep) else base
    lines, topology, base_workload = read_base(base, shown)
    scheduler = a.scheduler
    if scheduler is None:
        scheduler = base_workload.get("scheduler", "free")
        if scheduler not in ("free", "whole_server", "vclos"):
            fail("--base", "%s: workload.scheduler = %r is not free, whole_server or vclos" % (shown, scheduler))
    rng = random.Random(a.seed)
    if not (math.isfinite(a.scale) and 0 < a.scale <= 1):
        fail("--scale", "%g: must be a number > 0 and <= 1" % a.scale)
    if a.trace is not None:
        a.traffic = "collective"
    if a.scale != 1 and a.traffic != "collective":
        fail("--scale", "scales the jobs of --traffic collective only")
    traffic = {m: model_traffic(m) for m in COLLECTIVE_MODELS} if a.traffic == "collective" else {}
    try:
        gps = int(topology.get("gpus_per_server", 8)) if topology.get("kind") == "leaf_spine" else 1
    except (TypeError, ValueError):
        gps = 1
    sizes = [s for s in HISTOGRAM if s <= a.max_gpus]
    weights = [HISTOGRAM[s] for s in sizes]
    endpoints = endpoints_of(topology)

    source = (f"--trace {a.trace}" if a.trace is not None else
              f"--jobs {a.jobs} --seed {a.seed} --interarrival-ms {a.interarrival_ms:g}")
    out = [f"# {'the jobs of ' + a.trace if a.trace else str(a.jobs) + ' data-parallel jobs'} arriving into a "
           f"cluster queue; written by\n"
           f"#   scripts/job_mix.py {source} "
           f"--base {shown} --traffic {a.traffic}{' --scale %g' % a.scale if a.scale != 1 else ''} --queue {a.queue} --scheduler {scheduler}\n"
           f"# (see the script for the distributions). Base configuration: {shown}.\n"]
    section = None
    network = False
    for line in lines:
        m = HEADER.fullmatch(line.rstrip("\r\n"))
        if m:
            section = m.group(1).replace('"', "").replace(" ", "")
        top = (section or "").split(".")[0]
        if top in REPLACED:
            continue
        if section == "network" and not m and re.match(r"\s*model\s*=", line):
            continue  # (the mix sets the model)
        if section is None and re.match(r"\s*(%s)\s*[.=]" % "|".join(REPLACED), line):
            continue  # (a dotted key or inline table of a replaced section before the first table)
        if m and not line.endswith("\n"):
            line += "\n"
        out.append(line)
        if m and section == "network":
            out.append('model = "flow"\n')
            network = True
    if not network:
        out.append('\n[network]\nmodel = "flow"\n')
    out.append(f'\n[workload]\nkind = "dnn"\nqueue = "{a.queue}"\nscheduler = "{scheduler}"\nplacement = "linear"\n'
               '\n[output]\ninterval_ns = 0  # per-link totals only (set it for time series)\nflows = false\n')
    try:
        tomllib.loads("".join(out))
    except tomllib.TOMLDecodeError as e:
        fail("--base", "%s: the mix made of it would not be TOML (%s)" % (shown, e))
    size = sum(len(s) for s in out)
    if a.trace is not None:
        for j, (t, gpus, op, nbytes, compute, overlap, iters, deadline, alg) in enumerate(
                read_trace(a.trace, endpoints, shown)):
            out.append(collective_job(gpus, op, alg, nbytes * a.scale, compute * a.scale, overlap, iters, t,
                                      deadline, gps))
            size += len(out[-1]) + 2
        if size > MAX_CONFIG_BYTES:
            fail("--trace", "the trace makes a configuration of over 64 MiB, more than fabricsim keeps in its "
                 "output's /meta (it refuses the run): split it")
    t_ns = 0.0
    for j in range(a.jobs if a.trace is None else 0):
        t_ns += rng.expovariate(1.0 / (a.interarrival_ms * 1e6))
        if t_ns > MAX_START_NS:
            fail("--interarrival-ms", "job %d would arrive at %.4g ns, after fabricsim's limit of workload.start_ns "
                 "(%g ns): give fewer --jobs or a shorter --interarrival-ms" % (j, t_ns, MAX_START_NS))
        gpus = rng.choices(sizes, weights)[0]
        if endpoints is not None and gpus > endpoints:
            fail("--max-gpus", "job %d has %d GPUs, more than the %d endpoints of %s (fabricsim refuses a job "
                 "larger than the cluster): give --max-gpus %d or less" % (j, gpus, endpoints, shown, endpoints))
        if a.traffic == "collective":
            model = rng.choice(sorted(COLLECTIVE_MODELS))
            batch = rng.choice(COLLECTIVE_MODELS[model])
            iters = rng.randint(1, 5)
            compute, backward, grad, a2a = traffic[model]
            alg = rng.choice(ALLREDUCE_ALGORITHMS)
            op, nbytes = ("alltoall", a2a * batch) if model == "dlrm" else ("allreduce", grad)
            out.append(collective_job(gpus, op, alg, nbytes * a.scale, compute * batch * a.scale,
                                      0.0 if op == "alltoall" else backward, iters, t_ns, None, gps))
            size += len(out[-1]) + 2
            if size > MAX_CONFIG_BYTES:
                fail("--jobs", "%d jobs make a configuration of over 64 MiB, more than fabricsim keeps in its "
                     "output's /meta (it refuses the run): split the mix (job %d is where it ends)" % (a.jobs, j))
            continue
        model = rng.choice(sorted(MODELS))
        batch = rng.choice(MODELS[model])
        iters = rng.randint(1, 5)
        out.append(f'\n[[jobs]]\nmodel = "models/{model}.toml"\ndata_parallel = {gpus}\nminibatch = {gpus * batch}\n'
                   f"iterations = {iters}\nstart_ns = {t_ns:.0f}\n")
        size += len(out[-1]) + 2  # (fabricsim's resolved configuration writes start_ns = N.0)
        if size > MAX_CONFIG_BYTES:
            fail("--jobs", "%d jobs make a configuration of over 64 MiB, more than fabricsim keeps in its "
                 "output's /meta (it refuses the run): split the mix (job %d is where it ends)" % (a.jobs, j))
    try:
        sys.stdout.write("".join(out))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except OSError as e:
        sys.stderr.write("error: standard output: %s\n" % (e.strerror or e))
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted (SIGINT)\n")
        sys.exit(130)
