#!/usr/bin/env python3
"""Reproducibility of unmodified PyTorch training under pins (docs/pins.md).

  pin_repro_bench.py run --model resnet50 --dtype fp16 --benchmark 1 --label L
      One process: seeded model and input, one training iteration; prints one
      JSON line with the first iteration's time and SHA-256 hashes of the
      output and of the first convolution's weight gradient (and of all conv
      weight gradients together).
  pin_repro_bench.py summarize RUNS.jsonl OUT.md
      Per group (label without its "#k" suffix): processes, distinct hashes,
      median first iteration; as a Markdown table and JSON on stdout.
"""
import argparse
import hashlib
import json
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
    print(json.dumps({
        "label": args.label, "model": args.model, "dtype": args.dtype,
        "benchmark": bool(args.benchmark), "deterministic": bool(args.deterministic),
        "first_iter_s": round(first_s, 4), "out_sha": sha(out),
        "first_conv_grad_sha": sha(convs[0][1].grad),
        "conv_grads_sha": every.hexdigest()[:16],
        "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
        "gpu": torch.cuda.get_device_name()}), flush=True)


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
    with open(out_md, "w") as f:
        f.write("| group | processes | distinct outputs | distinct first-conv wgrads | "
                "distinct all-conv wgrads | first iteration, median |\n|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['group']} | {r['processes']} | {r['distinct_out']} | "
                    f"{r['distinct_first_conv_grad']} | {r['distinct_conv_grads']} | "
                    f"{r['first_iter_median_s']} s |\n")
    json.dump(rows, sys.stdout, indent=1)
    print()


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
    s = sub.add_parser("summarize", help="distinct hashes per group")
    s.add_argument("runs")
    s.add_argument("out_md")
    a = ap.parse_args()
    if a.cmd == "run":
        run(a)
    else:
        summarize(a.runs, a.out_md)


if __name__ == "__main__":
    main()
