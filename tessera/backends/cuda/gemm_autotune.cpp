#include "tessera/backends/cuda/gemm_autotune.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "tessera/backends/common/kernel_cache.h"
#include "tessera/backends/cuda/cuda_check.h"

namespace tessera::backends::cuda {

namespace {

namespace disk = tessera::backends::common;

std::mutex& choices_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, cublasLtMatmulAlgo_t>& choices() {
  static auto* c = new std::map<std::string, cublasLtMatmulAlgo_t>();  // never destroyed (used at exit)
  return *c;
}

// Elements spanned by a row-major [rows, cols] matrix with row stride ld, batch times at batch_stride.
size_t span(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t batch_stride) {
  if (rows == 0 || cols == 0) return 0;
  return static_cast<size_t>((batch > 1 ? (batch - 1) * batch_stride : 0) + (rows - 1) * ld + cols);
}

// Device scratch freed on every path out.
struct Scratch {
  std::vector<void*> blocks;
  void* get(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "cudaMalloc (gemm autotune scratch)");
    blocks.push_back(p);
    check(cudaMemset(p, 0, std::max<size_t>(bytes, 256)), "cudaMemset (gemm autotune scratch)");
    return p;
  }
  ~Scratch() {
    for (void* p : blocks) cudaFree(p);
  }
};

struct Timer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Timer() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate (gemm autotune)");
    check(cudaEventCreate(&start), "cudaEventCreate (gemm autotune)");
    check(cudaEventCreate(&stop), "cudaEventCreate (gemm autotune)");
  }
  ~Timer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
};

// Read once per device: cudaGetDeviceProperties is slow, and every product of a compile asks.
std::string toolchain() {
  int device = 0;
  cudaGetDevice(&device);
  static std::mutex mutex;
  static auto* known = new std::map<int, std::string>();  // never destroyed (used at exit)
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known->find(device);
  if (it == known->end()) {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device);
    it = known->emplace(device, fmt::format("cublasLt {} on {} sm_{}{}", cublasLtGetVersion(), prop.name,
                                            prop.major, prop.minor)).first;
  }
  return it->second;
}

// The time of one run of `algo` in ms, or infinity when cuBLASLt refuses it.
float time_algo(const GemmProblem& p, const cublasLtMatmulAlgo_t& algo, size_t workspace_bytes, void* workspace,
                const void* a, const void* b, void* d, Timer& t) {
  const GemmShape& s = *p.shape;
  const float alpha = 1.0f, beta = s.residual ? 1.0f : 0.0f;
  auto once = [&] {
    return cublasLtMatmul(p.handle, p.op, &alpha, b, p.a, a, p.b, &beta, d, p.c, d, p.d, &algo, workspace,
                          workspace_bytes, t.stream);
  };
  if (once() != CUBLAS_STATUS_SUCCESS) return std::numeric_limits<float>::infinity();
  constexpr int kRuns = 3;
  check(cudaEventRecord(t.start, t.stream), "cudaEventRecord (gemm autotune)");
  for (int i = 0; i < kRuns; ++i) {
    if (once() != CUBLAS_STATUS_SUCCESS) return std::numeric_limits<float>::infinity();
  }
  check(cudaEventRecord(t.stop, t.stream), "cudaEventRecord (gemm autotune)");
  check(cudaEventSynchronize(t.stop), "cudaEventSynchronize (gemm autotune)");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, t.start, t.stop), "cudaEventElapsedTime (gemm autotune)");
  return ms / kRuns;
}

// An algorithm's configuration attribute, or nothing where the library does not report it.
std::optional<uint64_t> config_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  size_t size = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0 ||
      size > sizeof(uint64_t)) {
    return std::nullopt;
  }
  uint64_t value = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, size, &size) != CUBLAS_STATUS_SUCCESS) return std::nullopt;
  return value;
}

