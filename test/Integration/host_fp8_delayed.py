#!/usr/bin/env python3
"""mte-compile --precision=fp8 --fp8-recipe=delayed against an exact
emulation of TransformerEngine's delayed scaling (docs/fp8.md), on the
two-layer MLP of host_fp8_precision.py, over a sequence of runs:

* each run casts GEMM t's input times fp8.scale[t] (the GEMM reading
  1 / fp8.scale[t]); the initial scales are 1, as TransformerEngine's;
* after the run, h = the amax history with row 0 replaced by this run's
  amaxes; the window's amax is max over h's rows (max) or h[0]
  (most_recent); the next scale is (448 / 2^margin) / amax when that amax
  is finite and positive, else the scale is kept; the history rolls:
  next[L-1] = h[0], next[i] = h[i+1] for 0 < i < L-1, next[0] = 0.

Every run is checked from the state mte had before it: the next state must
equal the emulated update of this run's amaxes bit for bit, GEMM 1's amax
(of the bf16 input) bit for bit, GEMM 2's (of GEMM 1's f32 epilogue value,
which GEMM 1 casts to E4M3 itself, rounded once; its f32 accumulation mte
orders differently) within 1e-2, and the output as in
host_fp8_precision.py (relative RMS 1e-3, 90 % bit-identical). Then the
state API: freezing, setting, resetting to the initial state, and the
errors of bad values.

Usage: host_fp8_delayed.py MTE_COMPILE WORKDIR
       host_fp8_delayed.py --write-onnx MODEL.onnx
"""
import sys

import numpy as np
from onnx import TensorProto as T, helper

import fp8_reference as ref
from fp8_reference import bf16
from host_fp8_precision import K, M, N, fp8_linear, mlp
from one_graph import compile_graph, mte

failures = 0


def report(ok, what):
    global failures
    print(f"{'PASS' if ok else 'FAIL'} {what}")
    failures += not ok


def update(history, scale, amax, margin, algorithm):
    """TE's delayed-scaling update, in float32 as mte computes it."""
    h = history.copy()
    h[0] = amax
    window = h.max(axis=0) if algorithm == "max" else h[0]
    scaled_max = np.float32(np.ldexp(448.0, -margin))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        quotient = np.minimum(scaled_max / window,
                              np.float32(np.finfo(np.float32).max))
    usable = np.isfinite(window) & (window > 0)
    next_scale = np.where(usable, quotient, scale).astype(np.float32)
    length = h.shape[0]
    next_history = np.zeros_like(h)
    if length > 2:
        next_history[1:length - 1] = h[2:]
    if length > 1:
        next_history[length - 1] = h[0]
    return next_history, next_scale


class Emulation:
    def __init__(self, weights, margin, algorithm):
        self.w1, self.b1, self.w2, self.b2 = (bf16(v) for v in weights)
        self.margin, self.algorithm = margin, algorithm

    def run(self, x, scale):
        """The output and this run's amaxes, from the scales of the state."""
        x = bf16(x)
        a0 = np.float32(np.abs(x).max())
        # GEMM 1 writes GEMM 2's E4M3 input itself (mte-fuse-linear-fp8-
        # output, cuBLASLt's D scale): the f32 epilogue value is cast once,
        # with no bf16 step, and its amax is taken before any rounding.
        h = np.float32(np.maximum(fp8_linear(x, self.w1, self.b1,
                                             ref.delayed_scales(scale[0])), 0))
        a1 = np.float32(np.abs(h).max())
        y = bf16(fp8_linear(h, self.w2, self.b2, ref.delayed_scales(scale[1])))
        amax = np.array([a0, a1], np.float32)
        return y.astype(np.float64), amax


