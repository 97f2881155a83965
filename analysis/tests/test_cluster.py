"""Tests of analysis/fabricsim_cluster.py (fabricsim_analysis.cluster).

Run with:  FABRICSIM_EXE=build/src/fabricsim /usr/bin/python3 -m unittest discover -s analysis/tests -p test_cluster.py -v

Synthetic /jobs tables written here with the real layout (fixed-length
strings, uint32 counts, float64 times) and hand-picked times: the mean JWT,
JRT and JCT, the median and p99 JCT (numpy's default percentile), the
stability (population std-dev of JCT per class, then the mean over the
classes), the refusal sums and the busy-GPU step function are checked
against values worked out by hand, with a job never admitted and one
unfinished left out of the means.  Real runs: a three-job fifo queue on a
16-GPU leaf-spine with the vclos and whole_server schedulers, whose CSV
means are checked against means computed here from the raw /jobs datasets.
Error cases: a run without a queue, files without /jobs or its columns, a
missing file, two runs of one label.
"""

import os
import re
import tempfile
import unittest

import h5py
import numpy as np

from simruns import ScriptAsserts, fabricsim, needs_fabricsim, read_csv, script

from fabricsim_analysis import cluster

# --------------------------------------------------------------------------
# synthetic files
# --------------------------------------------------------------------------

# kind, op, algorithm, endpoints, model, arrival, start, end, reserved, refused_gpus, refused_network, stage
JOBS = [
    ("collective", "allreduce", "ring", 4, "", 0.0, 1000.0, 5000.0, 4, 0, 0, "server"),
    ("collective", "allreduce", "ring", 4, "", 500.0, 2000.0, 9500.0, 4, 1, 0, "server"),
    ("collective", "allreduce", "ring", 8, "", 1000.0, 5000.0, 12000.0, 8, 2, 1, "leaf"),
    ("dnn", "", "", 6, "gpt", 2000.0, 9500.0, 20000.0, 8, 0, 2, "vclos"),
    ("dnn", "", "", 6, "gpt", 3000.0, 12000.0, 15000.0, 0, 0, 0, "vclos"),    # reserved 0: its 6 endpoints
    ("collective", "allreduce", "ring", 8, "", 4000.0, -1.0, -1.0, 0, 4, 2, ""),     # never admitted
    ("collective", "allgather", "direct", 4, "", 5000.0, 15000.0, -1.0, 4, 0, 1, "server"),  # unfinished
]
CLUSTER = 32
SIM_TIME = 25000.0

# By hand, over the five finished jobs (0..4):
JWT = [1000.0, 1500.0, 4000.0, 7500.0, 9000.0]
JRT = [4000.0, 7500.0, 7000.0, 10500.0, 3000.0]
JCT = [5000.0, 9000.0, 11000.0, 18000.0, 12000.0]
MEAN_JWT, MEAN_JRT, MEAN_JCT = 4600.0, 6400.0, 11000.0
MEDIAN_JCT = 11000.0
P99_JCT = 12000.0 + 0.96 * (18000.0 - 12000.0)   # linear, at index 0.99 * 4 = 3.96 of the sorted JCTs
# classes: ring x4 {5000, 9000}: std 2000; ring x8 {11000}: 0 (job 5 never ran); gpt x6 {18000, 12000}: 3000
STABILITY = (2000.0 + 0.0 + 3000.0) / 3
REFUSED_GPUS, REFUSED_NETWORK = 7, 6
# busy GPUs: (from time, busy) -- the step function; job 6 still holds 4 at the end (sim_time 25000)
STEPS = [(0.0, 0), (1000.0, 4), (2000.0, 8), (5000.0, 12), (9500.0, 16), (12000.0, 14), (15000.0, 12),
         (20000.0, 4)]
BUSY_INTEGRAL = 4 * 1000 + 8 * 3000 + 12 * 4500 + 16 * 2500 + 14 * 3000 + 12 * 5000 + 4 * 5000  # GPU-ns
MEAN_UTIL = BUSY_INTEGRAL / (CLUSTER * (SIM_TIME - 0.0))  # from the first arrival (0) to sim_time


def config(queue="fifo", scheduler="vclos", routing="ecmp", kind="leaf_spine"):
    return ('[topology]\nkind = "%s"\n[routing]\nalgorithm = "%s"\n[workload]\nkind = "collective"\n'
            'queue = "%s"\nscheduler = "%s"\n' % (kind, routing, queue, scheduler))


