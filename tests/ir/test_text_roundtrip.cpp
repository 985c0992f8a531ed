// The IR text form: print -> parse -> print gives the same text for graphs using many ops, every
// attribute kind (with awkward values), multi-output nodes and graph inputs that are not `input`
// leaves; and parsing recovers the same attributes.
#include <cmath>
#include <limits>

#include "ir_test_ops.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Prints, parses, verifies and prints again; returns the parsed graph.
ir::Graph round_trip(const ir::Graph& g) {
  ir::verify(g);
  const std::string text = ir::print_graph(g);
  ir::Graph back = ir::parse_graph(text);
  ir::verify(back);
  EXPECT_EQ(ir::print_graph(back), text);
  return back;
}

// Graph x -> test.attrs{attrs} -> output.
ir::Graph attrs_graph(const ir::Attrs& attrs) {
  ir::Value x = ir::make_input("x", {DType::f32, {2}});
  ir::Value y = ir::make_node1("test.attrs", {x}, attrs);
  return ir::Graph::build({x}, {y}, "attrs");
}

const ir::Attrs& parsed_attrs(const ir::Graph& g) {
  return g.nodes().back()->attrs();
}

class TextRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override { register_ir_test_ops(); }
};

}  // namespace

TEST_F(TextRoundTrip, GraphOfManyOps) {
  Tensor param = Tensor::from_vector<float>({1, 2, 3}, {3}, "weight");
  ir::Graph g = trace(
      [&](const std::vector<Tensor>& xs) {
        Tensor x = xs[0], y = xs[1];
        Tensor a = ops::tanh(x * param + y) - ops::exp(x) / 2.0;
        Tensor b = ops::leaky_relu(a, 0.125) + ops::gelu(a, true) + ops::softplus(a, 2.0, 15.0);
        Tensor c = ops::where(ops::gt(a, b), ops::clamp(a, -1.0, std::nullopt), ops::relu(b));
        Tensor d = ops::reshape(ops::permute(c, {1, 0}), {6});
        Tensor e = ops::sum(ops::broadcast_to(d, {4, 6}), {0}, true);
        Tensor f = ops::cast(e, DType::f64) + ops::full({1, 6}, 0.5, DType::f64);
        Tensor h = ops::arange(0.0, 3.0, 0.5) + ops::sum(ops::eye(3, 6, 1), {0});
        Tensor k = ops::stop_gradient(ops::sqrt(ops::abs(x))) * ops::sigmoid(x);
        return std::vector<Tensor>{f, h, k, ops::isnan(x), ops::cast(ops::cast(x, DType::i32), DType::bf16)};
      },
      {{DType::f32, {2, 3}}, {DType::f32, {3}}}, {"x", "y"});
  const ir::Graph back = round_trip(g);
  ASSERT_EQ(back.nodes().size(), g.nodes().size());
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    EXPECT_EQ(back.nodes()[i]->op_name(), g.nodes()[i]->op_name());
    EXPECT_TRUE(back.nodes()[i]->attrs() == g.nodes()[i]->attrs()) << g.nodes()[i]->op_name();
    EXPECT_EQ(back.nodes()[i]->output_types(), g.nodes()[i]->output_types());
  }
  EXPECT_EQ(back.name(), "traced");
  EXPECT_EQ(back.input_types(), g.input_types());
  EXPECT_EQ(back.output_types(), g.output_types());
}

TEST_F(TextRoundTrip, IntAttributes) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    const ir::Graph back = round_trip(attrs_graph({{"i", v}}));
    EXPECT_EQ(parsed_attrs(back).get_int("i"), v);
  }
}

