// Vulkan executables: a fused graph records into one command buffer with barriers only between
// dependent dispatches, products use the tiled shader, operands at unaligned offsets bind through
// shifts, TESSERA_VULKAN_PROFILE=1 times every dispatch, and what the device lacks runs on the CPU (in
// segments that keep their own constants).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cpu/cpu_backend.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/executable.h"
#include "tessera/backends/vulkan/vulkan_backend.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/optim.h"
#include "test_util.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {

backends::Backend& vulkan() { return backends::backend_by_name("vulkan"); }

void expect_matches(const ir::Graph& g, const std::vector<Array>& in, double tol) {
  const auto got = vulkan().compile(g)->run(in);
  const auto want = backends::reference_backend().compile(g)->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    expect_close(Tensor::from_array(got[i].to(host_device())), want[i].to_f64(), tol, tol);
  }
}

TEST(VulkanExecutable, MlpLayerRunsInOneCommandBufferWithBarriersBetweenDependentSteps) {
  // The bias and ReLU are the product's tail; the scaling after them is a dispatch of its own.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::relu(ops::matmul(a[0], a[1]) + a[2]) * 2.0};
  };
  const ir::Graph g = trace(f, {{DType::f32, {33, 70}}, {DType::f32, {70, 45}}, {DType::f32, {45}}});
  const std::vector<Array> in = {random_array({33, 70}, 1, -1, 1, DType::f32), random_array({70, 45}, 2, -1, 1, DType::f32),
                                 random_array({45}, 3, -1, 1, DType::f32)};
  const auto exe = vulkan().compile(g);
  const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
  ASSERT_NE(vk, nullptr) << "a matmul with an elementwise tail should run wholly on Vulkan";
  std::vector<Array> dev;
  for (const Array& a : in) dev.push_back(a.to(vulkan().device()));
  const auto got = exe->run(dev);
  EXPECT_FALSE(got[0].on_host());
  const auto want = backends::reference_backend().compile(g)->run(in);
  expect_close(Tensor::from_array(got[0].to(host_device())), want[0].to_f64(), 1e-4, 1e-4);
  const backends::vulkan::RecordStats s = vk->last_run();
  EXPECT_GE(s.dispatches, 2) << vk->program().dump();
  // Every dispatch after the first here reads what the one before wrote: one barrier between each pair.
  EXPECT_EQ(s.barriers, s.dispatches - 1) << vk->program().dump();
}

TEST(VulkanExecutable, IndependentDispatchesShareNoBarrier) {
  // Two outputs of unrelated inputs (a reduction and an elementwise op do not fuse): nothing to wait for.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::sum(ops::exp(a[0]), {1}), ops::tanh(a[1]) * 3.0};
  };
  const ir::Graph g = trace(f, {{DType::f32, {16, 300}}, {DType::f32, {500}}});
  const std::vector<Array> in = {random_array({16, 300}, 4, -1, 1, DType::f32), random_array({500}, 5, -1, 1, DType::f32)};
  const auto exe = vulkan().compile(g);
  const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
  ASSERT_NE(vk, nullptr);
  exe->run(in);
  EXPECT_EQ(vk->last_run().dispatches, 2) << vk->program().dump();
  EXPECT_EQ(vk->last_run().barriers, 0) << vk->program().dump();
  expect_matches(g, in, 1e-4);
}

TEST(VulkanExecutable, BatchedAndBroadcastProducts) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::matmul(a[0], a[1]), ops::matmul(a[0], ops::transpose(a[2], 0, 1))};
  };
  const ir::Graph g = trace(f, {{DType::f32, {3, 17, 20}}, {DType::f32, {20, 9}}, {DType::f32, {9, 20}}});
  expect_matches(g,
                 {random_array({3, 17, 20}, 6, -1, 1, DType::f32), random_array({20, 9}, 7, -1, 1, DType::f32),
                  random_array({9, 20}, 8, -1, 1, DType::f32)},
                 1e-4);
}

TEST(VulkanExecutable, SlicesAtUnalignedOffsetsBindThroughShifts) {
  // A slice starting 3 floats in: 12 bytes past the arena's alignment, which descriptors cannot start at.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::exp(ops::slice(a[0], 0, 3, 40)) + 1.0};
  };
  const ir::Graph g = trace(f, {{DType::f32, {41}}});
  expect_matches(g, {random_array({41}, 9, -1, 1, DType::f32)}, 1e-5);
}

