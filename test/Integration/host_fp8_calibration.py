#!/usr/bin/env python3
"""mte-compile --calibration (docs/fp8.md, "Calibration"): the fp32 model
runs on the samples at compile time and the delayed-scaling state they
leave is the FP8 build's initial state.

* The MLP of host_fp8_precision.py, three samples of different magnitudes,
  history 4, margin 1: the compiled initial history holds each sample's
  amaxes in order (GEMM 1's input bit for bit, GEMM 2's, after an f32
  accumulation, within 1e-5 of float64), the scales are TE's update of
  them bit for bit, the first run equals the exact emulation from that
  state (host_fp8_delayed.py's check), reset_state returns to it; with
  most_recent and a history of one, the scales are the last sample's.
* The Llama fixture, four samples: every column of the history holds four
  positive amaxes in its last rows, each scale is 448 / max of its column;
  the first run on the reference input stays at cosine >= 0.995 to the
  float64 reference; --tp=2 and --tp=2 --sp compile the same state, bit for
  bit.
* Each error of a bad calibration file names the file, the array and the
  input; an index out of range names the sample and the node.

Usage: host_fp8_calibration.py MTE_COMPILE WORKDIR
"""
import os
import re
import subprocess
import sys

import numpy as np
from onnx import TensorProto as T, helper

from host_fp8_delayed import Emulation, check_run, update
from host_fp8_precision import K, M, N, mlp
from host_fp8_tensor_parallel import cosine, relative_rms
from one_graph import compile_graph, mte

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "Target", "ONNX", "Inputs", "models.py")

failures = 0


def report(ok, what):
    global failures
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    failures += not ok


def mlp_amaxes(weights, x):
    """Each GEMM input's amax in the fp32 model: x's exactly, the hidden
    activation's in float64."""
    w1, b1 = weights[0].astype(np.float64), weights[1].astype(np.float64)
    h = np.maximum(x.astype(np.float64) @ w1.T + b1, 0)
    return np.float32(np.abs(x).max()), np.abs(h).max()


def check_mlp(compile_tool, workdir):
    rng = np.random.default_rng(43)
    nodes, inits, _, _ = mlp(np.random.default_rng(31))
    weights = [np.frombuffer(i.raw_data, np.float32).reshape(i.dims)
               for i in inits]
    samples = np.stack([(rng.standard_normal((M, K)) * m).astype(np.float32)
                        for m in (1.0, 40.0, 0.02)])
    calib = os.path.join(workdir, "mlp_calib.npz")
    np.savez(calib, x=samples)
    vi = helper.make_tensor_value_info
    io = [vi("x", T.FLOAT, [M, K])], [vi("y", T.FLOAT, [M, N])]
    flags = ["--precision=fp8", "--fp8-min-macs=0", "--fp8-recipe=delayed",
             "--amax-history=4", "--fp8-margin=1", f"--calibration={calib}"]
    model = compile_graph(compile_tool, workdir, "mlp_calibrated", nodes,
                          *io, inits, flags=flags)
    history = model.get_state("fp8.amax_history")
    scale = model.get_state("fp8.scale")

    want = np.array([mlp_amaxes(weights, x) for x in samples])
    recorded = history[1:]
    exact0 = np.array_equal(recorded[:, 0], want[:, 0].astype(np.float32))
    close1 = np.allclose(recorded[:, 1], want[:, 1], rtol=1e-5, atol=0)
    report(not history[0].any() and exact0 and close1,
           f"MLP, 3 samples, history 4: rows 1-3 {recorded.tolist()} are the "
           f"samples' fp32 amaxes (float64 {want.tolist()}), row 0 empty")
    emulated_h = np.zeros((4, 2), np.float32)
    emulated_s = np.ones(2, np.float32)
    for row in recorded:
        emulated_h, emulated_s = update(emulated_h, emulated_s, row, 1, "max")
    report(np.array_equal(emulated_h, history) and
           np.array_equal(emulated_s, scale),
           f"MLP: the scales {scale.tolist()} are TE's update of those "
           f"amaxes (margin 1), bit for bit")

    emulation = Emulation(weights, 1, "max")
    x = (rng.standard_normal((M, K)) * 3).astype(np.float32)
    check_run(model, emulation, x, "MLP: first run from the calibrated state")
    model.reset_state()
    report(np.array_equal(model.get_state("fp8.scale"), scale) and
           np.array_equal(model.get_state("fp8.amax_history"), history),
           "MLP: reset_state returns to the calibrated state")

    flags = ["--precision=fp8", "--fp8-min-macs=0", "--fp8-recipe=delayed",
             "--amax-history=1", "--amax-algo=most_recent",
             f"--calibration={calib}"]
    model = compile_graph(compile_tool, workdir, "mlp_calibrated_recent",
                          nodes, *io, inits, flags=flags)
    history = model.get_state("fp8.amax_history")
    scale = model.get_state("fp8.scale")
    last = mlp_amaxes(weights, samples[-1])
    want = 448 / np.array(last)
    report(not history.any() and scale[0] == np.float32(448) / last[0] and
           np.allclose(scale, want, rtol=1e-5, atol=0),
           f"MLP, most_recent, history 1: scales {scale.tolist()} from the "
           f"last sample alone ({want.tolist()})")


