"""Streaming traces (issue 33, workload.trace_stream): a Chakra trace replayed
as it is read gives the planned replay's output, bit for bit.
  * every ASTRA-sim example trace (tests/data/chakra/: the microbenchmarks on
    4, 8 and 16 ranks and the custom ring allreduce) on the bidirectional
    ring and on a fat tree, in the packet, flow and analytic models: every
    dataset of the two output files equal (/links, /flows, /iterations,
    /trace_nodes, ...);
  * a DNN job (ResNet-50, D 2 x P 2 x O 2, two micro-batches) exported by
    export-chakra and streamed (the default window): the planned
    replay's output, and the direct job's iteration time;
  * that job cut short at three times, in the three models: the planned
    replay's output (nodes in flight, nodes never read), the job unfinished;
  * more rank files than may be open at once (a test cap of 3; a real
    `ulimit -n` of 40): files closed and reopened where they were, the
    planned replay's output;
  * a window of 1 node a rank on that job: nodes are read after their
    dependencies completed (messages arrive before their receive is read);
    the run still ends, every byte delivered, and says on stderr how many
    nodes began late;
  * partitioned (mpiexec -n 2, each process reading its own ranks' files):
    the one-process streamed run's results (/links, /flows, /iterations,
    /trace_nodes, /jobs and the summary counters) for every example trace
    on the fat tree, the exported job (windows of 32 and 1, three cuts), and
    a skewed trace whose collectives' messages reach a process before it
    has read its member's node; an unmatched receive across the processes
    is one error line naming its file and node.
  trace_stream.py EXE SRC
"""
import glob
import os
import re
import resource
import subprocess
import sys
import tempfile

import h5py
import numpy as np

exe, src = sys.argv[1], sys.argv[2]
data = os.path.join(src, "tests/data/chakra/examples")
d = tempfile.mkdtemp()
checks = 0


def run(name, sets, env=None, preexec_fn=None, launch=(), config=None):
    out = os.path.join(d, name + ".h5")
    cmd = list(launch) + [exe, "run"] + ([config] if config else []) + ["-o", out, "--set", 'output.progress="never"']
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, preexec_fn=preexec_fn)
    assert r.returncode == 0, (name, " ".join(cmd), r.stderr)
    return out, r.stderr


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        f.visititems(visit)
    return out


def same(a, b, what):
    da, db = datasets(a), datasets(b)
    assert da.keys() == db.keys(), (what, sorted(set(da) ^ set(db)))
    for k in da:
        x, y = da[k], db[k]
        assert x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (what, k)
    return len(da)


def fabric(kind, p):
    if kind == "ring":
        return ['topology.kind="npu_graph"', 'topology.npu_graph="bidirectional_ring"', f"topology.dims=[{p}]",
                "topology.npu_gbps=400", "topology.npu_alpha_ns=500"]
    return ['topology.kind="fat_tree"', "topology.endpoints=16", "topology.radix=8"]


traces = sorted(glob.glob(os.path.join(data, "workload/microbenchmarks/*/*/*.0.et")))
traces += sorted(glob.glob(os.path.join(data, "system/custom_collectives/*/*.0.et")))
assert len(traces) == 13, traces
for model in ("packet", "flow", "analytic"):
    for kind in ("ring", "fat_tree"):
        compared = 0
        for t in traces:
            prefix = t[:-len(".0.et")]
            p = len(glob.glob(prefix + ".*.et"))
            base = fabric(kind, p) + [f'network.model="{model}"', 'workload.kind="trace"', f'workload.trace="{prefix}"']
            name = f"{os.path.basename(os.path.dirname(prefix))}-{kind}-{model}"
            planned, _ = run(name + "-planned", base)
            streamed, err = run(name + "-streamed", base + ["workload.trace_stream=true"])
            assert "began late" not in err, (name, err)
            compared += same(planned, streamed, name)
        checks += 1
        print(f"ok   {model:8s} {kind:8s}: {len(traces)} traces streamed, {compared} datasets as planned")

