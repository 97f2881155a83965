"""Helpers of the analysis tests: run the real fabricsim binary on tiny configurations
and the analysis scripts as a user would.

The binary is taken from the environment variable FABRICSIM_EXE (ctest sets
it to the one just built).  Without it the tests that need it are skipped;
with it set to something that does not run, they fail.
"""

import csv
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.dirname(HERE)
REPO = os.path.dirname(ANALYSIS)
DNN_TOY_MODEL = os.path.join(REPO, "tests", "app", "dnn_toy_model.toml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

if ANALYSIS not in sys.path:
    sys.path.insert(0, ANALYSIS)

EXE = os.environ.get("FABRICSIM_EXE")

# 8 endpoints on a two-level fat tree of 4-port switches: every run below
# takes well under a second.
TINY_TREE = ("topology.kind=\"fat_tree\"", "topology.endpoints=8", "topology.radix=4")


def needs_fabricsim(cls):
    """Class decorator: skip without FABRICSIM_EXE."""
    return unittest.skipUnless(EXE, "set FABRICSIM_EXE to the fabricsim binary")(cls)


def fabricsim(out, *sets, config=None, timeout=120):
    """Run ``fabricsim run [config] --set S ... -o out`` and return its stdout; fail loudly on errors.

    ``config``: the text of a TOML file to run (written next to ``out``).
    """
    if not (EXE and os.access(EXE, os.X_OK)):
        raise AssertionError("FABRICSIM_EXE=%r is not an executable" % EXE)
    cmd = [EXE, "run"]
    if config is not None:
        toml = os.path.splitext(out)[0] + ".toml"
        with open(toml, "w") as fh:
            fh.write(config)
        cmd.append(toml)
    for s in sets:
        cmd += ["--set", s]
    cmd += ["-o", out]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=timeout)
    if res.returncode != 0 or not os.path.isfile(out):
        raise AssertionError("fabricsim failed (%d): %s\n%s" % (res.returncode, " ".join(cmd), res.stderr))
    return res.stdout


def script(name, *args, timeout=120):
    """Run analysis/<name> as a separate process (its shebang is /usr/bin/python3)."""
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([os.path.join(ANALYSIS, name)] + [str(a) for a in args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout, env=env)


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


class ScriptAsserts(object):
    """Mixin: checks shared by the tests of every script."""

    def assertOk(self, res):
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertNotIn("Traceback", res.stderr)

    def assertOneErrorLine(self, res, contains=None):
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        lines = res.stderr.splitlines()
        self.assertEqual(len(lines), 1, res.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])
        if contains:
            self.assertIn(contains, lines[0])

    def assertPng(self, path):
        self.assertTrue(os.path.isfile(path), path)
        self.assertGreater(os.path.getsize(path), 1000, path)
        with open(path, "rb") as fh:
            self.assertEqual(fh.read(8), PNG_MAGIC, path)
