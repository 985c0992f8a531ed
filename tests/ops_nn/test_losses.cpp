// Losses: cross_entropy (PyTorch semantics: ignore_index, label smoothing, [N, C, d...]), nll_loss,
// mse_loss, binary_cross_entropy_with_logits. Expected values are computed here with std::exp/log.
#include <limits>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;
using ops::Reduction;

namespace {

// -log softmax(row)[target] mixed with label smoothing `eps` as PyTorch defines it.
double hand_ce(const std::vector<double>& row, int64_t target, double eps = 0.0) {
  double m = row[0];
  for (double v : row) m = std::max(m, v);
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  const double lse = m + std::log(s);
  double uniform = 0;
  for (double v : row) uniform += lse - v;  // -sum_c log p_c
  const double nll = lse - row[static_cast<size_t>(target)];
  return (1 - eps) * nll + eps / static_cast<double>(row.size()) * uniform;
}

const std::vector<double> kLogits{0.2,  -1.0, 1.5,  0.3,    // sample 0
                                  2.0,  0.1,  -0.5, 1.0,    // sample 1
                                  -0.3, 0.7,  0.0,  -2.0};  // sample 2

std::vector<double> row(int i) {
  return std::vector<double>(kLogits.begin() + i * 4, kLogits.begin() + i * 4 + 4);
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

}  // namespace

TEST(CrossEntropy, MeanSumNone) {
  Tensor logits = Tensor::from_vector<double>(kLogits, {3, 4});
  Tensor targets = Tensor::from_vector<int64_t>({2, 0, 3}, {3});
  const double l0 = hand_ce(row(0), 2), l1 = hand_ce(row(1), 0), l2 = hand_ce(row(2), 3);
  expect_close(ops::cross_entropy(logits, targets), {(l0 + l1 + l2) / 3}, 1e-13);
  expect_close(ops::cross_entropy(logits, targets, {.reduction = Reduction::Sum}), {l0 + l1 + l2}, 1e-13);
  Tensor none = ops::cross_entropy(logits, targets, {.reduction = Reduction::None});
  expect_shape(none, {3});
  expect_close(none, {l0, l1, l2}, 1e-13);
  EXPECT_EQ(ops::cross_entropy(logits, targets).rank(), 0);
}

TEST(CrossEntropy, IgnoreIndex) {
  Tensor logits = Tensor::from_vector<double>(kLogits, {3, 4});
  Tensor targets = Tensor::from_vector<int64_t>({2, -100, 3}, {3});
  const double l0 = hand_ce(row(0), 2), l2 = hand_ce(row(2), 3);
  // The mean divides by the 2 targets that count, not by 3.
  expect_close(ops::cross_entropy(logits, targets), {(l0 + l2) / 2}, 1e-13);
  expect_close(ops::cross_entropy(logits, targets, {.reduction = Reduction::None}), {l0, 0, l2}, 1e-13);
  // A custom ignore_index that is also a valid class.
  Tensor t2 = Tensor::from_vector<int64_t>({1, 1, 0}, {3});
  expect_close(ops::cross_entropy(logits, t2, {.ignore_index = 1}), {hand_ce(row(2), 0)}, 1e-13);
  // Everything ignored: 0 / 0 = NaN for the mean, 0 for the sum (as PyTorch).
  Tensor all_ignored = Tensor::from_vector<int64_t>({-100, -100, -100}, {3});
  EXPECT_TRUE(std::isnan(ops::cross_entropy(logits, all_ignored).item()));
  EXPECT_EQ(ops::cross_entropy(logits, all_ignored, {.reduction = Reduction::Sum}).item(), 0.0);
}

TEST(CrossEntropy, LabelSmoothing) {
  Tensor logits = Tensor::from_vector<double>(kLogits, {3, 4});
  Tensor targets = Tensor::from_vector<int64_t>({2, 0, 3}, {3});
  const double eps = 0.2;
  const double l0 = hand_ce(row(0), 2, eps), l1 = hand_ce(row(1), 0, eps), l2 = hand_ce(row(2), 3, eps);
  expect_close(ops::cross_entropy(logits, targets, {.label_smoothing = eps}), {(l0 + l1 + l2) / 3}, 1e-13);
  expect_close(ops::cross_entropy(logits, targets, {.reduction = Reduction::None, .label_smoothing = eps}),
               {l0, l1, l2}, 1e-13);
  // With smoothing 1 only the uniform term is left: mean over classes of -log p.
  expect_close(ops::cross_entropy(logits, targets, {.reduction = Reduction::Sum, .label_smoothing = 1.0}),
               {hand_ce(row(0), 2, 1.0) + hand_ce(row(1), 0, 1.0) + hand_ce(row(2), 3, 1.0)}, 1e-13);
  // Smoothing together with ignore_index: the ignored sample contributes neither term.
  Tensor t_ign = Tensor::from_vector<int64_t>({2, -100, 3}, {3});
  expect_close(ops::cross_entropy(logits, t_ign, {.label_smoothing = eps}), {(l0 + l2) / 2}, 1e-13);
}

// PyTorch 1.13, float64: F.cross_entropy(logits, [0, -100, 2, 1], label_smoothing=0.2, reduction=...). The
// ignored target adds 0 to both terms and is not counted: the mean is the sum over 3 targets / 3.
TEST(CrossEntropy, LabelSmoothingWithIgnoredTargetsMatchesPyTorch) {
  const Tensor logits =
      Tensor::from_vector<double>({0.5, -1.25, 2.0, 1.5, 0.25, -0.75, -2.0, 0.0, 1.0, 0.125, 0.375, -0.5}, {4, 3});
  const Tensor targets = Tensor::from_vector<int64_t>({0, -100, 2, 1}, {4});
  const ops::CrossEntropyOptions mean{.label_smoothing = 0.2};
  expect_close(ops::cross_entropy(logits, targets, mean), {1.0754838314667987}, 1e-14);
  expect_close(ops::cross_entropy(logits, targets, {.reduction = Reduction::Sum, .label_smoothing = 0.2}),
               {3.226451494400396}, 1e-14);
  expect_close(ops::cross_entropy(logits, targets, {.reduction = Reduction::None, .label_smoothing = 0.2}),
               {1.7492886497686995, 0.0, 0.6156788834348532, 0.8614839611968437}, 1e-14);
  const Tensor g =
      grad([&](const std::vector<Tensor>& xs) { return ops::cross_entropy(xs[0], targets, mean); })({logits})[0];
  expect_close(
      g,
      {-0.22994882818640744, -0.011979975446743415, 0.2419288036331508, 0.0, 0.0, 0.0, -0.010515879902442318,
       0.06427659789191746, -0.053760717989475175, 0.09601098767625149, -0.13707444228267193, 0.04106345460642044},
      1e-14);
  // All ignored: 0 / 0 = NaN, as PyTorch.
  EXPECT_TRUE(
      std::isnan(ops::cross_entropy(logits, Tensor::from_vector<int64_t>({-100, -100, -100, -100}, {4}), mean).item()));
}

TEST(CrossEntropy, SpatialTargets) {
  // logits [N=2, C=3, d=2]: the class axis is 1; targets [2, 2].
  std::vector<double> data;
  for (int i = 0; i < 12; ++i) data.push_back(std::sin(i * 1.3) * 2);
  Tensor logits = Tensor::from_vector<double>(data, {2, 3, 2});
  Tensor targets = Tensor::from_vector<int64_t>({0, 2, 1, -100}, {2, 2});
  const int64_t tv[2][2] = {{0, 2}, {1, -100}};
  std::vector<double> want;
  double total = 0;
  for (int n = 0; n < 2; ++n) {
    for (int d = 0; d < 2; ++d) {
      std::vector<double> lane;
      for (int c = 0; c < 3; ++c) lane.push_back(data[static_cast<size_t>(n * 6 + c * 2 + d)]);
      const double l = tv[n][d] < 0 ? 0.0 : hand_ce(lane, tv[n][d], 0.1);
      want.push_back(l);
      total += l;
    }
  }
  Tensor none = ops::cross_entropy(logits, targets, {.reduction = Reduction::None, .label_smoothing = 0.1});
  expect_shape(none, {2, 2});
  expect_close(none, want, 1e-13);
  expect_close(ops::cross_entropy(logits, targets, {.label_smoothing = 0.1}), {total / 3}, 1e-13);
}

TEST(CrossEntropy, UnbatchedAndTargetDtypes) {
  Tensor logits = Tensor::from_vector<double>(row(1), {4});
  expect_close(ops::cross_entropy(logits, Tensor::from_vector<int64_t>({3}, {})), {hand_ce(row(1), 3)}, 1e-13);
  Tensor batched = Tensor::from_vector<double>(kLogits, {3, 4});
  const double want = (hand_ce(row(0), 1) + hand_ce(row(1), 1) + hand_ce(row(2), 0)) / 3;
  expect_close(ops::cross_entropy(batched, Tensor::from_vector<int32_t>({1, 1, 0}, {3})), {want}, 1e-13);
  expect_close(ops::cross_entropy(batched, Tensor::from_vector<uint8_t>({1, 1, 0}, {3})), {want}, 1e-13);
}

TEST(CrossEntropy, HalfAndFloatLogits) {
  Tensor t = Tensor::from_vector<int64_t>({2, 0, 3}, {3});
  const double want = (hand_ce(row(0), 2) + hand_ce(row(1), 0) + hand_ce(row(2), 3)) / 3;
  Tensor f32 = ops::cross_entropy(ops::cast(Tensor::from_vector<double>(kLogits, {3, 4}), DType::f32), t);
  EXPECT_EQ(f32.dtype(), DType::f32);
  expect_close(f32, {want}, 1e-6);
  for (DType dt : {DType::f16, DType::bf16}) {
    Tensor h = ops::cross_entropy(ops::cast(Tensor::from_vector<double>(kLogits, {3, 4}), dt), t);
    EXPECT_EQ(h.dtype(), dt);
    expect_close(h, {want}, 3e-2, 1e-2);
  }
}

TEST(CrossEntropy, Errors) {
  Tensor logits = ops::zeros({3, 4});
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, ops::zeros({3})), "cross_entropy", "f32[3, 4]", "f32[3]", "integer");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, ops::zeros({3}, DType::boolean)), "cross_entropy", "bool[3]");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, ops::zeros({4}, DType::i64)), "cross_entropy", "f32[3, 4]", "i64[4]",
                       "expected [3]");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(ops::zeros({2, 3, 5}), ops::zeros({2, 3}, DType::i64)), "cross_entropy",
                       "f32[2, 3, 5]", "i64[2, 3]", "expected [2, 5]");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(ops::zeros({3, 4}, DType::i32), ops::zeros({3}, DType::i64)), "cross_entropy",
                       "i32[3, 4]", "floating");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(Tensor::scalar(1.0), ops::zeros({}, DType::i64)), "cross_entropy", "scalar");
  Tensor t = ops::zeros({3}, DType::i64);
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, t, {.label_smoothing = -0.1}), "cross_entropy", "label_smoothing",
                       "-0.1");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, t, {.label_smoothing = 1.5}), "cross_entropy", "label_smoothing");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, t, {.label_smoothing = std::nan("")}), "label_smoothing");
  // Concrete targets are range-checked up front, naming the bad class.
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, Tensor::from_vector<int64_t>({0, 4, 1}, {3})), "cross_entropy",
                       "target 4", "4 classes");
  EXPECT_TESSERA_ERROR(ops::cross_entropy(logits, Tensor::from_vector<int64_t>({0, -1, 1}, {3})), "target -1");
}

