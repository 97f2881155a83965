"""The fluid bounds of `fabricsim info` against packet-level runs on a small
Dragonfly (8 groups of 4 routers, 2 endpoints and 2 global cables each) under
one alltoall shift round of 32 = 4 groups: every group's traffic goes to one
other group, over one global cable, or over detours through other groups.
  * UGAL-L and Valiant take those detours and beat the minimal-route estimate
    (so it is no bound for them), while staying within the any-route bound;
  * `fluid.bound` is the any-route bound for them and, for minimal routing,
    the minimal-route bound (any split over the minimal routes; the tighter
    of it and the any-route bound where --full computes that), and every
    run's makespan share is within the bound info names for its routing;
  * on a 16x16 torus under a permutation, adaptive routing beats the equal
    split of the minimal routes (`fluid.equal_split_throughput`, what ECMP
    and spraying expect, once printed as the bound) and stays within the
    minimal-route bound;
  * the any-route bound is at most the minimal-route one's (it allows more);
    `info` computes it for minimal routing with --full only;
  * every run's per-source share (the mean of each source's own rate, the
    HammingMesh paper's global bandwidth) is within `fluid.per_source_bound`,
    which is above the makespan bound (sources that finish early count for
    more) and is none for jobs' traffic.
  fluid_bounds.py EXE
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py

exe = sys.argv[1]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
config = os.path.join(src, "inputs", "dragonfly_small.toml")
sets = {"topology.a": 4, "topology.p": 2, "topology.h": 2, "topology.groups": 8, "workload.kind": '"traffic"',
        "workload.pattern": '"alltoall"', "workload.message_bytes": 262144, "workload.messages": 1,
        "output.interval_ns": 0}
tmp = tempfile.TemporaryDirectory()
d = tmp.name
failures = []


def args(routing):
    out = []
    for k, v in list(sets.items()) + [("routing.algorithm", '"%s"' % routing)]:
        out += ["--set", "%s=%s" % (k, v)]
    return out


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


for routing, minimal in (("ugal_local", False), ("valiant", False), ("minimal", True)):
    info = json.loads(subprocess.run([exe, "info", config, "--json", "--full"] + args(routing), check=True,
                                     capture_output=True, text=True).stdout)["fluid"]
    h5 = os.path.join(d, routing + ".h5")
    subprocess.run([exe, "run", config, "-o", h5] + args(routing), check=True, capture_output=True)
    with h5py.File(h5, "r") as f:
        share = float(f["summary"].attrs["throughput_share"])
        per_source = float(f["summary"].attrs["per_source_share"])
    any_route = info["any_route"]["throughput_bound"]
    check(info["minimal_routing"] == minimal, "%s: minimal_routing is %s" % (routing, minimal))
    check(info["bound"] == (min(info["throughput_bound"], any_route) if minimal else any_route),
          "%s: fluid.bound is the %s bound" % (routing, "minimal-route" if minimal else "any-route"))
    check(share <= info["bound"] * (1 + 1e-9),
          "%s: makespan share %.4f within its bound %.4f" % (routing, share, info["bound"]))
    check(share <= any_route * (1 + 1e-9), "%s: within the any-route bound %.4f" % (routing, any_route))
    check(any_route >= info["throughput_bound"] * (1 - 1e-9), "%s: any-route bound %.4f >= minimal-route %.4f" % (
        routing, any_route, info["throughput_bound"]))
    ps_bound = info["per_source_bound"]
    check(ps_bound is not None and per_source <= ps_bound * (1 + 1e-9),
          "%s: per-source share %.4f within its bound %s" % (routing, per_source, ps_bound))
    check(ps_bound is not None and ps_bound >= info["bound"] * (1 - 1e-9),
          "%s: the per-source bound %s is at least the makespan bound %.4f" % (routing, ps_bound, info["bound"]))
    if routing == "ugal_local":
        check(share > 1.2 * info["throughput_bound"],
              "ugal_local: its detours beat the minimal-route estimate (%.4f > 1.2 x %.4f)" % (
                  share, info["throughput_bound"]))

# Adaptive routing chooses among the minimal routes by load: it can beat
# their equal split, never the bound over every split of them.
torus = os.path.join(src, "inputs", "torus_small.toml")
targs = ["--set", "topology.dims=[16, 16]", "--set", "output.interval_ns=0"]
info = json.loads(subprocess.run([exe, "info", torus, "--json"] + targs, check=True, capture_output=True,
                                 text=True).stdout)["fluid"]
h5 = os.path.join(d, "torus.h5")
subprocess.run([exe, "run", torus, "-o", h5] + targs, check=True, capture_output=True)
with h5py.File(h5, "r") as f:
    share = float(f["summary"].attrs["throughput_share"])
    per_source = float(f["summary"].attrs["per_source_share"])
check(info["minimal_routing"] and info["bound"] == info["throughput_bound"],
      "torus, adaptive: fluid.bound is the minimal-route bound")
check(share > 1.2 * info["equal_split_throughput"],
      "torus, adaptive: beats the equal split (%.4f > 1.2 x %.4f)" % (share, info["equal_split_throughput"]))
check(share <= info["bound"] * (1 + 1e-9), "torus, adaptive: makespan share %.4f within its bound %.4f" % (
    share, info["bound"]))
check(per_source <= info["per_source_bound"] * (1 + 1e-9), "torus, adaptive: per-source share %.4f within %.4f" % (
    per_source, info["per_source_bound"]))

plain = json.loads(subprocess.run([exe, "info", config, "--json"] + args("minimal"), check=True,
                                  capture_output=True, text=True).stdout)["fluid"]
check(plain["any_route"] is None and plain["bound"] == plain["throughput_bound"],
      "minimal, without --full: no any-route bound, the minimal-route one applies")

jobs = json.loads(subprocess.run([exe, "info", config, "--json", "--full"] + args("minimal") +
                                 ["--set", "workload.kind=\"collective\""], check=True, capture_output=True,
                                 text=True).stdout)
check(jobs["fluid_traffic"] == "jobs", "a collective: info estimates its messages")
jobs = jobs["fluid"]
check(jobs["per_source_bound"] is None and jobs["per_source_throughput_bound"] is None,
      "a collective's messages (sources start when their tasks do): no per-source bound")

if failures:
    sys.exit("%d check(s) failed" % len(failures))
print("all fluid-bound checks passed")
