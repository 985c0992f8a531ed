#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// Independent oracle: C[b..., i, j] = sum_p A[b..., i, p] B[b..., p, j] for operands already broadcast to
// full batch shapes, all row-major, computed straight from the definition.
std::vector<double> naive_batched(const std::vector<double>& a, const std::vector<double>& b, int64_t batch, int64_t m,
                                  int64_t k, int64_t n) {
  std::vector<double> c(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += a[static_cast<size_t>((t * m + i) * k + p)] * b[static_cast<size_t>((t * k + p) * n + j)];
        c[static_cast<size_t>((t * m + i) * n + j)] = s;
      }
  return c;
}

}  // namespace

TEST(Matmul, MatrixTimesMatrix) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  Tensor c = ops::matmul(a, b);
  expect_shape(c, {2, 2});
  EXPECT_EQ(c.dtype(), DType::f32);
  expect_close(c, {58, 64, 139, 154});
}

TEST(Matmul, VectorOperandsArePromotedAndRemoved) {
  Tensor v = Tensor::from_vector<double>({1, 2, 3}, {3});
  Tensor w = Tensor::from_vector<double>({4, 5, 6}, {3});
  Tensor dot = ops::matmul(v, w);
  expect_shape(dot, {});
  expect_close(dot, {32});

  Tensor row = Tensor::from_vector<double>({1, 2}, {2});
  Tensor m23 = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor vm = ops::matmul(row, m23);
  expect_shape(vm, {3});
  expect_close(vm, {9, 12, 15});

  Tensor col = Tensor::from_vector<double>({1, 0, -1}, {3});
  Tensor mv = ops::matmul(m23, col);
  expect_shape(mv, {2});
  expect_close(mv, {-2, -2});
}

TEST(Matmul, VectorWithBatchedMatrix) {
  // [3] @ [2, 3, 2] -> [2, 2]; [2, 2, 3] @ [3] -> [2, 2].
  Tensor v = Tensor::from_vector<double>({1, 2, 3}, {3});
  Tensor b = ops::reshape(ops::arange(12, DType::f64), {2, 3, 2});
  Tensor vb = ops::matmul(v, b);
  expect_shape(vb, {2, 2});
  // batch 0: rows [0 1],[2 3],[4 5] -> [0+4+12, 1+6+15]; batch 1 adds 6 to every entry: + 6*6.
  expect_close(vb, {16, 22, 52, 58});

  Tensor a = ops::reshape(ops::arange(12, DType::f64), {2, 2, 3});
  Tensor av = ops::matmul(a, v);
  expect_shape(av, {2, 2});
  // rows [0 1 2],[3 4 5],[6 7 8],[9 10 11] dotted with [1 2 3].
  expect_close(av, {8, 26, 44, 62});
}

TEST(Matmul, BatchDimensionsBroadcast) {
  const Array a = random_array({2, 1, 2, 3}, 11);
  const Array b = random_array({4, 3, 5}, 12);
  Tensor c = ops::matmul(Tensor(a), Tensor(b));
  expect_shape(c, {2, 4, 2, 5});
  const std::vector<double> af = a.broadcast_to({2, 4, 2, 3}).to_f64();
  const std::vector<double> bf = b.broadcast_to({2, 4, 3, 5}).to_f64();
  expect_close(c, naive_batched(af, bf, 8, 2, 3, 5), 1e-12);
}

TEST(Matmul, RankFiveWithUnitBatchAxes) {
  const Array a = random_array({1, 2, 1, 3, 4}, 21);
  const Array b = random_array({3, 1, 2, 4, 2}, 22);
  Tensor c = ops::matmul(Tensor(a), Tensor(b));
  expect_shape(c, {3, 2, 2, 3, 2});
  const std::vector<double> af = a.broadcast_to({3, 2, 2, 3, 4}).to_f64();
  const std::vector<double> bf = b.broadcast_to({3, 2, 2, 4, 2}).to_f64();
  expect_close(c, naive_batched(af, bf, 12, 3, 4, 2), 1e-12);
}

TEST(Matmul, NonContiguousOperands) {
  // a^T through a permute view, b through a reversed slice.
  const Array base = random_array({3, 2}, 31);
  const Array bb = random_array({6, 4}, 32);
  Tensor at = ops::transpose(Tensor(base));
  Tensor bs = ops::slice(Tensor(bb), 0, 5, -7, -2);  // rows 5, 3, 1
  expect_shape(bs, {3, 4});
  Tensor c = ops::matmul(at, bs);
  const std::vector<double> a_vals = base.permute({1, 0}).to_f64();
  const std::vector<double> b_vals = bb.slice(0, 5, -7, -2).to_f64();
  expect_close(c, naive_batched(a_vals, b_vals, 1, 2, 3, 4), 1e-12);
}

