// scaled_dot_product_attention against a naive per-head loop written here: plain, scaled, masked
// (bool and additive), causal with L != S, grouped-query heads, errors and gradients.
#include <functional>
#include <limits>

#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

struct Dims {
  int64_t batch, hq, hk, len_q, len_k, dim, dim_v;
};

// mask_add(b, h, i, j): added to the score (may be -inf to block).
using MaskFn = std::function<double(int64_t, int64_t, int64_t, int64_t)>;

std::vector<double> naive_attention(const Dims& d, const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, bool causal, double scale, const MaskFn& mask) {
  std::vector<double> out(static_cast<size_t>(d.batch * d.hq * d.len_q * d.dim_v), 0.0);
  const int64_t group = d.hq / d.hk;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.hq; ++h) {
      const int64_t kh = h / group;  // query heads h*group .. share key head kh
      for (int64_t i = 0; i < d.len_q; ++i) {
        std::vector<double> s(static_cast<size_t>(d.len_k));
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < d.len_k; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d.dim; ++e) {
            dot += q[static_cast<size_t>(((b * d.hq + h) * d.len_q + i) * d.dim + e)] *
                   k[static_cast<size_t>(((b * d.hk + kh) * d.len_k + j) * d.dim + e)];
          }
          double sc = dot * scale + (mask ? mask(b, h, i, j) : 0.0);
          if (causal && j > i) sc = -std::numeric_limits<double>::infinity();
          s[static_cast<size_t>(j)] = sc;
          m = std::max(m, sc);
        }
        double z = 0;
        for (double& x : s) {
          x = std::exp(x - m);
          z += x;
        }
        for (int64_t j = 0; j < d.len_k; ++j) {
          for (int64_t e = 0; e < d.dim_v; ++e) {
            out[static_cast<size_t>(((b * d.hq + h) * d.len_q + i) * d.dim_v + e)] +=
                s[static_cast<size_t>(j)] / z * v[static_cast<size_t>(((b * d.hk + kh) * d.len_k + j) * d.dim_v + e)];
          }
        }
      }
    }
  }
  return out;
}

struct Inputs {
  Array q, k, v;
};

Inputs make_inputs(const Dims& d, uint64_t seed) {
  return {random_array({d.batch, d.hq, d.len_q, d.dim}, seed), random_array({d.batch, d.hk, d.len_k, d.dim}, seed + 1),
          random_array({d.batch, d.hk, d.len_k, d.dim_v}, seed + 2)};
}

Tensor sdpa(const Inputs& in, const Tensor& mask = {}, bool causal = false, std::optional<double> scale = {}) {
  return ops::scaled_dot_product_attention(Tensor::from_array(in.q), Tensor::from_array(in.k), Tensor::from_array(in.v),
                                           mask, causal, scale);
}

}  // namespace

TEST(Attention, PlainMatchesNaive) {
  const Dims d{2, 3, 3, 4, 5, 6, 6};
  const Inputs in = make_inputs(d, 1);
  Tensor y = sdpa(in);
  expect_shape(y, {2, 3, 4, 6});
  expect_close(y, naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), false, 1 / std::sqrt(6.0), {}),
               1e-12);
  // Explicit scale and a different value dim.
  const Dims d2{1, 2, 2, 3, 4, 5, 2};
  const Inputs in2 = make_inputs(d2, 2);
  expect_close(sdpa(in2, {}, false, 0.7),
               naive_attention(d2, in2.q.to_f64(), in2.k.to_f64(), in2.v.to_f64(), false, 0.7, {}), 1e-12);
}

TEST(Attention, CausalTopLeftAligned) {
  for (auto [lq, lk] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {3, 5}, {5, 3}}) {
    const Dims d{1, 2, 2, lq, lk, 4, 4};
    const Inputs in = make_inputs(d, 3);
    expect_close(sdpa(in, {}, true), naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), true, 0.5, {}),
                 1e-12);
  }
  // The first query attends only to the first key: output row 0 is v row 0.
  const Dims d{1, 1, 1, 3, 3, 2, 2};
  const Inputs in = make_inputs(d, 4);
  const std::vector<double> y = sdpa(in, {}, true).array().to_f64(), v = in.v.to_f64();
  EXPECT_NEAR(y[0], v[0], 1e-14);
  EXPECT_NEAR(y[1], v[1], 1e-14);
}

