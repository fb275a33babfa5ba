#!/usr/bin/env python3
"""How well the regret harness repeats its own times from run to run.

Reads two or more tunedb_regret runs of the same sets (regret.tar.gz files,
or folders with sets/*.json) and, for every candidate (problem, algorithm,
math type) the harness timed in all of them, takes the spread of its medians
across the runs: the slowest run's median over the fastest's. Per set, pass
and algorithm it prints how many candidates were compared and the median,
90th percentile and largest spread.

A pick's ratio against the best cannot be judged closer than the spread of
the candidates it is compared with: where an algorithm's times move by 60 %
from run to run, a target of "within 10 % of the best" in one run is met or
missed by when the run was made.

Usage: truth_repeatability.py [--markdown] RUN RUN...
"""

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from budget_phases import (  # noqa: E402
    missing_run, read_sets, render, run_parser)


def truth_medians(run):
  """{(set, pass, problem, algo, math): harness median ms} of one run; a
  problem is its key text (its source where a run has none)."""
  out = {}
  for name, _, text in read_sets(run):
    for p in json.loads(text).get("problems", []):
      problem = p.get("key") or p.get("source", "?")
      for c in p.get("candidates", []):
        if c.get("median_ms"):
          out[(name, p.get("pass", "?"), problem, c["algo"],
               c["math"])] = c["median_ms"]
  return out


def quantile(values, q):
  s = sorted(values)
  return s[min(len(s) - 1, int(q * len(s)))]


def table(runs):
  per_run = [truth_medians(r) for r in runs]
  common = set(per_run[0])
  for m in per_run[1:]:
    common &= set(m)
  spreads = {}
  for key in common:
    times = [m[key] for m in per_run]
    spreads.setdefault((key[0], key[1], key[3]), []).append(
        max(times) / min(times))
  rows = [["set", "pass", "algo", "candidates", "median spread",
           "p90 spread", "largest"]]
  for (name, pass_, algo), s in sorted(spreads.items()):
    rows.append([name, pass_, str(algo), str(len(s)),
                 "%.3f" % statistics.median(s), "%.3f" % quantile(s, 0.9),
                 "%.3f" % max(s)])
  return rows


def main(argv):
  args = run_parser(__doc__).parse_args(argv)
  if missing_run("truth_repeatability", args.runs):
    return 2
  if len(args.runs) < 2:
    print("truth_repeatability: needs two runs or more", file=sys.stderr)
    return 2
  rows = table(args.runs)
  if len(rows) == 1:
    print("truth_repeatability: no candidate timed in every run",
          file=sys.stderr)
    return 1
  sys.stdout.write(render(rows, args.markdown))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
