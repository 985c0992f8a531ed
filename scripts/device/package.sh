#!/usr/bin/env bash
# Builds, here, what the GPU machine runs (it has the CUDA toolkit and a driver but not this project's
# Debian libraries) and stages it in .device/ (ignored by git; the device tool carries it):
#   .device/bin: test_cuda, tessera, fuzz_graphs        .device/lib: the shared libraries they need beyond the
#   C/C++ runtime and CUDA's own (taken from /usr/local/cuda there).
# Usage: bash scripts/device/package.sh [BUILD_DIR]   then run scripts/device/cuda_suite.sh there.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
cmake --build "$build" -j2 --target test_cuda tessera_cli fuzz_graphs
rm -rf .device
mkdir -p .device/bin .device/lib
cp "$build/test_cuda" "$build/tessera" "$build/fuzz_graphs" .device/bin/
strip .device/bin/*
ldd .device/bin/* | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$lib" in
    */libc.so* | */libm.so* | */libstdc++.so* | */libgcc_s.so* | */ld-linux* | */libpthread.so* | */libdl.so* | \
      */librt.so* | /usr/local/cuda*) ;;
    *) cp -L "$lib" .device/lib/ ;;
  esac
done
strip --strip-unneeded .device/lib/* 2>/dev/null || true
du -sh .device/bin .device/lib
