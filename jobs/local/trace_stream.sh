#!/usr/bin/env bash
# The streamed Chakra trace benchmark (issue 33; docs/performance.md, "Chakra
# traces, streamed"): a trace of 1,024 ranks and 1.09 M nodes, one training
# iteration of inputs/chakra_bench_1024.toml's job written out by
# `fabricsim export-chakra`, run streamed (workload.trace_stream) on that
# file's 3-level fat tree at each rank count.  Prints each run's time,
# events/s and peak memory per rank beside the size of the trace's files,
# and checks that every rank count's results are the first's.
#   [TRACE=DIR/PREFIX] [SET="--set k=v ..."] [EXPORT_SET="--set k=v ..."] jobs/local/trace_stream.sh [RANKS...]   (default: 1 2)
# TRACE: an exported trace to run (its files PREFIX.0.et ...); without it the
# trace is exported to a temporary directory first (3 s), with EXPORT_SET's
# overrides (EXPORT_SET="--set workload.iterations=8": a trace twice as
# long, 186 MB, to see what grows with the file and what does not).  A full run takes
# about 2 minutes at 1 rank; SET="--set engine.end_ns=1e3" cuts every run at
# 1 us (the whole trace is still read, and every node gets its row).
# FABRICSIM (the binary), MPIEXEC and PYTHON (one with h5py) override the defaults; the
# comparison needs h5diff (hdf5-tools).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exe=${FABRICSIM:-$src/build/src/fabricsim}
py=${PYTHON:-/usr/bin/python3}
config=$src/inputs/chakra_bench_1024.toml
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2)
mpiexec=${MPIEXEC:-$(command -v mpiexec.mpich || command -v mpiexec)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trace=${TRACE:-}
if [ -z "$trace" ]; then
  trace=$dir/trace/rn
  mkdir -p "$dir/trace"
  # shellcheck disable=SC2086  # (EXPORT_SET is words)
  "$exe" export-chakra "$config" ${EXPORT_SET:-} -o "$trace" > /dev/null
fi
shopt -s nullglob
files=("$trace".*.et)
[ ${#files[@]} -gt 0 ] || { echo "trace_stream.sh: no files $trace.*.et" >&2; exit 2; }
bytes=$(cat "${files[@]}" | wc -c)
echo "trace: ${#files[@]} files, $bytes bytes ($(( bytes / 1000000 )) MB)"
first=""
for n in "${ranks[@]}"; do
  # (Its warnings are the DNN keys of the file, which a trace run does not
  # read: shown only if the run fails.)
  # shellcheck disable=SC2086
  if ! $mpiexec -n "$n" "$exe" run "$config" --set workload.kind=\"trace\" --set "workload.trace=\"$trace\"" \
    --set workload.trace_peak_tflops=1 --set workload.trace_stream=true --set output.progress=\"never\" \
    ${SET:-} -o "$dir/np$n.h5" > /dev/null 2> "$dir/err"; then
    cat "$dir/err" >&2
    exit 1
  fi
  line=$("$py" - "$dir/np$n.h5" "$n" "$bytes" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
e, s = f["engine"].attrs, f["summary"].attrs
run = float(e["run_seconds"])
peak = max(e["peak_memory_bytes_per_rank"])
print(f"ranks {sys.argv[2]}: run phase {run:.1f} s, {float(s['events']) / run / 1e6:.2f} M events/s, "
      f"peak {peak / 1e6:.1f} MB per rank ({peak / int(sys.argv[3]):.2f} of the files)")
PY
  )
  if [ -n "$first" ]; then
    # (The project's comparison: h5diff of the groups and the /summary counters.)
    if ! bash "$src/tests/app/same_results.sh" "$dir/np$first.h5" "$dir/np$n.h5" \
      /links /flows /iterations /trace_nodes /jobs > "$dir/diff"; then
      echo "$line (DIFFERS from $first ranks)"
      cat "$dir/diff"
      exit 1
    fi
    line="$line (identical to $first ranks)"
  fi
  echo "$line"
  [ -n "$first" ] || first=$n
done
