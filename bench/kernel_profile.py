#!/usr/bin/env python3
"""Where a benchmark model's forward spends its time on the GPU: runs mte's
model.so (run_device, CUDA graph replay after two warm-up runs) under
torch.profiler (CUPTI sees every kernel in the process, mte's too) and
prints the kernels grouped by name, by total GPU time. For mte's row
kernels, whose names carry their shapes, it also prints the bytes they must
move (each input read once, each output written once; a causal softmax
reads only the visible half of its scores) as a fraction of the H200's
measured device-copy bandwidth (~4.3 TB/s, counting bytes read + written).

With --launches, also every launch of the last replay in order: its start
(from the replay's first kernel), duration, grid and block, then each
replay's span (first start to last end) against its busy time (the sum of
its kernels' durations; the rest is the GPU idle between graph nodes), and
the forward's latency between CUDA events (median of --runs), so that the
time no kernel accounts for is measured, not guessed.

Usage (on the GPU machine, in the folder bench/prepare.sh builds, after
run.py --keep-data has left NAME.data beside NAME.so):
    LD_LIBRARY_PATH=. python3 kernel_profile.py NAME [--runs 5] [--top 25]
                                                [--launches]
"""
import argparse
import collections
import json
import os
import re
import statistics
import sys
import tempfile

COPY_BANDWIDTH = 4.3e12  # bytes/s, read + written, measured on the H200
SIZES = {"f32": 4, "bf16": 2, "f16": 2}


def row_kernel_bytes(name):
    """Bytes a row kernel moves at least, from its name, or None."""
    m = re.match(r"mte_row_(layer_norm|rms_norm)_(\d+)x(\d+)x(f32|bf16|f16)"
                 r"(?:_to_(f32|bf16|f16))?(_bias)?(_residual)?(_amax)?(_e4m3)?"
                 r"_kernel", name)
    if m:
        kind, rows, length, t_in, t_out, bias, residual, amax, e4m3 = m.groups()
        elems = int(rows) * int(length)
        size_in = SIZES[t_in]
        size_out = 1 if e4m3 else SIZES[t_out or t_in]
        moved = elems * (size_in + size_out)
        if residual:   # the residual read, and the sum written
            moved += elems * 2 * size_in
        if amax:       # each row's max |y|
            moved += int(rows) * 4
        return moved
    # SwiGLU: gate and up read, the product (or its E4M3 codes) and the
    # rows' maxima written.
    m = re.match(r"mte_row_swiglu_(\d+)x(\d+)x(f32|bf16|f16)_amax(_e4m3)?"
                 r"_kernel", name)
    if m:
        rows, length, t_in, e4m3 = m.groups()
        elems = int(rows) * int(length)
        return elems * (2 * SIZES[t_in] + (1 if e4m3 else SIZES[t_in])) + \
            int(rows) * 4
    m = re.match(r"mte_attention_softmax_(\d+)x(\d+)x(\d+)x(\d+)x(f32|bf16|f16)"
                 r"(_causal)?", name)
    if m:
        b, h, sq, skv, t_out, causal = m.groups()
        rows, keys = int(b) * int(h) * int(sq), int(skv)
        read = rows * keys * 4 * (0.5 if causal else 1.0)
        return read + rows * keys * SIZES[t_out]
    return None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--launches", action="store_true",
                    help="list the last replay's launches, its idle time and "
                         "the forward's latency between CUDA events")
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
        line = (f"{t / args.runs / 1000:9.3f} ms {100 * t / grand:5.1f}% "
                f"{n // args.runs:4d}x  {name[:90]}")
        moved = row_kernel_bytes(name)
        if moved is not None and n:
            seconds = t / n * 1e-6          # one launch, in s
            rate = moved / seconds
            line += (f"  [{moved / 1e6:.0f} MB, {rate / 1e12:.2f} TB/s, "
                     f"{100 * rate / COPY_BANDWIDTH:.0f}% of copy]")
        print(line)
    if args.launches:
        print_launches(prof, args.runs)
        print_latency(torch, model, ids, result, stream, args.runs)


def print_launches(prof, runs):
    """The last replay's launches from the profiler's trace, in order."""
    with tempfile.NamedTemporaryFile(suffix=".json") as trace:
        prof.export_chrome_trace(trace.name)
        with open(trace.name) as f:
            events = json.load(f)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    gpu = sorted((e for e in events
                  if e.get("ph") == "X" and e.get("cat") in
                  ("kernel", "gpu_memset", "gpu_memcpy")),
                 key=lambda e: e["ts"])
    if not gpu or len(gpu) % runs:
        print(f"launches: {len(gpu)} GPU events for {runs} replays; not split")
        return
    per_run = len(gpu) // runs
    for r in range(runs):
        replay = gpu[r * per_run:(r + 1) * per_run]
        span = max(e["ts"] + e["dur"] for e in replay) - replay[0]["ts"]
        busy = sum(e["dur"] for e in replay)
        print(f"replay {r}: {per_run} launches, span {span / 1000:.3f} ms, "
              f"busy {busy / 1000:.3f} ms, idle {(span - busy) / 1000:.3f} ms")
    first = replay[0]["ts"]
    print("last replay (start us, duration us, grid, block, name):")
    for e in replay:
        a = e.get("args", {})
        print(f"  {e['ts'] - first:9.1f} {e['dur']:8.1f}  "
              f"{str(a.get('grid', '')):>16} {str(a.get('block', '')):>14}  "
              f"{e['name'][:80]}")


def print_latency(torch, model, ids, result, stream, runs):
    """The forward between two CUDA events, median of `runs` (at least 20)."""
    times = []
    for _ in range(max(runs, 20)):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        model.run_device([ids.data_ptr()], [result.data_ptr()], stream.cuda_stream)
        end.record(stream)
        end.synchronize()
        times.append(start.elapsed_time(end))
    print(f"latency between CUDA events: median {statistics.median(times):.3f} ms "
          f"of {len(times)}")


if __name__ == "__main__":
    main()
