// Values of the random ops: determinism (same seed and counter, same numbers), independence of
// counters, the mapping from Philox words to values, ranges and moments of the distributions.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "tessera/core/philox.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {
constexpr int64_t kSamples = 100000;

struct Moments {
  double mean = 0, var = 0, skew = 0, kurtosis = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  double m2 = 0, m3 = 0, m4 = 0;
  for (double x : v) {
    const double d = x - m.mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  const double n = static_cast<double>(v.size());
  m.var = m2 / n;
  m.skew = (m3 / n) / std::pow(m.var, 1.5);
  m.kurtosis = (m4 / n) / (m.var * m.var);
  return m;
}
}  // namespace

TEST(RandomUniform, SameSeedAndOffsetGiveSameNumbers) {
  ops::Generator g1(42), g2(42);
  const auto a = ops::uniform({4, 5}, 0, 1, g1).to_vector<float>();
  const auto b = ops::uniform({4, 5}, 0, 1, g2).to_vector<float>();
  EXPECT_EQ(a, b);
  // The node is a pure function of its attributes: evaluating it again (or another node with the
  // same attributes) reproduces it.
  ops::Generator g3(42);
  g3.set_offset(0);
  EXPECT_EQ(ops::uniform({20}, 0, 1, g3).to_vector<float>(), a);
}

TEST(RandomUniform, DifferentSeedsOrOffsetsGiveDifferentNumbers) {
  ops::Generator g(1);
  const auto first = ops::uniform({64}, 0, 1, g).to_vector<float>();
  const auto second = ops::uniform({64}, 0, 1, g).to_vector<float>();  // the generator moved on
  ops::Generator other(2);
  const auto other_seed = ops::uniform({64}, 0, 1, other).to_vector<float>();
  int same_offset = 0, same_seed = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    same_offset += first[i] == second[i];
    same_seed += first[i] == other_seed[i];
  }
  EXPECT_LE(same_offset, 1);
  EXPECT_LE(same_seed, 1);
}

TEST(RandomUniform, ElementIUsesCounterOffsetPlusI) {
  // Shape does not matter, only the counter: a [4, 5] draw is the first 20 of a [40] draw at the same
  // counter, and the draw at offset 20 continues it.
  ops::Generator g(99);
  const auto whole = ops::uniform({40}, 0, 1, g).to_vector<float>();
  ops::Generator h(99);
  const auto head = ops::uniform({4, 5}, 0, 1, h).to_vector<float>();
  const auto tail = ops::uniform({20}, 0, 1, h).to_vector<float>();
  EXPECT_EQ(head, std::vector<float>(whole.begin(), whole.begin() + 20));
  EXPECT_EQ(tail, std::vector<float>(whole.begin() + 20, whole.end()));
}

TEST(RandomUniform, ValuesFollowThePhiloxWords) {
  // f32: the top 24 bits of word 0 of block (seed, offset + i); f64: 53 bits of words 0 and 1.
  const uint64_t seed = 0x0123456789abcdefull;
  ops::Generator g(seed);
  g.set_offset(1000);
  const auto f = ops::uniform({8}, 0, 1, g, DType::f32).to_vector<float>();
  const auto d = ops::uniform({8}, 0, 1, g, DType::f64).to_vector<double>();
  for (uint64_t i = 0; i < 8; ++i) {
    const PhiloxBlock b32 = philox4x32_10({static_cast<uint32_t>(1000 + i), 0, 0, 0}, {0x89abcdefu, 0x01234567u});
    EXPECT_EQ(static_cast<double>(f[i]), static_cast<double>(b32[0] >> 8) / 16777216.0) << i;
    const PhiloxBlock b64 = philox4x32_10({static_cast<uint32_t>(1008 + i), 0, 0, 0}, {0x89abcdefu, 0x01234567u});
    const uint64_t bits = (static_cast<uint64_t>(b64[1]) << 32 | b64[0]) >> 11;
    EXPECT_EQ(d[i], static_cast<double>(bits) / 9007199254740992.0) << i;
  }
}

TEST(RandomUniform, RangeAndMoments) {
  for (DType dt : {DType::f32, DType::f64}) {
    ops::Generator g(7);
    const auto v = ops::uniform({kSamples}, -2, 3, g, dt).to_vector<double>();
    for (double x : v) {
      ASSERT_GE(x, -2.0);
      ASSERT_LT(x, 3.0);
    }
    const Moments m = moments(v);
    EXPECT_NEAR(m.mean, 0.5, 0.03) << dtype_name(dt);         // sd of the mean: 0.0046
    EXPECT_NEAR(m.var, 25.0 / 12.0, 0.02) << dtype_name(dt);  // sd of the variance: 0.006
    EXPECT_NEAR(m.skew, 0.0, 0.03) << dtype_name(dt);
    EXPECT_NEAR(m.kurtosis, 1.8, 0.02) << dtype_name(dt);  // uniform: 9/5
    // Ten equal bins each hold a tenth (sd of a bin's share: 0.00095).
    std::vector<int> bins(10, 0);
    for (double x : v) ++bins[static_cast<size_t>(std::min(9.0, (x + 2.0) * 2.0))];
    for (int count : bins) EXPECT_NEAR(count / static_cast<double>(kSamples), 0.1, 0.006) << dtype_name(dt);
  }
}