def state_text(path, name):
    """The initial value of state `name` in an --emit=mlir file."""
    text = open(path).read()
    found = re.search(r'name = "' + re.escape(name) +
                      r'", kind = <[a-z0-9_]+>, initial = (dense<[^>]*>)', text)
    return found.group(1) if found else None


def check_llama(compile_tool, workdir):
    stem = os.path.join(workdir, "llama")
    subprocess.run([sys.executable, MODELS, "--family", "llama",
                    "--exporter", "dynamo", "-o", stem + ".onnx",
                    "--reference-out", stem + ".npz"], check=True)
    reference = np.load(stem + ".npz")
    ids = reference["input_ids"]
    rng = np.random.default_rng(47)
    calib = stem + "_calib.npz"
    np.savez(calib, input_ids=rng.integers(0, 100, (4,) + ids.shape))
    flags = [f"--input-shape=input_ids={'x'.join(map(str, ids.shape))}",
             "--precision=fp8", "--fp8-min-macs=0", "--fp8-recipe=delayed",
             "--amax-history=16", f"--calibration={calib}"]
    so = stem + ".calibrated.so"
    subprocess.run([compile_tool, stem + ".onnx", "-o", so] + flags,
                   check=True)
    model = mte.load(so)
    history = model.get_state("fp8.amax_history")
    scale = model.get_state("fp8.scale")
    labels = model.state_labels("fp8.scale")
    filled = (history[12:] > 0).all() and not history[:12].any()
    exact = np.array_equal(scale, np.float32(448) / history.max(axis=0))
    report(filled and exact and len(labels) == history.shape[1],
           f"Llama, 4 samples: the history's last 4 rows hold {len(labels)} "
           f"positive amaxes each ({', '.join(labels[:3])}, ...), scales "
           f"448 / column max, from {scale.min():.4g} to {scale.max():.4g}")
    got = model(input_ids=ids)["last_hidden_state"]
    want = reference["last_hidden_state"]
    rms, cos = relative_rms(got, want), cosine(got, want)
    report(cos >= 0.995 and rms <= 8e-2,
           f"Llama: first run from the calibrated state, relative RMS "
           f"{rms:.2e} (bound 8e-2), cosine {cos:.5f} (bound 0.995) to the "
           f"float64 reference")

    texts = {}
    for name, extra in [("tp0", []), ("tp2", ["--tp=2"]),
                        ("tp2sp", ["--tp=2", "--sp"]), ("dp2", ["--dp=2"])]:
        path = f"{stem}.{name}.mlir"
        subprocess.run([compile_tool, stem + ".onnx", "-o", path,
                        "--emit=mlir"] + flags + extra, check=True)
        texts[name] = (state_text(path, "fp8.amax_history"),
                       state_text(path, "fp8.scale"))
    same = all(texts[name] == texts["tp0"] for name in texts)
    report(same and texts["tp0"][1] is not None,
           "Llama: --tp=2, --tp=2 --sp and --dp=2 compile the unsharded "
           "build's calibrated state, bit for bit")
    return stem, ids.shape


def expect_error(compile_tool, what, args, needle):
    done = subprocess.run([compile_tool] + args, capture_output=True,
                          text=True)
    message = done.stderr.strip()
    report(done.returncode == 1 and needle in message,
           f"{what}: exit {done.returncode}: {message}")


