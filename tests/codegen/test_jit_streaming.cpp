// Streaming (non-temporal) stores of large elementwise outputs: which kernels take the path, and
// that it writes the same values as the reference backend for odd sizes, unaligned destinations,
// several outputs of different widths, in-place runs and the fallbacks without AVX / SSE2.
#include <dlfcn.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "codegen_test_util.h"
#include "tessera/codegen/emitter.h"

using namespace tessera;
using namespace tessera::test;

namespace {

bool streams(const std::string& source) {
  return source.find("tsr_stream_store(out") != std::string::npos;
}

std::string source_of(const MultiFn& fn, const std::vector<ir::TensorType>& types) {
  return backends::cpu::generate_source(cluster_all(trace(fn, types)));
}

std::vector<Tensor> relu_axpb(const std::vector<Tensor>& in) {
  return {ops::relu(in[0] * 1.5 + in[1])};
}

// Three outputs of widths 4, 8 and 1 bytes from one kernel.
std::vector<Tensor> three_outputs(const std::vector<Tensor>& in) {
  const Tensor y = in[0] * 2.0 - in[1];
  return {ops::relu(y), ops::cast(ops::exp(y), DType::f64), ops::gt(y, in[1])};
}

}  // namespace

TEST(JitStreaming, OnlyLargeContiguousElementwiseKernelsStream) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "");  // the default threshold
  const int64_t big = (int64_t{16} << 20) / 4;    // 16 MiB of f32: the default threshold
  EXPECT_TRUE(streams(source_of(relu_axpb, {{DType::f32, {big}}, {DType::f32, {big}}})));
  EXPECT_FALSE(streams(source_of(relu_axpb, {{DType::f32, {big - 64}}, {DType::f32, {big - 64}}})));
  EXPECT_FALSE(streams(source_of(relu_axpb, {{DType::f32, {1000}}, {DType::f32, {1000}}})));
  // 2-D with a broadcast bias: the rows stream.
  const std::string rows = source_of(relu_axpb, {{DType::f32, {4096, 1024}}, {DType::f32, {1024}}});
  EXPECT_TRUE(streams(rows));
  EXPECT_NE(rows.find("tsr_stream_fence();"), std::string::npos);
  // Rows shorter than stream_inner_min would leave partial lines at every row end: direct stores.
  EXPECT_FALSE(streams(source_of(relu_axpb, {{DType::f32, {big / 16, 16}}, {DType::f32, {16}}})));
  // Reductions keep their loops, even over large inputs.
  const std::string red =
      source_of([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::sum(ops::exp(in[0]), {0})}; },
                {{DType::f32, {8192, 1024}}});
  EXPECT_EQ(red.find("tsr_stream"), std::string::npos);
  // Small graphs carry no helper text (cold compile time).
  EXPECT_EQ(source_of(relu_axpb, {{DType::f32, {1000}}, {DType::f32, {1000}}}).find("tsr_stream"), std::string::npos);
}

TEST(JitStreaming, DialectsWithoutStreamingWriteDirectly) {
  const auto clusters =
      cluster_all(trace(relu_axpb, {{DType::f32, {int64_t{8} << 20}}, {DType::f32, {int64_t{8} << 20}}}));
  const lower::Kernel k = lower::build_loop_kernel(clusters.at(0), "k");
  EXPECT_TRUE(streams(codegen::emit_kernel(k, "k", codegen::c_dialect())));
  EXPECT_EQ(codegen::emit_kernel(k, "k", codegen::cuda_dialect()).find("stream"), std::string::npos);
  codegen::Dialect off = codegen::c_dialect();
  off.stream_store_fn.clear();
  EXPECT_FALSE(streams(codegen::emit_kernel(k, "k", off)));
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "off");
  EXPECT_FALSE(streams(backends::cpu::generate_source(clusters)));
}

TEST(JitStreaming, ThresholdFromTheEnvironment) {
  const std::vector<ir::TensorType> types = {{DType::f32, {1000}}, {DType::f32, {1000}}};
  {
    ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "4000");
    EXPECT_TRUE(streams(source_of(relu_axpb, types)));
  }
  {
    ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "4001");
    EXPECT_FALSE(streams(source_of(relu_axpb, types)));
  }
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "lots");
  EXPECT_TESSERA_ERROR(source_of(relu_axpb, types), "TESSERA_JIT_STREAM_BYTES", "lots");
}

TEST(JitStreaming, OddSizesMatchTheReference) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "0");
  for (int64_t n : {64, 65, 1000, 1024, 1025, 4097, 100003}) {
    const Array x = random_of(DType::f32, {n}, 1), b = random_of(DType::f32, {n}, 2);
    const auto clusters = check_against_reference(relu_axpb, {x, b});
    EXPECT_TRUE(streams(backends::cpu::generate_source(clusters))) << n;
  }
}

