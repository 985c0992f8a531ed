// Generated reductions on Vulkan against the reference backend: few outputs over long rows take a
// workgroup each, medium rows a group of a workgroup's invocations, short rows one invocation
// (codegen/thread_mapping), all meeting in a shared-memory tree; sums, means, max/min with NaN, and
// products, over f32 and f16; RMSNorm as the decode graph has it; the same bits run after run, and
// the values of TESSERA_VULKAN_BLOCK_REDUCE=0 (one invocation per output). Row kernels (a reduction
// and its use over the row in one shader: RMSNorm, LayerNorm, softmax) over row lengths around the
// group widths, where every invocation of a group takes the group's result from shared memory.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/backends/vulkan/context.h"
#include "tessera/ops/nn.h"
#include "tessera/ops/ops.h"
#include "tessera/ops/reduce.h"
#include "vulkan/vulkan_test_util.h"

namespace tessera::test {
namespace {


ir::Graph row_reductions(const Shape& shape, DType dt) {
  auto f = [](const std::vector<Tensor>& a) {
    const Tensor x = ops::cast(a[0], DType::f32);
    return std::vector<Tensor>{ops::sum(x * x, {-1}), ops::mean(x, {-1}, true) + 1.0, ops::max(x, {-1}),
                               ops::min(x, {-1})};
  };
  return trace(f, {{dt, shape}});
}

struct Extent {
  Shape shape;
  const char* threads;  // what the kernel steps say about invocations a unit ("" for one)
};

TEST(VulkanReductions, EveryExtentMatchesTheReference) {
  // 1 x 2048 and 3 x 5000: a workgroup per output; 7 x 100: 16 invocations an output; 600 x 4096:
  // more than 512 outputs, 256 invocations (a workgroup) each through the lane groups; 5000 x 8: one.
  const Extent extents[] = {{{1, 2048}, "256 invocations a unit"}, {{3, 5000}, "256 invocations a unit"},
                            {{7, 100}, "16 invocations a unit"},   {{600, 4096}, "256 invocations a unit"},
                            {{5000, 8}, ""}};
  for (const Extent& e : extents) {
    for (DType dt : {DType::f32, DType::f16}) {
      if (dt == DType::f16 && !backends::vulkan::vulkan_context()->features().storage16) continue;
      SCOPED_TRACE(shape_str(e.shape) + " " + dtype_name(dt));
      const ir::Graph g = row_reductions(e.shape, dt);
      const std::string steps = vulkan_step_descriptions(g);
      if (*e.threads != 0) {
        EXPECT_NE(steps.find(e.threads), std::string::npos) << steps;
      } else {
        EXPECT_EQ(steps.find("invocations a unit"), std::string::npos) << steps;
      }
      expect_vulkan_matches(g, {random_array(e.shape, 3, -2, 2, dt)}, 1e-5);
    }
  }
}

TEST(VulkanReductions, NanWinsMaxAndMinInEveryLaneAndProductsMatch) {
  // A NaN in the first, a middle and the last element of rows reduced by a workgroup and by lanes.
  for (const Shape& shape : {Shape{2, 3000}, Shape{3, 200}}) {
    SCOPED_TRACE(shape_str(shape));
    std::vector<float> v = random_array(shape, 4, 0.9, 1.1, DType::f32).to_vector<float>();
    const int64_t cols = shape[1];
    v[0] = std::numeric_limits<float>::quiet_NaN();
    v[static_cast<size_t>(cols + cols / 2)] = std::numeric_limits<float>::quiet_NaN();
    if (shape[0] > 2) v[static_cast<size_t>(3 * cols - 1)] = std::numeric_limits<float>::quiet_NaN();
    auto f = [](const std::vector<Tensor>& a) {
      return std::vector<Tensor>{ops::max(a[0], {1}), ops::min(a[0], {1}), ops::prod(a[0], {1})};
    };
    expect_vulkan_matches(trace(f, {{DType::f32, shape}}), {Array::from_vector<float>(v, shape)}, 1e-5);
  }
}

TEST(VulkanReductions, RmsNormOfOneTokenTakesAWorkgroupAndRepeatsItsBits) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::rms_norm(a[0], {2048}, a[1])}; };
  const ir::Graph g = trace(f, {{DType::f32, {1, 2048}}, {DType::f32, {2048}}});
  EXPECT_NE(vulkan_step_descriptions(g).find("256 invocations a unit"), std::string::npos) << vulkan_step_descriptions(g);
  const std::vector<Array> in = {random_array({1, 2048}, 5, -3, 3, DType::f32), random_array({2048}, 6, 0.5, 1.5, DType::f32)};
  const std::vector<float> first = expect_vulkan_matches(g, in, 1e-5)[0].to_vector<float>();
  const auto exe = vulkan_under_test().compile(g);
  for (int run = 0; run < 3; ++run) {
    EXPECT_EQ(exe->run(in)[0].to(host_device()).to_vector<float>(), first) << "run " << run;
  }
}

