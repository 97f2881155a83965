"""Chakra execution traces (issue 33): ASTRA-sim's example traces
(tests/data/chakra/, unchanged) run as they are, one .et file per rank.
  * every microbenchmark (all_reduce, all_gather, reduce_scatter, all_to_all
    on 4, 8 and 16 ranks, 1 MiB) and the custom ring allreduce run on the
    bidirectional ring of their analytical topology (50 GB/s, 500 ns a
    link: Ring_{4,8,16}npus.yml) and on a fat tree, in the analytic, flow
    and packet models, every byte delivered;
  * each microbenchmark takes exactly the time of the same collective run as
    fabricsim's own benchmark (workload.kind = "collective", same op, size
    and ranks), in every model and on both fabrics: the trace's collective
    node is that collective;
  * in the analytic model on the ring the ring collectives take the
    alpha-beta time derived here: all_reduce 2 (p - 1) (alpha + n / (p B)),
    all_gather and reduce_scatter (p - 1) (alpha + n / (p B)), n = 1 MiB;
  * /flows/trace_node names each message's node: a send node's message
    goes to its comm_dst with its comm_size, a ring allreduce node's rank
    sends 2 (p - 1) chunks of n / p (the files decoded here);
  * the custom ring allreduce (its sends, receives and 7 us reductions
    written out node by node) spends exactly the built-in ring allreduce's
    time communicating, and its reductions add 7 x 7 us: the chain of one
    chunk's reductions around the ring.
  chakra_traces.py EXE SRC
"""
import os
import subprocess
import sys
import tempfile

import h5py

exe, src = sys.argv[1], sys.argv[2]
data = os.path.join(src, "tests/data/chakra/examples")
d = tempfile.mkdtemp()
checks = 0
ALPHA_NS, GBYTES = 500.0, 50.0  # Ring_*npus.yml
N = 1 << 20


def fabric(kind, p):
    if kind == "ring":
        return ['topology.kind="npu_graph"', 'topology.npu_graph="bidirectional_ring"', f"topology.dims=[{p}]",
                f"topology.npu_gbps={GBYTES * 8}", f"topology.npu_alpha_ns={ALPHA_NS}"]
    return ['topology.kind="fat_tree"', "topology.endpoints=16", "topology.radix=8", f"network.link_gbps={GBYTES * 8}"]


def run(name, sets):
    out = os.path.join(d, name + ".h5")
    cmd = [exe, "run", "-o", out, "--set", 'output.progress="never"', "--set", "output.interval_ns=0"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, (name, " ".join(cmd), r.stderr)
    with h5py.File(out, "r") as f:
        s = f["summary"].attrs
        assert s["bytes_delivered"] == s["bytes_injected"] and s["messages_delivered"] == f["flows/src"].shape[0], \
            (name, dict(s))
        if "iterations" in f:
            return float(f["iterations/time_ns"][0]), float(f["iterations/compute_ns"][0])
        c = f["collectives"]
        return float(c["end_ns"][0] - c["start_ns"][0]), 0.0


OPS = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce_scatter",
       "all_to_all": "alltoall"}
for model in ("analytic", "flow", "packet"):
    for kind in ("ring", "fat_tree"):
        for op, builtin in OPS.items():
            for p in (4, 8, 16):
                trace = os.path.join(data, f"workload/microbenchmarks/{op}/{p}npus_1MB/{op}")
                base = fabric(kind, p) + [f'network.model="{model}"']
                if op != "all_to_all":  # (the trace's alltoall is pairwise whatever the algorithm)
                    base.append('workload.algorithm="ring"')
                t, _ = run(f"{op}-{p}-{kind}-{model}", base + ['workload.kind="trace"', f'workload.trace="{trace}"'])
                b, _ = run(f"{op}-{p}-{kind}-{model}-builtin",
                           base + ['workload.kind="collective"', f'workload.op="{builtin}"', f"workload.ranks={p}",
                                   f"workload.sizes=[{N}]"])
                assert t == b, (op, p, kind, model, t, b)
                if model == "analytic" and kind == "ring" and op != "all_to_all":
                    steps = (p - 1) * (2 if op == "all_reduce" else 1)
                    want = steps * (ALPHA_NS + N / p / GBYTES)  # bytes / (GB/s) = ns
                    assert abs(t - want) < 1e-3, (op, p, t, want)
        checks += 1
        print(f"ok   {model:8s} {kind:8s}: 12 microbenchmarks delivered, each as long as fabricsim's own "
              "collective" + ("; ring collectives = alpha-beta" if model == "analytic" and kind == "ring" else ""))

