#!/usr/bin/env python3
"""Compiles the 2-layer BERT, GPT-2 and Llama fixtures (both exporters' node
patterns) for the host backend, with and without the fusion pipeline, runs
them on seeded random inputs through the mte Python package, and compares
the outputs with the independent float64 numpy implementation of each model
written by models.py, and with each other (rtol 1e-5).

Tolerance: |mte - reference| <= 1e-4 * |reference| + 1e-5 elementwise
(mte computes in fp32).

The fused graph is also compiled with --precision=bf16 and fp16 (weights and
activations stored narrow, reductions in f32) and compared with the same
float64 reference by relative RMS error ||mte - ref|| / ||ref||, bounded
per precision (NARROW_RMS_TOL) from the errors measured (2026-12-01): bf16
on the host 5-7e-3 at the tiny size and 7.2e-3-1.66e-2 at the peaked one
(--size peaked --batch 4 --seq 128), on the H200 (make check-gpu, fused)
up to 1.73e-2 (peaked Llama): bound 2.5e-2, 1.45x over the worst; fp16
6-9e-4 and 0.86-2.1e-3: bound 5e-3, 2.4x. At the peaked size every
deliberate attention error (models.py --check-perturbations) moves the
output by more than 10x the bf16 bound.

With --precision=fp8 (every linear in FP8 with current scaling,
--fp8-min-macs=0) the error is bounded by what the recipe itself costs:
models.py --fp8-reference runs the float64 reference again with both
operands of every linear quantized as docs/fp8.md says (bf16, the weight's
amax / 448 and the activation's 448 / amax scales, E4M3 codes;
fp8_reference.py), nothing else rounded, and mte's FP8 build must be within
1.25x that error plus 1.5x its own bf16 build's (the bf16 rounding points
the emulation leaves out move an FP8 code now and then, and it scales Q, K
and V, gate and up, each by its own weight amax where mte's fused GEMM
takes one over all of them, so the two are not equal: measured on the
host 2026-12-06, over every fixture and zoo family, mte at 0.93-1.09x the
emulation's error where FP8 dominates, 6.7e-3-1.70e-1 relative RMS; the
emulation alone 1.6e-3-1.76e-1). The random-weight zoo models amplify
FP8's rounding up to five times GPT-2's (Gemma 2 1.3e-1, T5 1.7e-1 against
3.3e-2), so one fixed bound would either miss a lowering error on GPT-2 or
fail a correct Gemma 2. BERT, GPT-2 and Llama must also reach
the issue's cosine similarity goal of 0.995 at the tiny size (>= 0.9992
measured). host_fp8_precision.py checks the recipe bit for bit on an MLP.
`--precisions fp8-delayed` compiles --fp8-recipe=delayed and checks its
second run the same way: after one run the update has set every scale to
current scaling's for that input (measured on the zoo, 2026-12-06: within
0.87-1.12x of the current-scaling emulation's error). `--precisions
fp8-rowwise` compiles --fp8-recipe=rowwise and holds it to the same bound
against models.py --fp8-reference rowwise (measured 2026-12-07: 0.93-1.07x
the emulation's error on every fixture and zoo family).

Usage: host_models.py MTE_COMPILE WORKDIR [--batch 2 --seq 16]
                      [--families bert,gpt2,llama]
                      [--precisions bf16,fp16,fp8[,fp8-delayed,fp8-rowwise]]
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "Target", "ONNX", "Inputs", "models.py")
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import mte  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
NARROW_RMS_TOL = {"bf16": 2.5e-2, "fp16": 5e-3}
# A narrow build rounds: an error below these (bf16's is 4e-3 and more,
# fp16's 5e-4) means part of it did not run narrow (an unfused vision
# model once stayed f32 throughout).
NARROW_RMS_FLOOR = {"bf16": 1e-4, "fp16": 1e-5}
# fp8 must run every linear of the fixtures in FP8 (they are below the
# default size threshold, so --fp8-min-macs=0) and keep the output within
# SLACK x the recipe's own error + BF16_SLACK x the bf16 build's, and the
# fixtures reach the cosine goal (see the docstring).
FP8_FLAGS = ["--fp8-min-macs=0", "--fusion-stats"]
# --precisions takes these; fp8-delayed is --fp8-recipe=delayed, checked on
# its second run, fp8-rowwise --fp8-recipe=rowwise.
PRECISIONS = ["bf16", "fp16", "fp8", "fp8-delayed", "fp8-rowwise"]
# The reference each FP8 build is bounded by: current scaling's emulation
# (delayed scaling's second run quantizes with the first run's amaxes, the
# same input's), or rowwise scaling's.
FP8_REFERENCE = {"fp8": "current", "fp8-delayed": "current",
                 "fp8-rowwise": "rowwise"}
FP8_EMULATION_SLACK = 1.25
FP8_BF16_SLACK = 1.5
FP8_COSINE_GOAL = {(family, "tiny"): 0.995
                   for family in ("bert", "gpt2", "llama")}


def run_case(args, family, exporter):
    """Compiles and checks one fixture; returns (report lines, failures)."""
    lines, failures = [], 0
    stem = os.path.join(args.workdir, f"{family}_{exporter}_{args.size}")
    subprocess.run([sys.executable, MODELS, "--family", family,
                    "--exporter", exporter, "--seed", str(args.seed),
                    "--size", args.size,
                    "-o", stem + ".onnx", "--reference-out",
                    stem + ".npz", "--batch", str(args.batch),
                    "--seq", str(args.seq)]
                   + fp8_reference_flags(args.precisions),
                   check=True)
    reference = np.load(stem + ".npz")
    inputs = {k: reference[k] for k in reference.files
              if not k.endswith("last_hidden_state")}
    shapes = [f"--input-shape={k}={'x'.join(map(str, v.shape))}"
              for k, v in inputs.items()]
    results = {}
    for fusion in ["true", "false"]:
        so = f"{stem}.fusion-{fusion}.so"
        subprocess.run([args.compile, stem + ".onnx", "-o", so,
                        f"--fusion={fusion}"] + shapes, check=True)
        results[fusion] = mte.load(so)(**inputs)["last_hidden_state"]
    want = reference["last_hidden_state"]
    if family.endswith("_fp16"):
        return check_fp16_export(family, exporter, results, want)
    for fusion, got in results.items():
        err = np.abs(got.astype(np.float64) - want)
        ok = got.shape == want.shape and np.all(
            err <= RTOL * np.abs(want) + ATOL)
        worst = np.max(err / (np.abs(want) + ATOL / RTOL))
        lines.append(f"{'PASS' if ok else 'FAIL'} {family} {exporter} "
                     f"fusion={fusion}: max abs error {err.max():.2e}, "
                     f"worst error/tolerance {worst / RTOL:.3f}")
        failures += not ok
    # The fused and the unfused graph agree (rtol 1e-5).
    same = np.allclose(results["true"], results["false"],
                       rtol=1e-5, atol=1e-6)
    lines.append(f"{'PASS' if same else 'FAIL'} {family} {exporter}: "
                 f"fused == unfused")
    failures += not same
    # The narrow precisions fused, and bf16 unfused too at the tiny size
    # (rounded after every primitive: at the peaked size that alone is 2.4e-2
    # from the reference, the bound's edge). bf16 fused goes first: FP8's
    # bound is relative to its error.
    asked = [p for p in args.precisions.split(",") if p]
    fp8_asked = any(p.startswith("fp8") for p in asked)
    precisions = sorted(set(asked) | ({"bf16"} if fp8_asked else set()),
                        key=PRECISIONS.index)
    builds = [(p, "true") for p in precisions]
    if "bf16" in asked and args.size == "tiny":
        builds.append(("bf16", "false"))
    errors = {}
    for precision, fusion in builds:
        so = f"{stem}.{precision}.fusion-{fusion}.so"
        fp8 = precision.startswith("fp8")
        recipe = precision.partition("-")[2]
        done = subprocess.run([args.compile, stem + ".onnx", "-o", so,
                               f"--precision={precision.partition('-')[0]}",
                               f"--fusion={fusion}"] + shapes
                              + (FP8_FLAGS if fp8 else [])
                              + ([f"--fp8-recipe={recipe}"] if recipe else []),
                              check=True, capture_output=True, text=True)
        model = mte.load(so)
        if recipe == "delayed":
            # The first run casts at the initial scales of 1; the second
            # at those the update took from the first's amaxes, which are
            # current scaling's for the same input.
            model(**inputs)
        got = model(**inputs)["last_hidden_state"].astype(np.float64)
        rel = np.linalg.norm(got - want) / np.linalg.norm(want)
        errors[precision, fusion] = rel
        detail = ""
        if fp8:
            ok, detail = check_fp8(family, args.size, got, want, rel,
                                   reference[emulated_key(precision)],
                                   errors["bf16", "true"], done.stdout)
        else:
            bound = NARROW_RMS_TOL[precision]
            ok = (got.shape == want.shape and
                  NARROW_RMS_FLOOR[precision] <= rel <= bound)
            detail = f" (bound {bound:g})"
        lines.append(f"{'PASS' if ok else 'FAIL'} {family} {exporter} "
                     f"precision={precision}{'' if fusion == 'true' else ' unfused'}: "
                     f"relative RMS error {rel:.2e}{detail}")
        failures += not ok
    return lines, failures


def emulated_key(precision):
    """The output of models.py --fp8-reference an FP8 build is held to."""
    recipe = FP8_REFERENCE[precision]
    return ("fp8_" + ("" if recipe == "current" else recipe + "_")
            + "last_hidden_state")


def fp8_reference_flags(precisions):
    """models.py's --fp8-reference for the FP8 builds of `precisions`."""
    recipes = sorted({FP8_REFERENCE[p] for p in precisions.split(",")
                      if p in FP8_REFERENCE})
    return ["--fp8-reference", ",".join(recipes)] if recipes else []


