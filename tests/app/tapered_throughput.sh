#!/usr/bin/env bash
# The small tapered fat trees of the HammingMesh paper deliver what their taper
# allows: on each input (a bisection of 1 MiB messages, adaptive routing) the
# packet run's accepted throughput reaches at least 95% of the fluid bound
# that `fabricsim info --json` computes, and neither figure of the run exceeds
# the bound.
#   accepted: payload into the endpoints per unit time while the flows between
#   leaves are all still sending (from 5 us, once the leaves' queues have
#   filled, until the first of them completes), over endpoints x link rate;
#   makespan: all payload over (last completion - first post), what the run
#   prints; it also pays for the drain of the queues at the end and is only
#   reported here (docs/performance.md, "Tapered fat trees").
#   tapered_throughput.sh EXE PYTHON SOURCE_DIR
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for name in fat_tree_1k_tapered_50 fat_tree_1k_tapered_75; do
  cfg="$src/inputs/$name.toml"
  "$exe" info "$cfg" --json > "$dir/$name.json"
  "$exe" run "$cfg" -o "$dir/$name.h5" > /dev/null
  "$python" - "$dir/$name.json" "$dir/$name.h5" "$name" <<'PY' || fail=1
import json, sys, tomllib
import h5py, numpy as np
info, path, name = sys.argv[1:4]
bound = json.load(open(info))["fluid"]["throughput_bound"]
f = h5py.File(path, "r")
ts = f["links/timeseries/tx_bytes"]
iv = float(ts.attrs["interval_ns"])
src, dst = f["links/src"][:], f["links/dst"][:]
kind = f["nodes/kind"][:]
s = f["summary"].attrs
n, gbps = int(s["endpoints"]), float(s["injection_gbps"])
net = tomllib.loads(f["meta"].attrs["config"].decode())["network"]  # the resolved configuration
packet, header = net["packet_bytes"], net["header_bytes"]
leaf = np.zeros(n, dtype=np.int64)
up = kind[src] == 0
leaf[src[up]] = dst[up]  # the switch each endpoint's cable goes to
fl = f["flows"]
fs, fd, end, start = fl["src"][:], fl["dst"][:], fl["end_ns"][:], fl["start_ns"][:]
cross = leaf[fs] != leaf[fd]
k0, k1 = int(np.ceil(5000.0 / iv)), int(end[cross].min() // iv)
assert k1 > k0 + 10, f"{name}: steady window too short ({k0}..{k1})"
wire = float(ts[:, k0:k1][kind[dst] == 0].sum())
accepted = wire * (packet - header) / packet * 8 / (n * gbps * (k1 - k0) * iv)
makespan = float(s["bytes_delivered"]) * 8 / (n * gbps * (end.max() - start.min()))
print(f"{name}: fluid bound {bound:.4f}, accepted {accepted:.4f} ({accepted / bound:.1%}), "
      f"makespan {makespan:.4f} ({makespan / bound:.1%})")
# (The window counts a packet whose transmission starts in it: up to a packet
# per link more than the bound at its edges, well under 1%.)
ok = 0.95 * bound <= accepted <= 1.01 * bound and makespan <= bound * (1 + 1e-6)
if not ok:
    print(f"FAIL: {name}: accepted must lie in [0.95, 1.01] x the fluid bound, makespan at most the bound")
sys.exit(0 if ok else 1)
PY
done
exit $fail