TEST(VulkanExecutable, ProfilingTimesEveryDispatch) {
  setenv("TESSERA_VULKAN_PROFILE", "1", 1);
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::matmul(a[0], a[1]) * 2.0}; };
  const ir::Graph g = trace(f, {{DType::f32, {8, 8}}, {DType::f32, {8, 8}}});
  const auto exe = vulkan().compile(g);
  unsetenv("TESSERA_VULKAN_PROFILE");
  const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
  ASSERT_NE(vk, nullptr);
  exe->run({random_array({8, 8}, 10, -1, 1, DType::f32), random_array({8, 8}, 11, -1, 1, DType::f32)});
  const auto& times = vk->last_run().step_us;
  ASSERT_EQ(static_cast<int>(times.size()), vk->last_run().dispatches);
  EXPECT_EQ(times[0].first, "matmul_f32_r4");
  for (const auto& [name, us] : times) EXPECT_GE(us, 0.0) << name;
}

TEST(VulkanExecutable, WhatTheDeviceLacksRunsOnTheCpu) {
  // f64 stays on the CPU (no f64 transcendentals in GLSL); the f32 work around it runs on Vulkan.
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::exp(ops::cast(a[0] * 2.0, DType::f64)), ops::tanh(a[0])};
  };
  const ir::Graph g = trace(f, {{DType::f32, {10}}});
  const auto exe = vulkan().compile(g);
  EXPECT_EQ(dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get()), nullptr)
      << "an f64 op should have split the graph";
  expect_matches(g, {random_array({10}, 12, -1, 1, DType::f32)}, 1e-6);
}

// Two Adam steps that differ only in their betas. Vulkan decomposes adam_update and its f64 bias
// corrections (1 - beta^step) run on the CPU as small segments of one structure; with generated kernels
// on, the second step's segments were given the first's cached CPU plan, whose kernels hold beta as a
// literal (the differential suite's Adam sample, then the training steps, in one process).
TEST(VulkanExecutable, SplitSegmentsOfOneStructureKeepTheirOwnConstants) {
  struct JitAlways {
    backends::cpu::JitMode saved = backends::cpu::jit_mode();
    JitAlways() { backends::cpu::set_jit_mode(backends::cpu::JitMode::always); }
    ~JitAlways() { backends::cpu::set_jit_mode(saved); }
  } jit;
  const ir::TensorType p{DType::f32, {5, 7}}, scalar{DType::f64, {}};
  const std::vector<Array> in = {random_array({5, 7}, 16, -1, 1, DType::f32),
                                 random_array({5, 7}, 17, -1, 1, DType::f32),
                                 random_array({5, 7}, 18, -1, 1, DType::f32),
                                 random_array({5, 7}, 19, 0, 1, DType::f32),
                                 Array::scalar(0.01, DType::f64),
                                 Array::scalar(3, DType::f64)};
  for (const auto& [beta1, beta2] : {std::pair{0.8, 0.99}, std::pair{0.9, 0.999}}) {
    SCOPED_TRACE("betas " + std::to_string(beta1) + ", " + std::to_string(beta2));
    auto f = [beta1, beta2](const std::vector<Tensor>& a) {
      return ops::adam_update(a[0], a[1], a[2], a[3], a[4], a[5], {.beta1 = beta1, .beta2 = beta2});
    };
    expect_matches(trace(f, {p, p, p, p, scalar, scalar}), in, 1e-5);
  }
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

// Products of both tile sizes (128-wide tiles once m and n reach 512) at sizes that are no multiple of
// a tile or of the K slice, batched with one operand broadcast, in f32 and in f16 storage.
TEST(VulkanExecutable, ProductsOfBothTileSizesAtRaggedShapes) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::matmul(a[0], a[1]), ops::matmul(a[2], a[3])};
  };
  for (DType dt : {DType::f32, DType::f16}) {
    SCOPED_TRACE(dtype_name(dt));
    const ir::Graph g =
        trace(f, {{dt, {2, 520, 37}}, {dt, {37, 601}}, {dt, {3, 70, 130}}, {dt, {3, 130, 45}}});
    expect_matches(g,
                   {random_array({2, 520, 37}, 21, -1, 1, dt), random_array({37, 601}, 22, -1, 1, dt),
                    random_array({3, 70, 130}, 23, -1, 1, dt), random_array({3, 130, 45}, 24, -1, 1, dt)},
                   dt == DType::f16 ? 3e-2 : 1e-4);
  }
}

