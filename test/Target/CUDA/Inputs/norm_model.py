#!/usr/bin/env python3
"""A LayerNormalization model whose rows exercise each thread mapping of the
CUDA row kernels: [3, 1024] (a block of 64 threads per row, partial sums
exchanged through shared memory), [5, 100] (a warp per row, one block of four
rows with the fourth past the end) and [4, 7] (scalar accesses, 8 threads
per row).

Usage: norm_model.py -o OUT.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPES = [(3, 1024), (5, 100), (4, 7)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    nodes, inputs, outputs, initializers = [], [], [], []
    for i, (rows, length) in enumerate(SHAPES):
        inputs.append(helper.make_tensor_value_info(
            f"x{i}", TensorProto.FLOAT, [rows, length]))
        outputs.append(helper.make_tensor_value_info(
            f"y{i}", TensorProto.FLOAT, [rows, length]))
        for name in (f"scale{i}", f"bias{i}"):
            initializers.append(numpy_helper.from_array(
                rng.standard_normal(length).astype(np.float32), name))
        nodes.append(helper.make_node(
            "LayerNormalization", [f"x{i}", f"scale{i}", f"bias{i}"],
            [f"y{i}"], axis=-1, epsilon=1e-5))
    graph = helper.make_graph(nodes, "norms", inputs, outputs, initializers)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, args.o)


if __name__ == "__main__":
    main()
