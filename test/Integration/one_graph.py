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
                  initializers=(), opset=17, flags=(), domains=()):
    """Saves the graph as WORKDIR/NAME.onnx (the default domain at `opset`,
    plus `domains`, (name, version) pairs), compiles it with `compile_tool`
    and `flags` (its diagnostics go to stdout, for FileCheck) and loads the
    library."""
    os.makedirs(workdir, exist_ok=True)
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    stem = os.path.join(workdir, name)
    opsets = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(domain, version) for domain, version in domains]
    onnx.save(helper.make_model(graph, opset_imports=opsets), stem + ".onnx")
    done = subprocess.run([compile_tool, stem + ".onnx", "-o", stem + ".so"]
                          + list(flags), capture_output=True, text=True)
    sys.stdout.write(done.stderr)
    done.check_returncode()
    return mte.load(stem + ".so")
