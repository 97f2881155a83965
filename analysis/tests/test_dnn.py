"""Tests of analysis/fabricsim_dnn.py (fabricsim_analysis.dnn) on real runs.

Run with:  FABRICSIM_EXE=build/src/fabricsim /usr/bin/python3 -m unittest discover -s analysis/tests -p test_dnn.py -v

The toy model of tests/app (8 layers of 2000 ns forward and 4000 ns backward
per sample, minibatch 64, optimizer 1000 ns) on 8 endpoints as
D 2 x P 2 x O 2: each endpoint computes 64/2 samples x 8/2 layers x
(2000 + 4000) ns / 2 shards + 1000 ns = 385 us per iteration, of which
128 us forward, 256 us backward and 1 us optimizer.  The script's means are
checked against that and against /iterations read with h5py.
"""

import os
import re
import tempfile
import unittest

import h5py
import numpy as np

from simruns import DNN_TOY_MODEL, ScriptAsserts, fabricsim, needs_fabricsim, read_csv, script

from fabricsim_analysis import dnn

LAYOUT = ('workload.model="%s"' % DNN_TOY_MODEL, "workload.data_parallel=2", "workload.pipeline_parallel=2",
          "workload.tensor_parallel=2", "workload.micro_batches=2")
DNN = ("topology.kind=\"fat_tree\"", "topology.endpoints=8", "topology.radix=4", "workload.kind=\"dnn\"") \
    + LAYOUT + ("workload.iterations=2", "workload.warmup=1")
COMPUTE_MS, FORWARD_MS, BACKWARD_MS, OPTIMIZER_MS = 0.385, 0.128, 0.256, 0.001


def iterations(path):
    with h5py.File(path, "r") as f:
        return {k: v[()] for k, v in f["iterations"].items()}


