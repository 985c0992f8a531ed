#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/fuzz_*.cpp -> fuzz_<reader>) with clang, ASan and UBSan into
# build-fuzz/ (or $1): a CMake build with TESSERA_FUZZ=ON (cmake/fuzz_targets.cmake), configured exactly
# as CI's sanitizer stage, so the two share ccache entries. With --with-tests it builds everything
# (scripts/test.sh then runs the test suite from the same build). Needs clang and libclang-rt-dev
# (scripts/install_deps.sh installs both). The Vulkan backend is left out for now: its suite runs on
# lavapipe in the release stage and has not yet been brought up under the sanitizers. See fuzz/README.md.
#   bash fuzz/build.sh [BUILD_DIR] [--with-tests]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-fuzz}
everything=0
[[ "${2:-}" == --with-tests ]] && everything=1

CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
cmake -S . -B "$out" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DTESSERA_WERROR=ON -DTESSERA_SANITIZE=address,undefined -DTESSERA_FUZZ=ON -DTESSERA_VULKAN=OFF \
  -DTESSERA_UNITY_BUILD="${TESSERA_UNITY_BUILD:-ON}" >/dev/null
if ((everything)); then
  cmake --build "$out" -j "$(nproc)"
else
  mapfile -t targets < <(for h in fuzz/fuzz_*.cpp; do basename "$h" .cpp; done)
  cmake --build "$out" -j "$(nproc)" --target "${targets[@]}"
fi
for h in fuzz/fuzz_*.cpp; do echo "built $out/$(basename "$h" .cpp)"; done
