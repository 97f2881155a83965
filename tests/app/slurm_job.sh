#!/usr/bin/env bash
# Starts a real single-node Slurm (Debian's slurmctld, slurmd and munge) in a
# private directory, submits jobs/slurm/fat_tree_16k.sbatch with a small
# configuration and 2 tasks, waits for it, checks the HDF5 result, runs one
# task of jobs/slurm/dnn_models.sbatch and one of jobs/slurm/hammingmesh_large.sbatch, and shuts Slurm down.  Exits 77 (reported by ctest as skipped) when Slurm cannot be
# started here: not root, or the packages are missing.
#   slurm_job.sh SOURCE_DIR BUILD_EXE
set -u
src=$1 exe=$2
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "starting slurmd needs root"
for p in slurmctld slurmd sbatch squeue scontrol munged; do
  command -v "$p" >/dev/null || skip "$p not installed (Debian: slurmctld slurmd slurm-client munge)"
done
[ -r /etc/munge/munge.key ] || skip "no munge key (/etc/munge/munge.key)"

dir=$(mktemp -d /tmp/fabricsim-slurm.XXXXXX)
chmod 755 "$dir"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
port=$(( 20000 + RANDOM % 20000 ))
mkdir -p "$dir/state" "$dir/spool" "$dir/results"

"$(command -v munged)" --socket="$dir/munge.sock" --key-file=/etc/munge/munge.key --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" --force 2>/dev/null || skip "munged did not start"
pids+=("$(cat "$dir/munged.pid")")

cat > "$dir/slurm.conf" <<CONF
ClusterName=fabricsim-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$dir/slurmd.out" 2>&1 &
pids+=($!)

ready=0
for _ in $(seq 1 60); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)'; then ready=1; break; fi
  sleep 1
done
if [ "$ready" -ne 1 ]; then
  tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" 2>/dev/null
  skip "Slurm did not come up on this machine"
fi

# The job script as users run it, with a small configuration.
cat > "$dir/small.toml" <<TOML
[topology]
kind = "fat_tree"
endpoints = 64
radix = 16
[workload]
pattern = "permutation"
message_bytes = 65536
TOML
mkdir -p "$dir/work/build/src" "$dir/work/results"
ln -s "$exe" "$dir/work/build/src/fabricsim"
job=$(cd "$dir/work" && CONFIG="$dir/small.toml" OUT="$dir/results/run.h5" \
      sbatch --parsable --ntasks=2 --mem-per-cpu=256M --time=5 --output="$dir/job.out" \
      "$src/jobs/slurm/fat_tree_16k.sbatch") || { echo "FAIL: sbatch refused the job"; exit 1; }
echo "submitted job $job"
wait_job() {  # prints the final state of job $1 (array jobs: of their first task)
  local st=""
  for _ in $(seq 1 180); do
    st=$(scontrol show job "$1" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | head -1 | cut -d= -f2)
    case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
    sleep 1
  done
  echo "$st"
}
finish_job() {  # job, its output file, what it is: waits, shows the output, fails unless it completed
  local state
  state=$(wait_job "$1")
  echo "job $1: $state"
  cat "$2"
  [ "$state" = COMPLETED ] || { echo "FAIL: $3 ended $state"; tail -20 "$dir/slurmd.log"; exit 1; }
}
h5attr() { h5dump -a "$2" "$1" | grep '(0)' | awk '{print $2}'; }  # file, attribute path
finish_job "$job" "$dir/job.out" "job"
[ -f "$dir/results/run.h5" ] || { echo "FAIL: no result file"; exit 1; }
ranks=$(h5attr "$dir/results/run.h5" /meta/ranks)
[ "$ranks" = 2 ] || { echo "FAIL: /meta/ranks = $ranks, expected 2"; exit 1; }
delivered=$(h5attr "$dir/results/run.h5" /summary/messages_delivered)
[ "$delivered" = 64 ] || { echo "FAIL: $delivered of 64 messages delivered"; exit 1; }
echo "PASS: Slurm job $job ran fabricsim on 2 ranks and wrote a complete result"

# The DNN array job, one small task (DLRM on the 1k fat tree: 128 ranks, seconds).
job=$(cd "$dir/work" && REPO="$src" FABRICSIM="$exe" RUNS="dlrm:fat_tree" \
      sbatch --parsable --array=0-0 --mem=1G --time=5 --output="$dir/dnn-%a.out" \
      "$src/jobs/slurm/dnn_models.sbatch") || { echo "FAIL: sbatch refused the DNN array job"; exit 1; }
