"""Unit tests of bench/report.py (geomeans, speedups, the summary and the
markdown), standard library only: `python3 -m unittest bench/test_report.py`
(ctest runs it as bench_report)."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

PEERS = ["onnxruntime", "eager", "inductor", "inductor_dynamic", "xla"]


def row(pattern, size, threads, ours, unfused, peers, pct=None, dtype="f32", bare=None):
    r = {
        "pattern": pattern, "dtype": dtype, "size": size, "shape": "N=1", "threads": threads,
        "bytes": 2**20, "autofuse_ms": ours, "unfused_ms": unfused, "gbps": 1.0,
        "pct_of_stream": pct,
        "peers": {p: ({"ms": v} if isinstance(v, float) else {"status": v}) for p, v in peers.items()},
    }
    if bare is not None:  # as harness.py copies them from `autofuse bench`
        r["bare_ms"] = bare
        r["overhead_us"] = (ours - bare) * 1e3
    return r


class GeomeanTest(unittest.TestCase):
    def test_values(self):
        self.assertAlmostEqual(report.geomean([2.0, 8.0]), 4.0)
        self.assertAlmostEqual(report.geomean([3.0]), 3.0)
        self.assertAlmostEqual(report.geomean([0.5, 2.0, 1.0]), 1.0)

    def test_skips_missing_and_nonpositive(self):
        self.assertAlmostEqual(report.geomean([None, 4.0, 0.0, -1.0, math.inf, 1.0]), 2.0)
        self.assertIsNone(report.geomean([]))
        self.assertIsNone(report.geomean([None, None]))


class SpeedupTest(unittest.TestCase):
    def test_peer_time_over_ours(self):
        r = row("a", "small", 1, 2.0, 6.0, {"onnxruntime": 4.0, "xla": 1.0, "eager": "n/a: x"})
        self.assertEqual(report.speedups(r), {"unfused": 3.0, "onnxruntime": 2.0, "xla": 0.5})

    def test_no_time_no_speedups(self):
        r = row("a", "small", 1, None, 6.0, {"onnxruntime": 4.0})
        self.assertEqual(report.speedups(r), {})


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.rows = [
            row("a", "small", 1, 1.0, 2.0, {"onnxruntime": 4.0, "inductor": 1.0}),
            row("a", "large", 1, 1.0, 8.0, {"onnxruntime": 1.0, "inductor": 4.0}, pct=80.0),
            row("b", "large", 2, 2.0, 4.0, {"onnxruntime": "wrong", "inductor": 2.0}, pct=45.0),
        ]
        self.s = report.summarize(self.rows, PEERS)

    def test_geomean_speedup_keys_and_values(self):
        g = self.s["geomean_speedup"]
        self.assertEqual(set(g), {"unfused", *PEERS})
        self.assertAlmostEqual(g["unfused"], (2 * 8 * 2) ** (1 / 3))
        self.assertAlmostEqual(g["onnxruntime"], 2.0)  # 4 and 1; the mismatch is not a number
        self.assertAlmostEqual(g["inductor"], (1 * 4 * 1) ** (1 / 3))
        self.assertIsNone(g["xla"])

    def test_breakdowns(self):
        self.assertAlmostEqual(self.s["geomean_speedup_by_threads"]["2"]["unfused"], 2.0)
        self.assertAlmostEqual(self.s["geomean_speedup_by_size"]["small"]["onnxruntime"], 4.0)
        self.assertAlmostEqual(self.s["large_pct_of_stream"], 60.0)
        self.assertAlmostEqual(self.s["large_pct_of_stream_min"], 45.0)
        self.assertAlmostEqual(self.s["large_pct_of_stream_by_threads"]["1"], 80.0)


class OverheadTest(unittest.TestCase):
    def rows(self):
        return [
            row("a", "small", 1, 0.0030, 0.005, {}, bare=0.0025),  # 0.5 us
            row("b", "small", 1, 0.0040, 0.005, {}, bare=0.0020),  # 2 us
            row("a", "small", 2, 0.0020, 0.005, {}, bare=0.0025),  # -0.5 us: 2 threads win
            row("c", "small", 1, 0.0040, 0.005, {}),                # no bare time: left out
            row("a", "large", 1, 9.0, 10.0, {}, bare=1.0),          # not small: left out
        ]

    def test_summary_max_median_and_verdict(self):
        o = report.summarize(self.rows(), [])["small_overhead_us"]
        self.assertEqual(o["rows"], 3)
        self.assertAlmostEqual(o["max"], 2.0)
        self.assertAlmostEqual(o["median"], 0.5)
        self.assertFalse(o["met"])
        self.assertEqual(o["target"], 1.0)
        met = report.summarize([r for r in self.rows() if r["pattern"] != "b"], [])
        self.assertTrue(met["small_overhead_us"]["met"])
        self.assertAlmostEqual(met["small_overhead_us"]["median"], 0.0)  # mean of -0.5 and 0.5

    def test_no_bare_times_no_verdict(self):
        o = report.summarize([row("a", "small", 1, 1.0, 2.0, {})], [])["small_overhead_us"]
        self.assertEqual(o["rows"], 0)
        self.assertIsNone(o["max"])
        self.assertIsNone(o["met"])
        self.assertEqual(report.overhead_lines([row("a", "small", 1, 1.0, 2.0, {})]), [])

    def test_table_and_summary_line(self):
        lines = report.overhead_lines(self.rows())
        self.assertEqual(len(lines), 2 + 3)
        self.assertIn("| a | f32 | 1 | 3.00 | 2.50 | 0.50 | yes |", lines)
        self.assertIn("| b | f32 | 1 | 4.00 | 2.00 | 2.00 | no |", lines)
        self.assertIn("| a | f32 | 2 | 2.00 | 2.50 | -0.50 | yes |", lines)
        text = "\n".join(report.summary_lines(report.summarize(self.rows(), []), []))
        self.assertIn("max 2.00 us, median 0.50 us over 3 rows (target <= 1 us each: not met)", text)


class InCacheCeilingTest(unittest.TestCase):
    def test_medium_rate_against_the_large_rows_stream_figure(self):
        def sized(pattern, size, gbps, pct=None, mix=None):
            r = row(pattern, size, 1, 1.0, 2.0, {}, pct=pct)
            r["gbps"] = gbps
            if mix is not None:
                r["stream_mix_gbps"] = mix
            return r

        rows = [
            sized("exp", "medium", 20.0), sized("exp", "large", 18.0, pct=36.0, mix=50.0),
            sized("add", "medium", 80.0), sized("add", "large", 30.0, pct=60.0, mix=50.0),
            sized("lonely", "large", 30.0, pct=60.0, mix=50.0),  # no medium row: not listed
        ]
        got = {c["pattern"]: c for c in report.in_cache_ceilings(rows)}
        self.assertEqual(sorted(got), ["add", "exp"])
        self.assertAlmostEqual(got["exp"]["in_cache_pct"], 40.0)
        self.assertTrue(got["exp"]["compute_bound"])
        self.assertAlmostEqual(got["add"]["in_cache_pct"], 160.0)
        self.assertFalse(got["add"]["compute_bound"])
        self.assertEqual(report.summarize(rows, PEERS)["large_compute_bound"], ["exp f32"])
        lines = report.ceiling_lines(rows)
        self.assertIn("| exp | f32 | 1 | 36% | 40% | compute (in-cache rate below target) |", lines)
        self.assertIn("| add | f32 | 1 | 60% | 160% | memory schedule |", lines)


class MarkdownTest(unittest.TestCase):
    def test_tables(self):
        rows = [
            row("a", "small", 1, 1.0, 2.0, {"onnxruntime": 4.0, "eager": "n/a: none",
                                            "inductor": "mismatch (error ratio 9 > 1)"},
                bare=0.9995),
        ]
        results = {
            "date": "2026-01-01 00:00", "rows": rows,
            "machine": {"cpu": "CPU", "cores": 2, "memory_gib": 8.0, "os": "Linux", "revision": "abc"},
            "versions": {"onnxruntime": "1"}, "stream": {"1": {"triad_gbps": 10.0}},
            "config": {"peers": PEERS, "threads": [1]},
            "checks": {"a_f32": {"onnxruntime": 0.5, "eager": "n/a: none", "inductor": "wrong"}},
            "skipped": [{"what": "a bf16", "why": "reason"}],
            "compile_time": [{"model": "a", "autofuse_cold_s": 1.0, "inductor_cold_s": 10.0}],
        }
        results["summary"] = report.summarize(rows, PEERS)
        md = report.markdown(results)
        line = next(l for l in md.splitlines() if l.startswith("| a | f32 | small"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        # pattern dtype size shape MiB ms GB/s %STREAM unfused ORT eager Inductor dyn XLA
        self.assertEqual(cells[8:], ["2.00x", "4.00x", "n/a", "wrong", "n/a", "n/a"])
        self.assertIn("| a_f32 | ok | n/a: none | wrong | n/a | n/a |", md)
        self.assertIn("a bf16 (reason)", md)
        self.assertIn("| a | 1.00 | n/a | 10.00 | n/a | 0.10 |", md)
        self.assertIn("target <= 0.33: met", md)
        self.assertIn("| unfused | 2.00x | 3.0x | no |", md)
        self.assertIn("## Call overhead (small shapes, medians)", md)
        self.assertIn("| a | f32 | 1 | 1000.00 | 999.50 | 0.50 | yes |", md)
        self.assertIn("(target <= 1 us each: met)", md)


if __name__ == "__main__":
    unittest.main()
