// Normalisation modules against hand-computed statistics; BatchNorm's running-statistics buffers.
#include <cmath>

#include "nn_helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// Per-channel (axis 1) mean and biased/unbiased variance of x [N, C, S] (S = flattened spatial).
struct ChannelStats {
  std::vector<double> mean, var_biased, var_unbiased;
};

ChannelStats channel_stats(const std::vector<double>& x, int64_t n, int64_t c, int64_t s) {
  ChannelStats st;
  const double count = static_cast<double>(n * s);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < s; ++k) sum += x[idx3(i, ch, k, c, s)];
    }
    const double mean = sum / count;
    double sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < s; ++k) sq += std::pow(x[idx3(i, ch, k, c, s)] - mean, 2);
    }
    st.mean.push_back(mean);
    st.var_biased.push_back(sq / count);
    st.var_unbiased.push_back(sq / (count - 1));
  }
  return st;
}

// Sets a registered parameter/buffer slot to given values (same shape and dtype).
void set_values(Tensor& slot, const std::vector<double>& v) {
  slot = Tensor::from_array(Array::from_vector(v, slot.shape()).astype(slot.dtype()));
}

}  // namespace

TEST(BatchNorm, TrainingForwardUsesBatchStatistics) {
  const int64_t n = 4, c = 3, h = 2, w = 3;
  nn::BatchNorm2d bn(c, 1e-5, 0.1);
  set_values(bn.weight, {1.5, -0.5, 2.0});
  set_values(bn.bias, {0.1, 0.2, -0.3});
  const Tensor x = random_tensor({n, c, h, w}, 41, DType::f32, -2, 3);
  const Tensor y = bn(x);
  expect_shape(y, {n, c, h, w});
  const std::vector<double> xv = values(x);
  const ChannelStats st = channel_stats(xv, n, c, h * w);
  const std::vector<double> gamma{1.5, -0.5, 2.0}, beta{0.1, 0.2, -0.3};
  std::vector<double> ref(xv.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const auto k = static_cast<size_t>(ch);
      for (int64_t s = 0; s < h * w; ++s) {
        const size_t at = idx3(i, ch, s, c, h * w);
        ref[at] = (xv[at] - st.mean[k]) / std::sqrt(st.var_biased[k] + 1e-5) * gamma[k] + beta[k];
      }
    }
  }
  expect_values_near(values(y), ref, 1e-4);
}

TEST(BatchNorm, RunningStatisticsUpdateInTrainingOnly) {
  const int64_t n = 5, c = 2;
  nn::BatchNorm1d bn(c, 1e-5, 0.25);
  const auto buffers = bn.named_buffers();
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].first, "running_mean");
  EXPECT_EQ(buffers[1].first, "running_var");
  EXPECT_EQ(values(bn.running_mean), (std::vector<double>{0, 0}));
  EXPECT_EQ(values(bn.running_var), (std::vector<double>{1, 1}));

  const Tensor x = random_tensor({n, c}, 42, DType::f32, -1, 4);
  bn(x);
  nn::materialize(bn);
  EXPECT_TRUE(bn.running_mean.value().node()->is_leaf());
  EXPECT_TRUE(bn.running_var.value().node()->is_leaf());
  const ChannelStats st = channel_stats(values(x), n, c, 1);
  std::vector<double> mean1, var1;
  for (size_t k = 0; k < 2; ++k) {
    mean1.push_back(0.75 * 0.0 + 0.25 * st.mean[k]);
    var1.push_back(0.75 * 1.0 + 0.25 * st.var_unbiased[k]);  // unbiased, as PyTorch
  }
  expect_values_near(values(bn.running_mean), mean1, 1e-6, "running_mean after 1 step");
  expect_values_near(values(bn.running_var), var1, 1e-6, "running_var after 1 step");

  // A second training step compounds the update.
  const Tensor x2 = random_tensor({n, c}, 43, DType::f32, -3, 1);
  bn(x2);
  nn::materialize(bn);
  const ChannelStats st2 = channel_stats(values(x2), n, c, 1);
  for (size_t k = 0; k < 2; ++k) {
    mean1[k] = 0.75 * mean1[k] + 0.25 * st2.mean[k];
    var1[k] = 0.75 * var1[k] + 0.25 * st2.var_unbiased[k];
  }
  expect_values_near(values(bn.running_mean), mean1, 1e-6, "running_mean after 2 steps");
  expect_values_near(values(bn.running_var), var1, 1e-6, "running_var after 2 steps");

  // Evaluation mode normalises with the running statistics and leaves them alone.
  bn.eval();
  const Tensor x3 = random_tensor({n, c}, 44);
  const Tensor y = bn(x3);
  nn::materialize(bn);
  expect_values_near(values(bn.running_mean), mean1, 1e-7, "running_mean after eval");
  expect_values_near(values(bn.running_var), var1, 1e-7, "running_var after eval");
  const std::vector<double> xv = values(x3);
  std::vector<double> ref(xv.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c; ++k) {
      const size_t at = idx2(i, k, c), ks = static_cast<size_t>(k);
      ref[at] = (xv[at] - mean1[ks]) / std::sqrt(var1[ks] + 1e-5);
    }
  }
  expect_values_near(values(y), ref, 1e-5, "eval output");
}