custom = os.path.join(data, "system/custom_collectives/custom_ring_allreduce_8npus_1MB/custom_allreduce")
for model in ("analytic", "flow", "packet"):
    for kind in ("ring", "fat_tree"):
        base = fabric(kind, 8) + [f'network.model="{model}"']
        t, compute = run(f"custom-{kind}-{model}", base + ['workload.kind="trace"', f'workload.trace="{custom}"'])
        b, _ = run(f"custom-{kind}-{model}-builtin", base + ['workload.kind="collective"', 'workload.op="allreduce"',
                                                            'workload.algorithm="ring"', "workload.ranks=8",
                                                            f"workload.sizes=[{N}]"])
        assert compute == 7 * 7000.0, compute  # 7 reductions of 7 us on the busiest rank
        assert abs(t - (b + 7 * 7000.0)) < 1e-3, (kind, model, t, b)
        checks += 1
        print(f"ok   {model:8s} {kind:8s}: custom ring allreduce {t / 1e3:.3f} us = the built-in ring allreduce "
              f"{b / 1e3:.3f} us + 7 reductions of 7 us")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_bad_chakra as enc  # noqa: E402  (the protobuf wire format by hand)

# ---- GATHER and SCATTER nodes (comm_type 3 and 4; not in ASTRA-sim's examples): written here,
# each as long as fabricsim's own direct gather / scatter of the same size, root rank 0, in every
# model; and never faster than the root's own links allow: (p - 1) parts of n / p over its two
# ring links, at least ceil((p - 1) / 2) parts on one of them
for op, ctype in (("gather", 3), ("scatter", 4)):
    p = 8
    prefix = os.path.join(d, op)
    for r in range(p):
        with open(f"{prefix}.{r}.et", "wb") as f:
            f.write(enc.META + enc.record(enc.node(0, enc.COLL, [("comm_type", "int64", ctype),
                                                                 ("comm_size", "int64", N)])))
    for model in ("analytic", "flow", "packet"):
        for kind in ("ring", "fat_tree"):
            base = fabric(kind, p) + [f'network.model="{model}"']
            t, _ = run(f"{op}-{kind}-{model}", base + ['workload.kind="trace"', f'workload.trace="{prefix}"'])
            b, _ = run(f"{op}-{kind}-{model}-builtin",
                       base + ['workload.kind="collective"', f'workload.op="{op}"', 'workload.algorithm="direct"',
                               f"workload.ranks={p}", f"workload.sizes=[{N}]"])
            assert t == b, (op, kind, model, t, b)
            if kind == "ring":
                assert t >= ((p - 1 + 1) // 2) * (N / p / GBYTES) + ALPHA_NS - 1e-3, (op, model, t)
    checks += 1
    print(f"ok   {op.upper()} nodes: as long as fabricsim's direct {op} in all three models, on the ring and a fat tree")

# ---- memory nodes: MEM_LOAD_NODE of tensor_size bytes at workload.trace_memory_gbytes_per_s, and
# MEM_STORE_NODE of duration_micros; both on the rank's compute stream
MEM_LOAD, MEM_STORE = 2, 3
prefix = os.path.join(d, "memory")
with open(f"{prefix}.0.et", "wb") as f:  # load 3 MB at 100 GB/s (30 us), then 5 us of compute after it
    f.write(enc.META + enc.record(enc.node(0, MEM_LOAD, [("tensor_size", "int64", 3000000)])) +
            enc.record(enc.node(1, enc.COMP, deps=[0], duration=5)))
with open(f"{prefix}.1.et", "wb") as f:  # a 7 us store, and a 4 us compute beside it: one stream, 11 us
    f.write(enc.META + enc.record(enc.node(0, MEM_STORE, duration=7)) + enc.record(enc.node(1, enc.COMP, duration=4)))
for model in ("analytic", "packet"):
    t, compute = run(f"memory-{model}", fabric("ring", 2) + [f'network.model="{model}"', 'workload.kind="trace"',
                                                           f'workload.trace="{prefix}"',
                                                           "workload.trace_memory_gbytes_per_s=100"])
    assert compute == 35000.0 and t == 35000.0, (model, t, compute)  # rank 0: 3e6 B / 100 B/ns + 5 us
r = subprocess.run([exe, "run", "-o", os.path.join(d, "memory-none.h5"), "--set", 'workload.kind="trace"',
                    "--set", f'workload.trace="{prefix}"'], capture_output=True, text=True)
assert r.returncode == 2 and "trace_memory_gbytes_per_s" in r.stderr and len(r.stderr.strip().splitlines()) == 1, \
    r.stderr
assert not os.path.exists(os.path.join(d, "memory-none.h5"))
checks += 1
print("ok   memory nodes: a 3 MB load at 100 GB/s takes 30 us on the compute stream, a store its duration; without "
      "a bandwidth the load is refused in one line")

# ---- communicator groups

import json  # noqa: E402

prefix = os.path.join(d, "groups")
for r in range(8):
    with open(f"{prefix}.{r}.et", "wb") as f:
        f.write(enc.META + enc.record(enc.node(0, enc.COLL, [("comm_type", "int64", 0), ("comm_size", "int64", N),
                                                             ("pg_name", "string", "tp" if r < 4 else "tp2")])))
with open(os.path.join(d, "groups.json"), "w") as f:
    json.dump({"tp": [0, 1, 2, 3], "tp2": [4, 5, 6, 7]}, f)
with open(os.path.join(d, "groups-trace.json"), "w") as f:
    json.dump({"schema": "fabricsim-trace-1", "name": "groups", "ranks": 8,
               "nodes": [{"id": r, "rank": r, "type": "COMM_COLL_NODE", "comm_type": "ALL_REDUCE", "comm_size": N,
                          "comm_group": [0, 1, 2, 3] if r < 4 else [4, 5, 6, 7]} for r in range(8)]}, f)
for model in ("analytic", "packet"):
    base = fabric("ring", 8) + [f'network.model="{model}"', 'workload.kind="trace"']
    a, _ = run(f"groups-chakra-{model}", base + [f'workload.trace="{prefix}"',
                                                 f'workload.trace_comm_groups="{d}/groups.json"'])
    b, _ = run(f"groups-json-{model}", base + [f'workload.trace="{d}/groups-trace.json"'])
    flows = []
    for name in (f"groups-chakra-{model}", f"groups-json-{model}"):
        with h5py.File(os.path.join(d, name + ".h5"), "r") as f:
            fl = f["flows"]
            flows.append(sorted(zip(fl["src"][()], fl["dst"][()], fl["bytes"][()], fl["end_ns"][()])))
    assert a == b and flows[0] == flows[1] and len(flows[0]) == 2 * 2 * 3 * 4, (model, a, b, len(flows[0]))
    whole, _ = run(f"groups-none-{model}", base + [f'workload.trace="{prefix}"'])
    assert whole != a  # (without the group file each allreduce spans all 8 ranks)
checks += 1
print("ok   communicator groups (pg_name + group file): the flows and time of the JSON trace with comm_group lists")
# ---- protobuf's wire format, read here (independent of fabricsim's reader)
def varint(buf, i):
    v = s_ = 0
    while True:
        b = buf[i]
        v |= (b & 0x7F) << s_
        i += 1
        s_ += 7
        if b < 0x80:
            return v, i


def fields(buf, at, end):
    """(field number, value) of a message's fields: an integer, or the bytes of a length-delimited one."""
    while at < end:
        key, at = varint(buf, at)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, at = varint(buf, at)
            yield num, v
        elif wire == 2:
            ln, at = varint(buf, at)
            yield num, buf[at:at + ln]
            at += ln
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4


def node_records(path):
    """The bytes of every node record of a .et file (the GlobalMetadata record skipped)."""
    data, at, first = open(path, "rb").read(), 0, True
    while at < len(data):
        length, at = varint(data, at)
        if not first:
            yield data[at:at + length]
        first, at = False, at + length


def decode(path):
    """(id, name) of every node of a .et file."""
    out = []
    for rec in node_records(path):
        nid, name = 0, ""
        for num, v in fields(rec, 0, len(rec)):
            if num == 1:
                nid = v
            elif num == 2:
                name = v.decode()
        out.append((nid, name))
    return out


def decode_nodes(path):
    """(id, type, {attribute: integer}) of every node of a .et file."""
    out = []
    for rec in node_records(path):
        nid, ntype, attrs = 0, 0, {}
        for num, v in fields(rec, 0, len(rec)):
            if num == 1:
                nid = v
            elif num == 3:
                ntype = v
            elif num == 10:
                name, val = "", None
                for an, av in fields(v, 0, len(v)):
                    if an == 1:
                        name = av.decode()
                    elif an in (7, 9, 11, 13):  # int32, int64, uint32, uint64
                        val = av
                attrs[name] = val
        out.append((nid, ntype, attrs))
    return out


# ---- /trace_nodes

tables = []
def run_on(name, sets, ranks):
    """fabricsim run on `ranks` MPI ranks (block partition); the output's path."""
    out = os.path.join(d, f"{name}-{ranks}.h5")
    cmd = [exe, "run", "-o", out, "--set", 'output.progress="never"', "--set", "output.interval_ns=0", "--set",
           'engine.partitioner="block"']
    for s_ in sets:
        cmd += ["--set", s_]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks)] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, (name, r.stderr)
    return out


