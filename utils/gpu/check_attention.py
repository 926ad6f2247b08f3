#!/usr/bin/env python3
"""Checks, on a GPU machine, libmte_runtime's fused attention kernels
(mte_cuda_attention, lib/Runtime/FlashAttention.cu) directly through ctypes
against a float64 PyTorch reference, on fresh random inputs: bf16 and f16,
head dimensions 16/32/64/128, causal and not, grouped-query heads, token
counts that are not multiples of the kernels' blocks, more queries than keys
(rows that see no key are zeros) and fewer, Q/K/V as column slices of one
packed projection (strided rows) and as separate tensors, and key biases:
padding masks (0 / -inf per key, right and left padding, a row with every
key hidden), finite additive biases, and one bias row for every batch.
Then FP8 delayed scaling's output (E4M3 codes and each row's and head's
max |o|) bit for bit against PyTorch's cast of the kernel's 16-bit output,
and current scaling's (the 16-bit output, the same bits, with its maxima).

Tolerance: relative RMS error <= 1e-2 and max |error| <= 5e-2 * max |ref|
(the inputs are rounded to 16 bits, P is rounded to 16 bits before P.V, as
every flash-attention kernel does; fp32 accumulation).

--route picks what mte_cuda_attention runs (MTE_ATTENTION,
lib/Runtime/CudnnAttention.h): "kernel", mte's own kernels; "cudnn", cuDNN's
fused attention for every call without a key bias whose causal queries all
see a key (the others still take the kernels), where a call cuDNN cannot
plan is a failure. `make check-gpu` runs both.

With --bench, also times the route against PyTorch's
scaled_dot_product_attention, flash and cuDNN backends (efficient attention
where a padding mask is given), on the benchmark's shapes: CUDA events, 10
warm-ups, median of 50 runs; prints TFLOP/s counting the pairs the causal
mask keeps.

Usage: check_attention.py LIBMTE_RUNTIME [--route kernel|cudnn] [--bench]
"""
import argparse
import ctypes
import math
import os
import sys

import torch

DTYPES = {torch.float16: 2, torch.bfloat16: 3}  # mte_dtype


def load(path):
    lib = ctypes.CDLL(path)
    fn = lib.mte_cuda_attention
    fn.restype = None
    fn.argtypes = ([ctypes.c_uint64] * 4 + [ctypes.c_int64] * 14 +
                   [ctypes.c_float, ctypes.c_int32, ctypes.c_int32,
                    ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint64,
                    ctypes.c_uint64])
    return fn


def inputs(b, sq, skv, h, kv, d, dtype, packed, gen):
    """Q [b, sq, h*d], K and V [b, skv, kv*d]; with `packed`, the three are
    column slices of one [b, s, (h + 2 kv) d] tensor (sq == skv)."""
    def draw(*shape):
        return torch.randn(*shape, generator=gen, device="cuda").to(dtype)
    if packed:
        qkv = draw(b, sq, (h + 2 * kv) * d)
        return (qkv[..., :h * d], qkv[..., h * d:(h + kv) * d],
                qkv[..., (h + kv) * d:])
    return draw(b, sq, h * d), draw(b, skv, kv * d), draw(b, skv, kv * d)


