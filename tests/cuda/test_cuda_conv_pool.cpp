// Convolutions on the CUDA backend as implicit GEMMs (backends/cuda/conv_gemm.h) and 2-D max pooling
// as its own kernels (library_ops_pool.cpp), against the reference backend: the convolution's forward
// pass with and without bias and both gradients over strides, padding, dilation, non-square kernels
// and K split over the GPU, on each of the product kernels (SIMT tiles, 3xTF32 tensor-core tiles, and
// the rule's choice, which gives one-channel convolutions the short-K and narrow kernels) and in the
// explicit im2col form (the rule's for many channels on both sides); pooling's
// windows, ties, NaN and padding; and that each runs as one step instead of im2col copies and scatters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "tessera/api/transforms.h"
#include "tessera/backends/cuda/conv_im2col.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/backends/cuda/simt_gemm.h"
#include "tessera/ops/ops.h"
#include "conv_pool_cases.h"
#include "cuda_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;
using backends::cuda::SimtKernel;

// Runs `body` once under each product kernel (simt_gemm.h) and once with every convolution in the
// explicit form (conv_im2col.h), with the choice in the trace.
void for_each_product_kernel(const std::function<void()>& body) {
  for (const auto& [choice, name] :
       {std::pair{SimtKernel::simt, "SIMT tiles"}, std::pair{SimtKernel::mma, "3xTF32 tensor-core tiles"},
        std::pair{SimtKernel::automatic, "the rule"}}) {
    SCOPED_TRACE(name);
    backends::cuda::set_simt_kernel(choice);
    body();
  }
  backends::cuda::set_simt_kernel(SimtKernel::automatic);
  SCOPED_TRACE("explicit im2col and a cuBLASLt product");
  backends::cuda::set_conv_im2col(1);
  body();
  backends::cuda::set_conv_im2col(-1);
}

// The compiled graph's step descriptions.
std::vector<std::string> steps_of(const std::function<V(const V&)>& fn, const std::vector<ir::TensorType>& types) {
  const auto exe = cuda().compile(trace(fn, types));
  const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get());
  std::vector<std::string> out;
  if (cu != nullptr) {
    for (const auto& s : cu->program().steps) out.push_back(s->describe());
  }
  return out;
}

int count_containing(const std::vector<std::string>& steps, const std::string& text) {
  int n = 0;
  for (const std::string& s : steps) n += s.find(text) != std::string::npos ? 1 : 0;
  return n;
}

TEST(CudaConv, ForwardWithAndWithoutBiasMatchesTheReference) {
  for_each_product_kernel([] {
    uint64_t seed = 10;
    for (const ConvCase& c : conv_cases(64)) {
      SCOPED_TRACE(describe(c));
      const Array x = random_array(c.x, ++seed, -1, 1, DType::f32),
                  w = random_array(c.w, ++seed, -0.5, 0.5, DType::f32);
      const Array b = random_array({c.w[0]}, ++seed, -1, 1, DType::f32);
      expect_matches_reference(
          [&](const V& a) { return V{ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation)}; }, {x, w, b},
          2e-5);
      expect_matches_reference(
          [&](const V& a) { return V{ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation)}; }, {x, w}, 2e-5);
      // Tails fused into the product: ReLU, a residual then ReLU, tanh-GELU.
      auto tails = [&](const V& a) {
        const Tensor y = ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation);
        const Tensor r = ops::stop_gradient(ops::cos(y));  // laid out as y
        return V{
            ops::relu(ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation)),
            ops::relu(ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation) + r),
            ops::gelu(ops::conv2d(a[0], a[1], a[2], c.stride, c.padding, c.dilation), /*tanh_approximation=*/true)};
      };
      expect_matches_reference(tails, {x, w, b}, 2e-5);
    }
  });
}

