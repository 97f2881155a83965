"""Tests of fabricsim_analysis.io (and the shared error path of every script).

Run with:  FABRICSIM_EXE=build/src/fabricsim /usr/bin/python3 -m unittest discover -s analysis/tests -p test_io.py -v

A tiny traffic run of the real binary is read through the package and,
independently, with h5py; the two must agree column by column.  Paths that
are not fabricsim output must give one error line, never a traceback.
"""

import os
import tempfile
import unittest

import h5py
import numpy as np

import simruns
from simruns import TINY_TREE, ScriptAsserts, fabricsim, needs_fabricsim, script

import fabricsim_analysis as fa
from fabricsim_analysis import io as fio

SCRIPTS = ("fabricsim_report.py", "fabricsim_busbw.py", "fabricsim_dnn.py", "fabricsim_compare.py")


def h5_columns(path, group):
    """{column: array} read straight with h5py (strings decoded), for comparison."""
    out = {}
    with h5py.File(path, "r") as f:
        for k, ds in f[group].items():
            if isinstance(ds, h5py.Dataset) and len(ds.shape) == 1:
                v = ds[()]
                if v.dtype.kind in "SO":
                    v = np.array([x.decode() if isinstance(x, bytes) else str(x) for x in v])
                out[k] = v
    return out