// Whether two algorithms are configured alike. Compared by their configuration, not byte for byte: a
// remembered choice that missed a candidate would be timed again, and timing noise can then pick another
// algorithm (two identical training runs in one process, on a GPU still warming up, ended an ulp apart).
bool same_config(const cublasLtMatmulAlgo_t& x, const cublasLtMatmulAlgo_t& y) {
  if (std::memcmp(&x, &y, sizeof(x)) == 0) return true;
  for (const auto attr : {CUBLASLT_ALGO_CONFIG_ID, CUBLASLT_ALGO_CONFIG_TILE_ID, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                          CUBLASLT_ALGO_CONFIG_SPLITK_NUM, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                          CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION,
                          CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID}) {
    if (config_attribute(x, attr) != config_attribute(y, attr)) return false;
  }
  return true;
}

}  // namespace

cublasLtMatmulAlgo_t choose_gemm_algo(const GemmProblem& p, const std::vector<cublasLtMatmulHeuristicResult_t>& candidates) {
  if (candidates.size() == 1) return candidates[0].algo;
  // The candidate configured as a remembered choice, if one is.
  const auto known = [&](const cublasLtMatmulAlgo_t& algo) -> std::optional<cublasLtMatmulAlgo_t> {
    for (const auto& c : candidates) {
      if (same_config(c.algo, algo)) return c.algo;
    }
    return std::nullopt;
  };
  {
    std::lock_guard<std::mutex> lock(choices_mutex());
    if (auto it = choices().find(p.key); it != choices().end()) {
      if (const auto algo = known(it->second)) return *algo;
    }
  }
  const disk::CacheEntry entry = disk::cache_entry("cuda-gemm-algo-v1", p.key, toolchain());
  if (const std::string path = disk::find_cached(entry, ".algo"); !path.empty()) {
    const std::string bytes = disk::read_file(path);
    cublasLtMatmulAlgo_t algo{};
    // A stored choice counts only while it is one of today's candidates (same library, same device).
    if (bytes.size() == sizeof(algo)) {
      std::memcpy(&algo, bytes.data(), sizeof(algo));
      if (const auto candidate = known(algo)) {
        std::lock_guard<std::mutex> lock(choices_mutex());
        choices()[p.key] = *candidate;
        return *candidate;
      }
    }
  }
  const GemmShape& s = *p.shape;
  const size_t es = dtype_size(s.dtype), out_es = s.f32_output ? sizeof(float) : es;
  Scratch scratch;
  const void* a = scratch.get(es * (s.a_transposed ? span(s.k, s.m, s.lda, s.batch, s.stride_a)
                                                   : span(s.m, s.k, s.lda, s.batch, s.stride_a)));
  const void* b = scratch.get(es * (s.b_transposed ? span(s.n, s.k, s.ldb, s.batch, s.stride_b)
                                                   : span(s.k, s.n, s.ldb, s.batch, s.stride_b)));
  void* d = scratch.get(out_es * span(s.m, s.n, s.ldd, s.batch, s.stride_d));
  if (s.bias) {
    const void* bias = scratch.get(out_es * static_cast<size_t>(s.n));
    check(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
          "cublasLtMatmulDescSetAttribute(bias)");
  }
  size_t workspace_bytes = 0;
  for (const auto& c : candidates) workspace_bytes = std::max(workspace_bytes, c.workspaceSize);
  void* workspace = workspace_bytes > 0 ? scratch.get(workspace_bytes) : nullptr;
  Timer timer;
  size_t best = 0;
  float best_ms = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < candidates.size(); ++i) {
    const float ms = time_algo(p, candidates[i].algo, workspace_bytes, workspace, a, b, d, timer);
    if (ms < best_ms) best_ms = ms, best = i;
  }
  cudaGetLastError();  // a refused candidate leaves no sticky error, but clear what it may have set
  const cublasLtMatmulAlgo_t chosen = candidates[best].algo;
  {
    std::lock_guard<std::mutex> lock(choices_mutex());
    choices()[p.key] = chosen;
  }
  try {
    disk::store_cached(entry, ".algo", std::string_view(reinterpret_cast<const char*>(&chosen), sizeof(chosen)));
  } catch (const std::exception&) {
    // A read-only cache folder costs the next compile a new measurement, nothing else.
  }
  return chosen;
}

}  // namespace tessera::backends::cuda
