#!/usr/bin/env bash
# Whether two runs of one configuration have the same results: the given
# groups or datasets (h5diff) and the /summary counters, which depend on
# neither the rank count nor the build.  Prints a FAIL line per difference.
#   same_results.sh A.h5 B.h5 GROUP...      exit 0 if identical, 1 if not
set -u
a=$1 b=$2
shift 2
fail=0
for g in "$@"; do
  h5diff -q "$a" "$b" "$g" "$g" > /dev/null || { echo "FAIL: $g differs"; fail=1; }
done
for k in sim_time_ns packets_injected packets_delivered bytes_delivered packet_hops messages_delivered; do
  x=$(h5dump -a "/summary/$k" "$a" | grep '(0)')
  y=$(h5dump -a "/summary/$k" "$b" | grep '(0)')
  [ "$x" = "$y" ] || { echo "FAIL: /summary/$k: $x vs $y"; fail=1; }
done
exit $fail
