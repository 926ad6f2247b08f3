#!/usr/bin/env bash
# The main job on the bundled example: a GPT-2 block, in the primitive form
# the ONNX importer produces, through mte-opt's simplification pipeline.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
opt="$build/bin/mte-opt"
example="$root/examples/gpt2_block.mlir"

echo "== mte demo: $example"
echo "== operations before (mte-opt --print-op-stats):"
"$opt" "$example" --print-op-stats -o /dev/null 2>&1 | grep transformer.
echo
echo "== mte-opt --mte-simplify (shape arithmetic folded, causal mask constant):"
"$opt" "$example" --mte-simplify
echo "== operations after:"
"$opt" "$example" --mte-simplify --print-op-stats -o /dev/null 2>&1 | grep transformer.
