#!/usr/bin/env bash
# ctest onnx.export_checker / onnx.export_ort: `tessera export onnx` writes the MLP, CNN and transformer forward
# passes and training steps; `checker` runs onnx.checker on them (python3-onnx), `ort` runs them in
# ONNX Runtime (onnxruntime-node) and compares with Tessera's reference outputs (rtol 1e-4, atol 1e-6).
# A missing python3-onnx / node / onnxruntime-node skips (exit 77) saying so; the ort test first tries
# scripts/install_ort.sh, which needs npm's registry.
# `ort_ops` runs every exportable op case (ToolOnnxOpCases.Dump of test_onnx_export, given as the CLI
# argument) in ONNX Runtime instead; bf16 cases are skipped (onnxruntime-node has no bfloat16 tensors).
#   test_export.sh checker|ort|ort_ops TESSERA_CLI|TEST_ONNX_EXPORT ORT_DIR
set -uo pipefail
mode=$1 cli=$2 ort_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/tessera_onnx_export.XXXXXX")
trap 'rm -rf "$out"' EXIT

if [[ $mode == checker ]] && ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  echo "SKIPPED: python3-onnx is not installed (apt-get install python3-onnx)"
  exit 77
fi
if [[ $mode == ort || $mode == ort_ops ]]; then
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
if [[ $mode == ort_ops ]]; then
  TESSERA_ONNX_DUMP=$out "$cli" --gtest_filter='ToolOnnxOpCases.Dump' >/dev/null || { echo "dumping the op cases failed"; exit 1; }
  passed=0 failed=0 skipped=0
  for m in "$out"/*.json; do
    if [[ $m == *bf16* ]]; then skipped=$((skipped + 1)); continue; fi
    if log=$(NODE_PATH=$ort_dir/node_modules node "$here/run_ort.js" "$m" --rtol 1e-4 --atol 1e-5 2>&1); then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "FAILED $(basename "$m" .json):"
      echo "$log"
    fi
  done
  echo "op cases in ONNX Runtime: $passed passed, $failed failed, $skipped skipped (bf16)"
  [[ $failed == 0 ]]
  exit $?
fi
for spec in "mlp" "cnn" "transformer" "mlp --train-step" "cnn --train-step" "transformer --train-step"; do
  # shellcheck disable=SC2086
  "$cli" export onnx --model $spec --batch-size 4 --seed 5 --out "$out" --quiet || { echo "export failed: $spec"; exit 1; }
done
models=("$out"/*.onnx)
if [[ $mode == checker ]]; then
  /usr/bin/python3 "$here/check_model.py" "${models[@]}" || status=1
else
  for m in "${models[@]}"; do
    NODE_PATH=$ort_dir/node_modules node "$here/run_ort.js" "${m%.onnx}.json" --rtol 1e-4 --atol 1e-6 || status=1
  done
fi
exit $status
