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
[network] model = "flow" is set (a packet run of it takes hours).
"""
import argparse
import random
import sys

HISTOGRAM = {1: 11136, 2: 829, 4: 1109, 8: 4257, 16: 400, 32: 925, 64: 76, 128: 80, 256: 13}
MODELS = {"vgg16": (16, 32), "resnet50": (32, 64), "bert": (4, 8)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--interarrival-ms", type=float, default=0.5)
    ap.add_argument("--base", default="inputs/leaf_spine_2048.toml")
    ap.add_argument("--max-gpus", type=int, default=2048, help="drop larger sizes from the histogram")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sizes = [s for s in HISTOGRAM if s <= a.max_gpus]
    weights = [HISTOGRAM[s] for s in sizes]
    out = sys.stdout
    out.write(f"# {a.jobs} data-parallel jobs arriving into a FIFO cluster queue; written by\n"
              f"#   scripts/job_mix.py --jobs {a.jobs} --seed {a.seed} --interarrival-ms {a.interarrival_ms:g} "
              f"--base {a.base}\n# (see the script for the distributions). Base configuration: {a.base}.\n")
    section = None
    with open(a.base) as f:
        for line in f:
            s = line.strip()
            if s.startswith("["):
                section = s.strip("[]")
            if section in ("workload", "output"):
                continue
            out.write(line)
            if s == "[network]":
                out.write('model = "flow"\n')
    out.write('\n[workload]\nkind = "dnn"\nqueue = "fifo"\nplacement = "linear"\n'
              '\n[output]\ninterval_ns = 0  # per-link totals only (set it for time series)\nflows = false\n')
    t_ns = 0.0
    for j in range(a.jobs):
        t_ns += rng.expovariate(1.0 / (a.interarrival_ms * 1e6))
        gpus = rng.choices(sizes, weights)[0]
        model = rng.choice(sorted(MODELS))
        batch = rng.choice(MODELS[model])
        iters = rng.randint(1, 5)
        out.write(f'\n[[jobs]]\nmodel = "models/{model}.toml"\ndata_parallel = {gpus}\nminibatch = {gpus * batch}\n'
                  f"iterations = {iters}\nstart_ns = {t_ns:.0f}\n")


if __name__ == "__main__":
    main()