def check_fp8(family, size, got, want, rel, emulated, bf16_error,
              stats_text):
    """The FP8 build against the float64 reference: every linear in FP8,
    its error `rel` at most FP8_EMULATION_SLACK times the recipe's own (the
    reference with every linear quantized, `emulated`) plus
    FP8_BF16_SLACK times the bf16 build's, and, on the tiny fixtures,
    cosine similarity >= the issue's goal. Returns (ok, detail)."""
    stats = dict(line.split(": ") for line in stats_text.splitlines()
                 if ": " in line)
    norm = np.linalg.norm(want)
    recipe = np.linalg.norm(emulated - want) / norm
    bound = FP8_EMULATION_SLACK * recipe + FP8_BF16_SLACK * bf16_error
    cosine = float(np.sum(got * want) / (np.linalg.norm(got) * norm))
    goal = FP8_COSINE_GOAL.get((family, size), -1.0)
    ok = (got.shape == want.shape and rel <= bound and cosine >= goal and
          int(stats.get("fp8_gemm", 0)) == int(stats["gemm"]) > 0)
    detail = (f" (bound {bound:.2e}: the recipe's own error {recipe:.2e}), "
              f"cosine {cosine:.5f}{f' (goal {goal})' if goal > 0 else ''}, "
              f"{stats.get('fp8_gemm')} of {stats['gemm']} GEMMs in FP8")
    return ok, detail


