#!/usr/bin/env bash
# Alltoall (shift schedule) and ring traffic on one input of inputs/ (the
# direct topologies at 1,024 endpoints, TopoOpt at 128): the run must finish
# (no deadlock: every message delivered) and the output must pass the
# conservation checks of check_output.py (bytes and packets in = out, none
# dropped, sum of tx_packets = packet_hops).  Small buffers make blocking on
# credits common, which is where a routing with a dependency cycle would
# deadlock.
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
  "$python" "$src/tests/app/check_output.py" "$dir/$pattern.h5" 1
done
echo "PASS: $(basename "$input")"
