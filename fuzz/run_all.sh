#!/usr/bin/env bash
# Runs every fuzz target built by fuzz/build.sh for a fixed time over its seed corpus (which holds the
# regress_* reproducers of past findings too), as many at once as there are cores (each fuzzer is one
# process on one core, so each still gets a whole core for its time); fails on a crash, leak, timeout or
# out-of-memory input, which libFuzzer saves under $out/artifacts/. New inputs go to a scratch corpus
# under $out/scratch, so the checked-in corpus stays as it is.
#   bash fuzz/run_all.sh [SECONDS_PER_TARGET (30)] [BUILD_DIR (build-fuzz)] [PARALLEL (nproc)]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
out=${2:-build-fuzz}
parallel=${3:-$(nproc)}
mkdir -p "$out/artifacts"
export seconds out
fuzz_one() {
  local corpus=$1 name scratch
  name=$(basename "$corpus")
  scratch="$out/scratch/$name"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  if "$out/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$name-" "$scratch" "$corpus" 2>"$out/fuzz_$name.log"; then
    echo "fuzz_$name: ${seconds} s over $corpus: $(grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" \
      "$out/fuzz_$name.log" | tr '\n' ' ')"
  else
    tail -n 60 "$out/fuzz_$name.log"
    echo "fuzz_$name failed; the input is in $out/artifacts/ (full log: $out/fuzz_$name.log)" >&2
    return 255  # stops xargs
  fi
}
export -f fuzz_one
printf '%s\n' fuzz/corpus/*/ | xargs -P "$parallel" -I{} bash -c 'fuzz_one {}'
