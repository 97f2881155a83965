#!/usr/bin/env bash
# Every model of inputs/models/ at its paper's layout (the "# layout:" line of
# its file) on the 1,024-endpoint nonblocking fat tree and the 1,024-
# accelerator Hx2Mesh (placement by_board), and the LLMs also on the 2048-GPU
# leaf-spine Clos; one iteration each, one rank.  Prints one row per run:
# iteration time, exposed communication, run-phase seconds, events/s,
# packet-hops/s and peak memory (the figures of docs/performance.md).
#   [TOPOLOGIES="fat_tree hammingmesh leaf_spine"] jobs/local/dnn_models.sh [MICRO_BATCHES] [MODEL ...]
# LAUNCH (e.g. "mpiexec -n 4" for 4 ranks each), FABRICSIM (the binary) and
# PYTHON (one with h5py) override the defaults; NETWORK_MODEL=flow (or
# analytic) runs the flow-level model (one rank), and MICRO_BATCHES "paper"
# the LLMs' papers' micro-batch counts (their "# layout:" lines).
# The LLMs (one sample per micro-batch in their papers, hundreds of micro-
# batches) run MICRO_BATCHES micro-batches (default 8) to keep a run within
# minutes on a workstation core; the other models run their papers' batches.
# Layouts beyond 1,024 endpoints (GPT-3 MoE, 1,536) get a fat tree and an
# Hx2Mesh of that size.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${FABRICSIM:-$src/build/src/fabricsim}
py=${PYTHON:-/usr/bin/python3}
mb=${1:-8}
shift || true
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(resnet152 cosmoflow dlrm gpt3 gpt3_moe resnet50 vgg16 bert candle ncf topoopt_dlrm
                                   bloom gpt3_175b llama2_70b)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '%-12s %-11s %5s %-16s %5s %12s %12s %8s %10s %10s %9s %5s %12s %8s %8s\n' model topology eps "D x P x O (E)" M \
  "iter (ms)" "exposed (ms)" "run (s)" "events/s" "hops/s" "peak mem" ranks "compute (ms)" "wall (s)" "model"
for m in "${models[@]}"; do
  file=$src/inputs/models/$m.toml
  layout=$(grep '^# layout:' "$file" | sed 's/^# layout: *//')
  get() { echo "$layout" | tr ',' '\n' | grep "$1" | sed 's/.*= *//'; }
  D=$(get data_parallel) P=$(get pipeline_parallel) O=$(get tensor_parallel) E=$(get expert_parallel)
  M=$(get micro_batches)
  n=$((D * P * O))
  args=(--set workload.kind=\"dnn\" --set workload.model=\""$file"\" --set workload.data_parallel="$D"
        --set workload.pipeline_parallel="$P" --set workload.tensor_parallel="$O" --set workload.expert_parallel="$E"
        --set output.interval_ns=0 --set output.flows=false --set output.progress=\"never\")
  llm=0
  case $m in gpt3|gpt3_moe|gpt3_175b|bloom|llama2_70b) llm=1 ;; esac
  [ $llm = 1 ] && [ "$mb" != paper ] && M=$mb
  args+=(--set workload.micro_batches="$M" --set network.model=\"${NETWORK_MODEL:-packet}\")
  [ $llm = 1 ] && args+=(--set workload.minibatch=$((D * M)))
  ft=(--set topology.endpoints=$((n > 1024 ? n : 1024)))
  hx=(--set workload.placement=\"by_board\" --set topology.y=$(((n + 63) / 64 > 16 ? (n + 63) / 64 : 16)))
  runs=("fat_tree:$src/inputs/fat_tree_1k.toml:${ft[*]}" "hammingmesh:$src/inputs/hammingmesh_hx2_small.toml:${hx[*]}")
  [ $llm = 1 ] && runs+=("leaf_spine:$src/inputs/leaf_spine_2048.toml:")
  for r in "${runs[@]}"; do
    IFS=: read -r topo config extra <<< "$r"
    case " ${TOPOLOGIES:-fat_tree hammingmesh leaf_spine} " in *" $topo "*) ;; *) continue ;; esac
    # shellcheck disable=SC2086
    ${LAUNCH:-} "$exe" run "$config" "${args[@]}" $extra -o "$dir/run.h5" > "$dir/out.txt"
    "$py" - "$dir/run.h5" "$m" "$topo" "$n" "$D x $P x $O ($E)" "$M" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
it, e, s = f["iterations"], f["engine"].attrs, f["summary"].attrs
run = float(e["run_seconds"])
mem = max(e["peak_memory_bytes_per_rank"]) / 2**20
print(f"{sys.argv[2]:<12} {sys.argv[3]:<11} {sys.argv[4]:>5} {sys.argv[5]:<16} {sys.argv[6]:>5} {it['time_ns'][0] / 1e6:>12.3f} "
      f"{it['exposed_comm_ns'][0] / 1e6:>12.3f} {run:>8.2f} {float(s['events']) / run / 1e6:>9.2f}M "
      f"{float(s['packet_hops']) / run / 1e6:>9.2f}M {mem:>7.0f}Mi {len(e['peak_memory_bytes_per_rank']):>3} "
      f"{it['compute_ns'][0] / 1e6:>12.3f} {float(s['wall_seconds']):>8.2f} {e['network_model'].decode() if isinstance(e['network_model'], bytes) else e['network_model']:>8}", flush=True)
PY
  done
done
