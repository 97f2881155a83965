"""TopoOpt's OCS-reconfig and SiP-ML baselines at run time (issue 32;
topology.construction = "ocs_reconfig", "ocs_reconfig_nofw", "sip_ml").
Every expectation below is derived by hand from Algorithm 5 (spec §4.6) and
the flow model's arithmetic (a message of P payload bytes in packets of
1,436 payload bytes and 64 header bytes is a flow of its wire bytes but the
last packet at its max-min rate, then the last packet's serialization and the
route's latency: 1 us per link, 100 ns per relaying server):
  * noFW, 3 one-GPU servers of degree 1, rank 0 sends 1 MB to 1 and 0.5 MB
    to 2 at time 0: Algorithm 5 lights 0->1 only (the larger demand takes
    server 0's one port; no forwarding, no repair), so the 0.5 MB waits for
    the epoch at 200 us, which lights 0->2 (0->1 off), pauses 30 us and lets
    it go: it ends at 230 us + its time alone on one link;
  * SiP-ML (no discount) against OCS-reconfig (discount) at degree 2: the
    second port goes to the same pair (SiP-ML) or to the other one when
    half the first pair's demand is below it (OCS-reconfig);
  * FW on the same job: the connectivity repair makes the ring 0->1->2->0,
    the 0.5 MB goes 0->1->2 sharing 0->1 at half rate, server 1 forwards
    exactly its wire bytes, and the times follow max-min by hand;
  * FW, two phases (5 MB to 1, then 4 MB to 2): at the 500 us epoch the
    4 MB flow is on 0->1->2; only its demand is left, so 0->2 is lit: the
    decision reads its unsent bytes (derived here), every link's time
    series is zero during the 30 us pause and not before, the flow ends
    on the direct circuit at the time derived here, and the bytes are
    conserved (check_output.py);
  * a DNN job on servers of 4 GPUs, 5 iterations (hundreds of changes, so
    the messages still to come are re-routed more often than a message has
    route versions): FW delivers every byte, every decision is d-regular,
    /jobs' p99 is the nearest-rank percentile of /iterations, and the cost
    is the paper's OCS-reconfig formula (d OCS ports per server) computed
    here;
  * at packet level (NICs stop, the fabric drains, then the circuits switch):
    noFW's message ends at 230 us + its packets back to back + the latency;
    FW under load reads the unsent wire bytes of the packets not begun by
    the epoch (derived from the start time, within one packet), server 0's
    NIC is idle through the pause while server 1 relays what was on its way,
    and the rest ends on the direct circuit at the time derived here;
  * a DNN job at packet level: every byte delivered, nothing stranded, no
    GPU sends inside any pause, identical (every /links, /flows, /iterations,
    /jobs, /reconfig column) on 1, 2 and 3 ranks with forwarding, 1 and 2
    without.
  ocs_reconfig.py EXE CHECK_OUTPUT_PY
(KEEP=DIR keeps every configuration and HDF5 file there, for debugging a failure.)
"""
import collections
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

exe, check = sys.argv[1], sys.argv[2]
d = os.environ.get("KEEP") or tempfile.mkdtemp()
PER, HDR, GBPS, LAT, RELAY = 1436, 64, 100.0, 1000.0, 100.0


def wire(payload):
    packets = math.ceil(payload / PER)
    return payload + packets * HDR, payload - (packets - 1) * PER + HDR  # total, last packet


def ns(nbytes, gbps=GBPS):
    return nbytes * 8 / gbps


def alone(payload, hops=1):
    """A message's time alone on an idle route."""
    total, last = wire(payload)
    return ns(total - last) + ns(last) + hops * LAT + (hops - 1) * RELAY


def trace(name, sends):
    """Rank 0 sends each (dst, bytes), each after the one before if `chained`."""
    nodes = []
    for i, (dst, size, after) in enumerate(sends):
        node = {"id": i + 1, "rank": 0, "type": "COMM_SEND_NODE", "comm_dst": dst, "comm_size": size,
                "comm_tag": i + 1}
        if after:
            node["data_deps"] = [i]
        nodes.append(node)
    for i, (dst, size, _) in enumerate(sends):
        nodes.append({"id": 100 + i, "rank": dst, "type": "COMM_RECV_NODE", "comm_src": 0, "comm_size": size,
                      "comm_tag": i + 1})
    path = os.path.join(d, name + ".json")
    with open(path, "w") as f:
        json.dump({"schema": "fabricsim-trace-1", "name": name, "ranks": 3, "nodes": nodes}, f)
    return path


