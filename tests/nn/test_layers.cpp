// Linear, Embedding, Dropout, Flatten, Sequential and the activation modules, each checked against
// values computed here with plain loops and std:: math.
#include <cmath>
#include <numbers>

#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// y[r, o] = sum_i x[r, i] * w[o, i] + b[o], over all leading rows of x.
std::vector<double> linear_reference(const std::vector<double>& x, const std::vector<double>& w,
                                     const std::vector<double>& b, int64_t in, int64_t out) {
  const int64_t rows = static_cast<int64_t>(x.size()) / in;
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
      for (int64_t i = 0; i < in; ++i) acc += x[idx2(r, i, in)] * w[idx2(o, i, in)];
      y[idx2(r, o, out)] = acc;
    }
  }
  return y;
}

}  // namespace

TEST(Linear, ForwardIsXTimesWeightTransposedPlusBias) {
  ops::Generator gen(7);
  nn::Linear fc(3, 4, true, gen);
  expect_shape(fc.weight, {4, 3});
  expect_shape(fc.bias, {4});
  const Tensor x = random_tensor({5, 3}, 1);
  const Tensor y = fc(x);
  expect_shape(y, {5, 4});
  EXPECT_EQ(y.dtype(), DType::f32);
  expect_values_near(values(y), linear_reference(values(x), values(fc.weight), values(fc.bias), 3, 4), 1e-5);
}

TEST(Linear, AppliesToEveryLeadingAxis) {
  ops::Generator gen(8);
  nn::Linear fc(4, 2, true, gen);
  const Tensor x = random_tensor({2, 3, 4}, 2);
  const Tensor y = fc(x);
  expect_shape(y, {2, 3, 2});
  expect_values_near(values(y), linear_reference(values(x), values(fc.weight), values(fc.bias), 4, 2), 1e-5);
  // A vector input behaves as one row.
  const Tensor v = random_tensor({4}, 3);
  expect_shape(fc(v), {2});
  expect_values_near(values(fc(v)), linear_reference(values(v), values(fc.weight), values(fc.bias), 4, 2), 1e-5);
}

TEST(Linear, WithoutBiasHasOnlyAWeight) {
  ops::Generator gen(9);
  nn::Linear fc(3, 2, false, gen);
  EXPECT_FALSE(fc.bias.defined());
  const auto params = fc.named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "weight");
  const Tensor x = random_tensor({4, 3}, 4);
  expect_values_near(values(fc(x)), linear_reference(values(x), values(fc.weight), {}, 3, 2), 1e-5);
  EXPECT_NE(fc.name().find("no bias"), std::string::npos) << fc.name();
}

TEST(Linear, RejectsBadSizesAndInputs) {
  EXPECT_TESSERA_ERROR(nn::Linear(0, 3), "Linear", "in=0");
  EXPECT_TESSERA_ERROR(nn::Linear(3, -1), "Linear", "out=-1");
  nn::Linear fc(3, 2);
  EXPECT_TESSERA_ERROR(fc(random_tensor({4, 5}, 5)), "Linear(3, 2)", "last dimension 3", "f32[4, 5]");
}

TEST(Linear, GradientsReachWeightAndBias) {
  ops::Generator gen(10);
  nn::Linear fc(3, 2, true, gen);
  const Tensor x = random_tensor({4, 3}, 6);
  ops::sum(fc(x)).backward();
  // d/dW sum(x W^T + b) = column sums of x for every output row; d/db = number of rows.
  const std::vector<double> xv = values(x);
  std::vector<double> expected_w;
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int r = 0; r < 4; ++r) s += xv[idx2(r, i, 3)];
      expected_w.push_back(s);
    }
  }
  expect_values_near(values(fc.weight.grad()), expected_w, 1e-5);
  expect_values_near(values(fc.bias.grad()), {4, 4}, 1e-6);
}

TEST(Embedding, PicksRowsOfTheWeight) {
  ops::Generator gen(11);
  nn::Embedding emb(5, 3, gen);
  expect_shape(emb.weight, {5, 3});
  const Tensor idx = Tensor::from_vector<int64_t>({4, 0, 2, 4, 1, 3}, {2, 3});
  const Tensor y = emb(idx);
  expect_shape(y, {2, 3, 3});
  const std::vector<double> w = values(emb.weight), got = values(y);
  const std::vector<int64_t> rows{4, 0, 2, 4, 1, 3};
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < 3; ++c) EXPECT_EQ(got[r * 3 + c], w[static_cast<size_t>(rows[r]) * 3 + c]);
  }
  // Default initialisation is N(0, 1).
  nn::Embedding big(1000, 20, gen);
  const std::vector<double> bw = values(big.weight);
  double mean = 0, sq = 0;
  for (double v : bw) mean += v;
  mean /= static_cast<double>(bw.size());
  for (double v : bw) sq += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(sq / static_cast<double>(bw.size() - 1), 1.0, 0.05);
}

