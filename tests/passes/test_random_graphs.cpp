// Property test: random graphs full of the patterns the passes look for (splat constants 0, 1, -1, 2,
// 0.5, shape-op chains, repeated subexpressions, keepdims reductions) compute the same values before
// and after the default pipeline, on inputs that include NaN, infinities and signed zeros.
#include <random>

#include "pass_test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

class RandomGraph {
 public:
  explicit RandomGraph(uint64_t seed) : rng_(seed) {}

  // Values are [2, 3] f32 unless noted; the pool grows as ops are added.
  std::vector<Tensor> build(const std::vector<Tensor>& inputs, int steps) {
    pool_ = inputs;
    for (int i = 0; i < steps; ++i) pool_.push_back(step());
    return {pool_.back(), pool_[pool_.size() / 2], ops::sum(pool_[pool_.size() - 2])};
  }

 private:
  Tensor pick() { return pool_[std::uniform_int_distribution<size_t>(0, pool_.size() - 1)(rng_)]; }

  Tensor special_constant() {
    static const double kValues[] = {0.0, 1.0, -1.0, 2.0, 0.5, 3.0, -0.0};
    const double v = kValues[std::uniform_int_distribution<size_t>(0, 6)(rng_)];
    switch (std::uniform_int_distribution<int>(0, 3)(rng_)) {
      case 0:
        return Tensor::scalar(v);
      case 1:
        return ops::full({2, 3}, v);
      case 2:
        return ops::broadcast_to(Tensor::scalar(v), {3});
      default:
        return Tensor::from_array(Array::full(DType::f32, {1, 3}, v));
    }
  }

  Tensor operand() { return std::bernoulli_distribution(0.4)(rng_) ? special_constant() : pick(); }

  Tensor step() {
    const Tensor a = pick();
    switch (std::uniform_int_distribution<int>(0, 15)(rng_)) {
      case 0:
        return a + operand();
      case 1:
        return operand() - a;
      case 2:
        return a - operand();
      case 3:
        return operand() * a;
      case 4:
        return a / operand();
      case 5:
        return ops::maximum(operand(), a);
      case 6:
        return ops::neg(ops::neg(a));
      case 7:
        return ops::tanh(a);
      case 8:
        return ops::reshape(ops::reshape(a, {3, 2}), {2, 3});
      case 9:
        return ops::transpose(ops::transpose(a));
      case 10:
        return ops::broadcast_to(ops::sum(a, {0}, true), {2, 3}) * a;
      case 11:
        return ops::cast(ops::cast(a, DType::f64), DType::f32);
      case 12:
        return ops::pow(a, operand());
      case 13:
        return a * ops::reshape(ops::sum(a, {1}, true), {2, 1});
      case 14:
        return ops::where(ops::gt(a, operand()), a, operand());
      default:
        return ops::tanh(a) + ops::tanh(a);  // a repeated subexpression for CSE
    }
  }

  std::mt19937_64 rng_;
  std::vector<Tensor> pool_;
};

std::vector<Array> nasty_inputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f};
  std::vector<Array> out;
  for (int k = 0; k < 2; ++k) {
    std::vector<float> v(6);
    for (float& x : v) x = std::bernoulli_distribution(0.25)(rng) ? specials[rng() % 6] : dist(rng);
    out.push_back(Array::from_vector(v, {2, 3}));
  }
  return out;
}

}  // namespace

TEST(RandomGraphs, DefaultPipelinePreservesValues) {
  size_t before = 0, after = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomGraph builder(seed);
    const ir::Graph g =
        trace([&](const std::vector<Tensor>& x) { return builder.build(x, 14); }, {f32({2, 3}), f32({2, 3})});
    const ir::Graph o = passes::default_pipeline().run(g);
    ir::verify(o);
    before += g.nodes().size();
    after += o.nodes().size();
    for (uint64_t k = 0; k < 3; ++k) expect_same_values(g, o, nasty_inputs(seed * 10 + k), 0.0, 1e-6);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "before:\n" << ir::print_graph(g) << "after:\n" << ir::print_graph(o);
      break;
    }
  }
  std::printf("[ passes ] random graphs: %zu -> %zu nodes in all\n", before, after);
  EXPECT_LT(after, before);
}