def reference(q, k, v, h, kv, d, scale, causal, bias=None):
    b, sq, _ = q.shape
    skv = k.shape[1]
    q = q.double().reshape(b, sq, h, d).transpose(1, 2)
    k = k.double().reshape(b, skv, kv, d).transpose(1, 2)
    v = v.double().reshape(b, skv, kv, d).transpose(1, 2)
    k = k.repeat_interleave(h // kv, dim=1)
    v = v.repeat_interleave(h // kv, dim=1)
    s = scale * q @ k.transpose(-1, -2)
    if causal:
        i = torch.arange(sq, device=q.device)[:, None]
        j = torch.arange(skv, device=q.device)[None, :]
        s = s.masked_fill(j > i + (skv - sq), float("-inf"))
    if bias is not None:                # [b | 1, skv]: every head and query
        s = s + bias.double()[:, None, None, :]
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # rows that see no key
    return (p @ v).transpose(1, 2).reshape(b, sq, h * d)


def run(fn, q, k, v, h, kv, d, scale, causal, bias=None, fp8_scale=None,
        row_max=False):
    """The kernel's output; with `fp8_scale` (an f32 tensor of one element)
    its E4M3 codes (uint8), and with `row_max` also the rows' maxima."""
    b, sq, _ = q.shape
    if fp8_scale is None:
        out = torch.full((b, sq, h * d), float("nan"), dtype=q.dtype,
                         device="cuda")
    else:
        out = torch.full((b, sq, h * d), 0x7F, dtype=torch.uint8,
                         device="cuda")
    maxima = torch.full((b * sq * h,), float("nan"), device="cuda")
    bias_ptr = bias.data_ptr() if bias is not None else 0
    bias_stride = bias.shape[1] if bias is not None and bias.shape[0] > 1 else 0
    fn(q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), b, h, kv,
       sq, k.shape[1], d, q.stride(0), q.stride(1), k.stride(0), k.stride(1),
       v.stride(0), v.stride(1), out.stride(0), out.stride(1), scale,
       int(causal), DTYPES[q.dtype], bias_ptr, bias_stride,
       fp8_scale.data_ptr() if fp8_scale is not None else 0,
       maxima.data_ptr() if row_max else 0)
    torch.cuda.synchronize()
    return (out, maxima) if row_max else out


CASES = [  # b, sq, skv, h, kv, d, causal, packed
    (2, 77, 77, 4, 4, 64, True, True),
    (2, 77, 77, 4, 4, 64, False, True),
    (1, 300, 300, 8, 2, 128, True, True),
    (3, 129, 129, 6, 3, 128, False, False),
    (2, 40, 200, 4, 1, 64, True, False),   # fewer queries: KV-cache shape
    (2, 200, 40, 4, 2, 64, True, False),   # more queries: first rows see none
    (1, 64, 64, 4, 4, 16, True, True),
    (2, 33, 65, 2, 2, 32, False, False),
    (1, 1, 1, 2, 2, 64, True, False),
    (2, 1024, 1024, 12, 12, 64, True, True),  # gpt2-small's heads
]


# b, sq, skv, h, kv, d, causal, bias: "right" / "left" padding masks (every
# batch but the first loses a third of its keys at the end / the start:
# under causal, left padding leaves the first queries no key), "none_left"
# (batch 1 hides every key), "additive" (finite N(0, 2) biases), "shared"
# (one padding row for every batch).
BIAS_CASES = [
    (3, 77, 77, 4, 2, 64, True, "right"),
    (3, 77, 77, 4, 2, 64, True, "left"),
    (2, 100, 100, 4, 4, 128, False, "right"),
    (2, 65, 65, 2, 2, 32, False, "none_left"),
    (2, 130, 130, 4, 4, 64, False, "additive"),
    (2, 40, 200, 4, 1, 64, True, "shared"),
    (2, 1024, 1024, 12, 12, 64, False, "right"),   # BERT-base-like
]


def key_bias(kind, b, skv, gen):
    """An f32 [b | 1, skv] key bias of `kind` (BIAS_CASES)."""
    if kind == "additive":
        return 2 * torch.randn(b, skv, generator=gen, device="cuda")
    rows = 1 if kind == "shared" else b
    bias = torch.zeros(rows, skv, device="cuda")
    cut = skv // 3
    for r in range(1, rows) if rows > 1 else [0]:
        if kind in ("right", "shared"):
            bias[r, skv - cut:] = float("-inf")
        else:
            bias[r, :cut] = float("-inf")
    if kind == "none_left":
        bias[1, :] = float("-inf")
    return bias


def check(fn):
    gen = torch.Generator(device="cuda").manual_seed(1234)
    failures = 0
    cases = [c + (None,) for c in CASES] + [
        (b, sq, skv, h, kv, d, causal, False, bias)
        for b, sq, skv, h, kv, d, causal, bias in BIAS_CASES]
    for dtype in (torch.bfloat16, torch.float16):
        for b, sq, skv, h, kv, d, causal, packed, kind in cases:
            q, k, v = inputs(b, sq, skv, h, kv, d, dtype, packed, gen)
            bias = key_bias(kind, b, skv, gen) if kind else None
            scale = 1.0 / math.sqrt(d)
            got = run(fn, q, k, v, h, kv, d, scale, causal, bias).double()
            want = reference(q, k, v, h, kv, d, scale, causal, bias)
            err = got - want
            rms = (err.norm() / want.norm().clamp_min(1e-30)).item()
            worst = err.abs().max().item() / want.abs().max().item()
            ok = (torch.isfinite(got).all().item() and rms <= 1e-2
                  and worst <= 5e-2)
            failures += not ok
            name = (f"{str(dtype)[6:]} b{b} q{sq} k{skv} h{h}/{kv} d{d}"
                    f"{' causal' if causal else ''}"
                    f"{' packed' if packed else ''}"
                    f"{f' key bias {kind}' if kind else ''}")
            print(f"{'PASS' if ok else 'FAIL'} attention ({ROUTE}) {name}: "
                  f"rel RMS {rms:.2e}, max {worst:.2e}", flush=True)
    return failures + check_fp8_output(fn, cases, gen)


def check_fp8_output(fn, cases, gen):
    """The FP8 delayed-scaling output: the E4M3 codes equal PyTorch's cast
    of the kernel's own 16-bit output times the scale (saturated to +-448),
    and the row maxima its max |o| per row and head, bit for bit. The
    scale puts the largest values past 448 (saturation) and the smallest
    among E4M3's subnormals."""
    failures = 0
    for dtype in (torch.bfloat16, torch.float16):
        for b, sq, skv, h, kv, d, causal, packed, kind in cases[::2]:
            q, k, v = inputs(b, sq, skv, h, kv, d, dtype, packed, gen)
            bias = key_bias(kind, b, skv, gen) if kind else None
            scale = 1.0 / math.sqrt(d)
            stored = run(fn, q, k, v, h, kv, d, scale, causal, bias)
            amax = stored.float().abs().max().item()
            fp8_scale = torch.tensor([600.0 / amax], device="cuda")
            codes, maxima = run(fn, q, k, v, h, kv, d, scale, causal, bias,
                                fp8_scale, row_max=True)
            want = (stored.float() * fp8_scale).clamp(-448, 448).to(
                torch.float8_e4m3fn).view(torch.uint8)
            want_max = stored.float().abs().reshape(b, sq, h, d).amax(-1)
            # Current scaling: the 16-bit output itself with its maxima.
            again, maxima16 = run(fn, q, k, v, h, kv, d, scale, causal, bias,
                                  row_max=True)
            same = torch.equal(codes, want)
            same_max = torch.equal(maxima, want_max.reshape(-1))
            same16 = (torch.equal(again, stored) and
                      torch.equal(maxima16, want_max.reshape(-1)))
            ok = same and same_max and same16
            failures += not ok
            name = (f"{str(dtype)[6:]} b{b} q{sq} k{skv} h{h}/{kv} d{d}"
                    f"{' causal' if causal else ''}"
                    f"{f' key bias {kind}' if kind else ''}")
            print(f"{'PASS' if ok else 'FAIL'} attention ({ROUTE}) e4m3 output "
                  f"{name}: "
                  f"{(codes != want).sum().item()} codes and "
                  f"{(maxima != want_max.reshape(-1)).sum().item()} row "
                  f"maxima differ; with the 16-bit output "
                  f"{'the same' if same16 else 'NOT the same'}", flush=True)
    return failures


def bench(fn):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def timed(call):
        for _ in range(10):
            call()
        times = []
        for _ in range(50):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]

    gen = torch.Generator(device="cuda").manual_seed(7)
    for b, s, h, kv, d in [(8, 1024, 12, 12, 64), (4, 2048, 32, 8, 128)]:
        for causal, padded in ((True, False), (False, False), (True, True),
                               (False, True)):
            q, k, v = inputs(b, s, s, h, kv, d, torch.bfloat16, True, gen)
            out = torch.empty(b, s, h * d, dtype=q.dtype, device="cuda")
            scale = 1.0 / math.sqrt(d)
            # A padding mask (the last quarter of every row but the first):
            # mte's key bias against torch's boolean SDPA mask, which
            # PyTorch runs in its efficient-attention kernel (flash takes
            # no mask).
            bias = key_bias("right", b, s, gen) if padded else None
            args = (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(),
                    b, h, kv, s, s, d, q.stride(0), q.stride(1), k.stride(0),
                    k.stride(1), v.stride(0), v.stride(1), out.stride(0),
                    out.stride(1), scale, int(causal), 3,
                    bias.data_ptr() if padded else 0, s if padded else 0, 0, 0)
            mte_ms = timed(lambda: fn(*args))
            qh = q.reshape(b, s, h, d).transpose(1, 2)
            kh = k.reshape(b, s, kv, d).transpose(1, 2)
            vh = v.reshape(b, s, kv, d).transpose(1, 2)
            if padded:
                keep = torch.isfinite(bias)[:, None, None, :]
                if causal:
                    keep = keep & torch.ones(s, s, dtype=torch.bool,
                                             device="cuda").tril()
                kh = kh.repeat_interleave(h // kv, dim=1)
                vh = vh.repeat_interleave(h // kv, dim=1)
                peers = {"torch efficient": (SDPBackend.EFFICIENT_ATTENTION,
                                             kh, vh, {"attn_mask": keep})}
            else:
                # cuDNN's SDPA in torch takes no enable_gqa: K and V
                # repeated per query head.
                kr = kh.repeat_interleave(h // kv, dim=1)
                vr = vh.repeat_interleave(h // kv, dim=1)
                peers = {
                    "torch flash": (SDPBackend.FLASH_ATTENTION, kh, vh,
                                    {"is_causal": causal,
                                     "enable_gqa": kv != h}),
                    "torch cudnn": (SDPBackend.CUDNN_ATTENTION, kr, vr,
                                    {"is_causal": causal})}
            pairs = s * (s + 1) / 2 if causal else s * s
            flop = 4 * b * h * pairs * d
            line = (f"bench attention ({ROUTE}) b{b} s{s} h{h}/{kv} d{d}"
                    f"{' causal' if causal else ''}"
                    f"{' padding mask' if padded else ''}: mte {mte_ms:.3f} "
                    f"ms ({flop / mte_ms / 1e9:.0f} TFLOP/s)")
            for peer, (backend, kp, vp, kwargs) in peers.items():
                try:
                    with sdpa_kernel(backend):
                        torch_ms = timed(
                            lambda: F.scaled_dot_product_attention(
                                qh, kp, vp, **kwargs))
                    line += (f", {peer} {torch_ms:.3f} ms "
                             f"({flop / torch_ms / 1e9:.0f} TFLOP/s)")
                except RuntimeError as error:  # backend unavailable
                    line += f", {peer} unavailable ({str(error)[:60]})"
            print(line, flush=True)


ROUTE = "kernel"


def main():
    global ROUTE
    parser = argparse.ArgumentParser()
    parser.add_argument("runtime")
    parser.add_argument("--route", choices=("kernel", "cudnn"),
                        default="kernel")
    parser.add_argument("--bench", action="store_true")
    args = parser.parse_args()
    ROUTE = args.route
    os.environ["MTE_ATTENTION"] = ROUTE  # read when the runtime first runs
    fn = load(args.runtime)
    failures = check(fn)
    if args.bench:
        bench(fn)
    print(f"{failures} attention case(s) failed ({ROUTE})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