def check_errors(compile_tool, workdir, llama, ids_shape):
    vi = helper.make_tensor_value_info
    nodes, inits, _, _ = mlp(np.random.default_rng(31))
    nodes = [helper.make_node("Add", ["u", "v"], ["x"], name="add")] + nodes
    two = os.path.join(workdir, "two_inputs")
    compile_graph(compile_tool, workdir, "two_inputs", nodes,
                  [vi("u", T.FLOAT, [M, K]), vi("v", T.FLOAT, [M, K])],
                  [vi("y", T.FLOAT, [M, N])], inits)
    rng = np.random.default_rng(53)

    def sample(*shape, dtype=np.float32):
        return rng.standard_normal(shape).astype(dtype)

    def calib(name, **arrays):
        path = os.path.join(workdir, name + ".npz")
        np.savez(path, **arrays)
        return path

    fp8 = [two + ".onnx", "-o", two + ".fp8.so", "--precision=fp8",
           "--fp8-min-macs=0", "--fp8-recipe=delayed"]
    cases = [
        ("an f64 array", calib("f64", u=sample(3, M, K, dtype=np.float64),
                                v=sample(3, M, K)),
         "array 'u' is f64 [3, 64, 64]; input 'u' takes f32 [64, 64] (one "
         "sample) or [S, 64, 64] (S samples)"),
        ("a wrong shape", calib("shape", u=sample(3, M, K),
                                 v=sample(3, M, K // 2)),
         "array 'v' is f32 [3, 64, 32]; input 'v' takes f32 [64, 64]"),
        ("an input missing", calib("missing", u=sample(M, K)),
         "no array for input 'v', f32 [64, 64] (one sample) or [S, 64, 64]"),
        ("an array of no input", calib("extra", u=sample(M, K),
                                        v=sample(M, K), w=sample(M, K)),
         "array 'w' is not an input of the model (inputs: 'u', 'v')"),
        ("sample counts that differ", calib("counts", u=sample(3, M, K),
                                             v=sample(2, M, K)),
         "array 'v' holds 2 samples, array 'u' 3"),
        ("no samples", calib("empty", u=sample(0, M, K), v=sample(0, M, K)),
         "array 'u' holds no samples"),
    ]
    for what, path, needle in cases:
        expect_error(compile_tool, what, fp8 + [f"--calibration={path}"],
                     f"mte-compile: --calibration '{path}': {needle}")
    missing = os.path.join(workdir, "absent.npz")
    expect_error(compile_tool, "no such file",
                 fp8 + [f"--calibration={missing}"],
                 f"--calibration: cannot open '{missing}'")
    garbage = os.path.join(workdir, "garbage.npz")
    with open(garbage, "wb") as f:
        f.write(b"not a zip archive" * 8)
    expect_error(compile_tool, "not an .npz file",
                 fp8 + [f"--calibration={garbage}"],
                 f"--calibration: '{garbage}'")
    path = calib("good", u=sample(M, K), v=sample(M, K))
    expect_error(compile_tool, "the current recipe",
                 fp8[:-1] + [f"--calibration={path}"],
                 "--calibration sets the initial amax history and scales of "
                 "delayed scaling: it needs --fp8-recipe=delayed")
    ids = rng.integers(0, 100, (3,) + ids_shape)
    ids[1, 0, 3] = 500
    path = calib("ids", input_ids=ids)
    expect_error(compile_tool, "an index out of range",
                 [llama + ".onnx", "-o", llama + ".bad.so",
                  f"--input-shape=input_ids={'x'.join(map(str, ids_shape))}",
                  "--precision=fp8", "--fp8-min-macs=0",
                  "--fp8-recipe=delayed", f"--calibration={path}"],
                 f"--calibration '{path}': sample 1: Gather node "
                 "'node_embedding': index 500 from input 'input_ids'")

    # Nothing in FP8 (every GEMM below --fp8-min-macs): a note, no state.
    done = subprocess.run([compile_tool] + fp8[:4] + [
        "--fp8-recipe=delayed", f"--calibration={path.replace('ids', 'good')}"],
        capture_output=True, text=True)
    note = "no linear runs in FP8, so --calibration has no state to calibrate"
    report(done.returncode == 0 and note in done.stderr and
           not mte.load(two + ".fp8.so").states,
           f"no FP8 GEMM: exit {done.returncode}: {done.stderr.strip()}")


def main():
    compile_tool, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    check_mlp(compile_tool, workdir)
    llama, ids_shape = check_llama(compile_tool, workdir)
    check_errors(compile_tool, workdir, llama, ids_shape)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
