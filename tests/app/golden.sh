#!/usr/bin/env bash
# Golden result fingerprints: runs every case of golden/cases.txt on each of
# its rank counts and compares the fingerprint of its output
# (golden/fingerprint.py: every result table and the /summary counters) with
# golden/fingerprints.txt.  A change that alters results, sequential and
# parallel alike, fails here even when every other test still holds.
#
# Updating the fingerprints is a deliberate step, for a change that is meant
# to alter results (a model fix, a new default): run
#   bash tests/app/golden.sh build/src/fabricsim mpiexec /usr/bin/python3 . --update
# and commit golden/fingerprints.txt with a message that says why the results
# changed.  (--update still requires every rank count of a case to agree.)
#   golden.sh EXE MPIEXEC PYTHON SRC [--update]
set -eu
exe=$1 mpiexec=$2 python=$3 src=$4 mode=${5:-check}
cd "$src"
cases=tests/app/golden/cases.txt
stored=tests/app/golden/fingerprints.txt
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
: > "$dir/new.txt"
while read -r name ranks args; do
  case "$name" in ''|'#'*) continue ;; esac
  first=""
  for n in ${ranks//,/ }; do
    out="$dir/$name.np$n.h5"
    # shellcheck disable=SC2086  # ARGS are words, as written in cases.txt
    if [ "$n" = 1 ]; then
      "$exe" run $args --set output.progress=\"never\" -o "$out" < /dev/null > "$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: $name np$n did not run"; fail=1; continue; }
    else
      "$mpiexec" -n "$n" "$exe" run $args --set output.progress=\"never\" -o "$out" < /dev/null > "$dir/log" 2>&1 || { cat "$dir/log"; echo "FAIL: $name np$n did not run"; fail=1; continue; }
    fi
    fp=$("$python" tests/app/golden/fingerprint.py "$out")
    if [ -z "$first" ]; then
      first=$fp
      echo "$name $fp" >> "$dir/new.txt"
    elif [ "$fp" != "$first" ]; then
      echo "FAIL: $name: np$n gives $fp, np1 $first"; fail=1
    fi
    want=$(awk -v n="$name" '$1 == n {print $2}' "$stored" 2>/dev/null || true)
    if [ "$mode" = check ]; then
      if [ -z "$want" ]; then echo "FAIL: $name has no stored fingerprint"; fail=1
      elif [ "$fp" != "$want" ]; then echo "FAIL: $name np$n: fingerprint $fp, stored $want (results changed: see this script's header)"; fail=1
      else echo "ok   $name np$n"; fi
    fi
    rm -f "$out"
  done
done < "$cases"
if [ "$mode" = --update ]; then
  [ "$fail" = 0 ] || { echo "not updated: the rank counts disagree"; exit 1; }
  { echo "# Written by tests/app/golden.sh --update; see its header."; cat "$dir/new.txt"; } > "$stored"
  echo "updated $stored"
fi
exit $fail