for ranks in (1, 2):
    out = run_on("nodes", fabric("ring", 8) + ["output.timeline=true", 'workload.kind="trace"',
                                               f'workload.trace="{custom}"', 'network.model="packet"'], ranks)
    with h5py.File(out, "r") as f:
        t = f["trace_nodes"]
        cols = {k: t[k][()] for k in ("rank", "node_id", "kind", "start_ns", "end_ns", "name")}
        kinds = t.attrs["kind_names"]
        kinds = (kinds.decode() if isinstance(kinds, bytes) else kinds).split(",")
        end = float(f["iterations/end_ns"][0])
    tables.append(cols)
want = [(r, nid, name) for r in range(8) for nid, name in decode(f"{custom}.{r}.et")]
got = [(int(r), int(n), (m.decode() if isinstance(m, bytes) else m)) for r, n, m in
       zip(tables[0]["rank"], tables[0]["node_id"], tables[0]["name"])]
assert got == want, (got[:5], want[:5])
comp = tables[0]["kind"] == kinds.index("compute")
assert comp.sum() == 8 * 7 and all(abs(tables[0]["end_ns"][comp] - tables[0]["start_ns"][comp] - 7000.0) < 1e-6)
assert (tables[0]["start_ns"] >= 0).all() and tables[0]["end_ns"].max() == end
assert all((tables[0][k] == tables[1][k]).all() for k in tables[0]), "differs on 2 ranks"
checks += 1
print(f"ok   /trace_nodes: {len(want)} nodes with the files' ids and names, reductions of 7 us, ending at the "
      "trace's end; the same on 1 and 2 ranks")