TEST(Matmul, EmptyDimensions) {
  // Inner dimension 0: every entry is an empty sum.
  Tensor c = ops::matmul(ops::ones({2, 0}), ops::ones({0, 3}));
  expect_shape(c, {2, 3});
  expect_close(c, {0, 0, 0, 0, 0, 0});
  Tensor d = ops::matmul(ops::ones({0, 3}), ops::ones({3, 2}));
  expect_shape(d, {0, 2});
  EXPECT_EQ(d.array().numel(), 0);
  Tensor e = ops::matmul(ops::ones({0, 2, 3}), ops::ones({3, 4}));
  expect_shape(e, {0, 2, 4});
  EXPECT_EQ(e.array().numel(), 0);
}

TEST(Matmul, DtypePromotion) {
  Tensor ai = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor bf = Tensor::from_vector<float>({0.5f, 1, 1.5f, 2}, {2, 2});
  Tensor c = ops::matmul(ai, bf);
  EXPECT_EQ(c.dtype(), DType::f32);
  expect_close(c, {3.5, 5, 7.5, 11});

  Tensor a32 = Tensor::from_vector<float>({1, 2}, {1, 2});
  Tensor b64 = Tensor::from_vector<double>({3, 4}, {2, 1});
  EXPECT_EQ(ops::matmul(a32, b64).dtype(), DType::f64);
  expect_close(ops::matmul(a32, b64), {11});
}

TEST(Matmul, IntegerOperands) {
  Tensor a = Tensor::from_vector<int32_t>({1, -2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<int32_t>({5, 6, 7, -8}, {2, 2});
  Tensor c = ops::matmul(a, b);
  EXPECT_EQ(c.dtype(), DType::i32);
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{-9, 22, 43, -14}));
  // i8 results wrap like NumPy's: 100 * 2 = 200 -> -56.
  Tensor a8 = Tensor::from_vector<int8_t>({100}, {1, 1});
  Tensor b8 = Tensor::from_vector<int8_t>({2}, {1, 1});
  EXPECT_EQ(ops::matmul(a8, b8).to_vector<int8_t>(), (std::vector<int8_t>{-56}));
  // i64 with values beyond 2^53 stays exact (no detour through double).
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor a64 = Tensor::from_vector<int64_t>({big, 1}, {1, 2});
  Tensor b64 = Tensor::from_vector<int64_t>({1, 2}, {2, 1});
  EXPECT_EQ(ops::matmul(a64, b64).to_vector<int64_t>(), (std::vector<int64_t>{big + 2}));
}

TEST(Matmul, HalfPrecisionAccumulatesWide) {
  // 4096 products of 1 * 1 (+ one 0.5): an f16 accumulator would stall at 2048.
  const int64_t k = 4096;
  Tensor a = ops::ones({1, k}, DType::f16);
  Tensor b = ops::ones({k, 1}, DType::f16);
  Tensor c = ops::matmul(a, b);
  EXPECT_EQ(c.dtype(), DType::f16);
  expect_close(c, {4096});
  Tensor ab = ops::ones({2, 3}, DType::bf16);
  Tensor bb = ops::full({3, 1}, 0.5, DType::bf16);
  Tensor cb = ops::matmul(ab, bb);
  EXPECT_EQ(cb.dtype(), DType::bf16);
  expect_close(cb, {1.5, 1.5});
}

TEST(Matmul, F32AccumulatesInDouble) {
  // 1e8 + 1 - 1e8 in float order would lose the 1; the reference kernel's double accumulator keeps it
  // (a promise of the oracle, not of fast backends, so this runs on the reference backend whatever
  // TESSERA_BACKEND says).
  backends::Backend& saved = backends::default_backend();
  backends::set_default_backend(backends::reference_backend());
  struct Restore {
    backends::Backend& b;
    ~Restore() { backends::set_default_backend(b); }
  } restore{saved};
  Tensor a = Tensor::from_vector<float>({1e8f, 1, -1e8f}, {1, 3});
  Tensor b = Tensor::from_vector<float>({1, 1, 1}, {3, 1});
  expect_close(ops::matmul(a, b), {1}, 0);
}

TEST(Matmul, ErrorsNameShapes) {
  Tensor a = ops::zeros({2, 3});
  Tensor b = ops::zeros({4, 5});
  EXPECT_TESSERA_ERROR(ops::matmul(a, b), "matmul", "f32[2, 3]", "f32[4, 5]", "inner dimensions",
                       "[2, 3] has 3 columns", "[4, 5] has 4 rows");
  EXPECT_TESSERA_ERROR(ops::matmul(ops::zeros({3}), ops::zeros({4})), "matmul", "f32[3]", "f32[4]", "inner");
  EXPECT_TESSERA_ERROR(ops::matmul(ops::zeros({2, 2, 3}), ops::zeros({3, 3, 4})), "matmul", "f32[2, 2, 3]",
                       "f32[3, 3, 4]", "batch", "broadcast");
  EXPECT_TESSERA_ERROR(ops::matmul(Tensor::scalar(2.0), ops::zeros({2, 2})), "matmul", "f32[]", "at least one");
  EXPECT_TESSERA_ERROR(ops::matmul(ops::zeros({2, 2}, DType::boolean), ops::zeros({2, 2})), "matmul", "bool[2, 2]",
                       "numeric");
}