TEST(CudaConv, ReluAndResidualTailsFuseIntoTheProduct) {
  // The CUDA limits (activation(v + bias + residual) with one of them) take either tail alone.
  auto relu = [](const V& a) { return V{ops::relu(ops::conv2d(a[0], a[1], a[2], {1, 1}, {1, 1}, {1, 1}))}; };
  auto residual = [](const V& a) { return V{ops::conv2d(a[0], a[1], a[2], {1, 1}, {1, 1}, {1, 1}) + a[3]}; };
  const std::vector<ir::TensorType> types = {
      {DType::f32, {2, 3, 8, 8}}, {DType::f32, {4, 3, 3, 3}}, {DType::f32, {4}}, {DType::f32, {2, 4, 8, 8}}};
  for (const auto& [fn, tail] : {std::pair{std::function<V(const V&)>(relu), std::string("+bias relu")},
                                 std::pair{std::function<V(const V&)>(residual), std::string("+bias +residual")}}) {
    const std::vector<std::string> steps = steps_of(fn, types);
    EXPECT_EQ(steps.size(), 1u) << fmt::format("{}", fmt::join(steps, "\n"));
    EXPECT_EQ(count_containing(steps, tail), 1) << fmt::format("{}", fmt::join(steps, "\n"));
  }
}

TEST(CudaConv, BothGradientsMatchTheReference) {
  for_each_product_kernel([] {
    uint64_t seed = 100;
    for (const ConvCase& c : conv_cases(64)) {
      SCOPED_TRACE(describe(c));
      const Array x = random_array(c.x, ++seed, -1, 1, DType::f32),
                  w = random_array(c.w, ++seed, -0.5, 0.5, DType::f32);
      // The sum of y * r makes r (a function of y held constant) the output gradient.
      const ScalarFn loss = [&](const V& a) {
        const Tensor y = ops::conv2d(a[0], a[1], {}, c.stride, c.padding, c.dilation);
        return ops::sum(stop_gradient(ops::sin(y * 3.0 + 0.5)) * y);
      };
      expect_matches_reference(grad(loss), {x, w}, 5e-5);
    }
  });
}

TEST(CudaConv, OneChannelConvolutionsTakeTheShortKAndNarrowKernels) {
  // The first layer of a CNN on grey images: 9 taps per output (a thread per output position computes
  // every channel), and a weight gradient of 8 x 9 over 43,264 positions (sums in registers per thread).
  const ScalarFn loss = [](const V& a) {
    return ops::sum(ops::relu(ops::conv2d(a[0], a[1], a[2], {1, 1}, {0, 0}, {1, 1})));
  };
  const std::vector<std::string> steps =
      steps_of(grad(loss), {{DType::f32, {64, 1, 28, 28}}, {DType::f32, {8, 1, 3, 3}}, {DType::f32, {8}}});
  EXPECT_EQ(count_containing(steps, "thread per column"), 1) << fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "narrow"), 1) << fmt::format("{}", fmt::join(steps, "\n"));
}

TEST(CudaConv, EachConvolutionIsOneProductStepWithoutIm2col) {
  const ScalarFn loss = [](const V& a) {
    const Tensor y = ops::relu(ops::conv2d(a[0], a[1], a[2], {1, 1}, {1, 1}, {1, 1}));
    return ops::sum(y * y);
  };
  const MultiFn step = grad(loss);
  const std::vector<ir::TensorType> types = {
      {DType::f32, {8, 4, 12, 12}}, {DType::f32, {6, 4, 3, 3}}, {DType::f32, {6}}};
  const std::vector<std::string> steps = steps_of(step, types);
  EXPECT_EQ(count_containing(steps, "implicit gemm conv n8"), 1) << fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "implicit gemm conv input grad"), 1) << fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "implicit gemm conv weight grad"), 1) << fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "cublasLt"), 0) << fmt::format("{}", fmt::join(steps, "\n"));
}

TEST(CudaConv, ManyChannelConvolutionsTakeTheExplicitIm2col) {
  // 32 -> 64 channels of 3x3: every side of each product is at least 32, so the forward pass and the
  // input gradient run as im2col and a cuBLASLt product, each still one step; the weight gradient stays
  // implicit (cheaper there).
  const ScalarFn loss = [](const V& a) {
    const Tensor y = ops::relu(ops::conv2d(a[0], a[1], a[2], {1, 1}, {0, 0}, {1, 1}));
    return ops::sum(y * y);
  };
  const std::vector<ir::TensorType> types = {
      {DType::f32, {4, 32, 13, 13}}, {DType::f32, {64, 32, 3, 3}}, {DType::f32, {64}}};
  const std::vector<std::string> steps = steps_of(grad(loss), types);
  const std::string all = fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "im2col conv n4 32->64"), 1) << all;
  EXPECT_EQ(count_containing(steps, "im2col conv input grad"), 1) << all;
  EXPECT_EQ(count_containing(steps, "implicit gemm conv weight grad"), 1) << all;
  const Array x = random_array({4, 32, 13, 13}, 31, -1, 1, DType::f32),
              w = random_array({64, 32, 3, 3}, 32, -0.2, 0.2, DType::f32), b = random_array({64}, 33, -1, 1, DType::f32);
  expect_matches_reference(grad(loss), {x, w, b}, 5e-5);
}

