#!/usr/bin/env python3
"""mte's FP8 linears (--precision=fp8: current scaling, issue 19) against
its bf16 ones and cuBLASLt through PyTorch, at the GEMM shapes of the
benchmark models, on one H200.

Each case is one ONNX MatMul, bf16 input [M, K] and output, a bf16 [K, N]
weight (seeded, regenerated here on the GPU machine for the references),
compiled twice with --target=cuda: --precision=bf16, and --precision=fp8
(the weight quantized at compile time; the input's amax, scale and
quantize on every run, then a cuBLASLt E4M3 GEMM with the scale pointers).
On the GPU, per case and per input set: the forward of each model between
CUDA events (warm-up, then the median of many runs), PyTorch's bf16
`x @ W` and its FP8 GEMM alone (`torch._scaled_mm` on operands quantized
beforehand: cuBLASLt's raw FP8 rate) and with per-tensor current scaling
of the input each call; the kernels of mte's FP8 forward from
torch.profiler (how much the amax and quantize passes cost); and the
outputs against float32, as cosine similarity.

  build (compile machine):  fp8_gemm.py build OUTDIR MTE_COMPILE
  run (GPU machine):        cd OUTDIR && LD_LIBRARY_PATH=. python3 fp8_gemm.py run
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
M = 8192
# name: (N, K): a Llama-7B-like projection at a quarter of K (the model
# file must travel: 16 MiB of bf16 weight), GPT-2 small's QKV and FC2.
SHAPES = {"llama_proj_4096x2048": (4096, 2048),
          "gpt2_qkv_2304x768": (2304, 768),
          "gpt2_fc2_768x3072": (768, 3072)}
SEED = 5
INPUT_SETS, WARMUP, ITERS = 3, 10, 50


def weight(n, k):
    """The case's weight [K, N] in float32 (bf16-representable)."""
    import numpy as np
    w = np.random.default_rng(SEED + n + k).standard_normal((k, n)).astype(np.float32)
    w *= np.float32(1 / np.sqrt(k))
    bits = w.view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def build(outdir, compiler):
    import numpy as np
    import onnx
    from onnx import TensorProto as T, helper as h
    os.makedirs(outdir, exist_ok=True)
    for name, (n, k) in SHAPES.items():
        w = weight(n, k)
        bits = (w.view(np.uint32) >> 16).astype(np.uint16)
        init = h.make_tensor("w", T.BFLOAT16, [k, n], bits.tobytes(), raw=True)
        graph = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
                             name, [h.make_tensor_value_info("x", T.BFLOAT16, [M, k])],
                             [h.make_tensor_value_info("y", T.BFLOAT16, [M, n])], [init])
        path = os.path.join(outdir, f"fp8_gemm_{name}.onnx")
        onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]), path)
        for precision in ("bf16", "fp8"):
            subprocess.run([compiler, path, "-o",
                            os.path.join(outdir, f"fp8_gemm_{name}.{precision}.so"),
                            "--target=cuda", f"--precision={precision}"], check=True)
        os.remove(path)


