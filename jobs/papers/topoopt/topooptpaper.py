"""Shared parts of the TopoOpt paper's experiment scripts (README.md).

Wang et al., "TopoOpt: Co-optimizing Network Topology and Parallelization
Strategy for Distributed Training Jobs" (NSDI '23); the specification is
../shared/spec/topoopt.md (sections named as spec N).  Every script runs
fabricsim on dedicated.toml next to this file with the fabric and the model
set per run, reads /iterations, /topology and /links from the HDF5 outputs
and writes one CSV (one row per run, with its command) and one figure.  What
is here is the paper's: its fabrics, models, hyper-parameters and cost
rules; the argument checks, runs, CSV and figures are every paper's
(jobs/papers/paperlib.py).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from paperlib import *  # noqa: E402,F401,F403

DEDICATED = os.path.join(HERE, "dedicated.toml")
MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "..", "inputs", "models")
GPUS_PER_SERVER = 4  # spec §2.1: 4 A100s per server in every simulation

# The dedicated cluster's models (spec §5.1 List 1): model file, batch per
# GPU, whether its embeddings are model parallel (an alltoall over every GPU).
MODELS = {
    "dlrm": ("topoopt_dlrm.toml", 128, True),
    "candle": ("candle.toml", 256, False),
    "bert": ("bert.toml", 16, False),
    "ncf": ("ncf.toml", 128, True),
    "resnet50": ("resnet50.toml", 128, False),
    "vgg": ("vgg16.toml", 64, False),
}

# The fabrics (spec §2.3): label, and how dedicated.py builds each.
FABRICS = {
    "topoopt": "TopoOpt",
    "ideal": "Ideal Switch",
    "fattree": "Fat-tree (same cost)",
    "expander": "Expander",
    "ocs_fw": "OCS-reconfig (FW)",
    "ocs_nofw": "OCS-reconfig (noFW)",
    "sip_ml": "SiP-ML",
}
# The optical baselines (spec §2.3): every circuit, rewired during the run.
OPTICAL = {"ocs_fw": "ocs_reconfig", "ocs_nofw": "ocs_reconfig_nofw", "sip_ml": "sip_ml"}


def parse_args(description):
    p = Parser(description=description)  # noqa: F405
    p.add_argument("--quick", action="store_true", help="reduced instances (seconds; what ctest runs)")
    add_run_options(p, "papers-topoopt")  # noqa: F405
    return p


def parse(p, outputs):
    return parse_checked(p, outputs)  # noqa: F405


def model_overrides(model, servers):
    """The model at the paper's batch per GPU on servers x 4 GPUs, every GPU a data-parallel replica."""
    path, batch, expert = MODELS[model]
    gpus = servers * GPUS_PER_SERVER
    return {"workload.model": os.path.normpath(os.path.join(MODELS_DIR, path)), "workload.data_parallel": gpus,
            "workload.expert_parallel": gpus if expert else 1, "workload.minibatch": gpus * batch}


def fabric_overrides(fabric, servers, degree, gbps, fat_tree_gbps=None, seed=1):
    """topology.* and the link speed of one fabric for servers x degree x gbps (spec §2.3)."""
    if fabric in ("topoopt", "expander"):
        return {"topology.kind": "topoopt", "topology.servers": servers, "topology.degree": degree,
                "topology.construction": "job" if fabric == "topoopt" else "expander",
                "topology.expander_seed": seed, "network.link_gbps": gbps}
    if fabric in OPTICAL:  # (their own reconfiguration latency: 10 ms, SiP-ML 25 us)
        return {"topology.kind": "topoopt", "topology.servers": servers, "topology.degree": degree,
                "topology.construction": OPTICAL[fabric], "network.link_gbps": gbps}
    # The switched baselines: one NIC per server (its 4 GPUs behind it).
    o = {"topology.gpu_servers": False, "topology.gpus_per_nic": GPUS_PER_SERVER, "topology.endpoints": servers,
         "routing.algorithm": "ecmp"}
    if fabric == "ideal":  # one link of d x B per server
        o.update({"topology.kind": "ideal_switch", "network.link_gbps": degree * gbps})
    else:  # a full-bisection fat tree of k-port switches, every link the cost-equivalent speed
        k = 2
        while k ** 3 // 4 < servers:
            k += 2
        o.update({"topology.kind": "fat_tree", "topology.radix": k, "network.link_gbps": fat_tree_gbps})
    return o


def link_metrics(h5):
    """Bandwidth tax (bytes sent by hosts / bytes they originated) and forwarded share, from /links."""
    import h5py
    import numpy as np
    with h5py.File(h5, "r") as f:
        L = f["links"]
        kinds = f["nodes/kind"][()]
        src = L["src"][()]
        orig, fwd = L["originated_bytes"][()].astype(float), L["forwarded_bytes"][()].astype(float)
        names = L.attrs["class_names"]
        names = (names.decode() if isinstance(names, bytes) else names).split(",")
        between = L["class"][()] != names.index("intra_server")
        # Hosts: endpoints and the server nodes GPUs sit behind (links out of them that leave the server).
        host_src = np.zeros(len(src), dtype=bool)
        intra = ~between
        servers = set(int(s) for s in src[intra]) | set(int(s) for s in L["dst"][()][intra])
        for i, s in enumerate(src):
            host_src[i] = kinds[s] == 0 or int(s) in servers
        sel = host_src & between
        o, w = orig[sel].sum(), fwd[sel].sum()
        return {"bandwidth_tax": (o + w) / o if o > 0 else float("nan"),
                "forwarded_gb": float(fwd[between].sum()) / 1e9}
