#!/usr/bin/env python3
"""The tables of scripts/model_table.sh: per model and dtype, the first
iteration, the GPU time per iteration and the error against the fp64 truth,
without tunedb and with a warm database, benchmark on and off.

  model_table.py TABLE-RUNS.jsonl OUT_DIR   -> OUT_DIR/table.md, table.json

Each row of TABLE-RUNS.jsonl is one process of pytorch_dropin_bench.py run
with "model_name" added (and "search_s", "searches" on the cold row). The
verdicts use the targets of the issue on runtime-compiled engines:
  - first iteration with a warm database <= 1.5 s, benchmark on and off;
  - for the depthwise models named in HALF_OF_OFF, warm (benchmark off)
    <= 0.5x PyTorch's own benchmark-off first iteration;
  - GPU time (median of CUDA-graph replays) <= 1.00x PyTorch's own picks
    with the same benchmark setting, within NOISE (the replays' own spread);
  - the error against the fp64 truth (relative L2 over all conv weight
    gradients) <= max(TOLERANCE, 1.5x the larger of PyTorch's own two
    errors): tunedb's algorithms may round differently, not worse.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from first_iteration_split import split  # noqa: E402

FIRST_ITER_S = 1.5
HALF_OF_OFF = ("mobilenet_v3_large", "efficientnet_b0")
TOLERANCE = {"fp16": 2e-2, "fp32": 1e-2}
# Two processes replaying the same plans differ by up to 0.2 % here
# (bench/results/2026-12-02-h200-pins-2: 1.0008x and 0.9998x for identical
# plans): a ratio within that of 1.00 is not a loss.
NOISE = 0.002


def graphed_ms(r):
    g = (r or {}).get("graphed") or {}
    return g.get("median_ms")


def ratio(a, b):
    return round(a / b, 4) if a is not None and b else None


def worst_tensor(warm_rows, own_rows):
    """The gradient whose error with tunedb is the largest multiple of
    PyTorch's own larger error on it: (name, multiple, tunedb's, PyTorch's)."""
    worst = None
    for w in warm_rows:
        for name, err in (w.get("grad64_tensors") or {}).items():
            own = max([o.get("grad64_tensors", {}).get(name, 0.0) for o in own_rows] or [0.0])
            m = err / max(own, 1e-12)
            if worst is None or m > worst[1]:
                worst = (name, round(m, 2), err, own)
    return worst


def combo(rows):
    """The verdicts of one model and dtype from its rows."""
    def pick(label, bench):
        found = [r for r in rows if r["label"] == label and r["benchmark"] == bench]
        return found[-1] if found else None
    own_on, own_off = pick("no tunedb", True), pick("no tunedb", False)
    warm_on, warm_off = pick("tunedb warm", True), pick("tunedb warm", False)
    cold = pick("tunedb cold", False) or pick("tunedb cold", True)
    model, dtype = rows[0]["model_name"], rows[0]["dtype"]
    c = {"model": model, "dtype": dtype}
    for name, r in (("own_on", own_on), ("own_off", own_off),
                    ("warm_on", warm_on), ("warm_off", warm_off)):
        c[name + "_first_s"] = r["first_iter_s"] if r else None
        c[name + "_gpu_ms"] = graphed_ms(r)
        c[name + "_err64"] = r.get("grad64_rel_l2") if r else None
        c[name + "_preload"] = r.get("preload", "") if r else ""
    c["search_s"] = cold.get("search_s") if cold else None
    c["searches"] = cold.get("searches") if cold else None
    warm_firsts = [c["warm_on_first_s"], c["warm_off_first_s"]]
    c["first_ok"] = (None if None in warm_firsts
                     else max(warm_firsts) <= FIRST_ITER_S)
    c["warm_off_vs_own_off"] = ratio(c["warm_off_first_s"], c["own_off_first_s"])
    c["half_of_off_ok"] = (None if model not in HALF_OF_OFF or c["warm_off_vs_own_off"] is None
                           else c["warm_off_vs_own_off"] <= 0.5)
    c["gpu_on_ratio"] = ratio(c["warm_on_gpu_ms"], c["own_on_gpu_ms"])
    c["gpu_off_ratio"] = ratio(c["warm_off_gpu_ms"], c["own_off_gpu_ms"])
    gpu = [x for x in (c["gpu_on_ratio"], c["gpu_off_ratio"]) if x is not None]
    c["gpu_ok"] = None if len(gpu) < 2 else max(gpu) <= 1.0 + NOISE
    own_err = [x for x in (c["own_on_err64"], c["own_off_err64"]) if x is not None]
    warm_err = [x for x in (c["warm_on_err64"], c["warm_off_err64"]) if x is not None]
    if own_err and warm_err:
        c["err_tolerance"] = max(TOLERANCE[dtype], 1.5 * max(own_err))
        c["err_ok"] = max(warm_err) <= c["err_tolerance"]
        w = worst_tensor([r for r in (warm_on, warm_off) if r],
                         [r for r in (own_on, own_off) if r])
        c["worst_tensor"] = list(w) if w else None
    else:
        c["err_tolerance"] = c["err_ok"] = c["worst_tensor"] = None
    return c


