#!/usr/bin/env python3
"""A program whose input sizes vary, measured in one fresh process, for
scripts/varying_shapes.sh (issue: shapes never seen).

  varying_shapes_bench.py run --label TEXT [--model resnet50] [--dtype fp16]
      [--mode inference|training] [--benchmark 0|1]
      [--sizes 192,224,...] [--batches 16] [--per-shape 20]
      -> one JSON line: for each (batch, size) in order, the first batch's
         seconds, the others' median ms and their GPU time (CUDA events),
         the peak memory, and an "oom" flag where the shape ran out of
         memory; and the totals.
  varying_shapes_bench.py summarize RUNS.jsonl
      -> a table on stdout (--json: the rows as JSON): per label, the total,
         the first batches' sum, the GPU ms per batch and the out-of-memory
         shapes, with the ratio of each total to a reference label's.

--sizes is a square-resolution sequence (default: 12 sizes from 192 to
544), --batches a batch-size sequence (default 16; e.g. 1,2,4,...,64): every
pair runs, batches outer, `--per-shape` batches each. fp16 runs
channels-last. Weights and inputs come from seed 0; no download.
"""
import argparse
import json
import statistics
import sys
import time

DEFAULT_SIZES = "192,224,256,288,320,352,384,416,448,480,512,544"


def run(args):
    import torch
    import torchvision
    torch.backends.cudnn.benchmark = bool(args.benchmark)
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.model)(weights=None)
    dtype = torch.float16 if args.dtype == "fp16" else torch.float32
    fmt = torch.channels_last if args.dtype == "fp16" else torch.contiguous_format
    model = model.to("cuda", dtype=dtype, memory_format=fmt)
    training = args.mode == "training"
    model.train(training)
    shapes = []
    total_start = time.perf_counter()
    for batch in [int(b) for b in args.batches.split(",")]:
        for size in [int(s) for s in args.sizes.split(",")]:
            x = torch.randn(batch, 3, size, size, device="cuda", dtype=dtype)
            x = x.contiguous(memory_format=fmt)
            shapes.append(one_shape(torch, model, x, training, args.per_shape,
                                    batch, size))
    torch.cuda.synchronize()
    result = {
        "label": args.label, "model": args.model, "dtype": args.dtype,
        "mode": args.mode, "benchmark": bool(args.benchmark),
        "total_s": round(time.perf_counter() - total_start, 4),
        "first_batches_s": round(sum(s.get("first_s", 0) for s in shapes), 4),
        "gpu_ms_per_batch": round(statistics.median(
            [s["gpu_ms"] for s in shapes if "gpu_ms" in s] or [0]), 4),
        "oom": [f'{s["batch"]}x{s["size"]}' for s in shapes if s.get("oom")],
        "shapes": shapes,
        "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name(),
    }
    print(json.dumps(result), flush=True)


def one_shape(torch, model, x, training, per_shape, batch, size):
    def step():
        if training:
            for p in model.parameters():
                p.grad = None
            model(x).float().mean().backward()
        else:
            with torch.no_grad():
                model(x)

    row = {"batch": batch, "size": size}
    torch.cuda.reset_peak_memory_stats()
    try:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        row["first_s"] = round(time.perf_counter() - t0, 4)
        host, gpu = [], []
        for _ in range(max(per_shape - 1, 0)):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            t = time.perf_counter()
            start.record()
            step()
            stop.record()
            stop.synchronize()
            host.append((time.perf_counter() - t) * 1e3)
            gpu.append(start.elapsed_time(stop))
        if host:
            row["ms"] = round(statistics.median(host), 3)
            row["gpu_ms"] = round(statistics.median(gpu), 3)
    except torch.cuda.OutOfMemoryError:
        row["oom"] = True
        torch.cuda.empty_cache()
    row["peak_bytes"] = torch.cuda.max_memory_allocated()
    return row


def summarize(runs_path, reference, as_json):
    runs = [json.loads(line) for line in open(runs_path) if line.startswith("{")]
    by_label = {}
    for r in runs:
        by_label.setdefault(r["label"], []).append(r)
    ref_total = None
    if reference in by_label:
        ref_total = statistics.median(r["total_s"] for r in by_label[reference])
    rows = []
    for label, rs in by_label.items():
        total = statistics.median(r["total_s"] for r in rs)
        rows.append({
            "label": label, "processes": len(rs),
            "total_s": round(total, 3),
            "first_batches_s": round(statistics.median(
                r["first_batches_s"] for r in rs), 3),
            "gpu_ms_per_batch": round(statistics.median(
                r["gpu_ms_per_batch"] for r in rs), 3),
            "oom_shapes": sorted({s for r in rs for s in r["oom"]}),
            "vs_reference": round(total / ref_total, 3) if ref_total else None,
        })
    if as_json:
        print(json.dumps(rows, indent=2))
        return rows
    print("| run | processes | total (s) | first batches (s) | GPU ms/batch | "
          f"total vs {reference} | out of memory |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f'| {r["label"]} | {r["processes"]} | {r["total_s"]} | '
              f'{r["first_batches_s"]} | {r["gpu_ms_per_batch"]} | '
              f'{r["vs_reference"]} | {", ".join(r["oom_shapes"]) or "none"} |')
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one process: every shape in order")
    r.add_argument("--label", required=True)
    r.add_argument("--model", default="resnet50")
    r.add_argument("--dtype", choices=["fp16", "fp32"], default="fp16")
    r.add_argument("--mode", choices=["inference", "training"],
                   default="inference")
    r.add_argument("--benchmark", type=int, choices=[0, 1], default=1)
    r.add_argument("--sizes", default=DEFAULT_SIZES)
    r.add_argument("--batches", default="16")
    r.add_argument("--per-shape", type=int, default=20)
    s = sub.add_parser("summarize", help="a table of the runs")
    s.add_argument("runs")
    s.add_argument("--reference", default="tunedb, sizes stored",
                   help="the label whose total the others are divided by")
    s.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.cmd == "run":
        run(args)
    else:
        summarize(args.runs, args.reference, args.json)


if __name__ == "__main__":
    sys.exit(main())
