#!/usr/bin/env python3
"""budget_phases.py on a made-up set whose sums are known."""

import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import budget_phases  # noqa: E402
import run_fixture  # noqa: E402


def ranked(algo, math, launch_ms, samples, retimed=True):
  return {
      "algo": algo,
      "math": math,
      "status": "ok",
      "retimed": retimed,
      "launch": {"median_ms": launch_ms, "samples": samples, "spread_ms": 0},
      "host": {"median_ms": 0.01, "samples": samples, "spread_ms": 0},
      "gpu": {"median_ms": launch_ms, "samples": samples // 2,
              "spread_ms": 0},
  }


def problem(source, search_s, bench_find_s, ranking):
  return {
      "source": source,
      "pass": "fwd",
      "tunedb_search": {"wall_s": search_s, "ranking": ranking},
      "cudnn_find": {"wall_s": bench_find_s},
  }


PROGRESS = (
    "[1/2] m/a fwd (fwd fp32 nchw n8): tunedb 1.000 (0 fma) | best 0 fma "
    "0.1 ms, 3 candidates, search 0.025 s (its find 10.0 ms, screen 3.0, "
    "retime 9.0, verify 2.0, setup 1.0), find 0.008 s (first 0.009 s)\n"
    "[2/2] m/b fwd (fwd fp32 nchw n8): tunedb 1.000 (1 fma) | best 1 fma "
    "0.2 ms, 2 candidates, search 0.029 s (its find 20.0 ms, screen 2.0, "
    "retime 5.0, verify 1.0, setup 0.5), find 0.020 s (first 0.021 s)\n")

PROBLEMS = [
    # A near-tie pool of two, three rounds; a third candidate screened.
    problem("m/a fwd", 0.025, 0.008, [
        ranked(0, "fma", 0.100, 3),
        ranked(1, "fma", 0.101, 3),
        ranked(2, "fma", 0.150, 1),
    ]),
    # One candidate re-timed alone, two rounds.
    problem("m/b fwd", 0.0285, 0.020, [
        ranked(1, "fma", 0.200, 2),
        ranked(0, "fma", 0.900, 1, retimed=False),
    ]),
]


class BudgetPhasesTest(unittest.TestCase):

  def setUp(self):
    self.tmp = tempfile.TemporaryDirectory()
    run_fixture.write_run(self.tmp.name, PROBLEMS, PROGRESS)
    self.rows = list(budget_phases.problems(self.tmp.name))

  def tearDown(self):
    self.tmp.cleanup()

  def test_phases_are_summed_against_the_timed_find(self):
    table = budget_phases.table_rows(self.rows)
    row = dict(zip(table[0], table[1]))
    self.assertEqual(row["n"], "2")
    self.assertEqual(row["Find ms"], "28")
    self.assertEqual(row["own find/Find"], f"{30 / 28:.2f}")
    self.assertEqual(row["screen"], "5")
    self.assertEqual(row["retime"], "14")
    self.assertEqual(row["verify"], "3")
    self.assertEqual(row["search/Find"], f"{53.5 / 28:.2f}")

  def test_rules_that_exceeded_the_old_budget_are_attributed(self):
    table = budget_phases.table_rows(self.rows)
    row = dict(zip(table[0], table[1]))
    # a: screen + retime 12 ms over 0.8 x 10 ms; b: 7 within 16.
    self.assertEqual(row["S+R over old budget ms (n)"], "4 (1)")
    self.assertEqual(row["floor past deadline n"], "0")  # a ran 3 rounds
    # a's third round, of a settled (near-tie) pool: 9 / 3.
    self.assertEqual(row["3rd round (min_rounds) ms"], "3")
    self.assertEqual(row["lone/clear pools re-timed ms (n)"], "5 (1)")
    self.assertEqual(row["near-tie pools ms (n)"], "9 (1)")

  def test_the_estimate_retimes_a_lone_leader_once_and_never_adds_verify(self):
    by_source = {
        pr["pass"] + str(pr["find_ms"]): pr for pr in self.rows
    }
    screen, retime, verify = budget_phases.estimate_one(by_source["fwd20.0"])
    self.assertAlmostEqual(retime, 5.0 / 2)  # one member-round
    self.assertLessEqual(verify, 1.0)
    self.assertLessEqual(screen, 2.0)
    _, retime_a, verify_a = budget_phases.estimate_one(by_source["fwd10.0"])
    # The near-tie pool keeps its two floor rounds: at least two
    # member-rounds of the shortened kind.
    self.assertGreater(retime_a, 0)
    self.assertLessEqual(verify_a, 2.0)

  def test_command_line_prints_both_tables(self):
    out = subprocess.run(
        [sys.executable,
         os.path.join(HERE, "budget_phases.py"), "--estimate", self.tmp.name],
        check=True, capture_output=True, text=True).stdout
    self.assertIn("own find/Find", out)
    self.assertIn("est. search/Find", out)
    self.assertIn("m-b8: 2 problems", out)

  def test_a_set_that_did_not_finish_is_left_out_in_folders_and_archives(self):
    # A set stopped by its timeout: its progress lines but no JSON.
    with open(os.path.join(self.tmp.name, "sets", "m-b64.progress"), "w") as f:
      f.write("[1/9] m/a fwd (...): tunedb 1.000\n")
    archive = os.path.join(self.tmp.name, "regret.tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
      tar.add(os.path.join(self.tmp.name, "sets"), arcname="sets")
    for run in (self.tmp.name, archive):
      names = [name for name, _, _ in budget_phases.read_sets(run)]
      self.assertEqual(names, ["m-b8"], run)
    result = subprocess.run(
        [sys.executable, os.path.join(HERE, "budget_phases.py"), archive],
        check=True, capture_output=True, text=True)
    self.assertIn("set m-b64 has no m-b64.json", result.stderr)
    self.assertIn("m-b8", result.stdout)

  def test_a_missing_run_is_an_error(self):
    result = subprocess.run(
        [sys.executable,
         os.path.join(HERE, "budget_phases.py"),
         os.path.join(self.tmp.name, "nothing-here")],
        capture_output=True, text=True)
    self.assertEqual(result.returncode, 2)
    self.assertIn("no such file or folder", result.stderr)


if __name__ == "__main__":
  unittest.main()
