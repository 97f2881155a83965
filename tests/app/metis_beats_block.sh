#!/usr/bin/env bash
# METIS must cut fewer links than the block partitioner for a configuration
# (fabricsim info --ranks N --json), and never cut a link below the floor.
# Exception: where block's cut is already optimal (a torus numbered row by
# row: its strips cut 4 x side links, the least possible for 4 parts), METIS
# must come within 10% of it (measured: 132 vs 128 and 550 vs 512).  Same
# for TopoOpt's circulant rings, numbered along the +1 ring: block's arcs cut
# each ring of jump p only p times per boundary (measured, 4 ranks: 188 vs
# 188, 408 vs 400, 1195 vs 1204).  And for the Dragonfly, whose groups are
# kept whole where that balances: both then split the same few groups
# (measured, 4 ranks: 436 vs 418 on 8 groups, 5916 vs 5916 on 30).
set -eu
exe=$1 config=$2 ranks=$3
"$exe" info "$config" --ranks "$ranks" --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["partitions"]
m, b = p["metis"]["edge_cut"], p["block"]["edge_cut"]
look = p["metis"]["lookahead_ns"]
print("metis cuts %d links, block %d, lookahead %s ns" % (m, b, look))
optimal_block = d["topology"] in ("torus", "topoopt", "dragonfly")
good = m < b or (optimal_block and m <= 1.10 * b)
sys.exit(0 if good and (look is None or look > 0) else 1)
'
