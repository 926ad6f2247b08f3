"""Compiles single-graph ONNX models for the host and loads them: what the
lit tests that build their models in Python (host_conv.py, host_einsum.py,
host_edge_models.py) share."""
import os
import subprocess
import sys

import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import mte  # noqa: E402


def compile_graph(compile_tool, workdir, name, nodes, inputs, outputs,
                  initializers=(), opset=17, flags=()):
    """Saves the graph as WORKDIR/NAME.onnx, compiles it with `compile_tool`
    and `flags` (its diagnostics go to stdout, for FileCheck) and loads the
    library."""
    os.makedirs(workdir, exist_ok=True)
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    stem = os.path.join(workdir, name)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]),
              stem + ".onnx")
    done = subprocess.run([compile_tool, stem + ".onnx", "-o", stem + ".so"]
                          + list(flags), capture_output=True, text=True)
    sys.stdout.write(done.stderr)
    done.check_returncode()
    return mte.load(stem + ".so")
