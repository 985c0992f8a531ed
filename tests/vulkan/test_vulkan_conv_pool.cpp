// Convolutions on the Vulkan backend as implicit GEMMs (backends/vulkan/conv_shader.h) and 2-D max
// pooling as shaders of its own (library_ops_pool.cpp), against the reference backend: the forward
// convolution with and without bias and with fused tails, both gradients over strides, padding,
// dilation and non-square kernels, a weight gradient whose K is split over workgroups; pooling's
// windows, ties, NaN, padding and ceil mode; each one step (no im2col gathers, layout copies or
// scatters), grouped convolutions still decomposed.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/api/transforms.h"
#include "tessera/ops/ops.h"
#include "conv_pool_cases.h"
#include "vulkan_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;

int lines_containing(const std::string& steps, const std::string& text) {
  int n = 0;
  for (size_t at = 0; (at = steps.find(text, at)) != std::string::npos; at += text.size()) ++n;
  return n;
}

TEST(VulkanConv, ForwardWithBiasAndTailsMatchesTheReference) {
  uint64_t seed = 10;
  for (const ConvCase& c : conv_cases(16)) {
    SCOPED_TRACE(describe(c));
    const Array x = random_array(c.x, ++seed, -1, 1, DType::f32), w = random_array(c.w, ++seed, -0.5, 0.5, DType::f32);
    const Array b = random_array({c.w[0]}, ++seed, -1, 1, DType::f32);
    auto f = [&](const V& a) {
      const Tensor y = ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation);
      const Tensor r = ops::stop_gradient(ops::cos(y));  // laid out as y
      return V{ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation),
               ops::relu(ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation)),
               ops::gelu(ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation), /*tanh_approximation=*/true) + r,
               ops::relu(ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation) + r)};
    };
    expect_vulkan_matches(trace(f, types_of({x, w, b})), {x, w, b}, 2e-5);
  }
}

TEST(VulkanConv, BothGradientsMatchTheReference) {
  uint64_t seed = 100;
  for (const ConvCase& c : conv_cases(16)) {
    SCOPED_TRACE(describe(c));
    const Array x = random_array(c.x, ++seed, -1, 1, DType::f32), w = random_array(c.w, ++seed, -0.5, 0.5, DType::f32);
    // The sum of y * r makes r (a function of y held constant) the output gradient.
    const ScalarFn loss = [&](const V& a) {
      const Tensor y = ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation);
      return ops::sum(stop_gradient(ops::sin(y * 3.0 + 0.5)) * y);
    };
    expect_vulkan_matches(trace(grad(loss), types_of({x, w})), {x, w}, 5e-5);
  }
}

TEST(VulkanConv, EachProductIsOneStepWithItsTailAndNoIm2col) {
  const ScalarFn loss = [](const V& a) {
    const Tensor y = ops::relu(ops::conv2d(a[0], a[1], a[2], {1, 1}, {1, 1}, {1, 1}));
    return ops::sum(y * y);
  };
  const ir::Graph g = trace(grad(loss), {{DType::f32, {8, 4, 12, 12}}, {DType::f32, {6, 4, 3, 3}}, {DType::f32, {6}}});
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_EQ(lines_containing(steps, "conv n8 4->6 12x12 k3x3 s1x1 p1x1 d1x1 +bias relu (implicit gemm 6x1152x36)"), 1)
      << steps;
  EXPECT_EQ(lines_containing(steps, "conv input grad n8"), 1) << steps;
  EXPECT_EQ(lines_containing(steps, "conv weight grad n8"), 1) << steps;
  for (const char* decomposed : {"gather", "scatter", "matmul", "copy"}) {
    EXPECT_EQ(lines_containing(steps, decomposed), 0) << decomposed << " in\n" << steps;
  }
  // One grey channel over many positions: 8 x 9 weights summed over 64 x 26 x 26 positions in K splits
  // (two dispatches, one step).
  const ScalarFn first_layer = [](const V& a) { return ops::sum(ops::conv2d(a[0], a[1], {}, {1, 1}, {0, 0}, {1, 1})); };
  const std::string split = vulkan_step_descriptions(
      trace(grad(first_layer, {1}), {{DType::f32, {64, 1, 28, 28}}, {DType::f32, {8, 1, 3, 3}}}));
  EXPECT_EQ(lines_containing(split, "conv weight grad n64 1->8 28x28 k3x3 s1x1 p0x0 d1x1 (implicit gemm 8x9x43264, K in "), 1)
      << split;
}

