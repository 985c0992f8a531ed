// Kernel and compiler workloads: SGEMM 1024^3 on each provider, the STREAM triad and a compiled
// relu(a*x+b) graph over 16M floats (the same run measures both, so their ratio is fair), and the
// compile time of the MLP training step, cold (empty kernel cache) and from the disk cache.
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <unistd.h>

#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/backends/cpu/jit.h"
#include "tessera/bench/workloads.h"
#include "tessera/kernels/cpu/bandwidth.h"
#include "tessera/kernels/cpu/gemm.h"
#include "tessera/models/vision.h"
#include "tessera/ops/ops.h"
#include "tessera/optim/optim.h"
#include "tessera/train/train_step.h"

namespace tessera::bench {

// The MLP training step (batch 64, Adam) as one graph: the compile-time workloads compile it.
ir::Graph mlp_step_graph() {
  ops::Generator gen(0);
  std::shared_ptr<nn::Module> model = models::make_classifier("mlp", gen);
  optim::Adam opt(*model, {});
  train::CompiledTrainStep step(
      *model, opt, [](nn::Module& m, const Tensor& x, const Tensor& y) { return ops::cross_entropy(m(x), y); }, 0.0,
      &backends::reference_backend());
  Array x = Array::full(DType::f32, {2, 784}, 0.5);
  Array y = Array::from_vector<int64_t>({1, 2}, {2});
  step.step(x, y);  // creates Adam's state
  return step.step_graph({DType::f32, {64, 784}}, {DType::i64, {64}});
}

namespace {

constexpr int64_t kStreamN = int64_t{16} << 20;

Array filled(const Shape& shape, float value) {
  Array a = Array::empty(DType::f32, shape);
  std::fill_n(a.data<float>(), a.numel(), value);
  return a;
}

Measurement sgemm_1024(kernels::GemmProvider provider, const std::string& name, const BenchOptions& o) {
  const kernels::GemmProvider before = kernels::gemm_provider();
  kernels::set_gemm_provider(provider);
  const int64_t n = 1024;
  Array a = filled({n, n}, 0.5f), b = filled({n, n}, 0.25f), c = filled({n, n}, 0.0f);
  Measurement m = measure_rate(name, "GFLOP/s", o, 2.0 * n * n * n / 1e9, [&] {
    kernels::sgemm(false, false, n, n, n, 1.0f, a.data<float>(), n, b.data<float>(), n, 0.0f, c.data<float>(), n);
  });
  kernels::set_gemm_provider(before);
  m.detail = fmt::format("provider {}, {} threads", provider == kernels::GemmProvider::tessera ? "tessera" : "openblas",
                         runtime::default_pool().size());
  return m;
}

Measurement triad(const BenchOptions& o) {
  Array a = filled({kStreamN}, 0.0f), b = filled({kStreamN}, 1.0f), c = filled({kStreamN}, 2.0f);
  Measurement m = measure_rate("triad_16m", "GB/s", o, 12.0 * kStreamN / 1e9, [&] {
    kernels::stream_triad(kStreamN, a.data<float>(), b.data<float>(), c.data<float>(), 3.0f);
  });
  m.detail = "STREAM triad a = b + s*c, 16M floats, 12 bytes/element";
  return m;
}

// relu(a*x + b) with scalar a, b as a graph compiled by the default backend: 8 bytes per element.
Measurement fused_relu(const BenchOptions& o) {
  backends::Backend& backend = o.backend.empty() ? backends::default_backend() : backends::backend_by_name(o.backend);
  const Tensor x = Tensor::placeholder("x", DType::f32, {kStreamN});
  const Tensor y = ops::relu(x * 1.5 + 0.25);
  std::unique_ptr<backends::Executable> exe = backend.compile(ir::Graph::build({x.value()}, {y.value()}, "relu_axpb"));
  const std::vector<Array> inputs{filled({kStreamN}, -0.1f)};
  std::vector<Array> outputs{filled({kStreamN}, 0.0f)};
  const Measurement t = triad(o);  // the same run's bandwidth ceiling
  Measurement m = measure_rate("fused_relu_axpb_16m", "GB/s", o, 8.0 * kStreamN / 1e9,
                               [&] { exe->run_into(inputs, outputs); });
  m.detail = fmt::format("compiled graph relu(1.5*x+0.25), backend {}; {:.0f}% of triad ({:.1f} GB/s) in this run",
                         backend.name(), 100.0 * m.median / t.median, t.median);
  return m;
}

// The MLP training-step graph (forward, gradients, Adam) at batch 64.

// Compiles the step on the CPU backend with no in-process caches; `fresh_dir` also empties the disk cache.
Measurement compile_time(const std::string& name, bool cold, const BenchOptions& o) {
  const ir::Graph graph = mlp_step_graph();
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tessera_bench_cache_" + std::to_string(::getpid()));
  const char* saved = std::getenv("TESSERA_CACHE_DIR");
  const std::string saved_dir = saved ? saved : "";
  backends::cpu::JitMode saved_mode = backends::cpu::jit_mode();
  backends::cpu::set_jit_mode(backends::cpu::JitMode::always);
  int run = 0;
  auto compile_once = [&] {
    if (cold) {
      const std::filesystem::path dir = root / std::to_string(run++);
      ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
    } else {
      ::setenv("TESSERA_CACHE_DIR", root.c_str(), 1);
    }
    backends::cpu::clear_plan_cache();
    backends::cpu::clear_memory_cache();
    backends::cpu_backend().compile(graph);
  };
  Measurement m = measure_latency(name, "ms", BenchOptions{.repeat = o.repeat, .run_seconds = 0.0}, compile_once);
  backends::cpu::clear_plan_cache();
  backends::cpu::clear_memory_cache();
  const backends::cpu::CompileInfo info =
      backends::cpu::compile_info(*backends::cpu_backend().compile(graph));  // warm: for the detail line
  backends::cpu::set_jit_mode(saved_mode);
  if (saved_dir.empty()) {
    ::unsetenv("TESSERA_CACHE_DIR");
  } else {
    ::setenv("TESSERA_CACHE_DIR", saved_dir.c_str(), 1);
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  m.detail = fmt::format("MLP training step (batch 64, Adam): {} nodes, {} kernels, {} library calls, {}", graph.nodes().size(),
                         info.kernel_steps, info.library_steps, cold ? "empty kernel cache" : "kernels from the disk cache");
  return m;
}

}  // namespace

std::vector<Workload> kernel_workloads() {
  std::vector<Workload> list{
      {"sgemm_1024", "SGEMM 1024^3, Tessera's packed AVX2 kernel",
       [](const BenchOptions& o) { return sgemm_1024(kernels::GemmProvider::tessera, "sgemm_1024", o); }},
  };
  if (kernels::openblas_available()) {
    list.push_back({"sgemm_1024_openblas", "SGEMM 1024^3 through OpenBLAS (the peer)", [](const BenchOptions& o) {
                      return sgemm_1024(kernels::GemmProvider::openblas, "sgemm_1024_openblas", o);
                    }});
  }
  list.push_back({"triad_16m", "STREAM triad over 16M floats (the bandwidth ceiling)", triad});
  list.push_back({"fused_relu_axpb_16m", "compiled relu(a*x+b) over 16M floats vs the triad", fused_relu});
  list.push_back({"compile_mlp_step_cold", "compile the MLP training step, empty kernel cache",
                  [](const BenchOptions& o) { return compile_time("compile_mlp_step_cold", true, o); }});
  list.push_back({"compile_mlp_step_cached", "compile the MLP training step, kernels from the disk cache",
                  [](const BenchOptions& o) { return compile_time("compile_mlp_step_cached", false, o); }});
  return list;
}

}  // namespace tessera::bench
