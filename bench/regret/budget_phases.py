#!/usr/bin/env python3
"""Where a search's time goes against cudnnFind's, from tunedb_regret output.

Reads the sets of one or more regret runs (a regret.tar.gz, or a folder with
sets/*.progress and sets/*.json) and prints, per set and pass:

  table     the phases of the searches (from the .progress lines: "search S s
            (its find F ms, screen A, retime B, verify C, setup D), find F2
            s"), summed, against the timed Find calls, and which of the search's
            rules made it exceed the old budget (refine_budget_factor of its
            own Find for screen + re-time; re-timing pools from the .json
            rankings);
  estimate  what the budget policy of server/search/search_budget.h would
            have spent on the same problems, from the recorded phase and
            sample times. An estimate: the recorded times are of the old
            search, and the model below is a cost model of the new one.

Usage: budget_phases.py [--estimate [--factor F]] [--markdown] RUN...
"""

import argparse
import io
import json
import os
import re
import sys
import tarfile

PROGRESS = re.compile(
    r"^\[\d+/\d+\] (?P<source>.+?) \((?P<pass>\w+) .*"
    r"search (?P<search>[\d.]+) s \(its find (?P<find>[\d.]+) ms, "
    r"screen (?P<screen>[\d.]+), retime (?P<retime>[\d.]+), "
    r"verify (?P<verify>[\d.]+), setup (?P<setup>[\d.]+)\), "
    r"find (?P<bench_find>[\d.]+) s")

# The old search's rules (CudnnFinderOptions before the budget policy).
OLD_FACTOR = 0.8
OLD_CAP_MS = 3000.0
# A pool whose runner-up's re-timed median is this much slower than the
# leader's had a clear leader (the policy's clear_lead default).
CLEAR_LEAD = 0.25
TIE_MARGIN = 0.02

# The budget policy's defaults (server/search/cudnn_finder_options.h).
NEW_FACTOR = 0.4
NEW_SCREEN_SHARE = 0.4
NEW_VERIFY_OVERHEAD_MS = 0.3
NEW_MIN_ROUNDS = 2
NEW_FLOOR_MARGIN = 0.05
NEW_SAMPLE_MS = 1.2
NEW_MIN_BATCH_RUNS = 8
NEW_GRAPH_SAMPLE_MS = 0.3
SAMPLE_OVERHEAD = 1.3  # search_budget.cc's kSampleOverhead
# verify_max_elements 2^18 -> 2^16: the model takes everything of the
# recorded verification but the runs of the choice and its reference to be
# read-back that shrinks with the element count (an upper bound on the
# saving: synchronisation does not shrink).
VERIFY_ELEMENTS_RATIO = 4


def unfinished(run, name):
  """Says on stderr that set `name` of `run` has no JSON: tunedb_regret
  writes it at the end, so a set stopped by its timeout has none."""
  print(f"{os.path.basename(sys.argv[0])}: {run}: set {name} has no "
        f"{name}.json (it did not finish): left out", file=sys.stderr)


def read_sets(run):
  """Yields (set name, progress text, json text) for each finished set of a
  run (those without JSON are left out, with a line on stderr)."""
  if os.path.isdir(run):
    folder = os.path.join(run, "sets") if os.path.isdir(
        os.path.join(run, "sets")) else run
    for name in sorted(os.listdir(folder)):
      if name.endswith(".progress"):
        base = name[:-len(".progress")]
        if not os.path.exists(os.path.join(folder, base + ".json")):
          unfinished(run, base)
          continue
        with open(os.path.join(folder, name)) as f:
          progress = f.read()
        with open(os.path.join(folder, base + ".json")) as f:
          yield base, progress, f.read()
    return
  with tarfile.open(run) as tar:
    members = {os.path.basename(m.name): m for m in tar.getmembers()}
    for name in sorted(members):
      if name.endswith(".progress"):
        base = name[:-len(".progress")]
        if base + ".json" not in members:
          unfinished(run, base)
          continue
        progress = tar.extractfile(members[name]).read().decode()
        text = tar.extractfile(members[base + ".json"]).read().decode()
        yield base, progress, text