def check_fp16_export(family, exporter, results, want):
    """A model exported in float16 computes in float16 fused or not: each
    build within the fp16 bound of the float64 reference (relative RMS), and
    within it of each other."""
    lines, failures = [], 0
    bound = NARROW_RMS_TOL["fp16"]

    def rel(a, b):
        return np.linalg.norm(a - b) / np.linalg.norm(b)
    for fusion, got in results.items():
        got = got.astype(np.float64)
        error = rel(got, want)
        ok = got.shape == want.shape and results[fusion].dtype == np.float16 \
            and error <= bound
        lines.append(f"{'PASS' if ok else 'FAIL'} {family} {exporter} "
                     f"fusion={fusion}: float16 output, relative RMS error "
                     f"{error:.2e} (bound {bound:g})")
        failures += not ok
    apart = rel(results["true"].astype(np.float64),
                results["false"].astype(np.float64))
    lines.append(f"{'PASS' if apart <= bound else 'FAIL'} {family} {exporter}: "
                 f"fused == unfused within {apart:.2e}")
    failures += apart > bound
    return lines, failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compile")
    parser.add_argument("workdir")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--size", default="tiny",
                        help="models.py --size: tiny (the fixtures) or peaked")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--families", default="bert,gpt2,llama",
                        help="comma-separated models.py families")
    parser.add_argument("--precisions", default="bf16,fp16,fp8")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    cases = [(family, exporter) for family in args.families.split(",")
             for exporter in ["torchscript", "dynamo"]]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for lines, failed in pool.map(lambda c: run_case(args, *c), cases):
            print("\n".join(lines), flush=True)
            failures += failed
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
