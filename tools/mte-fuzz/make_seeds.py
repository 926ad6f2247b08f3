#!/usr/bin/env python3
"""Writes the seed models of mte-fuzz-import: the models of
test/Target/ONNX/make_test_models.py and the tiny BERT, GPT-2 and Llama of
models.py in both exporters' forms (one layer), with every initializer of
more than 64 elements replaced by a ConstantOfShape node of its shape. The
graphs keep their node patterns and shapes at a few kilobytes each, so the
fuzzer mutates structure rather than weights.

Usage: make_seeds.py OUT_DIR   (then minimise with mte-fuzz-import -merge=1)
"""
import os
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "test", "Target", "ONNX")
MAX_ELEMENTS = 64


def shrink(model):
    graph = model.graph
    kept, nodes = [], []
    for init in graph.initializer:
        count = 1
        for d in init.dims:
            count *= d
        if count <= MAX_ELEMENTS or init.data_location == TensorProto.EXTERNAL:
            kept.append(init)
            continue
        value = numpy_helper.to_array(init).reshape(-1)[:1]
        shape = helper.make_tensor(init.name + "__shape", TensorProto.INT64,
                                   [len(init.dims)], list(init.dims))
        kept.append(shape)
        nodes.append(helper.make_node(
            "ConstantOfShape", [shape.name], [init.name],
            value=numpy_helper.from_array(value)))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    old = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes + old)
    return model


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.check_call([sys.executable,
                               os.path.join(FIXTURES, "make_test_models.py"),
                               tmp], stdout=subprocess.DEVNULL)
        for family in ["bert", "gpt2", "llama"]:
            for exporter in ["torchscript", "dynamo"]:
                subprocess.check_call([
                    sys.executable,
                    os.path.join(FIXTURES, "Inputs", "models.py"),
                    "--family", family, "--exporter", exporter,
                    "--layers", "1",
                    "-o", os.path.join(tmp, f"{family}-{exporter}.onnx")])
        for name in sorted(os.listdir(tmp)):
            path = os.path.join(tmp, name)
            if not name.endswith(".onnx"):
                continue
            try:
                model = onnx.load(path, load_external_data=False)
            except Exception:  # the deliberately broken files
                shutil.copy(path, os.path.join(out, name))
                continue
            onnx.save(shrink(model), os.path.join(out, name))


if __name__ == "__main__":
    main()