def median_ms(torch, fn):
    stream = torch.cuda.current_stream()
    for _ in range(WARMUP):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(ITERS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(ITERS)]
    for s, e in zip(starts, ends):
        s.record(stream)
        fn()
        e.record(stream)
    ends[-1].synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def run():
    os.environ.setdefault("MTE_RUNTIME_LIBRARY", os.path.join(HERE, "libmte_runtime.so"))
    import torch
    import mte

    results, failures = {}, 0
    fp8 = torch.float8_e4m3fn
    for name, (n, k) in SHAPES.items():
        w = torch.from_numpy(weight(n, k)).cuda().to(torch.bfloat16)  # [K, N]
        models = {p: mte.load(os.path.join(HERE, f"fp8_gemm_{name}.{p}.so"))
                  for p in ("bf16", "fp8")}
        wt = w.t().contiguous()  # [N, K]
        w_scale = (w.float().abs().max() / 448).reshape(())
        w8 = (wt.float() / w_scale).to(fp8)  # [N, K], K-major
        flops = 2 * M * n * k
        case = {"times_ms": {}, "cosine_vs_fp32": {}}
        gen = torch.Generator(device="cuda").manual_seed(1)
        for trial in range(INPUT_SETS):
            x = torch.randn(M, k, generator=gen, device="cuda").to(torch.bfloat16)
            out = {p: torch.empty(M, n, dtype=torch.bfloat16, device="cuda") for p in models}
            handle = torch.cuda.current_stream().cuda_stream

            def mte_fn(p):
                return lambda: models[p].run_device([x.data_ptr()], [out[p].data_ptr()], handle)
            x_scale = (x.float().abs().max() / 448).reshape(())
            x8 = (x.float() / x_scale).to(fp8)

            def scaled_mm():
                return torch._scaled_mm(x8, w8.t(), scale_a=x_scale, scale_b=w_scale,
                                        out_dtype=torch.bfloat16)

            def scaled_mm_current():
                s = (x.abs().max().float() / 448)
                q = (x.float() / s).to(fp8)
                return torch._scaled_mm(q, w8.t(), scale_a=s, scale_b=w_scale,
                                        out_dtype=torch.bfloat16)
            fns = {"mte_fp8": mte_fn("fp8"), "mte_bf16": mte_fn("bf16"),
                   "torch_bf16": lambda: x @ w,
                   "torch_fp8_gemm": scaled_mm,
                   "torch_fp8_current": scaled_mm_current}
            for engine, fn in fns.items():
                case["times_ms"].setdefault(engine, []).append(median_ms(torch, fn))
            torch.cuda.synchronize()
            want = x.float() @ w.float()
            for engine, got in [("mte_fp8", out["fp8"]), ("mte_bf16", out["bf16"]),
                                ("torch_fp8_current", scaled_mm_current())]:
                cos = float(torch.nn.functional.cosine_similarity(
                    got.float().flatten(), want.flatten(), dim=0))
                case["cosine_vs_fp32"].setdefault(engine, []).append(cos)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                fns["mte_fp8"]()
            torch.cuda.synchronize()
        kernels = {}
        for event in prof.events():
            if event.device_type == torch.autograd.DeviceType.CUDA:
                kernels[event.name] = kernels.get(event.name, 0.0) + event.device_time_total / 20
        case["mte_fp8_kernels_us"] = kernels
        med = {e: statistics.median(t) for e, t in case["times_ms"].items()}
        case["median_ms"] = med
        case["tflops"] = {e: flops / (t * 1e-3) / 1e12 for e, t in med.items()}
        cos = min(case["cosine_vs_fp32"]["mte_fp8"])
        ok = cos >= 0.99
        failures += not ok
        results[name] = case
        print(f"{name} (M={M} N={n} K={k}) {'PASS' if ok else 'FAIL'}: "
              f"mte fp8 cosine vs fp32 {cos:.5f} "
              f"(torch fp8 {min(case['cosine_vs_fp32']['torch_fp8_current']):.5f})")
        for e in fns:
            print(f"    {e:18s} {med[e] * 1e3:8.1f} us  {case['tflops'][e]:7.1f} TFLOP/s")
        print(f"    mte fp8 / mte bf16: {med['mte_bf16'] / med['mte_fp8']:.2f}x; "
              f"mte fp8 GEMM at {med['torch_fp8_gemm'] / med['mte_fp8']:.2f} of the raw "
              f"cuBLASLt FP8 rate (whole forward)")
        for kernel, t in sorted(kernels.items(), key=lambda kv: -kv[1]):
            print(f"    {t:8.1f} us  {kernel[:80]}")
    with open(os.path.join(os.environ.get("OUT", HERE), "fp8_gemm.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        sys.exit(run())
    if len(sys.argv) == 4 and sys.argv[1] == "build":
        build(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(__doc__)
