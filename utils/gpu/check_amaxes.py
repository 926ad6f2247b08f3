#!/usr/bin/env python3
"""Checks, on a GPU machine, libmte_runtime's mte_cuda_amaxes (the one
kernel that takes every amax of a delayed-scaling forward,
lib/Runtime/Amaxes.cu) directly through ctypes against torch's amax of the
same tensors, which must agree exactly (a maximum has no rounding).

Inputs: f32, bf16 and f16 of lengths around the kernel's edges (1, 7, a
16-byte vector's worth, a block's 16384-element chunk and one past it,
2^20 + 3), starting 16-byte aligned and one element past (the scalar
path), with fresh random values of mixed signs spanning 2^-20..2^12, and
tensors holding +-inf, NaN, -0.0 only, and nothing (0 elements). 200
inputs in one call: two launches of at most 128. The output is filled with
garbage first (the runtime must zero it).

Usage: check_amaxes.py LIBMTE_RUNTIME
"""
import ctypes
import math
import sys

import torch

DTYPES = {torch.float32: 1, torch.float16: 2, torch.bfloat16: 3}  # mte_dtype
LENGTHS = [1, 7, 8, 16384, 16385, (1 << 20) + 3]


def load(path):
    fn = ctypes.CDLL(path).mte_cuda_amaxes
    fn.restype = None
    fn.argtypes = [ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint64]
    return fn


def random_values(n, dtype, gen):
    sign = torch.randint(0, 2, (n,), generator=gen, device="cuda") * 2 - 1
    exponent = torch.rand(n, generator=gen, device="cuda") * 32 - 20
    return (sign * torch.exp2(exponent)).to(dtype)


def inputs(gen):
    cases = []
    for dtype in DTYPES:
        for n in LENGTHS:
            for offset in (0, 1):
                storage = random_values(n + offset, dtype, gen)
                cases.append((f"{dtype} n={n} offset={offset}",
                              storage[offset:]))
        specials = torch.tensor([1.0, -math.inf, 3.0], device="cuda",
                                dtype=dtype)
        cases.append((f"{dtype} -inf", specials))
        nan = random_values(40000, dtype, gen)
        nan[31111] = math.nan
        cases.append((f"{dtype} NaN in the second chunk", nan))
        cases.append((f"{dtype} -0.0", torch.full((9,), -0.0, device="cuda",
                                                  dtype=dtype)))
        cases.append((f"{dtype} empty", torch.empty(0, device="cuda",
                                                    dtype=dtype)))
    # Two launches: 200 inputs in all.
    while len(cases) < 200:
        dtype = list(DTYPES)[len(cases) % 3]
        n = int(torch.randint(1, 50000, (1,), generator=gen, device="cuda"))
        cases.append((f"{dtype} n={n} (filler)", random_values(n, dtype, gen)))
    return cases


def main():
    fn = load(sys.argv[1])
    gen = torch.Generator(device="cuda").manual_seed(11)
    cases = inputs(gen)
    table = (ctypes.c_int64 * (3 * len(cases)))()
    for i, (_, x) in enumerate(cases):
        table[3 * i:3 * i + 3] = [x.data_ptr(), x.numel(), DTYPES[x.dtype]]
    out = torch.full((len(cases),), 12345.0, device="cuda")
    torch.cuda.synchronize()
    fn(ctypes.addressof(table), len(cases), out.data_ptr())
    torch.cuda.synchronize()
    failures = 0
    for i, (name, x) in enumerate(cases):
        expected = (x.float().abs().max() if x.numel()
                    else torch.zeros((), device="cuda"))
        got = out[i]
        same = (torch.isnan(expected) and torch.isnan(got)) or bool(
            expected == got)
        if not same:
            failures += 1
            print(f"FAIL amaxes {name}: {got.item()!r}, "
                  f"expected {expected.item()!r}")
    print(f"{'PASS' if not failures else 'FAIL'} amaxes: {len(cases)} "
          f"inputs in one call, {failures} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
