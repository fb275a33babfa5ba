#!/usr/bin/env python3
"""A program whose input sizes vary, measured in one fresh process, for
scripts/varying_shapes.sh (issue: shapes never seen).

  varying_shapes_bench.py run --label TEXT [--model resnet50] [--dtype fp16]
      [--mode inference|training] [--benchmark 0|1]
      [--sizes 192,224,...] [--batches 16] [--per-shape 20]
      [--graph-replays 0]
      -> one JSON line: for each (batch, size) in order, the first batch's
         seconds, the others' median ms and their GPU time (CUDA events),
         the peak memory, and an "oom" flag where the shape ran out of
         memory; and the totals. With --graph-replays N, after the timed
         part, each shape's batch captured once into a CUDA graph and
         replayed N times ("graph_ms": the GPU time of the plans the
         process chose, without the host's launches).
  varying_shapes_bench.py summarize RUNS.jsonl
      -> a table on stdout (--json: the rows as JSON): per label, the total,
         the first batches' sum, the GPU ms per batch and the out-of-memory
         shapes, with the ratio of each total to a reference label's.
  varying_shapes_bench.py replays RUNS.jsonl --label A --against B
      -> per shape, the median graph_ms of label A's processes over label
         B's, and their geometric mean (--json: as JSON).

--sizes is a square-resolution sequence (default: 12 sizes from 192 to
544), --batches a batch-size sequence (default 16; e.g. 1,2,4,...,64): every
pair runs, batches outer, `--per-shape` batches each. fp16 runs
channels-last. Weights and inputs come from seed 0; no download.
"""
import argparse
import json
import math
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
    total_s = time.perf_counter() - total_start
    if args.graph_replays > 0:
        graph_replays(torch, model, training, shapes, args.graph_replays,
                      dtype, fmt)
    result = {
        "label": args.label, "model": args.model, "dtype": args.dtype,
        "mode": args.mode, "benchmark": bool(args.benchmark),
        "total_s": round(total_s, 4),
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
        step_once(torch, model, x, training)

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


def graph_replays(torch, model, training, shapes, replays, dtype, fmt):
    """Adds "graph_ms" to each shape that ran: its batch captured into a
    CUDA graph (the plans are the ones the process chose for it) and
    replayed, the median of 5 blocks of `replays` / 5 replays after 10 to
    warm up; "graph_error" where capture fails."""
    for row in shapes:
        if row.get("oom"):
            continue
        x = torch.randn(row["batch"], 3, row["size"], row["size"],
                        device="cuda", dtype=dtype)
        x = x.contiguous(memory_format=fmt)
        try:
            graph = torch.cuda.CUDAGraph()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(2):
                    step_once(torch, model, x, training)
            torch.cuda.current_stream().wait_stream(side)
            with torch.cuda.graph(graph):
                step_once(torch, model, x, training)
            for _ in range(10):
                graph.replay()
            per_block = max(replays // 5, 1)
            blocks = []
            for _ in range(5):
                start = torch.cuda.Event(enable_timing=True)
                stop = torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                start.record()
                for _ in range(per_block):
                    graph.replay()
                stop.record()
                stop.synchronize()
                blocks.append(start.elapsed_time(stop) / per_block)
            row["graph_ms"] = round(statistics.median(blocks), 4)
            del graph
        except Exception as e:  # capture is not possible everywhere: say why
            row["graph_error"] = repr(e)[:200]
        torch.cuda.empty_cache()


def step_once(torch, model, x, training):
    """One batch: forward (inference) or forward and backward (training)."""
    if training:
        for p in model.parameters():
            p.grad = None
        model(x).float().mean().backward()
    else:
        with torch.no_grad():
            model(x)


def replays(runs_path, label, against, as_json):
    """Per shape, label's median graph_ms over against's, and the geomean."""
    runs = [json.loads(line) for line in open(runs_path) if line.startswith("{")]

    def per_shape(name):
        got = {}
        for r in runs:
            if r["label"] != name:
                continue
            for s in r["shapes"]:
                if "graph_ms" in s:
                    got.setdefault((s["batch"], s["size"]), []).append(
                        s["graph_ms"])
        return {k: statistics.median(v) for k, v in got.items()}

    a, b = per_shape(label), per_shape(against)
    rows = [{"batch": k[0], "size": k[1], "ms": a[k], "against_ms": b[k],
             "ratio": round(a[k] / b[k], 4)}
            for k in sorted(set(a) & set(b)) if b[k] > 0]
    geomean = (math.exp(statistics.fmean(math.log(r["ratio"]) for r in rows))
               if rows else None)
    out = {"label": label, "against": against, "shapes": rows,
           "geomean": round(geomean, 4) if geomean else None,
           "sum_ms": round(sum(r["ms"] for r in rows), 4),
           "against_sum_ms": round(sum(r["against_ms"] for r in rows), 4)}
    if as_json:
        print(json.dumps(out, indent=2))
        return out
    print(f"GPU time (CUDA-graph replays) of '{label}' against '{against}'")
    print("| batch | size | ms | against ms | ratio |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f'| {r["batch"]} | {r["size"]} | {r["ms"]} | {r["against_ms"]} '
              f'| {r["ratio"]} |')
    if rows:
        print(f'| all | | {out["sum_ms"]} | {out["against_sum_ms"]} | '
              f'geomean {out["geomean"]}, sum {round(out["sum_ms"] / out["against_sum_ms"], 4)} |')
    return out


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
    r.add_argument("--graph-replays", type=int, default=0,
                   help="after the timed part, each shape's batch replayed "
                   "this many times as a CUDA graph (its GPU time)")
    s = sub.add_parser("summarize", help="a table of the runs")
    s.add_argument("runs")
    s.add_argument("--reference", default="tunedb, sizes stored",
                   help="the label whose total the others are divided by")
    s.add_argument("--json", action="store_true")
    g = sub.add_parser("replays", help="GPU time per shape, one label "
                       "against another")
    g.add_argument("runs")
    g.add_argument("--label", required=True)
    g.add_argument("--against", required=True)
    g.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.cmd == "run":
        run(args)
    elif args.cmd == "replays":
        replays(args.runs, args.label, args.against, args.json)
    else:
        summarize(args.runs, args.reference, args.json)


if __name__ == "__main__":
    sys.exit(main())
