// cuBLASLt products against the reference backend: fused tails (bias, ReLU, tanh-GELU, residual)
// and thin shapes, whose algorithm the autotuner picks by timing the heuristic's candidates, both
// measured once, then remembered.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/ops/ops.h"
#include "cuda_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;


// How many cuBLASLt steps the compiled graph has (a fused tail adds none).
int gemm_steps(const std::function<V(const V&)>& fn, const std::vector<ir::TensorType>& types) {
  const auto exe = cuda().compile(trace(fn, types));
  const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get());
  if (cu == nullptr) return -1;
  int n = 0;
  for (const auto& s : cu->program().steps) n += s->describe().rfind("cublasLt", 0) == 0;
  return n;
}

TEST(CudaGemm, BiasActivationAndResidualTailsFuseIntoTheProduct) {
  const Array x = random_array({64, 96}, 1, -1, 1, DType::f32), w = random_array({128, 96}, 2, -0.2, 0.2, DType::f32);
  const Array b = random_array({128}, 3, -0.5, 0.5, DType::f32), r = random_array({64, 128}, 4, -1, 1, DType::f32);
  auto relu_tail = [](const V& a) { return V{ops::relu(ops::matmul(a[0], ops::transpose(a[1], 0, 1)) + a[2])}; };
  auto gelu_tail = [](const V& a) {
    return V{ops::gelu(ops::matmul(a[0], ops::transpose(a[1], 0, 1)) + a[2], /*tanh_approximation=*/true)};
  };
  auto residual_tail = [](const V& a) { return V{ops::matmul(a[0], ops::transpose(a[1], 0, 1)) + a[2] + a[3]}; };
  auto residual_after_relu = [](const V& a) {
    return V{ops::relu(ops::matmul(a[0], ops::transpose(a[1], 0, 1)) + a[2]) + a[3]};
  };
  expect_matches_reference(relu_tail, {x, w, b}, 1e-5);
  expect_matches_reference(gelu_tail, {x, w, b}, 1e-5);
  expect_matches_reference(residual_tail, {x, w, b, r}, 1e-5);
  expect_matches_reference(residual_after_relu, {x, w, b, r}, 1e-5);
  const std::vector<ir::TensorType> t3 = {{DType::f32, {64, 96}}, {DType::f32, {128, 96}}, {DType::f32, {128}}};
  EXPECT_EQ(gemm_steps(relu_tail, t3), 1);
}

TEST(CudaGemm, ThinProductsMatchWhicheverAlgorithmWins) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera-gemm-autotune-" + std::to_string(::getpid()));
  ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  for (int pass = 0; pass < 2; ++pass) {  // measured, then the remembered choice
    SCOPED_TRACE(pass == 0 ? "measured" : "remembered");
    const Array x = random_array({4096, 256}, 5, -1, 1, DType::f32), w = random_array({10, 256}, 6, -1, 1, DType::f32);
    expect_matches_reference([](const V& a) { return V{ops::matmul(a[0], ops::transpose(a[1], 0, 1))}; }, {x, w},
                             1e-4);
    const Array p = random_array({256, 1600}, 7, -1, 1, DType::f32), q = random_array({128, 1600}, 8, -1, 1, DType::f32);
    expect_matches_reference([](const V& a) { return V{ops::matmul(a[0], ops::transpose(a[1], 0, 1))}; }, {p, q},
                             1e-3);
  }
  std::filesystem::remove_all(dir);
  ::unsetenv("TESSERA_CACHE_DIR");
}

}  // namespace
}  // namespace tessera::test
