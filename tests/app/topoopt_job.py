"""TopoOpt built from a job's own traffic (issue 32: topology.construction =
"job", TOPOLOGYFINDER).  What it must give:
  * a hand-computed example: 6 one-GPU servers of degree 3, [[jobs]] of two
    ring allreduces (servers 0-2 with 12,000 B between servers, 3-5 with
    6,000 B) and three broadcasts (0->3 9,000 B, 1->4 4,000 B, 2->5
    2,000 B): d_A = ceil(3 x 18,000 / 33,000) = 2; no family spans the
    servers, so one ring runs over all (0->1->...->5->0); the larger family
    gets the other (0->1->2->0), the smaller none; d_MP = 1: the matching
    {0-3, 1-4, 2-5} (weights 9,000, 4,000, 2,000); servers 3, 4, 5 have an
    interface left and no demand between them: closed by 3->4->5->3.  The
    fabric's data links (/links) are exactly these 18, and the run delivers
    every byte;
  * on servers of 4 GPUs, a data-parallel + expert-parallel DNN job: the
    fabric is degree-regular (every server d links out and d in) and
    strongly connected (BFS here), the job's bytes all arrive in the flow
    model, and at packet level 1, 2 and 3 ranks give identical results
    (links, flows, iterations);
  * the same job with routing.k_paths = 3: in the flow model with spray the
    server links carry each message's wire bytes times the mean of its
    server pair's 3 shortest loop-free route lengths (counted here by
    depth-first search); at packet level every byte arrives and 1 and 2
    ranks give identical results;
  * the expander baseline: degree-regular and connected, a seed gives the
    same fabric, another seed another;
  * the shared cluster (topology.job_shards): two DNN jobs of 4 servers and
    4 servers of no job on 12 servers of degree 2: every server has 2
    circuits out and 2 in, none crosses between the shards {0-3}, {4-7},
    {8-11}, each job's iteration times are exactly those of the job run
    alone on a TopoOpt of its own 4 servers (flow model), and at packet
    level 1 and 2 ranks give identical results.
  topoopt_job.py EXE
"""
import collections
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

exe = sys.argv[1]
d = tempfile.mkdtemp()
checks = 0


def run(text, name, ranks=1, *sets):
    cfg = os.path.join(d, name + ".toml")
    with open(cfg, "w") as f:
        f.write(text + '[output]\ninterval_ns = 0\nprogress = "never"\n')
    out = os.path.join(d, f"{name}-{ranks}.h5")
    cmd = [exe, "run", cfg, "-o", out, *sum((["--set", s] for s in sets), [])]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks)] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, (name, r.stderr)
    return out


def server_links(f):
    """Directed data links between servers (class global), as (u, v) server ids."""
    L = f["links"]
    names = L.attrs["class_names"]
    names = (names.decode() if isinstance(names, bytes) else names).split(",")
    glob = names.index("global")
    sel = (L["class"][()] == glob) & (L["carries_data"][()] == 1)
    node_names = [n.decode() if isinstance(n, bytes) else n for n in f["nodes/name"][()]]
    sid = [int(n[3:]) if n.startswith("srv") else -1 for n in node_names]
    return [(sid[a], sid[b]) for a, b in zip(L["src"][()][sel], L["dst"][()][sel])]


def regular_connected(links, n, deg):
    out, inn = collections.Counter(u for u, _ in links), collections.Counter(v for _, v in links)
    assert all(out[s] == deg and inn[s] == deg for s in range(n)), (out, inn)
    adj = collections.defaultdict(list)
    for u, v in links:
        adj[u].append(v)
    for s in range(n):
        seen, q = {s}, [s]
        while q:
            u = q.pop()
            for v in adj[u]:
                if v not in seen:
                    seen.add(v)
                    q.append(v)
        assert len(seen) == n, ("not strongly connected from", s)


def delivered(f):
    s = f["summary"].attrs
    assert s["bytes_delivered"] == s["bytes_injected"] and s["messages_delivered"] == f["flows/src"].shape[0], \
        dict(s)


SAME = ("links/tx_bytes", "links/forwarded_bytes", "flows/end_ns")


def same_on_ranks(text, name, rank_counts, *sets, keys=SAME, check=None):
    """Runs `text` on each rank count: check(f) on every result, and the columns `keys` (and the end
    time) identical on all."""
    ref = None
    for ranks in rank_counts:
        with h5py.File(run(text, name, ranks, *sets), "r") as f:
            if check:
                check(f)
            cols = [f[k][()] for k in keys] + [f["summary"].attrs["sim_time_ns"]]
        if ref is None:
            ref = cols
        else:
            assert all(np.array_equal(x, y) for x, y in zip(ref, cols)), (name, ranks)