@needs_fabricsim
class TestDnn(ScriptAsserts, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.full = os.path.join(d, "full.h5")
        cls.cut = os.path.join(d, "cut.h5")
        fabricsim(cls.full, *DNN, "output.timeline=true")
        # Stop half-way through the second timed iteration: it is left out.
        it = iterations(cls.full)
        cls.stop = (it["end_ns"][1] + it["end_ns"][2]) / 2
        fabricsim(cls.cut, *DNN, "engine.end_ns=%d" % cls.stop)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def test_means_against_model_and_file(self):
        csv_path = self.path("full.csv")
        res = script("fabricsim_dnn.py", self.full, "--csv", csv_path)
        self.assertOk(res)
        self.assertEqual(res.stdout.splitlines()[0], "# %s (fat_tree)" % self.full)
        rows = read_csv(csv_path)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual((r["job"], r["model"], r["iterations"], r["unfinished"]), ("0", "toy", "2", "0"))
        self.assertAlmostEqual(float(r["compute_ms"]), COMPUTE_MS, places=9)
        self.assertAlmostEqual(float(r["forward_ms"]), FORWARD_MS, places=9)
        self.assertAlmostEqual(float(r["backward_ms"]), BACKWARD_MS, places=9)
        self.assertAlmostEqual(float(r["optimizer_ms"]), OPTIMIZER_MS, places=9)
        it = iterations(self.full)
        timed = it["iteration"] >= 0
        self.assertEqual(list(it["iteration"]), [-1, 0, 1])
        self.assertAlmostEqual(float(r["time_ms"]), it["time_ns"][timed].mean() / 1e6, places=9)
        self.assertAlmostEqual(float(r["exposed_comm_ms"]), float(r["time_ms"]) - COMPUTE_MS, places=9)
        for col in ("data_parallel", "pipeline", "tensor_parallel", "alltoall"):
            self.assertAlmostEqual(float(r[col + "_ms"]), it[col + "_ns"][timed].mean() / 1e6, places=9)
        # the printed row, to three decimals
        row = [l for l in res.stdout.splitlines() if re.match(r"^ +0 +toy ", l)]
        self.assertEqual(len(row), 1, res.stdout)
        cells = row[0].split()
        self.assertAlmostEqual(float(cells[2]), float(r["time_ms"]), delta=0.0006)
        self.assertEqual(cells[3], "0.385")
        self.assertEqual(cells[5:8], ["0.128", "0.256", "0.001"])

    def test_unfinished_iteration_left_out(self):
        full, cut = iterations(self.full), iterations(self.cut)
        self.assertEqual(list(cut["finished"]), [1, 1, 0])
        self.assertTrue(np.isnan(cut["time_ns"][2]))
        csv_path = self.path("cut.csv")
        res = script("fabricsim_dnn.py", self.cut, "--csv", csv_path)
        self.assertOk(res)
        self.assertNotIn("nan", res.stdout)
        self.assertIn("# job 0: left out 1 unfinished timed iteration (stopped by engine.end_ns); mean of 1",
                      res.stdout.splitlines())
        r = read_csv(csv_path)[0]
        self.assertEqual((r["iterations"], r["unfinished"]), ("1", "1"))
        # the mean is the one finished timed iteration, the same as in the full run
        self.assertAlmostEqual(float(r["time_ms"]), full["time_ns"][1] / 1e6, places=9)
        self.assertAlmostEqual(float(r["compute_ms"]), COMPUTE_MS, places=9)

    def test_bars_and_gantt(self):
        bars, gantt = self.path("bars.png"), self.path("gantt.png")
        res = script("fabricsim_dnn.py", self.full, self.cut, "--label", "full", "--label", "cut",
                     "--bars", bars, "--gantt", gantt)
        self.assertOk(res)
        with h5py.File(self.full, "r") as f:
            first = int(f["timeline/endpoint"][()][f["timeline/job"][()] == 0].min())
        self.assertEqual(res.stdout.splitlines()[-2:],
                         ["bars: %s" % bars, "gantt: %s (job 0, endpoint %d, iteration 0)" % (gantt, first)])
        self.assertPng(bars)
        self.assertPng(gantt)
        # the Gantt chart of a chosen endpoint and warm-up iteration
        res = script("fabricsim_dnn.py", self.full, "--gantt", gantt, "--endpoint", "5", "--iteration", "-1")
        self.assertOk(res)
        self.assertIn("(job 0, endpoint 5, iteration -1)", res.stdout)

    def test_errors(self):
        self.assertOneErrorLine(script("fabricsim_dnn.py", self.cut, "--gantt", self.path("g.png")),
                                "no /timeline: rerun with --set output.timeline=true")
        self.assertOneErrorLine(script("fabricsim_dnn.py", self.full, "--gantt", self.path("g.png"),
                                       "--endpoint", "99"), "endpoint 99 is not in job 0")
        self.assertOneErrorLine(script("fabricsim_dnn.py", self.full, "--label", "a", "--label", "b"),
                                "one --label per run file")
        coll = self.path("coll.h5")
        fabricsim(coll, "topology.endpoints=8", "topology.radix=4", "workload.kind=\"collective\"",
                  "workload.sizes=[65536]")
        self.assertOneErrorLine(script("fabricsim_dnn.py", coll), "no /iterations")

    def test_two_jobs(self):
        out = self.path("jobs.h5")
        fabricsim(out, "topology.endpoints=16", "topology.radix=4", "workload.kind=\"dnn\"", *LAYOUT,
                  config="[[jobs]]\nstart_ns = 0\n[[jobs]]\nstart_ns = 5000\nschedule = \"gpipe\"\n")
        kind, jobs = dnn.load(out)
        self.assertEqual(kind, "fat_tree")
        self.assertEqual([j["job"] for j in jobs], [0, 1])
        it = iterations(out)
        for j in jobs:
            sel = (it["job"] == j["job"]) & (it["iteration"] >= 0)
            self.assertAlmostEqual(j["time"], it["time_ns"][sel].mean(), places=6)
            self.assertAlmostEqual(j["compute"] / 1e6, COMPUTE_MS, places=9)
        res = script("fabricsim_dnn.py", out, "--bars", self.path("jobs.png"))
        self.assertOk(res)
        self.assertEqual(len([l for l in res.stdout.splitlines() if re.match(r"^ +[01] +toy ", l)]), 2)


if __name__ == "__main__":
    unittest.main()
