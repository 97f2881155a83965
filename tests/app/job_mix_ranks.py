"""The cluster queue on several ranks (issue 28): the first jobs of
inputs/leaf_spine_2048_job_mix.toml (the 2048-GPU leaf-spine, jobs arriving
into a FIFO queue), in the packet model, on 1, 2 and 3 ranks.  Admission
and release are global steps, so /jobs (arrival, start, end), the per-link
totals and every message's end time must be the same on every rank count.
The subset is chosen so that the queue decides something: iterations are
cut to one and more jobs arrive than fit, so some wait for others to end.
  job_mix_ranks.py EXE MPIEXEC INPUTS_DIR [JOBS]
"""
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

exe, mpiexec, inputs = sys.argv[1], sys.argv[2], sys.argv[3]
jobs = int(sys.argv[4]) if len(sys.argv) > 4 else 16
text = open(os.path.join(inputs, "leaf_spine_2048_job_mix.toml")).read()
head, *tables = text.split("[[jobs]]")
# Absolute model paths (the subset is written elsewhere); network.model
# packet; one iteration of one sample per replica per job, and the jobs'
# arrivals squeezed (x 1/1000), so that they overlap and queue on a
# fabric cut to 16 endpoints (2 leaves of one server).
head = head.replace('model = "flow"', 'model = "packet"')
head = head.replace("flows = false", "flows = true")
head = re.sub(r"leaves = 64", "leaves = 2", head)
head = re.sub(r"spines = 32", "spines = 2", head)
head = re.sub(r"servers_per_leaf = 4", "servers_per_leaf = 1", head)
head = head.replace("link_gbps = 100", "link_gbps = 3200")  # (the allreduces short: fewer windows)
head += "\n[engine]\ncontrol_latency_ns = 200000\n"
out_tables = []
for t in tables[:jobs]:
    t = t.replace('model = "models/', f'model = "{inputs}/models/')
    t = re.sub(r"iterations = \d+", "iterations = 1", t)
    dp = min(int(re.search(r"data_parallel = (\d+)", t).group(1)), 8)
    t = re.sub(r"data_parallel = \d+", f"data_parallel = {dp}", t)
    t = re.sub(r"minibatch = \d+", f"minibatch = {dp}", t)  # one sample per replica
    t = re.sub(r"start_ns = (\d+)", lambda m: f"start_ns = {int(m.group(1)) // 1000}", t)
    out_tables.append(t)
d = tempfile.mkdtemp()
cfg = os.path.join(d, "mix.toml")
with open(cfg, "w") as f:
    f.write(head + "".join("[[jobs]]" + t for t in out_tables))


def run(ranks):
    out = os.path.join(d, f"r{ranks}.h5")
    cmd = ([mpiexec, "-n", str(ranks)] if ranks > 1 else []) + [exe, "run", cfg, "-o", out, "--set",
                                                                'output.progress="never"']
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, (ranks, r.stderr[-2000:])
    with h5py.File(out, "r") as f:
        return {"arrival": f["jobs"]["arrival_ns"][()], "start": f["jobs"]["start_ns"][()],
                "end": f["jobs"]["end_ns"][()], "tx_bytes": f["links"]["tx_bytes"][()],
                "busy_ns": f["links"]["busy_ns"][()], "flow_end": f["flows"]["end_ns"][()],
                "flow_src": f["flows"]["src"][()]}


one = run(1)
start, arrival, end = one["start"], one["arrival"], one["end"]
assert (start > 0).all() and (end > start).all(), (start, end)
waited = int(np.sum(start - arrival > 200000 + 1e-3))
assert waited > 0, f"no job waited: the subset does not exercise the queue ({start - arrival})"
print(f"ok   1 rank: {len(start)} jobs, {waited} waited for others, last ends at {end.max():.0f} ns")
for ranks in (2, 3):
    other = run(ranks)
    order_one, order_other = np.lexsort((one["flow_end"], one["flow_src"])), np.lexsort((other["flow_end"], other["flow_src"]))
    for k in one:
        a, b = one[k], other[k]
        if k.startswith("flow_"):
            a, b = a[order_one], b[order_other]
        assert np.array_equal(a, b), (ranks, k, np.flatnonzero(a != b)[:10])
    print(f"ok   {ranks} ranks: /jobs, /links and /flows identical to 1 rank")
print("PASS: the cluster queue gives the same run on 1, 2 and 3 ranks")
