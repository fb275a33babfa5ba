#!/usr/bin/env python3
"""pytorch_dropin_bench.py summarize on made-up runs whose ratios are known."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pytorch_dropin_bench  # noqa: E402


def row(label, benchmark, steady, best, graphed=None, first=1.0):
  r = {"label": label, "dtype": "fp16", "benchmark": benchmark,
       "first_iter_s": first, "steady_ms": steady, "steady_best_ms": best,
       "steady_blocks_ms": [best, steady], "gpu": "G", "torch": "T",
       "cudnn": 1, "model": "m", "preload": ""}
  if graphed is not None:
    r["graphed"] = graphed
  return r


# Two reference processes (steady 20 and 22: the reference is their median,
# 21; their fastest block 15), three warm ones (21.0, 21.42, 30.0: median
# 21.42, 1.02x; fastest block 15.3, 1.02x), GPU time 10.0 and 10.2 against
# 9.9, and one process whose capture failed.
RUNS = [
    row("default, no tunedb", True, 20.0, 15.0, {"median_ms": 10.0}, 12.0),
    row("default, no tunedb", True, 22.0, 16.0, {"median_ms": 10.2}, 3.0),
    row("default, tunedb warm", True, 21.0, 15.3, {"median_ms": 9.9}, 0.8),
    row("default, tunedb warm", True, 21.42, 16.0, {"error": "capture"}, 0.9),
    row("default, tunedb warm", True, 30.0, 25.0, None, 0.7),
]


class SummarizeTest(unittest.TestCase):

  def setUp(self):
    self.dir = tempfile.TemporaryDirectory()
    runs = os.path.join(self.dir.name, "runs.jsonl")
    with open(runs, "w") as f:
      for r in RUNS:
        f.write(json.dumps(r) + "\n")
    pytorch_dropin_bench.summarize(runs, self.dir.name)
    with open(os.path.join(self.dir.name, "dropin.json")) as f:
      self.summary = json.load(f)
    with open(os.path.join(self.dir.name, "dropin.md")) as f:
      self.markdown = f.read()

  def tearDown(self):
    self.dir.cleanup()

  def aggregate(self, label):
    [a] = [a for a in self.summary["aggregates"] if a["label"] == label]
    return a

  def test_the_reference_is_the_median_of_the_runs_without_tunedb(self):
    warm = self.summary["runs"][2]
    self.assertEqual(warm["steady_vs_path_bench_on"], 1.0)  # 21 / 21

  def test_a_row_kind_is_the_median_of_its_processes_against_the_reference(self):
    warm = self.aggregate("default, tunedb warm")
    self.assertEqual(warm["processes"], 3)
    self.assertEqual(warm["steady_ms"], 21.42)
    self.assertEqual(warm["steady_vs_bench_on"], 1.02)
    self.assertEqual(warm["first_iter_s"], 0.8)

  def test_the_fastest_block_of_any_process_is_compared_with_the_references(self):
    warm = self.aggregate("default, tunedb warm")
    self.assertEqual(warm["best_ms"], 15.3)
    self.assertEqual(warm["best_vs_bench_on"], 1.02)

  def test_gpu_time_takes_the_processes_whose_capture_worked(self):
    warm = self.aggregate("default, tunedb warm")
    self.assertEqual(warm["graphed_each_ms"], [9.9])
    self.assertEqual(warm["graphed_vs_bench_on"], 0.98)  # 9.9 / 10.1

  def test_a_failed_capture_is_reported_with_its_reason(self):
    self.assertIn("graph capture failed in default, tunedb warm "
                  "(benchmark True): capture", self.markdown)


if __name__ == "__main__":
  unittest.main()
