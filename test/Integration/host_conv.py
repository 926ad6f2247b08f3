#!/usr/bin/env python3
"""ONNX Conv compiled for the host against a direct float64 numpy
convolution: Whisper's two Conv1d stem layers (kernel 3, pad 1, stride 1
and 2), a ViT patch embedding (kernel = stride = 8), a grouped and dilated
2-D conv with asymmetric pads, and a depthwise one. Tolerance: max |error|
<= 1e-5 max |reference|.

Usage: host_conv.py MTE_COMPILE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import mte  # noqa: E402

COMPILE, WORKDIR = sys.argv[1], sys.argv[2]
os.makedirs(WORKDIR, exist_ok=True)
rng = np.random.default_rng(7)
def conv_ref(x, w, b, stride, pads, dil, group):
    n, c = x.shape[:2]; m = w.shape[0]; s = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0,0),(0,0)] + [(pads[i], pads[s+i]) for i in range(s)])
    ks = w.shape[2:]
    outs = [(x.shape[2+i] - dil[i]*(ks[i]-1) - 1)//stride[i] + 1 for i in range(s)]
    y = np.zeros((n, m) + tuple(outs))
    cg = c // group; mg = m // group
    for mi in range(m):
        g = mi // mg
        for idx in np.ndindex(*outs):
            for kidx in np.ndindex(*ks):
                pos = tuple(idx[i]*stride[i] + kidx[i]*dil[i] for i in range(s))
                y[(slice(None), mi) + idx] += (x[(slice(None), slice(g*cg, (g+1)*cg)) + pos] * w[(mi, slice(None)) + kidx]).sum(-1)
    return y + (b[None, :, *([None]*s)] if b is not None else 0)
cases = [  # x shape, w shape, stride, pads, dil, group, bias
    ((2, 4, 30), (6, 4, 3), [1], [1, 1], [1], 1, True),     # Whisper conv1
    ((2, 6, 30), (6, 6, 3), [2], [1, 1], [1], 1, True),     # Whisper conv2
    ((2, 3, 32, 32), (8, 3, 8, 8), [8, 8], [0]*4, [1, 1], 1, True),  # ViT patches
    ((1, 4, 9, 7), (6, 2, 3, 2), [2, 1], [1, 0, 2, 1], [2, 1], 2, False),  # grouped, dilated
    ((1, 4, 9, 9), (4, 1, 3, 3), [1, 1], [1]*4, [1, 1], 4, True),  # depthwise
]
ok = True
for i, (xs, ws, st, pd, dl, gr, hb) in enumerate(cases):
    x = rng.standard_normal(xs).astype(np.float32); w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32) if hb else None
    ref = conv_ref(x, w, b, st, pd, dl, gr)
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if hb else [])
    node = helper.make_node("Conv", ["x", "w"] + (["b"] if hb else []), ["y"], strides=st, pads=pd, dilations=dl, group=gr)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, list(xs))],
                          [helper.make_tensor_value_info("y", T.FLOAT, list(ref.shape))], inits)
    stem = os.path.join(WORKDIR, f"conv{i}")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), stem + ".onnx")
    subprocess.run([COMPILE, stem + ".onnx", "-o", stem + ".so"], check=True)
    got = mte.load(stem + ".so")(x=x)["y"]
    err = np.abs(got - ref).max() / np.abs(ref).max()
    passed = got.shape == ref.shape and err <= 1e-5
    print(f"{'PASS' if passed else 'FAIL'} conv {i} {xs} * {ws}: max error / max |reference| {err:.2e}")
    ok &= passed
sys.exit(0 if ok else 1)
