#!/usr/bin/env python3
"""mte-compile --precision=fp8 against an exact emulation: a two-layer MLP
(Gemm transB + Relu, Gemm) compiled for the host, every GEMM in FP8, and a
numpy model of the same recipe with the same rounding points, written from
docs/fp8.md (fp8_reference.py for E4M3):

* weights and biases rounded to bf16 (nearest even) at compile time, then
  each weight quantized once: scale = amax / 448 (f32), codes of w / scale;
* activations stored bf16; before each GEMM the input's current scale
  448 / amax(x) (1 if the amax is 0 or not finite), its codes those of
  x * scale (TransformerEngine's cast), and scale_inv = 1 / scale;
* the product of the codes' values times scale_inv and the weight's scale,
  plus the bias, the ReLU, rounded to bf16.

mte accumulates in f32 where the emulation uses float64, so a rounding to
bf16 may land the other way now and then: the outputs must agree to a
relative RMS of 1e-3 (a tenth of what FP8 itself costs here), with at least
90 % of them bit-identical. Then an all-zero input (amax 0: scale 1) gives
the biases' path exactly, and the FP8 error against float32 is reported.

Usage: host_fp8_precision.py MTE_COMPILE WORKDIR
"""
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

import fp8_reference as ref
from fp8_reference import bf16, weight_scale
from one_graph import compile_graph

failures = 0


def report(ok, what):
    global failures
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    failures += not ok


def fp8_linear(x, w, b, scales=None):
    """x [M, K] bf16 values, w [N, K] bf16 values, b [N]: float64 result;
    x is cast with `scales` (scale, scale_inv), or with current scaling's
    when None."""
    if scales is None:
        scales = ref.current_scales(np.abs(x).max())
    scale, scale_inv = scales
    sw = weight_scale(w)
    xq = ref.decode_e4m3(ref.cast_to_fp8(x, scale))
    wq = ref.decode_e4m3(ref.quantize(w, sw))
    factor = np.float64(np.float32(scale_inv * sw))
    return (xq @ wq.T) * factor + b.astype(np.float64)


M, K, H, N = 64, 64, 128, 64
FLAGS = ["--precision=fp8", "--fp8-min-macs=0"]


def mlp(rng, output="y"):
    """The MLP's nodes and initializers, and its emulation (a function of
    the input), the output named `output`."""
    w1 = (rng.standard_normal((H, K)) / np.sqrt(K)).astype(np.float32)
    b1 = (rng.standard_normal(H) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((N, H)) / np.sqrt(H)).astype(np.float32)
    b2 = (rng.standard_normal(N) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["a"], name="fc1",
                              transB=1),
             helper.make_node("Relu", ["a"], ["h"], name="relu"),
             helper.make_node("Gemm", ["h", "w2", "b2"], [output], name="fc2",
                              transB=1)]
    inits = [numpy_helper.from_array(v, name)
             for name, v in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]]

    def emulate(x):
        h = bf16(np.maximum(fp8_linear(bf16(x), bf16(w1), bf16(b1)), 0))
        return bf16(fp8_linear(h, bf16(w2), bf16(b2))).astype(np.float64)

    def exact(x):
        h = np.maximum(x.astype(np.float64) @ w1.T + b1, 0)
        return h @ w2.T.astype(np.float64) + b2

    return nodes, inits, emulate, exact


def gpu_case():
    """For utils/gpu/prepare.py: (name, nodes, inputs, initializers,
    emulated output, opset, flags), the output named last_hidden_state."""
    rng = np.random.default_rng(29)
    nodes, inits, emulate, _ = mlp(rng, "last_hidden_state")
    x = (rng.standard_normal((M, K)) * 3).astype(np.float32)
    return ("mlp_emulated.fp8", nodes, {"x": x}, inits, emulate(x), 17, FLAGS)


def main():
    compile_tool, workdir = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(23)
    nodes, inits, emulate, exact = mlp(rng)
    vi = helper.make_tensor_value_info
    model = compile_graph(compile_tool, workdir, "mlp_fp8", nodes,
                          [vi("x", T.FLOAT, [M, K])], [vi("y", T.FLOAT, [M, N])],
                          inits, flags=FLAGS)
    for trial in range(3):
        x = (rng.standard_normal((M, K)) *
             10.0 ** rng.uniform(-2, 2)).astype(np.float32)
        got = model(x=x)["y"].astype(np.float64)
        want = emulate(x)
        rel = np.linalg.norm(got - want) / np.linalg.norm(want)
        same = float(np.mean(got == want))
        truth = exact(x)
        fp8_error = np.linalg.norm(got - truth) / np.linalg.norm(truth)
        report(rel <= 1e-3 and same >= 0.9,
               f"mlp fp8 input set {trial}: relative RMS {rel:.1e} from the "
               f"emulation, {100 * same:.1f}% identical; FP8 error against "
               f"f64 {fp8_error:.1e}")
    zeros = np.zeros((M, K), np.float32)
    got = model(x=zeros)["y"].astype(np.float64)
    report(np.array_equal(got, emulate(zeros)),
           "mlp fp8 all-zero input (amax 0, scale 1) equals the emulation")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
