// MultiheadAttention against a manual computation: projections, per-head softmax(q k^T / sqrt(d)) v,
// head concatenation and the output projection.
#include <cmath>

#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// Row-major [rows, in] x W[out, in]^T + b.
std::vector<double> project(const std::vector<double>& x, int64_t rows, int64_t in, const std::vector<double>& w,
                            size_t w_row0, const std::vector<double>& b, size_t b0, int64_t out) {
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b.empty() ? 0.0 : b[b0 + static_cast<size_t>(o)];
      for (int64_t i = 0; i < in; ++i)
        acc +=
            x[idx2(r, i, in)] * w[(w_row0 + static_cast<size_t>(o)) * static_cast<size_t>(in) + static_cast<size_t>(i)];
      y[idx2(r, o, out)] = acc;
    }
  }
  return y;
}

// query [N, L, E], key/value [N, S, E]; causal masks keys j > i.
std::vector<double> mha_reference(nn::MultiheadAttention& mha, const std::vector<double>& q_in,
                                  const std::vector<double>& k_in, const std::vector<double>& v_in, int64_t n,
                                  int64_t l, int64_t s, int64_t e, int64_t heads, bool causal) {
  const std::vector<double> w = values(mha.in_proj_weight);
  const std::vector<double> b = mha.in_proj_bias.defined() ? values(mha.in_proj_bias) : std::vector<double>{};
  const std::vector<double> wo = values(mha.out_proj->weight);
  const std::vector<double> bo = mha.out_proj->bias.defined() ? values(mha.out_proj->bias) : std::vector<double>{};
  const int64_t d = e / heads;
  std::vector<double> out;
  for (int64_t ni = 0; ni < n; ++ni) {
    auto rows = [&](const std::vector<double>& src, int64_t len) {
      return std::vector<double>(src.begin() + ni * len * e, src.begin() + (ni + 1) * len * e);
    };
    const auto eu = static_cast<size_t>(e);
    const std::vector<double> q = project(rows(q_in, l), l, e, w, 0, b, 0, e);
    const std::vector<double> k = project(rows(k_in, s), s, e, w, eu, b, eu, e);
    const std::vector<double> v = project(rows(v_in, s), s, e, w, 2 * eu, b, 2 * eu, e);
    std::vector<double> concat(static_cast<size_t>(l * e), 0.0);
    for (int64_t h = 0; h < heads; ++h) {
      for (int64_t i = 0; i < l; ++i) {
        std::vector<double> scores(static_cast<size_t>(s));
        double mx = -INFINITY;
        for (int64_t j = 0; j < s; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += q[idx2(i, h * d + c, e)] * k[idx2(j, h * d + c, e)];
          scores[static_cast<size_t>(j)] = (causal && j > i) ? -INFINITY : dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, scores[static_cast<size_t>(j)]);
        }
        double z = 0;
        for (double& sc : scores) z += (sc = std::exp(sc - mx));
        for (int64_t c = 0; c < d; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < s; ++j) acc += scores[static_cast<size_t>(j)] / z * v[idx2(j, h * d + c, e)];
          concat[idx2(i, h * d + c, e)] = acc;
        }
      }
    }
    const std::vector<double> y = project(concat, l, e, wo, 0, bo, 0, e);
    out.insert(out.end(), y.begin(), y.end());
  }
  return out;
}

// A non-zero input bias so that the test sees it being used.
void randomize_in_bias(nn::MultiheadAttention& mha, uint64_t seed) {
  mha.in_proj_bias = Tensor::from_array(random_array(mha.in_proj_bias.shape(), seed, -0.5, 0.5, DType::f32));
}

}  // namespace

TEST(MultiheadAttention, ParametersFollowPyTorchNames) {
  ops::Generator gen(1);
  nn::MultiheadAttention mha(8, 2, true, gen);
  std::vector<std::string> names;
  for (const auto& [n, p] : mha.named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  expect_shape(mha.in_proj_weight, {24, 8});
  expect_shape(mha.in_proj_bias, {24});
  for (double v : values(mha.in_proj_bias)) EXPECT_EQ(v, 0.0);
  // xavier_uniform over [3E, E].
  const double bound = std::sqrt(6.0 / (24.0 + 8.0));
  for (double v : values(mha.in_proj_weight)) EXPECT_LE(std::abs(v), bound);
  nn::MultiheadAttention no_bias(8, 2, false, gen);
  EXPECT_EQ(no_bias.named_parameters().size(), 2u);
}

TEST(MultiheadAttention, OneHeadMatchesManualComputation) {
  ops::Generator gen(2);
  nn::MultiheadAttention mha(4, 1, true, gen);
  randomize_in_bias(mha, 61);
  const Tensor x = random_tensor({2, 3, 4}, 62);
  const Tensor y = mha(x);  // self-attention
  expect_shape(y, {2, 3, 4});
  expect_values_near(values(y), mha_reference(mha, values(x), values(x), values(x), 2, 3, 3, 4, 1, false), 1e-5);
}

TEST(MultiheadAttention, SeveralHeadsWithSeparateKeysAndValues) {
  ops::Generator gen(3);
  nn::MultiheadAttention mha(6, 3, true, gen);
  randomize_in_bias(mha, 63);
  const Tensor q = random_tensor({2, 4, 6}, 64), k = random_tensor({2, 5, 6}, 65), v = random_tensor({2, 5, 6}, 66);
  const Tensor y = mha.forward(q, k, v);
  expect_shape(y, {2, 4, 6});
  expect_values_near(values(y), mha_reference(mha, values(q), values(k), values(v), 2, 4, 5, 6, 3, false), 1e-5);
}

TEST(MultiheadAttention, CausalMaskAndBooleanMaskAgree) {
  ops::Generator gen(4);
  nn::MultiheadAttention mha(4, 2, true, gen);
  const Tensor x = random_tensor({1, 4, 4}, 67);
  const Tensor causal = mha.forward(x, x, x, {}, true);
  expect_values_near(values(causal), mha_reference(mha, values(x), values(x), values(x), 1, 4, 4, 4, 2, true), 1e-5);
  std::vector<uint8_t> lower;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) lower.push_back(j <= i ? 1 : 0);
  }
  const Tensor mask = Tensor::from_array(Array::from_vector(lower, {4, 4}).astype(DType::boolean));
  expect_values_near(values(mha.forward(x, x, x, mask)), values(causal), 1e-6);
}

TEST(MultiheadAttention, GradientsReachEveryParameter) {
  ops::Generator gen(5);
  nn::MultiheadAttention mha(4, 2, true, gen);
  ops::sum(ops::square(mha(random_tensor({2, 3, 4}, 68)))).backward();
  for (const auto& [n, p] : mha.named_parameters()) {
    ASSERT_TRUE(p->grad().defined()) << n;
    expect_shape(p->grad(), p->shape());
  }
}

TEST(MultiheadAttention, Errors) {
  EXPECT_TESSERA_ERROR(nn::MultiheadAttention(6, 4), "MultiheadAttention", "embed_dim 6", "num_heads 4");
  nn::MultiheadAttention mha(4, 2);
  EXPECT_TESSERA_ERROR(mha(random_tensor({3, 4}, 69)), "MultiheadAttention", "f32[3, 4]");
  EXPECT_TESSERA_ERROR(mha(random_tensor({1, 3, 5}, 70)), "MultiheadAttention", "f32[1, 3, 5]");
}
