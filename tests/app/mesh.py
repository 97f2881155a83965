"""topology.kind = "mesh" (issue 28): a mesh of forwarding accelerators
without wrap-around, routed in dimension order (xy) on one VC.
  * a message from corner (0, 0) to (3, 2) of a 4x3 mesh crosses exactly
    the links of its xy route (x first: ep0 ep1 ep2 ep3, then y: ep7
    ep11), in the packet and the flow model;
  * an alltoall over every pair of a 4x3 and a 3x3x3 mesh completes in the
    packet model (no deadlock on one VC) and its packet hops are the
    packets of a message times the sum over pairs of their Manhattan
    distance, computed here, in the packet and the flow model;
  * no cable wraps around: 17 cables in the 4x3 mesh;
  * routing.algorithm other than dor, and four dimensions, are refused with
    one line naming the key.
  mesh.py EXE
"""
import itertools
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

exe = sys.argv[1]
d = tempfile.mkdtemp()
BYTES = 65536


def run(dims, workload, *sets):
    cfg = os.path.join(d, "m.toml")
    with open(cfg, "w") as f:
        f.write(f'[topology]\nkind = "mesh"\ndims = {list(dims)}\n[routing]\nalgorithm = "dor"\n'
                f'[output]\ninterval_ns = 0\nprogress = "never"\n[workload]\nkind = "traffic"\n{workload}')
    out = os.path.join(d, "m.h5")
    r = subprocess.run([exe, "run", cfg, "-o", out, *sum((["--set", s] for s in sets), [])],
                       capture_output=True, text=True)
    return r, out


def coords(n, dims):
    out = []
    for s in dims:
        out.append(n % s)
        n //= s
    return out


payload = 4096 - 64
packets = -(-BYTES // payload)
for model in ("packet", "flow"):
    r, out = run((4, 3), f'pattern = "incast"\nincast_sources = 1\nincast_target = 11\nmessage_bytes = {BYTES}\n',
                 f'network.model="{model}"')
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        src, dst, tx = f["links"]["src"][()], f["links"]["dst"][()], f["links"]["tx_bytes"][()]
        assert f["flows"]["src"][0] == 0 and f["flows"]["dst"][0] == 11
        assert len(src) == 2 * 17, len(src)
    used = sorted((int(a), int(b)) for a, b, t in zip(src, dst, tx) if t > 0)
    assert used == [(0, 1), (1, 2), (2, 3), (3, 7), (7, 11)], (model, used)
    print(f"ok   {model}: ep0 -> ep11 on its xy route {used}")

for dims in ((4, 3), (3, 3, 3)):
    n = int(np.prod(dims))
    manhattan = sum(sum(abs(a - b) for a, b in zip(coords(i, dims), coords(j, dims)))
                    for i, j in itertools.permutations(range(n), 2))
    for model in ("packet", "flow"):
        r, out = run(dims, f'pattern = "alltoall"\nmessages = 0\nmessage_bytes = {BYTES}\n', f'network.model="{model}"')
        assert r.returncode == 0, r.stderr
        with h5py.File(out, "r") as f:
            s = f["summary"].attrs
            assert s["messages_delivered"] == n * (n - 1), (dims, model, s["messages_delivered"])
            assert s["packet_hops"] == packets * manhattan, (dims, model, s["packet_hops"], packets * manhattan)
        print(f"ok   {model}: alltoall on {dims}: {n * (n - 1)} messages, {packets * manhattan} packet hops")

for dims, sets, key in (((4, 3), ('routing.algorithm="adaptive"',), "routing.algorithm"),
                        ((2, 2, 2, 2), (), "topology.dims")):
    r, _ = run(dims, "", *sets)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and key in lines[0], r.stderr
    print(f"ok   refused: {lines[0]}")
print("PASS: the mesh")