def run(name, construction, trace_path, *sets, degree=1, epoch=200000, latency=30000, model="flow"):
    cfg = os.path.join(d, name + ".toml")
    with open(cfg, "w") as f:
        f.write(f'''[topology]
kind = "topoopt"
servers = 3
degree = {degree}
construction = "{construction}"
reconfig_epoch_ns = {epoch}
reconfig_latency_ns = {latency}
[network]
model = "{model}"
vcs = 4
link_gbps = {GBPS}
link_latency_ns = {LAT}
switch_latency_ns = {RELAY}
packet_bytes = {PER + HDR}
header_bytes = {HDR}
[routing]
algorithm = "minimal"
[workload]
kind = "trace"
trace = "{trace_path}"
[output]
progress = "never"
interval_ns = 10000
''')
    out = os.path.join(d, name + ".h5")
    r = subprocess.run([exe, "run", cfg, "-o", out, *sum((["--set", s] for s in sets), [])],
                       capture_output=True, text=True)
    assert r.returncode == 0, (name, r.stderr)
    c = subprocess.run([sys.executable, check, out, "1"], capture_output=True, text=True)
    assert c.returncode == 0, (name, c.stdout, c.stderr)
    return out


def lit(f, row):
    """The lit circuits after decision `row`: Counter of (src, dst)."""
    L = f["reconfig_links"]
    sel = L["row"][()] == row
    return collections.Counter({(int(s), int(t)): int(c) for s, t, c in
                                zip(L["src"][()][sel], L["dst"][()][sel], L["count"][()][sel])})


def close(a, b, tol=0.01):
    return abs(a - b) <= tol


checks = 0
TWO = trace("two", [(1, 1_000_000, False), (2, 500_000, False)])

# ---- noFW: the 0.5 MB waits for the epoch
with h5py.File(run("nofw", "ocs_reconfig_nofw", TWO), "r") as f:
    assert lit(f, 0) == {(0, 1): 1}, lit(f, 0)
    assert lit(f, 1) == {(0, 2): 1}, lit(f, 1)
    rc = f["reconfig"]
    assert list(rc["time_ns"][()]) == [0, 200000] and list(rc["pause_end_ns"][()]) == [-1, 230000], rc["time_ns"][()]
    assert list(rc["circuits_off"][()]) == [0, 1] and list(rc["circuits_on"][()]) == [0, 1]
    assert rc["demand_bytes"][1] == wire(500_000)[0], rc["demand_bytes"][()]  # all of it still unsent
    end = f["flows/end_ns"][()]
    assert close(end[0], alone(1_000_000)), (end[0], alone(1_000_000))
    assert close(end[1], 230000 + alone(500_000)), (end[1], 230000 + alone(500_000))
checks += 1
print(f"ok   noFW: 0->1 lit, 0->2 waits for the epoch; ends {end[1]:.2f} ns = 200 us + 30 us pause + its time alone")

# ---- SiP-ML against OCS-reconfig at degree 2: the discount
for construction, want in (("sip_ml", {(0, 1): 2}), ("ocs_reconfig_nofw", {(0, 1): 1, (0, 2): 1})):
    PAIR = trace("pair", [(1, 1_000_000, False), (2, 600_000, False)])
    with h5py.File(run("disc-" + construction, construction, PAIR, degree=2), "r") as f:
        assert lit(f, 0) == want, (construction, lit(f, 0))
checks += 1
print("ok   degree 2: SiP-ML gives both ports to the larger pair, OCS-reconfig's discount halves it below the other")

