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
    return text.splitlines(keepends=True), topology if isinstance(topology, dict) else {}


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
    a = ap.parse_args()
    base = a.base if a.base is not None else DEFAULT_BASE
    if not base:
        fail("--base", "an empty path")
    # The header names the base as run from the source tree (inputs/...) when it is in it.
    full = os.path.abspath(base)
    shown = os.path.relpath(full, SRC) if full.startswith(SRC + os.sep) else base
    lines, topology = read_base(base, shown)
    rng = random.Random(a.seed)
    sizes = [s for s in HISTOGRAM if s <= a.max_gpus]
    weights = [HISTOGRAM[s] for s in sizes]
    endpoints = endpoints_of(topology)

    out = [f"# {a.jobs} data-parallel jobs arriving into a FIFO cluster queue; written by\n"
           f"#   scripts/job_mix.py --jobs {a.jobs} --seed {a.seed} --interarrival-ms {a.interarrival_ms:g} "
           f"--base {shown}\n# (see the script for the distributions). Base configuration: {shown}.\n"]
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
    out.append('\n[workload]\nkind = "dnn"\nqueue = "fifo"\nplacement = "linear"\n'
               '\n[output]\ninterval_ns = 0  # per-link totals only (set it for time series)\nflows = false\n')
    try:
        tomllib.loads("".join(out))
    except tomllib.TOMLDecodeError as e:
        fail("--base", "%s: the mix made of it would not be TOML (%s)" % (shown, e))
    size = sum(len(s) for s in out)
    t_ns = 0.0
    for j in range(a.jobs):
        t_ns += rng.expovariate(1.0 / (a.interarrival_ms * 1e6))
        if t_ns > MAX_START_NS:
            fail("--interarrival-ms", "job %d would arrive at %.4g ns, after fabricsim's limit of workload.start_ns "
                 "(%g ns): give fewer --jobs or a shorter --interarrival-ms" % (j, t_ns, MAX_START_NS))
        gpus = rng.choices(sizes, weights)[0]
        if endpoints is not None and gpus > endpoints:
            fail("--max-gpus", "job %d has %d GPUs, more than the %d endpoints of %s (fabricsim refuses a job "
                 "larger than the cluster): give --max-gpus %d or less" % (j, gpus, endpoints, shown, endpoints))
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
