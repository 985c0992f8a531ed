// Convolutions on the Vulkan backend as implicit GEMMs (backends/vulkan/conv_shader.h), against the
// reference backend: the forward pass with and without bias and with fused tails, both gradients over
// strides, padding, dilation and non-square kernels, a weight gradient whose K is split over workgroups;
// each product one step (no im2col gathers, layout copies or scatters), grouped convolutions still
// decomposed.
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/api/transforms.h"
#include "tessera/ops/ops.h"
#include "vulkan_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;

struct ConvCase {
  Shape x, w;
  std::array<int64_t, 2> stride, padding, dilation;
};

std::vector<ConvCase> cases() {
  return {
      {{2, 3, 9, 11}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}},
      {{3, 5, 12, 10}, {7, 5, 3, 2}, {2, 1}, {1, 0}, {1, 2}},
      {{1, 8, 16, 16}, {16, 8, 5, 5}, {2, 2}, {2, 2}, {1, 1}},
      {{2, 4, 7, 7}, {3, 4, 1, 1}, {1, 1}, {0, 0}, {1, 1}},
      {{4, 2, 13, 13}, {6, 2, 3, 3}, {3, 2}, {1, 1}, {2, 1}},
      // A long reduction into few weights: the weight gradient splits K over workgroups.
      {{16, 1, 28, 28}, {8, 1, 3, 3}, {1, 1}, {0, 0}, {1, 1}},
  };
}

std::string describe(const ConvCase& c) {
  return fmt::format("x {} w {} stride {}x{} padding {}x{} dilation {}x{}", shape_str(c.x), shape_str(c.w), c.stride[0],
                     c.stride[1], c.padding[0], c.padding[1], c.dilation[0], c.dilation[1]);
}

std::vector<ir::TensorType> f32_types(const std::vector<Array>& in) {
  std::vector<ir::TensorType> types;
  for (const Array& a : in) types.push_back({DType::f32, a.shape()});
  return types;
}

int lines_containing(const std::string& steps, const std::string& text) {
  int n = 0;
  for (size_t at = 0; (at = steps.find(text, at)) != std::string::npos; at += text.size()) ++n;
  return n;
}

TEST(VulkanConv, ForwardWithBiasAndTailsMatchesTheReference) {
  uint64_t seed = 10;
  for (const ConvCase& c : cases()) {
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
    expect_vulkan_matches(trace(f, f32_types({x, w, b})), {x, w, b}, 2e-5);
  }
}

TEST(VulkanConv, BothGradientsMatchTheReference) {
  uint64_t seed = 100;
  for (const ConvCase& c : cases()) {
    SCOPED_TRACE(describe(c));
    const Array x = random_array(c.x, ++seed, -1, 1, DType::f32), w = random_array(c.w, ++seed, -0.5, 0.5, DType::f32);
    // The sum of y * r makes r (a function of y held constant) the output gradient.
    const ScalarFn loss = [&](const V& a) {
      const Tensor y = ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation);
      return ops::sum(stop_gradient(ops::sin(y * 3.0 + 0.5)) * y);
    };
    expect_vulkan_matches(trace(grad(loss), f32_types({x, w})), {x, w}, 5e-5);
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
                            f32_types({x, w}));
  expect_vulkan_matches(g, {x, w}, 2e-5);
  const std::string steps = vulkan_step_descriptions(g);
  EXPECT_EQ(lines_containing(steps, "implicit gemm"), 0) << steps;
}

}  // namespace
}  // namespace tessera::test
