#!/usr/bin/env python3
"""Checks the host backend's fp8 conversions (mte-expand-fp8-conversions)
against an independent numpy model of the two formats:

* decoding: all 256 codes of f8E4M3FN and f8E5M2 cast to f32 exactly;
* encoding: f32 values (random over the whole range, exact ties, subnormals,
  overflow, infinities, NaN) cast to fp8 with ONNX Cast-19 semantics
  (round to nearest even, saturate to the largest finite value; NaN stays
  NaN) give exactly the reference codes.

Usage: fp8_casts.py MTE_COMPILE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import mte  # noqa: E402
from fp8_reference import decode_table  # noqa: E402

FORMATS = {  # onnx data type: (name, exponent bits, mantissa bits, bias, IEEE specials)
    17: ("f8E4M3FN", 4, 3, 7, False),
    19: ("f8E5M2", 5, 2, 15, True),
}


def encode_reference(x, table):
    """Nearest code (ties to the even code), saturating; NaN -> a NaN code."""
    finite = [c for c in range(256) if np.isfinite(table[c])]
    largest = max(table[c] for c in finite)
    codes = np.empty(x.shape, np.uint8)
    for i, v in enumerate(x.astype(np.float64).ravel()):
        if np.isnan(v):
            codes.flat[i] = 0xFF if np.signbit(v) else 0x7F
            continue
        v = min(max(v, -largest), largest)
        best = min(finite, key=lambda c: (abs(table[c] - v), c & 1,
                                          np.signbit(table[c]) != np.signbit(v)))
        codes.flat[i] = best
    return codes


def cast_model(path, from_type, to_type, n):
    node = helper.make_node("Cast", ["x"], ["y"], name="cast", to=to_type)
    graph = helper.make_graph([node], "cast",
                              [helper.make_tensor_value_info("x", from_type, [n])],
                              [helper.make_tensor_value_info("y", to_type, [n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)],
                              ir_version=9)
    onnx.save(model, path)


def main():
    compile_tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(11)
    failures = 0
    for onnx_type, (name, e, m, bias, ieee) in FORMATS.items():
        table = decode_table(e, m, bias, ieee)
        # Decoding: every code.
        path = os.path.join(work, f"decode_{name}")
        cast_model(path + ".onnx", onnx_type, onnx.TensorProto.FLOAT, 256)
        subprocess.run([compile_tool, path + ".onnx", "-o", path + ".so"],
                       check=True)
        codes = np.arange(256, dtype=np.uint8)
        with np.errstate(invalid="ignore"):
            got = mte.load(path + ".so")(x=codes)["y"].astype(np.float64)
        same = (got == table) | (np.isnan(got) & np.isnan(table))
        print(f"{'PASS' if same.all() else 'FAIL'} decode {name}: "
              f"{int(same.sum())}/256 codes exact")
        failures += not same.all()

        # Encoding: random magnitudes over the whole range, every ties point,
        # subnormals, overflow and specials.
        finite = table[np.isfinite(table)]
        midpoints = (np.sort(finite)[1:] + np.sort(finite)[:-1]) / 2
        values = np.concatenate([
            rng.standard_normal(2000) * 10.0 ** rng.uniform(-6, 6, 2000),
            midpoints, finite,
            [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 2.0 ** -30],
        ]).astype(np.float32)
        path = os.path.join(work, f"encode_{name}")
        cast_model(path + ".onnx", onnx.TensorProto.FLOAT, onnx_type,
                   values.size)
        subprocess.run([compile_tool, path + ".onnx", "-o", path + ".so"],
                       check=True)
        got = mte.load(path + ".so")(x=values)["y"]
        want = encode_reference(values, table)
        nan_codes = np.isnan(table[got]) & np.isnan(table[want])
        same = (got == want) | nan_codes
        print(f"{'PASS' if same.all() else 'FAIL'} encode {name}: "
              f"{int(same.sum())}/{values.size} values exact")
        if not same.all():
            bad = np.flatnonzero(~same)[:5]
            print("  first mismatches (value, got, want):",
                  [(float(values[i]), int(got[i]), int(want[i])) for i in bad])
        failures += not same.all()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