DNN = ['topology.kind="fat_tree"', "topology.endpoints=16", "topology.radix=8", 'workload.kind="dnn"',
       f'workload.model="{os.path.join(src, "inputs/models/resnet50.toml")}"', "workload.data_parallel=2",
       "workload.pipeline_parallel=2", "workload.tensor_parallel=2", "workload.micro_batches=2",
       "workload.minibatch=16", "workload.warmup=0", "workload.iterations=1"]
for model in ("packet", "flow"):
    sets = DNN + [f'network.model="{model}"']
    direct, _ = run(f"dnn-{model}", sets)
    prefix = os.path.join(d, f"exported-{model}")
    cmd = [exe, "export-chakra", "-o", prefix]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    replay = sets + ['workload.kind="trace"', f'workload.trace="{prefix}"', "workload.trace_peak_tflops=1"]
    planned, _ = run(f"replay-{model}", replay)
    streamed, err = run(f"stream-{model}", replay + ["workload.trace_stream=true"])
    assert "began late" not in err, err
    n = same(planned, streamed, f"dnn-{model}")
    with h5py.File(direct, "r") as a, h5py.File(streamed, "r") as b:
        assert a["iterations/time_ns"][0] == b["iterations/time_ns"][0]
    checks += 1
    print(f"ok   round trip streamed ({model}): {n} datasets as the planned replay, the job's iteration time")

# Cut short (engine.end_ns inside the iteration): the streamed run lists every
# node as the planned replay does (those in flight with the time they began,
# those never read with their ids and names, no times), and both say the job
# did not finish (the planned replay said it had, its end the last done node's).
for model in ("packet", "flow", "analytic"):
    prefix = os.path.join(d, "exported-packet")
    replay = DNN + [f'network.model="{model}"', 'workload.kind="trace"', f'workload.trace="{prefix}"',
                    "workload.trace_peak_tflops=1"]
    full, _ = run(f"uncut-{model}", replay)
    with h5py.File(full, "r") as f:
        t_end = f["iterations/end_ns"][0]
    compared = 0
    for frac in (0.15, 0.5, 0.93):
        cut = replay + [f"engine.end_ns={t_end * frac:.0f}"]
        planned, _ = run(f"cut-{model}-{frac}-planned", cut)
        streamed, _ = run(f"cut-{model}-{frac}-streamed", cut + ["workload.trace_stream=true"])
        compared += same(planned, streamed, f"cut {model} {frac}")
        with h5py.File(planned, "r") as f:
            end = f["trace_nodes/end_ns"][()]
            assert 0 < (end >= 0).sum() < end.size, (model, frac)
            assert f["iterations/finished"][0] == 0 and np.isnan(f["iterations/time_ns"][0]), (model, frac)
    checks += 1
    print(f"ok   cut short ({model}): 3 cuts, {compared} datasets as planned, the job unfinished")

# More rank files than may be open at once: those past the limit are closed
# and reopened where they were, the output still the planned replay's; by
# the test's cap (3 files) on the exported job and a 16-rank trace, and by a
# real open-file limit (40 descriptors, less what is open and a spare 16)
# on the 16-rank trace.  The run says how many files it keeps open.
sixteen = os.path.join(data, "workload/microbenchmarks/all_to_all/16npus_1MB/all_to_all")
cases = [("exported", DNN + ['network.model="packet"', 'workload.kind="trace"',
                             f'workload.trace="{os.path.join(d, "exported-packet")}"', "workload.trace_peak_tflops=1"]),
         ("16 ranks", fabric("fat_tree", 16) + ['workload.kind="trace"', f'workload.trace="{sixteen}"'])]
capped = dict(os.environ, FABRICSIM_TEST_TRACE_OPEN_FILES="3")
limited = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))  # noqa: E731
for what, sets in cases + [("16 ranks, ulimit -n 40", cases[1][1])]:
    planned, _ = run(f"open-{len(what)}-planned", sets)
    env, pre = (os.environ, limited) if "ulimit" in what else (capped, None)
    streamed, err = run(f"open-{len(what)}-streamed", sets + ["workload.trace_stream=true"], env, pre)
    note = [line for line in err.splitlines() if "open at once" in line]
    assert len(note) == 1, (what, err)
    n = same(planned, streamed, what)
    checks += 1
    print(f"ok   files reopened ({what}): {n} datasets as planned; {note[0]}")

