// Workloads sized for a GPU backend (--backend cuda): large training batches, the device's copy
// bandwidth (the ceiling for elementwise work), a fused elementwise graph against it, and a bf16
// matrix product. Data lives on the backend's device; each timed run ends with the device's work.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "tessera/api/tensor.h"
#include "tessera/backends/backend.h"
#include "tessera/bench/workloads.h"
#include "tessera/core/error.h"
#include "tessera/ir/graph.h"
#include "tessera/ops/ops.h"

namespace tessera::bench {

Measurement train_rate_of(const std::string& name, const std::string& model_name, int64_t batch,
                          const BenchOptions& o);  // workloads_models.cpp

namespace {

constexpr int64_t kBigN = int64_t{256} << 20;  // 1 GiB of floats: far past any cache

backends::Backend& gpu_backend(const BenchOptions& o, const std::string& workload) {
  backends::Backend& b = o.backend.empty() ? backends::default_backend() : backends::backend_by_name(o.backend);
  TESSERA_CHECK(!b.device().is_host(), "bench: {} is sized for a GPU; run it with --backend cuda or vulkan",
                workload);
  return b;
}

BenchOptions synchronised(const BenchOptions& o, Device& device) {
  BenchOptions timed = o;
  timed.finish = [&device] { device.synchronize(); };
  return timed;
}

Array on_device(DType dt, const Shape& shape, double value, Device& device) {
  return Array::full(dt, shape, value).to(device);
}

Measurement device_copy(const BenchOptions& o) {
  Device& dev = gpu_backend(o, "gpu_copy_256m").device();
  const Array x = on_device(DType::f32, {kBigN}, 1.0, dev);
  Array y = Array::empty(DType::f32, {kBigN}, dev);
  Measurement m = measure_rate("gpu_copy_256m", "GB/s", synchronised(o, dev), 8.0 * kBigN / 1e9,
                               [&] { dev.copy_within(y.device_data(), x.device_data(), x.nbytes()); });
  m.detail = fmt::format("device-to-device copy of {} floats on {}, read + write counted", kBigN, dev.name());
  return m;
}

Measurement fused_elementwise(const BenchOptions& o) {
  backends::Backend& b = gpu_backend(o, "gpu_fused_axpb_256m");
  Device& dev = b.device();
  const Tensor x = Tensor::placeholder("x", DType::f32, {kBigN});
  const Tensor y = ops::relu(x * 1.5 + 0.25);
  const auto exe = b.compile(ir::Graph::build({x.value()}, {y.value()}, "relu_axpb"));
  const std::vector<Array> in{on_device(DType::f32, {kBigN}, -0.1, dev)};
  std::vector<Array> out{Array::empty(DType::f32, {kBigN}, dev)};
  Measurement m = measure_rate("gpu_fused_axpb_256m", "GB/s", synchronised(o, dev), 8.0 * kBigN / 1e9,
                               [&] { exe->run_into(in, out); });
  m.detail = fmt::format("compiled relu(1.5*x+0.25) over {} floats, backend {}", kBigN, b.name());
  return m;
}

// An n x n x n matrix product in `dt` (f32 accumulation) on the GPU backend: the GEMM rate the
// backends are compared at (bf16 8192^3 against cuBLAS; f32 and f16 4096^3 between CUDA and Vulkan).
Measurement gemm(const std::string& name, DType dt, int64_t n, const BenchOptions& o) {
  backends::Backend& b = gpu_backend(o, name);
  Device& dev = b.device();
  const Tensor a = Tensor::placeholder("a", dt, {n, n});
  const Tensor c = Tensor::placeholder("b", dt, {n, n});
  const auto exe = b.compile(ir::Graph::build({a.value(), c.value()}, {ops::matmul(a, c).value()}, name));
  const std::vector<Array> in{on_device(dt, {n, n}, 0.5, dev), on_device(dt, {n, n}, 0.25, dev)};
  std::vector<Array> out{Array::empty(dt, {n, n}, dev)};
  Measurement m = measure_rate(name, "TFLOP/s", synchronised(o, dev), 2.0 * n * n * n / 1e12,
                               [&] { exe->run_into(in, out); });
  m.detail = fmt::format("{} [{}, {}] @ [{}, {}], f32 accumulation, backend {}", dtype_name(dt), n, n, n, n, b.name());
  return m;
}

// TF32 products for the large-batch MLP (as the peers' TF32 setting), restored afterwards.
Measurement mlp_tf32(const BenchOptions& o) {
  gpu_backend(o, "mlp_train_b4096_tf32");
  const char* saved = std::getenv("TESSERA_TF32");
  const std::string saved_value = saved ? saved : "";
  ::setenv("TESSERA_TF32", "1", 1);
  Measurement m;
  try {
    m = train_rate_of("mlp_train_b4096_tf32", "mlp", 4096, o);
  } catch (...) {
    saved ? ::setenv("TESSERA_TF32", saved_value.c_str(), 1) : ::unsetenv("TESSERA_TF32");
    throw;
  }
  saved ? ::setenv("TESSERA_TF32", saved_value.c_str(), 1) : ::unsetenv("TESSERA_TF32");
  m.detail += ", TF32 products";
  return m;
}

// Compiling the MLP training step on the GPU backend: `cold` gives every compile an empty kernel
// cache folder (NVRTC runs), else all share one (the cubins come from disk after the first).
Measurement gpu_compile(const std::string& name, bool cold, const BenchOptions& o) {
  backends::Backend& b = gpu_backend(o, name);
  const ir::Graph graph = mlp_step_graph();
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tessera_gpu_bench_cache_" + std::to_string(::getpid()));
  const char* saved = std::getenv("TESSERA_CACHE_DIR");
  const std::string saved_dir = saved ? saved : "";
  auto restore = [&] {
    saved ? ::setenv("TESSERA_CACHE_DIR", saved_dir.c_str(), 1) : ::unsetenv("TESSERA_CACHE_DIR");
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  };
  int run = 0;
  auto compile_once = [&] {
    const std::filesystem::path dir = cold ? root / std::to_string(run++) : root;
    ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
    b.compile(graph);  // destroyed at once: the next compile finds no module loaded in the process
  };
  Measurement m;
  try {
    if (!cold) compile_once();  // fills the shared folder
    m = measure_latency(name, "ms", BenchOptions{.repeat = o.repeat, .run_seconds = 0.0}, compile_once);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  m.detail = fmt::format("MLP training step (batch 64, Adam), {} nodes, backend {}, {}", graph.nodes().size(), b.name(),
                         cold ? "empty kernel cache (NVRTC)" : "kernels from the disk cache");
  return m;
}

}  // namespace

std::vector<Workload> gpu_workloads() {
  return {
      {"mlp_train_b4096_tf32", "MLP training step (Adam), batch 4096, TF32 products (GPU)", mlp_tf32, true},
      {"cnn_train_b256", "CNN (issue 3) training step (Adam), batch 256 (GPU)",
       [](const BenchOptions& o) {
         gpu_backend(o, "cnn_train_b256");
         return train_rate_of("cnn_train_b256", "cnn", 256, o);
       },
       true},
      {"gpu_copy_256m", "device-to-device copy of 256M floats (the bandwidth ceiling, GPU)", device_copy, true},
      {"gpu_fused_axpb_256m", "compiled relu(a*x+b) over 256M floats vs the copy (GPU)", fused_elementwise, true},
      {"gpu_bf16_gemm_8192", "bf16 GEMM 8192^3 (GPU)",
       [](const BenchOptions& o) { return gemm("gpu_bf16_gemm_8192", DType::bf16, 8192, o); }, true},
      {"gpu_f32_gemm_4096", "f32 GEMM 4096^3, no TF32 unless TESSERA_TF32=1 (GPU)",
       [](const BenchOptions& o) { return gemm("gpu_f32_gemm_4096", DType::f32, 4096, o); }, true},
      {"gpu_f16_gemm_4096", "f16 GEMM 4096^3 (GPU)",
       [](const BenchOptions& o) { return gemm("gpu_f16_gemm_4096", DType::f16, 4096, o); }, true},
      {"gpu_compile_mlp_step_cold", "compile the MLP training step on the GPU, empty kernel cache (GPU)",
       [](const BenchOptions& o) { return gpu_compile("gpu_compile_mlp_step_cold", true, o); }, true},
      {"gpu_compile_mlp_step_cached", "compile the MLP training step on the GPU, kernels from the disk cache (GPU)",
       [](const BenchOptions& o) { return gpu_compile("gpu_compile_mlp_step_cached", false, o); }, true},
  };
}

}  // namespace tessera::bench
