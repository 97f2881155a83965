"""Tests for the fabricsim_analysis package's report and analysis/fabricsim_report.py.

Run with:  /usr/bin/python3 -m unittest discover -s analysis/tests -p test_report.py -v
(with FABRICSIM_EXE=path/to/fabricsim for the tests on real runs)

Most tests build small synthetic run files that follow the fabricsim HDF5
schema and check the numbers the module reports against numbers computed
here, independently, from the raw arrays written into the file; TestRealRun
does the same on a tiny run of the real binary, cut short by engine.end_ns.
"""

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ANALYSIS = os.path.dirname(HERE)
SCRIPT = os.path.join(ANALYSIS, "fabricsim_report.py")
sys.path.insert(0, ANALYSIS)

import fabricsim_analysis as fa  # noqa: E402
import fabricsim_report as fr  # noqa: E402
from simruns import TINY_TREE, fabricsim, needs_fabricsim  # noqa: E402

CLASS_NAMES = ["host", "fabric", "intra_server", "board", "global"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_run(path, n_endpoints=8, n_switches=3, links=None, flows=None,
              sim_time_ns=1e6, injection_gbps=100.0, bytes_delivered=None,
              utilization_dataset=True, timeseries=None, network=True,
              flows_group=True):
    """Write a fabricsim-like file.

    links: dict with at least class, busy_ns, bandwidth_gbps (numpy arrays).
    flows: dict with start_ns, end_ns, bytes (or None for no rows).
    timeseries: (tx_bytes 2-D array, interval_ns) or None.
    network=False writes only /meta and the non-network /summary attributes.
    """
    with h5py.File(path, "w") as f:
        m = f.create_group("meta")
        m.attrs["version"] = "0.1.0-test"
        m.attrs["git_sha"] = "0123456789abcdef0123456789abcdef01234567"
        m.attrs["config"] = "[sim]\nend_ns = 1000000\n"
        m.attrs["ranks"] = np.int64(4)
        m.attrs["threads"] = np.int64(2)
        m.attrs["seed"] = np.uint64(42)
        s = f.create_group("summary")
        s.attrs["sim_time_ns"] = np.float64(sim_time_ns)
        s.attrs["events"] = np.uint64(123456789)
        s.attrs["wall_seconds"] = np.float64(2.5)
        s.attrs["events_per_second"] = np.float64(123456789 / 2.5)
        if not network:
            return
        n_flows = 0 if flows is None else len(flows["start_ns"])
        if bytes_delivered is None:
            bytes_delivered = 0 if flows is None else int(np.sum(flows["bytes"]))
        s.attrs["packets_delivered"] = np.uint64(1000)
        s.attrs["bytes_delivered"] = np.uint64(bytes_delivered)
        s.attrs["packets_dropped"] = np.uint64(3)
        s.attrs["packet_hops"] = np.uint64(4000)
        s.attrs["endpoints"] = np.uint64(n_endpoints)
        s.attrs["injection_gbps"] = np.float64(injection_gbps)
        s.attrs["messages_delivered"] = np.uint64(n_flows)

        n = f.create_group("nodes")
        kind = np.array([0] * n_endpoints + [1] * n_switches, dtype=np.uint8)
        n.create_dataset("kind", data=kind)
        names = ["ep%d" % i for i in range(n_endpoints)] + \
                ["sw%d" % i for i in range(n_switches)]
        n.create_dataset("name", data=np.array(names, dtype=object),
                         dtype=h5py.string_dtype())
        n.create_dataset("rank", data=np.arange(len(kind), dtype=np.int32) % 4)

        if links is not None:
            g = f.create_group("links")
            g.attrs["class_names"] = ",".join(CLASS_NAMES)
            nl = len(links["class"])
            bw = links["bandwidth_gbps"]
            busy = links["busy_ns"]
            g.create_dataset("src", data=np.arange(nl, dtype=np.uint32) % (n_endpoints + n_switches))
            g.create_dataset("dst", data=(np.arange(nl, dtype=np.uint32) + 1) % (n_endpoints + n_switches))
            g.create_dataset("src_port", data=np.zeros(nl, dtype=np.uint16))
            g.create_dataset("dst_port", data=np.ones(nl, dtype=np.uint16))
            g.create_dataset("class", data=links["class"].astype(np.uint8))
            g.create_dataset("bandwidth_gbps", data=bw.astype(np.float64))
            g.create_dataset("latency_ns", data=np.full(nl, 100.0))
            tx = (busy * bw / 8.0).astype(np.uint64)
            g.create_dataset("tx_bytes", data=tx)
            g.create_dataset("tx_packets", data=tx // 4096)
            g.create_dataset("busy_ns", data=busy.astype(np.float64))
            if utilization_dataset:
                g.create_dataset("utilization", data=busy / sim_time_ns)
            g.create_dataset("max_queue_bytes", data=np.full(nl, 8192, dtype=np.uint64))
            g.create_dataset("stall_ns", data=np.zeros(nl))
            if timeseries is not None:
                data, interval_ns = timeseries
                ts = g.create_group("timeseries")
                d = ts.create_dataset("tx_bytes", data=data.astype(np.uint64))
                d.attrs["interval_ns"] = np.float64(interval_ns)
                q = ts.create_dataset("queue_bytes", data=(data // 2).astype(np.uint64))
                q.attrs["interval_ns"] = np.float64(interval_ns)

        if flows_group:
            fl = f.create_group("flows")
            if flows is None:
                flows = {"start_ns": np.zeros(0), "end_ns": np.zeros(0),
                         "bytes": np.zeros(0, dtype=np.uint64)}
            k = len(flows["start_ns"])
            fl.create_dataset("src", data=np.arange(k, dtype=np.uint32) % n_endpoints)
            fl.create_dataset("dst", data=(np.arange(k, dtype=np.uint32) + 3) % n_endpoints)
            fl.create_dataset("bytes", data=np.asarray(flows["bytes"], dtype=np.uint64))
            fl.create_dataset("start_ns", data=np.asarray(flows["start_ns"], dtype=np.float64))
            fl.create_dataset("end_ns", data=np.asarray(flows["end_ns"], dtype=np.float64))


def random_links(rng, n=60, sim_time_ns=1e6):
    cls = rng.integers(0, 5, size=n)
    cls[:5] = np.arange(5)                   # every class present
    bw = np.where(cls == 0, 100.0, 200.0)
    busy = rng.uniform(0, sim_time_ns, size=n)
    return {"class": cls, "busy_ns": busy, "bandwidth_gbps": bw}


def random_flows(rng, n=500):
    start = rng.uniform(1e3, 5e5, size=n)
    dur = rng.lognormal(mean=8.0, sigma=1.0, size=n)
    return {"start_ns": start, "end_ns": start + dur,
            "bytes": rng.integers(64, 1 << 20, size=n).astype(np.uint64)}


def np_stats(x):
    x = np.asarray(x, dtype=np.float64)
    return {"count": x.size, "p50": np.percentile(x, 50), "p90": np.percentile(x, 90),
            "p99": np.percentile(x, 99), "max": x.max(), "mean": x.mean()}


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    rc = fr.main(argv, stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertStats(self, got, want, rtol=1e-12):
        self.assertEqual(got["count"], want["count"])
        for k in ("p50", "p90", "p99", "max", "mean"):
            self.assertIsNotNone(got[k], k)
            np.testing.assert_allclose(got[k], want[k], rtol=rtol, err_msg=k)


class TestNumbers(Base):
    def setUp(self):
        super().setUp()
        self.rng = np.random.default_rng(1234)
        self.sim = 1e6
        self.links = random_links(self.rng, sim_time_ns=self.sim)
        self.flows = random_flows(self.rng)
        self.file = self.path("run.h5")
        write_run(self.file, links=self.links, flows=self.flows, sim_time_ns=self.sim)

    def test_hand_computed_percentiles(self):
        # 5 host links busy 0,10,...,40 % of the time; numpy-linear percentiles
        # are 20 % (p50), 36 % (p90), 39.6 % (p99), 40 % (max).
        links = {"class": np.zeros(5, dtype=int),
                 "busy_ns": np.array([0.0, 10, 20, 30, 40]) * 1e4,
                 "bandwidth_gbps": np.full(5, 100.0)}
        p = self.path("tiny.h5")
        write_run(p, links=links, flows={"start_ns": np.array([0.0, 100, 200, 300]),
                                         "end_ns": np.array([100.0, 300, 500, 700]),
                                         "bytes": np.array([1, 2, 3, 4])})
        run = fa.load_run(p)
        rows = dict(fa.utilization_by_class(run))
        self.assertEqual(list(rows), ["host", "all"])
        h = rows["host"]
        self.assertEqual(h["count"], 5)
        self.assertAlmostEqual(h["p50"], 0.20)
        self.assertAlmostEqual(h["p90"], 0.36)
        self.assertAlmostEqual(h["p99"], 0.396)
        self.assertAlmostEqual(h["max"], 0.40)
        fct = fa.percentile_stats(fa.flow_completion_times(run))
        # durations 100, 200, 300, 400
        self.assertEqual(fct["count"], 4)
        self.assertAlmostEqual(fct["p50"], 250.0)
        self.assertAlmostEqual(fct["p90"], 370.0)
        self.assertAlmostEqual(fct["p99"], 397.0)
        self.assertAlmostEqual(fct["max"], 400.0)
        t = fa.aggregate_throughput(run)
        # 10 bytes over 700 ns from 8 endpoints x 100 Gb/s
        self.assertEqual(t["traffic_time_source"], "flows")
        self.assertAlmostEqual(t["traffic_time_ns"], 700.0)
        self.assertAlmostEqual(t["injection_share"], 10 * 8 / 700.0 / 800.0)

    def test_utilization_per_class_matches_numpy(self):
        run = fa.load_run(self.file)
        rows = dict(fa.utilization_by_class(run))
        util = self.links["busy_ns"] / self.sim
        for code, name in enumerate(CLASS_NAMES):
            self.assertIn(name, rows)
            self.assertStats(rows[name], np_stats(util[self.links["class"] == code]))
        self.assertStats(rows["all"], np_stats(util))
        # classes are reported in code order, "all" last
        self.assertEqual(list(rows), CLASS_NAMES + ["all"])

    def test_utilization_fallback_busy_over_sim_time(self):
        p = self.path("noutil.h5")
        write_run(p, links=self.links, flows=self.flows, sim_time_ns=self.sim,
                  utilization_dataset=False)
        rows = dict(fa.utilization_by_class(fa.load_run(p)))
        util = self.links["busy_ns"] / self.sim
        self.assertStats(rows["fabric"], np_stats(util[self.links["class"] == 1]))

    def test_fct_matches_numpy(self):
        run = fa.load_run(self.file)
        got = fa.percentile_stats(fa.flow_completion_times(run))
        self.assertStats(got, np_stats(self.flows["end_ns"] - self.flows["start_ns"]))

    def test_throughput_uses_flow_span(self):
        run = fa.load_run(self.file)
        t = fa.aggregate_throughput(run)
        span = self.flows["end_ns"].max() - self.flows["start_ns"].min()
        total_bytes = int(np.sum(self.flows["bytes"]))
        want = total_bytes * 8.0 / span / (8 * 100.0)
        self.assertEqual(t["traffic_time_source"], "flows")
        np.testing.assert_allclose(t["traffic_time_ns"], span, rtol=1e-12)
        np.testing.assert_allclose(t["throughput_gbps"], total_bytes * 8.0 / span, rtol=1e-12)
        np.testing.assert_allclose(t["injection_share"], want, rtol=1e-12)

    def test_per_source_and_steady_shares_from_summary(self):
        # Written by fabricsim (issue 18); NaN (too few messages) and older
        # files without the attributes read as not reported.
        for steady, want in ((0.8125, 0.8125), (float("nan"), None), (None, None)):
            p = self.path("shares%s.h5" % want)
            write_run(p, links=self.links, flows=self.flows, sim_time_ns=self.sim)
            with h5py.File(p, "a") as f:
                f["summary"].attrs["per_source_share"] = np.float64(0.875)
                if steady is not None:
                    f["summary"].attrs["steady_share"] = np.float64(steady)
            t = fa.aggregate_throughput(fa.load_run(p))
            self.assertEqual(t["per_source_share"], 0.875)
            self.assertEqual(t["steady_share"], want)
            text = fa.format_report(fa.compute_report(fa.load_run(p)))
            self.assertIn("per-source share    87.50%", text)

    def test_throughput_without_flows_uses_sim_time(self):
        for flows_group in (True, False):   # empty /flows, and no /flows at all
            p = self.path("noflows%d.h5" % flows_group)
            write_run(p, links=self.links, flows=None, sim_time_ns=self.sim,
                      bytes_delivered=5_000_000, flows_group=flows_group)
            run = fa.load_run(p)
            t = fa.aggregate_throughput(run)
            self.assertEqual(t["traffic_time_source"], "sim_time")
            np.testing.assert_allclose(t["injection_share"],
                                       5_000_000 * 8.0 / self.sim / 800.0, rtol=1e-12)
            rep = fa.compute_report(run)
            if flows_group:
                self.assertEqual(rep["fct_ns"]["count"], 0)
            else:
                self.assertIsNone(rep["fct_ns"])
            self.assertIn("n/a (no flows", fa.format_report(rep))

    def test_text_output(self):
        rc, out, err = run_main([self.file])
        self.assertEqual(rc, 0, err)
        util = self.links["busy_ns"] / self.sim
        host = np_stats(util[self.links["class"] == 0])
        fct = np_stats(self.flows["end_ns"] - self.flows["start_ns"])
        self.assertIn("0.1.0-test", out)
        self.assertIn("0123456789abcdef0123456789abcdef01234567", out)
        self.assertIn("123,456,789", out)                 # events
        host_line = [l for l in out.splitlines() if l.strip().startswith("host ")]
        self.assertEqual(len(host_line), 1, out)
        self.assertIn("%.2f%%" % (100 * host["p50"]), host_line[0])
        self.assertIn("%.2f%%" % (100 * host["p99"]), host_line[0])
        fct_line = [l for l in out.splitlines() if l.strip().startswith("fct ")]
        self.assertEqual(len(fct_line), 1, out)
        self.assertIn(fa.fmt_time_ns(fct["p90"]), fct_line[0])
        self.assertNotIn("plot:", out)

    def test_json_output(self):
        rc, out, err = run_main([self.file, "--json"])
        self.assertEqual(rc, 0, err)
        rep = json.loads(out)
        util = self.links["busy_ns"] / self.sim
        self.assertStats(rep["link_utilization"]["global"],
                         np_stats(util[self.links["class"] == 4]))
        self.assertStats(rep["fct_ns"], np_stats(self.flows["end_ns"] - self.flows["start_ns"]))
        self.assertEqual(rep["meta"]["ranks"], 4)
        self.assertEqual(rep["meta"]["seed"], 42)
        self.assertEqual(rep["summary"]["events"], 123456789)
        self.assertEqual(rep["nodes"], {"endpoints": 8, "switches": 3})
        self.assertEqual(rep["links"], len(self.links["class"]))
        self.assertEqual(rep["plots"], [])


    def test_topology_report(self):
        with h5py.File(self.file, "a") as f:
            t = f.create_group("topology")
            t.attrs["kind"] = "fat_tree"
            t.attrs["description"] = "2-level fat tree, radix 4, 8 endpoints"
            t.attrs["physical_switches"] = np.uint64(3)
            t.attrs["cable_type_dac"] = np.uint64(8)
            t.attrs["cable_type_aoc"] = np.uint64(4)
            t.attrs["cost_planes"] = np.uint64(2)
            t.attrs["cost_usd"] = np.float64(2 * (3 * 14280 + 8 * 272 + 4 * 603))
            t.attrs["diameter"] = np.int64(4)
        rc, out, err = run_main([self.file])
        self.assertEqual(rc, 0, err)
        cost_line = [l for l in out.splitlines() if l.strip().startswith("cost ")]
        self.assertEqual(len(cost_line), 1, out)
        self.assertIn("%.2f M$" % (2 * (3 * 14280 + 8 * 272 + 4 * 603) / 1e6), cost_line[0])
        self.assertIn("2-level fat tree, radix 4, 8 endpoints", out)
        rc, out, err = run_main([self.file, "--json"])
        self.assertEqual(json.loads(out)["topology"]["diameter"], 4)

    def test_no_topology_group(self):
        rc, out, err = run_main([self.file, "--json"])
        self.assertEqual(rc, 0, err)
        self.assertIsNone(json.loads(out)["topology"])


class TestHeatmap(Base):
    def test_heatmap_values_and_order(self):
        rng = np.random.default_rng(7)
        nl, nt, interval = 12, 9, 1000.0
        cls = np.array([3, 0, 1, 0, 4, 2, 1, 0, 3, 2, 4, 1])
        bw = rng.choice([100.0, 200.0, 400.0], size=nl)
        tx = rng.integers(0, 12000, size=(nl, nt))
        links = {"class": cls, "busy_ns": rng.uniform(0, 1e4, nl), "bandwidth_gbps": bw}
        p = self.path("ts.h5")
        write_run(p, links=links, sim_time_ns=nt * interval, timeseries=(tx, interval))
        run = fa.load_run(p)
        hm = fa.utilization_heatmap(run)
        order = np.argsort(cls, kind="stable")        # class, then id
        want = tx[order] * 8.0 / (bw[order, None] * interval)
        np.testing.assert_allclose(hm["matrix"], want, rtol=1e-12)
        self.assertEqual(hm["interval_ns"], interval)
        self.assertEqual([n for n, _ in hm["class_starts"]], CLASS_NAMES)
        self.assertEqual([r for _, r in hm["class_starts"]], [0, 3, 6, 8, 10])

        # averaged down: 12 links -> 4 rows (3 links each), 9 intervals -> 3 cols
        small = fa.utilization_heatmap(run, max_rows=4, max_cols=3, block_bytes=8 * nt * 5)
        want_small = want.reshape(4, 3, 3, 3).mean(axis=(1, 3))
        np.testing.assert_allclose(small["matrix"], want_small, rtol=1e-12)
        self.assertEqual(small["interval_ns"], 3 * interval)

    def test_no_timeseries(self):
        rng = np.random.default_rng(3)
        p = self.path("nots.h5")
        write_run(p, links=random_links(rng, 20))
        self.assertIsNone(fa.utilization_heatmap(fa.load_run(p)))


class TestNoNetwork(Base):
    def test_file_without_network_data(self):
        p = self.path("nonet.h5")
        write_run(p, network=False)
        run = fa.load_run(p)
        self.assertIsNone(run.links)
        self.assertIsNone(run.flows)
        rep = fa.compute_report(run)
        self.assertEqual(rep["link_utilization"], {})
        self.assertIsNone(rep["fct_ns"])
        self.assertIsNone(rep["throughput"]["injection_share"])
        self.assertEqual(rep["throughput"]["traffic_time_source"], "sim_time")

        rc, out, err = run_main([p])
        self.assertEqual(rc, 0, err)
        self.assertIn("123,456,789", out)
        self.assertIn("n/a (no /links data", out)
        rc, out, err = run_main([p, "--json"])
        self.assertEqual(rc, 0, err)
        self.assertIsNone(json.loads(out)["summary"]["bytes_delivered"])

        png = self.path("nonet.png")
        rc, out, err = run_main([p, "--png", png, "--plots-dir", self.path("nonet_plots")])
        self.assertEqual(rc, 0, err)
        self.assertGreater(os.path.getsize(png), 0)
        self.assertEqual(len(os.listdir(self.path("nonet_plots"))), 3)


class TestPlots(Base):
    def test_png_and_plots_dir(self):
        rng = np.random.default_rng(11)
        links = random_links(rng, 40)
        tx = rng.integers(0, 10000, size=(40, 50))
        p = self.path("plots.h5")
        write_run(p, links=links, flows=random_flows(rng, 300),
                  timeseries=(tx, 2000.0))
        png = self.path("out/overview.png")
        pdir = self.path("plots")
        rc, out, err = run_main([p, "--png", png, "--plots-dir", pdir])
        self.assertEqual(rc, 0, err)
        want = [png] + [os.path.join(pdir, n) for n in
                        ("link_utilization.png", "utilization_heatmap.png", "fct_cdf.png")]
        for f in want:
            self.assertTrue(os.path.isfile(f), f)
            self.assertGreater(os.path.getsize(f), 1000, f)
            with open(f, "rb") as fh:
                self.assertEqual(fh.read(8), PNG_MAGIC, f)
        lines = out.rstrip("\n").splitlines()
        self.assertEqual(lines[-4:], ["plot: %s" % f for f in want])

        # --json keeps stdout pure JSON; plot lines go to stderr
        rc, out, err = run_main([p, "--json", "--plots-dir", pdir])
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["plots"], want[1:])
        self.assertEqual(err.splitlines(), ["plot: %s" % f for f in want[1:]])

    def test_bar_chart_without_timeseries(self):
        rng = np.random.default_rng(5)
        p = self.path("bars.h5")
        write_run(p, links=random_links(rng, 25), flows=random_flows(rng, 50))
        pdir = self.path("bars")
        rc, out, err = run_main([p, "--plots-dir", pdir])
        self.assertEqual(rc, 0, err)
        self.assertGreater(os.path.getsize(os.path.join(pdir, "utilization_heatmap.png")), 1000)
        # many links: binned max/mean instead of one bar per link
        p = self.path("manybars.h5")
        write_run(p, links=random_links(rng, 2500))
        rc, out, err = run_main([p, "--plots-dir", self.path("manybars")])
        self.assertEqual(rc, 0, err)
        self.assertGreater(os.path.getsize(
            os.path.join(self.path("manybars"), "utilization_heatmap.png")), 1000)


class TestCommandLine(Base):
    """Runs the script as a separate process, as a user would."""

    def run_script(self, *args):
        return subprocess.run([SCRIPT] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=60)

    def assertOneErrorLine(self, res):
        self.assertNotEqual(res.returncode, 0)
        self.assertEqual(res.stdout, "")
        lines = res.stderr.splitlines()
        self.assertEqual(len(lines), 1, res.stderr)
        self.assertTrue(lines[0].startswith("error: "), lines[0])

    def test_shebang_and_executable(self):
        with open(SCRIPT) as fh:
            self.assertEqual(fh.readline().rstrip("\n"), "#!/usr/bin/python3")
        self.assertTrue(os.access(SCRIPT, os.X_OK))

    def test_missing_file(self):
        res = self.run_script(self.path("does_not_exist.h5"))
        self.assertOneErrorLine(res)
        self.assertIn("no such file", res.stderr)

    def test_not_hdf5(self):
        p = self.path("notes.txt")
        with open(p, "w") as fh:
            fh.write("hello\n")
        self.assertOneErrorLine(self.run_script(p, "--png", self.path("x.png")))
        self.assertFalse(os.path.exists(self.path("x.png")))

    def test_hdf5_without_meta(self):
        p = self.path("other.h5")
        with h5py.File(p, "w") as f:
            f.create_dataset("x", data=np.arange(3))
        res = self.run_script(p, "--json")
        self.assertOneErrorLine(res)
        self.assertIn("/meta", res.stderr)

    def test_end_to_end(self):
        rng = np.random.default_rng(99)
        p = self.path("e2e.h5")
        write_run(p, links=random_links(rng, 30), flows=random_flows(rng, 100))
        png = self.path("e2e.png")
        res = self.run_script(p, "--png", png)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertEqual(res.stdout.rstrip("\n").splitlines()[-1], "plot: %s" % png)
        self.assertGreater(os.path.getsize(png), 1000)


@needs_fabricsim
class TestRealRun(Base):
    """A traffic run of the real binary that engine.end_ns stops with messages in flight."""

    def test_report_against_file(self):
        p = self.path("cut.h5")
        fabricsim(p, *TINY_TREE, "workload.messages=4", "workload.message_bytes=262144",
                  "engine.end_ns=20000")
        with h5py.File(p, "r") as f:
            start, end = f["flows/start_ns"][()], f["flows/end_ns"][()]
            util, cls = f["links/utilization"][()], f["links/class"][()]
            events = int(f["summary"].attrs["events"])
        done = end >= 0
        self.assertTrue(done.any() and not done.all(), end)   # the run stops half-way
        rc, out, err = run_main([p, "--json"])
        self.assertEqual(rc, 0, err)
        rep = json.loads(out)
        self.assertEqual(rep["summary"]["events"], events)
        self.assertEqual(rep["flows_unfinished"], int((~done).sum()))
        self.assertStats(rep["fct_ns"], np_stats(end[done] - start[done]))
        self.assertStats(rep["link_utilization"]["all"], np_stats(util))
        self.assertStats(rep["link_utilization"]["host"], np_stats(util[cls == 0]))
        rc, out, err = run_main([p])
        self.assertEqual(rc, 0, err)
        self.assertIn("  left out: %d unfinished flows (end_ns -1: engine.end_ns stopped the run first)"
                      % (~done).sum(), out.splitlines())
        self.assertNotIn(" -", [l for l in out.splitlines() if l.strip().startswith("fct ")][0])


if __name__ == "__main__":
    unittest.main()
