#!/usr/bin/env python3
"""The result fingerprint of a fabricsim output file: a SHA-256 over every
table that holds simulated results (/links, /flows, /collectives,
/iterations, /jobs, /timeline, /nodes without its rank column) and the
/summary counters that depend on neither the rank count nor the build.
Wall times, /meta and the partition (/nodes/rank) are left out, so a run on
any rank count gives the same fingerprint, and a change of results gives
another one.

    fingerprint.py RUN.h5     prints the hex digest
"""
import hashlib
import sys

import h5py
import numpy as np

GROUPS = ("links", "flows", "nodes", "collectives", "iterations", "jobs", "timeline")
# /collectives/synthesis_seconds is a wall time (algorithm "tacos").
# /links/originated_bytes and /links/forwarded_bytes (issue 32) split
# /links/tx_bytes by where each byte was sent; app_forwarded_bytes checks
# them in every model, and leaving them out kept every earlier fingerprint.
# /links/carries_data (issue 32) is the topology's, as /links/src is.
# /jobs/p99_iteration_ns (issue 32) is a statistic of /iterations/time_ns,
# which is fingerprinted.
SKIP = {"/nodes/rank", "/collectives/synthesis_seconds", "/links/originated_bytes", "/links/forwarded_bytes",
        "/links/carries_data", "/jobs/p99_iteration_ns"}
# Columns that count what failures strand ([[failures]], issue 28): all zero
# on a run without failures, where they are left out, so that adding them
# did not change the fingerprint of any run whose results did not change.
ZERO_SKIP = {"/links/stranded_packets", "/links/stranded_bytes",
             # a cluster queue's scheduler (issue 31): empty or zero without one
             "/jobs/stage", "/jobs/reserved", "/jobs/virtual_leaves", "/jobs/virtual_spines",
             "/jobs/refused_gpus", "/jobs/refused_network", "/jobs/deadline_ns", "/jobs/circuits_switched",
             # the flow model's flows per link (issue 31): zero in the packet model
             "/links/max_flows"}
# TACOS's own estimate (issue 30): NaN for every other algorithm, where it is
# left out for the same reason.
NAN_SKIP = {"/collectives/schedule_ns", "/jobs/scaling_factor"}
SUMMARY = ("sim_time_ns", "packets_injected", "packets_delivered", "bytes_delivered",
           "packet_hops", "messages_delivered")


def canonical(data):
    """Bytes of a dataset that do not depend on the file's storage layout."""
    a = np.asarray(data)
    if a.dtype.kind in "OSU":
        return "\x1f".join(x.decode() if isinstance(x, bytes) else str(x)
                           for x in a.ravel()).encode()
    if a.dtype.names:
        return b"".join(canonical(a[n]) for n in a.dtype.names)
    return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()


def all_zero(a):
    """No non-zero number, or no non-empty string."""
    a = np.asarray(a)
    if a.dtype.kind in "OSU":
        return not any(len(x) for x in a.ravel())
    return not np.any(a)


def fingerprint(path):
    h = hashlib.sha256()
    with h5py.File(path, "r") as f:
        names = []
        for g in GROUPS:
            if g in f:
                f[g].visititems(lambda n, o, g=g: names.append(f"/{g}/{n}") if isinstance(o, h5py.Dataset) else None)
        for name in sorted(names):
            if name in SKIP:
                continue
            d = f[name]
            if name in ZERO_SKIP and all_zero(d[()]):
                continue
            if name in NAN_SKIP and np.all(np.isnan(d[()])):
                continue
            h.update(f"{name}:{d.dtype.str}:{d.shape}\n".encode())
            h.update(canonical(d[()]))
        for k in SUMMARY:
            h.update(f"summary/{k}={int(f['summary'].attrs[k])}\n".encode())
    return h.hexdigest()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fingerprint.py RUN.h5")
    print(fingerprint(sys.argv[1]))
