"""What every paper's experiment scripts share (jobs/papers/<paper>/): checked
arguments, running fabricsim, CSV rows and figures, and Slurm array jobs.

Every argument is checked before anything is run or written: a bad one ends
the script with one line `error: WHERE: WHAT` on stderr and exit status 2
(WHERE is the option or environment variable); a fabricsim run that fails
ends it with one such line and status 1.  Nothing is left behind then: the
temporary directory of the runs is removed on success and on failure, and
an --out directory the script made is removed again if it stayed empty.
"""

import argparse
import csv
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INPUTS = os.path.join(SRC, "inputs")


def fail(where, what, status=2):
    """End the script with one line `error: WHERE: WHAT` on stderr (status 2: a bad argument, 1: a failed run)."""
    what = " ".join(str(what).split())
    sys.stderr.write("error: %s: %s\n" % (where, what) if where else "error: %s\n" % what)
    sys.stderr.flush()
    sys.exit(status)


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one `error: OPTION: WHAT` line with exit status 2, like the script's own."""

    def error(self, message):
        m = re.match(r"argument ([^:]+): (.*)", message, re.S)
        where, what = (m.group(1).split("/")[0], m.group(2)) if m else ("command line", message)
        fail(where, "%s (%s --help for usage)" % (" ".join(what.split()), self.prog))


def integer(lo, hi=None):
    """An argparse type: an integer in [lo, hi]."""
    def parse(text):
        try:
            v = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not an integer" % text)
        if v < lo or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError("%d is out of range (must be >= %d%s)" % (
                v, lo, "" if hi is None else " and <= %d" % hi))
        return v
    return parse


def integer_list(lo, hi, what):
    """An argparse type: a comma-separated list of integers in [lo, hi] (empty items skipped; at least one)."""
    one = integer(lo, hi)

    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("no %s given" % what)
        try:
            values = [one(t) for t in items]
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError("%s; give comma-separated %s from %d to %d" % (e, what, lo, hi))
        for v in values:
            if values.count(v) > 1:
                raise argparse.ArgumentTypeError("%d given twice" % v)
        return values
    return parse


def name_list(what, known):
    """An argparse type: a comma-separated list of names from `known`, each at most once, at least one."""
    def parse(text):
        names = [t.strip() for t in text.split(",") if t.strip()]
        if not names:
            raise argparse.ArgumentTypeError("no %s given (give some of: %s)" % (what, ", ".join(known)))
        for t in names:
            if t not in known:
                raise argparse.ArgumentTypeError("unknown %s '%s' (known: %s)" % (what, t, ", ".join(known)))
            if names.count(t) > 1:
                raise argparse.ArgumentTypeError("%s '%s' given twice" % (what, t))
        return names
    return parse


# Slurm's --time formats (sbatch(1)): minutes, minutes:seconds, hours:minutes:seconds, days-hours,
# days-hours:minutes, days-hours:minutes:seconds; 0, INFINITE or UNLIMITED for no limit.
SLURM_TIME = re.compile(r"[0-9]+(:[0-9]+){0,2}|[0-9]+-[0-9]+(:[0-9]+){0,2}|(?i:infinite|unlimited)")


def slurm_time(text):
    """An argparse type: a Slurm time limit (nothing else may reach the #SBATCH line)."""
    if not SLURM_TIME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            "%r is not a Slurm time limit (minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
            "days-hours:minutes or days-hours:minutes:seconds)" % text)
    return text


def add_run_options(p, default_out):
    """The options every paper script has: --out, --fabricsim, --launch, --keep (checked by parse's
    check_fabricsim, check_launch and check_out)."""
    p.add_argument("--out", default=default_out, help="output directory (CSV, figure, HDF5 files)")
    p.add_argument("--fabricsim", default=None,
                   help="the fabricsim binary (default: build/src/fabricsim, or $FABRICSIM)")
    p.add_argument("--launch", default=None,
                   help='prefix for each run, e.g. "mpiexec -n 4" (default: one rank, or $LAUNCH)')
    p.add_argument("--keep", action="store_true", help="keep every run's HDF5 file in OUT/runs")


def from_env(args, attr, env):
    """(value, where) of an option that defaults to an environment variable (an empty one counts as unset)."""
    v = getattr(args, attr)
    if v is not None:
        return v, "--" + attr
    v = os.environ.get(env, "")
    return (v, env) if v else (None, "--" + attr)


