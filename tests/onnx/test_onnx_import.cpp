// Import of small hand-built models: values, initializers as constants, dynamic dimensions, the
// opset's version of an op, and values needed at import time computed from constants.
#include <gtest/gtest.h>

#include "onnx_builder.h"
#include "tessera/backends/backend.h"
#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/stablehlo/export.h"

namespace tessera::test {
namespace {

std::vector<Array> run_reference(const io::onnx::ImportedGraph& g, const std::vector<Array>& inputs) {
  return backends::reference_backend().compile(g.graph)->run(inputs);
}

TEST(OnnxImport, AddsAnInitializerAndAppliesRelu) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{2}}).output("y");
  b.initializer("w", {2}, {1.0f, -10.0f});
  b.node("Add", {"x", "w"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  const auto model = b.parse();
  const auto g = io::onnx::import_onnx(model);
  EXPECT_EQ(g.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(g.output_names, std::vector<std::string>{"y"});
  const Array x = Array::from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(run_reference(g, {x})[0].to_vector<float>(), (std::vector<float>{2, 0, 4, 0}));
  bool has_constant = false;
  for (const auto& n : g.graph.nodes()) has_constant = has_constant || n->op_name() == "constant";
  EXPECT_TRUE(has_constant) << "the initializer should be a constant of the graph";
}

TEST(OnnxImport, BindsDimParamsFromTheInputs) {
  ModelBuilder b;
  b.input("a", {std::string("batch"), int64_t{3}}).input("b", {std::string("batch"), int64_t{3}}).output("y");
  b.node("Mul", {"a", "b"}, {"y"});
  const auto model = b.parse();
  for (int64_t batch : {1, 4}) {
    const ir::TensorType t{DType::f32, {batch, 3}};
    const auto g = io::onnx::import_onnx(model, {t, t});
    EXPECT_EQ(g.dims.at("batch"), batch);
    EXPECT_EQ(g.graph.output_types()[0].shape, (Shape{batch, 3}));
  }
  try {
    io::onnx::import_onnx(model, {{DType::f32, {2, 3}}, {DType::f32, {5, 3}}});
    FAIL() << "two sizes for one dim_param must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"batch\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::onnx::import_onnx(model, {{DType::f32, {2, 4}}, {DType::f32, {2, 4}}}), Error);
  EXPECT_THROW(io::onnx::import_onnx(model, {{DType::f64, {2, 3}}, {DType::f64, {2, 3}}}), Error);
  try {
    io::onnx::import_onnx(model);
    FAIL() << "a dynamic input without a given type must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dynamic"), std::string::npos) << e.what();
  }
}

TEST(OnnxImport, ComputesShapeArgumentsFromConstantsAtImport) {
  // Reshape(x, Concat(Gather(Shape(x), 0), [-1])): the shape depends only on x's static type.
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{3}, int64_t{4}}).output("y");
  b.int_initializer("zero", {0});
  b.int_initializer("minus_one", {-1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Concat", {"n", "minus_one"}, {"target"});
  set_int(*b.graph().mutable_node(2), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  const auto g = io::onnx::import_onnx(b.parse());
  EXPECT_EQ(g.graph.output_types()[0].shape, (Shape{2, 12}));
}

TEST(OnnxImport, ShapeArgumentsThatDependOnInputsAreRefused) {
  ModelBuilder b;
  b.input("x", {int64_t{4}}).input("shape", {int64_t{2}}, ::onnx::TensorProto::INT64).output("y");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape_it");
  try {
    io::onnx::import_onnx(b.parse());
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("\"reshape_it\""), std::string::npos) << m;
    EXPECT_NE(m.find("depends on a graph input"), std::string::npos) << m;
  }
}

TEST(OnnxImport, SoftmaxFollowsTheOpsetsVersion) {
  // Softmax-11 flattens at axis 1 (normalising over all 4 values of a row); Softmax-13 uses axis -1.
  for (int64_t opset : {11, 13}) {
    ModelBuilder b(opset);
    b.input("x", {int64_t{1}, int64_t{2}, int64_t{2}}).output("y");
    b.node("Softmax", {"x"}, {"y"});
    const auto g = io::onnx::import_onnx(b.parse());
    const std::vector<float> y =
        run_reference(g, {Array::from_vector<float>({0, 0, 0, 0}, {1, 2, 2})})[0].to_vector<float>();
    EXPECT_FLOAT_EQ(y[0], opset == 11 ? 0.25f : 0.5f) << "opset " << opset;
  }
}

TEST(OnnxImport, AttributeDefaultsComeFromTheSpec) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}).output("y");
  b.node("LeakyRelu", {"x"}, {"y"});  // alpha defaults to 0.01
  const auto g = io::onnx::import_onnx(b.parse());
  const std::vector<float> y = run_reference(g, {Array::from_vector<float>({-100, 3}, {2})})[0].to_vector<float>();
  EXPECT_NEAR(y[0], -1.0f, 1e-5);
  EXPECT_EQ(y[1], 3.0f);
}

