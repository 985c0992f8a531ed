#!/usr/bin/env bash
# ctest onnx.export_checker / onnx.export_ort: `tessera export onnx` writes the MLP and CNN forward
# passes and training steps; `checker` runs onnx.checker on them (python3-onnx), `ort` runs them in
# ONNX Runtime (onnxruntime-node) and compares with Tessera's reference outputs (rtol 1e-4, atol 1e-6).
# A missing python3-onnx / node / onnxruntime-node skips (exit 77) saying so; the ort test first tries
# scripts/install_ort.sh, which needs npm's registry.
#   test_export.sh checker|ort TESSERA_CLI ORT_DIR
set -uo pipefail
mode=$1 cli=$2 ort_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/tessera_onnx_export.XXXXXX")
trap 'rm -rf "$out"' EXIT

if [[ $mode == checker ]] && ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  echo "SKIPPED: python3-onnx is not installed (apt-get install python3-onnx)"
  exit 77
fi
if [[ $mode == ort ]]; then
  if ! command -v node >/dev/null; then
    echo "SKIPPED: node is not installed (apt-get install nodejs npm)"
    exit 77
  fi
  if [[ ! -f $ort_dir/node_modules/onnxruntime-node/package.json ]]; then
    "$here/../../scripts/install_ort.sh" "$ort_dir" >/dev/null 2>&1 || true
  fi
  if ! NODE_PATH=$ort_dir/node_modules node -e "require('onnxruntime-node')" 2>/dev/null; then
    echo "SKIPPED: onnxruntime-node is not installed in $ort_dir and could not be (scripts/install_ort.sh)"
    exit 77
  fi
fi

status=0
for spec in "mlp" "cnn" "mlp --train-step" "cnn --train-step"; do
  # shellcheck disable=SC2086
  "$cli" export onnx --model $spec --batch-size 4 --seed 5 --out "$out" --quiet || { echo "export failed: $spec"; exit 1; }
done
models=("$out/mlp.onnx" "$out/cnn.onnx" "$out/mlp_train_step.onnx" "$out/cnn_train_step.onnx")
if [[ $mode == checker ]]; then
  /usr/bin/python3 "$here/check_model.py" "${models[@]}" || status=1
else
  for m in "${models[@]}"; do
    NODE_PATH=$ort_dir/node_modules node "$here/run_ort.js" "${m%.onnx}.json" --rtol 1e-4 --atol 1e-6 || status=1
  done
fi
exit $status
