#!/usr/bin/python3
"""Runs the corpus of bad inputs (tests/app/bad_inputs/, issue 19).

Each case is a file of the corpus directory:
  NAME.toml  a configuration, run as `fabricsim run NAME.toml`;
  NAME.cli   a command line only (no configuration of its own).
Its comment lines say what to expect:
  # expect: REGEX     the one stderr line must match (re.search); it names the key
  # args: ...         extra command-line arguments (shlex), e.g. --set KEY=VALUE
  # command: info     run `fabricsim info` instead of `run`
Files named *.model.toml, *.graph.toml, *.json, *.schedule and *.et are a case's
model, graph, trace (JSON or Chakra) or TACOS schedule, read through its
configuration, never run themselves (the Chakra ones: tests/app/make_bad_chakra.py).

The contract checked for every case: exit status 2, exactly one line on
stderr, starting with `error:`, matching the expectation and naming the file
or the command line; no signal, no sanitizer report, no `terminate called`;
no output file and no `.NAME.tmp-PID` left.

  bad_inputs.py EXE CORPUS_DIR [--timeout S] [-k SUBSTRING]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

AUX = re.compile(r"\.(model|graph)\.toml$|\.json$|\.schedule$|\.et$")


def cases(corpus):
    for name in sorted(os.listdir(corpus)):
        if AUX.search(name) or not (name.endswith(".toml") or name.endswith(".cli")):
            continue
        meta = {"expect": None, "args": [], "command": "run"}
        with open(os.path.join(corpus, name), encoding="utf-8", errors="replace") as f:
            meta["text"] = f.read()
            for line in meta["text"].splitlines():
                m = re.match(r"#\s*(expect|args|command):\s?(.*?)\s*$", line)
                if not m:
                    continue
                key, value = m.groups()
                if key == "args":
                    meta["args"] += shlex.split(value)
                else:
                    meta[key] = value
        yield name, meta


def check(exe, workdir, name, meta, timeout):
    """Returns a list of problems (empty: the case passed) and the stderr text."""
    out = os.path.join(workdir, "out.h5")
    cmd = [exe, meta["command"]]
    if name.endswith(".toml"):
        cmd.append(name)
    cmd += meta["args"]
    if meta["command"] == "run" and "--output" not in meta["args"] and "-o" not in meta["args"]:
        cmd += ["--output", out]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    try:
        p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, errors="replace", timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        return [f"no answer within {timeout} s (hang)"], ""
    err = p.stderr
    problems = []
    if p.returncode < 0:
        problems.append(f"killed by signal {-p.returncode}")
    elif p.returncode != 2:
        problems.append(f"exit status {p.returncode}, want 2")
    lines = err.splitlines()
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr, want 1")
    for bad in ("terminate called", "Sanitizer", "runtime error:", "Assertion", "internal error"):
        if bad in err:
            problems.append(f"'{bad}' on stderr")
    first = lines[0] if lines else ""
    if not first.startswith("error: "):
        problems.append("the line does not start with 'error: '")
    if meta["expect"] is None:
        problems.append("the case has no '# expect:' line")
    elif not re.search(meta["expect"], first):
        problems.append(f"does not match '{meta['expect']}'")
    # The case's file, or a model, graph or trace file it names.
    files = [name] + [f for f in os.listdir(workdir) if AUX.search(f) and f in meta["text"]]
    if not (any(f in first for f in files) or "command line" in first or "--set" in first):
        problems.append("the line names neither the case's file nor the command line")
    left = [f for f in os.listdir(workdir) if f == "out.h5" or ".tmp-" in f or f.startswith("core")]
    if left:
        problems.append(f"left behind: {left}")
        for f in left:
            os.remove(os.path.join(workdir, f))
    return problems, err


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("exe")
    ap.add_argument("corpus")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("-k", default="", help="only the cases whose name contains this")
    a = ap.parse_args()
    exe = os.path.abspath(a.exe)
    failed = total = 0
    with tempfile.TemporaryDirectory(prefix="fabricsim-bad-") as tmp:
        workdir = os.path.join(tmp, "corpus")
        shutil.copytree(a.corpus, workdir)
        for name, meta in cases(a.corpus):
            if a.k not in name:
                continue
            total += 1
            problems, err = check(exe, workdir, name, meta, a.timeout)
            shown = err.strip().replace("\n", " | ")[:300]
            if problems:
                failed += 1
                print(f"FAIL {name}: {'; '.join(problems)}: {shown}")
            else:
                print(f"ok   {name}: {shown}")
    print(f"{total - failed} of {total} bad inputs handled as required")
    if total == 0:
        print("no cases found")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
