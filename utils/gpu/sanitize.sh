#!/bin/sh
# compute-sanitizer over one fixture of every family in DIR (made by
# prepare.py): memcheck on the fused fp32 and bf16 models, racecheck and
# synccheck on the bf16 one (its fused attention and row kernels use
# shared memory and barriers), memcheck and racecheck on the delayed FP8
# build (the amaxes kernel's loads and its shared-memory reduction); then
# all three on the large-row cases. Token ids, masks and types are drawn
# in [0, 2), valid for every fixture's tables. Exits non-zero on the
# first error, printing the sanitizer's report.
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
             "synccheck ${family}_dynamo.bf16.cuda.so" \
             "memcheck ${family}_dynamo.delayed.so" \
             "racecheck ${family}_dynamo.delayed.so"; do
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
# Token ids anywhere in [-10^9, 10^9): the run fails with an invalid-input
# error and the sanitizer sees no access outside the model's buffers.
for model in gpt2_dynamo.cuda.so llama_dynamo.bf16.cuda.so gather_ids.idx.so; do
  compute-sanitizer --tool memcheck ./mte-run "$model" \
    --int-range -1000000000:1000000000 > sanitize.log 2>&1
  if grep -q 'ERROR SUMMARY: 0 errors' sanitize.log &&
     grep -q 'is outside' sanitize.log; then
    echo "PASS memcheck $model, ids out of range: $(grep 'is outside' sanitize.log | head -1)"
  else
    echo "FAIL memcheck $model, ids out of range"
    cat sanitize.log
    status=1
  fi
done
rm -f sanitize.log
exit $status