TEST(JitStreaming, RowsWithBroadcastsMatchTheReference) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "0");
  // Row lengths that are not a multiple of a cache line: row starts fall inside lines.
  for (const Shape& shape : std::vector<Shape>{{37, 1031}, {5, 3, 200}, {2, 4096}}) {
    const Array x = random_of(DType::f32, shape, 3), b = random_of(DType::f32, {shape.back()}, 4);
    const auto clusters = check_against_reference(relu_axpb, {x, b});
    EXPECT_TRUE(streams(backends::cpu::generate_source(clusters))) << shape_str(shape);
  }
}

TEST(JitStreaming, SeveralOutputsOfDifferentWidths) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "0");
  const Array x = random_of(DType::f32, {3, 2053}, 5), b = random_of(DType::f32, {3, 2053}, 6);
  const auto clusters = check_against_reference(three_outputs, {x, b}, 1e-6, 1e-7);
  const std::string src = backends::cpu::generate_source(clusters);
  EXPECT_NE(src.find("tsr_stream_store(out0"), std::string::npos);
  EXPECT_NE(src.find("tsr_stream_store(out1"), std::string::npos);
  EXPECT_NE(src.find("tsr_stream_store(out2"), std::string::npos);
}

TEST(JitStreaming, AboveTheDefaultThresholdOnManyThreads) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "");
  const int64_t n = (int64_t{16} << 20) / 4 + 37;  // just over 16 MiB, a ragged tail
  const Array x = random_of(DType::f32, {n}, 7), b = random_of(DType::f32, {n}, 8);
  const ir::Graph g = trace(relu_axpb, {{DType::f32, {n}}, {DType::f32, {n}}});
  const JitRun jit = run_with_jit(g, {x, b}, 4);
  EXPECT_TRUE(streams(backends::cpu::generate_source(jit.clusters)));
  expect_arrays_match(jit.outputs, run_reference(g, {x, b}));
}

// Destinations that start off a cache line (and off a vector), and an output written in place over
// its input: the kernel is called directly with shifted pointers.
TEST(JitStreaming, UnalignedAndInPlaceDestinations) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "0");
  const int64_t n = 5000;
  const auto unary = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] * 1.5 + 0.25)}; };
  const auto clusters = cluster_all(trace(unary, {{DType::f32, {n}}}));
  ASSERT_EQ(clusters.size(), 1u);
  ASSERT_TRUE(streams(backends::cpu::generate_source(clusters)));
  const auto kernels = backends::cpu::compile_clusters(clusters);
  const Array x = random_of(DType::f32, {n}, 9);
  const std::vector<float> xv = x.to_vector<float>();
  auto expected = [&](int64_t i) { return std::max(0.0f, xv[static_cast<size_t>(i)] * 1.5f + 0.25f); };
  runtime::ThreadPool pool(3);
  for (int64_t shift : {1, 3, 7, 15}) {
    std::vector<float> out(static_cast<size_t>(n + 32), -7.0f);
    const void* ins[] = {xv.data()};
    void* outs[] = {out.data() + shift};
    kernels[0]->run(ins, outs, pool);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<size_t>(i + shift)], expected(i)) << shift << " " << i;
    for (int64_t i = 0; i < shift; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], -7.0f);  // nothing outside
    for (int64_t i = n + shift; i < n + 32; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], -7.0f);
  }
  std::vector<float> inplace(xv.begin(), xv.end());
  const void* ins[] = {inplace.data()};
  void* outs[] = {inplace.data()};
  kernels[0]->run(ins, outs, pool);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(inplace[static_cast<size_t>(i)], expected(i)) << i;
}

// The helper text must compile where its fast paths do not exist: SSE2 only (no AVX), no SSE2 at
// all (the plain copy), and with clang's builtin.
TEST(JitStreaming, GeneratedCCompilesWithoutAvx) {
  ScopedEnv env("TESSERA_JIT_STREAM_BYTES", "0");
  const std::string src = source_of(three_outputs, {{DType::f32, {3, 2053}}, {DType::f32, {3, 2053}}});
  ASSERT_TRUE(streams(src));
  const std::string path = test_cache_dir() + "/streaming_fallbacks.c";
  std::ofstream(path) << src;
  const std::vector<std::string> variants = {
      "cc -std=gnu11 -fsyntax-only -mno-avx",
      "cc -std=gnu11 -fsyntax-only -mno-avx -U__SSE2__ -U__AVX__",
      "cc -std=gnu11 -fsyntax-only -mavx2",
  };
  for (const std::string& cmd : variants) {
    EXPECT_EQ(std::system((cmd + " -Werror=implicit-function-declaration " + path + " 2>&1").c_str()), 0) << cmd;
  }
  if (std::system("command -v clang >/dev/null 2>&1") == 0) {
    EXPECT_EQ(
        std::system(
            ("clang -std=gnu11 -fsyntax-only -Werror=implicit-function-declaration -mavx2 " + path + " 2>&1").c_str()),
        0);
  }
}
