#!/usr/bin/env bash
# Duato's torus routing with small buffers: every packet of a full alltoall
# arrives.  An accelerator's output that waited for credits for its packets
# in transit and for its own NIC's watched only the NIC's channels, so the
# credit the transit packets waited for could wake nobody: the 16x16 torus
# stopped with packets in flight under alltoall with 4-packet buffers.  (Its
# NIC also took room promised to transit packets on adaptive channels.)
# Checked at 1 and 2 ranks, identical.
#   torus_duato_injection.sh EXE [MPIEXEC]
set -u
exe=$1 mpiexec=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
printf '[topology]\nkind = "torus"\ndims = [16, 16]\n[network]\nvcs = 3\npacket_bytes = 4096\nbuffer_bytes = 16384\n[routing]\nalgorithm = "adaptive"\n[workload]\npattern = "alltoall"\nmessages = 0\nmessage_bytes = 12000\n[output]\nprogress = "never"\n' > t.toml
fail=0
if "$exe" run t.toml -o one.h5 > one.log 2>&1 && grep -q "delivered   65280 of 65280 messages" one.log; then
  echo "ok   16x16 torus, adaptive, 4-packet buffers: all 65,280 messages of the alltoall delivered"
else
  echo "FAIL: 16x16 torus alltoall"; cat one.log; fail=1
fi
if [ -n "$mpiexec" ]; then
  if "$mpiexec" -n 2 "$exe" run t.toml -o two.h5 > two.log 2>&1 && h5diff -q one.h5 two.h5 /links && h5diff -q one.h5 two.h5 /flows; then
    echo "ok   the same on 2 ranks"
  else
    echo "FAIL: 2 ranks"; cat two.log; fail=1
  fi
fi
exit $fail