TEST(RandomUniform, HalfPrecisionNeverReachesHigh) {
  // In f16/bf16 many draws just below 1 round to 1; they must land on the largest value below it.
  for (DType dt : {DType::f16, DType::bf16}) {
    ops::Generator g(3);
    const Tensor t = ops::uniform({kSamples}, 0, 1, g, dt);
    EXPECT_EQ(t.dtype(), dt);
    const auto v = t.to_vector<double>();
    const double below_one = dt == DType::f16 ? 1.0 - std::ldexp(1.0, -11) : 1.0 - std::ldexp(1.0, -8);
    EXPECT_EQ(*std::max_element(v.begin(), v.end()), below_one) << dtype_name(dt);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
    EXPECT_NEAR(moments(v).mean, 0.5, 0.01) << dtype_name(dt);
  }
  // Bounds that are not representable: values stay inside [low, high) as real numbers.
  ops::Generator g(4);
  const auto v = ops::uniform({20000}, 0.1, 0.2, g, DType::f16).to_vector<double>();
  for (double x : v) {
    ASSERT_GE(x, 0.1);
    ASSERT_LT(x, 0.2);
  }
  // A range holding a single f16 value produces only that value.
  for (double x : ops::uniform({100}, 1.0, 1.0 + 1e-9, g, DType::f16).to_vector<double>()) ASSERT_EQ(x, 1.0);
  // Negative ranges step the right way too.
  const auto n = ops::uniform({20000}, -1, 0, g, DType::bf16).to_vector<double>();
  for (double x : n) {
    ASSERT_GE(x, -1.0);
    ASSERT_LT(x, 0.0);
  }
}

