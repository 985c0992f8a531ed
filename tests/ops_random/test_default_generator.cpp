// The default generator: randn / rand and every draw work without a Generator (torch.randn(shape)),
// manual_seed makes them repeat, and a draw from it equals the same draw from a Generator of that seed.
#include <type_traits>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
std::vector<double> values(const Tensor& t) {
  return t.array().to_f64();
}
}  // namespace

TEST(DefaultGenerator, ManualSeedRepeatsRandnAndRand) {
  ops::manual_seed(7);
  const std::vector<double> n1 = values(ops::randn({3, 4})), u1 = values(ops::rand({5}));
  ops::manual_seed(7);
  const std::vector<double> n2 = values(ops::randn({3, 4})), u2 = values(ops::rand({5}));
  EXPECT_EQ(n1, n2);
  EXPECT_EQ(u1, u2);
  // Without a reseed, the next draw takes fresh counters.
  EXPECT_NE(values(ops::randn({3, 4})), n1);
}

TEST(DefaultGenerator, DrawsEqualThoseOfAnExplicitGeneratorWithTheSameSeed) {
  ops::manual_seed(11);
  ops::Generator gen(11);
  EXPECT_EQ(values(ops::randn({6})), values(ops::randn({6}, gen)));
  EXPECT_EQ(values(ops::rand({6})), values(ops::rand({6}, gen)));
  EXPECT_EQ(values(ops::randint(0, 10, {6})), values(ops::randint(0, 10, {6}, gen)));
  EXPECT_EQ(values(ops::permutation(6)), values(ops::permutation(6, gen)));
  EXPECT_EQ(values(ops::uniform({2}, -1, 1)), values(ops::uniform({2}, -1, 1, gen)));
  EXPECT_EQ(values(ops::normal({2}, 5, 2)), values(ops::normal({2}, 5, 2, gen)));
  const Tensor p = ops::full({4}, 0.5);
  EXPECT_EQ(values(ops::bernoulli(p)), values(ops::bernoulli(p, gen)));
  EXPECT_EQ(ops::default_generator().offset(), gen.offset());
}

TEST(DefaultGenerator, RandnAndRandTakeADtype) {
  ops::manual_seed(3);
  const Tensor n = ops::randn({2, 2}, DType::f64), u = ops::rand({4}, DType::bf16);
  EXPECT_EQ(n.dtype(), DType::f64);
  EXPECT_EQ(n.shape(), (Shape{2, 2}));
  EXPECT_EQ(u.dtype(), DType::bf16);
  ops::Generator gen(3);
  EXPECT_EQ(values(n), values(ops::randn({2, 2}, gen, DType::f64)));
}

TEST(DefaultGenerator, RandIsInTheUnitIntervalAndRandnIsStandard) {
  ops::manual_seed(5);
  const std::vector<double> u = values(ops::rand({20000}));
  for (double v : u) ASSERT_TRUE(v >= 0.0 && v < 1.0) << v;
  const std::vector<double> n = values(ops::randn({20000}, DType::f64));
  double mean = 0, var = 0;
  for (double v : n) mean += v;
  mean /= static_cast<double>(n.size());
  for (double v : n) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n.size());
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(var, 1.0, 0.05);
}

TEST(DefaultGenerator, ModulesTakeGeneratorsByReferenceAndDefaultToIt) {
  // The one spelling is a reference; the old pointer form no longer compiles.
  static_assert(std::is_constructible_v<nn::Linear, int64_t, int64_t, bool, ops::Generator&>);
  static_assert(!std::is_constructible_v<nn::Linear, int64_t, int64_t, bool, ops::Generator*>);
  static_assert(!std::is_constructible_v<nn::Dropout, double, ops::Generator*>);
  ops::manual_seed(21);
  nn::Linear from_default(3, 2);
  nn::Conv2d conv_default(1, 2, {3, 3});
  ops::Generator gen(21);
  nn::Linear from_gen(3, 2, true, gen);
  nn::Conv2d conv_gen(1, 2, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true, gen);
  EXPECT_EQ(values(from_default.weight), values(from_gen.weight));
  EXPECT_EQ(values(from_default.bias), values(from_gen.bias));
  EXPECT_EQ(values(conv_default.weight), values(conv_gen.weight));
}