// Where the device offers cooperative matrices (NVIDIA), f16 products run on them: ragged edges of the
// 128-wide tiles and of the 32-value K slices, batched with a broadcast operand, against the reference.
TEST(VulkanExecutable, F16ProductsOnCooperativeMatricesWhereOffered) {
  const backends::vulkan::Context* context = backends::vulkan::vulkan_context();
  if (context == nullptr || !context->features().coopmat_f16) {
    GTEST_SKIP() << "this Vulkan device offers no 16x16x16 f16 cooperative matrices (VK_NV_cooperative_matrix)";
  }
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::matmul(a[0], a[1])}; };
  for (const auto& [m, k, n] : {std::tuple{2, 520, 37}, std::tuple{130, 75, 257}, std::tuple{512, 512, 512}}) {
    SCOPED_TRACE(fmt::format("{}x{}x{}", m, n, k));
    const ir::Graph g = trace(f, {{DType::f16, {2, m, k}}, {DType::f16, {k, n}}});
    const auto exe = vulkan().compile(g);
    const auto* vk = dynamic_cast<const backends::vulkan::VulkanExecutable*>(exe.get());
    ASSERT_NE(vk, nullptr);
    EXPECT_NE(vk->program().dump().find("cooperative matrices"), std::string::npos) << vk->program().dump();
    expect_matches(g, {random_array({2, m, k}, 41, -1, 1, DType::f16), random_array({k, n}, 42, -1, 1, DType::f16)},
                   3e-2);
  }
}

TEST(VulkanExecutable, LargerProductsAndReductions) {
  auto f = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::matmul(a[0], ops::transpose(a[1], 0, 1)), ops::sum(a[0], {0}),
                               ops::matmul(ops::transpose(a[0], 0, 1), a[2])};
  };
  const ir::Graph g = trace(f, {{DType::f32, {64, 784}}, {DType::f32, {256, 784}}, {DType::f32, {64, 256}}});
  expect_matches(g,
                 {random_array({64, 784}, 13, -1, 1, DType::f32), random_array({256, 784}, 14, -0.05, 0.05, DType::f32),
                  random_array({64, 256}, 15, -1, 1, DType::f32)},
                 1e-4);
}

TEST(VulkanExecutable, ProductsApplyTheirBiasActivationAndResidualAsTheyStore) {
  // f32 products take + bias, ReLU or tanh-GELU, then + a residual (common/epilogues.h) as the shader
  // stores: each output below is one dispatch, for both tile sizes and a batch; erf-GELU (not among the
  // shader's activations) and an f16 product stay dispatches of their own.
  for (const int64_t m : {33, 600}) {
    SCOPED_TRACE("m " + std::to_string(m));
    // Distinct left operands: the same product twice would be one node with several uses (no tail).
    auto f = [](const std::vector<Tensor>& a) {
      const Tensor wt = ops::transpose(a[1], 0, 1);
      return std::vector<Tensor>{ops::relu(ops::matmul(a[0], wt) + a[2]), ops::gelu(ops::matmul(a[5], wt) + a[2], true) + a[3],
                                 ops::matmul(a[6], wt) + a[3], ops::relu(ops::matmul(a[4], wt) + a[2])};
    };
    const ir::Graph g = trace(f, {{DType::f32, {m, 70}}, {DType::f32, {520, 70}}, {DType::f32, {520}}, {DType::f32, {m, 520}},
                                  {DType::f32, {2, m, 70}}, {DType::f32, {m, 70}}, {DType::f32, {m, 70}}});
    expect_matches(g,
                   {random_array({m, 70}, 61, -1, 1, DType::f32), random_array({520, 70}, 62, -0.2, 0.2, DType::f32),
                    random_array({520}, 63, -1, 1, DType::f32), random_array({m, 520}, 64, -1, 1, DType::f32),
                    random_array({2, m, 70}, 65, -1, 1, DType::f32), random_array({m, 70}, 69, -1, 1, DType::f32),
                    random_array({m, 70}, 70, -1, 1, DType::f32)},
                   1e-4);
    const std::string steps = vulkan_step_descriptions(g);
    EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 4) << steps;
    EXPECT_NE(steps.find("+bias relu"), std::string::npos) << steps;
    EXPECT_NE(steps.find("+bias tanh-gelu +residual"), std::string::npos) << steps;
  }
  auto erf = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::gelu(ops::matmul(a[0], a[1]) + a[2], false)};
  };
  const ir::Graph g = trace(erf, {{DType::f32, {5, 8}}, {DType::f32, {8, 6}}, {DType::f32, {6}}});
  expect_matches(g, {random_array({5, 8}, 66, -1, 1, DType::f32), random_array({8, 6}, 67, -1, 1, DType::f32),
                     random_array({6}, 68, -1, 1, DType::f32)},
                 1e-5);
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 2) << steps;
}

