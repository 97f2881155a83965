#!/usr/bin/env bash
# Runs the default scenario under mpiexec with N ranks and checks the output
# file: h5dump shows /meta and /summary with their attributes, the counters
# are conserved, and the analysis script reads it and draws its plots.
set -eu
exe=$1 python=$2 src=$3 mpiexec=$4 ranks=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out="$dir/run.h5"
"$mpiexec" -n "$ranks" "$exe" run --set output.interval_ns=2000 --output "$out" > "$dir/stdout.txt"
cat "$dir/stdout.txt"
grep -q "output      $out" "$dir/stdout.txt"
[ -f "$out" ] || { echo "FAIL: no output file"; exit 1; }
ls -a "$dir" | grep -q '\.tmp-' && { echo "FAIL: temporary file left behind"; exit 1; }

# h5dump -A lists the attributes of /meta and /summary.
h5dump -A "$out" > "$dir/attrs.txt"
for a in version git_sha build config ranks threads seed; do
  grep -q "ATTRIBUTE \"$a\"" "$dir/attrs.txt" || { echo "FAIL: /meta attribute $a missing"; exit 1; }
done
for a in sim_time_ns events wall_seconds events_per_second packets_delivered bytes_delivered packets_dropped packet_hops; do
  grep -q "ATTRIBUTE \"$a\"" "$dir/attrs.txt" || { echo "FAIL: /summary attribute $a missing"; exit 1; }
done

"$python" "$src/tests/app/check_output.py" "$out" "$ranks"
"$python" "$src/analysis/fabricsim_report.py" "$out" --png "$dir/overview.png" > "$dir/report.txt"
cat "$dir/report.txt"
[ -s "$dir/overview.png" ] || { echo "FAIL: no plot"; exit 1; }
echo "PASS"
