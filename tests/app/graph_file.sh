#!/usr/bin/env bash
# Custom graphs (topology.kind = "file"): a chain runs with the latencies and
# rates its file gives (one packet's completion time computed by hand), bad
# files fail with one located line and exit 2, a graph with a channel-
# dependency cycle is refused by run but inspected by info.
set -u
exe=$1
python=${2:-/usr/bin/python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
fail=0

cat > chain.graph.toml <<'G'
[[node]]
name = "a"
kind = "endpoint"
[[node]]
name = "s1"
kind = "switch"
[[node]]
name = "s2"
kind = "switch"
radix = 4
[[node]]
name = "b"
kind = "endpoint"
[[link]]
a = "a"
b = "s1"
gbps = 100
latency_ns = 10
[[link]]
a = "s1"
b = "s2"
gbps = 100
latency_ns = 20
cable = "aoc"
[[link]]
a = "s2"
b = "b"
gbps = 100
latency_ns = 30
G
cat > chain.toml <<'C'
[topology]
kind = "file"
file = "chain.graph.toml"
[network]
switch_latency_ns = 100
packet_bytes = 4096
header_bytes = 64
[workload]
pattern = "incast"
incast_sources = 1
incast_target = 1
message_bytes = 4032
[output]
interval_ns = 0
C
if ! "$exe" run chain.toml -o chain.h5 >run.log 2>&1; then echo "FAIL chain: run failed"; cat run.log; fail=1; fi
# One 4096-byte packet, equal rates, cut-through: 3 link latencies + 2
# switch latencies + one serialization at 100 Gb/s (327.68 ns).
"$python" - <<'P' || fail=1
import h5py, sys
f = h5py.File("chain.h5", "r")
end = float(f["flows"]["end_ns"][0]); start = float(f["flows"]["start_ns"][0])
expect = 10 + 20 + 30 + 2 * 100 + 4096 * 8 / 100
if abs((end - start) - expect) > 1e-6:
    print("FAIL chain: completion %.3f ns, expected %.3f" % (end - start, expect)); sys.exit(1)
t = f["topology"].attrs
if (int(t["endpoints"]), int(t["switches"]), int(t["cable_type_dac"]), int(t["cable_type_aoc"])) != (2, 2, 2, 1):
    print("FAIL chain: /topology counts", dict(t)); sys.exit(1)
print("ok   chain: completion %.3f ns" % (end - start))
P

check() {  # name, expected-regex, graph text, command (run|info)
  local name=$1 regex=$2 graph=$3 cmd=${4:-run}
  printf '%s\n' "$graph" > "$name.graph.toml"
  printf '[topology]\nkind = "file"\nfile = "%s.graph.toml"\n' "$name" > "$name.toml"
  local out rc
  out=$("$exe" "$cmd" "$name.toml" -o "$dir/$name.h5" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL $name: exit code $rc, expected 2 ($out)"; fail=1; return; fi
  if [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then echo "FAIL $name: expected one line, got:"; echo "$out"; fail=1; fi
  if ! printf '%s\n' "$out" | grep -Eq "$regex"; then echo "FAIL $name: '$out' does not match '$regex'"; fail=1; fi
  if ls "$dir"/"$name".h5 "$dir"/.*.h5* >/dev/null 2>&1; then echo "FAIL $name: an output file was left behind"; fail=1; fi
  echo "ok   $name: $out"
}
nodes=$'[[node]]\nname = "a"\nkind = "endpoint"\n[[node]]\nname = "s"\nkind = "switch"\n[[node]]\nname = "b"\nkind = "endpoint"\n'
check unknown-node '^error: unknown-node\.graph\.toml:[0-9]+:[0-9]+: link\.b: no node named .c.$' \
  "$nodes"$'[[link]]\na = "a"\nb = "s"\n[[link]]\na = "s"\nb = "c"'
check over-radix '^error: over-radix\.graph\.toml:1[0-9]:1: link: topology: node s has no free port \(radix 1\)$' \
  "${nodes/kind = \"switch\"/kind = \"switch\"$'\n'radix = 1}"$'[[link]]\na = "a"\nb = "s"\n[[link]]\na = "s"\nb = "b"'
check unknown-key '^error: unknown-key\.graph\.toml:[0-9]+:[0-9]+: link\.weight: unknown key$' \
  "$nodes"$'[[link]]\na = "a"\nb = "s"\nweight = 3\n[[link]]\na = "s"\nb = "b"'
check disconnected '^error: disconnected\.graph\.toml: graph: some endpoints cannot reach each other' \
  "$nodes"$'[[node]]\nname = "t"\nkind = "switch"\n[[link]]\na = "a"\nb = "s"\n[[link]]\na = "t"\nb = "b"'
check bad-directed '^error: bad-directed\.graph\.toml:1[0-9]:12: link\.directed: expected a boolean$' \
  "$nodes"$'[[link]]\na = "a"\nb = "s"\ndirected = 1\n[[link]]\na = "s"\nb = "b"'
check one-way-cut '^error: one-way-cut\.graph\.toml: graph: some endpoints cannot reach each other' \
  "$nodes"$'[[link]]\na = "a"\nb = "s"\n[[link]]\na = "b"\nb = "s"\ndirected = true'
check empty '^error: empty\.graph\.toml: graph: no \[\[node\]\] tables$' ""
printf '[topology]\nkind = "file"\nfile = "missing.graph.toml"\n' > missing.toml
out=$("$exe" run missing.toml -o missing.h5 2>&1 >/dev/null); rc=$?
if [ "$rc" -eq 2 ] && printf '%s' "$out" | grep -Eq "^error: missing\.toml:3:1: topology\.file: cannot open 'missing\.graph\.toml'$"; then
  echo "ok   missing: $out"; else echo "FAIL missing: rc $rc, '$out'"; fail=1; fi
# A ring of four switches with an endpoint each: minimal routes chain
# around the ring, a channel-dependency cycle.
ring=""
for i in 0 1 2 3; do ring+=$'[[node]]\nname = "e'$i$'"\nkind = "endpoint"\n[[node]]\nname = "r'$i$'"\nkind = "switch"\n'; done
for i in 0 1 2 3; do ring+=$'[[link]]\na = "e'$i$'"\nb = "r'$i$'"\n[[link]]\na = "r'$i$'"\nb = "r'$(( (i + 1) % 4 ))$'"\n'; done
# routing.graph = "minimal" refuses it, naming the cycle.
printf '%s\n' "$ring" > ring.graph.toml
printf '[topology]\nkind = "file"\nfile = "ring.graph.toml"\n[routing]\ngraph = "minimal"\n' > ring-minimal.toml
out=$("$exe" run ring-minimal.toml -o ring-minimal.h5 2>&1 >/dev/null); rc=$?
if [ "$rc" -eq 2 ] && printf '%s' "$out" | grep -Eq "^error: ring-minimal\.toml:5:1: routing\.graph: minimal routing on this graph has a channel-dependency cycle \(r[0-3] -> r[0-3] -> r[0-3] -> r[0-3] -> r[0-3]\)"; then
  echo "ok   ring-minimal: $out"; else echo "FAIL ring-minimal: rc $rc, '$out'"; fail=1; fi
# The default (auto) routes it up*/down*: every message of an alltoall
# arrives (no deadlock), at 1 and 2 ranks with identical results.
printf '[topology]\nkind = "file"\nfile = "ring.graph.toml"\n[workload]\npattern = "alltoall"\nmessages = 3\nmessage_bytes = 65536\n' > ring.toml
if "$exe" run ring.toml -o ring1.h5 > ring.log 2>&1 && grep -q "routing     up\*/down\*" ring.log && grep -q "delivered   12 of 12 messages" ring.log; then
  echo "ok   ring-updown: all 12 messages delivered"; else echo "FAIL ring-updown"; cat ring.log; fail=1; fi
if [ -n "${3:-}" ]; then
  if "$3" -n 2 "$exe" run ring.toml -o ring2.h5 >/dev/null 2>&1 && h5diff -q ring1.h5 ring2.h5 /links && h5diff -q ring1.h5 ring2.h5 /flows; then
    echo "ok   ring-updown-2-ranks: identical"; else echo "FAIL ring-updown-2-ranks"; fail=1; fi
fi
if "$exe" info ring.toml | grep -q "4 endpoints, 4 switches"; then echo "ok   ring-info: info works"; else echo "FAIL ring-info"; fail=1; fi
exit $fail
