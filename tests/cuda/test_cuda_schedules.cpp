// The GPU loop schedules against the reference backend: reductions whose outputs are spread over
// lanes of a warp or over a whole block (shuffles, shared memory, NaN flags, every reduce kind and
// accumulator type), and elementwise kernels that move 16-byte vectors, with the scalar loop for
// rows that do not divide into vectors and for misaligned buffers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/ops/ops.h"
#include "cuda_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;


Array with_nan_at(Array a, int64_t flat) {
  std::vector<double> v = a.to_f64();
  v[static_cast<size_t>(flat)] = std::numeric_limits<double>::quiet_NaN();
  return Array::from_vector(v, a.shape()).astype(a.dtype());
}

TEST(CudaSchedules, RowReductionsOverWarpLanes) {
  // 128 and 1000 elements per row: warp-wide groups; 24: groups of 4 lanes; 3 rows past a warp's end.
  for (int64_t n : {24, 128, 1000}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    const Array x = random_array({35, n}, 7, -2, 2, DType::f32);
    expect_matches_reference(
        [](const V& a) {
          return V{ops::sum(a[0], {1}), ops::max(a[0], {1}), ops::min(a[0], {1}), ops::mean(a[0] * a[0], {1})};
        },
        {x}, 1e-5);
    expect_matches_reference([](const V& a) { return V{ops::softmax(a[0], 1)}; }, {x}, 1e-6);
  }
}

TEST(CudaSchedules, WholeTensorReductionsOverABlock) {
  const Array x = random_array({3, 4099}, 8, -1, 1, DType::f32);
  expect_matches_reference([](const V& a) { return V{ops::sum(a[0]), ops::max(a[0]), ops::min(a[0], {1})}; }, {x},
                           1e-5);
  const Array xd = random_array({20000}, 9, 0.999, 1.001, DType::f64);
  expect_matches_reference([](const V& a) { return V{ops::prod(a[0]), ops::sum(a[0])}; }, {xd}, 1e-12);
}

TEST(CudaSchedules, LongReductionsSplitOverBlocksAndStayDeterministic) {
  // A convolution's bias gradient: 32 outputs over 256 x 26 x 26 elements each.
  const Array g = random_array({256, 32, 26, 26}, 21, -1, 1, DType::f32);
  auto bias_grad = [](const V& a) { return V{ops::sum(a[0], {0, 2, 3}), ops::max(a[0], {0, 2, 3})}; };
  expect_matches_reference(bias_grad, {g}, 1e-4);
  // NaN in one block's chunk of one output; a whole-tensor product in f64.
  const Array x = with_nan_at(random_array({3, 1 << 20}, 22, -1, 1, DType::f32), (1 << 20) + 777777);
  expect_matches_reference([](const V& a) { return V{ops::max(a[0], {1}), ops::min(a[0], {1})}; }, {x}, 0);
  const Array p = random_array({1 << 19}, 23, 0.9999, 1.0001, DType::f64);
  expect_matches_reference([](const V& a) { return V{ops::prod(a[0]), ops::mean(a[0])}; }, {p}, 1e-12);
  // Repeated runs give the same bits (partials meet in block order, whichever block ends last).
  std::vector<ir::TensorType> types = {{DType::f32, g.shape()}};
  const auto exe = cuda().compile(trace(bias_grad, types));
  const std::vector<double> first = exe->run({g})[0].to(host_device()).to_f64();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(exe->run({g})[0].to(host_device()).to_f64(), first) << "run " << i;
}

TEST(CudaSchedules, MaxAndMinSeeNaNInAnyLaneOrWarp) {
  const Array x = with_nan_at(random_array({2, 5000}, 10, -1, 1, DType::f32), 4321);
  expect_matches_reference([](const V& a) { return V{ops::max(a[0], {1}), ops::min(a[0], {1})}; }, {x}, 0);
  const Array r = with_nan_at(random_array({40, 300}, 11, -1, 1, DType::f32), 300 * 17 + 5);
  expect_matches_reference([](const V& a) { return V{ops::max(a[0], {1}), ops::min(a[0])}; }, {r}, 0);
}

TEST(CudaSchedules, IntegerBoolAndHalfReductions) {
  const Array xi = random_array({17, 700}, 12, -100, 100, DType::f64).astype(DType::i32);
  expect_matches_reference([](const V& a) { return V{ops::sum(a[0], {1}), ops::max(a[0], {1})}; }, {xi}, 0);
  const Array xb = random_array({9, 513}, 13, -1, 1, DType::f64);
  expect_matches_reference(
      [](const V& a) {
        const Tensor pos = ops::gt(a[0], ops::scalar_like(a[0], 0.99));
        return V{ops::sum(ops::cast(pos, DType::i64), {1}), ops::max(ops::cast(pos, DType::u8), {1}),
                 ops::min(ops::cast(ops::logical_not(pos), DType::i8), {1})};
      },
      {xb}, 0);
  const Array xh = random_array({5, 2048}, 14, -1, 1, DType::f32).astype(DType::bf16);
  expect_matches_reference([](const V& a) { return V{ops::sum(a[0], {1}), ops::max(a[0])}; }, {xh}, 1e-2);
}

TEST(CudaSchedules, ColumnReductionsAndReductionsOverMiddleAxes) {
  const Array x = random_array({300, 7, 33}, 15, -1, 1, DType::f32);
  expect_matches_reference(
      [](const V& a) { return V{ops::sum(a[0] * 2.0, {0}), ops::max(a[0], {0, 2}), ops::mean(a[0], {1})}; }, {x},
      1e-5);
}

TEST(CudaSchedules, ElementwiseVectorsAndTheirScalarFallbacks) {
  // 1024 divides into vectors; 1023 does not; the slice starts one element in (misaligned).
  for (int64_t n : {1024, 1023}) {
    SCOPED_TRACE("row length " + std::to_string(n));
    const Array x = random_array({37, n}, 16, -1, 1, DType::f32), b = random_array({n}, 17, -1, 1, DType::f32);
    expect_matches_reference([](const V& a) { return V{ops::relu(a[0] * 3.0 + a[1]), ops::gt(a[0], a[1])}; },
                             {x, b}, 1e-6);
  }
  const Array x = random_array({64, 129}, 18, -1, 1, DType::f32);
  expect_matches_reference([](const V& a) { return V{ops::exp(ops::slice(a[0], 1, 1, 129))}; }, {x}, 1e-6);
  const Array h = random_array({4096}, 19, -1, 1, DType::f32).astype(DType::f16);
  const Array d = random_array({4096}, 20, -1, 1, DType::f64);
  expect_matches_reference([](const V& a) { return V{ops::cast(a[0], DType::f64) * a[1], ops::tanh(a[0])}; }, {h, d},
                           1e-3);
}

}  // namespace
}  // namespace tessera::test
