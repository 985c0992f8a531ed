// kv_cache_attention: queries over a key/value cache, each seeing the rows up to its position.
#include <cmath>

#include "ops_shape/helpers.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// softmax(q k^T * scale) v over rows 0..position, written out directly (GQA: head h reads h / group).
std::vector<double> expected_attention(const std::vector<double>& q, const std::vector<double>& k,
                                       const std::vector<double>& v, const std::vector<int64_t>& pos, int64_t hq,
                                       int64_t hk, int64_t d) {
  const auto m = static_cast<int64_t>(pos.size());
  std::vector<double> out(static_cast<size_t>(m * hq * d), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t g = h / (hq / hk);
      std::vector<double> w;
      double total = 0;
      for (int64_t j = 0; j <= pos[static_cast<size_t>(i)]; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c) s += q[static_cast<size_t>((i * hq + h) * d + c)] * k[static_cast<size_t>((j * hk + g) * d + c)];
        w.push_back(std::exp(s * scale));
        total += w.back();
      }
      for (size_t j = 0; j < w.size(); ++j) {
        for (int64_t c = 0; c < d; ++c) {
          out[static_cast<size_t>((i * hq + h) * d + c)] += w[j] / total * v[(j * static_cast<size_t>(hk) + static_cast<size_t>(g)) * static_cast<size_t>(d) + static_cast<size_t>(c)];
        }
      }
    }
  }
  return out;
}

std::vector<double> values(const Array& a) { return a.to_f64(); }

}  // namespace

TEST(KvCacheAttention, MatchesSoftmaxOverVisibleRows) {
  const int64_t m = 3, hq = 4, hk = 2, d = 8, rows = 72;  // more rows than one 64-row chunk
  const Array q = random_array({m, hq, d}, 1, -2, 2), k = random_array({rows, hk, d}, 2, -2, 2);
  const Array v = random_array({rows, hk, d}, 3);
  const std::vector<int64_t> pos{0, 41, 69};
  Tensor out = ops::kv_cache_attention(Tensor::from_array(q), Tensor::from_array(k), Tensor::from_array(v),
                                       Tensor::from_vector(pos, {m}));
  expect_shape(out, {m, hq, d});
  expect_close(out, expected_attention(values(q), values(k), values(v), pos, hq, hk, d), 1e-12);
  // Rows past every position are never read: changing them changes nothing.
  Array k2 = k.copy();
  Array v2 = v.copy();
  for (int64_t e = 70 * hk * d; e < rows * hk * d; ++e) {
    k2.data<double>()[e] = 1e6;
    v2.data<double>()[e] = std::nan("");
  }
  Tensor same = ops::kv_cache_attention(Tensor::from_array(q), Tensor::from_array(k2), Tensor::from_array(v2),
                                        Tensor::from_vector<int32_t>({0, 41, 69}, {m}));
  expect_close(same, values(out.array()), 1e-12);
}

TEST(KvCacheAttention, ExplicitScaleAndF32) {
  const Array q = random_array({1, 2, 4}, 4, -1, 1, DType::f32), k = random_array({5, 1, 4}, 5, -1, 1, DType::f32);
  const Array v = random_array({5, 1, 3}, 6, -1, 1, DType::f32);
  Tensor out = ops::kv_cache_attention(Tensor::from_array(q), Tensor::from_array(k), Tensor::from_array(v),
                                       Tensor::from_vector<int64_t>({4}, {1}), 0.5);
  expect_shape(out, {1, 2, 3});
  // Against the decomposition it is defined by: a mask over rows and scaled_dot_product_attention.
  const Tensor visible = ops::le(ops::reshape(ops::arange(5), {1, 5}), Tensor::from_vector<int64_t>({4}, {1, 1}));
  const Tensor ref = ops::transpose(
      ops::scaled_dot_product_attention(ops::transpose(Tensor::from_array(q), 0, 1),
                                        ops::transpose(Tensor::from_array(k), 0, 1),
                                        ops::transpose(Tensor::from_array(v), 0, 1), visible, false, 0.5),
      0, 1);
  expect_close(out, values(ref.array()), 1e-6);
}

TEST(KvCacheAttention, HalfPrecisionCacheWithF32Queries) {
  const Array q = random_array({2, 4, 16}, 7, -1, 1, DType::f32);
  const Array k = random_array({9, 2, 16}, 8, -1, 1, DType::f16), v = random_array({9, 2, 16}, 9, -1, 1, DType::f16);
  const Tensor pos = Tensor::from_vector<int64_t>({3, 8}, {2});
  Tensor half = ops::kv_cache_attention(Tensor::from_array(q), Tensor::from_array(k), Tensor::from_array(v), pos);
  EXPECT_EQ(half.dtype(), DType::f32);
  // The same values widened to f32 first: the cache's rounding is all that differs, and that is in k, v.
  Tensor wide = ops::kv_cache_attention(Tensor::from_array(q), Tensor::from_array(k.astype(DType::f32)),
                                        Tensor::from_array(v.astype(DType::f32)), pos);
  expect_close(half, values(wide.array()), 1e-5);
}

TEST(KvCacheAttention, ShapeAndPositionErrors) {
  const Tensor q = ops::zeros({1, 4, 8}), k = ops::zeros({6, 2, 8}), v = ops::zeros({6, 2, 8});
  const Tensor pos = Tensor::from_vector<int64_t>({2}, {1});
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(ops::zeros({4, 8}), k, v, pos), "kv_cache_attention", "rank 3");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, ops::zeros({6, 3, 8}), ops::zeros({6, 3, 8}), pos),
                       "kv_cache_attention", "4 query heads", "3 key/value heads");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, ops::zeros({6, 2, 4}), v, pos), "kv_cache_attention",
                       "same head dim");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, k, ops::zeros({5, 2, 8}), pos), "kv_cache_attention",
                       "agree on rows");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, k, v, Tensor::from_vector<int64_t>({1, 2}, {2})),
                       "kv_cache_attention", "one entry per query");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, k, v, ops::zeros({1})), "kv_cache_attention", "i32 or i64");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, k, ops::zeros({6, 2, 8}, DType::f64), pos), "kv_cache_attention",
                       "share one floating dtype");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(Tensor::from_vector<int64_t>({0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 8}),
                                               ops::zeros({6, 1, 8}), ops::zeros({6, 1, 8}), pos),
                       "kv_cache_attention", "q must be floating");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, k, v, Tensor::from_vector<int64_t>({6}, {1})).eval(),
                       "kv_cache_attention", "position 6", "6 rows");
  EXPECT_TESSERA_ERROR(ops::kv_cache_attention(q, k, v, Tensor::from_vector<int64_t>({-1}, {1})).eval(),
                       "kv_cache_attention", "position -1");
}

TEST(KvCacheAttention, Gradient) {
  const Array pos = Array::from_vector<int64_t>({1, 3}, {2});
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::kv_cache_attention(xs[0], xs[1], xs[2], xs[3]); },
      (std::vector<Array>{random_array({2, 4, 3}, 21), random_array({5, 2, 3}, 22), random_array({5, 2, 2}, 23), pos}));
}
