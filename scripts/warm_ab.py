#!/usr/bin/env python3
"""The table of scripts/warm_ab.sh: per model, dtype and benchmark setting,
the median first iteration of the plain processes and of those run with the
compared setting, their ratio, and the medians of the timer's
runtime-compiled plan finalizes (builds or stored-plan loads).

  warm_ab.py AB-RUNS.jsonl   -> a markdown table on stdout
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from first_iteration_split import split  # noqa: E402


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    groups = {}
    for r in rows:
        k = (r["model_name"], r["dtype"], bool(r["benchmark"]))
        groups.setdefault(k, {}).setdefault(r["variant"], []).append(split(r))
    print("| model | dtype | benchmark | setting | n | first iteration, median (min-max) s "
          "| rtc finalizes, median s (n) | ratio to plain |")
    print("|---|---|---|---|---|---|---|---|")
    for (model, dtype, bench), by in sorted(groups.items()):
        plain = by.get("plain", [])
        base = statistics.median(s["first"] for s in plain) if plain else None
        for variant in ["plain"] + sorted(v for v in by if v != "plain"):
            ss = by.get(variant, [])
            if not ss:
                continue
            first = [s["first"] for s in ss]
            med = statistics.median(first)
            rtc = statistics.median(s["rtc"] for s in ss)
            rtc_n = statistics.median(s["rtc_n"] for s in ss)
            ratio = f"{med / base:.3f}" if base else "-"
            print(f"| {model} | {dtype} | {'on' if bench else 'off'} | {variant} | {len(ss)} "
                  f"| {med:.2f} ({min(first):.2f}-{max(first):.2f}) | {rtc:.2f} ({rtc_n:g}) "
                  f"| {ratio} |")


if __name__ == "__main__":
    main()
