#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/fuzz_*.cpp) with ASan + UBSan into build-fuzz/ (or $1). The
# library is compiled once with clang into one archive that every target links against (each link
# takes only the objects its reader needs); ccache, when installed, makes rebuilds cheap. Needs clang
# and libclang-rt-dev (scripts/install_deps.sh installs both). See fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-fuzz}
mkdir -p "$out/obj"

CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(ccache); fi
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -I. -DTESSERA_VERSION=\"fuzz\"
       -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
jobs=$(nproc)

# Compile every library source once, at most $jobs at a time. The CUDA backend stays out: the readers
# do not need it, and without TESSERA_HAVE_CUDA the registry lists it as not compiled in.
mapfile -t SOURCES < <(find tessera -name '*.cpp' -not -path 'tessera/backends/cuda/*' | sort)
objs=()
pids=()
for src in "${SOURCES[@]}"; do
  obj="$out/obj/$(echo "$src" | tr / _).o"
  objs+=("$obj")
  "${LAUNCHER[@]}" "$CXX" "${FLAGS[@]}" -c "$src" -o "$obj" &
  pids+=($!)
  if (( ${#pids[@]} >= jobs )); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
rm -f "$out/libtessera_fuzz.a"
ar rcs "$out/libtessera_fuzz.a" "${objs[@]}"

for harness in fuzz/fuzz_*.cpp; do
  target=$(basename "$harness" .cpp)
  "${LAUNCHER[@]}" "$CXX" "${FLAGS[@]}" -c "$harness" -o "$out/obj/$target.o"
  # --undefined: the op definitions are reached from the IR through a weak reference, which pulls
  # nothing out of the archive (as for the tessera_ops target, cmake/layers.cmake).
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer -Wl,--undefined=tessera_register_all_ops "$out/obj/$target.o" \
    "$out/libtessera_fuzz.a" -lfmt -lz -lpng -lpthread -o "$out/$target"
  echo "built $out/$target"
done
