// softmax / log_softmax: values against std::exp/std::log, stability, dtypes, errors, gradients (first
// and second order) and the decompositions.
#include <limits>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

std::vector<double> hand_softmax(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::exp(x);
  std::vector<double> out;
  for (double x : v) out.push_back(std::exp(x) / s);
  return out;
}

std::vector<double> hand_log_softmax(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::exp(x);
  std::vector<double> out;
  for (double x : v) out.push_back(x - std::log(s));
  return out;
}

const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(Softmax, LastAxisValues) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, -1, 0, 0.5}, {2, 3});
  std::vector<double> want = hand_softmax({1, 2, 3});
  const std::vector<double> row2 = hand_softmax({-1, 0, 0.5});
  want.insert(want.end(), row2.begin(), row2.end());
  expect_close(ops::softmax(x), want, 1e-14);
  expect_close(ops::softmax(x, 1), want, 1e-14);
  EXPECT_EQ(ops::softmax(x).op_name(), "softmax");
}

TEST(Softmax, FirstAxisOfRank3) {
  // x[i][j][k] = i - j * 0.5 + k * 0.25; softmax over axis 1 (length 3).
  std::vector<double> data;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) data.push_back(i * 1.0 - j * 0.5 + k * 0.25 + (i * j * k % 3) * 0.1);
  Tensor x = Tensor::from_vector<double>(data, {2, 3, 4});
  std::vector<double> want(data.size());
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 4; ++k) {
      std::vector<double> lane;
      for (int j = 0; j < 3; ++j) lane.push_back(data[static_cast<size_t>(i * 12 + j * 4 + k)]);
      const std::vector<double> s = hand_softmax(lane);
      for (int j = 0; j < 3; ++j) want[static_cast<size_t>(i * 12 + j * 4 + k)] = s[static_cast<size_t>(j)];
    }
  }
  expect_close(ops::softmax(x, 1), want, 1e-14);
  expect_close(ops::softmax(x, -2), want, 1e-14);
}

TEST(LogSoftmax, Values) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, -1, 0, 0.5}, {2, 3});
  // Along axis 0: lanes are the columns.
  std::vector<double> want(6);
  for (int j = 0; j < 3; ++j) {
    const double a = std::vector<double>{1, 2, 3}[static_cast<size_t>(j)];
    const double b = std::vector<double>{-1, 0, 0.5}[static_cast<size_t>(j)];
    const std::vector<double> l = hand_log_softmax({a, b});
    want[static_cast<size_t>(j)] = l[0];
    want[static_cast<size_t>(3 + j)] = l[1];
  }
  expect_close(ops::log_softmax(x, 0), want, 1e-14);
  EXPECT_EQ(ops::log_softmax(x, 0).op_name(), "log_softmax");
}

TEST(Softmax, StridedViewInput) {
  // A transposed (non-contiguous) input must give the softmax of the transposed values.
  Tensor x = Tensor::from_vector<double>({1, 2, 3, -1, 0, 0.5}, {2, 3});
  Tensor xt = ops::transpose(x, 0, 1);  // [3, 2]: rows (1,-1), (2,0), (3,0.5)
  std::vector<double> want;
  for (auto row : std::vector<std::vector<double>>{{1, -1}, {2, 0}, {3, 0.5}}) {
    const std::vector<double> s = hand_softmax(row);
    want.insert(want.end(), s.begin(), s.end());
  }
  expect_close(ops::softmax(xt, 1), want, 1e-14);
}

TEST(Softmax, LargeValuesAreStable) {
  Tensor x = Tensor::from_vector<float>({1000, 1001, -1000, -1001}, {2, 2});
  const double e = std::exp(1.0);
  expect_close(ops::softmax(x), {1 / (1 + e), e / (1 + e), e / (1 + e), 1 / (1 + e)}, 1e-6);
  expect_close(ops::log_softmax(x), {-std::log1p(e), -std::log1p(1 / e), -std::log1p(1 / e), -std::log1p(e)}, 1e-5);
}

