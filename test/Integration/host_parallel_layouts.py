#!/usr/bin/env python3
"""Parallel layouts beyond tensor parallelism on the host: compiles each
fixture family unsharded and in each layout (--dp, combined with --tp),
runs the layout's ranks through `mte-run --world-size N` (N processes
meeting in the host communicator) on seeded random inputs, and compares
rank 0's output with the unsharded build (each element within 1e-5 of its
value or of the output's RMS, 1e-6 relative RMS; float16 exports within
2e-3 relative RMS, as host_tensor_parallel.py) and with the float64
reference of models.py (|err| <= 1e-4 |ref| + 1e-5). With --fp8 the builds
are --precision=fp8 (current scaling, every GEMM FP8): the layouts'
outputs must equal the FP8 build of the same layout without --dp (the
unsharded one for --dp alone) within 1e-3 relative RMS (the
replicas quantise with the whole batch's MAX-reduced amax, so the same
scales) and of the layout without --dp. With --bad-index a graph input id out of range in the last
replica's part must fail every rank with the unsharded build's message
(its position counted in the whole batch).

With --delayed STEPS the builds are FP8 with delayed scaling (history 4,
every GEMM FP8) and each runs STEPS times, each run starting from the
state the one before saved (mte-run --fp8-state / --save-fp8-state): every
run's output and state must be bit-identical to the unsharded build's (the
layouts must not have --tp, whose ranks round their partial sums), and the
update must have run (the first run records its amaxes, the second
quantises with scales other than 1).

With --mpirun MPIRUN the ranks are Open MPI's processes (`mpirun
--oversubscribe -n N mte-run ...`, each reading its rank from Open MPI's
environment) instead of mte-run's forks.

Usage: host_parallel_layouts.py MTE_COMPILE MTE_RUN WORKDIR
           [--families gpt2,llama,...] [--layouts "dp=2;dp=2,tp=2"]
           [--fp8 | --delayed STEPS] [--bad-index] [--mpirun MPIRUN]
           [--batch 4 --seq 16]
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from host_tensor_parallel import relative_rms

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "Target", "ONNX", "Inputs", "models.py")
RTOL, ATOL = 1e-4, 1e-5
RTOL_WHOLE, RMS_WHOLE = 1e-5, 1e-6
FP16_RMS_REFERENCE, FP16_RMS_WHOLE = 5e-3, 2e-3
FP8_RMS_WHOLE = 1e-3


def parse_layout(text):
    """"dp=2,tp=2" -> ([--dp=2, --tp=2], world size 4): the ranks are the
    product of dp, pp and tp (micro-batches run one after another)."""
    flags, world = [], 1
    for part in text.split(","):
        if "=" not in part:  # a switch: sp
            flags.append(f"--{part}")
            continue
        key, value = part.split("=")
        flags.append(f"--{key}={value}")
        if key in ("dp", "pp", "tp"):
            world *= int(value)
    return flags, world


def without_replicas(layout):
    """The layout the replicas of `layout` each run: it without dp."""
    rest = [p for p in layout.split(",") if not p.startswith("dp=")]
    return ",".join(rest) or "unsharded"


def compare(family, want, got, whole, fp8):
    if fp8:
        to_whole = relative_rms(got, whole)
        return (got.shape == want.shape and to_whole <= FP8_RMS_WHOLE,
                f"relative RMS {to_whole:.1e} from the FP8 build")
    if family.endswith("_fp16"):
        to_ref, to_whole = relative_rms(got, want), relative_rms(got, whole)
        return (got.shape == want.shape and to_ref <= FP16_RMS_REFERENCE
                and to_whole <= FP16_RMS_WHOLE,
                f"relative RMS error {to_ref:.2e} from the reference, "
                f"{to_whole:.2e} from unsharded")
    err = np.abs(got.astype(np.float64) - want)
    ok = got.shape == want.shape and bool(np.all(err <= RTOL * np.abs(want)
                                                 + ATOL))
    whole = whole.astype(np.float64)
    scale = np.sqrt(np.mean(whole ** 2))
    to_whole = relative_rms(got, whole)
    same = bool(np.allclose(got, whole, rtol=RTOL_WHOLE,
                            atol=RTOL_WHOLE * scale)) and to_whole <= RMS_WHOLE
    return (ok and same,
            f"max abs error {err.max():.2e} from the reference, "
            f"{np.abs(got - whole).max():.2e} from unsharded (relative RMS "
            f"{to_whole:.1e})")


def stat(stats, kind):
    for line in stats.splitlines():
        if line.startswith(kind + ":"):
            return int(line.split(":")[1])
    return 0


def check_stages(stats, flags):
    """Why --fusion-stats shows a pipeline other than --pp asked, or None:
    one function a stage, a send of each hand-off per micro-batch, a
    broadcast of each output."""
    value = {f.split("=")[0]: int(f.split("=")[1]) for f in flags if "=" in f}
    pp, k = value.get("--pp", 1), value.get("--micro-batches", 1)
    if pp == 1:
        return None
    if stat(stats, "pipeline_stage") != pp:
        return f"{stat(stats, 'pipeline_stage')} stage functions for --pp={pp}"
    if stat(stats, "send") < k * (pp - 1) or stat(stats, "send") % k:
        return f"{stat(stats, 'send')} sends for {pp} stages of {k} micro-batches"
    if stat(stats, "broadcast") < 1:
        return "no broadcast of the outputs"
    return None


def launch(args, so, world):
    """The command that runs `so`'s `world` ranks."""
    if args.mpirun and world > 1:
        return [args.mpirun, "--oversubscribe", "-n", str(world), args.run, so]
    return [args.run, so, "--world-size", str(world)]


