#!/usr/bin/env bash
# The small tapered fat trees of the HammingMesh paper deliver what their taper
# allows: on each input (a bisection of 1 MiB messages, adaptive routing) the
# packet run's accepted throughput reaches at least 95% of the fluid bound
# that `fabricsim info --json` computes, and neither it nor the makespan
# throughput the run prints exceeds the bound (accepted_throughput.py says
# how each is measured).  The makespan figure also pays for the drain of the
# queues at the end; it is only reported (docs/performance.md, "Tapered fat
# trees").
#   tapered_throughput.sh EXE PYTHON SOURCE_DIR
set -eu
exe=$1 python=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
# 4 MiB messages at the inputs' 1.6 Tb/s: the run lasts what 1 MiB did at 400 Gb/s, long
# enough for the 1 us bins of the time series to show a steady state.
big=(--set workload.message_bytes=4194304 --set output.interval_ns=1000)
for name in fat_tree_1k_tapered_50 fat_tree_1k_tapered_75; do
  cfg="$src/inputs/$name.toml"
  bound=$("$exe" info "$cfg" --json "${big[@]}" | "$python" -c 'import json, sys; print(json.load(sys.stdin)["fluid"]["throughput_bound"])')
  "$exe" run "$cfg" "${big[@]}" -o "$dir/$name.h5" > /dev/null
  echo -n "$name: "
  "$python" "$src/tests/app/accepted_throughput.py" "$dir/$name.h5" --bound "$bound" || fail=1
done
exit $fail
