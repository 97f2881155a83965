#!/usr/bin/env bash
# A full disk is a clean failure on any rank count (issue 19 item 5): exit 1
# with one `error:` line that says so, no output and no temporary file left,
# no crash (HDF5 1.10 used to segfault inside MPI_Finalize after a failed
# write on one rank, and hang ranks inside a collective write on two).  The
# output's file system is a 2 MiB tmpfs: a small run fits, a larger one
# does not.  Needs root to mount it (skipped otherwise: exit 77).
#   full_disk.sh EXE MPIEXEC
set -u
exe=$1 mpiexec=$2
dir=$(mktemp -d)
fs=$dir/fs
mkdir -p "$fs"
cleanup() {
  umount "$fs" 2> /dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=2m tmpfs "$fs" 2> /dev/null; then
  echo "SKIP: cannot mount a small tmpfs here (needs root)"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
small=(--set topology.endpoints=32 --set topology.radix=8 --set output.interval_ns=0)
large=(--set topology.endpoints=256 --set topology.radix=16 --set output.interval_ns=20)
for np in 1 2 3; do
  timeout 120 "$mpiexec" -n "$np" "$exe" run "${large[@]}" -o "$fs/big.h5" > "$dir/out" 2> "$dir/err"
  rc=$?
  [ "$rc" -eq 1 ] || fail "np$np: exit $rc, want 1: $(cat "$dir/err")"
  [ "$(grep -c . "$dir/err")" -eq 1 ] && grep -q '^error: .*big.h5.*no space left on the device' "$dir/err" ||
    fail "np$np: want one 'error: ... no space left' line: $(cat "$dir/err")"
  [ -z "$(ls -A "$fs")" ] || fail "np$np: left behind: $(ls -A "$fs")"
  echo "ok   np$np full: exit 1: $(cat "$dir/err")"
  # The space is given back: a run that fits still writes its output.
  timeout 120 "$mpiexec" -n "$np" "$exe" run "${small[@]}" -o "$fs/small.h5" > "$dir/out" 2> "$dir/err" ||
    fail "np$np: the small run failed: $(cat "$dir/err")"
  [ -s "$fs/small.h5" ] && [ "$(ls -A "$fs")" = small.h5 ] || fail "np$np: small run: $(ls -A "$fs")"
  rm -f "$fs/small.h5"
  echo "ok   np$np fits: exit 0"
done
echo "PASS: a full disk is one error line and exit 1 at 1, 2 and 3 ranks, with nothing left behind"
