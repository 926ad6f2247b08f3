#!/usr/bin/env python3
"""Builds, on the compile machine, everything the GPU check needs, so that
the GPU machine runs models without a compiler (as deployments do).

For each BERT / GPT-2 / Llama fixture (both exporters' node patterns):
the ONNX model, its CUDA model.so (mte-compile --target=cuda), seeded inputs
with the independent float64 numpy reference output (models.py), and the
host backend's output for the same inputs. Also copies libmte_runtime.

Usage: prepare.py MTE_COMPILE OUTDIR [--batch 2 --seq 16 --gpu sm_90a]
Then, on the GPU machine: python3 utils/gpu/check.py OUTDIR
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODELS = os.path.join(ROOT, "test", "Target", "ONNX", "Inputs", "models.py")
sys.path.insert(0, os.path.join(ROOT, "python"))
import mte  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compile")
    parser.add_argument("outdir")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=16)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--gpu", default="sm_90a")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    lib = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(args.compile))), "lib")
    for path in glob.glob(os.path.join(lib, "libmte_runtime.so*")):
        shutil.copy(path, args.outdir, follow_symlinks=True)
    # mte-run, for the compute-sanitizer run of check-gpu.
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(args.compile)),
                             "mte-run"), args.outdir)
    for family in ["bert", "gpt2", "llama"]:
        for exporter in ["torchscript", "dynamo"]:
            name = f"{family}_{exporter}"
            stem = os.path.join(args.outdir, name)
            subprocess.run([sys.executable, MODELS, "--family", family,
                            "--exporter", exporter, "--seed", str(args.seed),
                            "-o", stem + ".onnx", "--reference-out",
                            stem + ".npz", "--batch", str(args.batch),
                            "--seq", str(args.seq)], check=True)
            reference = dict(np.load(stem + ".npz"))
            inputs = {k: v for k, v in reference.items()
                      if k != "last_hidden_state"}
            shapes = [f"--input-shape={k}={'x'.join(map(str, v.shape))}"
                      for k, v in inputs.items()]
            subprocess.run([args.compile, stem + ".onnx", "-o",
                            stem + ".cuda.so", "--target=cuda",
                            f"--gpu={args.gpu}"] + shapes, check=True)
            subprocess.run([args.compile, stem + ".onnx", "-o",
                            stem + ".host.so"] + shapes, check=True)
            host = mte.load(stem + ".host.so")(**inputs)["last_hidden_state"]
            np.savez(stem + ".npz", host_output=host, **reference)
            os.remove(stem + ".host.so")
            print(f"prepared {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
