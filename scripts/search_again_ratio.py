#!/usr/bin/env python3
"""How much a second search of the same keys cost against the first.

Reads a daemon's log (its "searched <hash> on device N in X ms" lines) and
the records it stored (`tunedb export`), and prints, for keys whose leader
is a runtime-compiled engine and for the others, the summed time of the
first search and of the second, and their ratio; then the first keys of the
runtime-compiled kind, with their kept plans.

  scripts/search_again_ratio.py DROPIN_OUT   # holds tunedbd.log, records.jsonl
"""
import argparse
import collections
import json
import re


def key_hash(text):
    """ProblemKey::HashText: 64-bit FNV-1a with tunedb's offset basis."""
    h = 1469598103934665603
    for b in text.encode():
        h ^= b
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="folder with tunedbd.log and records.jsonl")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    times = collections.defaultdict(list)
    with open(args.out + "/tunedbd.log") as log:
        for line in log:
            m = re.search(r"searched (\w+) on device \d+ in ([\d.]+) ms", line)
            if m:
                times[m.group(1)].append(float(m.group(2)))
    rows = []
    with open(args.out + "/records.jsonl") as records:
        for line in records:
            r = json.loads(line)
            ok = [x for x in r["results"] if x["status"] == "ok"]
            notes = ok[0].get("engine", {}).get("behavior_notes", 0) if ok else 0
            plans = sum(1 for x in r["results"] if x.get("engine", {}).get("plan"))
            rtc = sum(1 for x in r["results"]
                      if x.get("engine", {}).get("behavior_notes", 0) & 1)
            rows.append({"rtc_leader": bool(notes & 1),
                         "ms": times.get(key_hash(r["key"]), []),
                         "plans_kept": plans, "rtc_configs": rtc})
    summary = {}
    for kind, flag in (("rtc_leader", True), ("other", False)):
        sel = [r for r in rows if r["rtc_leader"] == flag and len(r["ms"]) >= 2]
        first = sum(r["ms"][0] for r in sel)
        second = sum(r["ms"][1] for r in sel)
        summary[kind] = {"keys": len(sel), "first_ms": round(first),
                         "second_ms": round(second),
                         "ratio": round(second / first, 3) if first else None}
    if args.json:
        print(json.dumps(summary))
        return
    print("%-11s %5s %10s %10s %6s" % ("keys", "n", "first ms", "again ms", "ratio"))
    for kind, s in summary.items():
        print("%-11s %5d %10d %10d %6s" % (kind, s["keys"], s["first_ms"],
                                           s["second_ms"], s["ratio"]))


if __name__ == "__main__":
    main()
