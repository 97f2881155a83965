#!/usr/bin/python3
"""Bad inputs to the Python tools (issue 27, item 7): the HammingMesh paper's
scripts (jobs/papers/hammingmesh/), scripts/job_mix.py and the analysis
scripts (analysis/), each run as a real process, as a user would.

Every case must end with the expected exit status (2: a bad argument,
1: a failed run or a broken input file), exactly one stderr line, starting
with `error:` and naming what is wrong (the option or environment variable;
the file and the dataset), no traceback, nothing on stdout, nothing left
behind (no output directory, file or sbatch script, no temporary directory
of the papers' Runner).  Three cases check the good path of the same
guarantees: the Runner removes its temporary directory after a successful
run, after a failed one and when SIGTERM ends it; job_mix.py finds its
default --base from any directory.

  python_tools_bad_inputs.py EXE SRC   (ctest: app_python_tools_bad_inputs)

Prints one line per case and `N passed, N failed` last; exits 1 on any failure.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EXE, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PY = sys.executable
PAPERS = os.path.join(SRC, "jobs", "papers", "hammingmesh")
JOB_MIX = os.path.join(SRC, "scripts", "job_mix.py")
ANALYSIS = os.path.join(SRC, "analysis")
TOY_MODEL = os.path.join(SRC, "tests", "app", "dnn_toy_model.toml")

WORK = tempfile.mkdtemp(prefix="python-tools-bad-inputs-")
TMP = os.path.join(WORK, "tmp")      # TMPDIR of every case: what the papers' Runner leaves shows here
OUT = os.path.join(WORK, "out")      # the cases' output paths (each must stay absent)
DATA = os.path.join(WORK, "data")    # inputs: real runs, broken copies of them, fake binaries
for d in (TMP, OUT, DATA, os.path.join(WORK, "mpl")):
    os.makedirs(d)
ENV = dict(os.environ, TMPDIR=TMP, PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg",
           MPLCONFIGDIR=os.path.join(WORK, "mpl"))
for k in ("FABRICSIM", "LAUNCH"):
    ENV.pop(k, None)

results = []


def record(name, problems):
    results.append((name, problems))
    print("%s %s%s" % ("ok  " if not problems else "FAIL", name, "".join("\n       " + p for p in problems)),
          flush=True)


def leftovers(absent):
    """The problems of what a case left behind: paths that must be absent, anything in TMPDIR."""
    problems = ["left behind: %s" % p for p in absent if os.path.lexists(p)]
    stray = sorted(os.listdir(TMP))
    if stray:
        problems.append("left in TMPDIR: %s" % ", ".join(stray))
    for p in absent:
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.lexists(p):
            os.remove(p)
    for s in stray:
        shutil.rmtree(os.path.join(TMP, s), ignore_errors=True)
    return problems


def error_problems(r, status, contains):
    """The problems of a failed run's result against the contract: one `error:` line, no traceback."""
    problems = []
    if r.returncode != status:
        problems.append("exit status %d, expected %d" % (r.returncode, status))
    lines = r.stderr.splitlines()
    if "Traceback" in r.stderr:
        problems.append("a traceback")
    if len(lines) != 1 or not lines[0].startswith("error:"):
        problems.append("stderr is not one `error:` line: %r" % r.stderr[-600:])
    else:
        for c in contains:
            if c not in lines[0]:
                problems.append("the error does not name %r: %s" % (c, lines[0]))
    if r.stdout:
        problems.append("stdout not empty: %r" % r.stdout[-300:])
    return problems


def case(name, argv, status=2, contains=(), absent=(), env=None, cwd=None, timeout=60):
    """Run ARGV; it must fail with STATUS and one error line containing each of CONTAINS."""
    e = dict(ENV, **(env or {}))
    try:
        r = subprocess.run(argv, capture_output=True, text=True, env=e, cwd=cwd or WORK, timeout=timeout)
    except subprocess.TimeoutExpired:
        record(name, ["did not end within %d s" % timeout])
        leftovers(absent)
        return
    record(name, error_problems(r, status, contains) + leftovers(absent))


def paper(script, *args):
    return [PY, os.path.join(PAPERS, script)] + list(args)