def problems(run):
  """Yields one dict per searched problem of a run."""
  for set_name, progress, text in read_sets(run):
    by_source = {}
    for p in json.loads(text)["problems"]:
      by_source[(p["source"], p["pass"])] = p
    for line in progress.splitlines():
      m = PROGRESS.match(line)
      if not m:
        continue
      p = by_source.get((m["source"], m["pass"]))
      if p is None or "tunedb_search" not in p:
        continue
      search = p["tunedb_search"]
      ok = [r for r in search["ranking"] if r["status"] == "ok"]
      pool = sorted((r for r in ok if r["launch"]["samples"] >= 2),
                    key=lambda r: r["launch"]["median_ms"])
      screened = [r for r in ok if r["retimed"]]
      yield {
          "ok": ok,
          "set": set_name,
          "pass": m["pass"],
          "find_ms": float(m["find"]),
          "screen_ms": float(m["screen"]),
          "retime_ms": float(m["retime"]),
          "verify_ms": float(m["verify"]),
          "setup_ms": float(m["setup"]),
          # The walls in the .json are to the microsecond; the progress
          # line's to the millisecond.
          "search_ms": search["wall_s"] * 1e3,
          "bench_find_ms": p["cudnn_find"]["wall_s"] * 1e3,
          "pool": pool,
          "screened": screened,
          "rounds": max((r["launch"]["samples"] for r in pool), default=0),
      }


def pool_kind(pr):
  """lone, clear, apart or tie: how far the re-timed runner-up trailed."""
  pool = pr["pool"]
  if len(pool) < 2:
    return "lone"
  gap = pool[1]["launch"]["median_ms"] / pool[0]["launch"]["median_ms"] - 1
  if gap >= CLEAR_LEAD:
    return "clear"
  return "tie" if gap < TIE_MARGIN else "apart"


def group(rows):
  out = {}
  for pr in rows:
    out.setdefault((pr["set"], pr["pass"]), []).append(pr)
  return out


def total(rows, key):
  return sum(pr[key] for pr in rows)


def table_rows(rows):
  header = [
      "set", "pass", "n", "Find ms", "own find/Find", "setup", "screen",
      "retime", "verify", "search/Find", "S+R over old budget ms (n)",
      "floor past deadline n", "3rd round (min_rounds) ms",
      "lone/clear pools re-timed ms (n)", "near-tie pools ms (n)",
      "verify/Find"
  ]
  out = [header]
  for (set_name, pas), g in sorted(group(rows).items()):
    find = total(g, "bench_find_ms")
    over = [
        pr for pr in g
        if pr["screen_ms"] + pr["retime_ms"] > min(
            OLD_FACTOR * pr["find_ms"], OLD_CAP_MS)
    ]
    over_ms = sum(pr["screen_ms"] + pr["retime_ms"] -
                  min(OLD_FACTOR * pr["find_ms"], OLD_CAP_MS) for pr in over)
    floor = [pr for pr in over if pr["rounds"] <= 2]
    # Round three ran because min_rounds was 3 where the pool was settled
    # after two (a lone member, a clear leader or a near-tie).
    third = sum(pr["retime_ms"] / 3 for pr in g
                if pr["rounds"] == 3 and pool_kind(pr) != "apart")
    clear = [pr for pr in g if pool_kind(pr) in ("lone", "clear")]
    tie = [pr for pr in g if pool_kind(pr) == "tie"]
    out.append([
        set_name, pas,
        str(len(g)), f"{find:.0f}",
        f"{total(g, 'find_ms') / find:.2f}", f"{total(g, 'setup_ms'):.0f}",
        f"{total(g, 'screen_ms'):.0f}", f"{total(g, 'retime_ms'):.0f}",
        f"{total(g, 'verify_ms'):.0f}",
        f"{total(g, 'search_ms') / find:.2f}", f"{over_ms:.0f} ({len(over)})",
        str(len(floor)), f"{third:.0f}",
        f"{total(clear, 'retime_ms'):.0f} ({len(clear)})",
        f"{total(tie, 'retime_ms'):.0f} ({len(tie)})",
        f"{total(g, 'verify_ms') / find:.2f}"
    ])
  return out


