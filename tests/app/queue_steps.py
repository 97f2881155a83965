"""The cluster queue's rule for rank independence (issue 28, global steps):
the decision at a step at t reads only what was so by t - D.  A
partitioned run takes extra steps (a rank whose part of a job ends early
requests one); this makes one fall while another job has ended but its own
step (end + D) is still ahead, so a decision that read the present instead
would start the next job early on 2 ranks only.
On a 16-endpoint fat tree split in node-id blocks (endpoints 0-10 on rank 0,
11-15 on rank 1: checked), D = 20 us, compute-only traces:
  * B (4 ranks, 15 us: endpoints 0-3) and A (12 ranks, endpoints 4-15: 100 us
    on its first 7, 10 us on its last 5, which are rank 1's) arrive at 0 and
    start at D = 20 us;
  * C (4 ranks) arrives at 1 us and waits for B's endpoints;
  * rank 1's part of A ends at 30 us: an extra step at 50 us, while B
    (ended at 35 us) is still unknown to the scheduler until 55 us;
  * so C starts at 55 us = B's end + D, on 1 rank and on 2 ranks alike.
  queue_steps.py EXE MPIEXEC
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

exe, mpiexec = sys.argv[1], sys.argv[2]
d = tempfile.mkdtemp()


def trace(name, micros):
    path = os.path.join(d, name + ".json")
    nodes = [{"id": r + 1, "rank": r, "type": "COMP_NODE", "duration_micros": m} for r, m in enumerate(micros)]
    with open(path, "w") as f:
        json.dump({"schema": "fabricsim-trace-1", "name": name, "ranks": len(micros), "nodes": nodes}, f)
    return path


b = trace("b", [15] * 4)
a = trace("a", [100] * 7 + [10] * 5)
c = trace("c", [5] * 4)
cfg = os.path.join(d, "q.toml")
with open(cfg, "w") as f:
    f.write('[topology]\nkind = "fat_tree"\nendpoints = 16\nradix = 8\n'
            '[engine]\ncontrol_latency_ns = 20000\npartitioner = "block"\n'
            '[output]\ninterval_ns = 0\nprogress = "never"\n'
            '[workload]\nkind = "trace"\nqueue = "fifo"\n')
    for path, start in ((b, 0), (a, 0), (c, 1000)):
        f.write(f'[[jobs]]\ntrace = "{path}"\nstart_ns = {start}\n')


def run(ranks):
    out = os.path.join(d, f"q{ranks}.h5")
    cmd = ([mpiexec, "-n", str(ranks)] if ranks > 1 else []) + [exe, "run", cfg, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, (ranks, r.stderr)
    with h5py.File(out, "r") as f:
        if ranks == 2:  # the premise: A's short part, and only it, on rank 1
            rank = f["nodes"]["rank"][()]
            assert (rank[:11] == 0).all() and (rank[11:16] == 1).all(), rank
        return f["jobs"]["start_ns"][()], f["jobs"]["end_ns"][()]


for ranks in (1, 2):
    start, end = run(ranks)
    assert np.allclose(start[:2], 20000) and np.isclose(end[0], 35000), (ranks, start, end)
    assert np.isclose(end[1], 120000), (ranks, start, end)
    assert np.isclose(start[2], end[0] + 20000), (ranks, "C must start D after B ends", start, end)
    print(f"ok   {ranks} rank(s): B ends at {end[0]:.0f} ns, C starts at {start[2]:.0f} ns")
print("PASS: the extra steps of a partitioned run decide nothing new")
