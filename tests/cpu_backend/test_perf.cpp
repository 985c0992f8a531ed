// Measurements, not assertions (speed belongs in benchmarks): run explicitly with
//   ./test_cpu_backend --gtest_also_run_disabled_tests --gtest_filter='*CpuPerf*'
// Prints compile times (cold JIT cache, warm disk cache, warm plan cache), the planned arena size
// and training steps per second through run_into.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "model_steps.h"
#include "op_samples.h"
#include "tessera/backends/cpu/jit.h"

namespace tessera::test {
namespace {

using Clock = std::chrono::steady_clock;

double ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double compile_ms(const ir::Graph& g, backends::cpu::CompileInfo* info) {
  const auto t0 = Clock::now();
  auto exe = backends::cpu_backend().compile(g);
  const double t = ms(t0);
  *info = backends::cpu::compile_info(*exe);
  return t;
}

void measure(const std::string& name, const StepGraph& s) {
  // A fresh kernel cache directory makes the first compile cold.
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("tessera-perf-" + std::to_string(::getpid()))).string();
  ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  backends::cpu::clear_memory_cache();
  backends::cpu::clear_plan_cache();
  backends::cpu::CompileInfo cold_info, info;
  const double cold = compile_ms(s.graph, &cold_info);
  backends::cpu::clear_memory_cache();
  backends::cpu::clear_plan_cache();
  backends::cpu::CompileInfo disk_info;
  const double disk = compile_ms(s.graph, &disk_info);
  backends::cpu::clear_plan_cache();
  const double memory = compile_ms(s.graph, &info);
  const double hit = compile_ms(s.graph, &info);
  ::unsetenv("TESSERA_CACHE_DIR");
  std::filesystem::remove_all(dir);

  auto exe = backends::cpu_backend().compile(s.graph);
  std::vector<Array> outs;
  for (const ir::Value& v : s.graph.outputs()) outs.push_back(Array::empty(v.dtype(), v.shape()));
  for (int i = 0; i < 3; ++i) exe->run_into(s.inputs, outs);
  std::vector<double> times;
  const auto start = Clock::now();
  while (ms(start) < 3000 || times.size() < 10) {
    const auto t0 = Clock::now();
    exe->run_into(s.inputs, outs);
    times.push_back(ms(t0));
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf(
      "%s: compile cold %.1f ms (passes %.1f, clusters %.1f, jit %.1f, rest %.1f), warm disk cache %.1f ms (passes "
      "%.1f, clusters %.1f, jit %.1f, rest %.1f), warm memory cache %.1f ms, plan cache hit %.2f ms\n  %d library + %d "
      "kernel + %d copy + %d fallback steps, %d in place, peak %.2f MB\n  step median %.3f ms -> %.1f steps/s\n",
      name.c_str(), cold, cold_info.passes_ms, cold_info.cluster_ms, cold_info.jit_ms, cold_info.lower_ms, disk,
      disk_info.passes_ms, disk_info.cluster_ms, disk_info.jit_ms, disk_info.lower_ms, memory, hit, info.library_steps,
      info.kernel_steps, info.copy_steps, info.fallback_steps, info.in_place,
      static_cast<double>(exe->peak_bytes()) / 1e6, median, 1000.0 / median);
}

TEST(CpuPerf, DISABLED_MlpTrainingStepBatch64) {
  ScopedJit jit(backends::cpu::JitMode::always);
  measure("MLP 784-1024-512-256-10 Adam, batch 64", mlp_train_step(64, {784, 1024, 512, 256, 10}));
}

TEST(CpuPerf, DISABLED_MlpTrainingStepBatch256) {
  ScopedJit jit(backends::cpu::JitMode::always);
  measure("MLP 784-1024-512-256-10 Adam, batch 256", mlp_train_step(256, {784, 1024, 512, 256, 10}));
}

TEST(CpuPerf, DISABLED_CnnTrainingStepBatch64) {
  ScopedJit jit(backends::cpu::JitMode::always);
  measure("CNN Adam, batch 64", cnn_train_step(64));
}

// Eager evaluation compiles one small graph per eval: its compile (a plan-cache hit after the first)
// must cost little next to the work.
TEST(CpuPerf, DISABLED_EagerSmallGraphs) {
  const Tensor a = Tensor::from_array(sample_array({DType::f32, {32, 64}}, 1, -1, 1));
  const Tensor b = Tensor::from_array(sample_array({DType::f32, {64, 16}}, 2, -1, 1));
  const Tensor c = Tensor::from_array(sample_array({DType::f32, {16}}, 3, -1, 1));
  for (backends::Backend* backend : {&backends::reference_backend(), &backends::cpu_backend()}) {
    backends::set_default_backend(*backend);
    const int n = 2000;
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) (ops::relu(ops::matmul(a, b) + c) * 0.5).eval();
    std::printf("eager relu(a @ b + c) * 0.5 on %s: %.1f us per eval\n", backend->name().c_str(), 1e3 * ms(t0) / n);
  }
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& x) -> std::vector<Tensor> { return {ops::relu(ops::matmul(x[0], x[1]) + x[2])}; },
      {{DType::f32, {32, 64}}, {DType::f32, {64, 16}}, {DType::f32, {16}}});
  backends::cpu::clear_plan_cache();
  backends::cpu::CompileInfo info;
  const double first = compile_ms(g, &info);
  const double again = compile_ms(g, &info);
  std::printf("compile of a 3-node graph: %.3f ms first, %.3f ms from the plan cache\n", first, again);
  backends::set_default_backend(backends::cpu_backend());
}

}  // namespace
}  // namespace tessera::test
