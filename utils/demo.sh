#!/usr/bin/env bash
# The main job on a bundled example: a tiny GPT-2-style model (2 layers,
# hidden 64; written by the bundled generator with the node patterns of
# PyTorch's TorchScript exporter) compiled by mte-compile for the host,
# run by mte-run, and checked against an independent float64 numpy
# implementation of the same model.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$build/bin"
work="$build/demo"
python=/usr/bin/python3
mkdir -p "$work"

echo "== 1. the model: tiny GPT-2 (ONNX, opset 17, TorchScript-exporter patterns)"
"$python" "$root/test/Target/ONNX/Inputs/models.py" --family gpt2 \
  --exporter torchscript --seed 1 -o "$work/tiny-gpt2.onnx" \
  --reference-out "$work/reference.npz" --batch 1 --seq 32
"$python" - "$work" <<'PY'
import sys, numpy as np
work = sys.argv[1]
ref = np.load(f"{work}/reference.npz")
np.save(f"{work}/input_ids.npy", ref["input_ids"])
print("input_ids:", ref["input_ids"].shape, ref["input_ids"][0, :12], "...")
PY

echo
echo "== 2. mte-compile tiny-gpt2.onnx -o tiny-gpt2.so --input-shape input_ids=1x32"
start=$(date +%s%N)
"$bin/mte-compile" "$work/tiny-gpt2.onnx" -o "$work/tiny-gpt2.so" \
  --input-shape input_ids=1x32
end=$(date +%s%N)
echo "compiled in $(( (end - start) / 1000000 )) ms:" \
  "$work/tiny-gpt2.so ($(stat -c %s "$work/tiny-gpt2.so") bytes)"

echo
echo "== 3. mte-run tiny-gpt2.so --input input_ids=input_ids.npy --bench 100"
"$bin/mte-run" "$work/tiny-gpt2.so" --input "input_ids=$work/input_ids.npy" \
  --output-dir "$work/out" --bench 100

echo
echo "== 4. against the float64 numpy reference"
"$python" - "$work" <<'PY'
import glob, sys, numpy as np
work = sys.argv[1]
ref = np.load(f"{work}/reference.npz")["last_hidden_state"]
got = np.load(glob.glob(f"{work}/out/last_hidden_state*.npy")[0])
err = np.abs(got - ref).max()
print(f"last_hidden_state {got.shape}: max |mte - numpy float64| = {err:.2e}")
sys.exit(0 if err <= 1e-4 * np.abs(ref).max() else 1)
PY