TEST(Attention, GroupedQueryHeads) {
  const Dims d{2, 6, 2, 3, 4, 5, 3};  // 3 query heads per key/value head
  const Inputs in = make_inputs(d, 5);
  expect_close(sdpa(in), naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), false, 1 / std::sqrt(5.0), {}),
               1e-12);
  expect_close(sdpa(in, {}, true),
               naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), true, 1 / std::sqrt(5.0), {}), 1e-12);
  // One shared key/value head (multi-query attention).
  const Dims m{1, 4, 1, 2, 3, 2, 2};
  const Inputs mi = make_inputs(m, 6);
  expect_close(sdpa(mi), naive_attention(m, mi.q.to_f64(), mi.k.to_f64(), mi.v.to_f64(), false, 1 / std::sqrt(2.0), {}),
               1e-12);
}

// Query head h reads key/value head h / (Hq / Hk): k and v repeat_interleave'd (PyTorch's enable_gqa),
// not tiled. With one query position and one key per head, each output is exactly its kv head's value.
TEST(Attention, GqaGroupsConsecutiveQueryHeads) {
  const Tensor q = ops::zeros({1, 4, 1, 2}, DType::f64);
  const Tensor k = ops::zeros({1, 2, 1, 2}, DType::f64);
  const Tensor v = Tensor::from_vector<double>({10, 11, 20, 21}, {1, 2, 1, 2});
  expect_close(ops::scaled_dot_product_attention(q, k, v), {10, 11, 10, 11, 20, 21, 20, 21}, 0.0);
  // The same as attention over explicitly interleaved heads 0, 0, 1, 1.
  const Tensor interleaved =
      ops::concat({ops::slice(v, 1, 0, 1), ops::slice(v, 1, 0, 1), ops::slice(v, 1, 1, 2), ops::slice(v, 1, 1, 2)}, 1);
  const Tensor k4 = ops::zeros({1, 4, 1, 2}, DType::f64);
  expect_close(ops::scaled_dot_product_attention(q, k, v),
               ops::scaled_dot_product_attention(q, k4, interleaved).array().to_f64(), 0.0);
}

TEST(Attention, BooleanAndAdditiveMasks) {
  const Dims d{2, 2, 2, 3, 4, 3, 3};
  const Inputs in = make_inputs(d, 7);
  const double scale = 1 / std::sqrt(3.0);
  // Bool mask [L, S] broadcast over batch and heads; every row keeps at least one key.
  std::vector<uint8_t> keep{1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0};
  std::vector<bool> keep_b(keep.begin(), keep.end());
  Array mask_arr = Array::from_vector<uint8_t>(keep, {3, 4}).astype(DType::boolean);
  const MaskFn bool_mask = [&](int64_t, int64_t, int64_t i, int64_t j) {
    return keep_b[static_cast<size_t>(i * 4 + j)] ? 0.0 : -std::numeric_limits<double>::infinity();
  };
  expect_close(sdpa(in, Tensor::from_array(mask_arr)),
               naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), false, scale, bool_mask), 1e-12);
  // Bool mask combined with causal.
  expect_close(sdpa(in, Tensor::from_array(mask_arr), true),
               naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), true, scale, bool_mask), 1e-12);
  // Additive float mask [B, 1, L, S] (per batch, shared by heads).
  const Array add = random_array({2, 1, 3, 4}, 8, -2, 2);
  const std::vector<double> addv = add.to_f64();
  const MaskFn add_mask = [&](int64_t b, int64_t, int64_t i, int64_t j) {
    return addv[static_cast<size_t>((b * 3 + i) * 4 + j)];
  };
  expect_close(sdpa(in, Tensor::from_array(add)),
               naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), false, scale, add_mask), 1e-12);
}

