#include "op_cases.h"

#include <cstring>
#include <random>

#include "tessera/ops/optim.h"
#include "tessera/ops/quant.h"
#include "test_util.h"

namespace tessera::test {

namespace {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
#define FN(expr)                                            \
  [](const std::vector<Tensor>& a) -> std::vector<Tensor> { \
    (void)a;                                                \
    return {expr};                                          \
  }

Array rnd(const Shape& s, uint64_t seed, double lo = -1.0, double hi = 1.0, DType dt = DType::f32) {
  return random_array(s, seed, lo, hi, DType::f64).astype(dt);
}

Array ints(const Shape& s, uint64_t seed, int64_t lo, int64_t hi, DType dt = DType::i64) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> v(static_cast<size_t>(shape_numel(s)));
  for (int64_t& x : v) x = dist(rng);
  return Array::from_vector(v, s).astype(dt);
}

Array bools(const Shape& s, uint64_t seed) {
  return ints(s, seed, 0, 1, DType::boolean);
}

// The raw little-endian bytes of an array as u8 [..., last * element size] (GGML's plain types).
Array raw_bytes(const Array& a) {
  const Array c = a.contiguous();
  Shape s = c.shape();
  s.back() *= static_cast<int64_t>(dtype_size(c.dtype()));
  Array out = Array::empty(DType::u8, s);
  std::memcpy(out.raw_data(), c.raw_data(), c.nbytes());
  return out;
}

Tensor node(const std::string& op, std::vector<ir::Value> in, ir::Attrs attrs) {
  return ir::make_node1(op, std::move(in), std::move(attrs));
}

// Values with exact ties and a NaN, for the max/arg-max tie rules.
Array with_ties() {
  return Array::from_vector<float>({1, 3, 3, -2, 0.5f, 0.5f, 7, 7, -1, std::nanf(""), 2, std::nanf("")}, {3, 4});
}

}  // namespace

