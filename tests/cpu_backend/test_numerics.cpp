// Numerics the CPU backend must get as right as the reference: reductions accumulate in double, so
// layer_norm of a constant row is exactly 0 (its mean is exact) and a mean of huge values does not
// overflow on the way.
#include "cpu_test_util.h"

namespace tessera::test {
namespace {

using backends::cpu::JitMode;

std::vector<Array> run_on(backends::Backend& b, const MultiFn& f, const std::vector<Array>& inputs) {
  std::vector<ir::TensorType> types;
  for (const Array& a : inputs) types.push_back({a.dtype(), a.shape()});
  return b.compile(trace(f, types))->run(inputs);
}

TEST(CpuNumerics, LayerNormOfAConstantRowIsZero) {
  for (int64_t n : {1000, 4096}) {
    const Array x = Array::full(DType::f32, {2, n}, 3000.3);
    const MultiFn f = [n](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::layer_norm(a[0], {n})}; };
    for (JitMode jit : {JitMode::off, JitMode::always}) {
      ScopedJit scoped(jit);
      const std::vector<float> got = run_on(backends::cpu_backend(), f, {x})[0].to_vector<float>();
      const std::vector<float> want = run_on(backends::reference_backend(), f, {x})[0].to_vector<float>();
      EXPECT_EQ(got, want) << "n = " << n << (jit == JitMode::off ? ", no jit" : ", jit");
      for (float v : got) ASSERT_EQ(v, 0.0f) << "n = " << n;
    }
  }
}

TEST(CpuNumerics, MeansOfHugeValuesDoNotOverflow) {
  const Array x = Array::from_vector<float>({3e38f, 3e38f, 3e38f, 3e38f}, {2, 2});
  for (const ops::Axes& axes : std::vector<ops::Axes>{{}, {0}, {1}}) {
    const MultiFn f = [axes](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::mean(a[0], axes)}; };
    for (JitMode jit : {JitMode::off, JitMode::always}) {
      ScopedJit scoped(jit);
      for (float v : run_on(backends::cpu_backend(), f, {x})[0].to_vector<float>()) EXPECT_EQ(v, 3e38f);
    }
  }
  // The bias-gradient shape of a convolution ([outer, mid, inner] reduced to [mid]).
  const Array y = Array::full(DType::f32, {2, 3, 4}, 3e38);
  const MultiFn g = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::mean(a[0], {0, 2})}; };
  for (float v : run_on(backends::cpu_backend(), g, {y})[0].to_vector<float>()) EXPECT_EQ(v, 3e38f);
}

TEST(CpuNumerics, SumsOfManyFloatsMatchTheDoubleAccumulatingReference) {
  // 2^24 + 1 style values: a float accumulator drops the small terms entirely.
  std::vector<float> v(5000, 1.0f);
  v[0] = 16777216.0f;
  const Array x = Array::from_vector(v, {1, 5000});
  for (const ops::Axes& axes : std::vector<ops::Axes>{{1}, {0, 1}}) {
    const MultiFn f = [axes](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::sum(a[0], axes)}; };
    const auto got = run_on(backends::cpu_backend(), f, {x})[0].to_vector<float>();
    const auto want = run_on(backends::reference_backend(), f, {x})[0].to_vector<float>();
    EXPECT_EQ(got, want);
    EXPECT_EQ(got[0], 16777216.0f + 4999.0f);
  }
}

}  // namespace
}  // namespace tessera::test
