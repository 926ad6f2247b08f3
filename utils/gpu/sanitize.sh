#!/bin/sh
# compute-sanitizer over one fixture of every family in DIR (made by
# prepare.py): memcheck on the fused fp32 and bf16 models, racecheck and
# synccheck on the bf16 one (its fused attention and row kernels use
# shared memory and barriers); then all three on the large-row cases. Token ids, masks and types are drawn in
# [0, 2), valid for every fixture's tables. Exits non-zero on the first
# error, printing the sanitizer's report.
#
# Usage: sanitize.sh DIR
set -u
cd "$1" || exit 1
export LD_LIBRARY_PATH=.
status=0
for family in bert gpt2 llama gptj neox phi qwen3 gemma mistral llama_padded; do
  for run in "memcheck ${family}_dynamo.cuda.so" \
             "memcheck ${family}_dynamo.bf16.cuda.so" \
             "racecheck ${family}_dynamo.bf16.cuda.so" \
             "synccheck ${family}_dynamo.bf16.cuda.so"; do
    set -- $run
    if compute-sanitizer --error-exitcode 1 --tool "$1" \
        ./mte-run "$2" --int-range 0:2 > sanitize.log 2>&1; then
      echo "PASS $1 $2: $(grep 'SUMMARY' sanitize.log | tr '\n' ' ')"
    else
      echo "FAIL $1 $2"
      cat sanitize.log
      status=1
    fi
  done
done
# The large-row cases: the row kernels' block and ragged paths (shared
# memory, barriers), which the fixtures' rows do not reach.
for model in rows_*.cuda.so; do
  for tool in memcheck racecheck synccheck; do
    if compute-sanitizer --error-exitcode 1 --tool "$tool" \
        ./mte-run "$model" > sanitize.log 2>&1; then
      echo "PASS $tool $model: $(grep 'SUMMARY' sanitize.log | tr '\n' ' ')"
    else
      echo "FAIL $tool $model"
      cat sanitize.log
      status=1
    fi
  done
done
rm -f sanitize.log
exit $status
