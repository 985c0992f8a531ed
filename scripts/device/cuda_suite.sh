#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after scripts/device/package.sh staged .device/:
# the machine's facts, `tessera devices`, the CUDA test suite (device layer, executables, and the whole
# differential suite with the CUDA backend under test), the GPU benchmarks and the peers
# (bench/compare_torch_gpu.py). Logs go to $OUT/logs.tar.gz (the device tool's result folder) or out_device/.
# Usage there: bash scripts/device/cuda_suite.sh [all | a comma list of tests,vulkan,fuzz,profile,train,bench,llm,llmbench,vkllm,probe,matvec,matvecbench,prefetch,llmab,decodeprofile,convshapes,splitk,epilogues,ab,onnx]
#   [GTEST_FILTER]  (LLM_ARGS: arguments of bench/compare_llm_gpu.py for llmbench)
# (train needs the data of WITH_DATA=1 package.sh; profile times every step of the training workloads)
# (TEST_TIMEOUT, BENCH_TIMEOUT, COMPARE_TIMEOUT in seconds, COMPARE_ARGS, BENCH_WORKLOADS (names) and
# SKIP_COMPARE=1 (no peers) adjust a run to the call's limit; ab times AB_WORKLOADS under each of the
# AB_SETTINGS, e.g. "TESSERA_CUDA_SIMT_GEMM=0 -" where "-" is the default (a comma joins several
# variables into one setting: A=1,B=2), in turn, AB_ROUNDS times;
# VULKAN_FILTER, VULKAN_WORKLOADS and VULKAN_TIMEOUT narrow the vulkan stage)
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
want() { [[ $what == all || ,$what, == *,$1,* ]]; }  # stages as a comma list: tests,profile
filter=${2:-*}
# Logs are written to a scratch folder and packed into one $OUT/logs.tar.gz at the end (the device
# tool brings back at most 8 files).
out=$(mktemp -d /tmp/cuda_suite.XXXXXX)
result=${OUT:-out_device}
mkdir -p "$result"
trap 'tar -czf "$result/logs.tar.gz" -C "$out" . 2>/dev/null' EXIT
if [[ -f .device/bundle.tar.xz ]]; then tar -xJf .device/bundle.tar.xz -C .device; fi
# Fashion-MNIST, when package.sh carried it (the resume test and the training peer run read it).
if [[ -d .device/fashion-mnist ]]; then export TESSERA_FASHION_MNIST_DIR=$PWD/.device/fashion-mnist; fi
export LD_LIBRARY_PATH="$PWD/.device/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export TESSERA_CACHE_DIR=${TESSERA_CACHE_DIR:-/tmp/tessera-cache}
export PYTHONUNBUFFERED=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  command -v cc || echo "no C compiler: the CPU backend runs without generated kernels"
  .device/bin/tessera devices
} 2>&1 | tee "$out/machine.txt"
if want tests; then
  start=$(date +%s)
  timeout "${TEST_TIMEOUT:-420}" .device/bin/test_cuda --gtest_brief=1 --gtest_filter="$filter" > "$out/test_cuda.log" 2>&1
  echo "test_cuda exit $? after $(($(date +%s) - start)) s" | tee -a "$out/test_cuda.log"
  tail -n 60 "$out/test_cuda.log"
fi
# The Vulkan loader from the carried .gl/ (the device tool's README: the vulkan stages need `carry: [.gl]`)
# and the NVIDIA driver's ICD.
vulkan_loader() {
  if ! ldconfig -p | grep -q libvulkan.so.1 && [[ -d .gl ]]; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  if [[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json && -z ${VK_DRIVER_FILES:-} ]]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  fi
}
if want vulkan && [[ -x .device/bin/test_vulkan ]]; then
  # The Vulkan backend on the NVIDIA driver: its suite (with the differential suite of tests/cpu_backend),
  # then the training steps and products on Vulkan beside CUDA.
  vulkan_loader
  .device/bin/tessera devices 2>&1 | grep -iA3 vulkan | head -n 8
  start=$(date +%s)
  timeout "${VULKAN_TIMEOUT:-240}" .device/bin/test_vulkan --gtest_brief=1 --gtest_filter="${VULKAN_FILTER:-*}" \
    > "$out/test_vulkan.log" 2>&1
  echo "test_vulkan exit $? after $(($(date +%s) - start)) s" | tee -a "$out/test_vulkan.log"
  tail -n 30 "$out/test_vulkan.log"
  for dev in vulkan cuda; do
    timeout "${VULKAN_BENCH_TIMEOUT:-150}" .device/bin/tessera bench --backend "$dev" --repeat 5 --seconds 0.3 --json \
      ${VULKAN_WORKLOADS:-mlp_train_b64 mlp_train_b4096_tf32 cnn_train_b256 gpu_f32_gemm_4096 gpu_f16_gemm_4096 gpu_fused_axpb_256m} > "$out/bench_$dev.json" 2> "$out/bench_$dev.txt"
    echo "bench on $dev exit $?"
    cat "$out/bench_$dev.txt"
  done
