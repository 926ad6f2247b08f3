#!/usr/bin/env python3
"""A Llama exported with its key/value cache (models.py's llama_past: the
past_key_values.<i>.key/value inputs before input_ids' tokens, the
present.<i>.key/value outputs), compiled for the host, on the peaked
weights where a wrong offset moves the output far:

* a prefill continued (16 new tokens after 19 cached, batch 2) and a
  decoding step (1 token after 4, batch 3), in both exporters' patterns,
  fused and unfused: every output (the hidden state and each layer's
  present key and value) within |err| <= 1e-4 |ref| + 1e-5 of the float64
  reference, and the fused build runs both layers' attention as
  transformer.attention (--fusion-stats), whose causal diagonal is at the
  bottom right when there are more keys than queries;
* the sharded build (--tp=2, two ranks through mte-run --world-size 2):
  the same outputs within 1e-6 relative RMS of the unsharded build's.

Usage: host_kv_cache.py MTE_COMPILE MTE_RUN WORKDIR
"""
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Target", "ONNX", "Inputs"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import models  # noqa: E402
import mte  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
LAYERS, SEED = 2, 3
CASES = [("prefill", 2, 16), ("decode", 3, 1)]


def report(ok, what):
    print(f"{'PASS' if ok else 'FAIL'} {what}", flush=True)
    return 0 if ok else 1


def compile_model(compiler, onnx_path, so, inputs, *flags):
    shapes = [f"--input-shape={k}={'x'.join(map(str, v.shape))}" for k, v in inputs.items()]
    return subprocess.run([compiler, onnx_path, "-o", so, *flags, *shapes], check=True,
                          capture_output=True, text=True).stdout


def main():
    compiler, runner, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    models.set_size("peaked")
    failures = 0
    for exporter in models.EXPORTERS:
        model, weights = models.build_model("llama_past", exporter, LAYERS, SEED)
        onnx_path = os.path.join(work, f"llama_past_{exporter}.onnx")
        models.save_model(model, onnx_path)
        for case, batch, seq in CASES:
            name = f"llama_past {exporter} {case}"
            inputs = models.make_inputs("llama_past", batch, seq, SEED, LAYERS)
            want = {"last_hidden_state": models.reference_forward("llama_past", weights,
                                                                  inputs, LAYERS)}
            want.update(models.PRESENTS)
            past = inputs["past_key_values.0.key"].shape[2]
            results = {}
            for fusion in ("true", "false"):
                so = os.path.join(work, f"{exporter}.{case}.{fusion}.so")
                stats = compile_model(compiler, onnx_path, so, inputs,
                                      f"--fusion={fusion}", "--fusion-stats")
                got = mte.load(so)(**inputs)
                results[fusion] = got
                worst = 0.0
                for key, ref in want.items():
                    err = np.abs(got[key].astype(np.float64) - ref)
                    worst = max(worst, float(np.max(err / (RTOL * np.abs(ref) + ATOL))))
                failures += report(worst <= 1.0 and set(got) == set(want),
                                   f"{name} ({seq} tokens after {past}) fusion={fusion}: "
                                   f"{len(want)} outputs, worst error/tolerance {worst:.3f}")
                if fusion == "true":
                    attention = re.search(r"^attention: (\d+)$", stats, re.M)
                    count = int(attention.group(1)) if attention else 0
                    failures += report(count == LAYERS,
                                       f"{name}: {count} fused attentions over "
                                       f"{past + seq} keys")
            same = all(np.allclose(results["true"][k], results["false"][k],
                                   rtol=1e-5, atol=1e-6) for k in want)
            failures += report(same, f"{name}: fused == unfused")

        # Two ranks of the prefill's --tp=2 build against the unsharded one.
        _, batch, seq = CASES[0]
        inputs = models.make_inputs("llama_past", batch, seq, SEED, LAYERS)
        args = []
        for key, value in inputs.items():
            path = os.path.join(work, f"{exporter}.{key}.npy")
            np.save(path, value)
            args += ["-i", f"{key}={path}"]
        outs = {}
        for label, flags, ranks in (("unsharded", [], 1), ("tp2", ["--tp=2"], 2)):
            so = os.path.join(work, f"{exporter}.{label}.so")
            compile_model(compiler, onnx_path, so, inputs, *flags)
            out_dir = os.path.join(work, f"{exporter}.{label}.out")
            subprocess.run([runner, so, *args, "-o", out_dir, "--world-size", str(ranks)],
                           check=True, capture_output=True)
            outs[label] = {f[:-4]: np.load(os.path.join(out_dir, f))
                           for f in sorted(os.listdir(out_dir))}
        worst = max(np.linalg.norm(outs["tp2"][k] - v) / np.linalg.norm(v)
                    for k, v in outs["unsharded"].items())
        failures += report(len(outs["tp2"]) == 1 + 2 * LAYERS and worst <= 1e-6,
                           f"llama_past {exporter} --tp=2: {len(outs['tp2'])} outputs "
                           f"within {worst:.1e} relative RMS of the unsharded build")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