TEST(CudaConv, GroupedAndHalfConvolutionsStillDecompose) {
  // Not claimed by the implicit GEMM: they run as im2col and products, and stay right.
  const Array x = random_array({2, 4, 8, 8}, 7, -1, 1, DType::f32),
              w = random_array({6, 2, 3, 3}, 8, -0.5, 0.5, DType::f32);
  expect_matches_reference(
      [](const V& a) {
        return V{ops::conv2d(a[0], a[1], {}, {1, 1}, {1, 1}, {1, 1}, 2)};
      },
      {x, w}, 2e-5);
  const std::vector<std::string> steps = steps_of(
      [](const V& a) {
        return V{ops::conv2d(a[0], a[1], {}, {1, 1}, {1, 1}, {1, 1}, 2)};
      },
      {{DType::f32, {2, 4, 8, 8}}, {DType::f32, {6, 2, 3, 3}}});
  EXPECT_EQ(count_containing(steps, "implicit gemm"), 0) << fmt::format("{}", fmt::join(steps, "\n"));
}

TEST(CudaPool, MaxPoolAndItsGradientMatchTheReferenceWithTies) {
  uint64_t seed = 300;
  for (const PoolCase& c : pool_cases()) {
    SCOPED_TRACE(describe(c));
    const auto pool = [&](const Tensor& x) {
      return ops::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
    };
    const Array x = coarse(c.x, ++seed);
    expect_matches_reference([&](const V& a) { return V{pool(a[0])}; }, {x}, 0);
    const ScalarFn loss = [&](const V& a) {
      const Tensor y = pool(a[0]);
      return ops::sum(stop_gradient(ops::sin(y * 1.7 + 0.3)) * y);
    };
    expect_matches_reference(grad(loss), {x}, 1e-6);
  }
}

TEST(CudaPool, NaNWinsItsWindowAsInMax) {
  Array x = random_array({1, 1, 4, 4}, 9, -1, 1, DType::f32);
  x.data<float>()[5] = std::nanf("");  // row 1, column 1: the window of output (0, 0)
  const ScalarFn loss = [](const V& a) { return ops::sum(ops::max_pool2d(a[0], {2, 2}, {2, 2})); };
  const auto got = cuda().compile(trace(grad(loss), {{DType::f32, {1, 1, 4, 4}}}))->run({x});
  const Array dx = got[0].to(host_device());
  for (int64_t i : {0, 1, 4}) {
    EXPECT_EQ(dx.data<float>()[i], 0.f) << i;
  }
  EXPECT_EQ(dx.data<float>()[5], 1.f);
  const auto y = cuda()
                     .compile(trace(
                         [](const V& a) {
                           return V{ops::max_pool2d(a[0], {2, 2}, {2, 2})};
                         },
                         {{DType::f32, {1, 1, 4, 4}}}))
                     ->run({x});
  EXPECT_TRUE(std::isnan(y[0].to(host_device()).data<float>()[0]));
}

TEST(CudaPool, PoolingRunsAsOneStepEach) {
  const ScalarFn loss = [](const V& a) { return ops::sum(ops::max_pool2d(a[0], {2, 2}, {2, 2})); };
  const std::vector<std::string> steps = steps_of(grad(loss), {{DType::f32, {4, 8, 12, 12}}});
  EXPECT_EQ(count_containing(steps, "cuda max_pool_grad f32"), 1) << fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "gather"), 0) << fmt::format("{}", fmt::join(steps, "\n"));
  EXPECT_EQ(count_containing(steps, "scatter"), 0) << fmt::format("{}", fmt::join(steps, "\n"));
}

}  // namespace
}  // namespace tessera::test
