#!/usr/bin/env python3
"""ONNX Einsum in the forms Transformer exports use, compiled for the host,
against numpy.einsum in float64: attention's two products, a linear, a
batch matmul over '...', a transpose, a full sum, inner and outer products,
a per-head dot, labels summed in one operand only, and an implicit
output. Tolerance: max
|error| <= 1e-5 max |reference|.

Usage: host_einsum.py MTE_COMPILE WORKDIR
"""
import sys

import numpy as np
from onnx import TensorProto as T, helper

from one_graph import compile_graph

COMPILE, WORKDIR = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(13)
CASES = [
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 7, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 5, 7), (2, 3, 7, 8)]),
    ("bsd,fd->bsf", [(2, 5, 8), (6, 8)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("bij->bji", [(2, 3, 4)]),
    ("ij->", [(3, 4)]),
    ("i,i->", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bhd,bhd->bh", [(2, 3, 8), (2, 3, 8)]),
    ("bsd,dk->kb", [(2, 5, 8), (8, 3)]),
    ("ij,jk", [(3, 4), (4, 5)]),                 # implicit output: ik
]
failures = 0
for index, (equation, shapes) in enumerate(CASES):
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    want = np.einsum(equation, *[a.astype(np.float64) for a in arrays])
    names = [f"x{i}" for i in range(len(arrays))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    model = compile_graph(
        COMPILE, WORKDIR, f"einsum{index}", [node],
        [helper.make_tensor_value_info(nm, T.FLOAT, list(a.shape))
         for nm, a in zip(names, arrays)],
        [helper.make_tensor_value_info("y", T.FLOAT, list(want.shape))])
    got = model(**dict(zip(names, arrays)))["y"]
    scale = max(np.abs(want).max(), 1e-30)
    err = np.abs(got - want).max() / scale if got.shape == want.shape else np.inf
    ok = err <= 1e-5
    print(f"{'PASS' if ok else 'FAIL'} einsum '{equation}': max error / max "
          f"|reference| {err:.2e}")
    failures += not ok
sys.exit(1 if failures else 0)