def succeeded(command, lines, label):
    """Runs `command`; on failure appends "FAIL <label>: <stderr>" to
    `lines` and returns None, else the completed process."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode == 0:
        return done
    lines.append(f"FAIL {label}: {done.stderr.strip()}")
    return None


def make_fixture(args, family, exporter):
    """Generates the fixture; returns its path stem, its reference (inputs
    and output), the --input-shape flags and mte-run's -i flags."""
    stem = os.path.join(args.workdir, f"{family}_{exporter}")
    subprocess.run([sys.executable, MODELS, "--family", family,
                    "--exporter", exporter, "--seed", "5",
                    "-o", stem + ".onnx", "--reference-out", stem + ".npz",
                    "--batch", str(args.batch), "--seq", str(args.seq)],
                   check=True)
    reference = np.load(stem + ".npz")
    shapes, files = [], []
    for name in reference.files:
        if name == "last_hidden_state":
            continue
        path = f"{stem}.{name}.npy"
        np.save(path, reference[name])
        shapes.append(f"--input-shape={name}="
                      + "x".join(map(str, reference[name].shape)))
        files += ["-i", f"{name}={path}"]
    return stem, reference, shapes, files


DELAYED = ["--precision=fp8", "--fp8-min-macs=0", "--fp8-recipe=delayed",
           "--amax-history=4"]


def run_delayed_case(args, family, exporter):
    """--delayed: each layout's runs, output and state, equal the unsharded
    build's bit for bit."""
    lines, failures = [], 0
    output = "last_hidden_state"
    stem, reference, shapes, files = make_fixture(args, family, exporter)
    runs = {}
    for name, flags, world in [("unsharded", [], 1)] + [
            (layout, *parse_layout(layout)) for layout in args.layouts]:
        so = f"{stem}.{name.replace(',', '.').replace('=', '')}.delayed.so"
        label = f"{family} {exporter} {name} delayed"
        if not succeeded([args.compile, stem + ".onnx", "-o", so] + flags + DELAYED
                         + shapes, lines, label + ": compile"):
            failures += 1
            continue
        steps, state = [], []
        for step in range(args.delayed):
            out = f"{so[:-3]}.step{step}"
            saved = out + ".state.npz"
            if not succeeded(launch(args, so, world) + ["-o", out, "--save-fp8-state",
                                                        saved] + files + state,
                             lines, f"{label}: run {step}"):
                failures += 1
                break
            with np.load(saved) as saved_state:
                steps.append((np.load(os.path.join(out, output + ".npy")),
                              {k: saved_state[k] for k in saved_state.files}))
            state = ["--fp8-state", saved]
        if len(steps) == args.delayed:
            runs[name] = steps
    if "unsharded" not in runs:
        return lines, failures + 1
    want = runs["unsharded"]
    history = want[0][1]["fp8.amax_history"]
    scales = want[-1][1]["fp8.scale"]
    if not (np.any(history != 0) and np.any(scales != 1)):
        lines.append(f"FAIL {family} {exporter} delayed: the unsharded "
                     f"build's state did not change")
        failures += 1
    for name, got in runs.items():
        if name == "unsharded":
            continue
        same = [np.array_equal(g_out, w_out) and g_state.keys() == w_state.keys()
                and all(np.array_equal(g_state[k], w_state[k]) for k in g_state)
                for (g_out, g_state), (w_out, w_state) in zip(got, want)]
        ok = all(same)
        lines.append(f"{'PASS' if ok else 'FAIL'} {family} {exporter} {name} "
                     f"delayed: {sum(same)} of {len(same)} runs' outputs and "
                     f"states bit-identical to unsharded (scales "
                     f"{scales.min():.4g}..{scales.max():.4g} after the "
                     f"last)")
        failures += not ok
    return lines, failures