TEST(OnnxImport, FixesInputsWhoseValuesDecideShapes) {
  // Reshape's target comes from a model input: with its data given, the input becomes a constant.
  ModelBuilder b;
  b.input("x", {int64_t{6}}).input("shape", {int64_t{2}}, ::onnx::TensorProto::INT64).output("y");
  b.node("Reshape", {"x", "shape"}, {"y"});
  const auto model = b.parse();
  const std::vector<Array> inputs = {Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {6}),
                                     Array::from_vector<int64_t>({3, 2}, {2})};
  const auto g = io::onnx::import_onnx_for(model, inputs);
  EXPECT_EQ(g.fixed_inputs, std::vector<std::string>{"shape"});
  EXPECT_EQ(g.input_names, std::vector<std::string>{"x"});
  EXPECT_EQ(g.graph.output_types()[0].shape, (Shape{3, 2}));
  const Array y = run_reference(g, io::onnx::graph_inputs(g, inputs))[0];
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(OnnxImport, RunsOnTheCpuBackendAndExportsToStableHlo) {
  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}}).output("y");
  b.initializer("k", {2, 1, 3, 3}, std::vector<float>(18, 0.5f));
  b.node("Conv", {"x", "k"}, {"c"});
  auto& pads = *b.graph().mutable_node(0)->add_attribute();
  pads.set_name("pads");
  pads.set_type(::onnx::AttributeProto::INTS);
  for (int64_t p : {1, 0, 0, 1}) pads.add_ints(p);  // uneven: an explicit pad before the conv
  b.node("Relu", {"c"}, {"y"});
  const auto g = io::onnx::import_onnx(b.parse());
  EXPECT_EQ(g.graph.output_types()[0].shape, (Shape{1, 2, 3, 3}));
  std::vector<float> xs(16);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 7.0f;
  const Array x = Array::from_vector<float>(xs, {1, 1, 4, 4});
  const Array ref = run_reference(g, {x})[0];
  const Array cpu = backends::backend_by_name("cpu").compile(g.graph)->run({x})[0];
  const std::vector<float> a = ref.to_vector<float>(), c = cpu.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], c[i], 1e-5f) << i;
  EXPECT_FLOAT_EQ(a[0], 0.0f);  // relu of a window over padding and negative inputs
  const auto module = io::stablehlo::export_graph(g.graph);
  EXPECT_NE(module.text.find("stablehlo.convolution"), std::string::npos);
}

TEST(OnnxImport, ReadsAStandaloneTensorFile) {
  ::onnx::TensorProto t;
  t.set_data_type(::onnx::TensorProto::INT32);
  t.add_dims(3);
  for (int v : {7, -8, 9}) t.add_int32_data(v);
  const std::string bytes = t.SerializeAsString();
  const Array a = io::onnx::parse_onnx_tensor(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t.pb");
  EXPECT_EQ(a.dtype(), DType::i32);
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{7, -8, 9}));
}

}  // namespace
}  // namespace tessera::test
