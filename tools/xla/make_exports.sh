#!/usr/bin/env bash
# Writes the bundles of the XLA proof with the tessera CLI (run here, on any machine with a build):
#   tools/xla/make_exports.sh [TESSERA_BINARY] [OUT_DIR] [--ops TEST_STABLEHLO_BINARY]
# OUT_DIR/programs gets mlp, cnn, mlp_train_step and transformer (HIGHEST precision, with Tessera's
# reference outputs); with --ops, OUT_DIR/ops also gets every op case (for tools/xla/check_ops.py).
set -euo pipefail
tessera=${1:-build/tessera}
out=${2:-out/xla_proof}
ops_binary=""
if [[ "${3:-}" == "--ops" ]]; then ops_binary=${4:?"--ops needs the test_stablehlo binary"}; fi
[[ -x "$tessera" ]] || { echo "make_exports: no tessera binary at $tessera" >&2; exit 1; }
mkdir -p "$out/programs"
run() { echo "+ $*" >&2; "$@"; }
run "$tessera" export stablehlo --model mlp --batch-size 128 --precision highest --out "$out/programs"
run "$tessera" export stablehlo --model cnn --batch-size 64 --precision highest --out "$out/programs"
run "$tessera" export stablehlo --model mlp --batch-size 128 --train-step --precision highest --out "$out/programs"
run "$tessera" export stablehlo --model transformer --batch-size 8 --precision highest --out "$out/programs"
if [[ -n "$ops_binary" ]]; then
  mkdir -p "$out/ops"
  TESSERA_STABLEHLO_DUMP="$out/ops" run "$ops_binary" --gtest_filter='*DumpBundlesForXla*' >/dev/null
fi
du -sh "$out" >&2
