#!/usr/bin/env bash
# The whole test suite from a clean clone: installs dependencies, builds with warnings as errors and
# runs every test, installs the build and builds examples/consumer against it (find_package,
# pkg-config, FetchContent), builds, installs and removes the Debian package, cross-builds the core
# suites for arm64 and runs them under qemu-user, then builds once more with clang, AddressSanitizer +
# UndefinedBehaviorSanitizer and libFuzzer coverage, runs the fuzz targets for 30 s each and the whole
# test suite again. Each stage prints its time.
#   bash scripts/test.sh            # everything
#   TESSERA_SKIP_SANITIZE=1 bash scripts/test.sh   # without the sanitizer pass (faster local loop)
#   TESSERA_SKIP_FUZZ=1 bash scripts/test.sh       # without the fuzz stage
#   TESSERA_ARM64=0 bash scripts/test.sh           # without the arm64 stage (and its packages)
#   TESSERA_UNITY_BUILD=OFF bash scripts/test.sh   # one translation unit per file, as day-to-day builds
set -euo pipefail
cd "$(dirname "$0")/.."
export TESSERA_ARM64=${TESSERA_ARM64:-1}  # install_deps.sh adds the cross toolchain, qemu-user and :arm64 libraries
bash scripts/install_deps.sh

jobs=$(nproc)
start=$(date +%s)
stage_start=$start
stage_times=()
# stage NAME: prints the stage's heading; the previous stage's time goes to the summary.
stage() {
  local now
  now=$(date +%s)
  if [[ -n "${stage_name:-}" ]]; then stage_times+=("$(printf '%5d s  %s' $((now - stage_start)) "$stage_name")"); fi
  stage_name=$1
  stage_start=$now
  [[ -n "$1" ]] && echo "== $1 =="
  return 0
}

stage "release build (-Werror)"
# Unity builds (CMakeLists.txt: TESSERA_UNITY_BUILD) take about a third of the time from scratch.
unity=${TESSERA_UNITY_BUILD:-ON}
export TESSERA_UNITY_BUILD=$unity  # fuzz/build.sh, check_install.sh and ci_arm64.sh build the same way
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_WERROR=ON -DTESSERA_UNITY_BUILD="$unity" >/dev/null
cmake --build build -j "$jobs"
stage "release tests"
(cd build && ctest -j "$jobs" --output-on-failure --timeout 600)

stage "install, and a consumer project built against it (find_package, pkg-config) and with FetchContent"
bash scripts/check_install.sh build

stage "Debian package (cpack -G DEB, dpkg -i, smoke test, dpkg -r)"
bash scripts/check_deb.sh build

# The core suites cross-built for arm64 (no x86 kernel in them) and run under qemu-user.
if [[ "$TESSERA_ARM64" == 1 ]]; then
  stage "arm64: cross build of the core suites, run under qemu-aarch64"
  bash scripts/ci_arm64.sh build-arm64
fi

if [[ "${TESSERA_SKIP_SANITIZE:-0}" != 1 || "${TESSERA_SKIP_FUZZ:-0}" != 1 ]]; then
  # One clang build serves the fuzz targets and the sanitizer run: ASan + UBSan everywhere, with
  # libFuzzer's coverage instrumentation (cmake/fuzz_targets.cmake). fuzz/build.sh configures the same.
  stage "sanitizer build (clang, ASan + UBSan, fuzz targets)"
  bash fuzz/build.sh build-sanitize --with-tests
fi

if [[ "${TESSERA_SKIP_FUZZ:-0}" != 1 ]]; then
  # Every libFuzzer target, 30 s each over its seed corpus and regression files (fuzz/README.md).
  stage "fuzz targets (libFuzzer + ASan + UBSan, 30 s each, $jobs at a time)"
  bash fuzz/run_all.sh 30 build-sanitize
fi

if [[ "${TESSERA_SKIP_SANITIZE:-0}" != 1 ]]; then
  stage "tests under ASan + UBSan"
  # The graph fuzzer's shards run a smaller budget here: every graph is several compiles and runs, and
  # the sanitizers multiply their cost (the release stage ran 4 x 400 graphs). The PyTorch-exported
  # models (ResNet-18 on the reference backend) are left to the release stage: the ONNX reader and
  # importer they go through are the conformance suite's and the fuzz target's under the sanitizers too.
  # So is the conformance suite on Vulkan (lavapipe under the sanitizers would take many minutes; the
  # shaders' host side is the Vulkan suite's, which runs here).
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    TESSERA_FUZZ_GRAPHS=60 ctest -j "$jobs" --output-on-failure --timeout 900 \
    -E '^onnx[.](pytorch_models|conformance_vulkan)$')
fi
stage ""
echo "== stage times =="
printf '%s\n' "${stage_times[@]}"
echo "== all tests passed in $(( $(date +%s) - start )) s =="
