#!/usr/bin/env python3
"""Out-of-range indices, compiled for the host: every op that reads or
writes at indices a client gives (Gather, GatherElements, GatherND,
ScatterND) checks them. In range, the result matches numpy; out of range,
the run fails with MTE_ERROR_INVALID_INPUT (12) naming the node, where the
indices come from, the first bad value and its element, and never reads
outside the table (values up to +-2^63 - 1). --index-check=clamp clamps
instead. Constant indices out of range are a compile error.

Usage: host_index_checks.py MTE_COMPILE WORKDIR
"""
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

from one_graph import compile_graph, mte

COMPILE, WORKDIR = sys.argv[1], sys.argv[2]
vi = helper.make_tensor_value_info
rng = np.random.default_rng(7)
failures = 0
INVALID_INPUT = 12


def report(ok, what):
    global failures
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    failures += not ok


def expect_error(model, inputs, what):
    """Runs `model`, which must fail as an invalid input; prints the message
    for FileCheck."""
    try:
        model(**inputs)
    except mte.Error as error:
        report(error.status == INVALID_INPUT, f"{what} (status {error.status})")
        print(f"  {str(error).split(': ', 1)[1]}")
        return
    report(False, f"{what}: no error")


V, D = 11, 4
table = rng.standard_normal((V, D)).astype(np.float32)
for dtype, onnx_type in [(np.int64, T.INT64), (np.int32, T.INT32)]:
    name = np.dtype(dtype).name
    model = compile_graph(
        COMPILE, WORKDIR, f"embed_{name}",
        [helper.make_node("Gather", ["table", "ids"], ["y"], name="/embed/Gather")],
        [vi("ids", onnx_type, [2, 6])], [vi("y", T.FLOAT, [2, 6, D])],
        [numpy_helper.from_array(table, "table")])
    for trial in range(3):
        ids = rng.integers(-V, V, (2, 6)).astype(dtype)
        report(np.array_equal(model(ids=ids)["y"], table[ids]),
               f"Gather {name} ids in range, draw {trial}")
    info = np.iinfo(dtype)
    for bad in [V, -V - 1, 10**9 if dtype == np.int64 else 2**30, info.max,
                info.min]:
        ids = rng.integers(0, V, (2, 6)).astype(dtype)
        ids[1, 3] = bad
        expect_error(model, {"ids": ids}, f"Gather {name} id {bad}")
    # The first bad element is named, and all of them counted; a good run
    # after a failed one is right again.
    ids = rng.integers(0, V, (2, 6)).astype(dtype)
    ids[0, 4], ids[1, 1] = V + 5, -V - 2
    expect_error(model, {"ids": ids}, f"Gather {name} two bad ids")
    ids = rng.integers(0, V, (2, 6)).astype(dtype)
    report(np.array_equal(model(ids=ids)["y"], table[ids]),
           f"Gather {name} after a failed run")

# Indices computed in the model (ids + 1) have no input to name.
model = compile_graph(
    COMPILE, WORKDIR, "computed",
    [helper.make_node("Add", ["ids", "one"], ["shifted"]),
     helper.make_node("Gather", ["table", "shifted"], ["y"], name="shifted_lookup")],
    [vi("ids", T.INT64, [5])], [vi("y", T.FLOAT, [5, D])],
    [numpy_helper.from_array(table, "table"),
     numpy_helper.from_array(np.array([1], np.int64), "one")])
ids = np.array([0, 3, V - 1, 2, 1], np.int64)
expect_error(model, {"ids": ids}, "Gather of computed indices")
ids[2] = V - 2
report(np.array_equal(model(ids=ids)["y"], table[ids + 1]),
       "Gather of computed indices in range")

# GatherElements along axis 1 of an input.
x = rng.standard_normal((3, 5)).astype(np.float32)
model = compile_graph(
    COMPILE, WORKDIR, "gather_elements",
    [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=1, name="ge")],
    [vi("x", T.FLOAT, [3, 5]), vi("i", T.INT64, [3, 2])],
    [vi("y", T.FLOAT, [3, 2])])
i = rng.integers(-5, 5, (3, 2))
report(np.array_equal(model(x=x, i=i)["y"], np.take_along_axis(x, i % 5, 1)),
       "GatherElements in range")
i[2, 1] = 5
expect_error(model, {"x": x, "i": i}, "GatherElements index 5")

# GatherND / ScatterND: one bound per component of the index tuples.
data = rng.standard_normal((3, 5, 2)).astype(np.float32)
model = compile_graph(
    COMPILE, WORKDIR, "gather_nd",
    [helper.make_node("GatherND", ["data", "t"], ["y"], name="gnd")],
    [vi("data", T.FLOAT, [3, 5, 2]), vi("t", T.INT64, [4, 2])],
    [vi("y", T.FLOAT, [4, 2])])
t = np.stack([rng.integers(-3, 3, 4), rng.integers(-5, 5, 4)], 1)
report(np.array_equal(model(data=data, t=t)["y"], data[t[:, 0], t[:, 1]]),
       "GatherND in range")
t[1, 1] = 4
report(np.array_equal(model(data=data, t=t)["y"], data[t[:, 0], t[:, 1]]),
       "GatherND component 1 takes 4 (its bound is 5)")
t[3, 0] = 4
expect_error(model, {"data": data, "t": t}, "GatherND component 0 takes 4")

updates = rng.standard_normal((2, 2)).astype(np.float32)
model = compile_graph(
    COMPILE, WORKDIR, "scatter_nd",
    [helper.make_node("ScatterND", ["data", "t", "u"], ["y"], name="snd")],
    [vi("data", T.FLOAT, [3, 5, 2]), vi("t", T.INT64, [2, 2]),
     vi("u", T.FLOAT, [2, 2])],
    [vi("y", T.FLOAT, [3, 5, 2])])
expect_error(model, {"data": data, "t": np.array([[0, 1], [2, -6]]),
                     "u": updates}, "ScatterND index -6")

# --index-check=clamp: out-of-range ids read the nearest row.
model = compile_graph(
    COMPILE, WORKDIR, "clamped",
    [helper.make_node("Gather", ["table", "ids"], ["y"])],
    [vi("ids", T.INT64, [6])], [vi("y", T.FLOAT, [6, D])],
    [numpy_helper.from_array(table, "table")], flags=["--index-check=clamp"])
ids = np.array([0, V, -V - 1, 10**12, -10**12, 3], np.int64)
report(np.array_equal(model(ids=ids)["y"], table[np.clip(ids, -V, V - 1)]),
       "--index-check=clamp clamps")

# Constant indices out of range never compile.
graph = helper.make_graph(
    [helper.make_node("Gather", ["x", "i"], ["y"], name="const_gather")], "const",
    [vi("x", T.FLOAT, [3, 5])], [vi("y", T.FLOAT, [2, 5])],
    [numpy_helper.from_array(np.array([1, 3], np.int64), "i")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          f"{WORKDIR}/const.onnx")
done = subprocess.run([COMPILE, f"{WORKDIR}/const.onnx", "-o",
                       f"{WORKDIR}/const.so"], capture_output=True, text=True)
report(done.returncode != 0, "constant out-of-range indices do not compile")
sys.stdout.write(done.stderr)

sys.exit(1 if failures else 0)