TEST(CrossEntropy, OutOfRangeTargetInCompiledGraphThrows) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::cross_entropy(xs[0], xs[1])}; });
  Tensor logits = ops::zeros({2, 3});
  auto ok = f({logits, Tensor::from_vector<int64_t>({2, -100}, {2})});
  expect_close(ok[0], {std::log(3.0)}, 1e-6);
  EXPECT_THROW(f({logits, Tensor::from_vector<int64_t>({3, 0}, {2})}), Error);
}

TEST(CrossEntropy, Gradients) {
  const Array targets = Array::from_vector<int64_t>({2, -100, 0, 3, 1}, {5});
  for (double eps : {0.0, 0.15}) {
    for (Reduction red : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
      EXPECT_GRADIENTS_MATCH(
          [eps, red](const std::vector<Tensor>& xs) {
            return ops::cross_entropy(xs[0], xs[1], {.reduction = red, .label_smoothing = eps});
          },
          (std::vector<Array>{random_array({5, 4}, 31, -2, 2), targets}));
    }
  }
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::cross_entropy(xs[0], xs[1], {.label_smoothing = 0.3}); },
      (std::vector<Array>{random_array({2, 3, 2, 2}, 32, -2, 2),
                          Array::from_vector<int64_t>({0, 1, 2, -100, 2, 2, 1, 0}, {2, 2, 2})}));
}

