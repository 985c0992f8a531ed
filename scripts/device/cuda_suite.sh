#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/device/package.sh staged .device/:
# the machine's facts, `tessera devices`, the CUDA test suite (device layer, executables, and the whole
# differential suite with the CUDA backend under test), the GPU benchmarks and the peers
# (bench/compare_torch_gpu.py). Logs go to $OUT (the device tool's result folder) or out_device/.
# Usage there: bash scripts/device/cuda_suite.sh [tests|fuzz|bench|all] [GTEST_FILTER]
# (TEST_TIMEOUT, BENCH_TIMEOUT, COMPARE_TIMEOUT in seconds and COMPARE_ARGS adjust a run to the call's limit)
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
filter=${2:-*}
out=${OUT:-out_device}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  command -v cc || echo "no C compiler: the CPU backend runs without generated kernels"
  .device/bin/tessera devices
} 2>&1 | tee "$out/machine.txt"
if [[ $what == tests || $what == all ]]; then
  start=$(date +%s)
  timeout "${TEST_TIMEOUT:-420}" .device/bin/test_cuda --gtest_brief=1 --gtest_filter="$filter" > "$out/test_cuda.log" 2>&1
  echo "test_cuda exit $? after $(($(date +%s) - start)) s" | tee -a "$out/test_cuda.log"
  tail -n 60 "$out/test_cuda.log"
fi
if [[ $what == fuzz || $what == all ]]; then
  # The graph fuzzer with the CUDA backend under test, for a fixed time; findings land in $out/fuzz.
  timeout $((${FUZZ_MINUTES:-3} * 60 + 60)) .device/bin/fuzz_graphs --backend cuda --minutes "${FUZZ_MINUTES:-3}" \
    --seed "${FUZZ_SEED:-20261201}" --out "$out/fuzz" > "$out/fuzz_cuda.log" 2>&1
  echo "fuzz_graphs exit $?"
  tr '\r' '\n' < "$out/fuzz_cuda.log" | tail -n 5
fi
if [[ $what == bench || $what == all ]]; then
  timeout "${BENCH_TIMEOUT:-300}" .device/bin/tessera bench --backend cuda --repeat 5 --seconds 0.3 --json \
    > "$out/bench_cuda.json" 2> "$out/bench_cuda.txt"
  cat "$out/bench_cuda.txt"
  timeout "${COMPARE_TIMEOUT:-400}" python3 bench/compare_torch_gpu.py --tessera .device/bin/tessera ${COMPARE_ARGS:-} --json "$out/compare_gpu.json" \
    2>&1 | tee "$out/compare_gpu.txt" | tail -n 60
fi
