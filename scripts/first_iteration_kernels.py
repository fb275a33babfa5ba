#!/usr/bin/env python3
"""Where a legacy-path first iteration goes beyond the daemon's wait: one
batch-64 training iteration of a torchvision model (unmodified PyTorch,
built as pytorch_dropin_bench.py builds it), timed, then a second one under
torch.profiler. Prints one JSON line:

  first_iter_s       the first iteration, wall (before the profiler starts)
  second_iter_s      the second, profiled (every kernel already loaded)
  distinct_kernels   the different CUDA kernels the second iteration runs
  kernel_launches    its kernel launches
  gpu_ms             its summed kernel time
  cudnn_host_ms      host time of its aten cuDNN convolution ops (self)

With CUDA_MODULE_LOADING=LAZY (CUDA's default) the first launch of each
kernel loads its module; comparing the first iteration of PyTorch alone
and of tunedb's choices under LAZY and EAGER tells how much of a gap is
loading the kernels the choices run.

  first_iteration_kernels.py --model densenet121 --dtype fp32 --label L
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_dropin_bench import build_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="densenet121")
    ap.add_argument("--dtype", choices=["fp16", "fp32"], required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--label", required=True)
    args = ap.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    model, _ = build_model(args.model)
    dtype = torch.float16 if args.dtype == "fp16" else torch.float32
    fmt = torch.channels_last if args.dtype == "fp16" else torch.contiguous_format
    model = model.to("cuda", dtype=dtype, memory_format=fmt)
    x = torch.randn(args.batch, 3, 224, 224).to("cuda", dtype=dtype,
                                                 memory_format=fmt)

    def step():
        for p in model.parameters():
            p.grad = None
        model(x).float().mean().backward()

    def timed():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    first = timed()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        second = timed()
    kernels, launches, gpu_us, cudnn_host_us = set(), 0, 0.0, 0.0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels.add(e.name)
            launches += 1
            gpu_us += e.device_time
        elif e.name in ("aten::cudnn_convolution",
                        "aten::convolution_backward"):
            cudnn_host_us += e.self_cpu_time_total
    print(json.dumps({
        "label": args.label, "model": args.model, "dtype": args.dtype,
        "module_loading": os.environ.get("CUDA_MODULE_LOADING", "LAZY"),
        "first_iter_s": round(first, 4), "second_iter_s": round(second, 4),
        "distinct_kernels": len(kernels), "kernel_launches": launches,
        "gpu_ms": round(gpu_us / 1e3, 3),
        "cudnn_host_ms": round(cudnn_host_us / 1e3, 3)}))


if __name__ == "__main__":
    main()