TEST(CrossEntropy, HandGradient) {
  // d mean CE / d logits = (softmax - onehot) / N over counted rows; zero for ignored rows.
  Tensor logits = Tensor::from_vector<double>(kLogits, {3, 4});
  Tensor targets = Tensor::from_vector<int64_t>({2, -100, 3}, {3});
  auto g = grad([targets](const std::vector<Tensor>& xs) { return ops::cross_entropy(xs[0], targets); })({logits});
  std::vector<double> want(12, 0.0);
  for (int i : {0, 2}) {
    const std::vector<double> r = row(i);
    double s = 0;
    for (double v : r) s += std::exp(v);
    for (int c = 0; c < 4; ++c) {
      want[static_cast<size_t>(i * 4 + c)] = (std::exp(r[static_cast<size_t>(c)]) / s - (c == (i == 0 ? 2 : 3))) / 2;
    }
  }
  expect_close(g[0], want, 1e-14);
}

TEST(NllLoss, ValuesAndGradients) {
  const std::vector<double> lp{-0.5, -1.2, -2.0, -0.1, -3.0, -0.7};
  Tensor log_probs = Tensor::from_vector<double>(lp, {3, 2});
  Tensor targets = Tensor::from_vector<int64_t>({1, -100, 0}, {3});
  expect_close(ops::nll_loss(log_probs, targets), {(1.2 + 3.0) / 2}, 1e-14);
  expect_close(ops::nll_loss(log_probs, targets, Reduction::Sum), {1.2 + 3.0}, 1e-14);
  expect_close(ops::nll_loss(log_probs, targets, Reduction::None), {1.2, 0, 3.0}, 1e-14);
  expect_close(ops::nll_loss(log_probs, Tensor::from_vector<int64_t>({1, 1, 1}, {3}), Reduction::Mean, 1), {NAN});
  EXPECT_TESSERA_ERROR(ops::nll_loss(log_probs, ops::zeros({2}, DType::i64)), "nll_loss", "f64[3, 2]", "i64[2]");
  EXPECT_TESSERA_ERROR(ops::nll_loss(log_probs, ops::zeros({3})), "nll_loss", "integer");
  EXPECT_TESSERA_ERROR(ops::nll_loss(log_probs, Tensor::from_vector<int64_t>({0, 2, 0}, {3})), "nll_loss", "target 2");
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::nll_loss(xs[0], xs[1]); },
      (std::vector<Array>{random_array({3, 2}, 41), Array::from_vector<int32_t>({1, -100, 0}, {3})}));
  // log_softmax + nll_loss == cross_entropy
  Tensor logits = Tensor::from_vector<double>(kLogits, {3, 4});
  Tensor t = Tensor::from_vector<int64_t>({3, 1, 2}, {3});
  expect_close(ops::nll_loss(ops::log_softmax(logits, 1), t), {ops::cross_entropy(logits, t).item()}, 1e-14);
}

