#!/usr/bin/env bash
# METIS must cut fewer links than the block partitioner for a configuration
# (fabricsim info --ranks N --json), and never cut a link below the floor.
set -eu
exe=$1 config=$2 ranks=$3
"$exe" info "$config" --ranks "$ranks" --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["partitions"]
m, b = p["metis"]["edge_cut"], p["block"]["edge_cut"]
look = p["metis"]["lookahead_ns"]
print("metis cuts %d links, block %d, lookahead %s ns" % (m, b, look))
sys.exit(0 if m < b and (look is None or look > 0) else 1)
'