# A window of one node a rank on the exported job: nodes are read after their
# dependencies completed and begin late; the run still ends, every byte
# delivered, every node done, and it says how many began late.
out, err = run("window-1", DNN + ['network.model="packet"', 'workload.kind="trace"',
                                  f'workload.trace="{os.path.join(d, "exported-packet")}"',
                                  "workload.trace_peak_tflops=1", "workload.trace_stream=true",
                                  "workload.trace_stream_window=1"])
late = [line for line in err.splitlines() if "began late" in line]
assert len(late) == 1, err
with h5py.File(out, "r") as f:
    s = f["summary"].attrs
    assert s["bytes_delivered"] == s["bytes_injected"] and s["messages_delivered"] == f["flows/src"].shape[0], dict(s)
    assert (f["trace_nodes/end_ns"][()] >= 0).all()
checks += 1
print("ok   window 1: the run ends, every byte delivered; " + late[0])

# Partitioned: two processes, each reading the ranks whose endpoints it
# simulates; every message described before the run (a packet of the other
# process's rank is routed by its description), its record made only where
# its sender or receiver runs, a receive's message found from the
# pre-pass, a collective's part added by each process for its members.
RESULT_GROUPS = ("links", "flows", "iterations", "trace_nodes", "jobs")
SUMMARY = ("sim_time_ns", "packets_injected", "packets_delivered", "bytes_delivered", "packet_hops",
           "messages_delivered")


def run2(name, sets, config=None):
    out, err = run(name, sets, launch=("mpiexec", "-n", "2"), config=config)
    with h5py.File(out, "r") as f:
        e = f["engine"].attrs
        assert e["mode"] == b"partitioned" and (e["events_per_rank"] > 0).all(), (name, dict(e))
    return out, err


def same_results(a, b, what):
    n = 0
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for k in SUMMARY:
            assert fa["summary"].attrs[k] == fb["summary"].attrs[k], (what, k)
    da, db = datasets(a), datasets(b)
    for k in da:
        if k.split("/")[0] not in RESULT_GROUPS:
            continue
        x, y = da[k], db.get(k)
        assert y is not None and x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (what, k)
        n += 1
    return n


compared = 0
for t in traces:
    prefix = t[:-len(".0.et")]
    p = len(glob.glob(prefix + ".*.et"))
    base = fabric("fat_tree", p) + ['workload.kind="trace"', f'workload.trace="{prefix}"', "workload.trace_stream=true"]
    name = f"p2-{os.path.basename(os.path.dirname(prefix))}"
    one, _ = run(name + "-1", base)
    two, _ = run2(name + "-2", base)
    compared += same_results(one, two, name)
checks += 1
print(f"ok   2 processes: {len(traces)} traces, {compared} datasets as at one")

exported = DNN + ['network.model="packet"', 'workload.kind="trace"',
                  f'workload.trace="{os.path.join(d, "exported-packet")}"', "workload.trace_peak_tflops=1",
                  "workload.trace_stream=true"]
one, _ = run("p2-exported-1", exported)
with h5py.File(one, "r") as f:
    t_end = f["iterations/end_ns"][0]
cases = [("window 32", exported), ("window 1", exported + ["workload.trace_stream_window=1"])]
cases += [(f"cut at {frac}", exported + [f"engine.end_ns={t_end * frac:.0f}"]) for frac in (0.15, 0.5, 0.93)]
for what, sets in cases:
    one, err1 = run(f"p2-{len(what)}-{what[-3:]}-1", sets)
    two, err2 = run2(f"p2-{len(what)}-{what[-3:]}-2", sets)
    late = lambda err: [line for line in err.splitlines() if "began late" in line]  # noqa: E731
    assert late(err1) == late(err2), (what, err1, err2)
    n = same_results(one, two, what)
    checks += 1
    print(f"ok   2 processes, exported job, {what}: {n} datasets as at one" + (f"; {late(err2)[0][:60]}..." if late(err2) else ""))