# ---- FW: the ring of the repair, forwarding at server 1
with h5py.File(run("fw", "ocs_reconfig", TWO), "r") as f:
    assert lit(f, 0) == {(0, 1): 1, (1, 2): 1, (2, 0): 1}, lit(f, 0)
    assert f["reconfig/time_ns"].shape[0] == 1  # both done before the first epoch
    t1, l1 = wire(1_000_000)
    t2, l2 = wire(500_000)
    # Both share 0->1 at 50 Gb/s until the smaller flow's end; then the larger alone.
    f2 = ns(t2 - l2, GBPS / 2)
    want2 = f2 + ns(l2) + 2 * LAT + RELAY
    want1 = f2 + ns((t1 - l1) - (t2 - l2)) + ns(l1) + LAT
    end = f["flows/end_ns"][()]
    assert close(end[0], want1) and close(end[1], want2), (end, want1, want2)
    names = [n.decode() if isinstance(n, bytes) else n for n in f["nodes/name"][()]]
    L = f["links"]
    fwd = collections.Counter()
    for a, b, x in zip(L["src"][()], L["dst"][()], L["forwarded_bytes"][()]):
        fwd[(names[a], names[b])] += int(x)
    assert fwd[("srv1", "srv2")] == t2 and fwd[("srv0", "srv1")] == 0, fwd
checks += 1
print("ok   FW: the repair's ring 0->1->2->0; 0.5 MB relayed by server 1 (forwarded bytes = its wire bytes), "
      "max-min times by hand")

