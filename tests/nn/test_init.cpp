// Initialisation: PyTorch's bounds and standard deviations, checked statistically, plus determinism.
#include <algorithm>
#include <cmath>

#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

struct Stats {
  double mean = 0, var = 0, max_abs = 0;
};

Stats stats_of(const std::vector<double>& v) {
  Stats s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) {
    s.var += (x - s.mean) * (x - s.mean);
    s.max_abs = std::max(s.max_abs, std::abs(x));
  }
  s.var /= static_cast<double>(v.size() - 1);
  return s;
}

// U(-b, b): every value within the bound, the extremes close to it, variance b^2 / 3.
void expect_uniform(const std::vector<double>& v, double bound, const std::string& what) {
  const Stats s = stats_of(v);
  EXPECT_LE(s.max_abs, bound) << what;
  EXPECT_GT(s.max_abs, 0.99 * bound) << what;
  // The sample variance of n uniforms has relative standard deviation sqrt(0.8 / n).
  const double rel = 6.0 * std::sqrt(0.8 / static_cast<double>(v.size()));
  EXPECT_NEAR(s.var, bound * bound / 3.0, rel * bound * bound / 3.0) << what;
  EXPECT_NEAR(s.mean, 0.0, 6.0 * bound / std::sqrt(3.0 * static_cast<double>(v.size()))) << what;
}

void expect_normal(const std::vector<double>& v, double stddev, const std::string& what) {
  const Stats s = stats_of(v);
  const double rel = 6.0 * std::sqrt(2.0 / static_cast<double>(v.size()));
  EXPECT_NEAR(s.var, stddev * stddev, rel * stddev * stddev) << what;
  EXPECT_NEAR(s.mean, 0.0, 6.0 * stddev / std::sqrt(static_cast<double>(v.size()))) << what;
}

}  // namespace

TEST(Init, LinearDefaultIsUniformWithBoundOneOverSqrtFanIn) {
  ops::Generator gen(1);
  nn::Linear fc(400, 60, true, gen);
  const double bound = 1.0 / std::sqrt(400.0);
  expect_uniform(values(fc.weight), bound, "Linear weight");
  const Stats b = stats_of(values(fc.bias));
  EXPECT_LE(b.max_abs, bound);
  EXPECT_GT(b.max_abs, 0.8 * bound);  // 60 draws reach close to the bound
}

TEST(Init, ConvDefaultUsesFanInOverTheKernel) {
  ops::Generator gen(2);
  nn::Conv2d conv(8, 64, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true, gen);
  const double bound = 1.0 / std::sqrt(8.0 * 9.0);
  expect_uniform(values(conv.weight), bound, "Conv2d weight");
  EXPECT_LE(stats_of(values(conv.bias)).max_abs, bound);
  nn::Conv1d conv1(6, 50, 5, 1, 0, 1, 2, true, gen);  // groups 2: fan_in = 3 * 5
  expect_uniform(values(conv1.weight), 1.0 / std::sqrt(15.0), "Conv1d weight");
}

TEST(Init, SameSeedSameWeightsDifferentSeedDifferent) {
  ops::Generator g1(42), g2(42), g3(43);
  nn::Linear a(5, 4, true, g1), b(5, 4, true, g2), c(5, 4, true, g3);
  EXPECT_EQ(values(a.weight), values(b.weight));
  EXPECT_EQ(values(a.bias), values(b.bias));
  EXPECT_NE(values(a.weight), values(c.weight));
  EXPECT_NE(values(a.bias), values(c.bias));
  // Successive layers from one generator differ from each other.
  nn::Linear d(5, 4, true, g1);
  EXPECT_NE(values(a.weight), values(d.weight));
  // The default generator is reseeded by manual_seed.
  ops::manual_seed(5);
  nn::Linear e(5, 4);
  ops::manual_seed(5);
  nn::Linear f(5, 4);
  EXPECT_EQ(values(e.weight), values(f.weight));
}

TEST(Init, FanInAndFanOut) {
  EXPECT_EQ(nn::init::fan_in({10, 20}), 20);
  EXPECT_EQ(nn::init::fan_out({10, 20}), 10);
  EXPECT_EQ(nn::init::fan_in({16, 3, 5, 5}), 75);
  EXPECT_EQ(nn::init::fan_out({16, 3, 5, 5}), 400);
  EXPECT_TESSERA_ERROR(nn::init::fan_in({7}), "fan_in", "[7]");
  EXPECT_TESSERA_ERROR(nn::init::fan_out({}), "fan_out", "[]");
}

TEST(Init, Gains) {
  EXPECT_DOUBLE_EQ(nn::init::gain("linear"), 1.0);
  EXPECT_DOUBLE_EQ(nn::init::gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(nn::init::gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(nn::init::gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(nn::init::gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(nn::init::gain("leaky_relu", std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
  EXPECT_TESSERA_ERROR(nn::init::gain("swish"), "init", "'swish'");
}

TEST(Init, KaimingAndXavierDistributions) {
  ops::Generator gen(3);
  const Shape shape{200, 100};
  expect_uniform(values(nn::init::kaiming_uniform(shape, gen, 0.0, "relu")), std::sqrt(2.0) * std::sqrt(3.0 / 100.0),
                 "kaiming_uniform relu");
  expect_normal(values(nn::init::kaiming_normal(shape, gen, 0.0, "relu")), std::sqrt(2.0) / 10.0, "kaiming_normal");
  expect_uniform(values(nn::init::xavier_uniform(shape, gen)), std::sqrt(6.0 / 300.0), "xavier_uniform");
  expect_uniform(values(nn::init::xavier_uniform(shape, gen, 2.0)), 2.0 * std::sqrt(6.0 / 300.0), "xavier gain 2");
  expect_normal(values(nn::init::xavier_normal(shape, gen)), std::sqrt(2.0 / 300.0), "xavier_normal");
  expect_normal(values(nn::init::normal({20000}, 0.0, 0.5, gen)), 0.5, "normal");
  const std::vector<double> u = values(nn::init::uniform({20000}, 2.0, 4.0, gen));
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 2.0);
  EXPECT_LE(*std::max_element(u.begin(), u.end()), 4.0);
}

TEST(Init, ResultsAreConcreteLeavesOfTheRequestedDtype) {
  ops::Generator gen(4);
  const Tensor t = nn::init::kaiming_uniform({3, 4}, gen, 0.0, "leaky_relu", DType::f64);
  EXPECT_EQ(t.dtype(), DType::f64);
  EXPECT_TRUE(t.value().node()->is_leaf());
  EXPECT_TRUE(t.is_evaluated());
  EXPECT_EQ(values(nn::init::zeros({2, 2})), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(values(nn::init::ones({3}, DType::f16)), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(nn::init::ones({3}, DType::f16).dtype(), DType::f16);
}