def check_fabricsim(args):
    """args.fabricsim: the binary (given, $FABRICSIM or build/src/fabricsim), checked to be an executable file."""
    path, where = from_env(args, "fabricsim", "FABRICSIM")
    if path is None:
        path = os.path.join(SRC, "build", "src", "fabricsim")
    if not path:
        fail(where, "an empty path")
    if not os.path.exists(path):
        fail(where, "%s: no such file (build fabricsim first: see README.md)" % path)
    if os.path.isdir(path):
        fail(where, "%s is a directory, not the fabricsim binary" % path)
    if not os.access(path, os.X_OK):
        fail(where, "%s is not an executable (build first: see README.md)" % path)
    # A bare name is a file here (as checked), not one on the PATH.
    args.fabricsim = path if os.sep in path else os.path.join(os.curdir, path)
    args.fabricsim_where = where


def check_launch(args):
    """args.launch: the prefix of each run, split into words; its program must be there."""
    text, where = from_env(args, "launch", "LAUNCH")
    try:
        words = shlex.split(text or "")
    except ValueError as e:
        fail(where, "cannot split %r into words (%s)" % (text, str(e).lower()))
    if words and shutil.which(words[0]) is None:
        fail(where, "%s: no such program (not found%s)" % (
            words[0], "" if os.sep in words[0] else " on the PATH"))
    args.launch, args.launch_words, args.launch_where = text or "", words, where


def check_out(args, files=(), dirs=()):
    """--out can be the output directory: it is one, or it and its missing parents can be made
    (made later, when the runs start); the FILES the script writes there are not directories, the
    DIRS not files."""
    out = args.out
    if not out:
        fail("--out", "an empty path")
    full = os.path.abspath(out)
    if os.path.lexists(full) and not os.path.isdir(full):
        fail("--out", "%s exists and is not a directory" % out)
    for name in files:
        if os.path.isdir(os.path.join(full, name)):
            fail("--out", "%s is a directory (the script writes a file there)" % os.path.join(out, name))
    for name in dirs:
        d = os.path.join(full, name)
        if os.path.lexists(d) and not os.path.isdir(d):
            fail("--out", "%s exists and is not a directory" % os.path.join(out, name))
    top = full
    while not os.path.lexists(top):
        top = os.path.dirname(top)
    if not os.path.isdir(top):
        fail("--out", "cannot create %s: %s is not a directory" % (out, top))
    if not os.access(top, os.W_OK | os.X_OK):
        fail("--out", "cannot %s %s: no permission to write in %s" % (
            "write in" if top == full else "create", out, top))


def parse_checked(p, outputs):
    """p's arguments, with --fabricsim, --launch and --out checked (OUTPUTS: the files the script writes in --out)."""
    args = p.parse_args()
    check_fabricsim(args)
    check_launch(args)
    check_out(args, outputs, ["runs"] if args.keep else [])
    return args


def main(body):
    """Run ``body()``: interrupts and I/O errors end it with one `error:` line, never a traceback."""
    try:
        body()
    except KeyboardInterrupt:
        fail("", "interrupted (SIGINT)", 128 + signal.SIGINT)
    except BrokenPipeError:  # the reader of stdout went away (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except OSError as e:
        fail(e.filename or "", e.strerror or e, 1)


def toml_value(v):
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return str(v)


def set_args(overrides):
    out = []
    for k, v in overrides.items():
        out += ["--set", "%s=%s" % (k, toml_value(v))]
    return out


def _error_of(r):
    """fabricsim's own error (its `error:` lines, or its last line) of a failed run, on one line."""
    lines = [l.strip() for l in (r.stderr or "").splitlines() + (r.stdout or "").splitlines() if l.strip()]
    errors = [l[len("error:"):].strip() for l in lines if l.startswith("error:")]
    if errors:
        return "; ".join(errors)
    return lines[-1] if lines else "no message"


