#!/usr/bin/env python3
"""timing_agreement.py on a made-up set whose ratios are known."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run_fixture  # noqa: E402
import timing_agreement  # noqa: E402


def ranked(algo, math, launch_ms, samples, gpu_samples):
  return {"algo": algo, "math": math, "status": "ok",
          "launch": {"median_ms": launch_ms, "samples": samples},
          "gpu": {"median_ms": launch_ms, "samples": gpu_samples}}


def candidate(algo, math, median_ms):
  return {"algo": algo, "math": math, "median_ms": median_ms}


# Two problems: in the first the search re-timed two twins as a tie (0.100,
# 0.101) that the harness puts 30 % apart, and screened a third at twice
# the harness's time; in the second one re-timed candidate agrees exactly
# and one the harness never timed is left out.
PROBLEMS = [
    {"source": "m/a bwd_filter",
     "tunedb_search": {"ranking": [
         ranked(5, "default", 0.100, 2, 1),
         ranked(5, "fma", 0.101, 2, 1),
         ranked(1, "tensor_op", 0.200, 1, 0)]},
     "candidates": [candidate(5, "default", 0.130),
                    candidate(5, "fma", 0.100),
                    candidate(1, "tensor_op", 0.100)]},
    {"source": "m/b fwd",
     "tunedb_search": {"ranking": [
         ranked(0, "fma", 0.050, 1, 1),
         ranked(2, "fma", 0.070, 1, 0)]},
     "candidates": [candidate(0, "fma", 0.050)]},
]


class TimingAgreementTest(unittest.TestCase):

  def setUp(self):
    self.dir = tempfile.TemporaryDirectory()
    run_fixture.write_run(self.dir.name, PROBLEMS)

  def tearDown(self):
    self.dir.cleanup()

  def test_ratios_per_kind_and_the_false_tie(self):
    rows, ties = timing_agreement.table([self.dir.name])
    by_kind = {r[1]: r for r in rows[1:]}
    # Re-timed: 0.100/0.130, 0.101/0.100 and 0.050/0.050.
    self.assertEqual(by_kind["retimed"][2], "3")
    self.assertEqual(by_kind["retimed"][3], "1.000")  # the middle one
    self.assertEqual(by_kind["retimed"][4], "2/3")
    self.assertEqual(by_kind["retimed"][5], "%.3f" % (0.100 / 0.130))
    # Screened: 0.200/0.100 only (2/fma was never timed by the harness).
    self.assertEqual(by_kind["screened"][2:], ["1", "2.000", "0/1", "2.000",
                                               "2.000"])
    self.assertEqual(ties[1][:3], ["m-b8", "2", "1"])
    self.assertIn("5/default 0.100 vs 5/fma 0.101", ties[1][3])

  def test_the_command_prints_both_tables_and_fails_on_nothing(self):
    script = os.path.join(HERE, "timing_agreement.py")
    out = subprocess.run([sys.executable, script, "--markdown", self.dir.name],
                         capture_output=True, text=True, check=True).stdout
    self.assertIn("| m-b8 | retimed | 3 |", out)
    self.assertIn("| m-b8 | 2 | 1 |", out)
    missing = subprocess.run([sys.executable, script, "/nonexistent"],
                             capture_output=True, text=True)
    self.assertEqual(missing.returncode, 2)


if __name__ == "__main__":
  unittest.main()
