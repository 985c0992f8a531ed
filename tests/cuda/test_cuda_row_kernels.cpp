// Row kernels on the GPU (a reduction and its result's use over the row in one kernel: RMSNorm,
// LayerNorm's second kernel, softmax) against the reference backend, over row lengths that take one
// thread (3), lanes of a warp (31 .. 1000) or a block (2048, 4097 over few rows) per row, in f32 and
// bf16; every thread of a block must take the row's result from shared memory, so a NaN in a row
// reaches all of it; repeated runs give the same bits; LayerNorm and softmax chain their second
// reduction into the first's kernel; TESSERA_FUSION=-row_kernels gives RMSNorm two kernels again;
// with TESSERA_CUDA_ROW_KERNELS=few a decode step's long rows are row kernels too.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cuda/cuda_test_util.h"
#include "tessera/backends/common/compile_options.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/ops/nn.h"
#include "tessera/ops/ops.h"

namespace tessera::test {
namespace {

std::vector<Tensor> norms_and_softmax(const std::vector<Tensor>& a) {
  const int64_t n = a[0].shape().back();
  const Tensor x = ops::cast(a[0], DType::f32);
  return {ops::rms_norm(a[0], {n}, a[1]), ops::layer_norm(a[0], {n}, a[1], a[1], 1e-5), ops::softmax(x, -1),
          ops::exp(x - ops::max(x, {-1}, true))};
}

// Row kernels are off on CUDA unless TESSERA_CUDA_ROW_KERNELS=1 (measured slower for decode).
constexpr const char* kRowKernels = "TESSERA_CUDA_ROW_KERNELS";

size_t row_kernel_steps(const ir::Graph& g) {
  const auto exe = cuda().compile(g);
  const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get());
  return cu == nullptr ? 0 : cu->program().steps.size();
}

TEST(CudaRowKernels, NormsAndSoftmaxOverRowLengthsRepeatTheirBits) {
  const ScopedEnv on(kRowKernels, "1");
  const Shape shapes[] = {{67, 3}, {67, 31}, {67, 32}, {67, 33}, {600, 256}, {5, 1000}, {1, 2048}, {3, 4097}};
  for (const Shape& shape : shapes) {
    for (DType dt : {DType::f32, DType::bf16}) {
      SCOPED_TRACE(shape_str(shape) + " " + dtype_name(dt));
      const std::vector<Array> in = {random_array(shape, 8, -3, 3, dt), random_array({shape[1]}, 9, 0.5, 1.5, dt)};
      expect_matches_reference(norms_and_softmax, in, dt == DType::bf16 ? 2e-2 : 2e-5);
      const auto exe = cuda().compile(trace(norms_and_softmax, {{dt, shape}, {dt, {shape[1]}}}));
      const std::vector<Array> first = exe->run(in);
      for (int run = 0; run < 3; ++run) {
        const std::vector<Array> again = exe->run(in);
        for (size_t i = 0; i < first.size(); ++i) {
          EXPECT_EQ(again[i].to(host_device()).to_f64(), first[i].to(host_device()).to_f64()) << "output " << i;
        }
      }
    }
  }
}

TEST(CudaRowKernels, NanOfARowReachesEveryThreadOfItsRowPhase) {
  const ScopedEnv on(kRowKernels, "1");
  for (const Shape& shape : {Shape{2, 3000}, Shape{3, 200}}) {
    SCOPED_TRACE(shape_str(shape));
    std::vector<double> v = random_array(shape, 10, -1, 1, DType::f32).to_f64();
    v[static_cast<size_t>(shape[1] + 7)] = std::numeric_limits<double>::quiet_NaN();
    const Array x = Array::from_vector(v, shape).astype(DType::f32);
    auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] - ops::max(a[0], {1}, true)}; };
    const std::vector<double> got = cuda().compile(trace(f, {{DType::f32, shape}}))->run({x})[0].to(host_device()).to_f64();
    for (int64_t j = 0; j < shape[1]; ++j) {
      EXPECT_TRUE(std::isnan(got[static_cast<size_t>(shape[1] + j)])) << j;
      EXPECT_FALSE(std::isnan(got[static_cast<size_t>(j)])) << j;
    }
  }
}

TEST(CudaRowKernels, LayerNormAndSoftmaxAreOneKernelEach) {
  const ScopedEnv on(kRowKernels, "1");
  // Their second reduction (variance, sum of exp(x - max)) is a chained walk of the first's kernel.
  auto ln = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::layer_norm(a[0], {768}, a[1], a[1], 1e-5)};
  };
  auto sm = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::softmax(a[0], -1)}; };
  EXPECT_EQ(row_kernel_steps(trace(ln, {{DType::bf16, {7, 768}}, {DType::bf16, {768}}})), 1u);
  EXPECT_EQ(row_kernel_steps(trace(sm, {{DType::f32, {12, 5, 77}}})), 1u);
}

TEST(CudaRowKernels, RmsNormIsOneKernelUnlessSwitchedOff) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::rms_norm(a[0], {2048}, a[1])}; };
  const ir::Graph g = trace(f, {{DType::bf16, {1, 2048}}, {DType::bf16, {2048}}});
  const size_t by_default = row_kernel_steps(g);
  const ScopedEnv enabled(kRowKernels, "1");
  const size_t on = row_kernel_steps(g);
  EXPECT_EQ(on, 1u);
  EXPECT_EQ(by_default, on + 1);
  namespace common = backends::common;
  const common::ScopedCompileOptions off({common::FusionSet::all().without(common::Fusion::row_kernels), {}});
  EXPECT_EQ(row_kernel_steps(g), on + 1);
}

TEST(CudaRowKernels, FewLongRowsAreOneKernelWithTheFewSetting) {
  // TESSERA_CUDA_ROW_KERNELS=few: a decode step's LayerNorm (one row of 768: a block walks it three
  // times) is one kernel and matches the reference; a prefill's 64 rows keep separate kernels.
  const ScopedEnv few(kRowKernels, "few");
  auto ln = [](const std::vector<Tensor>& a) {
    return std::vector<Tensor>{ops::layer_norm(a[0], {768}, a[1], a[2], 1e-5)};
  };
  EXPECT_EQ(row_kernel_steps(trace(ln, {{DType::f32, {1, 768}}, {DType::f32, {768}}, {DType::f32, {768}}})), 1u);
  EXPECT_GT(row_kernel_steps(trace(ln, {{DType::f32, {64, 768}}, {DType::f32, {768}}, {DType::f32, {768}}})), 1u);
  for (int64_t rows : {1, 3, 8}) {
    SCOPED_TRACE(rows);
    expect_matches_reference(ln,
                             {random_array({rows, 768}, 20 + rows, -3, 3, DType::f32),
                              random_array({768}, 21, 0.5, 1.5, DType::f32), random_array({768}, 22, -1, 1, DType::f32)},
                             2e-5);
  }
}

}  // namespace
}  // namespace tessera::test