fi
if want fuzz; then
  # The graph fuzzer with the CUDA backend under test, for a fixed time; findings land in $out/fuzz.
  timeout $((${FUZZ_MINUTES:-3} * 60 + 60)) .device/bin/fuzz_graphs --backend cuda --minutes "${FUZZ_MINUTES:-3}" \
    --seed "${FUZZ_SEED:-20261201}" --out "$out/fuzz" > "$out/fuzz_cuda.log" 2>&1
  echo "fuzz_graphs exit $?"
  tr '\r' '\n' < "$out/fuzz_cuda.log" | tail -n 5
fi
if want profile; then
  # Where each training step's time goes (graphs off, one event pair per step).
  # PROFILE_SETTINGS: environment settings to profile under too ("-" is the default).
  for setting in ${PROFILE_SETTINGS:--}; do
    [[ $setting == - ]] && setting=TESSERA_AB_DEFAULT=1
    for w in ${PROFILE_WORKLOADS:-mlp_train_b64 mlp_train_b4096_tf32 cnn_train_b256}; do
      env "$setting" TESSERA_CUDA_PROFILE=1 timeout 120 .device/bin/tessera bench --backend cuda --repeat 1 \
        --seconds 0.2 "$w" > /dev/null 2> "$out/profile_${w}_${setting%%=*}.txt"
    done
  done
  head -n 25 "$out"/profile_*.txt
fi
if want train && [[ -d .device/fashion-mnist ]]; then
  timeout "${TRAIN_TIMEOUT:-300}" python3 bench/compare_torch_gpu.py --tessera .device/bin/tessera \
    --train-fashion-mnist .device/fashion-mnist --epochs 3 --json "$out/train_fashion_mnist.json" \
    2>&1 | tee "$out/train_fashion_mnist.txt" | tail -n 20
