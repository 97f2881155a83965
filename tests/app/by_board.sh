#!/usr/bin/env bash
# Placement by_board on a HammingMesh (2x2 boards, 4x4 of them): a ring of
# one board's size runs along board links only (every message between board
# neighbours, one hop: fewer packet-hops than the same ring in id order,
# whose 1 -> 2 and 3 -> 0 steps cross the board diagonally); a 16-rank ring leaves its
# board only between boards, 4 of its 16 ring edges.  On a fat tree by_board
# is refused naming the key.  Placement grid makes multi_ring's logical
# grid the physical one.
#   by_board.sh EXE PYTHON
set -eu
exe=$1 python=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
hx=(--set topology.kind=hammingmesh --set topology.board_a=2 --set topology.board_b=2 --set topology.x=4
    --set topology.y=4 --set topology.radix=16 --set network.vcs=3 --set routing.algorithm=adaptive
    --set workload.kind=collective --set 'workload.sizes=[1048576]')
"$exe" run "${hx[@]}" --set workload.ranks=4 --set workload.placement=by_board -o "$dir/b4.h5" > /dev/null
"$exe" run "${hx[@]}" --set workload.ranks=4 --set workload.placement=linear -o "$dir/l4.h5" > /dev/null
"$exe" run "${hx[@]}" --set workload.ranks=16 --set workload.placement=by_board -o "$dir/b16.h5" > /dev/null
"$python" - "$dir" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
def load(name):
    f = h5py.File(f"{d}/{name}.h5", "r")
    L = f["links"]
    names = L.attrs["class_names"]
    names = (names.decode() if isinstance(names, bytes) else names).split(",")
    board = {(int(s), int(t)) for s, t, c in zip(L["src"][:], L["dst"][:], L["class"][:]) if names[c] == "board"}
    fl = f["flows"]
    pairs = list(zip(fl["src"][:].tolist(), fl["dst"][:].tolist()))
    return board, pairs, int(f["summary"].attrs["packet_hops"])
board, pairs, hops_board = load("b4")
assert all(p in board for p in pairs), [p for p in pairs if p not in board]
_, lin, hops_linear = load("l4")
assert any(p not in board for p in lin)  # the id-order ring crosses a diagonal
assert hops_board < hops_linear, (hops_board, hops_linear)
_, p16, _ = load("b16")
edges = set(p16)
off = [p for p in edges if p not in board]
assert len(edges) == 16 and len(off) == 4, (len(edges), off)
print(f"PASS: by_board ring on board links ({hops_board} packet-hops vs {hops_linear} in id order)")
PY
# Placement grid: ranks row-major over the accelerators' global coordinates,
# so multi_ring's logical 8 x 8 torus is the physical grid: every message goes
# between grid neighbours (wrap-around included); in id order it does not.
for pl in grid linear; do
  "$exe" run "${hx[@]}" --set workload.placement=$pl --set workload.algorithm=multi_ring --set workload.grid_rows=8 \
    --set 'workload.sizes=[65536]' -o "$dir/g_$pl.h5" > /dev/null
done
"$python" - "$dir" <<'PY'
import sys, h5py
d = sys.argv[1]
a = b = 2; x = y = 4
def glob(e):
    j, i, X, Y = e % a, (e // a) % b, (e // (a * b)) % x, e // (a * b * x)
    return X * a + j, Y * b + i
def neighbours(s, t):
    (sx, sy), (tx, ty) = glob(s), glob(t)
    dx, dy = (tx - sx) % (a * x), (ty - sy) % (b * y)
    return (dy == 0 and dx in (1, a * x - 1)) or (dx == 0 and dy in (1, b * y - 1))
def pairs(name):
    fl = h5py.File(f"{d}/{name}.h5", "r")["flows"]
    return set(zip(fl["src"][:].tolist(), fl["dst"][:].tolist()))
g, l = pairs("g_grid"), pairs("g_linear")
assert g and all(neighbours(s, t) for s, t in g), [p for p in g if not neighbours(*p)][:5]
assert any(not neighbours(s, t) for s, t in l)
print(f"PASS: grid placement: all {len(g)} multi_ring pairs are grid neighbours")
PY
if "$exe" run --set workload.kind=collective --set workload.placement=by_board -o "$dir/bad.h5" 2> "$dir/err.txt"; then
  echo "FAIL: by_board accepted on a fat tree"; exit 1
fi
cat "$dir/err.txt"
grep -q "workload.placement: by_board places ranks board by board on a hammingmesh topology" "$dir/err.txt"
[ ! -e "$dir/bad.h5" ] || { echo "FAIL: output file left"; exit 1; }
echo PASS