TEST(Attention, Rank2AndHalfPrecision) {
  const Dims d{1, 1, 1, 3, 4, 2, 2};
  const Inputs in = make_inputs(d, 9);
  const std::vector<double> want =
      naive_attention(d, in.q.to_f64(), in.k.to_f64(), in.v.to_f64(), true, 1 / std::sqrt(2.0), {});
  Tensor y = ops::scaled_dot_product_attention(Tensor::from_array(in.q.reshape({3, 2})),
                                               Tensor::from_array(in.k.reshape({4, 2})),
                                               Tensor::from_array(in.v.reshape({4, 2})), {}, true);
  expect_shape(y, {3, 2});
  expect_close(y, want, 1e-12);
  Tensor yh = ops::scaled_dot_product_attention(Tensor::from_array(in.q.astype(DType::f16)),
                                                Tensor::from_array(in.k.astype(DType::f16)),
                                                Tensor::from_array(in.v.astype(DType::f16)), {}, true);
  EXPECT_EQ(yh.dtype(), DType::f16);
  expect_close(yh, want, 1e-2, 1e-2);
}

TEST(Attention, Errors) {
  const std::string op = "scaled_dot_product_attention";
  Tensor q = ops::zeros({2, 4, 3, 8}), k = ops::zeros({2, 3, 5, 8}), v = ops::zeros({2, 3, 5, 8});
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, k, v), op, "f32[2, 4, 3, 8]", "f32[2, 3, 5, 8]",
                       "4 query heads", "3 key/value heads");
  Tensor k2 = ops::zeros({2, 2, 5, 8}), v2 = ops::zeros({2, 2, 5, 8});
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, ops::zeros({2, 2, 5, 7}), v2), op, "head dim", "8", "7");
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, k2, ops::zeros({2, 2, 6, 8})), op, "k and v");
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, ops::zeros({3, 2, 5, 8}), ops::zeros({3, 2, 5, 8})), op,
                       "batch");
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, ops::zeros({2, 5, 8}), v2), op, "rank");
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, ops::zeros({2, 2, 5, 8}, DType::f64), v2), op, "f64",
                       "dtype");
  EXPECT_TESSERA_ERROR(
      ops::scaled_dot_product_attention(ops::zeros({2, 4, 3, 8}, DType::i32), ops::zeros({2, 2, 5, 8}, DType::i32),
                                        ops::zeros({2, 2, 5, 8}, DType::i32)),
      op, "floating");
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, k2, v2, ops::zeros({3, 4})), op, "mask", "[3, 4]",
                       "[2, 4, 3, 5]");
  EXPECT_TESSERA_ERROR(ops::scaled_dot_product_attention(q, k2, v2, ops::zeros({3, 5}, DType::i64)), op, "mask",
                       "i64[3, 5]");
  EXPECT_NO_THROW(ops::scaled_dot_product_attention(q, k2, v2, ops::zeros({3, 5}, DType::boolean)));
}

TEST(Attention, Gradients) {
  // Causal + GQA, all of q, k, v differentiated.
  const Dims d{1, 4, 2, 3, 4, 2, 3};
  const Inputs in = make_inputs(d, 11);
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::scaled_dot_product_attention(xs[0], xs[1], xs[2], {}, true); },
      (std::vector<Array>{in.q, in.k, in.v}));
  // Additive mask (differentiated too) with an explicit scale.
  const Dims d2{2, 2, 2, 2, 3, 2, 2};
  const Inputs in2 = make_inputs(d2, 12);
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        return ops::scaled_dot_product_attention(xs[0], xs[1], xs[2], xs[3], false, 0.8);
      },
      (std::vector<Array>{in2.q, in2.k, in2.v, random_array({1, 2, 2, 3}, 13)}));
  // Boolean mask: blocked keys get no gradient, the check still holds.
  const Array keep = Array::from_vector<uint8_t>({1, 0, 1, 1, 1, 0}, {2, 3}).astype(DType::boolean);
  EXPECT_GRADIENTS_MATCH(
      [keep](const std::vector<Tensor>& xs) {
        return ops::scaled_dot_product_attention(xs[0], xs[1], xs[2], Tensor::from_array(keep));
      },
      (std::vector<Array>{in2.q, in2.k, in2.v}));
}