def twins(a, b):
  """One algorithm under two math types, re-timed within TIE_MARGIN."""
  return (a["algo"] == b["algo"] and a["math"] != b["math"] and
          max(a["launch"]["median_ms"], b["launch"]["median_ms"]) <= min(
              a["launch"]["median_ms"], b["launch"]["median_ms"]) *
          (1 + TIE_MARGIN))


def estimate_one(pr, factor=NEW_FACTOR):
  """The policy's cost model for one problem: (screen, retime, verify) ms.

  From the old search's recorded phases: screening costs what it cost per
  candidate; a re-timing member and round what it cost (shortened where
  the budget is tight); the re-timed medians stand in for what Find and
  the screen said about clear leaders and twins.
  """
  budget = min(factor * pr["find_ms"], OLD_CAP_MS)
  ok = pr["ok"]
  choice = ok[0] if ok else None
  reference = next((r for r in ok[1:] if choice and r["algo"] != choice["algo"]),
                   None)
  runs_ms = sum(r["launch"]["median_ms"] for r in (choice, reference) if r)
  reserve = runs_ms + NEW_VERIFY_OVERHEAD_MS
  verify = min(pr["verify_ms"],
               runs_ms + max(pr["verify_ms"] - runs_ms, 0) /
               VERIFY_ELEMENTS_RATIO)
  timing = max(budget - reserve, 0.0)
  # Screening: the recorded cost per candidate, cut at its share (the
  # first two always).
  n = len(pr["screened"])
  per = pr["screen_ms"] / n if n else 0.0
  screened = n
  while screened > 2 and screened * per > NEW_SCREEN_SHARE * timing:
    screened -= 1
  screen = screened * per
  left = timing - screen
  pool = list(pr["pool"])
  if not pool:
    return screen, 0.0, verify
  member_rounds = sum(r["launch"]["samples"] for r in pool)
  pmr = pr["retime_ms"] / member_rounds  # per member and round
  # Twins count as one.
  kept = []
  for r in pool:
    if not any(twins(k, r) for k in kept):
      kept.append(r)
  lead = kept[0]["launch"]["median_ms"]
  # Shorter samples where the floor of rounds of full ones does not fit,
  # down to NEW_MIN_BATCH_RUNS runs (the overhead stays).
  overhead = max(pmr - NEW_SAMPLE_MS - NEW_GRAPH_SAMPLE_MS / 2, 0)
  floor_pmr = overhead + min(NEW_MIN_BATCH_RUNS * lead,
                             NEW_SAMPLE_MS) + NEW_GRAPH_SAMPLE_MS / 2
  if len(kept) < 2 or kept[1]["launch"]["median_ms"] >= lead * (1 +
                                                                  CLEAR_LEAD):
    # A clear leader: alone, one round.
    return screen, max(left, min(floor_pmr, pmr)) if pmr > left else pmr, verify
  members = len(kept)
  settled = kept[1]["launch"]["median_ms"] < lead * (1 + TIE_MARGIN)
  rounds = min(pr["rounds"], NEW_MIN_ROUNDS) if settled else pr["rounds"]
  rounds = max(rounds, 2)
  if members * 2 * pmr <= left:
    return screen, members * pmr * max(
        2, min(rounds, int(left // (members * pmr)))), verify
  # The two floor rounds with shortened samples: of the whole pool while
  # the budget lasts, else of the near-ties (within NEW_FLOOR_MARGIN).
  near = sum(1 for r in kept
             if r["launch"]["median_ms"] <= lead * (1 + NEW_FLOOR_MARGIN))
  pmr = max(left / (members * 2), min(floor_pmr, pmr))
  first = (members if left > 0 else near) * pmr
  second = (members if left - first >= members * pmr else near) * pmr
  return screen, first + second, verify


def estimate_rows(rows, factor):
  header = [
      "set", "pass", "n", "Find ms", "old search/Find", "est. screen",
      "est. retime", "est. verify", "est. search/Find",
      "est. (S+R+V)/own find"
  ]
  out = [header]
  for (set_name, pas), g in sorted(group(rows).items()):
    find = total(g, "bench_find_ms")
    s = r = v = 0.0
    for pr in g:
      a, b, c = estimate_one(pr, factor)
      s += a
      r += b
      v += c
    fixed = total(g, "setup_ms") + total(g, "find_ms")
    out.append([
        set_name, pas,
        str(len(g)), f"{find:.0f}", f"{total(g, 'search_ms') / find:.2f}",
        f"{s:.0f}", f"{r:.0f}", f"{v:.0f}", f"{(fixed + s + r + v) / find:.2f}",
        f"{(s + r + v) / total(g, 'find_ms'):.2f}"
    ])
  return out


def sums_row(rows, label, factor):
  """One row over all problems of `rows`: old and estimated search/Find."""
  find = total(rows, "bench_find_ms")
  est = sum(sum(estimate_one(pr, factor)) for pr in rows)
  fixed = total(rows, "setup_ms") + total(rows, "find_ms")
  return (f"{label}: {len(rows)} problems, Find {find:.0f} ms, old search/Find"
          f" {total(rows, 'search_ms') / find:.2f}, estimated"
          f" {(fixed + est) / find:.2f} (set-up and own Find"
          f" {fixed / find:.2f}, the rest {est / find:.2f})")


def render(table, markdown):
  buf = io.StringIO()
  if markdown:
    buf.write("| " + " | ".join(table[0]) + " |\n")
    buf.write("|" + "---|" * len(table[0]) + "\n")
    for row in table[1:]:
      buf.write("| " + " | ".join(row) + " |\n")
    return buf.getvalue()
  widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
  for k, row in enumerate(table):
    buf.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() +
              "\n")
    if k == 0:
      buf.write("  ".join("-" * w for w in widths) + "\n")
  return buf.getvalue()


def run_parser(doc):
  """The arguments every reader of regret runs takes: RUN... and
  --markdown; `doc` is the tool's docstring (its first line describes it)."""
  parser = argparse.ArgumentParser(description=doc.splitlines()[0])
  parser.add_argument("runs", nargs="+",
                      help="regret.tar.gz files or folders holding sets/")
  parser.add_argument("--markdown", action="store_true",
                      help="markdown tables instead of aligned text")
  return parser


def missing_run(tool, runs):
  """Says which of `runs` does not exist (on stderr) and returns True, or
  returns False."""
  for run in runs:
    if not os.path.exists(run):
      print(f"{tool}: no such file or folder: {run}", file=sys.stderr)
      return True
  return False


def main(argv):
  parser = run_parser(__doc__)
  parser.add_argument("--estimate", action="store_true",
                      help="also estimate the budget policy's cost")
  parser.add_argument("--factor", type=float, default=NEW_FACTOR,
                      help="search_budget_factor for the estimate")
  args = parser.parse_args(argv)
  if missing_run("budget_phases", args.runs):
    return 2
  rows = []
  for run in args.runs:
    rows.extend(problems(run))
  if not rows:
    print("budget_phases: no searched problems found", file=sys.stderr)
    return 1
  sys.stdout.write(render(table_rows(rows), args.markdown))
  kinds = {}
  for pr in rows:
    kinds[pool_kind(pr)] = kinds.get(pool_kind(pr), 0) + 1
  sys.stdout.write("re-timing pools by how far the re-timed runner-up trailed: " +
                   ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) +
                   f" (of {len(rows)})\n")
  if args.estimate:
    sys.stdout.write("\n")
    sys.stdout.write(render(estimate_rows(rows, args.factor), args.markdown))
    for set_name in sorted({pr["set"] for pr in rows}):
      sys.stdout.write(
          sums_row([pr for pr in rows if pr["set"] == set_name], set_name,
                   args.factor) + "\n")
    sys.stdout.write(sums_row(rows, "all", args.factor) + "\n")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
