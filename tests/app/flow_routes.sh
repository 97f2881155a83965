#!/usr/bin/env bash
# network.model = "flow" and "analytic" on the direct topologies route as
# the packet model does (app::flow_paths: the route rules, TopoOpt's k
# shortest coin routes): with one route per message (dor, minimal,
# routing.k_paths > 1), the bytes on every link are the same in the packet
# and in the flow model, whatever the queues did (the flow model counts
# each message's wire bytes on each link of its route, within a byte of
# rounding).  The analytic model crosses the same links.  With adaptive
# (an even split in the flow model) the total bytes on all links agree
# (every legal route is shortest).
#   flow_routes.sh EXE PYTHON
set -eu
exe=$1 python=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--set workload.pattern=alltoall --set workload.messages=5 --set workload.message_bytes=9000
        --set output.interval_ns=0 --set network.vcs=8)
check() {  # name, then the configuration's --set options
  local name=$1
  shift
  for model in packet flow analytic; do
    "$exe" run "${common[@]}" "$@" --set network.model="$model" -o "$dir/$name.$model.h5" > "$dir/$name.$model.txt" ||
      { cat "$dir/$name.$model.txt"; echo "FAIL: $name $model"; exit 1; }
  done
  "$python" - "$dir/$name" "$name" "${SPLIT:-0}" <<'PY'
import sys, h5py, numpy as np
base, name, split = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
tx = {m: h5py.File(f"{base}.{m}.h5", "r")["links"]["tx_bytes"][:].astype(float) for m in ("packet", "flow", "analytic")}
p, f, a = tx["packet"], tx["flow"], tx["analytic"]
if split:
    assert abs(f.sum() - p.sum()) <= len(p) + 1e-9 * p.sum(), (name, f.sum(), p.sum())
else:
    bad = np.nonzero(np.abs(f - p) > 1.0 + 1e-9 * p)[0]
    assert len(bad) == 0, (name, "links", bad[:10], p[bad[:10]], f[bad[:10]])
    assert np.array_equal(a > 0, p > 0), (name, "analytic crosses other links")
print(f"{name}: {int((p > 0).sum())} links carry {p.sum():.0f} bytes in the packet model, flow model the same OK")
PY
}
check torus_dor --set topology.kind=torus --set topology.dims='[4,6]' --set topology.boards=false \
  --set routing.algorithm=dor
check hammingmesh_minimal --set topology.kind=hammingmesh --set topology.board_a=2 --set topology.board_b=2 \
  --set topology.x=3 --set topology.y=2 --set topology.radix=16 --set routing.algorithm=minimal
check topoopt_k3 --set topology.kind=topoopt --set topology.servers=16 --set topology.degree=3 \
  --set routing.k_paths=3 --set routing.algorithm=minimal
SPLIT=1 check torus_adaptive --set topology.kind=torus --set topology.dims='[4,6]' --set topology.boards=false \
  --set routing.algorithm=adaptive
echo "PASS: flow and analytic models route as the packet model"
