#!/usr/bin/env bash
# The whole proof on the GPU machine, in one go (numpy + jax only):
#   tools/xla/device_proof.sh RUNNER BUNDLE_DIR [RESULT_DIR]
# RUNNER is shared/tools/stablehlo_run.py (copied next to the bundles, or anywhere); BUNDLE_DIR is what
# tools/xla/make_exports.sh wrote (programs/ and optionally ops/). Results (tables, JSON, logs) go to
# RESULT_DIR (default: $OUT when set, else ./xla_results). Never stops early: each step reports and
# the next one runs.
set -uo pipefail
runner=${1:?"usage: device_proof.sh RUNNER BUNDLE_DIR [RESULT_DIR]"}
bundles=${2:?"usage: device_proof.sh RUNNER BUNDLE_DIR [RESULT_DIR]"}
results=${3:-${OUT:-xla_results}}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
export PYTHONUNBUFFERED=1
{
  echo "## environment"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
  python3 -c 'import jax, jaxlib, numpy; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, "numpy", numpy.__version__); print(jax.devices())' 2>&1 | tail -3
} | tee "$results/environment.txt"
status=0
echo "## programs (tools/xla/run_proof.py)"
python3 "$here/run_proof.py" --runner "$runner" --dir "$bundles/programs" --platforms gpu,cpu --repeat 50 \
  --json "$results/proof.json" 2>"$results/proof.log" | tee "$results/proof.md" || status=1
tail -n 20 "$results/proof.log"
if [[ -d "$bundles/ops" ]]; then
  echo "## op cases (tools/xla/check_ops.py)"
  timeout 400 python3 "$here/check_ops.py" --dir "$bundles/ops" --platforms cpu,gpu --json "$results/ops.json" 2>&1 \
    | tee "$results/ops.md" || status=1
fi
exit $status