def _call(cmd, where):
    """subprocess.run of CMD with its output captured; a program that cannot be started is one `error:` line."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        fail(where, "cannot run %s (%s)" % (cmd[0], e.strerror or e))


def _status(rc):
    return "killed by signal %d" % -rc if rc < 0 else "exit %d" % rc


def make_dirs(path):
    """Make the directory PATH and its missing parents; returns those made, parents first
    (a failure is one `error: --out: ...` line, exit 2)."""
    made = []
    missing = []
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        missing.append(p)
        p = os.path.dirname(p)
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except OSError as e:
            remove_empty(made)
            fail("--out", "cannot create %s (%s)" % (d, e.strerror or e))
        made.append(d)
    return made


def remove_empty(made):
    """Remove again the directories make_dirs made, innermost first, as long as they are empty."""
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError:
            break


def _interrupted(signum, frame):
    fail("", "interrupted (%s)" % signal.Signals(signum).name, 128 + signum)


class Runner:
    """Runs fabricsim, keeping (or deleting) the HDF5 outputs.

    Use it as ``with Runner(args) as run:``: the temporary directory of the
    runs is removed when the block ends, whether it succeeded or not (also on
    SIGTERM and SIGHUP, which a batch system's time limit sends), and on a
    failure so is an --out directory this Runner made that stayed empty.
    """

    def __init__(self, args):
        import importlib.util
        for module in ("h5py", "numpy", "matplotlib"):
            if importlib.util.find_spec(module) is None:
                fail(sys.executable, "no module %s: run the script with /usr/bin/python3, with python3-h5py, "
                     "python3-numpy and python3-matplotlib (see analysis/README.md)" % module)
        self.args = args
        self.made = []  # directories made here, parents first
        self.runs = None
        self.count = 0
        self.version = self.git_sha = ""
        self.stdout = ""  # the last run's standard output (what fabricsim prints but does not write to HDF5)
        out = _call([args.fabricsim, "--version"], args.fabricsim_where)
        self.version = out.stdout.strip()
        if out.returncode != 0 or not self.version.startswith("fabricsim"):
            fail(args.fabricsim_where, "%s --version: %s (not fabricsim?)" % (
                args.fabricsim, _error_of(out) if out.returncode != 0 else repr(self.version[:80])))

    def __enter__(self):
        self._handlers = {s: signal.signal(s, _interrupted) for s in (signal.SIGTERM, signal.SIGHUP)}
        try:
            self.made += make_dirs(self.args.out)
            if self.args.keep:
                self.runs = os.path.join(self.args.out, "runs")
                self.made += make_dirs(self.runs)
            else:
                self.runs = tempfile.mkdtemp(prefix="paper-runs-")
        except BaseException:
            self.close(ok=False)
            raise
        return self

    def __exit__(self, kind, value, tb):
        self.close(ok=kind is None or (kind is SystemExit and value.code in (None, 0)))
        return False

    def close(self, ok=True):
        """Remove the temporary directory of the runs; after a failure also the directories made that are empty."""
        if self.runs is not None and not self.args.keep:
            shutil.rmtree(self.runs, ignore_errors=True)
            self.runs = None
        if not ok:
            remove_empty(self.made)
        for s, h in getattr(self, "_handlers", {}).items():
            signal.signal(s, h)
        self._handlers = {}

    def run(self, tag, config, overrides):
        """One run; returns (HDF5 path, wall seconds, the command line); its stdout is then self.stdout."""
        self.count += 1
        h5 = os.path.join(self.runs, "%03d_%s.h5" % (self.count, tag))
        launch = self.args.launch_words
        cmd = launch + [self.args.fabricsim, "run", config] + set_args(overrides) + \
            ["--set", 'output.progress="never"', "-o", h5]
        t0 = time.time()
        r = _call(cmd, self.args.launch_where if launch else self.args.fabricsim_where)
        wall = time.time() - t0
        self.stdout = r.stdout or ""
        if r.returncode != 0:
            fail("fabricsim run", "%s (%s; the command: %s)" % (
                _error_of(r), _status(r.returncode), " ".join(shlex.quote(c) for c in cmd)), 1)
        return h5, wall, " ".join(shlex.quote(c) for c in cmd[len(launch):])

    def info(self, config, overrides, full=False):
        """`fabricsim info --json` of a configuration (structure, cost, fluid bound); `full`: the
        fluid bound also on fabrics of more links than info computes it for by default."""
        cmd = [self.args.fabricsim, "info", config, "--json"] + (["--full"] if full else []) + set_args(overrides)
        r = _call(cmd, self.args.fabricsim_where)
        where = "the command: " + " ".join(shlex.quote(c) for c in cmd)
        if r.returncode != 0:
            fail("fabricsim info", "%s (%s; %s)" % (_error_of(r), _status(r.returncode), where), 1)
        try:
            return json.loads(r.stdout)
        except ValueError as e:
            fail("fabricsim info", "its output is not JSON (%s; %s)" % (e, where), 1)

    def done(self, h5):
        if not self.args.keep:
            os.remove(h5)


def summary(h5):
    import h5py
    with h5py.File(h5, "r") as f:
        s = {k: _py(v) for k, v in f["summary"].attrs.items()}
        t = {k: _py(v) for k, v in f["topology"].attrs.items()} if "topology" in f else {}
        e = {k: _py(v) for k, v in f["engine"].attrs.items()} if "engine" in f else {}
    return s, t, e


def _py(v):
    try:
        import numpy as np
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, np.generic):
            return v.item()
    except ImportError:
        pass
    if isinstance(v, bytes):
        return v.decode()
    return v


def write_csv(path, rows):
    """Rows (dicts) into a CSV whose columns are the union of their keys, in first-seen order."""
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})


def figure(path, draw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    draw(ax)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def finite(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)