def fmt(x, spec):
    return "–" if x is None else format(x, spec)


def verdict(ok):
    return "–" if ok is None else ("yes" if ok else "**no**")


def tables(combos, splits):
    out = ["## First iteration (s), batch 64 training, a fresh process each",
           "",
           "| model | dtype | PyTorch, bench on | PyTorch, bench off | tunedb warm, on | "
           "tunedb warm, off | <= 1.5 s | warm off / PyTorch off | search (s, searches) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for c in combos:
        half = fmt(c["warm_off_vs_own_off"], ".2f")
        if c["half_of_off_ok"] is not None:
            half += " (<= 0.5: %s)" % verdict(c["half_of_off_ok"])
        out.append(f"| {c['model']} | {c['dtype']} | {fmt(c['own_on_first_s'], '.2f')} | "
                   f"{fmt(c['own_off_first_s'], '.2f')} | {fmt(c['warm_on_first_s'], '.2f')} | "
                   f"{fmt(c['warm_off_first_s'], '.2f')} | {verdict(c['first_ok'])} | {half} | "
                   f"{fmt(c['search_s'], '.1f')}, {fmt(c['searches'], 'd')} |")
    out += ["", "## GPU time per iteration (ms, median of CUDA-graph replays)", "",
            "| model | dtype | PyTorch, on | tunedb, on | ratio | PyTorch, off | "
            "tunedb, off | ratio | <= 1.00x |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in combos:
        out.append(f"| {c['model']} | {c['dtype']} | {fmt(c['own_on_gpu_ms'], '.3f')} | "
                   f"{fmt(c['warm_on_gpu_ms'], '.3f')} | {fmt(c['gpu_on_ratio'], '.4f')} | "
                   f"{fmt(c['own_off_gpu_ms'], '.3f')} | {fmt(c['warm_off_gpu_ms'], '.3f')} | "
                   f"{fmt(c['gpu_off_ratio'], '.4f')} | {verdict(c['gpu_ok'])} |")
    out += ["", "## Error against the fp64 truth (relative L2, all conv weight gradients)", "",
            "| model | dtype | PyTorch, on | PyTorch, off | tunedb, on | tunedb, off | "
            "tolerance | within | worst gradient (x PyTorch's own error) |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in combos:
        w = c["worst_tensor"]
        worst = "–" if not w else f"{w[0]} ({w[1]}x: {w[2]:.2g} vs {w[3]:.2g})"
        out.append(f"| {c['model']} | {c['dtype']} | {fmt(c['own_on_err64'], '.2e')} | "
                   f"{fmt(c['own_off_err64'], '.2e')} | {fmt(c['warm_on_err64'], '.2e')} | "
                   f"{fmt(c['warm_off_err64'], '.2e')} | {fmt(c['err_tolerance'], '.2e')} | "
                   f"{verdict(c['err_ok'])} | {worst} |")
    out += ["", "## Where PyTorch's own first iteration goes (s)", "",
            "| model | dtype | benchmark | first | heuristics | rtc builds (n; engines) | "
            "other builds | other finalizes | rest |",
            "|---|---|---|---|---|---|---|---|---|"]
    for model, dtype, bench, s in splits:
        out.append(f"| {model} | {dtype} | {'on' if bench else 'off'} | {s['first']:.2f} | "
                   f"{s['heur']:.2f} | {s['rtc']:.2f} ({s['rtc_n']}; {s['rtc_engines'] or '-'}) | "
                   f"{s['builds']:.2f} | {s['others']:.2f} | {s['rest']:.2f} |")
    return "\n".join(out) + "\n"


def summarize(runs_path, out_dir):
    rows = [json.loads(l) for l in open(runs_path) if l.strip().startswith("{")]
    groups = {}
    for r in rows:
        groups.setdefault((r["model_name"], r["dtype"]), []).append(r)
    combos = [combo(g) for g in groups.values()]
    splits = [(r["model_name"], r["dtype"], r["benchmark"], split(r))
              for r in rows if r["label"] == "no tunedb" and r.get("timer")]
    with open(os.path.join(out_dir, "table.json"), "w") as f:
        json.dump(combos, f, indent=1)
    text = tables(combos, splits)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(text)
    return combos, text


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    _, text = summarize(sys.argv[1], sys.argv[2])
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