# A skewed trace: ranks 0-3 compute for 120 us before each collective, ranks
# 4-7 do not, so that (a window of 1 or 2) the messages of ranks 4-7 reach
# ranks 0-3's process before it has read their collective node there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_bad_chakra import COLL, COMP, META, RECV, SEND, node, record  # noqa: E402


def allreduce(nid, deps, size):
    return record(node(nid, COLL, [("comm_type", "int64", 0), ("comm_size", "int64", size)], deps=deps))


skew = os.path.join(d, "skew")
for r in range(8):
    body, nid, prev = META, 0, []
    if r < 4:
        for _ in range(6):
            body += record(node(nid, COMP, deps=prev, duration=20))
            prev, nid = [nid], nid + 1
    body += allreduce(nid, prev, 1 << 16)
    prev, nid = [nid], nid + 1
    body += record(node(nid, COMP, deps=prev, duration=3))
    prev, nid = [nid], nid + 1
    body += allreduce(nid, prev, 1 << 18)
    with open(f"{skew}.{r}.et", "wb") as f:
        f.write(body)
for algorithm in ("ring", "halving_doubling"):
    for window in (1, 2, 32):
        sets = fabric("fat_tree", 8) + ['workload.kind="trace"', f'workload.trace="{skew}"', "workload.trace_stream=true",
                                        f'workload.algorithm="{algorithm}"', f"workload.trace_stream_window={window}"]
        one, _ = run(f"skew-{algorithm}-{window}-1", sets)
        two, _ = run2(f"skew-{algorithm}-{window}-2", sets)
        same_results(one, two, f"skew {algorithm} {window}")
checks += 1
print("ok   2 processes, skewed trace (collective messages before their node is read): 6 runs as at one")

# A spine down mid-run: packets stranded, some on a process that makes
# none of their message's records (spine1 at 2 processes: only the id is
# marked failed there), the run stalled with messages never delivered;
# the same at 2 processes as at 1.
fail_cfg = os.path.join(d, "fail.toml")
with open(fail_cfg, "w") as f:
    f.write('[[failures]]\nelement = "spine1"\nat_ns = 3000\n')
sets = fabric("fat_tree", 16) + ['workload.kind="trace"', "workload.trace_stream=true",
                                 f'workload.trace="{data}/workload/microbenchmarks/all_reduce/16npus_1MB/all_reduce"']
one, _ = run("fail-1", sets, config=fail_cfg)
two, _ = run2("fail-2", sets, config=fail_cfg)
same_results(one, two, "failure")
with h5py.File(one, "r") as f1, h5py.File(two, "r") as f2:
    s1, s2 = f1["summary"].attrs, f2["summary"].attrs
    assert s1["packets_stranded"] > 0 and s1["messages_failed"] > 0, dict(s1)
    for k in ("messages_failed", "packets_stranded", "bytes_stranded"):
        assert s1[k] == s2[k], (k, s1[k], s2[k])
checks += 1
print("ok   2 processes, a spine down mid-run: packets stranded, results as at one")


def unmatched_at_two(name, kind, nid, peer_key, fabric_sets):
    """Each rank's one send or receive (node `nid`) with the rank 4 away,
    never matched, run at 2 processes: its one error line (exit 2, no
    output)."""
    bad = os.path.join(d, name)
    for r in range(8):
        body = META + record(node(0, COMP, duration=1))
        body += record(node(nid, kind, [(peer_key, "int32", (r + 4) % 8), ("comm_size", "int64", 64)]))
        with open(f"{bad}.{r}.et", "wb") as f:
            f.write(body)
    out = os.path.join(d, name + ".h5")
    cmd = ["mpiexec", "-n", "2", exe, "run", "-o", out, "--set", 'output.progress="never"']
    for s in fabric_sets + ['workload.kind="trace"', f'workload.trace="{bad}"', "workload.trace_stream=true"]:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
    assert not os.path.exists(out) and not glob.glob(os.path.join(d, f".{name}.h5*")), os.listdir(d)
    return lines[0]