finish_job "$job" "$dir/dnn-0.out" "DNN array job"
grep -qE '^dlrm +fat_tree +128 ' "$dir/dnn-0.out" || { echo "FAIL: no DLRM row in the array task's output"; exit 1; }
echo "PASS: Slurm array job $job ran a DNN model at its paper's layout"

# The flow-model sweep, two array tasks (issue 20): a line of overrides each.
printf -- '--set engine.seed=1\n# a comment\n--set engine.seed=2 --set workload.message_bytes=4096\n' > "$dir/sweep.txt"
job=$(cd "$dir/work" && REPO="$src" FABRICSIM="$exe" SWEEP="$dir/sweep.txt" CONFIG="$dir/small.toml" \
      OUT_DIR="$dir/results" sbatch --parsable --array=0-1 --mem=1G --time=5 --output="$dir/sweep-%a.out" \
      "$src/jobs/slurm/flow_sweep.sbatch") || { echo "FAIL: sbatch refused the flow sweep"; exit 1; }
finish_job "$job" "$dir/sweep-1.out" "flow sweep"
for i in 0 1; do
  [ "$(wait_job "${job}_$i")" = COMPLETED ] || { echo "FAIL: sweep task $i"; cat "$dir/sweep-$i.out"; exit 1; }
  model=$(h5dump -a /engine/network_model "$dir/results/sweep-$i.h5" | grep '(0)' | awk '{print $2}')
  [ "$model" = '"flow"' ] || { echo "FAIL: sweep task $i ran the $model model"; exit 1; }
done
grep -q 'message_bytes=4096' "$dir/sweep-1.out" || { echo "FAIL: task 1 did not run the second line"; exit 1; }
echo "PASS: Slurm array job $job ran a two-configuration flow-model sweep"

# The large-cluster array job, one task on the small tree (the ring workload,
# 2 steps on 2 ranks): info's estimate, then the partitioned run.
job=$(cd "$dir/work" && REPO="$src" FABRICSIM="$exe" RUNS="small:alltoall small:ring" CONFIG="$dir/small.toml" \
      STEPS=2 BYTES=8192 OUT="$dir/results/large.h5" \
      sbatch --parsable --array=1-1 --ntasks=2 --mem-per-cpu=256M --time=5 --output="$dir/large-%a.out" \
      "$src/jobs/slurm/hammingmesh_large.sbatch") || { echo "FAIL: sbatch refused the large-cluster array job"; exit 1; }
finish_job "$job" "$dir/large-1.out" "large-cluster array job"
grep -q 'expected work' "$dir/large-1.out" || { echo "FAIL: no work estimate from info"; exit 1; }
grep -q 'peak per rank estimated at 2 ranks' "$dir/large-1.out" || { echo "FAIL: no memory estimate for 2 ranks"; exit 1; }
delivered=$(h5attr "$dir/results/large.h5" /summary/messages_delivered)
[ "$delivered" = 128 ] || { echo "FAIL: $delivered of 128 ring messages delivered"; exit 1; }
echo "PASS: Slurm array job $job ran the ring workload of the large-cluster script on 2 ranks"

# A job that reaches its time limit (issue 19 item 4): Slurm sends SIGTERM to
# every task (then SIGKILL after KillWait); fabricsim stops on it, says so in
# one line, and leaves neither the output nor a temporary file.
cat > "$dir/long.toml" <<TOML
[topology]
kind = "fat_tree"
endpoints = 64
radix = 16
[workload]
pattern = "permutation"
message_bytes = 1099511627776
[output]
progress = "never"
TOML
job=$(cd "$dir/work" && CONFIG="$dir/long.toml" OUT="$dir/results/long.h5" \
      sbatch --parsable --ntasks=2 --mem-per-cpu=256M --time=1 --output="$dir/long.out" \
      "$src/jobs/slurm/fat_tree_16k.sbatch") || { echo "FAIL: sbatch refused the time-limited job"; exit 1; }
state=$(wait_job "$job")
echo "job $job: $state"
cat "$dir/long.out"
[ "$state" = TIMEOUT ] || { echo "FAIL: the time-limited job ended $state"; exit 1; }
ls -A "$dir/results" | grep -q 'long\.h5' && { echo "FAIL: left behind: $(ls -A "$dir/results")"; exit 1; }
grep -q '^error: interrupted by SIGTERM' "$dir/long.out" || { echo "FAIL: no 'interrupted by SIGTERM' line"; exit 1; }
echo "PASS: Slurm job $job stopped at its time limit with nothing left behind"