# ---- the hand-computed example
HAND = '''[topology]
kind = "topoopt"
servers = 6
degree = 3
construction = "job"
[network]
vcs = 8
model = "flow"
[routing]
algorithm = "minimal"
[workload]
kind = "collective"
algorithm = "ring"
placement = "list"
share_endpoints = true
warmup = 0
iterations = 1
'''
for eps, op, size in (([0, 1, 2], "allreduce", 3000), ([3, 4, 5], "allreduce", 1500), ([0, 3], "broadcast", 9000),
                      ([1, 4], "broadcast", 4000), ([2, 5], "broadcast", 2000)):
    HAND += f'[[jobs]]\nop = "{op}"\nranks = {len(eps)}\nendpoints = {eps}\nsizes = [{size}]\n'
    if op == "broadcast":
        HAND += 'algorithm = "auto"\n'
out = run(HAND, "hand")
with h5py.File(out, "r") as f:
    # The inputs the derivation above assumed: bytes between servers per job.
    src, dst, b = f["flows/src"][()], f["flows/dst"][()], f["flows/bytes"][()]
    pair = collections.Counter()
    for s, t, x in zip(src, dst, b):
        pair[(int(s), int(t))] += int(x)
    ar0 = sum(v for (s, t), v in pair.items() if s < 3 and t < 3)
    ar1 = sum(v for (s, t), v in pair.items() if s >= 3 and t >= 3)
    assert (ar0, ar1, pair[(0, 3)], pair[(1, 4)], pair[(2, 5)]) == (12000, 6000, 9000, 4000, 2000), pair
    got = collections.Counter(server_links(f))
    want = collections.Counter([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0),  # the ring over all servers
                                (0, 1), (1, 2), (2, 0),                          # family of servers 0-2
                                (0, 3), (3, 0), (1, 4), (4, 1), (2, 5), (5, 2),  # the matching
                                (3, 4), (4, 5), (5, 3)])                         # spare interfaces closed
    assert got == want, (sorted(got.elements()), sorted(want.elements()))
    desc = f["topology"].attrs["description"]
    desc = desc.decode() if isinstance(desc, bytes) else desc
    assert "d_A 2" in desc and "d_MP 1" in desc, desc
    # The traffic the finder read from the job's plan is the traffic the run sent.
    assert f"AllReduce {ar0 + ar1} B, MP {pair[(0, 3)] + pair[(1, 4)] + pair[(2, 5)]} B;" in desc, desc
    delivered(f)
    rings_bytes = sum(int(x) for x, data in zip(f["links/tx_bytes"][()], f["links/carries_data"][()]) if data)
    back = [int(x) for s_, t, x in zip(src, dst, b) if (s_, t) == (5, 3)]  # the ringless group's 5 -> 3
    assert back
checks += 1
print("ok   hand-computed job: degree split 2 + 1, the ring over all servers, the larger family's ring, "
      "the matching {0-3, 1-4, 2-5}, spare interfaces closed; every byte delivered")
# The group 3-5 got no ring of its own: CoinChangeMod routes its 5 -> 3 over
# the AllReduce rings (5 -> 0 -> 1 -> 2 -> 3, the ring over all servers: 4
# hops) where the spare-interface link 5 -> 3 is one hop; every other
# message is one hop either way.  So the links carry 3 more hops of those
# messages' wire bytes than with routing.allreduce_routes = "shortest".
with h5py.File(run(HAND, "hand-shortest", 1, 'routing.allreduce_routes="shortest"'), "r") as f:
    delivered(f)
    shortest_bytes = sum(int(x) for x, data in zip(f["links/tx_bytes"][()], f["links/carries_data"][()]) if data)
