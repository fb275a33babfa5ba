#!/usr/bin/env python3
"""varying_shapes_bench.py summarize on made-up runs whose ratios are known."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import varying_shapes_bench  # noqa: E402


def run(label, total, first, gpu, oom=()):
  return {"label": label, "total_s": total, "first_batches_s": first,
          "gpu_ms_per_batch": gpu, "oom": list(oom), "shapes": []}


class SummarizeTest(unittest.TestCase):

  def test_totals_are_medians_over_processes_against_the_reference(self):
    runs = [run("tunedb, sizes stored", 2.0, 1.0, 3.2),
            run("tunedb, sizes stored", 3.0, 1.5, 3.2),
            run("tunedb, other sizes", 12.5, 11.0, 3.3, ["64x544"])]
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "runs.jsonl")
      with open(path, "w") as f:
        f.write("\n".join(json.dumps(r) for r in runs) + "\n")
      out = io.StringIO()
      with contextlib.redirect_stdout(out):
        rows = varying_shapes_bench.summarize(path, "tunedb, sizes stored",
                                              False)
    stored, other = rows
    self.assertEqual(stored["processes"], 2)
    self.assertEqual(stored["total_s"], 2.5)
    self.assertEqual(stored["vs_reference"], 1.0)
    self.assertEqual(other["vs_reference"], 5.0)
    self.assertEqual(other["oom_shapes"], ["64x544"])
    self.assertIn("| tunedb, other sizes | 1 | 12.5 | 11.0 | 3.3 | 5.0 | 64x544 |",
                  out.getvalue())

  def test_without_the_reference_there_is_no_ratio(self):
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "runs.jsonl")
      with open(path, "w") as f:
        f.write(json.dumps(run("no tunedb, benchmark on", 14.0, 12.0, 3.2)))
      with contextlib.redirect_stdout(io.StringIO()):
        rows = varying_shapes_bench.summarize(path, "missing", True)
    self.assertIsNone(rows[0]["vs_reference"])


def replayed(label, ms_by_size):
  r = run(label, 1.0, 0.5, 3.0)
  r["shapes"] = [{"batch": 16, "size": size, "graph_ms": ms}
                 for size, ms in ms_by_size.items()]
  return r


class ReplaysTest(unittest.TestCase):

  def test_each_shape_is_the_median_over_processes_against_the_other_label(self):
    runs = [replayed("predicted", {224: 1.1, 256: 2.0}),
            replayed("predicted", {224: 1.3, 256: 2.0}),
            replayed("predicted", {224: 1.2}),
            replayed("stored", {224: 1.0, 256: 2.0, 288: 9.0})]
    with tempfile.TemporaryDirectory() as d:
      path = os.path.join(d, "runs.jsonl")
      with open(path, "w") as f:
        f.write("\n".join(json.dumps(r) for r in runs) + "\n")
      with contextlib.redirect_stdout(io.StringIO()):
        out = varying_shapes_bench.replays(path, "predicted", "stored", True)
    # 288 ran only in the reference: not compared.
    self.assertEqual([(r["size"], r["ratio"]) for r in out["shapes"]],
                     [(224, 1.2), (256, 1.0)])
    self.assertAlmostEqual(out["geomean"], round(1.2 ** 0.5, 4))
    self.assertEqual(out["sum_ms"], 3.2)
    self.assertEqual(out["against_sum_ms"], 3.0)


if __name__ == "__main__":
  unittest.main()
