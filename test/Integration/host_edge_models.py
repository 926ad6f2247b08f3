#!/usr/bin/env python3
"""Models at the edges of what ONNX allows, compiled for the host and
checked against numpy:

* Trilu with k = INT64_MAX (lower: everything kept) and k = INT64_MIN
  (upper: everything kept); k used to pass through a double and wrap.
* Two graph outputs naming one value (an Identity between them): two
  outputs, equal (the forward used to crash the compiler returning one
  buffer twice).
* One output listed twice: one output, with a warning.
* ScatterND with repeated and negative indices under each reduction (no
  reduction: the last update of a repeated position wins).

Usage: host_edge_models.py MTE_COMPILE WORKDIR
"""
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

from one_graph import compile_graph

COMPILE, WORKDIR = sys.argv[1], sys.argv[2]
vi = helper.make_tensor_value_info
rng = np.random.default_rng(11)
failures = 0


def build(name, nodes, inputs, outputs, inits=(), opset=17):
    return compile_graph(COMPILE, WORKDIR, name, nodes, inputs, outputs, inits,
                         opset=opset)


def report(ok, what):
    global failures
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    failures += not ok


x = rng.standard_normal((3, 4)).astype(np.float32)
for upper, k in [(0, 2**63 - 1), (1, -2**63), (0, -2**63), (1, 2**63 - 1)]:
    model = build(f"trilu_{upper}_{k & 0xffff}",
                  [helper.make_node("Trilu", ["x", "k"], ["y"], upper=upper)],
                  [vi("x", T.FLOAT, [3, 4])], [vi("y", T.FLOAT, [3, 4])],
                  [numpy_helper.from_array(np.array(k, np.int64), "k")])
    # ONNX: upper keeps col - row >= k, lower col - row <= k (in Python
    # ints: numpy's triu/tril overflow computing k - 1 at these k).
    keep = np.array([[(c - r >= k) if upper else (c - r <= k) for c in range(4)]
                     for r in range(3)])
    want = np.where(keep, x, np.float32(0))
    report(np.array_equal(model(x=x)["y"], want), f"Trilu upper={upper} k={k}")

model = build("aliased_outputs",
              [helper.make_node("Relu", ["x"], ["y"]),
               helper.make_node("Identity", ["y"], ["z"])],
              [vi("x", T.FLOAT, [3, 4])],
              [vi("y", T.FLOAT, [3, 4]), vi("z", T.FLOAT, [3, 4])])
out = model(x=x)
report(sorted(out) == ["y", "z"] and np.array_equal(out["y"], np.maximum(x, 0))
       and np.array_equal(out["z"], out["y"]), "two outputs naming one value")

model = build("repeated_output", [helper.make_node("Relu", ["x"], ["y"])],
              [vi("x", T.FLOAT, [3, 4])],
              [vi("y", T.FLOAT, [3, 4]), vi("y", T.FLOAT, [3, 4])])
out = model(x=x)
report(list(out) == ["y"] and np.array_equal(out["y"], np.maximum(x, 0)),
       "an output listed twice is returned once")
# ScatterND: duplicate and negative indices, each reduction, and a
# KV-cache-style write of rows into [batch, heads, positions, dim].
data = rng.standard_normal((2, 3, 6, 4)).astype(np.float32)
indices = np.array([[0, 1, 2], [1, -1, 5], [0, 1, 2], [1, 0, -6]], np.int64)
updates = rng.standard_normal((4, 4)).astype(np.float32)
for reduction in ["none", "add", "mul", "max", "min"]:
    want = data.astype(np.float64).copy()
    for tuple_, update in zip(indices, updates.astype(np.float64)):
        at = tuple(int(i) % n for i, n in zip(tuple_, data.shape))
        if reduction == "none":
            want[at] = update
        elif reduction == "add":
            want[at] += update
        elif reduction == "mul":
            want[at] *= update
        elif reduction == "max":
            want[at] = np.maximum(want[at], update)
        else:
            want[at] = np.minimum(want[at], update)
    model = build(f"scatter_nd_{reduction}",
                  [helper.make_node("ScatterND", ["d", "i", "u"], ["y"],
                                    **({} if reduction == "none" else
                                       {"reduction": reduction}))],
                  [vi("d", T.FLOAT, list(data.shape)), vi("i", T.INT64, [4, 3]),
                   vi("u", T.FLOAT, [4, 4])],
                  [vi("y", T.FLOAT, list(data.shape))], opset=18)
    got = model(d=data, i=indices, u=updates)["y"]
    report(np.allclose(got, want, rtol=1e-6, atol=1e-6),
           f"ScatterND reduction={reduction} (repeated and negative indices)")
sys.exit(1 if failures else 0)
