// Every optimiser fits a small linear regression: the loss must fall at least tenfold.
#include "optim_reference.h"

using namespace tessera;
using namespace tessera::test;

namespace {

struct Problem {
  Tensor x, y;
};

Problem regression_problem() {
  const Array x = random_array({64, 3}, 11, -1, 1, DType::f32);
  const std::vector<double> xv = x.to_f64(), w{1.5, -2.0, 0.5};
  std::vector<double> y;
  for (size_t r = 0; r < 64; ++r) y.push_back(xv[r * 3] * w[0] + xv[r * 3 + 1] * w[1] + xv[r * 3 + 2] * w[2] + 0.7);
  return {Tensor::from_array(x), Tensor::from_array(Array::from_vector(y, {64, 1}).astype(DType::f32))};
}

double train(nn::Module& model, optim::Optimizer& opt, const Problem& pb, int steps, double* first) {
  double last = 0;
  for (int s = 0; s < steps; ++s) {
    const Tensor loss = ops::mse_loss(model(pb.x), pb.y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    last = loss.item();
    if (s == 0) *first = last;
  }
  return last;
}

void expect_converges(const std::string& name,
                      const std::function<std::unique_ptr<optim::Optimizer>(nn::Module&)>& make) {
  ops::Generator gen(3);
  nn::Linear model(3, 1, true, gen);
  auto opt = make(model);
  const Problem pb = regression_problem();
  double first = 0;
  const double last = train(model, *opt, pb, 150, &first);
  EXPECT_GT(first, 0.5) << name;
  EXPECT_LT(last, first / 10.0) << name << ": loss " << first << " -> " << last;
}

}  // namespace

TEST(Convergence, SGD) {
  expect_converges("sgd", [](nn::Module& m) { return std::make_unique<optim::SGD>(m, optim::SGDOptions{.lr = 0.1}); });
}
TEST(Convergence, SGDMomentum) {
  expect_converges("sgd momentum", [](nn::Module& m) {
    return std::make_unique<optim::SGD>(m, optim::SGDOptions{.lr = 0.05, .momentum = 0.9});
  });
}
TEST(Convergence, SGDNesterovWithWeightDecay) {
  expect_converges("sgd nesterov", [](nn::Module& m) {
    return std::make_unique<optim::SGD>(
        m, optim::SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-4, .nesterov = true});
  });
}
TEST(Convergence, Adam) {
  expect_converges("adam",
                   [](nn::Module& m) { return std::make_unique<optim::Adam>(m, optim::AdamOptions{.lr = 0.05}); });
}
TEST(Convergence, AdamW) {
  expect_converges("adamw", [](nn::Module& m) {
    return std::make_unique<optim::AdamW>(m, optim::AdamWOptions{.lr = 0.05, .weight_decay = 1e-2});
  });
}
TEST(Convergence, RAdam) {
  expect_converges("radam",
                   [](nn::Module& m) { return std::make_unique<optim::RAdam>(m, optim::AdamOptions{.lr = 0.05}); });
}