std::vector<OpCase> op_cases() {
  std::vector<OpCase> c;
  auto add = [&](const std::string& op, const std::string& label, std::vector<Array> inputs, Fn fn) {
    c.push_back({op, label, std::move(inputs), std::move(fn)});
  };
  const Array x23 = rnd({2, 3}, 1), x34 = rnd({3, 4}, 2), pos34 = rnd({3, 4}, 3, 0.1, 4.0);
  const Array img = rnd({2, 4, 7, 6}, 4);

  // --- elementwise unary ---
  add("abs", "abs_f32", {x34}, FN(ops::abs(a[0])));
  add("abs", "abs_i32", {ints({3, 4}, 5, -9, 9, DType::i32)}, FN(ops::abs(a[0])));
  add("abs", "abs_u8", {ints({3, 4}, 6, 0, 255, DType::u8)}, FN(ops::abs(a[0])));
  add("neg", "neg_f32", {x34}, FN(ops::neg(a[0])));
  add("neg", "neg_u8", {ints({3, 4}, 7, 0, 255, DType::u8)}, FN(ops::neg(a[0])));
  add("sign", "sign_f32", {x34}, FN(ops::sign(a[0])));
  add("sign", "sign_u8", {ints({3, 4}, 8, 0, 3, DType::u8)}, FN(ops::sign(a[0])));
  add("exp", "exp", {x34}, FN(ops::exp(a[0])));
  add("exp", "exp_f16", {rnd({3, 4}, 9, -1, 1, DType::f16)}, FN(ops::exp(a[0])));
  add("expm1", "expm1", {x34}, FN(ops::expm1(a[0])));
  add("log", "log", {pos34}, FN(ops::log(a[0])));
  add("log1p", "log1p", {pos34}, FN(ops::log1p(a[0])));
  add("sqrt", "sqrt", {pos34}, FN(ops::sqrt(a[0])));
  add("rsqrt", "rsqrt", {pos34}, FN(ops::rsqrt(a[0])));
  add("square", "square", {x34}, FN(ops::square(a[0])));
  add("reciprocal", "reciprocal", {pos34}, FN(ops::reciprocal(a[0])));
  add("sin", "sin", {x34}, FN(ops::sin(a[0])));
  add("cos", "cos", {x34}, FN(ops::cos(a[0])));
  add("tanh", "tanh", {x34}, FN(ops::tanh(a[0])));
  add("erf", "erf", {x34}, FN(ops::erf(a[0])));
  add("sigmoid", "sigmoid", {rnd({3, 4}, 10, -8, 8)}, FN(ops::sigmoid(a[0])));
  add("relu", "relu", {x34}, FN(ops::relu(a[0])));
  add("relu", "relu_i64", {ints({3, 4}, 11, -5, 5)}, FN(ops::relu(a[0])));
  add("leaky_relu", "leaky_relu", {x34}, FN(ops::leaky_relu(a[0], 0.1)));
  add("elu", "elu", {x34}, FN(ops::elu(a[0], 1.5)));
  add("gelu", "gelu_erf", {rnd({3, 4}, 12, -3, 3)}, FN(ops::gelu(a[0])));
  add("gelu", "gelu_tanh", {rnd({3, 4}, 13, -3, 3)}, FN(ops::gelu(a[0], true)));
  add("silu", "silu", {rnd({3, 4}, 14, -4, 4)}, FN(ops::silu(a[0])));
  add("softplus", "softplus", {rnd({3, 4}, 15, -30, 30)}, FN(ops::softplus(a[0], 2.0, 10.0)));
  add("floor", "floor", {rnd({3, 4}, 16, -5, 5)}, FN(ops::floor(a[0])));
  add("ceil", "ceil", {rnd({3, 4}, 17, -5, 5)}, FN(ops::ceil(a[0])));
  add("round", "round_half_even", {Array::from_vector<float>({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.4f, 1.6f}, {8})},
      FN(ops::round(a[0])));
  add("logical_not", "logical_not_bool", {bools({3, 4}, 18)}, FN(ops::logical_not(a[0])));
  add("logical_not", "logical_not_f32", {Array::from_vector<float>({0, 1, -0.0f, 2}, {4})}, FN(ops::logical_not(a[0])));
  add("isnan", "isnan", {with_ties()}, FN(ops::isnan(a[0])));
  add("isinf", "isinf", {Array::from_vector<float>({1, INFINITY, -INFINITY, NAN}, {4})}, FN(ops::isinf(a[0])));
  add("isnan", "isnan_i32", {ints({4}, 19, 0, 9, DType::i32)}, FN(ops::isnan(a[0])));
  add("cast", "cast_f32_i32", {Array::from_vector<float>({-3.7f, 2.9f, 3e10f, -3e10f, NAN, 0.5f}, {6})},
      FN(ops::cast(a[0], DType::i32)));
  add("cast", "cast_f32_u8", {Array::from_vector<float>({-3.7f, 2.9f, 300.0f, 255.5f, NAN, 17.2f}, {6})},
      FN(ops::cast(a[0], DType::u8)));
  add("cast", "cast_f32_bool", {Array::from_vector<float>({0, -0.0f, 2, NAN}, {4})},
      FN(ops::cast(a[0], DType::boolean)));
  add("cast", "cast_f32_bf16", {x34}, FN(ops::cast(a[0], DType::bf16)));
  add("cast", "cast_i64_f32", {ints({3, 4}, 20, -100, 100)}, FN(ops::cast(a[0], DType::f32)));
  add("cast", "cast_bool_f32", {bools({3, 4}, 21)}, FN(ops::cast(a[0], DType::f32)));
  add("stop_gradient", "stop_gradient", {x34}, FN(ops::stop_gradient(a[0]) * 2.0));

  // --- binary, where, clamp ---
  add("add", "add_broadcast", {x23, rnd({3}, 22)}, FN(ops::add(a[0], a[1])));
  add("add", "add_promote_i32_f32", {ints({2, 3}, 23, -5, 5, DType::i32), x23}, FN(ops::add(a[0], a[1])));
  add("add", "add_bool", {bools({2, 3}, 24), bools({2, 3}, 25)}, FN(ops::add(a[0], a[1])));
  add("sub", "sub", {x23, rnd({2, 1}, 26)}, FN(ops::sub(a[0], a[1])));
  add("mul", "mul_i8_wrap", {ints({2, 3}, 27, -128, 127, DType::i8), ints({2, 3}, 28, -128, 127, DType::i8)},
      FN(ops::mul(a[0], a[1])));
  add("div", "div_i32", {ints({2, 3}, 29, -20, 20, DType::i32), ints({2, 3}, 30, 1, 7, DType::i32)},
      FN(ops::div(a[0], a[1])));
  add("pow", "pow", {rnd({2, 3}, 31, 0.1, 3), rnd({2, 3}, 32, -2, 2)}, FN(ops::pow(a[0], a[1])));
  add("maximum", "maximum", {with_ties(), rnd({3, 4}, 33)}, FN(ops::maximum(a[0], a[1])));
  add("minimum", "minimum", {x34, rnd({4}, 34)}, FN(ops::minimum(a[0], a[1])));
  add("eq", "eq", {ints({3, 4}, 35, 0, 2), ints({4}, 36, 0, 2)}, FN(ops::eq(a[0], a[1])));
  add("ne", "ne", {x34, x34}, FN(ops::ne(a[0], a[1])));
  add("lt", "lt_u8", {ints({3, 4}, 37, 0, 255, DType::u8), ints({3, 4}, 38, 0, 255, DType::u8)},
      FN(ops::lt(a[0], a[1])));
  add("le", "le", {x34, rnd({3, 1}, 39)}, FN(ops::le(a[0], a[1])));
  add("gt", "gt", {x34, rnd({3, 4}, 40)}, FN(ops::gt(a[0], a[1])));
  add("ge", "ge_mixed", {ints({3, 4}, 41, -2, 2, DType::i32), rnd({3, 4}, 42, -2, 2)}, FN(ops::ge(a[0], a[1])));
  add("logical_and", "logical_and", {bools({3, 4}, 43), x34}, FN(ops::logical_and(a[0], a[1])));
  add("logical_or", "logical_or", {bools({3, 4}, 44), bools({4}, 45)}, FN(ops::logical_or(a[0], a[1])));
  add("where", "where", {bools({3, 4}, 46), x34, rnd({4}, 47)}, FN(ops::where(a[0], a[1], a[2])));
  add("clamp", "clamp", {rnd({3, 4}, 48, -3, 3)}, FN(ops::clamp(a[0], -1.0, 0.5)));
  add("clamp", "clamp_i32_lower", {ints({3, 4}, 49, -9, 9, DType::i32)}, FN(ops::clamp(a[0], -2.5, std::nullopt)));

  // --- creation ---
  add("full", "full", {}, FN(ops::full({2, 3}, 1.25)));
  add("full", "full_i8", {}, FN(ops::full({2, 3}, -7.9, DType::i8)));
  add("arange", "arange_f32", {}, FN(ops::arange(0.5, 5.0, 0.75)));
  add("arange", "arange_i64", {}, FN(ops::arange(10, DType::i64)));
  add("eye", "eye", {}, FN(ops::eye(4, 5, 1)));

  // --- reductions ---
  add("sum", "sum_axes", {img}, FN(ops::sum(a[0], {1, 3})));
  add("sum", "sum_all_keepdims_f16", {rnd({3, 4}, 50, -1, 1, DType::f16)}, FN(ops::sum(a[0], {}, true)));
  add("sum", "sum_bool", {bools({3, 4}, 51)}, FN(ops::sum(a[0], {1})));
  add("mean", "mean", {img}, FN(ops::mean(a[0], {0, 2}, true)));
  add("max", "max", {with_ties()}, FN(ops::max(a[0], {1})));
  add("max", "max_i32", {ints({3, 4}, 52, -9, 9, DType::i32)}, FN(ops::max(a[0])));
  add("min", "min", {x34}, FN(ops::min(a[0], {0}, true)));
  add("min", "min_bool", {bools({3, 4}, 53)}, FN(ops::min(a[0], {1})));
  add("prod", "prod", {rnd({3, 4}, 54, 0.5, 1.5)}, FN(ops::prod(a[0], {1})));
  add("argmax", "argmax_ties_nan", {with_ties()}, FN(ops::argmax(a[0], 1)));
  add("argmin", "argmin_keepdims", {x34}, FN(ops::argmin(a[0], 0, true)));
  add("logsumexp", "logsumexp", {x34}, FN(ops::logsumexp(a[0], {1})));
  add("cumsum", "cumsum", {x34}, FN(ops::cumsum(a[0], 1)));
  add("cumsum", "cumsum_reverse_i32", {ints({3, 4}, 55, -5, 5, DType::i32)}, FN(ops::cumsum(a[0], 0, true)));

  // --- shape ---
  add("reshape", "reshape", {x34}, FN(ops::reshape(a[0], {2, 6})));
  add("permute", "permute", {img}, FN(ops::permute(a[0], {2, 0, 3, 1})));
  add("broadcast_to", "broadcast_to", {rnd({3, 1}, 56)}, FN(ops::broadcast_to(a[0], {2, 3, 4})));
  add("slice", "slice_step", {rnd({10, 3}, 57)}, FN(ops::slice(a[0], 0, 1, 9, 3)));
  add("slice", "slice_negative_step", {rnd({10, 3}, 58)}, FN(ops::slice(a[0], 0, 8, 1, -2)));
  add("slice_backward", "slice_backward", {rnd({3, 3}, 59)}, FN(ops::slice_backward(a[0], 0, 1, 3, 9)));
  add("slice_backward", "slice_backward_negative", {rnd({3, 3}, 60)}, FN(ops::slice_backward(a[0], 0, 7, -2, 9)));
  add("concat", "concat_promote", {x23, ints({2, 2}, 61, -3, 3, DType::i32)}, FN(ops::concat({a[0], a[1]}, 1)));
  add("split", "split", {rnd({7, 2}, 62)}, [](const std::vector<Tensor>& a) { return ops::split(a[0], {2, 5}, 0); });
  add("flip", "flip", {img}, FN(ops::flip(a[0], {1, -1})));
  add("pad", "pad_constant", {x23}, FN(ops::pad(a[0], {{1, 2}, {0, 3}}, ops::PadMode::Constant, 0.5)));
  add("pad", "pad_reflect", {rnd({4, 5}, 63)}, FN(ops::pad(a[0], {{2, 1}, {3, 2}}, ops::PadMode::Reflect)));

  // --- indexing ---
  add("gather", "gather", {x34, ints({3, 6}, 64, 0, 3)}, FN(ops::gather(a[0], 1, a[1])));
  add("gather", "gather_axis0_i32", {x34, ints({2, 4}, 65, 0, 2, DType::i32)}, FN(ops::gather(a[0], 0, a[1])));
  add("index_select", "index_select", {x34, ints({5}, 66, 0, 2, DType::i32)}, FN(ops::index_select(a[0], 0, a[1])));
  add("scatter_add", "scatter_add", {x34, ints({3, 2}, 67, 0, 3), rnd({3, 3}, 68)},
      FN(ops::scatter_add(a[0], 1, a[1], a[2])));
  add("scatter_add", "scatter_add_f16",
      {rnd({4, 3}, 69, -1, 1, DType::f16), ints({5, 3}, 70, 0, 3), rnd({5, 3}, 71, -1, 1, DType::f16)},
      FN(ops::scatter_add(a[0], 0, a[1], a[2])));
  add("index_copy", "index_copy", {x34, Array::from_vector<int64_t>({2, 0}, {2}), rnd({3, 2}, 140)},
      FN(ops::index_copy(a[0], 1, a[1], a[2])));
  add("one_hot", "one_hot", {ints({2, 3}, 72, 0, 4)}, FN(ops::one_hot(a[0], 5)));
  add("embedding", "embedding", {rnd({6, 4}, 73), ints({2, 3}, 74, 0, 5)}, FN(ops::embedding(a[0], a[1])));
  add("embedding_grad", "embedding_grad", {rnd({2, 3, 4}, 75), ints({2, 3}, 76, 0, 5)},
      FN(node("embedding_grad", {a[0], a[1]}, ir::Attrs{{"num_embeddings", int64_t{6}}})));

  add("kv_cache_attention", "kv_cache_attention",
      {rnd({2, 4, 3}, 141), rnd({5, 2, 3}, 142), rnd({5, 2, 3}, 143), Array::from_vector<int64_t>({1, 4}, {2})},
      FN(ops::kv_cache_attention(a[0], a[1], a[2], a[3])));

  // --- linear algebra ---
  add("matmul", "matmul_batch_weight", {rnd({2, 3, 4}, 77), rnd({4, 5}, 78)}, FN(ops::matmul(a[0], a[1])));
  add("matmul", "matmul_vector_matrix", {rnd({4}, 79), rnd({4, 5}, 80)}, FN(ops::matmul(a[0], a[1])));
  add("matmul", "matmul_matrix_batch", {rnd({3, 4}, 81), rnd({2, 4, 5}, 82)}, FN(ops::matmul(a[0], a[1])));
  add("matmul", "matmul_broadcast_batch", {rnd({2, 1, 3, 4}, 83), rnd({3, 4, 2}, 84)}, FN(ops::matmul(a[0], a[1])));
  add("matmul", "matmul_matrix_vector", {rnd({3, 4}, 85), rnd({4}, 86)}, FN(ops::matmul(a[0], a[1])));

  // --- nn ---
  add("softmax", "softmax", {x34}, FN(ops::softmax(a[0], -1)));
  add("log_softmax", "log_softmax", {x34}, FN(ops::log_softmax(a[0], 0)));
  add("uniform", "uniform", {}, [](const std::vector<Tensor>&) {
    ops::Generator g(42);
    g.set_offset(7);
    return std::vector<Tensor>{ops::uniform({3, 5}, -2.0, 3.0, g)};
  });
  add("uniform", "uniform_f64", {}, [](const std::vector<Tensor>&) {
    ops::Generator g(5);
    return std::vector<Tensor>{ops::uniform({4, 2}, 0.0, 1.0, g, DType::f64)};
  });
  add("normal", "normal", {}, [](const std::vector<Tensor>&) {
    ops::Generator g(0x123456789abcdefULL);
    return std::vector<Tensor>{ops::normal({2, 5}, 1.0, 2.0, g)};
  });
  add("bernoulli", "bernoulli", {rnd({3, 4}, 87, 0, 1)}, [](const std::vector<Tensor>& a) {
    ops::Generator g(9);
    return std::vector<Tensor>{ops::bernoulli(a[0], g)};
  });
  add("randint", "randint", {}, [](const std::vector<Tensor>&) {
    ops::Generator g(11);
    return std::vector<Tensor>{ops::randint(-5, 17, {3, 4}, g, DType::i32)};
  });
  add("permutation", "permutation", {}, [](const std::vector<Tensor>&) {
    ops::Generator g(13);
    return std::vector<Tensor>{ops::permutation(10, g)};
  });

  // --- convolution and pooling ---
  const Array w_g2 = rnd({6, 2, 3, 2}, 88);
  add("conv", "conv2d_groups_stride_dilation_bias", {img, w_g2, rnd({6}, 89)},
      FN(ops::conv2d(a[0], a[1], a[2], {2, 1}, {1, 2}, {2, 1}, 2)));
  add("conv", "conv1d", {rnd({2, 3, 9}, 90), rnd({4, 3, 3}, 91)}, FN(ops::conv1d(a[0], a[1], {}, 2, 1)));
  add("conv", "conv_output_size", {rnd({1, 2, 6, 6}, 92), rnd({3, 2, 3, 3}, 93)},
      FN(node("conv", {a[0], a[1]},
              ir::Attrs{{"stride", std::vector<int64_t>{2, 2}},
                        {"padding", std::vector<int64_t>{1, 1}},
                        {"dilation", std::vector<int64_t>{1, 1}},
                        {"groups", int64_t{1}},
                        {"output_size", std::vector<int64_t>{2, 3}}})));
  add("conv_input_grad", "conv_input_grad", {rnd({2, 6, 3, 9}, 94), w_g2},
      FN(ops::conv_input_grad(a[0], a[1], {7, 6}, {2, 1}, {1, 2}, {2, 1}, 2)));
  add("conv_input_grad", "conv_transpose2d", {rnd({1, 4, 3, 3}, 95), rnd({4, 2, 3, 3}, 96)},
      FN(ops::conv_transpose2d(a[0], a[1], {}, {2, 2}, {1, 1}, {1, 1})));
  add("conv_weight_grad", "conv_weight_grad", {img, rnd({2, 6, 3, 9}, 97)},
      FN(ops::conv_weight_grad(a[0], a[1], {3, 2}, {2, 1}, {1, 2}, {2, 1}, 2)));
  add("max_pool", "max_pool", {img}, FN(ops::max_pool2d(a[0], {3, 2}, {2, 2}, {1, 1})));
  add("max_pool", "max_pool_dilated_3d", {rnd({4, 7, 6}, 98)},
      FN(ops::max_pool2d(a[0], {2, 2}, {1, 2}, {0, 1}, {2, 1})));
  const ir::Attrs pool{{"kernel", std::vector<int64_t>{3, 2}},
                       {"stride", std::vector<int64_t>{2, 2}},
                       {"padding", std::vector<int64_t>{1, 1}},
                       {"dilation", std::vector<int64_t>{1, 1}}};
  add("max_pool_grad", "max_pool_grad", {ints({2, 4, 7, 6}, 99, 0, 3, DType::f32), rnd({2, 4, 4, 4}, 100)},
      [pool](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{node("max_pool_grad", {a[0], a[1]}, pool)};
      });
  add("max_pool_gather", "max_pool_gather", {ints({2, 4, 7, 6}, 101, 0, 3, DType::f32), img},
      [pool](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{node("max_pool_gather", {a[0], a[1]}, pool)};
      });
  add("avg_pool", "avg_pool_exclude_pad", {img}, FN(ops::avg_pool2d(a[0], {3, 3}, {2, 2}, {1, 1}, false)));
  add("avg_pool", "avg_pool_include_pad", {img}, FN(ops::avg_pool2d(a[0], {2, 3}, {1, 2}, {1, 1}, true)));
  add("avg_pool_grad", "avg_pool_grad", {rnd({2, 4, 4, 3}, 102)},
      FN(node("avg_pool_grad", {a[0]},
              ir::Attrs{{"kernel", std::vector<int64_t>{3, 3}},
                        {"stride", std::vector<int64_t>{2, 2}},
                        {"padding", std::vector<int64_t>{1, 1}},
                        {"count_include_pad", false},
                        {"input_size", std::vector<int64_t>{7, 6}}})));
  // ceil_mode: partial last windows (img is 7 x 6), a padded high side in the export.
  add("max_pool", "max_pool_ceil", {img}, FN(ops::max_pool2d(a[0], {2, 2}, {2, 2}, {0, 1}, {1, 1}, true)));
  add("avg_pool", "avg_pool_ceil_include_pad", {img}, FN(ops::avg_pool2d(a[0], {3, 3}, {2, 2}, {1, 1}, true, true)));
  add("avg_pool", "avg_pool_ceil_exclude_pad", {img}, FN(ops::avg_pool2d(a[0], {2, 4}, {2, 3}, {0, 1}, false, true)));
  const ir::Attrs pool_ceil{{"kernel", std::vector<int64_t>{2, 2}},
                            {"stride", std::vector<int64_t>{2, 2}},
                            {"padding", std::vector<int64_t>{0, 0}},
                            {"dilation", std::vector<int64_t>{1, 1}},
                            {"ceil_mode", true}};  // 7 x 5 -> 4 x 3 (floor mode: 3 x 2)
  add("max_pool_grad", "max_pool_grad_ceil", {ints({2, 4, 7, 5}, 120, 0, 3, DType::f32), rnd({2, 4, 4, 3}, 121)},
      [pool_ceil](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{node("max_pool_grad", {a[0], a[1]}, pool_ceil)};
      });
  add("max_pool_gather", "max_pool_gather_ceil", {ints({2, 4, 7, 5}, 122, 0, 3, DType::f32), rnd({2, 4, 7, 5}, 128)},
      [pool_ceil](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{node("max_pool_gather", {a[0], a[1]}, pool_ceil)};
      });
  add("avg_pool_grad", "avg_pool_grad_ceil", {rnd({2, 4, 4, 4}, 123)},
      FN(node("avg_pool_grad", {a[0]},
              ir::Attrs{{"kernel", std::vector<int64_t>{3, 3}},
                        {"stride", std::vector<int64_t>{2, 2}},
                        {"padding", std::vector<int64_t>{1, 1}},
                        {"count_include_pad", true},
                        {"ceil_mode", true},
                        {"input_size", std::vector<int64_t>{7, 6}}})));
  add("adaptive_avg_pool", "adaptive_avg_pool", {img}, FN(ops::adaptive_avg_pool2d(a[0], {3, 4})));
  add("adaptive_avg_pool_grad", "adaptive_avg_pool_grad", {rnd({2, 4, 3, 4}, 103)},
      FN(node("adaptive_avg_pool_grad", {a[0]}, ir::Attrs{{"input_size", std::vector<int64_t>{7, 6}}})));
  add("upsample", "upsample_nearest_i32", {ints({1, 2, 3, 4}, 104, -9, 9, DType::i32)},
      FN(ops::upsample2d(a[0], {5, 7})));
  add("upsample", "upsample_linear", {rnd({1, 2, 3, 4}, 105)},
      FN(ops::upsample2d(a[0], {5, 7}, ops::UpsampleMode::Bilinear)));
  add("upsample", "upsample_linear_align", {rnd({1, 2, 3, 4}, 106)},
      FN(ops::upsample2d(a[0], {6, 2}, ops::UpsampleMode::Bilinear, true)));
  add("upsample", "upsample_nearest_exact", {rnd({1, 2, 3, 4}, 124)},
      FN(ops::upsample2d(a[0], {5, 7}, ops::UpsampleMode::NearestExact)));
  add("upsample", "upsample_nearest_scaled_i32", {ints({1, 2, 5, 7}, 125, -9, 9, DType::i32)},
      FN(ops::upsample2d_scaled(a[0], {1.2, 0.6})));
  add("upsample", "upsample_linear_scaled", {rnd({1, 2, 4, 5}, 126)},
      FN(ops::upsample2d_scaled(a[0], {1.5, 2.5}, ops::UpsampleMode::Bilinear)));
  add("upsample_grad", "upsample_grad_nearest_exact_scaled", {rnd({1, 2, 8, 3}, 127)},
      FN(node("upsample_grad", {a[0]},
              ir::Attrs{{"input_size", std::vector<int64_t>{5, 4}},
                        {"mode", std::string("nearest-exact")},
                        {"align_corners", false},
                        {"scales", std::vector<double>{1.7, 0.75}}})));
  add("upsample_grad", "upsample_grad_nearest", {rnd({1, 2, 5, 7}, 107)},
      FN(node("upsample_grad", {a[0]},
              ir::Attrs{{"input_size", std::vector<int64_t>{3, 4}},
                        {"mode", std::string("nearest")},
                        {"align_corners", false}})));
  add("upsample_grad", "upsample_grad_linear", {rnd({1, 2, 5, 7}, 108)},
      FN(node(
          "upsample_grad", {a[0]},
          ir::Attrs{
              {"input_size", std::vector<int64_t>{3, 4}}, {"mode", std::string("linear")}, {"align_corners", false}})));

  // --- quantized weights ---
  for (const char* type : {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1"}) {
    add("dequantize", std::string("dequantize_") + type, {ops::quantize_array(rnd({3, 64}, 110), type)},
        [type](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::dequantize(a[0], type)}; });
  }
  for (const char* type : {"q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q8_k"}) {
    add("dequantize", std::string("dequantize_") + type, {ops::quantize_array(rnd({2, 512}, 111, -2, 2), type)},
        [type](const std::vector<Tensor>& a) { return std::vector<Tensor>{ops::dequantize(a[0], type)}; });
  }
  add("dequantize", "dequantize_f16", {ops::quantize_array(rnd({2, 5}, 112), "f16")}, FN(ops::dequantize(a[0], "f16")));
  add("dequantize", "dequantize_bf16", {ops::quantize_array(rnd({2, 5}, 113), "bf16")},
      FN(ops::dequantize(a[0], "bf16")));
  add("dequantize", "dequantize_f32", {ops::quantize_array(rnd({2, 5}, 114), "f32")}, FN(ops::dequantize(a[0], "f32")));
  add("dequantize", "dequantize_f64", {raw_bytes(rnd({2, 3}, 115, -1, 1, DType::f64))},
      FN(ops::dequantize(a[0], "f64")));
  add("dequantize", "dequantize_i32", {raw_bytes(ints({2, 3}, 116, -1000, 1000, DType::i32))},
      FN(ops::dequantize(a[0], "i32")));
  add("dequantize", "dequantize_i8", {raw_bytes(ints({2, 3}, 117, -128, 127, DType::i8))},
      FN(ops::dequantize(a[0], "i8")));
  add("quantized_matmul", "quantized_matmul_q4_k",
      {rnd({2, 3, 256}, 118), ops::quantize_array(rnd({5, 256}, 119), "q4_k")},
      FN(ops::quantized_matmul(a[0], a[1], "q4_k")));
  add("quantized_matmul", "quantized_matmul_q8_0", {rnd({4, 64}, 120), ops::quantize_array(rnd({3, 64}, 121), "q8_0")},
      FN(ops::quantized_matmul(a[0], a[1], "q8_0")));

  // --- optimiser ---
  const std::vector<Array> adam_inputs = {x34,
                                          rnd({3, 4}, 122),
                                          rnd({3, 4}, 123, -0.1, 0.1),
                                          rnd({3, 4}, 124, 0, 0.01),
                                          Array::scalar(1e-3, DType::f64),
                                          Array::scalar(3.0, DType::f64)};
  add("adam_update", "adam_update", adam_inputs,
      [](const std::vector<Tensor>& a) { return ops::adam_update(a[0], a[1], a[2], a[3], a[4], a[5]); });
  add("adam_update", "adamw_update", adam_inputs, [](const std::vector<Tensor>& a) {
    return ops::adam_update(a[0], a[1], a[2], a[3], a[4], a[5], {.weight_decay = 0.01, .decoupled = true});
  });

  // --- leaves ---
  add("constant", "constants_inline_and_lifted", {x23}, [](const std::vector<Tensor>& a) {
    const Tensor small = Tensor::from_vector<float>({1, 2, 3}, {3});
    const Tensor big = Tensor::from_array(random_array({40, 40}, 109, -1, 1, DType::f32), "big");
    return std::vector<Tensor>{a[0] + small, ops::sum(ops::square(big))};
  });
  return c;
}

#undef FN

ir::Graph case_graph(const OpCase& c) {
  std::vector<ir::TensorType> types;
  std::vector<std::string> names;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    types.push_back({c.inputs[i].dtype(), c.inputs[i].shape()});
    names.push_back("x" + std::to_string(i));
  }
  const ir::Graph g = trace(c.fn, types, names);
  return ir::Graph::build(g.inputs(), g.outputs(), c.label);
}

}  // namespace tessera::test