def fabricsim(out, *sets):
    cmd = [EXE, "run", "--set", 'topology.kind="fat_tree"', "--set", "topology.endpoints=8",
           "--set", "topology.radix=4", "--set", 'output.progress="never"']
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd + ["-o", out], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit("setup: fabricsim failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return out


def broken(src, name, dataset, how):
    """A copy of the run file SRC whose DATASET is replaced (strings, fractions, one row too many, 2-D, 1-D)."""
    import h5py
    import numpy as np
    dst = os.path.join(DATA, name)
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        old = f[dataset][()]
        del f[dataset]
        if how == "strings":
            f[dataset] = np.array([b"x"] * len(old))
        elif how == "fractions":
            f[dataset] = old.astype(np.float64) + 0.5
        elif how == "ragged":
            f[dataset] = np.concatenate([old, old[:1]])
        elif how == "2-D":
            f[dataset] = np.stack([old, old], axis=1)
        elif how == "1-D":
            f[dataset] = old.reshape(-1)
    return dst


def fake_fabricsim(name, run_body):
    """An executable that is fabricsim except for `run`, which runs RUN_BODY (sh)."""
    path = os.path.join(DATA, name)
    with open(path, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = run ]; then\n%s\nfi\nexec %s "$@"\n' % (run_body, EXE))
    os.chmod(path, 0o755)
    return path


def out(name):
    return os.path.join(OUT, name)


def main():
    a_file = os.path.join(DATA, "a_file")
    open(a_file, "w").close()
    quick = ["--quick", "--fabricsim", EXE]

    # ---- the papers' scripts: every bad argument is one line, exit 2, before anything is made
    ml = lambda script, *args: [PY, os.path.join(SRC, "jobs", "papers", "ml_routing", script)] + list(args)
    case("ml_routing allreduce --scenarios 8:4 (not one of the paper's)",
         ml("allreduce.py", *quick, "--scenarios", "8:4", "--out", out("o")), contains=["--scenarios", "8:4"],
         absent=[out("o")])
    case("ml_routing allreduce --scenarios x", ml("allreduce.py", *quick, "--scenarios", "x", "--out", out("o")),
         contains=["--scenarios", "RING:JOBS"], absent=[out("o")])
    case("ml_routing allreduce --schemes bogus", ml("allreduce.py", *quick, "--schemes", "bogus", "--out", out("o")),
         contains=["--schemes", "bogus"], absent=[out("o")])
    case("ml_routing allreduce --failures 32", ml("allreduce.py", *quick, "--failures", "32", "--out", out("o")),
         contains=["--failures", "32"], absent=[out("o")])
    case("ml_routing allreduce --scale 2", ml("allreduce.py", "--packet", "--fabricsim", EXE, "--scale", "2",
                                               "--out", out("o")), contains=["--scale"], absent=[out("o")])
    case("ml_routing allreduce --ilp-time-limit 0",
         ml("allreduce.py", *quick, "--ilp-time-limit", "0", "--out", out("o")), contains=["--ilp-time-limit"],
         absent=[out("o")])
    case("ml_routing runtime --out is a file", ml("runtime.py", *quick, "--out", a_file), contains=["--out"])
    case("ml_routing allreduce --slurm --time 1h", ml("allreduce.py", "--slurm", "--fabricsim", EXE, "--time", "1h",
                                                     "--out", out("o")), contains=["--time"], absent=[out("o")])
    case("alltoall --bytes abc (not a number)", paper("alltoall.py", *quick, "--bytes", "abc", "--out", out("o")),
         contains=["--bytes", "'abc'"], absent=[out("o")])
    case("alltoall --bytes 0", paper("alltoall.py", *quick, "--bytes", "65536,0", "--out", out("o")),
         contains=["--bytes"], absent=[out("o")])
    case("allreduce --sizes 1k (not a number)", paper("allreduce.py", *quick, "--sizes", "1k", "--out", out("o")),
         contains=["--sizes", "'1k'"], absent=[out("o")])
    case("alltoall --rounds x (argparse's own error, one line)",
         paper("alltoall.py", *quick, "--rounds", "x", "--out", out("o")), contains=["--rounds"], absent=[out("o")])
    case("allreduce --quick --large (one line)", paper("allreduce.py", *quick, "--large", "--out", out("o")),
         contains=["--large"], absent=[out("o")])
    case("alltoall --out is a file", paper("alltoall.py", *quick, "--topologies", "ft", "--out", a_file),
         contains=["--out", a_file])
    case("alltoall --out under a file", paper("alltoall.py", *quick, "--topologies", "ft", "--out",
                                              os.path.join(a_file, "sub")), contains=["--out"])
    case("alltoall --out cannot be created (/proc)",
         paper("alltoall.py", *quick, "--topologies", "ft", "--out", "/proc/fabricsim-no-such/out"),
         contains=["--out"], absent=["/proc/fabricsim-no-such"])
    case("allreduce --launch badly quoted", paper("allreduce.py", *quick, "--topologies", "ft", "--launch",
                                                  'mpiexec -n "2', "--out", out("o")),
         contains=["--launch"], absent=[out("o")])
    case("allreduce LAUNCH badly quoted", paper("allreduce.py", *quick, "--topologies", "ft", "--out", out("o")),
         env={"LAUNCH": "mpiexec -n '2"}, contains=["LAUNCH"], absent=[out("o")])
    case("alltoall --launch not there", paper("alltoall.py", *quick, "--topologies", "ft", "--launch",
                                              "no-such-launcher-xyz -n 2", "--out", out("o")),
         contains=["--launch", "no-such-launcher-xyz"], absent=[out("o")])
    case("alltoall FABRICSIM is a directory", paper("alltoall.py", "--quick", "--topologies", "ft", "--out", out("o")),
         env={"FABRICSIM": DATA}, contains=["FABRICSIM", "directory"], absent=[out("o")])
    case("dnn --fabricsim is a directory", paper("dnn.py", "--quick", "--fabricsim", DATA, "--out", out("o")),
         contains=["--fabricsim", "directory"], absent=[out("o")])
    case("alltoall --fabricsim not there",
         paper("alltoall.py", "--quick", "--fabricsim", os.path.join(DATA, "no-such-fabricsim"), "--out", out("o")),
         contains=["--fabricsim"], absent=[out("o")])
    case("dnn --models unknown", paper("dnn.py", *quick, "--topologies", "ft", "--models", "resnet152,nosuchmodel",
                                       "--out", out("o")),
         contains=["--models", "nosuchmodel"], absent=[out("o")])
    case("dnn --models empty list", paper("dnn.py", *quick, "--topologies", "ft", "--models", ",", "--out", out("o")),
         contains=["--models"], absent=[out("o")])
    case("alltoall --topologies empty", paper("alltoall.py", *quick, "--topologies", "", "--out", out("o")),
         contains=["--topologies"], absent=[out("o")])
    case("allreduce --topologies ','", paper("allreduce.py", *quick, "--topologies", ",", "--out", out("o")),
         contains=["--topologies"], absent=[out("o")])
    case("dnn --topologies unknown (nothing made first)",
         paper("dnn.py", *quick, "--topologies", "ft,nosuch", "--out", out("o")),
         contains=["--topologies", "nosuch"], absent=[out("o")])

    # ---- --large: never an invalid sbatch file
    large = ["--large", "--no-submit", "--fabricsim", EXE]
    case("--large --topologies ',' (was --array=0--1)",
         paper("allreduce.py", *large, "--topologies", ",", "--out", out("L")),
         contains=["--topologies"], absent=[out("L")])
    case("--large --ntasks 0", paper("alltoall.py", *large, "--ntasks", "0", "--out", out("L")),
         contains=["--ntasks"], absent=[out("L")])
    case("--large --time with a newline", paper("dnn.py", *large, "--time", "1:00:00\n#SBATCH --mem=1T",
                                                "--out", out("L")),
         contains=["--time"], absent=[out("L")])
    case("--large --time not a Slurm time", paper("alltoall.py", *large, "--time", "soon", "--out", out("L")),
         contains=["--time", "soon"], absent=[out("L")])
    case("--large --bytes abc (checked before the sbatch)",
         paper("alltoall.py", *large, "--bytes", "abc", "--out", out("L")), contains=["--bytes"], absent=[out("L")])

    # ---- the Runner: its temporary directory goes, on success, on failure, on SIGTERM
    o = out("ok")
    r = subprocess.run(paper("alltoall.py", *quick, "--topologies", "ft", "--bytes", "4096", "--rounds", "1",
                             "--out", o), capture_output=True, text=True, env=ENV, cwd=WORK, timeout=120)
    problems = [] if r.returncode == 0 and not r.stderr else ["failed (%d): %s" % (r.returncode, r.stderr[-600:])]
    if not os.path.isfile(os.path.join(o, "alltoall.csv")):
        problems.append("no alltoall.csv")
    shutil.rmtree(o, ignore_errors=True)
    record("Runner: a successful run leaves no temporary directory", problems + leftovers([]))

    failing = fake_fabricsim("fabricsim-run-fails", 'echo "error: boom: the run failed" >&2\nexit 1')
    case("Runner: a failed fabricsim run (one line, nothing left)",
         paper("alltoall.py", "--quick", "--fabricsim", failing, "--topologies", "ft", "--rounds", "1",
               "--out", out("f")), status=1, contains=["boom", "fabricsim run"], absent=[out("f")])

    mark = os.path.join(DATA, "running")
    sleeping = fake_fabricsim("fabricsim-run-sleeps", 'touch "%s"\nexec sleep 30' % mark)
    p = subprocess.Popen(paper("allreduce.py", "--quick", "--fabricsim", sleeping, "--topologies", "ft",
                               "--out", out("t")), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=ENV, cwd=WORK)
    t0 = time.time()
    while not os.path.exists(mark) and time.time() - t0 < 30 and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    r = subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)
    record("Runner: SIGTERM during a run (exit 143, nothing left)",
           error_problems(r, 128 + signal.SIGTERM, ["SIGTERM"]) + leftovers([out("t")]))

    # ---- scripts/job_mix.py: refuses what fabricsim would refuse; writes nothing then
    mix = [PY, JOB_MIX]
    case("job_mix --jobs 0", mix + ["--jobs", "0"], contains=["--jobs"], cwd=SRC)
    case("job_mix --jobs -5", mix + ["--jobs", "-5"], contains=["--jobs"], cwd=SRC)
    case("job_mix --jobs x", mix + ["--jobs", "x"], contains=["--jobs"], cwd=SRC)
    case("job_mix --interarrival-ms 0", mix + ["--interarrival-ms", "0"], contains=["--interarrival-ms"], cwd=SRC)
    case("job_mix --interarrival-ms nan", mix + ["--interarrival-ms", "nan"], contains=["--interarrival-ms"], cwd=SRC)
    case("job_mix --interarrival-ms -1", mix + ["--interarrival-ms", "-1"], contains=["--interarrival-ms"], cwd=SRC)
    case("job_mix arrivals past start_ns's 1e15 ns", mix + ["--jobs", "3", "--interarrival-ms", "1e12"],
         contains=["--interarrival-ms"], cwd=SRC)
    case("job_mix --max-gpus 0", mix + ["--max-gpus", "0"], contains=["--max-gpus"], cwd=SRC)
    case("job_mix --base is a directory", mix + ["--base", DATA], contains=["--base"], cwd=SRC)
    not_toml = os.path.join(DATA, "not_toml.txt")
    with open(not_toml, "w") as f:
        f.write("this is not TOML\n")
    case("job_mix --base not TOML", mix + ["--base", not_toml], contains=["--base", not_toml], cwd=SRC)
    small = os.path.join(DATA, "small_base.toml")
    with open(small, "w") as f:
        f.write('[topology]\nkind = "fat_tree"\nendpoints = 16\nradix = 8\n')
    case("job_mix a job larger than the base's cluster", mix + ["--base", small, "--jobs", "300"],
         contains=["--max-gpus"], cwd=SRC)
    # A job trace (--trace, issue 31): each bad row one line naming the file, line and column.
    def trace(name, text):
        path = os.path.join(DATA, name + ".csv")
        with open(path, "w") as f:
            f.write(text)
        return path
    for name, text, want in (
            ("trace_too_large", "arrival_ms,gpus,iterations,model\n0,8,1,bert\n1,32,1,bert\n", ":3: gpus: 32 GPUs"),
            ("trace_deadline", "arrival_ms,gpus,iterations,model,deadline_ms\n5,8,1,bert,4\n",
             ":2: deadline_ms: 4 ms is not after"),
            ("trace_model", "arrival_ms,gpus,iterations,model\n0,8,1,gpt7\n", ":2: model: unknown model 'gpt7'"),
            ("trace_column", "arrival_ms,gpus,iterations,modle\n0,8,1,bert\n", ":1: unknown column 'modle'"),
            ("trace_number", "arrival_ms,gpus,iterations,model\nsoon,8,1,bert\n", ":2: arrival_ms: 'soon'"),
            ("trace_fields", "arrival_ms,gpus,iterations,model\n0,8,1\n", ":2: 3 fields"),
            ("trace_empty", "", "empty")):
        case("job_mix --trace " + name, mix + ["--base", small, "--trace", trace(name, text)],
             contains=["--trace", want], cwd=SRC)
    case("job_mix --trace missing", mix + ["--trace", os.path.join(DATA, "no_such.csv")],
         contains=["--trace", "no_such.csv"], cwd=SRC)
    r = subprocess.run(mix, capture_output=True, text=True, env=ENV, cwd=DATA, timeout=60)
    with open(os.path.join(SRC, "inputs", "leaf_spine_2048_job_mix.toml")) as f:
        want = f.read()
    problems = [] if r.returncode == 0 and not r.stderr else ["failed (%d): %s" % (r.returncode, r.stderr[-600:])]
    if r.returncode == 0 and r.stdout != want:
        problems.append("not the committed inputs/leaf_spine_2048_job_mix.toml")
    record("job_mix: the default --base from another directory", problems)

    # ---- the analysis scripts: broken tables name the file and the dataset
    coll = fabricsim(os.path.join(DATA, "coll.h5"), 'workload.kind="collective"', "workload.sizes=[4096]")
    traffic = fabricsim(os.path.join(DATA, "traffic.h5"), "workload.message_bytes=4096")
    dnn = fabricsim(os.path.join(DATA, "dnn.h5"), 'workload.kind="dnn"', 'workload.model="%s"' % TOY_MODEL,
                    "workload.data_parallel=8", "output.timeline=true")

    def tool(name, *args):
        return [PY, os.path.join(ANALYSIS, name)] + list(args)

    def bad(script, src, dataset, how, *args):
        f = broken(src, "%s_%s.h5" % (dataset.replace("/", "_"), how), dataset, how)
        case("%s: /%s as %s" % (script, dataset, how), tool(script, f, *args), status=1, contains=[f, "/" + dataset])

    bad("fabricsim_busbw.py", coll, "collectives/bytes", "strings")
    bad("fabricsim_busbw.py", coll, "collectives/end_ns", "ragged")
    bad("fabricsim_busbw.py", coll, "collectives/job", "fractions")
    bad("fabricsim_dnn.py", dnn, "iterations/job", "fractions")
    bad("fabricsim_dnn.py", dnn, "iterations/time_ns", "strings")
    bad("fabricsim_dnn.py", dnn, "timeline/phase", "strings", "--gantt", out("g.png"))
    bad("fabricsim_report.py", traffic, "links/busy_ns", "ragged")
    bad("fabricsim_report.py", traffic, "nodes/kind", "strings")
    bad("fabricsim_report.py", traffic, "flows/end_ns", "strings", "--json")
    bad("fabricsim_report.py", traffic, "links/timeseries/tx_bytes", "1-D", "--png", out("r.png"))
    queue = fabricsim(os.path.join(DATA, "queue.h5"), 'workload.kind="collective"', "workload.sizes=[4096]",
                      'workload.queue="fifo"', "workload.ranks=4")
    bad("fabricsim_cluster.py", queue, "jobs/end_ns", "strings")
    bad("fabricsim_cluster.py", queue, "jobs/start_ns", "ragged")
    case("fabricsim_cluster.py: not a queued run", tool("fabricsim_cluster.py", coll), status=1, contains=[coll])
    f = broken(coll, "second_bytes_2d.h5", "collectives/bytes", "2-D")
    case("fabricsim_compare.py: B's /collectives/bytes as 2-D", tool("fabricsim_compare.py", coll, f), status=1,
         contains=[f, "/collectives/bytes"])
    leftovers([out("g.png"), out("r.png")])
    case("fabricsim_busbw.py --csv is a directory", tool("fabricsim_busbw.py", coll, "--csv", DATA),
         contains=["--csv"])
    case("fabricsim_report.py --plots-dir is a file", tool("fabricsim_report.py", traffic, "--plots-dir", a_file),
         contains=["--plots-dir"])
    case("fabricsim_dnn.py --bars under a file", tool("fabricsim_dnn.py", dnn, "--bars",
                                                      os.path.join(a_file, "b.png")), contains=["--bars"])

    failed = sum(1 for _, p in results if p)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(rc)
