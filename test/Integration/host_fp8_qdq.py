#!/usr/bin/env python3
"""FP8 models as other tools export them, compiled for the host with and
without fusion and checked against a float64 numpy model of the same
quantisation (fp8_reference.py):

* QuantizeLinear alone: the E4M3 codes are bit-exact (random values over
  the whole range, saturation at +-448, ties).
* Q/DQ around a MatMul with an FP8 initializer read by DequantizeLinear
  (ModelOpt's LLM export; weight [K, N]), the activation's zero point naming
  the type; Gemm(transB) with output_dtype (opset 21); TensorRT's
  TRT_FP8QuantizeLinear / TRT_FP8DequantizeLinear (TransformerEngine's and
  ModelOpt's torch export: uint8 codes, constant scale_inv); a Reshape
  between the DQ and the MatMul; a weight-only DQ.

Fused, each GEMM reads fp8 with its scales (mte-propagate-fp8-scales); the
unfused build dequantizes and multiplies in f32: both must equal the
reference within f32 accumulation (relative 1e-5 of the output's range).

Usage: host_fp8_qdq.py MTE_COMPILE WORKDIR
"""
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

import fp8_reference as ref
from one_graph import compile_graph

COMPILE, WORKDIR = (sys.argv[1], sys.argv[2]) if __name__ == "__main__" else (None, None)
vi = helper.make_tensor_value_info
rng = np.random.default_rng(19)
failures = 0
TRT = ("trt", 1)


def report(ok, what):
    global failures
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    failures += not ok


def f32(name, value):
    return numpy_helper.from_array(np.asarray(value, np.float32), name)


M, K, N = 24, 64, 48


def q(i, o, name, **attrs):
    return helper.make_node("QuantizeLinear", i, [o], name=name, **attrs)


def dq(i, o, name, **attrs):
    return helper.make_node("DequantizeLinear", i, [o], name=name, **attrs)