TEST(VulkanExecutable, ProductsReadTransposedOperandsAndWriteTransposedResultsWithoutCopies) {
  // x @ W^T (a linear layer), x^T @ g, both transposed, a batch against one transposed matrix, and a
  // product whose only use is its transpose (a weight gradient laid out as the weight): each is one
  // dispatch of the product shader, no strided copy before or after; values as the reference's.
  auto f = [](const std::vector<Tensor>& a) {
    const Tensor wt = ops::transpose(a[1], 0, 1), xt = ops::transpose(a[0], 0, 1);
    return std::vector<Tensor>{ops::matmul(a[0], wt), ops::matmul(xt, a[2]), ops::matmul(xt, ops::transpose(a[3], 0, 1)),
                               ops::matmul(a[4], wt), ops::transpose(ops::matmul(a[3], a[0]), 0, 1)};
  };
  const ir::Graph g = trace(f, {{DType::f32, {37, 50}}, {DType::f32, {21, 50}}, {DType::f32, {37, 19}},
                                {DType::f32, {23, 37}}, {DType::f32, {3, 5, 50}}});
  const std::vector<Array> in = {random_array({37, 50}, 51, -1, 1, DType::f32), random_array({21, 50}, 52, -1, 1, DType::f32),
                                 random_array({37, 19}, 53, -1, 1, DType::f32), random_array({23, 37}, 54, -1, 1, DType::f32),
                                 random_array({3, 5, 50}, 55, -1, 1, DType::f32)};
  expect_matches(g, in, 1e-4);
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), '\n'), 5) << steps;
  EXPECT_EQ(steps.find("copy"), std::string::npos) << steps;
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

TEST(VulkanExecutable, TransposedResultsOfTransposedOperandsOverABatchOfOne) {
  // ONNX's DFT as imported: x^T @ C over a batch of one, then the result transposed back. Found by the
  // ONNX conformance suite on Vulkan (a wrong answer before the fix).
  auto f = [](const std::vector<Tensor>& a) {
    const Tensor xt = ops::permute(a[0], {0, 2, 1});
    return std::vector<Tensor>{ops::permute(ops::matmul(xt, a[1]), {0, 2, 1}), ops::matmul(xt, a[2])};
  };
  const ir::Graph g = trace(f, {{DType::f32, {1, 10, 12}}, {DType::f32, {10, 9}}, {DType::f32, {10, 7}}});
  expect_matches(g,
                 {random_array({1, 10, 12}, 56, -1, 1, DType::f32), random_array({10, 9}, 57, -1, 1, DType::f32),
                  random_array({10, 7}, 58, -1, 1, DType::f32)},
                 1e-4);
  // The same with the matrices as f64 constants cast to f32, as the importer writes them.
  const Array c = random_array({10, 9}, 59, -1, 1, DType::f64), s = random_array({10, 9}, 60, -1, 1, DType::f64);
  auto constants = [&](const std::vector<Tensor>& a) {
    const Tensor xt = ops::permute(a[0], {0, 2, 1});
    const Tensor cf = ops::cast(Tensor::from_array(c), DType::f32), sf = ops::cast(Tensor::from_array(s), DType::f32);
    return std::vector<Tensor>{ops::permute(ops::matmul(xt, cf), {0, 2, 1}),
                               ops::permute(ops::matmul(xt, sf), {0, 2, 1}) * -1.0};
  };
  expect_matches(trace(constants, {{DType::f32, {1, 10, 12}}}), {random_array({1, 10, 12}, 61, -1, 1, DType::f32)}, 1e-4);
}

TEST(VulkanExecutable, FusedClustersOverTheShaderBindingLimitRunAsSeveralShaders) {
  // 40 inputs in one elementwise cluster: more bindings than a shader's push constants describe (30),
  // so it is generated as consecutive runs of its nodes (common::within_buffer_limit).
  std::vector<ir::TensorType> types(40, ir::TensorType{DType::f32, {16}});
  std::vector<Array> in;
  for (uint64_t i = 0; i < 40; ++i) in.push_back(random_array({16}, 70 + i, -1, 1, DType::f32));
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) {
        Tensor acc = a[0] * a[1];
        for (size_t i = 1; i + 1 < a.size(); ++i) acc = acc + ops::exp(a[i]) * a[i + 1];
        return std::vector<Tensor>{acc, ops::tanh(acc)};
      },
      types);
  expect_vulkan_matches(g, in, 1e-5);
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_GE(std::count(steps.begin(), steps.end(), '\n'), 2) << steps;
}

TEST(VulkanExecutable, CopiesOfMoreAxesThanThePushConstantsHold) {
  // A transpose of 7 axes that no two merge: the copy shader takes this copy's axes compiled in
  // (3-D convolutions' decompositions make such copies).
  const Shape shape = {2, 3, 2, 3, 2, 3, 2};
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::permute(a[0], {6, 4, 2, 0, 5, 3, 1})}; },
      {{DType::f32, shape}});
  expect_vulkan_matches(g, {random_array(shape, 90, -1, 1, DType::f32)}, 0);
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_NE(steps.find("7 axes"), std::string::npos) << steps;
}

}  // namespace
}  // namespace tessera::test
