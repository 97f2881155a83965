#!/usr/bin/env bash
# Bad configurations must give one line "error: FILE:LINE:COL: KEY: ...",
# exit code 2 and leave no output file (also under mpiexec with 2 ranks).
set -u
exe=$1
mpiexec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail=0

check() {  # name, expected-regex, file, [launcher...]
  local name=$1 regex=$2 file=$3
  shift 3
  local out rc
  out=$("$@" "$exe" run "$file" --output "$dir/out.h5" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL $name: exit code $rc, expected 2"; fail=1; fi
  if [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then echo "FAIL $name: expected one line, got:"; echo "$out"; fail=1; fi
  if ! printf '%s\n' "$out" | grep -Eq "$regex"; then echo "FAIL $name: '$out' does not match '$regex'"; fail=1; fi
  if ls "$dir"/*.h5 "$dir"/.*.h5* >/dev/null 2>&1; then echo "FAIL $name: an output file was left behind"; fail=1; fi
  echo "ok   $name: $out"
}

printf '[network]\nlink_gbps = 100\nbogus_key = 1\n' > unknown.toml
printf '[network]\nvcs = "two"\n' > type.toml
printf '[network\nvcs = 2\n' > syntax.toml
printf '[workload]\nload = 1.5\n' > range.toml

# Command-line errors: the same one-line form (the file "missing.toml" does not exist).
check cli-missing-file '^error: command line: config: File does not exist: missing\.toml \(fabricsim --help for usage\)$' missing.toml
out=$("$exe" run --bogus 2>&1 >/dev/null); rc=$?
if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ] ||
   ! printf '%s\n' "$out" | grep -q '^error: command line: The following argument was not expected: --bogus'; then
  echo "FAIL cli-unknown-option: exit $rc: $out"; fail=1
else
  echo "ok   cli-unknown-option: $out"
fi
# A direct topology of one accelerator: nothing to send to (it crashed, "message to itself").
printf '[topology]\nkind = "hammingmesh"\nboard_a = 1\nboard_b = 1\nx = 1\ny = 1\n[network]\nvcs = 3\n' > one.toml
check one-accelerator '^error: one\.toml: workload\.pattern: synthetic traffic needs at least 2 endpoints; the topology has 1$' one.toml
# Extreme but allowed values: a load so small that posts pass the int64-picosecond range.
printf '[workload]\nload = 1e-15\nmessages = 4\n' > tinyload.toml
check tiny-load '^error: tinyload\.toml:2:1: workload\.load: message 0 of a source would be posted after .* beyond the int64-picosecond range' tinyload.toml
check unknown-key '^error: unknown\.toml:3:1: network\.bogus_key: unknown key' unknown.toml
check wrong-type '^error: type\.toml:2:7: network\.vcs: expected an integer, got a string$' type.toml
check syntax '^error: syntax\.toml:1:[0-9]+: syntax error: ' syntax.toml
check out-of-range '^error: range\.toml:2:8: workload\.load: value 1\.5 out of range' range.toml
# A routing that needs more virtual channels than configured.
printf '[topology]\nkind = "torus"\ndims = [4, 4]\n' > torus.toml
check too-few-vcs '^error: torus\.toml: network\.vcs: .* needs 3 virtual channels; set network\.vcs = 3' torus.toml
# An algorithm the topology has no routing for.
printf '[topology]\nkind = "torus"\ndims = [4, 4]\n[network]\nvcs = 3\n[routing]\nalgorithm = "ecmp"\n' > torus_ecmp.toml
check wrong-algorithm '^error: torus_ecmp\.toml:7:1: routing\.algorithm: .ecmp. does not route a torus topology' torus_ecmp.toml
printf '[topology]\nkind = "fat_tree"\nlevels = 1\n' > levels.toml
check model-rejects-value '^error: levels\.toml:3:1: topology\.levels: a fat tree has 2 or 3 levels' levels.toml
# The switch-based HyperX: a router needing more ports than topology.radix
# (the spec's large 128x128 HyperX: 1 + 127 + 127), an unknown reading, and
# several endpoints per grid point in the Hx1Mesh reading.
printf '[topology]\nkind = "hyperx"\nhyperx_model = "routers"\nx = 128\ny = 128\nradix = 64\n' > hx_ports.toml
check hyperx-router-ports '^error: hx_ports\.toml:6:1: topology\.radix: a router of a 128x128 HyperX needs concentration \+ \(x-1\) \+ \(y-1\) = 1 \+ 127 \+ 127 = 255 ports' hx_ports.toml
printf '[topology]\nkind = "hyperx"\nhyperx_model = "switches"\n' > hx_model.toml
check hyperx-model '^error: hx_model\.toml:3:16: topology\.hyperx_model: ' hx_model.toml
printf '[topology]\nkind = "hyperx"\nconcentration = 4\n' > hx_conc.toml
check hyperx-concentration '^error: hx_conc\.toml:3:1: topology\.concentration: the hx1mesh model' hx_conc.toml
# A run whose memory estimate exceeds engine.memory_limit_gib is refused with
# the estimate: a 16k fabric under a 64 MiB limit (after the topology is built,
# with routes and messages), and a 16-million-endpoint fat tree (about 10 GiB
# of topology alone) from the sizes its builder announces, before building it:
# within seconds, where building it would take minutes and more memory than
# this machine has.
printf '[topology]\nkind = "fat_tree"\nendpoints = 16384\nradix = 64\n[engine]\nmemory_limit_gib = 0.0625\n' > mem16k.toml
check memory-limit '^error: mem16k\.toml:6:1: engine\.memory_limit_gib: this run needs an estimated [0-9.]+ MiB per rank before routes and messages \(program .*network state [0-9.]+ MiB' mem16k.toml
printf '[topology]\nkind = "fat_tree"\nendpoints = 16777216\nradix = 512\n[engine]\nmemory_limit_gib = 16\n' > mem16m.toml
check memory-limit-before-build '^error: mem16m\.toml:6:1: engine\.memory_limit_gib: this run needs an estimated [0-9.]+ GiB per rank' mem16m.toml timeout 10
check memory-limit-2-ranks '^error: mem16m\.toml:6:1: engine\.memory_limit_gib: .* 2 ranks on this machine may use 16\.0 GiB together' mem16m.toml timeout 20 "$mpiexec" -n 2
# A value a builder rejects, found by `info`.
printf '[topology]\nkind = "topoopt"\nservers = 8\ndegree = 2\nring_offsets = [2, 4]\n' > ring.toml
out=$("$exe" info ring.toml 2>&1 >/dev/null); rc=$?
{ [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] \
  && printf '%s\n' "$out" | grep -Eq '^error: ring\.toml:5:1: topology\.ring_offsets: the rings do not connect'; } \
  || { echo "FAIL topoopt-ring-offsets: $rc $out"; fail=1; }
check unknown-key-2-ranks '^error: unknown\.toml:3:1: network\.bogus_key: unknown key' unknown.toml "$mpiexec" -n 2

# A bad --set override.
out=$("$exe" run --set network.vcs=abc --output "$dir/out.h5" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] && printf '%s\n' "$out" | grep -q '^error: --set network.vcs=abc: network.vcs: ' || { echo "FAIL --set: $rc $out"; fail=1; }

# An unwritable output path: exit non-zero, one line naming the path, nothing left.
out=$("$exe" run --output /nonexistent-dir/x.h5 2>&1 >/dev/null); rc=$?
{ [ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s\n' "$out" | grep -q '^error: /nonexistent-dir/x.h5: cannot create'; } || { echo "FAIL unwritable: $rc $out"; fail=1; }
# The same on 2 ranks: every rank exits non-zero, the message appears once, no hang.
out=$(timeout 60 "$mpiexec" -n 2 "$exe" run --output /nonexistent-dir/x.h5 2>&1 >/dev/null); rc=$?
{ [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$(printf '%s\n' "$out" | grep -c '^error: ')" -eq 1 ]; } || { echo "FAIL unwritable on 2 ranks: $rc $out"; fail=1; }
# One rank failing during the run (fault injection: its first event throws):
# every rank learns it at the end of that window and exits with its status
# (1, a run-time error), the message naming the rank appears once, no
# output file is left.
for n in 2 3; do
  out=$(FABRICSIM_TEST_FAIL_RANK=1 timeout 60 "$mpiexec" -n $n "$exe" run --output "$dir/inj.h5" 2>&1 >/dev/null); rc=$?
  { [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$out" | grep -c '^error: ')" -eq 1 ] \
    && printf '%s\n' "$out" | grep -qx 'error: injected failure (FABRICSIM_TEST_FAIL_RANK) (rank 1)' \
    && ! ls "$dir"/inj.h5 "$dir"/.inj.h5* >/dev/null 2>&1; } || { echo "FAIL one rank failing on $n ranks: rc=$rc $out"; fail=1; }
done

# A value the run never reads changed nothing: one warning line naming it and
# where it was set, exit 0, the output written; once on 2 ranks; none when
# the run reads it (a collective places its ranks).
printf '[topology]\nkind = "fat_tree"\nendpoints = 16\nradix = 8\n[workload]\nplacement = "random"\n' > unread.toml
for launch in "" "$mpiexec -n 2"; do
  out=$(timeout 60 $launch "$exe" run unread.toml --output "$dir/unread.h5" 2>&1 >/dev/null); rc=$?
  { [ "$rc" -eq 0 ] && [ -f "$dir/unread.h5" ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] \
    && printf '%s\n' "$out" | grep -qx 'warning: unread\.toml:6:1: workload\.placement: set, but this run never read it: it changed nothing'; } \
    || { echo "FAIL unread key (${launch:-1 rank}): rc=$rc $out"; fail=1; }
  rm -f "$dir/unread.h5"
done
out=$("$exe" run unread.toml --set 'workload.kind="collective"' --set workload.ranks=8 --output "$dir/read.h5" 2>&1 >/dev/null); rc=$?
{ [ "$rc" -eq 0 ] && [ -z "$out" ]; } || { echo "FAIL a read placement warned: rc=$rc $out"; fail=1; }
rm -f "$dir/read.h5"
# A key only another network model reads: the packet model's switch buffers
# in a flow run, the flow model's rate cap in a packet run; each says which.
printf '[topology]\nkind = "fat_tree"\nendpoints = 16\nradix = 8\n[network]\nbuffer_bytes = 1048576\n' > model.toml
out=$("$exe" run model.toml --set 'network.model="flow"' --output "$dir/flow.h5" 2>&1 >/dev/null); rc=$?
{ [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qx 'warning: model\.toml:6:1: network\.buffer_bytes: set, but this run never read it: it changed nothing (only the packet model reads it; network\.model is "flow")'; } ||
  { echo "FAIL buffer_bytes in a flow run: rc=$rc $out"; fail=1; }
out=$("$exe" run model.toml --set network.flow_rate_cap_gbps=100 --output "$dir/packet.h5" 2>&1 >/dev/null); rc=$?
{ [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] &&
  printf '%s\n' "$out" | grep -qx 'warning: --set: network\.flow_rate_cap_gbps: set, but this run never read it: it changed nothing (only the flow model reads it; network\.model is "packet")'; } ||
  { echo "FAIL flow_rate_cap_gbps in a packet run: rc=$rc $out"; fail=1; }
rm -f "$dir/flow.h5" "$dir/packet.h5"
[ $fail -eq 0 ] && echo "ok   unread keys: one warning line each, on 1 and 2 ranks; none when read; another model's keys named"
exit $fail
