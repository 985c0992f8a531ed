// The code generator's costs and results: cold and cached compile time of an MLP training step's
// fused clusters per optimisation level, the speed of generated kernels per level, and the bandwidth
// of a generated relu(a*x+b) next to a STREAM triad measured in the same run.
// Usage: bench_codegen [reps]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/kernels/bench_util.h"
#include "tessera/backends/cpu/jit.h"
#include "tessera/kernels/cpu/bandwidth.h"
#include "tessera/lower/fusion.h"
#include "tessera/lower/loop_ir.h"
#include "tessera/runtime/thread_pool.h"
#include "tessera/tessera.h"

using namespace tessera;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// CPU milliseconds of finished child processes: the system compiler's work.
double children_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<lower::Cluster> clusters_of(const ir::Graph& g) {
  return lower::find_clusters(g, [](const ir::Node& n) { return lower::can_generate(n); });
}

Array random_array(const Shape& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const std::vector<float> v = bench::random_vector(static_cast<size_t>(n), seed);
  return Array::from_vector<float>(v, shape);
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

void compile_times(int reps) {
  const ir::Graph g = mlp_training_step();
  auto t0 = std::chrono::steady_clock::now();
  const auto clusters = clusters_of(g);
  const double cluster_ms = ms_since(t0);
  size_t fused_nodes = 0;
  for (const auto& c : clusters) fused_nodes += c.nodes.size();
  t0 = std::chrono::steady_clock::now();
  const std::string src = backends::cpu::generate_source(clusters);
  std::printf("MLP step graph: %zu nodes, %zu clusters holding %zu nodes; find_clusters %.2f ms, "
              "lowering + C emission %.2f ms (%zu bytes of C)\n",
              g.nodes().size(), clusters.size(), fused_nodes, cluster_ms, ms_since(t0), src.size());
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tessera_bench_codegen_" + std::to_string(::getpid()));
  for (const char* opt : {"1", "2", "3"}) {
    ::setenv("TESSERA_JIT_OPT", opt, 1);
    std::vector<double> cold, compiler, cpu, warm;
    for (int rep = 0; rep < reps; ++rep) {
      const std::filesystem::path dir = root / (std::string("O") + opt + "-" + std::to_string(rep));
      ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
      backends::cpu::clear_memory_cache();
      backends::cpu::JitStats stats;
      const double cpu0 = children_cpu_ms();
      t0 = std::chrono::steady_clock::now();
      backends::cpu::compile_clusters(clusters, &stats);
      cold.push_back(ms_since(t0));
      compiler.push_back(stats.compile_ms);
      cpu.push_back(children_cpu_ms() - cpu0);
      backends::cpu::clear_memory_cache();
      t0 = std::chrono::steady_clock::now();
      backends::cpu::compile_clusters(clusters, &stats);
      warm.push_back(ms_since(t0));
    }
    std::printf("  -O%s: cold %7.1f ms (compiler %.1f ms wall, %.1f ms CPU), from the disk cache %.2f ms\n", opt,
                median(cold), median(compiler), median(cpu), median(warm));
  }
  ::unsetenv("TESSERA_JIT_OPT");
  ::unsetenv("TESSERA_CACHE_DIR");
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
}

// Median milliseconds of one run of every generated kernel of `g`, compiled at -O`opt`.
double kernels_ms(const ir::Graph& g, const std::vector<Array>& inputs, const char* opt, runtime::ThreadPool& pool,
                  int reps) {
  ::setenv("TESSERA_JIT_OPT", opt, 1);
  const auto clusters = clusters_of(g);
  const auto kernels = backends::cpu::compile_clusters(clusters);
  ::unsetenv("TESSERA_JIT_OPT");
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
  const double s = bench::median_seconds(
      [&] {
        for (size_t c = 0; c < clusters.size(); ++c) kernels[c]->run(ins[c].data(), out_ptrs[c].data(), pool);
      },
      reps);
  return s * 1e3;
}

void kernel_speed_by_level(int reps) {
  runtime::ThreadPool pool(1);  // one thread: code quality, not scheduling
  const Array big = random_array({2048, 1024}, 1), bias = random_array({1024}, 2);
  struct Case {
    const char* name;
    MultiFn fn;
    std::vector<Array> inputs;
  };
  const std::vector<Case> cases = {
      {"bias + gelu(tanh) [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::gelu(in[0] + in[1], true)}; },
       {big, bias}},
      {"bias + relu [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] + in[1])}; },
       {big, bias}},
      {"row sum of squares [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::sum(ops::square(in[0]), {1})}; },
       {big}},
      {"column sum [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::sum(in[0], {0})}; }, {big}},
      {"max over rows [2048,1024]",
       [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::max(in[0], {1})}; }, {big}},
  };
  std::printf("generated kernels, 1 thread, median ms by optimisation level:\n");
  for (const Case& c : cases) {
    std::vector<ir::TensorType> types;
    for (const Array& a : c.inputs) types.push_back({a.dtype(), a.shape()});
    const ir::Graph g = trace(c.fn, types);
    std::printf("  %-32s", c.name);
    for (const char* opt : {"1", "2", "3"}) std::printf("  -O%s %7.3f", opt, kernels_ms(g, c.inputs, opt, pool, reps));
    std::printf("\n");
  }
}

void fused_relu_bandwidth(int reps) {
  const int64_t n = int64_t{16} << 20;
  const ir::Graph g =
      trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] * 1.5 + in[1])}; },
            {{DType::f32, {n}}, {DType::f32, {n}}});
  const auto clusters = clusters_of(g);
  if (clusters.size() != 1) {
    std::fprintf(stderr, "bench_codegen: relu(a*x+b) became %zu kernels, expected one\n", clusters.size());
    std::exit(1);
  }
  const auto kernels = backends::cpu::compile_clusters(clusters);
  const Array x = random_array({n}, 1), b = random_array({n}, 2);
  Array y = Array::empty(DType::f32, {n}), t = Array::empty(DType::f32, {n});
  std::vector<const void*> ins;
  for (const ir::Value& v : clusters[0].inputs) {
    ins.push_back(v == g.inputs()[0] ? x.raw_data() : v == g.inputs()[1] ? b.raw_data() : nullptr);
  }
  void* outs[] = {y.raw_data()};
  runtime::ThreadPool& pool = runtime::default_pool();
  const auto [fused, triad] = bench::paired_seconds(
      [&] { kernels[0]->run(ins.data(), outs, pool); },
      [&] { kernels::stream_triad(n, t.data<float>(), b.data<const float>(), x.data<const float>(), 1.5f, &pool); },
      reps, 1, 1);
  const double bytes = 3.0 * 4.0 * static_cast<double>(n);  // two reads, one write, as STREAM counts
  std::printf("generated relu(a*x+b) over 16M f32, %d threads: %.2f GB/s; STREAM triad %.2f GB/s; ratio %.2f\n",
              pool.size(), bytes / fused * 1e-9, bytes / triad * 1e-9, triad / fused);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  if (reps < 1) {
    std::fprintf(stderr, "usage: bench_codegen [reps >= 1]\n");
    return 2;
  }
  compile_times(reps);
  kernel_speed_by_level(reps);
  fused_relu_bandwidth(std::max(reps, 9));
  return 0;
}