TEST(Embedding, OutOfRangeIndexIsAnError) {
  nn::Embedding emb(5, 3);
  EXPECT_TESSERA_ERROR(emb(Tensor::from_vector<int64_t>({5}, {1})).eval(), "embedding");
}

TEST(Dropout, IsTheIdentityInEvalMode) {
  ops::Generator gen(12);
  nn::Dropout drop(0.5, gen);
  drop.eval();
  const Tensor x = random_tensor({4, 8}, 7);
  EXPECT_EQ(values(drop(x)), values(x));
}

TEST(Dropout, ZeroesAboutPAndScalesTheRestInTraining) {
  ops::Generator gen(13);
  nn::Dropout drop(0.25, gen);
  EXPECT_TRUE(drop.is_training());
  const Tensor x = random_tensor({100, 100}, 8, DType::f32, 0.5, 1.5);  // no zeros in the input
  const std::vector<double> in = values(x), out = values(drop(x));
  int64_t zeros = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (out[i] == 0.0) {
      ++zeros;
    } else {
      EXPECT_NEAR(out[i], in[i] / 0.75, 1e-5) << i;
    }
  }
  // 10000 draws with p = 0.25: the standard deviation of the count is about 43.
  EXPECT_NEAR(static_cast<double>(zeros), 2500.0, 250.0);
  // Each call draws a new mask from the generator.
  EXPECT_NE(values(drop(x)), out);
}

TEST(Dropout, SameSeedSameMask) {
  ops::Generator g1(99), g2(99);
  nn::Dropout a(0.5, g1), b(0.5, g2);
  const Tensor x = random_tensor({64}, 9, DType::f32, 1.0, 2.0);
  EXPECT_EQ(values(a(x)), values(b(x)));
}

TEST(Dropout, EdgeProbabilities) {
  const Tensor x = random_tensor({3, 4}, 10);
  nn::Dropout keep_all(0.0);
  EXPECT_EQ(values(keep_all(x)), values(x));
  nn::Dropout drop_all(1.0);
  for (double v : values(drop_all(x))) EXPECT_EQ(v, 0.0);
  EXPECT_TESSERA_ERROR(nn::Dropout(1.5), "Dropout", "1.5");
  EXPECT_TESSERA_ERROR(nn::Dropout(-0.1), "Dropout", "-0.1");
}

TEST(Flatten, MergesTheGivenAxes) {
  const Tensor x = random_tensor({2, 3, 4, 5}, 11);
  nn::Flatten all_but_batch;
  expect_shape(all_but_batch(x), {2, 60});
  EXPECT_EQ(values(all_but_batch(x)), values(x));
  nn::Flatten middle(1, 2);
  expect_shape(middle(x), {2, 12, 5});
  nn::Flatten everything(0);
  expect_shape(everything(x), {120});
}

TEST(Sequential, RunsItsLayersInOrder) {
  ops::Generator gen(14);
  auto fc1 = std::make_shared<nn::Linear>(3, 4, true, gen);
  auto fc2 = std::make_shared<nn::Linear>(4, 2, true, gen);
  nn::Sequential seq({fc1, std::make_shared<nn::ReLU>(), fc2});
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_EQ(&seq[0], fc1.get());
  EXPECT_EQ(&seq[2], fc2.get());
  const Tensor x = random_tensor({5, 3}, 12);
  std::vector<double> h = linear_reference(values(x), values(fc1->weight), values(fc1->bias), 3, 4);
  for (double& v : h) v = std::max(v, 0.0);
  const std::vector<double> expected = linear_reference(h, values(fc2->weight), values(fc2->bias), 4, 2);
  expect_values_near(values(seq(x)), expected, 1e-5);
  // Children are named by position.
  const auto children = seq.named_children();
  ASSERT_EQ(children.size(), 3u);
  EXPECT_EQ(children[0].first, "0");
  EXPECT_EQ(children[1].first, "1");
  EXPECT_EQ(children[1].second->name(), "ReLU");
  EXPECT_EQ(children[2].first, "2");
  EXPECT_THROW(seq[3], std::out_of_range);
}

