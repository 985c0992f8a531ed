#!/usr/bin/env bash
# Installs the npm package onnxruntime-node (the CPU build bundled in the package; ONNXRUNTIME_NODE_INSTALL
# =skip leaves out the GPU download) into DIR/node_modules, default build/ort (ignored by git). The ONNX
# export's ctest onnx.export_ort runs exported models with it (tools/onnx_export/run_ort.js).
set -euo pipefail
dir=${1:-$(dirname "$0")/../build/ort}
mkdir -p "$dir"
if [[ -f "$dir/node_modules/onnxruntime-node/package.json" ]]; then
  echo "install_ort: onnxruntime-node present in $dir"
  exit 0
fi
command -v npm >/dev/null || { echo "install_ort: npm is missing (apt-get install npm)"; exit 1; }
[[ -f "$dir/package.json" ]] || echo '{"name": "tessera-ort", "private": true}' >"$dir/package.json"
ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$dir" --no-audit --no-fund onnxruntime-node