def write_jobs(path, jobs, cfg=None, endpoints=CLUSTER, sim_time=SIM_TIME, drop=()):
    """A fabricsim-like cluster queue run: /meta (config), /topology and /summary attributes, /jobs."""
    with h5py.File(path, "w") as f:
        m = f.create_group("meta")
        m.attrs["version"] = "0.1.0-test"
        m.attrs["config"] = config() if cfg is None else cfg
        if endpoints is not None:
            f.create_group("topology").attrs["endpoints"] = np.uint64(endpoints)
        f.create_group("summary").attrs["sim_time_ns"] = np.float64(sim_time)
        g = f.create_group("jobs")
        cols = list(zip(*jobs)) if jobs else [()] * 12

        def put(name, data):
            if name not in drop:
                g.create_dataset(name, data=data)
        for k, name in ((0, "kind"), (1, "op"), (2, "algorithm"), (4, "model"), (11, "stage")):
            put(name, np.array(cols[k], dtype="S") if jobs else np.zeros(0, dtype="S1"))
        put("schedule", np.array([b""] * len(jobs), dtype="S1"))
        for k, name in ((3, "endpoints"), (8, "reserved"), (9, "refused_gpus"), (10, "refused_network")):
            put(name, np.array(cols[k], dtype=np.uint32))
        for k, name in ((5, "arrival_ns"), (6, "start_ns"), (7, "end_ns")):
            put(name, np.array(cols[k], dtype=np.float64))
        for name in ("data_parallel", "pipeline_parallel", "tensor_parallel", "expert_parallel", "micro_batches",
                     "virtual_leaves", "virtual_spines"):
            put(name, np.zeros(len(jobs), dtype=np.uint32))
        put("deadline_ns", np.zeros(len(jobs)))
        put("mean_iteration_ns", np.zeros(len(jobs)))


def table_row(stdout, name):
    """The cells of the printed table's row of run ``name``."""
    for line in stdout.splitlines():
        cells = line.split()
        if len(cells) > 10 and cells[0] == name:
            return cells
    return None