TEST_F(TextRoundTrip, FloatAttributesIncludingSpecialValues) {
  for (double v : {0.0, 1.0, -2.5, 0.1, 1.0 / 3.0, 1e300, -1e-300, 123456789.0, 1e20, 6.02214076e23,
                   std::numeric_limits<double>::max(), std::numeric_limits<double>::min(), kInf, -kInf}) {
    const ir::Graph back = round_trip(attrs_graph({{"f", v}}));
    EXPECT_EQ(parsed_attrs(back).get_float("f"), v) << v;
  }
  const ir::Graph nz = round_trip(attrs_graph({{"f", -0.0}}));
  EXPECT_EQ(parsed_attrs(nz).get_float("f"), 0.0);
  EXPECT_TRUE(std::signbit(parsed_attrs(nz).get_float("f"))) << "-0.0 lost its sign";
  const ir::Graph nan = round_trip(attrs_graph({{"f", kNaN}}));
  EXPECT_TRUE(std::isnan(parsed_attrs(nan).get_float("f")));
  // A float attribute that happens to be whole still prints as a float and reads back as one.
  EXPECT_NE(ir::print_graph(attrs_graph({{"f", 3.0}})).find("f = 3.0}"), std::string::npos);
  EXPECT_EQ(ir::attr_kind_of(parsed_attrs(round_trip(attrs_graph({{"f", 3.0}}))).values().at("f")),
            ir::AttrKind::Float);
}

TEST_F(TextRoundTrip, BoolAttributes) {
  EXPECT_TRUE(parsed_attrs(round_trip(attrs_graph({{"b", true}}))).get_bool("b"));
  EXPECT_FALSE(parsed_attrs(round_trip(attrs_graph({{"b", false}}))).get_bool("b"));
}

TEST_F(TextRoundTrip, StringAttributesWithEscapes) {
  for (const std::string& s :
       {std::string(""), std::string("plain"), std::string("with \"quotes\""), std::string("back\\slash\\"),
        std::string("new\nline\n"), std::string("tab\tand ünïcödé"), std::string("} {name = \"x\"}, %3 # no"),
        std::string("\\\"\\n"), std::string("nul\0inside", 10)}) {
    const ir::Graph back = round_trip(attrs_graph({{"s", s}}));
    EXPECT_EQ(parsed_attrs(back).get_string("s"), s);
  }
  // The printed form escapes quotes, backslashes and newlines.
  EXPECT_NE(ir::print_graph(attrs_graph({{"s", std::string("a\"b\\c\nd")}})).find("s = \"a\\\"b\\\\c\\nd\""),
            std::string::npos);
}

TEST_F(TextRoundTrip, IntListAttributes) {
  for (const std::vector<int64_t>& v : std::vector<std::vector<int64_t>>{
           {}, {7}, {-3, 0, 5}, {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}}) {
    const ir::Graph back = round_trip(attrs_graph({{"is", v}}));
    EXPECT_EQ(parsed_attrs(back).get_ints("is"), v);
  }
  EXPECT_NE(ir::print_graph(attrs_graph({{"is", std::vector<int64_t>{}}})).find("is = []"), std::string::npos);
}

TEST_F(TextRoundTrip, FloatListAttributes) {
  const ir::Graph empty = round_trip(attrs_graph({{"fs", std::vector<double>{}}}));
  EXPECT_TRUE(parsed_attrs(empty).get_floats("fs").empty());
  const std::vector<double> v{0.5, -0.0, 2.0, 1e-10, kInf, -kInf, kNaN};
  const std::vector<double> got = parsed_attrs(round_trip(attrs_graph({{"fs", v}}))).get_floats("fs");
  ASSERT_EQ(got.size(), v.size());
  for (size_t i = 0; i + 1 < v.size(); ++i) EXPECT_EQ(got[i], v[i]) << i;
  EXPECT_TRUE(std::signbit(got[1]));
  EXPECT_TRUE(std::isnan(got.back()));
}

TEST_F(TextRoundTrip, DTypeAttributes) {
  for (DType dt : kAllDTypes) {
    const ir::Graph back = round_trip(attrs_graph({{"dt", dt}}));
    EXPECT_EQ(parsed_attrs(back).get_dtype("dt"), dt) << dtype_name(dt);
  }
}

