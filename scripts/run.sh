#!/usr/bin/env bash
# The main job from a clean clone: installs dependencies, builds Tessera and runs `tessera train` on its
# built-in default (the MLP on Fashion-MNIST, one epoch), writing runs/mlp/{checkpoint.safetensors,
# metrics.csv,curves.png}. Extra arguments go to `tessera train` (e.g. --model cnn --epochs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
# A unity build from scratch takes about a third of the time (TESSERA_UNITY_BUILD=OFF for day-to-day work).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSERA_UNITY_BUILD="${TESSERA_UNITY_BUILD:-ON}" >/dev/null
cmake --build build -j "$(nproc)" --target tessera_cli
./build/tessera train "$@"