class TestSynthetic(ScriptAsserts, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.file = cls.path("mix.h5")
        write_jobs(cls.file, JOBS)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.tmp.name, name)

    def test_hand_values(self):
        # the hand values are what the definitions give
        self.assertEqual(list(np.array(JWT) + np.array(JRT)), JCT)
        self.assertEqual((np.mean(JWT), np.mean(JRT), np.mean(JCT)), (MEAN_JWT, MEAN_JRT, MEAN_JCT))
        self.assertAlmostEqual(float(np.percentile(JCT, 99)), P99_JCT, places=9)
        self.assertEqual(float(np.median(JCT)), MEDIAN_JCT)
        self.assertEqual(np.std([5000.0, 9000.0]), 2000.0)  # population std-dev (ddof = 0)

    def test_metrics(self):
        j = cluster.load_jobs(self.file)
        self.assertEqual((j["queue"], j["scheduler"], j["routing"], j["topology"]),
                         ("fifo", "vclos", "ecmp", "leaf_spine"))
        self.assertEqual(cluster.scheme(j), "vclos/ecmp/leaf_spine")
        self.assertEqual(j["cluster_endpoints"], CLUSTER)
        m = cluster.metrics(j)
        self.assertEqual((m["jobs"], m["admitted"], m["finished"], m["never_admitted"], m["unfinished"]),
                         (7, 6, 5, 1, 1))
        self.assertEqual(list(m["jwt"]), JWT)
        self.assertEqual(list(m["jrt"]), JRT)
        self.assertEqual(list(m["jct"]), JCT)
        self.assertEqual((m["mean_jwt"], m["mean_jrt"], m["mean_jct"]), (MEAN_JWT, MEAN_JRT, MEAN_JCT))
        self.assertEqual(m["median_jct"], MEDIAN_JCT)
        self.assertAlmostEqual(m["p99_jct"], P99_JCT, places=9)
        self.assertAlmostEqual(m["stability"], STABILITY, places=9)
        self.assertEqual((m["classes"], m["single_classes"]), (3, 1))
        self.assertEqual(m["class_std"][("dnn", "", "", 6, "gpt")], 3000.0)
        self.assertEqual((m["refused_gpus"], m["refused_network"]), (REFUSED_GPUS, REFUSED_NETWORK))
        self.assertEqual(m["stages"], {"server": 3, "leaf": 1, "vclos": 2})
        self.assertAlmostEqual(m["utilization"], MEAN_UTIL, places=12)

    def test_utilization_steps(self):
        j = cluster.load_jobs(self.file)
        u = cluster.utilization(j)
        self.assertEqual(list(u["times"]), [t for t, _ in STEPS[1:]])
        self.assertEqual(list(u["busy"]), [b for _, b in STEPS[1:]])
        np.testing.assert_array_equal(u["fraction"], np.array([b for _, b in STEPS[1:]]) / CLUSTER)
        self.assertEqual((u["start"], u["end"], u["endpoints"]), (0.0, SIM_TIME, CLUSTER))
        self.assertAlmostEqual(u["mean"], MEAN_UTIL, places=12)
        # at chosen times: a change at t counts at t
        for t, want in ((0, 0), (999, 0), (1000, 4), (4999, 8), (5000, 12), (9499, 12), (9500, 16),
                        (12000, 14), (14999, 14), (19999, 12), (20000, 4), (30000, 4)):
            self.assertEqual(cluster.busy_at(u, t), want, t)
        # all jobs finished: the series ends with the last end_ns, not sim_time
        done = self.path("done.h5")
        write_jobs(done, JOBS[:5])
        u = cluster.utilization(cluster.load_jobs(done))
        self.assertEqual(u["end"], 20000.0)
        self.assertEqual(u["busy"][-1], 0)
        self.assertEqual(list(u["busy"]), [4, 8, 12, 16, 14, 8, 0])  # without job 6's 4 GPUs from 15000
        integral = 4 * 1000 + 8 * 3000 + 12 * 4500 + 16 * 2500 + 14 * 3000 + 8 * 5000
        self.assertAlmostEqual(u["mean"], integral / (CLUSTER * 20000.0), places=12)

    def test_script_and_csv(self):
        csv_path = self.path("mix.csv")
        png = self.path("cdf.png")
        upng = self.path("util.png")
        res = script("fabricsim_cluster.py", self.file, "--label", "vc", "--csv", csv_path, "--plot", png,
                     "--utilization", upng)
        self.assertOk(res)
        (row,) = read_csv(csv_path)
        self.assertEqual((row["label"], row["file"], row["scheduler"], row["queue"]),
                         ("vc", self.file, "vclos", "fifo"))
        self.assertEqual([int(row[k]) for k in ("jobs", "admitted", "finished", "never_admitted", "unfinished")],
                         [7, 6, 5, 1, 1])
        for key, want in (("mean_jwt_ms", MEAN_JWT), ("mean_jrt_ms", MEAN_JRT), ("mean_jct_ms", MEAN_JCT),
                          ("median_jct_ms", MEDIAN_JCT), ("p99_jct_ms", P99_JCT), ("stability_ms", STABILITY)):
            self.assertAlmostEqual(float(row[key]), want / 1e6, places=15, msg=key)
        self.assertEqual((int(row["refused_gpus"]), int(row["refused_network"])), (REFUSED_GPUS, REFUSED_NETWORK))
        self.assertAlmostEqual(float(row["gpu_utilization"]), MEAN_UTIL, places=12)
        cells = table_row(res.stdout, "vc")
        self.assertIsNotNone(cells, res.stdout)
        self.assertEqual(cells[1:5], ["vclos/ecmp/leaf_spine", "fifo", "7", "5"])
        self.assertEqual(cells[5:11], ["%.4f" % (v / 1e6) for v in (MEAN_JWT, MEAN_JRT, MEAN_JCT, MEDIAN_JCT,
                                                                    P99_JCT, STABILITY)])
        self.assertEqual(cells[11:], [str(REFUSED_GPUS), str(REFUSED_NETWORK), "%.1f%%" % (100 * MEAN_UTIL)])
        self.assertIn("# vc: left out 1 job never admitted and 1 unfinished job (admitted, stopped by "
                      "engine.end_ns)", res.stdout)
        self.assertIn("# vc: 3 job classes (1 with one finished job, std-dev 0)", res.stdout)
        self.assertEqual(res.stdout.splitlines()[-3:], ["plot: %s" % png, "utilization: %s" % upng,
                                                        "csv: %s" % csv_path])
        self.assertPng(png)
        self.assertPng(upng)

    def test_no_config_and_no_size(self):
        # a file without a config is a queue run when some job finished; without a size, no utilization
        bare = self.path("bare.h5")
        write_jobs(bare, JOBS, cfg="", endpoints=None)
        j = cluster.load_jobs(bare)
        self.assertIsNone(j["queue"])
        self.assertEqual(cluster.scheme(j), "n/a")
        self.assertIsNone(j["cluster_endpoints"])
        m = cluster.metrics(j)
        self.assertEqual(m["mean_jct"], MEAN_JCT)
        self.assertTrue(np.isnan(m["utilization"]))
        res = script("fabricsim_cluster.py", bare)
        self.assertOk(res)
        self.assertEqual(table_row(res.stdout, "bare")[-1], "n/a")
        self.assertOneErrorLine(script("fabricsim_cluster.py", bare, "--utilization", self.path("u.png")),
                                "the cluster's size is unknown")
        # a queue run that engine.end_ns stopped before any job finished: n/a, not an error
        early = self.path("early.h5")
        write_jobs(early, [r[:7] + (-1.0,) + r[8:] for r in JOBS])
        m = cluster.metrics(cluster.load_jobs(early))
        self.assertEqual((m["finished"], m["unfinished"]), (0, 6))
        self.assertTrue(np.isnan(m["mean_jct"]) and np.isnan(m["stability"]))
        res = script("fabricsim_cluster.py", early, "--plot", self.path("early.png"))
        self.assertOk(res)
        self.assertIn("n/a", table_row(res.stdout, "early"))

    def test_errors(self):
        noq = self.path("noqueue.h5")
        write_jobs(noq, [r[:6] + (r[5], -1.0) + r[8:] for r in JOBS], cfg=config(queue="none", scheduler="free"))
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.file, noq),
                                '%s: not a cluster queue run (workload.queue = "none"' % noq)
        unk = self.path("unknown.h5")
        write_jobs(unk, [r[:6] + (r[5], -1.0) + r[8:] for r in JOBS], cfg="")
        self.assertOneErrorLine(script("fabricsim_cluster.py", unk), "every job")
        for col in ("arrival_ns", "end_ns"):
            p = self.path("no_%s.h5" % col)
            write_jobs(p, JOBS, drop=(col,))
            self.assertOneErrorLine(script("fabricsim_cluster.py", p), "/jobs has no %s column" % col)
        nojobs = self.path("nojobs.h5")
        with h5py.File(nojobs, "w") as f:
            f.create_group("meta").attrs["config"] = ""
        self.assertOneErrorLine(script("fabricsim_cluster.py", nojobs), "not a cluster queue run (no /jobs table)")
        bad = self.path("strings.h5")
        write_jobs(bad, JOBS, drop=("start_ns",))
        with h5py.File(bad, "a") as f:
            f["jobs"].create_dataset("start_ns", data=np.array([b"x"] * len(JOBS)))
        self.assertOneErrorLine(script("fabricsim_cluster.py", bad), "/jobs/start_ns: expected numbers")
        missing = self.path("missing.h5")
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.file, missing), "%s: no such file" % missing)
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.file, self.file),
                                "run name mix for two files")
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.file, self.file, "--label", "a", "--label", "a"),
                                "--label a names two runs")
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.file, "--label", "a", "--label", "b"),
                                "one --label per run file")
        res = script("fabricsim_cluster.py", self.file, "--utilization", self.tmp.name)
        self.assertEqual(res.returncode, 2)
        self.assertIn("--utilization", res.stderr)