TEST(RandomNormal, MomentsAndShape) {
  for (DType dt : {DType::f32, DType::f64}) {
    ops::Generator g(11);
    const Tensor t = ops::normal({100, 1000}, 2.0, 3.0, g, dt);
    expect_shape(t, {100, 1000});
    EXPECT_EQ(t.dtype(), dt);
    const auto v = t.to_vector<double>();
    const Moments m = moments(v);
    EXPECT_NEAR(m.mean, 2.0, 0.05) << dtype_name(dt);     // sd of the mean: 0.0095
    EXPECT_NEAR(m.var, 9.0, 0.2) << dtype_name(dt);       // sd of the variance: 0.04
    EXPECT_NEAR(m.skew, 0.0, 0.05) << dtype_name(dt);     // sd: 0.008
    EXPECT_NEAR(m.kurtosis, 3.0, 0.1) << dtype_name(dt);  // sd: 0.015
    // Share within one and two standard deviations: 68.27% and 95.45%.
    double within1 = 0, within2 = 0;
    for (double x : v) {
      within1 += std::abs(x - 2.0) < 3.0;
      within2 += std::abs(x - 2.0) < 6.0;
    }
    EXPECT_NEAR(within1 / kSamples, 0.6827, 0.008) << dtype_name(dt);
    EXPECT_NEAR(within2 / kSamples, 0.9545, 0.004) << dtype_name(dt);
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(RandomNormal, ZeroStdGivesTheMeanAndHalfTypesWork) {
  ops::Generator g(5);
  for (double x : ops::normal({100}, 1.5, 0.0, g).to_vector<double>()) EXPECT_EQ(x, 1.5);
  for (DType dt : {DType::f16, DType::bf16}) {
    const auto v = ops::normal({20000}, 0.0, 1.0, g, dt).to_vector<double>();
    const Moments m = moments(v);
    EXPECT_NEAR(m.mean, 0.0, 0.04) << dtype_name(dt);
    EXPECT_NEAR(m.var, 1.0, 0.05) << dtype_name(dt);
  }
}

TEST(RandomBernoulli, FrequencyMatchesP) {
  ops::Generator g(21);
  for (DType dt : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const Tensor p = ops::full({kSamples}, 0.3, dt);
    const Tensor s = ops::bernoulli(p, g);
    EXPECT_EQ(s.dtype(), dt);
    expect_shape(s, {kSamples});
    const auto v = s.to_vector<double>();
    double ones = 0;
    for (double x : v) {
      ASSERT_TRUE(x == 0.0 || x == 1.0) << x;
      ones += x;
    }
    // p = 0.3 is not exact in f16/bf16: compare against the stored value.
    const double stored = ops::full({1}, 0.3, dt).item();
    EXPECT_NEAR(ones / kSamples, stored, 0.008) << dtype_name(dt);  // sd: 0.00145
  }
}

TEST(RandomBernoulli, ElementwiseProbabilitiesAndExtremes) {
  ops::Generator g(22);
  // Columns with p = 0, 1, 0.5, 0.9 over many rows: each column's frequency follows its own p.
  const Tensor row = Tensor::from_vector<float>({0.0f, 1.0f, 0.5f, 0.9f}, {1, 4});
  const Tensor p = ops::broadcast_to(row, {20000, 4});
  const auto v = ops::bernoulli(p, g).to_vector<double>();
  std::vector<double> freq(4, 0);
  for (size_t i = 0; i < v.size(); ++i) freq[i % 4] += v[i];
  EXPECT_EQ(freq[0], 0.0);
  EXPECT_EQ(freq[1], 20000.0);
  EXPECT_NEAR(freq[2] / 20000, 0.5, 0.015);
  EXPECT_NEAR(freq[3] / 20000, 0.9, 0.01);
}

TEST(RandomBernoulli, NoGradientReachesP) {
  ops::Generator g(23);
  const Tensor p = Tensor::from_vector<double>({0.2, 0.7, 0.5}, {3});
  auto gr = grad([&g](const std::vector<Tensor>& xs) { return ops::sum(ops::bernoulli(xs[0], g) * xs[0]); })({p});
  // d/dp of (sample * p) with the sample held fixed is the sample itself.
  const auto sample = gr[0].to_vector<double>();
  for (double x : sample) EXPECT_TRUE(x == 0.0 || x == 1.0) << x;
  auto none = grad([&g](const std::vector<Tensor>& xs) { return ops::sum(ops::bernoulli(xs[0], g)); })({p});
  expect_close(none[0], {0, 0, 0});
}

TEST(RandomRandint, RangeAndEveryValueHit) {
  ops::Generator g(31);
  const Tensor t = ops::randint(-3, 7, {kSamples}, g);
  EXPECT_EQ(t.dtype(), DType::i64);
  const auto v = t.to_vector<int64_t>();
  std::vector<int> counts(10, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    ++counts[static_cast<size_t>(x + 3)];
  }
  for (int c : counts) EXPECT_NEAR(c / static_cast<double>(kSamples), 0.1, 0.006);  // sd: 0.00095
}

TEST(RandomRandint, OtherDtypesAndExtremeRanges) {
  ops::Generator g(32);
  const auto bytes = ops::randint(-128, 128, {20000}, g, DType::i8);
  EXPECT_EQ(bytes.dtype(), DType::i8);
  std::set<int64_t> seen;
  for (int64_t x : bytes.to_vector<int64_t>()) seen.insert(x);
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_EQ(*seen.begin(), -128);
  EXPECT_EQ(*seen.rbegin(), 127);

  const auto u = ops::randint(250, 256, {1000}, g, DType::u8).to_vector<int64_t>();
  for (int64_t x : u) EXPECT_TRUE(x >= 250 && x < 256) << x;

  for (int64_t x : ops::randint(5, 6, {50}, g, DType::i32).to_vector<int64_t>()) EXPECT_EQ(x, 5);

  // The whole i64 range (a span above INT64_MAX): both signs appear, in roughly equal numbers.
  const auto wide = ops::randint(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), {10000}, g)
                        .to_vector<int64_t>();
  double negative = 0;
  for (int64_t x : wide) negative += x < 0;
  EXPECT_NEAR(negative / 10000, 0.5, 0.03);
}

TEST(RandomRandint, LargeSpanIsUnbiasedEnough) {
  // A span that is not a power of two and close to 2^32: with 64-bit multiply-shift, the lower and
  // upper thirds are equally likely (modulo of 32 bits would favour the low third by 50%).
  ops::Generator g(33);
  const int64_t span = 3000000000;
  const auto v = ops::randint(0, span, {60000}, g).to_vector<int64_t>();
  double low = 0, high = 0;
  for (int64_t x : v) {
    low += x < span / 3;
    high += x >= 2 * span / 3;
  }
  EXPECT_NEAR(low / high, 1.0, 0.05);
}

TEST(RandomPermutation, IsAPermutation) {
  ops::Generator g(41);
  const Tensor t = ops::permutation(1000, g);
  EXPECT_EQ(t.dtype(), DType::i64);
  expect_shape(t, {1000});
  auto v = t.to_vector<int64_t>();
  const auto original = v;
  std::sort(v.begin(), v.end());
  std::vector<int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(v, iota);
  EXPECT_NE(original, iota);  // shuffled (the identity has probability 1/1000!)
  // A second draw is a different permutation; the empty and one-element cases work.
  EXPECT_NE(ops::permutation(1000, g).to_vector<int64_t>(), original);
  EXPECT_EQ(ops::permutation(0, g).numel(), 0);
  EXPECT_EQ(ops::permutation(1, g).to_vector<int64_t>(), std::vector<int64_t>{0});
}

TEST(RandomPermutation, EveryPositionIsUniform) {
  // Over many permutations of 4, each value lands in each position a quarter of the time.
  ops::Generator g(42);
  std::vector<std::vector<double>> counts(4, std::vector<double>(4, 0));
  for (int trial = 0; trial < 4000; ++trial) {
    const auto p = ops::permutation(4, g).to_vector<int64_t>();
    for (size_t pos = 0; pos < 4; ++pos) ++counts[pos][static_cast<size_t>(p[pos])];
  }
  for (const auto& row : counts) {
    for (double c : row) EXPECT_NEAR(c / 4000, 0.25, 0.03);
  }
}
