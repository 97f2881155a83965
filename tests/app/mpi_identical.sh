#!/usr/bin/env bash
# A partitioned run must give the same results as the sequential one:
# /links, /flows, /nodes (except the rank column) and the /summary delivery
# counters identical (h5diff), for the given rank count and partitioner.
#   mpi_identical.sh EXE MPIEXEC RANKS PARTITIONER CASE
set -eu
exe=$1 mpiexec=$2 ranks=$3 partitioner=$4 case=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
case $case in
  fat_tree) args=(--set topology.endpoints=48 --set topology.radix=8 --set workload.message_bytes=32768
                  --set routing.algorithm=spray --set network.vcs=2 --set workload.pattern=uniform --set workload.messages=2) ;;
  leaf_spine) args=(--set topology.kind=leaf_spine --set topology.leaves=4 --set topology.spines=2
                    --set topology.servers_per_leaf=2 --set topology.gpus_per_server=4 --set topology.radix=16
                    --set workload.message_bytes=32768 --set routing.algorithm=ecmp --set workload.pattern=alltoall
                    --set workload.messages=3) ;;
  torus) args=(--set topology.kind=torus --set 'topology.dims=[6,4]' --set topology.boards=true --set network.vcs=3
               --set routing.algorithm=adaptive --set workload.pattern=alltoall --set workload.messages=5
               --set workload.message_bytes=20000 --set network.buffer_bytes=16384) ;;
  hammingmesh) args=(--set topology.kind=hammingmesh --set topology.board_a=2 --set topology.board_b=2 --set topology.x=3
                     --set topology.y=2 --set topology.radix=16 --set network.vcs=3 --set routing.algorithm=adaptive
                     --set workload.pattern=uniform --set workload.messages=3 --set workload.message_bytes=20000) ;;
  hyperx_routers) args=(--set topology.kind=hyperx --set topology.hyperx_model=routers --set topology.x=4
                        --set topology.y=3 --set topology.concentration=2 --set topology.radix=16 --set network.vcs=2
                        --set routing.algorithm=adaptive --set workload.pattern=alltoall --set workload.messages=8
                        --set workload.message_bytes=20000 --set network.buffer_bytes=16384) ;;
  dragonfly) args=(--set topology.kind=dragonfly --set topology.a=4 --set topology.p=2 --set topology.h=2
                   --set topology.groups=5 --set network.vcs=3 --set routing.algorithm=ugal_local
                   --set workload.pattern=alltoall --set workload.messages=6 --set workload.message_bytes=20000) ;;
  topoopt) args=(--set topology.kind=topoopt --set topology.servers=16 --set topology.degree=3 --set network.vcs=4
                 --set routing.algorithm=adaptive --set workload.pattern=alltoall --set workload.messages=4
                 --set workload.message_bytes=20000) ;;
  topoopt_k) args=(--set topology.kind=topoopt --set topology.servers=16 --set topology.degree=3 --set network.vcs=6
                   --set routing.k_paths=3 --set workload.pattern=alltoall --set workload.messages=6
                   --set workload.message_bytes=20000) ;;
  collective) args=(--set topology.endpoints=24 --set topology.radix=8 --set workload.kind=collective
                    --set workload.ranks=16 --set workload.placement=random --set 'workload.sizes=[64000, 640000]'
                    --set workload.chunk_bytes=50000 --set workload.iterations=2 --set workload.warmup=1) ;;
  dnn) args=(--set topology.endpoints=24 --set topology.radix=8 --set workload.kind=dnn
             --set workload.model="$(cd "$(dirname "$0")" && pwd)/dnn_toy_model.toml" --set workload.data_parallel=2
             --set workload.pipeline_parallel=2 --set workload.tensor_parallel=2 --set workload.micro_batches=2
             --set workload.placement=random --set workload.iterations=2 --set output.timeline=true) ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
# The task-graph cases write their tables' rows in rounds of a few dozen rows
# (the writer moves rows to the rank that writes their block in rounds of
# 32 MiB; a test hook makes them tiny), the others in one round.  The
# sequential run writes its string columns (/nodes/name, /jobs), each row
# made as it is written, in pieces of one or two rows.
round_bytes= seq_round_bytes=
case $case in collective | dnn) round_bytes=2000 seq_round_bytes=40 ;; esac
FABRICSIM_TEST_WRITE_ROUND_BYTES=$seq_round_bytes "$exe" run "${args[@]}" --set output.interval_ns=500 -o "$dir/seq.h5" \
  > /dev/null
FABRICSIM_TEST_WRITE_ROUND_BYTES=$round_bytes "$mpiexec" -n "$ranks" "$exe" run "${args[@]}" --set output.interval_ns=500 \
  --set engine.partitioner="$partitioner" -o "$dir/par.h5" > "$dir/par.txt"
grep -q "$ranks ranks \[partitioned\]" "$dir/par.txt" || { cat "$dir/par.txt"; echo "FAIL: not a partitioned run"; exit 1; }
fail=0
groups="/links /flows /nodes/kind /nodes/level /nodes/name"
[ "$case" = collective ] && groups="$groups /collectives"
[ "$case" = dnn ] && groups="$groups /iterations /jobs /timeline"
# shellcheck disable=SC2086  # $groups is a list
bash "$(dirname "$0")/same_results.sh" "$dir/seq.h5" "$dir/par.h5" $groups || fail=1
# The rank column says which rank simulated each node: every rank has some.
used=$(/usr/bin/python3 -c "import h5py, numpy; print(len(numpy.unique(h5py.File('$dir/par.h5')['nodes']['rank'][:])))")
[ "$used" = "$ranks" ] || { echo "FAIL: nodes spread over $used ranks, expected $ranks"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: $case at $ranks ranks ($partitioner) identical to the sequential run"
exit $fail
