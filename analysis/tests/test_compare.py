"""Tests of analysis/fabricsim_compare.py (fabricsim_analysis.compare) on real runs.

Run with:  FABRICSIM_EXE=build/src/fabricsim /usr/bin/python3 -m unittest discover -s analysis/tests -p test_compare.py -v

Two ring allreduce runs that differ only in the link rate (400 against
200 Gb/s): the same bytes cross every host link, so its busy time doubles
exactly (+100 %) and its tx_bytes do not change (0 %); every other figure
is checked against the two files read with h5py.  A file compared with
itself gives 0 everywhere.
"""

import math
import os
import tempfile
import unittest

import h5py
import numpy as np

from simruns import DNN_TOY_MODEL, TINY_TREE, ScriptAsserts, fabricsim, needs_fabricsim, read_csv, script

from fabricsim_analysis import compare

COLL = TINY_TREE + ("workload.kind=\"collective\"", "workload.sizes=[65536, 1048576]",
                    "workload.iterations=2", "workload.warmup=1", "workload.algorithm=\"ring\"")


def rel(a, b):
    return 0.0 if a == b else (b - a) / abs(a)


def by_key(rows):
    """{(section, key, figure): row} of the CSV."""
    return {(r["section"], r["key"], r["figure"]): r for r in rows}


def h5(path, group):
    with h5py.File(path, "r") as f:
        return {k: v[()] for k, v in f[group].items() if isinstance(v, h5py.Dataset)}


def summary(path):
    with h5py.File(path, "r") as f:
        return dict(f["summary"].attrs)


