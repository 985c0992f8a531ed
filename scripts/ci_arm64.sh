#!/usr/bin/env bash
# The arm64 stage: cross-builds the core test suites with Debian's aarch64 toolchain and multiarch
# libraries (cmake/toolchains/aarch64-linux-gnu.cmake), so the CPU backend is built without any x86
# kernel, and runs them under qemu-user. Only the suites' targets are built (the library's layers
# and 15 test programs), and each program runs once, whole, two at a time: one qemu start per suite,
# not one per test as ctest would.
#
# The CPU backend compiles its generated kernels with a C compiler at run time. Here that is the cross
# compiler, aarch64-linux-gnu-gcc (TESSERA_CC): it runs natively (qemu-user hands the exec of an x86
# program to the host), so the generated kernels are real arm64 code, compiled at native speed and run
# under emulation like the rest. An arm64 gcc under qemu would be slower for no gain in honesty.
#   bash scripts/ci_arm64.sh [BUILD_DIR]          (default build-arm64; packages: TESSERA_ARM64=1 scripts/install_deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-arm64}
suites=(core ir ops_conv ops_elementwise ops_index ops_linalg ops_nn ops_random ops_reduce ops_shape
        autodiff backends cpu_backend kernels io)
for tool in aarch64-linux-gnu-g++ aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" > /dev/null || { echo "ci_arm64: $tool not found (TESSERA_ARM64=1 bash scripts/install_deps.sh)" >&2; exit 1; }
done

t0=$(date +%s)
# libonnx for arm64: its package conflicts with the amd64 one over /usr/lib/libonnxifi.so (a multiarch
# slip in Debian's libonnxifi), so it is downloaded and unpacked into the build folder, not installed.
onnx_root=$PWD/$build/arm64-onnx
if [[ ! -f $onnx_root/usr/lib/aarch64-linux-gnu/cmake/ONNX/ONNXConfig.cmake ]]; then
  mkdir -p "$onnx_root/debs"
  (cd "$onnx_root/debs" && apt-get download libonnx1:arm64 libonnx-dev:arm64 libonnxifi:arm64 > /dev/null)
  for deb in "$onnx_root"/debs/*.deb; do dpkg -x "$deb" "$onnx_root"; done
fi
# No CUDA (the toolkit here is x86's) and no layer link check (the native build runs it). -O1: the
# stage proves that the portable code builds and computes right on arm64, and -O1 compiles the library
# much faster than -O3 (the stage has 15 minutes on CI); the emulated tests run fast enough either way.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
  -DTESSERA_WERROR=ON -DTESSERA_CUDA=OFF -DTESSERA_VULKAN=OFF -DTESSERA_UNITY_BUILD="${TESSERA_UNITY_BUILD:-ON}" \
  -DTESSERA_LAYER_CHECK=OFF -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DONNX_DIR="$onnx_root/usr/lib/aarch64-linux-gnu/cmake/ONNX" > /dev/null
cmake --build "$build" -j "$(nproc)" --target "${suites[@]/#/test_}"
t1=$(date +%s)
machine=$(readelf -h "$build/test_core" | sed -n 's/^ *Machine: *//p')
[[ $machine == AArch64 ]] || { echo "ci_arm64: $build/test_core is built for '$machine', not AArch64" >&2; exit 1; }

export TESSERA_CC=aarch64-linux-gnu-gcc TESSERA_VERIFY_PROGRAM=1
TESSERA_CACHE_DIR=$(mktemp -d /tmp/tessera-arm64-kernels.XXXXXX)  # compile every kernel here, none reused
export TESSERA_CACHE_DIR
trap 'rm -rf "$TESSERA_CACHE_DIR"' EXIT
export build
run_suite() {
  local log="$build/test_$1.arm64.log"
  if qemu-aarch64 "$build/test_$1" --gtest_filter='-Tool*.*' > "$log" 2>&1; then
    echo "arm64 $1: $(grep -E '^\[  PASSED  \]' "$log")"
  else
    tail -n 60 "$log"
    echo "arm64 $1: FAILED (whole output in $log)"
    return 255  # stops xargs
  fi
}
export -f run_suite
printf '%s\n' "${suites[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_suite {}'
t2=$(date +%s)
# The generated kernels really ran: the CPU backend compiled some and found its compiler.
kernels=$(find "$TESSERA_CACHE_DIR" -name '*.so' | wc -l)
((kernels > 0)) || { echo "ci_arm64: no generated kernel was compiled with $TESSERA_CC" >&2; exit 1; }
echo "arm64: ${#suites[@]} suites passed under qemu-aarch64 ($kernels generated kernels compiled by $TESSERA_CC);" \
     "build $((t1 - t0)) s, tests $((t2 - t1)) s"
