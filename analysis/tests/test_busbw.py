"""Tests of analysis/fabricsim_busbw.py (fabricsim_analysis.busbw) on real runs.

Run with:  FABRICSIM_EXE=build/src/fabricsim /usr/bin/python3 -m unittest discover -s analysis/tests -p test_busbw.py -v

Tiny collective runs (8 ranks on an 8-endpoint fat tree); the script's
figures are checked against /collectives read with h5py and against NCCL's
bus bandwidth factors: busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for
allgather, 1 for broadcast.
"""

import os
import re
import shutil
import tempfile
import unittest

import h5py
import numpy as np

from simruns import TINY_TREE, ScriptAsserts, fabricsim, needs_fabricsim, read_csv, script

from fabricsim_analysis import busbw

N = 8
SIZES = (65536, 1048576)
LINK_GBYTES = 400 / 8.0      # network.link_gbps default, in GB/s
COLL = TINY_TREE + ("workload.kind=\"collective\"", "workload.sizes=[%d, %d]" % SIZES,
                    "workload.iterations=2", "workload.warmup=1")


def expected(path):
    """{size: (mean time ns, algbw GB/s)} over the finished timed rows, read with h5py."""
    with h5py.File(path, "r") as f:
        c = f["collectives"]
        b, it, fin = c["bytes"][()], c["iteration"][()], c["finished"][()]
        t = c["end_ns"][()] - c["start_ns"][()]
    out = {}
    for s in np.unique(b):
        sel = (b == s) & (it >= 0) & (fin == 1)
        if sel.any():
            out[int(s)] = (t[sel].mean(), s / t[sel].mean())
    return out


def table_rows(stdout):
    """The numeric rows the script prints: [(size, time_us, algbw, busbw)]."""
    rows = []
    for line in stdout.splitlines():
        m = re.match(r"^ +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)$", line)
        if m:
            rows.append((int(m.group(1)),) + tuple(float(g) for g in m.groups()[1:]))
    return rows