TEST(MseLoss, ValuesErrorsGradients) {
  Tensor p = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  Tensor t = Tensor::from_vector<double>({1.5, 2, 1, 5}, {2, 2});
  expect_close(ops::mse_loss(p, t), {(0.25 + 0 + 4 + 1) / 4}, 1e-14);
  expect_close(ops::mse_loss(p, t, Reduction::Sum), {5.25}, 1e-14);
  expect_close(ops::mse_loss(p, t, Reduction::None), {0.25, 0, 4, 1}, 1e-14);
  Tensor h = ops::mse_loss(ops::cast(p, DType::f16), ops::cast(t, DType::f16));
  EXPECT_EQ(h.dtype(), DType::f16);
  expect_close(h, {1.3125}, 1e-3);
  EXPECT_TESSERA_ERROR(ops::mse_loss(p, ops::zeros({4})), "mse_loss", "f64[2, 2]", "f32[4]", "must match");
  EXPECT_TESSERA_ERROR(ops::mse_loss(ops::zeros({2}, DType::i32), ops::zeros({2}, DType::i32)), "mse_loss", "i32[2]",
                       "floating");
  for (Reduction red : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    EXPECT_GRADIENTS_MATCH([red](const std::vector<Tensor>& xs) { return ops::mse_loss(xs[0], xs[1], red); },
                           (std::vector<Array>{random_array({2, 3}, 51), random_array({2, 3}, 52)}));
  }
}