# Receives whose sends do not exist (on the other process for some of them
# at least): the line names a receiver's file and node.
line = unmatched_at_two("unmatched", RECV, 1, "comm_src", fabric("fat_tree", 8))
assert re.search(r"^error: .*unmatched\.\d\.et: node 1: recv from rank \d \(tag 0\) has no matching send node there", line), line
checks += 1
print("ok   2 processes, unmatched receive: " + line)

# And sends whose receives do not exist: the line names the sender's file
# and node (node 7, found where the receiver's process kept the sends into
# its ranks: the pre-pass's send nodes, on disk).  A ring of 8 in blocks:
# endpoints 0-3 on one process, 4-7 on the other, so that every send
# crosses and only the receiver's process can tell.
line = unmatched_at_two("unsent", SEND, 7, "comm_dst", fabric("ring", 8) + ['engine.partitioner="block"'])
assert re.search(r"^error: .*unsent\.\d\.et: node 7: send to rank \d \(tag 0\) has no matching recv node there", line), line
checks += 1
print("ok   2 processes, unmatched send: " + line)

# The pre-pass is shared (process p reads the files of ranks p, p + P, ...):
# two broken files, rank 3's (node ids not increasing) and rank 6's (cut
# short), found by different processes at 2 and 3 processes (rank 6 first
# at process 0 of 2).  Every count gives the one line of one process
# reading every file: rank 3's, exit 2, no output.
broken = os.path.join(d, "broken")
for r in range(8):
    body = META + record(node(0, COMP, duration=1))
    if r == 3:
        body = META + record(node(5, COMP, duration=1)) + record(node(2, COMP, duration=1))
    with open(f"{broken}.{r}.et", "wb") as f:
        f.write(body[:-3] if r == 6 else body)
expected = None
for n in (1, 2, 3):
    out = os.path.join(d, f"broken{n}.h5")
    cmd = ["mpiexec", "-n", str(n), exe, "run", "-o", out, "--set", 'output.progress="never"']
    for s in fabric("fat_tree", 8) + ['workload.kind="trace"', f'workload.trace="{broken}"', "workload.trace_stream=true"]:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1, (n, r.returncode, r.stderr)
    assert re.search(r"broken\.3\.et: node 2: id: not after node 5", lines[0]), (n, lines)
    assert expected is None or lines[0] == expected, (n, lines[0], expected)
    expected = lines[0]
    assert not os.path.exists(out) and not glob.glob(os.path.join(d, f".broken{n}.h5*")), os.listdir(d)
    checks += 1
print("ok   1, 2 and 3 processes, broken files read by different processes: " + expected)
# $TMPDIR unwritable on one process only (a cluster node's own): the one
# line naming it, from every process, not one process failing while the
# other waits for the pre-pass's exchange.
good = traces[0][: -len(".0.et")]
out = os.path.join(d, "tmpdir.h5")
args = [exe, "run", "-o", out, "--set", 'output.progress="never"']
for s in fabric("fat_tree", 8) + ['workload.kind="trace"', f'workload.trace="{good}"', "workload.trace_stream=true"]:
    args += ["--set", s]
cmd = ["mpiexec", "-n", "1", "-env", "TMPDIR", os.path.join(d, "no-such-dir")] + args + [":", "-n", "1"] + args
r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
lines = [line for line in r.stderr.splitlines() if line.strip() and not line.startswith("warning")]
assert r.returncode != 0 and len(lines) == 1, (r.returncode, r.stderr)
assert "no-such-dir" in lines[0] and "TMPDIR" in lines[0], lines
assert not os.path.exists(out), os.listdir(d)
checks += 1
print("ok   2 processes, $TMPDIR unwritable on one: " + lines[0])
print(f"{checks} checks passed")