fi
if want llm && [[ -d .device/gguf ]]; then
  # Greedy decoding of the tiny models on CUDA must pick the CPU's tokens (the whole decode graph runs
  # on the GPU: block products, the cache update in place, attention over the cache).
  for m in .device/gguf/*.gguf; do
    for dev in cpu cuda; do
      timeout 120 .device/bin/tessera generate -m "$m" -p "Once upon a time" -n 24 --temp 0 --ctx 64 --backend "$dev" \
        --json > "$out/llm_$(basename "$m" .gguf)_$dev.json" 2> "$out/llm_$(basename "$m" .gguf)_$dev.err"
      echo "$(basename "$m") $dev exit $?: $(tail -n 1 "$out/llm_$(basename "$m" .gguf)_$dev.json" | head -c 300)"
    done
  done
fi
if want llmbench; then
  # LLM inference against transformers on PyTorch (bench/compare_llm_gpu.py: random-weight models of the
  # Llama-3.2-1B and GPT-2-small shapes made here with init-model), then where a bf16 decode step's
  # time goes (graphs off, one event pair per step).
  models=/tmp/tessera-llm-models
  timeout "${LLM_TIMEOUT:-480}" python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera --models "$models" \
    ${LLM_ARGS:-} --json "$out/compare_llm_gpu.json" 2>&1 | tee "$out/compare_llm_gpu.txt" | tail -n 30
  TESSERA_CUDA_PROFILE=1 timeout 120 .device/bin/tessera bench llm -m "$models/llama1b-bf16.gguf" --device cuda \
    -p 16 -n 16 -r 1 --cache-type f16 > /dev/null 2> "$out/profile_llm_decode.txt"
  awk '/llama_decode/{c++} c==2' "$out/profile_llm_decode.txt" | head -n 40
  TESSERA_CUDA_PROFILE=1 timeout 120 .device/bin/tessera bench llm -m "$models/llama1b-bf16.gguf" --device cuda \
    -p 2048 -n 1 -r 1 --cache-type f16 > /dev/null 2> "$out/profile_llm_prefill.txt"
  head -n 30 "$out/profile_llm_prefill.txt"
  TESSERA_CUDA_PROFILE=1 timeout 120 .device/bin/tessera bench llm -m "$models/gpt2s-bf16.gguf" --device cuda \
    -p 16 -n 16 -r 1 --cache-type f16 > /dev/null 2> "$out/profile_gpt2_decode.txt"
  awk '/gpt2_decode/{c++} c==2' "$out/profile_gpt2_decode.txt" | head -n 40
fi
if want vkllm; then
  # LLM inference on the Vulkan backend: greedy tokens of the tiny models on Vulkan against the CPU's
  # (when .device/gguf was carried), the Llama-1B-shape decode and 2,048-token prefill rates of
  # bench/compare_llm_gpu.py with --device vulkan (no PyTorch peers: llmbench measures them), and where a
  # Q4_0 decode step's time goes (TESSERA_VULKAN_PROFILE=1 times every dispatch).
  vulkan_loader
  if [[ -d .device/gguf ]]; then
    for m in .device/gguf/*.gguf; do
      for dev in cpu vulkan; do
        timeout 120 .device/bin/tessera generate -m "$m" -p "Once upon a time" -n 24 --temp 0 --ctx 64 --backend "$dev" \
          --json > "$out/vkllm_$(basename "$m" .gguf)_$dev.json" 2> "$out/vkllm_$(basename "$m" .gguf)_$dev.err"
        echo "$(basename "$m") $dev exit $?: $(tail -n 1 "$out/vkllm_$(basename "$m" .gguf)_$dev.json" | head -c 300)"
      done
    done
  fi
  models=/tmp/tessera-llm-models
  timeout "${LLM_TIMEOUT:-480}" python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera --models "$models" \
    --device vulkan --skip-torch ${LLM_ARGS:-} --json "$out/compare_llm_vulkan.json" 2>&1 |
    tee "$out/compare_llm_vulkan.txt" | tail -n 30
  TESSERA_VULKAN_PROFILE=1 timeout 120 .device/bin/tessera bench llm -m "$models/llama1b-q4_0.gguf" --device vulkan \
    -p 16 -n 4 -r 1 --cache-type f16 > /dev/null 2> "$out/profile_vulkan_llm_decode.txt"
  tail -n 60 "$out/profile_vulkan_llm_decode.txt"
fi
if want probe; then
  # Where a cached compile of the MLP step spends its time (TESSERA_PROFILE_COMPILE=1), the generated
  # CUDA of a 2,048-token prefill (TESSERA_DUMP_KERNELS=1), and prefill rates under PROBE_SETTINGS
  # ("-" is the default; e.g. "TESSERA_CUDA_FLASH_HEADS=1 -").
  TESSERA_PROFILE_COMPILE=1 timeout 120 .device/bin/tessera bench --backend cuda --repeat 3 \
    gpu_compile_mlp_step_cached 2>&1 | tail -n 8 | tee "$out/compile_profile.txt"
  models=/tmp/tessera-llm-models
  python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera --models "$models" --types bf16 --make-models-only > /dev/null
  TESSERA_DUMP_KERNELS=1 timeout 120 .device/bin/tessera bench llm -m "$models/llama1b-bf16.gguf" --device cuda \
    -p 2048 -n 1 -r 1 --cache-type f16 > /dev/null 2> "$out/prefill_kernels.cu"
  for round in 1 2; do
    for setting in ${PROBE_SETTINGS:--}; do
      [[ $setting == - ]] && setting=TESSERA_AB_DEFAULT=1
      echo "round $round $setting: $(env "$setting" timeout 120 .device/bin/tessera bench llm -m "$models/llama1b-bf16.gguf" \
        --device cuda -p 2048 -n 1 -r 3 --cache-type f16 --json 2>/dev/null | tail -c 400)" | tee -a "$out/probe_prefill.txt"
    done
  done
fi
if want matvec; then
  # Decode rates of the 1B-shape models under forced matvec launch shapes (quant_kernels.cpp's
  # TESSERA_CUDA_MATVEC_UNROLL / _WPR / _RPW; "0 0 0" is what the backend picks): which shape reads the
  # weights fastest.
  models=/tmp/tessera-llm-models
  python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera --models "$models" --types bf16,q4_0 --make-models-only
  for m in ${MATVEC_MODELS:-llama1b-bf16 llama1b-q4_0 gpt2s-bf16}; do
    for shape in ${MATVEC_SHAPES:-"0 0 0" "0 0 1" "0 0 2" "0 0 4" "0 1 4" "0 2 4" "2 1 4" "2 2 4" "0 1 2" "0 2 2"}; do
      set -- $shape
      rate=$(TESSERA_CUDA_MATVEC_UNROLL=$1 TESSERA_CUDA_MATVEC_WPR=$2 TESSERA_CUDA_MATVEC_RPW=$3 timeout 120 .device/bin/tessera bench llm \
        -m "$models/$m.gguf" --device cuda -p 16 -n 128 -r 3 --cache-type f16 --json 2>>"$out/matvec_errors.txt" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["decode_tokens_per_s"])' 2>&1 | tail -n 1)
      echo "matvec $m unroll=$1 wpr=$2 rpw=$3: decode $rate tok/s" | tee -a "$out/matvec_sweep.txt"
    done
    # The same without programmatic dependent launch (launch.h), for its share of the step.
    rate=$(TESSERA_CUDA_PDL=0 timeout 120 .device/bin/tessera bench llm -m "$models/$m.gguf" --device cuda -p 16 \
      -n 128 -r 3 --cache-type f16 --json 2>>"$out/matvec_errors.txt" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["decode_tokens_per_s"])' 2>&1 | tail -n 1)
    echo "matvec $m without PDL: decode $rate tok/s" | tee -a "$out/matvec_sweep.txt"
  done
fi
if want llmab; then
  # Prefill (LLM_AB_PROMPT tokens) and decode rates of the GPU-machine models under alternative settings,
  # interleaved (LLM_AB_SETTINGS: "-" is the default, a comma joins variables; LLM_AB_MODELS; LLM_AB_ROUNDS).
  models=/tmp/tessera-llm-models
  python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera --models "$models" --types "${LLM_AB_TYPES:-bf16,q4_0}" \
    --make-models-only > /dev/null
  for round in $(seq "${LLM_AB_ROUNDS:-2}"); do
    for m in ${LLM_AB_MODELS:-llama1b-bf16 gpt2s-bf16 llama1b-q4_0}; do
      prompt=${LLM_AB_PROMPT:-16}
      [[ $m == gpt2* && $prompt -gt 880 ]] && prompt=880  # GPT-2: 1,024 positions for prompt and 128 more
      for setting in ${LLM_AB_SETTINGS:-- TESSERA_CUDA_ROW_KERNELS=0}; do
        [[ $setting == - ]] && setting=TESSERA_AB_DEFAULT=1
        rate=$(env ${setting//,/ } timeout 120 .device/bin/tessera bench llm -m "$models/$m.gguf" --device cuda \
          -p "$prompt" -n 128 -r 3 --cache-type f16 --json 2>>"$out/llmab_errors.txt" |
          python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["prefill_tokens_per_s"], "prefill,", r["decode_tokens_per_s"], "decode")' 2>&1 | tail -n 1)
        echo "round $round $m $setting: $rate tok/s" | tee -a "$out/llmab.txt"
      done
    done
  done
fi
if want decodeprofile; then
  # Where a decode step of each llmab model goes (TESSERA_CUDA_PROFILE=1: events between steps, so
  # short steps read high): the step count and time by kind of step, then the 12 longest steps.
  models=/tmp/tessera-llm-models
  python3 bench/compare_llm_gpu.py --tessera .device/bin/tessera --models "$models" --types "${LLM_AB_TYPES:-bf16,q4_0}" \
    --make-models-only > /dev/null
  for m in ${LLM_AB_MODELS:-llama1b-bf16 gpt2s-bf16 llama1b-q4_0}; do
    TESSERA_CUDA_PROFILE=1 timeout 120 .device/bin/tessera bench llm -m "$models/$m.gguf" --device cuda -p 16 -n 16 -r 1 \
      --cache-type f16 > /dev/null 2> "$out/profile_decode_$m.txt"
    awk '/_decode/{c++} c==2' "$out/profile_decode_$m.txt" > "$out/profile_decode_$m.steps"
    echo "$m: $(head -n 1 "$out/profile_decode_$m.steps")"
    awk 'NR > 1 {k = $5 " " $6; n[k]++; t[k] += $1} END {for (k in n) printf "  %4d steps %9.1f us  %s\n", n[k], t[k], k}' \
      "$out/profile_decode_$m.steps" | sort -k3 -nr
    sed -n 2,13p "$out/profile_decode_$m.steps"
  done
fi
# A standalone measurement in bench/cuda: built with the machine's nvcc and run, its output logged.
#   standalone NAME TIMEOUT [nvcc arguments...]
standalone() {
  local name=$1 limit=$2
  shift 2
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O3 -arch=sm_90 -std=c++20 "bench/cuda/$name.cu" "$@" \
    -o "/tmp/$name" 2>&1 | tail -n 5
  timeout "$limit" "/tmp/$name" 2>&1 | tee "$out/$name.txt"
}
# Launch designs for 16-bit decode matvecs, outside the backend.
if want matvecbench; then standalone matvec_variants 180; fi
# Decode weights fetched into L2 beside a step's short kernels, before their matvec.
if want prefetch; then standalone l2_prefetch 120; fi
# cuBLAS f32 products and im2col / col2im at the CNN's second convolution.
if want convshapes; then standalone conv_gemm_shapes 120 -lcublas; fi
# Split K by hand against cuBLASLt's choice on the batch-4096 MLP's weight gradients.
if want splitk; then standalone splitk_shapes 120 -lcublasLt; fi
# cuBLASLt's ReLU-mask and bias-gradient epilogues on the batch-4096 MLP's products.
if want epilogues; then standalone epilogue_shapes 120 -lcublasLt; fi
if want onnx; then
  # Issue 16 on the GPU machine: Tessera's exported graphs (forward passes and training steps) in Python's
  # onnxruntime, CUDA and CPU providers, against Tessera's outputs; and the PyTorch-exported models
  # (scripts/onnx_models, made here with the machine's torch) imported and run on the CPU and CUDA
  # backends against PyTorch's outputs.
  bundles=/tmp/tessera-onnx-export
  rm -rf "$bundles" && mkdir -p "$bundles"
  for spec in "mlp" "cnn" "transformer" "mlp --train-step" "cnn --train-step" "transformer --train-step"; do
    # shellcheck disable=SC2086
    .device/bin/tessera export onnx --model $spec --batch-size 4 --seed 5 --out "$bundles" --quiet || echo "export failed: $spec"
  done
  timeout "${ONNX_TIMEOUT:-300}" python3 tools/onnx_export/run_ort.py "$bundles"/*.json --providers cuda,cpu \
    > "$out/onnx_ort.txt" 2>&1
  echo "run_ort exit $?"
  grep -E "FAIL|passed|skipped|SKIP" "$out/onnx_ort.txt" | tail -n 20
  timeout "${ONNX_TIMEOUT:-300}" python3 scripts/onnx_models/check_models.py --tessera .device/bin/tessera \
    --work /tmp/tessera-onnx-models --backends cpu,cuda 2>&1 | tee "$out/onnx_models.txt" | tail -n 15
fi
if want ab; then
  # The same workloads under alternative settings, interleaved so that drift hits each alike.
  for round in $(seq "${AB_ROUNDS:-2}"); do
    for setting in ${AB_SETTINGS:-TESSERA_CUDA_SIMT_GEMM=0 -}; do
      [[ $setting == - ]] && setting=TESSERA_AB_DEFAULT=1
      env ${setting//,/ } timeout 200 .device/bin/tessera bench --backend cuda --repeat 5 --seconds 0.3 \
        ${AB_WORKLOADS:-mlp_train_b64 mlp_train_b4096_tf32 cnn_train_b256} 2>&1 | sed "s/^/round $round $setting: /" |
        tee -a "$out/ab.txt" | grep -v '^\s*$' | tail -n 8
    done
  done
fi
if want bench; then
  timeout "${BENCH_TIMEOUT:-300}" .device/bin/tessera bench --backend cuda --repeat 5 --seconds 0.3 --json \
    ${BENCH_WORKLOADS:-} > "$out/bench_cuda.json" 2> "$out/bench_cuda.txt"
  cat "$out/bench_cuda.txt"
  [[ ${SKIP_COMPARE:-0} == 1 ]] || timeout "${COMPARE_TIMEOUT:-400}" python3 bench/compare_torch_gpu.py --tessera .device/bin/tessera ${COMPARE_ARGS:-} --json "$out/compare_gpu.json" \
    2>&1 | tee "$out/compare_gpu.txt" | tail -n 60
fi
