// trace() and compile(): graphs traced from functions, compiled once per input signature.
#include "ir_test_ops.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

TEST(Trace, BuildsAGraphFromPlaceholders) {
  Tensor captured = Tensor::from_vector<float>({10, 20, 30}, {3}, "bias");
  const ir::Graph g = trace(
      [&](const std::vector<Tensor>& xs) {
        return std::vector<Tensor>{ops::relu(xs[0]) + captured, ops::sum(xs[1], {0}, false)};
      },
      {{DType::f32, {2, 3}}, {DType::i32, {4}}}, {"x"});
  EXPECT_EQ(g.name(), "traced");
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.inputs()[0].node()->attrs().get_string("name"), "x");
  EXPECT_EQ(g.inputs()[1].node()->attrs().get_string("name"), "arg1");  // unnamed arguments
  EXPECT_EQ(g.input_types(), (std::vector<ir::TensorType>{{DType::f32, {2, 3}}, {DType::i32, {4}}}));
  EXPECT_EQ(g.output_types(), (std::vector<ir::TensorType>{{DType::f32, {2, 3}}, {DType::i32, {}}}));
  // The captured tensor is a constant inside the graph, keeping its name.
  int constants = 0;
  for (const ir::NodePtr& n : g.nodes()) {
    if (n->op_name() != "constant") continue;
    ++constants;
    EXPECT_EQ(n->attrs().get_string("name"), "bias");
  }
  EXPECT_EQ(constants, 1);
  ir::verify(g);
  // Running the traced graph on the reference backend.
  auto exe = backends::reference_backend().compile(g);
  const std::vector<Array> out = exe->run(
      {Array::from_vector<float>({-1, 2, -3, 4, -5, 6}, {2, 3}), Array::from_vector<int32_t>({1, 2, 3, 4}, {4})});
  EXPECT_EQ(out[0].to_f64(), (std::vector<double>{10, 22, 30, 14, 20, 36}));
  EXPECT_EQ(out[1].dtype(), DType::i32);
  EXPECT_EQ(out[1].item(), 10);
  EXPECT_TESSERA_ERROR(exe->run({Array::zeros(DType::f32, {3, 2}), Array::zeros(DType::i32, {4})}), "f32[2, 3]");
}

TEST(Trace, RejectsUndefinedResultsAndLeakedPlaceholders) {
  EXPECT_TESSERA_ERROR(
      trace([](const std::vector<Tensor>&) { return std::vector<Tensor>{Tensor()}; }, {{DType::f32, {1}}}), "trace",
      "undefined");
  Tensor outside = Tensor::placeholder("outside", DType::f32, {1});
  EXPECT_TESSERA_ERROR(
      trace([&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] + outside}; }, {{DType::f32, {1}}}),
      "input 'outside'");
}

TEST(Compile, CachesBySignature) {
  register_ir_test_ops();
  int python_calls = 0;  // how often the traced function itself runs
  auto f = compile([&](const std::vector<Tensor>& xs) {
    ++python_calls;
    return std::vector<Tensor>{ir::make_node1("test.count", {xs[0]}) * 2.0 + xs[1]};
  });
  auto f32 = [](std::vector<float> v, Shape s) { return Tensor::from_vector<float>(v, s); };
  test_count_calls = 0;
  expect_close(f({f32({1, 2}, {2}), f32({1}, {1})})[0], {3, 5});
  expect_close(f({f32({3, 4}, {2}), f32({0}, {1})})[0], {6, 8});
  EXPECT_EQ(f.trace_count(), 1u);
  EXPECT_EQ(python_calls, 1);
  EXPECT_EQ(test_count_calls, 2);  // traced once, run twice
  // A different shape or dtype in any argument is a new signature.
  expect_close(f({f32({1, 2, 3}, {3}), f32({1}, {1})})[0], {3, 5, 7});
  expect_close(f({Tensor::from_vector<double>({1, 2}, {2}), Tensor::from_vector<double>({0.5}, {1})})[0], {2.5, 4.5});
  expect_close(f({f32({1, 2}, {2}), f32({1, 1}, {2})})[0], {3, 5});
  EXPECT_EQ(f.trace_count(), 4u);
  EXPECT_EQ(f.cache_size(), 4u);
  EXPECT_EQ(python_calls, 4);
  // Every signature seen so far is served from the cache.
  expect_close(f({f32({5, 6}, {2}), f32({1}, {1})})[0], {11, 13});
  expect_close(f({f32({0, 0, 1}, {3}), f32({2}, {1})})[0], {2, 2, 4});
  EXPECT_EQ(f.trace_count(), 4u);
  EXPECT_EQ(python_calls, 4);
  // graph_for returns the cached graph for a signature (tracing it if new).
  const ir::Graph& g = f.graph_for({{DType::f32, {2}}, {DType::f32, {1}}});
  EXPECT_EQ(g.input_types(), (std::vector<ir::TensorType>{{DType::f32, {2}}, {DType::f32, {1}}}));
  EXPECT_EQ(f.trace_count(), 4u);
  f.graph_for({{DType::f16, {2}}, {DType::f16, {1}}});
  EXPECT_EQ(f.trace_count(), 5u);
}

TEST(Compile, ResultsAreConcreteAndArgumentsMayBeLazy) {
  auto f = compile([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * xs[0], ops::neg(xs[0])}; });
  Tensor lazy = Tensor::from_vector<float>({1, 2}, {2}) + 1.0;
  EXPECT_FALSE(lazy.is_evaluated());
  const std::vector<Tensor> out = f({lazy});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].is_evaluated());
  expect_close(out[0], {4, 9});
  expect_close(out[1], {-2, -3});
  EXPECT_TESSERA_ERROR(f({Tensor()}), "undefined");
}

TEST(Compile, CapturedTensorsBecomeConstants) {
  Tensor scale = Tensor::from_vector<float>({2, 3}, {2}, "scale");
  auto f = compile([&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{xs[0] * scale}; });
  expect_close(f({Tensor::from_vector<float>({1, 1}, {2})})[0], {2, 3});
  const ir::Graph& g = f.graph_for({{DType::f32, {2}}});
  ASSERT_EQ(g.inputs().size(), 1u);
  bool found = false;
  for (const ir::NodePtr& n : g.nodes()) found = found || (n->op_name() == "constant" && n->attrs().has("name"));
  EXPECT_TRUE(found) << ir::print_graph(g);
}
