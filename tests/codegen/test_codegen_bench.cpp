// Measurements, not assertions: run with TESSERA_CODEGEN_BENCH=1 (skipped otherwise). Prints the
// cold/warm compile time of an MLP training step's clusters (per optimisation level) and the
// bandwidth of a fused relu(a*x+b) next to a STREAM triad measured in the same run.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "codegen_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

bool bench_enabled() {
  return std::getenv("TESSERA_CODEGEN_BENCH") != nullptr;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds (user + system) of finished child processes: the compiler's work, which the load of
// other processes inflates much less than wall time.
double children_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
          static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Forward + backward of a 784-1024-512-256-10 MLP with relu and cross-entropy, batch 64.
ir::Graph mlp_training_step() {
  const std::vector<int64_t> sizes = {784, 1024, 512, 256, 10};
  std::vector<ir::TensorType> types = {{DType::f32, {64, 784}}, {DType::i64, {64}}};
  std::vector<size_t> params;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    params.push_back(types.size());
    types.push_back({DType::f32, {sizes[l], sizes[l + 1]}});
    params.push_back(types.size());
    types.push_back({DType::f32, {sizes[l + 1]}});
  }
  auto loss = [](const std::vector<Tensor>& a) {
    Tensor h = a[0];
    for (size_t l = 0; l < 4; ++l) {
      h = ops::matmul(h, a[2 + 2 * l]) + a[3 + 2 * l];
      if (l < 3) h = ops::relu(h);
    }
    return ops::cross_entropy(h, a[1]);
  };
  return trace([=](const std::vector<Tensor>& a) { return value_and_grad(loss, params)(a); }, types);
}

}  // namespace

TEST(CodegenBench, MlpTrainingStepCompileTime) {
  if (!bench_enabled()) GTEST_SKIP() << "set TESSERA_CODEGEN_BENCH=1";
  const ir::Graph g = mlp_training_step();
  const auto clusters = cluster_all(g);
  size_t fused_nodes = 0;
  for (const auto& c : clusters) fused_nodes += c.nodes.size();
  std::printf("[ bench ] MLP step graph: %zu nodes, %zu clusters holding %zu nodes\n", g.nodes().size(),
              clusters.size(), fused_nodes);
  for (const char* opt : {"1", "2", "3"}) {
    ScopedEnv level("TESSERA_JIT_OPT", opt);
    std::vector<double> cold, compiler, cpu, warm;
    for (int rep = 0; rep < 5; ++rep) {
      const std::string dir = test_cache_dir() + "/bench-O" + opt + "-" + std::to_string(rep);
      std::filesystem::remove_all(dir);
      ScopedEnv cache("TESSERA_CACHE_DIR", dir);
      backends::cpu::clear_memory_cache();
      backends::cpu::JitStats st;
      const double cpu0 = children_cpu_ms();
      auto t0 = std::chrono::steady_clock::now();
      backends::cpu::compile_clusters(clusters, &st);
      cold.push_back(ms_since(t0));
      compiler.push_back(st.compile_ms);
      cpu.push_back(children_cpu_ms() - cpu0);
      backends::cpu::clear_memory_cache();
      t0 = std::chrono::steady_clock::now();
      backends::cpu::compile_clusters(clusters, &st);
      warm.push_back(ms_since(t0));
      EXPECT_TRUE(st.from_disk_cache);
    }
    std::printf(
        "[ bench ] -O%s: cold %.1f ms (compiler %.1f ms wall, %.1f ms CPU), from disk cache %.2f ms (medians of 5)\n",
        opt, median(cold), median(compiler), median(cpu), median(warm));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto again = cluster_all(g);
  std::printf("[ bench ] find_clusters alone: %.2f ms\n", ms_since(t0));
  const auto t1 = std::chrono::steady_clock::now();
  const std::string src = backends::cpu::generate_source(again);
  std::printf("[ bench ] lowering + C emission: %.2f ms, %zu bytes of C\n", ms_since(t1), src.size());
}

// Fastest milliseconds of one run of every kernel of `g`'s clusters, compiled at -O`opt`.
double kernel_ms(const ir::Graph& g, const std::vector<Array>& inputs, const char* opt, runtime::ThreadPool& pool) {
  ScopedEnv level("TESSERA_JIT_OPT", opt);
  const auto clusters = cluster_all(g);
  auto kernels = backends::cpu::compile_clusters(clusters);
  std::vector<double> times;
  std::vector<std::vector<Array>> outs(clusters.size());
  std::vector<std::vector<const void*>> ins(clusters.size());
  std::vector<std::vector<void*>> out_ptrs(clusters.size());
  for (size_t c = 0; c < clusters.size(); ++c) {
    for (const ir::Value& v : clusters[c].inputs) {
      const void* p = nullptr;
      for (size_t i = 0; i < g.inputs().size(); ++i) {
        if (v == g.inputs()[i]) p = inputs[i].raw_data();
      }
      ins[c].push_back(p);
    }
    for (const ir::Value& v : clusters[c].outputs) {
      outs[c].push_back(Array::zeros(v.dtype(), v.shape()));
      out_ptrs[c].push_back(outs[c].back().raw_data());
    }
  }
  for (int rep = 0; rep < 15; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t c = 0; c < clusters.size(); ++c) kernels[c]->run(ins[c].data(), out_ptrs[c].data(), pool);
    times.push_back(ms_since(t0));
  }
  return *std::min_element(times.begin(), times.end());  // the least disturbed run
}

