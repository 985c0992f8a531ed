// Products against the reference backend: cuBLASLt's fused tails (bias, ReLU, tanh-GELU, residual)
// and thin shapes, whose algorithm the autotuner picks by timing the heuristic's candidates, both
// measured once, then remembered; and the SIMT kernel of few-row f32 products (simt_gemm.h), split
// over K or not, in every operand layout.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "tessera/api/transforms.h"
#include "tessera/backends/backend.h"
#include "tessera/backends/cuda/executable.h"
#include "tessera/backends/cuda/simt_gemm.h"
#include "tessera/ops/ops.h"
#include "cuda_test_util.h"

namespace tessera::test {
namespace {

using V = std::vector<Tensor>;

// The descriptions of the compiled graph's steps that start with `prefix`.
std::vector<std::string> steps_named(const std::function<V(const V&)>& fn, const std::vector<ir::TensorType>& types,
                                     const std::string& prefix) {
  const auto exe = cuda().compile(trace(fn, types));
  const auto* cu = dynamic_cast<const backends::cuda::CudaExecutable*>(exe.get());
  std::vector<std::string> named;
  if (cu == nullptr) return named;
  for (const auto& s : cu->program().steps) {
    if (s->describe().rfind(prefix, 0) == 0) named.push_back(s->describe());
  }
  return named;
}

// How many product steps the compiled graph has (a fused tail adds none).
int gemm_steps(const std::function<V(const V&)>& fn, const std::vector<ir::TensorType>& types) {
  return static_cast<int>(steps_named(fn, types, "cublasLt").size() + steps_named(fn, types, "f32 simt gemm").size());
}

// Forces the SIMT kernel (1), cuBLASLt (0) or the rule (-1) for the scope.
struct SimtGemmMode {
  explicit SimtGemmMode(int mode) { backends::cuda::set_simt_gemm(mode); }
  ~SimtGemmMode() { backends::cuda::set_simt_gemm(-1); }
};

// Forces one of the SIMT path's kernels (simt_gemm.h) for the scope.
struct SimtKernelChoice {
  explicit SimtKernelChoice(backends::cuda::SimtKernel choice) { backends::cuda::set_simt_kernel(choice); }
  ~SimtKernelChoice() { backends::cuda::set_simt_kernel(backends::cuda::SimtKernel::automatic); }
};

const char* kernel_name(backends::cuda::SimtKernel choice) {
  switch (choice) {
    case backends::cuda::SimtKernel::simt:
      return "SIMT tiles";
    case backends::cuda::SimtKernel::mma:
      return "3xTF32 tensor-core tiles";
    case backends::cuda::SimtKernel::automatic:
      return "the rule (short-K and narrow kernels where they suit)";
  }
  return "";
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
    expect_matches_reference([](const V& a) { return V{ops::matmul(a[0], ops::transpose(a[1], 0, 1))}; }, {x, w}, 1e-4);
    const Array p = random_array({256, 1600}, 7, -1, 1, DType::f32),
                q = random_array({128, 1600}, 8, -1, 1, DType::f32);
    expect_matches_reference([](const V& a) { return V{ops::matmul(a[0], ops::transpose(a[1], 0, 1))}; }, {p, q}, 1e-3);
  }
  std::filesystem::remove_all(dir);
  ::unsetenv("TESSERA_CACHE_DIR");
}

TEST(CudaGemm, SimtProductsMatchInEveryLayoutSplitOrNot) {
  SimtGemmMode forced(1);
  struct Case {
    int64_t m, n, k;
  };
  // Ragged edges of the 64 x 64 (32 x 64) tiles and the 16- (32-) value K slices; long K splits, short K
  // does not; a very long K splits over several waves and adds its partials a warp per output. Under the
  // rule, 24x20000x9 takes the short-K kernel and 6x9x40000 and 20x16x9000 the narrow one.
  for (const auto choice :
       {backends::cuda::SimtKernel::simt, backends::cuda::SimtKernel::mma, backends::cuda::SimtKernel::automatic}) {
    SCOPED_TRACE(kernel_name(choice));
    SimtKernelChoice kernel(choice);
    for (const Case c : {Case{64, 1024, 784}, Case{70, 100, 50}, Case{5, 3, 1000}, Case{130, 65, 17}, Case{784, 96, 64},
                         Case{33, 40, 300}, Case{6, 9, 40000}, Case{24, 20000, 9}, Case{20, 16, 9000}}) {
      SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
      const double tol = 2e-5 * static_cast<double>(c.k);
      const Array x = random_array({c.m, c.k}, 11, -1, 1, DType::f32),
                  w = random_array({c.n, c.k}, 12, -1, 1, DType::f32);
      const Array xt = random_array({c.k, c.m}, 13, -1, 1, DType::f32),
                  wt = random_array({c.k, c.n}, 14, -1, 1, DType::f32);
      const Array b = random_array({c.n}, 15, -1, 1, DType::f32), r = random_array({c.m, c.n}, 16, -1, 1, DType::f32);
      auto plain = [](const V& a) { return V{ops::matmul(a[0], a[1])}; };
      auto b_transposed = [](const V& a) { return V{ops::matmul(a[0], ops::transpose(a[1], 0, 1))}; };
      auto a_transposed = [](const V& a) { return V{ops::matmul(ops::transpose(a[0], 0, 1), a[1])}; };
      auto both = [](const V& a) { return V{ops::matmul(ops::transpose(a[0], 0, 1), ops::transpose(a[1], 0, 1))}; };
      expect_matches_reference(plain, {x, wt}, tol);
      expect_matches_reference(b_transposed, {x, w}, tol);
      expect_matches_reference(a_transposed, {xt, wt}, tol);
      expect_matches_reference(both, {xt, w}, tol);
      auto relu_tail = [](const V& a) { return V{ops::relu(ops::matmul(a[0], a[1]) + a[2])}; };
      auto gelu_tail = [](const V& a) {
        return V{ops::gelu(ops::matmul(a[0], a[1]) + a[2], /*tanh_approximation=*/true)};
      };
      auto residual_tail = [](const V& a) { return V{ops::matmul(a[0], a[1]) + a[2] + a[3]}; };
      expect_matches_reference(relu_tail, {x, wt, b}, tol);
      expect_matches_reference(gelu_tail, {x, wt, b}, tol);
      expect_matches_reference(residual_tail, {x, wt, b, r}, tol);
      const std::vector<ir::TensorType> types = {
          {DType::f32, {c.m, c.k}}, {DType::f32, {c.k, c.n}}, {DType::f32, {c.n}}};
      const auto named = steps_named(relu_tail, types, "f32 simt gemm");
      EXPECT_EQ(named.size(), 1u) << "the tail fuses into the SIMT product";
      if (named.size() == 1 && choice == backends::cuda::SimtKernel::mma) {
        EXPECT_NE(named[0].find("3xtf32 tensor cores"), std::string::npos) << named[0];
      }
      if (named.size() == 1 && choice == backends::cuda::SimtKernel::automatic && c.k == 9) {
        EXPECT_NE(named[0].find("thread per column"), std::string::npos) << named[0];
      }
      if (named.size() == 1 && choice == backends::cuda::SimtKernel::automatic && c.n <= 16 && c.k >= 9000) {
        EXPECT_NE(named[0].find("narrow"), std::string::npos) << named[0];
      }
    }
  }
}

TEST(CudaGemm, SimtProductsSplitOverKAreDeterministic) {
  SimtGemmMode forced(1);
  const Array x = random_array({64, 2048}, 21, -1, 1, DType::f32), w = random_array({2048, 256}, 22, -1, 1, DType::f32);
  auto fn = [](const V& a) { return V{ops::matmul(a[0], a[1])}; };
  const ir::Graph g = trace(fn, {{DType::f32, {64, 2048}}, {DType::f32, {2048, 256}}});
  const auto exe = cuda().compile(g);
  const auto named = steps_named(fn, {{DType::f32, {64, 2048}}, {DType::f32, {2048, 256}}}, "f32 simt gemm");
  ASSERT_EQ(named.size(), 1u);
  EXPECT_NE(named[0].find(" split "), std::string::npos) << named[0];
  const Array first = exe->run({x, w})[0].to(host_device()), second = exe->run({x, w})[0].to(host_device());
  EXPECT_TRUE(same_bytes(first, second)) << "the partial sums are added in a fixed order";
  // Many splits (a long K over several waves) are added by a warp per output, also in a fixed order.
  const Array xl = random_array({16, 60000}, 23, -1, 1, DType::f32),
              wl = random_array({60000, 9}, 24, -1, 1, DType::f32);
  const auto long_k = cuda().compile(trace(fn, {{DType::f32, {16, 60000}}, {DType::f32, {60000, 9}}}));
  const Array l1 = long_k->run({xl, wl})[0].to(host_device()), l2 = long_k->run({xl, wl})[0].to(host_device());
  EXPECT_TRUE(same_bytes(l1, l2));
  // A few splits are added inside a thread-block cluster (sm_90), in split order too.
  const auto types_784 = std::vector<ir::TensorType>{{DType::f32, {64, 784}}, {DType::f32, {784, 1024}}};
  const auto clustered = steps_named(fn, types_784, "f32 simt gemm");
  ASSERT_EQ(clustered.size(), 1u);
  EXPECT_NE(clustered[0].find(" in a cluster"), std::string::npos) << clustered[0];
  const Array xc = random_array({64, 784}, 25, -1, 1, DType::f32), wc = random_array({784, 1024}, 26, -1, 1, DType::f32);
  const auto in_cluster = cuda().compile(trace(fn, types_784));
  EXPECT_TRUE(same_bytes(in_cluster->run({xc, wc})[0].to(host_device()), in_cluster->run({xc, wc})[0].to(host_device())));
  // The tensor-core tiles split the same way; the narrow kernel (the rule's for 16x9x60000) adds its
  // threads' sums and then its splits in fixed orders.
  for (const auto choice : {backends::cuda::SimtKernel::mma, backends::cuda::SimtKernel::automatic}) {
    SCOPED_TRACE(kernel_name(choice));
    SimtKernelChoice kernel(choice);
    const auto again = cuda().compile(g);
    EXPECT_TRUE(same_bytes(again->run({x, w})[0].to(host_device()), again->run({x, w})[0].to(host_device())));
    const auto narrow = cuda().compile(trace(fn, {{DType::f32, {16, 60000}}, {DType::f32, {60000, 9}}}));
    EXPECT_TRUE(same_bytes(narrow->run({xl, wl})[0].to(host_device()), narrow->run({xl, wl})[0].to(host_device())));
  }
}

TEST(CudaGemm, AProductWhoseOnlyUseIsItsTransposeIsComputedTransposed) {
  // A weight gradient x^T dy laid out as the weight [out, in]: SIMT (short K), cuBLASLt (large) and batched.
  auto fn = [](const V& a) { return V{ops::transpose(ops::matmul(ops::transpose(a[0], -1, -2), a[1]), -1, -2)}; };
  for (const Shape& x_shape : {Shape{64, 784}, Shape{512, 384}, Shape{3, 40, 24}}) {
    Shape y_shape = x_shape;
    y_shape.back() = 96;
    SCOPED_TRACE(::testing::PrintToString(x_shape));
    const Array x = random_array(x_shape, 31, -1, 1, DType::f32), y = random_array(y_shape, 32, -1, 1, DType::f32);
    expect_matches_reference(fn, {x, y}, 2e-5 * static_cast<double>(x_shape[x_shape.size() - 2]));
    const std::vector<ir::TensorType> types = {{DType::f32, x_shape}, {DType::f32, y_shape}};
    EXPECT_EQ(gemm_steps(fn, types), 1);
    EXPECT_TRUE(steps_named(fn, types, "cuda copy").empty()) << "no copy of the product into its transpose";
  }
}

TEST(CudaGemm, TheRuleTakesTheSimtKernelForFewRowsOnly) {
  SimtGemmMode rule(-1);
  auto fn = [](const V& a) { return V{ops::matmul(a[0], a[1])}; };
  EXPECT_EQ(steps_named(fn, {{DType::f32, {64, 784}}, {DType::f32, {784, 1024}}}, "f32 simt gemm").size(), 1u);
  EXPECT_EQ(steps_named(fn, {{DType::f32, {2048, 2048}}, {DType::f32, {2048, 2048}}}, "cublasLt").size(), 1u);
  EXPECT_EQ(steps_named(fn, {{DType::f16, {64, 784}}, {DType::f16, {784, 1024}}}, "cublasLt").size(), 1u);
  SimtGemmMode never(0);
  EXPECT_EQ(steps_named(fn, {{DType::f32, {64, 784}}, {DType::f32, {784, 1024}}}, "cublasLt").size(), 1u);
}

}  // namespace
}  // namespace tessera::test
