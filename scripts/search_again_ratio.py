#!/usr/bin/env python3
"""How much a second search of the same keys cost against the first.

Reads the daemons' logs (their "searched <hash> on device N in X ms" lines,
in the order given: each key's first line is its first search, its second
the search again) and the records the first searches stored (`tunedb
export`), and prints, for keys whose leader is a runtime-compiled engine and
for the others, the summed time of the first search and of the second,
their ratio, the stored plans the second searches loaded and, where the
logs carry them, the summed phases of both.

  scripts/search_again_ratio.py DROPIN_OUT   # holds tunedbd.log, records.jsonl
  scripts/search_again_ratio.py [--again AGAIN.jsonl] RECORDS.jsonl LOG [LOG...]

With --again (the records the second searches stored), it also compares
each key's leaders after the first and the second search.
"""
import argparse
import collections
import json
import os
import re


def key_hash(text):
    """ProblemKey::HashText: 64-bit FNV-1a with tunedb's offset basis."""
    h = 1469598103934665603
    for b in text.encode():
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


# The phases of a search as the daemon logs them (tuning_core.cc).
PHASES = (r"setup (\d+), find (\d+) \(heuristics (\d+)\), screen (\d+), "
          r"retime (\d+), verify (\d+) ms")
PHASE_NAMES = ("setup", "find", "heuristics", "screen", "retime", "verify")


def phase_sums(sel, which):
    """Summed phases (ms) of the selected rows' first (0) or second (1)
    searches, or None where a log line lacks them."""
    got = [r["phases"][which] for r in sel]
    if not got or any(p is None for p in got):
        return None
    return {n: round(sum(p[i] for p in got)) for i, n in enumerate(PHASE_NAMES)}


def config(result):
    return (result["algo"], result.get("engine", {}).get("knobs"),
            result["math_type"])


def leader(record):
    ok = [x for x in record["results"] if x["status"] == "ok"]
    return min(ok, key=lambda x: x["launch"]["median_ms"]) if ok else None


def compare_leaders(first_path, again_path):
    """Each key's leader (fastest OK result) after the first search and
    after the second: how often they are one config, and how much slower
    the first's leader ran than the second's, both timed by the second
    search (only where it re-timed both)."""
    def load(path):
        with open(path) as f:
            return {r["key"]: r for r in map(json.loads, f)}
    first, again = load(first_path), load(again_path)
    same, ratios = 0, []
    for key, record in first.items():
        if key not in again:
            continue
        a, b = leader(record), leader(again[key])
        if a is None or b is None:
            continue
        same += config(a) == config(b)
        timed = {config(x): x for x in again[key]["results"]
                 if x["status"] == "ok"}
        t = timed.get(config(a))
        if t and t.get("retimed") and b.get("retimed"):
            ratios.append(t["launch"]["median_ms"] / b["launch"]["median_ms"])
    ratios.sort()
    return {"keys": len(first), "same": same, "both_retimed": len(ratios),
            "median": ratios[len(ratios) // 2] if ratios else 0,
            "above_1.02": sum(r > 1.02 for r in ratios),
            "above_1.05": sum(r > 1.05 for r in ratios),
            "worst": ratios[-1] if ratios else 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", help="records.jsonl, or a folder with "
                    "tunedbd.log and records.jsonl")
    ap.add_argument("logs", nargs="*", help="daemon logs, in search order")
    ap.add_argument("--again", help="the records the second searches stored: "
                    "also compare each key's leaders")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    if os.path.isdir(args.records):
        logs = [os.path.join(args.records, "tunedbd.log")]
        records_path = os.path.join(args.records, "records.jsonl")
    else:
        logs, records_path = args.logs, args.records
    times = collections.defaultdict(list)
    loaded = collections.defaultdict(list)
    phases = collections.defaultdict(list)
    for path in logs:
        with open(path) as log:
            for line in log:
                m = re.search(r"searched (\w+) on device \d+ in ([\d.]+) ms"
                              r"(?: \(.*?(\d+) stored plans loaded)?", line)
                if not m:
                    continue
                times[m.group(1)].append(float(m.group(2)))
                loaded[m.group(1)].append(int(m.group(3) or 0))
                p = re.search(PHASES, line)
                phases[m.group(1)].append(
                    [float(x) for x in p.groups()] if p else None)
    rows = []
    with open(records_path) as records:
        for line in records:
            r = json.loads(line)
            ok = [x for x in r["results"] if x["status"] == "ok"]
            notes = ok[0].get("engine", {}).get("behavior_notes", 0) if ok else 0
            plans = sum(1 for x in r["results"] if x.get("engine", {}).get("plan"))
            rtc = sum(1 for x in r["results"]
                      if x.get("engine", {}).get("behavior_notes", 0) & 1)
            h = key_hash(r["key"])
            rows.append({"rtc_leader": bool(notes & 1),
                         "ms": times.get(h, []),
                         "loaded": loaded.get(h, [0, 0]),
                         "phases": phases.get(h, [None, None]),
                         "plans_kept": plans, "rtc_configs": rtc})
    summary = {}
    for kind, flag in (("rtc_leader", True), ("other", False)):
        sel = [r for r in rows if r["rtc_leader"] == flag and len(r["ms"]) >= 2]
        first = sum(r["ms"][0] for r in sel)
        second = sum(r["ms"][1] for r in sel)
        summary[kind] = {"keys": len(sel), "first_ms": round(first),
                         "second_ms": round(second),
                         "plans_loaded_again": sum(r["loaded"][1] for r in sel),
                         "phases_first_ms": phase_sums(sel, 0),
                         "phases_again_ms": phase_sums(sel, 1),
                         "ratio": round(second / first, 3) if first else None}
    leaders = compare_leaders(records_path, args.again) if args.again else None
    if args.json:
        print(json.dumps(dict(summary, leaders=leaders) if leaders else summary))
        return
    print("%-11s %5s %10s %10s %6s %13s" % ("keys", "n", "first ms", "again ms",
                                            "ratio", "plans loaded"))
    for kind, s in summary.items():
        print("%-11s %5d %10d %10d %6s %13d" % (
            kind, s["keys"], s["first_ms"], s["second_ms"], s["ratio"],
            s["plans_loaded_again"]))
    for kind, s in summary.items():
        for which in ("first", "again"):
            p = s["phases_%s_ms" % which]
            if p:
                print("%-11s %-5s phases (ms): %s" % (
                    kind, which, ", ".join("%s %d" % kv for kv in p.items())))
    if leaders:
        c = leaders
        print("leaders: %d keys, %d the same config; where both leaders were "
              "re-timed by the second search (%d keys), the first's / the "
              "second's: median %.3f, %d above 1.02, %d above 1.05, worst %.3f"
              % (c["keys"], c["same"], c["both_retimed"], c["median"],
                 c["above_1.02"], c["above_1.05"], c["worst"]))


if __name__ == "__main__":
    main()