TEST(CodegenBench, KernelSpeedByOptLevel) {
  if (!bench_enabled()) GTEST_SKIP() << "set TESSERA_CODEGEN_BENCH=1";
  runtime::ThreadPool pool(1);  // one thread: comparable code quality, not scheduling luck
  struct Case {
    const char* name;
    MultiFn fn;
    std::vector<Array> inputs;
  };
  const Array big = random_of(DType::f32, {2048, 1024}, 1), bias = random_of(DType::f32, {1024}, 2);
  std::vector<Case> cases = {
      {"bias+gelu(tanh) [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::gelu(in[0] + in[1], true)}; },
       {big, bias}},
      {"bias+relu [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] + in[1])}; },
       {big, bias}},
      {"row sum of squares [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::sum(ops::square(in[0]), {1})}; },
       {big}},
      {"column sum [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::sum(in[0], {0})}; },
       {big}},
      {"max over rows [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::max(in[0], {1})}; },
       {big}},
  };
  for (const Case& c : cases) {
    std::vector<ir::TensorType> types;
    for (const Array& a : c.inputs) types.push_back({a.dtype(), a.shape()});
    const ir::Graph g = trace(c.fn, types);
    std::printf("[ bench ] %-32s", c.name);
    for (const char* opt : {"1", "2", "3"}) std::printf("  -O%s %.3f ms", opt, kernel_ms(g, c.inputs, opt, pool));
    std::printf("\n");
  }
}

TEST(CodegenBench, FusedReluAxpbBandwidth) {
  if (!bench_enabled()) GTEST_SKIP() << "set TESSERA_CODEGEN_BENCH=1";
  const int64_t n = 16 << 20;
  const ir::Graph g =
      trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] * 1.5 + in[1])}; },
            {{DType::f32, {n}}, {DType::f32, {n}}});
  const auto clusters = cluster_all(g);
  ASSERT_EQ(clusters.size(), 1u);
  auto kernels = backends::cpu::compile_clusters(clusters);
  const Array x = random_of(DType::f32, {n}, 1), b = random_of(DType::f32, {n}, 2);
  Array y = Array::empty(DType::f32, {n}), t = Array::empty(DType::f32, {n});
  std::vector<const void*> ins;
  for (const ir::Value& v : clusters[0].inputs) {
    ins.push_back(v == g.inputs()[0] ? x.raw_data() : v == g.inputs()[1] ? b.raw_data() : nullptr);
  }
  void* outs[] = {y.raw_data()};
  runtime::ThreadPool pool(2);
  const float* px = x.data<const float>();
  const float* pb = b.data<const float>();
  float* pt = t.data<float>();
  // STREAM triad t = b + q * x, split the same way over the same pool.
  auto triad = [&] {
    pool.parallel_for(n, 1 << 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) pt[i] = pb[i] + 1.5f * px[i];
    });
  };
  auto fused = [&] { kernels[0]->run(ins.data(), outs, pool); };
  const double bytes = 3.0 * 4.0 * static_cast<double>(n);  // two reads, one write (as STREAM counts)
  std::vector<double> fused_gbs, triad_gbs;
  fused();
  triad();
  for (int rep = 0; rep < 15; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    fused();
    fused_gbs.push_back(bytes / (ms_since(t0) * 1e6));
    t0 = std::chrono::steady_clock::now();
    triad();
    triad_gbs.push_back(bytes / (ms_since(t0) * 1e6));
  }
  const double f = median(fused_gbs), s = median(triad_gbs);
  std::printf("[ bench ] relu(a*x+b), 16M f32, 2 threads: %.2f GB/s; STREAM triad %.2f GB/s; ratio %.2f\n", f, s,
              f / s);
  expect_arrays_match({y}, run_reference(g, {x, b}));
}
