#!/usr/bin/env python3
"""One fresh-process measurement for scripts/pytorch_dropin.sh.

  pytorch_dropin_bench.py run --dtype fp16|fp32 --benchmark 0|1
      [--iters 100] [--blocks 10] [--warmup-s 3] [--graphed]
      [--batch 64] [--model resnet50] [--save REF.pt | --ref REF.pt]
      [--save64 TRUTH.pt] [--ref64 TRUTH.pt] [--keep-conv-cache]
      [--deterministic] [--no-tf32] --label TEXT
      -> one JSON line on stdout: first-iteration seconds, steady-state
         ms/iter (median and fastest of the blocks; with --graphed also
         of CUDA-graph replays of the iteration: its GPU time), and with
         --ref the largest relative difference of the output and of the
         gradients against the reference run; with --ref64 the relative
         L2 errors against the float64 truth (--save64 computes it without
         cuDNN, after the timed first iteration).
  pytorch_dropin_bench.py summarize RUNS.jsonl OUT_DIR
      -> OUT_DIR/dropin.json and OUT_DIR/dropin.md.

ResNet-50 (torchvision's when installed, else the same architecture defined
here) or another torchvision model (--model, e.g. mobilenet_v3_large), batch 64, forward and backward (no optimizer step, so every iteration
computes the same thing), weights and input from seed 0 on the CPU. fp16 runs
channels-last. Whether cuDNN's legacy API is used is the caller's
TORCH_CUDNN_V8_API_DISABLED. --keep-conv-cache turns off PyTorch's emptying
of its caching allocator after each convolution it benchmarks
(torch._C._cudnn_set_conv_benchmark_empty_cache(False)), to measure what
that emptying costs a first iteration. --deterministic and --no-tf32 set
torch.backends.cudnn.deterministic = True and allow_tf32 = False: the
stricter filters PyTorch applies to cuDNN's configs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def build_model(name):
    """torchvision's `name` without weights (ResNet-50 also without
    torchvision), with its random layers turned off (without_randomness)."""
    if name == "resnet50":
        model, source = resnet50()
    else:
        import torchvision
        model, source = (getattr(torchvision.models, name)(weights=None),
                         "torchvision " + name)
    return without_randomness(model), source


def without_randomness(model):
    """Dropout and stochastic depth (MobileNetV3's and EfficientNet's
    classifiers, ConvNeXt's and EfficientNet's blocks) set to p = 0: no
    convolution changes, and every process, and the fp64 truth
    (--save64), computes the same function of the same input."""
    for m in model.modules():
        if type(m).__name__ in ("Dropout", "Dropout2d", "StochasticDepth"):
            m.p = 0.0
    return model


def fp64_truth(model, x):
    """The first iteration again in float64 without cuDNN (PyTorch's own
    kernels: nothing reaches cuDNN, a preload or the call timer): the
    output and every conv weight's gradient, as float64 on the CPU. The
    reference a run's fp16 or fp32 error is measured against, whichever
    algorithms it ran."""
    import copy
    import torch
    m = copy.deepcopy(model).to(torch.float64, memory_format=torch.contiguous_format)
    for p in m.parameters():
        p.grad = None
    with torch.backends.cudnn.flags(enabled=False):
        y = m(x.to(torch.float64, memory_format=torch.contiguous_format))
        y.mean().backward()
    truth = {"out": y.detach().cpu()}
    for name, p in m.named_parameters():
        if p.grad is not None and p.dim() == 4:
            truth["grad." + name] = p.grad.detach().cpu()
    del m, y
    torch.cuda.empty_cache()
    return truth


def errors_vs_truth(got, truth):
    """Relative L2 errors of a run's output and conv weight gradients
    against the fp64 truth: of the output, of all gradients together, and
    per gradient tensor."""
    def rel(a, b):
        return ((a.double() - b).norm() / b.norm().clamp_min(1e-300)).item()
    diff2 = norm2 = 0.0
    per = {}
    for k, v in truth.items():
        if k == "out":
            continue
        d = got[k].double() - v
        diff2 += d.pow(2).sum().item()
        norm2 += v.pow(2).sum().item()
        per[k] = rel(got[k], v)
    return {"out64_rel_l2": rel(got["out"], truth["out"]),
            "grad64_rel_l2": (diff2 ** 0.5) / max(norm2 ** 0.5, 1e-300),
            "grad64_tensors": {k: float("%.3g" % e) for k, e in per.items()}}


def resnet50():
    try:
        import torchvision
        return torchvision.models.resnet50(weights=None), "torchvision"
    except Exception:
        pass
    import torch.nn as nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride, down):
            super().__init__()
            cout = width * 4
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.down = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout)) if down else None)

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            return self.relu(self.bn3(self.conv3(y)) + idt)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
              nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            layers.append(Bottleneck(cin, width, stride if b == 0 else 1, b == 0))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers), "builtin"


def sm_clock_mhz():
    """The GPU's current SM clock (nvidia-smi), or None where unknown."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits",
             "-i", os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]],
            capture_output=True, text=True, timeout=10).stdout
        return int(out.split()[0])
    except Exception:
        return None


