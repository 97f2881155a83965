#!/usr/bin/env bash
# Output paths as an ordinary user (issue 27): a bare output name is a file
# of the current directory.  It once meant a file of '/', so every run with
# `-o out.h5`, `output.file = "r.h5"` or the default name failed for any
# user who cannot write to '/', while root (and so CI) never saw it.  As
# root this test drops to `nobody` (setpriv), so it checks what a user
# sees; as any other user it runs as that user.  Cases: a bare -o at 1 and
# 2 ranks in the packet model, 1 in the flow and analytic models; output.file bare; the default name; and a
# stale temporary of a killed run, found beside a bare-named output (it
# was looked for in '/').
#   unprivileged.sh EXE MPIEXEC
set -u
exe=$1 mpiexec=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# The binary and the run directory must be reachable by the user: a copy
# of the binary in a directory that user owns.
cp "$exe" "$dir/fabricsim"
mkdir "$dir/run"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  user=nobody
  id "$user" > /dev/null 2>&1 || { echo "SKIP: no user '$user' to run as"; exit 77; }
  chown -R "$user" "$dir"
  chmod 755 "$dir"
  as_user=(setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --clear-groups
           env HOME="$dir/run" USER="$user" LOGNAME="$user")
  # Sanity: as that user '/' is not writable (otherwise the test proves nothing).
  "${as_user[@]}" test -w / && { echo "SKIP: '$user' can write to '/'"; exit 77; }
else
  test -w / && { echo "SKIP: this user can write to '/'"; exit 77; }
fi
cd "$dir/run"
small=(--set topology.endpoints=16 --set topology.radix=8 --set output.interval_ns=0)

# run NAME EXPECTED_FILE NP ARGS...: the run must succeed and leave exactly
# EXPECTED_FILE (and no temporary) in the run directory.
run() {
  local name=$1 want=$2 np=$3
  shift 3
  rm -f ./*.h5
  if ! "${as_user[@]}" timeout 120 "$mpiexec" -n "$np" "$dir/fabricsim" run "${small[@]}" "$@" \
      > "$dir/out" 2> "$dir/err"; then
    bad "$name: exit non-zero: $(cat "$dir/err")"
    return
  fi
  local left
  left=$(ls -A)
  if [ "$left" != "$want" ]; then
    bad "$name: directory holds '$left', want '$want'"
  else
    echo "ok   $name"
  fi
}
# (The flow and analytic models run on one rank.)
run "np1 packet -o out.h5" out.h5 1 -o out.h5
run "np2 packet -o out.h5" out.h5 2 -o out.h5
run "np1 flow -o out.h5" out.h5 1 --set network.model=flow -o out.h5
run "np1 analytic -o out.h5" out.h5 1 --set network.model=analytic -o out.h5
run "output.file bare" r.h5 1 --set output.file=r.h5
run "default name" fabricsim.h5 2
run "-o ./out.h5" out.h5 1 -o ./out.h5

# A stale temporary beside a bare-named output: process 99999999 is above
# any pid_max, so it is surely gone.
rm -f ./*.h5
stale=.out.h5.tmp-99999999
"${as_user[@]}" touch "$stale"
if "${as_user[@]}" timeout 120 "$dir/fabricsim" run "${small[@]}" -o out.h5 > "$dir/out" 2> "$dir/err"; then
  if grep -q "^warning: $stale: the unfinished output of an earlier run (process 99999999" "$dir/err"; then
    echo "ok   stale temporary reported: $(cat "$dir/err")"
  else
    bad "stale temporary beside out.h5 not reported: $(cat "$dir/err")"
  fi
  [ -e "$stale" ] || bad "the stale temporary was removed (it is only reported)"
else
  bad "run with a stale temporary: $(cat "$dir/err")"
fi
[ "$fail" -eq 0 ] && echo "all passed"
exit "$fail"
