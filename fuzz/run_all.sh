#!/usr/bin/env bash
# Runs every fuzz target built by fuzz/build.sh for a fixed time over its seed corpus (which holds the
# regress_* reproducers of past findings too), one after another; fails on the first crash, leak,
# timeout or out-of-memory input, which libFuzzer saves under $out/artifacts/. New inputs go to a
# scratch corpus under $out/scratch, so the checked-in corpus stays as it is.
#   bash fuzz/run_all.sh [SECONDS_PER_TARGET (30)] [BUILD_DIR (build-fuzz)]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
out=${2:-build-fuzz}
mkdir -p "$out/artifacts"
for corpus in fuzz/corpus/*/; do
  name=$(basename "$corpus")
  scratch="$out/scratch/$name"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  echo "fuzz_$name: ${seconds} s over $corpus"
  "$out/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$name-" "$scratch" "$corpus" 2>"$out/fuzz_$name.log" || {
    tail -n 60 "$out/fuzz_$name.log"
    echo "fuzz_$name failed; the input is in $out/artifacts/ (full log: $out/fuzz_$name.log)" >&2
    exit 1
  }
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$out/fuzz_$name.log" | tr '\n' ' '
  echo
done