extra = 3 * sum(x + -(-x // (4096 - 64)) * 64 for x in back)  # (default packets of 4,096 B, 64 B headers)
assert abs(rings_bytes - shortest_bytes - extra) <= 2, (rings_bytes, shortest_bytes, extra)


def same_hops(f):  # the same pinned at packet level: the flow model's bytes
    delivered(f)
    packet_bytes = sum(int(x) for x, data in zip(f["links/tx_bytes"][()], f["links/carries_data"][()]) if data)
    assert abs(packet_bytes - rings_bytes) <= 2, (packet_bytes, rings_bytes)


same_on_ranks(HAND, "hand-packet", (1, 2), 'network.model="packet"', check=same_hops)
checks += 1
print(f"ok   the ringless group's AllReduce over the other rings (CoinChangeMod): 5 -> 3 takes 4 hops, not the "
      f"1-hop link; {extra} B more on the links than by shortest paths; at packet level identical on 1 and 2 ranks")

# ---- servers of 4 GPUs, a DNN job: dense layers reduced across the
# replicas, an embedding layer's alltoall among them (MP).
MODEL = os.path.join(d, "model.toml")
with open(MODEL, "w") as f:
    f.write('[model]\nname = "mini-dlrm"\nsource = "test"\nbytes_per_value = 4\nminibatch = 256\n'
            '[[layer]]\nname = "embedding"\nforward_ns = 100\nbackward_ns = 200\nparams = 0\n'
            'activation_bytes = 4096\nalltoall_bytes = 65536\nalltoalls = 1\n'
            '[[layer]]\nname = "mlp"\ncount = 4\nforward_ns = 200\nbackward_ns = 400\nparams = 16384\n'
            'activation_bytes = 1024\n')
DNN = f'''[topology]
kind = "topoopt"
servers = 8
degree = 4
gpu_servers = true
gpus_per_server = 4
construction = "job"
[network]
vcs = 12
link_gbps = 100
link_latency_ns = 1000
packet_bytes = 1500
header_bytes = 64
[routing]
algorithm = "minimal"
[workload]
kind = "dnn"
model = "{MODEL}"
data_parallel = 32
expert_parallel = 32
dp_algorithm = "topoopt_rings"
iterations = 1
'''
out = run(DNN, "dnn", 1, 'network.model="flow"')
with h5py.File(out, "r") as f:
    links = server_links(f)
    regular_connected(links, 8, 4)
    delivered(f)
    desc = f["topology"].attrs["description"]
    desc = desc.decode() if isinstance(desc, bytes) else desc
    assert "d_MP 3 (3 matching rounds)" in desc, desc  # the alltoall's bytes outweigh the allreduce's
    n_iter = f["iterations/time_ns"].shape[0]
    assert n_iter >= 1 and np.all(f["iterations/finished"][()] == 1)
checks += 1
print(f"ok   4-GPU servers, DNN job (flow): {len(links)} server links, 4-regular and strongly connected; "
      "every byte delivered")

same_on_ranks(DNN, "dnn", (1, 2, 3), 'workload.minibatch=128', keys=SAME + ("iterations/time_ns",))
checks += 1
print("ok   4-GPU servers, DNN job (packet): identical on 1, 2 and 3 ranks")

# ---- k shortest routes per server pair (routing.k_paths) on the same
# fabric.  With spray, the flow model splits each message evenly over its
# pair's k routes, so the bytes on the server links are, whatever the ties,
# sum over messages of wire bytes x the mean of the k smallest loop-free
# route lengths of its servers (parallel cables are routes of their own),
# which a depth-first count here gives.
K, PER, HDR = 3, 1500 - 64, 64


def k_mean_lengths(links, k):
    adj = collections.defaultdict(list)
    for u, v in links:
        adj[u].append(v)

    def count(s, t, length):  # loop-free routes of exactly `length` links
        def walk(u, seen, left):
            if left == 0:
                return 1 if u == t else 0
            return sum(walk(v, seen | {v}, left - 1) for v in adj[u] if v not in seen and (v != t or left == 1))
        return walk(s, {s}, length)

    mean = {}
    for s in range(8):
        for t in range(8):
            if s == t:
                continue
            got, total, length = 0, 0, 0
            while got < k and length < 8:
                length += 1
                c = min(count(s, t, length), k - got)
                got, total = got + c, total + c * length
            mean[(s, t)] = total / got
    return mean


def server_bytes(f):
    L = f["links"]
    names = L.attrs["class_names"]
    names = (names.decode() if isinstance(names, bytes) else names).split(",")
    sel = (L["class"][()] == names.index("global")) & (L["carries_data"][()] == 1)
    return float(L["tx_bytes"][()][sel].sum())


with h5py.File(run(DNN, "dnn-k", 1, 'network.model="flow"', 'routing.algorithm="spray"', f"routing.k_paths={K}",
                   'routing.allreduce_routes="shortest"'), "r") as f:
    delivered(f)
    links = server_links(f)
    means = {k: k_mean_lengths(links, k) for k in (1, K)}
    want = {k: 0.0 for k in (1, K)}
    for s, t, b in zip(f["flows/src"][()], f["flows/dst"][()], f["flows/bytes"][()]):
        u, v = int(s) // 4, int(t) // 4
        if u != v:
            for k in (1, K):
                want[k] += (int(b) + -(-int(b) // PER) * HDR) * means[k][(u, v)]
    got = server_bytes(f)
    assert want[K] > want[1] * 1.01, want  # (the check tells k routes from shortest ones)
    assert abs(got - want[K]) <= 1e-6 * want[K], (got, want)
# With the AllReduce on its rings (CoinChangeMod, the default) the ring
# neighbours' messages stay on their one-hop ring links.
with h5py.File(run(DNN, "dnn-kr", 1, 'network.model="flow"', 'routing.algorithm="spray"', f"routing.k_paths={K}"),
               "r") as f:
    delivered(f)
    rings_bytes = server_bytes(f)
assert want[1] < rings_bytes < got, (want[1], rings_bytes, got)
checks += 1
print(f"ok   k_paths = {K} on the job-built fabric (flow, spray): server-link bytes = wire bytes x the mean of "
      f"each pair's {K} shortest loop-free route lengths ({got:.0f} B; shortest routes alone: {want[1]:.0f} B; "
      f"AllReduce on its rings: {rings_bytes:.0f} B)")



def conserved(f):
    delivered(f)
    L = f["links"]
    assert np.all(L["originated_bytes"][()].astype(np.int64) + L["forwarded_bytes"][()] == L["tx_bytes"][()])


same_on_ranks(DNN, "dnn-k", (1, 2), 'workload.minibatch=128', f"routing.k_paths={K}",
              keys=SAME + ("iterations/time_ns",), check=conserved)
checks += 1
print(f"ok   k_paths = {K} at packet level: every byte delivered, originated + forwarded = link bytes, identical "
      "on 1 and 2 ranks")

# ---- the expander baseline
EXP = '''[topology]
kind = "topoopt"
servers = 12
degree = 3
construction = "expander"
[network]
vcs = 8
model = "flow"
[routing]
algorithm = "minimal"
[workload]
kind = "traffic"
pattern = "permutation"
message_bytes = 10000
'''
fabrics = []
for seed in (1, 1, 2):
    with h5py.File(run(EXP, f"exp{len(fabrics)}", 1, f"topology.expander_seed={seed}"), "r") as f:
        links = server_links(f)
        regular_connected(links, 12, 3)
        delivered(f)
        fabrics.append(sorted(links))
        # /topology's path-length distribution against BFS over the links here.
        adj = collections.defaultdict(set)
        for u, v in links:
            adj[u].add(v)
        hist = collections.Counter()
        for s in range(12):
            dist, q = {s: 0}, [s]
            for u in q:
                for v in adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        q.append(v)
            hist.update(h for t, h in dist.items() if t != s)
        got = list(f["topology"].attrs["server_hops"])
        want = [hist[h] for h in range(max(hist) + 1)]
        assert got == want and abs(f["topology"].attrs["server_hops_mean"] - sum(h * c for h, c in hist.items()) /
                                   sum(hist.values())) < 1e-12, (got, want)
assert fabrics[0] == fabrics[1] and fabrics[0] != fabrics[2]
checks += 1
print("ok   expander: 3-regular and connected, its hop distribution in /topology; a seed gives the same fabric, "
      "another seed another")
# ---- topoopt_rings: one allreduce over every ring of the fabric
RINGS = '''[topology]
kind = "topoopt"
servers = 8
degree = 2
[network]
vcs = 8
model = "flow"
packet_bytes = 1024
header_bytes = 0
[routing]
algorithm = "minimal"
[workload]
kind = "collective"
op = "allreduce"
ranks = 8
sizes = [1048576]
warmup = 0
iterations = 1
'''
per_link = {}
for algo in ("topoopt_rings", "ring"):
    with h5py.File(run(RINGS, "rings-" + algo, 1, f'workload.algorithm="{algo}"'), "r") as f:
        L = f["links"]
        data = L["carries_data"][()] == 1
        tx, fwd = L["tx_bytes"][()][data], L["forwarded_bytes"][()][data]
        hops = [(int(a), int(b)) for a, b in zip(L["src"][()][data], L["dst"][()][data])]
        per_link[algo] = dict(zip(hops, tx))
        assert not fwd.any(), (algo, "ring neighbours are one hop apart: nothing is forwarded")
        delivered(f)
# The jumps are +1 and +3 (SelectPermutations for 8 servers, 2 rings): with
# topoopt_rings each of the 16 links carries half of a ring allreduce's
# 2 (n-1)/n x S per rank; with the plain ring only the +1 links carry it all.
ring_bytes = 2 * 7 * (1048576 // 8)
want_split = {(i, (i + p) % 8): ring_bytes // 2 for i in range(8) for p in (1, 3)}
want_plain = {(i, (i + p) % 8): (ring_bytes if p == 1 else 0) for i in range(8) for p in (1, 3)}
assert per_link["topoopt_rings"] == want_split, per_link["topoopt_rings"]
assert per_link["ring"] == want_plain, per_link["ring"]
checks += 1
print("ok   topoopt_rings: the allreduce split evenly over the +1 and +3 rings, every message one hop")
# ---- the paper's baselines: servers of 4 GPUs behind one NIC
# (topology.gpus_per_nic).  Bisection traffic between 2 servers on an ideal
# switch: each server's 4 GPUs send 1 MiB to the other server's, so each
# NIC carries 4 messages and limits them: the makespan is 4 x the wire bytes
# at the link rate, plus little (latencies, one last packet).
BASE = '''[topology]
kind = "ideal_switch"
endpoints = 2
gpus_per_nic = 4
[network]
model = "flow"
link_gbps = 100
packet_bytes = 4096
header_bytes = 64
[routing]
algorithm = "ecmp"
[workload]
kind = "traffic"
pattern = "bisection"
message_bytes = 1048576
'''
with h5py.File(run(BASE, "base"), "r") as f:
    delivered(f)
    end = f["flows/end_ns"][()].max()
    assert f["flows/src"].shape[0] == 8
wire = 1048576 + -(-1048576 // (4096 - 64)) * 64
bound = 4 * wire * 8 / 100
assert bound <= end <= bound * 1.01, (end, bound)
checks += 1
print(f"ok   ideal switch, 2 servers of 4 GPUs behind one NIC: makespan {end:.0f} ns, the NIC's 4 messages "
      f"{bound:.0f} ns")

# ---- the shared cluster: a shard per job
SHARD_JOB = '''
[[jobs]]
model = "{model}"
data_parallel = 16
expert_parallel = {ep}
minibatch = 64
iterations = 2
'''
SHARED = f'''[topology]
kind = "topoopt"
servers = {{servers}}
degree = 2
gpu_servers = true
gpus_per_server = 4
construction = "job"
job_shards = true
[network]
model = "flow"
vcs = 8
link_gbps = 100
[workload]
kind = "dnn"
'''
times = {}
with h5py.File(run(SHARED.format(servers=12) + SHARD_JOB.format(model=MODEL, ep=16) +
                   SHARD_JOB.format(model=MODEL, ep=1), "shared"), "r") as f:
    links = server_links(f)
    delivered(f)
    outd, ind = collections.Counter(u for u, _ in links), collections.Counter(v for _, v in links)
    assert all(outd[v] == 2 and ind[v] == 2 for v in range(12)), (outd, ind)
    assert all(u // 4 == v // 4 for u, v in links), [(u, v) for u, v in links if u // 4 != v // 4]
    it = f["iterations"]
    for j in (0, 1):
        sel = it["job"][()] == j
        times[j] = it["time_ns"][()][sel]
for j, ep in ((0, 16), (1, 1)):
    alone = SHARED.format(servers=4).replace("job_shards = true", "job_shards = false")
    alone = alone.replace('kind = "dnn"', f'kind = "dnn"\nmodel = "{MODEL}"\ndata_parallel = 16\n'
                          f'expert_parallel = {ep}\nminibatch = 64\niterations = 2')
    with h5py.File(run(alone, f"alone{j}"), "r") as f:
        assert np.array_equal(f["iterations/time_ns"][()], times[j]), (j, f["iterations/time_ns"][()], times[j])
same_on_ranks(SHARED.format(servers=12) + SHARD_JOB.format(model=MODEL, ep=16) + SHARD_JOB.format(model=MODEL, ep=1),
              "shared-pk", (1, 2), 'network.model="packet"', keys=SAME + ("iterations/time_ns",))
checks += 1
print("ok   shared cluster: 2 jobs and 4 idle servers in 3 shards, 2 circuits out and in per server, none between "
      "shards; each job's iterations exactly as alone on its own servers; packet identical on 1 and 2 ranks")
print(f"{checks} checks passed")
