// dropout (training/inference, p edge cases, reproducibility, gradient) and embedding (lookup, index
// dtypes, bounds errors, weight gradient of first and second order, decomposition).
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Dropout, IdentityCasesAndAllDropped) {
  Tensor x = Tensor::from_vector<float>({1, -2, 3, 4}, {2, 2});
  ops::Generator gen(7);
  expect_close(ops::dropout(x, 0.5, /*training=*/false, gen), {1, -2, 3, 4});
  expect_close(ops::dropout(x, 0.0, true, gen), {1, -2, 3, 4});
  EXPECT_EQ(gen.offset(), 0u);  // nothing drawn
  Tensor all = ops::dropout(x, 1.0, true, gen);
  expect_close(all, {0, 0, 0, 0});
  EXPECT_EQ(all.dtype(), DType::f32);
  auto g = grad([](const std::vector<Tensor>& xs) {
    ops::Generator local(1);
    return ops::sum(ops::dropout(xs[0], 1.0, true, local));
  })({Tensor::from_vector<double>({1, 2}, {2})});
  expect_close(g[0], {0, 0});
}

TEST(Dropout, MaskScaleRateAndReproducibility) {
  const int64_t n = 20000;
  Tensor x = ops::ones({n}, DType::f32);
  ops::Generator gen(123);
  const double p = 0.3;
  const std::vector<double> y = ops::dropout(x, p, true, gen).array().to_f64();
  int64_t kept = 0;
  for (double v : y) {
    // Every element is either dropped or scaled by 1 / (1 - p).
    const bool dropped = v == 0.0, scaled = std::abs(v - 1.0 / (1.0 - p)) < 1e-6;
    EXPECT_TRUE(dropped || scaled) << v;
    kept += scaled ? 1 : 0;
  }
  // Binomial(20000, 0.7): standard deviation ~65, so 0.7 +- 0.015 is > 4 sigma.
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.015);
  EXPECT_GT(gen.offset(), 0u);

  ops::Generator a(5), b(5);
  EXPECT_EQ(ops::dropout(x, 0.5, true, a).to_vector<float>(), ops::dropout(x, 0.5, true, b).to_vector<float>());
  // The generator advances: a second draw gives a different mask.
  ops::Generator fresh(5);
  EXPECT_NE(ops::dropout(x, 0.5, true, a).to_vector<float>(), ops::dropout(x, 0.5, true, fresh).to_vector<float>());
}

TEST(Dropout, DtypesErrorsAndGradient) {
  for (DType dt : {DType::f16, DType::bf16, DType::f64}) {
    ops::Generator gen(3);
    Tensor y = ops::dropout(ops::ones({64}, dt), 0.5, true, gen);
    EXPECT_EQ(y.dtype(), dt);
    for (double v : y.array().to_f64()) EXPECT_TRUE(v == 0.0 || v == 2.0) << v;
  }
  ops::Generator gen(1);
  Tensor x = ops::zeros({2, 3});
  EXPECT_TESSERA_ERROR(ops::dropout(x, -0.1, true, gen), "dropout", "f32[2, 3]", "p must be in [0, 1]");
  EXPECT_TESSERA_ERROR(ops::dropout(x, 1.5, true, gen), "dropout", "1.5");
  EXPECT_TESSERA_ERROR(ops::dropout(x, std::nan(""), false, gen), "dropout", "p must be in [0, 1]");
  EXPECT_TESSERA_ERROR(ops::dropout(ops::zeros({2}, DType::i32), 0.5, true, gen), "dropout", "i32[2]", "floating");
  EXPECT_NO_THROW(ops::dropout(x, 0.5));  // the default generator

  // The gradient is the same mask and scale: d/dx sum(w * dropout(x)) = w * mask / (1 - p).
  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) {
        ops::Generator local(42);  // the same mask on every evaluation
        return ops::dropout(xs[0], 0.4, true, local);
      },
      (std::vector<Array>{random_array({4, 5}, 9, 0.5, 1.5)}));
  Tensor xs = Tensor::from_array(random_array({50}, 10, 0.5, 1.5));
  ops::Generator g1(77), g2(77);
  const std::vector<double> y = ops::dropout(xs, 0.4, true, g1).array().to_f64();
  auto g = grad([&g2](const std::vector<Tensor>& in) { return ops::sum(ops::dropout(in[0], 0.4, true, g2)); })({xs});
  const std::vector<double> gv = g[0].array().to_f64();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(gv[i], y[i] == 0.0 ? 0.0 : 1.0 / 0.6, 1e-12) << i;
}

