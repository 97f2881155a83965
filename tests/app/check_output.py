#!/usr/bin/python3
"""Checks a fabricsim output file against conservation laws and its own config.

usage: check_output.py RUN.h5 EXPECTED_RANKS
"""
import sys
import tomllib

import h5py
import numpy as np


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    path, ranks = sys.argv[1], int(sys.argv[2])
    with h5py.File(path, "r") as f:
        meta = f["meta"].attrs
        summ = f["summary"].attrs
        if int(meta["ranks"]) != ranks:
            fail(f"/meta ranks {meta['ranks']} != {ranks}")
        cfg = tomllib.loads(meta["config"].decode() if isinstance(meta["config"], bytes) else meta["config"])
        for section in ("topology", "cost", "network", "routing", "workload", "engine", "output"):
            if section not in cfg:
                fail(f"resolved config lacks [{section}]")
        links = f["links"]
        tx_packets = links["tx_packets"][:]
        tx_bytes = links["tx_bytes"][:]
        flows = f["flows"]
        payload = int(flows["bytes"][:].sum())
        # Conservation: every message delivered, every byte and packet arrived.
        if int(summ["bytes_delivered"]) != payload:
            fail(f"bytes_delivered {summ['bytes_delivered']} != sum of flow bytes {payload}")
        if int(summ["packets_delivered"]) != int(summ["packets_injected"]):
            fail("packets injected != delivered")
        if int(summ["packets_dropped"]) != 0:
            fail("packets dropped in a lossless network")
        # (The flow model counts a flow split over several links, sprayed or
        # over parallel circuits, as its share of the packets on each, rounded
        # per link: within half a packet per link that carried any.)
        hop_slack = 0.5 * int(np.count_nonzero(tx_packets)) if cfg["network"].get("model") == "flow" else 0
        if abs(int(summ["packet_hops"]) - int(tx_packets.sum())) > hop_slack:
            fail(f"packet_hops {summ['packet_hops']} != sum of tx_packets {tx_packets.sum()}")
        if np.any(flows["end_ns"][:] < flows["start_ns"][:]):
            fail("a flow ends before it starts")
        # Every packet leaves its source NIC over a host link exactly once
        # (where endpoints also relay others' packets: at least once).
        cls = links["class"][:]
        src = links["src"][:]
        kinds = f["nodes"]["kind"][:]
        from_endpoint = kinds[src] == 0
        relaying = cfg["topology"]["kind"] in ("torus", "hammingmesh", "hyperx", "topoopt")
        header = cfg["network"]["header_bytes"]
        wire = payload + header * int(summ["packets_injected"])
        sent = int(tx_packets[from_endpoint].sum())
        if sent < int(summ["packets_injected"]) or (not relaying and sent != int(summ["packets_injected"])):
            fail(f"packets leaving endpoints {sent} vs packets injected {summ['packets_injected']}")
        # Bytes on the wire: payload plus one header per packet, per injection.
        if not relaying and int(tx_bytes[from_endpoint].sum()) != wire:
            fail(f"wire bytes leaving endpoints {tx_bytes[from_endpoint].sum()} != {wire}")
        # Originated and forwarded bytes (issue 32) split tx_bytes, and every
        # packet's first hop, out of its source endpoint, is originated: the
        # endpoints' originated bytes are the wire bytes injected, whether or
        # not endpoints also relay (the flow model rounds each link's
        # integrals: within a byte per link).
        model = cfg["network"].get("model", "packet")
        if model in ("packet", "flow") and "originated_bytes" in links:
            orig = links["originated_bytes"][:].astype(np.int64)
            fwd = links["forwarded_bytes"][:].astype(np.int64)
            slack = 0 if model == "packet" else 1
            if np.any(np.abs(orig + fwd - tx_bytes.astype(np.int64)) > slack):
                fail("originated + forwarded bytes != tx_bytes on some link")
            first = int(orig[from_endpoint].sum())
            # (The flow model also ends each flow on a whole picosecond: its
            # integral may exceed its bytes by up to 1 ps at the link's rate.)
            over = 0.0 if model == "packet" else float(
                (links["flows"][:][from_endpoint] * links["bandwidth_gbps"][:][from_endpoint]).sum()) / 8000.0
            if abs(first - wire) > slack * int(from_endpoint.sum()) + over:
                fail(f"originated bytes leaving endpoints {first} != the wire bytes injected {wire}")
        # Every injected byte crosses at least one link.
        if int(tx_bytes.sum()) < wire:
            fail(f"bytes on all links {tx_bytes.sum()} below the wire bytes injected {wire}")
        # /topology: counts agree with /nodes and /links; the cost follows the
        # configured prices (per plane counts, cost.planes planes).
        topo = f["topology"].attrs
        if int(topo["endpoints"]) != int(np.sum(kinds == 0)) or int(topo["switches"]) != int(np.sum(kinds == 1)):
            fail("/topology endpoints/switches disagree with /nodes")
        cables = sum(int(topo[f"cables_{c}"]) for c in ("host", "fabric", "intra_server", "board", "global"))
        if 2 * cables != len(cls):
            fail(f"/topology counts {cables} cables for {len(cls)} directed links")
        c = cfg["cost"]
        cost = c["planes"] * (int(topo["physical_switches"]) * c["switch_usd"] +
                              int(topo["cable_type_dac"]) * c["dac_usd"] + int(topo["cable_type_aoc"]) * c["aoc_usd"])
        if abs(float(topo["cost_usd"]) - cost) > 1e-6 * max(cost, 1.0):
            fail(f"/topology cost_usd {topo['cost_usd']} != {cost}")
        # Utilization is busy time over simulated time, never above 1.
        util = links["utilization"][:]
        if np.any(util > 1.0 + 1e-9) or np.any(util < 0):
            fail("utilization outside [0, 1]")
        busy = links["busy_ns"][:]
        bw = links["bandwidth_gbps"][:]
        # busy time = serialization of the bytes sent (each packet rounded up to 1 ps)
        expect_busy = tx_bytes * 8.0 / bw
        if np.any(np.abs(busy - expect_busy) > tx_packets * 1e-3 + 1e-6):
            fail("busy_ns does not match tx_bytes / bandwidth")
        ts = links["timeseries"]["tx_bytes"]
        if ts.shape[0] != len(tx_bytes) or not np.array_equal(ts[:].sum(axis=1), tx_bytes):
            fail("time series tx_bytes do not add up to tx_bytes")
        if "interval_ns" not in ts.attrs:
            fail("time series lack interval_ns")
        if np.any(cls > 4):
            fail("bad link class")
    print(f"check_output: {path} OK ({len(tx_bytes)} links, {payload} payload bytes, {ranks} ranks)")


if __name__ == "__main__":
    main()