# ---- /trace_nodes of two trace jobs in one run ([[jobs]]): each row has its own job's name for
# its node (a trace's distinct names are stored once per job, rows index them), on 1 and 2 ranks
micro8 = os.path.join(data, "workload/microbenchmarks/all_gather/8npus_1MB/all_gather")
two = os.path.join(d, "two_traces.toml")
with open(two, "w") as f:
    f.write('[topology]\nkind = "fat_tree"\nendpoints = 16\nradix = 8\n[network]\nmodel = "packet"\n'
            '[output]\ntimeline = true\nprogress = "never"\ninterval_ns = 0\n'
            f'[workload]\nkind = "trace"\nalgorithm = "ring"\n[[jobs]]\ntrace = "{custom}"\n'
            f'[[jobs]]\ntrace = "{micro8}"\n')
got2 = []
for ranks in (1, 2):
    out = os.path.join(d, f"two-{ranks}.h5")
    cmd = [exe, "run", two, "-o", out]
    r = subprocess.run((["mpiexec", "-n", "2"] if ranks > 1 else []) + cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with h5py.File(out, "r") as f:
        t = f["trace_nodes"]
        got2.append([(int(j), int(rk), int(n), (m.decode() if isinstance(m, bytes) else m))
                     for j, rk, n, m in zip(t["job"][()], t["rank"][()], t["node_id"][()], t["name"][()])])
want2 = [(j, r, nid, name) for j, tr in enumerate((custom, micro8)) for r in range(8)
         for nid, name in decode(f"{tr}.{r}.et")]
repeats = len(want2) - len({w[3] for w in want2})
assert got2[0] == want2 and got2[1] == want2, (got2[0][:3], want2[:3])
assert repeats > 0, "the traces' names all differ: nothing stored once"
checks += 1
print(f"ok   /trace_nodes of two trace jobs: {len(want2)} rows, each with its file's name ({repeats} repeats of "
      "an earlier name), on 1 and 2 ranks")
# ---- /flows/trace_node: each message with its node
SEND, COLL = 5, 7
micro = os.path.join(data, "workload/microbenchmarks/all_reduce/8npus_1MB/all_reduce")
for label, trace in (("custom ring allreduce", custom), ("all_reduce microbenchmark", micro)):
    for ranks in (1, 2):
        out = run_on("flownodes", fabric("ring", 8) + ["output.flows=true", 'workload.kind="trace"',
                                                       f'workload.trace="{trace}"', 'network.model="packet"',
                                                       'workload.algorithm="ring"'], ranks)
        with h5py.File(out, "r") as f:
            fl = {k: f["flows"][k][()] for k in ("src", "dst", "bytes", "trace_node")}
            tn = {k: f["trace_nodes"][k][()] for k in ("rank", "node_id", "endpoint")}
        if ranks == 1:
            first = fl
        else:
            assert all((fl[k] == first[k]).all() for k in fl), "/flows/trace_node differs on 2 ranks"
    nodes = {(rk, nid): (ntype, attrs) for rk in range(8) for nid, ntype, attrs in decode_nodes(f"{trace}.{rk}.et")}
    assert (fl["trace_node"] >= 0).all() and (fl["trace_node"] < len(tn["rank"])).all()
    assert (tn["endpoint"] == tn["rank"]).all()  # (linear placement on the ring)
    per_node = {}
    for fsrc, fdst, size, row in zip(fl["src"], fl["dst"], fl["bytes"], fl["trace_node"]):
        key = (int(tn["rank"][row]), int(tn["node_id"][row]))
        ntype, attrs = nodes[key]
        assert fsrc == key[0], (key, fsrc)  # sent by its node's rank
        if ntype == SEND:
            assert fdst == attrs["comm_dst"] and size == attrs["comm_size"], (key, fdst, size, attrs)
        else:
            assert ntype == COLL, (key, ntype)
        per_node.setdefault(key, []).append(int(size))
    sends = [k for k, (t_, _) in nodes.items() if t_ == SEND]
    colls = [k for k, (t_, _) in nodes.items() if t_ == COLL]
    assert all(len(per_node[k]) == 1 for k in sends)
    # A ring allreduce of N bytes over 8 ranks: each rank sends 2 x 7 chunks of N / 8.
    assert all(sum(per_node[k]) == 2 * 7 * N // 8 and len(per_node[k]) == 14 for k in colls), \
        {k: (len(v), sum(v)) for k, v in per_node.items() if k in colls}
    assert len(per_node) == len(sends) + len(colls)
    checks += 1
    what = (f"{len(sends)} send nodes, each its one message to its comm_dst of its comm_size" if sends else
            f"{len(colls)} collective nodes, each 14 messages of N/8 from its rank")
    print(f"ok   /flows/trace_node ({label}): {len(fl['src'])} messages: {what}; the same on 2 ranks")
# ---- info bounds a trace: the fluid estimate of its own messages
sets = fabric("ring", 8) + ['workload.kind="trace"', f'workload.trace="{micro}"', 'workload.algorithm="ring"']
cmd = [exe, "info", "--json"]
for s_ in sets:
    cmd += ["--set", s_]
r = subprocess.run(cmd, capture_output=True, text=True)
assert r.returncode == 0, r.stderr
fl = json.loads(r.stdout)
t, _ = run("info-bound-run", sets + ['network.model="packet"'])
# 8 ranks x 2 x 7 ring steps of N/8, and no run beats its busiest link
assert fl["fluid_traffic"] == "jobs" and fl["fluid"]["messages"] == 8 * 14, fl["fluid"]
assert fl["fluid"]["payload_bytes"] == 8 * 14 * (N // 8) and fl["fluid"]["min_makespan_ns"] <= t, (fl["fluid"], t)
checks += 1
print(f"ok   info on a trace: the fluid estimate of its 112 messages, makespan >= "
      f"{fl['fluid']['min_makespan_ns'] / 1e3:.3f} us, the packet run {t / 1e3:.3f} us")
# ---- round trip: a DNN job out as Chakra files and back
DNN = ['topology.kind="fat_tree"', "topology.endpoints=16", "topology.radix=8", 'workload.kind="dnn"',
       f'workload.model="{os.path.join(src, "inputs/models/resnet50.toml")}"', "workload.data_parallel=2",
       "workload.pipeline_parallel=2", "workload.tensor_parallel=2", "workload.micro_batches=2",
       "workload.minibatch=16", "workload.warmup=0", "workload.iterations=1"]
for model in ("flow", "packet"):
    sets = DNN + [f'network.model="{model}"']
    direct, _ = run(f"dnn-{model}", sets)
    prefix = os.path.join(d, f"exported-{model}")
    cmd = [exe, "export-chakra", "-o", prefix]
    for s_ in sets:
        cmd += ["--set", s_]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(d)).count(f"exported-{model}.7.et") == 1 and not os.path.exists(f"{prefix}.8.et")
    replay, _ = run(f"replay-{model}", sets + ['workload.kind="trace"', f'workload.trace="{prefix}"',
                                               "workload.trace_peak_tflops=1"])
    assert replay == direct, (model, replay, direct)
    checks += 1
    print(f"ok   round trip ({model}): ResNet-50 D2 x P2 x O2 {direct / 1e3:.3f} us directly, "
          f"{replay / 1e3:.3f} us exported to Chakra and replayed")
print(f"{checks} checks passed")
