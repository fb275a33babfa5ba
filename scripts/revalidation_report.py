#!/usr/bin/env python3
"""Judges a revalidation run (scripts/revalidate_run.sh) against the issue's
targets, for each direction (old -> new cuDNN version):

  - search time: the revalidated records' search_ms summed, over the full
    searches' of the same keys on the same version (target <= 0.25);
  - accuracy: each key's revalidated choice timed by the full search of the
    same key and version, over the full search's own choice (within 2 % on
    >= 95 % of keys; none above 1.10); a choice the full search did not time
    is counted apart. Each search is judged by its own times here, so the
    same comparison is also made the other way: the full search's choice
    timed by the revalidation, over the revalidation's choice, where the
    revalidation timed it ("own");
  - k from data: how often the full search's choice on the new version is
    among the old version's k fastest, k = 1..5.

A choice follows Choose's rule (record.h): the fastest OK result by launch
time, unless cuDNN's heuristic choice (lowest heuristic_rank) is within 2 %.

    revalidation_report.py OUT_DIR     # writes OUT_DIR/report.md and .json
"""

import json
import os
import sys

MIN_GAIN = 0.02   # kMinGainOverHeuristic
TIME_TARGET = 0.25
WITHIN = 1.02
SHARE_TARGET = 0.95
WORST_TARGET = 1.10


def load(path):
    records = {}
    if not os.path.exists(path):
        return records
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if "key" not in r:
            continue
        records[problem_of(r["key"])] = r
    return records


def problem_of(key):
    return "op=" + key.split(" op=", 1)[1]


def group_of(problem):
    fields = dict(f.split("=", 1) for f in problem.split())
    return "%s %s" % (fields.get("op"), fields.get("in_type"))


def config(r):
    engine = r.get("engine") or {}
    return (r["algo"], r["math_type"], engine.get("knobs", ""))


def cost(r):
    return r["launch"]["median_ms"]


def ok_results(record):
    return [r for r in record["results"] if r["status"] == "ok"]


def choice(record):
    ok = ok_results(record)
    if not ok:
        return None
    fastest = min(ok, key=cost)
    ranked = [r for r in ok if r.get("heuristic_rank", 0) > 0]
    if ranked:
        heuristic = min(ranked, key=lambda r: r["heuristic_rank"])
        if cost(fastest) >= cost(heuristic) * (1 - MIN_GAIN):
            return heuristic
    return fastest


def top_k(record, k):
    return [config(r) for r in sorted(ok_results(record), key=cost)[:k]]


def judge(old_full, new_full, revalidated, summary):
    """One direction: the figures and the targets' verdicts."""
    keys = [p for p in revalidated if p in new_full]
    ratios, own, untimed, no_choice = [], [], 0, 0
    reval_ms = full_ms = 0.0
    by_origin = {"revalidated": 0, "full search": 0}
    for p in keys:
        r, f = revalidated[p], new_full[p]
        by_origin["revalidated" if r.get("revalidated_from_cudnn") else
                  "full search"] += 1
        reval_ms += r["search_ms"]
        full_ms += f["search_ms"]
        rc, fc = choice(r), choice(f)
        if rc is None or fc is None:
            no_choice += 1
            continue
        retimed = {config(x): cost(x) for x in ok_results(r)}
        if config(fc) in retimed:
            own.append(retimed[config(fc)] / cost(rc))
        timed = {config(x): cost(x) for x in ok_results(f)}
        if config(rc) not in timed:
            untimed += 1
            continue
        ratios.append(timed[config(rc)] / cost(fc))
    within = sum(1 for x in ratios if x <= WITHIN)
    worst = max(ratios) if ratios else None
    time_ratio = reval_ms / full_ms if full_ms > 0 else None
    k_share = {}
    common = [p for p in new_full if p in old_full and choice(new_full[p])]
    for k in range(1, 6):
        hit = sum(1 for p in common
                  if config(choice(new_full[p])) in top_k(old_full[p], k))
        k_share[k] = hit / len(common) if common else None
    return {
        "keys": len(keys),
        "by_origin": by_origin,
        "summary": summary,
        "search_s": reval_ms / 1000,
        "full_search_s": full_ms / 1000,
        "time_ratio": time_ratio,
        "time_met": time_ratio is not None and time_ratio <= TIME_TARGET,
        "compared": len(ratios),
        "untimed_by_full_search": untimed,
        "without_choice": no_choice,
        "within_2pct": within,
        "within_share": within / len(ratios) if ratios else None,
        "within_met": bool(ratios) and within / len(ratios) >= SHARE_TARGET,
        "worst": worst,
        "worst_met": worst is not None and worst <= WORST_TARGET,
        "own_compared": len(own),
        "own_within_2pct": sum(1 for x in own if x <= WITHIN),
        "own_worst": max(own) if own else None,
        "new_choice_in_old_top_k": k_share,
    }


def fmt(x, f="%.3f"):
    return "-" if x is None else f % x


def markdown(results):
    lines = ["| direction | keys | revalidated / full | search time vs full "
             "| within 2 % | worst | the other way: within 2 %, worst "
             "| new choice in old top-1..5 |",
             "|---|---|---|---|---|---|---|---|"]
    for name, j in results.items():
        k = " / ".join(fmt(j["new_choice_in_old_top_k"][i], "%.2f")
                       for i in range(1, 6))
        lines.append(
            "| %s | %d | %d / %d | %s (%s s vs %s s)%s | %s of %d%s | %s%s "
            "| %d of %d, %s | %s |"
            % (name, j["keys"], j["by_origin"]["revalidated"],
               j["by_origin"]["full search"], fmt(j["time_ratio"]),
               fmt(j["search_s"], "%.1f"), fmt(j["full_search_s"], "%.1f"),
               "" if j["time_met"] else " **missed**",
               fmt(j["within_share"]),
               j["compared"], "" if j["within_met"] else " **missed**",
               fmt(j["worst"]), "" if j["worst_met"] else " **missed**",
               j["own_within_2pct"], j["own_compared"], fmt(j["own_worst"]), k))
    return "\n".join(lines) + "\n"


def main(argv):
    out = argv[1]
    full = {v: load(os.path.join(out, "full-%s.jsonl" % v))
            for v in ("9.14", "9.19")}
    results = {}
    for old, new in (("9.14", "9.19"), ("9.19", "9.14")):
        revalidated = load(os.path.join(out, "revalidated-%s.jsonl" % new))
        if not revalidated:
            continue
        summary_path = os.path.join(out, "revalidate-to-%s.json" % new)
        summary = (json.load(open(summary_path))
                   if os.path.exists(summary_path) else {})
        results["%s -> %s" % (old, new)] = judge(full[old], full[new],
                                                 revalidated, summary)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(results, f, indent=1)
    md = markdown(results)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
