#!/usr/bin/env bash
# Installs every Debian package Tessera's build, tests and tools need. Idempotent: a package already
# present is left alone, and apt is only consulted when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev
  zlib1g-dev libpng-dev libopenblas-dev libpcre2-dev
  clang libclang-rt-14-dev
  glslang-tools
  # The Vulkan backend (cmake/vulkan.cmake): headers, shaderc with the glslang and SPIRV-Tools archives
  # it links statically, and Mesa's lavapipe, the CPU Vulkan driver its tests run on in CI.
  libvulkan-dev libshaderc-dev glslang-dev spirv-tools mesa-vulkan-drivers vulkan-tools
  doxygen
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx
  # PyTorch exports the real ONNX models the import is checked against (ctest onnx.pytorch_models) and is
  # the CPU peer of the benchmarks.
  python3-torch python3-torchvision
  # ONNX Runtime for the export's test (onnx.export_ort): node runs the npm package (install_ort.sh below;
  # npm comes with nodejs here, else Debian's npm package).
  nodejs
  dataset-fashion-mnist
)
# The arm64 stage (scripts/ci_arm64.sh, opt-in with TESSERA_ARM64=1): Debian's cross toolchain,
# qemu-user, and the libraries the build links, for arm64 (multiarch: dpkg --add-architecture arm64).
if [[ "${TESSERA_ARM64:-0}" == 1 ]]; then
  PACKAGES+=(crossbuild-essential-arm64 qemu-user
    libfmt-dev:arm64 libgtest-dev:arm64 zlib1g-dev:arm64 libpng-dev:arm64 libpcre2-dev:arm64
    libprotobuf-dev:arm64)
  # libonnx-dev:arm64 cannot sit beside the amd64 one (both packages of libonnxifi write /usr/lib/libonnxifi.so):
  # scripts/ci_arm64.sh unpacks the arm64 libonnx into its build folder instead.
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  if [[ "${TESSERA_ARM64:-0}" == 1 ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64  # the :arm64 packages above; Debian's sources serve arm64 as they are
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install_deps: all ${#PACKAGES[@]} packages present"
fi

# onnxruntime-node into build/ort (npm; the test tries again and skips, saying so, without it).
"$(dirname "$0")/install_ort.sh" || echo "install_deps: onnxruntime-node not installed (onnx.export_ort will skip)"
