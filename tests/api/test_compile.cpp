// CompiledFunction's steady-state path: a call whose argument types match the previous call reuses
// that executable without building a signature; any change of types goes back to the cache.
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Compile, AlternatingSignaturesUseTheRightExecutable) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * 2.0 + 1.0}; });
  const Tensor two = Tensor::from_vector<float>({1, 2}, {2});
  const Tensor three = Tensor::from_vector<float>({1, 2, 3}, {3});
  const Tensor two_f64 = Tensor::from_vector<double>({5, 6}, {2});
  const Tensor matrix = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  for (int round = 0; round < 3; ++round) {
    expect_close(f({two})[0], {3, 5});
    expect_close(f({two})[0], {3, 5});
    expect_close(f({three})[0], {3, 5, 7});
    expect_close(f({two_f64})[0], {11, 13});
    expect_close(f({matrix})[0], {3, 5, 7, 9});
    expect_shape(f({matrix})[0], {2, 2});
  }
  EXPECT_EQ(f.trace_count(), 4u);
  EXPECT_EQ(f.cache_size(), 4u);
  EXPECT_EQ(f({two_f64})[0].dtype(), DType::f64);
}

TEST(Compile, ArgumentCountIsPartOfTheSignature) {
  auto f = compile([](const std::vector<Tensor>& xs) {
    Tensor s = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i];
    return std::vector<Tensor>{s};
  });
  const Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  const Tensor b = Tensor::from_vector<float>({10, 20}, {2});
  expect_close(f({a})[0], {1, 2});
  expect_close(f({a, b})[0], {11, 22});
  expect_close(f({a})[0], {1, 2});
  expect_close(f({a, b, b})[0], {21, 42});
  EXPECT_EQ(f.trace_count(), 3u);
}

TEST(Compile, LazyArgumentsAreEvaluatedFirst) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * xs[0]}; });
  const Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  expect_close(f({a})[0], {1, 4});
  const Tensor lazy = a + 1.0;  // same type as a, not yet computed
  EXPECT_FALSE(lazy.is_evaluated());
  expect_close(f({lazy})[0], {4, 9});
  EXPECT_EQ(f.trace_count(), 1u);
}

TEST(Compile, FailedTraceLeavesTheFunctionUsable) {
  auto f = compile([](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>{xs[0] + Tensor::from_vector<float>({1, 1, 1}, {3})};
  });
  const Tensor good = Tensor::from_vector<float>({1, 2, 3}, {3});
  const Tensor bad = Tensor::from_vector<float>({1, 2}, {2});
  expect_close(f({good})[0], {2, 3, 4});
  EXPECT_TESSERA_ERROR(f({bad}), "add", "f32[2]", "f32[3]");
  expect_close(f({good})[0], {2, 3, 4});
  EXPECT_TESSERA_ERROR(f({bad}), "add");
  EXPECT_TESSERA_ERROR(f({Tensor()}), "undefined argument");
  expect_close(f({good})[0], {2, 3, 4});
}

TEST(Compile, OutputsAreFreshArraysEachCall) {
  // The compiled path reuses its executable; results of earlier calls must not be overwritten.
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::relu(xs[0])}; });
  const Tensor r1 = f({Tensor::from_vector<float>({-1, 2}, {2})})[0];
  const Tensor r2 = f({Tensor::from_vector<float>({3, -4}, {2})})[0];
  expect_close(r1, {0, 2});
  expect_close(r2, {3, 0});
}