# --------------------------------------------------------------------------
# real runs: a fifo queue of three allreduce jobs on 16 GPUs (8 servers of 2, 4 leaves)
# --------------------------------------------------------------------------

QUEUE = """[topology]
kind = "leaf_spine"
leaves = 4
spines = 4
servers_per_leaf = 2
gpus_per_server = 2
radix = 8
[network]
model = "flow"
[workload]
kind = "collective"
op = "allreduce"
algorithm = "ring"
queue = "fifo"
scheduler = "vclos"
sizes = [1048576]
[[jobs]]
ranks = 4
[[jobs]]
ranks = 8
start_ns = 100
[[jobs]]
ranks = 16
start_ns = 200
"""


def raw_means(path):
    """(mean JWT, JRT, JCT) in ns over the finished jobs, and the refusal sums, straight from /jobs."""
    with h5py.File(path, "r") as f:
        j = {k: f["jobs/" + k][()] for k in ("arrival_ns", "start_ns", "end_ns", "refused_gpus", "refused_network")}
    done = (j["start_ns"] >= 0) & (j["end_ns"] >= 0)
    a, s, e = j["arrival_ns"][done], j["start_ns"][done], j["end_ns"][done]
    return (float(np.mean(s - a)), float(np.mean(e - s)), float(np.mean(e - a)),
            int(j["refused_gpus"].sum()), int(j["refused_network"].sum()), int(done.sum()))