TEST(BceWithLogits, ValuesAndStability) {
  const std::vector<double> x{0.5, -1.0, 2.0, 0.0}, t{1.0, 0.0, 0.3, 1.0};
  std::vector<double> want;
  double total = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double l = -(t[i] * std::log(sigmoid(x[i])) + (1 - t[i]) * std::log(1 - sigmoid(x[i])));
    want.push_back(l);
    total += l;
  }
  Tensor xt = Tensor::from_vector<double>(x, {2, 2}), tt = Tensor::from_vector<double>(t, {2, 2});
  expect_close(ops::binary_cross_entropy_with_logits(xt, tt, Reduction::None), want, 1e-14);
  expect_close(ops::binary_cross_entropy_with_logits(xt, tt), {total / 4}, 1e-14);
  expect_close(ops::binary_cross_entropy_with_logits(xt, tt, Reduction::Sum), {total}, 1e-14);
  // Large logits: the naive formula would give inf or NaN.
  Tensor big = Tensor::from_vector<float>({100, -100, 100, -100}, {4});
  Tensor bt = Tensor::from_vector<float>({0, 1, 1, 0}, {4});
  expect_close(ops::binary_cross_entropy_with_logits(big, bt, Reduction::None), {100, 100, 0, 0}, 1e-4);
}

TEST(BceWithLogits, ErrorsAndGradients) {
  EXPECT_TESSERA_ERROR(ops::binary_cross_entropy_with_logits(ops::zeros({3}), ops::zeros({3, 1})),
                       "binary_cross_entropy_with_logits", "f32[3]", "f32[3, 1]");
  EXPECT_TESSERA_ERROR(ops::binary_cross_entropy_with_logits(ops::zeros({3}), ops::zeros({3}, DType::i64)),
                       "binary_cross_entropy_with_logits", "i64[3]", "floating");
  for (Reduction red : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    EXPECT_GRADIENTS_MATCH(
        [red](const std::vector<Tensor>& xs) { return ops::binary_cross_entropy_with_logits(xs[0], xs[1], red); },
        (std::vector<Array>{random_array({2, 3}, 61, -3, 3), random_array({2, 3}, 62, 0, 1)}));
  }
  // At x = 0 the derivative is sigmoid(0) - t exactly.
  auto g = grad([](const std::vector<Tensor>& xs) {
    return ops::binary_cross_entropy_with_logits(xs[0], xs[1], Reduction::Sum);
  })({Tensor::from_vector<double>({0.0, 0.0}, {2}), Tensor::from_vector<double>({1.0, 0.25}, {2})});
  expect_close(g[0], {-0.5, 0.25}, 1e-15);
  expect_close(g[1], {0.0, 0.0}, 1e-15);  // d/dt = -x
}
