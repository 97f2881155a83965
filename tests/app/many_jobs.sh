#!/usr/bin/env bash
# Thousands of [[jobs]] tables (issue 19, item 8).  Placing and planning
# the jobs must take memory linear in their number: doubling the jobs (and
# the endpoints they run on) from 2,500 to 5,000 must not more than 2.5x the
# peak memory (each job once copied the whole configuration with every
# table, and a list of every free endpoint: 3.1x per doubling, 1.9 GB at
# 8,000 jobs).  Each run must complete with a /jobs row per job.  A
# configuration larger than 64 KiB is kept whole in /meta.
#   many_jobs.sh EXE PYTHON
set -eu
exe=$1 python=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$python" - "$exe" "$dir" <<'PY'
import resource, subprocess, sys
exe, d = sys.argv[1], sys.argv[2]

def config(n):
    path = f"{d}/jobs{n}.toml"
    with open(path, "w") as f:
        f.write(f'[topology]\nkind = "fat_tree"\nendpoints = {2 * n}\nradix = 64\n'
                '[output]\ninterval_ns = 0\nprogress = "never"\n'
                '[workload]\nkind = "collective"\nranks = 2\nsizes = [64]\n')
        f.write("[[jobs]]\n" * n)
    return path

peaks = {}
for n in (2500, 5000):  # (children's peak is a running maximum: smaller first)
    r = subprocess.run([exe, "run", config(n), "-o", f"{d}/out{n}.h5"], capture_output=True, text=True)
    assert r.returncode == 0, (n, r.stderr)
    assert f"# job {n - 1}: allreduce (ring), 2 ranks" in r.stdout, r.stdout[-500:]
    peaks[n] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    import h5py
    assert len(h5py.File(f"{d}/out{n}.h5", "r")["jobs"]["kind"]) == n
ratio = peaks[5000] / peaks[2500]
print(f"peak memory: {peaks[2500]:.0f} MiB at 2,500 jobs, {peaks[5000]:.0f} MiB at 5,000 (x{ratio:.2f})")
assert ratio < 2.5, f"doubling the jobs took {ratio:.2f}x the memory: quadratic"

# A configuration larger than an HDF5 object header (64 KiB; 7,000 tables
# are about 77 KB) is kept whole in /meta (dense attribute storage), where
# it was once refused.  (And a queue of more jobs than event-handler bindings, below.)
r = subprocess.run([exe, "run", config(7000), "-o", f"{d}/out7000.h5"], capture_output=True, text=True)
assert r.returncode == 0, (r.returncode, r.stderr)
meta = h5py.File(f"{d}/out7000.h5", "r")["meta"].attrs["config"]
meta = meta.decode() if isinstance(meta, bytes) else str(meta)
assert len(meta) > 65536 and meta.count("[[jobs]]") == 7000, (len(meta), meta.count("[[jobs]]"))

# More queued jobs than a simulator has event-handler bindings (2^16): each
# admitted job's task graph once bound a handler of its own, and job 65,537
# ended in an internal error.  Tiny jobs, flow model, one every 10 ns.
n = 66000
path = f"{d}/queue{n}.toml"
with open(path, "w") as f:
    f.write('[topology]\nkind = "fat_tree"\nendpoints = 64\nradix = 64\n[network]\nmodel = "flow"\n'
            '[output]\ninterval_ns = 0\nprogress = "never"\nflows = false\n'
            '[workload]\nkind = "collective"\nranks = 2\nsizes = [64]\nqueue = "fifo"\n')
    f.write("".join(f"[[jobs]]\nstart_ns = {10 * i}\n" for i in range(n)))
r = subprocess.run([exe, "run", path, "-o", f"{d}/queue.h5"], capture_output=True, text=True)
assert r.returncode == 0, (r.returncode, r.stderr[-500:])
assert f"{n} jobs, {n} admitted, {n} finished" in r.stdout, r.stdout[-500:]
end = h5py.File(f"{d}/queue.h5", "r")["jobs"]["end_ns"][()]
assert len(end) == n and (end > 0).all(), len(end)
print(f"PASS: 5,000 jobs in linear memory; 7,000 run, their {len(meta):,}-byte configuration kept in /meta; "
      f"{n:,} queued jobs run")
PY
