#!/usr/bin/env python3
"""One malformed or unsupported node per importer error that errors.test
does not reach: each model must fail to import with exit status 1 and the
message naming its node. Prints PASS/FAIL and the message for FileCheck.

Usage: handler_errors.py MTE_TRANSLATE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

TRANSLATE, WORKDIR = sys.argv[1], sys.argv[2]
os.makedirs(WORKDIR, exist_ok=True)
vi = helper.make_tensor_value_info
F = T.FLOAT
failures = 0


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype), name)


def case(name, nodes, inputs, outputs, inits=(), opset=17, expect="",
         opsets=None):
    """Saves the graph (unchecked: some are invalid on purpose), imports it
    and checks the failure."""
    global failures
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = helper.make_model(
        graph, opset_imports=opsets or [helper.make_opsetid("", opset)])
    path = os.path.join(WORKDIR, name + ".onnx")
    onnx.save(model, path)
    done = subprocess.run([TRANSLATE, path], capture_output=True, text=True)
    message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    ok = done.returncode == 1 and expect in message
    print(f"{'PASS' if ok else 'FAIL'} {name}: {message.split(': ', 1)[-1]}")
    failures += not ok


def n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=op.lower(), **attrs)


x23 = vi("x", F, [2, 3])
y = lambda shape=None: vi("y", F, shape)
i64 = lambda name, shape: vi(name, T.INT64, shape)

case("mod_fmod", [n("Mod", ["a", "b"], ["y"], fmod=2)],
     [i64("a", [3]), i64("b", [3])], [i64("y", [3])],
     expect="fmod must be 0 or 1, not 2")
case("cast_complex", [n("Cast", ["x"], ["y"], to=T.COMPLEX64)], [x23],
     [vi("y", T.COMPLEX64, [2, 3])], expect="unsupported target element type 14")
case("dropout_training", [n("Dropout", ["x", "ratio", "training"], ["y"])], [x23],
     [y([2, 3])], [const("ratio", 0.5, np.float32), const("training", True, np.bool_)],
     expect="training mode is not supported")
case("constant_string", [n("Constant", [], ["y"], value_string="text")], [],
     [y()], expect="needs a 'value', 'value_float(s)' or 'value_int(s)' attribute")
case("constant_of_shape_two_values",
     [n("ConstantOfShape", ["shape"], ["y"],
        value=numpy_helper.from_array(np.array([1.0, 2.0], np.float32)))],
     [], [y([2])], [const("shape", [2])],
     expect="'value' must hold exactly one element")
for name, target, expect in [
        ("reshape_copy_missing_dim", [0, 0, 0],
         "target dimension 2 copies an input dimension that does not exist"),
        ("reshape_two_minus_one", [-1, -1], "target shape has more than one -1"),
        ("reshape_negative", [-2, 3], "target dimension 0 is -2"),
        ("reshape_indivisible", [-1, 4],
         "cannot infer the -1 dimension: 6 elements do not divide into 4")]:
    case(name, [n("Reshape", ["x", "shape"], ["y"])], [x23], [y()],
         [const("shape", target)], expect=expect)
case("squeeze_not_one", [n("Squeeze", ["x"], ["y"], axes=[1])], [x23], [y()],
     opset=11, expect="cannot squeeze dimension 1 of size 3")
case("unsqueeze_no_axes", [n("Unsqueeze", ["x"], ["y"])], [x23], [y()],
     opset=11, expect="axes are required")
case("slice_lengths", [n("Slice", ["x", "starts", "ends"], ["y"])], [x23], [y()],
     [const("starts", [0]), const("ends", [1, 2])],
     expect="starts, ends, axes and steps differ in length")
case("slice_zero_step", [n("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
     [x23], [y()], [const("starts", [0]), const("ends", [2]), const("axes", [1]),
                    const("steps", [0])], expect="step of axis 1 is zero")
case("concat_no_axis", [n("Concat", ["x", "x"], ["y"])], [x23], [y()],
     expect="attribute 'axis' is required")
case("split_zero_parts", [n("Split", ["x"], ["y"], axis=1, num_outputs=0)], [x23],
     [y()], opset=18, expect="cannot split into 0 parts")
case("split_outputs", [n("Split", ["x", "sizes"], ["a", "b", "c"], axis=1)], [x23],
     [vi("a", F, None), vi("b", F, None), vi("c", F, None)], [const("sizes", [1, 2])],
     expect="splits into 2 pieces but the node has 3 outputs")
case("cumsum_two_axes", [n("CumSum", ["x", "axis"], ["y"])], [x23], [y([2, 3])],
     [const("axis", [0, 1])], expect="axis must hold one value, not 2")
case("topk_too_many", [n("TopK", ["x", "k"], ["y", "i"])], [x23],
     [y([2, 4]), i64("i", [2, 4])], [const("k", [4])],
     expect="k = 4 is not within [0, 3], the length of axis 1")
case("topk_dynamic_k", [n("TopK", ["x", "k"], ["y", "i"])], [x23, i64("k", [1])],
     [y([2, 1]), i64("i", [2, 1])], expect="input #1 ('k') must be a compile-time constant")
case("topk_two_values", [n("TopK", ["x", "k"], ["y", "i"])], [x23],
     [y([2, 1]), i64("i", [2, 1])], [const("k", [1, 2])],
     expect="K must hold one value, not 2")
case("conv_rank2", [n("Conv", ["x", "w"], ["y"])], [x23], [y()],
     [numpy_helper.from_array(np.ones((2, 3), np.float32), "w")],
     expect="needs static input and weight of one rank, 3 or more")
for pad, expect in [("SAME_UPPER", "Conv: strides must be positive"),
                    ("NOTSET", "spatial dimension 0: strides, dilations and kernel "
                               "sizes must be positive, pads not negative")]:
    case(f"conv_zero_stride_{pad.lower()}",
         [n("Conv", ["x", "w"], ["y"], strides=[0], auto_pad=pad)],
         [vi("x", F, [1, 2, 8])], [y()],
         [numpy_helper.from_array(np.ones((4, 2, 3), np.float32), "w")],
         expect=expect)
case("scatter_nd_reduction", [n("ScatterND", ["x", "i", "u"], ["y"], reduction="avg")],
     [x23, i64("i", [1, 1]), vi("u", F, [1, 3])], [y([2, 3])], opset=18,
     expect="unknown reduction 'avg'")
case("trilu_two_k", [n("Trilu", ["x", "k"], ["y"])], [x23], [y([2, 3])],
     [const("k", [0, 1])], expect="k must hold one value, not 2")
case("einsum_ellipsis", [n("Einsum", ["a", "b"], ["y"], equation="...ij,...jk->...ik")],
     [vi("a", F, [5, 2, 3]), vi("b", F, [4, 5, 3, 2])], [y()],
     expect="'...' covers a different number of dimensions in operand 1")
case("einsum_output_label", [n("Einsum", ["a", "b"], ["y"], equation="ij,jk->iz")],
     [vi("a", F, [2, 3]), vi("b", F, [3, 4])], [y()],
     expect="output label 'z' is in no operand")
case("gelu_approximation", [n("Gelu", ["x"], ["y"], approximate="fast")], [x23],
     [y([2, 3])], opset=20, expect="unknown approximation 'fast'")
q4 = lambda name, s: vi(name, F, [1, 2, s, 8])
case("attention_kv_cache",
     [n("Attention", ["q", "k", "v", "", "pk", "pv"], ["y"])],
     [q4("q", 3), q4("k", 3), q4("v", 3), q4("pk", 2), q4("pv", 2)], [y()], opset=23,
     expect="past_key/past_value (KV cache) are not supported")
case("attention_softcap", [n("Attention", ["q", "k", "v"], ["y"], softcap=30.0)],
     [q4("q", 3), q4("k", 3), q4("v", 3)], [y()], opset=23,
     expect="softcap is not supported")
case("attention_ranks", [n("Attention", ["q", "k", "v"], ["y"])],
     [q4("q", 3), vi("k", F, [1, 3, 16]), q4("v", 3)], [y()], opset=23,
     expect="Q, K and V must all be 4-D or all 3-D")
case("attention_3d_heads", [n("Attention", ["q", "k", "v"], ["y"])],
     [vi("q", F, [1, 3, 16]), vi("k", F, [1, 3, 16]), vi("v", F, [1, 3, 16])], [y()],
     opset=23, expect="3-D inputs need the q_num_heads and kv_num_heads attributes")
# 3-D Q with a 2-D K (the fuzzer's input: K's sequence was read past its
# shape), and a hidden size the heads do not divide.
case("attention_3d_ranks",
     [n("Attention", ["q", "k", "v"], ["y"], q_num_heads=2, kv_num_heads=2)],
     [vi("q", F, [1, 3, 16]), vi("k", F, [3, 16]), vi("v", F, [1, 3, 16])], [y()],
     opset=23, expect="Q, K and V must all be 4-D or all 3-D")
case("attention_3d_split",
     [n("Attention", ["q", "k", "v"], ["y"], q_num_heads=3, kv_num_heads=1)],
     [vi("q", F, [1, 3, 16]), vi("k", F, [1, 3, 16]), vi("v", F, [1, 3, 16])], [y()],
     opset=23, expect="Q's hidden size 16 is not a multiple of q_num_heads 3")
case("attention_causal_lengths", [n("Attention", ["q", "k", "v"], ["y"], is_causal=1)],
     [q4("q", 2), q4("k", 3), q4("v", 3)], [y()], opset=23,
     expect="is_causal with query length 2 and key length 3 is not supported")
case("no_default_opset", [n("Relu", ["x"], ["y"])], [x23], [y([2, 3])],
     opsets=[helper.make_opsetid("com.example", 1)],
     expect="the model imports no default-domain opset")

case("unnamed_initializer", [n("Relu", ["x"], ["y"])], [x23], [y([2, 3])],
     [const("", [1.0], np.float32)], expect="an initializer has no name")

# FP8 quantisation: what the per-tensor FP8 ops do not express is refused.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "Integration"))
from fp8_reference import fp8_tensor  # noqa: E402

x4 = vi("x", F, [2, 4])
scale = const("s", 0.5, np.float32)
e4m3 = 17
case("quantize_uint8", [n("QuantizeLinear", ["x", "s"], ["y"])], [x4],
     [vi("y", T.UINT8, [2, 4])], [scale], opset=19,
     expect="quantizes to 'ui8'; mte imports FP8 (float8e4m3fn, float8e5m2) "
            "quantization only")
case("quantize_per_axis", [n("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)],
     [x4], [vi("y", e4m3, [2, 4])],
     [const("s", [0.5] * 4, np.float32), fp8_tensor("z", np.zeros(4, np.uint8), [4])],
     opset=19, expect="has a per-axis or blocked scale 'tensor<4xf32>'; mte "
                      "imports per-tensor FP8 scales")
case("quantize_zero_point", [n("QuantizeLinear", ["x", "s", "z"], ["y"])], [x4],
     [vi("y", e4m3, [2, 4])], [scale, fp8_tensor("z", np.array(0x38, np.uint8), [])],
     opset=19, expect="has a non-zero FP8 zero point 1")
case("quantize_blocked",
     [n("QuantizeLinear", ["x", "s"], ["y"], block_size=2, output_dtype=e4m3)],
     [x4], [vi("y", e4m3, [2, 4])], [const("s", [[0.5, 0.5]] * 2, np.float32)],
     opset=21, expect="block_size 2 is not supported")
case("dequantize_int8", [n("DequantizeLinear", ["q", "s"], ["y"])],
     [vi("q", T.INT8, [2, 4])], [y([2, 4])], [scale], opset=19,
     expect="dequantizes 'i8'; mte imports FP8")
case("trt_dequantize_computed",
     [n("Cast", ["x"], ["q"], to=T.UINT8),
      helper.make_node("TRT_FP8DequantizeLinear", ["q", "s"], ["y"],
                       name="dq", domain="trt")],
     [x4], [y([2, 4])], [scale],
     opsets=[helper.make_opsetid("", 19), helper.make_opsetid("trt", 1)],
     expect="reads a uint8 value computed in the graph")

sys.exit(1 if failures else 0)
