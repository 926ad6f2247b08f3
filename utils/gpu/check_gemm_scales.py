#!/usr/bin/env python3
"""Checks, on a GPU machine, libmte_runtime's FP8 GEMM (mte_cuda_gemm,
lib/Runtime/CublasLt.cpp) directly through ctypes with each scale mode the
compiler emits, against a float64 PyTorch reference of the same E4M3 codes
and scales, on fresh random inputs.

Modes: per-tensor scales (MTE_GEMM_SCALE_TENSOR, scalar x and W scales)
and rowwise scales (MTE_GEMM_SCALE_OUTER_VEC: x's [m], one per row, W's
[n], one per output channel). Epilogues: DEFAULT, BIAS, RELU, GELU (tanh),
BIAS+RELU, BIAS+GELU, and a residual (C, beta = 1) with DEFAULT and BIAS;
bf16 output. The scales are powers of two spanning 2^-12..2^4, as
mte-insert-fp8-casts makes them.

mte-matmul-to-library-call hands cuBLASLt every one of these epilogues in
both modes: each must run and be within relative RMS 1e-2 of the reference
(bf16 output, f32 accumulation). (The first run, on an H100 on 2026-12-07,
probed the outer-vector mode with the activations and the residual before
the compiler used them; it took them all.)

Each case runs on a thread of its own: the runtime's error state is per
thread, and one case's "no algorithm" must not stop the next.

Usage: check_gemm_scales.py LIBMTE_RUNTIME
"""
import ctypes
import sys
import threading

import torch

F32, BF16, E4M3 = 1, 3, 11  # mte_dtype
SCALE_TENSOR, SCALE_OUTER_VEC = 0, 2  # mte_gemm_scale_mode
DEFAULT, RELU, BIAS, GELU = 1, 2, 4, 32  # mte_gemm_epilogue
SHAPES = [(64, 192, 64), (256, 512, 1024), (2048, 3072, 768)]
# cublasLtEpilogue_t values: BIAS alone is 4 (DEFAULT | BIAS would be 5, no
# epilogue at all).
EPILOGUES = [("default", DEFAULT, False), ("bias", BIAS, False),
             ("relu", RELU, False), ("gelu", GELU, False),
             ("bias+relu", RELU | BIAS, False),
             ("bias+gelu", GELU | BIAS, False),
             ("residual", DEFAULT, True), ("bias+residual", BIAS, True)]
TOL = 1e-2


def load(path):
    fn = ctypes.CDLL(path).mte_cuda_gemm
    fn.restype = None
    fn.argtypes = ([ctypes.c_uint64] * 3 + [ctypes.c_int64] * 4 +
                   [ctypes.c_int32, ctypes.c_float, ctypes.c_float] +
                   [ctypes.c_int32] * 3 + [ctypes.c_uint64] * 4 +
                   [ctypes.c_int32, ctypes.c_int32] + [ctypes.c_uint64] * 2)
    return fn


def power_of_two(shape, gen):
    return torch.exp2(torch.randint(-12, 5, shape, generator=gen,
                                    device="cuda").float())


def case(fn, m, n, k, mode, code, residual, gen):
    """Runs one GEMM; returns its relative RMS error from the reference, or
    None when the runtime wrote nothing (cuBLASLt found no algorithm)."""
    x = torch.randn(m, k, generator=gen, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(n, k, generator=gen, device="cuda").to(torch.float8_e4m3fn)
    rows = m if mode == SCALE_OUTER_VEC else 1
    channels = n if mode == SCALE_OUTER_VEC else 1
    xs, ws = power_of_two((rows,), gen), power_of_two((channels,), gen)
    bias = torch.randn(n, generator=gen, device="cuda").to(torch.bfloat16)
    c = torch.randn(m, n, generator=gen, device="cuda").to(torch.bfloat16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    fn(x.data_ptr(), w.data_ptr(), out.data_ptr(), 1, m, n, k, 1, 1.0,
       1.0 if residual else 0.0, E4M3, BF16, code,
       bias.data_ptr() if code & BIAS else 0,
       c.data_ptr() if residual else 0, xs.data_ptr(), ws.data_ptr(), mode,
       BF16, 0, 0)
    torch.cuda.synchronize()
    if torch.isnan(out).all():
        return None
    y = (x.float().double() @ w.float().double().T) * xs.double()[:, None] * ws.double()[None, :]
    if residual:
        y = y + c.double()
    if code & BIAS:
        y = y + bias.double()
    if code & RELU:
        y = torch.relu(y)
    if code & GELU:
        y = torch.nn.functional.gelu(y, approximate="tanh")
    return float((out.double() - y).norm() / y.norm())


def main():
    fn = load(sys.argv[1])
    failures = 0
    for m, n, k in SHAPES:
        for mode, mode_name in [(SCALE_TENSOR, "tensor"),
                                (SCALE_OUTER_VEC, "rowwise")]:
            for name, code, residual in EPILOGUES:
                result = {}

                def run():
                    gen = torch.Generator(device="cuda")
                    gen.manual_seed(m * 7 + n * 3 + k + code)
                    result["error"] = case(fn, m, n, k, mode, code, residual,
                                           gen)
                thread = threading.Thread(target=run)
                thread.start()
                thread.join()
                error = result.get("error")
                what = (f"{mode_name} scales, {name}, m={m} n={n} k={k}: " +
                        ("no algorithm" if error is None
                         else f"relative RMS {error:.2e}"))
                ok = error is not None and error <= TOL
                print(f"{'PASS' if ok else 'FAIL'} {what}")
                failures += not ok
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
