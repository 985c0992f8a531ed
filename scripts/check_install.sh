#!/usr/bin/env bash
# Installs a built tree into a fresh prefix, then builds and runs examples/consumer against it twice:
# as a CMake project (find_package(Tessera), Tessera::tessera) and as one compiler command with
# pkg-config (tessera.pc); and runs the installed CLI. Then builds the same program with Tessera taken
# from this source tree through FetchContent (examples/consumer_fetchcontent).
#   bash scripts/check_install.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prefix=$(mktemp -d /tmp/tessera-install.XXXXXX)
work=$(mktemp -d /tmp/tessera-consumer.XXXXXX)
# FetchContent builds Tessera in <FETCHCONTENT_BASE_DIR>/tessera-build. With the base at the repository
# root that folder is as deep as build/, so its compile commands match build/'s word for word also
# where ccache's base_dir makes paths relative, and the library's objects come from the cache.
fetch_consumer=$PWD/build-fetchcontent
fetch_tessera=$PWD/tessera-build
trap 'rm -rf "$prefix" "$work" "$fetch_consumer" "$fetch_tessera"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
echo "installed into $prefix: $(find "$prefix" -name '*.a' | wc -l) libraries, $(find "$prefix" -name '*.h' | wc -l) headers"
cmake -S examples/consumer -B "$work/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$work/cmake" > /dev/null
echo "find_package(Tessera): $("$work/cmake/consumer")"
pc_dir=$(dirname "$(find "$prefix" -name tessera.pc)")
# shellcheck disable=SC2046  # pkg-config's flags are words
c++ -std=c++20 -O1 examples/consumer/main.cpp -o "$work/consumer_pc" $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs tessera)
echo "pkg-config tessera: $("$work/consumer_pc")"
echo "installed CLI: $("$prefix/bin/tessera" --version)"

t0=$(date +%s)
cmake -S examples/consumer_fetchcontent -B "$fetch_consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFETCHCONTENT_SOURCE_DIR_TESSERA="$PWD" -DFETCHCONTENT_BASE_DIR="$PWD" -DTESSERA_WERROR=ON \
  -DTESSERA_UNITY_BUILD="${TESSERA_UNITY_BUILD:-OFF}" > /dev/null
# As a subproject Tessera adds no tests, examples or benchmarks of its own.
extra=$(ninja -C "$fetch_consumer" -t targets all | grep -oE '^(test_|example_|bench_)[A-Za-z0-9_]+' | sort -u | head -5 || true)
if [[ -n "$extra" ]]; then
  echo "check_install: Tessera as a subproject defines its own programs: $extra" >&2
  exit 1
fi
cmake --build "$fetch_consumer" --target consumer > /dev/null
echo "FetchContent (built in $(( $(date +%s) - t0 )) s): $("$fetch_consumer/consumer")"