@needs_fabricsim
class TestBusbw(ScriptAsserts, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.ring = os.path.join(d, "ring.h5")
        cls.allgather = os.path.join(d, "allgather.h5")
        cls.bcast = os.path.join(d, "bcast.h5")
        cls.cut = os.path.join(d, "cut.h5")
        fabricsim(cls.ring, *COLL, "workload.op=\"allreduce\"", "workload.algorithm=\"ring\"")
        fabricsim(cls.allgather, *COLL, "workload.op=\"allgather\"")
        fabricsim(cls.bcast, *COLL, "workload.op=\"broadcast\"")
        # Three 1 MiB allreduces take about 41 us each, so engine.end_ns stops
        # the third; none of the 16 MiB ones finishes.
        fabricsim(cls.cut, *TINY_TREE, "workload.kind=\"collective\"", "workload.sizes=[1048576, 16777216]",
                  "workload.iterations=3", "engine.end_ns=100000")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def check_factor(self, path, factor, label_part):
        csv_path = self.path(os.path.basename(path) + ".csv")
        res = script("fabricsim_busbw.py", path, "--csv", csv_path)
        self.assertOk(res)
        self.assertIn(label_part, res.stdout.splitlines()[0])
        want = expected(path)
        rows = read_csv(csv_path)
        self.assertEqual([int(r["size_bytes"]) for r in rows], list(SIZES))
        for r in rows:
            s = int(r["size_bytes"])
            t_ns, algbw = want[s]
            self.assertAlmostEqual(float(r["time_us"]), t_ns / 1e3, places=9)
            self.assertAlmostEqual(float(r["algbw_GBps"]), algbw, places=9)
            self.assertAlmostEqual(float(r["busbw_GBps"]), algbw * factor, places=9)
            self.assertEqual(int(r["iterations"]), 2)
            self.assertEqual(int(r["ranks"]), N)
        # the printed table says the same, to its two decimals
        printed = table_rows(res.stdout)
        self.assertEqual(len(printed), len(SIZES))
        for (s, t_us, alg, bus), r in zip(printed, rows):
            self.assertAlmostEqual(t_us, float(r["time_us"]), delta=0.006)
            self.assertAlmostEqual(alg, float(r["algbw_GBps"]), delta=0.006)
            self.assertAlmostEqual(bus, float(r["busbw_GBps"]), delta=0.006)
        return rows

    def test_ring_allreduce(self):
        rows = self.check_factor(self.ring, 2 * (N - 1) / N, "fat_tree allreduce ring (8 ranks)")
        bus = [float(r["busbw_GBps"]) for r in rows]
        # A ring allreduce cannot beat the link rate; on a nonblocking tree a
        # large one comes close to it, a small one is latency-bound.
        self.assertLess(max(bus), LINK_GBYTES)
        self.assertGreater(bus[1], 0.7 * LINK_GBYTES)
        self.assertLess(bus[0], bus[1])

    def test_allgather_and_broadcast_factors(self):
        self.check_factor(self.allgather, (N - 1) / N, "allgather")
        rows = self.check_factor(self.bcast, 1.0, "broadcast")
        for r in rows:
            self.assertEqual(float(r["busbw_GBps"]), float(r["algbw_GBps"]))

    def test_unfinished_left_out_and_counted(self):
        with h5py.File(self.cut, "r") as f:
            c = f["collectives"]
            fin, it, b = c["finished"][()], c["iteration"][()], c["bytes"][()]
        unfinished = int(np.sum((fin == 0) & (it >= 0)))
        # what this test needs of the run: a size with finished and unfinished rows, one with none finished
        self.assertTrue(np.any((b == 1048576) & (fin == 1)) and np.any((b == 1048576) & (fin == 0)), fin)
        self.assertFalse(np.any((b == 16777216) & (fin == 1)), fin)
        csv_path = self.path("cut.csv")
        res = script("fabricsim_busbw.py", self.cut, "--csv", csv_path)
        self.assertOk(res)
        self.assertNotIn("nan", res.stdout)
        note = [l for l in res.stdout.splitlines() if l.startswith("# left out:")]
        self.assertEqual(note, ["# left out: %d unfinished timed operations (stopped by engine.end_ns); "
                                "no finished one of size 16777216" % unfinished], res.stdout)
        rows = read_csv(csv_path)
        self.assertEqual([int(r["size_bytes"]) for r in rows], [1048576])
        want_t, want_alg = expected(self.cut)[1048576]
        self.assertAlmostEqual(float(rows[0]["time_us"]), want_t / 1e3, places=9)
        self.assertAlmostEqual(float(rows[0]["busbw_GBps"]), want_alg * 2 * (N - 1) / N, places=9)
        self.assertEqual(int(rows[0]["iterations"]), int(np.sum((b == 1048576) & (fin == 1))))
        self.assertEqual(int(rows[0]["unfinished"]), unfinished)

    def test_file_without_finished_column(self):
        # Files written before the column existed: end_ns -1 marks what did not finish.
        old = self.path("old.h5")
        shutil.copy(self.cut, old)
        with h5py.File(old, "a") as f:
            del f["collectives/finished"]
        a, b = script("fabricsim_busbw.py", self.cut), script("fabricsim_busbw.py", old)
        self.assertOk(b)
        self.assertEqual(a.stdout.replace(self.cut, "X"), b.stdout.replace(old, "X"))

    def test_several_files_labels_and_plot(self):
        png = self.path("bw.png")
        res = script("fabricsim_busbw.py", self.ring, self.allgather, "--label", "ring", "--label", "ag",
                     "--png", png)
        self.assertOk(res)
        heads = [l for l in res.stdout.splitlines() if l.startswith("# ") and ": " in l and "size" not in l]
        self.assertEqual(heads, ["# ring: %s" % self.ring, "# ag: %s" % self.allgather])
        self.assertEqual(res.stdout.splitlines()[-1], "plot: %s" % png)
        self.assertPng(png)
        # --plot is the same as --png
        png2 = self.path("bw2.png")
        self.assertOk(script("fabricsim_busbw.py", self.ring, "--plot", png2))
        self.assertPng(png2)

    def test_label_count_and_wrong_kind_of_run(self):
        self.assertOneErrorLine(script("fabricsim_busbw.py", self.ring, "--label", "a", "--label", "b"),
                                "one --label per run file")
        traffic = self.path("traffic.h5")
        fabricsim(traffic, *TINY_TREE, "workload.messages=1", "workload.message_bytes=4096")
        self.assertOneErrorLine(script("fabricsim_busbw.py", traffic), "no /collectives")

    def test_module_matches_script(self):
        curves = busbw.collective_curves(self.ring)
        self.assertEqual(len(curves), 1)
        c = curves[0]
        self.assertEqual((c["op"], c["algorithm"], c["ranks"], c["unfinished"]), ("allreduce", "ring", 8, 0))
        label, sizes, t, alg, bus = busbw.load(self.ring)[0]
        np.testing.assert_allclose(bus, alg * 2 * (N - 1) / N, rtol=1e-12)


@needs_fabricsim
class TestJobs(ScriptAsserts, unittest.TestCase):
    """[[jobs]] with two collective jobs: one curve per job."""

    def test_one_curve_per_job(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "jobs.h5")
            fabricsim(out, config='[topology]\nkind = "fat_tree"\nendpoints = 16\nradix = 4\n'
                      '[workload]\nkind = "collective"\nranks = 8\nsizes = [262144]\niterations = 2\n'
                      '[[jobs]]\nalgorithm = "ring"\n[[jobs]]\nalgorithm = "bidirectional_ring"\n')
            res = script("fabricsim_busbw.py", out, "--csv", os.path.join(d, "j.csv"))
            self.assertOk(res)
            heads = [l for l in res.stdout.splitlines() if l.startswith("# job")]
            self.assertEqual(len(heads), 2, res.stdout)
            self.assertIn("job 0: fat_tree allreduce ring (8 ranks)", heads[0])
            self.assertIn("job 1: fat_tree allreduce bidirectional_ring (8 ranks)", heads[1])
            rows = read_csv(os.path.join(d, "j.csv"))
            with h5py.File(out, "r") as f:
                c = f["collectives"]
                job, t = c["job"][()], c["end_ns"][()] - c["start_ns"][()]
            for r in rows:
                j = int(r["job"])
                self.assertAlmostEqual(float(r["time_us"]), t[job == j].mean() / 1e3, places=9)


if __name__ == "__main__":
    unittest.main()