def gemm_cases(rng, output="y"):
    """The Q/DQ GEMM forms, each (name, nodes, x, initializers, float64
    reference, opset, domains), the output named `output` (utils/gpu/
    prepare.py compiles them for CUDA too)."""
    x = (rng.standard_normal((2, M // 2, K)) * 2).astype(np.float32)
    w = (rng.standard_normal((K, N)) * 0.05).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    sx = np.float32(np.abs(x).max() / 448)
    sw = np.float32(np.abs(w).max() / 448)
    wq = ref.quantize(w, sw)                 # [K, N] codes
    wq_nk = np.ascontiguousarray(wq.T)       # [N, K] codes
    xd = ref.dequantize(ref.quantize(x, sx), sx)
    want = xd @ ref.dequantize(wq, sw) + b
    want_weight_only = x.astype(np.float64) @ ref.dequantize(wq, sw) + b
    scales = [f32("sx", sx), f32("sw", sw), f32("b", b)]
    zero = ref.fp8_tensor("z", np.uint8(0), [])
    bias = helper.make_node("Add", ["m", "b"], [output], name="bias")
    trt = lambda op, i, o, name: helper.make_node(op, i, [o], name=name, domain="trt")
    x2 = x.reshape(M, K)
    return [
        ("matmul_qdq",
         [q(["x", "sx", "z"], "xq", "q_x"), dq(["xq", "sx"], "xd", "dq_x"),
          dq(["w", "sw"], "wd", "dq_w"),
          helper.make_node("MatMul", ["xd", "wd"], ["m"], name="matmul"), bias],
         x, scales + [zero, ref.fp8_tensor("w", wq, [K, N])], want, 19, ()),
        ("gemm_output_dtype",
         [q(["x", "sx"], "xq", "q_x", output_dtype=ref.E4M3FN),
          dq(["xq", "sx"], "xd", "dq_x"), dq(["w", "sw"], "wd", "dq_w"),
          helper.make_node("Gemm", ["xd", "wd", "b"], [output], name="gemm",
                           transB=1)],
         x2, scales + [ref.fp8_tensor("w", wq_nk, [N, K])], want.reshape(M, N), 21, ()),
        ("matmul_trt",
         [trt("TRT_FP8QuantizeLinear", ["x", "sx"], "xq", "q_x"),
          trt("TRT_FP8DequantizeLinear", ["xq", "sx"], "xd", "dq_x"),
          trt("TRT_FP8DequantizeLinear", ["w", "sw"], "wd", "dq_w"),
          helper.make_node("MatMul", ["xd", "wd"], ["m"], name="matmul"), bias],
         x, scales + [numpy_helper.from_array(wq, "w")], want, 19, [TRT]),
        ("reshape_between",
         [q(["x", "sx", "z"], "xq", "q_x"), dq(["xq", "sx"], "xd", "dq_x"),
          helper.make_node("Reshape", ["xd", "shape"], ["xr"], name="flatten"),
          dq(["w", "sw"], "wd", "dq_w"),
          helper.make_node("MatMul", ["xr", "wd"], ["m"], name="matmul"), bias],
         x, scales + [zero, ref.fp8_tensor("w", wq, [K, N]),
                      numpy_helper.from_array(np.array([M, K], np.int64), "shape")],
         want.reshape(M, N), 19, ()),
        ("weight_only",
         [dq(["w", "sw"], "wd", "dq_w"),
          helper.make_node("MatMul", ["x", "wd"], ["m"], name="matmul"), bias],
         x, [f32("sw", sw), ref.fp8_tensor("w", wq, [K, N]), f32("b", b)],
         want_weight_only, 19, ()),
    ]


def check(name, nodes, x, inits, want, opset, domains):
    for fused in (True, False):
        model = compile_graph(COMPILE, WORKDIR, f"{name}_{int(fused)}", nodes,
                              [vi("x", T.FLOAT, list(x.shape))],
                              [vi("y", T.FLOAT, list(want.shape))], inits, opset=opset,
                              domains=domains,
                              flags=() if fused else ("--fusion=false",))
        got = model(x=x)["y"].astype(np.float64)
        err = np.abs(got - want).max() / np.abs(want).max()
        report(err <= 1e-5, f"{name} {'fused' if fused else 'unfused'}: "
                            f"max error {err:.1e} of the output range")


def saturation_case(rng, output="y"):
    """QuantizeLinear (E4M3, saturate) then DequantizeLinear over the values
    where saturating conversions differ: infinities, NaN, beyond +-448,
    every code's value and every midpoint between neighbours (ties to even),
    subnormals and random magnitudes; for utils/gpu/prepare.py, which checks
    that CUDA's cvt.rn.satfinite gives the host's codes bit for bit.
    (name, nodes, x, initializers, float64 reference, opset, domains)."""
    scale = np.float32(0.5)
    codes = ref.E4M3_TABLE[:127]
    special = [np.inf, -np.inf, np.nan, 1e30, -1e30, 448.0, -448.0, 449.0,
               464.0, 465.0, -480.0, 1e-9, -1e-9, 2.0 ** -10, 0.0, -0.0]
    values = np.concatenate([special, codes, -codes, (codes[1:] + codes[:-1]) / 2,
                             -(codes[1:] + codes[:-1]) / 2])
    x = np.concatenate([values * scale, rng.standard_normal(4096 - values.size)
                        * 10.0 ** rng.uniform(-3, 3, 4096 - values.size)])
    x = rng.permutation(x).astype(np.float32).reshape(64, 64)
    want = ref.dequantize(ref.quantize(x, scale), scale)
    nodes = [q(["x", "s", "z"], "xq", "q"), dq(["xq", "s"], output, "dq")]
    return ("fp8_saturation", nodes, x,
            [f32("s", scale), ref.fp8_tensor("z", np.uint8(0), [])], want, 19, ())


if __name__ == "__main__":
    # QuantizeLinear: bit-exact codes.
    x = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.uniform(-4, 3, 3000),
                        ref.E4M3_TABLE[:127] * 0.5, [500.0, -1e4, 0.0, -0.0]])
    x = x.astype(np.float32)
    scale = np.float32(0.5)
    model = compile_graph(COMPILE, WORKDIR, "quantize",
                          [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                            name="q")],
                          [vi("x", T.FLOAT, [x.size])], [vi("y", ref.E4M3FN, [x.size])],
                          [f32("s", scale), ref.fp8_tensor("z", np.uint8(0), [])],
                          opset=19)
    got = model(x=x)["y"]
    want = ref.quantize(x, scale)
    report(np.array_equal(got.view(np.uint8), want),
           f"QuantizeLinear e4m3: {int((got.view(np.uint8) == want).sum())}/{x.size} codes exact")

    name, nodes, xs, inits, want, opset, _ = saturation_case(rng)
    model = compile_graph(COMPILE, WORKDIR, name, nodes,
                          [vi("x", T.FLOAT, list(xs.shape))],
                          [vi("y", T.FLOAT, list(xs.shape))], inits, opset=opset)
    got = model(x=xs)["y"]
    report(np.array_equal(got, want, equal_nan=True),
           f"QuantizeLinear saturation: {int((got == want).sum())} values equal, "
           f"NaN at {int(np.isnan(got).sum())} of {int(np.isnan(want).sum())}")

    for case in gemm_cases(rng):
        check(*case)
    sys.exit(1 if failures else 0)
