// Values of mean, max, min, prod, argmax, argmin, logsumexp, var, std and cumsum, hand-computed or
// from independent brute-force loops.
#include <functional>
#include <limits>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// [[1, 5, 3], [4, 2, 6]]
Tensor sample(DType dt = DType::f32) {
  return Tensor(Array::from_vector<double>({1, 5, 3, 4, 2, 6}, {2, 3}).astype(dt));
}

// Brute-force reduction of a row-major array over `axes` (keepdims layout) with fold `f`, independent
// of the library's kernels.
std::vector<double> brute_reduce(const std::vector<double>& x, const Shape& shape, const std::vector<int64_t>& axes,
                                 double init, const std::function<double(double, double)>& f) {
  Shape out_shape = shape;
  for (int64_t a : axes) out_shape[static_cast<size_t>(a)] = 1;
  std::vector<double> out(static_cast<size_t>(shape_numel(out_shape)), init);
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (size_t n = 0; n < x.size(); ++n) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      o = o * out_shape[static_cast<size_t>(d)] +
          (out_shape[static_cast<size_t>(d)] == 1 ? 0 : idx[static_cast<size_t>(d)]);
    out[static_cast<size_t>(o)] = f(out[static_cast<size_t>(o)], x[n]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

}  // namespace

TEST(Mean, AxesAndKeepdims) {
  Tensor x = sample();
  expect_close(ops::mean(x), {3.5});
  expect_shape(ops::mean(x), {});
  expect_close(ops::mean(x, {0}), {2.5, 3.5, 4.5});
  expect_close(ops::mean(x, {1}), {3, 4});
  Tensor k = ops::mean(x, {-1}, true);
  expect_shape(k, {2, 1});
  expect_close(k, {3, 4});
  expect_shape(ops::mean(x, {}, true), {1, 1});
  expect_close(ops::mean(x, {0, 1}), {3.5});
  EXPECT_EQ(ops::mean(x).dtype(), DType::f32);
}

TEST(Mean, HalfPrecisionAccumulatesWide) {
  // 1000 x 100 sums to 1e5, beyond f16's range (65504); the mean itself is representable.
  Tensor x = ops::full({1000}, 100.0, DType::f16);
  Tensor m = ops::mean(x);
  EXPECT_EQ(m.dtype(), DType::f16);
  expect_close(m, {100});
  Tensor b = ops::full({4, 3}, 2.5, DType::bf16);
  EXPECT_EQ(ops::mean(b, {0}).dtype(), DType::bf16);
  expect_close(ops::mean(b, {0}), {2.5, 2.5, 2.5});
}

TEST(Mean, EmptySliceIsNaN) {
  Tensor m = ops::mean(ops::zeros({2, 0}), {1});
  expect_shape(m, {2});
  expect_close(m, {kNaN, kNaN});
}

TEST(MaxMin, AxesAndKeepdims) {
  Tensor x = sample();
  expect_close(ops::max(x), {6});
  expect_close(ops::max(x, {0}), {4, 5, 6});
  expect_close(ops::max(x, {1}), {5, 6});
  expect_close(ops::min(x), {1});
  expect_close(ops::min(x, {0}), {1, 2, 3});
  expect_close(ops::min(x, {-1}), {1, 2});
  Tensor k = ops::max(x, {-2}, true);
  expect_shape(k, {1, 3});
  expect_close(k, {4, 5, 6});
  expect_shape(ops::min(x, {}, true), {1, 1});
}

TEST(MaxMin, Dtypes) {
  Tensor xi = Tensor::from_vector<int32_t>({-7, 3, 12, -40}, {2, 2});
  Tensor mx = ops::max(xi, {1});
  EXPECT_EQ(mx.dtype(), DType::i32);
  EXPECT_EQ(mx.to_vector<int32_t>(), (std::vector<int32_t>{3, 12}));
  EXPECT_EQ(ops::min(xi).to_vector<int32_t>(), (std::vector<int32_t>{-40}));
  Tensor xu = Tensor::from_vector<uint8_t>({200, 7, 255}, {3});
  EXPECT_EQ(ops::max(xu).to_vector<uint8_t>(), (std::vector<uint8_t>{255}));
  EXPECT_EQ(ops::min(xu).to_vector<uint8_t>(), (std::vector<uint8_t>{7}));
  // i64 beyond 2^53 is compared exactly.
  const int64_t big = (int64_t{1} << 60);
  Tensor xl = Tensor::from_vector<int64_t>({big + 1, big, big + 3, big + 2}, {4});
  EXPECT_EQ(ops::max(xl).to_vector<int64_t>(), (std::vector<int64_t>{big + 3}));
  Tensor xh = Tensor(Array::from_vector<double>({-1.5, 2.25, 0.5}, {3}).astype(DType::f16));
  EXPECT_EQ(ops::max(xh).dtype(), DType::f16);
  expect_close(ops::max(xh), {2.25});
  expect_close(ops::min(Tensor(Array::from_vector<double>({-1.5, 2.25}, {2}).astype(DType::bf16))), {-1.5});
  Tensor xb = Tensor::from_vector<bool>({false, true, false}, {3});
  EXPECT_EQ(ops::max(xb).dtype(), DType::boolean);
  EXPECT_EQ(ops::max(xb).to_vector<bool>(), (std::vector<bool>{true}));
  EXPECT_EQ(ops::min(xb).to_vector<bool>(), (std::vector<bool>{false}));
}

TEST(MaxMin, NaNAndInfinity) {
  Tensor x = Tensor::from_vector<double>({1, kNaN, 3, -kInf, 2, kInf}, {2, 3});
  expect_close(ops::max(x, {1}), {kNaN, kInf});
  expect_close(ops::min(x, {1}), {kNaN, -kInf});
  expect_close(ops::max(x, {0}), {1, kNaN, kInf});
}

TEST(MaxMin, RankFiveNegativeAxes) {
  const Shape shape = {2, 3, 1, 4, 2};
  const Array a = random_array(shape, 5);
  const std::vector<double> v = a.to_f64();
  Tensor x(a);
  const auto mx = [](double p, double q) { return std::max(p, q); };
  const auto mn = [](double p, double q) { return std::min(p, q); };
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{-1, 1}, {0, 2, 3}, {4}, {-5, -2}}) {
    std::vector<int64_t> norm;
    for (int64_t ax : axes) norm.push_back(ax < 0 ? ax + 5 : ax);
    std::sort(norm.begin(), norm.end());
    Tensor k = ops::max(x, axes, true);
    Shape kept = shape;
    for (int64_t ax : norm) kept[static_cast<size_t>(ax)] = 1;
    expect_shape(k, kept);
    expect_close(k, brute_reduce(v, shape, norm, -kInf, mx), 0);
    expect_close(ops::min(x, axes, false), brute_reduce(v, shape, norm, kInf, mn), 0);
    const auto add = [](double p, double q) { return p + q; };
    std::vector<double> sums = brute_reduce(v, shape, norm, 0.0, add);
    int64_t count = 1;
    for (int64_t ax : norm) count *= shape[static_cast<size_t>(ax)];
    for (double& s : sums) s /= static_cast<double>(count);
    expect_close(ops::mean(x, axes), sums, 1e-12);
    const auto mul = [](double p, double q) { return p * q; };
    expect_close(ops::prod(x, axes, true), brute_reduce(v, shape, norm, 1.0, mul), 1e-12);
  }
  // Dropping the reduced axes: shape check for a mix.
  expect_shape(ops::max(x, {-1, 1}), {2, 1, 4});
}

