#!/usr/bin/env python3
"""Compiles every ONNX backend node test of a supported operator for the host
backend, runs it through the mte Python package, and compares the outputs
with the expected ones from test_data_set_0.

Tolerances: floating-point outputs match with rtol 1e-4 and atol 1e-5 (fp32;
f16/bf16 outputs with rtol 1e-2); integer and boolean outputs exactly; NaNs
must be NaN in the same places. Inputs are prepared as the importer test
does (see import_node_tests.py).

Usage: host_node_tests.py MTE_COMPILE MTE_TRANSLATE WORKDIR [--jobs N]
"""
import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Target", "ONNX"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import import_node_tests as node_tests  # noqa: E402
import mte  # noqa: E402

# Tests whose reference output mte deliberately does not reproduce, with why.
_WINDOW = ("the expected output deviates from the window's float64 formula "
           "by up to 7.4e-5; mte's output follows the formula")
_UNSIGNED = "unsigned integer tensors are not supported by the host backend"
_EMPTY = "zero-element model outputs are not supported by the host backend"
_BF16_TRUNCATED = ("onnx 1.12's expected bfloat16 values truncate; mte rounds "
                   "to nearest even, as PyTorch and later ONNX releases do")
_LIKE_DATA = ("the test data give 'like' shape [1] while the model declares "
              "[3, 4]")
# What the failure of a known difference must say, for the reasons whose
# failure is an error message (the others are numerical differences): a
# known test that fails for another reason is a new failure.
REASON_SIGNATURES = {
    _UNSIGNED: "does not support unsigned integer tensors",
    _EMPTY: "has no elements",
    _LIKE_DATA: "input 'like' has shape [3, 4], given [1]",
}


def known_difference(name, problem):
    """Whether `problem`, the failure of test `name`, is its recorded one."""
    reason = KNOWN_DIFFERENCES.get(name)
    if reason is None:
        return False
    signature = REASON_SIGNATURES.get(reason)
    if signature is None:   # a numerical difference: it compiled and ran
        return not problem.startswith(("compile:", "run:"))
    return signature in problem


KNOWN_DIFFERENCES = {
    "test_blackmanwindow_expanded": _WINDOW,
    "test_blackmanwindow_symmetric_expanded": _WINDOW,
    "test_hammingwindow_expanded": _WINDOW,
    "test_hammingwindow_symmetric_expanded": _WINDOW,
    "test_hannwindow_expanded": _WINDOW,
    "test_hannwindow_symmetric_expanded": _WINDOW,
    "test_reshape_allowzero_reordered": _EMPTY,
    "test_slice_start_out_of_bounds": _EMPTY,
    "test_tril_zero": _EMPTY,
    "test_triu_zero": _EMPTY,
    "test_constantofshape_int_shape_zero": _EMPTY,
    "test_split_zero_size_splits": _EMPTY,
    "test_cast_FLOAT_to_BFLOAT16": _BF16_TRUNCATED,
    "test_castlike_FLOAT_to_BFLOAT16": _LIKE_DATA,
    "test_castlike_FLOAT_to_BFLOAT16_expanded": _LIKE_DATA,
    "test_castlike_BFLOAT16_to_FLOAT": _LIKE_DATA,
    "test_castlike_BFLOAT16_to_FLOAT_expanded": _LIKE_DATA,
}
for _op in ["add", "sub", "mul", "div"]:
    KNOWN_DIFFERENCES[f"test_{_op}_uint8"] = _UNSIGNED
for _op in ["max", "min", "mod"]:
    for _bits in [8, 16, 32, 64]:
        KNOWN_DIFFERENCES[f"test_{_op}_uint{_bits}"] = _UNSIGNED
for _bits in [32, 64]:
    KNOWN_DIFFERENCES[f"test_pow_types_float32_uint{_bits}"] = _UNSIGNED


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor.name, numpy_helper.to_array(tensor)


def compare(name, got, expected):
    if got.shape != expected.shape:
        return f"{name}: shape {got.shape}, expected {expected.shape}"
    if expected.dtype.kind in "iub":
        if not np.array_equal(got.astype(expected.dtype), expected):
            return f"{name}: integer values differ"
        return None
    rtol = 1e-4 if expected.dtype.itemsize >= 4 else 1e-2
    got64 = got.astype(np.float64)
    exp64 = expected.astype(np.float64)
    if not np.array_equal(np.isnan(got64), np.isnan(exp64)):
        return f"{name}: NaNs differ"
    mask = ~np.isnan(exp64)
    if not np.allclose(got64[mask], exp64[mask], rtol=rtol, atol=1e-5):
        err = np.max(np.abs(got64[mask] - exp64[mask]))
        return f"{name}: max abs error {err:.3g}"
    return None


def run_one(args, test_dir):
    name = os.path.basename(test_dir)
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    flags = node_tests.prepare(model, test_dir)
    work = os.path.join(args.workdir, name)
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    onnx.save(model, onnx_path)
    so_path = os.path.join(work, "model.so")
    result = subprocess.run([args.compile, onnx_path, "-o", so_path] + flags,
                            capture_output=True)
    if result.returncode != 0:
        lines = result.stderr.decode(errors="replace").strip().splitlines()
        return name, "compile: " + (lines[-1] if lines else
                                    f"exit {result.returncode}")
    bound = {t.name for t in model.graph.initializer}
    inputs = {}
    data_dir = os.path.join(test_dir, "test_data_set_0")
    graph_inputs = [i.name for i in onnx.load(
        os.path.join(test_dir, "model.onnx")).graph.input]
    for index, input_name in enumerate(graph_inputs):
        path = os.path.join(data_dir, f"input_{index}.pb")
        if input_name in bound or not os.path.exists(path):
            continue
        inputs[input_name] = load_tensor(path)[1]
    try:
        outputs = mte.load(so_path)(**inputs)
    except Exception as e:  # mte.Error, or a loader error worth reporting
        return name, f"run: {e}"
    for index, output in enumerate(model.graph.output):
        path = os.path.join(data_dir, f"output_{index}.pb")
        expected = load_tensor(path)[1]
        problem = compare(output.name, outputs[output.name], expected)
        if problem:
            return name, problem
    return name, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compile")
    parser.add_argument("translate")
    parser.add_argument("workdir")
    parser.add_argument("--data", default=node_tests.DEFAULT_DATA)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    ops = node_tests.supported_ops(args.translate)
    tests = []
    for model_path in sorted(glob.glob(os.path.join(args.data, "*",
                                                    "model.onnx"))):
        test_dir = os.path.dirname(model_path)
        name = os.path.basename(test_dir)
        if name in node_tests.EXPECTED_FAILURES or args.filter not in name:
            continue
        if node_tests.node_ops(onnx.load(model_path)) <= ops:
            tests.append(test_dir)
    passed, failed, known = [], [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, problem in pool.map(lambda t: run_one(args, t), tests):
            if problem is None:
                if name in KNOWN_DIFFERENCES:
                    failed.append((name, "matches, but is listed as a known "
                                   "difference: " + KNOWN_DIFFERENCES[name]))
                else:
                    passed.append(name)
            elif known_difference(name, problem):
                known.append(name)
            elif name in KNOWN_DIFFERENCES:
                failed.append((name, "fails for another reason than its "
                               "known one (" + KNOWN_DIFFERENCES[name] + "): " +
                               problem))
            else:
                failed.append((name, problem))
    for name, problem in failed:
        print(f"FAIL {name}: {problem}")
    print(f"host node tests: {len(passed)} match, {len(failed)} fail, "
          f"{len(known)} known differences (of {len(tests)} supported)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
