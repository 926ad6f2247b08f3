#!/usr/bin/env python3
"""Imports every ONNX backend node test (Debian's libonnx-testdata) whose
operators mte supports, and reports how many import cleanly.

ONNX node tests feed shape-deciding operands (Reshape's shape, Slice's starts,
ReduceSum's axes, Clip's bounds, ...) as graph inputs with their values in
test_data_set_0. mte resolves shapes at compile time, so this driver binds
every integer, boolean and scalar graph input to its test value as an
initializer, and gives the remaining inputs the shape of their test data
where the model leaves it symbolic. The operator itself is imported
unchanged.

A few tests exercise what a tensor compiler for inference deliberately does
not take: string tensors, sequence/optional types, training-mode Dropout.
They are listed in EXPECTED_FAILURES with the reason, must fail with a clean
error (never a crash), and are reported separately.

Usage: import_node_tests.py MTE_TRANSLATE WORKDIR [--data DIR] [--verbose]
Exit status is non-zero when any test of a supported operator fails.
"""
import argparse
import glob
import os
import subprocess
import sys

import onnx
from onnx import numpy_helper

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"

_STRING = "string tensors are not supported"
_TRAINING = "training-mode Dropout is not supported"
_NOT_TENSOR = "sequence and optional types are not supported"
_DIAGONAL = "Einsum diagonals (a label twice in one operand) are not supported"
_INTEGER_QDQ = ("integer (uint8/int8) quantization is not supported: mte "
                "imports FP8 QuantizeLinear/DequantizeLinear (opset 19+)")
EXPECTED_FAILURES = {
    "test_dequantizelinear": _INTEGER_QDQ,
    "test_dequantizelinear_axis": _INTEGER_QDQ,
    "test_quantizelinear": _INTEGER_QDQ,
    "test_quantizelinear_axis": _INTEGER_QDQ,
    "test_cast_FLOAT_to_STRING": _STRING,
    "test_cast_STRING_to_FLOAT": _STRING,
    "test_castlike_FLOAT_to_STRING": _STRING,
    "test_castlike_FLOAT_to_STRING_expanded": _STRING,
    "test_castlike_STRING_to_FLOAT": _STRING,
    "test_castlike_STRING_to_FLOAT_expanded": _STRING,
    "test_einsum_batch_diagonal": _DIAGONAL,
    "test_identity_opt": _NOT_TENSOR,
    "test_identity_sequence": _NOT_TENSOR,
    "test_training_dropout": _TRAINING,
    "test_training_dropout_default": _TRAINING,
    "test_training_dropout_default_mask": _TRAINING,
    "test_training_dropout_mask": _TRAINING,
    "test_training_dropout_zero_ratio": _TRAINING,
    "test_training_dropout_zero_ratio_mask": _TRAINING,
}


# Declared element types bound as constants (bf16 data arrives as uint16
# arrays from numpy_helper and is not bound).
INTEGER_TYPES = {onnx.TensorProto.INT64, onnx.TensorProto.INT32,
                 onnx.TensorProto.INT16, onnx.TensorProto.INT8,
                 onnx.TensorProto.UINT64, onnx.TensorProto.UINT32,
                 onnx.TensorProto.UINT16, onnx.TensorProto.UINT8,
                 onnx.TensorProto.BOOL}


def supported_ops(translate):
    out = subprocess.run([translate, "--list-onnx-ops"], check=True,
                         capture_output=True, text=True).stdout.split()
    ops = set()
    for entry in out:
        domain, op = entry.split("::")
        ops.add(("" if domain == "ai.onnx" else domain, op))
    return ops


def node_ops(model):
    return {("" if n.domain == "ai.onnx" else n.domain, n.op_type)
            for n in model.graph.node}


def prepare(model, test_dir):
    """Binds integer inputs as initializers; returns --input-shape flags."""
    data_dir = os.path.join(test_dir, "test_data_set_0")
    flags = []
    inputs = list(model.graph.input)
    initializer_names = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in inputs if i.name not in initializer_names]
    for index, value in enumerate(graph_inputs):
        path = os.path.join(data_dir, f"input_{index}.pb")
        if not os.path.exists(path):
            continue
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        try:
            array = numpy_helper.to_array(tensor)
        except ValueError:  # a sequence or optional, not a tensor
            continue
        elem_type = value.type.tensor_type.elem_type
        if elem_type in INTEGER_TYPES or array.ndim == 0:
            tensor.name = value.name
            model.graph.initializer.append(tensor)
            model.graph.input.remove(value)
            continue
        declared = value.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in declared):
            dims = "x".join(str(d) for d in array.shape)
            flags.append(f"--input-shape={value.name}={dims}")
    return flags


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("translate")
    parser.add_argument("workdir")
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    ops = supported_ops(args.translate)
    passed, failed, expected, skipped = [], [], [], 0
    for model_path in sorted(glob.glob(os.path.join(args.data, "*",
                                                    "model.onnx"))):
        test_dir = os.path.dirname(model_path)
        name = os.path.basename(test_dir)
        model = onnx.load(model_path)
        if not node_ops(model) <= ops:
            skipped += 1
            continue
        flags = prepare(model, test_dir)
        prepared = os.path.join(args.workdir, name + ".onnx")
        onnx.save(model, prepared)
        result = subprocess.run([args.translate, "--import-onnx", prepared,
                                 "-o", os.devnull] + flags,
                                capture_output=True, text=True)
        if result.returncode == 0:
            passed.append(name)
        elif name in EXPECTED_FAILURES and result.returncode == 1:
            expected.append(name)
        else:
            failed.append((name, result.stderr.strip().splitlines()[-1:]
                           if result.returncode > 0 else
                           [f"crashed with signal {-result.returncode}"]))
    for name, message in failed:
        print(f"FAIL {name}: {' '.join(message)}")
    if args.verbose:
        for name in passed:
            print(f"PASS {name}")
    for name in sorted(set(EXPECTED_FAILURES) - set(expected)):
        print(f"UNEXPECTED PASS or missing {name}: {EXPECTED_FAILURES[name]}")
    print(f"node tests of supported operators: {len(passed)} imported, "
          f"{len(failed)} failed, {len(expected)} rejected as expected "
          f"({skipped} tests of other operators skipped)")
    if set(EXPECTED_FAILURES) != set(expected):
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
