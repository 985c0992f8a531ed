#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz_safetensors, fuzz_npy, fuzz_idx, fuzz_gguf) with ASan + UBSan into
# build-fuzz/ (or $1), compiling just the library sources the readers need. Needs clang and
# libclang-rt-dev (scripts/install_deps.sh installs both). See fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-fuzz}
mkdir -p "$out/obj"

CXX=${CXX:-$(command -v clang++ || command -v clang++-14)}
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -I. -DTESSERA_VERSION=\"fuzz\"
       -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
LIB_SOURCES=(tessera/core/array.cpp tessera/core/dtype.cpp tessera/core/half.cpp tessera/core/shape.cpp
             tessera/io/atomic_file.cpp tessera/io/safetensors.cpp tessera/io/npy.cpp tessera/data/idx.cpp
             tessera/io/gguf/gguf_value.cpp tessera/io/gguf/gguf_reader.cpp tessera/io/gguf/gguf_writer.cpp
             tessera/quant/ggml_type.cpp tessera/quant/dequantize.cpp tessera/quant/quantize.cpp
             tessera/quant/quantize_legacy.cpp tessera/quant/quantize_kquants.cpp)

# Compile the library sources once (in parallel), then link each target against them.
pids=()
objs=()
for src in "${LIB_SOURCES[@]}"; do
  obj="$out/obj/$(echo "$src" | tr / _).o"
  objs+=("$obj")
  "$CXX" "${FLAGS[@]}" -c "$src" -o "$obj" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

for target in safetensors npy idx gguf; do
  "$CXX" "${FLAGS[@]}" -fsanitize=fuzzer "fuzz/fuzz_$target.cpp" "${objs[@]}" -lfmt -lz -o "$out/fuzz_$target"
  echo "built $out/fuzz_$target"
done

# The IR text parser needs the op registry, i.e. the whole library (without the PNG/zlib readers).
mapfile -t ALL_SOURCES < <(find tessera -name '*.cpp' | sort)
all_objs=()
pids=()
for src in "${ALL_SOURCES[@]}"; do
  obj="$out/obj/all_$(echo "$src" | tr / _).o"
  all_objs+=("$obj")
  "$CXX" "${FLAGS[@]}" -c "$src" -o "$obj" &
  pids+=($!)
  if (( ${#pids[@]} >= $(nproc) )); then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$CXX" "${FLAGS[@]}" -fsanitize=fuzzer fuzz/fuzz_ir_text.cpp "${all_objs[@]}" -lfmt -lz -lpng -o "$out/fuzz_ir_text"
echo "built $out/fuzz_ir_text"