TEST(Sequential, AddChainsAndEmptyIsIdentity) {
  nn::Sequential seq;
  const Tensor x = random_tensor({2, 2}, 13);
  EXPECT_EQ(values(seq(x)), values(x));
  seq.add(std::make_shared<nn::Tanh>()).add(std::make_shared<nn::Sigmoid>());
  EXPECT_EQ(seq.size(), 2u);
  const std::vector<double> xv = values(x), got = values(seq(x));
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(got[i], 1.0 / (1.0 + std::exp(-std::tanh(xv[i]))), 1e-6);
}

TEST(Activations, MatchTheirFormulas) {
  const std::vector<double> xs{-3.0, -1.5, -0.5, -0.0, 0.25, 1.0, 2.5};
  const Tensor x = Tensor::from_vector<double>(xs, {7});
  struct Case {
    std::shared_ptr<nn::Module> module;
    std::string name;
    double (*fn)(double);
  };
  const std::vector<Case> cases{
      {std::make_shared<nn::ReLU>(), "ReLU", [](double v) { return v > 0 ? v : 0.0; }},
      {std::make_shared<nn::GELU>(), "GELU",
       [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); }},
      {std::make_shared<nn::GELU>(true), "GELU(tanh)",
       [](double v) {
         return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
       }},
      {std::make_shared<nn::Tanh>(), "Tanh", [](double v) { return std::tanh(v); }},
      {std::make_shared<nn::Sigmoid>(), "Sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {std::make_shared<nn::SiLU>(), "SiLU", [](double v) { return v / (1.0 + std::exp(-v)); }},
      {std::make_shared<nn::LeakyReLU>(0.2), "LeakyReLU(0.2)", [](double v) { return v > 0 ? v : 0.2 * v; }},
      {std::make_shared<nn::LeakyReLU>(), "LeakyReLU(0.01)", [](double v) { return v > 0 ? v : 0.01 * v; }},
      {std::make_shared<nn::ELU>(0.5), "ELU(0.5)", [](double v) { return v > 0 ? v : 0.5 * (std::exp(v) - 1.0); }},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.module->name(), c.name);
    EXPECT_TRUE(c.module->named_parameters().empty()) << c.name;
    const Tensor y = (*c.module)(x);
    EXPECT_EQ(y.dtype(), DType::f64) << c.name;
    std::vector<double> expected;
    for (double v : xs) expected.push_back(c.fn(v));
    expect_values_near(values(y), expected, 1e-12, c.name);
  }
}

TEST(Activations, SoftmaxAndLogSoftmaxAlongTheirAxis) {
  const Tensor x = random_tensor({2, 3}, 14, DType::f64, -2, 2);
  const std::vector<double> xv = values(x);
  auto softmax_ref = [&](int axis) {
    std::vector<double> out(6);
    for (int a = 0; a < (axis == 1 ? 2 : 3); ++a) {
      const int n = axis == 1 ? 3 : 2;
      auto at = [&](int k) { return axis == 1 ? idx2(a, k, 3) : idx2(k, a, 3); };
      double mx = -INFINITY, z = 0;
      for (int k = 0; k < n; ++k) mx = std::max(mx, xv[at(k)]);
      for (int k = 0; k < n; ++k) z += std::exp(xv[at(k)] - mx);
      for (int k = 0; k < n; ++k) out[at(k)] = std::exp(xv[at(k)] - mx) / z;
    }
    return out;
  };
  expect_values_near(values((*std::make_shared<nn::Softmax>())(x)), softmax_ref(1), 1e-12, "softmax(-1)");
  expect_values_near(values((*std::make_shared<nn::Softmax>(0))(x)), softmax_ref(0), 1e-12, "softmax(0)");
  std::vector<double> log_ref = softmax_ref(1);
  for (double& v : log_ref) v = std::log(v);
  expect_values_near(values((*std::make_shared<nn::LogSoftmax>())(x)), log_ref, 1e-12, "log_softmax");
}

TEST(Activations, LambdaWrapsAnyFunction) {
  nn::Lambda twice("Twice", [](const Tensor& t) { return t * 2.0; });
  EXPECT_EQ(twice.name(), "Twice");
  const Tensor x = Tensor::from_vector<float>({1, -2}, {2});
  expect_close(twice(x), {2, -4});
}
