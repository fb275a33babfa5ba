#!/usr/bin/env python3
"""truth_repeatability.py on made-up runs whose spreads are known."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run_fixture  # noqa: E402
import truth_repeatability  # noqa: E402


def problem(source, pass_, times):
  """A problem whose harness timed {(algo, math): ms}."""
  return {"source": source, "pass": pass_,
          "candidates": [{"algo": a, "math": m, "median_ms": ms}
                         for (a, m), ms in times.items()]}


# Three runs of one set. Algorithm 0 repeats to within 2-4 %; algorithm 1
# moves by 1.5x and 2x; algorithm 2 is timed in two runs only (left out);
# a candidate without a median is left out too.
RUNS = [
    [problem("m/a", "fwd", {(0, "fma"): 0.100, (1, "tensor_op"): 0.050,
                            (2, "fma"): 0.3}),
     problem("m/b", "fwd", {(0, "fma"): 0.200, (1, "tensor_op"): 0.100})],
    [problem("m/a", "fwd", {(0, "fma"): 0.102, (1, "tensor_op"): 0.075,
                            (2, "fma"): 0.3}),
     problem("m/b", "fwd", {(0, "fma"): 0.208, (1, "tensor_op"): 0.200})],
    [problem("m/a", "fwd", {(0, "fma"): 0.101, (1, "tensor_op"): 0.060}),
     problem("m/b", "fwd", {(0, "fma"): 0.204, (1, "tensor_op"): 0.150})],
]
RUNS[2][0]["candidates"].append({"algo": 3, "math": "fma", "samples_ms": []})


class TruthRepeatabilityTest(unittest.TestCase):

  def setUp(self):
    self.dirs = [tempfile.TemporaryDirectory() for _ in RUNS]
    for d, problems in zip(self.dirs, RUNS):
      run_fixture.write_run(d.name, problems)

  def tearDown(self):
    for d in self.dirs:
      d.cleanup()

  def test_spread_per_algorithm_over_the_candidates_in_every_run(self):
    rows = truth_repeatability.table([d.name for d in self.dirs])
    by_algo = {r[2]: r for r in rows[1:]}
    self.assertEqual(sorted(by_algo), ["0", "1"])
    # Algorithm 0: 0.102/0.100 and 0.208/0.200.
    self.assertEqual(by_algo["0"][3], "2")
    self.assertEqual(by_algo["0"][6], "%.3f" % (0.208 / 0.200))
    # Algorithm 1: 0.075/0.050 = 1.5 and 0.200/0.100 = 2.0.
    self.assertEqual(by_algo["1"][4:], ["1.750", "2.000", "2.000"])

  def test_problems_of_one_source_are_told_apart_by_their_key(self):
    # One layer in two dtypes of a set: the same source, two keys.
    runs = [[dict(problem("m/a", "fwd", {(0, "fma"): ms}), key=key)
             for key, ms in (("k16", t16), ("k32", t32))]
            for t16, t32 in ((0.100, 0.200), (0.110, 0.200))]
    dirs = [tempfile.TemporaryDirectory() for _ in runs]
    try:
      for d, problems in zip(dirs, runs):
        run_fixture.write_run(d.name, problems)
      rows = truth_repeatability.table([d.name for d in dirs])
    finally:
      for d in dirs:
        d.cleanup()
    # Two candidates compared: 0.110/0.100 and 0.200/0.200.
    self.assertEqual(rows[1][3], "2")
    self.assertEqual(rows[1][6], "1.100")

  def test_the_command_needs_two_runs_and_says_which_is_missing(self):
    script = os.path.join(HERE, "truth_repeatability.py")
    out = subprocess.run(
        [sys.executable, script, "--markdown"] + [d.name for d in self.dirs],
        capture_output=True, text=True, check=True).stdout
    self.assertIn("| m-b8 | fwd | 1 | 2 | 1.750 |", out)
    one = subprocess.run([sys.executable, script, self.dirs[0].name],
                         capture_output=True, text=True)
    self.assertEqual(one.returncode, 2)
    missing = subprocess.run(
        [sys.executable, script, self.dirs[0].name, "/nonexistent"],
        capture_output=True, text=True)
    self.assertEqual(missing.returncode, 2)


if __name__ == "__main__":
  unittest.main()
