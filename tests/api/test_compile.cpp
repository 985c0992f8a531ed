// CompiledFunction's steady-state path: a call whose argument types match the previous call reuses
// that executable without building a signature; any change of types goes back to the cache.
#include "tessera/backends/cpu/cpu_backend.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Compile, AlternatingSignaturesUseTheRightExecutable) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * 2.0 + 1.0}; });
  const Tensor two = Tensor::from_vector<float>({1, 2}, {2});
  const Tensor three = Tensor::from_vector<float>({1, 2, 3}, {3});
  const Tensor two_f64 = Tensor::from_vector<double>({5, 6}, {2});
  const Tensor matrix = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  for (int round = 0; round < 3; ++round) {
    expect_close(f({two})[0], {3, 5});
    expect_close(f({two})[0], {3, 5});
    expect_close(f({three})[0], {3, 5, 7});
    expect_close(f({two_f64})[0], {11, 13});
    expect_close(f({matrix})[0], {3, 5, 7, 9});
    expect_shape(f({matrix})[0], {2, 2});
  }
  EXPECT_EQ(f.trace_count(), 4u);
  EXPECT_EQ(f.cache_size(), 4u);
  EXPECT_EQ(f({two_f64})[0].dtype(), DType::f64);
}

TEST(Compile, ArgumentCountIsPartOfTheSignature) {
  auto f = compile([](const std::vector<Tensor>& xs) {
    Tensor s = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i];
    return std::vector<Tensor>{s};
  });
  const Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  const Tensor b = Tensor::from_vector<float>({10, 20}, {2});
  expect_close(f({a})[0], {1, 2});
  expect_close(f({a, b})[0], {11, 22});
  expect_close(f({a})[0], {1, 2});
  expect_close(f({a, b, b})[0], {21, 42});
  EXPECT_EQ(f.trace_count(), 3u);
}

TEST(Compile, LazyArgumentsAreEvaluatedFirst) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * xs[0]}; });
  const Tensor a = Tensor::from_vector<float>({1, 2}, {2});
  expect_close(f({a})[0], {1, 4});
  const Tensor lazy = a + 1.0;  // same type as a, not yet computed
  EXPECT_FALSE(lazy.is_evaluated());
  expect_close(f({lazy})[0], {4, 9});
  EXPECT_EQ(f.trace_count(), 1u);
}

TEST(Compile, FailedTraceLeavesTheFunctionUsable) {
  auto f = compile([](const std::vector<Tensor>& xs) {
    return std::vector<Tensor>{xs[0] + Tensor::from_vector<float>({1, 1, 1}, {3})};
  });
  const Tensor good = Tensor::from_vector<float>({1, 2, 3}, {3});
  const Tensor bad = Tensor::from_vector<float>({1, 2}, {2});
  expect_close(f({good})[0], {2, 3, 4});
  EXPECT_TESSERA_ERROR(f({bad}), "add", "f32[2]", "f32[3]");
  expect_close(f({good})[0], {2, 3, 4});
  EXPECT_TESSERA_ERROR(f({bad}), "add");
  EXPECT_TESSERA_ERROR(f({Tensor()}), "undefined argument");
  expect_close(f({good})[0], {2, 3, 4});
}

TEST(Compile, OutputsAreFreshArraysEachCall) {
  // The compiled path reuses its executable; results of earlier calls must not be overwritten.
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::relu(xs[0])}; });
  const Tensor r1 = f({Tensor::from_vector<float>({-1, 2}, {2})})[0];
  const Tensor r2 = f({Tensor::from_vector<float>({3, -4}, {2})})[0];
  expect_close(r1, {0, 2});
  expect_close(r2, {3, 0});
}

// A compiled model reads its parameters at every call: after an optimiser step it returns what eager
// evaluation returns (it used to keep returning the values captured when it was traced).
TEST(Compile, CapturedParametersAreReadAtEveryCall) {
  for (backends::Backend* backend : {&backends::reference_backend(), &backends::cpu_backend()}) {
    ops::Generator gen(5);
    auto model = std::make_shared<nn::Sequential>();
    model->add(std::make_shared<nn::Linear>(3, 4, true, gen));
    model->add(std::make_shared<nn::BatchNorm>(4));
    model->add(std::make_shared<nn::Linear>(4, 1, true, gen));
    optim::SGD opt(*model, {.lr = 0.5});
    const Tensor x = Tensor::from_vector<float>({1, -2, 3, 0.5f, 1, -1}, {2, 3});
    // Evaluation mode reads BatchNorm's running statistics, which training steps move.
    model->eval();
    auto f = compile([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{(*model)(a[0])}; }, backend);
    const double before = f({x})[0].to_vector<float>()[0];
    EXPECT_EQ(f.captured_count({x.type()}), 8u);  // 2 + 2 + 2 parameters and 2 running statistics
    for (int step = 0; step < 2; ++step) {
      model->train();
      opt.zero_grad();
      ops::sum(ops::square((*model)(x))).backward();
      opt.step();
      model->eval();
      const double eager = (*model)(x).to_vector<float>()[0];
      const double compiled = f({x})[0].to_vector<float>()[0];
      EXPECT_NE(before, compiled) << backend->name();
      EXPECT_NEAR(compiled, eager, 1e-5) << backend->name() << ", step " << step;
    }
    EXPECT_EQ(f.trace_count(), 1u) << "a parameter update must not retrace";
  }
}

// Parameters keep their identity across an optimiser step and a state-dict load: the leaf's data is
// overwritten in place.
TEST(Compile, ParameterUpdatesKeepTheLeaf) {
  ops::Generator gen(1);
  nn::Linear fc(2, 2, true, gen);
  const ir::Node* leaf = fc.weight.value().node().get();
  optim::Adam opt(fc, {.lr = 0.1});
  ops::sum(fc(Tensor::from_vector<float>({1, 2}, {1, 2}))).backward();
  opt.step();
  EXPECT_EQ(fc.weight.value().node().get(), leaf);
  std::map<std::string, Array> state = fc.state_dict();
  state["weight"] = Array::full(DType::f32, {2, 2}, 7.0);
  fc.load_state_dict(state);
  EXPECT_EQ(fc.weight.value().node().get(), leaf);
  expect_close(fc.weight, {7, 7, 7, 7});
}

// True constants still fold: tensors the function builds itself, and data nobody else holds.
TEST(Compile, TrueConstantsAreNotInputs) {
  const Tensor c = Tensor::from_vector<float>({1, 2}, {2});  // nobody else holds its data
  auto f = compile([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] * 2.0 + c}; });
  EXPECT_EQ(f.captured_count({{DType::f32, {2}}}), 0u);
  // An array the caller keeps is read at every call: writing into it changes the result.
  Array held = Array::from_vector<float>({1, 1}, {2});
  const Tensor h = Tensor::from_array(held);
  auto g = compile([&](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] + h}; });
  const Tensor x = Tensor::from_vector<float>({10, 20}, {2});
  expect_close(g({x})[0], {11, 21});
  held.data<float>()[0] = 5;
  expect_close(g({x})[0], {15, 21});
  EXPECT_EQ(g.captured_count({x.type()}), 1u);
}