TEST(MaxMin, ReducingAnAxisOfOtherwiseEmptyTensor) {
  // [0, 3] reduced over axis 1: each (non-existent) slice has 3 elements, so this is fine.
  Tensor m = ops::max(ops::zeros({0, 3}), {1});
  expect_shape(m, {0});
  EXPECT_EQ(m.array().numel(), 0);
}

TEST(Prod, Values) {
  Tensor x = sample();
  expect_close(ops::prod(x), {720});
  expect_close(ops::prod(x, {0}), {4, 10, 18});
  expect_close(ops::prod(x, {-1}, true), {15, 48});
  expect_shape(ops::prod(x, {-1}, true), {2, 1});
  expect_close(ops::prod(ops::zeros({3, 0}), {1}), {1, 1, 1});
  expect_close(ops::prod(ops::zeros({0})), {1});
}

TEST(Prod, Dtypes) {
  Tensor xi = Tensor::from_vector<int32_t>({2, -3, 4, 5}, {2, 2});
  EXPECT_EQ(ops::prod(xi).dtype(), DType::i32);
  EXPECT_EQ(ops::prod(xi, {1}).to_vector<int32_t>(), (std::vector<int32_t>{-6, 20}));
  // i8 wraps like NumPy: 16 * 16 = 256 -> 0; 100 * 3 = 300 -> 44.
  Tensor x8 = Tensor::from_vector<int8_t>({16, 16, 100, 3}, {2, 2});
  EXPECT_EQ(ops::prod(x8, {1}).to_vector<int8_t>(), (std::vector<int8_t>{0, 44}));
  Tensor xl = Tensor::from_vector<int64_t>({int64_t{1} << 40, 3}, {2});
  EXPECT_EQ(ops::prod(xl).to_vector<int64_t>(), (std::vector<int64_t>{(int64_t{1} << 40) * 3}));
  Tensor xb = Tensor::from_vector<bool>({true, true, false, true}, {2, 2});
  EXPECT_EQ(ops::prod(xb, {1}).dtype(), DType::i64);
  EXPECT_EQ(ops::prod(xb, {1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  Tensor xh = ops::full({3}, 3.0, DType::f16);
  EXPECT_EQ(ops::prod(xh).dtype(), DType::f16);
  expect_close(ops::prod(xh), {27});
}

TEST(ArgMaxMin, Values) {
  Tensor x = sample();
  Tensor am = ops::argmax(x, 1);
  EXPECT_EQ(am.dtype(), DType::i64);
  EXPECT_EQ(am.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ops::argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(ops::argmin(x, -1).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ops::argmin(x, -2).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  Tensor k = ops::argmax(x, 1, true);
  expect_shape(k, {2, 1});
  EXPECT_EQ(k.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

TEST(ArgMaxMin, FirstOccurrenceAndNaN) {
  Tensor ties = Tensor::from_vector<float>({3, 1, 3, 1}, {4});
  EXPECT_EQ(ops::argmax(ties, 0).to_vector<int64_t>(), (std::vector<int64_t>{0}));
  EXPECT_EQ(ops::argmin(ties, 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
  Tensor nan = Tensor::from_vector<double>({1, kNaN, 5, kNaN}, {4});
  EXPECT_EQ(ops::argmax(nan, 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(ops::argmin(nan, 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
}

TEST(ArgMaxMin, DtypesAndRankFive) {
  Tensor x8 = Tensor::from_vector<int8_t>({-5, 7, 7, -9}, {4});
  EXPECT_EQ(ops::argmax(x8, 0).to_vector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(ops::argmin(x8, 0).to_vector<int64_t>(), (std::vector<int64_t>{3}));
  Tensor xh = Tensor(Array::from_vector<double>({0.5, -2, 8}, {3}).astype(DType::bf16));
  EXPECT_EQ(ops::argmax(xh, 0).to_vector<int64_t>(), (std::vector<int64_t>{2}));
  Tensor xb = Tensor::from_vector<bool>({false, false, true}, {3});
  EXPECT_EQ(ops::argmax(xb, 0).to_vector<int64_t>(), (std::vector<int64_t>{2}));

  const Shape shape = {2, 3, 1, 4, 2};
  const Array a = random_array(shape, 9);
  const std::vector<double> v = a.to_f64();
  Tensor am = ops::argmax(Tensor(a), -2);  // along the axis of size 4
  expect_shape(am, {2, 3, 1, 2});
  const std::vector<int64_t> got = am.to_vector<int64_t>();
  for (int64_t outer = 0; outer < 6; ++outer) {
    for (int64_t inner = 0; inner < 2; ++inner) {
      int64_t best = 0;
      for (int64_t i = 1; i < 4; ++i) {
        if (v[static_cast<size_t>((outer * 4 + i) * 2 + inner)] >
            v[static_cast<size_t>((outer * 4 + best) * 2 + inner)])
          best = i;
      }
      EXPECT_EQ(got[static_cast<size_t>(outer * 2 + inner)], best);
    }
  }
}

TEST(LogSumExp, Values) {
  Tensor x = Tensor::from_vector<double>({0, std::log(3.0), 1, 1}, {2, 2});
  expect_close(ops::logsumexp(x, {1}), {std::log(4.0), 1 + std::log(2.0)}, 1e-12);
  expect_close(ops::logsumexp(x), {std::log(4 + 2 * std::exp(1.0))}, 1e-12);
  expect_close(ops::logsumexp(x, {0}), {std::log(1 + std::exp(1.0)), std::log(3 + std::exp(1.0))}, 1e-12);
  Tensor k = ops::logsumexp(x, {-1}, true);
  expect_shape(k, {2, 1});
}

TEST(LogSumExp, StableForLargeAndInfiniteValues) {
  Tensor big = Tensor::from_vector<float>({1000, 1000, -1000, -1000}, {2, 2});
  expect_close(ops::logsumexp(big, {1}), {1000 + std::log(2.0), -1000 + std::log(2.0)}, 1e-3);
  Tensor inf = Tensor::from_vector<double>({-kInf, -kInf, -kInf, 0, kInf, 1, kNaN, 1}, {4, 2});
  expect_close(ops::logsumexp(inf, {1}), {-kInf, 0, kInf, kNaN});
  // An empty slice is log(0) = -inf.
  expect_close(ops::logsumexp(ops::zeros({2, 0}), {1}), {-kInf, -kInf});
}

TEST(LogSumExp, Dtypes) {
  Tensor h = Tensor(Array::from_vector<double>({0, 0, 0, 0}, {4}).astype(DType::f16));
  EXPECT_EQ(ops::logsumexp(h).dtype(), DType::f16);
  expect_close(ops::logsumexp(h), {std::log(4.0)}, 1e-3);
  Tensor b = Tensor(Array::from_vector<double>({100, 100}, {2}).astype(DType::bf16));
  expect_close(ops::logsumexp(b), {100 + std::log(2.0)}, 0.5);
}

TEST(LogSumExp, DecompositionMatches) {
  const ir::OpDef& def = ir::OpRegistry::instance().get("logsumexp");
  ASSERT_TRUE(static_cast<bool>(def.decompose));
  Tensor x = Tensor::from_vector<double>({0, std::log(3.0), 1000, 1000, -kInf, -kInf, kInf, 2}, {4, 2});
  for (bool keepdims : {false, true}) {
    const ir::Attrs attrs{{"axes", std::vector<int64_t>{-1}}, {"keepdims", keepdims}};
    Tensor d = def.decompose({x.value()}, attrs)[0];
    Tensor direct = ops::logsumexp(x, {-1}, keepdims);
    EXPECT_EQ(d.type(), direct.type());
    expect_close(d, {std::log(4.0), 1000 + std::log(2.0), -kInf, kInf}, 1e-12);
  }
  const Array r = random_array({2, 3, 4}, 3, -5, 5);
  const ir::Attrs all{{"axes", std::vector<int64_t>{}}, {"keepdims", false}};
  expect_close(def.decompose({Tensor(r).value()}, all)[0], ops::logsumexp(Tensor(r)).array().to_f64(), 1e-12);
}

TEST(VarStd, Values) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  // mean 2.5, squared deviations sum to 5.
  expect_close(ops::var(x), {5.0 / 3.0}, 1e-12);
  expect_close(ops::var(x, {}, 0), {1.25}, 1e-12);
  expect_close(ops::std(x), {std::sqrt(5.0 / 3.0)}, 1e-12);
  expect_close(ops::std(x, {0}, 0), {std::sqrt(1.25)}, 1e-12);
  Tensor m = sample(DType::f64);  // rows [1 5 3], [4 2 6]
  // Row 0: mean 3, devs 4+4+0 = 8; row 1: mean 4, devs 0+4+4 = 8.
  expect_close(ops::var(m, {1}), {4, 4}, 1e-12);
  Tensor k = ops::var(m, {-1}, 1, true);
  expect_shape(k, {2, 1});
  // Columns: [1 4] -> 4.5, [5 2] -> 4.5, [3 6] -> 4.5 (correction 1).
  expect_close(ops::var(m, {0}), {4.5, 4.5, 4.5}, 1e-12);
  expect_close(ops::std(m, {0}, 2), {kInf, kInf, kInf});  // count - correction = 0
  expect_close(ops::var(ops::ones({1})), {kNaN});         // 0 / 0
}

TEST(VarStd, DtypesAndPrecision) {
  // A large offset: a one-pass E[x^2] - E[x]^2 would lose the variance entirely in f32.
  Tensor x = Tensor::from_vector<float>({10000, 10001, 10002}, {3});
  expect_close(ops::var(x), {1.0}, 1e-6);
  Tensor h = Tensor(Array::from_vector<double>({200, 202, 204, 206}, {4}).astype(DType::f16));
  Tensor v = ops::var(h, {}, 0);
  EXPECT_EQ(v.dtype(), DType::f16);
  expect_close(v, {5}, 1e-2);
  EXPECT_EQ(ops::std(Tensor(Array::from_vector<double>({1, 3}, {2}).astype(DType::bf16))).dtype(), DType::bf16);
}

TEST(VarStd, RankFive) {
  const Shape shape = {2, 3, 1, 4, 2};
  const Array a = random_array(shape, 13);
  Tensor x(a);
  const std::vector<double> v = a.to_f64();
  const std::vector<int64_t> norm = {1, 4};
  const auto add = [](double p, double q) { return p + q; };
  const std::vector<double> sums = brute_reduce(v, shape, norm, 0.0, add);
  const std::vector<double> sq = brute_reduce(v, shape, norm, 0.0, [](double p, double q) { return p + q * q; });
  std::vector<double> expected;
  for (size_t i = 0; i < sums.size(); ++i) expected.push_back((sq[i] - sums[i] * sums[i] / 6) / 5);
  Tensor r = ops::var(x, {-1, 1}, 1, true);
  expect_shape(r, {2, 1, 1, 4, 1});
  expect_close(r, expected, 1e-12);
}

TEST(Cumsum, Values) {
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  expect_close(ops::cumsum(x, 0), {1, 3, 6, 10});
  expect_close(ops::cumsum(x, -1, true), {10, 9, 7, 4});
  Tensor m = sample(DType::f32);  // [[1 5 3], [4 2 6]]
  expect_close(ops::cumsum(m, 0), {1, 5, 3, 5, 7, 9});
  expect_close(ops::cumsum(m, 1), {1, 6, 9, 4, 6, 12});
  expect_close(ops::cumsum(m, -1, true), {9, 8, 3, 12, 8, 6});
  expect_shape(ops::cumsum(m, 1), {2, 3});
  expect_shape(ops::cumsum(ops::zeros({2, 0}), 1), {2, 0});
}

TEST(Cumsum, DtypesAndViews) {
  Tensor xi = Tensor::from_vector<int32_t>({5, -2, 7}, {3});
  EXPECT_EQ(ops::cumsum(xi, 0).dtype(), DType::i32);
  EXPECT_EQ(ops::cumsum(xi, 0).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 10}));
  Tensor xb = Tensor::from_vector<bool>({true, false, true, true}, {4});
  EXPECT_EQ(ops::cumsum(xb, 0).dtype(), DType::i64);
  EXPECT_EQ(ops::cumsum(xb, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 3}));
  // 4096 halves of 1: an f16 running sum would stall at 2048.
  Tensor h = ops::ones({4096}, DType::f16);
  Tensor c = ops::cumsum(h, 0);
  EXPECT_EQ(c.dtype(), DType::f16);
  EXPECT_EQ(c.array().to_f64().back(), 4096.0);
  // A transposed (non-contiguous) input.
  Tensor t = ops::transpose(sample(DType::f64));  // [[1 4], [5 2], [3 6]]
  expect_close(ops::cumsum(t, 0), {1, 4, 6, 6, 9, 12});
  // Rank 5, along a middle axis, against a brute-force running sum.
  const Shape shape = {2, 1, 3, 2, 2};
  const Array a = random_array(shape, 17);
  const std::vector<double> v = a.to_f64();
  std::vector<double> expected(v.size());
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t inner = 0; inner < 4; ++inner) {
      double s = 0;
      for (int64_t i = 0; i < 3; ++i) {
        const size_t at = static_cast<size_t>((o * 3 + i) * 4 + inner);
        s += v[at];
        expected[at] = s;
      }
    }
  expect_close(ops::cumsum(Tensor(a), -3), expected, 1e-12);
}

TEST(ReduceGraph, TextRoundTripAndCompile) {
  const MultiFn f = [](const std::vector<Tensor>& xs) {
    const Tensor& x = xs[0];
    return std::vector<Tensor>{ops::mean(x, {-1}, true),  ops::max(x, {0}),       ops::min(x),
                               ops::prod(x, {1}),         ops::argmax(x, 1),      ops::argmin(x, 0, true),
                               ops::logsumexp(x, {0, 1}), ops::var(x, {1}),       ops::std(x, {0}, 0),
                               ops::cumsum(x, 1),         ops::cumsum(x, 0, true)};
  };
  ir::Graph g = trace(f, {{DType::f32, {2, 3}}}, {"x"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  EXPECT_EQ(ir::print_graph(ir::parse_graph(text)), text) << text;

  auto compiled = compile(f);
  const std::vector<Tensor> r = compiled({sample()});  // [[1 5 3], [4 2 6]]
  expect_close(r[0], {3, 4});
  expect_close(r[1], {4, 5, 6});
  expect_close(r[2], {1});
  expect_close(r[3], {15, 48});
  EXPECT_EQ(r[4].to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r[5].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  double lse = 0;
  for (double v : {1, 5, 3, 4, 2, 6}) lse += std::exp(v);
  expect_close(r[6], {std::log(lse)}, 1e-5);
  expect_close(r[7], {4, 4}, 1e-5);
  expect_close(r[8], {1.5, 1.5, 1.5}, 1e-5);
  expect_close(r[9], {1, 6, 9, 4, 6, 12});
  expect_close(r[10], {5, 7, 9, 4, 2, 6});
}
