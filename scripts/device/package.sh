#!/usr/bin/env bash
# Builds, here, what the GPU machine runs (it has the CUDA toolkit and a driver but not this project's
# Debian libraries) and stages it in .device/ (ignored by git; the device tool carries it):
#   bin: test_cuda, tessera, fuzz_graphs, test_vulkan        lib: the shared libraries they need beyond the C/C++
#   runtime and CUDA's own (taken from /usr/local/cuda there)
# packed as .device/bundle.tar.xz (the device tool carries at most 64 MiB; OpenBLAS alone is 36 MB),
# plus Fashion-MNIST's four files in .device/fashion-mnist when WITH_DATA=1 (for the training peer run).
# Usage: [WITH_DATA=1] [WITH_LLM=1] bash scripts/device/package.sh [BUILD_DIR]   then scripts/device/cuda_suite.sh there
# (it unpacks the bundle).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
programs=(test_cuda tessera fuzz_graphs)
targets=(test_cuda tessera_cli fuzz_graphs)
# The Vulkan suite too, where the Vulkan backend is built (it runs on the H200's NVIDIA Vulkan driver).
if [[ $(ninja -C "$build" -t targets all 2> /dev/null) == *$'\n'test_vulkan:* ]]; then
  programs+=(test_vulkan)
  targets+=(test_vulkan)
fi
cmake --build "$build" -j2 --target "${targets[@]}"
rm -rf .device
mkdir -p .device/stage/bin .device/stage/lib
cd .device/stage
for p in "${programs[@]}"; do cp "../../$build/$p" bin/; done
strip bin/*
ldd bin/* | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$lib" in
    */libc.so* | */libm.so* | */libstdc++.so* | */libgcc_s.so* | */ld-linux* | */libpthread.so* | */libdl.so* | \
      */librt.so* | /usr/local/cuda*) ;;
    *) cp -L "$lib" lib/ ;;
  esac
done
strip --strip-unneeded lib/* 2>/dev/null || true
tar -cJf ../bundle.tar.xz bin lib
cd ../..
rm -rf .device/stage
if [[ "${WITH_DATA:-0}" == 1 ]]; then
  mkdir -p .device/fashion-mnist
  cp /usr/share/datasets/fashion-mnist/*.gz .device/fashion-mnist/
fi
# Two of llama.cpp's tiny test models for the llm stage (CUDA greedy tokens against the CPU's).
if [[ "${WITH_LLM:-0}" == 1 ]]; then
  mkdir -p .device/gguf
  cp ../shared/testdata/gguf/tiny-llama-q8_0.gguf ../shared/testdata/gguf/tiny-gpt2-q8_0.gguf .device/gguf/
fi
du -sh .device/*
