#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Smoke, EagerArithmetic) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<float>({10, 20}, {2});
  Tensor c = ops::exp(ops::log(a)) * 2.0 + b;
  expect_close(c, {12, 24, 16, 28}, 1e-5);
  expect_shape(c, {2, 2});
}

TEST(Smoke, GradOfSquare) {
  Tensor x = Tensor::from_vector<double>({1, -2, 3}, {3});
  auto g = grad([](const std::vector<Tensor>& xs) { return ops::sum(ops::square(xs[0])); })({x});
  expect_close(g[0], {2, -4, 6});
}

TEST(Smoke, SecondDerivative) {
  // d2/dx2 sin(x) = -sin(x)
  auto f = [](const std::vector<Tensor>& xs) { return ops::sum(ops::sin(xs[0])); };
  auto df = [f](const std::vector<Tensor>& xs) { return ops::sum(grad(f)(xs)[0]); };
  Tensor x = Tensor::from_vector<double>({0.5, 1.0}, {2});
  expect_close(grad(df)({x})[0], {-std::sin(0.5), -std::sin(1.0)}, 1e-12);
}

TEST(Smoke, Backward) {
  Tensor w = Tensor::from_vector<float>({1, 2}, {2});
  w.set_requires_grad();
  Tensor loss = ops::sum(w * w * 3.0);
  loss.backward();
  expect_close(w.grad(), {6, 12}, 1e-5);
  loss.backward();  // accumulates like PyTorch
  expect_close(w.grad(), {12, 24}, 1e-5);
}

TEST(Smoke, GradCheckTanh) {
  EXPECT_GRADIENTS_MATCH([](const std::vector<Tensor>& xs) { return ops::tanh(xs[0]) * xs[1]; },
                         (std::vector<Array>{random_array({2, 3}, 1), random_array({3}, 2)}));
}

TEST(Smoke, TextRoundTrip) {
  ir::Graph g = trace(
      [](const std::vector<Tensor>& xs) {
        return std::vector<Tensor>{ops::relu(xs[0] + xs[1]) * 0.5, ops::sum(xs[0], {1}, true)};
      },
      {{DType::f32, {2, 3}}, {DType::f32, {3}}}, {"x", "b"});
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  ir::Graph back = ir::parse_graph(text);
  ir::verify(back);
  EXPECT_EQ(ir::print_graph(back), text) << text;
}

TEST(Smoke, ShapeErrorNamesOp) {
  Tensor a = ops::zeros({2, 3});
  Tensor b = ops::zeros({4});
  EXPECT_TESSERA_ERROR(ops::add(a, b), "add", "f32[2, 3]", "f32[4]", "broadcast");
}

TEST(Smoke, CompileCachesPerSignature) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * xs[0]}; });
  auto r1 = f({Tensor::from_vector<float>({1, 2}, {2})});
  auto r2 = f({Tensor::from_vector<float>({3, 4}, {2})});
  auto r3 = f({Tensor::from_vector<float>({1, 2, 3}, {3})});
  expect_close(r1[0], {1, 4});
  expect_close(r2[0], {9, 16});
  expect_close(r3[0], {1, 4, 9});
  EXPECT_EQ(f.trace_count(), 2u);
}
