"""A trace larger than the memory limit is refused while it is read (issue 33).

Every rank reads and plans the whole trace, so a trace of many millions of
nodes could take the machine before the planner's budget (engine.memory_limit_gib)
was ever consulted: the readers held every node first.  Here, for a Chakra trace
(fabricsim export-chakra of a 512-rank data-parallel job, 350k nodes) and for a
JSON trace (its text small, its tree large):
  * the budget left to the jobs is set to a few MiB: `fabricsim info --json`
    gives the run's estimate without the jobs, the limit is that plus the
    budget;
  * the run is refused with one line naming engine.memory_limit_gib and
    "reading the trace", exit status 2, no output file;
  * the process's peak resident memory (getrusage of the child) stays below
    the limit it was given: before, it read the whole trace first (the Chakra
    one ~25 MiB of nodes beyond the limit) and was refused while planning;
  * with the limit 5% above the run's own estimate (`info --json`), the same
    trace runs (the check refuses only what would outgrow the limit).
  trace_memory_limit.py EXE SRC
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

exe, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
d = tempfile.mkdtemp()
atexit.register(shutil.rmtree, d, True)
MIB = 1 << 20
checks = 0


def run(cmd):
    """The command's result and its peak resident memory in bytes, measured in a process of its own (the
    children's ru_maxrss is the largest of every child so far)."""
    wrap = ("import json, resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "print(json.dumps([r.returncode, r.stderr, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))")
    w = subprocess.run([sys.executable, "-c", wrap] + cmd, capture_output=True, text=True, cwd=d)
    rc, err, kib = json.loads(w.stdout)
    return subprocess.CompletedProcess(cmd, rc, "", err), kib * 1024


def base_estimate(sets):
    r = subprocess.run([exe, "info", "--json"] + sum((["--set", s] for s in sets), []), capture_output=True,
                       text=True, cwd=d)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["memory"]
    return m["per_rank_bytes"] - m["planned_jobs"]


def refused(name, sets, budget):
    global checks
    base = base_estimate(sets)
    limit = base + budget
    out = os.path.join(d, name + ".h5")
    r, peak = run([exe, "run", "-o", out, "--set", f"engine.memory_limit_gib={limit / (1 << 30)!r}"] +
                  sum((["--set", s] for s in sets), []))
    lines = [l for l in r.stderr.strip().splitlines() if not l.startswith("warning:")]
    assert peak <= limit, f"{name}: peak {peak / MIB:.1f} MiB above the {limit / MIB:.1f} MiB limit"
    assert r.returncode == 2, (name, r.returncode, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), (name, r.stderr)
    assert "engine.memory_limit_gib: reading " in lines[0], (name, lines[0])
    assert not os.path.exists(out), name
    checks += 1
    print(f"ok   {name}: refused at peak {peak / MIB:.1f} MiB under a {limit / MIB:.1f} MiB limit "
          f"({budget / MIB:.0f} MiB for the jobs): {lines[0][:160]}...")


# ---- Chakra: a 512-rank data-parallel ResNet-50, four iterations, written out per rank.
prefix = os.path.join(d, "rn")
r = subprocess.run([exe, "export-chakra", os.path.join(src, "inputs/chakra_bench_1024.toml"),
                    "--set", "workload.data_parallel=512", "--set", "workload.minibatch=16384", "--set",
                    "topology.endpoints=512", "-o", prefix], capture_output=True, text=True, cwd=d)
assert r.returncode == 0, r.stderr
chakra = ["topology.kind=\"fat_tree\"", "topology.endpoints=512", "topology.radix=32", 'workload.kind="trace"',
          f'workload.trace="{prefix}"', "workload.trace_peak_tflops=1", "engine.end_ns=1000", "output.flows=false",
          "output.interval_ns=0", 'network.model="analytic"']
refused("chakra", chakra, 4 * MIB)

# ---- JSON: 2 ranks of compute nodes; its text 1.2 MiB, its tree many times that.
trace = os.path.join(d, "trace.json")
nodes = [{"id": i, "rank": i % 2, "type": "COMP_NODE", "duration_micros": 1} for i in range(20000)]
with open(trace, "w") as f:
    json.dump({"schema": "fabricsim-trace-1", "ranks": 2, "nodes": nodes}, f)
assert os.path.getsize(trace) < 2 * MIB
js = ["topology.kind=\"fat_tree\"", "topology.endpoints=16", "topology.radix=8", 'workload.kind="trace"',
      f'workload.trace="{trace}"', 'network.model="analytic"', "output.interval_ns=0"]
refused("json", js, 3 * MIB)

# ---- Not refused when it fits: the same runs under a limit 5% above their estimate.
for name, sets in (("chakra", chakra), ("json", js)):
    r = subprocess.run([exe, "info", "--json"] + sum((["--set", s] for s in sets), []), capture_output=True,
                       text=True, cwd=d)
    need = json.loads(r.stdout)["memory"]["per_rank_bytes"]
    out2 = os.path.join(d, name + "-fits2.h5")
    r = subprocess.run([exe, "run", "-o", out2, "--set", f"engine.memory_limit_gib={1.05 * need / (1 << 30)!r}"] +
                       sum((["--set", s] for s in sets), []), capture_output=True, text=True, cwd=d)
    assert r.returncode == 0, (name, r.stderr)
    assert os.path.exists(out2)
    checks += 1
    print(f"ok   {name}: runs under a limit 5% above its estimate ({need / MIB:.1f} MiB)")

print(f"trace_memory_limit: {checks} checks passed")
