#!/usr/bin/env python3
"""Reproducibility of unmodified PyTorch training under pins (docs/pins.md).

  pin_repro_bench.py run --model resnet50 --dtype fp16 --benchmark 1 --label L
      One process: seeded model and input, one training iteration; prints one
      JSON line with the first iteration's time and SHA-256 hashes of the
      output and of the first convolution's weight gradient (and of all conv
      weight gradients together).
  pin_repro_bench.py summarize RUNS.jsonl OUT.md
      Per group (label without its "#k" suffix): processes, distinct hashes,
      median first iteration and, where measured, median graph replay;
      as a Markdown table and JSON on stdout.
  pin_repro_bench.py agree PIN...
      The pins recorded by the ranks of one job (scripts/job_agree.sh): per
      slot (problem, det, launch, notes, ws), how many different answers the
      ranks got; JSON on stdout.
"""
import argparse
import hashlib
import json
import re
import statistics
import sys
import time


def run(args):
    import torch
    import torchvision
    torch.backends.cudnn.benchmark = bool(args.benchmark)
    if args.deterministic:
        torch.backends.cudnn.deterministic = True
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)(weights=None)
    torch.manual_seed(1)
    x = torch.randn(args.batch, 3, 224, 224)
    dtype = torch.float16 if args.dtype == "fp16" else torch.float32
    fmt = torch.channels_last if args.dtype == "fp16" else torch.contiguous_format
    model = model.to("cuda", dtype=dtype, memory_format=fmt)
    x = x.to("cuda", dtype=dtype, memory_format=fmt)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = model(x)
    out.float().mean().backward()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0

    def sha(t):
        return hashlib.sha256(t.detach().contiguous().cpu().numpy().tobytes()).hexdigest()[:16]

    convs = [(n, p) for n, p in model.named_parameters() if p.dim() == 4 and p.grad is not None]
    every = hashlib.sha256()
    for _, p in convs:
        every.update(p.grad.detach().contiguous().cpu().numpy().tobytes())
    hashes = {"out_sha": sha(out), "first_conv_grad_sha": sha(convs[0][1].grad),
              "conv_grads_sha": every.hexdigest()[:16]}
    # Nothing may keep the first iteration's autograd graph alive when a CUDA
    # graph is captured on another stream (--steady).
    del out
    steady = steady_gpu_ms(model, x, args) if args.steady else None
    print(json.dumps({
        "label": args.label, "model": args.model, "dtype": args.dtype,
        "benchmark": bool(args.benchmark), "deterministic": bool(args.deterministic),
        "first_iter_s": round(first_s, 4), **hashes, "graphed": steady,
        "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name()}), flush=True)


def steady_gpu_ms(model, x, args):
    """GPU time per iteration of the plans this process chose: a warm-up of
    --warmup-s seconds (the clock ramps up under load), then CUDA-graph
    replays (pytorch_dropin_bench.graphed_steady)."""
    from pytorch_dropin_bench import graphed_steady, warm_up

    def step():
        for p in model.parameters():
            p.grad = None
        model(x).float().mean().backward()

    warm_up(step, args.warmup_s)
    return graphed_steady(model, x, step, args)


def summarize(runs_path, out_md):
    groups = {}
    for line in open(runs_path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        groups.setdefault(r["label"].split("#")[0].strip(), []).append(r)
    rows = []
    for label, rs in groups.items():
        rows.append({
            "group": label, "processes": len(rs),
            "distinct_out": len({r["out_sha"] for r in rs}),
            "distinct_first_conv_grad": len({r["first_conv_grad_sha"] for r in rs}),
            "distinct_conv_grads": len({r["conv_grads_sha"] for r in rs}),
            "first_iter_median_s": round(statistics.median(r["first_iter_s"] for r in rs), 3)})
        graphed = [r["graphed"]["median_ms"] for r in rs
                   if (r.get("graphed") or {}).get("median_ms")]
        if graphed:
            rows[-1]["graphed_median_ms"] = round(statistics.median(graphed), 3)
            rows[-1]["graphed_each_ms"] = graphed
    with open(out_md, "w") as f:
        f.write("| group | processes | distinct outputs | distinct first-conv wgrads | "
                "distinct all-conv wgrads | first iteration, median | "
                "GPU ms/iter (graph replays), median |\n|---|---|---|---|---|---|---|\n")
        for r in rows:
            graphed = r.get("graphed_median_ms")
            f.write(f"| {r['group']} | {r['processes']} | {r['distinct_out']} | "
                    f"{r['distinct_first_conv_grad']} | {r['distinct_conv_grads']} | "
                    f"{r['first_iter_median_s']} s | "
                    f"{'%.3f' % graphed if graphed else '–'} |\n")
        by_group = {r["group"]: r for r in rows}
        for r in rows:
            warm = by_group.get(re.sub(r"timed pinned.*", "timed warm", r["group"]))
            if ("timed pinned" in r["group"] and warm and
                    "graphed_median_ms" in r and "graphed_median_ms" in warm):
                r["graphed_vs_warm"] = round(r["graphed_median_ms"] / warm["graphed_median_ms"], 4)
                r["first_iter_vs_warm"] = round(
                    r["first_iter_median_s"] / warm["first_iter_median_s"], 3)
                f.write(f"\n{r['group']} vs warm: GPU time {r['graphed_vs_warm']}×, "
                        f"first iteration {r['first_iter_vs_warm']}×\n")
    json.dump(rows, sys.stdout, indent=1)
    print()


SLOT_FIELDS = ("problem", "det", "launch", "notes", "ws")


def agree(pin_paths):
    """Slots answered differently across the given pins (each a rank's)."""
    answers = {}  # slot -> {pin: answer}
    for path in pin_paths:
        with open(path) as f:
            pin = json.load(f)
        mine = {}
        for a in pin["answers"]:
            slot = json.dumps([a.get(k) for k in SLOT_FIELDS])
            rest = {k: v for k, v in a.items() if k not in SLOT_FIELDS}
            mine.setdefault(slot, []).append(json.dumps(rest, sort_keys=True))
        for slot, configs in mine.items():
            answers.setdefault(slot, {})[path] = "\n".join(configs)
    differing = [json.loads(slot) for slot, by_pin in answers.items()
                 if len(set(by_pin.values())) > 1]
    partial = [json.loads(slot) for slot, by_pin in answers.items()
               if len(by_pin) < len(pin_paths)]
    sources = {}
    for by_pin in answers.values():
        for answer in by_pin.values():
            for config in answer.split("\n"):
                src = json.loads(config).get("source")
                sources[src] = sources.get(src, 0) + 1
    return {"pins": len(pin_paths), "slots": len(answers),
            "slots_answered_differently": len(differing),
            "slots_missing_in_some_pins": len(partial),
            "answer_sources": sources, "differing": differing[:20]}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one process, one training iteration")
    r.add_argument("--model", default="resnet50")
    r.add_argument("--dtype", choices=["fp16", "fp32"], required=True)
    r.add_argument("--benchmark", type=int, choices=[0, 1], default=1)
    r.add_argument("--deterministic", action="store_true")
    r.add_argument("--batch", type=int, default=64)
    r.add_argument("--label", required=True)
    r.add_argument("--steady", action="store_true",
                   help="also the GPU time per iteration, from CUDA-graph replays")
    r.add_argument("--warmup-s", type=float, default=3.0)
    r.add_argument("--iters", type=int, default=100, help="replays timed (with --steady)")
    r.add_argument("--blocks", type=int, default=10, help="blocks they are timed in")
    s = sub.add_parser("summarize", help="distinct hashes per group")
    s.add_argument("runs")
    s.add_argument("out_md")
    g = sub.add_parser("agree", help="slots answered differently across ranks' pins")
    g.add_argument("pins", nargs="+")
    a = ap.parse_args()
    if a.cmd == "run":
        run(a)
    elif a.cmd == "agree":
        json.dump(agree(a.pins), sys.stdout, indent=1)
        print()
    else:
        summarize(a.runs, a.out_md)


if __name__ == "__main__":
    main()
