#!/usr/bin/env python3
"""How far the search's own timings are from the regret harness's.

Reads the sets of one or more tunedb_regret runs (a regret.tar.gz, or a
folder with sets/*.json) and compares, candidate by candidate, the launch
time the search recorded (its ranking) with the time the harness measured
independently (its candidates: interleaved rounds of >= 1 ms batches of
direct calls, medians). Per set and kind of sample it prints how many
candidates were compared, the median of search / harness, how many agree
within 10 %, and the worst under- and over-estimate:

  retimed   candidates re-timed in launch-inclusive rounds (those have a
            GPU-time sample too: a clear leader's one round included)
  screened  candidates with the screen's one short batch only

and, per set, the pairs of candidates the search ranked within 2 % of each
other (what it called a tie) that the harness found more than 5 % apart.

Usage: timing_agreement.py [--markdown] RUN...
"""

import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from budget_phases import (  # noqa: E402
    missing_run, read_sets, render, run_parser)

TIE = 0.02
APART = 0.05


def compared(problem):
  """(kind, search ms, harness ms) for each candidate timed by both."""
  harness = {(c["algo"], c["math"]): c["median_ms"]
             for c in problem.get("candidates", []) if c.get("median_ms")}
  out = []
  for r in problem.get("tunedb_search", {}).get("ranking", []):
    launch = r.get("launch", {})
    h = harness.get((r.get("algo"), r.get("math")))
    if r.get("status", "ok") != "ok" or not launch.get("samples") or not h:
      continue
    gpu = r.get("gpu", {}).get("samples", 0)
    kind = "retimed" if gpu >= 1 else "screened"
    out.append((kind, launch["median_ms"], h, r))
  return out


def false_ties(problem):
  """Pairs the search timed within TIE that the harness puts APART."""
  rows = [c for c in compared(problem) if c[0] == "retimed"]
  out = []
  for i, a in enumerate(rows):
    for b in rows[i + 1:]:
      if abs(a[1] / b[1] - 1) <= TIE and abs(a[2] / b[2] - 1) > APART:
        out.append((a, b))
  return out


def table(runs):
  header = ["set", "kind", "compared", "search/harness median",
            "within 10 %", "lowest", "highest"]
  rows, ties = [header], [["set", "problems", "false ties", "example"]]
  for run in runs:
    for name, _, text in read_sets(run):
      problems = json.loads(text).get("problems", [])
      for kind in ("retimed", "screened"):
        ratios = [s / h for p in problems for k, s, h, _ in compared(p)
                  if k == kind]
        if not ratios:
          continue
        within = sum(1 for r in ratios if abs(r - 1) <= 0.10)
        rows.append([name, kind, str(len(ratios)),
                     "%.3f" % statistics.median(ratios),
                     "%d/%d" % (within, len(ratios)), "%.3f" % min(ratios),
                     "%.3f" % max(ratios)])
      found = [(p, pair) for p in problems for pair in false_ties(p)]
      example = ""
      if found:
        p, (a, b) = found[0]
        example = "%s: %d/%s %.3f vs %d/%s %.3f ms (harness %.3f vs %.3f)" % (
            p.get("source", "?"), a[3]["algo"], a[3]["math"], a[1],
            b[3]["algo"], b[3]["math"], b[1], a[2], b[2])
      ties.append([name, str(len(problems)), str(len(found)), example])
  return rows, ties


def main(argv):
  args = run_parser(__doc__).parse_args(argv)
  if missing_run("timing_agreement", args.runs):
    return 2
  rows, ties = table(args.runs)
  if len(rows) == 1:
    print("timing_agreement: no candidate timed by both", file=sys.stderr)
    return 1
  sys.stdout.write(render(rows, args.markdown))
  sys.stdout.write("\n")
  sys.stdout.write(render(ties, args.markdown))
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