@needs_fabricsim
class TestCompare(ScriptAsserts, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.a = os.path.join(d, "a400.h5")
        cls.b = os.path.join(d, "b200.h5")
        fabricsim(cls.a, *COLL)
        fabricsim(cls.b, *COLL, "network.link_gbps=200")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def run_compare(self, a, b, *extra):
        csv_path = self.path("cmp_%s_%s.csv" % (os.path.basename(a), os.path.basename(b)))
        res = script("fabricsim_compare.py", a, b, "--csv", csv_path, *extra)
        self.assertOk(res)
        self.assertEqual(res.stdout.splitlines()[-1], "csv: %s" % csv_path)
        return res, by_key(read_csv(csv_path))

    def assertRow(self, row, a, b, places=9):
        self.assertAlmostEqual(float(row["a"]), a, places=places, msg=row)
        self.assertAlmostEqual(float(row["b"]), b, places=places, msg=row)
        self.assertAlmostEqual(float(row["rel_diff"]), rel(a, b), places=places, msg=row)

    def test_against_the_files(self):
        res, rows = self.run_compare(self.a, self.b)
        sa, sb = summary(self.a), summary(self.b)
        self.assertRow(rows[("run", "", "simulated time")], sa["sim_time_ns"] / 1e3, sb["sim_time_ns"] / 1e3)
        self.assertRow(rows[("run", "", "bytes delivered")], sa["bytes_delivered"], sb["bytes_delivered"])
        self.assertEqual(float(rows[("run", "", "bytes delivered")]["rel_diff"]), 0.0)
        self.assertRow(rows[("run", "", "throughput share")], 100 * sa["throughput_share"],
                       100 * sb["throughput_share"])
        fa_, fb_ = h5(self.a, "flows"), h5(self.b, "flows")
        self.assertRow(rows[("run", "", "makespan")], (fa_["end_ns"].max() - fa_["start_ns"].min()) / 1e3,
                       (fb_["end_ns"].max() - fb_["start_ns"].min()) / 1e3)
        self.assertRow(rows[("flows", "", "FCT p99")],
                       np.percentile(fa_["end_ns"] - fa_["start_ns"], 99) / 1e3,
                       np.percentile(fb_["end_ns"] - fb_["start_ns"], 99) / 1e3)
        # collectives: the mean time of the timed iterations per size, busbw = algbw x 2(n-1)/n
        ca, cb = h5(self.a, "collectives"), h5(self.b, "collectives")
        for size in (65536, 1048576):
            key = "job 0 allreduce ring 8 ranks %d B" % size
            ta, tb = [(c["end_ns"] - c["start_ns"])[(c["bytes"] == size) & (c["iteration"] >= 0)].mean()
                      for c in (ca, cb)]
            self.assertRow(rows[("collectives", key, "time")], ta / 1e3, tb / 1e3)
            self.assertRow(rows[("collectives", key, "busbw")], size / ta * 1.75, size / tb * 1.75)
        # half the link rate: a large allreduce gets close to half the busbw
        big = float(rows[("collectives", "job 0 allreduce ring 8 ranks 1048576 B", "busbw")]["rel_diff"])
        self.assertTrue(-0.6 < big < -0.4, big)
        # links by class: sums and means of /links
        la, lb = h5(self.a, "links"), h5(self.b, "links")
        for code, name in ((0, "host"), (1, "fabric")):
            sa_, sb_ = la["class"] == code, lb["class"] == code
            self.assertRow(rows[("links", name, "tx_bytes total")], la["tx_bytes"][sa_].sum(), lb["tx_bytes"][sb_].sum())
            self.assertRow(rows[("links", name, "busy mean")], la["busy_ns"][sa_].mean() / 1e3,
                           lb["busy_ns"][sb_].mean() / 1e3)
            self.assertRow(rows[("links", name, "busy max")], la["busy_ns"][sa_].max() / 1e3,
                           lb["busy_ns"][sb_].max() / 1e3)
        # the analytic part: the same bytes over each host link at half the rate
        np.testing.assert_array_equal(la["tx_bytes"][la["class"] == 0], lb["tx_bytes"][lb["class"] == 0])
        self.assertEqual(float(rows[("links", "host", "tx_bytes total")]["rel_diff"]), 0.0)
        self.assertAlmostEqual(float(rows[("links", "host", "busy mean")]["rel_diff"]), 1.0, places=9)
        # the printed table shows the same relative differences
        host_busy = [l for l in res.stdout.splitlines() if "busy mean (us)" in l][0]
        self.assertTrue(host_busy.endswith("+100.00%"), host_busy)
        self.assertIn("per link: tx_bytes", res.stdout)

    def test_same_file_gives_zero(self):
        png = self.path("self.png")
        res, rows = self.run_compare(self.a, self.a, "--plot", png)
        self.assertPng(png)
        self.assertIn("plot: %s" % png, res.stdout)
        self.assertGreater(len(rows), 20)
        for r in rows.values():
            self.assertEqual(r["a"], r["b"], r)
            if r["a"] != "":
                self.assertEqual(float(r["rel_diff"]), 0.0, r)
        diffs = [l.split()[-1] for l in res.stdout.splitlines() if l.startswith("  ") and l.rstrip()[-1] == "%"]
        self.assertGreater(len(diffs), 20)
        self.assertEqual(set(diffs), {"0.00%"}, res.stdout)
        self.assertIn("  per link: tx_bytes equal on all 32 links", res.stdout.splitlines())
        self.assertIn("  per link: busy_ns equal on all 32 links", res.stdout.splitlines())

    def test_labels(self):
        res = script("fabricsim_compare.py", self.a, self.b, "--label", "fast", "--label", "slow")
        self.assertOk(res)
        self.assertEqual(res.stdout.splitlines()[:2], ["# A: %s (fast)" % self.a, "# B: %s (slow)" % self.b])
        self.assertOneErrorLine(script("fabricsim_compare.py", self.a, self.b, "--label", "x"), "--label")

    def test_different_runs_match_on_keys(self):
        # A DNN run against a collective run on another topology: nothing in
        # /collectives or /iterations in common (n/a), the links not one to one.
        d = self.path("dnn.h5")
        fabricsim(d, "topology.endpoints=16", "topology.radix=4", "workload.kind=\"dnn\"",
                  'workload.model="%s"' % DNN_TOY_MODEL, "workload.data_parallel=2",
                  "workload.pipeline_parallel=2", "workload.tensor_parallel=2")
        res, rows = self.run_compare(self.a, d)
        it = rows[("iterations", "job 0 toy", "compute")]
        self.assertEqual(it["a"], "")
        self.assertAlmostEqual(float(it["b"]), 0.385, places=9)
        self.assertEqual(it["rel_diff"], "")
        coll = rows[("collectives", "job 0 allreduce ring 8 ranks 65536 B", "time")]
        self.assertEqual((coll["b"], coll["rel_diff"]), ("", ""))
        self.assertIn("  per link: not compared (the files' links differ: another topology)",
                      res.stdout.splitlines())
        self.assertRow(rows[("links", "all", "links")], 32, len(h5(d, "links")["src"]))

    def test_unfinished_rows_counted(self):
        cut = self.path("cut.h5")
        fabricsim(cut, *COLL, "engine.end_ns=30000")
        c = h5(cut, "collectives")
        left = int(np.sum((c["finished"] == 0) & (c["iteration"] >= 0)))
        self.assertGreater(left, 0)
        res, rows = self.run_compare(self.a, cut)
        self.assertIn("  left out (stopped by engine.end_ns): unfinished timed operations: A 0, B %d" % left,
                      res.stdout.splitlines())
        for r in rows.values():
            self.assertFalse(r["b"] != "" and math.isnan(float(r["b"])), r)

    def test_packet_against_flow(self):
        # The same run under the flow model (issue 20), time series on: its
        # /links/timeseries queue_bytes are all zero (no queues) and its
        # events few; the comparison reads it like any other file.  A ring
        # allreduce shares no link, so the flow model's times are the
        # packet model's (within 1%), and every byte crosses the same host
        # links (tx_bytes equal there, 0%).
        fl = self.path("flow.h5")
        fabricsim(fl, *COLL, 'network.model="flow"', "output.interval_ns=1000")
        with h5py.File(fl, "r") as f:
            self.assertEqual(int(np.abs(f["links/timeseries/queue_bytes"][()]).max()), 0)
        png = self.path("packet_flow.png")
        res, rows = self.run_compare(self.a, fl, "--label", "packet", "--label", "flow", "--plot", png)
        self.assertPng(png)
        for size in (65536, 1048576):
            r = rows[("collectives", "job 0 allreduce ring 8 ranks %d B" % size, "time")]
            self.assertLess(abs(float(r["rel_diff"])), 0.01, r)
        self.assertEqual(float(rows[("links", "host", "tx_bytes total")]["rel_diff"]), 0.0)
        self.assertEqual(res.stdout.splitlines()[1], "# B: %s (flow)" % fl)

    def test_module(self):
        a, b = compare.load_side(self.a), compare.load_side(self.b)
        rows = compare.compare(a, b)
        secs = [r[0] for r in rows]
        self.assertEqual(sorted(set(secs), key=compare.SECTIONS.index), ["run", "flows", "collectives", "links"])
        self.assertEqual(secs, sorted(secs, key=compare.SECTIONS.index))


class TestRelDiff(unittest.TestCase):
    def test_rel_diff(self):
        from fabricsim_analysis.stats import rel_diff
        self.assertEqual(rel_diff(2.0, 3.0), 0.5)
        self.assertEqual(rel_diff(-2.0, -3.0), -0.5)
        self.assertEqual(rel_diff(0, 0), 0.0)
        self.assertIsNone(rel_diff(0, 1))
        self.assertIsNone(rel_diff(None, 1))
        self.assertIsNone(rel_diff(1.0, float("nan")))
        self.assertEqual(compare.fmt_rel_fine(0.0), "0.00%")
        self.assertEqual(compare.fmt_rel_fine(0.25), "+25.00%")
        self.assertEqual(compare.fmt_rel_fine(-1e-7), "-1e-05%")


if __name__ == "__main__":
    unittest.main()
