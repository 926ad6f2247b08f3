#!/usr/bin/env python3
"""Writes the small ONNX models the importer's lit tests read: valid ones that
exercise one feature each, and broken ones that must give one clear error.

Usage: make_test_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(7)


def save(name, model, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name + ".onnx"))


def model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, v) for d, v in extra_opsets]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def tensor(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def weight(name, shape):
    return numpy_helper.from_array(
        rng.standard_normal(shape).astype(np.float32), name)


# A linear layer on a symbolic batch: MatMul + Add with a 64x32 weight.
linear = model(
    [helper.make_node("MatMul", ["x", "w"], ["xw"], name="proj/MatMul"),
     helper.make_node("Add", ["xw", "b"], ["y"], name="proj/Add")],
    [tensor("x", ["batch", 64])], [tensor("y", ["batch", 32])],
    [weight("w", (64, 32)), weight("b", (32,))])
save("linear", linear)

# The same model with its weights in a side file.
external = onnx.ModelProto()
external.CopyFrom(linear)
onnx.external_data_helper.convert_model_to_external_data(
    external, all_tensors_to_one_file=True, location="linear.weights",
    size_threshold=0)
onnx.save(external, os.path.join(OUT, "linear_external.onnx"))

# Weights past the 2 GiB and 4 GiB marks of a (sparse) external-data file, as
# in models larger than protobuf's 2 GiB limit.
far = onnx.ModelProto()
far.CopyFrom(linear)
with open(os.path.join(OUT, "far.weights"), "wb") as f:
    for t, offset in zip(far.graph.initializer, [(2 << 30) + 3, (4 << 30) + 8]):
        raw = numpy_helper.to_array(t).tobytes()
        f.seek(offset)
        f.write(raw)
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        for key, value in [("location", "far.weights"), ("offset", offset),
                           ("length", len(raw))]:
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
onnx.save(far, os.path.join(OUT, "linear_far.onnx"))

# Broken: the weight file is missing, or its location escapes the directory.
for name, location in [("external_missing", "missing.weights"),
                        ("external_escape", "../linear.weights")]:
    broken = onnx.ModelProto()
    broken.CopyFrom(external)
    for t in broken.graph.initializer:
        for entry in t.external_data:
            if entry.key == "location":
                entry.value = location
    onnx.save(broken, os.path.join(OUT, name + ".onnx"))

# Shape subgraph: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
save("shape_chain", model(
    [helper.make_node("Shape", ["x"], ["s"], name="shape"),
     helper.make_node("Constant", [], ["i0"], name="c0",
                      value=numpy_helper.from_array(np.array(0, np.int64))),
     helper.make_node("Gather", ["s", "i0"], ["b"], name="gather", axis=0),
     helper.make_node("Constant", [], ["ax"], name="c1",
                      value=numpy_helper.from_array(np.array([0], np.int64))),
     helper.make_node("Unsqueeze", ["b", "ax"], ["b1"], name="unsqueeze"),
     helper.make_node("Constant", [], ["rest"], name="c2",
                      value=numpy_helper.from_array(np.array([4, 16], np.int64))),
     helper.make_node("Concat", ["b1", "rest"], ["target"], name="concat",
                      axis=0),
     helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")],
    [tensor("x", ["batch", 64])], [tensor("y", ["batch", 4, 16])]))

# com.microsoft and opset-23 fused forms.
save("fused_forms", model(
    [helper.make_node("SkipLayerNormalization", ["x", "skip", "g", "beta"],
                      ["ln", "", "", "sum"], name="skip_ln",
                      domain="com.microsoft", epsilon=1e-5),
     helper.make_node("FastGelu", ["ln"], ["gelu"], name="fast_gelu",
                      domain="com.microsoft"),
     helper.make_node("RMSNormalization", ["gelu", "g"], ["rms"],
                      name="rms", epsilon=1e-6)],
    [tensor("x", [2, 8, 64]), tensor("skip", [2, 8, 64])],
    [tensor("rms", [2, 8, 64]), tensor("sum", [2, 8, 64])],
    [weight("g", (64,)), weight("beta", (64,))],
    opset=23, extra_opsets=[("com.microsoft", 1)]), check=False)

save("attention23", model(
    [helper.make_node("Attention", ["q", "k", "v"], ["o"], name="attn",
                      is_causal=1, q_num_heads=4, kv_num_heads=2)],
    [tensor("q", [2, 16, 64]), tensor("k", [2, 16, 32]),
     tensor("v", [2, 16, 32])],
    [tensor("o", [2, 16, 64])], opset=23), check=False)

# --- Broken models -------------------------------------------------------

def one_node(node, inputs, outputs, initializers=(), opset=17, **kw):
    return model([node], inputs, outputs, initializers, opset, **kw)

save("unknown_op", one_node(
    helper.make_node("FrobnicateAll", ["x"], ["y"], name="frob"),
    [tensor("x", [2])], [tensor("y", [2])]), check=False)
save("unknown_domain_op", one_node(
    helper.make_node("Frob", ["x"], ["y"], name="frob", domain="com.example"),
    [tensor("x", [2])], [tensor("y", [2])],
    extra_opsets=[("com.example", 1)]), check=False)
save("missing_input", one_node(
    helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    [tensor("x", [2, 4])], [tensor("y", [2, 3])]), check=False)
save("wrong_attribute_type", one_node(
    helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1.5),
    [tensor("x", [2, 4])], [tensor("y", [2, 4])]), check=False)
save("inconsistent_shapes", one_node(
    helper.make_node("MatMul", ["x", "w"], ["y"], name="mm"),
    [tensor("x", [2, 4])], [tensor("y", [2, 3])], [weight("w", (5, 3))]))
save("cycle", model(
    [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
     helper.make_node("Relu", ["a"], ["b"], name="second")],
    [tensor("x", [2])], [tensor("b", [2])]), check=False)
save("future_opset", one_node(
    helper.make_node("Relu", ["x"], ["y"], name="relu"),
    [tensor("x", [2])], [tensor("y", [2])], opset=30), check=False)
save("old_opset", one_node(
    helper.make_node("Softmax", ["x"], ["y"], name="softmax"),
    [tensor("x", [2, 4])], [tensor("y", [2, 4])], opset=11))
save("dynamic_reshape", one_node(
    helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape"),
    [tensor("x", [2, 4]), tensor("shape", [2], TensorProto.INT64)],
    [tensor("y", [4, 2])]))
save("string_input", one_node(
    helper.make_node("Identity", ["x"], ["y"], name="id"),
    [tensor("x", [2], TensorProto.STRING)],
    [tensor("y", [2], TensorProto.STRING)]))
save("missing_required_input", one_node(
    helper.make_node("LayerNormalization", ["x"], ["y"], name="ln"),
    [tensor("x", [2, 4])], [tensor("y", [2, 4])]), check=False)
save("duplicate_output", model(
    [helper.make_node("Relu", ["x"], ["y"], name="a"),
     helper.make_node("Neg", ["x"], ["y"], name="b")],
    [tensor("x", [2])], [tensor("y", [2])]), check=False)
save("output_not_produced", one_node(
    helper.make_node("Relu", ["x"], ["y"], name="relu"),
    [tensor("x", [2])], [tensor("z", [2])]), check=False)
# A node that lists no outputs computes nothing the graph can use.
save("node_without_outputs", model(
    [helper.make_node("Relu", ["x"], [], name="relu"),
     helper.make_node("Neg", ["x"], ["y"], name="neg")],
    [tensor("x", [2])], [tensor("y", [2])]), check=False)
bad_data = numpy_helper.from_array(np.zeros(6, np.float32), "w")
bad_data.dims[:] = [4, 4]
save("bad_initializer_size", one_node(
    helper.make_node("Add", ["x", "w"], ["y"], name="add"),
    [tensor("x", [4, 4])], [tensor("y", [4, 4])], [bad_data]), check=False)

# CumSum whose axis is not a constant, or out of range; Mod of floats
# without fmod.
save("cumsum_dynamic_axis", one_node(
    helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum"),
    [tensor("x", [2, 4]), tensor("axis", [], TensorProto.INT64)],
    [tensor("y", [2, 4])]))
save("cumsum_axis_out_of_range", one_node(
    helper.make_node("CumSum", ["x", "axis"], ["y"], name="cumsum"),
    [tensor("x", [2, 4])], [tensor("y", [2, 4])],
    [numpy_helper.from_array(np.array(2, np.int64), "axis")]))
save("mod_float_floored", one_node(
    helper.make_node("Mod", ["x", "x"], ["y"], name="mod"),
    [tensor("x", [2, 4])], [tensor("y", [2, 4])]), check=False)

# Conv whose group does not divide the channels, whose kernel_shape
# contradicts the weight, or with an unknown auto_pad.
save("conv_bad_group", one_node(
    helper.make_node("Conv", ["x", "w"], ["y"], name="conv", group=3),
    [tensor("x", [1, 4, 8, 8])], [tensor("y", [1, 6, 6, 6])],
    [weight("w", (6, 2, 3, 3))]), check=False)
save("conv_kernel_shape", one_node(
    helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[2, 2]),
    [tensor("x", [1, 4, 8, 8])], [tensor("y", [1, 6, 6, 6])],
    [weight("w", (6, 4, 3, 3))]), check=False)
save("conv_auto_pad", one_node(
    helper.make_node("Conv", ["x", "w"], ["y"], name="conv", auto_pad="SAME"),
    [tensor("x", [1, 4, 8, 8])], [tensor("y", [1, 6, 6, 6])],
    [weight("w", (6, 4, 3, 3))]), check=False)

# Shapes computed from constants are checked as runtime ones would be: an
# Expand to a negative dimension, a Reshape whose element count overflows,
# a Range too long to materialise.
save("expand_negative", model(
    [helper.make_node("Expand", ["c", "s"], ["e"], name="expand"),
     helper.make_node("Add", ["e", "x"], ["y"], name="add")],
    [tensor("x", [1, 16])], [tensor("y", [1, 16])],
    [weight("c", (1, 16)),
     numpy_helper.from_array(np.array([-1, 16], np.int64), "s")]), check=False)
save("reshape_overflow", one_node(
    helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape"),
    [tensor("x", [0, 4])], [tensor("y", [0, 4])],
    [numpy_helper.from_array(np.array([2**32, 2**32, 0], np.int64), "s")]),
    check=False)
save("range_huge", one_node(
    helper.make_node("Range", ["a", "b", "d"], ["y"], name="range"),
    [], [tensor("y", [1])],
    [numpy_helper.from_array(np.array(0, np.float32), "a"),
     numpy_helper.from_array(np.array(1e30, np.float32), "b"),
     numpy_helper.from_array(np.array(1, np.float32), "d")]), check=False)

# Einsum with a diagonal, and with operand ranks that its labels contradict.
save("einsum_diagonal", one_node(
    helper.make_node("Einsum", ["x"], ["y"], name="einsum", equation="ii->i"),
    [tensor("x", [3, 3])], [tensor("y", [3])]))
save("einsum_rank", one_node(
    helper.make_node("Einsum", ["x", "w"], ["y"], name="einsum",
                     equation="bij,jk->bik"),
    [tensor("x", [3, 4])], [tensor("y", [3, 5])], [weight("w", (4, 5))]),
    check=False)

# A graph output with no elements (Slice of an empty range).
save("empty_output", model(
    [helper.make_node("Constant", [], ["s"], name="starts",
                      value=numpy_helper.from_array(np.array([3], np.int64))),
     helper.make_node("Slice", ["x", "s", "s"], ["y"], name="slice")],
    [tensor("x", [2, 3])], [tensor("y", [0, 3])]))

# Byte-level damage to a valid model.
data = linear.SerializeToString()
with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 3])
with open(os.path.join(OUT, "garbage.onnx"), "wb") as f:
    f.write(bytes(rng.integers(0, 256, 512, dtype=np.uint8)))
open(os.path.join(OUT, "empty.onnx"), "wb").close()