def warm_up(step, seconds):
    """Runs step() for at least 10 calls and `seconds` seconds: warm-up by
    time, not by count (the GPU idles at a low clock and ramps up under
    load). Returns the calls made."""
    import torch
    start = time.perf_counter()
    n = 0
    while n < 10 or time.perf_counter() - start < seconds:
        step()
        n += 1
    torch.cuda.synchronize()
    return n


def timed_blocks(run_once, args):
    """--blocks blocks of --iters / --blocks calls of run_once each, timed
    with CUDA events from an idle GPU: ms per call of each block, sorted."""
    import torch
    blocks = []
    per_block = max(args.iters // args.blocks, 1)
    for _ in range(args.blocks):
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(per_block):
            run_once()
        end.record()
        torch.cuda.synchronize()
        blocks.append(start.elapsed_time(end) / per_block)
    return sorted(blocks)


def graphed_steady(model, x, step, args):
    """The same iteration captured once into a CUDA graph and replayed: the
    GPU time of the plans the process chose, without the host's launch costs
    and their noise. {"median_ms", "best_ms", "blocks_ms"} or {"error"}."""
    import torch
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        for p in model.parameters():
            p.grad = None
        with torch.cuda.graph(graph):
            out = model(x)
            out.float().mean().backward()
        for _ in range(10):
            graph.replay()
        blocks = timed_blocks(graph.replay, args)
        return {"median_ms": round(blocks[len(blocks) // 2], 3),
                "best_ms": round(blocks[0], 3),
                "blocks_ms": [round(b, 3) for b in blocks]}
    except Exception as e:  # capture is not possible everywhere: say why
        return {"error": repr(e)[:300]}


def run(args):
    import torch
    torch.backends.cudnn.benchmark = bool(args.benchmark)
    if args.keep_conv_cache:
        torch._C._cudnn_set_conv_benchmark_empty_cache(False)
    if args.deterministic:
        torch.backends.cudnn.deterministic = True
    if args.no_tf32:
        torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    model, source = build_model(args.model)
    x = torch.randn(args.batch, 3, 224, 224)
    dtype = torch.float16 if args.dtype == "fp16" else torch.float32
    fmt = torch.channels_last if args.dtype == "fp16" else torch.contiguous_format
    model = model.to("cuda", dtype=dtype, memory_format=fmt)
    x = x.to("cuda", dtype=dtype, memory_format=fmt)

    def step():
        for p in model.parameters():
            p.grad = None
        out = model(x)
        out.float().mean().backward()
        return out

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    ref = {"out": out.detach().float().cpu()}
    for name, p in model.named_parameters():
        if p.grad is not None and p.dim() == 4:
            ref["grad." + name] = p.grad.detach().float().cpu()
    if args.save64:
        torch.save(fp64_truth(model, x), args.save64)
    # Nothing may keep the first iteration's autograd graph alive: its
    # AccumulateGrad nodes belong to the default stream, and a graph capture
    # (--graphed) on another stream is invalidated by them.
    del out
    # A process whose first iteration was short (tunedb's, or benchmark off)
    # would otherwise start measuring on a colder GPU than one that has just
    # benchmarked for seconds.
    warm_iters = warm_up(step, args.warmup_s)
    clocks_before = sm_clock_mhz()
    # Steady state: the median of --blocks blocks of iters / blocks
    # iterations each (one long block is at the mercy of a clock dip or a
    # noisy neighbour), and the fastest block (what the plans can do when
    # nothing else interferes: rows whose launches are host-bound, like fp16
    # here, spread by tens of per cent between processes running the same
    # plans).
    blocks = timed_blocks(step, args)
    clocks_after = sm_clock_mhz()
    graphed = graphed_steady(model, x, step, args) if args.graphed else None
    result = {"label": args.label, "dtype": args.dtype,
              "benchmark": bool(args.benchmark),
              "legacy_api": os.environ.get("TORCH_CUDNN_V8_API_DISABLED") == "1",
              "tunedb": "LD_PRELOAD" in os.environ and "tunedb_preload" in os.environ["LD_PRELOAD"],
              "conv_benchmark_empty_cache": not args.keep_conv_cache,
              "deterministic": bool(args.deterministic),
              "allow_tf32": not args.no_tf32,
              "first_iter_s": round(first_s, 4),
              "steady_ms": round(blocks[len(blocks) // 2], 3),
              "steady_best_ms": round(blocks[0], 3),
              "steady_blocks_ms": [round(b, 3) for b in blocks],
              "iters": args.iters, "blocks": args.blocks,
              "warmup_iters": warm_iters,
              "sm_clock_mhz": [clocks_before, clocks_after],
              "graphed": graphed,
              "batch": args.batch, "model": source,
              "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
              "gpu": torch.cuda.get_device_name()}
    if args.save:
        torch.save(ref, args.save)
    if args.ref:
        base = torch.load(args.ref)
        worst_out = 0.0
        worst_grad, worst_name = 0.0, ""
        diff2 = norm2 = 0.0
        for k, v in base.items():
            d = ((ref[k] - v).abs().max() / v.abs().max().clamp_min(1e-30)).item()
            if k == "out":
                worst_out = d
            else:
                diff2 += (ref[k] - v).double().pow(2).sum().item()
                norm2 += v.double().pow(2).sum().item()
                if d > worst_grad:
                    worst_grad, worst_name = d, k
        # Per tensor, the largest difference relative to the tensor's largest
        # value; over all conv weight gradients together, the relative L2.
        result.update({"out_rel_diff": worst_out, "grad_rel_diff": worst_grad,
                       "grad_worst": worst_name,
                       "grad_rel_l2": (diff2 ** 0.5) / max(norm2 ** 0.5, 1e-30)})
    if args.ref64:
        result.update(errors_vs_truth(ref, torch.load(args.ref64)))
    print(json.dumps(result), flush=True)


TOLERANCE = {"fp16": 2e-2, "fp32": 1e-2}  # relative to the largest value


def path_of(r):
    return r["label"].split(",")[0]  # "legacy" or "default"


def summarize(runs_path, out_dir):
    runs = [json.loads(l) for l in open(runs_path) if l.strip().startswith("{")]
    # Per dtype and path, the run without tunedb with benchmark on: the
    # reference of speed and of outputs and gradients.
    # With REPEAT > 1 there are several such runs: the reference speed is
    # the median of their steady states, and the fastest of their blocks.
    steadies, bests = {}, {}
    for r in runs:
        if r["label"] == path_of(r) + ", no tunedb" and r["benchmark"]:
            steadies.setdefault((r["dtype"], path_of(r)), []).append(r["steady_ms"])
            if r.get("steady_best_ms"):
                bests.setdefault((r["dtype"], path_of(r)), []).append(r["steady_best_ms"])
    base = {k: statistics.median(v) for k, v in steadies.items()}
    base_best = {k: min(v) for k, v in bests.items()}
    # How far runs without tunedb differ from that reference (benchmark off:
    # other algorithms; benchmark on again, also with the cache kept:
    # PyTorch's own picks in another process): fp16 training gradients
    # through batch norm are that sensitive to the algorithm. The widest of
    # them sets the tolerance.
    spread = {}
    for r in runs:
        if (r["label"].startswith(path_of(r) + ", no tunedb") and
                "grad_rel_l2" in r):
            s = spread.setdefault((r["dtype"], path_of(r)),
                                  {"out_rel_diff": 0, "grad_rel_l2": 0})
            s["out_rel_diff"] = max(s["out_rel_diff"], r["out_rel_diff"])
            s["grad_rel_l2"] = max(s["grad_rel_l2"], r["grad_rel_l2"])
    for r in runs:
        b = base.get((r["dtype"], "legacy"))
        r["steady_vs_legacy_bench_on"] = round(r["steady_ms"] / b, 3) if b else None
        b = base.get((r["dtype"], path_of(r)))
        r["steady_vs_path_bench_on"] = round(r["steady_ms"] / b, 3) if b else None
        b = base_best.get((r["dtype"], path_of(r)))
        best = r.get("steady_best_ms")
        r["best_vs_path_bench_on"] = round(best / b, 3) if b and best else None
        if "out_rel_diff" in r:
            tol = TOLERANCE[r["dtype"]]
            s = spread.get((r["dtype"], path_of(r)), {})
            out_tol = max(tol, 1.5 * s.get("out_rel_diff", 0))
            grad_tol = max(tol, 1.5 * s.get("grad_rel_l2", 0))
            r["tolerance_used"] = {"out": out_tol, "grad_rel_l2": grad_tol}
            r["matches_reference"] = (r["out_rel_diff"] <= out_tol and
                                      r.get("grad_rel_l2", 1e9) <= grad_tol)
    lines = ["# PyTorch drop-in: ResNet-50 batch 64, fwd+bwd, fresh process per row", "",
             "Steady state (the median of a process's blocks, after a warm-up of "
             "at least 3 s) relative to the median of the runs of the same path (legacy: "
             "TORCH_CUDNN_V8_API_DISABLED=1; default: cuDNN's graph API) without "
             "tunedb, benchmark on, same dtype, and relative to the legacy one. "
             "Against the run of the same path without tunedb (benchmark on): out "
             "diff = the output's largest difference relative to its largest value; "
             "grad diff = the largest such difference of one conv weight gradient; "
             "grad L2 = the relative L2 difference of all conv weight gradients "
             f"together. A run matches when out diff and grad L2 are within {TOLERANCE} "
             "or 1.5x the widest difference of that path's other runs without tunedb "
             "(benchmark off; benchmark on again), whichever is larger.", "",
             "Best block: the fastest of the process's blocks; best vs bench-on's best: against the fastest block of the same path's runs without tunedb, benchmark on.", "",
             "| dtype | run | benchmark | first iteration (s) | steady (ms/iter) | vs same path bench-on | best block (ms/iter) | best vs bench-on's best | vs legacy bench-on | out diff | grad diff | grad L2 | match | preload |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append("| {} | {} | {} | {:.3f} | {:.2f} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["dtype"], r["label"], "on" if r["benchmark"] else "off",
            r["first_iter_s"], r["steady_ms"], r.get("steady_vs_path_bench_on"),
            r.get("steady_best_ms", ""), r.get("best_vs_path_bench_on"),
            r.get("steady_vs_legacy_bench_on"),
            "%.2e" % r["out_rel_diff"] if "out_rel_diff" in r else "",
            "%.2e" % r["grad_rel_diff"] if "grad_rel_diff" in r else "",
            "%.2e" % r["grad_rel_l2"] if "grad_rel_l2" in r else "",
            {True: "yes", False: "NO"}.get(r.get("matches_reference"), ""),
            r.get("preload", "")))
    # Per row kind (dtype, label, benchmark) over its repeats: the median of
    # the processes' steady states and the fastest block of any of them,
    # each against the same of the path's runs without tunedb, benchmark on.
    kinds = {}
    for r in runs:
        kinds.setdefault((r["dtype"], r["label"], r["benchmark"]), []).append(r)
    lines += ["", "Per row kind over its processes (REPEAT): the median of their "
              "steady states and of their first iterations, the fastest block of "
              "any, and the ratios to the same of the path's runs without tunedb, "
              "benchmark on.", "",
              "| dtype | run | benchmark | processes | first iteration, median (s) | "
              "steady, median (ms/iter) | vs bench-on | best block (ms/iter) | "
              "vs bench-on's best | steady of each process |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    aggregates = []
    for (dtype, label, bench), rs in kinds.items():
        key = (dtype, path_of(rs[0]))
        med = statistics.median(r["steady_ms"] for r in rs)
        best = min(r.get("steady_best_ms") or r["steady_ms"] for r in rs)
        agg = {"dtype": dtype, "label": label, "benchmark": bench,
               "processes": len(rs),
               "first_iter_s": statistics.median(r["first_iter_s"] for r in rs),
               "steady_ms": med, "best_ms": best,
               "steady_vs_bench_on": round(med / base[key], 3) if key in base else None,
               "best_vs_bench_on": round(best / base_best[key], 3) if key in base_best else None,
               "steady_each_ms": [r["steady_ms"] for r in rs]}
        graphed = [r["graphed"]["median_ms"] for r in rs
                   if (r.get("graphed") or {}).get("median_ms")]
        if graphed:
            agg["graphed_ms"] = statistics.median(graphed)
            agg["graphed_each_ms"] = graphed
        aggregates.append(agg)
        lines.append("| {} | {} | {} | {} | {:.3f} | {:.2f} | {} | {:.2f} | {} | {} |".format(
            dtype, label, "on" if bench else "off", len(rs), agg["first_iter_s"],
            med, agg["steady_vs_bench_on"], best, agg["best_vs_bench_on"],
            ", ".join("%.2f" % v for v in agg["steady_each_ms"])))
    graph_base = {}
    for a in aggregates:
        if a["label"] == path_of(a) + ", no tunedb" and a["benchmark"] and "graphed_ms" in a:
            graph_base[(a["dtype"], path_of(a))] = a["graphed_ms"]
    if any("graphed_ms" in a for a in aggregates):
        lines += ["", "GPU time alone (GRAPHED=1): each process's iteration captured "
                  "once into a CUDA graph after its steady state and replayed; the "
                  "median over the processes, against the same of the path's runs "
                  "without tunedb, benchmark on.", "",
                  "| dtype | run | benchmark | graphed, median (ms/iter) | vs bench-on | each process |",
                  "|---|---|---|---|---|---|"]
        for a in aggregates:
            if "graphed_ms" not in a:
                continue
            b = graph_base.get((a["dtype"], path_of(a)))
            a["graphed_vs_bench_on"] = round(a["graphed_ms"] / b, 3) if b else None
            lines.append("| {} | {} | {} | {:.3f} | {} | {} |".format(
                a["dtype"], a["label"], "on" if a["benchmark"] else "off",
                a["graphed_ms"], a["graphed_vs_bench_on"],
                ", ".join("%.3f" % v for v in a["graphed_each_ms"])))
    errors = [r for r in runs if (r.get("graphed") or {}).get("error")]
    for r in errors:
        lines.append("graph capture failed in {} (benchmark {}): {}".format(
            r["label"], r["benchmark"], r["graphed"]["error"]))
    timed = [r for r in runs if "timer" in r]
    if timed:
        # libtunedb_cudnn_call_timer.so's sums over the whole process (plans
        # are built in the first iteration only; executes are every launch).
        def calls(r):
            f = r["timer"].get("finalize", {})
            get = lambda k, v: f.get(k, {}).get(v, 0)
            return ["%.3f" % r["first_iter_s"], get("execution_plan", "calls"),
                    "%.1f" % get("execution_plan", "ms"),
                    get("engine", "calls") + get("engine_config", "calls"),
                    "%.1f" % (get("engine", "ms") + get("engine_config", "ms")),
                    "%.1f" % get("engine_heuristics", "ms"),
                    r["timer"]["execute"]["calls"],
                    "%.1f" % r["timer"]["execute"]["ms"]]

        # Where the plan builds went, per engine (the timer's
        # plan_by_engine): the engines of the most expensive builds.
        def by_engine(r):
            by = r["timer"].get("plan_by_engine", {})
            top = sorted(by.items(), key=lambda kv: -kv[1]["ms"])[:8]
            return ["; ".join("{}{}: {}, {:.1f} ({:.1f})".format(
                e, " rtc" if v.get("rtc") else "", v["calls"], v["ms"],
                v["max_ms"]) for e, v in top)]

        tables = [
            ("cuDNN backend calls per process (TIMER=1): plan builds "
             "(execution-plan finalizes), engine and engine-config finalizes "
             "(tunedb's answer makes these), heuristics finalizes, executes "
             "(host time of the launch).",
             ["first iteration (s)", "plans", "plan ms",
              "engine+config finalizes", "their ms", "heuristics ms",
              "executes", "execute ms"], calls),
            ("Plan builds by engine (the 8 engines whose builds took longest "
             "in each process; rtc: cuDNN notes the engine as "
             "runtime-compiled).",
             ["engine: builds, ms (slowest build ms)"], by_engine)]
        for caption, columns, cells in tables:
            columns = ["dtype", "run", "benchmark"] + columns
            lines += ["", caption, "", "| " + " | ".join(columns) + " |",
                      "|" + "---|" * len(columns)]
            for r in timed:
                row = [r["dtype"], r["label"],
                       "on" if r["benchmark"] else "off"] + cells(r)
                lines.append("| " + " | ".join(str(c) for c in row) + " |")
    if runs:
        r = runs[0]
        lines += ["", f"{r['gpu']}, PyTorch {r['torch']}, cuDNN {r['cudnn']}, model {r['model']}."]
    json.dump({"runs": runs, "tolerance": TOLERANCE, "aggregates": aggregates},
              open(os.path.join(out_dir, "dropin.json"), "w"), indent=1)
    open(os.path.join(out_dir, "dropin.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dtype", choices=["fp16", "fp32"], required=True)
    r.add_argument("--benchmark", type=int, choices=[0, 1], required=True)
    r.add_argument("--iters", type=int, default=100)
    r.add_argument("--blocks", type=int, default=10)
    r.add_argument("--warmup-s", type=float, default=3.0)
    r.add_argument("--graphed", action="store_true")
    r.add_argument("--batch", type=int, default=64)
    r.add_argument("--model", default="resnet50",
                   help="a torchvision model name (built without weights)")
    r.add_argument("--save")
    r.add_argument("--ref")
    r.add_argument("--save64", help="compute the fp64 truth of the first "
                   "iteration (without cuDNN) and save it here")
    r.add_argument("--ref64", help="measure the output's and gradients' "
                   "errors against this fp64 truth")
    r.add_argument("--keep-conv-cache", action="store_true")
    r.add_argument("--deterministic", action="store_true")
    r.add_argument("--no-tf32", action="store_true")
    r.add_argument("--label", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("runs")
    s.add_argument("out_dir")
    args = ap.parse_args()
    if args.cmd == "run":
        run(args)
    else:
        summarize(args.runs, args.out_dir)


if __name__ == "__main__":
    sys.exit(main())
