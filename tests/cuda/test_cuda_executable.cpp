// CUDA executables: results stay on the GPU, steady-state runs replay one captured CUDA graph,
// aliased outputs update their inputs in place, what the GPU lacks runs on the CPU through the
// splitter, and TESSERA_VERIFY checks CUDA runs against the reference backend.
#include <gtest/gtest.h>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/backends/cuda/nvrtc_compiler.h"
#include "tessera/core/error.h"
#include "tessera/backends/verify.h"
#include "tessera/ops/ops.h"
#include "cuda_test_util.h"

namespace tessera::test {
namespace {

TEST(CudaExecutable, MlpLayerRunsOnTheGpuAndReplaysOneGraph) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::relu(ops::matmul(a[0], ops::transpose(a[1], 0, 1)) + a[2])};
  };
  const ir::Graph g = trace(f, {{DType::f32, {64, 784}}, {DType::f32, {256, 784}}, {DType::f32, {256}}});
  const std::vector<Array> in = {random_array({64, 784}, 1, -1, 1, DType::f32),
                                 random_array({256, 784}, 2, -0.05, 0.05, DType::f32),
                                 random_array({256}, 3, -0.1, 0.1, DType::f32)};
  std::vector<Array> dev;
  for (const Array& a : in) dev.push_back(a.to(cuda().device()));
  const auto exe = cuda().compile(g);
  std::vector<Array> out = {Array::empty(DType::f32, {64, 256}, cuda().device())};
  for (int i = 0; i < 5; ++i) exe->run_into(dev, out);
  const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get());
  ASSERT_NE(cu, nullptr) << "a fully supported graph should compile to one CUDA executable";
  EXPECT_EQ(cu->graph_captures(), 1);
  EXPECT_EQ(cu->graph_replays(), 4);
  EXPECT_FALSE(out[0].on_host());
  const auto want = backends::reference_backend().compile(g)->run(in);
  expect_close(Tensor::from_array(out[0].to(host_device())), want[0].to_f64(), 1e-4, 1e-4);
}

TEST(CudaExecutable, WhatTheGpuLacksRunsOnTheCpu) {
  // cuBLASLt has no f64 product and matmul no decomposition: the splitter gives it to the CPU backend,
  // with the elementwise work around it on the GPU.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::relu(ops::matmul(a[0] * 2.0, a[1])) + 1.0};
  };
  const ir::Graph g = trace(f, {{DType::f64, {8, 12}}, {DType::f64, {12, 5}}});
  const std::vector<Array> in = {random_array({8, 12}, 4, -1, 1, DType::f64), random_array({12, 5}, 5, -1, 1, DType::f64)};
  const auto exe = cuda().compile(g);
  EXPECT_EQ(dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get()), nullptr)
      << "an f64 product should have split the graph";
  const auto got = exe->run(in);
  const auto want = backends::reference_backend().compile(g)->run(in);
  expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), 1e-12, 1e-12);
}

TEST(CudaExecutable, ConvolutionsAndPoolingDecomposeOntoTheGpu) {
  // conv, max_pool and their gradients decompose into gathers, products and scatters the GPU keeps.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::max_pool2d(ops::relu(ops::conv2d(a[0] * 2.0, a[1], a[2])), {2, 2}) + 1.0};
  };
  const ir::Graph g = trace(f, {{DType::f32, {2, 3, 9, 9}}, {DType::f32, {4, 3, 3, 3}}, {DType::f32, {4}}});
  const std::vector<Array> in = {random_array({2, 3, 9, 9}, 4, -1, 1, DType::f32),
                                 random_array({4, 3, 3, 3}, 5, -1, 1, DType::f32),
                                 random_array({4}, 6, -1, 1, DType::f32)};
  const auto exe = cuda().compile(g);
  EXPECT_NE(dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get()), nullptr)
      << "the decomposed convolution should run whole on the GPU";
  const auto got = exe->run(in);
  const auto want = backends::reference_backend().compile(g)->run(in);
  expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), 1e-4, 1e-4);
}

TEST(CudaExecutable, AliasedOutputsUpdateTheirInputsInPlace) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] + a[1]}; };
  const ir::Graph g = trace(f, {{DType::f32, {1000}}, {DType::f32, {1000}}});
  const auto exe = cuda().compile(g, {{{0, 0}}});
  Array acc = Array::zeros(DType::f32, {1000}).to(cuda().device());
  const Array one = Array::full(DType::f32, {1000}, 1.0).to(cuda().device());
  for (int i = 0; i < 4; ++i) {
    const auto out = exe->run({acc, one});
    EXPECT_TRUE(out[0].shares_storage_with(acc));
  }
  const std::vector<float> v = acc.to(host_device()).to_vector<float>();
  EXPECT_EQ(v.front(), 4.0f);
  EXPECT_EQ(v.back(), 4.0f);
}

TEST(CudaExecutable, VerifyComparesWithTheReference) {
  backends::set_verify(true);
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::sum(ops::exp(a[0]), {1})}; };
  const ir::Graph g = trace(f, {{DType::f32, {16, 300}}});
  cuda().compile(g)->run({random_array({16, 300}, 6, -1, 1, DType::f32)});
  backends::set_verify(false);
  const backends::VerifyReport r = backends::last_verify_report();
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_LT(r.max_rel_error(), 1e-5);
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

TEST(CudaExecutable, OutOfRangeIndicesAreReportedNotFollowed) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::gather(a[0], 1, a[1])}; };
  const ir::Graph g = trace(f, {{DType::f32, {2, 3}}, {DType::i64, {2, 1}}});
  const auto exe = backends::backend_by_name("cuda").compile(g);
  const Array x = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto good = exe->run({x, Array::from_vector<int64_t>({2, 0}, {2, 1})});
  EXPECT_EQ(good[0].to(host_device()).to_vector<float>(), (std::vector<float>{3, 4}));
  exe->run({x, Array::from_vector<int64_t>({7, 0}, {2, 1})});
  backends::backend_by_name("cuda").device().synchronize();  // the report never waits for a running run
  EXPECT_TESSERA_ERROR(exe->run({x, Array::from_vector<int64_t>({0, 0}, {2, 1})}), "out of range");
  // The flag was cleared with the report.
  const auto again = exe->run({x, Array::from_vector<int64_t>({1, 1}, {2, 1})});
  EXPECT_EQ(again[0].to(host_device()).to_vector<float>(), (std::vector<float>{2, 5}));
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

TEST(CudaExecutable, KernelsWithoutTheGridPrologueAreRefused) {
  // Launches overlap the kernel before them (programmatic dependent launch, launch.h): a kernel that
  // does not wait for it first would race, so the compiler refuses to build one.
  backends::cuda::NvrtcCompiler compiler(90);
  try {
    compiler.module("extern \"C\" __global__ void tsr_racy(float* x) { x[threadIdx.x] = 1.0f; }", "a racy kernel");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a racy kernel has 1 kernels but 0 TSR_GRID_PROLOGUE() calls"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::test