TEST(BatchNorm, WithoutAffineHasNoParametersButBuffers) {
  nn::BatchNorm bn(3, 1e-5, 0.1, false);
  EXPECT_TRUE(bn.named_parameters().empty());
  EXPECT_EQ(bn.named_buffers().size(), 2u);
  const Tensor x = random_tensor({6, 3}, 45);
  const ChannelStats st = channel_stats(values(x), 6, 3, 1);
  const std::vector<double> xv = values(x);
  std::vector<double> ref(xv.size());
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t k = 0; k < 3; ++k) {
      const size_t at = idx2(i, k, 3), ks = static_cast<size_t>(k);
      ref[at] = (xv[at] - st.mean[ks]) / std::sqrt(st.var_biased[ks] + 1e-5);
    }
  }
  expect_values_near(values(bn(x)), ref, 1e-5);
  EXPECT_TESSERA_ERROR(nn::BatchNorm(0), "BatchNorm", "0");
}

TEST(BatchNorm, ChannelMismatchIsAnError) {
  nn::BatchNorm bn(3);
  EXPECT_TESSERA_ERROR(bn(random_tensor({2, 4}, 46)), "batch_norm", "f32[2, 4]");
}

TEST(LayerNorm, NormalisesTheTrailingAxes) {
  nn::LayerNorm ln(Shape{2, 3}, 1e-5);
  set_values(ln.weight, {1, 2, 3, -1, 0.5, 1});
  set_values(ln.bias, {0, 0.1, 0.2, 0.3, 0.4, 0.5});
  const Tensor x = random_tensor({4, 2, 3}, 47, DType::f32, -2, 2);
  const Tensor y = ln(x);
  expect_shape(y, {4, 2, 3});
  const std::vector<double> xv = values(x), wv = values(ln.weight), bv = values(ln.bias);
  std::vector<double> ref(xv.size());
  for (size_t r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for (size_t k = 0; k < 6; ++k) mean += xv[r * 6 + k] / 6.0;
    for (size_t k = 0; k < 6; ++k) var += std::pow(xv[r * 6 + k] - mean, 2) / 6.0;
    for (size_t k = 0; k < 6; ++k) ref[r * 6 + k] = (xv[r * 6 + k] - mean) / std::sqrt(var + 1e-5) * wv[k] + bv[k];
  }
  expect_values_near(values(y), ref, 1e-5);
  const auto params = ln.named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(params[1].first, "bias");
  nn::LayerNorm plain(Shape{3}, 1e-5, false);
  EXPECT_TRUE(plain.named_parameters().empty());
}

TEST(RMSNorm, DividesByTheRootMeanSquare) {
  nn::RMSNorm rms(Shape{4}, 1e-6);
  set_values(rms.weight, {1, 0.5, -2, 3});
  const Tensor x = random_tensor({3, 4}, 48, DType::f32, -2, 2);
  const std::vector<double> xv = values(x), wv{1, 0.5, -2, 3};
  std::vector<double> ref(xv.size());
  for (size_t r = 0; r < 3; ++r) {
    double ms = 0;
    for (size_t k = 0; k < 4; ++k) ms += xv[r * 4 + k] * xv[r * 4 + k] / 4.0;
    for (size_t k = 0; k < 4; ++k) ref[r * 4 + k] = xv[r * 4 + k] / std::sqrt(ms + 1e-6) * wv[k];
  }
  expect_values_near(values(rms(x)), ref, 1e-5);
  EXPECT_EQ(rms.named_parameters().size(), 1u);
}

TEST(GroupNorm, NormalisesEachGroupOfChannels) {
  const int64_t n = 2, c = 6, groups = 3, s = 4;
  nn::GroupNorm gn(groups, c, 1e-5);
  set_values(gn.weight, {1, 2, 3, 4, 5, 6});
  set_values(gn.bias, {-1, -2, -3, 1, 2, 3});
  const Tensor x = random_tensor({n, c, 2, 2}, 49, DType::f32, -2, 2);
  const std::vector<double> xv = values(x), wv = values(gn.weight), bv = values(gn.bias);
  std::vector<double> ref(xv.size());
  const int64_t cg = c / groups;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      double mean = 0, var = 0;
      const double count = static_cast<double>(cg * s);
      for (int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
        for (int64_t k = 0; k < s; ++k) mean += xv[idx3(i, ch, k, c, s)] / count;
      }
      for (int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
        for (int64_t k = 0; k < s; ++k) var += std::pow(xv[idx3(i, ch, k, c, s)] - mean, 2) / count;
      }
      for (int64_t ch = g * cg; ch < (g + 1) * cg; ++ch) {
        for (int64_t k = 0; k < s; ++k) {
          const size_t at = idx3(i, ch, k, c, s);
          ref[at] = (xv[at] - mean) / std::sqrt(var + 1e-5) * wv[static_cast<size_t>(ch)] + bv[static_cast<size_t>(ch)];
        }
      }
    }
  }
  expect_values_near(values(gn(x)), ref, 1e-5);
  EXPECT_TESSERA_ERROR(nn::GroupNorm(4, 6), "GroupNorm", "6 channels", "4 groups");
}
