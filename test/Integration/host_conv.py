#!/usr/bin/env python3
"""ONNX Conv compiled for the host against a direct float64 numpy
convolution: Whisper's two Conv1d stem layers (kernel 3, pad 1, stride 1
and 2), a ViT patch embedding (kernel = stride = 8), a grouped and dilated
2-D conv with asymmetric pads, and a depthwise one, each with and without
the fusion pipeline (which makes the ViT one a linear over its patches).
Tolerance: max |error| <= 1e-5 max |reference|.

Usage: host_conv.py MTE_COMPILE WORKDIR
"""
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

from one_graph import compile_graph


def conv_reference(x, w, b, strides, pads, dilations, group):
    """ONNX Conv in float64 by its definition, one output position at a time."""
    spatial = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] +
               [(pads[i], pads[spatial + i]) for i in range(spatial)])
    w = w.astype(np.float64)
    kernel = w.shape[2:]
    out = [(x.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1
           for i in range(spatial)]
    filters = w.shape[0]
    per_group, filters_per_group = x.shape[1] // group, filters // group
    y = np.zeros((x.shape[0], filters) + tuple(out))
    for m in range(filters):
        channels = slice(m // filters_per_group * per_group,
                         (m // filters_per_group + 1) * per_group)
        for o in np.ndindex(*out):
            for k in np.ndindex(*kernel):
                at = tuple(o[i] * strides[i] + k[i] * dilations[i] for i in range(spatial))
                y[(slice(None), m) + o] += (x[(slice(None), channels) + at]
                                            * w[(m, slice(None)) + k]).sum(-1)
    if b is not None:
        y += b.astype(np.float64).reshape((1, filters) + (1,) * spatial)
    return y


CASES = [  # input, weight, strides, pads, dilations, group, bias
    ((2, 4, 30), (6, 4, 3), [1], [1, 1], [1], 1, True),       # Whisper conv1
    ((2, 6, 30), (6, 6, 3), [2], [1, 1], [1], 1, True),       # Whisper conv2
    ((2, 3, 32, 32), (8, 3, 8, 8), [8, 8], [0] * 4, [1, 1], 1, True),  # ViT
    ((1, 4, 9, 7), (6, 2, 3, 2), [2, 1], [1, 0, 2, 1], [2, 1], 2, False),
    ((1, 4, 9, 9), (4, 1, 3, 3), [1, 1], [1] * 4, [1, 1], 4, True),  # depthwise
]


def conv_cases(output="y"):
    """Each case as (name, [node], {input: array}, initializers, float64
    reference), its output named `output`; the same seeded arrays every
    call (utils/gpu/prepare.py runs them on the GPU)."""
    rng = np.random.default_rng(7)
    for index, (xs, ws, strides, pads, dilations, group, has_bias) in enumerate(CASES):
        x = rng.standard_normal(xs).astype(np.float32)
        w = rng.standard_normal(ws).astype(np.float32)
        b = rng.standard_normal(ws[0]).astype(np.float32) if has_bias else None
        want = conv_reference(x, w, b, strides, pads, dilations, group)
        inits = [numpy_helper.from_array(w, "w")]
        if has_bias:
            inits.append(numpy_helper.from_array(b, "b"))
        node = helper.make_node("Conv", ["x", "w"] + (["b"] if has_bias else []),
                                [output], strides=strides, pads=pads,
                                dilations=dilations, group=group)
        yield f"conv{index}", [node], {"x": x}, inits, want


def main():
    compile_tool, workdir = sys.argv[1], sys.argv[2]
    failures = 0
    for name, nodes, inputs, inits, want in conv_cases():
        x = inputs["x"]
        for fusion in ["true", "false"]:
            model = compile_graph(
                compile_tool, workdir, f"{name}_{fusion}", nodes,
                [helper.make_tensor_value_info("x", T.FLOAT, list(x.shape))],
                [helper.make_tensor_value_info("y", T.FLOAT, list(want.shape))],
                inits, flags=[f"--fusion={fusion}"])
            got = model(x=x)["y"]
            err = (np.abs(got - want).max() / np.abs(want).max()
                   if got.shape == want.shape else np.inf)
            ok = err <= 1e-5
            print(f"{'PASS' if ok else 'FAIL'} {name} {x.shape} * "
                  f"{inits[0].dims[:]} fusion={fusion}: max error / max "
                  f"|reference| {err:.2e}")
            failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