TEST(Softmax, InfinityAndNan) {
  Tensor x = Tensor::from_vector<double>({-kInf, 0, 1, NAN, -kInf, -kInf}, {3, 2});
  // A -inf entry gets probability 0; NaN poisons its lane; an all -inf lane is NaN (as PyTorch).
  expect_close(ops::softmax(x), {0, 1, NAN, NAN, NAN, NAN});
  expect_close(ops::log_softmax(x), {-kInf, 0, NAN, NAN, NAN, NAN});
}

TEST(Softmax, ScalarAndEmpty) {
  Tensor s = Tensor::scalar(3.0, DType::f64);
  expect_close(ops::softmax(s), {1.0});
  expect_close(ops::log_softmax(s, 0), {0.0});
  expect_shape(ops::softmax(s), {});
  Tensor empty = ops::zeros({0, 3}, DType::f32);
  expect_shape(ops::softmax(empty), {0, 3});
  EXPECT_EQ(ops::softmax(empty).numel(), 0);
  Tensor empty_lane = ops::zeros({2, 0}, DType::f32);
  EXPECT_EQ(ops::log_softmax(empty_lane).numel(), 0);
}

TEST(Softmax, HalfPrecision) {
  for (DType dt : {DType::f16, DType::bf16}) {
    Tensor x = ops::cast(Tensor::from_vector<float>({0.5f, -1.0f, 2.0f, 0.0f}, {4}), dt);
    Tensor y = ops::softmax(x);
    EXPECT_EQ(y.dtype(), dt);
    expect_close(y, hand_softmax({0.5, -1.0, 2.0, 0.0}), 1e-2, 1e-2);
    Tensor l = ops::log_softmax(x);
    EXPECT_EQ(l.dtype(), dt);
    expect_close(l, hand_log_softmax({0.5, -1.0, 2.0, 0.0}), 2e-2, 1e-2);
  }
}

TEST(Softmax, Errors) {
  Tensor xi = ops::zeros({2, 3}, DType::i32);
  EXPECT_TESSERA_ERROR(ops::softmax(xi), "softmax", "i32[2, 3]", "floating");
  EXPECT_TESSERA_ERROR(ops::log_softmax(xi), "log_softmax", "i32[2, 3]", "floating");
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::softmax(x, 2), "softmax", "f32[2, 3]", "axis 2");
  EXPECT_TESSERA_ERROR(ops::log_softmax(x, -3), "log_softmax", "f32[2, 3]", "axis -3");
  EXPECT_TESSERA_ERROR(ops::softmax(Tensor::scalar(1.0), 1), "softmax", "axis 1");
}

TEST(Softmax, SumsToOneAlongAxisAnyRank) {
  Tensor x = Tensor::from_array(random_array({2, 1, 3, 2, 4}, 7, -3, 3));
  for (int64_t axis = 0; axis < 5; ++axis) {
    Tensor s = ops::sum(ops::softmax(x, axis), {axis});
    expect_close(s, std::vector<double>(static_cast<size_t>(s.numel()), 1.0), 1e-12);
    // exp(log_softmax) == softmax
    const std::vector<double> a = ops::exp(ops::log_softmax(x, axis)).to_vector<double>();
    expect_close(ops::softmax(x, axis), a, 1e-12);
  }
}

TEST(Softmax, Gradients) {
  for (int64_t axis : {0, 1, -1}) {
    EXPECT_GRADIENTS_MATCH([axis](const std::vector<Tensor>& xs) { return ops::softmax(xs[0], axis); },
                           (std::vector<Array>{random_array({3, 4, 2}, 11 + static_cast<uint64_t>(axis), -2, 2)}));
    EXPECT_GRADIENTS_MATCH([axis](const std::vector<Tensor>& xs) { return ops::log_softmax(xs[0], axis); },
                           (std::vector<Array>{random_array({3, 4, 2}, 21 + static_cast<uint64_t>(axis), -2, 2)}));
  }
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::softmax(xs[0]) * ops::log_softmax(xs[0]); },
                         (std::vector<Array>{random_array({5}, 3, -2, 2)}));
}