# ---- FW, two phases: a reconfiguration under load, paused in the series
PHASES = trace("phases", [(1, 5_000_000, False), (2, 4_000_000, True)])
with h5py.File(run("pause", "ocs_reconfig", PHASES, epoch=500000), "r") as f:
    rc = f["reconfig"]
    assert list(rc["time_ns"][()]) == [0, 500000] and rc["pause_end_ns"][1] == 530000
    assert lit(f, 0) == {(0, 1): 1, (1, 2): 1, (2, 0): 1} and lit(f, 1)[(0, 2)] == 1, (lit(f, 0), lit(f, 1))
    start = f["flows/start_ns"][()][1]
    t2, l2 = wire(4_000_000)
    unsent = t2 - (500000 - start) * GBPS / 8  # sent at the full rate on 0->1->2 since it started
    assert abs(int(rc["demand_bytes"][1]) - unsent) <= 1, (rc["demand_bytes"][()], unsent)
    end = f["flows/end_ns"][()][1]
    want = 530000 + ns(unsent - l2) + ns(l2) + LAT  # the rest on the direct circuit 0->2
    assert close(end, want), (end, want)
    series = f["links/timeseries/tx_bytes"][()].sum(axis=0)
    step = f["links/timeseries/tx_bytes"].attrs["interval_ns"]
    paused = series[int(500000 // step):int(530000 // step)]
    assert len(paused) == 3 and np.all(paused == 0), paused
    before = series[int(start // step) + 1:int(500000 // step)]
    assert len(before) > 0 and np.all(before > 0), before
    read = int(rc["demand_bytes"][1])
checks += 1
print(f"ok   FW under load: the epoch reads {read} unsent bytes, lights 0->2, every link idle "
      f"for the 30 us pause (3 empty bins), ends {end:.2f} ns on the direct circuit")

# ---- a DNN job on servers of 4 GPUs (FW), and the cost
MODEL = os.path.join(d, "model.toml")
with open(MODEL, "w") as f:
    f.write('[model]\nname = "mini-dlrm"\nsource = "test"\nbytes_per_value = 4\nminibatch = 256\n'
            '[[layer]]\nname = "embedding"\nforward_ns = 100\nbackward_ns = 200\nparams = 0\n'
            'activation_bytes = 4096\nalltoall_bytes = 262144\nalltoalls = 1\n'
            '[[layer]]\nname = "mlp"\ncount = 4\nforward_ns = 200\nbackward_ns = 400\nparams = 65536\n'
            'activation_bytes = 1024\n')
DNN = '''[topology]
kind = "topoopt"
servers = 8
degree = 2
gpu_servers = true
gpus_per_server = 4
construction = "ocs_reconfig"
reconfig_epoch_ns = {epoch}
reconfig_latency_ns = {latency}
[network]
{network}
link_gbps = 100
[workload]
kind = "dnn"
model = "{model}"
data_parallel = 32
expert_parallel = 32
{workload}
[output]
progress = "never"
{output}
'''
cfg = os.path.join(d, "dnn.toml")
with open(cfg, "w") as f:
    f.write(DNN.format(epoch=20000, latency=2000, network='model = "flow"', model=MODEL, workload="iterations = 5",
                       output=""))
out = os.path.join(d, "dnn.h5")
r = subprocess.run([exe, "run", cfg, "-o", out], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
c = subprocess.run([sys.executable, check, out, "1"], capture_output=True, text=True)
assert c.returncode == 0, (c.stdout, c.stderr)
with h5py.File(out, "r") as f:
    s = f["summary"].attrs
    assert s["bytes_delivered"] == s["bytes_injected"] and s["messages_delivered"] == f["flows/src"].shape[0]
    assert np.all(f["iterations/finished"][()] == 1)
    # /jobs' tail: the 99th percentile by nearest rank of the timed iterations.
    times = np.sort(f["iterations/time_ns"][()][f["iterations/iteration"][()] >= 0])
    assert f["jobs/p99_iteration_ns"][0] == times[math.ceil(0.99 * len(times)) - 1], (f["jobs/p99_iteration_ns"][()],
                                                                                      times)
    changed = int(np.sum(f["reconfig/pause_end_ns"][()] > 0))
    assert changed >= 1, f["reconfig/pause_end_ns"][()]
    # Every decision lights exactly d circuits out of and into every server (FW repair).
    L = f["reconfig_links"]
    for row in np.unique(L["row"][()]):
        sel = L["row"][()] == row
        outd, ind = collections.Counter(), collections.Counter()
        for a, b, k in zip(L["src"][()][sel], L["dst"][()][sel], L["count"][()][sel]):
            outd[int(a)] += int(k)
            ind[int(b)] += int(k)
        assert all(outd[v] == 2 and ind[v] == 2 for v in range(8)), (row, outd, ind)
    # Spec §3: OCS-reconfig = n d (NIC + transceiver) + n d OCS port + fibres; at 100 G: NIC 678,
    # transceiver 99, OCS port 520, one fibre per interface at its expected $0.30/m x 500 m.
    cost = f["topology"].attrs["paper_cost_usd"]
    assert close(cost, 8 * 2 * (678 + 99 + 520 + 0.30 * 500)), cost
checks += 1
print(f"ok   DNN job on 8 servers of 4 GPUs (FW), 5 iterations: every byte delivered, {changed} reconfigurations, "
      f"each decision 2-regular, p99 by nearest rank; cost {cost:.0f} USD by the OCS-reconfig formula")

# ---- packet level: the NICs stop for the pause, the circuits switch once the fabric has drained
SER = ns(PER + HDR)  # a full packet's serialization
with h5py.File(run("nofw-pk", "ocs_reconfig_nofw", TWO, model="packet"), "r") as f:
    rc = f["reconfig"]
    assert lit(f, 1) == {(0, 2): 1} and list(rc["pause_end_ns"][()]) == [-1, 230000], rc["pause_end_ns"][()]
    end = f["flows/end_ns"][()]
    # One hop from NIC to NIC, its packets back to back: the wire bytes' serialization, then the latency.
    assert close(end[0], ns(wire(1_000_000)[0]) + LAT), (end[0], ns(wire(1_000_000)[0]) + LAT)
    assert close(end[1], 230000 + ns(wire(500_000)[0]) + LAT), (end[1], 230000 + ns(wire(500_000)[0]) + LAT)
checks += 1
print(f"ok   packet noFW: 0->2 waits for the epoch and the 30 us pause; ends {end[1]:.2f} ns = 230 us + its packets "
      "back to back + the latency")

with h5py.File(run("pause-pk", "ocs_reconfig", PHASES, model="packet", epoch=500000), "r") as f:
    rc = f["reconfig"]
    # Nothing is left in flight 30 us after the NICs stopped: the switch is on time.
    assert list(rc["time_ns"][()]) == [0, 500000] and rc["pause_end_ns"][1] == 530000, rc["pause_end_ns"][()]
    start = f["flows/start_ns"][()][1]
    t2, l2 = wire(4_000_000)
    sent = math.ceil((500000 - start) / SER)  # packets begun before the epoch, back to back on 0->1
    unsent = t2 - sent * (PER + HDR)
    assert int(rc["demand_bytes"][1]) in (unsent, unsent + PER + HDR), (rc["demand_bytes"][()], unsent)
    unsent = int(rc["demand_bytes"][1])
    end = f["flows/end_ns"][()][1]
    want = 530000 + ns(unsent) + LAT  # the rest back to back on the direct circuit 0->2
    assert close(end, want), (end, want)
    names = [n.decode() if isinstance(n, bytes) else n for n in f["nodes/name"][()]]
    L = f["links"]
    at = {(names[a], names[b]): i for i, (a, b, data) in enumerate(zip(L["src"][()], L["dst"][()], L["carries_data"][()]))
          if data}
    series = f["links/timeseries/tx_bytes"][()]
    step = f["links/timeseries/tx_bytes"].attrs["interval_ns"]
    k0, k1 = int(500000 // step), int(530000 // step)
    # Server 0's NIC sends nothing during the pause; server 1 relays what was on its way, then nothing.
    assert np.all(series[at[("srv0", "srv1")], k0:k1] == 0), series[at[("srv0", "srv1")], k0 - 1:k1 + 1]
    assert np.all(series[at[("srv1", "srv2")], k0 + 1:k1] == 0) and series[at[("srv1", "srv2")], k0] > 0
checks += 1
print(f"ok   packet FW under load: the epoch reads {unsent} unsent wire bytes, server 1 drains what was on its way, "
      f"every link idle to 530 us, ends {end:.2f} ns on the direct circuit")

# A DNN job at packet level on 1, 2 and 3 ranks: identical, every byte
# delivered, the pauses visible at the GPUs' NICs.
cfg = os.path.join(d, "dnn-pk.toml")
with open(cfg, "w") as f:
    f.write(DNN.format(epoch=40000, latency=5000, network='model = "packet"\nvcs = 12\nlink_latency_ns = 5000',
                       model=MODEL, workload="minibatch = 128\niterations = 1", output="interval_ns = 1000"))


def columns(f):
    out = {}
    for g in ("links", "flows", "iterations", "jobs", "reconfig", "reconfig_links"):
        f[g].visititems(lambda k, v: out.__setitem__(g + "/" + k, v[()]) if isinstance(v, h5py.Dataset) else None)
    for k in ("sim_time_ns", "packets_delivered", "bytes_delivered", "packet_hops"):
        out[k] = f["summary"].attrs[k]
    return out


ref = None
for construction, ranks in (("ocs_reconfig", 1), ("ocs_reconfig", 2), ("ocs_reconfig", 3),
                            ("ocs_reconfig_nofw", 1), ("ocs_reconfig_nofw", 2)):
    if ranks == 1:
        ref = None
    out = os.path.join(d, f"dnn-pk-{construction}-{ranks}.h5")
    cmd = [exe, "run", cfg, "-o", out, "--set", f"topology.construction={construction}"]
    r = subprocess.run((["mpiexec", "-n", str(ranks)] if ranks > 1 else []) + cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    c = subprocess.run([sys.executable, check, out, str(ranks)], capture_output=True, text=True)
    assert c.returncode == 0, (c.stdout, c.stderr)
    with h5py.File(out, "r") as f:
        cols = columns(f)
        if ref is None:
            ref = cols
            s = f["summary"].attrs
            assert s["bytes_delivered"] == s["bytes_injected"] and s["packets_stranded"] == 0, dict(s)
            assert s["messages_delivered"] == f["flows/src"].shape[0]
            rc = f["reconfig"]
            t, pe = rc["time_ns"][()], rc["pause_end_ns"][()]
            changed = pe > 0
            assert changed.sum() >= 2, pe
            assert np.all(pe[changed] - t[changed] >= 5000), (t[changed], pe[changed])
            names = [n.decode() if isinstance(n, bytes) else n for n in f["nodes/name"][()]]
            L = f["links"]
            series = L["timeseries/tx_bytes"][()]
            step = L["timeseries/tx_bytes"].attrs["interval_ns"]
            nics = [i for i, a in enumerate(L["src"][()]) if not names[a].startswith("srv")]  # GPU -> server
            assert len(nics) == 32
            for a, b in zip(t[changed], pe[changed]):
                k0, k1 = int(math.ceil(a / step)), int(b // step)
                assert k1 > k0 and np.all(series[nics, k0:k1] == 0), (a, b)
        else:
            same = lambda a, b: np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f")  # noqa: E731
            diff = [k for k in ref if not same(ref[k], cols[k])]
            assert not diff, (ranks, diff)
        if ranks == 1:
            print(f"ok   packet DNN job ({construction}, {int(changed.sum())} reconfigurations): every byte "
                  "delivered, no GPU sends during a pause")
checks += 1
print("ok   packet DNN job: FW identical on 1, 2 and 3 ranks, noFW on 1 and 2")
print(f"{checks} checks passed")
