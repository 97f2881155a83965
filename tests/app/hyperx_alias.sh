#!/usr/bin/env bash
# topology.kind = "hyperx" in its default reading (hyperx_model = "hx1mesh")
# is the HammingMesh of 1x1 boards: the same nodes, links, cables, cost,
# diameter and routing as kind = "hammingmesh" with board_a = board_b = 1,
# and traffic and collectives (placements by_board and grid too) run on it
# with identical results.  (The switch-based reading,
# hyperx_model = "routers", is tested in tests/net/test_hyperx.cpp.)
set -eu
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--set topology.x=6 --set topology.y=5 --set topology.radix=16 --set network.vcs=3
        --set workload.pattern=alltoall --set workload.messages=4 --set workload.message_bytes=9000)
"$exe" info --set topology.kind=hyperx "${common[@]}" > "$dir/a.txt"
"$exe" info --set topology.kind=hammingmesh --set topology.board_a=1 --set topology.board_b=1 "${common[@]}" > "$dir/b.txt"
grep -q "^2D HyperX 6x5" "$dir/a.txt" || { cat "$dir/a.txt"; echo "FAIL: not described as a HyperX"; exit 1; }
for key in nodes links cables cost bisection routing diameter; do
  a=$(grep "^  $key " "$dir/a.txt"); b=$(grep "^  $key " "$dir/b.txt")
  [ "$a" = "$b" ] || { echo "FAIL: $key: '$a' vs '$b'"; exit 1; }
done
"$exe" run --set topology.kind=hyperx "${common[@]}" -o "$dir/a.h5" > /dev/null
"$exe" run --set topology.kind=hammingmesh --set topology.board_a=1 --set topology.board_b=1 "${common[@]}" -o "$dir/b.h5" > /dev/null
for g in /links /flows; do h5diff -q "$dir/a.h5" "$dir/b.h5" "$g" "$g" > /dev/null || { echo "FAIL: $g differs"; exit 1; }; done
# The placements of a HammingMesh (by_board, grid) on the hyperx reading too:
# it refused them (issue 27), though it is the same fabric.
for placement in by_board grid; do
  job=(--set workload.kind=collective --set workload.placement="$placement" --set workload.ranks=12
       --set workload.sizes=[65536])
  "$exe" run --set topology.kind=hyperx "${common[@]}" "${job[@]}" -o "$dir/a.h5" > /dev/null ||
    { echo "FAIL: hyperx refuses placement $placement"; exit 1; }
  "$exe" run --set topology.kind=hammingmesh --set topology.board_a=1 --set topology.board_b=1 "${common[@]}" \
    "${job[@]}" -o "$dir/b.h5" > /dev/null
  for g in /links /flows; do
    h5diff -q "$dir/a.h5" "$dir/b.h5" "$g" "$g" > /dev/null || { echo "FAIL: placement $placement: $g differs"; exit 1; }
  done
done
echo "PASS: hyperx = hammingmesh with 1x1 boards"
