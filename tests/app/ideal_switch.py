"""topology.kind = "ideal_switch" (issue 28): N endpoints on one non-blocking
crossbar, the "Best" baseline of vClos and TopoOpt.  What it must give:
  * a permutation of 1 MiB messages reaches the endpoints' own limit: the
    payload of 4 messages over their wire bytes at the link rate plus the
    path's latency; /summary throughput_share equals it within 1e-6 in the
    flow model and is at least 97% of it in the packet model;
  * an incast of k senders is limited by the receiver's link alone: the
    flow model's makespan is the k messages' wire bytes (all but k - 1
    last packets, which the flow model counts at the senders) at the link
    rate plus the path's latency (two links and one switch), to 0.01 ns;
    the packet model's within 2% of it;
  * the fabric is what it says: N endpoints, one N-port switch, N cables;
  * a routing algorithm that is not for it, and fewer than 2 endpoints, are
    refused with one line naming the key.
  ideal_switch.py EXE
"""
import os
import subprocess
import sys
import tempfile

import h5py

exe = sys.argv[1]
d = tempfile.mkdtemp()
N, K, BYTES = 32, 4, 1 << 20


def run(extra, *sets):
    cfg = os.path.join(d, "c.toml")
    with open(cfg, "w") as f:
        f.write(f'[topology]\nkind = "ideal_switch"\nendpoints = {N}\n'
                '[network]\nlink_gbps = 100\nlink_latency_ns = 100\nswitch_latency_ns = 100\n'
                '[output]\ninterval_ns = 0\nprogress = "never"\n' + extra)
    out = os.path.join(d, "o.h5")
    r = subprocess.run([exe, "run", cfg, "-o", out, *sum((["--set", s] for s in sets), [])],
                       capture_output=True, text=True)
    return r, out


# The share counts payload only: 4 messages of 1 MiB in wire bytes at the
# link rate, then the path's latency (two links and the switch).
payload = 4096 - 64  # network.packet_bytes - header_bytes defaults
wire = BYTES + -(-BYTES // payload) * 64
ideal = 4 * BYTES / ((4 * wire * 8 / 100 + 300) * 100 / 8)
for model, floor in (("packet", 0.97 * ideal), ("flow", ideal - 1e-6)):
    r, out = run(f'[workload]\nkind = "traffic"\npattern = "permutation"\nmessage_bytes = {BYTES}\nmessages = 4\n',
                 f'network.model="{model}"')
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        share = f["summary"].attrs["throughput_share"]
    assert share >= floor and share <= ideal + 1e-6, (model, share, ideal)
    print(f"ok   {model}: permutation at {share:.4f} of the injection rate (the link's limit: {ideal:.4f})")

for model, tol in (("flow", 0.01), ("packet", None)):
    r, out = run(f'[workload]\nkind = "traffic"\npattern = "incast"\nincast_sources = {K}\nincast_target = 0\n'
                 f'message_bytes = {BYTES}\nmessages = 1\n', f'network.model="{model}"')
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        end = f["flows"]["end_ns"][()].max()
    # The receiver's link carries all K messages but their last packets
    # back to back, then one last packet; then two links and the switch.
    last = BYTES - (-(-BYTES // payload) - 1) * payload + 64
    expected = (K * (wire - last) + last) * 8 / 100 + 2 * 100 + 100
    if tol is not None:
        assert abs(end - expected) < tol, (model, end, expected)
    else:
        assert abs(end - expected) / expected < 0.02, (model, end, expected)
    print(f"ok   {model}: incast of {K} ends at {end:.2f} ns (receiver's link: {expected:.2f} ns)")

r, out = run('[workload]\nkind = "traffic"\n')
assert r.returncode == 0, r.stderr
with h5py.File(out, "r") as f:
    t = f["topology"].attrs
    assert t["endpoints"] == N and t["switches"] == 1, dict(t)
    assert len(f["links"]["src"]) == 2 * N
print(f"ok   {N} endpoints, one switch, {N} cables")

for sets, key in ((('routing.algorithm="dor"',), "routing.algorithm"), (("topology.endpoints=1",), "topology.endpoints")):
    r, _ = run('[workload]\nkind = "traffic"\n', *sets)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and key in lines[0], r.stderr
    print(f"ok   refused: {lines[0]}")
print("PASS: the ideal switch")
