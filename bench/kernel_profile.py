#!/usr/bin/env python3
"""Where a benchmark model's forward spends its time on the GPU: runs mte's
model.so (run_device, CUDA graph replay after two warm-up runs) under
torch.profiler (CUPTI sees every kernel in the process, mte's too) and
prints the kernels grouped by name, by total GPU time.

Usage (on the GPU machine, in the folder bench/prepare.sh builds, after
run.py --keep-data has left NAME.data beside NAME.so):
    LD_LIBRARY_PATH=. python3 kernel_profile.py NAME [--runs 5] [--top 25]
"""
import argparse
import collections
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    os.environ.setdefault("MTE_RUNTIME_LIBRARY",
                          os.path.join(HERE, "libmte_runtime.so"))
    import torch
    import mte

    model = mte.load(os.path.join(HERE, args.name + ".so"))
    (inp,), (out,) = model.inputs, model.outputs
    ids = torch.randint(0, 1000, tuple(inp.shape), device="cuda")
    result = torch.empty(tuple(out.shape), device="cuda",
                         dtype=torch.float32 if out.dtype == "f32" else torch.bfloat16)
    stream = torch.cuda.current_stream()
    for _ in range(3):  # eager, captured, replayed
        model.run_device([ids.data_ptr()], [result.data_ptr()], stream.cuda_stream)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(args.runs):
            model.run_device([ids.data_ptr()], [result.data_ptr()], stream.cuda_stream)
        torch.cuda.synchronize()
    totals = collections.defaultdict(lambda: [0.0, 0])
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            entry = totals[event.name]
            entry[0] += event.device_time_total
            entry[1] += 1
    grand = sum(t for t, _ in totals.values())
    print(f"{args.name}: {grand / args.runs / 1000:.3f} ms of GPU time per forward "
          f"({len(totals)} distinct kernels/copies)")
    for name, (t, n) in sorted(totals.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{t / args.runs / 1000:9.3f} ms {100 * t / grand:5.1f}% "
              f"{n // args.runs:4d}x  {name[:110]}")


if __name__ == "__main__":
    main()