TEST(VulkanConv, GroupedConvolutionsStillDecompose) {
  const Array x = random_array({2, 4, 8, 8}, 7, -1, 1, DType::f32), w = random_array({6, 2, 3, 3}, 8, -0.5, 0.5, DType::f32);
  const ir::Graph g = trace([](const V& a) { return V{ops::conv2d(a[0], a[1], {}, {1, 1}, {1, 1}, {1, 1}, 2)}; },
                            types_of({x, w}));
  expect_vulkan_matches(g, {x, w}, 2e-5);
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_EQ(lines_containing(steps, "implicit gemm"), 0) << steps;
}

TEST(VulkanPool, MaxPoolAndItsGradientMatchTheReferenceWithTies) {
  uint64_t seed = 300;
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(describe(c));
    const auto pool = [&](const Tensor& x) {
      return ops::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    };
    const Array x = coarse(c.x, ++seed);
    expect_vulkan_matches(trace([&](const V& a) { return V{pool(a[0])}; }, types_of({x})), {x}, 0);
    const ScalarFn loss = [&](const V& a) {
      const Tensor y = pool(a[0]);
      return ops::sum(stop_gradient(ops::sin(y * 1.7 + 0.3)) * y);
    };
    expect_vulkan_matches(trace(grad(loss), types_of({x})), {x}, 1e-6);
  }
}

TEST(VulkanPool, NaNWinsItsWindowAsInMax) {
  Array x = random_array({1, 1, 4, 4}, 9, -1, 1, DType::f32);
  x.data<float>()[5] = std::nanf("");  // row 1, column 1: the window of output (0, 0)
  const ScalarFn loss = [](const V& a) { return ops::sum(ops::max_pool2d(a[0], {2, 2}, {2, 2})); };
  const Array dx = vulkan_under_test().compile(trace(grad(loss), types_of({x})))->run({x})[0].to(host_device());
  for (int64_t i : {0, 1, 4}) {
    EXPECT_EQ(dx.data<float>()[i], 0.f) << i;
  }
  EXPECT_EQ(dx.data<float>()[5], 1.f);
  const auto pool = [](const V& a) { return V{ops::max_pool2d(a[0], {2, 2}, {2, 2})}; };
  const Array y = vulkan_under_test().compile(trace(pool, types_of({x})))->run({x})[0].to(host_device());
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
}

TEST(VulkanPool, PoolingAndItsGradientAreOneStepEach) {
  const auto loss_of = [](std::array<int64_t, 2> kernel, std::array<int64_t, 2> padding) -> ScalarFn {
    return [=](const V& a) {
      const Tensor y = ops::max_pool2d(a[0], kernel, {2, 2}, padding);
      return ops::sum(y * y);
    };
  };
  const std::string cells = vulkan_step_descriptions(trace(grad(loss_of({2, 2}, {0, 0})), {{DType::f32, {4, 8, 12, 12}}}));
  EXPECT_EQ(lines_containing(cells, "vulkan max_pool f32 32 planes 12x12 -> 6x6 k2x2 s2x2"), 1) << cells;
  EXPECT_EQ(lines_containing(cells, "vulkan max_pool_grad f32 32 planes 12x12 -> 6x6 k2x2 s2x2 (cells)"), 1) << cells;
  // Overlapping windows: the gradient gathers per input element.
  const std::string gather = vulkan_step_descriptions(trace(grad(loss_of({3, 3}, {1, 1})), {{DType::f32, {4, 8, 12, 12}}}));
  EXPECT_EQ(lines_containing(gather, "vulkan max_pool f32 32 planes 12x12 -> 6x6 k3x3 s2x2"), 1) << gather;
  EXPECT_EQ(lines_containing(gather, "vulkan max_pool_grad f32 32 planes 12x12 -> 6x6 k3x3 s2x2"), 1) << gather;
  EXPECT_EQ(lines_containing(gather, "(cells)"), 0) << gather;
  for (const std::string& steps : {cells, gather}) {
    EXPECT_EQ(lines_containing(steps, "gather ["), 0) << steps;
    EXPECT_EQ(lines_containing(steps, "scatter"), 0) << steps;
  }
}

}  // namespace
}  // namespace tessera::test
