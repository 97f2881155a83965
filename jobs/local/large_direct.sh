#!/usr/bin/env bash
# The full-size direct fabrics (every inputs/*_large.toml: the 16k HammingMesh
# Hx1/Hx2/Hx4, Dragonfly and torus) on a workstation: an alltoall of ROUNDS
# shift rounds and a ring, each of BYTES-byte messages (the inputs' 8 KiB
# packets), on RANKS MPI ranks.  Prints per run: simulated time, run phase,
# events/s, packet-hops/s, peak memory per rank, and the conservation check
# (every injected packet and payload byte delivered, no message missing).
#   [RANKS=2] [ROUNDS=4] [BYTES=65536] jobs/local/large_direct.sh [INPUT.toml ...]
# FABRICSIM (the binary), MPIEXEC and PYTHON (one with h5py) override the defaults.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${FABRICSIM:-$src/build/src/fabricsim}
py=${PYTHON:-/usr/bin/python3}
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec)}
ranks=${RANKS:-2}
rounds=${ROUNDS:-4}
bytes=${BYTES:-65536}
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=("$src"/inputs/*_large.toml)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
for config in "${inputs[@]}"; do
  for pattern in alltoall ring; do
    name=$(basename "$config" .toml)
    out="$dir/$name.$pattern.h5"
    /usr/bin/time -f "%M" -o "$dir/rss" "$mpiexec" -n "$ranks" "$exe" run "$config" \
      --set workload.pattern="\"$pattern\"" --set workload.messages="$rounds" \
      --set workload.message_bytes="$bytes" --set output.interval_ns=0 -o "$out" > "$dir/log" 2>&1 || {
      echo "$name $pattern: FAILED"; tail -n 3 "$dir/log"; status=1; continue; }
    "$py" - "$out" "$name" "$pattern" "$ranks" <<'PY' || status=1
import sys, h5py
f = h5py.File(sys.argv[1], "r")
e, s = f["engine"].attrs, f["summary"].attrs
run = float(e["run_seconds"])
ok = (int(s["packets_delivered"]) == int(s["packets_injected"]) and
      int(s["bytes_delivered"]) == int(s["bytes_injected"]) and
      int(s["messages_delivered"]) == len(f["flows"]["bytes"]) and int(s["packets_dropped"]) == 0)
print(f"{sys.argv[2]} {sys.argv[3]} on {sys.argv[4]} ranks: {float(s['sim_time_ns']) / 1e3:.1f} us simulated, "
      f"run phase {run:.2f} s, {float(s['events']) / run / 1e6:.2f} M events/s, "
      f"{float(s['packet_hops']) / run / 1e6:.2f} M packet-hops/s, "
      f"peak {max(e['peak_memory_bytes_per_rank']) / 2**20:.0f} MiB per rank, "
      f"conservation {'ok' if ok else 'VIOLATED'}", flush=True)
sys.exit(0 if ok else 1)
PY
  done
done
exit $status