TEST_F(TextRoundTrip, DenseTensorOfEveryDType) {
  for (DType dt : kAllDTypes) {
    for (const Shape& shape : std::vector<Shape>{{}, {0}, {2, 3}, {1, 2, 1, 2}}) {
      std::vector<double> values;
      for (int64_t i = 0; i < shape_numel(shape); ++i) values.push_back(static_cast<double>(i * 37 % 11) - 4.5);
      const Array a = Array::from_vector(values, shape).astype(dt);
      const ir::Graph back = round_trip(attrs_graph({{"t", a}}));
      const Array& got = parsed_attrs(back).get_tensor("t");
      EXPECT_EQ(got.dtype(), dt);
      EXPECT_EQ(got.shape(), shape);
      EXPECT_EQ(got.to_f64(), a.to_f64()) << dtype_name(dt) << shape_str(shape);
    }
  }
}

TEST_F(TextRoundTrip, DenseTensorKeepsExactBitsAndViews) {
  // NaN payloads, -0.0 and denormals survive because the literal is raw bytes.
  const std::vector<double> tricky{kNaN, -0.0, 5e-324, -kInf, 1.0 / 3.0};
  const Array a = Array::from_vector(tricky, {5});
  const ir::Graph back = round_trip(attrs_graph({{"t", a}}));
  const Array& got = parsed_attrs(back).get_tensor("t");
  EXPECT_EQ(std::memcmp(got.raw_data(), a.raw_data(), a.nbytes()), 0);
  // A strided (transposed) view prints its logical contents.
  const Array m = Array::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  const ir::Graph back_m = round_trip(attrs_graph({{"t", m}}));
  const Array& mt = parsed_attrs(back_m).get_tensor("t");
  EXPECT_EQ(mt.shape(), (Shape{3, 2}));
  EXPECT_EQ(mt.to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST_F(TextRoundTrip, AllAttributeKindsOnOneNode) {
  const ir::Attrs all{{"i", int64_t{-7}},
                      {"f", -0.0},
                      {"b", true},
                      {"s", std::string("a \"b\"\n")},
                      {"is", std::vector<int64_t>{}},
                      {"fs", std::vector<double>{kInf, 0.25}},
                      {"dt", DType::bf16},
                      {"t", Array::from_vector<uint8_t>({0, 255, 16}, {3})}};
  const ir::Graph back = round_trip(attrs_graph(all));
  EXPECT_TRUE(parsed_attrs(back) == all);
  // Attributes print sorted by name, whatever order they were given in.
  const std::string text = ir::print_graph(back);
  EXPECT_LT(text.find("b = true"), text.find("dt = bf16"));
  EXPECT_LT(text.find("is = []"), text.find("t = dense<u8[3], 0x00ff10>"));
}

// A NaN with the sign bit set prints as plain "nan" (its sign is meaningless); subnormals read back.
TEST_F(TextRoundTrip, NegativeNaNAttribute) {
  const double neg_nan = std::copysign(kNaN, -1.0);
  const ir::Graph back = round_trip(attrs_graph({{"f", neg_nan}}));
  EXPECT_TRUE(std::isnan(parsed_attrs(back).get_float("f")));
}

TEST_F(TextRoundTrip, SubnormalFloatAttribute) {
  for (double v : {5e-324, -2.5e-310, std::numeric_limits<double>::denorm_min()}) {
    const ir::Graph back = round_trip(attrs_graph({{"f", v}}));
    EXPECT_EQ(parsed_attrs(back).get_float("f"), v);
  }
}

TEST_F(TextRoundTrip, MultiOutputNodes) {
  ir::Value x = ir::make_input("x", {DType::f32, {2, 3}});
  const std::vector<ir::Value> outs = ir::make_node("test.split2", {x});
  ASSERT_EQ(outs.size(), 2u);
  ir::Value y = ops::mul(Tensor(outs[0]), ops::cast(Tensor(outs[1]), DType::f32)).value();
  const std::vector<ir::Value> again = ir::make_node("test.split2", {y});
  const ir::Graph g = ir::Graph::build({x}, {again[1], y, outs[1], again[0]}, "multi");
  const std::string text = ir::print_graph(g);
  EXPECT_NE(text.find("%1, %2 = test.split2(%0) : f32[2, 3], i64[2, 3]"), std::string::npos) << text;
  const ir::Graph back = round_trip(g);
  ASSERT_EQ(back.outputs().size(), 4u);
  EXPECT_EQ(back.outputs()[0].index(), 1);
  EXPECT_EQ(back.outputs()[2].index(), 1);
  EXPECT_EQ(back.outputs()[3].index(), 0);
  EXPECT_EQ(back.outputs()[0].node(), back.outputs()[3].node());
  EXPECT_EQ(back.outputs()[0].dtype(), DType::i64);
}

TEST_F(TextRoundTrip, GraphInputsThatAreNotInputLeaves) {
  // Bind an intermediate value and a constant as the graph's inputs: the graph is what lies between.
  ir::Value x = ir::make_input("x", {DType::f32, {3}});
  Tensor hidden = ops::exp(Tensor(x));
  Tensor c = Tensor::from_vector<float>({1, 2, 3}, {3}, "c");
  Tensor out = ops::square(hidden) + c;
  const ir::Graph g = ir::Graph::build({hidden.value(), c.value()}, {out.value()}, "partial");
  ASSERT_EQ(g.nodes().size(), 2u);  // square and add; exp and the constant are behind inputs
  const std::string text = ir::print_graph(g);
  EXPECT_EQ(text.rfind("graph @partial(%0: f32[3] {name = \"v0\"}, %1: f32[3] {name = \"v1\"}) {\n", 0), 0u) << text;
  const ir::Graph back = round_trip(g);
  EXPECT_EQ(back.inputs()[0].node()->op_name(), "input");
  EXPECT_EQ(back.inputs()[1].node()->attrs().get_string("name"), "v1");
}

TEST_F(TextRoundTrip, EdgeCaseGraphs) {
  // No inputs; an output that is an input; the same output twice; a constant output.
  ir::Value c = ir::make_constant(Array::from_vector<int64_t>({1, 2}, {2}));
  round_trip(ir::Graph::build({}, {c}, "no_inputs"));
  ir::Value x = ir::make_input("x", {DType::f16, {0, 4}});
  const ir::Graph passthrough = round_trip(ir::Graph::build({x}, {x, x}, "passthrough"));
  EXPECT_TRUE(passthrough.nodes().empty());
  EXPECT_EQ(passthrough.outputs()[0], passthrough.outputs()[1]);
  ir::Value s = ir::make_input("scalar with spaces", {DType::boolean, {}});
  round_trip(ir::Graph::build({s}, {ops::logical_not(Tensor(s)).value()}, "g"));
  round_trip(ir::Graph::build({x}, {}, "no_outputs"));
}

TEST_F(TextRoundTrip, PrintedTextIsStable) {
  // The text does not depend on node ids: building the same function twice prints identically.
  auto build = [] {
    return trace([](const std::vector<Tensor>& xs) { return std::vector<Tensor>{ops::relu(xs[0]) * 2.0}; },
                 {{DType::f32, {2}}}, {"x"});
  };
  const std::string text = ir::print_graph(build());
  EXPECT_EQ(ir::print_graph(build()), text);
  EXPECT_EQ(text,
            "graph @traced(%0: f32[2] {name = \"x\"}) {\n"
            "  %1 = relu(%0) : f32[2]\n"
            "  %2 = constant() {value = dense<f32[], 0x00000040>} : f32[]\n"
            "  %3 = mul(%1, %2) : f32[2]\n"
            "  return %3\n"
            "}\n");
}