def run_case(args, family, exporter):
    lines, failures = [], 0
    output = "last_hidden_state"
    stem, reference, shapes, files = make_fixture(args, family, exporter)
    want = reference[output]
    bad_files = []
    for name in reference.files:
        if name == output:
            continue
        path = f"{stem}.{name}.npy"
        value = reference[name]
        if name == "input_ids":
            # Two ids far out of range in the last replica's part (the last
            # row of the batch): the first is reported at its position in
            # the whole batch.
            value = value.copy()
            value[-1, 3] = -(1 << 20)
            value[-1, 7] = 1 << 40
            path = f"{stem}.{name}.bad.npy"
            np.save(path, value)
        bad_files += ["-i", f"{name}={path}"]
    precision = ["--precision=fp8", "--fp8-min-macs=0"] if args.fp8 else []
    layouts = list(args.layouts)
    if args.fp8:
        # FP8 layouts are compared with their replica's layout: tensor
        # parallelism alone moves some FP8 roundings (its ranks round their
        # partial sums; host-fp8-tensor-parallel.test), data parallelism none.
        layouts = list(dict.fromkeys(
            [without_replicas(l) for l in layouts if without_replicas(l)
             != "unsharded"] + layouts))
    builds = [("unsharded", [], 1)] + [
        (layout, *parse_layout(layout)) for layout in layouts]
    outputs, errors = {}, {}
    for name, flags, world in builds:
        so = f"{stem}.{name.replace(',', '.').replace('=', '')}.so"
        compiled = succeeded([args.compile, stem + ".onnx", "-o", so, "--fusion-stats"]
                             + flags + precision + shapes, lines,
                             f"{family} {exporter} {name}: compile")
        if not compiled:
            failures += 1
            continue
        unstaged = check_stages(compiled.stdout, flags)
        if unstaged:
            lines.append(f"FAIL {family} {exporter} {name}: {unstaged}")
            failures += 1
        out = so[:-3] + ".out"
        if not succeeded(launch(args, so, world) + ["-o", out] + files, lines,
                         f"{family} {exporter} {name}: run"):
            failures += 1
            continue
        outputs[name] = np.load(os.path.join(out, output + ".npy"))
        if args.bad_index:
            bad = subprocess.run(launch(args, so, world) +
                                 ["-o", out + ".bad"] + bad_files,
                                 capture_output=True, text=True)
            # What each rank says after naming the model file.
            messages = [line.split(".so': ", 1)[-1] for line in
                        bad.stderr.splitlines() if "error:" in line]
            errors[name] = (bad.returncode, messages)
    if "unsharded" not in outputs:
        return lines, failures + 1
    for name, got in outputs.items():
        if name == "unsharded":
            continue
        baseline = without_replicas(name) if args.fp8 else "unsharded"
        if baseline == name:
            continue  # a replica layout for the --fp8 comparisons
        if baseline not in outputs:
            lines.append(f"FAIL {family} {exporter} {name}: no {baseline} "
                         f"build to compare with")
            failures += 1
            continue
        ok, text = compare(family, want, got, outputs[baseline], args.fp8)
        if args.fp8:
            text += f" ({baseline})"
        lines.append(f"{'PASS' if ok else 'FAIL'} {family} {exporter} "
                     f"{name}: {text}")
        failures += not ok
        if args.bad_index:
            rc, messages = errors[name]
            want_rc, want_messages = errors["unsharded"]
            world = parse_layout(name)[1]
            # mpirun ends the job once a process has failed: the ranks it
            # stops first say nothing.
            reported = len(messages) >= 1 if args.mpirun else \
                len(messages) == world
            ok = (rc != 0 and want_rc != 0 and len(want_messages) == 1 and
                  reported and all(m == want_messages[0] for m in messages))
            lines.append(f"{'PASS' if ok else 'FAIL'} {family} {exporter} "
                         f"{name} bad ids: every rank reports "
                         f"{messages[:1] or want_messages}")
            failures += not ok
    return lines, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compile")
    ap.add_argument("run")
    ap.add_argument("workdir")
    ap.add_argument("--families", default="bert,gpt2,llama")
    ap.add_argument("--exporters", default="torchscript,dynamo")
    ap.add_argument("--layouts", default="dp=2;dp=2,tp=2")
    ap.add_argument("--fp8", action="store_true")
    ap.add_argument("--delayed", type=int, default=0, metavar="STEPS")
    ap.add_argument("--bad-index", action="store_true")
    ap.add_argument("--mpirun", help="launch the ranks with this mpirun")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=16)
    args = ap.parse_args()
    args.layouts = args.layouts.split(";")
    os.makedirs(args.workdir, exist_ok=True)
    failures = 0
    for family in args.families.split(","):
        for exporter in args.exporters.split(","):
            lines, failed = (run_delayed_case if args.delayed else
                             run_case)(args, family, exporter)
            print("\n".join(lines), flush=True)
            failures += failed
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