def build(compile_tool, workdir, name, length, margin, algorithm):
    rng = np.random.default_rng(31)
    nodes, inits, _, _ = mlp(rng)
    weights = [np.frombuffer(i.raw_data, np.float32).reshape(i.dims)
               for i in inits]
    vi = helper.make_tensor_value_info
    flags = ["--precision=fp8", "--fp8-min-macs=0", "--fp8-recipe=delayed",
             f"--amax-history={length}", f"--fp8-margin={margin}",
             f"--amax-algo={algorithm}"]
    model = compile_graph(compile_tool, workdir, name, nodes,
                          [vi("x", T.FLOAT, [M, K])],
                          [vi("y", T.FLOAT, [M, N])], inits, flags=flags)
    return model, Emulation(weights, margin, algorithm)


def check_run(model, emulation, x, what):
    """One run of `model` on `x` against the emulation, from its state."""
    history = model.get_state("fp8.amax_history")
    scale = model.get_state("fp8.scale")
    want, amax = emulation.run(x, scale)
    got = model(x=x)["y"].astype(np.float64)
    next_history = model.get_state("fp8.amax_history")
    next_scale = model.get_state("fp8.scale")
    # The amaxes mte recorded are the history's newest row. A history of
    # one row keeps none (it is zeroed), so the scales are then checked
    # from the emulated amaxes: GEMM 1's exactly, GEMM 2's (from an f32
    # value mte accumulates in another order) within 1e-6.
    recorded = next_history[-1] if len(history) > 1 else amax
    want_history, want_scale = update(history, scale, recorded,
                                      emulation.margin, emulation.algorithm)
    if len(history) == 1 and np.isclose(next_scale[1], want_scale[1],
                                        rtol=1e-6, atol=0):
        want_scale[1] = next_scale[1]
    norm = np.linalg.norm(want)
    rel = np.linalg.norm(got - want) / norm if norm else np.abs(got).max()
    same = float(np.mean(got == want))
    amax_ok = (recorded[0] == amax[0] and
               abs(recorded[1] - amax[1]) <= 1e-2 * max(amax[1], 1e-30))
    state_ok = (np.array_equal(next_history, want_history) and
                np.array_equal(next_scale, want_scale))
    if len(history) == 1:
        state_ok = state_ok and np.array_equal(next_history, 0 * history)
    report(rel <= 1e-3 and same >= 0.9 and amax_ok and state_ok,
           f"{what}: output {rel:.1e} from the emulation ({100 * same:.0f}% "
           f"identical), amaxes {recorded.tolist()} (emulated "
           f"{amax.tolist()}), next state {'exact' if state_ok else 'WRONG'}"
           f", scales {next_scale.tolist()}")
    return got


def expect_error(what, function, needle):
    try:
        function()
    except mte.Error as error:
        report(needle in str(error), f"{what}: {error}")
        return
    report(False, f"{what}: no error")