@needs_fabricsim
class TestQueueRuns(ScriptAsserts, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.runs = {}
        for sched in ("vclos", "whole_server"):
            cls.runs[sched] = os.path.join(cls.tmp.name, sched + ".h5")
            fabricsim(cls.runs[sched], 'workload.scheduler="%s"' % sched, config=QUEUE)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_means_against_raw(self):
        d = self.tmp.name
        csv_path, png, upng = (os.path.join(d, n) for n in ("q.csv", "cdf.png", "util.png"))
        res = script("fabricsim_cluster.py", self.runs["vclos"], self.runs["whole_server"],
                     "--csv", csv_path, "--plot", png, "--utilization", upng)
        self.assertOk(res)
        rows = read_csv(csv_path)
        self.assertEqual([r["label"] for r in rows], ["vclos", "whole_server"])
        for r in rows:
            jwt, jrt, jct, rg, rn, done = raw_means(r["file"])
            self.assertEqual(int(r["finished"]), done)
            self.assertEqual(done, 3)  # every job of the mix ran to its end
            self.assertAlmostEqual(float(r["mean_jwt_ms"]), jwt / 1e6, places=12)
            self.assertAlmostEqual(float(r["mean_jrt_ms"]), jrt / 1e6, places=12)
            self.assertAlmostEqual(float(r["mean_jct_ms"]), jct / 1e6, places=12)
            self.assertEqual((int(r["refused_gpus"]), int(r["refused_network"])), (rg, rn))
            self.assertEqual((r["scheduler"], r["queue"], r["topology"], int(r["endpoints"])),
                             (r["label"], "fifo", "leaf_spine", 16))
            self.assertGreater(jwt, 0)  # the 16-rank job waits for the whole cluster
            self.assertGreater(rg, 0)
        self.assertIn("vclos/", table_row(res.stdout, "vclos")[1])
        self.assertPng(png)
        self.assertPng(upng)

    def test_utilization(self):
        for path in self.runs.values():
            j = cluster.load_jobs(path)
            u = cluster.utilization(j)
            with h5py.File(path, "r") as f:
                start, end = f["jobs/start_ns"][()], f["jobs/end_ns"][()]
                g = np.where(f["jobs/reserved"][()] > 0, f["jobs/reserved"][()], f["jobs/endpoints"][()])
                placed = np.bincount(f["placement/endpoint_job"][()], minlength=len(start))
                endpoints = f["jobs/endpoints"][()]
            # the jobs running at each job's start (half-open [start, end)) hold the busy GPUs
            for t in start:
                self.assertEqual(cluster.busy_at(u, t), int(g[(start <= t) & (t < end)].sum()), t)
            self.assertLessEqual(int(u["busy"].max()), 16)
            self.assertEqual(cluster.busy_at(u, start[2]), 16)  # the 16-rank job fills the cluster
            self.assertEqual(u["busy"][-1], 0)
            np.testing.assert_array_equal(placed, endpoints)  # /placement lists each job's endpoints
            self.assertTrue(0 < u["mean"] <= 1)

    def test_errors(self):
        d = self.tmp.name
        # without a queue the jobs take their endpoints at once: two that fit
        noq = os.path.join(d, "noqueue.h5")
        fabricsim(noq, config=re.sub(r'(queue|scheduler) = "\w+"\n', "", QUEUE.split("[[jobs]]\nranks = 16")[0]))
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.runs["vclos"], noq),
                                '%s: not a cluster queue run (workload.queue = "none"' % noq)
        missing = os.path.join(d, "missing.h5")
        self.assertOneErrorLine(script("fabricsim_cluster.py", missing), "%s: no such file" % missing)
        self.assertOneErrorLine(script("fabricsim_cluster.py", self.runs["vclos"], self.runs["whole_server"],
                                       "--label", "x", "--label", "x"), "--label x names two runs")


if __name__ == "__main__":
    unittest.main()
