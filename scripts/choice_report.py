#!/usr/bin/env python3
"""How often tunedb's choice differs from the fastest result, and what that
costs per training iteration, for each kind of caller.

Starts a daemon on a scratch database, imports RECORDS (a `tunedb export`
file), and asks `tunedb query --csv` for the choice of three callers:
  fastest      --compile-horizon 0 --loads-plans: build time never counts
               (what PyTorch's benchmark picks, up to the heuristic rule);
  loads plans  --loads-plans: the preload's default (stored plans load);
  compiles     default horizon: a program that compiles every plan.
Each choice is compared with the record's fastest OK result (launch time)
and with cuDNN's heuristic choice (heuristic_rank 1); the per-iteration sum
counts each key once (one call per key per training iteration).

  scripts/choice_report.py BUNDLE RECORDS [--json]
"""
import argparse
import csv
import io
import json
import os
import subprocess
import tempfile
import time


def run_queries(bundle, records):
    work = tempfile.mkdtemp(prefix="tunedb-choice-")
    sock = os.path.join(work, "d.sock")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.path.join(bundle, "lib") + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    daemon = subprocess.Popen(
        [os.path.join(bundle, "bin", "tunedbd"), "--db",
         os.path.join(work, "c.db"), "--socket", sock, "--finder", "simulated",
         "--log-level", "warn"], env=env)
    try:
        for _ in range(300):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        cli = [os.path.join(bundle, "bin", "tunedb"), "--address", "unix:" + sock]
        subprocess.run(cli + ["import", records], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        modes = {"fastest": ["--compile-horizon", "0", "--loads-plans"],
                 "loads plans": ["--loads-plans"], "compiles": []}
        out = {}
        for name, flags in modes.items():
            text = subprocess.run(cli + ["query", "--csv"] + flags, env=env,
                                  check=True, capture_output=True, text=True).stdout
            out[name] = {row["key"]: row for row in csv.DictReader(io.StringIO(text))}
        return out
    finally:
        daemon.terminate()
        daemon.wait()


def fastest_and_heuristic(records):
    facts = {}
    with open(records) as f:
        for line in f:
            r = json.loads(line)
            ok = [x for x in r["results"] if x["status"] == "ok"]
            if not ok:
                continue
            cost = lambda x: x["launch"]["median_ms"] if x["launch"]["samples"] else x["gpu"]["median_ms"]
            fastest = min(ok, key=cost)
            heur = [x for x in ok if x.get("heuristic_rank", 0) > 0]
            heur = min(heur, key=lambda x: x["heuristic_rank"]) if heur else None
            facts[r["key"]] = {"fastest_ms": cost(fastest),
                               "fastest_algo": fastest["algo"],
                               "heuristic_ms": cost(heur) if heur else None}
    return facts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bundle", help="a bundle (bin/tunedbd, bin/tunedb)")
    ap.add_argument("records", help="a `tunedb export` file")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    facts = fastest_and_heuristic(args.records)
    choices = run_queries(args.bundle, args.records)
    report = {}
    for mode, rows in choices.items():
        keys = [k for k in rows if k in facts and rows[k]["best_ms"]]
        chosen = sum(float(rows[k]["best_ms"]) for k in keys)
        fastest = sum(facts[k]["fastest_ms"] for k in keys)
        heur_keys = [k for k in keys if facts[k]["heuristic_ms"] is not None]
        report[mode] = {
            "keys": len(keys),
            # best_ms is printed to 3 decimals: slower than the fastest by
            # more than that rounding.
            "not_the_fastest": sum(1 for k in keys
                                   if float(rows[k]["best_ms"]) >
                                   round(facts[k]["fastest_ms"], 3) + 0.0005),
            "heuristics_choice": sum(1 for k in keys if rows[k]["best_heuristic_rank"] == "1"),
            "sum_chosen_ms": round(chosen, 3),
            "sum_fastest_ms": round(fastest, 3),
            "vs_fastest": round(chosen / fastest, 4) if fastest else None,
            "sum_heuristic_ms": round(sum(facts[k]["heuristic_ms"] for k in heur_keys), 3),
            "vs_heuristic": round(
                sum(float(rows[k]["best_ms"]) for k in heur_keys) /
                sum(facts[k]["heuristic_ms"] for k in heur_keys), 4) if heur_keys else None,
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("%-12s %5s %9s %10s %14s %11s %13s" % (
        "caller", "keys", "not best", "heuristic", "sum chosen ms", "vs fastest",
        "vs heuristic"))
    for mode, r in report.items():
        print("%-12s %5d %9d %10d %14.3f %11s %13s" % (
            mode, r["keys"], r["not_the_fastest"], r["heuristics_choice"],
            r["sum_chosen_ms"], r["vs_fastest"], r["vs_heuristic"]))


if __name__ == "__main__":
    main()