TEST(Embedding, LookupAnyIndexShape) {
  // weight [V=4, D=3], row v = (10v, 10v + 1, 10v + 2)
  std::vector<double> w;
  for (int v = 0; v < 4; ++v)
    for (int d = 0; d < 3; ++d) w.push_back(10 * v + d);
  Tensor weight = Tensor::from_vector<double>(w, {4, 3});
  Tensor y = ops::embedding(weight, Tensor::from_vector<int64_t>({3, 0, 3, 1, 2, 0}, {2, 3}));
  expect_shape(y, {2, 3, 3});
  expect_close(y, {30, 31, 32, 0, 1, 2, 30, 31, 32, 10, 11, 12, 20, 21, 22, 0, 1, 2});
  Tensor y32 = ops::embedding(weight, Tensor::from_vector<int32_t>({2}, {1}));
  expect_close(y32, {20, 21, 22});
  Tensor ys = ops::embedding(weight, Tensor::from_vector<uint8_t>({1}, {}));
  expect_shape(ys, {3});
  expect_close(ys, {10, 11, 12});
  // A transposed (strided) table.
  Tensor wt = ops::transpose(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}), 0, 1);  // [3, 2]
  expect_close(ops::embedding(wt, Tensor::from_vector<int64_t>({2, 0}, {2})), {3, 6, 1, 4});
  // Empty indices.
  expect_shape(ops::embedding(weight, ops::zeros({0, 2}, DType::i64)), {0, 2, 3});
  // Integer tables work too.
  Tensor wi = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(ops::embedding(wi, Tensor::from_vector<int64_t>({1, 1}, {2})).to_vector<int32_t>(),
            (std::vector<int32_t>{3, 4, 3, 4}));
}

TEST(Embedding, Errors) {
  Tensor weight = ops::zeros({5, 3});
  EXPECT_TESSERA_ERROR(ops::embedding(weight, Tensor::from_vector<int64_t>({1, 7}, {2})).eval(), "embedding", "index 7",
                       "num_embeddings 5");
  EXPECT_TESSERA_ERROR(ops::embedding(weight, Tensor::from_vector<int64_t>({-1}, {1})).eval(), "embedding", "index -1",
                       "num_embeddings 5");
  EXPECT_TESSERA_ERROR(ops::embedding(weight, ops::zeros({2})), "embedding", "f32[5, 3]", "f32[2]", "integers");
  EXPECT_TESSERA_ERROR(ops::embedding(weight, ops::zeros({2}, DType::boolean)), "embedding", "bool[2]");
  EXPECT_TESSERA_ERROR(ops::embedding(ops::zeros({5}), ops::zeros({2}, DType::i64)), "embedding", "f32[5]", "rank 1");
  // The gradient kernel checks as well.
  Tensor bad = Tensor::from_vector<int64_t>({5}, {1});
  EXPECT_TESSERA_ERROR(
      grad([bad](const std::vector<Tensor>& xs) { return ops::sum(ops::embedding(xs[0], bad)); })({weight})[0].eval(),
      "index 5", "num_embeddings 5");
}

TEST(Embedding, WeightGradient) {
  // d/dW sum(G * embedding(W, idx)) adds row G[i] into row idx[i]; repeated indices accumulate.
  Tensor idx = Tensor::from_vector<int64_t>({2, 0, 2, 2}, {2, 2});
  Tensor gw = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  auto g = grad([idx, gw](const std::vector<Tensor>& xs) { return ops::sum(ops::embedding(xs[0], idx) * gw); })(
      {Tensor::from_array(random_array({3, 2}, 1))});
  expect_close(g[0], {3, 4, 0, 0, 1 + 5 + 7, 2 + 6 + 8});

  EXPECT_GRADIENTS_MATCH(
      [](const std::vector<Tensor>& xs) { return ops::embedding(xs[0], xs[1]); },
      (std::vector<Array>{random_array({5, 3}, 2), Array::from_vector<int32_t>({4, 0, 4, 1, 3, 3}, {3, 2})}));
  // Second order: the gradient of sum(embedding(W)^2) is 2 * embedding_grad(embedding(W)).
  const Array idx2 = Array::from_vector<int64_t>({1, 1, 0, 3}, {4});
  auto first = [idx2](const std::vector<Tensor>& xs) {
    auto f = [idx2](const std::vector<Tensor>& ys) {
      return ops::sum(ops::square(ops::embedding(ys[0], Tensor::from_array(idx2))));
    };
    return grad(f)(xs)[0];
  };
  EXPECT_GRADIENTS_MATCH(first, (std::vector<Array>{random_array({4, 2}, 3)}));
}

TEST(Embedding, DecompositionsMatch) {
  const Array w = random_array({5, 3}, 4);
  Tensor weight = Tensor::from_array(w);
  Tensor idx = Tensor::from_vector<int64_t>({4, 0, 4, 2}, {2, 2});
  const ir::OpDef& def = ir::OpRegistry::instance().get("embedding");
  ASSERT_TRUE(static_cast<bool>(def.decompose));
  Tensor via(def.decompose({weight.value(), idx.value()}, {}).at(0));
  expect_shape(via, {2, 2, 3});
  expect_close(via, ops::embedding(weight, idx).to_vector<double>());

  Tensor g = Tensor::from_array(random_array({2, 2, 3}, 5));
  const ir::OpDef& grad_def = ir::OpRegistry::instance().get("embedding_grad");
  ASSERT_TRUE(static_cast<bool>(grad_def.decompose));
  const ir::Attrs attrs{{"num_embeddings", int64_t{5}}};
  Tensor direct(ir::make_node1("embedding_grad", {g.value(), idx.value()}, attrs));
  Tensor decomposed(grad_def.decompose({g.value(), idx.value()}, attrs).at(0));
  expect_shape(direct, {5, 3});
  expect_close(decomposed, direct.to_vector<double>(), 1e-14);
}
