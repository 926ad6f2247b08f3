#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD_DIR (configured with
# -DMTE_ENABLE_FUZZERS=ON) for SECONDS, one process at a time, starting from
# its checked-in corpus (tools/mte-fuzz/corpus/<target>, read only) and the
# inputs earlier runs found (BUILD_DIR/fuzz/<target>/corpus). Crashing
# inputs are written to BUILD_DIR/fuzz/<target>/. Fails if a target found one.
#
# Usage: utils/fuzz.sh BUILD_DIR [SECONDS] [TARGET...]
set -euo pipefail

build=$1
seconds=${2:-60}
shift $(( $# > 1 ? 2 : 1 ))
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(mte-fuzz-import mte-fuzz-runtime)
src=$(cd "$(dirname "$0")/.." && pwd)

status=0
for target in "${targets[@]}"; do
  work=$build/fuzz/$target
  mkdir -p "$work/corpus"
  echo "== $target: ${seconds}s"
  # A few bytes of model must not make the importer allocate gigabytes or
  # run for long: past 4 GiB or 30 s on one input, libFuzzer reports a
  # failure.
  rc=0
  "$build/bin/$target" -max_total_time="$seconds" -print_final_stats=1 \
    -rss_limit_mb=4096 -timeout=30 -artifact_prefix="$work/" \
    "$work/corpus" "$src/tools/mte-fuzz/corpus/$target" \
    > "$work/log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+ +DONE|stat::)' "$work/log" || true
  if [[ $rc -ne 0 ]]; then
    tail -n 40 "$work/log"
    echo "$target: exit status $rc, log in $work/log"
    status=1
  fi
done
exit $status