TEST(Softmax, HandGradient) {
  // d/dx_j sum_i w_i softmax(x)_i = s_j (w_j - sum_i w_i s_i)
  const std::vector<double> xv{0.3, -0.2, 1.1}, w{1.0, -2.0, 0.5};
  const std::vector<double> s = hand_softmax(xv);
  const double ws = w[0] * s[0] + w[1] * s[1] + w[2] * s[2];
  Tensor wt = Tensor::from_vector<double>(w, {3});
  auto g = grad([wt](const std::vector<Tensor>& xs) { return ops::sum(ops::softmax(xs[0]) * wt); })(
      {Tensor::from_vector<double>(xv, {3})});
  expect_close(g[0], {s[0] * (w[0] - ws), s[1] * (w[1] - ws), s[2] * (w[2] - ws)}, 1e-14);
  // d/dx_j sum_i w_i log_softmax(x)_i = w_j - s_j sum_i w_i
  const double wsum = w[0] + w[1] + w[2];
  auto gl = grad([wt](const std::vector<Tensor>& xs) { return ops::sum(ops::log_softmax(xs[0]) * wt); })(
      {Tensor::from_vector<double>(xv, {3})});
  expect_close(gl[0], {w[0] - s[0] * wsum, w[1] - s[1] * wsum, w[2] - s[2] * wsum}, 1e-14);
}

TEST(Softmax, SecondDerivatives) {
  const Array w = random_array({3, 4}, 99);
  for (bool log_variant : {false, true}) {
    auto first = [w, log_variant](const std::vector<Tensor>& xs) {
      auto f = [w, log_variant](const std::vector<Tensor>& ys) {
        const Tensor s = log_variant ? ops::log_softmax(ys[0], 1) : ops::softmax(ys[0], 1);
        return ops::sum(ops::square(s) * Tensor::from_array(w));
      };
      return grad(f)(xs)[0];
    };
    EXPECT_GRADIENTS_MATCH(first, (std::vector<Array>{random_array({3, 4}, 5, -1.5, 1.5)}));
  }
}

TEST(Softmax, DecompositionsMatch) {
  const Array xa = random_array({2, 3, 4}, 13, -4, 4);
  for (const char* name : {"softmax", "log_softmax"}) {
    const ir::OpDef& def = ir::OpRegistry::instance().get(name);
    ASSERT_TRUE(static_cast<bool>(def.decompose)) << name;
    for (int64_t axis : {0, 2}) {
      Tensor x = Tensor::from_array(xa);
      const ir::Attrs attrs{{"axis", axis}};
      Tensor decomposed(def.decompose({x.value()}, attrs).at(0));
      Tensor direct(ir::make_node1(name, {x.value()}, attrs));
      expect_close(decomposed, direct.to_vector<double>(), 1e-12);
      // The decomposition is built from other ops only.
      EXPECT_NE(decomposed.op_name(), name);
    }
    // Its gradient agrees with the op's own rule.
    auto via_decompose = [&def](const std::vector<Tensor>& xs) {
      return Tensor(def.decompose({xs[0].value()}, ir::Attrs{{"axis", int64_t{1}}}).at(0));
    };
    EXPECT_GRADIENTS_MATCH(via_decompose, (std::vector<Array>{xa}));
  }
}

TEST(Softmax, AppearsInTracedGraph) {
  ir::Graph g = trace([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::log_softmax(xs[0], 1)}; },
                      {{DType::f32, {2, 5}}}, {"x"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  EXPECT_NE(text.find("log_softmax"), std::string::npos) << text;
  EXPECT_EQ(ir::print_graph(ir::parse_graph(text)), text);
}