def write_onnx(path):
    """The MLP as an ONNX file, for fp8-state-files.test."""
    import onnx
    nodes, inits, _, _ = mlp(np.random.default_rng(31))
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "mlp", [vi("x", T.FLOAT, [M, K])],
                              [vi("y", T.FLOAT, [M, N])], initializer=inits)
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    if sys.argv[1] == "--write-onnx":
        write_onnx(sys.argv[2])
        return 0
    compile_tool, workdir = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(37)

    model, emulation = build(compile_tool, workdir, "mlp_delayed", 4, 0, "max")
    report(model.state_labels("fp8.scale") == ("fc1.input", "fc2.input")
           and model.states[0].shape == (4, 2),
           f"states {[(s.name, s.shape) for s in model.states]}, labels "
           f"{model.state_labels('fp8.scale')}")
    magnitudes = [1.0, 40.0, 0.02, 3.0, 0.0, 600.0, 0.5]
    for step, magnitude in enumerate(magnitudes):
        x = (rng.standard_normal((M, K)) * magnitude).astype(np.float32)
        check_run(model, emulation, x, f"max L=4 run {step} (|x| ~{magnitude})")

    # Frozen: runs read the state and leave it as it is.
    model.freeze_state()
    before = model.get_state("fp8.scale"), model.get_state("fp8.amax_history")
    x = rng.standard_normal((M, K)).astype(np.float32) * 7
    first = model(x=x)["y"]
    model(x=x * 100)
    second = model(x=x)["y"]
    after = model.get_state("fp8.scale"), model.get_state("fp8.amax_history")
    report(model.state_frozen and np.array_equal(first, second) and
           all(np.array_equal(b, a) for b, a in zip(before, after)),
           "frozen: three runs leave the state as it was and the same input "
           "gives the same output")
    model.freeze_state(False)

    # Scales set by hand: an input far beyond 448 / scale saturates.
    model.set_state("fp8.scale", np.array([0.25, 2], np.float32))
    x = (rng.standard_normal((M, K)) * 1000).astype(np.float32)
    check_run(model, emulation, x, "scales set to 0.25 and 2, |x| ~1000")

    model.reset_state()
    report(np.array_equal(model.get_state("fp8.scale"), np.ones(2)) and
           not model.get_state("fp8.amax_history").any(),
           "reset_state: back to scales 1 and an empty history")
    x = rng.standard_normal((M, K)).astype(np.float32)
    check_run(model, emulation, x, "after reset, scale 1 again")

    kept = model.get_state("fp8.scale"), model.get_state("fp8.amax_history")
    bad_history = np.zeros((4, 2), np.float32)
    bad_history[2, 1] = -3
    expect_error("a negative amax", lambda: model.set_state(
        "fp8.amax_history", bad_history), "'fc2.input' in row 2 is -3")
    expect_error("an infinite scale", lambda: model.set_state(
        "fp8.scale", np.array([np.inf, 1], np.float32)), "'fc1.input' is inf")
    expect_error("a NaN scale", lambda: model.set_state(
        "fp8.scale", np.array([1, np.nan], np.float32)), "'fc2.input' is nan")
    expect_error("a zero scale", lambda: model.set_state(
        "fp8.scale", np.array([0, 1], np.float32)), "'fc1.input' is 0")
    expect_error("a wrong shape", lambda: model.set_state(
        "fp8.scale", np.ones(3, np.float32)), "is f32[2], given float32[3]")
    expect_error("an unknown state", lambda: model.get_state("fp8.amax"),
                 "no state named 'fp8.amax' (states: 'fp8.amax_history', "
                 "'fp8.scale')")
    report(np.array_equal(model.get_state("fp8.scale"), kept[0]) and
           np.array_equal(model.get_state("fp8.amax_history"), kept[1]),
           "refused values leave the state as the last run left it")

    # Long histories reduce in two levels (32 x 32 rows for
    # TransformerEngine's 1024, 8 x 12 for 96): a history set with its
    # maxima in scattered rows gives the scales of the whole window.
    for length in (1024, 96):
        model, emulation = build(compile_tool, workdir, f"mlp_long{length}",
                                 length, 1, "max")
        history = rng.uniform(0, 4, (length, 2)).astype(np.float32)
        history[rng.integers(1, length), 0] = 300
        history[length - 1, 1] = 70
        history[rng.integers(1, length - 1), 1] = 90
        model.set_state("fp8.amax_history", history)
        for step, magnitude in enumerate([1.0, 200.0]):
            x = (rng.standard_normal((M, K)) * magnitude).astype(np.float32)
            check_run(model, emulation, x,
                      f"max L={length} run {step} (|x| ~{magnitude})")

    model, emulation = build(compile_tool, workdir, "mlp_recent", 1, 2,
                             "most_recent")
    for step, magnitude in enumerate([2.0, 0.1, 30.0, 0.0, 5.0]):
        x = (rng.standard_normal((M, K)) * magnitude).astype(np.float32)
        check_run(model, emulation, x,
                  f"most_recent L=1 margin 2 run {step} (|x| ~{magnitude})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