@needs_fabricsim
class TestRealFile(ScriptAsserts, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "t.h5")
        fabricsim(cls.path, *TINY_TREE, "network.link_gbps=200", "workload.messages=3",
                  "workload.message_bytes=65536", "engine.seed=7")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_read_table_equals_h5py(self):
        for group in ("links", "nodes", "flows"):
            got = fio.read_table(self.path, group)
            want = h5_columns(self.path, group)
            self.assertEqual(sorted(got), sorted(want), group)
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg="%s/%s" % (group, k))
        # the time series is a sub-group and 2-D: not a column
        self.assertNotIn("timeseries", fio.read_table(self.path, "links"))
        # chosen columns only, in the order asked
        got = fio.read_table(self.path, "flows", ["end_ns", "src", "no_such_column"])
        self.assertEqual(list(got), ["end_ns", "src"])

    def test_read_structured(self):
        rec = fio.read_structured(self.path, "flows")
        want = h5_columns(self.path, "flows")
        self.assertEqual(len(rec), len(want["src"]))
        self.assertEqual(len(rec), 8 * 3)             # 8 endpoints x 3 messages
        for k in want:
            np.testing.assert_array_equal(rec[k], want[k])
        names = fio.read_structured(self.path, "nodes", ["name", "kind"])
        self.assertEqual(names["name"][0], "ep0")
        self.assertEqual(names.dtype.names, ("name", "kind"))

    def test_attrs_and_params(self):
        with h5py.File(self.path, "r") as f:
            want = dict(f["summary"].attrs)
            events = int(f["summary"].attrs["events"])
        got = fio.read_attrs(self.path, "summary")
        self.assertEqual(sorted(got), sorted(want))
        self.assertEqual(got["events"], events)
        self.assertIsInstance(got["events"], int)
        self.assertEqual(fio.read_attrs(self.path, "meta")["seed"], 7)
        self.assertEqual(fio.read_attrs(self.path, "no_such_group"), {})
        p = fio.read_params(self.path)
        self.assertEqual(p["topology"]["endpoints"], 8)
        self.assertEqual(fio.param(p, "network.link_gbps"), 200.0)
        self.assertEqual(fio.param(p, "workload.kind"), "traffic")
        self.assertEqual(fio.param(p, "workload.message_bytes"), 65536)
        self.assertIsNone(fio.param(p, "network.no_such_key"))
        self.assertEqual(fio.param(p, "no.such.key", 3), 3)

    def test_open_file_and_has_table(self):
        with fio.open_file(self.path) as f:
            self.assertIn("meta", f)
            # an open file works as a source as well
            self.assertEqual(len(fio.read_table(f, "links")["src"]), 2 * 2 * 8)
        self.assertTrue(fio.has_table(self.path, "links"))
        self.assertFalse(fio.has_table(self.path, "collectives"))
        with self.assertRaises(fa.FabricsimFileError) as cm:
            fio.read_table(self.path, "collectives")
        self.assertIn("no /collectives", str(cm.exception))
        self.assertIsNone(fio.read_table(self.path, "collectives", required=False))

    def test_load_run(self):
        run = fa.load_run(self.path)
        links = h5_columns(self.path, "links")
        self.assertEqual(run.n_links, len(links["src"]))
        np.testing.assert_array_equal(run.links["tx_bytes"], links["tx_bytes"])
        self.assertEqual(run.class_names, ["host", "fabric", "intra_server", "board", "global"])
        self.assertEqual(run.meta["seed"], 7)
        self.assertEqual(run.topology["endpoints"], 8)
        self.assertEqual(list(run.nodes["name"][:2]), ["ep0", "ep1"])
        self.assertIn("tx_bytes", run.timeseries)
        # what every row of the schema promises: rows of the time series add up to tx_bytes
        with h5py.File(self.path, "r") as f:
            ts = f["links/timeseries/tx_bytes"][()]
        np.testing.assert_array_equal(ts.sum(axis=1), run.links["tx_bytes"])

    def test_finished_mask(self):
        self.assertTrue(fio.finished_mask({"finished": np.array([1, 0, 1], dtype=np.uint8)}).tolist()
                        == [True, False, True])
        # files from before the column: end_ns -1 (or far in the future) marks them
        self.assertEqual(fio.finished_mask({"end_ns": np.array([5.0, -1.0, 1e18])}).tolist(),
                         [True, False, False])

    def test_truncated_file(self):
        # An output file cut short (a copy that stopped half-way): one error line.
        cut = os.path.join(self.tmp.name, "cut.h5")
        with open(self.path, "rb") as src, open(cut, "wb") as dst:
            dst.write(src.read(os.path.getsize(self.path) // 2))
        for name in SCRIPTS:
            args = [cut, cut] if name == "fabricsim_compare.py" else [cut]
            res = script(name, *args)
            self.assertOneErrorLine(res)
            self.assertEqual(res.stdout, "")


class TestNotFabricsimOutput(ScriptAsserts, unittest.TestCase):
    """Each script, given something that is not fabricsim output: exit 1, one error line, no traceback."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.missing = os.path.join(d, "missing.h5")
        self.text = os.path.join(d, "notes.txt")
        with open(self.text, "w") as fh:
            fh.write("not HDF5\n")
        self.other = os.path.join(d, "other.h5")
        with h5py.File(self.other, "w") as f:
            f.create_dataset("x", data=np.arange(3))
        self.dir = os.path.join(d, "adir")
        os.mkdir(self.dir)

    def tearDown(self):
        self.tmp.cleanup()

    def cases(self):
        return ((self.missing, "no such file"), (self.text, "not an HDF5 file"),
                (self.other, "no /meta group"), (self.dir, "is a directory"))

    def test_io_raises_one_line(self):
        for path, why in self.cases():
            for call in (fa.load_run, fio.read_params, lambda p: fio.read_table(p, "links"),
                         lambda p: fio.read_attrs(p, "summary")):
                with self.assertRaises(fa.FabricsimFileError) as cm:
                    call(path)
                msg = str(cm.exception)
                self.assertIn(why, msg)
                self.assertTrue(msg.startswith(path), msg)
                self.assertNotIn("\n", msg)

    def test_every_script(self):
        for name in SCRIPTS:
            for path, why in self.cases():
                args = [path, path] if name == "fabricsim_compare.py" else [path]
                res = script(name, *args)
                self.assertOneErrorLine(res, why)
                self.assertEqual(res.stdout, "", name)

    def test_compare_second_file_bad(self):
        res = script("fabricsim_compare.py", self.other, self.missing)
        self.assertOneErrorLine(res, "no /meta group")

    def test_scripts_are_executables(self):
        for name in SCRIPTS:
            p = os.path.join(simruns.ANALYSIS, name)
            with open(p) as fh:
                self.assertEqual(fh.readline().rstrip("\n"), "#!/usr/bin/python3", name)
            self.assertTrue(os.access(p, os.X_OK), name)

    def test_bad_arguments_exit_2(self):
        for name in SCRIPTS:
            res = script(name)
            self.assertEqual(res.returncode, 2, name)
            self.assertIn("usage:", res.stderr)


if __name__ == "__main__":
    unittest.main()
