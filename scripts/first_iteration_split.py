#!/usr/bin/env python3
"""The table of scripts/first_iteration_split.sh: one row per run of
split-runs.jsonl, the first iteration split by libtunedb_cudnn_call_timer's
sums. Times in seconds.

  first_iteration_split.py SPLIT-RUNS.jsonl > split.md

Columns: heuristics (finalizes of engine-heuristics descriptors), rtc builds
(plan builds of engines cuDNN notes as runtime-compiled: count, seconds, the
engines), other builds (every other plan build), other finalizes (graphs,
engine configs, variant packs, ...), rest (the first iteration less those:
the benchmark's timing runs, the iteration itself, Python).
"""
import json
import sys


def split(r):
    t = r.get("timer") or {}
    fin = t.get("finalize", {})
    heur = fin.get("engine_heuristics", {}).get("ms", 0.0) / 1e3
    plans = fin.get("execution_plan", {}).get("ms", 0.0) / 1e3
    others = sum(v["ms"] for k, v in fin.items()
                 if k not in ("engine_heuristics", "execution_plan")) / 1e3
    rtc_ms, rtc_n, rtc_engines = 0.0, 0, []
    for engine, e in t.get("plan_by_engine", {}).items():
        if e.get("rtc"):
            rtc_ms += e["ms"]
            rtc_n += e["calls"]
            rtc_engines.append(engine)
    rtc = rtc_ms / 1e3
    first = r["first_iter_s"]
    return {"first": first, "heur": heur, "rtc": rtc, "rtc_n": rtc_n,
            "rtc_engines": ",".join(sorted(rtc_engines, key=int)),
            "builds": plans - rtc, "others": others,
            "rest": first - heur - plans - others}


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    print("| model | dtype | benchmark | tunedb | first iteration | heuristics | "
          "rtc builds (n, engines) | other builds | other finalizes | rest | "
          "steady ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = split(r)
        print(f"| {r.get('model_name', r.get('model'))} | {r['dtype']} | "
              f"{'on' if r['benchmark'] else 'off'} | {r['label']} | "
              f"{s['first']:.2f} | {s['heur']:.2f} | {s['rtc']:.2f} "
              f"({s['rtc_n']}; {s['rtc_engines'] or '-'}) | {s['builds']:.2f} | "
              f"{s['others']:.2f} | {s['rest']:.2f} | {r['steady_ms']:.1f} |")


if __name__ == "__main__":
    main()
