#!/usr/bin/env bash
# Alltoall (shift schedule) and ring traffic on one input of inputs/ (the
# direct topologies at 1,024 endpoints, TopoOpt at 128): the run must finish
# (no deadlock: every message delivered) and the output must pass the
# conservation checks of check_output.py (bytes and packets in = out, none
# dropped, sum of tx_packets = packet_hops).  Small buffers make blocking on
# credits common, which is where a routing with a dependency cycle would
# deadlock.  The printed share of injection must not exceed 100%.
#   direct_inputs_traffic.sh EXE PYTHON SRC INPUT ROUNDS
set -eu
exe=$1 python=$2 src=$3 input=$4 rounds=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for pattern in alltoall ring; do
  "$exe" run "$input" --set workload.pattern="$pattern" --set workload.messages="$rounds" \
    --set workload.message_bytes=12000 --set network.packet_bytes=4096 --set network.buffer_bytes=16384 \
    --set output.interval_ns=2000 -o "$dir/$pattern.h5" > "$dir/$pattern.txt" || { cat "$dir/$pattern.txt"; exit 1; }
  grep -E "routing|delivered|throughput" "$dir/$pattern.txt"
  # The share counts every injection link of an endpoint (a HammingMesh or
  # torus accelerator has four), so it can never exceed 100%.
  share=$(sed -n 's/^  throughput  \([0-9.]*\)% of injection.*/\1/p' "$dir/$pattern.txt")
  [ -n "$share" ] || { echo "FAIL: no throughput line"; exit 1; }
  awk -v s="$share" 'BEGIN { exit !(s <= 100.0) }' || { echo "FAIL: throughput $share% of injection exceeds 100%"; exit 1; }
  "$python" "$src/tests/app/check_output.py" "$dir/$pattern.h5" 1
done
echo "PASS: $(basename "$input")"
