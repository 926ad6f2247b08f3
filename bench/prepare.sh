#!/bin/sh
# Builds, on the compile machine, the folder the benchmark runs from on the
# GPU machine (docs/performance.md):
#
#   bench/prepare.sh [BUILD_DIR]          # default: build; or make bench-artifacts
#
# For each benchmark model (bench/common.py): models.py writes NAME.onnx and
# its external weights NAME.data into BUILD_DIR/bench, mte-compile builds
# NAME.so from them (--target=cuda --precision=bf16 --weights=external, the
# static input shape), NAME.fp8.so (--precision=fp8, the E4M3 weights
# external too), NAME.fp8-delayed.so, NAME.fp8-block.so and NAME.fp8-rowwise.so (its recipes), the data file's size and CRC32 go to manifest.json,
# and NAME.data is deleted: run.py regenerates it, bit for bit, beside
# NAME.so.  Then libmte_runtime, the mte package, bench/*.py and models.py
# are copied in, so that BUILD_DIR/bench alone (a few MiB) runs with
#
#   cd BUILD_DIR/bench && LD_LIBRARY_PATH=. python3 run.py --out bench.json
#   cd BUILD_DIR/bench && LD_LIBRARY_PATH=. python3 kernels.py run
#   cd BUILD_DIR/bench && LD_LIBRARY_PATH=. python3 fp8_gemm.py run
#
# (kernels.py build also writes its one-op models there: the norms, rotary
# embedding and elementwise kernels at large sizes.)
#
# Environment: MTE_COMPILE (default BUILD_DIR/bin/mte-compile),
# MTE_COMPILE_FLAGS (more mte-compile options, e.g. --gpu=sm_90a),
# BENCH_MODELS (default "gpt2-small llama-4l"), PYTHON (default
# /usr/bin/python3).
set -euf     # -f: the argument lists below are split on spaces, never globbed

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
COMPILE=${MTE_COMPILE:-$BUILD/bin/mte-compile}
PY=${PYTHON:-/usr/bin/python3}
OUT=$BUILD/bench
MODELS_PY=$ROOT/test/Target/ONNX/Inputs/models.py
COMMON=$ROOT/bench/common.py

if [ ! -x "$COMPILE" ]; then
  echo "prepare.sh: no mte-compile at $COMPILE (build first, or set MTE_COMPILE)" >&2
  exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT"
for name in ${BENCH_MODELS:-gpt2-small llama-4l}; do
  margs=$("$PY" "$COMMON" models-args "$name" | tr '\n' ' ')
  echo "== $name: models.py $margs"
  start=$(date +%s)
  # shellcheck disable=SC2086  # split on purpose: the lists hold no spaces
  (cd "$OUT" && "$PY" "$MODELS_PY" $margs)
  echo "   generated in $(( $(date +%s) - start )) s"
  for precision in bf16 fp8 fp8-delayed fp8-block fp8-rowwise; do
    cargs=$("$PY" "$COMMON" compile-args "$name" "$precision" | tr '\n' ' ')
    lib=$name.so
    [ "$precision" = bf16 ] || lib=$name.$precision.so
    echo "== $name: mte-compile $name.onnx -o $lib $cargs${MTE_COMPILE_FLAGS:-}"
    start=$(date +%s)
    # shellcheck disable=SC2086
    (cd "$OUT" && "$COMPILE" "$name.onnx" -o "$lib" $cargs ${MTE_COMPILE_FLAGS:-})
    echo "   compiled in $(( $(date +%s) - start )) s"
  done
  "$PY" "$COMMON" record "$name" "$OUT"
  rm -f "$OUT/$name.data"
done

# The memory-bound kernels at large sizes, one small model each.
"$PY" "$ROOT/bench/kernels.py" build "$OUT" "$COMPILE"
# FP8 linears at the benchmark models' GEMM shapes, bf16 and fp8 builds.
"$PY" "$ROOT/bench/fp8_gemm.py" build "$OUT" "$COMPILE"

# The runtime under the names the loader and the mte package look for
# (build/lib also keeps the libraries of earlier versions).
for lib in libmte_runtime.so libmte_runtime.so.0; do
  cp -L "$BUILD/lib/$lib" "$OUT/"
done
set +f
mkdir -p "$OUT/mte"
cp "$ROOT"/python/mte/*.py "$OUT/mte/"
cp "$ROOT"/bench/*.py "$MODELS_PY" "$OUT/"

bytes=$(du -sb "$OUT" | cut -f1)
echo "== $OUT: $((bytes / 1024)) KiB"
if [ "$bytes" -gt $((60 * 1024 * 1024)) ]; then
  echo "prepare.sh: $OUT is over 60 MiB; it must stay under 64 MiB to be carried" >&2
  exit 1
fi
echo "On the GPU machine: cd $OUT && LD_LIBRARY_PATH=. python3 run.py --out bench.json"