TEST(Matmul, LargeF32MatchesDirectDotProducts) {
  // The MLP's largest layer shape. (Speed is measured in benchmarks, never asserted in tests.)
  const Array a = random_array({256, 784}, 41, -1, 1, DType::f32);
  const Array b = random_array({784, 1024}, 42, -1, 1, DType::f32);
  Tensor c = ops::matmul(Tensor(a), Tensor(b));
  // Spot-check a few entries against a direct dot product.
  const std::vector<double> av = a.to_f64(), bv = b.to_f64(), cv = c.array().to_f64();
  for (int64_t i : {0, 77, 255}) {
    for (int64_t j : {0, 500, 1023}) {
      double s = 0;
      for (int64_t p = 0; p < 784; ++p)
        s += av[static_cast<size_t>(i * 784 + p)] * bv[static_cast<size_t>(p * 1024 + j)];
      EXPECT_NEAR(cv[static_cast<size_t>(i * 1024 + j)], s, 1e-4);
    }
  }
}

TEST(MatmulGrad, Matrices) {
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::matmul(xs[0], xs[1]); },
                         (std::vector<Array>{random_array({3, 4}, 1), random_array({4, 2}, 2)}));
}

TEST(MatmulGrad, BatchBroadcast) {
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::matmul(xs[0], xs[1]); },
                         (std::vector<Array>{random_array({2, 1, 3, 4}, 3), random_array({3, 4, 2}, 4)}));
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::matmul(xs[0], xs[1]); },
                         (std::vector<Array>{random_array({3, 4}, 5), random_array({2, 4, 2}, 6)}));
}

TEST(MatmulGrad, VectorCases) {
  const Fn mm = [](const std::vector<Tensor>& xs) { return ops::matmul(xs[0], xs[1]); };
  EXPECT_GRADIENTS_MATCH(mm, (std::vector<Array>{random_array({4}, 7), random_array({4}, 8)}));
  EXPECT_GRADIENTS_MATCH(mm, (std::vector<Array>{random_array({4}, 9), random_array({4, 3}, 10)}));
  EXPECT_GRADIENTS_MATCH(mm, (std::vector<Array>{random_array({2, 4}, 11), random_array({4}, 12)}));
  EXPECT_GRADIENTS_MATCH(mm, (std::vector<Array>{random_array({4}, 13), random_array({2, 4, 3}, 14)}));
  EXPECT_GRADIENTS_MATCH(mm, (std::vector<Array>{random_array({2, 3, 4}, 15), random_array({4}, 16)}));
}

TEST(MatmulGrad, HandComputed) {
  // d/dA sum(A B) = 1 B^T (row sums of B), d/dB = A^T 1 (column sums of A).
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<double>({5, 6, 7, 8}, {2, 2});
  auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::matmul(xs[0], xs[1])); })({a, b});
  expect_close(g[0], {11, 15, 11, 15});
  expect_close(g[1], {4, 4, 6, 6});
}

TEST(MatmulGrad, MixedDtypesGiveEachOperandItsOwnDtype) {
  Tensor a = Tensor::from_vector<float>({1, 2}, {1, 2});
  Tensor b = Tensor::from_vector<double>({3, 4}, {2, 1});
  auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::matmul(xs[0], xs[1])); })({a, b});
  EXPECT_EQ(g[0].dtype(), DType::f32);
  EXPECT_EQ(g[1].dtype(), DType::f64);
  expect_close(g[0], {3, 4});
  expect_close(g[1], {1, 2});
}

TEST(MatmulGrad, SecondDerivative) {
  // Gradient of sum((A B)^2) with respect to A and B, itself checked by finite differences.
  const Fn f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::square(ops::matmul(xs[0], xs[1]))); };
  const Fn df = [f](const std::vector<Tensor>& xs) {
    auto g = grad(f)(xs);
    return ops::sum(g[0] * g[0]) + ops::sum(ops::sin(g[1]));
  };
  EXPECT_GRADIENTS_MATCH(df, (std::vector<Array>{random_array({2, 2, 3}, 17), random_array({3, 2}, 18)}));
  const Fn dv = [](const std::vector<Tensor>& xs) {
    auto g = grad([](const std::vector<Tensor>& ys) { return ops::sum(ops::tanh(ops::matmul(ys[0], ys[1]))); })(xs);
    return ops::matmul(g[0], g[1]);
  };
  EXPECT_GRADIENTS_MATCH(dv, (std::vector<Array>{random_array({3}, 19), random_array({3, 3}, 20)}));
}

TEST(Matmul, CompiledAndPrintedGraph) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::matmul(xs[0], xs[1])}; });
  auto r = f({Tensor::from_vector<float>({1, 2}, {2}), Tensor::from_vector<float>({3, 4, 5, 6}, {2, 2})});
  expect_close(r[0], {13, 16});
  ir::Graph g = trace([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::matmul(xs[0], xs[1])}; },
                      {{DType::f32, {5, 2, 3}}, {DType::f32, {3}}}, {"a", "b"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  EXPECT_EQ(ir::print_graph(ir::parse_graph(text)), text);
  EXPECT_EQ(shape_str(g.outputs()[0].shape()), "[5, 2]");
}