// Softmax and log_softmax as the generated kernels see them (Vulkan's library kernel takes the op).
std::vector<Tensor> norms_and_softmaxes(const std::vector<Tensor>& a) {
  const Tensor x = ops::cast(a[0], DType::f32);
  const int64_t n = x.shape().back();
  const Tensor shifted = x - ops::max(x, {-1}, true);
  const Tensor e = ops::exp(shifted);
  return {ops::rms_norm(a[0], {n}, a[1]), ops::layer_norm(a[0], {n}, a[1], a[1], 1e-5), e / ops::sum(e, {-1}, true),
          shifted - ops::log(ops::sum(e, {-1}, true))};
}

size_t shader_steps(const std::string& steps) {
  size_t n = 0;
  for (size_t at = steps.find('\n'); at != std::string::npos; at = steps.find('\n', at + 1)) ++n;
  return n;
}

TEST(VulkanReductions, RowKernelsMatchOverRowLengthsAndRepeatTheirBits) {
  // One invocation per row (3, 31), lanes of a workgroup (32 .. 1000), a workgroup per row (4097).
  const Shape shapes[] = {{7, 1}, {67, 3}, {67, 31}, {67, 32}, {67, 33}, {5, 1000}, {1, 4097}, {3, 4097}, {600, 256}};
  for (const Shape& shape : shapes) {
    for (DType dt : {DType::f32, DType::f16}) {
      if (dt == DType::f16 && !backends::vulkan::vulkan_context()->features().storage16) continue;
      SCOPED_TRACE(shape_str(shape) + " " + dtype_name(dt));
      const ir::Graph g = trace(norms_and_softmaxes, {{dt, shape}, {dt, {shape[1]}}});
      const std::vector<Array> in = {random_array(shape, 8, -3, 3, dt), random_array({shape[1]}, 9, 0.5, 1.5, dt)};
      const std::vector<Array> first = expect_vulkan_matches(g, in, dt == DType::f16 ? 2e-3 : 2e-5);
      const auto exe = vulkan_under_test().compile(g);
      const std::vector<Array> again = exe->run(in);
      for (size_t i = 0; i < first.size(); ++i) {
        EXPECT_EQ(again[i].to(host_device()).to_f64(), first[i].to_f64())
            << "output " << i;
      }
    }
  }
}

TEST(VulkanReductions, NanOfARowReachesEveryInvocationOfItsRowPhase) {
  // A NaN in one row's max: every element of that row's x - max is NaN, whichever invocation of the
  // workgroup (3000) or lane group (200) computes it; the other rows stay finite.
  for (const Shape& shape : {Shape{2, 3000}, Shape{3, 200}}) {
    SCOPED_TRACE(shape_str(shape));
    std::vector<float> v = random_array(shape, 10, -1, 1, DType::f32).to_vector<float>();
    v[static_cast<size_t>(shape[1] + 7)] = std::numeric_limits<float>::quiet_NaN();
    auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] - ops::max(a[0], {1}, true)}; };
    const ir::Graph g = trace(f, {{DType::f32, shape}});
    EXPECT_EQ(shader_steps(vulkan_step_descriptions(g)), 1u) << vulkan_step_descriptions(g);
    const std::vector<float> got =
        expect_vulkan_matches(g, {Array::from_vector<float>(v, shape)}, 1e-6)[0].to_vector<float>();
    for (int64_t j = 0; j < shape[1]; ++j) {
      EXPECT_TRUE(std::isnan(got[static_cast<size_t>(shape[1] + j)])) << j;
      EXPECT_FALSE(std::isnan(got[static_cast<size_t>(j)])) << j;
    }
  }
}

TEST(VulkanReductions, NormsAndSoftmaxAreOneShaderEach) {
  // LayerNorm's variance and softmax's sum are chained walks of the first reduction's shader.
  auto rms = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::rms_norm(a[0], {2048}, a[1])}; };
  auto ln = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::layer_norm(a[0], {2048}, a[1], a[1], 1e-5)};
  };
  auto sm = [](const std::vector<Tensor>& a) {
    const Tensor e = ops::exp(a[0] - ops::max(a[0], {-1}, true));
    return std::vector<Tensor>{e / ops::sum(e, {-1}, true) * a[1]};
  };
  for (const MultiFn& f : {MultiFn(rms), MultiFn(ln), MultiFn(sm)}) {
    const ir::Graph g = trace(f, {{DType::f32, {4, 2048}}, {DType::f32, {2048}}});
    const std::string steps = vulkan_step_descriptions(g);
    EXPECT_EQ(shader_steps(steps), 1u) << steps;
  }
}

TEST(VulkanReductions, OneInvocationPerOutputWhenSwitchedOff) {
  const ScopedEnv off("TESSERA_VULKAN_BLOCK_REDUCE", "0");
  const ir::Graph g = row_reductions({2, 4096}, DType::f32);
  EXPECT_EQ(vulkan_step_descriptions(g).find("invocations a unit"), std::string::npos) << vulkan_step_descriptions(g);
  expect_vulkan_matches(g, {random_array({2, 4096}, 7, -2, 2, DType::f32)}, 1e-5);
}

}  // namespace
}  // namespace tessera::test
