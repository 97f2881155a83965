#!/usr/bin/env python3
"""Writes the broken Chakra traces of the bad-input corpus
(tests/app/bad_inputs/q_chakra_*.et, committed; rerun this after changing
it): protobuf's wire format by hand (varints and length-delimited fields,
the field numbers of src/app/chakra/et_def.proto), so each file is broken in
exactly one way.
  make_bad_chakra.py CORPUS_DIR
"""
import os
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 0:
        return key + varint(payload)
    return key + varint(len(payload)) + payload


def attr(name, kind, value):
    # kind: "int64" (field 9), "int32" (7), "string" (29)
    body = field(1, 2, name.encode())
    if kind == "int64":
        body += field(9, 0, value)
    elif kind == "int32":
        body += field(7, 0, value)
    else:
        body += field(29, 2, value.encode())
    return field(10, 2, body)


def node(nid, ntype, attrs=(), deps=(), duration=0, name=None):
    name = name or f"node{nid}"
    body = field(1, 0, nid) + field(2, 2, name if isinstance(name, bytes) else name.encode()) + field(3, 0, ntype)
    if deps:
        body += field(5, 2, b"".join(varint(d) for d in deps))
    if duration:
        body += field(7, 0, duration)
    for a in attrs:
        body += attr(*a)
    return body


def record(body):
    return varint(len(body)) + body


META = record(field(1, 2, b"0.0.4"))
COMP, SEND, RECV, COLL = 4, 5, 6, 7


def write(d, name, ranks):
    for r, data in enumerate(ranks):
        if data is not None:
            with open(os.path.join(d, f"{name}.{r}.et"), "wb") as f:
                f.write(data)


def allreduce(nid=0):
    return record(node(nid, COLL, [("comm_type", "int64", 0), ("comm_size", "int64", 1 << 20)]))


def main():
    d = sys.argv[1]
    ok = META + allreduce()
    # A record announcing more bytes than the file has left.
    write(d, "q_chakra_truncated", [ok, META + record(node(0, COMP, duration=5))[:-3]])
    # Bytes that are no Node: a field of wire type 7 (none exists).
    write(d, "q_chakra_corrupt", [ok, META + record(b"\x0f\x01\x02")])
    # Ranks 0 and 2, no 1.
    write(d, "q_chakra_missing_rank", [ok, None, ok])
    write(d, "q_chakra_node_type", [ok, META + record(node(0, 12))])
    write(d, "q_chakra_attribute", [ok, META + allreduce()[:0] +
                                    record(node(0, COLL, [("comm_type", "int64", 0), ("comm_size", "int64", 64),
                                                          ("comm_bogus", "int64", 1)]))])
    # An attribute given twice, another between them.
    write(d, "q_chakra_attribute_twice", [ok, META + record(node(0, COLL, [("comm_size", "int64", 64),
                                                                         ("comm_type", "int64", 0),
                                                                         ("comm_size", "int64", 128)]))])
    write(d, "q_chakra_attribute_type", [ok, META + record(node(0, COLL, [("comm_type", "int64", 0),
                                                                        ("comm_size", "string", "1MB")]))])
    write(d, "q_chakra_dependency", [ok, META + record(node(0, COMP, deps=[99], duration=5)) + allreduce(1)])
    write(d, "q_chakra_cycle", [ok, META + record(node(0, COMP, deps=[2], duration=5)) +
                                record(node(2, COMP, deps=[0], duration=5)) + allreduce(1)])
    write(d, "q_chakra_unmatched", [META + record(node(0, SEND, [("comm_dst", "int32", 1), ("comm_size", "int64", 64)])),
                                    META + record(node(0, COMP, duration=1))])
    write(d, "q_chakra_empty", [ok, b""])
    # A node name that is not UTF-8 (proto3 strings must be): libprotobuf logged its own
    # "[libprotobuf ERROR ...]" line on stderr beside the error (found by mutating .et files).
    write(d, "q_chakra_utf8", [ok, META + record(node(0, COMP, duration=5, name=b"conv\xff1"))])
    # pg_name naming no group of the communicator-group file (q_chakra_group.json).
    grouped = META + record(node(0, COLL, [("comm_type", "int64", 0), ("comm_size", "int64", 64),
                                           ("pg_name", "string", "dp")]))
    write(d, "q_chakra_group", [grouped, grouped])
    # A valid trace whose all-reduce the configured algorithm cannot run (streamed: refused by its pre-pass).
    computed = META + record(node(0, COMP, duration=5)) + allreduce(1)
    write(d, "q_chakra_stream_algorithm", [computed, computed])
    with open(os.path.join(d, "q_chakra_group.json"), "w") as f:
        f.write('{"tp": [0, 1]}\n')


if __name__ == "__main__":
    main()
