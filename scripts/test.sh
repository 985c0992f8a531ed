#!/usr/bin/env bash
# The whole test suite from a clean clone: installs dependencies, builds with warnings as errors and
# runs every test, installs the build and builds examples/consumer against it, then builds once more with clang, AddressSanitizer + UndefinedBehaviorSanitizer and
# libFuzzer coverage, runs each fuzz target for 30 s and the whole test suite again.
#   bash scripts/test.sh            # everything
#   TESSERA_SKIP_SANITIZE=1 bash scripts/test.sh   # without the sanitizer pass (faster local loop)
#   TESSERA_SKIP_FUZZ=1 bash scripts/test.sh       # without the fuzz stage
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh

jobs=$(nproc)
start=$(date +%s)

echo "== release build (-Werror) =="
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest -j "$jobs" --output-on-failure --timeout 600)

echo "== install, and a consumer project built against it (find_package and pkg-config) =="
bash scripts/check_install.sh build

if [[ "${TESSERA_SKIP_SANITIZE:-0}" != 1 || "${TESSERA_SKIP_FUZZ:-0}" != 1 ]]; then
  # One clang build serves the fuzz targets and the sanitizer run: ASan + UBSan everywhere, with
  # libFuzzer's coverage instrumentation (cmake/fuzz_targets.cmake). fuzz/build.sh configures the same.
  echo "== sanitizer build (clang, ASan + UBSan, fuzz targets) =="
  bash fuzz/build.sh build-sanitize --with-tests
fi

if [[ "${TESSERA_SKIP_FUZZ:-0}" != 1 ]]; then
  # Every libFuzzer target, 30 s each over its seed corpus and regression files (fuzz/README.md).
  echo "== fuzz targets (libFuzzer + ASan + UBSan, 30 s each) =="
  bash fuzz/run_all.sh 30 build-sanitize
fi

if [[ "${TESSERA_SKIP_SANITIZE:-0}" != 1 ]]; then
  echo "== tests under ASan + UBSan =="
  # The graph fuzzer's shards run a smaller budget here: every graph is several compiles and runs, and
  # the sanitizers multiply their cost (the release stage ran 4 x 400 graphs).
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    TESSERA_FUZZ_GRAPHS=60 ctest -j "$jobs" --output-on-failure --timeout 900)
fi
echo "== all tests passed in $(( $(date +%s) - start )) s =="
